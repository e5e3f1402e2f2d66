"""``kueue-drs`` (src/mechanisms/ports/kueue/): upstream's DRS test values as regression tests, the historic
versions of issues 6577 (integer rounding to 0) and 10126 (ClusterQueue-level non-borrowing step) and the
pre-4962 weight-0 formula, the order in a state, the admission cycles by hand, the incremental tournament
against the literal recomputation, the command line, and hostile inputs.

Upstream: kubernetes-sigs/kueue @ ff69552e79ad21652c36caa97038382e55625cf7 (``COMMIT``):
``pkg/cache/scheduler/fair_sharing_test.go`` (``TestDominantResourceShare``, ``TestIsBorrowingOn``,
``TestPreciseWeightedShareSerialized``).  Upstream's CPU amounts are millicores (``3_000`` = 3 CPUs); only
ratios enter a share, so we write CPUs.  Its ``test-cohort`` is our root (the pool: its quota is what is not
guaranteed below it, so a pool equal to the summed guarantees gives a root cohort without quota, as there).
"""
from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.core.registry import SettingError
from mechanisms.ports.kueue.cohort import CohortTree, Policy, tree_of
from mechanisms.ports.kueue.drs import (DRS, MAX_INT64, PRE_4962, compare_drs, dominant_resource_share, integer_drs,
                                        milli_value)
from mechanisms.ports.kueue.order import queue_borrows, served_order, state_on_tree
from mechanisms.ports.kueue.port import COMMIT, PORT, PRE_6617, PRE_10149
from mechanisms.ports.kueue.tournament import _cycles, _LiteralTournament, _Tournament, kueue_drs_fast, kueue_drs_reference
from mechverify.allocation import Allocation
from mechverify.instances import load_environment, parse_environment
from mechverify.numbers import INF, InstanceError
from tests.helpers import ROOT

EXAMPLE = os.path.join(ROOT, "examples", "kueue-10126.json")
GO_TEST = f"pkg/cache/scheduler/fair_sharing_test.go @ {COMMIT}"
CPU_GPU = ("cpu", "example.com/gpu")
POLICIES = ("kueue-drs", "kueue-drs@6577", "kueue-drs@10126")


def policy(name):
    """The comparison of the version registered as ``name`` (the port's declaration gives its switches)."""
    return Policy(**PORT.switches(name))


def compare_users(name, st, i, j):
    return mechanisms.get(name).order.compare(st, i, j)


def user_share(name, st, j):
    return mechanisms.get(name).order.share(st, j)


def queue_share(name, st, q):
    return mechanisms.get(name).order.queue_share(st, q)


def tree_env(resources, capacity, queues, users):
    """One server ``pool``; ``queues``: (path, weight, guarantee or None); ``users``: (name, queue or None,
    demand, tasks)."""
    d = {"resources": list(resources), "servers": [{"name": "pool", "capacity": capacity}],
         "users": [dict({"name": n, "demand": dem, "tasks": t}, **({"queue": q} if q else {}))
                   for n, q, dem, t in users]}
    if queues:
        d["queues"] = [dict({"name": p}, **({"weight": w} if w != 1 else {}),
                            **({"guarantee": g} if g is not None else {})) for p, w, g in queues]
    return parse_environment(d)


def state(env, tasks):
    """The state where user ``j`` holds ``tasks[j]`` tasks on the one server."""
    return Allocation(env, tuple((F(t),) for t in tasks), "state", True)


def totals(env, alloc):
    return {u: int(t) for u, t in zip(env.users, alloc.totals())}


def both(env, name="kueue-drs"):
    """The registered (incremental) mechanism, checked against the literal recomputation at every pop."""
    a = mechanisms.allocate(name, env)
    assert a.exact and a.x == kueue_drs_reference(env, policy(name), name).x
    return totals(env, a)


# ---------------------------------------------------------------------- upstream's values, pure functions
# TestDominantResourceShare: cq nominal <cpu 2, gpu 5>, lending-cq <8, 5>, test-cohort without quota:
# lendable <10, 10>
BASIC_QUOTA, BASIC_LENDABLE = (2, 5), (10, 10)


