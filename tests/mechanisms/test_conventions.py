"""Zero-capacity and zero-demand conventions of the policies that claim "DRF", compared on their ORDER facets
(docs/conventions.md: every instance below is derived there by hand).

"Because of the conventions" is made precise: two policies order users ``a`` and ``b`` differently in a state
of an instance E, and the same two policies order them ALIKE in E' = E without its resources of capacity 0
(the same users, queues and task counts; demands and holdings of the deleted resources dropped).  Deleting a
resource nobody has changes nothing a DRF share can see, so E' is where only the conventions for a zero
total are taken out.

The smallest such instances are found by enumeration in a fixed size order -- (resources, queues, summed
capacities, summed demands, tasks held) -- over 2 users ``a`` and ``b`` (each with a task bound of 9, above
every state's tasks), one server, capacities 0..2, demands 0..1, states of 0..2 tasks each, and five queue
layouts (both at the root, both in ``A``, ``a`` in ``A`` and ``b`` in ``B``, ``a`` at the root and ``b`` in
``A``, ``a`` in ``A`` and ``b`` in ``A/B``); three resources only flat and in two queues.  A state is
FEASIBLE when it uses no more of any resource than there is; an infeasible one is a cluster that lost
capacity under a running allocation (a node removed: Mesos' own sorter tests change the total under
standing allocations).  Policies taken: ``mesos-drf``, ``volcano-hdrf``, ``armada-drf``, and ``yarn-drf`` /
``kueue-drs`` when registered (tests that need one skip without it).
"""
from __future__ import annotations

import functools
import itertools
import random
from fractions import Fraction as F

import pytest

import mechanisms  # noqa: F401  (registers every mechanism in REGISTERED)
from mechanisms.ports.armada import unweighted_cost
from mechanisms.core.mechanism import REGISTERED
from mechanisms.ports.mesos import drf_share
from mechverify.allocation import Allocation
from mechverify.instances import parse_environment

DRF = ("mesos-drf", "volcano-hdrf", "armada-drf", "yarn-drf", "kueue-drs")
PORTED = ("mesos-drf", "volcano-hdrf", "armada-drf")  # this file's own subjects; the others when registered

LAYOUTS = {"flat": (None, None), "same": ("A", "A"), "two": ("A", "B"), "root+queue": (None, "A"),
           "nested": ("A", "A/B")}
BOUND = 9


def need(*names):
    missing = [n for n in names if n not in REGISTERED]
    if missing:
        pytest.skip(f"not registered: {', '.join(missing)}")


def present() -> tuple[str, ...]:
    return tuple(n for n in DRF if n in REGISTERED)


# ---------------------------------------------------------------------------------------- instances
@functools.lru_cache(maxsize=None)
def instance(cap: tuple, dem: tuple, layout: str):
    """One server of capacity ``cap``; users a and b with per-task demands ``dem[0]``, ``dem[1]`` (bound 9) in
    the queues of ``layout``; ``None`` if every capacity is 0 (no E' then)."""
    if not cap:
        return None
    qa, qb = LAYOUTS[layout]
    queues = sorted({q for q in (qa, qb) if q} | ({"A"} if qb == "A/B" else set()))
    users = [dict({"name": n, "demand": list(d), "tasks": BOUND}, **({"queue": q} if q else {}))
             for n, q, d in (("a", qa, dem[0]), ("b", qb, dem[1]))]
    d = {"resources": [f"r{r}" for r in range(len(cap))], "servers": [{"name": "n", "capacity": list(cap)}],
         "users": users}
    if queues:
        d["queues"] = [{"name": q} for q in queues]
    return parse_environment(d)


def without_zero_capacity(cap: tuple, dem: tuple) -> tuple[tuple, tuple]:
    keep = [r for r, c in enumerate(cap) if c > 0]
    return tuple(cap[r] for r in keep), tuple(tuple(d[r] for r in keep) for d in dem)


