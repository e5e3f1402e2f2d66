"""Property fixtures (issue 5): for every property and variant, instances where it HOLDS and where it
FAILS, each derived by hand beside the test.  Exact numbers only (``Fraction``).

Conventions used in every derivation:
* ``x_j`` is user ``j``'s task total; with a truthful report and a non-wasteful bundle ``u_j = x_j``
  (seed 004 Lemma 2, ``mechverify.utility``).
* a misreporting user's bundle is ``x'_j * d'_j`` (reported demand); its TRUE utility is
  ``min_r x'_j d'_jr / d_jr`` (Leontief with the true demand ``d_j``).
* "fixed" mechanisms below are test-only ``Mechanism`` objects (never registered) whose allocation is
  chosen by hand, so the property logic is exercised in isolation from any solver.

A failing fixture asserts the evaluation's exact measure AND the certificate of the exact re-check
(``recheck``: gap, measure, utilities); a holding fixture asserts the exact measure and that the
evaluation does not flag a violation.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from fractions import Fraction as F

import pytest

from mechanisms import get
from mechanisms.registry import Mechanism, Setting, SettingError
from mechverify.allocation import Allocation
from mechverify.model import load_environment, parse_environment
from verifier.check import check_property
from verifier.properties import PROPERTIES, Deviation, Report, get_property
from verifier.store import persist, replay

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EX = os.path.join(ROOT, "examples")


# ---------------------------------------------------------------------- helpers
def env_of(resources, servers, users, external=None):
    """``servers``: list of capacity lists (named s1, s2, ...); ``users``: list of dicts (named u1, ...)."""
    d = {"resources": resources,
         "servers": [{"name": f"s{i + 1}", "capacity": c} for i, c in enumerate(servers)],
         "users": [dict({"name": f"u{j + 1}"}, **u) for j, u in enumerate(users)]}
    if external is not None:
        d["external"] = external
    return parse_environment(d)


def example(name):
    return load_environment(os.path.join(EX, name))


def _num(v, exact):
    return F(v) if exact else float(F(v))


def fixed(name, matrix, info=None, **setting):
    """Test-only mechanism returning the hand-chosen task matrix ``matrix`` (whatever is reported)."""
    def func(env, exact):
        x = tuple(tuple(_num(v, exact) for v in row) for row in matrix)
        return Allocation(env, x, name, exact, dict(info if info is not None else {"unique_totals": True}))
    return Mechanism(name, f"test-only fixed allocation {name}", func, Setting(**setting))


def equal_tasks_alloc(env, exact):
    """One server: every user gets the same number ``t`` of (REPORTED) tasks, the largest feasible:
    ``t = min_r c_r / sum_j d_jr``.  Not DRF, not SP: a larger reported demand is a larger bundle."""
    cap = env.capacity[0]
    t = min(cap[r] / sum(env.demand[j][r] for j in range(env.n_users))
            for r in range(env.n_resources) if any(env.demand[j][r] for j in range(env.n_users)))
    return Allocation(env, tuple((_num(t, exact),) for _ in range(env.n_users)), "equal-tasks", exact,
                      {"unique_totals": True})


EQUAL_TASKS = Mechanism("equal-tasks", "test-only: equal number of reported tasks on one server",
                        equal_tasks_alloc, Setting(single_server=True, placement=False, bounds=False,
                                                   weights=False))


def by_eligible_size_alloc(env, exact):
    """Serial dictatorship by the size of the REPORTED eligible set (ties: list order): in turn each user
    takes every server of its reported set not yet taken and runs ``gamma[j,s]`` tasks there."""
    order = sorted(range(env.n_users), key=lambda j: (len(env.eligible[j]), j))
    x = [[F(0)] * env.n_servers for _ in range(env.n_users)]
    taken = set()
    for j in order:
        for s in sorted(env.eligible[j]):
            if s not in taken:
                taken.add(s)
                x[j][s] = env.gamma(j, s)
    return Allocation(env, tuple(tuple(_num(v, exact) for v in row) for row in x), "by-eligible-size", exact,
                      {"unique_totals": True})


BY_ELIGIBLE_SIZE = Mechanism("by-eligible-size", "test-only: serial dictatorship, smallest declared set first",
                             by_eligible_size_alloc, Setting(placement=True, bounds=False, weights=False))


def by_task_bound_alloc(env, exact):
    """One server, one resource: the resource is split in proportion to the REPORTED task bounds
    (``x_j = c n_j / (d_j sum_k n_k)``); every bound must be finite."""
    if any(t is None for t in env.tasks):
        raise SettingError("users[].tasks: by-task-bound needs a finite bound for every user")
    total = sum(env.tasks)
    c = env.capacity[0][0]
    x = [(c * env.tasks[j] / total / env.demand[j][0]) if total else F(0) for j in range(env.n_users)]
    return Allocation(env, tuple((_num(v, exact),) for v in x), "by-task-bound", exact, {"unique_totals": True})


BY_TASK_BOUND = Mechanism("by-task-bound", "test-only: resource proportional to the reported task bounds",
                          by_task_bound_alloc, Setting(single_server=True, weights=False))


def seniority_alloc(env, exact):
    """One server, one resource, unit demands.  Three users: equal split.  Two users: the first-listed
    (senior) user gets 3/4 of the capacity, the other 1/4.  One user: everything."""
    c = env.capacity[0][0]
    shares = {1: [F(1)], 2: [F(3, 4), F(1, 4)], 3: [F(1, 3)] * 3}[env.n_users]
    return Allocation(env, tuple((_num(c * s, exact),) for s in shares), "seniority", exact,
                      {"unique_totals": True})


SENIORITY = Mechanism("seniority", "test-only: senior user favoured when only two users remain",
                      seniority_alloc, Setting(single_server=True))


def mis(j, **kw):
    """A one-user misreport ``Deviation``."""
    for key in ("demand", "external_demand"):
        if key in kw:
            kw[key] = tuple(F(v) for v in kw[key])
    if "eligible" in kw:
        kw["eligible"] = frozenset(kw["eligible"])
    if "tasks" in kw and kw["tasks"] is not None:
        kw["tasks"] = F(kw["tasks"])
    return Deviation("misreport", (Report(j, **kw),))


def coalition(*reports):
    return Deviation("misreport", tuple(Report(j, demand=tuple(F(v) for v in d)) for j, d in reports))


def leave(*users):
    return Deviation("leave", leave=tuple(users))


def holds(prop, mech, env, variant, dev=None, measure=None):
    """Exact evaluation says the property holds; returns the exact measure."""
    p = get_property(prop)
    assert p.applicable(mech, env, variant) is None
    ev = p.evaluate(mech, env, variant, deviation=dev, exact=True)
    assert not ev.violated and ev.witness is None, ev
    if measure is not None:
        assert ev.measure == measure and isinstance(ev.measure, F), ev.measure
    return ev


def fails(prop, mech, env, variant, dev=None, *, measure, gap, utilities=None, method="exact", robust=True):
    """Exact evaluation finds the violation, the float evaluation agrees, and the exact re-check
    certifies it with exactly ``gap`` / ``measure`` (and ``utilities``)."""
    p = get_property(prop)
    assert p.applicable(mech, env, variant) is None
    ev = p.evaluate(mech, env, variant, deviation=dev, exact=True)
    assert ev.violated and ev.witness is not None, ev
    assert ev.measure == measure, (ev.measure, measure)
    evf = p.evaluate(mech, env, variant, deviation=dev, exact=False)
    assert evf.violated and float(evf.measure) == pytest.approx(float(measure))
    cert = p.recheck(mech, evf.witness)  # a float candidate is re-derived exactly
    assert cert is not None
    assert cert.gap == gap and isinstance(cert.gap, F), (cert.gap, gap)
    assert cert.measure == measure, (cert.measure, measure)
    assert cert.method == method
    assert cert.robust is robust, (cert.robust, cert.robust_note)
    if utilities is not None:
        assert cert.utilities == utilities, cert.utilities
    return cert


def verdict(prop, mech, env, variant, budget=5.0):
    alloc_exact = mech(env, exact=True) if mech.setting.exact else None
    return check_property(mech, env, get_property(prop), variant, budget, 0, alloc_exact, mech(env, exact=False))


# Ghodsi et al.'s DRF example (seed 000 Sec. II-A cites DRF [4]): one server <9 CPU, 18 GB>,
# u1 <1, 4>, u2 <3, 1>.  DRF: dominant shares 4/18 = 2/9 (mem) and 3/9 = 1/3 (cpu) per task;
# (2/9) x1 = (1/3) x2  ->  x1 = 3/2 x2;  cpu: x1 + 3 x2 = 9/2 x2 <= 9  -> x2 = 2, x1 = 3
# (mem 4*3 + 2 = 14 <= 18); cpu is saturated and used by both, so both are frozen: (3, 2).
def ghodsi():
    return env_of(["cpu", "mem"], [[9, 18]], [{"demand": [1, 4]}, {"demand": [3, 1]}])


def one_cpu(cap, demands, **extra):
    """One server, one resource ``cpu`` of capacity ``cap``; ``extra``: per-user field lists."""
    users = [{"demand": [d]} for d in demands]
    for key, vals in extra.items():
        for u, v in zip(users, vals):
            if v is not None:
                u[key] = v
    return env_of(["cpu"], [[cap]], users)


def test_every_property_and_variant_is_covered():
    """The fixtures below cover exactly these (property, variant) pairs; a new variant must get fixtures."""
    assert {p: sorted(o.variants) for p, o in PROPERTIES.items()} == {
        "sp": ["demand", "eligible", "tasks"], "gsp": ["demand"], "ef": ["literal", "placement-aware"],
        "si": ["bounded", "external", "per-server-split"], "po": ["fractional"], "bf": ["global", "per-server"],
        "srf": ["max-min"], "pm": ["leave"], "single-server-drf": ["totals"]}


def test_drf_on_ghodsi_example():
    a = get("drf")(ghodsi(), exact=True)
    assert a.totals() == (3, 2)


# ====================================================================== SP / demand
def test_sp_demand_fails_equal_tasks():
    """equal-tasks, one cpu of 12, d = (1, 1): t = 12/2 = 6, u1 runs 6.
    u1 reports d' = 2: t' = 12/(2+1) = 4, bundle 4*2 = 8 cpu, TRUE tasks 8/1 = 8.
    gain 8 - 6 = 2, regret 2/6 = 1/3."""
    cert = fails("sp", EQUAL_TASKS, one_cpu(12, [1, 1]), "demand", mis(0, demand=[2]),
                 measure=F(1, 3), gap=F(2), utilities={"u[u1] truthful": F(6), "u[u1] misreport": F(8)})
    assert cert.allocations["deviation"].totals() == (4, 4)


def test_sp_demand_holds_drf_misreport_by_hand():
    """DRF on Ghodsi's example, u1 reports <1, 6> instead of <1, 4>: per-task dominant shares
    6/18 = 1/3 and 3/9 = 1/3, so x1 = x2 = x; cpu 4x <= 9, mem 7x <= 18 -> x = 9/4 (cpu saturated).
    u1's bundle 9/4 * <1, 6> = <9/4, 27/2> runs min(9/4 / 1, (27/2) / 4) = 9/4 TRUE tasks < 3.
    regret (9/4 - 3)/3 = -1/4."""
    holds("sp", get("drf"), ghodsi(), "demand", mis(0, demand=[1, 6]), measure=F(-1, 4))


def test_sp_demand_holds_drf_every_generated_misreport():
    """DRF is SP (seed 000 Sec. II-A, Ghodsi et al.): no generated demand misreport of either user gains."""
    sp, drf, env = get_property("sp"), get("drf"), ghodsi()
    devs = list(sp.deviations(drf, env, "demand", random.Random(0)))
    assert len(devs) > 20
    for dev in devs:
        ev = sp.evaluate(drf, env, "demand", deviation=dev, exact=False)
        assert not ev.violated, dev.describe(env)
        assert ev.measure is None or ev.measure <= 1e-9


# ====================================================================== SP / eligible
def _three_servers():
    # cpu only; s1 = 12, s2 = 6, s3 = 4; u1 eligible {s1, s2}, u2 eligible everywhere; unit demands
    return env_of(["cpu"], [[12], [6], [4]],
                  [{"demand": [1], "eligible": ["s1", "s2"]}, {"demand": [1]}])


def test_sp_eligible_fails_hiding_servers():
    """by-eligible-size: truthful |E1| = 2 < |E2| = 3, u1 takes s1, s2 (18 tasks), u2 gets s3: 4 tasks.
    u2 reports {s1}: now u2 (size 1) goes first and takes s1 -> 12 tasks, all on a TRULY eligible server.
    gain 12 - 4 = 8, regret 8/4 = 2."""
    fails("sp", BY_ELIGIBLE_SIZE, _three_servers(), "eligible", mis(1, eligible=[0]),
          measure=F(2), gap=F(8), utilities={"u[u2] truthful": F(4), "u[u2] misreport": F(12)})


def test_sp_eligible_holds_hiding_a_server_by_hand():
    """by-eligible-size, u1 reports {s1} instead of {s1, s2}: u1 still first, takes s1 only -> 12 < 18.
    regret (12 - 18)/18 = -1/3."""
    holds("sp", BY_ELIGIBLE_SIZE, _three_servers(), "eligible", mis(0, eligible=[0]), measure=F(-1, 3))


def test_sp_eligible_declaring_a_useless_server_gives_nothing():
    """u1 declares s3 too ({s1, s2, s3}, size 3 = |E2|, tie -> u1 first by index): u1 takes all three
    servers, 22 tasks, but s3 is not TRULY eligible for u1: true utility 12 + 6 = 18 = truthful; regret 0."""
    holds("sp", BY_ELIGIBLE_SIZE, _three_servers(), "eligible", mis(0, eligible=[0, 1, 2]), measure=F(0))


def test_sp_eligible_holds_per_server_drf():
    """per-server-drf on seed 001 Fig. 1 (s1 <2 cpu, 12 mem>, s2 <12, 2>; u1 <0.2, 1>, u2 <1, 0.2>).
    Per server DRF: on s1 cpu is both users' dominant resource, 1 cpu each: u1 5 tasks, u2 1 task;
    s2 symmetric (001 Fig. 2): totals 6, 6.  u1 hides s2: s1 unchanged (5), so u1 runs 5:
    regret (5 - 6)/6 = -1/6.  Servers are independent, so no eligible misreport can gain."""
    env, m, sp = example("001-fig1.json"), get("per-server-drf"), get_property("sp")
    holds("sp", m, env, "eligible", mis(0, eligible=[0]), measure=F(-1, 6))
    for dev in sp.deviations(m, env, "eligible", random.Random(0)):
        assert not sp.evaluate(m, env, "eligible", deviation=dev, exact=True).violated, dev.describe(env)


# ====================================================================== SP / tasks
def test_sp_tasks_fails_by_task_bound():
    """by-task-bound, one cpu of 6, unit demands, n = (4, 8): x1 = 6*4/12 = 2, x2 = 4.
    u1 reports n' = 8: x1' = 6*8/16 = 3 tasks, TRUE utility min(3, n1 = 4) = 3.
    gain 1, regret 1/2."""
    env = one_cpu(6, [1, 1], tasks=[4, 8])
    fails("sp", BY_TASK_BOUND, env, "tasks", mis(0, tasks=8), measure=F(1, 2), gap=F(1),
          utilities={"u[u1] truthful": F(2), "u[u1] misreport": F(3)})


def test_sp_tasks_unbounded_report_is_outside_the_setting():
    """Reporting 'unbounded' leaves by-task-bound's setting: not a valid misreport, no measure."""
    ev = get_property("sp").evaluate(BY_TASK_BOUND, one_cpu(6, [1, 1], tasks=[4, 8]), "tasks",
                                     mis(0, tasks=None), exact=True)
    assert ev.measure is None and not ev.violated and "outside" in ev.note