@pytest.mark.parametrize("usage,wl,want", [
    ((1, 2), None, (0, "")),                         # "usage below nominal"
    ((3, 7), None, (200, "example.com/gpu")),        # "usage above nominal": (7-5)*1000/10
    ((3, 3), None, (100, "cpu")),                    # "one resource above nominal": (3-2)*1000/10
    ((1, 2), (4, 4), (300, "cpu")),                  # "usage with workload above nominal": (1+4-2)*1000/10
])
def test_upstream_basic_values(usage, wl, want):
    """TestDominantResourceShare cases "usage below nominal", "usage above nominal", "one resource above
    nominal", "usage with workload above nominal" (GO_TEST)."""
    d = dominant_resource_share(CPU_GPU, usage, BASIC_QUOTA, BASIC_LENDABLE, 1, wl)
    assert d.rounded() == want
    assert d.borrowing == (want[0] > 0)


@pytest.mark.parametrize("weight,want", [(F(2), 100), (F(1, 2), 400), (F(0), MAX_INT64)])
def test_upstream_weights(weight, want):
    """TestDominantResourceShare "above nominal with integer weight" (100 = ((7-5)*1000/10)/2), "... decimal
    weight" (400), "... zero weight" (math.MaxInt) (GO_TEST): gpu 7 against nominal 5, lendable 10."""
    d = dominant_resource_share(("example.com/gpu",), (7,), (5,), (10,), weight)
    assert d.rounded() == (want, "example.com/gpu")
    assert d.precise() == (INF if weight == 0 else F(200) / weight)


def test_upstream_cohort_values():
    """TestDominantResourceShare "cohort has resource share" (GO_TEST): cq nominal 5 using 10 in child-cohort
    (weight 2) below root (nominal 45): lendable 50; cq 100 = 5/50*1000, child-cohort 50 = 100/2, root 0;
    and "resource share defined for resources only available at the root cohort" (cq nominal 0, root 50):
    cq 200, child-cohort 100."""
    gpu = ("example.com/gpu",)
    assert dominant_resource_share(gpu, (10,), (5,), (50,), 1).rounded() == (100, "example.com/gpu")
    assert dominant_resource_share(gpu, (10,), (5,), (50,), 2).rounded() == (50, "example.com/gpu")
    assert dominant_resource_share(gpu, (10,), (50,), (50,), 1, has_parent=False).rounded() == (0, "")
    assert dominant_resource_share(gpu, (10,), (0,), (50,), 1).rounded() == (200, "example.com/gpu")
    assert dominant_resource_share(gpu, (10,), (0,), (50,), 2).rounded() == (100, "example.com/gpu")


def test_upstream_rounding_up():
    """TestDominantResourceShare "usage slightly above nominal in a cohort with large quotas" (501 against 500,
    lendable 1500: ceil(0.667) = 1) and "usage way above nominal ... and weights" (800 against 500, weight 300:
    200/300, ceil 1), both added by PR 6617 (GO_TEST)."""
    gpu = ("example.com/gpu",)
    slight = dominant_resource_share(gpu, (501,), (500,), (1500,), 1)
    assert slight.precise() == F(2, 3) and slight.rounded() == (1, "example.com/gpu")
    way = dominant_resource_share(gpu, (800,), (500,), (1500,), 300)
    assert way.precise() == F(2, 3) and way.rounded() == (1, "example.com/gpu")


def test_upstream_precise_weighted_share_and_borrowing_on():
    """TestPreciseWeightedShareSerialized ("+Inf", "0", "200", "2.5") and TestIsBorrowingOn (cq <2, 5> in a
    cohort of <10, 10>) (GO_TEST)."""
    assert DRS(F(0), F(100)).precise() == INF
    assert DRS(F(1), F(0)).precise() == 0
    assert DRS(F(2), F(400)).precise() == 200
    assert DRS(F(4), F(10)).precise() == F(5, 2)
    cases = [((3, 0), (1, 0), True, True), ((1, 7), (1, 0), False, True), ((3, 7), (0, 1), True, True),
             ((1, 2), (1, 0), False, False), ((3, 0), (0, 0), False, True)]
    for usage, requested, on, borrowing in cases:
        d = dominant_resource_share(CPU_GPU, usage, BASIC_QUOTA, BASIC_LENDABLE, 1)
        assert (d.borrowing_on(requested), d.borrowing) == (on, borrowing)


