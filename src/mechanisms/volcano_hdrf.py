"""``volcano-hdrf``: Volcano's hierarchical DRF (the ``drf`` plugin with ``enableHierarchy``) as a whole-task
mechanism on a queue tree.

Source (read, not copied; our code follows the semantics): volcano-sh/volcano @
ed72c7c815a9fd547a787134676f73d42e9d049c,

* ``pkg/scheduler/plugins/drf/drf.go``: ``buildHierarchy``, ``updateHierarchicalShare``,
  ``UpdateHierarchicalShare``, ``resourceSaturated``, ``compareQueues``, ``calculateShare``, the job order
  and the ``AllocateFunc`` event handler;
* ``pkg/scheduler/api/helpers/helpers.go``: ``Share`` (``l / r``; ``r = 0``: 1 if ``l > 0`` else 0);
* ``pkg/scheduler/actions/allocate/allocate.go``: ``allocateResources``, ``allocateResourcesForTasks``;
* ``docs/design/hdrf.md`` (the design; where it and the code differ we follow the code, see below).

The tree (``buildHierarchy``)
-----------------------------
The root, one node per queue that has a job in its subtree (a queue with no job is not in the tree, so it
neither takes part in comparisons nor keeps its parent from being saturated), and one LEAF per job (= our
user) of weight 1 under its queue's node (a user at our root: a job directly under the root).  A queue's
weight is ``max(w_q, 1)`` (upstream reads weights below 1 as 1); the root's weight is ignored.

Shares and saturation (``updateHierarchicalShare``, recomputed after every placed task)
--------------------------------------------------------------------------------------
* The DRF share of a vector ``a`` is ``max_r a_r / c_r`` over the resources with capacity ``c_r > 0``
  (``calculateShare`` iterates the cluster total's resource names, which leave out zero amounts, so
  ``Share``'s ``r = 0`` case never arises for a share; nothing can be allocated of such a resource anyway).
* A leaf's allocation is its tasks times its per-task demand; its share is the DRF share of that.  A leaf
  is SATURATED when, for some resource ``r`` it holds (allocated ``> 0``), it holds at least what it
  requests (upstream's request is the job's whole ``TotalRequest``: our task bound times the per-task
  demand, so: its task bound is reached; an unbounded user never is) or ``r`` is fully allocated
  cluster-wide (``r`` is not "demanding").  ``resourceSaturated`` loops over the resources the job HOLDS, so
  a job holding nothing is never saturated, even when it requests a fully allocated resource.
* An internal node: ``M`` = the least share among its non-empty (share ``!= 0``) non-saturated children
  (``M`` starts at 1; shares never exceed 1 here); its allocation is the sum over non-empty children of the
  child's allocation scaled by ``M / share`` (non-saturated children) or unscaled (saturated children); its
  share is the DRF share of that sum; it is saturated iff all its children (empty ones included) are.
  ``docs/design/hdrf.md`` also says an internal node's dominant share is taken "among the demanding
  resources"; the code takes it over all resources, and so do we.

The allocate loop (``allocateResources``) and the order
-------------------------------------------------------
Repeat: pop the least queue (``compareQueues``), pop its least job (the flat DRF share of the job,
``jobOrderFn``), place ONE whole task of it (``allocateResourcesForTasks`` stops as soon as the job is
ready; with ``minAvailable = 0`` that is after one task), push the job back and the queue back.  A job whose
next task does not fit (task bound reached, or the task does not fit in what is left) is not pushed back
(upstream pops its tasks one by one until none is left; the outcome is the same).  ``compareQueues`` walks
both queues' paths from the root down to the depth of the SHALLOWER one; at each level a non-saturated
node beats a saturated one, then the smaller ``share / weight`` wins; equal values go one level down.

Conventions where upstream leaves a choice open (stated in ``list``):

* Ties.  Where ``compareQueues`` returns 0, upstream passes the choice to the next plugin's queue order
  (``proportion``'s in upstream's own test, then creation time and UID).  We break such ties by (1) the
  shallower queue first, (2) the queue path, compared segment by segment, and between jobs of one queue
  with equal flat shares by (3) the user name.  Rule (1) is needed for a consistent order:
  ``compareQueues`` stops at the shallower queue's depth, so a queue always ties with its own sub-queues and
  with every queue whose ancestors tie with its own; the path alone would then be cyclic (queues ``m``,
  ``z/p``, ``a/q`` with ``m``, ``z``, ``a`` tied and ``p`` below ``q``: upstream ties ``m`` with both and puts
  ``z/p`` before ``a/q``, the path puts ``a/q`` before ``m`` before ``z/p``; see the tests).  The order we
  use is the lexicographic order of the key sequences ``((saturated, share / weight) for each node from the
  top level down)``, a proper prefix first, then the path -- it agrees with every comparison upstream
  decides.  Consequences: a user at the root (its queue has depth 0) ties upstream with every queue and is
  served first while it can take a task; a user in an inner queue is served before the users of that
  queue's sub-queues.  ``docs/design/hdrf.md`` forbids a queue holding both jobs and queues; our model allows
  it, and this is what the code does with it.
* One server (one resource pool), whole tasks, no placement constraints, no external resources, users of
  weight 1 (upstream's jobs are weight-1 leaves), task bounds allowed (``floor(n_j)`` tasks).
* The least queue is the least by the order above at the moment of the pop.  Upstream keeps its queues in
  a binary heap (``util.PriorityQueue`` over ``container/heap``) whose keys change under it: placing a task
  changes the shares of the job's ancestors, hence the keys of every queue below them, but only the popped
  queue is pushed back, so upstream's pop may return a queue that is no longer the least.  We pop the least.
* Exact arithmetic (``Fraction``): upstream compares ``float64`` shares with ``==``, so values that are
  equal exactly may differ there by rounding (e.g. after the ``M / share`` rescaling) and be ordered.

The order facet (``OrderSpec``)
-------------------------------
In a state (the current allocation: each job's task count) the tree is recomputed literally
(:func:`hdrf_tree`) and ``compare`` is :func:`compare_users` -- the comparator the literal mechanism
(:func:`volcano_hdrf_reference`) serves by, which the incremental loop equals; ``share`` is a job's flat DRF
share (what the job order compares) and ``queue_share`` a queue's rescaled hierarchical share divided by its
weight as upstream reads it (what ``compareQueues`` compares; 0 for a queue with no job below it, which is
not in the tree).  Saturation is part of the order, not of a share.

Speed
-----
Placing a task changes only the leaf and its ancestors.  Each internal node keeps the sum of its
saturated children's allocations, the sum of its non-saturated children's NORMALISED allocations
(allocation / share; a child's allocation scaled to ``M`` is ``M`` times it), the number of its
non-saturated children and a heap of those children's shares (for ``M``), so a node is recomputed in
``O(R + log fanout)`` from the one child that changed (with no saturated child its share is ``M`` times the
largest normalised sum, and its own normalised vector does not change with ``M``: cached).  The root's share
is never computed (``compareQueues`` starts below it).  The queue order is a tournament: each node keeps a
heap of its child queues keyed by (their key sequence down to the least queue below them, its path), so the
least queue is read at the root and a placement re-keys only the path.  Vectors are kept in share space
(amounts divided by capacities); jobs are ordered by integer keys (flat shares over one common
denominator).  A resource that becomes fully allocated can saturate any leaf holding it: then (at most once
per resource) the whole tree is rebuilt.  A task costs ``O(depth x (R + log fanout + depth))``, all exact
(``Fraction``); ``benchmarks/bench_volcano_hdrf.py`` measures it against :func:`volcano_hdrf_reference`, the
literal full recomputation after every task (10^4 tasks of 10^3 jobs in 110 queues: about 2 s).
"""
from __future__ import annotations

