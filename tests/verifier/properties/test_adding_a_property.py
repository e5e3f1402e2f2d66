"""Adding a property needs no engine change (docs/properties.md, "Adding a property"): the example property
below is registered temporarily and searched, minimised and checked by the unchanged engines.  Also: the
registry's defaults and help text, and the misreport moves stay bounded for large instances."""
from __future__ import annotations

import itertools
import random

import pytest

from mechanisms import get
from mechverify.instances import parse_environment
from mechverify.numbers import gt, rel_change
from verifier.engines.minimize import minimize
from verifier.engines.search import search
from verifier.engines.strategies import domain_for
from verifier.exact import certified_excess, exact_run, own_utility, utility_interval
from verifier.properties import (DEFAULT_PROPERTIES, EXECUTION_PROPERTIES, PROPERTIES, Certificate, Evaluation, Hints, Property, Witness,
                                 get_property, names_help)
from verifier.properties.base import Measure
from verifier.properties import moves

from tests.helpers import SENIORITY, one_cpu, verdict


# ---------------------------------------------------------------------- the example of docs/properties.md
def same_report(env, j, k):
    """Users ``j`` and ``k`` report exactly the same (demands, weight, eligible set, bound)."""
    def rep(i):
        sd = sorted((s, v) for (u, s), v in env.server_demand.items() if u == i)
        return env.demand[i], env.external_demand[i], env.weight[i], env.eligible[i], env.tasks[i], sd
    return rep(j) == rep(k)


class EqualTreatment(Property):
    """Equal treatment of equals: users who report the same run the same number of tasks."""

    name = "ete"
    title = "equal treatment of equals"
    variants = {"totals": "identical users run equally many tasks"}
    default_variant = "totals"
    measure = Measure("the relative gap between the tasks of two users who report the same", 0, ">")
    hints = Hints(min_users=2, uses_users=True)  # recheck reads witness.users: the minimiser keeps them

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        alloc = alloc or mech(env, exact=exact)
        u = [own_utility(mech, env, alloc, j) for j in range(env.n_users)]
        pairs = [(j, k) for j in range(env.n_users) for k in range(env.n_users)
                 if j != k and u[j] <= u[k] and same_report(env, j, k)]
        if not pairs:
            return Evaluation(0, False)  # nobody has a twin: vacuously satisfied
        j, k = max(pairs, key=lambda p: rel_change(u[p[1]], u[p[0]]))
        violated = gt(u[k], u[j], exact)
        w = Witness(self.name, variant, mech.name, env, None, rel_change(u[k], u[j]), (j, k)) if violated else None
        return Evaluation(rel_change(u[k], u[j]), violated, w)

    def recheck(self, mech, witness):
        env, (j, k) = witness.env, witness.users
        run = exact_run(mech, env)
        ex = certified_excess(lambda o: utility_interval(env, run, k, over_range=o),
                              lambda o: utility_interval(env, run, j, over_range=o))
        if ex is None or not same_report(env, j, k):
            return None
        a, b = env.users[j], env.users[k]
        return Certificate(witness, ex.gap, rel_change(ex.above[0], ex.below[1]), {"allocation": run.alloc},
                           {f"u[{a}]": ex.below[1], f"u[{b}]": ex.above[0]}, ex.robust, "",
                           "exact" if run.exact else "interval",
                           f"{a} and {b} report the same but run {ex.below[1]} and {ex.above[0]} tasks")
# ---------------------------------------------------------------------- end of the example


@pytest.fixture
def ete(monkeypatch):
    """The example property, registered for one test."""
    prop = EqualTreatment()
    monkeypatch.setitem(PROPERTIES, prop.name, prop)
    return prop


# one resource, unit demands (numbers are 0 or 1, a zero demand is repaired to 1): users are often twins
TWINS = dict(max_value=1, denominators=(1,), max_resources=1, weights=False, placement=False, bounds=False,
             external=False, server_demand=False)


def test_new_property_is_searched_minimised_and_checked_by_the_unchanged_engines(ete):
    """seniority (tests/helpers.py): of two unit-demand users on one cpu of c, the first gets 3/4 c, the
    other 1/4 c although they report the same: the search finds it, the certificate is exact."""
    assert get_property("ete") is ete and "ete" in names_help()
    res = search(SENIORITY, "ete", "totals", seed=0, budget=60, max_trials=20,
                 domain=domain_for(SENIORITY.setting, **TWINS))
    assert res.verdict == "violated", res.note
    cert = res.certificate
    assert cert.method == "exact" and cert.gap > 0 and ete.recheck(SENIORITY, cert.witness) is not None
    small, rec = minimize(SENIORITY, cert, budget=30)
    assert rec["one_minimal"] and small.witness.env.n_users == 2
    # hand check on one cpu of 4: 3 tasks and 1 task, gap 2, measure (3 - 1)/1 = 2
    r = verdict("ete", SENIORITY, one_cpu(4, [1, 1]), "totals")
    assert r.verdict == "violated" and r.certificate.gap == 2 and r.measure == 2