def order(name: str, env, tasks) -> int:
    """The sign of ``compare(a, b)`` under policy ``name`` when a and b hold ``tasks`` (< 0: a first);
    ``None`` when the instance is outside the policy's setting."""
    m = REGISTERED[name]
    try:
        m.setting.check(env, name)
    except Exception:  # noqa: BLE001 -- outside the setting: the policy does not speak about it
        return None
    st = Allocation(env, tuple((F(t),) for t in tasks), "state", True)
    c = m.order.compare(st, 0, 1)
    return (c > 0) - (c < 0)


def differs_by_convention(p1, p2, cap, dem, layout, tasks):
    """(sign under p1, sign under p2) in E when they differ there and agree in E'; else None."""
    env = instance(cap, dem, layout)
    o1, o2 = order(p1, env, tasks), order(p2, env, tasks)
    if o1 is None or o2 is None or o1 == o2:
        return None
    env2 = instance(*without_zero_capacity(cap, dem), layout)
    if env2 is None or order(p1, env2, tasks) != order(p2, env2, tasks):
        return None
    return o1, o2


def _space():
    out = []
    for R in (1, 2, 3):
        for layout in (LAYOUTS if R < 3 else ("flat", "two")):
            nq = len({q for q in LAYOUTS[layout] if q} | ({"A"} if layout == "nested" else set()))
            for cap in itertools.product((0, 1, 2), repeat=R):
                if all(cap):
                    continue
                for da, db in itertools.product(itertools.product((0, 1), repeat=R), repeat=2):
                    for tasks in itertools.product((0, 1, 2), repeat=2):
                        feasible = all(tasks[0] * da[r] + tasks[1] * db[r] <= cap[r] for r in range(R))
                        size = (R, nq, sum(cap), sum(da) + sum(db), sum(tasks))
                        out.append((size, feasible, layout, cap, (da, db), tasks))
    out.sort(key=lambda e: e[0])
    return out


@functools.lru_cache(maxsize=None)
def smallest(p1: str, p2: str, feasible: bool):
    """The first (smallest) instance of the enumeration where p1 and p2 differ by convention:
    ``(size, layout, cap, dem, tasks, (sign p1, sign p2))`` or ``None``."""
    for size, feas, layout, cap, dem, tasks in _space():
        if feas != feasible:
            continue
        got = differs_by_convention(p1, p2, cap, dem, layout, tasks)
        if got is not None:
            return size, layout, cap, dem, tasks, got
    return None


def signs(cap, dem, layout, tasks, names=None):
    env = instance(cap, dem, layout)
    return {n: order(n, env, tasks) for n in (names or present())}


# ---------------------------------------------------------------------------------------- shares coincide
def test_mesos_and_armada_shares_are_one_function():
    """Mesos skips a resource of total 0, Armada counts it 0 (``DivideZeroOnError``): since every other term
    and the start of the max (Mesos: 0; Armada: ``max(0, .)``) are >= 0, the two are the same function of
    (allocation, total) -- with every multiplier 1, on any allocation, negative ones included."""
    rng = random.Random(4)
    for _ in range(3000):
        R = rng.randint(1, 4)
        tot = [F(rng.choice([0, 0, 1, 2, 7])) for _ in range(R)]
        alloc = [F(rng.choice([-2, 0, 0, 1, 3, 9]), rng.choice([1, 2, 3])) for _ in range(R)]
        assert unweighted_cost(alloc, tot, [F(1)] * R) == drf_share(alloc, tot)