import heapq
import math
from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import MAX_TASKS, FillState, progressive_filling

from .order_state import per_state, view
from .registry import OrderSpec, Setting, register
from .z3spec import Z3Spec

__all__ = ["UPSTREAM", "TIE_BREAK", "HdrfNode", "hdrf_tree", "compare_queues", "compare_users", "ORDER",
           "volcano_hdrf", "volcano_hdrf_fast", "volcano_hdrf_reference"]

UPSTREAM = ("volcano-sh/volcano @ ed72c7c815a9fd547a787134676f73d42e9d049c, pkg/scheduler/plugins/drf/drf.go "
            "(+ pkg/scheduler/actions/allocate/allocate.go, pkg/scheduler/api/helpers/helpers.go)")

#: the convention for what upstream leaves to other plugins (module docstring, "Ties")
TIE_BREAK = ("ties of compareQueues (upstream: the next plugin's queue order): the shallower queue first, then "
             "the queue path segment by segment; ties of the job order: the user name")

_ZERO = Fraction(0)
_ONE = Fraction(1)


# ---------------------------------------------------------------------------------------- the tree
def _tree_nodes(env: Environment):
    """The internal nodes: ``(queue_of_node, node_of_queue, parent, node_of_user, depth)``; node 0 is the
    root (queue ``None``), then one node per queue with a user in its subtree, in declaration order."""
    Q = env.n_queues
    in_tree = [False] * Q
    for q in env.user_queue:
        while q is not None and not in_tree[q]:
            in_tree[q] = True
            q = env.queue_parent(q)
    queue_of: list[Optional[int]] = [None]
    node_of: dict[int, int] = {}
    for q in range(Q):
        if in_tree[q]:
            node_of[q] = len(queue_of)
            queue_of.append(q)
    parent = [-1] + [0 if env.queue_parent(q) is None else node_of[env.queue_parent(q)] for q in queue_of[1:]]
    depth = [0] + [env.queue_depth(q) for q in queue_of[1:]]
    user_node = [0 if q is None else node_of[q] for q in env.user_queue]
    return queue_of, node_of, parent, user_node, depth


