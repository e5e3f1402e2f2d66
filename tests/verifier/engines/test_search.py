"""Engines: public strategies (valid, inside the setting, shrinking), the search (certified only,
deterministic), the misreport optimiser, and the minimiser (exact, 1-minimal)."""
from __future__ import annotations

import json
from fractions import Fraction as F

import pytest
from hypothesis import HealthCheck, Phase, find, given, seed, settings

import mechanisms
from mechanisms.core.registry import Mechanism, Setting
from mechverify.allocation import Allocation
from mechverify.instances import parse_environment
from verifier.engines import strategies as S
from verifier.engines.optimize import optimize_misreports
from verifier.engines.search import search
from verifier.engines.minimize import minimize, simpler_numbers
from verifier.properties import Deviation, Report, Witness, get_property

QUICK = settings(database=None, max_examples=60, deadline=None, suppress_health_check=list(HealthCheck),
                 phases=(Phase.generate,))


# ---------------------------------------------------------------------- strategies
@pytest.mark.parametrize("name", [m.name for m in mechanisms.all_mechanisms()])
def test_environments_are_valid_and_inside_the_setting(name):
    mech = mechanisms.get(name)

    @QUICK
    @seed(1)
    @given(S.environments(mech.setting))
    def check(env):
        env.validate()
        mech.setting.check(env, mech.name)  # raises SettingError outside the domain
        assert 1 <= env.n_users <= 3 and 1 <= env.n_servers <= 3 and 1 <= env.n_resources <= 3

    check()


def test_environments_cover_the_boundary_cases():
    """Zero demands, zero capacities, empty eligible sets, zero task bounds, weights, external resources
    all appear (the domain includes boundary cases the papers do not exclude)."""
    setting = Setting(placement=True, external=True, bounds=True, weights=True)
    seen = set()

    @settings(database=None, max_examples=400, deadline=None, suppress_health_check=list(HealthCheck),
              phases=(Phase.generate,))
    @seed(2)
    @given(S.environments(setting))
    def collect(env):
        if any(v == 0 for row in env.demand for v in row):
            seen.add("zero demand")
        if any(v == 0 for row in env.capacity for v in row):
            seen.add("zero capacity")
        if any(not e for e in env.eligible):
            seen.add("empty eligible")
        if any(t == 0 for t in env.tasks):
            seen.add("zero bound")
        if env.has_weights:
            seen.add("weights")
        if env.n_external:
            seen.add("external")
        if any(v.denominator > 1 for row in env.demand for v in row):
            seen.add("fraction")

    collect()
    assert seen == {"zero demand", "zero capacity", "empty eligible", "zero bound", "weights", "external", "fraction"}


def test_environments_shrink_to_small_simple_instances():
    setting = mechanisms.get("c-drfh").setting
    # derandomize: an unseeded find() stopped at 3 users in about 1 run of 4 (shrinking is a heuristic)
    env = find(S.environments(setting), lambda e: e.n_users >= 2 and e.n_servers >= 2,
               settings=settings(database=None, derandomize=True))
    assert (env.n_users, env.n_servers, env.n_resources) == (2, 2, 1)
    assert all(v == 1 for row in env.capacity for v in row) and all(v == 1 for row in env.demand for v in row)


def test_simple_rationals_shrink_to_one():
    det = settings(database=None, derandomize=True)
    assert find(S.simple_rationals(0, 10), lambda v: v > 0, settings=det) == 1
    assert find(S.simple_rationals(0, 10), lambda v: v.denominator > 1, settings=det) == F(1, 2)


def test_deviation_strategies_always_deviate():
    env = parse_environment({"resources": ["a", "b"], "servers": [{"name": "s1", "capacity": [4, 4]},
                                                                   {"name": "s2", "capacity": [4, 4]}],
                             "users": [{"name": "u1", "demand": [1, 2], "eligible": ["s1"], "tasks": 3},
                                       {"name": "u2", "demand": [2, 1]}]})

    @QUICK
    @seed(3)
    @given(S.demand_misreports(env), S.eligible_misreports(env), S.task_misreports(env),
           S.coalition_misreports(env), S.leaves(env))
    def check(dm, el, tk, co, lv):
        (r,) = dm.reports
        assert r.demand != env.demand[r.user]
        (r,) = el.reports
        assert r.eligible != env.eligible[r.user]
        (r,) = tk.reports
        assert r.tasks != env.tasks[r.user]
        assert len(co.reports) == 2 and len({r.user for r in co.reports}) == 2
        assert lv.kind == "leave" and len(lv.leave) == 1
        for d in (dm, el, tk, co, lv):
            d.apply(env)  # valid deviations

    check()


