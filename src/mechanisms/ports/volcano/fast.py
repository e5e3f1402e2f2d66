"""``volcano-hdrf``'s allocation, incrementally: the same choices as :func:`mechanisms.ports.volcano.tree.
volcano_hdrf_reference`, at a fraction of the cost.

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

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import MAX_TASKS

from .tree import SETTING, _created, _tree_nodes, _weight

__all__ = ["volcano_hdrf_fast"]

_ZERO = Fraction(0)


class _Hdrf:
    """The incremental state (module docstring).  Units: user ``j`` is unit ``j``, internal node
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
        # the candidates (:mod:`mechanisms.ports.volcano.port`, "What the mechanism does"): per node, those of its own queue and
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
        """The node whose queue is served (:mod:`mechanisms.ports.volcano.port`, "What the mechanism does"), top down: at each
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


def volcano_hdrf_fast(env: Environment, *, max_tasks: int = MAX_TASKS, name: str = "volcano-hdrf") -> Allocation:
    """The mechanism's allocation, incrementally (module docstring); ``info``: ``steps`` (tasks placed),
    ``rebuilds`` (whole-tree rebuilds: the start, then one per resource that filled up)."""
    SETTING.check(env, name)
    st = _Hdrf(env)
    steps = st.run(max_tasks)
    x = tuple((Fraction(t),) for t in st.t)
    return Allocation(env, x, name, True, {"steps": steps, "rebuilds": st.refreshes})