def _segments(env: Environment, q: Optional[int]) -> tuple[str, ...]:
    return () if q is None else tuple(env.queues[q].split("/"))


def _weight(env: Environment, q: Optional[int]) -> Fraction:
    return _ONE if q is None else max(env.queue_weight[q], _ONE)  # weights < 1 read as 1; the root's: ignored


# ---------------------------------------------------------------------------------------- the reference
class HdrfNode:
    """One node of :func:`hdrf_tree`: ``queue`` (index, ``None`` for the root), ``path`` (segments),
    ``weight`` (as upstream reads it), ``alloc`` (per resource, real units), ``share``, ``saturated``."""

    __slots__ = ("queue", "path", "weight", "alloc", "share", "saturated")

    def __init__(self, queue, path, weight, alloc, share, saturated) -> None:
        self.queue, self.path, self.weight = queue, path, weight
        self.alloc, self.share, self.saturated = alloc, share, saturated

    def __repr__(self) -> str:
        return (f"HdrfNode({'/'.join(self.path) or 'root'}: share {self.share}, "
                f"{'saturated' if self.saturated else 'demanding'})")


def hdrf_tree(env: Environment, tasks: Sequence[int]) -> tuple[dict[Optional[int], HdrfNode], list[HdrfNode]]:
    """The literal recomputation of the whole tree for the whole-task counts ``tasks`` (what
    ``UpdateHierarchicalShare`` computes after every event): ``(nodes by queue index (None: the root),
    leaves by user)``, in real units.  Slow and plain: the reference for tests and the benchmark."""
    cap = env.capacity[0]
    R = env.n_resources
    used = [sum((tasks[j] * env.demand[j][r] for j in range(env.n_users)), _ZERO) for r in range(R)]
    demanding = [cap[r] > 0 and used[r] < cap[r] for r in range(R)]

    def share(vec):  # calculateShare over the total's resource names (amounts > 0)
        return max((vec[r] / cap[r] for r in range(R) if cap[r] > 0), default=_ZERO)

    leaves = []
    for j in range(env.n_users):
        alloc = tuple(tasks[j] * d for d in env.demand[j])
        bound = env.tasks[j]
        request = [None if bound is None else math.floor(bound) * d for d in env.demand[j]]  # None: unbounded
        sat = any(alloc[r] > 0 and ((request[r] is not None and alloc[r] >= request[r]) or not demanding[r])
                  for r in range(R))
        leaves.append(HdrfNode(env.user_queue[j], _segments(env, env.user_queue[j]), _ONE, alloc, share(alloc),
                               sat))
    queue_of, node_of, parent, user_node, depth = _tree_nodes(env)
    kids: list[list[HdrfNode]] = [[] for _ in queue_of]
    for j, n in enumerate(user_node):
        kids[n].append(leaves[j])
    nodes: dict[Optional[int], HdrfNode] = {}
    for n in sorted(range(len(queue_of)), key=lambda n: -depth[n]):  # children before parents
        m = _ONE
        for c in kids[n]:
            if c.share != 0 and not c.saturated and c.share < m:
                m = c.share
        alloc = [_ZERO] * R
        for c in kids[n]:
            if c.share != 0:
                f = _ONE if c.saturated else m / c.share
                for r in range(R):
                    alloc[r] += c.alloc[r] * f
        q = queue_of[n]
        node = HdrfNode(q, _segments(env, q), _weight(env, q), tuple(alloc), share(alloc),
                        all(c.saturated for c in kids[n]))
        nodes[q] = node
        if n:
            kids[parent[n]].append(node)
    return nodes, leaves