def test_compare_drs_zero_weight_and_ties():
    """``CompareDRS``: two weight-0 borrowers by unweighted ratio, one weight-0 borrower after any other; the
    dominant resource on equal ratios is the alphabetically first name."""
    zero_small, zero_big = DRS(F(0), F(10), "a"), DRS(F(0), F(20), "a")
    assert compare_drs(zero_small, zero_big) == -1 and compare_drs(zero_big, DRS(F(1), F(10 ** 9), "a")) == 1
    assert compare_drs(DRS(F(0), F(0)), DRS(F(1), F(1), "a")) == -1  # weight 0, not borrowing: share 0
    tie = dominant_resource_share(("mem", "cpu"), (2, 2), (1, 1), (10, 10))
    assert tie.resource == "cpu" and tie.ratio == 100


# ---------------------------------------------------------------------- the historic formulas
def test_pre6617_integer_drs_gives_zero_to_borrowers():
    """Issue 6577 (``pkg/cache/fair_sharing.go`` @ PRE_6617): ``b * 1000 / lendable`` and ``drs * 1000 /
    MilliValue(weight)`` in int64 division -- PR 6617's two new test cases give 0 where the fix gives 1."""
    gpu = ("example.com/gpu",)
    assert PRE_6617 == "0b7ad55aaacf38892be32e3f33eb61bde28ae791"
    assert integer_drs(gpu, (501,), (500,), (1500,), 1) == (0, "example.com/gpu")  # 1000/1500 -> 0
    assert integer_drs(gpu, (800,), (500,), (1500,), 300) == (0, "example.com/gpu")  # 200*1000/300000 -> 0
    # the basic values agree with the fixed DRS where they are whole numbers
    assert integer_drs(CPU_GPU, (3, 7), BASIC_QUOTA, BASIC_LENDABLE) == (200, "example.com/gpu")
    assert integer_drs(("example.com/gpu",), (7,), (5,), (10,), F(1, 2)) == (400, "example.com/gpu")
    # no lendable borrowed resource: drs stays -1, -1000 / MilliValue truncated
    assert integer_drs(("cpu",), (3,), (0,), (0,), 1) == (-1, "")
    assert integer_drs(("cpu",), (3,), (0,), (0,), 2) == (0, "")
    assert milli_value(F(1, 3)) == 334 and milli_value(F(300)) == 300000


def test_pre4962_weight_zero_before_the_borrowing_check():
    """Issue 4961 (``pkg/cache/fair_sharing.go`` @ PRE_4962, fixed by PR 4962): weight 0 returned MaxInt even
    for a node within its quota; after PR 4962 only while borrowing (and the exact DRS keeps that)."""
    gpu = ("example.com/gpu",)
    assert PRE_4962 == "070fa7d9b8ec7dec286dcedd5c1ae5773d5f2786"
    assert integer_drs(gpu, (3,), (5,), (10,), 0, zero_weight_first=True) == (MAX_INT64, "")
    assert integer_drs(gpu, (3,), (5,), (10,), 0) == (0, "")
    assert integer_drs(gpu, (7,), (5,), (10,), 0) == (MAX_INT64, "example.com/gpu")
    assert dominant_resource_share(gpu, (3,), (5,), (10,), 0).rounded() == (0, "")
    with pytest.raises(InstanceError, match=r"weight: must be > 0"):  # why no instance can show issue 4961
        tree_env(["cpu"], [1], [("q", 0, None)], [("u", "q", [1], 1)])


# ---------------------------------------------------------------------- our model as the cohort tree
def basic_env():
    """TestDominantResourceShare's cq and lending-cq as two top-level queues of the pool <10, 10>; the user
    ``w``'s one task is upstream's usage <3, 7>."""
    return tree_env(CPU_GPU, [10, 10], [("cq", 1, [2, 5]), ("lending-cq", 1, [8, 5])],
                    [("w", "cq", [3, 7], 1), ("l", "lending-cq", [1, 1], 1)])


