"""``volcano-hdrf``: Volcano's hierarchical DRF (the ``drf`` plugin with ``enableHierarchy``) as a whole-task
mechanism on a queue tree.

Source (read, not copied; our code follows the semantics): volcano-sh/volcano @
ed72c7c815a9fd547a787134676f73d42e9d049c,

* ``pkg/scheduler/plugins/drf/drf.go``: ``buildHierarchy``, ``updateHierarchicalShare``,
  ``UpdateHierarchicalShare``, ``resourceSaturated``, ``compareQueues``, ``calculateShare``, the queue order
  (lines 266-278), the job order (lines 370-388) and the ``AllocateFunc`` event handler;
* ``pkg/scheduler/framework/session_plugins.go``: ``QueueOrderFn`` (lines 775-798), ``JobOrderCompareFn`` and
  ``JobOrderFn`` (lines 717-749): the plugins' orders tier by tier, then creation time, then UID;
* ``pkg/scheduler/util.go``: ``DefaultSchedulerConf`` (lines 38-50) and ``UnmarshalSchedulerConf`` (lines
  52-93); ``pkg/scheduler/plugins/defaults.go`` (every ``enabled...`` option defaults to true);
* ``pkg/scheduler/actions/allocate/allocate.go``: ``buildAllocateContext``, ``allocateResources``,
  ``allocateResourcesForTasks``; ``pkg/scheduler/util/priority_queue.go`` (``container/heap``);
* ``pkg/scheduler/api/helpers/helpers.go``: ``Share`` (``l / r``; ``r = 0``: 1 if ``l > 0`` else 0);
  ``pkg/scheduler/api/queue_info.go`` (a queue's UID is its name, line 56);
* ``docs/design/hdrf.md`` (the design; where it and the code differ we follow the code, see below).

The configuration
-----------------
The default configuration (``DefaultSchedulerConf``, util.go lines 38-50; the Helm chart's
``installer/helm/chart/volcano/config/volcano-scheduler.conf`` adds only ``binpack``, a node order) has the tiers
``priority, gang, conformance`` and ``overcommit, drf, predicates, proportion, nodeorder``.  Hierarchy mode is
that configuration with ``enableHierarchy: true`` on ``drf`` and WITHOUT ``proportion``:
``UnmarshalSchedulerConf`` rejects a tier holding both ("proportion and drf with hierarchy enabled conflicts",
util.go lines 62-80) and the design doc says to disable it (hdrf.md, "Limitations" 1).  (Upstream's own
``hdrf_test.go`` builds its tiers directly, lines 185-202, with ``proportion`` beside ``drf``: a configuration
the loader would refuse.)  In that configuration:

* the only queue order is ``drf``'s (``proportion`` and ``capacity`` are the only other plugins that register
  one), so a tie of ``compareQueues`` goes to ``QueueOrderFn``'s fallback: the earlier creation timestamp, then
  the smaller UID, which for a queue is its name;
* the job order is ``priority``'s (tier 1), ``gang``'s (tier 1), ``drf``'s (the job's flat DRF share), then
  ``JobOrderFn``'s fallback: the earlier creation timestamp, then the smaller UID (``namespace/name``).  Our jobs
  have equal priorities and ``minAvailable = 0`` (as the PodGroups of ``hdrf_test.go``), so every job is ready
  and the first two tie;
* no plugin registers ``Overused`` or ``Allocatable`` (``proportion`` did), so no queue is skipped.

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

The allocate loop and upstream's order
--------------------------------------
Upstream (allocate.go lines 283-368): pop the least queue of a heap ordered by ``QueueOrderFn``, pop its least
job (``JobOrderFn``), place ONE whole task of it (``allocateResourcesForTasks`` stops as soon as the job is
ready; with ``minAvailable = 0`` that is after one task), push the job back and the queue back.  A job whose
next task fits nowhere loses its remaining tasks one by one and is not pushed back.

``compareQueues`` (drf.go lines 160-184) walks both queues' paths from the root down to the depth of the
SHALLOWER one; at each level a non-saturated node beats a saturated one, then the smaller ``share / weight``
wins; equal values go one level down; 0 at the end.  So a queue ties with its own sub-queues, with a user at
the root (depth 0), and with every deeper queue whose ancestors tie with it; with the creation-time fallback
the order is then not transitive.  Queues ``a/q``, ``m``, ``z/p`` created in that order, with ``a``, ``m`` and
``z`` tied and ``p`` below ``q``: ``a/q`` before ``m`` (a tie: created first), ``m`` before ``z/p`` (a tie:
created first), ``z/p`` before ``a/q`` (decided one level down) -- a cycle (``tests/mechanisms/
test_volcano_hdrf.py``).  ``compareQueues``'s decided comparisons alone never form a cycle (at the least
deciding level on a cycle every queue would have to be smaller than the next).

What the mechanism does (its rule; exact, deterministic):

* Candidates: the users that can take a task (task bound not reached, the task fits in what is left).
* The queue served: among the candidates' queues, those that NO other candidate queue precedes in
  ``compareQueues`` (-1), the earliest created.  Whenever upstream's ``QueueOrderFn`` (``compareQueues``, then
  creation, then UID) has a least element on the candidates' queues, this is it; only where it has none (a
  cycle as above) is this a choice of ours: a queue that loses no comparison by shares, and among those the
  first created, as the fallback would have it.  (Upstream's heap pops whatever its layout gives there: in the
  tests' cycle it pops ``z/p`` where we serve ``m``.)
* The job served: the candidate in that queue with the least flat DRF share, then the earliest created.

What is not emulated, and why:

* The heap.  Upstream's queues sit in a binary heap (``util.PriorityQueue`` over ``container/heap``) whose
  keys change under it: placing a task changes the shares of the job's ancestors, hence the keys of every
  queue below them, but only the popped queue is pushed back; and where the order is cyclic the heap's pop
  is whatever its layout gives.  That layout is not a function of the instance: ``buildAllocateContext``
  pushes the queues in the order it meets their jobs while ranging over ``ssn.Jobs``, a Go map (allocate.go
  lines 152-194; framework/session.go line 87), whose iteration order is randomised.  We take the least queue
  at the moment of the pop -- the order the push-back is there for ("To ensure that the priority of the queue
  is calculated based on the latest resource allocation situation", allocate.go lines 364-366).
  ``benchmarks/bench_volcano_hdrf.py --ties`` measures how much the heap changes (it emulates it).
* A job that cannot take a task leaves the candidates at once; upstream pops it, fails its tasks and drops it
  then.  Popping it changes no share, so wherever the order is transitive on the queues that still hold jobs
  the outcome is the same.
* ``float64``: we compute exactly (``Fraction``).  Upstream compares ``float64`` shares with ``==``
  (drf.go lines 174, 375), so values that are equal exactly may differ there by rounding (e.g. after the
  ``M / share`` rescaling) and be ordered by the rounding instead of the fallback.

Conventions where upstream leaves a choice to the environment (stated in ``list``):

* Creation order: queues were created in declaration order (the ``queues`` list), jobs in user order (the
  ``users`` list), each at least one second after the one before (Kubernetes timestamps have one-second
  resolution), so a timestamp never ties and the UID never decides.  (Upstream's unit tests leave every
  timestamp zero: there the queue NAME decides; ``hdrf_test.go``'s names order ``root-eng-dev`` <
  ``root-eng-prod`` < ``root-sci``.)
* A user at our root is a job of a queue with no hierarchy annotation (its path is just the root: Volcano's
  ``default`` queue, which the scheduler creates at start-up, pkg/scheduler/cache/cache.go lines 465-520),
  taken as created before every declared queue.  It ties with every queue, so it is served first while it
  can take a task.  A queue holding both jobs and sub-queues (``docs/design/hdrf.md`` forbids it; our model
  allows it) ties with its sub-queues, and the creation order decides between them.
* One server (one resource pool), whole tasks, no placement constraints, no external resources, users of
  weight 1 (upstream's jobs are weight-1 leaves), task bounds allowed (``floor(n_j)`` tasks), equal job
  priorities, ``minAvailable = 0``.

The order facet (``OrderSpec``)
-------------------------------
In a state (the current allocation: each job's task count) the tree is recomputed literally
(:func:`hdrf_tree`) and ``compare`` is :func:`compare_users`: upstream's comparator itself, not repaired --
``QueueOrderFn`` for users in different queues (``compareQueues``, then creation), ``JobOrderFn`` for users of
one queue (flat share, then creation).  It is not a strict weak order wherever the cycle above arises;
where it has a least element among the users that can take a task, that user is the one the mechanism
serves next.  ``share`` is a job's flat DRF share (what the job order compares) and ``queue_share`` a queue's
rescaled hierarchical share divided by its weight as upstream reads it (what ``compareQueues`` compares; 0 for
a queue with no job below it, which is not in the tree).  Saturation is part of the order, not of a share.

Speed
-----
Placing a task changes only the leaf and its ancestors.  Each internal node keeps the sum of its
saturated children's allocations, the sum of its non-saturated children's NORMALISED allocations
(allocation / share; a child's allocation scaled to ``M`` is ``M`` times it), the number of its
non-saturated children and a heap of those children's shares (for ``M``), so a node is recomputed in
``O(R + log fanout)`` from the one child that changed (with no saturated child its share is ``M`` times the
largest normalised sum, and its own normalised vector does not change with ``M``: cached).  The root's share
is never computed (``compareQueues`` starts below it).  Each node also keeps a heap of its child queues that
still have a candidate below them, keyed by what ``compareQueues`` reads there (saturated, share / weight).
The queue served is found top down: at each level the least key among the children of the nodes still in
play, the nodes that have it (the queues that end there and have candidates are undominated), and below them
the next level -- one path unless keys tie.  A job leaves the candidates when its bound is reached or a
resource it needs runs short (per resource, the jobs by demand: each leaves once).  A resource that becomes
fully allocated can saturate any leaf holding it: then (at most once per resource) the whole tree is
rebuilt.  All exact (``Fraction``); ``benchmarks/bench_volcano_hdrf.py`` measures it against
:func:`volcano_hdrf_reference`, the literal full recomputation with every pair of queues compared after
every task (10^4 tasks of 10^3 jobs in 110 queues: about 2 s).
"""
from __future__ import annotations

