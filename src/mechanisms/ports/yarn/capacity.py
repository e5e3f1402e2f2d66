"""``yarn-capacity``: YARN CapacityScheduler's queue order (``PriorityUtilizationQueueOrderingPolicy``, the default
``utilization`` policy) under the ``DominantResourceCalculator``, as an ORDER facet and a whole-task mechanism, and
its historic comparator before the YARN-11745 fix.

Sources (read, not copied; our code follows the semantics):

* apache/hadoop @ ee91492f16528292c4ad173dd018807a63fe6106, hadoop-yarn-server-resourcemanager
  ``.../scheduler/capacity/policy/PriorityUtilizationQueueOrderingPolicy.java``: ``PriorityQueueComparator``
  (``compare``, its private ``compare`` with the tie-break on the configured minimum resource) and the static
  ``compare(relativeAssigned1, relativeAssigned2, priority1, priority2)`` -- at this revision the tie-break still
  has the bug (``yarn-capacity@YARN-11745``, declared with the port in :data:`PORT`);
* the fix, YARN-11745 (https://issues.apache.org/jira/browse/YARN-11745), pull requests 7278 (trunk) and 7310
  (branch-3.4), read in the pull request's branch Hean-Chhinling/hadoop @ 6d5350fa3b4897d624dc14b15992b9e453eb554b
  (the same file: the queues are sorted through ``PriorityQueueResourcesForSorting`` snapshots -- YARN-10178's,
  which the file's comment credits and ee91492f does not have yet -- and YARN-11745's fix is ``&&`` -> ``||`` in
  the tie-break; the fixed file sorts with ``Stream.sorted``, the same TimSort as ``Collections.sort``) and its
  tests in ``TestPriorityUtilizationQueueOrderingPolicy.java`` (``testUtilizationOrdering``,
  ``testComparatorClassDoesNotViolateTimSortContract``), replayed in tests/mechanisms/test_yarn_capacity.py;
* apache/hadoop ``hadoop-yarn-common .../util/resource/DominantResourceCalculator.java`` @
  0f01206e158aa865fe412a37d97bf91e790a03b9 (``divide``, ``calculateShares``: a resource the cluster has none of
  is skipped, the share is the largest of the others) and ``hadoop-yarn-api .../records/Resource.java`` @ ee91492f
  (``compareTo``: lexicographic in the resource types' order, memory then vcores then the others).

The comparator (``utilization`` policy: priorities not respected), on two sibling queues ``a`` and ``b``
---------------------------------------------------------------------------------------------------------
1. a positive absolute capacity goes before 0 (two zeros: compare absolute used capacities instead of used
   capacities in step 2);
2. the used capacity (used / guaranteed, the DRC's ``divide``) ascending (``Double.compare``);
3. equal: the tie-break.  FIXED (YARN-11745, PR 7278/7310): if EITHER queue has a configured minimum resource
   (not ``<0, ..., 0>``), the larger one (``Resource.compareTo``, lexicographic) first; else the larger absolute
   capacity first.  BEFORE THE FIX (``yarn-capacity@YARN-11745``): only if BOTH have one -- a queue without one
   against a queue with one falls through to the absolute capacities, so ``a ~ b`` and ``a ~ c`` while
   ``b < c`` (incomparability not transitive), and Java's TimSort throws "Comparison method violates its general
   contract!" on enough queues.

Our model on it (the conventions, stated in ``list``)
-----------------------------------------------------
* Our queue tree IS the CapacityScheduler's: inner queues are ParentQueues; the users directly in a queue (or at
  the root) form that queue's implicit LEAF queue ``q/.`` (weight 1, no minimum resource), where the users are
  APPS, ordered FIFO (the default ``fifo`` app ordering policy: equal priorities, then submission = declaration
  order).  A leaf queue of ours is a LeafQueue with its users as apps.
* CAPACITIES are in the weight mode of the capacity vector: a queue's capacity is its weight over its siblings'
  (the implicit leaf counting 1), its ABSOLUTE capacity the product down the path.  Its CONFIGURED MINIMUM
  RESOURCE is its ``guarantee`` (absent: ``<0, ..., 0>``, what upstream reads as none).  The two are independent
  inputs here, as upstream's own test of the fix mocks them (equal capacities, different minimum resources).
  Weights are positive, so the zero-capacity branch of step 1 is not reachable from an instance (it is kept and
  unit-tested on the comparator).
* USED: the queue's usage (the users below it, pooled over servers).  ``absoluteUsedCapacity = DRC.divide(
  cluster, used, cluster)`` = the largest ``used_r / cluster_r`` over resources the cluster has;
  ``usedCapacity = DRC.divide(cluster, used, guaranteed)`` with ``guaranteed = absoluteCapacity x cluster`` =
  ``absoluteUsedCapacity / absoluteCapacity``, exactly (upstream: ``float``).
* THE ORDER OF TWO USERS (``OrderSpec.compare``): the comparator on the two children of their lowest common
  ancestor; a tie there goes to the children's position in the parent's list (child queues in declaration
  order, then the implicit leaf) -- what upstream's STABLE sort of that list does when the comparator is a
  strict weak order.  Two apps of one leaf: FIFO.  So the fixed policy's user order is total, and the historic
  comparator's intransitive tie shows as a 3-cycle of users.
* ``share(state, j)``: the user's absolute used capacity (DRC share of the cluster); ``queue_share(state, q)``:
  the queue's used capacity, what step 2 compares.

The mechanism: one container per round
--------------------------------------
Repeat: descend from the root; at a parent, its children (child queues in declaration order, then the implicit
leaf if it has users) are SORTED with the comparator on the current allocation -- below 32 elements Java's
``Collections.sort`` is a binary insertion sort after its first run (``countRunAndMakeAscending``,
``binarySort``), reproduced exactly, so an intransitive comparator gives upstream's order, not Python's; from
32 up a stable sort (equal to upstream's for a strict weak order; upstream may throw otherwise);
:func:`mechanisms.ports.java_go.java_sort`, shared with ``yarn-drf``, as are ``Double.compare`` and the IEEE
division -- and tried in
that order; in a leaf, the first app (FIFO) with pending demand whose task fits what the pool has left gets ONE
task.  The fixed policy runs incrementally (its comparator is a strict weak order: each parent keeps its live
children sorted by :func:`queue_key` and position, a round re-keys the served path; benchmarks/bench_yarn_capacity.py);
the historic one sorts every list afresh every round, as upstream does (:func:`yarn_capacity_reference` is that
literal loop for either comparator, and the tests hold the two paths equal).  Conventions where upstream leaves a choice open: one pool (one server, one node heartbeat at a time, one
container each); whole tasks; task bounds (``floor(n_j)``); ``user-limit-factor -1`` and ``maximum-capacity``
100% (queues elastic up to the cluster: no user limit, no queue ceiling); no reservations, node labels,
priorities or preemption; exact arithmetic (upstream: ``float``).
"""
from __future__ import annotations