def test_sp_tasks_holds_drf():
    """DRF, one cpu of 12, unit demands, n1 = 4, u2 unbounded: u1 capped at 4, u2 takes 8.
    u1 reports 10: DRF gives 6 and 6, but TRUE utility min(6, 4) = 4: regret 0.
    u1 reports 2: x1 = 2, regret (2 - 4)/4 = -1/2."""
    env, drf = one_cpu(12, [1, 1], tasks=[4, None]), get("drf")
    assert drf(env, exact=True).totals() == (4, 8)
    holds("sp", drf, env, "tasks", mis(0, tasks=10), measure=F(0))
    holds("sp", drf, env, "tasks", mis(0, tasks=2), measure=F(-1, 2))
    sp = get_property("sp")
    for dev in sp.deviations(drf, env, "tasks", random.Random(0)):
        assert not sp.evaluate(drf, env, "tasks", deviation=dev, exact=True).violated, dev.describe(env)


def test_sp_zero_utility_unchanged_is_zero_regret():
    """Bug fix: a user that runs nothing whatever it reports (eligible nowhere) had regret
    (0 - 0)/0 = ratio(0, 0) = 1, i.e. 'a 100% gain' shown as the worst measure of a search with no
    violation.  Regret is 0 when the utility does not change."""
    env = env_of(["cpu"], [[12], [12]], [{"demand": [1]}, {"demand": [1], "eligible": []}])
    m = get("c-drfh")
    holds("sp", m, env, "demand", mis(1, demand=[2]), measure=F(0))
    holds("sp", m, env, "eligible", mis(1, eligible=[0]), measure=F(0))
    holds("gsp", m, env, "demand", coalition((1, [2]), (0, [1])), measure=F(0))
    r = verdict("sp", m, env, "demand", budget=2)
    assert r.verdict == "not_refuted" and r.measure <= 0


