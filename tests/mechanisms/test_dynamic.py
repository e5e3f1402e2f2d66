"""The mechanisms with memory of mechanisms.paper.dynamic: Dynamic DRF (Kash, Procaccia, Shah 2014), per-round
max-min, Karma (Vuppalapati et al. 2023).  Every number asserted comes from the authors' unit tests (cited by
repository, path and commit; paraphrased, not copied), or from a hand derivation written beside it."""
import random
from fractions import Fraction as F

import pytest

import mechanisms  # noqa: F401  (registers)
from mechanisms.core.registry import SettingError, allocate, get
from mechanisms.core.time import execute
from mechanisms.paper.dynamic.karma import (borrow_from_poorest, give_to_richest, karma_mechanism, quantum, shares)
from mechanisms.paper.dynamic.round_maxmin import maxmin
from mechverify.execution import parse_execution
from mechverify.instances import parse_environment as parse_instance

KARMA_REPO = "resource-disaggregation/karma @ 510cdd94e73166252da813e9e65ad5a71b8ee7e2"


def tasks_of(step):
    return [row[0] for row in step.alloc.x]


# ====================================================================== dynamic-drf
def kps_example(**kw):
    d = {"resources": ["r1", "r2"], "servers": [{"name": "s", "capacity": [1, 1]}],
         "users": [{"name": "u1", "demand": [1, "1/2"]}],
         "events": [{"t": 1, "kind": "arrive", "user": {"name": "u2", "demand": ["1/2", 1]}},
                    {"t": 2, "kind": "arrive", "user": {"name": "u3", "demand": [1, "1/4"]}}]}
    d.update(kw)
    return parse_execution(d)


def test_dynamic_drf_worked_example_by_hand():
    """n = 3 users in all, capacity (1, 1), d1 = (1, 1/2), d2 = (1/2, 1), d3 = (1, 1/4); every dominant demand is 1
    of a resource of capacity 1, so tasks = dominant shares x and a_j = d_j.
    k=1: budget 1/3 of each; L (1, 1/2) <= (1/3, 1/3) -> L = 1/3 (r1 binds).  x = (1/3).
    k=2: budget 2/3.  On [0, 1/3] only u2 rises: usage (1/3, 1/6) + L (1/2, 1); at L = 1/3 it is (1/2, 1/2) <= 2/3.
         Above 1/3 both rise, slope (3/2, 3/2): L = 1/3 + (2/3 - 1/2) / (3/2) = 1/3 + 1/9 = 4/9 (both bind).
    k=3: budget 1.  Usage (2/3, 2/3); u3 rises alone with slope (1, 1/4): r1 allows 1/3, r2 4/3, and 1/3 < 4/9 (the
         next breakpoint), so L = 1/3.  x = (4/9, 4/9, 1/3); usage (1, 3/4)."""
    steps = execute(get("dynamic-drf"), kps_example())
    assert [tasks_of(st) for st in steps] == [[F(1, 3)], [F(4, 9), F(4, 9)], [F(4, 9), F(4, 9), F(1, 3)]]
    assert steps[-1].alloc.info["k"] == 3 and steps[-1].alloc.info["n"] == 3
    # the float path agrees
    fl = execute(get("dynamic-drf"), kps_example(), exact=False)
    assert [tasks_of(st) for st in fl][-1] == pytest.approx([4 / 9, 4 / 9, 1 / 3])


def test_dynamic_drf_late_arrival_envies():
    """The EF/DPO tension (hand derivation on the example above): at step 2 u1 holds (4/9)(1, 1/2) = (4/9, 2/9); u3
    (per task (1, 1/4)) could run min(4/9 / 1, (2/9) / (1/4)) = min(4/9, 8/9) = 4/9 tasks with it, more than its own
    1/3: u3 envies u1 (allowed by DEF: u1 arrived earlier and got nothing at step 2)."""
    last = execute(get("dynamic-drf"), kps_example())[-1]
    held1 = [v * last.alloc.x[0][0] for v in last.env.demand[0]]
    d3 = last.env.demand[2]
    assert held1 == [F(4, 9), F(2, 9)]
    assert min(h / d for h, d in zip(held1, d3)) == F(4, 9) > last.alloc.x[2][0] == F(1, 3)