def test_the_three_ports_share_alike_in_every_state():
    """Flat instances on one server, weights 1, zero capacities and demands, any state -- also states that use
    more than there is, including some of a resource of total 0: Mesos' framework share, Armada's queue
    cost and Volcano's flat job share are equal.  In particular Volcano never gives a share of 1 for a
    resource of total 0: its ``calculateShare`` iterates the TOTAL's resource names, which leave out amounts
    below ``minResource`` (docs/conventions.md), so ``helpers.Share(l, 0) = 1`` is never reached in drf.go."""
    rng = random.Random(5)
    spec = {n: REGISTERED[n].order for n in PORTED}
    for _ in range(400):
        R, J = rng.randint(1, 3), rng.randint(1, 4)
        cap = [rng.choice([0, 0, 2, 5]) for _ in range(R)]
        env = parse_environment({"resources": [f"r{r}" for r in range(R)],
                                 "servers": [{"name": "n", "capacity": cap}],
                                 "users": [{"name": f"u{j}", "demand": [rng.choice([0, 1, 2]) for _ in range(R)],
                                            "tasks": BOUND} for j in range(J)]})
        st = Allocation(env, tuple((F(rng.randint(0, 4)),) for _ in range(J)), "state", True)
        for j in range(J):
            values = {n: s.share(st, j) for n, s in spec.items()}
            assert len(set(values.values())) == 1, (env, st, values)
    env = instance((0, 1), ((1, 0), (0, 1)), "flat")
    st = Allocation(env, ((F(1),), (F(1),)), "state", True)  # a holds 1 of r0, whose total is 0
    assert [spec[n].share(st, 0) for n in PORTED] == [0, 0, 0]


def test_feasible_states_do_not_see_zero_capacity_resources():
    """Random queue trees (zero capacities, zero demands, bounds, weights where the setting takes them) and
    random FEASIBLE states: deleting the resources of capacity 0 changes no order and no share of
    ``mesos-drf``, ``volcano-hdrf`` or ``armada-drf`` -- so in feasible states no difference between them comes
    from a zero-capacity convention.  (Nothing of such a resource can be held; Mesos and Volcano skip it,
    Armada counts it 0, Volcano's ``demandingResources`` leaves it out, Armada's proposed cost adds 0 for it.)"""
    rng = random.Random(6)
    checked = 0
    for _ in range(3000):
        R, J = rng.randint(2, 4), rng.randint(2, 4)
        cap = [rng.choice([0, 3, 6]) for _ in range(R)]
        if all(cap) or not any(cap):
            continue
        paths = [p for p in ("A", "B", "A/C") if rng.random() < 0.6]
        if "A/C" in paths and "A" not in paths:
            paths.insert(0, "A")
        dem = [[rng.choice([0, 0, 1, 2]) for _ in range(R)] for _ in range(J)]
        tasks = [rng.randint(0, 3) for _ in range(J)]
        if any(sum(t * d[r] for t, d in zip(tasks, dem)) > cap[r] for r in range(R)):
            continue
        queue = [rng.choice([None] + paths) for _ in range(J)]
        keep = [r for r in range(R) if cap[r]]

        def build(rs):
            d = {"resources": [f"r{r}" for r in rs], "servers": [{"name": "n", "capacity": [cap[r] for r in rs]}],
                 "users": [dict({"name": f"u{j}", "demand": [dem[j][r] for r in rs], "tasks": 5},
                                **({"queue": queue[j]} if queue[j] else {})) for j in range(J)]}
            if paths:
                d["queues"] = [{"name": p, "weight": 1 + i} for i, p in enumerate(paths)]
            return parse_environment(d)

        env, env2 = build(range(R)), build(keep)
        x = tuple((F(t),) for t in tasks)
        st, st2 = Allocation(env, x, "state", True), Allocation(env2, x, "state", True)
        for n in PORTED:
            spec = REGISTERED[n].order
            assert spec.order(st) == spec.order(st2), (n, env, tasks)
            assert [spec.share(st, j) for j in range(J)] == [spec.share(st2, j) for j in range(J)]
            assert [spec.queue_share(st, q) for q in range(len(paths))] == \
                [spec.queue_share(st2, q) for q in range(len(paths))]
        checked += 1
    assert checked > 200


# ---------------------------------------------------------------------------------------- the smallest instances
@pytest.mark.parametrize("p1, p2", list(itertools.combinations(PORTED, 2)))
def test_no_feasible_difference_among_the_three_ports(p1, p2):
    """In the whole enumerated space, no feasible state separates two of mesos-drf, volcano-hdrf, armada-drf
    by convention (the random test above says why)."""
    assert smallest(p1, p2, True) is None


