"""``yarn-capacity`` and ``yarn-capacity@YARN-11745``: CapacityScheduler's queue order (src/mechanisms/ports/yarn/capacity.py).

Upstream's cases are from ``TestPriorityUtilizationQueueOrderingPolicy.java`` (Hean-Chhinling/hadoop @ 6d5350fa, the
branch of pull request 7278): ``testUtilizationOrdering`` (the ``utilization`` policy, priorities ignored) and
``testComparatorClassDoesNotViolateTimSortContract`` (equal capacities, random configured minimum resources, half of
them <0, 0>).  Upstream mocks capacities; we build instances whose weights and usages give the same numbers (the
derivation is beside each case)."""
from __future__ import annotations

import random
from fractions import Fraction as F
from functools import cmp_to_key
from itertools import permutations

import pytest

import mechanisms
from mechanisms.ports.java_go import java_sort
from mechanisms.ports.yarn.capacity import QueueSnapshot, compare_queues, dominant_share
from mechverify.allocation import state_of
from mechverify.instances import parse_environment


def _env(queues, users, capacity, resources=("mem",)):
    return parse_environment({"resources": list(resources), "servers": [{"name": "pool", "capacity": capacity}],
                              "queues": queues, "users": users})


def _order(name, env):
    mech = mechanisms.get(name)
    return [env.users[j] for j in mech.order.order(state_of(env))]


def _users(spec):
    """[(name, queue, tasks held)] -> users with demand <1> and a usage of that many tasks."""
    return [{"name": n, "queue": q, "demand": [1], **({"usage": [h]} if h else {})} for n, q, h in spec]


def test_utilization_ordering_case_2():
    # upstream: a (used .1, abs .2), b (used 0, abs .3) -> [b, a].  Ours: one resource of 100; weights 2, 3 and a
    # filler f of weight 5 give abs .2, .3, .5; a holds 2 = .1 x .2 x 100, b nothing, f 50 (used 1.0).
    env = _env([{"name": "a", "weight": 2}, {"name": "b", "weight": 3}, {"name": "f", "weight": 5}],
               _users([("ua", "a", 2), ("ub", "b", 0), ("uf", "f", 50)]), [100])
    assert _order("yarn-capacity", env) == ["ub", "ua", "uf"]


def test_utilization_ordering_case_3():
    # upstream: a (.1, abs .2), b (0, abs .3), c (.2, abs .4) -> [b, a, c].  Ours: weights 2, 3, 4 and a filler of
    # weight 1 (abs .1) on 100: a holds 2, c holds .2 x .4 x 100 = 8, the filler 10 (used 1.0, last).
    env = _env([{"name": "a", "weight": 2}, {"name": "b", "weight": 3}, {"name": "c", "weight": 4},
                {"name": "f", "weight": 1}],
               _users([("ua", "a", 2), ("ub", "b", 0), ("uc", "c", 8), ("uf", "f", 10)]), [100])
    assert _order("yarn-capacity", env) == ["ub", "ua", "uc", "uf"]
    assert _order("yarn-capacity@YARN-11745", env) == ["ub", "ua", "uc", "uf"]  # no tie: the bug is not reached


@pytest.mark.parametrize("first, second, expected", [
    # upstream cases 17 and 18: a queue of absolute capacity 0 goes after one with capacity, whatever its use
    ((F(1, 10), F(0)), (F(6, 5), F(3, 10)), 1),
    ((F(1, 10), F(3, 10)), (F(6, 5), F(0)), -1),
])
def test_zero_absolute_capacity_goes_last(first, second, expected):
    def snap(used, absolute):
        return QueueSnapshot(absolute, used, used * absolute, (F(0),))
    assert compare_queues(snap(*first), snap(*second)) == expected