def test_dynamic_drf_irrevocable_and_departure_convention():
    """Nobody is ever lowered on arrivals; a departure frees its resources for the others within (k/n) C (hand:
    after u1 leaves at k = 3, usage is u2 (2/9, 4/9) + u3 (1/3, 1/12) = (5/9, 19/36), budget (1, 1).  From 1/3 u3 rises
    alone (slope (1, 1/4)): r1 would bind at 1/3 + 4/9 = 7/9 > 4/9, so at 4/9 usage is (2/9 + 4/9, 4/9 + 1/9) =
    (2/3, 5/9); then both rise (slope (3/2, 5/4)): r1 binds at 4/9 + (1/3)/(3/2) = 2/3 (r2 at 4/9 + 16/45 = 4/5)."""
    ex = kps_example(events=kps_example().to_dict()["events"] + [{"t": 3, "kind": "leave", "user": "u1"}])
    steps = execute(get("dynamic-drf"), ex)
    for a, b in zip(steps, steps[1:3]):
        for u in a.users:
            assert tasks_of(b)[b.users.index(u)] >= tasks_of(a)[a.users.index(u)]
    assert tasks_of(steps[-1]) == [F(2, 3), F(2, 3)]


def test_dynamic_drf_one_shot_is_drf_and_setting():
    """Everyone present at step 0 with n = k: the whole pool, i.e. DRF (Ghodsi et al.'s 9 CPU / 18 GB example:
    A (1, 4) 3 tasks, B (3, 1) 2 tasks)."""
    env = parse_instance({"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [9, 18]}],
                          "users": [{"name": "A", "demand": [1, 4]}, {"name": "B", "demand": [3, 1]}]})
    assert [r[0] for r in allocate("dynamic-drf", env, exact=True).x] == [3, 2]
    with pytest.raises(SettingError, match="weight"):
        allocate("dynamic-drf", parse_instance({"resources": ["cpu"], "servers": [{"name": "s", "capacity": [1]}],
                                                "users": [{"name": "A", "demand": [1], "weight": 2}]}))
    m = get("dynamic-drf")
    assert m.time.kind == "stateful" and not m.time.revocable and not m.time.rounds
    assert {(c.property, c.variant, c.status) for c in m.claims} >= {("dsi", None, "holds"),
                                                                      ("each-step", "ef", "fails")}
    assert all("arrivals_only" in c.domain for c in m.claims) and "not verified" in m.notes


# ====================================================================== round-maxmin
def pool(capacity, users, events=(), resources=("slots",)):
    return parse_execution({"resources": list(resources), "servers": [{"name": "pool", "capacity": [capacity]}],
                            "users": users, "events": list(events)})


def rounds_of(tenants, demands_per_round, capacity):
    """An execution on one pool: the ``tenants`` present at 0 with the first round's demands (task counts, one unit
    per task), then per later round one ``demand`` event per tenant and a ``round`` event."""
    users = [{"name": u, "demand": [1], "tasks": d} for u, d in zip(tenants, demands_per_round[0])]
    events = []
    for t, ds in enumerate(demands_per_round[1:], start=1):
        events += [{"t": t, "kind": "demand", "user": u, "tasks": d} for u, d in zip(tenants, ds)]
        events.append({"t": t, "kind": "round"})
    return pool(capacity, users, events)


def round_steps(steps):
    return [st for st in steps if st.index == 0 or st.event.kind == "round"]


# the authors' maxmin_test.cpp (KARMA_REPO, jiffy-implementation/libjiffy/test/maxmin_test.cpp): 3 tenants, 15 blocks
MAXMIN_CASES = [((10, 10, 10), (5, 5, 5)), ((3, 10, 10), (3, 6, 6)), ((1, 9, 6), (1, 8, 6)), ((1, 1, 3), (1, 1, 3))]