# ====================================================================== GSP / demand
def test_gsp_fails_equal_tasks_coalition():
    """equal-tasks, one cpu of 12, three unit-demand users: t = 4 each.
    u1 and u2 both report 2: t' = 12/(2+2+1) = 12/5; each gets a bundle of 24/5 cpu = 24/5 TRUE tasks.
    Nobody in the coalition loses, each gains 24/5 - 4 = 4/5: gap 4/5, measure (4/5)/4 = 1/5."""
    fails("gsp", EQUAL_TASKS, one_cpu(12, [1, 1, 1]), "demand", coalition((0, [2]), (1, [2])),
          measure=F(1, 5), gap=F(4, 5),
          utilities={"u[u1] truthful": F(4), "u[u1] coalition": F(24, 5),
                     "u[u2] truthful": F(4), "u[u2] coalition": F(24, 5)})


def test_gsp_holds_when_a_member_loses():
    """Same, u1 reports 2 and u2 reports 1/2: t' = 12/(2 + 1/2 + 1) = 24/7; u1 runs 2 * 24/7 = 48/7 > 4,
    but u2 runs (1/2) * 24/7 = 12/7 < 4: a member loses, not a GSP violation.
    measure = worst relative loss (12/7 - 4)/4 = -4/7."""
    holds("gsp", EQUAL_TASKS, one_cpu(12, [1, 1, 1]), "demand", coalition((0, [2]), (1, ["1/2"])),
          measure=F(-4, 7))


def test_gsp_holds_drf_coalition_by_hand():
    """DRF on Ghodsi's example; u1 reports <1, 6>, u2 reports <3, 2>: per-task dominant shares 6/18 = 1/3
    and max(3/9, 2/18) = 1/3, so x1 = x2 = x; cpu 4x <= 9, mem 8x <= 18 -> x = 9/4.
    u1's bundle <9/4, 27/2> runs min(9/4, 27/8) = 9/4 < 3 TRUE tasks (loses); u2's <27/4, 9/2> runs
    min(9/4, 9/2) = 9/4 > 2 (gains).  A member loses: no violation; measure (9/4 - 3)/3 = -1/4."""
    holds("gsp", get("drf"), ghodsi(), "demand", coalition((0, [1, 6]), (1, [3, 2])), measure=F(-1, 4))


# ====================================================================== EF
def test_ef_fails_fixed_unequal_split():
    """One cpu of 12, unit demands, x = (8, 4): u2 runs 8 with u1's bundle, 4 with its own.
    gap 8 - 4 = 4, envy ratio 8/4 = 2 (both variants: one server)."""
    m, env = fixed("8-4", [[8], [4]]), one_cpu(12, [1, 1])
    for variant in ("placement-aware", "literal"):
        cert = fails("ef", m, env, variant, measure=F(2), gap=F(4),
                     utilities={"u[u2] own": F(4), "u[u2] of u1's bundle": F(8)})
        assert cert.witness.users == (1, 0)


def test_ef_holds_equal_split():
    """x = (6, 6): each values the other's bundle at 6 = its own: max envy ratio 6/6 = 1."""
    for variant in ("placement-aware", "literal"):
        holds("ef", fixed("6-6", [[6], [6]]), one_cpu(12, [1, 1]), variant, measure=F(1))


def _placement_env():
    # cpu only; s1 = 6, s2 = 12; u1 eligible everywhere, u2 only on s1; unit demands
    return env_of(["cpu"], [[6], [12]], [{"demand": [1]}, {"demand": [1], "eligible": ["s1"]}])


def test_ef_literal_fails_placement_aware_holds():
    """x: u1 runs 12 on s2, u2 runs 6 on s1.
    placement-aware: u2 cannot use s2, so u1's bundle is worth 0 to it (ratio 0/6); u1 values u2's
    bundle (6 cpu on s1, where u1 is eligible) at 6 < 12 (ratio 1/2): measure max(0, 1/2) = 1/2.
    literal (004 Def. 3, every server counts): u2 values u1's 12 cpu at 12 > 6: gap 6, ratio 2."""
    m, env = fixed("placed", [[0, 12], [6, 0]]), _placement_env()
    holds("ef", m, env, "placement-aware", measure=F(1, 2))
    fails("ef", m, env, "literal", measure=F(2), gap=F(6),
          utilities={"u[u2] own": F(6), "u[u2] of u1's bundle": F(12)})


def test_ef_weighted():
    """Weights w = (2, 1), one cpu of 12, unit demands (seed 002 Sec. II-A: U_n(phi_n/phi_m a_m) <= U_n(a_n)).
    x = (8, 4): u1 values 2 * u2's bundle at 8 = own; u2 values (1/2) * u1's at 4 = own: measure 1.
    x = (9, 3): u2 values (1/2) * 9 = 9/2 > 3: gap 3/2, ratio (9/2)/3 = 3/2."""
    env = one_cpu(12, [1, 1], weight=[2, 1])
    holds("ef", fixed("8-4", [[8], [4]]), env, "placement-aware", measure=F(1))
    fails("ef", fixed("9-3", [[9], [3]]), env, "placement-aware", measure=F(3, 2), gap=F(3, 2),
          utilities={"u[u2] own": F(3), "u[u2] of u1's bundle": F(9, 2)})


def test_ef_holds_drf_ghodsi():
    """DRF (3, 2) on Ghodsi's example: u1 with u2's bundle 2*<3,1> = <6, 2> runs min(6/1, 2/4) = 1/2 < 3;
    u2 with u1's bundle 3*<1,4> = <3, 12> runs min(3/3, 12/1) = 1 < 2.  max ratio max(1/6, 1/2) = 1/2."""
    holds("ef", get("drf"), ghodsi(), "placement-aware", measure=F(1, 2))


# ====================================================================== SI
def test_si_per_server_split_fails_all_to_one_user():
    """One cpu of 12, unit demands, everything to u1: u2 runs 0, its equal split 6 cpu runs 6.
    gap 6, ratio 0/6 = 0."""
    fails("si", fixed("all-to-u1", [[12], [0]]), one_cpu(12, [1, 1]), "per-server-split",
          measure=F(0), gap=F(6), utilities={"u[u2]": F(0), "u[u2] equal split": F(6)})


def test_si_per_server_split_holds_drf():
    """DRF on Ghodsi's example: equal split <9/2, 9> runs min(9/2, 9/4) = 9/4 for u1 and
    min(3/2, 9) = 3/2 for u2; DRF gives 3 and 2: min ratio min(3/(9/4), 2/(3/2)) = min(4/3, 4/3) = 4/3."""
    holds("si", get("drf"), ghodsi(), "per-server-split", measure=F(4, 3))