def compare_queues(nodes: dict[Optional[int], HdrfNode], env: Environment, lq: Optional[int],
                   rq: Optional[int]) -> int:
    """Upstream ``compareQueues`` on :func:`hdrf_tree`'s nodes: -1 (``lq`` first), 1, or 0 (a tie, passed
    to other plugins upstream).  Walks both paths from the root down to the shallower queue's depth."""
    lp, rp = (None,) + env.queue_path(lq), (None,) + env.queue_path(rq)
    for i in range(min(len(lp), len(rp))):
        ln, rn = nodes[lp[i]], nodes[rp[i]]
        if not ln.saturated and rn.saturated:
            return -1
        if ln.saturated and not rn.saturated:
            return 1
        lv, rv = ln.share / ln.weight, rn.share / rn.weight
        if lv != rv:
            return -1 if lv < rv else 1
    return 0


def volcano_hdrf_reference(env: Environment, *, max_tasks: int = MAX_TASKS) -> Allocation:
    """The same mechanism, literally: whole-task progressive filling (``mechverify.policies``, ``local=False``)
    where every step recomputes the whole tree (:func:`hdrf_tree`) and compares users by upstream's
    ``compareQueues`` of their queues, then :data:`TIE_BREAK`, then the flat share of the job, then the name.
    ``O(users x tree)`` per task: for tests and the benchmark baseline."""
    _SETTING.check(env, "volcano-hdrf")
    memo: dict[str, Any] = {"step": -1}

    def state(st: FillState):
        step = sum(st.tasks)
        if memo["step"] != step:
            memo["step"], memo["tree"] = step, hdrf_tree(env, st.tasks)
        return memo["tree"]

    def cmp(st: FillState, a: int, b: int) -> int:
        nodes, leaves = state(st)
        return compare_users(env, nodes, leaves, a, b)

    return progressive_filling(env, cmp=cmp, local=False, name="volcano-hdrf-reference", max_tasks=max_tasks)


def compare_users(env: Environment, nodes: dict[Optional[int], HdrfNode], leaves: Sequence[HdrfNode], a: int,
                  b: int) -> int:
    """The order of users ``a`` and ``b`` on :func:`hdrf_tree`'s nodes and leaves: upstream's ``compareQueues``
    of their queues, then :data:`TIE_BREAK` (the shallower queue, the queue path), then the job order (the flat
    share of the job), then the name.  -1: ``a`` first."""
    qa, qb = env.user_queue[a], env.user_queue[b]
    c = compare_queues(nodes, env, qa, qb)
    if c:
        return c
    da, db = env.queue_depth(qa), env.queue_depth(qb)
    if da != db:
        return -1 if da < db else 1
    pa, pb = _segments(env, qa), _segments(env, qb)
    if pa != pb:
        return -1 if pa < pb else 1
    sa, sb = leaves[a].share, leaves[b].share
    if sa != sb:
        return -1 if sa < sb else 1
    na, nb = env.users[a], env.users[b]
    return (na > nb) - (na < nb)


# ---------------------------------------------------------------------------------------- the order facet
@per_state
def _state_tree(state: Allocation):
    """:func:`hdrf_tree` for the state's task counts (one server: a user's tasks are its row's sum)."""
    return hdrf_tree(state.env, view(state).tasks)