def test_tree_mapping_and_state_shares():
    env = basic_env()
    t = tree_of(env)
    assert t.names == ["", "cq", "lending-cq"] and t.kind == ["cohort", "cq", "cq"]
    assert t.quota[0] == (0, 0) and t.lendable == (10, 10)  # the pool is the guarantees: no root quota
    st = state(env, [1, 0])
    assert queue_share("kueue-drs", st, 0) == 200 and queue_share("kueue-drs", st, 1) == 0
    assert queue_borrows(st, 0) and not queue_borrows(st, 1)
    # user_share: the ClusterQueue after admitting the user's workload (another <3, 7>): gpu 14-5 = 9 -> 900
    assert user_share("kueue-drs", st, 0) == 900
    cohorts = tree_env(["example.com/gpu"], [50], [("child-cohort", 2, None), ("child-cohort/cq", 1, [5])],
                       [("w", "child-cohort/cq", [10], 1)])
    assert CohortTree(cohorts).quota[0] == (45,)  # upstream's root nominal 45
    st = state(cohorts, [1])
    assert [queue_share("kueue-drs", st, q) for q in range(2)] == [50, 100]


def test_inner_queue_users_and_root_users_sit_in_implicit_clusterqueues():
    env = tree_env(["cpu"], [10], [("a", 1, [4]), ("a/b", 1, [2])],
                   [("r", None, [1], 1), ("i", "a", [1], 1), ("l", "a/b", [1], 1)])
    t = tree_of(env)
    assert [t.names[t.user_cq[j]] for j in range(3)] == [".", "a/.", "a/b"]
    assert t.quota[t.user_cq[1]] == (0,) and t.subtree[t.queue_node[0]] == (6,) and t.quota[0] == (4,)


# ---------------------------------------------------------------------- 6577 as a state and as admissions
def issue_6577_env():
    """PR 6617's first new case as an instance: cq (nominal 500) holds w, whose one pod is 501 GPUs; lending-cq
    (nominal 1000, weight 300); the pool is 1500."""
    return tree_env(["gpu"], [1500], [("cq", 1, [500]), ("lending-cq", 300, [1000])],
                    [("w", "cq", [501], 1), ("l", "lending-cq", [1], 1)])


def test_6577_borrowing_queue_has_share_zero_only_in_the_buggy_version():
    env = issue_6577_env()
    st = state(env, [1, 0])
    assert queue_borrows(st, 0)
    assert queue_share("kueue-drs", st, 0) == F(2, 3) > 0
    assert queue_share("kueue-drs@6577", st, 0) == 0
    assert queue_share("kueue-drs@10126", st, 0) == F(2, 3)
    # the registered order facets expose the same values
    for name, want in (("kueue-drs", F(2, 3)), ("kueue-drs@6577", 0)):
        assert mechanisms.get(name).order.queue_share(st, 0) == want
    # large weight: 800 against 500 with weight 300 -> 0 (buggy) vs 2/3
    env = tree_env(["gpu"], [1500], [("cq", 300, [500]), ("lending-cq", 300, [1000])],
                   [("w", "cq", [800], 1), ("l", "lending-cq", [1], 1)])
    st = state(env, [1, 0])
    assert (queue_share("kueue-drs", st, 0), queue_share("kueue-drs@6577", st, 0)) == (F(2, 3), 0)


def test_6577_fixed_policy_gives_every_borrowing_queue_a_positive_share():
    """The share-faithfulness property the fixed policy must keep: on random feasible states of random trees,
    a queue that borrows has a positive queue share (module docstring: ``lendable_r >= c_r > 0``)."""
    rng = random.Random(6577)
    checked = 0
    for _ in range(150):
        env = random_env(rng)
        st = random_state(rng, env)
        for q in range(env.n_queues):
            if queue_borrows(st, q):
                checked += 1
                assert queue_share("kueue-drs", st, q) > 0
                assert queue_share("kueue-drs@10126", st, q) > 0
    assert checked > 50