def test_new_property_measure_is_what_the_reports_print(ete):
    """The reports read a property's measure off the property (``Property.measure``), not a table."""
    from verifier.report.common import measure_of, measure_text
    from verifier.report.html import measures_section

    assert measure_of("ete") is ete.measure and ete.higher_is_worse
    assert measure_text("ete", 1e-12) == "0 (float noise within the search's tolerance 1e-7)"
    html = measures_section(["ete", "si"])
    assert "two users who report the same" in html and "&gt; 0" in html and "&lt; 1" in html


def test_new_property_not_refuted_for_drf(ete):
    """DRF's leximin allocation is unique, so twins get the same: nothing found in 20 candidates."""
    drf = get("drf")
    res = search(drf, "ete", "totals", seed=0, budget=60, max_trials=20,
                 domain=domain_for(drf.setting, **dict(TWINS, max_value=6, denominators=(1, 2))))
    assert res.verdict == "not_refuted" and res.trials == 20
    assert res.domain["users"][0] == 2  # Hints.min_users narrowed the domain


# ---------------------------------------------------------------------- registry
def test_defaults_and_help_come_from_the_registry():
    assert DEFAULT_PROPERTIES == ["sp", "gsp", "ef", "si", "hsi", "quota", "limit", "lend", "po", "bf", "srf", "pm", "single-server-drf", "order", "share"]
    assert EXECUTION_PROPERTIES == ["each-step", "dsi", "def", "dpo", "online-sp", "irrevocable", "disparity",
                                    "isolation", "starvation", "cycles", "usage-ignored", "convergence",
                                    "work-conserving", "burst-gaming"]
    assert names_help() == ("comma-separated: sp,gsp,ef,si,hsi,quota,limit,lend,po,bf,srf,pm,single-server-drf,order,share,runs,"
                            "each-step,dsi,def,dpo,online-sp,irrevocable,disparity,isolation,starvation,cycles,usage-ignored,"
                            "convergence,work-conserving,burst-gaming (default: "
                            "all but runs -- over executions for a mechanism that steps through them, on instances "
                            "otherwise; a user's mechanism: all, runs first), or your own: path/file.py:function, "
                            "package.module:function")


def test_deviation_kinds_are_declared():
    kinds = {(p.name, v): p.hints_for(v).deviation for p in PROPERTIES.values() for v in p.variants}
    assert kinds[("sp", "demand")] == "demand" and kinds[("sp", "eligible")] == "eligible"
    assert kinds[("sp", "tasks")] == "tasks" and kinds[("gsp", "demand")] == "coalition"
    assert kinds[("pm", "leave")] == "leave"
    assert kinds[("online-sp", "demand")] == "trace"
    assert {p.name for p in PROPERTIES.values() if p.needs_deviation} == {"sp", "gsp", "pm", "online-sp", "burst-gaming"}
    with pytest.raises(ValueError):
        Hints(deviation="bribe")


# ---------------------------------------------------------------------- moves stay bounded
def _wide(servers, users=2):
    return parse_environment({"resources": ["cpu"],
                              "servers": [{"name": f"s{i}", "capacity": [1 + i % 5]} for i in range(servers)],
                              "users": [{"name": f"u{j}", "demand": [1], "eligible": [f"s{i}" for i in range(0, servers, 2)]}
                                        for j in range(users)]})


@pytest.mark.parametrize("servers", [3, 6, 7, 120])
def test_eligible_reports_are_bounded_and_never_truthful(servers):
    """Exhaustive (2^S - 1 sets) while S <= 6; beyond, at most 2 S + 8 sets (no 2^S list is ever built)."""
    env = _wide(servers)
    reps = list(moves.eligible_reports(env, 0, random.Random(0)))
    sets = [r.eligible for r in reps]
    assert env.eligible[0] not in sets and len(set(sets)) == len(sets)
    if servers <= moves.EXHAUSTIVE_SERVERS:
        assert len(sets) == 2 ** servers - 1
    else:
        assert servers <= len(sets) <= 2 * servers + moves.N_RANDOM


def test_coalitions_are_lazy_and_capped():
    env = _wide(2, users=40)
    devs = list(itertools.islice(moves.coalitions(env, random.Random(0)), 10_000))
    assert 0 < len(devs) <= 2 * moves.MAX_COALITIONS * 6
    assert all(2 <= len(d.reports) <= 3 and len({r.user for r in d.reports}) == len(d.reports) for d in devs)


def test_check_and_optimiser_share_the_moves():
    """``Property.deviations`` (check) starts with exactly the structured moves the optimiser tries."""
    env = one_cpu(12, [1, 2])
    sp = get_property("sp")
    for kind in ("demand", "tasks"):
        devs = [d.reports[0] for d in sp.deviations(get("drf"), env, kind, random.Random(0)) if d.reports[0].user == 0]
        structured = list(moves.reports(kind, env, 0))
        assert devs[:len(structured)] == structured