def test_volcano_saturates_a_job_that_holds_a_resource_of_total_zero():
    """Infeasible states, docs/conventions.md (V): resources r0 (capacity 0), r1 (capacity 1); a <1, 0> in queue
    A, b <0, 0> in queue B.
      state a 1, b 1: Mesos: shares 0 (r0 skipped), counts 1 = 1, path "A" < "B": a first.  Volcano: a holds
      r0, which is not "demanding" (it is in no total): a is saturated, so A is, and B beats it: b first.
      state a 1, b 0: Armada: costs 0 (r0's total is 0), proposed costs 0 = 0, name "A": a first.  Volcano:
      b first.  (Mesos: b first too, but by its count tie-break: A counts 1, B 0.)
    Without r0 a holds nothing, is not saturated, and Volcano's tie goes to the queue created first (A): a first,
    as the others.
    These are the smallest, and feasible states never separate the three (above)."""
    assert smallest("mesos-drf", "volcano-hdrf", False) == ((2, 2, 1, 1, 2), "two", (0, 1), ((1, 0), (0, 0)),
                                                            (1, 1), (-1, 1))
    assert smallest("volcano-hdrf", "armada-drf", False) == ((2, 2, 1, 1, 1), "two", (0, 1), ((1, 0), (0, 0)),
                                                             (1, 0), (1, -1))
    assert smallest("mesos-drf", "armada-drf", False) is None
    got = signs((0, 1), ((1, 0), (0, 0)), "two", (1, 1), PORTED)
    assert got == {"mesos-drf": -1, "volcano-hdrf": 1, "armada-drf": -1}
    # the same without a zero demand and without ties: b <0, 1> holding 1 of r1's 2
    assert signs((0, 2), ((1, 0), (0, 1)), "two", (1, 1), PORTED) == {"mesos-drf": -1, "volcano-hdrf": 1,
                                                                      "armada-drf": -1}
    assert signs((2,), ((0,), (1,)), "two", (1, 1), PORTED) == {"mesos-drf": -1, "volcano-hdrf": -1,
                                                                "armada-drf": -1}


def test_yarn_reads_an_unsorted_ratio_row_past_a_resource_of_capacity_zero():
    """Feasible, docs/conventions.md (Y1): resources r0, r1, r2 of capacities 1, 0, 1; flat; a <1, 0, 0>, b <0, 0, 1>,
    one task each.  Usage ratios a (1, 0/0 = NaN, 0), b (0, NaN, 1).  YARN sorts each row by DESCENDING usage
    ratio with ``signum(o2[0] - o1[0])``: every comparison with the NaN gives 0, so Java's TimSort sees one
    ascending run and leaves both rows as they are; position 0 compares a's 1 with b's 0: b first.
    Mesos, Volcano and Armada: equal shares 1 (r1 skipped or 0), ties broken by count / creation (a's job is
    the older) / queue name: a first.  Without r1 YARN sorts the rows to (1, 0) and (1, 0), ties, and takes a by start time."""
    need("yarn-drf")
    for p in PORTED:
        assert smallest(p, "yarn-drf", True) == ((3, 0, 2, 2, 2), "flat", (1, 0, 1), ((1, 0, 0), (0, 0, 1)),
                                                 (1, 1), (-1, 1))
    # without any tie: capacities 2, 0, 1; a <0, 0, 1>, b <1, 0, 0>: the others put b (1/2) before a (1), YARN
    # compares position 0 of the unsorted rows (0 vs 1/2) and puts a first; in r0, r2 order alone it agrees
    assert signs((2, 0, 1), ((0, 0, 1), (1, 0, 0)), "flat", (1, 1), PORTED + ("yarn-drf",)) == {
        "mesos-drf": 1, "volcano-hdrf": 1, "armada-drf": 1, "yarn-drf": -1}
    assert signs((2, 1), ((0, 1), (1, 0)), "flat", (1, 1), ("yarn-drf",)) == {"yarn-drf": 1}