def test_round_maxmin_authors_cases():
    ex = rounds_of("ABC", [d for d, _ in MAXMIN_CASES], 15)
    got = [tasks_of(st) for st in round_steps(execute(get("round-maxmin"), ex))]
    assert got == [list(a) for _, a in MAXMIN_CASES]
    assert 15 - sum(got[-1]) == 10  # the last case leaves 10 blocks unallocated, as the test asserts
    assert [maxmin([F(v) for v in d], [1, 1, 1], F(15)) for d, _ in MAXMIN_CASES] == [list(a) for _, a in MAXMIN_CASES]


def test_round_maxmin_authors_random_invariants():
    """maxmin_test.cpp's random test, re-drawn with our own seeded generator: 5 tenants, demands uniform in 0..20,
    50 blocks: alloc <= demand, alloc >= min(demand, 10) (the fair share 50/5), sum = min(sum of demands, 50)."""
    rng = random.Random(1995)
    demands = [[rng.randint(0, 20) for _ in range(5)] for _ in range(40)]
    steps = round_steps(execute(get("round-maxmin"), rounds_of("ABCDE", demands, 50)))
    assert len(steps) == 40
    for ds, st in zip(demands, steps):
        a = tasks_of(st)
        assert all(x <= d and x >= min(d, 10) for x, d in zip(a, ds))
        assert sum(a) == min(sum(ds), 50)


def test_round_maxmin_weights_and_holding_between_rounds():
    """Capacity 12, weights 1 and 2, 10 tasks each: lambda = 12 / 3 = 4, so (4, 8).  C arrives at t=1: it gets 0
    until the round at t=2 (A, B held at (4, 8)); at that round, weights (1, 2, 1), demands (10, 10, 10): lambda =
    12 / 4 = 3 -> (3, 6, 3); A leaves at t=3: its 3 stay idle, B and C are held at (6, 3) (no round follows)."""
    ex = pool(12, [{"name": "A", "demand": [1], "tasks": 10}, {"name": "B", "demand": [1], "tasks": 10, "weight": 2}],
              [{"t": 1, "kind": "arrive", "user": {"name": "C", "demand": [1], "tasks": 10}},
               {"t": 2, "kind": "round"}, {"t": 3, "kind": "leave", "user": "A"}])
    assert [tasks_of(st) for st in execute(get("round-maxmin"), ex)] == [[4, 8], [4, 8, 0], [3, 6, 3], [6, 3]]


def test_round_maxmin_setting():
    m = get("round-maxmin")
    assert m.time.rounds and m.time.guarantee == 1 and m.setting.dynamic
    assert all(c.domain == ("rounds_only",) for c in m.claims)
    two = parse_execution({"resources": ["a", "b"], "servers": [{"name": "pool", "capacity": [4, 4]}],
                           "users": [{"name": "A", "demand": [1, 1], "tasks": 1}], "events": []})
    with pytest.raises(SettingError, match="^resources: round-maxmin"):
        execute(m, two)
    with pytest.raises(SettingError, match="^resources: round-maxmin"):
        allocate(m, parse_instance({k: v for k, v in two.to_dict().items()
                                                      if k in ("resources", "servers", "users")}))


# ====================================================================== karma
# The authors' Catch2 tests, KARMA_REPO, jiffy-implementation/libjiffy/test/karma_test.cpp, re-encoded on our
# per-quantum function: 4 tenants A-D, the pre-set allocations min(d, g), A borrows 5 in every case of section A.
# (total, shared) -> g, demands, credits, expected rates of B, C, D (a set of sorted triples where the test accepts
# several outcomes, else exact), the shared slices lent.
SUPPLY_CASES = {  # borrow_from_poorest_fast
    "matching_supply_one": ((20, 0), (10, 0, 1, 1), (10, 1, 100, 100), (5, 0, 0), 0),
    "matching_supply_two": ((20, 0), (10, 0, 0, 1), (10, 100, 100, 1000), {(3, 2, 0), (2, 3, 0)}, 0),
    "matching_supply_three": ((20, 0), (10, 0, 0, 0), (10, 100, 100, 100), {(1, 2, 2)}, 0),
    "matching_supply_four": ((20, 0), (10, 0, 0, 0), (10, 100, 101, 102), {(1, 2, 2), (0, 2, 3)}, 0),
    "matching_supply_eight": ((20, 0), (10, 4, 0, 0), (10, 1, 100, 100), (1, 2, 2), 0),
    "matching_supply_largec": ((20, 0), (10, 0, 0, 0), tuple(9_999_999_999 + c for c in (10, 100, 100, 100)),
                               {(1, 2, 2)}, 0),
    "matching_supply_five": ((25, 5), (10, 4, 4, 4), (10, 100, 100, 100), (1, 1, 1), 2),
    "matching_supply_six": ((25, 5), (10, 3, 4, 4), (10, 1, 100, 100), (2, 1, 1), 1),
    "matching_supply_seven": ((25, 5), (10, 3, 3, 4), (10, 1, 100, 100), (2, 2, 1), 0),
}