def test_si_per_server_split_counts_only_eligible_servers():
    """s1 = 6, s2 = 12 cpu, u2 eligible only on s1.  Benchmarks: u1 3 + 6 = 9, u2 3 (half of s2 is useless).
    x: u1 (3, 12), u2 (3, 0): ratios 15/9 = 5/3 and 3/3 = 1: holds with measure 1.
    x: u1 (4, 12), u2 (2, 0): u2 runs 2 < 3: gap 1, ratio 2/3."""
    env = _placement_env()
    holds("si", fixed("a", [[3, 12], [3, 0]]), env, "per-server-split", measure=F(1))
    fails("si", fixed("b", [[4, 12], [2, 0]]), env, "per-server-split", measure=F(2, 3), gap=F(1),
          utilities={"u[u2]": F(2), "u[u2] equal split": F(3)})


def test_si_weighted():
    """w = (3, 1), one cpu of 12, unit demands: benchmarks 3/4 * 12 = 9 and 1/4 * 12 = 3.
    DRF (weighted) gives (9, 3): measure 1.  Equal split (6, 6): u1 6/9 = 2/3: gap 3."""
    env = one_cpu(12, [1, 1], weight=[3, 1])
    assert get("drf")(env, exact=True).totals() == (9, 3)
    holds("si", get("drf"), env, "per-server-split", measure=F(1))
    fails("si", fixed("6-6", [[6], [6]]), env, "per-server-split", measure=F(2, 3), gap=F(3),
          utilities={"u[u1]": F(6), "u[u1] equal split": F(9)})


def _external_env():
    # one cpu of 12, external link of capacity 2; u1 <1 cpu, 1/4 link>, u2 <1 cpu, 0 link>
    return env_of(["cpu"], [[12]], [{"demand": [1], "external_demand": ["1/4"]},
                                    {"demand": [1], "external_demand": [0]}],
                  external=[{"name": "link", "capacity": 2}])


def test_si_external():
    """Equal split (004 Def. 6): u1 gets 6 cpu and 1 link -> min(6/1, 1/(1/4)) = 4; u2 gets 6.
    x = (4, 8): u1 4/4 = 1, u2 8/6: holds with measure 1 (ignoring the link, u1's benchmark would be 6).
    x = (3, 9) (cpu 12, link 3/4 <= 2): u1 3 < 4: gap 1, ratio 3/4."""
    env, st = _external_env(), dict(external=True)
    holds("si", fixed("4-8", [[4], [8]], **st), env, "external", measure=F(1))
    fails("si", fixed("3-9", [[3], [9]], **st), env, "external", measure=F(3, 4), gap=F(1),
          utilities={"u[u1]": F(3), "u[u1] equal split": F(4)})


def test_si_bounded():
    """One cpu of 12, unit demands, n1 = 4 (003 Sec. 2.2: x_i = B_i or an equal share):
    benchmarks u1 min(6, 4) = 4, u2 6.  x = (4, 8): measure min(4/4, 8/6) = 1.
    x = (3, 9): u1 3 < 4: gap 1, ratio 3/4."""
    env = one_cpu(12, [1, 1], tasks=[4, None])
    holds("si", fixed("4-8", [[4], [8]]), env, "bounded", measure=F(1))
    fails("si", fixed("3-9", [[3], [9]]), env, "bounded", measure=F(3, 4), gap=F(1),
          utilities={"u[u1]": F(3), "u[u1] equal split": F(4)})


def test_si_external_and_bounded_not_applicable():
    si, m, env = get_property("si"), fixed("6-6", [[6], [6]]), one_cpu(12, [1, 1])
    assert "external" in si.applicable(m, env, "external")
    assert "bound" in si.applicable(m, env, "bounded")
    assert si.applicable(m, env, "per-server-split") is None
    for variant in ("external", "bounded"):
        assert verdict("si", m, env, variant).verdict == "not_applicable"


# ====================================================================== PO
def test_po_fails_per_server_drf_seed001_fig1():
    """Seed 001 Sec. III-D: per-server DRF gives 6 + 6 tasks (Fig. 2); s1 to u1 alone and s2 to u2 alone
    gives 10 + 10 (u1: min(2/0.2, 12/1) = 10 on s1).  D = 20 > 12: gap 8, domination factor 20/12 = 5/3."""
    cert = fails("po", get("per-server-drf"), example("001-fig1.json"), "fractional", measure=F(5, 3), gap=F(8), robust=None,
                 utilities={"sum u": F(12), "sum y": F(20)})
    assert cert.allocations["allocation"].totals() == (6, 6)
    assert cert.allocations["dominating"].totals() == (10, 10)


def test_po_holds_drfh_seed001_fig1():
    """DRFH on the same instance (001 Fig. 3): 10 + 10.  Nothing dominates it (with x_j >= 10, s1's cpu
    0.2 a1 + b1 <= 2 forces u1's tasks on s1 to 10 and u2's to 0, symmetric on s2): factor 20/20 = 1."""
    holds("po", get("drfh"), example("001-fig1.json"), "fractional", measure=F(1))


def test_po_holds_all_to_one_user():
    """Everything to u1 on one cpu of 12 (unit demands): every allocation runs at most 12 tasks in total,
    so nothing dominates (12, 0): factor 12/12 = 1 (PO says nothing about fairness)."""
    holds("po", fixed("all-to-u1", [[12], [0]]), one_cpu(12, [1, 1]), "fractional", measure=F(1))


def test_po_holds_when_nobody_can_run_anything():
    """Bug fix: every user demands r1, which no server has: chi(E) = {0}, every mechanism gives (0, 0),
    which is trivially Pareto optimal (factor 0/0 read as 1).  The domination LP has no variables and
    the LP layer rejected it: verdict 'unknown' (domination LP failed) instead of 'satisfied'."""
    env = env_of(["r0", "r1"], [[5, 0], [5, 0]], [{"demand": [1, 3]}, {"demand": [1, 2], "tasks": 2}])
    assert get("drfh")(env, exact=True).totals() == (0, 0)
    holds("po", get("drfh"), env, "fractional", measure=F(1))
    assert verdict("po", get("drfh"), env, "fractional").verdict == "satisfied"


def test_po_rdm_versus_tdm():
    """One server <2 cpu, 2 mem>, u1 <2, 1>, u2 <1, 2>; x = (1/2, 1/2).
    TDM (002 eq. (10)): gamma = (1, 1), chi = {x1 + x2 <= 1}: nothing beats total 1: factor 1.
    RDM (002 eq. (9)): 2 x1 + x2 <= 2, x1 + 2 x2 <= 2 allows (2/3, 2/3): D = 4/3 > 1: gap 1/3, factor 4/3."""
    env = env_of(["cpu", "mem"], [[2, 2]], [{"demand": [2, 1]}, {"demand": [1, 2]}])
    half = [["1/2"], ["1/2"]]
    holds("po", fixed("half-tdm", half, feasibility="tdm"), env, "fractional", measure=F(1))
    cert = fails("po", fixed("half-rdm", half), env, "fractional", measure=F(4, 3), gap=F(1, 3),
                 utilities={"sum u": F(1), "sum y": F(4, 3)})
    assert cert.allocations["dominating"].totals() == (F(2, 3), F(2, 3))


# ====================================================================== BF
def _global_cpu_env():
    # s1 = s2 = <6 cpu, 12 mem>; pooled <12, 24>; u1 <1, 1>: shares 1/12 vs 1/24 -> cpu;
    # u2 <2, 1>: 2/12 vs 1/24 -> cpu.  Also at each server cpu is dominant for both (1/6 > 1/12, 2/6 > 1/12).
    return env_of(["cpu", "mem"], [[6, 12], [6, 12]], [{"demand": [1, 1]}, {"demand": [2, 1]}])