def test_variant_domains_follow_the_premise():
    setting = mechanisms.get("drf").setting

    @QUICK
    @seed(4)
    @given(S.cases(setting, "si", "external"), S.cases(setting, "srf", "max-min"),
           S.cases(setting, "si", "bounded"), S.cases(mechanisms.get("tsf").setting, "single-server-drf", "totals"))
    def check(si_ext, srf, si_b, ssd):
        assert si_ext[0].n_external >= 1
        assert srf[0].n_resources == 1 and srf[0].n_external == 0
        assert si_b[0].has_bounds
        assert ssd[0].n_servers == 1

    check()


def test_bf_bias_makes_the_premise_hold_often():
    from verifier.properties.fairness import common_dominant_resources

    setting = mechanisms.get("c-drfh").setting
    hits = []

    @settings(database=None, max_examples=100, deadline=None, suppress_health_check=list(HealthCheck),
              phases=(Phase.generate,))
    @seed(5)
    @given(S.cases(setting, "bf", "per-server"))
    def collect(case):
        hits.append(bool(common_dominant_resources(case[0], "per-server")))

    collect()
    assert sum(hits) >= 0.8 * len(hits)


# ---------------------------------------------------------------------- search
def test_search_finds_certified_bf_violation_deterministically():
    mech = mechanisms.get("c-drfh")
    a = search(mech, "bf", "per-server", seed=7, budget=60, max_trials=300)
    b = search(mech, "bf", "per-server", seed=7, budget=60, max_trials=300)
    assert a.verdict == b.verdict == "violated"
    assert a.certificate.witness.env == b.certificate.witness.env
    assert a.trials == b.trials
    # only an exact certificate makes a violation
    assert a.certificate.method == "exact" and a.certificate.gap > 0
    assert get_property("bf").recheck(mech, a.certificate.witness) is not None


def test_search_reports_not_refuted_with_trials():
    res = search(mechanisms.get("drf"), "srf", "max-min", seed=0, budget=60, max_trials=40)
    assert res.verdict == "not_refuted" and res.trials == 40 and res.certificate is None
    assert res.domain["resources"] == [1, 1]


# a toy mechanism that is NOT strategy-proof: every user gets c / sum(reported demand) tasks on one server
# with one resource, so its bundle x * d_reported grows with its report (inflating the demand pays)
def _toy(env, exact=False):
    c = env.capacity[0][0]
    tot = sum((env.demand[j][0] for j in range(env.n_users)), F(0))
    x = c / tot if tot else F(0)
    return Allocation(env, tuple((x if exact else float(x),) for _ in range(env.n_users)), "toy", exact,
                      {"unique_totals": True})


TOY = Mechanism("toy-proportional", "toy", _toy, Setting(single_server=True, placement=False, bounds=False,
                                                          weights=False))


def test_optimiser_finds_and_certifies_a_misreport():
    env = parse_environment({"resources": ["r"], "servers": [{"name": "s", "capacity": [10]}],
                             "users": [{"name": "a", "demand": [1]}, {"name": "b", "demand": [3]}]})
    import time

    cert, trials = optimize_misreports(TOY, get_property("sp"), "demand", [env], seed=0,
                                       deadline=time.monotonic() + 30)
    assert cert is not None and cert.gap > 0 and trials >= 1
    (rep,) = cert.witness.deviation.reports
    assert rep.demand[0] > env.demand[rep.user][0]  # inflating pays


def test_search_on_toy_mechanism_finds_sp_violation():
    res = search(TOY, "sp", "demand", seed=0, budget=60, max_trials=200)
    assert res.verdict == "violated"


# ---------------------------------------------------------------------- minimiser
def test_simpler_numbers_are_simpler():
    for v in (F(7, 3), F(5), F(13, 12), F(1, 2)):
        for c in simpler_numbers(v):
            assert (c.denominator, abs(c.numerator)) < (v.denominator, abs(v.numerator))


