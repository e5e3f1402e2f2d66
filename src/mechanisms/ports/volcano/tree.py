"""Volcano's ``drf`` plugin in hierarchy mode as pure functions: the tree (``buildHierarchy``), its shares and
saturation (``updateHierarchicalShare``), ``compareQueues``, upstream's comparator of two users, the user the
mechanism serves next, and the mechanism recomputed literally after every task (the reference of
:mod:`mechanisms.ports.volcano.fast`).  The port, ``volcano-hdrf``: :mod:`mechanisms.ports.volcano.port` (its
configuration and conventions).

Source (read, not copied; our code follows the semantics): volcano-sh/volcano @
ed72c7c815a9fd547a787134676f73d42e9d049c, ``pkg/scheduler/plugins/drf/drf.go`` (``buildHierarchy``,
``updateHierarchicalShare``, ``UpdateHierarchicalShare``, ``resourceSaturated``, ``compareQueues``,
``calculateShare``, the queue order, lines 266-278, the job order, lines 370-388),
``pkg/scheduler/framework/session_plugins.go`` (``QueueOrderFn``, lines 775-798; ``JobOrderFn``, lines 717-749),
``pkg/scheduler/api/helpers/helpers.go`` (``Share``).

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

The queue order
---------------
``compareQueues`` (drf.go lines 160-184) walks both queues' paths from the root down to the depth of the
SHALLOWER one; at each level a non-saturated node beats a saturated one, then the smaller ``share / weight``
wins; equal values go one level down; 0 at the end.  So a queue ties with its own sub-queues, with a user at
the root (depth 0), and with every deeper queue whose ancestors tie with it; with the creation-time fallback
the order is then not transitive.  Queues ``a/q``, ``m``, ``z/p`` created in that order, with ``a``, ``m`` and
``z`` tied and ``p`` below ``q``: ``a/q`` before ``m`` (a tie: created first), ``m`` before ``z/p`` (a tie:
created first), ``z/p`` before ``a/q`` (decided one level down) -- a cycle (``tests/mechanisms/
test_volcano_hdrf.py``).  ``compareQueues``'s decided comparisons alone never form a cycle (at the least
deciding level on a cycle every queue would have to be smaller than the next).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import MAX_TASKS

from ...core.registry import Setting

__all__ = ["SETTING", "HdrfNode", "hdrf_tree", "compare_queues", "compare_users", "next_user",
           "volcano_hdrf_reference"]

_ZERO = Fraction(0)
_ONE = Fraction(1)

#: ``ordered``: an instance's ``usage`` is the state the order facet is read in (the allocation starts from an
#: empty cluster whatever it says); ``register`` sets it too, the functions here check this one
SETTING = Setting(hierarchy=True, single_server=True, divisible=False, placement=False, external=False,
                   weights=False, bounds=True, ordered=True)


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
    """A queue's place in creation order (:mod:`mechanisms.ports.volcano.port`, "Conventions"): its declaration index; the root's
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
    then its candidate with the least flat share, the earliest created (:mod:`mechanisms.ports.volcano.port`, "The
    allocate loop").  Every pair of queues is compared: for tests and the reference."""
    queues = sorted({env.user_queue[j] for j in candidates}, key=_created)
    undominated = [q for q in queues if not any(compare_queues(nodes, env, r, q) < 0 for r in queues)]
    q = undominated[0]  # compareQueues' decided comparisons have no cycle, so some queue is undominated
    return min((j for j in candidates if env.user_queue[j] == q), key=lambda j: (leaves[j].share, j))


def volcano_hdrf_reference(env: Environment, *, max_tasks: int = MAX_TASKS) -> Allocation:
    """The same mechanism, literally: after every task the whole tree is recomputed (:func:`hdrf_tree`) and the
    next user chosen by :func:`next_user` among the users whose bound is not reached and whose task fits.
    ``O(queues^2 x depth + tree)`` per task: for tests and the benchmark baseline."""
    SETTING.check(env, "volcano-hdrf")
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