def _tie_snapshots(n, seed):
    """``testComparatorClassDoesNotViolateTimSortContract``: equal capacities and uses, configured minimum
    resources <1..10 x 1024, 1..10>, half of them set to <0, 0>."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        m = (F(rng.randint(1, 10) * 1024), F(rng.randint(1, 10)))
        out.append(QueueSnapshot(F(31, 5), F(1), F(21, 5), (F(0), F(0)) if rng.random() < 0.5 else m))
    return out


def _strict_weak(items, cmp):
    """The first triple (or pair) that breaks a strict weak order, or None."""
    for a, b in permutations(range(len(items)), 2):
        if (cmp(items[a], items[b]) < 0) != (cmp(items[b], items[a]) > 0):
            return (a, b)
    for a, b, c in permutations(range(len(items)), 3):
        ab, bc, ac = cmp(items[a], items[b]), cmp(items[b], items[c]), cmp(items[a], items[c])
        if ab < 0 and bc < 0 and ac >= 0:
            return (a, b, c)
        if ab == 0 and bc == 0 and ac != 0:
            return (a, b, c)
    return None


def test_the_fix_makes_the_tie_break_a_strict_weak_order_and_the_old_one_is_not():
    items = _tie_snapshots(14, seed=7)
    assert _strict_weak(items, compare_queues) is None
    bad = _strict_weak(items, lambda a, b: compare_queues(a, b, min_resource_tie_needs_both=True))
    assert bad is not None and len(bad) == 3
    # the shape of the break: two queues with minimum resources, ordered, each tied with one without
    a, b, c = (items[k] for k in bad)
    assert sum(not any(s.min_resource) for s in (a, b, c)) >= 1


def test_java_sort_equals_a_stable_sort_for_a_strict_weak_order():
    rng = random.Random(3)
    for n in (0, 1, 2, 5, 17, 31, 32, 50):
        items = [(rng.randint(0, 4), k) for k in range(n)]
        cmp = lambda x, y: (x[0] > y[0]) - (x[0] < y[0])  # ties by position: the sort must be stable
        assert java_sort(items, cmp) == sorted(items, key=cmp_to_key(cmp))


# Three queues on <8, 8> with equal weights and nothing used: c <1, 2>, a (no minimum resource), b <2, 1>, declared
# in that order, one user each demanding <1, 1>.
_CASE = ([{"name": "c", "guarantee": [1, 2]}, {"name": "a"}, {"name": "b", "guarantee": [2, 1]}],
         [{"name": "u1", "demand": [1, 1], "queue": "c"}, {"name": "u2", "demand": [1, 1], "queue": "a"},
          {"name": "u3", "demand": [1, 1], "queue": "b"}])


def test_yarn_11745_three_queue_cycle_and_the_fixed_order():
    env = _env(*_CASE, [8, 8], ("mem", "vcores"))
    st = state_of(env)
    old = mechanisms.get("yarn-capacity@YARN-11745").order
    # before the fix: u1 < u2 and u2 < u3 by list position (c, a and a, b tie: a has no minimum resource, equal
    # capacities), u3 < u1 by the minimum resources (<2, 1> > <1, 2>): a cycle
    assert (old.compare(st, 0, 1), old.compare(st, 1, 2), old.compare(st, 2, 0)) == (-1, -1, -1)
    new = mechanisms.get("yarn-capacity").order
    # fixed: a minimum resource beats none, <2, 1> beats <1, 2>: b, c, a
    assert _order("yarn-capacity", env) == ["u3", "u1", "u2"]
    assert (new.compare(st, 2, 0), new.compare(st, 0, 1), new.compare(st, 2, 1)) == (-1, -1, -1)


def test_one_container_per_round_follows_upstreams_sort():
    # 8 tasks of <1, 1> on <8, 8>; after each full round the three queues are tied again (equal use, capacity).
    # Fixed: every round sorts [c, a, b] to [b, c, a] (the run [c, a] ascends, b is inserted before c by binary
    # insertion) -> b, c, a, b, c, a, b, c: u1 (c) 3, u2 (a) 2, u3 (b) 3.  Before the fix: cmp(a, c) = 0 and
    # cmp(b, a) = 0, so [c, a, b] is one ascending run and stays: c, a, b, c, a, b, c, a: u1 3, u2 3, u3 2.
    env = _env(*_CASE, [8, 8], ("mem", "vcores"))
    assert [x[0] for x in mechanisms.get("yarn-capacity")(env, exact=True).x] == [3, 2, 3]
    assert [x[0] for x in mechanisms.get("yarn-capacity@YARN-11745")(env, exact=True).x] == [3, 3, 2]


def test_dominant_share_skips_a_resource_the_cluster_lacks():
    # DominantResourceCalculator.calculateShares: a resource of capacity 0 has share +inf and is skipped
    assert dominant_share((F(3), F(5)), (F(6), F(0))) == F(1, 2)
    assert dominant_share((F(0), F(5)), (F(0), F(0))) == 0


def test_users_directly_in_a_queue_form_its_implicit_leaf_fifo():
    # users at the root: one implicit leaf, FIFO in declaration order whatever they hold
    env = _env([], [{"name": "x", "demand": [1], "usage": [3]}, {"name": "y", "demand": [1]}], [10])
    assert _order("yarn-capacity", env) == ["x", "y"]
    assert [x[0] for x in mechanisms.get("yarn-capacity")(env, exact=True).x] == [10, 0]


def test_the_key_is_the_fixed_comparator():
    from mechanisms.ports.yarn.capacity import queue_key
    rng = random.Random(11)
    vals = [F(0), F(1, 3), F(1, 2), F(1)]
    snaps = [QueueSnapshot(rng.choice(vals), rng.choice(vals), rng.choice(vals),
                           rng.choice([(F(0), F(0)), (F(1), F(0)), (F(0), F(2)), (F(1), F(2))])) for _ in range(60)]
    for a in snaps:
        for b in snaps:
            ka, kb = queue_key(a), queue_key(b)
            assert compare_queues(a, b) == (ka > kb) - (ka < kb), (a, b)


def test_the_incremental_policy_equals_the_literal_one():
    # random trees, guarantees, bounds: the fast path (sorted live children, re-keyed along the served path, dead
    # nodes dropped) against every parent sorted afresh every round with the fixed comparator
    from hypothesis import HealthCheck, given, settings
    from mechanisms.ports.yarn.capacity import yarn_capacity_reference
    from mechverify.strategies import environments
    mech = mechanisms.get("yarn-capacity")

    @settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(environments(mech.setting, max_users=5, max_value=6, state=True))
    def check(env):
        assert mech(env, exact=True).x == yarn_capacity_reference(env).x
    check()