def test_bf_global_holds_drfh_common_dominant_resource():
    """Max-min fair on cpu: all 12 cpu usable (mem used at most 12 <= 24), so 6 cpu each: u1 6 tasks,
    u2 3 tasks.  DRFH equalises global dominant shares x1/12 = 2 x2/12, the same thing: shortfall 0."""
    assert get("drfh")(_global_cpu_env(), exact=True).totals() == (6, 3)
    holds("bf", get("drfh"), _global_cpu_env(), "global", measure=F(0))
    holds("bf", get("drfh"), _global_cpu_env(), "per-server", measure=F(0))


def test_bf_global_and_per_server_fail_fixed_split():
    """x: u1 (4, 4), u2 (1, 1) (s1 cpu 4 + 2 = 6, mem 5): u1 holds 8 cpu, u2 4; fair is 6 each.
    u2's shortfall (6 - 4)/6 = 1/3, gap 2 cpu."""
    m = fixed("8-2", [[4, 4], [1, 1]])
    for variant in ("global", "per-server"):
        cert = fails("bf", m, _global_cpu_env(), variant, measure=F(1, 3), gap=F(2),
                     utilities={"cpu[u2]/w mechanism": F(4), "cpu[u2]/w max-min fair": F(6)})
        assert cert.witness.users == (1,)


def test_bf_per_server_fails_c_drfh_seed000_fig1():
    """Seed 000 Fig. 1: s1 <9, 12, 100>, s2 <12, 12, 0>; u1 <1, 2, 10> (cannot use s2: no bw), u2 <1, 2, 0>.
    mem is dominant for both users at every usable server (u1 at s1: 2/12 > 1/9, 10/100; u2: 2/12 > 1/9, 1/12 -
    and at s2 2/12 > 1/12).  Max-min fair on mem: u1 12 mem (6 tasks on s1), u2 12 mem (6 on s2).
    C-DRFH: global dominant shares 10/100 (bw) and 2/24 (mem): x1/10 = x2/12 = g; u2 runs 6 on s2 and
    x2 - 6 on s1; s1 mem: 2 x1 + 2 (x2 - 6) <= 12 -> 22 g <= 12 -> g = 6/11: x = (60/11, 72/11)
    (the paper prints 5.45 and 6.54).  u1 holds 120/11 mem: gap 12 - 120/11 = 12/11, shortfall 1/11."""
    cert = fails("bf", get("c-drfh"), example("000-fig1.json"), "per-server", measure=F(1, 11), gap=F(12, 11),
                 utilities={"mem[u1]/w mechanism": F(120, 11), "mem[u1]/w max-min fair": F(12)})
    assert cert.allocations["allocation"].totals() == (F(60, 11), F(72, 11))


def test_bf_per_server_fails_tsf_seed000_fig1():
    """TSF: gamma1 = min(9, 6, 10) + 0 = 6, gamma2 = 6 + 6 = 12; x1/6 = x2/12 = g, 6g + 12g - 6 <= 6 ->
    g = 2/3: x = (4, 8) (seed 000: 4 and 8).  u1 holds 8 mem vs 12: gap 4, shortfall 1/3."""
    fails("bf", get("tsf"), example("000-fig1.json"), "per-server", measure=F(1, 3), gap=F(4),
          utilities={"mem[u1]/w mechanism": F(8), "mem[u1]/w max-min fair": F(12)})


def test_bf_per_server_fails_per_server_drf_seed000_fig1():
    """per-server DRF: on s1 both users are mem-dominant, 6 mem each: 3 tasks each; s2 only u2: 6 tasks.
    u1 holds 6 mem vs 12: gap 6, shortfall 1/2."""
    fails("bf", get("per-server-drf"), example("000-fig1.json"), "per-server", measure=F(1, 2), gap=F(6),
          robust=None)  # per-server-drf does not declare unique totals


def test_bf_per_server_holds_six_six():
    """x: u1 6 on s1, u2 6 on s2 is exactly the max-min fair mem split (12, 12): shortfall 0."""
    holds("bf", fixed("6-6", [[6, 0], [0, 6]]), example("000-fig1.json"), "per-server", measure=F(0))


def test_bf_not_applicable():
    """000 Fig. 1: u1's global dominant resource is bw (10/100 > 2/24 > 1/21), u2's is mem: no global premise.
    001 Fig. 1: u1 is cpu-dominant on s1 but mem-dominant on s2: no per-server premise (nor global:
    pooled <14, 14>, u1 mem, u2 cpu).  External resources: no premise."""
    bf, m = get_property("bf"), fixed("any", [[0, 0], [0, 0]])
    assert bf.applicable(m, example("000-fig1.json"), "global") is not None
    for variant in ("global", "per-server"):
        assert bf.applicable(m, example("001-fig1.json"), variant) is not None
        assert bf.applicable(fixed("e", [[0], [0]], external=True), _external_env(), variant) is not None
    r = verdict("bf", get("c-drfh"), example("000-fig1.json"), "global")
    assert r.verdict == "not_applicable" and "global dominant" in r.note


# ====================================================================== SRF
def test_srf_holds_drf_weighted():
    """One cpu of 12, w = (2, 1), d = (1, 2): weighted max-min of a_j/w_j: a1/2 = a2, a1 + a2 = 12 ->
    a = (8, 4), x = (8, 2).  DRF: (x1/12)/2 = (2 x2/12)/1 -> x1 = 4 x2, x1 + 2 x2 = 12 -> (8, 2): shortfall 0."""
    env = one_cpu(12, [1, 2], weight=[2, 1])
    assert get("drf")(env, exact=True).totals() == (8, 2)
    holds("srf", get("drf"), env, "max-min", measure=F(0))


def test_srf_holds_drf_with_bound():
    """One cpu of 12, d = (1, 2), n1 = 2: max-min fair gives u1 its 2 (bound), u2 the other 10 cpu
    (5 tasks).  DRF: (2, 5).  shortfall 0."""
    env = one_cpu(12, [1, 2], tasks=[2, None])
    assert get("drf")(env, exact=True).totals() == (2, 5)
    holds("srf", get("drf"), env, "max-min", measure=F(0))


def test_srf_fails_equal_tasks():
    """equal-tasks, one cpu of 12, d = (1, 2): t = 12/3 = 4: u1 holds 4 cpu, u2 8; fair 6 each.
    u1's shortfall (6 - 4)/6 = 1/3, gap 2."""
    fails("srf", EQUAL_TASKS, one_cpu(12, [1, 2]), "max-min", measure=F(1, 3), gap=F(2),
          utilities={"cpu[u1]/w mechanism": F(4), "cpu[u1]/w max-min fair": F(6)})


def test_srf_not_applicable():
    srf = get_property("srf")
    assert srf.applicable(get("drf"), ghodsi(), "max-min") is not None
    assert srf.applicable(fixed("e", [[0], [0]], external=True), _external_env(), "max-min") is not None
    assert verdict("srf", get("drf"), ghodsi(), "max-min").verdict == "not_applicable"


# ====================================================================== PM
def test_pm_holds_drf():
    """DRF, one cpu of 12, three unit-demand users: 4 each; u3 leaves: 6 each.  min ratio 6/4 = 3/2."""
    holds("pm", get("drf"), one_cpu(12, [1, 1, 1]), "leave", leave(2), measure=F(3, 2))


def test_pm_fails_seniority():
    """seniority, one cpu of 12, three users: 4 each.  u1 leaves: u2 (now senior) gets 9, u3 gets 3 < 4.
    gap 4 - 3 = 1, ratio 3/4."""
    cert = fails("pm", SENIORITY, one_cpu(12, [1, 1, 1]), "leave", leave(0), measure=F(3, 4), gap=F(1),
                 utilities={"u[u3] before": F(4), "u[u3] after": F(3)})
    assert cert.witness.users == (2,)


