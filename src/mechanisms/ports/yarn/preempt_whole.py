"""``yarn-drf-preempt``'s step in Python integers (:class:`WholeSteps`, a base of
:class:`mechanisms.ports.yarn.preempt.Preempting`): where the one pool's capacity and every present app's per-task
demand are whole numbers (the capacity positive), the weights positive exact numbers, every min share whole and
either zero or positive in every resource, and no queue has a max share -- the benchmark's case and most
executions' -- the whole step (reconcile, fill, update) runs on integers and keeps what it can between steps:

* every app's per-task demand as integers, its DRF key up to its number of tasks (the key is that number times a
  fixed vector: the comparator's ratios ``(h d_r / c_r) / w`` scaled by one common denominator of the execution,
  ``lcm(c) x lcm(weight numerators)``, so that keys are tuples of integers compared natively);
* the tasks each app holds, the pool's usage and every queue's usage are carried from one integer step to the
  next (:attr:`WholeSteps._wst`): a step looks only at the apps that left, arrived, changed their report or
  task bound, or lost the pool (an execution's step is one or a few events); a step the integer step declines
  makes the next one start anew from ``launched``;
* the fill runs ``yarn-drf``'s incremental descent (:class:`mechanisms.ports.yarn.drf._Incremental`) on those
  integer keys, a parent's heap built only when the descent reaches it, and is skipped when no pending app has a
  task that fits;
* the update looks only at the apps with pending demand (the reference's starvation loops run over no other),
  reads the fair shares only of the apps whose starvation it checks (a node's split computed once per step,
  reused across steps while the node's share, children and weights are unchanged; an app's share and its
  threshold-capped fair demand kept while its leaf's share, the weights and its bound are), the queues' usage and
  demand in integers, a queue's desired share kept while its demand is unchanged, and restarts a min-share clock
  on one comparison (usage equal to the desired share: the reference's zero starvation).

Exactness: every decision is the same comparison on the same values as the fast step
(:mod:`mechanisms.ports.yarn.preempt_fast`) and the literal one: integer keys scaled by one positive number
order as the exact ratios do, and ``(rank, ratios..., start, name)`` tuples order as ``drf._Keyed`` does (no
NaN: a needy queue's min share is positive in every resource, apps are never needy).  Where the conditions do
not hold the step is the fast one.  tests/mechanisms/test_yarn_preempt_fast.py holds them equal to the literal
step, in exact and in float stepping."""
from __future__ import annotations

import heapq
import math
from collections import Counter
from operator import eq, is_, itemgetter
from fractions import Fraction
from typing import Any, Optional

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import MAX_TASKS

from ..java_go import string_key
from .drf import queue_name, whole
from .preempt_calc import INF, _inf_sub, drc_compare, java_heap_order
from .preempt_whole_calc import FDC, Fair, Waited, drc_whole, idle_clock, max_ratio

__all__ = ["WholeSteps"]