def test_6577_admission_keeps_a_queue_from_its_guarantee():
    """The symptom of issue 6577 in the admission order: A (nominal 999) asks for 1000 -- borrowing 1 of a
    pool of 2000 (exact DRS 1/2, integer 0); B (nominal 1001) asks for 1001, within its quota.  Only one fits.
    Fixed: B is not borrowing, goes first and gets its guarantee.  Before PR 6617 both have DRS 0 and FIFO
    admits A: B cannot get its nominal quota."""
    env = tree_env(["cpu"], [2000], [("A", 1, [999]), ("B", 1, [1001])],
                   [("a", "A", [1000], 1), ("b", "B", [1001], 1)])
    assert both(env) == {"a": 0, "b": 1}
    assert both(env, "kueue-drs@6577") == {"a": 1, "b": 0}
    st = state(env, [0, 0])
    assert compare_users("kueue-drs", st, 1, 0) < 0 and compare_users("kueue-drs@6577", st, 0, 1) < 0
    assert user_share("kueue-drs", st, 0) == F(1, 2) and user_share("kueue-drs@6577", st, 0) == 0


# ---------------------------------------------------------------------- 10126 (the example file)
def test_10126_reproduction_orders_and_admissions():
    """Issue 10126's reproduction (examples/kueue-10126.json).  Cycle 1: heads c, a-big, b-big; c (10) fits the
    pool of 15, the big ones never do.  Cycle 2: heads a and b, 5 CPUs left.  At the root: Cohort A with a uses
    5 of its 10 (not borrowing, DRS 0); Cohort B with b uses 15 of its 5 (borrowing on cpu, 10 x 1000 / 15).
    Fixed: a.  Before PR 10149 the step asks whether the workload fits its ClusterQueue's own quota: b (5 of
    B/qb's 5) yes, a (A/qa has none) no, so b goes first."""
    env = load_environment(EXAMPLE)
    assert PRE_10149 == "66c2cf1a93ee3f19d8b29309d27832a4595d4106"
    assert both(env) == {"c": 1, "a-big": 0, "b-big": 0, "a": 1, "b": 0}
    assert both(env, "kueue-drs@10126") == {"c": 1, "a-big": 0, "b-big": 0, "a": 0, "b": 1}
    assert mechanisms.allocate("kueue-drs", env).info == {"admitted": ["c", "a"], "cycles": 2}
    st = state(env, [1, 0, 0, 0, 0])  # the issue's state: c admitted
    a, b = env.users.index("a"), env.users.index("b")
    assert compare_users("kueue-drs", st, a, b) < 0 and compare_users("kueue-drs@10126", st, b, a) < 0
    # the DRS values are the same in both versions; only the borrowing step differs
    assert user_share("kueue-drs", st, b) == user_share("kueue-drs@10126", st, b) == 0


def test_example_file_and_command_line():
    for name, want in (("kueue-drs", "a"), ("kueue-drs@10126", "b")):
        out = subprocess.run([sys.executable, "-m", "verifier", "allocate", name, EXAMPLE, "--exact"],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        rows = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines()[2:]}
        assert rows == {"c": ["1", "1"], "a-big": ["0", "0"], "b-big": ["0", "0"],
                        "a": ["1", "1"] if want == "a" else ["0", "0"], "b": ["1", "1"] if want == "b" else ["0", "0"]}