def test_pm_fails_drf_with_a_zero_demand():
    """DRF itself (claimed PM, 001 Sec. III-C) with a zero demand and a weight.  One server <6 r0, 3 r1>;
    u1 <3, 0>, u2 <1, 3> with weight w2 = 3, u3 <2, 1>.  Dominant shares per task: 1/2, 1, 1/3.
    Levels (share / weight = t): x1 = 2t, x2 = 3t, x3 = 3t.  r0: 6t + 3t + 6t = 15t <= 6 (t <= 2/5);
    r1: 9t + 3t = 12t <= 3 (t <= 1/4): r1 saturates at t = 1/4, freezing u2, u3 (x2 = x3 = 3/4);
    u1 (no r1) rises alone: 3 x1 + 3/4 + 3/2 <= 6 -> x1 = 5/4.
    u2 leaves: x1 = 2t, x3 = 3t; r0: 12t <= 6 -> t = 1/2 (r1: 3t <= 3): x1 = 1 < 5/4.
    gap 1/4, ratio 1/(5/4) = 4/5.  (The PM proofs assume every user demands every resource.)"""
    env = env_of(["r0", "r1"], [[6, 3]], [{"demand": [3, 0]}, {"demand": [1, 3], "weight": 3}, {"demand": [2, 1]}])
    assert get("drf")(env, exact=True).totals() == (F(5, 4), F(3, 4), F(3, 4))
    fails("pm", get("drf"), env, "leave", leave(1), measure=F(4, 5), gap=F(1, 4),
          utilities={"u[u1] before": F(5, 4), "u[u1] after": F(1)})


def test_pm_not_applicable_single_user():
    assert get_property("pm").applicable(get("drf"), one_cpu(12, [1]), "leave") is not None


# ====================================================================== single-server DRF
def test_single_server_drf_fails_equal_tasks():
    """Ghodsi's example: equal-tasks gives t = min(9/4, 18/5) = 9/4 to both; DRF gives (3, 2).
    relative differences: u1 |9/4 - 3|/3 = 1/4, u2 |9/4 - 2|/(9/4) = 1/9: measure 1/4, gap 3/4 (u1)."""
    cert = fails("single-server-drf", EQUAL_TASKS, ghodsi(), "totals", measure=F(1, 4), gap=F(3, 4),
                 utilities={"x[u1]": F(9, 4), "x[u1] under DRF": F(3)})
    assert cert.witness.users == (0,)


@pytest.mark.parametrize("name", ["drfh", "c-drfh", "tsf", "cdrf"])
def test_single_server_drf_holds(name):
    """On one server DRFH's global dominant share is DRF's dominant share (001 Prop. 4) and TSF's
    x_j/gamma_j is x_j max_r d_jr/c_r, the same score: (3, 2), measure 0."""
    assert get(name)(ghodsi(), exact=True).totals() == (3, 2)
    holds("single-server-drf", get(name), ghodsi(), "totals", measure=F(0))


def test_single_server_drf_with_per_server_demand():
    """Bug fix: a mechanism taking per-server demands (seed 002 Sec. IV, e.g. PS-DSF) on one server made
    the DRF reference crash ('drf does not take per-server demands').  On one server the override IS the
    demand: Ghodsi's example with u1's <1, 4> given as its s1 override (base demand <5, 5>) -> DRF (3, 2).
    (3, 2) holds with measure 0; equal-tasks' (9/4, 9/4) fails with measure 1/4, gap 3/4 as above."""
    env = parse_environment({"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [9, 18]}],
                             "users": [{"name": "u1", "demand": [5, 5], "server_demand": {"s1": [1, 4]}},
                                       {"name": "u2", "demand": [3, 1]}]})
    st = dict(single_server=True, server_demand=True)
    holds("single-server-drf", fixed("3-2", [[3], [2]], **st), env, "totals", measure=F(0))
    fails("single-server-drf", fixed("9/4", [["9/4"], ["9/4"]], **st), env, "totals", measure=F(1, 4),
          gap=F(3, 4), utilities={"x[u1]": F(9, 4), "x[u1] under DRF": F(3)})


def test_single_server_drf_not_applicable():
    r = verdict("single-server-drf", get("c-drfh"), example("000-fig1.json"), "totals")
    assert r.verdict == "not_applicable" and "server" in r.note


# ====================================================================== indivisible tasks
def test_sp_indivisible_whole_tasks_no_false_violation():
    """Bug fix (false SP violation).  drfh-first-fit (seed 001 Sec. V-B, whole tasks) on
    s1 <4 cpu, 3 mem>, s2 <2, 3>; u1 <3, 1>, u2 <3, 3> with n2 = 3.  Pooled <6, 6>: both per-task global
    dominant shares are 1/2.  Truthful: u1 (tie, lower index) places a task on s1 -> s1 left <1, 2>;
    u2's <3, 3> fits nowhere, nor does a second task of u1: u1 runs 1.
    u1 reports <3/4, 1> (share 1/6): u1 places 3 tasks on s1 (mem 3 used up) and 2 on s2 (cpu left 1/2
    < 3/4); u2 fits nowhere.  Bundles: s1 <9/4, 3>, s2 <3/2, 2>: with its TRUE <3, 1> u1 runs 3/4 of a
    task on s1 and 1/2 on s2 -- 5/4 'tasks' with divisible utility, but 0 whole tasks.
    regret (0 - 1)/1 = -1 (divisible utility wrongly certified a gain of 1/4)."""
    env = env_of(["cpu", "mem"], [[4, 3], [2, 3]], [{"demand": [3, 1]}, {"demand": [3, 3], "tasks": 3}])
    m, dev = get("drfh-first-fit"), mis(0, demand=["3/4", 1])
    assert m(dev.apply(env), exact=True).x[0] == (3, 2)
    holds("sp", m, env, "demand", dev, measure=F(-1))
    wit = get_property("sp").evaluate(m, env, "demand", dev, exact=True)
    assert wit.witness is None


def _first_fit_env():
    # s1 <2 cpu, 5 mem>, s2 <7, 4>; u1 <2, 2>, u2 <2, 3> with n2 = 4; pooled <9, 9>
    return env_of(["cpu", "mem"], [[2, 5], [7, 4]], [{"demand": [2, 2]}, {"demand": [2, 3], "tasks": 4}])


def test_sp_fails_drfh_first_fit_whole_tasks():
    """A genuine whole-task SP violation of drfh-first-fit (001 Sec. V-B; no claim).  Shares per task:
    u1 2/9, u2 3/9.  Truthful: u1 -> s1 (left <0, 3>); u2 -> s2 (left <5, 1>); u1 (2/9 < 1/3) fits
    nowhere (s2 mem 1 < 2), nor u2: u1 runs 1.
    u1 reports <3, 2> (share 1/3): u1 -> s2 (s1 cpu 2 < 3; left <4, 2>); u2 -> s1 (left <0, 2>);
    tie 1/3 = 1/3, u1 -> s2 again (left <1, 0>); nothing else fits.  u1 holds 2 x <3, 2> = <6, 4> on s2:
    with its TRUE <2, 2> floor(min(6/2, 4/2)) = 2 whole tasks.  gain 1, regret 1."""
    fails("sp", get("drfh-first-fit"), _first_fit_env(), "demand", mis(0, demand=[3, 2]), measure=F(1),
          gap=F(1), utilities={"u[u1] truthful": F(1), "u[u1] misreport": F(2)}, robust=None)


def test_whole_tasks_formula():
    """u_j = min(floor(E), sum_s floor(P_s), floor(n_j)) for whole tasks.  Two servers of 3 cpu, a link of 2;
    u1 <1 cpu, 1/2 link>, n1 = 7/2.  Bundle 5/2 cpu on each server, 2 link:
    P = (5/2, 5/2), E = 2/(1/2) = 4: divisible min(4, 5, 7/2) = 7/2; whole min(4, 2 + 2, 3) = 3.
    With n1 unbounded: divisible min(4, 5) = 4, whole min(4, 4) = 4; with 3/2 link: E = 3, whole 3."""
    from mechverify.allocation import Bundle
    from mechverify.utility import true_tasks
    from mechverify.utility import whole_tasks

    def env(n):
        return env_of(["cpu"], [[3], [3]], [{"demand": [1], "external_demand": ["1/2"], "tasks": n}],
                      external=[{"name": "link", "capacity": 2}])
    b = Bundle(((F(5, 2),), (F(5, 2),)), (F(2),))
    assert true_tasks(env("7/2"), 0, b) == F(7, 2) and whole_tasks(env("7/2"), 0, b) == 3
    assert true_tasks(env(None), 0, b) == 4 and whole_tasks(env(None), 0, b) == 4
    assert whole_tasks(env(None), 0, Bundle(b.amounts, (F(3, 2),))) == 3