import heapq
import math
from fractions import Fraction
from typing import Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import MAX_TASKS

from ...core.order import per_state, view
from ...core.registry import OrderSpec, Setting, register
from ...core.z3spec import Z3Spec

__all__ = ["UPSTREAM", "TIE_BREAK", "HdrfNode", "hdrf_tree", "compare_queues", "compare_users", "next_user",
           "ORDER", "volcano_hdrf", "volcano_hdrf_fast", "volcano_hdrf_reference"]

UPSTREAM = ("volcano-sh/volcano @ ed72c7c815a9fd547a787134676f73d42e9d049c, pkg/scheduler/plugins/drf/drf.go "
            "(+ pkg/scheduler/framework/session_plugins.go, pkg/scheduler/actions/allocate/allocate.go, "
            "pkg/scheduler/api/helpers/helpers.go)")

#: the rule for what ``compareQueues`` and the job order leave open (module docstring, "The allocate loop")
TIE_BREAK = ("ties of compareQueues and of the job order: upstream's fallback in its default hierarchy "
             "configuration (drf the only queue order): the earlier created (queues in declaration order, a user "
             "at the root in a queue created first; jobs in user order); where that order is cyclic, the earliest "
             "created of the queues no other queue precedes in compareQueues")

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
    to ``QueueOrderFn``'s fallback).  Walks both paths from the root down to the shallower queue's depth."""
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


def _created(q: Optional[int]) -> int:
    """A queue's place in creation order (module docstring, "Conventions"): its declaration index; the root's
    jobs (a queue with no hierarchy annotation) -1, created first."""
    return -1 if q is None else q


def compare_users(env: Environment, nodes: dict[Optional[int], HdrfNode], leaves: Sequence[HdrfNode], a: int,
                  b: int) -> int:
    """Upstream's comparator of users ``a`` and ``b`` on :func:`hdrf_tree`'s nodes and leaves, not repaired:
    in different queues ``QueueOrderFn`` (session_plugins.go lines 775-798: ``compareQueues``, then the earlier
    created queue; the UID would come next, never reached); in one queue ``JobOrderFn`` (lines 737-749, after
    drf.go's job order, lines 370-386: the flat share, then the earlier created job).  -1: ``a`` first.  Not a
    strict weak order where ``compareQueues`` ties queues of different depths (module docstring)."""
    qa, qb = env.user_queue[a], env.user_queue[b]
    if qa != qb:
        c = compare_queues(nodes, env, qa, qb)
        if c:
            return c
        return -1 if _created(qa) < _created(qb) else 1
    sa, sb = leaves[a].share, leaves[b].share
    if sa != sb:
        return -1 if sa < sb else 1
    return (a > b) - (a < b)


def next_user(env: Environment, nodes: dict[Optional[int], HdrfNode], leaves: Sequence[HdrfNode],
              candidates: Sequence[int]) -> int:
    """The user the mechanism serves among ``candidates`` (the users that can take a task), literally: the
    candidates' queues that no other of them precedes in :func:`compare_queues`, the earliest created of those,
    then its candidate with the least flat share, the earliest created (module docstring, "The allocate
    loop").  Every pair of queues is compared: for tests and the reference."""
    queues = sorted({env.user_queue[j] for j in candidates}, key=_created)
    undominated = [q for q in queues if not any(compare_queues(nodes, env, r, q) < 0 for r in queues)]
    q = undominated[0]  # compareQueues' decided comparisons have no cycle, so some queue is undominated
    return min((j for j in candidates if env.user_queue[j] == q), key=lambda j: (leaves[j].share, j))


def volcano_hdrf_reference(env: Environment, *, max_tasks: int = MAX_TASKS) -> Allocation:
    """The same mechanism, literally: after every task the whole tree is recomputed (:func:`hdrf_tree`) and the
    next user chosen by :func:`next_user` among the users whose bound is not reached and whose task fits.
    ``O(queues^2 x depth + tree)`` per task: for tests and the benchmark baseline."""
    _SETTING.check(env, "volcano-hdrf")
    J = env.n_users
    left = list(env.capacity[0])
    limit = [None if b is None else math.floor(b) for b in env.tasks]
    tasks = [0] * J
    steps = 0

    def can_take(j: int) -> bool:
        return (limit[j] is None or tasks[j] < limit[j]) and all(left[r] >= d for r, d in enumerate(env.demand[j]))

    while True:
        candidates = [j for j in range(J) if can_take(j)]
        if not candidates:
            break
        steps += 1
        if steps > max_tasks:
            raise InstanceError(f"instance: volcano-hdrf-reference would place more than {max_tasks} whole tasks; "
                                f"scale capacities/demands down")
        nodes, leaves = hdrf_tree(env, tasks)
        j = next_user(env, nodes, leaves, candidates)
        tasks[j] += 1
        left = [v - d for v, d in zip(left, env.demand[j])]
    return Allocation(env, tuple((Fraction(t),) for t in tasks), "volcano-hdrf-reference", True, {"steps": steps})


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
        self.created = [_created(q) for q in queue_of]
        self.weight = [_weight(env, q) for q in queue_of]
        self.bottom_up = sorted(range(N), key=lambda n: -depth[n])
        self.n_units = [0] * N  # children (units) of each node
        for n in user_node:
            self.n_units[n] += 1
        for n in range(1, N):
            self.n_units[parent[n]] += 1
        # the candidates (module docstring, "What the mechanism does"): per node, those of its own queue and
        # those in its subtree; each node's own candidates in a heap by (flat share, user = creation order)
        self.out = [False] * J
        self.own = [0] * N
        self.below = [0] * N
        self.jheap: list[list] = [[] for _ in range(N)]
        for j in range(J):
            self.jheap[user_node[j]].append((0, j))
            self.own[user_node[j]] += 1
            n = user_node[j]
            while n >= 0:
                self.below[n] += 1
                n = parent[n]
        for h in self.jheap:
            heapq.heapify(h)
        # per resource, the users needing it by decreasing demand: they leave in that order as it runs short
        self.by_need = [sorted(((d, j) for j in range(J) for r2, d in self.need[j] if r2 == r), reverse=True)
                        for r in range(env.n_resources)]
        self.short = [0] * env.n_resources  # by_need[r][:short[r]] have left
        self.refreshes = 0
        self.kheap: list[list] = [[] for _ in range(N)]
        self.kcur: list = [None] * N
        self._rebuild()
        for j in range(J):
            if self.limit[j] is not None and self.limit[j] <= 0:
                self._leave(j)
        for r in range(env.n_resources):
            self._running_short(r)

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

    # -- the candidates ---------------------------------------------------------------------------------
    def _leave(self, j: int) -> None:
        """User ``j`` can take no more task (bound reached, or a resource it needs ran short): it leaves the
        candidates; a node with no candidate below it any more leaves its parent's key heap."""
        if self.out[j]:
            return
        self.out[j] = True
        n = self.user_node[j]
        self.own[n] -= 1
        while n >= 0:
            self.below[n] -= 1
            if not self.below[n] and n:
                self.kcur[n] = None  # its entry in the parent's heap is stale from now on
            n = self.parent[n]

    def _running_short(self, r: int) -> None:
        """Resource ``r``'s remainder dropped: every user needing more of it than is left leaves."""
        lst, k, left = self.by_need[r], self.short[r], self.remaining[r]
        while k < len(lst) and lst[k][0] > left:
            self._leave(lst[k][1])
            k += 1
        self.short[r] = k

    # -- the queue order: keys and the top-down choice -------------------------------------------------
    def _enter(self, n: int) -> None:
        """Put node ``n`` (not the root) in its parent's key heap with its current key (saturated, share /
        weight), if a candidate is below it."""
        if not self.below[n]:
            self.kcur[n] = None
            return
        u = self.J + n
        w = self.weight[n]
        ent = ((self.u_sat[u], self.u_share[u] if w == 1 else self.u_share[u] / w), n)
        self.kcur[n] = ent
        p = self.parent[n]
        h = self.kheap[p]
        heapq.heappush(h, ent)
        if len(h) > 4 * self.n_units[p] + 32:  # drop stale entries now and then
            self.kheap[p] = [x for x in h if self.kcur[x[1]] is x]
            heapq.heapify(self.kheap[p])

    def _least(self, p: int):
        """The least current key among node ``p``'s children with a candidate below (``None``: none)."""
        h, kcur = self.kheap[p], self.kcur
        while h and kcur[h[0][1]] is not h[0]:
            heapq.heappop(h)
        return h[0][0] if h else None

    def _with_key(self, p: int, key, out: list) -> None:
        """Append to ``out`` the children of ``p`` whose current key is ``key`` (the least in ``p``'s heap)."""
        h, kcur = self.kheap[p], self.kcur
        held = []
        while h and (kcur[h[0][1]] is not h[0] or h[0][0] == key):
            ent = heapq.heappop(h)
            if kcur[ent[1]] is ent:
                held.append(ent)
                out.append(ent[1])
        for ent in held:
            heapq.heappush(h, ent)

    def _choose(self) -> int:
        """The node whose queue is served (module docstring, "What the mechanism does"), top down: at each
        level the least key among the children (with candidates below) of the nodes still in play; the nodes
        with that key are in play one level down, and those whose own queue has candidates are undominated
        (no candidate queue precedes them in ``compareQueues``); the earliest created of those.  The root's own
        jobs (created first, tied with every queue) go first."""
        if self.own[0]:
            return 0
        best = -1
        level = [0]
        while level:
            key = None
            for p in level:
                k = self._least(p)
                if k is not None and (key is None or k < key):
                    key = k
            if key is None:
                break
            tied: list[int] = []
            for p in level:
                if self._least(p) == key:
                    self._with_key(p, key, tied)
            level = []
            for n in tied:
                if self.own[n] and (best < 0 or self.created[n] < self.created[best]):
                    best = n
                if self.below[n] > self.own[n]:
                    level.append(n)
        return best

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
        self.kheap = [[] for _ in range(N)]
        self.kcur = [None] * N
        for j in range(J):
            self._apply(j, self.user_node[j], *self._leaf(j))
        for n in self.bottom_up:
            if n:
                self._apply(J + n, self.parent[n], *self._node(n))
                self._enter(n)

    def _up(self, n: int) -> None:
        """A child of node ``n`` changed: recompute ``n`` and its ancestors, and re-key them."""
        J = self.J
        while n:
            self._apply(J + n, self.parent[n], *self._node(n))
            self._enter(n)
            n = self.parent[n]

    # -- the loop ---------------------------------------------------------------------------------------
    def run(self, max_tasks: int) -> int:
        steps = 0
        jheap, user_node, out = self.jheap, self.user_node, self.out
        while self.below[0]:
            n = self._choose()
            h = jheap[n]
            while out[h[0][1]]:  # users that left the candidates (lazily removed)
                heapq.heappop(h)
            _, j = heapq.heappop(h)
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
            if self.limit[j] is not None and self.t[j] >= self.limit[j]:
                self._leave(j)
            for r, _ in self.need[j]:
                self._running_short(r)
            if not out[j]:
                heapq.heappush(h, (self.t[j] * self.s_int[j], j))
            if filled:  # every leaf holding r may saturate: rebuild (at most once per resource)
                self._rebuild()
            elif self.s[j]:  # (a task that uses nothing changes no share)
                self._apply(j, n, *self._leaf(j))
                self._up(n)
        return steps


def volcano_hdrf_fast(env: Environment, *, max_tasks: int = MAX_TASKS) -> Allocation:
    """The mechanism's allocation, incrementally (module docstring, "Speed"); ``info``: ``steps`` (tasks
    placed), ``rebuilds`` (whole-tree rebuilds: the start, then one per resource that filled up)."""
    _SETTING.check(env, "volcano-hdrf")
    st = _Hdrf(env)
    steps = st.run(max_tasks)
    x = tuple((Fraction(t),) for t in st.t)
    return Allocation(env, x, "volcano-hdrf", True, {"steps": steps, "rebuilds": st.refreshes})


#: ``ordered``: an instance's ``usage`` is the state the order facet is read in (the allocation starts from an
#: empty cluster whatever it says); ``register`` sets it too, the functions here check this one
_SETTING = Setting(hierarchy=True, single_server=True, divisible=False, placement=False, external=False,
                   weights=False, bounds=True, ordered=True)


@register("volcano-hdrf", "Volcano hierarchical DRF (drf plugin, hierarchy mode): one whole task at a time to the "
          "least job (flat DRF share) of the least queue by the rescaled hierarchical dominant shares",
          _SETTING, (),
          source=UPSTREAM,
          notes="port of the plugin's semantics (our code) in the default hierarchy configuration (drf with "
                "enableHierarchy, no proportion); jobs are the users (weight-1 leaves under their queue), queue "
                "weights < 1 read as 1; " + TIE_BREAK + "; the least queue is taken at each pop (upstream's heap "
                "keeps stale keys, and its layout follows Go's randomised map order: not emulated); exact shares "
                "(upstream: float64); no claims (upstream states none)",
          z3=Z3Spec.none("indivisible tasks on a queue tree (integer allocations): not encoded"), order=ORDER)
def volcano_hdrf(env: Environment, exact: bool = False) -> Allocation:
    """Volcano's hierarchical DRF as whole-task progressive filling on the queue tree (module docstring)."""
    return volcano_hdrf_fast(env)