# ---------------------------------------------------------------------- the mechanism by hand
def test_admission_cycles_by_hand():
    """Pool <cpu 10, gpu 4>; queues t (nominal <6, 0>) and u (nominal <4, 4>): no root quota, lendable
    <10, 4>.  Users in declaration order: t1 (t, <2, 1> x 1), t2 (t, <4, 0> x 1), u1 (u, <1, 1> x 3 pods =
    <3, 3>), u2 (u, <3, 2> x 1).

    Cycle 1 (heads t1, u1): t with t1 uses <2, 1>, borrowing gpu 1 (requested): 1 x 1000 / 4 = 250; u with u1
    uses <3, 3> within <4, 4>: not borrowing.  u1 first, fits: admitted; then t1 (total <5, 4>): admitted.
    Cycle 2 (heads t2, u2): t with t2 uses <6, 1>: it borrows gpu, which t2 does not request -- not borrowing
    for the first step (DRS 250); u with u2 uses <6, 5>: borrows cpu 2 and gpu 1, both requested (DRS
    max(200, 250) = 250).  t2 first: total <9, 4> fits, admitted; u2 (<12, 6>) does not fit: set aside."""
    env = tree_env(["cpu", "gpu"], [10, 4], [("t", 1, [6, 0]), ("u", 1, [4, 4])],
                   [("t1", "t", [2, 1], 1), ("t2", "t", [4, 0], 1), ("u1", "u", [1, 1], 3),
                    ("u2", "u", [3, 2], 1)])
    assert both(env) == {"t1": 1, "t2": 1, "u1": 3, "u2": 0}
    assert mechanisms.allocate("kueue-drs", env).info == {"admitted": ["u1", "t1", "t2"], "cycles": 2}
    st = state(env, [0, 0, 0, 0])
    # nothing admitted: cycle 1 pops u1 (not borrowing) then t1; cycle 2: t2 and u2 both within quota, FIFO
    assert served_order(policy("kueue-drs"), st) == [2, 0, 1, 3]
    assert user_share("kueue-drs", st, 0) == 250 and user_share("kueue-drs", st, 2) == 0
    after = state(env, [1, 0, 3, 0])  # the state after cycle 1
    assert compare_users("kueue-drs", after, 1, 3) < 0
    assert user_share("kueue-drs", after, 1) == user_share("kueue-drs", after, 3) == 250


def test_fifo_inside_a_clusterqueue_and_one_workload_per_queue_per_cycle():
    """Inside a ClusterQueue only the head competes: declaration order.  A ClusterQueue admits at most one
    workload per cycle even when its next workload would win the tournament."""
    env = tree_env(["cpu"], [10], [("p", 1, [5]), ("q", 1, [5])],
                   [("p1", "p", [1], 1), ("p2", "p", [1], 1), ("q1", "q", [5], 1), ("q2", "q", [5], 1)])
    st = state(env, [0, 0, 0, 0])
    assert compare_users("kueue-drs", st, 0, 1) < 0 and compare_users("kueue-drs", st, 1, 0) > 0
    # cycle 1: p1 and q1 (both within quota: FIFO p1, q1); cycle 2: p2 (p within quota) then q2 (borrowing
    # 5 of 10: 500) -- q2 does not fit (p1 + p2 + q1 + q2 = 12 > 10)
    assert both(env) == {"p1": 1, "p2": 1, "q1": 1, "q2": 0}
    assert served_order(policy("kueue-drs"), st) == [0, 2, 1, 3]


def test_the_pairwise_order_is_not_transitive_across_levels():
    """A finding about upstream's tournament read as a pairwise order: pool 10 CPUs; Cohort x holds x/a
    (nominal 6) and x/b (none); c is a top-level ClusterQueue (none).  a (4 CPUs) and b (2 CPUs) each hold one
    pod, c (3 CPUs) none; lendable 10.  In x: x/a with a uses 8 of 6 (200) < x/b with b 4 of 0 (400): a before
    b.  At the root: x with b uses 8 of 6 (200) < c 3 of 0 (300): b before c; x with a uses 10 of 6 (400) > c
    (300): c before a.  A cycle; the tournament serves c (x's nominee a loses to c), then a, then b."""
    env = tree_env(["cpu"], [10], [("x", 1, None), ("x/a", 1, [6]), ("x/b", 1, None), ("c", 1, None)],
                   [("a", "x/a", [4], 1), ("b", "x/b", [2], 1), ("c", "c", [3], 1)])
    st = state(env, [1, 1, 0])
    cmp = mechanisms.get("kueue-drs").order.compare
    assert cmp(st, 0, 1) < 0 and cmp(st, 1, 2) < 0 and cmp(st, 2, 0) < 0
    assert served_order(policy("kueue-drs"), st) == [2, 0, 1]