@pytest.mark.parametrize("case", sorted(SUPPLY_CASES))
def test_karma_borrow_from_poorest_authors_cases(case):
    (total, shared), demands, credits, want, public = SUPPLY_CASES[case]
    g, P = (total - shared) // 4, shared  # the test's g = (total - public) / tenants
    q = quantum(demands, credits, g, P)
    assert q.alloc[0] == 10 and q.rate[0] == -5 and q.shared_lent == public
    if isinstance(want, set):
        assert tuple(sorted(q.rate[1:])) in {tuple(sorted(w)) for w in want}
        if case == "matching_supply_two":  # B >= 2, C >= 2, one of them 3, D 0
            assert min(q.rate[1:3]) >= 2 and 3 in q.rate[1:3] and q.rate[3] == 0
    else:
        assert q.rate[1:] == want
    # the sub-routine alone (donors B-D with their donations)
    donors = [(credits[i], g - demands[i]) for i in range(1, 4) if demands[i] < g]
    lent, pub = borrow_from_poorest(5, donors, P)
    assert sum(lent) + pub == 5 and pub == public


# give_to_richest_fast: total 20, no shared slices, g = 5; donor A (demand 0) lends 5; borrowers B-D.
# demands B-D, credits A-D, expected (rates B-D, allocations B-D): exact, or a set of sorted alternatives
DEMAND_CASES = {
    "matching_demand_one": ((10, 10, 10), (10, 100, 1, 1), ((-5, 0, 0), (10, 5, 5))),
    "matching_demand_two": ((10, 10, 10), (10, 100, 100, 1), {((-3, -2, 0), (5, 7, 8))}),
    "matching_demand_three": ((10, 10, 10), (10, 100, 100, 100), {((-2, -2, -1), (6, 7, 7))}),
    "matching_demand_four": ((10, 10, 10), (10, 102, 101, 100), {((-2, -2, -1), (6, 7, 7)), ((-3, -2, 0), (5, 7, 8))}),
    "matching_demand_five": ((6, 10, 10), (10, 100, 10, 10), ((-1, -2, -2), (6, 7, 7))),
    "matching_demand_six": ((10, 10, 10), (10, 4, 1, 0), ((-4, -1, 0), (9, 6, 5))),
    "matching_demand_largec": ((10, 10, 10), tuple(9_999_999_999 + c for c in (10, 100, 100, 100)),
                               {((-2, -2, -1), (6, 7, 7))}),
}


@pytest.mark.parametrize("case", sorted(DEMAND_CASES))
def test_karma_give_to_richest_authors_cases(case):
    demands, credits, want = DEMAND_CASES[case]
    q = quantum((0,) + demands, credits, 5, 0)
    assert q.alloc[0] == 0 and q.rate[0] == 5
    got = (q.rate[1:], q.alloc[1:])
    if isinstance(want, set):
        assert (tuple(sorted(got[0])), tuple(sorted(got[1]))) in want
    else:
        assert got == want
    # the sub-routine alone: 5 slices to B-D by credits, requests min(d - g, credits)
    received = give_to_richest(5, [(c, min(d - 5, c)) for c, d in zip(credits[1:], demands)])
    assert [5 + v for v in received] == list(q.alloc[1:])