INDIV = dict(single_server=True, placement=False, bounds=False, weights=False, divisible=False)


def _floor_equal_tasks(env, exact):
    a = equal_tasks_alloc(env, True)
    t = F(int(a.x[0][0]))  # floor: whole tasks
    return Allocation(env, tuple((t,) for _ in range(env.n_users)), "floor-equal-tasks", True, {"unique_totals": True})


FLOOR_EQUAL_TASKS = Mechanism("floor-equal-tasks", "test-only: equal-tasks rounded down to whole tasks",
                              _floor_equal_tasks, Setting(**INDIV))


def test_sp_indivisible_real_violation_still_certified():
    """floor-equal-tasks, one cpu of 12, unit demands: t = 6.  u1 reports 2: t' = floor(12/3) = 4 slots of
    2 cpu = 8 cpu = 8 whole tasks: gain 2, regret 1/3 (a real gain).
    u1 reports 5/4: t' = floor(12/(9/4)) = 5 slots of 5/4 cpu = 25/4 cpu: 6 whole tasks (not 25/4): regret 0."""
    env = one_cpu(12, [1, 1])
    fails("sp", FLOOR_EQUAL_TASKS, env, "demand", mis(0, demand=[2]), measure=F(1, 3), gap=F(2),
          utilities={"u[u1] truthful": F(6), "u[u1] misreport": F(8)}, robust=None)
    holds("sp", FLOOR_EQUAL_TASKS, env, "demand", mis(0, demand=["5/4"]), measure=F(0))


def test_ef_indivisible_whole_tasks():
    """Whole tasks, one cpu of 7: u1 <3> runs 1 task (3 cpu), u2 <2> runs 2 (4 cpu).
    u1 with u2's 4 cpu: 4/3 divisible tasks (envy ratio 4/3) but 1 whole task = own: no envy;
    u2 with u1's 3 cpu: 1 whole task < 2.  max ratio max(1/1, 1/2) = 1.
    Same allocation with divisible tasks: u1 envies, gap 4/3 - 1 = 1/3."""
    env = one_cpu(7, [3, 2])
    holds("ef", fixed("1-2-whole", [[1], [2]], **INDIV), env, "placement-aware", measure=F(1))
    fails("ef", fixed("1-2", [[1], [2]], single_server=True), env, "placement-aware", measure=F(4, 3), gap=F(1, 3))


def test_si_indivisible_whole_task_benchmark():
    """One cpu of 5, unit demands, whole tasks (3, 2): u2's equal split of 5/2 cpu runs 2 whole tasks
    (not 5/2), so u2 gets its benchmark: min ratio min(3/2, 2/2) = 1.  Divisible: 2 < 5/2, gap 1/2."""
    env = one_cpu(5, [1, 1])
    holds("si", fixed("3-2-whole", [[3], [2]], **INDIV), env, "per-server-split", measure=F(1))
    fails("si", fixed("3-2", [[3], [2]], single_server=True), env, "per-server-split", measure=F(4, 5),
          gap=F(1, 2))


# ====================================================================== check_property verdicts
def test_check_verdicts_instance_properties():
    """check_property turns the fixtures above into verdicts: exact certificate -> violated."""
    r = verdict("po", get("per-server-drf"), example("001-fig1.json"), "fractional")
    assert r.verdict == "violated" and r.measure == F(5, 3) and r.certificate.gap == 8
    r = verdict("po", get("drfh"), example("001-fig1.json"), "fractional")
    assert r.verdict == "satisfied" and r.measure == 1


def test_check_verdicts_deviation_properties():
    """The deviation search finds the equal-tasks SP violation and certifies it exactly."""
    r = verdict("sp", EQUAL_TASKS, one_cpu(12, [1, 1]), "demand", budget=5)
    assert r.verdict == "violated" and r.certificate.gap > 0 and r.certificate.method == "exact"
    r = verdict("pm", SENIORITY, one_cpu(12, [1, 1, 1]), "leave")
    assert r.verdict == "violated" and r.measure == F(3, 4)


# ====================================================================== interval reasoning
def approx(name, totals, bounds, **setting):
    """Test-only NON-exact mechanism (``Setting(exact=False)``): one server, returns the float ``totals``
    and the exact per-user interval ``bounds`` that contains the true total."""
    def func(env, exact):
        return Allocation(env, tuple((float(F(t)),) for t in totals), name, False,
                          {"total_bounds": [(F(a), F(b)) for a, b in bounds]})
    return Mechanism(name, f"test-only approximate {name}", func, Setting(exact=False, **setting))


def test_interval_si_certified_when_margin_positive():
    """u2 runs 5.0 (float) with certified bounds [49/10, 51/10]; its equal split runs 6.
    Even the upper end 51/10 < 6: certified by intervals, gap 6 - 51/10 = 9/10, measure (51/10)/6 = 17/20."""
    m = approx("a", ["7", "5"], [("69/10", "71/10"), ("49/10", "51/10")])
    ev = get_property("si").evaluate(m, one_cpu(12, [1, 1]), "per-server-split", exact=False)
    assert ev.violated
    cert = get_property("si").recheck(m, ev.witness)
    assert cert is not None and cert.method == "interval"
    assert cert.gap == F(9, 10) and cert.measure == F(17, 20)
    r = verdict("si", m, one_cpu(12, [1, 1]), "per-server-split")
    assert r.verdict == "violated"


@pytest.mark.parametrize("hi", ["61/10", "6"])
def test_interval_si_not_certified_when_bounds_reach_benchmark(hi):
    """u2 runs 5.99 (float, a candidate: 5.99 < 6) but its bounds [59/10, hi] reach the benchmark 6:
    the true total may be >= 6, so no certificate; check says 'unknown', never 'violated'."""
    m = approx("b", ["6.01", "5.99"], [("59/10", "61/10"), ("59/10", hi)])
    env = one_cpu(12, [1, 1])
    ev = get_property("si").evaluate(m, env, "per-server-split", exact=False)
    assert ev.violated
    assert get_property("si").recheck(m, ev.witness) is None
    assert verdict("si", m, env, "per-server-split").verdict == "unknown"


def approx_equal_tasks(width):
    """equal-tasks computed 'approximately': float t with bounds [t - width, t + width]."""
    def func(env, exact):
        a = equal_tasks_alloc(env, True)
        t = a.x[0][0]
        return Allocation(env, tuple((float(t),) for _ in range(env.n_users)), "approx-equal-tasks", False,
                          {"total_bounds": [(t - width, t + width)] * env.n_users})
    return Mechanism("approx-equal-tasks", "test-only", func, Setting(single_server=True, exact=False,
                                                                      bounds=False, weights=False))


def test_interval_sp_certified():
    """SP fixture of equal-tasks with bounds +-1/100: truthful u1 in [599/100, 601/100]; after reporting 2,
    x1' in [399/100, 401/100] of 2-cpu tasks = [798/100, 802/100] TRUE tasks.
    gap 798/100 - 601/100 = 197/100."""
    m, sp = approx_equal_tasks(F(1, 100)), get_property("sp")
    ev = sp.evaluate(m, one_cpu(12, [1, 1]), "demand", mis(0, demand=[2]), exact=False)
    cert = sp.recheck(m, ev.witness)
    assert cert.method == "interval" and cert.gap == F(197, 100)
    assert cert.utilities == {"u[u1] truthful": (F(599, 100), F(601, 100)),
                              "u[u1] misreport": (F(798, 100), F(802, 100))}
    assert cert.robust is None  # no total_range: uniqueness not established


def test_interval_sp_not_certified_when_overlapping():
    """Same with bounds +-1: truthful [5, 7], misreport 2 * [3, 5] = [6, 10] overlaps: no certificate."""
    m, sp = approx_equal_tasks(F(1)), get_property("sp")
    ev = sp.evaluate(m, one_cpu(12, [1, 1]), "demand", mis(0, demand=[2]), exact=False)
    assert ev.violated and sp.recheck(m, ev.witness) is None


