"""``kueue-drs``: Kueue's fair sharing (dominant resource share, the admission tournament up the cohort tree) as a
whole-workload mechanism on a queue tree, with its ORDER in a state, and two historic buggy versions.

Source (read, not copied; our code follows the semantics): kubernetes-sigs/kueue @
ff69552e79ad21652c36caa97038382e55625cf7 (:data:`COMMIT`),

* ``pkg/cache/scheduler/fair_sharing.go``: ``dominantResourceShare``, ``calculateLendable``, the ``DRS`` type
  (``PreciseWeightedShare``, ``CompareDRS``, ``roundedWeightedShare``, ``IsBorrowingOn``, ``zeroWeightBorrows``);
  its test ``fair_sharing_test.go`` (``TestDominantResourceShare``, ``TestIsBorrowingOn``);
* ``pkg/cache/scheduler/resource_node.go``: ``SubtreeQuota``, ``Usage``, ``localQuota``, ``potentialAvailable``,
  ``accumulateFromChild``, ``addUsage``; ``clusterqueue_snapshot.go``: ``SimulateUsageAddition``, ``Fits``;
* ``pkg/scheduler/fair_sharing_iterator.go``: ``pop``, ``runTournament``, ``entryComparer.less``, ``computeDRS``;
* ``pkg/scheduler/scheduler.go``: ``schedule`` (one admission cycle), ``processEntry``;
* ``pkg/features/kube_features.go``: defaults ``FairSharingPrioritizeNonBorrowing`` on (beta, 0.17),
  ``PrioritySortingWithinCohort`` on, ``PrioritizePreemptorWorkloads`` off;
  ``apis/kueue/v1beta2/clusterqueue_types.go``: defaults ``queueingStrategy: BestEffortFIFO``,
  ``reclaimWithinCohort: Never``, ``withinClusterQueue: Never`` (no preemption);
* ``site/content/en/docs/concepts/fair_sharing.md`` (the preemption-loop proof and its open hierarchical case).

Our model as Kueue's cohort tree (the mapping, stated in ``list``)
------------------------------------------------------------------
* Our queue tree IS the cohort tree; our unnamed root is the ROOT COHORT.  A LEAF queue is a ClusterQueue; an
  INNER queue is a Cohort.  A queue's ``guarantee`` is its own nominal quota per resource (a ClusterQueue's
  ``nominalQuota``, a Cohort's own quota); no guarantee: 0 on every resource.  One flavour per resource; no
  lending or borrowing limits (Kueue's defaults: unlimited).
* The users are WORKLOADS: user ``j`` is one workload of ``floor(n_j)`` pods of demand ``d_j``, admitted whole
  or not at all.  Its ClusterQueue is its queue when that is a leaf; the users directly in an INNER queue
  ``q`` sit in an implicit ClusterQueue ``q/.`` below the Cohort ``q`` (nominal quota 0, weight 1: the
  Cohort's quota is ``q``'s guarantee), and the users at the root in an implicit ClusterQueue ``.`` below
  the root cohort (so a flat instance is one ClusterQueue: FIFO).  Users carry no weight (a Kueue workload
  has none): the setting refuses user weights.  Order inside a ClusterQueue: declaration order (the
  workloads' creation times; BestEffortFIFO with equal priorities).
* The POOL is the root cohort's own quota: ``max(0, c_r - sum of its children's subtree quotas)``, so the
  root's subtree quota is ``max(c_r, sum of the guarantees)``.  Without that, an instance without guarantees
  would have no quota at all (Kueue admits nothing there).

The dominant resource share (``dominantResourceShare``)
------------------------------------------------------
* A node's SUBTREE QUOTA is its own quota plus its children's subtree quotas; its USAGE is its workloads'
  (a ClusterQueue) or its children's summed usages (a Cohort; no lending limit, so everything is lent up).
* ``borrowed_r = usage_r + request_r - subtreeQuota_r`` where positive (``request``: the nominee's workload,
  added by ``SimulateUsageAddition`` before the DRS is taken).  No resource borrowed: DRS 0, not borrowing.
* ``lendable_r``: ``calculateLendable(parent)`` sums ``potentialAvailable(parent, r)``; without lending and
  borrowing limits ``localQuota`` is 0 at every node and ``potentialAvailable`` is the ROOT's subtree quota,
  whatever the depth.  ``ratio_r = borrowed_r x 1000 / lendable_r`` over the borrowed resources with
  ``lendable_r > 0`` (the others are skipped); the DRS is the largest ratio, ties to the alphabetically first
  resource name.  A node without a parent (the root) has DRS 0.
* Weighted share: ``ratio / weight``; 0 when the ratio is 0 (even while borrowing: every borrowed resource
  skipped); weight 0 while the ratio is positive: ``+inf`` (``CompareDRS`` orders two such nodes by their
  unweighted ratios; the status rounds it to MaxInt64).  Upstream computes the ratio in ``float64``; we
  compute it EXACTLY (``Fraction``) and compare exactly.  The status value (``roundedWeightedShare``) is the
  CEILING of the exact weighted share (:meth:`DRS.rounded`): e.g. ``1 x 1000 / 1500`` gives 1.

The tournament (``runTournament``, ``entryComparer.less``)
---------------------------------------------------------
Each ClusterQueue nominates its head; each Cohort, bottom-up, keeps the best of its children's nominees by
``less`` and passes it up; the root's winner is popped.  ``less(a, b, cohort)`` compares the DRS values of the
cohort's CHILDREN that contain ``a`` and ``b``, each taken after simulating the admission of its own nominee
(``computeDRS``: the nominee's ASSIGNMENT usage, which is empty for a NoFit nominee -- a request above the root's
subtree quota on some resource gets no flavour -- so such a nominee enters without its request,
:func:`nominee_requests`), by: (1) not borrowing, on a resource the nominee requests, at that child
(``FairSharingPrioritizeNonBorrowing``, on by default; PR 10149), (2) ``CompareDRS``, (3) priority (none in
our model: all equal), (4) FIFO (declaration order).  Preemptor-first is off by default and there is no
preemption here.  Open upstream (issue 13320): step (1) penalises a workload whose own ClusterQueue is within
its quota when a sibling ClusterQueue makes their Cohort borrow; that is the pinned behaviour and ours.

The ORDER in a state (``OrderSpec``; the facet the ``order`` command and the order properties read)
-------------------------------------------------------------------------------------------------
A state (an :class:`Allocation`, the current allocation) gives every node its usage (``x_j d_j`` summed).
Every user is read as a NOMINEE whose request is its whole workload ``floor(n_j) d_j`` (whether or not it
already holds tasks: the question answered is "whose workload is admitted next"), or nothing when that workload
is NoFit (:func:`nominee_requests`).

* ``compare(state, i, j)``: the same ClusterQueue: FIFO (only the head competes); otherwise ``less`` at the
  lowest common ancestor Cohort of their ClusterQueues, as the tournament compares them there.  Never 0 for
  two users (FIFO decides).  This pairwise relation is NOT transitive in general: the key of a user depends on
  the level it is compared at (its ClusterQueue's DRS inside its Cohort, its Cohort's DRS higher up), so
  ``a`` may beat ``b`` in their Cohort while ``c`` beats ``a`` and loses to ``b`` above it -- the tournament is
  a knockout, not a sort (see the tests).  :func:`served_order` is the order the cycles actually serve.
* ``share(state, j)``: the weighted DRS of ``j``'s ClusterQueue after admitting ``j``'s workload (the value
  ``j`` enters the tournament with); ``queue_share(state, q)``: the weighted DRS of queue ``q``'s node in the
  state (an inner queue: its Cohort).  Exact; ``INF`` for weight 0 while borrowing (not reachable: our
  weights are > 0).  :func:`queue_borrows` says whether a queue's node borrows (usage above its SUBTREE quota
  on some resource -- for an inner queue, its own guarantee plus its children's).
* A queue that borrows has a positive share in every state within the pool: borrowing on ``r`` means
  ``usage_r > 0``, so ``c_r > 0`` and ``lendable_r >= c_r > 0``.  The one exception is a state that uses a
  resource of capacity 0 for which no queue has a guarantee (``lendable_r = 0``: skipped, as upstream): such
  a state is outside the pool and unreachable in Kueue.

The mechanism (admission cycles, ``scheduler.schedule``)
-------------------------------------------------------
Repeat cycles until no ClusterQueue has a pending workload: every ClusterQueue's head (its first pending
workload) is nominated; the fair-sharing iterator pops them one by one, re-running the tournament among the
heads not yet popped with the usage as it is (``computeDRS`` at each pop); a popped workload is admitted if
it fits (the pool: ``total usage + request <= c``; with unlimited borrowing Kueue's own check is the root's
subtree quota, which is at least ``c``), else it is set aside for good (usage only grows: it would never fit
later; BestEffortFIFO lets the next workload of its ClusterQueue be the head of the next cycle).  No
preemption (Kueue's default policies are ``Never``).  Not modelled here (it is in
:mod:`mechanisms.ports.kueue.scheduling`): a head that does not fit but whose ClusterQueue's nominal quota covers it is
Preempt mode upstream, and with ``reclaimWithinCohort: Never`` ``reserveCapacityForUnreclaimablePreempt`` reserves
its request for the rest of its cycle, which can delay another head of that cycle by one cycle.  The heads are nominated afresh each cycle, so a
ClusterQueue admits at most one workload per cycle.  One server (the pool), whole workloads, no placement
constraints, no external resources, no user weights, every user bounded (``floor(n_j)`` pods).  The instance's
state (``usage``) is not read: an allocation starts from an empty cluster.  Each pop costs
``O(depth x (R + log fanout))`` (per-Cohort heaps); :func:`kueue_drs_reference` is the literal recomputation.

Historic versions (each registered as ``kueue-drs@<issue>``, its ``source`` citing issue, PRs and commits)
-------------------------------------------------------------------------------------------------------
* ``kueue-drs@6577`` -- issue 6577 "Fairsharing bug that prevents CQs from reclaiming guarantees", fixed by PR
  6617 (5106fb28c399ad05de55ca313db0238caa060c3a: ``max(1, ...)``) and PR 6925
  (efc4a1bc10eacdd8a86129ccae34eadf3dd75424: the exact ``DRS`` type).  Before them
  (``pkg/cache/fair_sharing.go`` @ 0b7ad55aaacf38892be32e3f33eb61bde28ae791, the parent of 6617) the DRS was
  int64 arithmetic: ``ratio = b * 1000 / lendable`` (integer division), ``drs = max ratio`` starting at -1,
  then MaxInt for weight 0, else ``drs * 1000 / weight.MilliValue()`` (integer division; ``MilliValue`` is
  ``ceil(1000 w)``).  A borrowing queue with ``1000 b < lendable`` (large quotas) or ``drs < w`` (large
  weights) gets 0 -- exactly the values PR 6617's new tests pin at 1 (501 vs nominal 500 in a cohort of 1500;
  800 vs 500 with weights 300).  Its tournament compared those integers, then priority, then FIFO (no
  non-borrowing step: that came with PR 9484).  With every borrowed resource at ``lendable <= 0`` the value is
  ``-1000 / milli(w)`` truncated (``-1`` for weight 1).  :func:`integer_drs` is that formula.
* ``kueue-drs@10126`` -- issue 10126 "Incorrect admission ordering with FairSharingPrioritizeNonBorrowing",
  fixed by PR 10149 (2a9f6f00cae15104197f2c4a5e592f755c188799).  Before it
  (``pkg/scheduler/fair_sharing_iterator.go`` @ 66c2cf1a93ee3f19d8b29309d27832a4595d4106) step (1) of ``less``
  was ``assignment.RequiresBorrowing()`` -- whether the workload fits its ClusterQueue's OWN nominal quota --
  at EVERY level, so at a higher Cohort a workload whose ClusterQueue fits its quota beat one whose Cohort
  does not borrow, even when its own Cohort borrows (the issue's reproduction is a test).
* Not registered: issue 4961 (weight-0 cohorts preempted workloads within their nominal quota; PR 4962,
  887dddfe202e7b8d4b9d5cf3d05674e8946dfb4a).  Before it (``pkg/cache/fair_sharing.go`` @
  070fa7d9b8ec7dec286dcedd5c1ae5773d5f2786) weight 0 returned MaxInt BEFORE the borrowing check, so a
  weight-0 node within its quota had the largest share.  Our queue weights are > 0 (docs/model.md), so no
  instance can show it; :func:`integer_drs` keeps that formula (``zero_weight_first=True``) and the tests pin
  both behaviours on weight 0.
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import INF

from ...core.registry import OrderSpec, Setting, register
from ...core.z3spec import Z3Spec
from ..java_go import go_int_div

__all__ = ["COMMIT", "PRE_6617", "PRE_10149", "PRE_4962", "MAX_INT64", "DRS", "dominant_resource_share",
           "compare_drs", "integer_drs", "milli_value", "CohortTree", "Policy", "POLICIES", "compare_users",
           "user_share", "queue_share", "queue_borrows", "served_order", "kueue_drs_fast", "kueue_drs_reference",
           "nominee_requests"]

COMMIT = "ff69552e79ad21652c36caa97038382e55625cf7"
#: the parent of PR 6617's merge (5106fb28c3): the integer DRS of issue 6577
PRE_6617 = "0b7ad55aaacf38892be32e3f33eb61bde28ae791"
#: the parent of PR 10149's merge (2a9f6f00ca): the ClusterQueue-level non-borrowing step of issue 10126
PRE_10149 = "66c2cf1a93ee3f19d8b29309d27832a4595d4106"
#: the parent of PR 4962's merge (887dddfe20): weight 0 before the borrowing check (issue 4961)
PRE_4962 = "070fa7d9b8ec7dec286dcedd5c1ae5773d5f2786"

UPSTREAM = (f"kubernetes-sigs/kueue @ {COMMIT}: pkg/cache/scheduler/fair_sharing.go (dominantResourceShare, "
            "calculateLendable, CompareDRS, roundedWeightedShare), pkg/cache/scheduler/resource_node.go, "
            "pkg/scheduler/fair_sharing_iterator.go (runTournament, entryComparer.less, computeDRS), "
            "pkg/scheduler/scheduler.go (schedule, processEntry)")

#: ``math.MaxInt64``: the status value of a weight-0 node that borrows
MAX_INT64 = 2 ** 63 - 1
_ZERO = Fraction(0)


# ---------------------------------------------------------------------- the DRS of one node (numbers only)
def _div(a: Any, b: Any) -> Any:
    """``a / b`` exactly (``Fraction``) unless a float is involved."""
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    return Fraction(a) / Fraction(b)


@dataclass(frozen=True)
class DRS:
    """A node's dominant resource share (upstream's ``DRS``): ``ratio`` is the unweighted
    ``max borrowed_r x 1000 / lendable_r`` (exact), ``resource`` its resource name ("" if none),
    ``borrowing`` whether usage exceeds the subtree quota on some resource, ``borrowed`` those resources'
    indices."""

    weight: Any
    ratio: Any
    resource: str = ""
    borrowing: bool = False
    borrowed: tuple[int, ...] = ()

    @property
    def is_zero(self) -> bool:
        return self.ratio == 0

    @property
    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and not self.is_zero

    def precise(self) -> Any:
        """``PreciseWeightedShare``: 0 if the ratio is 0, ``INF`` for weight 0, else ``ratio / weight``."""
        if self.is_zero:
            return _ZERO
        if self.weight == 0:
            return INF
        return _div(self.ratio, self.weight)

    def rounded(self) -> tuple[int, str]:
        """``roundedWeightedShare`` (the status value): MaxInt64 for a weight-0 node that borrows, else the
        ceiling of the weighted share; with the dominant resource."""
        if self.zero_weight_borrows:
            return MAX_INT64, self.resource
        v = self.precise()
        if isinstance(v, float) and not math.isfinite(v):  # only a float state can get here (NaN, inf)
            return (MAX_INT64 if v > 0 else 0), self.resource
        return int(math.ceil(v)), self.resource

    def key(self) -> tuple:
        """A sort key that orders like ``CompareDRS``: weight-0 borrowers last, among them by unweighted ratio;
        the others by weighted share."""
        return (1, self.ratio) if self.zero_weight_borrows else (0, self.precise())

    def borrowing_on(self, requested: Sequence[Any]) -> bool:
        """``IsBorrowingOn``: borrowing on a resource ``r`` with ``requested[r] > 0``."""
        return any(requested[r] > 0 for r in self.borrowed)


def dominant_resource_share(names: Sequence[str], usage: Sequence[Any], quota: Sequence[Any],
                            lendable: Sequence[Any], weight: Any = 1, request: Optional[Sequence[Any]] = None,
                            has_parent: bool = True) -> DRS:
    """Upstream's ``dominantResourceShare`` for one node: ``usage`` and ``quota`` (its subtree quota) per
    resource, ``lendable`` (what its parent can lend, per resource), its fair-sharing ``weight`` and the
    ``request`` being simulated (module docstring)."""
    if not has_parent:
        return DRS(weight, _ZERO)
    borrowed: list[tuple[int, Any]] = []
    for r in range(len(names)):
        b = usage[r] + (request[r] if request is not None else 0) - quota[r]
        if b > 0:
            borrowed.append((r, b))
    if not borrowed:
        return DRS(weight, _ZERO)
    ratio: Any = _ZERO
    res = ""
    for r, b in borrowed:
        lr = lendable[r]
        if lr > 0:
            v = _div(b * 1000, lr)
            if v > ratio or (v == ratio and names[r] < res):
                ratio, res = v, names[r]
    return DRS(weight, ratio, res, True, tuple(r for r, _ in borrowed))


def compare_drs(a: DRS, b: DRS) -> int:
    """``CompareDRS``: < 0 when ``a`` is preferred for scheduling."""
    ka, kb = a.key(), b.key()
    return -1 if ka < kb else (1 if ka > kb else 0)


def milli_value(w: Any) -> int:
    """``resource.Quantity.MilliValue()``: ``ceil(1000 w)``."""
    if isinstance(w, float):
        return int(math.ceil(w * 1000))
    return -((-Fraction(w) * 1000) // 1)


def _floor_ratio(b: Any, lr: Any) -> int:
    """``b * 1000 / lr`` in int64 division for ``b, lr > 0`` (the exact quotient, floored)."""
    v = _div(b * 1000, lr)
    return int(math.floor(v))


def integer_drs(names: Sequence[str], usage: Sequence[Any], quota: Sequence[Any], lendable: Sequence[Any],
                weight: Any = 1, request: Optional[Sequence[Any]] = None, has_parent: bool = True,
                zero_weight_first: bool = False) -> tuple[int, str]:
    """The integer DRS before PR 6617 (``pkg/cache/fair_sharing.go`` @ :data:`PRE_6617`; module docstring):
    ``(value, dominant resource)``.  ``zero_weight_first=True``: the version before PR 4962 (@ :data:`PRE_4962`),
    where weight 0 gives MaxInt64 before the borrowing check (issue 4961).  Our amounts stand for upstream's
    int64 quantities; a fractional amount enters the integer division as its exact quotient, floored."""
    if not has_parent:
        return 0, ""
    if zero_weight_first and weight == 0:
        return MAX_INT64, ""
    borrowed = []
    for r in range(len(names)):
        b = usage[r] + (request[r] if request is not None else 0) - quota[r]
        if b > 0:
            borrowed.append((r, b))
    if not borrowed:
        return 0, ""
    drs, res = -1, ""
    for r, b in borrowed:
        lr = lendable[r]
        if lr > 0:
            v = _floor_ratio(b, lr)
            if v > drs or (v == drs and names[r] < res):
                drs, res = v, names[r]
    if weight == 0:
        return MAX_INT64, res
    return go_int_div(drs * 1000, milli_value(weight)), res


# ---------------------------------------------------------------------- our model as a cohort tree
class CohortTree:
    """The cohort tree of an environment (module docstring): node 0 is the root cohort; ``kind[n]`` is
    ``"cohort"`` or ``"cq"``; ``quota`` its own quota, ``subtree`` its subtree quota, ``weight``, ``parent``,
    ``children``, ``depth``; ``queue_node[q]`` the node of queue ``q``; ``user_cq[j]`` user ``j``'s
    ClusterQueue; ``members[n]`` the users of ClusterQueue ``n`` in declaration order; ``lendable`` the root's
    subtree quota."""

    def __init__(self, env: Environment) -> None:
        R, Q, J = env.n_resources, env.n_queues, env.n_users
        zeros = tuple(_ZERO for _ in range(R))
        self.names: list[str] = [""]
        self.kind: list[str] = ["cohort"]
        self.parent: list[Optional[int]] = [None]
        self.children: list[list[int]] = [[]]
        self.quota: list[tuple] = [zeros]
        self.weight: list[Any] = [Fraction(1)]
        self.depth: list[int] = [0]
        self.queue: list[Optional[int]] = [None]
        qparent = [env.queue_parent(q) for q in range(Q)]
        has_child = [False] * Q
        for q in range(Q):
            if qparent[q] is not None:
                has_child[qparent[q]] = True
        users_in: dict[Optional[int], list[int]] = {}
        for j in range(J):
            users_in.setdefault(env.user_queue[j], []).append(j)

        def add(name: str, kind: str, parent: int, quota: tuple, weight: Any, queue: Optional[int]) -> int:
            n = len(self.names)
            self.names.append(name)
            self.kind.append(kind)
            self.parent.append(parent)
            self.children.append([])
            self.children[parent].append(n)
            self.quota.append(quota)
            self.weight.append(weight)
            self.depth.append(self.depth[parent] + 1)
            self.queue.append(queue)
            return n

        self.queue_node: list[int] = [0] * Q
        for q in sorted(range(Q), key=lambda q: env.queue_depth(q)):  # parents first, declaration order kept
            p = 0 if qparent[q] is None else self.queue_node[qparent[q]]
            g = env.queue_guarantee[q]
            self.queue_node[q] = add(env.queues[q], "cohort" if has_child[q] else "cq", p,
                                     zeros if g is None else tuple(g), env.queue_weight[q], q)
        self.user_cq: list[int] = [0] * J
        self.members: dict[int, list[int]] = {}
        for q, js in users_in.items():
            if q is None:
                cq = add(".", "cq", 0, zeros, Fraction(1), None)
            elif has_child[q]:
                cq = add(env.queues[q] + "/.", "cq", self.queue_node[q], zeros, Fraction(1), None)
            else:
                cq = self.queue_node[q]
            self.members[cq] = list(js)
            for j in js:
                self.user_cq[j] = cq
        N = len(self.names)
        sub = [list(self.quota[n]) for n in range(N)]
        for n in sorted(range(1, N), key=lambda n: -self.depth[n]):  # children before parents
            p = self.parent[n]
            if p != 0:
                sub[p] = [a + b for a, b in zip(sub[p], sub[n])]
        below_root = [sum((sub[c][r] for c in self.children[0]), _ZERO) for r in range(R)]
        cap = env.capacity[0] if env.n_servers else zeros
        self.quota[0] = tuple(max(_ZERO, cap[r] - below_root[r]) for r in range(R))
        sub[0] = [self.quota[0][r] + below_root[r] for r in range(R)]
        self.subtree: list[tuple] = [tuple(v) for v in sub]
        self.lendable: tuple = self.subtree[0]
        self.resources: tuple[str, ...] = tuple(env.resources)
        self.n_nodes = N

    def path(self, n: int) -> list[int]:
        """``n`` and its ancestors below the root (``n`` first)."""
        out = []
        while n != 0:
            out.append(n)
            n = self.parent[n]  # type: ignore[assignment]
        return out

    def below_lca(self, a: int, b: int) -> tuple[int, int]:
        """The two children of the lowest common ancestor of distinct nodes ``a`` and ``b`` that contain them
        (``a``'s first)."""
        da, db = self.depth[a], self.depth[b]
        pa, pb = None, None
        while da > db:
            pa, a, da = a, self.parent[a], da - 1  # type: ignore[assignment]
        while db > da:
            pb, b, db = b, self.parent[b], db - 1  # type: ignore[assignment]
        while a != b:
            pa, pb = a, b
            a, b = self.parent[a], self.parent[b]  # type: ignore[assignment]
        if pa is None or pb is None:  # one node is an ancestor of the other: not between two ClusterQueues
            raise ValueError("below_lca: one node contains the other")
        return pa, pb


def _tree(env: Environment) -> CohortTree:
    memo = getattr(env, "_memo", None)
    if memo is None:
        return CohortTree(env)
    t = memo.get("kueue-drs.tree")
    if t is None:
        t = memo["kueue-drs.tree"] = CohortTree(env)
    return t


def _requests(env: Environment) -> list[tuple]:
    """Each user's workload: ``floor(n_j) x d_j`` (unbounded, outside the setting: one pod)."""
    out = []
    for j in range(env.n_users):
        n = env.tasks[j]
        k = 1 if n is None else math.floor(n)
        out.append(tuple(k * v for v in env.demand[j]))
    return out


def nominee_requests(tree: CohortTree, requests: Sequence[Sequence[Any]]) -> list[tuple]:
    """The request each workload enters the tournament with (``computeDRS`` simulates the head's ASSIGNMENT
    usage, ``entry.assignmentUsage``): its workload, or nothing when it is NoFit -- a request above the root's
    subtree quota (``potentialAvailable``) on some resource gets no flavour (``flavorassigner.go``
    ``fitsResourceQuota``, ``findFlavorForPodSets``), so it enters with its node's usage as it is, not
    borrowing."""
    zero = tuple(_ZERO for _ in tree.lendable)
    return [zero if any(v > tree.lendable[r] for r, v in enumerate(req)) else tuple(req) for req in requests]


class _View:
    """A state on the tree: every node's usage and every user's request as a nominee."""

    def __init__(self, state: Allocation) -> None:
        env = state.env
        self.tree = tree = _tree(env)
        R = env.n_resources
        self.usage: list[list[Any]] = [[_ZERO] * R for _ in range(tree.n_nodes)]
        for j in range(env.n_users):
            row = state.x[j]
            amounts = [_ZERO] * R
            held = False
            for s in range(len(row)):
                t = row[s]
                if t:
                    held = True
                    dv = env.d(j, s)
                    for r in range(R):
                        amounts[r] = amounts[r] + t * dv[r]
            if not held:
                continue
            n: Optional[int] = tree.user_cq[j]
            while n is not None:
                u = self.usage[n]
                for r in range(R):
                    u[r] = u[r] + amounts[r]
                n = tree.parent[n]
        self.request = nominee_requests(tree, _requests(env))
        self.keys: dict = {}  # (policy, node, user) -> tournament key (a sort asks for each many times)

    def key(self, policy: "Policy", n: int, j: int) -> tuple:
        k = self.keys.get((policy, n, j))
        if k is None:
            k = self.keys[(policy, n, j)] = policy.key(self.tree, self.usage, self.request, n, j)
        return k


_VIEWS: list[tuple[Allocation, _View]] = []  # a few recent states (identity-checked): sorting calls compare often


def _view(state: Allocation) -> _View:
    for st, v in _VIEWS:
        if st is state:
            return v
    v = _View(state)
    _VIEWS.insert(0, (state, v))
    del _VIEWS[4:]
    return v


# ---------------------------------------------------------------------- the policies
@dataclass(frozen=True)
class Policy:
    """A version of the comparison: ``integer`` -- the DRS of :func:`integer_drs` (before PR 6617) instead of
    the exact one; ``borrow_check`` -- step (1) of ``less``: ``"level"`` (PR 10149: borrowing at the compared
    node on a requested resource), ``"clusterqueue"`` (before PR 10149: the workload does not fit its
    ClusterQueue's own quota), ``None`` (no such step: before PR 9484)."""

    name: str
    integer: bool = False
    borrow_check: Optional[str] = "level"

    def drs(self, tree: CohortTree, n: int, usage: Sequence[Any], request: Optional[Sequence[Any]] = None) -> Any:
        """The node's DRS object (:class:`DRS`) or integer value."""
        if self.integer:
            return integer_drs(tree.resources, usage, tree.subtree[n], tree.lendable, tree.weight[n], request,
                               n != 0)[0]
        return dominant_resource_share(tree.resources, usage, tree.subtree[n], tree.lendable, tree.weight[n],
                                       request, n != 0)

    def value(self, d: Any) -> Any:
        """The share a DRS stands for (exact weighted share, or the integer)."""
        return d if self.integer else d.precise()

    def key(self, tree: CohortTree, usage: Sequence[Sequence[Any]], requests: Sequence[Sequence[Any]], n: int,
            j: int) -> tuple:
        """The tournament key of user ``j``'s workload at node ``n`` (on ``j``'s path) when the nodes hold
        ``usage``: (borrowing step, DRS, FIFO) -- smaller wins."""
        req = requests[j]
        d = self.drs(tree, n, usage[n], req)
        if self.borrow_check == "level":  # IsBorrowingOn: the node, with the workload, borrows on what it requests
            u, g = usage[n], tree.subtree[n]
            bit = any(req[r] > 0 and u[r] + req[r] > g[r] for r in range(len(req)))
        elif self.borrow_check == "clusterqueue":  # RequiresBorrowing: the workload does not fit its CQ's quota
            cq = tree.user_cq[j]
            u, g = usage[cq], tree.subtree[cq]
            bit = any(req[r] > 0 and u[r] + req[r] > g[r] for r in range(len(req)))
        else:
            bit = False
        return (bit, d if self.integer else d.key(), j)


POLICIES = {
    "kueue-drs": Policy("kueue-drs"),
    "kueue-drs@6577": Policy("kueue-drs@6577", integer=True, borrow_check=None),
    "kueue-drs@10126": Policy("kueue-drs@10126", borrow_check="clusterqueue"),
}


def _policy(p: Policy | str) -> Policy:
    return POLICIES[p] if isinstance(p, str) else p


def compare_users(policy: Policy | str, state: Allocation, i: int, j: int) -> int:
    """< 0: user ``i``'s workload goes before ``j``'s (module docstring, "The ORDER in a state")."""
    if i == j:
        return 0
    pol, v = _policy(policy), _view(state)
    tree = v.tree
    ci, cj = tree.user_cq[i], tree.user_cq[j]
    if ci == cj:
        return -1 if i < j else 1
    a, b = tree.below_lca(ci, cj)
    ka, kb = v.key(pol, a, i), v.key(pol, b, j)
    return -1 if ka < kb else (1 if ka > kb else 0)


def user_share(policy: Policy | str, state: Allocation, j: int) -> Any:
    """The weighted DRS of user ``j``'s ClusterQueue after admitting ``j``'s workload."""
    pol, v = _policy(policy), _view(state)
    cq = v.tree.user_cq[j]
    return pol.value(pol.drs(v.tree, cq, v.usage[cq], v.request[j]))


def queue_share(policy: Policy | str, state: Allocation, q: int) -> Any:
    """The weighted DRS of queue ``q``'s node in the state (no request)."""
    pol, v = _policy(policy), _view(state)
    n = v.tree.queue_node[q]
    return pol.value(pol.drs(v.tree, n, v.usage[n]))


def queue_borrows(state: Allocation, q: int) -> bool:
    """Queue ``q``'s node uses more than its subtree quota on some resource (Kueue's "borrowing")."""
    v = _view(state)
    n = v.tree.queue_node[q]
    return any(u > g for u, g in zip(v.usage[n], v.tree.subtree[n]))


def _order_spec(policy: Policy) -> OrderSpec:
    return OrderSpec(compare=lambda st, i, j: compare_users(policy, st, i, j),
                     share=lambda st, j: user_share(policy, st, j),
                     queue_share=lambda st, q: queue_share(policy, st, q),
                     # the non-borrowing step promises quota first (PR 9484 on; before it, no such step)
                     request=(lambda st, j: tuple(_view(st).request[j])) if policy.borrow_check else None)


# ---------------------------------------------------------------------- the tournament
class _Tournament:
    """One admission cycle's fair-sharing iterator: every Cohort keeps a heap of its children's nominees keyed
    at that child (stale entries are skipped by version), so a pop and an admission re-key only one path."""

    def __init__(self, tree: CohortTree, policy: Policy, usage: list, requests: list, heads: dict[int, int]):
        self.tree, self.policy, self.usage, self.requests = tree, policy, usage, requests
        N = tree.n_nodes
        self.entry: list[Optional[int]] = [None] * N
        self.version = [0] * N
        self.heap: list[list] = [[] for _ in range(N)]
        for cq, j in heads.items():
            self.entry[cq] = j
        for n in sorted(range(N), key=lambda n: -tree.depth[n]):  # children before parents
            if tree.kind[n] == "cohort":
                h = self.heap[n]
                for c in tree.children[n]:
                    if self.entry[c] is not None:
                        h.append((self._key(c), c, self.version[c]))
                heapq.heapify(h)
                self._settle(n)

    def _key(self, c: int) -> tuple:
        return self.policy.key(self.tree, self.usage, self.requests, c, self.entry[c])  # type: ignore[arg-type]

    def _settle(self, n: int) -> None:
        h = self.heap[n]
        while h and (h[0][2] != self.version[h[0][1]] or self.entry[h[0][1]] is None):
            heapq.heappop(h)
        self.entry[n] = self.entry[h[0][1]] if h else None

    def winner(self) -> Optional[int]:
        return self.entry[0]

    def remove(self, cq: int) -> None:
        """``cq``'s nominee is gone (admitted or set aside); the usage on its path may have changed."""
        tree = self.tree
        self.entry[cq] = None
        n = cq
        while n != 0:
            p = tree.parent[n]
            self.version[n] += 1
            if self.entry[n] is not None:
                heapq.heappush(self.heap[p], (self._key(n), n, self.version[n]))  # type: ignore[index]
            self._settle(p)  # type: ignore[arg-type]
            n = p  # type: ignore[assignment]


def _cycles(env: Environment, policy: Policy, usage: list, admit: bool,
            tournament: Callable[..., Any]) -> tuple[list[int], list[int], int]:
    """Run admission cycles (module docstring) on node ``usage`` (changed in place when ``admit``): returns the
    users in the order popped, the admitted users, the number of cycles."""
    tree = _tree(env)
    R = env.n_resources
    cap = env.capacity[0]
    requests = _requests(env)
    nominees = nominee_requests(tree, requests)
    total = list(usage[0])
    queues = {cq: deque(js) for cq, js in tree.members.items()}
    popped: list[int] = []
    admitted: list[int] = []
    cycles = 0
    while True:
        heads = {cq: dq.popleft() for cq, dq in queues.items() if dq}
        if not heads:
            break
        cycles += 1
        t = tournament(tree, policy, usage, nominees, heads)
        while True:
            j = t.winner()
            if j is None:
                break
            popped.append(j)
            cq = tree.user_cq[j]
            req = requests[j]
            if admit and all(total[r] + req[r] <= cap[r] for r in range(R)):
                admitted.append(j)
                for r in range(R):
                    total[r] += req[r]
                n: Optional[int] = cq
                while n is not None:
                    for r in range(R):
                        usage[n][r] += req[r]
                    n = tree.parent[n]
            t.remove(cq)
    return popped, admitted, cycles


def _result(env: Environment, policy: Policy, admitted: list[int], cycles: int) -> Allocation:
    ok = set(admitted)
    x = tuple((Fraction(math.floor(env.tasks[j])) if j in ok and env.tasks[j] is not None else _ZERO,)
              for j in range(env.n_users))
    return Allocation(env, x, policy.name, True, info={"admitted": [env.users[j] for j in admitted],
                                                       "cycles": cycles})


def kueue_drs_fast(env: Environment, policy: Policy | str = "kueue-drs") -> Allocation:
    """The admission cycles with per-Cohort heaps (module docstring)."""
    pol = _policy(policy)
    tree = _tree(env)
    usage = [[_ZERO] * env.n_resources for _ in range(tree.n_nodes)]
    _, admitted, cycles = _cycles(env, pol, usage, True, _Tournament)
    return _result(env, pol, admitted, cycles)


class _LiteralTournament:
    """The same cycle as upstream writes it: at every pop, ``computeDRS`` for every remaining head (its
    ClusterQueue's and every ancestor's DRS after simulating its admission, keyed by the parent), then the
    recursive ``runTournament`` with ``less``.  The ClusterQueue-level step of the version before PR 10149 is
    taken from the nomination at the start of the cycle (``assignment.RequiresBorrowing``)."""

    def __init__(self, tree: CohortTree, policy: Policy, usage: list, requests: list, heads: dict[int, int]):
        self.tree, self.policy, self.usage, self.requests = tree, policy, usage, requests
        self.heads = dict(heads)
        self.nominated = {}
        for cq, j in heads.items():  # the nomination's RequiresBorrowing (ClusterQueue quota only)
            req = requests[j]
            self.nominated[j] = any(req[r] > 0 and usage[cq][r] + req[r] > tree.subtree[cq][r]
                                    for r in range(len(req)))

    def _compute(self) -> dict:
        tree, pol = self.tree, self.policy
        values: dict = {}
        for cq, j in self.heads.items():
            req = self.requests[j]
            sim = {n: [u + q for u, q in zip(self.usage[n], req)] for n in tree.path(cq)}
            for n in tree.path(cq):
                d = pol.drs(tree, n, sim[n])
                if pol.borrow_check == "level":
                    full = dominant_resource_share(tree.resources, sim[n], tree.subtree[n], tree.lendable, 1)
                    bit = full.borrowing_on(req)
                elif pol.borrow_check == "clusterqueue":
                    bit = self.nominated[j]
                else:
                    bit = False
                values[(tree.parent[n], j)] = (bit, d if pol.integer else d.key())
        return values

    def _less(self, values: dict, a: int, b: int, cohort: int) -> bool:
        ka, kb = values[(cohort, a)], values[(cohort, b)]
        if ka[0] != kb[0]:
            return not ka[0]
        if ka[1] != kb[1]:
            return ka[1] < kb[1]
        return a < b  # priority: all equal; FIFO: declaration order

    def _run(self, values: dict, cohort: int) -> Optional[int]:
        cands = []
        for c in self.tree.children[cohort]:
            if self.tree.kind[c] == "cohort":
                w = self._run(values, c)
                if w is not None:
                    cands.append(w)
            elif c in self.heads:
                cands.append(self.heads[c])
        if not cands:
            return None
        best = cands[0]
        for cur in cands[1:]:
            if self._less(values, cur, best, cohort):
                best = cur
        return best

    def winner(self) -> Optional[int]:
        if not self.heads:
            return None
        return self._run(self._compute(), 0)

    def remove(self, cq: int) -> None:
        del self.heads[cq]


def kueue_drs_reference(env: Environment, policy: Policy | str = "kueue-drs") -> Allocation:
    """The admission cycles recomputed literally at every pop (:class:`_LiteralTournament`); slow, for tests."""
    pol = _policy(policy)
    tree = _tree(env)
    usage = [[_ZERO] * env.n_resources for _ in range(tree.n_nodes)]
    _, admitted, cycles = _cycles(env, pol, usage, True, _LiteralTournament)
    return _result(env, pol, admitted, cycles)


def served_order(policy: Policy | str, state: Allocation) -> list[int]:
    """The users in the order the fair-sharing iterator pops them, cycle after cycle, when nothing is admitted
    (the state's usage stays): the heads of one cycle in tournament order, then the next heads, ..."""
    pol, v = _policy(policy), _view(state)
    usage = [list(u) for u in v.usage]
    return _cycles(state.env, pol, usage, False, _Tournament)[0]


# ---------------------------------------------------------------------- registration
_SETTING = Setting(single_server=True, placement=False, external=False, bounds=True, weights=False,
                   divisible=False, requires_bounds=True, hierarchy=True)

_MAPPING = ("leaf queues are ClusterQueues, inner queues Cohorts, the root the root cohort whose own quota is the "
            "pool not guaranteed below it (max(0, c - sum of guarantees below)); a queue's guarantee is its own "
            "nominal quota (none: 0); users are whole workloads of floor(n_j) pods (an inner queue's users in an "
            "implicit ClusterQueue '<queue>/.', the root's in '.', quota 0, weight 1); FIFO = declaration order, "
            "equal priorities; no lending/borrowing limits, no preemption (upstream defaults); a popped workload "
            "that does not fit the pool is set aside for good; exact ratios (upstream: float64); the state's "
            "usage is not read by allocate; order: users compared as nominees (request = whole workload) at "
            "their lowest common Cohort (not transitive across levels: served_order gives the cycles' order)")
_NO_Z3 = Z3Spec.none("whole workloads admitted by a tournament on a queue tree: not encoded")


@register("kueue-drs", "Kueue fair sharing: admission cycles of ClusterQueue heads by a tournament up the cohort "
          "tree on the dominant resource share (borrowed x 1000 / lendable, / weight) after admission; whole "
          "workloads", _SETTING, (), source=UPSTREAM,
          notes="port of the semantics (our code); " + _MAPPING + "; no claims (upstream states none)",
          z3=_NO_Z3, order=_order_spec(POLICIES["kueue-drs"]))
def kueue_drs(env: Environment, exact: bool = False) -> Allocation:
    """Kueue's fair-sharing admission (module docstring)."""
    return kueue_drs_fast(env, "kueue-drs")


@register("kueue-drs@6577", "Kueue fair sharing before PR 6617 (issue 6577): the integer DRS, which is 0 for a "
          "borrowing queue when 1000 x borrowed < lendable or DRS < weight", _SETTING, (),
          source=("kubernetes-sigs/kueue issue 6577, fixed by PR 6617 (5106fb28c399ad05de55ca313db0238caa060c3a) "
                  "and PR 6925 (efc4a1bc10eacdd8a86129ccae34eadf3dd75424); the DRS of pkg/cache/fair_sharing.go "
                  f"and the tournament of pkg/scheduler/fair_sharing_iterator.go @ {PRE_6617} (the parent of 6617)"),
          notes=("the historic version: ratio = borrowed x 1000 / lendable and DRS x 1000 / MilliValue(weight) in "
                 "int64 division (truncated), -1 when no borrowed resource is lendable; the tournament compares "
                 "those integers, then FIFO (no non-borrowing step); otherwise as kueue-drs: " + _MAPPING),
          z3=_NO_Z3, order=_order_spec(POLICIES["kueue-drs@6577"]))
def kueue_drs_6577(env: Environment, exact: bool = False) -> Allocation:
    """Kueue's fair-sharing admission with the integer DRS of issue 6577 (module docstring)."""
    return kueue_drs_fast(env, "kueue-drs@6577")


@register("kueue-drs@10126", "Kueue fair sharing before PR 10149 (issue 10126): the non-borrowing step of the "
          "tournament asks whether the workload fits its ClusterQueue's own quota, at every level", _SETTING, (),
          source=("kubernetes-sigs/kueue issue 10126, fixed by PR 10149 (2a9f6f00cae15104197f2c4a5e592f755c188799); "
                  f"pkg/scheduler/fair_sharing_iterator.go @ {PRE_10149} (the parent of 10149): entryComparer.less "
                  "step 1 = assignment.RequiresBorrowing()"),
          notes=("the historic version: step (1) of the comparison is the ClusterQueue-level 'requires borrowing' "
                 "of the nominee at every Cohort, not the compared subtree's borrowing (issue 4961, weight-0 "
                 "cohorts, is not registered: our queue weights are > 0); otherwise as kueue-drs: " + _MAPPING),
          z3=_NO_Z3, order=_order_spec(POLICIES["kueue-drs@10126"]))
def kueue_drs_10126(env: Environment, exact: bool = False) -> Allocation:
    """Kueue's fair-sharing admission with the ClusterQueue-level non-borrowing step of issue 10126."""
    return kueue_drs_fast(env, "kueue-drs@10126")