def _order_compare(state: Allocation, a: int, b: int) -> int:
    nodes, leaves = _state_tree(state)
    return compare_users(state.env, nodes, leaves, a, b)


def _order_share(state: Allocation, j: int) -> Fraction:
    return _state_tree(state)[1][j].share


def _order_queue_share(state: Allocation, q: int) -> Fraction:
    node = _state_tree(state)[0].get(q)
    return _ZERO if node is None else node.share / node.weight  # a queue with no job is not in the tree


#: the order facet (module docstring, "The order facet")
ORDER = OrderSpec(_order_compare, _order_share, _order_queue_share)


# ---------------------------------------------------------------------------------------- the fast loop
class _Hdrf:
    """The incremental state (module docstring, "Speed").  Units: user ``j`` is unit ``j``, internal node
    ``n`` is unit ``J + n``.  Vectors are in share space (amount / capacity, resources with capacity > 0)."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        J = self.J = env.n_users
        cap = env.capacity[0]
        live = [r for r in range(env.n_resources) if cap[r] > 0]
        self.R = len(live)
        self.remaining = list(cap)
        self.full = [False] * env.n_resources
        self.limit = [None if b is None else math.floor(b) for b in env.tasks]
        self.need = [tuple((r, d) for r, d in enumerate(env.demand[j]) if d) for j in range(J)]
        self.e = [tuple(env.demand[j][r] / cap[r] for r in live) for j in range(J)]  # share per task, per resource
        self.s = [max(e, default=_ZERO) for e in self.e]  # flat share per task
        self.norm = [tuple(x / s for x in e) if s else None for e, s in zip(self.e, self.s)]
        scale = math.lcm(*(s.denominator for s in self.s))
        self.s_int = [int(s * scale) for s in self.s]  # the flat shares times one common denominator: int keys
        self.t = [0] * J
        queue_of, _, parent, user_node, depth = _tree_nodes(env)
        N = self.N = len(queue_of)
        self.parent, self.user_node = parent, user_node
        self.weight = [_weight(env, q) for q in queue_of]
        self.path = [_segments(env, q) for q in queue_of]
        self.bottom_up = sorted(range(N), key=lambda n: -depth[n])
        self.n_units = [0] * N  # children (units) of each node
        for n in user_node:
            self.n_units[n] += 1
        for n in range(1, N):
            self.n_units[parent[n]] += 1
        # the jobs of each node's own queue: (flat share, name, user)
        self.jheap: list[list] = [[] for _ in range(N)]
        for j in range(J):
            self.jheap[user_node[j]].append((0, env.users[j], j))
        for h in self.jheap:
            heapq.heapify(h)
        self.refreshes = 0
        self._rebuild()

    # -- leaves and nodes -------------------------------------------------------------------------
    def _leaf(self, j: int):
        """(non-empty, saturated, share, vector) of leaf ``j``: the allocation if saturated, else normalised."""
        t = self.t[j]
        if not t or not self.s[j]:
            return False, False, _ZERO, None
        lim = self.limit[j]
        sat = (lim is not None and t >= lim) or any(self.full[r] for r, _ in self.need[j])
        if sat:
            return True, True, t * self.s[j], tuple(t * x for x in self.e[j])
        return True, False, t * self.s[j], self.norm[j]

    def _node(self, n: int):
        """(non-empty, saturated, share, vector) of internal node ``n`` (not the root) from its aggregates."""
        h, mcur = self.mheap[n], self.mcur
        while h and mcur[h[0][1]] is not h[0]:
            heapq.heappop(h)
        sat = self.nunsat[n] == 0
        if h and not self.nsat[n]:
            # only non-saturated children: the allocation is M * snorm, so the share is M * max(snorm) and the
            # normalised vector snorm / max(snorm) does not depend on M (cached until snorm changes)
            if self.dirty[n]:
                snorm = self.snorm[n]
                ms = max(snorm)
                self.ms[n], self.nv[n], self.dirty[n] = ms, tuple(x / ms for x in snorm), False
            return True, False, h[0][0] * self.ms[n], self.nv[n]
        if h:
            m = h[0][0]  # M: the least share of a non-empty non-saturated child (<= 1, so upstream's start 1 is moot)
            a = [x + m * y for x, y in zip(self.ssat[n], self.snorm[n])]
        else:
            a = self.ssat[n]  # no such child: the normalised sum is exactly 0
        share = max(a, default=_ZERO)
        if not share:
            return False, sat, _ZERO, None
        if sat:
            return True, True, share, tuple(a)
        return True, False, share, tuple(x / share for x in a)

    def _apply(self, u: int, p: int, ne: bool, sat: bool, share: Fraction, vec) -> None:
        """Unit ``u`` (a child of node ``p``) now has these values: update ``p``'s aggregates (none for the
        root: its share is never compared, ``compareQueues`` starts below it)."""
        if p:
            one, osat, ovec = self.u_ne[u], self.u_sat[u], self.u_vec[u]
            if not (one and ne and not osat and not sat and (ovec is vec or ovec == vec)):
                if one:
                    if osat:
                        tgt = self.ssat[p]
                        self.nsat[p] -= 1
                    else:
                        tgt = self.snorm[p]
                        self.dirty[p] = True
                    for i, x in enumerate(ovec):
                        tgt[i] -= x
                if ne:
                    if sat:
                        tgt = self.ssat[p]
                        self.nsat[p] += 1
                    else:
                        tgt = self.snorm[p]
                        self.dirty[p] = True
                    for i, x in enumerate(vec):
                        tgt[i] += x
            if osat != sat:
                self.nunsat[p] += 1 if osat else -1
            if ne and not sat:
                if not (one and not osat and self.u_share[u] == share):
                    ent = (share, u)
                    self.mcur[u] = ent
                    h = self.mheap[p]
                    heapq.heappush(h, ent)
                    if len(h) > 4 * self.n_units[p] + 32:  # drop stale entries now and then
                        self.mheap[p] = [x for x in h if self.mcur[x[1]] is x]
                        heapq.heapify(self.mheap[p])
            else:
                self.mcur[u] = None
        self.u_ne[u], self.u_sat[u], self.u_share[u], self.u_vec[u] = ne, sat, share, vec

    # -- the tournament (the least queue) --------------------------------------------------------------
    def _champion(self, n: int) -> None:
        """The least queue in ``n``'s subtree: ``(key sequence below n, path, node)``; ``n`` itself if its own
        queue has jobs left (an empty key sequence is a proper prefix of every other)."""
        if self.jheap[n]:
            self.champ[n] = ((), self.path[n], n)
            return
        h, tcur = self.theap[n], self.tcur
        while h and tcur[h[0][2]] is not h[0]:
            heapq.heappop(h)
        self.champ[n] = h[0][3] if h else None

    def _enter(self, n: int) -> None:
        """Put node ``n`` (not the root) in its parent's tournament heap with its current key."""
        c = self.champ[n]
        if c is None:
            self.tcur[n] = None
            return
        u = self.J + n
        w = self.weight[n]
        v = self.u_share[u] if w == 1 else self.u_share[u] / w
        keyseq = (self.u_sat[u], v) + c[0]
        ent = (keyseq, c[1], n, (keyseq, c[1], c[2]))
        self.tcur[n] = ent
        p = self.parent[n]
        h = self.theap[p]
        heapq.heappush(h, ent)
        if len(h) > 4 * self.n_units[p] + 32:
            self.theap[p] = [x for x in h if self.tcur[x[2]] is x]
            heapq.heapify(self.theap[p])

    # -- whole rebuild (start; a resource became fully allocated) -------------------------------------
    def _rebuild(self) -> None:
        J, N, R = self.J, self.N, self.R
        self.refreshes += 1
        U = J + N
        self.u_ne, self.u_sat = [False] * U, [False] * U
        self.u_share, self.u_vec = [_ZERO] * U, [None] * U
        self.mcur: list = [None] * U
        self.ssat = [[_ZERO] * R for _ in range(N)]
        self.snorm = [[_ZERO] * R for _ in range(N)]
        self.mheap: list[list] = [[] for _ in range(N)]
        self.nunsat = list(self.n_units)
        self.nsat = [0] * N  # saturated non-empty children (0: ssat is exactly 0)
        self.dirty = [True] * N  # snorm changed since ms / nv were computed
        self.ms: list = [None] * N
        self.nv: list = [None] * N
        self.theap: list[list] = [[] for _ in range(N)]
        self.tcur: list = [None] * N
        self.champ: list = [None] * N
        for j in range(J):
            self._apply(j, self.user_node[j], *self._leaf(j))
        for n in self.bottom_up:
            if n:
                self._apply(J + n, self.parent[n], *self._node(n))
            self._champion(n)
            if n:
                self._enter(n)

    def _up(self, n: int, reshare: bool) -> None:
        """Node ``n`` changed (a child's values if ``reshare``, else only which queues have jobs): recompute
        it and its ancestors."""
        J = self.J
        while True:
            if reshare and n:
                self._apply(J + n, self.parent[n], *self._node(n))
            self._champion(n)
            if not n:
                return
            self._enter(n)
            n = self.parent[n]

    # -- the loop ---------------------------------------------------------------------------------------
    def _fits(self, j: int) -> bool:
        lim = self.limit[j]
        if lim is not None and self.t[j] >= lim:
            return False
        rem = self.remaining
        return all(rem[r] >= d for r, d in self.need[j])

    def run(self, max_tasks: int) -> int:
        steps = 0
        jheap, user_node = self.jheap, self.user_node
        while self.champ[0] is not None:  # (a rebuild replaces self.champ)
            n = self.champ[0][2]
            _, name, j = heapq.heappop(jheap[n])
            if not self._fits(j):  # upstream: its tasks fail one by one, it is not pushed back
                if not jheap[n]:
                    self._up(n, False)
                continue
            steps += 1
            if steps > max_tasks:
                raise InstanceError(f"instance: volcano-hdrf would place more than {max_tasks} whole tasks; "
                                    f"scale capacities/demands down")
            self.t[j] += 1
            filled = False
            for r, d in self.need[j]:
                self.remaining[r] -= d
                if not self.remaining[r]:
                    self.full[r] = filled = True
            heapq.heappush(jheap[n], (self.t[j] * self.s_int[j], name, j))
            if filled:  # every leaf holding r may saturate: rebuild (at most once per resource)
                self._rebuild()
            elif self.s[j]:  # (a task that uses nothing changes no share)
                p = user_node[j]
                self._apply(j, p, *self._leaf(j))
                self._up(p, True)
        return steps