import math
from bisect import bisect_left, insort
from fractions import Fraction
from functools import partial
from typing import Any, Callable, NamedTuple, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import MAX_TASKS

from ...core.order import order_facet, view
from ...core.registry import OrderSpec, Setting
from ...core.z3spec import Z3Spec
from ..declare import Fix, Pin, Port, Variant
from ..java_go import double_compare, double_key, ieee_div, java_sort

__all__ = ["UPSTREAM", "QueueSnapshot", "dominant_share", "compare_queues", "queue_key",
           "CapacityTree", "CapacityState", "capacity_state", "user_compare", "user_share", "queue_share", "order",
           "allocate", "yarn_capacity_reference", "PORT"]

_HADOOP = "apache/hadoop"
_FILE = "PriorityUtilizationQueueOrderingPolicy.java"
UPSTREAM = (f"{_HADOOP}: hadoop-yarn-server-resourcemanager .../scheduler/capacity/policy/{_FILE} (PriorityQueueComparator, "
            f"the 'utilization' policy) with the YARN-11745 fix of pull requests 7278/7310 (read in the PR's branch "
            f"Hean-Chhinling/hadoop @ 6d5350fa3b4897d624dc14b15992b9e453eb554b); DominantResourceCalculator.java @ "
            f"0f01206e158aa865fe412a37d97bf91e790a03b9 (divide); Resource.java @ ee91492f16528292c4ad173dd018807a63fe6106 "
            f"(compareTo)")
_ZERO = Fraction(0)


