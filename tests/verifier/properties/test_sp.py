"""SP and GSP fixtures (``verifier/properties/sp.py``), derived by hand beside each test (conventions:
``tests/helpers.py``)."""
from __future__ import annotations

import random
from fractions import Fraction as F

from mechanisms import get
from verifier.properties import get_property
from tests.helpers import (BY_ELIGIBLE_SIZE, BY_TASK_BOUND, EQUAL_TASKS, FLOOR_EQUAL_TASKS, coalition,
                           env_of, example, fails, first_fit_env, ghodsi, holds, mis, one_cpu, three_servers,
                           verdict)


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


def test_sp_eligible_fails_hiding_servers():
    """by-eligible-size: truthful |E1| = 2 < |E2| = 3, u1 takes s1, s2 (18 tasks), u2 gets s3: 4 tasks.
    u2 reports {s1}: now u2 (size 1) goes first and takes s1 -> 12 tasks, all on a TRULY eligible server.
    gain 12 - 4 = 8, regret 8/4 = 2."""
    fails("sp", BY_ELIGIBLE_SIZE, three_servers(), "eligible", mis(1, eligible=[0]),
          measure=F(2), gap=F(8), utilities={"u[u2] truthful": F(4), "u[u2] misreport": F(12)})


def test_sp_eligible_holds_hiding_a_server_by_hand():
    """by-eligible-size, u1 reports {s1} instead of {s1, s2}: u1 still first, takes s1 only -> 12 < 18.
    regret (12 - 18)/18 = -1/3."""
    holds("sp", BY_ELIGIBLE_SIZE, three_servers(), "eligible", mis(0, eligible=[0]), measure=F(-1, 3))


def test_sp_eligible_declaring_a_useless_server_gives_nothing():
    """u1 declares s3 too ({s1, s2, s3}, size 3 = |E2|, tie -> u1 first by index): u1 takes all three
    servers, 22 tasks, but s3 is not TRULY eligible for u1: true utility 12 + 6 = 18 = truthful; regret 0."""
    holds("sp", BY_ELIGIBLE_SIZE, three_servers(), "eligible", mis(0, eligible=[0, 1, 2]), measure=F(0))


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


def test_sp_fails_drfh_first_fit_whole_tasks():
    """A genuine whole-task SP violation of drfh-first-fit (001 Sec. V-B; no claim).  Shares per task:
    u1 2/9, u2 3/9.  Truthful: u1 -> s1 (left <0, 3>); u2 -> s2 (left <5, 1>); u1 (2/9 < 1/3) fits
    nowhere (s2 mem 1 < 2), nor u2: u1 runs 1.
    u1 reports <3, 2> (share 1/3): u1 -> s2 (s1 cpu 2 < 3; left <4, 2>); u2 -> s1 (left <0, 2>);
    tie 1/3 = 1/3, u1 -> s2 again (left <1, 0>); nothing else fits.  u1 holds 2 x <3, 2> = <6, 4> on s2:
    with its TRUE <2, 2> floor(min(6/2, 4/2)) = 2 whole tasks.  gain 1, regret 1."""
    fails("sp", get("drfh-first-fit"), first_fit_env(), "demand", mis(0, demand=[3, 2]), measure=F(1),
          gap=F(1), utilities={"u[u1] truthful": F(1), "u[u1] misreport": F(2)}, robust=None)


def test_sp_indivisible_real_violation_still_certified():
    """floor-equal-tasks, one cpu of 12, unit demands: t = 6.  u1 reports 2: t' = floor(12/3) = 4 slots of
    2 cpu = 8 cpu = 8 whole tasks: gain 2, regret 1/3 (a real gain).
    u1 reports 5/4: t' = floor(12/(9/4)) = 5 slots of 5/4 cpu = 25/4 cpu: 6 whole tasks (not 25/4): regret 0."""
    env = one_cpu(12, [1, 1])
    fails("sp", FLOOR_EQUAL_TASKS, env, "demand", mis(0, demand=[2]), measure=F(1, 3), gap=F(2),
          utilities={"u[u1] truthful": F(6), "u[u1] misreport": F(8)}, robust=None)
    holds("sp", FLOOR_EQUAL_TASKS, env, "demand", mis(0, demand=["5/4"]), measure=F(0))