def test_karma_end_to_end_authors_run():
    """karma_e2e_one: 3 tenants, 10 initial credits, 3 shared blocks of 33 (g = 10; alpha = 10/11 here: floor(10/11
    * 33 / 3) = 10, P = 33 - 30 = 3), jiffy top-up; allocations, credits and the shared slices' pot per quantum."""
    run = [((10, 10, 10), (10, 10, 10), (10, 10, 10), 0),
           ((2, 12, 16), (2, 12, 16), (18, 8, 4), 0),
           ((6, 12, 6), (6, 12, 6), (18, 6, 6), 0),
           ((18, 5, 12), (18, 5, 10), (10, 11, 6), 3),
           ((10, 10, 10), (10, 10, 10), (11, 12, 7), 0)]
    m = karma_mechanism(alpha=F(10, 11), init_credits=10, variant="jiffy", name="karma-e2e")
    steps = round_steps(execute(m, rounds_of("ABC", [d for d, _, _, _ in run], 33)))
    assert len(steps) == 5
    for (_, alloc, credits, pot), st in zip(run, steps):
        info = st.alloc.info
        assert (tuple(tasks_of(st)), tuple(info["credits"][u] for u in "ABC"), info["pot"]) == (alloc, credits, pot)
        assert (info["g"], info["P"]) == (10, 3)