# ---------------------------------------------------------------------- the comparator
def dominant_share(used: Sequence[Any], cluster: Sequence[Any]) -> Any:
    """The DRC's share of ``used`` in the cluster: the largest ``used_r / cluster_r`` over the resources the
    cluster has (``calculateShares`` skips the infinite shares of a resource with capacity 0); 0 if none."""
    best: Any = _ZERO
    for u, c in zip(used, cluster):
        if c > 0 and u / c > best:
            best = u / c
    return best


class QueueSnapshot(NamedTuple):
    """What the comparator reads of one queue (upstream's ``PriorityQueueResourcesForSorting``)."""

    absolute_capacity: Any
    used_capacity: Any
    absolute_used_capacity: Any
    min_resource: tuple  # the configured minimum resource; all zeros = none


def _lex(a: tuple, b: tuple) -> int:
    """``Resource.compareTo``: lexicographic in the resource types' order."""
    for x, y in zip(a, b):
        if x != y:
            return 1 if x > y else -1
    return 0


def compare_queues(a: QueueSnapshot, b: QueueSnapshot, *, min_resource_tie_needs_both: bool = False) -> int:
    """``PriorityQueueComparator.compare`` (< 0: ``a`` is served first), priorities not respected;
    ``min_resource_tie_needs_both``: the tie-break before YARN-11745's fix (``&&``, fixed: ``||``)."""
    pa, pb = a.absolute_capacity > 0, b.absolute_capacity > 0
    if pa and not pb:
        return -1
    if pb and not pa:
        return 1
    if not pa:
        rc = double_compare(a.absolute_used_capacity, b.absolute_used_capacity)
    else:
        rc = double_compare(a.used_capacity, b.used_capacity)
    if rc:
        return rc
    none_a, none_b = not any(a.min_resource), not any(b.min_resource)
    by_min = (not none_a and not none_b) if min_resource_tie_needs_both else (not none_a or not none_b)
    if by_min:
        return _lex(b.min_resource, a.min_resource)
    return double_compare(b.absolute_capacity, a.absolute_capacity)


def queue_key(s: QueueSnapshot) -> tuple:
    """The FIXED comparator as a key: ``compare_queues(a, b)`` has the sign of ``queue_key(a)`` against
    ``queue_key(b)`` (it is a strict weak order, so it has one).  A positive capacity first; the used (or, at
    capacity 0, absolute used) capacity; the configured minimum resource, larger first (none = zeros, the
    smallest); between two queues without one, the larger absolute capacity."""
    first = (0, double_key(s.used_capacity)) if s.absolute_capacity > 0 else \
        (1, double_key(s.absolute_used_capacity))
    none = not any(s.min_resource)
    return (first, tuple(-v for v in s.min_resource), -s.absolute_capacity if none else 0)


# ---------------------------------------------------------------------- the tree
class CapacityTree:
    """The CapacityScheduler's view of an environment's queue tree: per node (a queue index, or ``("leaf", q)``
    for the implicit leaf of the users directly in ``q``; ``q = None``: the root) its children in list order,
    its absolute capacity and its configured minimum resource."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        R = env.n_resources
        self.children: dict[Any, list[Any]] = {}
        self.absolute: dict[Any, Any] = {}
        self.min_resource: dict[Any, tuple] = {}
        self.users: dict[Any, list[int]] = {}

        def weight(node: Any) -> Any:
            return Fraction(1) if isinstance(node, tuple) else env.queue_weight[node]

        def build(q: Optional[int], absolute: Any) -> None:
            kids: list[Any] = list(env.queue_children(q))
            direct = list(env.queue_users(q))
            if direct:
                leaf = ("leaf", q)
                kids.append(leaf)
                self.users[leaf] = direct
                self.min_resource[leaf] = (_ZERO,) * R
            self.children[q] = kids
            total = sum((weight(k) for k in kids), _ZERO)
            for k in kids:
                self.absolute[k] = absolute * weight(k) / total
                if not isinstance(k, tuple):
                    g = env.queue_guarantee[k]
                    self.min_resource[k] = tuple(g) if g is not None else (_ZERO,) * R
                    build(k, self.absolute[k])

        build(None, Fraction(1))
        #: a node's position in its parent's list (a tie goes to the earlier: upstream's stable sort)
        self.position = {k: i for kids in self.children.values() for i, k in enumerate(kids)}
        self.parent = {k: q for q, kids in self.children.items() for k in kids}

    def node_of_user(self, j: int) -> tuple:
        return ("leaf", self.env.user_queue[j])

    def path(self, j: int) -> list[Any]:
        """The nodes from the top level down to user ``j``'s leaf."""
        return list(self.env.user_path(j)) + [self.node_of_user(j)]


