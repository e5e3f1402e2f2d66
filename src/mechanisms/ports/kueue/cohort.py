"""Our queue tree as Kueue's cohort tree (:class:`CohortTree`), the workloads' requests as nominees, and the
versions of the tournament's comparison (:class:`Policy`).

Source (read, not copied; our code follows the semantics): kubernetes-sigs/kueue @
ff69552e79ad21652c36caa97038382e55625cf7 (``mechanisms.ports.kueue.port.COMMIT``),
``pkg/cache/scheduler/resource_node.go``: ``SubtreeQuota``, ``Usage``, ``localQuota``, ``potentialAvailable``,
``accumulateFromChild``, ``addUsage``; ``clusterqueue_snapshot.go``: ``SimulateUsageAddition``, ``Fits``;
``pkg/scheduler/fair_sharing_iterator.go``: ``entryComparer.less``, ``computeDRS``;
``pkg/scheduler/flavorassigner/flavorassigner.go``: ``fitsResourceQuota``, ``findFlavorForPodSets``.

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

The comparison (:meth:`Policy.key`) is step (1)-(4) of ``entryComparer.less`` (:mod:`mechanisms.ports.kueue.tournament`,
"The tournament"); its versions are the port's switches (:data:`mechanisms.ports.kueue.port.PORT`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.model import Environment

from .drs import dominant_resource_share, integer_drs

__all__ = ["CohortTree", "tree_of", "requests_of", "nominee_requests", "Policy"]

_ZERO = Fraction(0)


# ---------------------------------------------------------------------- our model as a cohort tree
class CohortTree:
    """The cohort tree of an environment (module docstring): node 0 is the root cohort; ``kind[n]`` is
    ``"cohort"`` or ``"cq"``; ``quota`` its own quota, ``subtree`` its subtree quota, ``weight``, ``parent``,
    ``children``, ``depth``; ``queue_node[q]`` the node of queue ``q``; ``user_cq[j]`` user ``j``'s
    ClusterQueue; ``members[n]`` the users of ClusterQueue ``n`` in declaration order; ``lendable`` the root's
    subtree quota; ``place_cq`` the ClusterQueue of each place a user sits in (a queue index, ``None``: the
    root).  ``every_place``: every inner queue's implicit ClusterQueue and the root's are made whether or not a
    user sits there (a tree that stays the same while users come and go: :mod:`mechanisms.ports.kueue.timeshare`;
    an empty ClusterQueue holds nothing and changes no share)."""

    def __init__(self, env: Environment, every_place: bool = False) -> None:
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
        self.place_cq: dict[Optional[int], int] = {q: self.queue_node[q] for q in range(Q) if not has_child[q]}
        places: list = list(users_in)
        if every_place:  # a fixed order: the root's, the inner queues', then the leaves with users
            fixed = [None] + [q for q in range(Q) if has_child[q]]
            places = fixed + [q for q in places if q not in fixed]
        for q in places:
            js = users_in.get(q, [])
            if q is None:
                cq = add(".", "cq", 0, zeros, Fraction(1), None)
            elif has_child[q]:
                cq = add(env.queues[q] + "/.", "cq", self.queue_node[q], zeros, Fraction(1), None)
            else:
                cq = self.queue_node[q]
            self.members[cq] = list(js)
            self.place_cq[q] = cq
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
        #: a node's cap on its subtree's usage: the queue's declared max (upstream: nominalQuota + borrowingLimit,
        #: the subtree's quota plus what it may borrow; lendingLimit is not representable); ``None``: no limit
        self.limit: list[Optional[tuple]] = [None if q is None else env.queue_max[q] for q in self.queue]
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


def tree_of(env: Environment) -> CohortTree:
    """The cohort tree of ``env`` (kept with the environment)."""
    memo = getattr(env, "_memo", None)
    if memo is None:
        return CohortTree(env)
    t = memo.get("kueue-drs.tree")
    if t is None:
        t = memo["kueue-drs.tree"] = CohortTree(env)
    return t


def requests_of(env: Environment) -> list[tuple]:
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


# ---------------------------------------------------------------------- the policies
@dataclass(frozen=True)
class Policy:
    """A version of the comparison: ``integer`` -- the DRS of :func:`integer_drs` (before PR 6617) instead of
    the exact one; ``borrow_check`` -- step (1) of ``less``: ``"level"`` (PR 10149: borrowing at the compared
    node on a requested resource), ``"clusterqueue"`` (before PR 10149: the workload does not fit its
    ClusterQueue's own quota), ``None`` (no such step: before PR 9484)."""

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