@pytest.mark.parametrize("variant", ["jiffy", "library"])
def test_karma_random_invariants(variant):
    """Seeded runs, 4 users, 40 slices, alpha 1/2 (g = 5, P = 20), 3 initial credits (so that borrowers are often
    credit-limited), demands 0..25: per quantum, isolation (alloc >= min(d, g)), alloc <= d, work conservation up to
    credits (sum alloc = min(sum_i min(d_i, g + c_i), slices), c_i after the top-up), no negative credits, and the
    credit bookkeeping: jiffy conserves users' credits plus the pot; the library adds P // n per user."""
    rng = random.Random(7 if variant == "jiffy" else 8)
    demands = [[rng.randint(0, 25) for _ in range(4)] for _ in range(60)]
    m = karma_mechanism(alpha=F(1, 2), init_credits=3, variant=variant, name="karma-random")
    steps = round_steps(execute(m, rounds_of("ABCD", demands, 40)))
    total = 4 * 3
    for ds, st in zip(demands, steps):
        info, a = st.alloc.info, tasks_of(st)
        g, P = info["g"], info["P"]
        assert (g, P) == shares(40, 4, F(1, 2)) == (5, 20)
        assert all(min(d, g) <= x <= d for x, d in zip(a, ds))
        assert sum(a) == min(sum(min(d, g + c) for d, c in zip(ds, info["before"])), 40)
        assert all(c >= 0 for c in info["credits"].values())
        assert sum(info["rate"]) == -info["shared_lent"]
        if variant == "library":
            total += 4 * (P // 4)
        assert sum(info["credits"].values()) + info["pot"] == total


def test_karma_setting_and_registration():
    k = get("karma")
    assert k.time.guarantee == F(1, 2) and k.time.rounds and not k.setting.divisible
    assert get("karma@library").time.guarantee == F(1, 2)
    assert {c.property for c in k.claims} == {"each-step", "isolation"}  # online-sp: see karma.py (hindsight)
    assert all(c.domain == ("rounds_only",) for c in k.claims) and "not verified" in k.notes
    mixed = pool(10, [{"name": "A", "demand": [1], "tasks": 3}, {"name": "B", "demand": [2], "tasks": 3}])
    with pytest.raises(SettingError, match=r"^users\[1\].demand: karma"):
        execute(k, mixed)
    # one shot: everyone present, the first quantum; 6 slices, 3 users, alpha 1/2: g = 1, P = 3; the library
    # example's first demands (4, 1, 1) (KARMA_REPO, algorithm/example/example.cpp; no asserted output there):
    # A borrows 3 shared slices -> (4, 1, 1)
    env = parse_instance({"resources": ["slots"], "servers": [{"name": "pool", "capacity": [6]}],
                          "users": [{"name": u, "demand": [1], "tasks": d} for u, d in zip("ABC", (4, 1, 1))]})
    assert [r[0] for r in allocate("karma", env, exact=True).x] == [4, 1, 1]


@pytest.mark.parametrize("name", ["slurm-classic", "drfh-first-fit+irrevocable"])
def test_a_whole_task_policy_trims_whole_tasks_when_a_bound_drops(name):
    # u1 (demand 2, unbounded) holds 2 tasks on s1 (4) and 3 on s2 (6); at t = 1 its bound drops to 2: three whole
    # tasks end, the last server's first -> (2, 0).  Pro rata once left (4/5, 6/5): a whole-task policy holding
    # fractions, and a "work-conserving" violation that was the model's, not the policy's
    ex = parse_execution({"resources": ["r1"], "servers": [{"name": "s1", "capacity": [4]}, {"name": "s2", "capacity": [6]}],
                          "users": [{"name": "u1", "demand": [2]}], "end": 3,
                          "events": [{"t": 1, "kind": "demand", "user": "u1", "tasks": 2}]})
    steps = execute(get(name), ex)
    assert [tuple(steps[0].alloc.x[0]), tuple(steps[1].alloc.x[0])] == [(2, 3), (2, 0)]


# ---------------------------------------------------------------------- the irrevocable lift in floats: residues
_FILLED = {"resources": ["cpu", "mem"], "servers": [{"name": "s0", "capacity": ["8", "10"]}, {"name": "s1", "capacity": ["5", "9"]}, {"name": "s2", "capacity": ["10", "7"]}], "users": [{"name": "u0", "demand": ["2", "0"], "tasks": "6", "duration": "6"}, {"name": "u1", "demand": ["4", "3"], "tasks": "6", "duration": "2"}], "unit": "s", "events": [{"t": "1", "kind": "arrive", "user": {"name": "u2", "demand": ["4", "1"], "tasks": "6", "duration": "8"}}, {"t": "3", "kind": "arrive", "user": {"name": "u3", "demand": ["4", "2"], "tasks": "4", "duration": "1"}}, {"t": "4", "kind": "arrive", "user": {"name": "u4", "demand": ["1", "1"], "tasks": "6", "duration": "2"}}, {"t": "4", "kind": "demand", "user": "u3", "demand": ["1", "0"]}, {"t": "5", "kind": "capacity", "server": "s2", "capacity": ["4", "8"]}, {"t": "5", "kind": "arrive", "user": {"name": "u5", "demand": ["3", "2"], "tasks": "6", "duration": "2"}}]}


@pytest.mark.parametrize("name", ["drfh+irrevocable", "tsf+irrevocable"])
def test_a_float_run_reads_a_rounding_residue_of_a_filled_server_as_none(name):
    """In a float run the held amounts are the previous step's floats: servers they fill leave residues of ~1e-16,
    and a mechanism normalising by the residual pool (DRFH's global dominant share, TSF's) built an LP with
    coefficients of ~1e16, which HiGHS rejected ("HiGHS rejected the LP model", the run failed).  Within the
    release test's tolerance a residue is none: the float run ends, through the exact run's states, every
    allocation feasible (the LP's optimum is not unique, so the allocations themselves may differ).  (A trace from the stepping's random traces; u0 states demand <1, 4>.)"""
    from mechanisms.core.time import stepper_for
    from mechverify.execution import Statement, run
    from mechverify.trace_deviations import TraceMisreport

    ex = parse_execution(_FILLED)
    dev = TraceMisreport("u0", (Statement("users[0]", (F(1), F(4))),))
    floats = list(run(ex, stepper_for(get(name), ex, False), exact=False, deviation=dev))
    exact = list(run(ex, stepper_for(get(name), ex, True), exact=True, deviation=dev))
    assert [s.users for s in floats] == [s.users for s in exact]
    assert all(abs(f.t - float(e.t)) <= 1e-9 * max(1.0, float(e.t)) for f, e in zip(floats, exact))
    from mechverify.allocation import is_feasible

    assert all(is_feasible(s.env, s.alloc.x) for s in floats if s.alloc is not None)