def test_interval_ef():
    """u2 with float 4 in [39/10, 41/10], u1 with 8 in [79/10, 81/10] (one cpu, unit demands):
    u2 envies u1 certainly: gap 79/10 - 41/10 = 19/5, measure (79/10)/(41/10) = 79/41."""
    m = approx("c", ["8", "4"], [("79/10", "81/10"), ("39/10", "41/10")])
    ev = get_property("ef").evaluate(m, one_cpu(12, [1, 1]), "placement-aware", exact=False)
    cert = get_property("ef").recheck(m, ev.witness)
    assert cert.method == "interval" and cert.gap == F(19, 5) and cert.measure == F(79, 41)


# ====================================================================== robustness flag
def utilitarian_alloc(env, exact):
    """One server, one resource: maximise total tasks.  Optimal face: the capacity goes to users with the
    smallest demand d_min, in any split; the returned vertex gives it all to the first of them.
    ``total_range``: [0, c/d_min] for those users, [0, 0] for the others."""
    c = env.capacity[0][0]
    dmin = min(env.demand[j][0] for j in range(env.n_users))
    best = [j for j in range(env.n_users) if env.demand[j][0] == dmin]
    x = [c / dmin if j == best[0] else F(0) for j in range(env.n_users)]
    rng = [(F(0), c / dmin) if j in best else (F(0), F(0)) for j in range(env.n_users)]
    if len(best) == 1:
        rng = [(v, v) for v in x]
    return Allocation(env, tuple((_num(v, exact),) for v in x), "utilitarian", exact, {"total_range": rng})


UTILITARIAN = Mechanism("utilitarian", "test-only: max total tasks", utilitarian_alloc,
                        Setting(single_server=True))


def test_robust_false_when_other_optimal_allocations_satisfy():
    """d = (1, 1), one cpu of 12: returned (12, 0); SI fails for u2 (0 < 6, gap 6) and EF fails
    (u2 envies u1: 12 > 0, gap 12) -- but (6, 6) is optimal too: robust False."""
    env = one_cpu(12, [1, 1])
    fails("si", UTILITARIAN, env, "per-server-split", measure=F(0), gap=F(6), robust=False)
    fails("ef", UTILITARIAN, env, "placement-aware", measure=float("inf"), gap=F(12), robust=False)


def test_robust_true_when_optimum_unique():
    """d = (1, 2): the unique optimum is (12, 0) (a task of u2 costs twice as much); u2's benchmark is 3:
    SI gap 3, robust True.  EF: u2 with u1's 12 cpu runs 6 > 0: gap 6, robust True."""
    env = one_cpu(12, [1, 2])
    fails("si", UTILITARIAN, env, "per-server-split", measure=F(0), gap=F(3), robust=True)
    fails("ef", UTILITARIAN, env, "placement-aware", measure=float("inf"), gap=F(6), robust=True)


def test_robust_none_when_uniqueness_unknown():
    """A mechanism that declares neither unique totals nor a total_range: the EF violation of x = (8, 4)
    (gap 4, as in test_ef_fails_fixed_unequal_split) is certified but its robustness is unknown (None)."""
    m = fixed("8-4-unknown", [[8], [4]], info={})
    fails("ef", m, one_cpu(12, [1, 1]), "literal", measure=F(2), gap=F(4), robust=None)


# ====================================================================== store / replay
def _po_cert():
    env, m = example("001-fig1.json"), get("per-server-drf")
    p = get_property("po")
    return p.recheck(m, p.evaluate(m, env, "fractional", exact=True).witness)


def _run_cli(*args):
    return subprocess.run([sys.executable, "-m", "verifier", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_store_replay_roundtrip_and_idempotent(tmp_path):
    cert = _po_cert()
    p1 = persist(cert, None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    p2 = persist(cert, None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    assert p1 == p2 and os.path.dirname(p1) == os.path.join(str(tmp_path), "per-server-drf")
    d = json.load(open(p1))
    assert d["gap"] == "8" and d["measure"] == "5/3" and d["utilities"] == {"sum u": "12", "sum y": "20"}
    assert os.listdir(os.path.dirname(p1)) == [os.path.basename(p1)]  # no temporary files left
    r = replay(p1)
    assert r.ok, r.message


def _corrupt(path, edit):
    d = json.load(open(path))
    edit(d)
    with open(path, "w") as fh:
        json.dump(d, fh)


@pytest.mark.parametrize("what,edit,expect", [
    ("utility", lambda d: d["utilities"].__setitem__("sum u", "13"), "stored utilities differs"),
    ("gap", lambda d: d.__setitem__("gap", "9"), "stored gap differs"),
    ("allocation", lambda d: d["allocations"]["allocation"]["tasks"][0].__setitem__(0, "6"),
     "stored allocations differs"),
    ("capacity", lambda d: d["environment"]["servers"][0]["capacity"].__setitem__(0, "3"),
     "content does not match"),
])
def test_replay_detects_corruption(tmp_path, what, edit, expect):
    path = persist(_po_cert(), None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    _corrupt(path, edit)
    r = replay(path)
    assert not r.ok and expect in r.message, r.message


def test_store_replay_deviation_certificate(tmp_path):
    """An SP certificate (with its deviation) round-trips through the store; corrupting the deviation
    changes the content hash, corrupting the stored misreport utility fails the recomputation."""
    sp, m, env, dev = get_property("sp"), get("drfh-first-fit"), _first_fit_env(), mis(0, demand=[3, 2])
    cert = sp.recheck(m, sp.evaluate(m, env, "demand", dev, exact=True).witness)
    path = persist(cert, None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    d = json.load(open(path))
    assert d["deviation"] == {"kind": "misreport", "reports": [{"user": "u1", "demand": ["3", "2"]}]}
    assert d["allocations"]["deviation"]["environment"] == "deviation" and d["gap"] == "1"
    assert replay(path).ok
    _corrupt(path, lambda d: d["utilities"].__setitem__("u[u1] misreport", "3"))
    r = replay(path)
    assert not r.ok and "utilities" in r.message
    path = persist(cert, None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    _corrupt(path, lambda d: d["deviation"]["reports"][0].__setitem__("demand", ["3", "3"]))
    r = replay(path)
    assert not r.ok and "content does not match" in r.message


def test_replay_cli_exit_codes(tmp_path):
    path = persist(_po_cert(), None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    ok = _run_cli("replay", str(tmp_path))
    assert ok.returncode == 0 and "1 passed, 0 failed" in ok.stdout, ok.stdout + ok.stderr
    _corrupt(path, lambda d: d["utilities"].__setitem__("sum y", "21"))
    bad = _run_cli("replay", str(tmp_path))
    assert bad.returncode == 1 and "FAIL" in bad.stdout and "utilities" in bad.stdout, bad.stdout + bad.stderr


# ====================================================================== CLI check
@pytest.mark.parametrize("mech,gap", [("c-drfh", "12/11"), ("tsf", "4")])
def test_cli_check_bf_per_server_violated(mech, gap):
    res = _run_cli("check", mech, "examples/000-fig1.json", "--format", "json", "--budget", "0.5")
    assert res.returncode == 1, res.stderr  # a property is violated on the instance (--fail-on violated)
    out = {(r["property"], r["variant"]): r for r in json.loads(res.stdout)["results"]}
    bf = out[("bf", "per-server")]
    assert bf["verdict"] == "violated" and bf["witness"]["gap"] == gap and bf["claimed"] == "fails"
    assert out[("bf", "global")]["verdict"] == "not_applicable"
    assert out[("po", "fractional")]["verdict"] == "satisfied"


def test_cli_check_drf_single_server_no_violation(tmp_path):
    inst = tmp_path / "ghodsi.json"
    inst.write_text(json.dumps(ghodsi().to_dict()))
    res = _run_cli("check", "drf", str(inst), "--format", "json", "--budget", "1")
    assert res.returncode == 0, res.stderr
    results = json.loads(res.stdout)["results"]
    assert {r["verdict"] for r in results} <= {"satisfied", "not_refuted", "not_applicable"}
    by = {(r["property"], r["variant"]): r["verdict"] for r in results}
    assert by[("single-server-drf", "totals")] == "satisfied" and by[("srf", "max-min")] == "not_applicable"