_TREES: list[Any] = [None, None]


def _tree(env: Environment) -> CapacityTree:
    if _TREES[0] is not env:
        _TREES[0], _TREES[1] = env, CapacityTree(env)
    return _TREES[1]


def _snapshot(tree: CapacityTree, usage: Sequence[Any], node: Any) -> QueueSnapshot:
    cluster = tree.env.total_capacity()
    absolute = tree.absolute[node]
    abs_used = dominant_share(usage, cluster)
    return QueueSnapshot(absolute, ieee_div(abs_used, absolute), abs_used, tree.min_resource[node])


class CapacityState(NamedTuple):
    """What the order reads of a state: the tree, every node's snapshot, every user's pooled allocation and the
    cluster."""

    tree: CapacityTree
    snapshots: dict
    allocated: list
    cluster: tuple


def capacity_state(state: Allocation) -> CapacityState:
    """The order facet's derived data of ``state`` (:class:`CapacityState`)."""
    tree = _tree(state.env)
    allocated = view(state).allocated
    usage = {node: [_ZERO] * state.env.n_resources for node in tree.absolute}
    for j, own in enumerate(allocated):
        if any(own):
            for node in tree.path(j):
                usage[node] = [a + b for a, b in zip(usage[node], own)]
    snaps = {node: _snapshot(tree, usage[node], node) for node in tree.absolute}
    return CapacityState(tree, snaps, allocated, tuple(state.env.total_capacity()))


def user_compare(c: CapacityState, i: int, j: int, *, min_resource_tie_needs_both: bool = False) -> int:
    """The order of users ``i`` and ``j`` (< 0: ``i`` first): the comparator on the two children of their lowest
    common ancestor, a tie to the children's list position; FIFO within a leaf."""
    if i == j:
        return 0
    tree = c.tree
    pi, pj = tree.path(i), tree.path(j)
    k = 0
    while k < len(pi) and k < len(pj) and pi[k] == pj[k]:
        k += 1
    if k == len(pi) and k == len(pj):  # one leaf: FIFO
        return -1 if i < j else 1
    a, b = pi[k], pj[k]
    rc = compare_queues(c.snapshots[a], c.snapshots[b], min_resource_tie_needs_both=min_resource_tie_needs_both)
    if rc:
        return rc
    return -1 if tree.position[a] < tree.position[b] else 1


def user_share(c: CapacityState, j: int) -> Any:
    """User ``j``'s absolute used capacity: its DRC share of the cluster."""
    return dominant_share(c.allocated[j], c.cluster)


def queue_share(c: CapacityState, q: int) -> Any:
    """Queue ``q``'s used capacity (absolute used capacity over absolute capacity)."""
    return c.snapshots[q].used_capacity


def order(*, min_resource_tie_needs_both: bool = False) -> OrderSpec:
    """The order facet of a version (``min_resource_tie_needs_both``: the tie-break before YARN-11745's fix)."""
    return order_facet(capacity_state, partial(user_compare, min_resource_tie_needs_both=min_resource_tie_needs_both),
                       user_share, queue_share)