def test_yarn_puts_a_holder_of_a_resource_of_total_zero_last():
    """Infeasible, docs/conventions.md (Y2): r0 capacity 1, r1 capacity 0; flat; a <0, 1>, b <0, 0>.
      state a 1, b 0: YARN: a's ratio of r1 is 1/0 = inf, its sorted row (inf, 0); b's (0, NaN): b first.
      Volcano (same queue: flat shares 0 = 0, a created first) and Armada (costs 0, name "a"): a first.
      state a 1, b 1: Mesos (shares 0, counts 1 = 1, name): a first; YARN: b first.
    Without r1 a holds nothing: YARN ties and takes a by start time."""
    need("yarn-drf")
    assert smallest("armada-drf", "yarn-drf", False) == ((2, 0, 1, 1, 1), "flat", (1, 0), ((0, 1), (0, 0)),
                                                         (1, 0), (-1, 1))
    assert smallest("volcano-hdrf", "yarn-drf", False) == ((2, 0, 1, 1, 1), "flat", (1, 0), ((0, 1), (0, 0)),
                                                           (1, 0), (-1, 1))
    assert smallest("mesos-drf", "yarn-drf", False) == ((2, 0, 1, 1, 2), "flat", (1, 0), ((0, 1), (0, 0)),
                                                        (1, 1), (-1, 1))


def test_kueue_enters_a_nofit_workload_without_its_request():
    """docs/conventions.md (K), when ``kueue-drs`` is registered: r0 capacity 0, r1 capacity 1; a <1, 0> in A,
    b <0, 0> in B, the empty state.  a's workload (9 pods) requests 9 of r0, more than the root's subtree quota
    (0): upstream's flavour assigner gives it NoFit and no flavour (``flavorassigner.go`` ``fitsResourceQuota``,
    ``findFlavorForPodSets``), so ``computeDRS`` simulates no usage for it (``entry.assignmentUsage``,
    ``scheduler.go`` 647-649): a does not borrow, its DRS is A's (0), it ties with b and FIFO takes a -- as every
    other policy does (all shares 0; path, creation or name).  (The port took a's request into the tournament
    before, saw a borrowing r0 and put b first: a split of our making, not upstream's.)  No enumerated state
    separates Kueue from Armada, feasible or not (nor from Mesos, which orders like Armada on all of them)."""
    need("kueue-drs")
    assert set(signs((0, 1), ((1, 0), (0, 0)), "two", (0, 0)).values()) == {-1}
    if "armada-drf" in REGISTERED:
        for feasible in (True, False):
            assert smallest("armada-drf", "kueue-drs", feasible) is None


def test_a_zero_demand_is_seen_only_by_policies_that_read_the_next_request():
    """docs/conventions.md, "Zero demands": one pool of 1, a <1>, b <0> (bounded), the empty state.  Armada: b's
    proposed cost 0 < a's 1: b first; Kueue in two queues, with a pool of 9 so that a's workload (9 pods) is
    not NoFit: it would borrow, b's not: b first (with the pool of 1 a is NoFit, enters without its request and
    goes first by FIFO, as the others).
    Mesos, Volcano, YARN: shares 0 = 0, a by name / creation / start time.  Every capacity is positive: the split is the
    design (the next request counts), not a convention for a zero total."""
    flat = signs((1,), ((1,), (0,)), "flat", (0, 0))
    assert flat["armada-drf"] == 1 and flat["mesos-drf"] == flat["volcano-hdrf"] == -1
    if "yarn-drf" in REGISTERED:
        assert flat["yarn-drf"] == -1
    if "kueue-drs" in REGISTERED:
        assert signs((9,), ((1,), (0,)), "two", (0, 0))["kueue-drs"] == 1
        assert signs((1,), ((1,), (0,)), "two", (0, 0))["kueue-drs"] == -1