# ---------------------------------------------------------------------- random trees
def random_env(rng, max_users=6):
    R = rng.randint(1, 2)
    res = ["cpu", "gpu"][:R]
    cap = [rng.randint(0, 12) for _ in range(R)]
    leaves = []
    queues = []
    for i in range(rng.randint(1, 3)):
        top = f"t{i}"
        sub = rng.random() < 0.5
        queues.append((top, rng.randint(1, 3), None if rng.random() < 0.4 else [rng.randint(0, 4) for _ in res]))
        if sub:
            for k in range(rng.randint(1, 3)):
                queues.append((f"{top}/q{k}", rng.randint(1, 3),
                               None if rng.random() < 0.3 else [rng.randint(0, 4) for _ in res]))
                leaves.append(f"{top}/q{k}")
            if rng.random() < 0.3:
                leaves.append(top)  # users in an inner queue
        else:
            leaves.append(top)
    if rng.random() < 0.2:
        leaves.append(None)  # users at the root
    users = [(f"u{j}", rng.choice(leaves), [rng.randint(0, 4) for _ in res], rng.randint(1, 3))
             for j in range(rng.randint(1, max_users))]
    users = [(n, q, d if any(d) else [1] + d[1:], t) for n, q, d, t in users]
    return tree_env(res, cap, queues, users)


def random_state(rng, env):
    """A random state within the pool: tasks handed out while they fit."""
    cap = env.capacity[0]
    used = [F(0)] * env.n_resources
    x = [0] * env.n_users
    for _ in range(3 * env.n_users):
        j = rng.randrange(env.n_users)
        d = env.demand[j]
        if all(u + v <= c for u, v, c in zip(used, d, cap)):
            x[j] += 1
            used = [u + v for u, v in zip(used, d)]
    return state(env, x)


def test_incremental_tournament_matches_the_literal_recomputation():
    rng = random.Random(26)
    for _ in range(250):
        env = random_env(rng)
        for name in POLICIES:
            assert kueue_drs_fast(env, policy(name), name).x == kueue_drs_reference(env, policy(name), name).x
        st = random_state(rng, env)
        tree = tree_of(env)
        for name in POLICIES:
            fast = _cycles(env, policy(name),
                           [list(u) for u in _usage(st)], False, _Tournament)[0]
            lit = _cycles(env, policy(name),
                          [list(u) for u in _usage(st)], False, _LiteralTournament)[0]
            assert fast == lit == served_order(policy(name), st)
            assert sorted(fast) == list(range(env.n_users)) and tree.n_nodes >= env.n_queues + 1


def _usage(st):
    return state_on_tree(st).usage


def test_order_invariants_on_random_states():
    """What the order properties will search, on random states: more allocation never lowers a share, a larger
    weight never makes a queue's users later (against users outside it) nor its share larger, and
    re-expressing a resource x 1000 changes no comparison -- for all three versions."""
    rng = random.Random(25)
    for _ in range(60):
        env = random_env(rng, max_users=5)
        st = random_state(rng, env)
        J = env.n_users
        more = state(env, [t + (1 if j == 0 else 0) for j, t in enumerate(st.totals())])
        scaled = env_scaled(env, 0, 1000)
        st_scaled = Allocation(scaled, st.x, "state", True)
        for name in POLICIES:
            for j in range(J):
                assert user_share(name, more, j) >= user_share(name, st, j)
            for q in range(env.n_queues):
                assert queue_share(name, more, q) >= queue_share(name, st, q)
            for i in range(J):
                for k in range(J):
                    assert (compare_users(name, st, i, k) > 0) == (compare_users(name, st_scaled, i, k) > 0)
            q = rng.randrange(env.n_queues)
            heavier = env_weighted(env, q, 3)
            st_h = Allocation(heavier, st.x, "state", True)
            assert queue_share(name, st_h, q) <= queue_share(name, st, q)
            inside = {j for j in range(J) if q in env.user_path(j)}
            for i in inside:
                for k in set(range(J)) - inside:
                    if compare_users(name, st, i, k) < 0:
                        assert compare_users(name, st_h, i, k) < 0


def env_scaled(env, r, factor):
    from dataclasses import replace
    sc = lambda vec: tuple(v * factor if k == r else v for k, v in enumerate(vec))  # noqa: E731
    return replace(env, capacity=tuple(sc(row) for row in env.capacity), demand=tuple(sc(d) for d in env.demand),
                   queue_guarantee=tuple(None if g is None else sc(g) for g in env.queue_guarantee))