def test_minimiser_reduces_to_the_seed_instance_and_is_1_minimal():
    """000 Fig. 1 with an extra user and a third resource: C-DRFH's BF violation survives; the minimiser
    removes the extra user and resource and keeps an exact, 1-minimal violation."""
    mech = mechanisms.get("c-drfh")
    env = parse_environment({
        "resources": ["cpu", "mem", "bw", "gpu"],
        "servers": [{"name": "s1", "capacity": [9, 12, 100, 5]}, {"name": "s2", "capacity": [12, 12, 0, 5]}],
        "users": [{"name": "u1", "demand": [1, 2, 10, "1/7"]}, {"name": "u2", "demand": [1, 2, 0, "1/7"]},
                  {"name": "u3", "demand": ["1/9", 1, 0, "1/9"], "eligible": ["s1"]}]})
    prop = get_property("bf")
    ev = prop.evaluate(mech, env, "per-server", exact=True)
    assert ev.violated
    cert = prop.recheck(mech, ev.witness)
    small, rec = minimize(mech, cert, budget=60)
    assert rec["one_minimal"] and rec["status"] == "1-minimal"
    assert rec["size"]["users"] <= 2 and rec["size"]["resources"] <= 2
    assert prop.recheck(mech, small.witness) is not None  # still an exact violation
    # 1-minimal: no single user / server / resource removal keeps it
    w = small.witness
    for j in range(w.env.n_users):
        if w.env.n_users > 1:
            sub = w.env.restrict(users=[i for i in range(w.env.n_users) if i != j])
            if not prop.applicable(mech, sub, "per-server"):
                assert prop.recheck(mech, Witness("bf", "per-server", mech.name, sub)) is None


def test_minimiser_keeps_the_deviator_and_remaps_the_deviation():
    env = parse_environment({"resources": ["r"], "servers": [{"name": "s", "capacity": [10]}],
                             "users": [{"name": "a", "demand": [1]}, {"name": "b", "demand": ["7/3"]},
                                       {"name": "c", "demand": [5]}]})
    dev = Deviation("misreport", (Report(2, demand=(F(17, 2),)),))
    prop = get_property("sp")
    cert = prop.recheck(TOY, Witness("sp", "demand", TOY.name, env, dev, None, (2,)))
    assert cert is not None
    small, rec = minimize(TOY, cert, budget=60)
    w = small.witness
    assert rec["one_minimal"]
    (rep,) = w.deviation.reports
    # the deviator survives (renumbered, and renamed u1..un with the map kept)
    assert rec["renamed"]["users"][w.env.users[rep.user]] == "c"
    assert w.env.n_users < 3
    assert all(v.denominator == 1 for v in rep.demand)  # simplified misreport
    assert prop.recheck(TOY, w) is not None


def test_minimality_recorded_in_the_store(tmp_path):
    from verifier.store import persist, replay

    mech = mechanisms.get("c-drfh")
    res = search(mech, "bf", "per-server", seed=1, budget=60, max_trials=300)
    small, rec = minimize(mech, res.certificate, budget=60)
    path = persist(small, None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False, minimality=rec).path
    with open(path) as fh:
        d = json.load(fh)
    assert d["minimality"]["status"] in ("1-minimal", "already 1-minimal")
    assert d["minimality"]["one_minimal"] is True
    assert replay(path).ok


def test_minimiser_renames_what_is_left_and_keeps_the_map():
    """004 App. 9.1 (CRU, users A and B, resource cpu, external bw): the minimised counterexample speaks of
    u1, u2, s1, r1, e1, and the minimality record maps every new name back to the original."""
    from mechanisms import get as get_mech
    from verifier.seeds import all_cases, derive

    case = next(c for c in all_cases() if c.mechanism == "cru" and c.property == "sp")
    cert, rec = minimize(get_mech("cru"), derive(case), budget=20)
    env = cert.witness.env
    assert env.users == tuple(f"u{j + 1}" for j in range(env.n_users))
    assert env.resources == tuple(f"r{r + 1}" for r in range(env.n_resources))
    assert rec["renamed"] == {"users": {"u1": "A", "u2": "B"}, "servers": {"s1": "server"},
                              "resources": {"r1": "cpu"}, "external": {"e1": "bw"}}
    assert cert.gap > 0 and cert.summary.startswith("u2 truthful")  # B, the deviator, is u2 now