class _Tree:
    """What the integer step reads of the execution's queue tree (the same tuples at every step), or ``bad``
    when the tree is outside its conditions (a max share, a min share neither whole nor zero-or-positive in
    every resource, a weight that is not a positive exact number)."""

    def __init__(self, env: Environment) -> None:
        Q = self.Q = env.n_queues
        self.ids = (env.queues, env.queue_weight, env.queue_guarantee, env.queue_max)
        self.bad = any(m is not None for m in env.queue_max) or not all(
            w.__class__ is Fraction and w > 0 for w in env.queue_weight)
        self.parent = [env.queue_parent(q) for q in range(Q)]
        self.children = {p: env.queue_children(p) for p in [None] + list(range(Q))}
        self.path = [env.queue_path(q) for q in range(Q)]
        self.name = list(env.queues)
        self.key = [string_key(queue_name(env, q)) for q in range(Q)]
        self.guar: list = []  # ints or None
        self.msp: list = []  # the min share the comparator reads (None: zero, never needy)
        lcm_g = 1
        for g in env.queue_guarantee:
            if g is None:
                self.guar.append(None)
                self.msp.append(None)
                continue
            if not all(v.__class__ is Fraction and v.denominator == 1 and v >= 0 for v in g):
                self.bad = True
                g = (0,) * len(g)
            gi = tuple(int(v) for v in g)
            self.guar.append(gi)
            if any(gi):
                if not all(gi):
                    self.bad = True  # a needy queue could compare a NaN
                self.msp.append(gi)
                for v in gi:
                    if v:
                        lcm_g = math.lcm(lcm_g, v)
            else:
                self.msp.append(None)
        self.gpath = [tuple(a for a in self.path[q] if self.guar[a] is not None) for q in range(Q)]
        self.upath = {None: (), **{q: self.path[q] for q in range(Q)}}
        self.need = [None if m is None else tuple(lcm_g // v if v else 0 for v in m) for m in self.msp]  # u_r / m_r scaled
        self.wn = [w.numerator for w in env.queue_weight] if not self.bad else []
        self.lcm_wn = 1
        for v in self.wn:
            self.lcm_wn = math.lcm(self.lcm_wn, v)

    def user_path(self, q: Optional[int]) -> tuple:
        return () if q is None else self.path[q]


class _View:
    """One step's environment in integers (:meth:`WholeSteps._view`): per app its record, per-task demand ``D``,
    task bound ``bound`` (floored), pool eligibility, nonzero request ``pok``; the apps at each queue ``at``; the
    capacity ``C``, ``Lc`` (``lcm(C) / c_r``), the weights' scale ``W`` and the cluster as exact numbers."""

    __slots__ = ("env", "J", "R", "C", "Lc", "D", "bound", "elig", "pok", "recs", "at", "W", "cluster", "upath",
                 "changed")


#: a record's fields (``WholeSteps._wusers``, per app name)
_DEM, _INT, _WGT, _TB, _FLOOR, _KEYS, _DVEC, _USE = range(8)
_FDC = FDC
_POK, _WN, _Q = 10, 11, 12  # a nonzero request; the weight's numerator; the app's queue
_get_dem, _get_wgt, _get_tb, _get_int, _get_floor, _get_pok, _get_wn, _get_q = (
    itemgetter(k) for k in (_DEM, _WGT, _TB, _INT, _FLOOR, _POK, _WN, _Q))
_UNSET = object()  # a new record's task bound: not yet read


class WholeSteps:
    """The integer step (module docstring) of a :class:`~mechanisms.ports.yarn.preempt.Preempting` run, on its
    state (``launched``, ``report``, ``start``, the clocks ``last_fair`` and ``last_min``, ``preempted``) and its
    ``_preempt_for``; :meth:`_step_whole` returns ``None`` where its conditions do not hold."""

    _tree: Optional[_Tree] = None  # the queue tree as read (the execution's)
    _wcap: Any = None  # (the capacity tuple, its integers or None, lcm / c_r, the cluster as exact numbers)
    _wusers: dict  # app -> its record: demand, its integers, weight, task bound, its floor, {scale: key vector},
    #                 its demand vector (integers, inf), (tasks, usage)
    _wdesired: dict  # queue -> (its demand and the capacity, its desired share) of the last update
    _wfair: dict  # node -> (share, children, weights, split) of its last split
    _wst: Any = None  # after an integer step: (users, tasks held, paths, per-task demands, usage, queues' usage)

    def _view(self, env: Environment) -> Optional[_View]:
        if env.n_servers != 1 or env.server_demand:
            return None
        tree = self._tree
        if tree is None or tree.ids[0] is not env.queues or tree.ids[1] is not env.queue_weight or \
                tree.ids[2] is not env.queue_guarantee or tree.ids[3] is not env.queue_max:
            tree = self._tree = _Tree(env)
            self._wst = None
        if tree.bad or self.config.fair_share_threshold.__class__ is not Fraction:
            return None
        cap = env.capacity[0]
        wc = self._wcap
        if wc is None or wc[0] is not cap:
            ints = [c.numerator for c in cap] if all(
                c.__class__ is Fraction and c.denominator == 1 and c > 0 for c in cap) else None
            L = math.lcm(*ints) if ints else 0
            wc = self._wcap = (cap, ints, [L // c for c in ints] if ints else None, tuple(cap))
        if wc[1] is None:
            return None
        recs = self._wusers
        users = env.users
        rl = list(map(recs.get, users))
        changed: list = []  # the present apps whose record was rebuilt or whose task bound changed
        if None in rl:  # new apps (arrivals: at the end)
            j = 0
            while None in rl:
                j = rl.index(None, j)
                if not self._record(env, j, rl):
                    return None
                changed.append(j)
        if not (all(map(is_, map(_get_dem, rl), env.demand)) and all(map(is_, map(_get_wgt, rl), env.weight)) and
                all(map(is_, map(_get_tb, rl), env.tasks)) and all(map(eq, map(_get_q, rl), env.user_queue))):
            for j, (d, b, w, q) in enumerate(zip(env.demand, env.tasks, env.weight, env.user_queue)):
                rec = rl[j]
                if rec[_DEM] is not d or rec[_WGT] is not w or rec[_Q] != q:
                    if not self._record(env, j, rl):
                        return None
                    changed.append(j)
                elif rec[_TB] is not b:
                    self._bound(rec, b)
                    changed.append(j)
        W = tree.lcm_wn
        for x in set(map(_get_wn, rl)):
            if W % x:
                W = math.lcm(W, x)
        v = _View()
        v.env, v.J, v.R, v.C, v.Lc, v.cluster, v.W, v.recs = env, env.n_users, len(cap), wc[1], wc[2], wc[3], W, rl
        v.changed = changed
        v.D = list(map(_get_int, rl))
        v.bound = list(map(_get_floor, rl))
        v.pok = list(map(_get_pok, rl))
        allsrv = env.eligible[0] if env.eligible else None
        ok0 = allsrv is not None and 0 in allsrv
        if ok0 and env.eligible.count(allsrv) == v.J:
            v.elig = [True] * v.J
        else:
            v.elig = [ok0 if e is allsrv else 0 in e for e in env.eligible]
        at: dict = {}
        for j, q in enumerate(env.user_queue):
            got = at.get(q)
            if got is None:
                at[q] = [j]
            else:
                got.append(j)
        v.at = at
        v.upath = list(map(tree.upath.__getitem__, env.user_queue))
        return v

    def _record(self, env: Environment, j: int, rl: list) -> bool:
        """App ``j``'s record built anew (``rl[j]`` and ``_wusers``); ``False`` where its demand is not whole or
        its weight not a positive exact number."""
        d, w = env.demand[j], env.weight[j]
        if not all(x.__class__ is Fraction and x.denominator == 1 for x in d) or w.__class__ is not Fraction or \
                w <= 0:
            return False
        ints = tuple(x.numerator for x in d)
        rec = rl[j] = self._wusers[env.users[j]] = [d, ints, w, _UNSET, None, {}, None, (0, (0,) * len(d)), None,
                                                    None, any(ints), w.numerator, env.user_queue[j]]
        self._bound(rec, env.tasks[j])
        return True

    @staticmethod
    def _bound(rec: list, b: Any) -> None:
        """A record's task bound ``b``: its floor and the app's demand vector (integers, ``inf`` unbounded)."""
        fb = None if b is None else math.floor(b)
        rec[_TB], rec[_FLOOR] = b, fb
        rec[_DVEC] = tuple((INF if dv else 0) if fb is None else fb * dv for dv in rec[_INT])

    # -- keys
    def _base(self, v: _View, j: int) -> tuple:
        """App ``j``'s key vector for one task, in its ``sortRatios`` order: ``d_r (L / c_r) wd (W / wn)`` -- its
        ratios ``(d_r / c_r) / w`` times ``L W``; with ``h`` tasks, ``h`` times it (for ``h = 0`` every ratio is 0
        and the order does not matter)."""
        rec = v.recs[j]
        key = (id(v.Lc), v.W)
        got = rec[_KEYS].get(key)
        if got is None:
            w = rec[_WGT]
            f = w.denominator * (v.W // w.numerator)
            vals = [dv * lc * f for dv, lc in zip(rec[_INT], v.Lc)]
            order = sorted(range(v.R), key=lambda r: -vals[r])  # stable: Java's sort, a descending ratio
            got = rec[_KEYS][key] = tuple(vals[r] for r in order)
        return got

    def _qkey(self, v: _View, tree: _Tree, q: int, use: list) -> tuple:
        """Queue ``q``'s comparator key on its usage ``use`` (``drf._Incremental._fast_entry`` in integers)."""
        s = [x * lc for x, lc in zip(use, v.Lc)]
        if v.R == 2:
            order: Any = (1, 0) if s[1] > s[0] else (0, 1)
        else:
            order = sorted(range(v.R), key=lambda r: -s[r])
        dom = order[0]
        ms = tree.msp[q]
        if ms is not None and ms[dom] > use[dom]:
            nm = tree.need[q]
            return (0,) + tuple(use[r] * nm[r] for r in order) + (0, tree.key[q])
        f = v.env.queue_weight[q]
        m = f.denominator * (v.W // f.numerator)
        return (1,) + tuple(s[r] * m for r in order) + (0, tree.key[q])

    # -- one step
    def _step_whole(self, env: Environment, t: Any) -> Optional[Allocation]:
        v = self._view(env)
        if v is None:
            self._wst = None  # the step is not ours: the next one of ours starts from launched
            return None
        self.preempted = []
        held, left, quse = self._reconcile_whole(v, t)
        self._fill_whole(v, held, left, quse)
        self._update_whole(v, t, held, left, quse)
        if self.preempted:
            counts = Counter(self.launched)
            held = [counts.get(u, 0) for u in env.users]
            left, quse = self._sums(v, held)
            self._fill_whole(v, held, left, quse)
        self._wst = (env.users, held, v.upath, v.D, [c - x for c, x in zip(v.C, left)], quse)
        if getattr(self, "_float_out", False):  # a float run: the counts as floats (exact: whole numbers)
            return Allocation(env, tuple((float(h),) for h in held), self.name, False,
                              {"preempted": tuple(self.preempted)})
        x = tuple((whole(h),) for h in held)
        return Allocation(env, x, self.name, True, {"preempted": tuple(self.preempted)})

    def _use_whole(self, v: _View, j: int, h: int) -> tuple:
        rec = v.recs[j]
        got = rec[_USE]
        if got[0] != h:
            got = rec[_USE] = (h, tuple(h * dv for dv in rec[_INT]))
        return got[1]

    def _sums(self, v: _View, held: list) -> tuple[list, list]:
        """The pool left and every queue's usage (the apps below it), in integers, with ``held`` tasks."""
        R, C = v.R, v.C
        Q = self._tree.Q  # type: ignore[union-attr]
        left = list(C)
        quse = [[0] * R for _ in range(Q)]
        recs = v.recs
        for q, members in v.at.items():
            rows = []
            for j in members:
                h = held[j]
                if h:
                    rec = recs[j]
                    got = rec[_USE]
                    if got[0] != h:
                        got = rec[_USE] = (h, tuple(h * dv for dv in rec[_INT]))
                    rows.append(got[1])
            if not rows:
                continue
            tot = [sum(col) for col in zip(*rows)]
            for r in range(R):
                left[r] -= tot[r]
            if q is not None:
                for a in self._tree.path[q]:  # type: ignore[union-attr]
                    acc = quse[a]
                    for r in range(R):
                        acc[r] += tot[r]
        return left, quse

    def _reconcile_whole(self, v: _View, t: Any) -> tuple[list, list, list]:
        """``Preempting._reconcile`` on the view: the containers of departed apps dropped, an app whose report
        changed or that lost the pool loses them all, the newest over a task bound are trimmed, and a capacity
        below what is held releases everything.  The tasks each app holds after it, the pool left and every
        queue's usage: carried from the last step where it was an integer step (:attr:`_wst`: only the apps
        that left, changed or lost tasks are looked at), else summed anew."""
        env = v.env
        users = env.users
        report, start, last_fair = self.report, self.start, self.last_fair
        st, self._wst = self._wst, None
        if st is None:
            return self._reconcile_anew(v, t)
        pusers, pheld, ppath, pD, used, quse = st
        R = v.R
        launched = self.launched
        recs = self._wusers

        def release(h: int, d: tuple, path: tuple) -> None:  # h tasks of demand d below path freed
            for r in range(R):
                used[r] -= h * d[r]
            for a in path:
                acc = quse[a]
                for r in range(R):
                    acc[r] -= h * d[r]

        if pusers == users:
            held = list(pheld)
        else:
            hd = dict(zip(pusers, pheld))
            cur = set(users)
            gs = hd.keys() - cur  # departed
            if gs:
                freed = False
                for u in gs:
                    i = pusers.index(u)
                    if pheld[i]:
                        release(pheld[i], pD[i], ppath[i])
                        freed = True
                    report.pop(u, None)
                    self._per_user.pop(u, None)
                    recs.pop(u, None)
                    last_fair.pop(u, None)
                    start.pop(u, None)
                if freed:
                    launched = [u for u in launched if u not in gs]
            for u in cur - hd.keys():  # arrived
                start[u] = t
                last_fair[u] = t
            held = [hd.get(u, 0) for u in users]
        D, upath = v.D, v.upath
        resum = False
        for j in v.changed:  # a report that changed drops the app's containers; a task bound trims the newest
            u = users[j]
            h = held[j]
            if not h:
                continue
            i = pusers.index(u)
            r = report.get(u)
            if r is not None and r != env.demand[j]:
                release(h, pD[i], ppath[i])
                launched = [x for x in launched if x != u]
                held[j] = h = 0
                continue
            if ppath[i] is not upath[j]:  # (not in an execution: an app keeps its queue)
                resum = True  # held under another queue: the usage summed anew below
            b = v.bound[j]
            if b is not None and h > b:
                k = h - b
                release(k, D[j], upath[j])
                for i in range(len(launched) - 1, -1, -1):
                    if k <= 0:
                        break
                    if launched[i] == u:
                        del launched[i]
                        k -= 1
                held[j] = b
        if v.elig.count(True) != v.J:  # an app that lost the pool gives back what it holds
            for j, ok in enumerate(v.elig):
                if not ok and held[j]:
                    u = users[j]
                    release(held[j], D[j], upath[j])
                    launched = [x for x in launched if x != u]
                    held[j] = 0
        report.update(zip(users, env.demand))
        if resum:
            left, quse = self._sums(v, held)
        else:
            left = [c - x for c, x in zip(v.C, used)]
        if any(x < 0 for x in left):
            launched = []
            held = [0] * v.J
            left = list(v.C)
            quse = [[0] * R for _ in quse]
        self.launched = launched
        return held, left, quse

    def _reconcile_anew(self, v: _View, t: Any) -> tuple[list, list, list]:
        """:meth:`_reconcile_whole` from ``launched`` alone (the first integer step, or one after a step that was
        not)."""
        env = v.env
        users = env.users
        launched = self.launched
        report, start = self.report, self.start
        if len(report) != len(users) or any(u not in report for u in users):
            present = set(users)
            gone = [u for u in report if u not in present]
        else:
            gone = []
        if gone:
            gs = set(gone)
            launched = [u for u in launched if u not in gs]
        counts = Counter(launched)
        for j, u in enumerate(users):
            key = env.demand[j]
            if u not in start:
                start[u] = t
                self.last_fair[u] = t
            r = report.get(u, key)
            if (r is not key and r != key) or not v.elig[j]:
                if counts.get(u):
                    launched = [x for x in launched if x != u]
                    del counts[u]
            report[u] = key
        recs = self._wusers
        for u in gone:
            del report[u]
            self._per_user.pop(u, None)
            recs.pop(u, None)
            self.last_fair.pop(u, None)
            start.pop(u, None)
        held = [counts.get(u, 0) for u in users]
        for j, u in enumerate(users):
            b = v.bound[j]
            if b is not None and held[j] > b:
                k = held[j] - b
                for i in range(len(launched) - 1, -1, -1):
                    if k <= 0:
                        break
                    if launched[i] == u:
                        del launched[i]
                        k -= 1
                held[j] = b
        left = list(v.C)
        for j, h in enumerate(held):
            if h:
                for r, dv in enumerate(v.D[j]):
                    left[r] -= h * dv
        if any(x < 0 for x in left):
            launched = []
            held = [0] * v.J
        self.launched = launched
        return (held,) + self._sums(v, held)

    def _fill_whole(self, v: _View, held: list, left: list, quse: list) -> None:
        """``Preempting._fill``: the ``yarn-drf`` descent on the free pool when some pending app's task fits
        (``held``, ``left`` and ``quse`` updated)."""
        D, bound, pok, elig = v.D, v.bound, v.pok, v.elig
        live = []  # pending, eligible, its task fits in the pool left: the apps place() starts with
        for j in range(v.J):
            b = bound[j]
            if pok[j] and (b is None or held[j] < b) and elig[j]:
                for lv, dv in zip(left, D[j]):
                    if dv and lv < dv:
                        break
                else:
                    live.append(j)
        if not live:
            return
        if len(live) == 1:
            # one app alive (most fills): every node without it below is born dead, so the descent reaches it
            # each time and places its tasks while one fits and it has tasks left -- as many at once
            j = live[0]
            d, b = D[j], bound[j]
            k = min(lv // dv for lv, dv in zip(left, d) if dv)  # >= 1: its task fits
            if b is not None and b - held[j] < k:
                k = b - held[j]
            if k > MAX_TASKS:
                self._too_many()
            held[j] += k
            for r, dv in enumerate(d):
                left[r] -= k * dv
            for q in v.upath[j]:
                acc = quse[q]
                for r, dv in enumerate(d):
                    acc[r] += k * dv
            self.launched.extend([v.env.users[j]] * k)
            return
        before = list(held)
        self._place_whole(v, held, left, quse, live)
        launched = self.launched
        for j, u in enumerate(v.env.users):
            if held[j] > before[j]:
                launched.extend([u] * (held[j] - before[j]))

    def _too_many(self) -> None:
        raise InstanceError(f"instance: {self.name} would place more than {MAX_TASKS} whole tasks; "
                            f"scale capacities/demands down")

    def _place_whole(self, v: _View, tasks: list, left: list, quse: list, live: list) -> None:
        """``drf.place`` from ``tasks`` (``drf._Incremental``'s descent on integer keys; module docstring), the
        apps in ``live`` alive at the start; ``tasks``, ``left`` and ``quse`` updated."""
        tree = self._tree
        assert tree is not None
        Q, R, D, bound, pok = tree.Q, v.R, v.D, v.bound, v.pok
        # born dead (the pool only shrinks, usages only grow): the apps not live, and the queues with no live app
        # below them (their descent fails whenever tried)
        dead = set(range(Q, Q + v.J)).difference([Q + j for j in live])
        dead.update(range(Q))
        upath = v.upath
        for j in live:
            dead.difference_update(upath[j])
        cur: dict = {}
        heaps: dict = {}
        children, at, uq = tree.children, v.at, v.env.user_queue

        def akey(j: int) -> tuple:
            h = tasks[j]
            return (1,) + tuple(h * x for x in self._base(v, j)) + (1 + j, b"")

        def descend(p: Optional[int]) -> Optional[int]:
            rows = heaps.get(p)
            if rows is None:
                rows = []
                for q in children.get(p, ()):
                    if q not in dead:
                        k = cur[q] = self._qkey(v, tree, q, quse[q])
                        rows.append((k, q))
                for j in at.get(p, ()):
                    n = Q + j
                    if n not in dead:
                        k = cur[n] = akey(j)
                        rows.append((k, n))
                heapq.heapify(rows)
                heaps[p] = rows
            while rows:
                k, n = rows[0]
                if cur[n] is k and n not in dead:
                    if n < Q:
                        got = descend(n)
                    else:  # pending, and its task fits in the pool left (no max shares here)
                        j = n - Q
                        b = bound[j]
                        got = j if pok[j] and (b is None or tasks[j] < b) and \
                            all(not dv or lv >= dv for lv, dv in zip(left, D[j])) else None
                    if got is not None:
                        return got
                    dead.add(n)
                heapq.heappop(rows)
            return None

        steps = 0
        while (j := descend(None)) is not None:
            steps += 1
            if steps > MAX_TASKS:
                self._too_many()
            tasks[j] += 1
            d = D[j]
            for r in range(R):
                left[r] -= d[r]
            path = v.upath[j]
            for q in path:
                acc = quse[q]
                for r in range(R):
                    acc[r] += d[r]
            for n in path + (Q + j,):  # re-key the app and its queues (their usage grew)
                par = tree.parent[n] if n < Q else uq[j]
                rows = heaps.get(par)
                if rows is None:
                    continue  # keyed when the descent first reaches its parent
                k = cur[n] = self._qkey(v, tree, n, quse[n]) if n < Q else akey(j)
                if rows and rows[0][1] == n:
                    heapq.heapreplace(rows, (k, n))
                else:
                    heapq.heappush(rows, (k, n))

    # -- the update
    def _update_whole(self, v: _View, t: Any, held: list, left: list, quse: list) -> None:
        """``Preempting._update_reference``'s decisions and clocks on the view (module docstring): every queue's
        min-share clock (a queue with a min share restarts it when its usage equals its desired share, the
        reference's zero starvation; one without when nothing below it runs), then, queue by queue in the
        reference's order, the starvation of the apps with pending demand only (the others are never checked:
        the reference's loops run over the pending apps of a leaf)."""
        cfg = self.config
        tree = self._tree
        assert tree is not None
        env, R, Q = v.env, v.R, tree.Q
        th = cfg.utilization_threshold
        if th.__class__ is not Fraction:
            th = Fraction(th)
        if not (cfg.enabled and any((c - lv) * th.denominator > th.numerator * c for lv, c in zip(left, v.C))):
            return  # shouldAttemptPreemption (utilisation = the largest used / capacity; capacities > 0)
        recs, bound, pok = v.recs, v.bound, v.pok
        at = v.at
        last_min, last_fair = self.last_min, self.last_fair
        waited = Waited(t)
        # the queues' demand (integers, inf), summed only where a queue with a min share is above
        dem_q: dict = {}
        gpath = tree.gpath
        for q, members in at.items():
            if q is None or not gpath[q]:
                continue
            tot = [sum(col) for col in zip(*[recs[j][_DVEC] for j in members])]
            for a in gpath[q]:
                acc = dem_q.get(a)
                if acc is None:
                    dem_q[a] = list(tot)
                else:
                    for r in range(R):
                        acc[r] += tot[r]
        # every queue's clock; a queue's min-share starvation where apps with pending demand are at it
        pend: dict = {}
        for j, (p, b, h) in enumerate(zip(pok, bound, held)):
            if p and (b is None or h < b):
                q = env.user_queue[j]
                got = pend.get(q)
                if got is None:
                    pend[q] = [j]
                else:
                    got.append(j)
        names, guar = tree.name, tree.guar
        zeros = [0] * R
        ms_q: dict = {}
        for q in range(Q):
            if guar[q] is None:
                idle_clock(last_min, names[q], quse[q], t)
            else:
                ms = self._min_share_whole(v, tree, q, quse[q], dem_q.get(q) or zeros, t,
                                           waited if q in pend else None)
                if q in pend:
                    ms_q[q] = ms
        if not pend:
            return
        fair = Fair(self, v, tree)
        cluster = v.cluster
        fair_starv: dict = {}
        min_starv: dict = {}
        starved: list[int] = []
        zero = [0] * R  # the reference's zero vectors, as integers (the same values)
        fst = cfg.fair_share_threshold
        ftimeout = cfg.fair_share_timeout
        C = v.C
        for q in sorted(pend, key=lambda q: -1 if q is None else q):
            apps = pend[q]
            if len(apps) > 1:
                apps.sort(key=lambda j: (tuple(held[j] * x for x in self._base(v, j)), j))
            total = zero
            for j in apps:
                u = env.users[j]
                rec = recs[j]
                f = fair[j]
                fc = rec[_FDC]
                if fc is None or fc[0] is not f or fc[1] is not C or fc[2] is not rec[_DVEC]:
                    fd = [min(x * fst, d) for x, d in zip(f, rec[_DVEC])]
                    fc = rec[_FDC] = (f, C, rec[_DVEC], fd) + max_ratio(fd, C) + max_ratio(rec[_INT], C)
                h = held[j]
                # preempt_calc.below(h D, fd): the largest usage share, h max(D_r / c_r), against fd's largest
                if not h * fc[6] * fc[5] < fc[4] * fc[7]:
                    last_fair[u] = t
                    break
                if waited.short(last_fair[u], ftimeout):
                    break
                use = self._use_whole(v, j, h)
                s = [a - b if a > b else 0 for a, b in zip(fc[3], use)]
                fair_starv[j] = s
                if not any(s):
                    break
                if j not in starved:
                    starved.append(j)
                total = [a + b for a, b in zip(total, s)]
            if q is None or guar[q] is None:
                continue  # no min share: nothing left for its apps (their min-share starvation stays 0)
            left_q = [a - b if a > b else 0 for a, b in zip(ms_q[q], total)]
            for j in apps:
                if not any(left_q):
                    break
                fs = fair_starv.get(j) or zero
                use = self._use_whole(v, j, held[j])
                mine = [x if x > 0 else 0 for x in [_inf_sub(d, u) - f for d, u, f in zip(recs[j][_DVEC], use, fs)]]
                if drc_compare(mine, left_q, cluster) > 0:
                    mine = [x if x > 0 else 0 for x in [_inf_sub(a, b) for a, b in zip(mine, left_q)]]
                    left_q = zero
                else:
                    left_q = [a - b if a > b else 0 for a, b in zip(left_q, mine)]
                min_starv[j] = mine
                if j not in starved:
                    starved.append(j)
        if not starved:
            return
        starvation = {j: [a + b for a, b in zip(fair_starv.get(j, zero), min_starv.get(j, zero))] for j in starved}

        def cmp(a: int, b: int) -> int:
            return -1 if all(x <= y for x, y in zip(starvation[a], starvation[b])) else 1

        for j in java_heap_order(starved, cmp):
            self._preempt_for(env, j, starvation[j], fair, cluster, t)

    def _min_share_whole(self, v: _View, tree: _Tree, q: int, use: list, dem: list, t: Any,
                         waited: Optional[Waited]) -> list:
        """``Preempting._min_share`` of a queue with a min share, in integers; the desired share kept while the
        queue's demand is unchanged.  Its clock, and its starvation when ``waited`` (``None``: nobody reads it)."""
        path = tree.name[q]
        last_min = self.last_min
        if path not in last_min:
            last_min[path] = Fraction(0)
        memo = self._wdesired
        hit = memo.get(q)
        if hit is not None and hit[0] == dem and hit[1] is v.C:
            desired = hit[2]
        else:
            g = list(tree.guar[q])  # type: ignore[arg-type]
            desired = g if drc_whole(g, dem, v.C) <= 0 else list(dem)
            memo[q] = (list(dem), v.C, desired)
        if desired == use:  # the starvation desired - usage is the zero vector (usage is finite)
            last_min[path] = t
        if waited is None or waited.short(last_min[path], self.config.min_share_timeout):
            return [0] * v.R
        return [INF if a == INF else a - b for a, b in zip(desired, use)]