def env_weighted(env, q, factor):
    from dataclasses import replace
    return replace(env, queue_weight=tuple(w * factor if k == q else w for k, w in enumerate(env.queue_weight)))


# ---------------------------------------------------------------------- setting and hostile inputs
def test_setting_refusals():
    ok = tree_env(["cpu"], [4], [("q", 1, [2])], [("u", "q", [1], 2)])
    assert both(ok) == {"u": 2}
    with pytest.raises(SettingError, match=r"^users\[0\]\.weight"):
        mechanisms.allocate("kueue-drs", ok.with_user(0, weight=2))
    with pytest.raises(SettingError, match=r"^users\[0\]\.tasks"):
        mechanisms.allocate("kueue-drs", ok.with_user(0, tasks=None))
    two = parse_environment({"resources": ["cpu"], "servers": [{"name": "a", "capacity": [1]},
                                                               {"name": "b", "capacity": [1]}],
                             "users": [{"name": "u", "demand": [1], "tasks": 1}]})
    with pytest.raises(SettingError, match=r"^servers"):
        mechanisms.allocate("kueue-drs", two)


def test_hostile_inputs_have_defined_results():
    # zero capacities and a guarantee of 0: nothing using cpu fits; shares and orders are defined
    env = tree_env(["cpu", "gpu"], [0, 5], [("z", 1, [0, 0]), ("y", 1, None)],
                   [("a", "z", [1, 0], 1), ("b", "y", [0, 2], 2), ("c", None, [0, 1], 1)])
    assert both(env) == {"a": 0, "b": 2, "c": 1}
    st = state(env, [0, 1, 1])
    assert queue_share("kueue-drs", st, 1) == F(2 * 1000, 5)  # y borrows gpu 2 of lendable 5
    order = mechanisms.get("kueue-drs").order
    assert sorted(order.order(st)) == [0, 1, 2]
    # a state beyond the pool on a resource nobody has (capacity 0, no quota): lendable 0, skipped upstream
    beyond = state(env, [1, 0, 0])
    assert queue_borrows(beyond, 0) and queue_share("kueue-drs", beyond, 0) == 0
    assert queue_share("kueue-drs@6577", beyond, 0) == -1  # the pre-6617 -1 start value
    # negative and NaN task counts in a hand-made state: no traceback
    for bad in ((F(-1),), (float("nan"),)):
        weird = Allocation(env, (bad, (F(0),), (F(0),)), "state", False)
        for name in POLICIES:
            o = mechanisms.get(name).order
            o.order(weird)
            o.share(weird, 0), o.queue_share(weird, 0)
    # a flat instance: one implicit ClusterQueue, FIFO
    flat = parse_environment({"resources": ["cpu"], "servers": [{"name": "p", "capacity": [3]}],
                              "users": [{"name": n, "demand": [2], "tasks": 1} for n in "xyz"]})
    assert both(flat) == {"x": 1, "y": 0, "z": 0}


def test_ten_thousand_queues():
    """10^4 queues (100 cohorts of 99 ClusterQueues, one workload each): allocate and the order in a state
    finish (the per-Cohort heaps; the order memoises each user's key per level)."""
    rng = random.Random(4)
    queues = [(f"t{i}", 1, None) for i in range(100)]
    queues += [(f"t{i // 99}/q{i}", 1, [rng.randint(0, 3)]) for i in range(9900)]
    users = [(f"u{i}", f"t{i // 99}/q{i}", [rng.randint(1, 3)], rng.randint(1, 2)) for i in range(9900)]
    env = tree_env(["cpu"], [9999], queues, users)
    a = mechanisms.allocate("kueue-drs", env)
    assert 0 < sum(1 for v in a.totals() if v) < 9900
    st = state(env, [rng.randint(0, 1) for _ in range(9900)])
    assert len(mechanisms.get("kueue-drs").order.order(st)) == 9900
    assert math.isfinite(float(user_share("kueue-drs", st, 0)))