def volcano_hdrf_fast(env: Environment, *, max_tasks: int = MAX_TASKS) -> Allocation:
    """The mechanism's allocation, incrementally (module docstring, "Speed"); ``info``: ``steps`` (tasks
    placed), ``rebuilds`` (whole-tree rebuilds: the start, then one per resource that filled up)."""
    _SETTING.check(env, "volcano-hdrf")
    st = _Hdrf(env)
    steps = st.run(max_tasks)
    x = tuple((Fraction(t),) for t in st.t)
    return Allocation(env, x, "volcano-hdrf", True, {"steps": steps, "rebuilds": st.refreshes})


_SETTING = Setting(hierarchy=True, single_server=True, divisible=False, placement=False, external=False,
                   weights=False, bounds=True)


@register("volcano-hdrf", "Volcano hierarchical DRF (drf plugin, hierarchy mode): one whole task at a time to the "
          "least job (flat DRF share) of the least queue by the rescaled hierarchical dominant shares",
          _SETTING, (),
          source=UPSTREAM,
          notes="port of the plugin's semantics (our code); jobs are the users (weight-1 leaves under their "
                "queue), queue weights < 1 read as 1; " + TIE_BREAK + " (a user at the root, or in an inner "
                "queue, therefore goes before the queues below it); the least queue is taken at each pop "
                "(upstream's heap keeps stale keys); exact shares (upstream: float64); no claims (upstream "
                "states none)",
          z3=Z3Spec.none("indivisible tasks on a queue tree (integer allocations): not encoded"), order=ORDER)
def volcano_hdrf(env: Environment, exact: bool = False) -> Allocation:
    """Volcano's hierarchical DRF as whole-task progressive filling on the queue tree (module docstring)."""
    return volcano_hdrf_fast(env)