# ---------------------------------------------------------------------- the mechanism
class _Round:
    """What one container per round needs: the pool left, every user's demand, bound and tasks, every node's usage.
    Resources only shrink and tasks only grow, so a user that cannot take a task now never can again (``dead``)."""

    def __init__(self, env: Environment, tree: CapacityTree, name: str) -> None:
        J, R = env.n_users, env.n_resources
        self.env, self.tree, self.name = env, tree, name
        self.left = list(env.capacity[0]) if env.n_servers else [_ZERO] * R
        self.demand = [env.d(j, 0) for j in range(J)] if env.n_servers else [env.demand[j] for j in range(J)]
        self.limit = [None if b is None else math.floor(b) for b in env.tasks]
        self.eligible = [0 in env.eligible[j] for j in range(J)]
        self.has_demand = [any(v for v in self.demand[j]) for j in range(J)]
        self.tasks = [0] * J
        self.usage: dict[Any, list] = {node: [_ZERO] * R for node in tree.absolute}
        self.nodes_of = [tree.path(j) for j in range(J)]
        self.steps = 0

    def can_take(self, j: int) -> bool:
        """Pending demand (bound not reached, a nonzero request) and the task fits what the pool has left."""
        if not self.has_demand[j] or (self.limit[j] is not None and self.tasks[j] >= self.limit[j]):
            return False
        return self.eligible[j] and all(not dv or lv >= dv for lv, dv in zip(self.left, self.demand[j]))

    def give(self, j: int) -> None:
        self.steps += 1
        if self.steps > MAX_TASKS:
            raise InstanceError(f"instance: {self.name} would place more than {MAX_TASKS} whole tasks; "
                                f"scale capacities/demands down")
        self.tasks[j] += 1
        for r, dv in enumerate(self.demand[j]):
            if dv:
                self.left[r] -= dv
                for node in self.nodes_of[j]:
                    self.usage[node][r] += dv

    def snapshot(self, node: Any) -> QueueSnapshot:
        return _snapshot(self.tree, self.usage[node], node)

    def run(self, pick: Callable[[Optional[int]], Optional[int]],
            served: Callable[[int], None] = lambda j: None) -> Allocation:
        """One task per round to ``pick(None)`` (the descent from the root) until it finds nobody."""
        while (j := pick(None)) is not None:
            self.give(j)
            served(j)
        return self.result()

    def result(self) -> Allocation:
        env = self.env
        x = tuple((Fraction(self.tasks[j]),) * env.n_servers for j in range(env.n_users))
        return Allocation(env, x, self.name, True, {"steps": self.steps})


def _run_literal(env: Environment, name: str, min_resource_tie_needs_both: bool) -> Allocation:
    """Every round sorts every parent's whole child list with Java's sort (module docstring): upstream's order
    even where the comparator is not a strict weak order (``yarn-capacity@YARN-11745``)."""
    tree = CapacityTree(env)
    st = _Round(env, tree, name)

    def cmp(a: Any, b: Any) -> int:
        return compare_queues(st.snapshot(a), st.snapshot(b), min_resource_tie_needs_both=min_resource_tie_needs_both)

    def descend(q: Optional[int]) -> Optional[int]:
        for node in java_sort(tree.children.get(q, ()), cmp):
            if isinstance(node, tuple):
                for j in tree.users[node]:
                    if st.can_take(j):
                        return j
            else:
                got = descend(node)
                if got is not None:
                    return got
        return None

    return st.run(descend)


def _run_keyed(env: Environment, name: str) -> Allocation:
    """The fixed policy, incrementally: its comparator is a strict weak order, so a stable sort of a parent's
    children is the order of ``(queue_key, position)``; each parent keeps its live children sorted, a round
    re-keys the nodes on the served user's path only, and a node none of whose users can take a task leaves
    its parent's list for good (the order of the others does not change)."""
    tree = CapacityTree(env)
    st = _Round(env, tree, name)
    live: dict[Any, list] = {}
    entry: dict[Any, tuple] = {}
    for q, kids in tree.children.items():
        rows = []
        for k in kids:
            entry[k] = (queue_key(st.snapshot(k)), tree.position[k], k)
            rows.append(entry[k])
        live[q] = sorted(rows, key=lambda e: (e[0], e[1]))
    cursor = {leaf: 0 for leaf in tree.users}  # FIFO: users before the cursor can never take a task again

    def drop(node: Any) -> None:
        while node is not None:
            parent = tree.parent[node]
            rows = live[parent]
            del rows[bisect_left(rows, entry[node][:2], key=lambda e: e[:2])]
            if rows or parent is None:
                return
            node = parent

    def descend(q: Optional[int]) -> Optional[int]:
        for e in list(live.get(q, ())):
            node = e[2]
            if isinstance(node, tuple):
                users = tree.users[node]
                while cursor[node] < len(users) and not st.can_take(users[cursor[node]]):
                    cursor[node] += 1
                if cursor[node] < len(users):
                    return users[cursor[node]]
                drop(node)
            else:
                got = descend(node)  # None: every child dropped, and with the last one the node itself
                if got is not None:
                    return got
        return None

    def rekey(j: int) -> None:  # the served user's path changed usage: its nodes move in their parents' lists
        for node in st.nodes_of[j]:
            rows = live[tree.parent[node]]
            old = entry[node]
            i = bisect_left(rows, old[:2], key=lambda e: e[:2])
            if i < len(rows) and rows[i][2] == node:
                del rows[i]
                entry[node] = (queue_key(st.snapshot(node)), old[1], node)
                insort(rows, entry[node], key=lambda e: e[:2])

    return st.run(descend, rekey)