# ---------------------------------------------------------------------- batches of deviations
def test_a_batch_lets_every_user_deviate():
    """The i-th deviator of a batch is user b + i (mod users): with one deviation per user (per_user=1)
    every user deviates exactly once; with per_user=2 and k=4, min(4, 2 * users) deviations, every user
    at least once.  (A drawn report may be invalid, e.g. an all-zero demand without a bound: the search
    counts it as ``invalid``.)"""
    setting = mechanisms.get("drf").setting

    @QUICK
    @seed(6)
    @given(S.batches(setting, "sp", "demand", k=8), S.batches(setting, "pm", "leave", k=8),
           S.batches(setting, "sp", "eligible", k=4, per_user=2))
    def check(sp_batch, pm_batch, el_batch):
        for env, devs in (sp_batch, pm_batch):
            assert sorted(j for d in devs for j in d.users) == list(range(env.n_users))
        env, devs = el_batch
        assert len(devs) == min(4, 2 * env.n_users)
        assert {j for d in devs for j in d.users} == set(range(env.n_users))

    check()


def test_cases_are_batches_of_one():
    setting = mechanisms.get("tsf").setting
    seen = []

    @QUICK
    @seed(7)
    @given(S.batches(setting, "ef", "placement-aware", k=4))
    def check(batch):
        env, devs = batch
        assert devs == (None,)  # instance properties: one candidate per example
        seen.append(env)

    check()
    assert seen


def _counting(mech):
    calls = []

    def func(env, exact=False):
        calls.append(env)
        return mech.func(env, exact)

    return Mechanism(mech.name, mech.title, func, mech.setting), calls


def test_search_runs_the_truthful_environment_once_per_batch():
    """A trial is one (environment, deviation) candidate; the mechanism runs once on each drawn environment
    and once per evaluated deviation.  One deviation per example (the former layout) makes 2 calls per
    trial; with one deviation per user the truthful call is shared by the users' deviations: for drf's
    domain (1 to 3 users) fewer than 1.75 calls per trial on this fixed sample (an environment of 3 users
    makes 4 calls for 3 trials)."""
    mech, calls = _counting(mechanisms.get("drf"))
    res = search(mech, "sp", "demand", seed=0, budget=60, max_trials=200, optimizer=False)
    assert res.verdict == "not_refuted" and res.trials == 200
    assert res.trials <= len(calls) < 1.75 * res.trials


def test_batched_search_is_deterministic_and_certified():
    a = search(TOY, "sp", "demand", seed=3, budget=60, max_trials=200)
    b = search(TOY, "sp", "demand", seed=3, budget=60, max_trials=200)
    assert a.verdict == b.verdict == "violated"
    assert a.certificate.witness.env == b.certificate.witness.env
    assert a.certificate.witness.deviation == b.certificate.witness.deviation
    assert get_property("sp").recheck(TOY, a.certificate.witness) is not None


@pytest.mark.parametrize("users", [("x", "y"), ("a", "b", "c")])
def test_a_minimised_instance_is_always_renamed(users):
    """greedy (examples/my_mechanisms.py): on one server the first user takes everything, so the second
    envies it (2 users x 1 server x 1 resource is the minimal instance).  Whatever the names -- even when
    nothing can be removed ("already 1-minimal") -- the stored instance and its summary say u1, u2."""
    import os

    from mechverify.instances import parse_environment
    from mechverify.api import mechanism_of
    from tests.helpers import ROOT
    from verifier.properties import get_property

    mech = mechanism_of(os.path.join(ROOT, "examples", "my_mechanisms.py") + ":greedy")
    env = parse_environment({"resources": ["cpu"], "servers": [{"name": "big", "capacity": [4]}],
                             "users": [{"name": u, "demand": [1]} for u in users]})
    prop = get_property("ef")
    ev = prop.evaluate(mech, env, "placement-aware", exact=True)
    cert = prop.recheck(mech, ev.witness)
    assert cert is not None
    small, rec = minimize(mech, cert, budget=60)
    assert small.witness.env.users == ("u1", "u2") and small.witness.env.servers == ("s1",)
    assert not any(u in small.summary.split() for u in users), small.summary
    assert "u2" in small.summary and rec["renamed"]["users"]["u1"] in users