def allocate(env: Environment, exact: bool = False, *, name: str = "yarn-capacity",
             min_resource_tie_needs_both: bool = False) -> Allocation:
    """CapacityScheduler's utilization queue order, one container per round (module docstring): the fixed policy
    incrementally, the version before YARN-11745's fix literally (its comparator is not a strict weak order)."""
    if min_resource_tie_needs_both:
        return _run_literal(env, name, True)
    return _run_keyed(env, name)


def yarn_capacity_reference(env: Environment, *, name: str = "yarn-capacity",
                            min_resource_tie_needs_both: bool = False) -> Allocation:
    """The literal version (every parent's child list sorted afresh every round): the test of the fast path."""
    return _run_literal(env, name, min_resource_tie_needs_both)


_SETTING = Setting(single_server=True, placement=True, external=False, bounds=True, weights=False, divisible=False,
                   hierarchy=True, lends=True)

_NOTES = ("port of the comparator's semantics (our code): the queue tree is CapacityScheduler's (inner queues are "
          "ParentQueues; the users directly in a queue form its implicit leaf q/. of weight 1, their apps FIFO in "
          "declaration order); capacities in weight mode (weight over the siblings' weights, absolute capacity the "
          "product down the path); configured minimum resource = guarantee (absent: <0,...,0> = none); used "
          "capacity = DRC share of the usage / absolute capacity, exactly; the 'utilization' policy (priorities not "
          "respected); two users compare as the two children of their lowest common ancestor, a tie by the "
          "children's list position (upstream's stable sort), FIFO within a leaf; one container per round, children "
          "sorted by Java's binary insertion sort (below 32) -- so an intransitive comparator orders as upstream's "
          "sort does; one pool, user-limit-factor -1, maximum-capacity 100% (a queue's declared max is not read), no reservations, labels, priorities or "
          "preemption; no claims (upstream states none)")


#: the port (``mechanisms.ports.declare``): the policy with the YARN-11745 fix, and the version before it
PORT = Port(
    name="yarn-capacity",
    title="YARN CapacityScheduler queue order (PriorityUtilizationQueueOrderingPolicy, DRC): used capacity ascending, "
          "ties to the larger configured minimum resource, then the larger capacity; one container per round down "
          "the queue tree, apps FIFO in a leaf",
    pins=(Pin("Hean-Chhinling/hadoop", "6d5350fa3b4897d624dc14b15992b9e453eb554b", f".../scheduler/capacity/policy/{_FILE}"),
          Pin(_HADOOP, "0f01206e158aa865fe412a37d97bf91e790a03b9", ".../util/resource/DominantResourceCalculator.java"),
          Pin(_HADOOP, "ee91492f16528292c4ad173dd018807a63fe6106", ".../api/records/Resource.java")),
    source=UPSTREAM, setting=_SETTING, notes=_NOTES,
    z3=Z3Spec.none("indivisible tasks on a queue tree (integer allocations): not encoded"),
    allocate=allocate, order=order,
    variants=(Variant(
        issue="YARN-11745", switches={"min_resource_tie_needs_both": True}, fixed_by=(Fix("7278"), Fix("7310")),
        read_at="ee91492f16528292c4ad173dd018807a63fe6106",
        title="YARN CapacityScheduler queue order before the YARN-11745 fix: the configured minimum resources break a "
              "tie only if BOTH queues have one (a queue without one ties with every queue of its used and absolute "
              "capacity: not transitive)",
        source=(f"YARN-11745 (https://issues.apache.org/jira/browse/YARN-11745), fixed by {_HADOOP} pull requests 7278 "
                f"and 7310 (2025-01): the comparator BEFORE the fix, {_HADOOP} @ "
                f"ee91492f16528292c4ad173dd018807a63fe6106 .../capacity/policy/{_FILE}, PriorityQueueComparator.compare: "
                f"the configured minimum resources decide a tie only if BOTH are not none (&&), else the absolute "
                f"capacities"),
        notes="the historic tie-break reproduced exactly (in exact arithmetic): minEffRes compared only when both are "
              "not none (&&; fixed: ||), else the absolute capacities; everything else as yarn-capacity"),))
PORT.register()
