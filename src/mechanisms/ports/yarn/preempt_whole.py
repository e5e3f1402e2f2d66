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
  makes the next one start anew from ``launched``; the apps' records are carried too, spliced where the step's
  apps are the last one's with one more at the end or one fewer and all else equal;
* the fill (:mod:`mechanisms.ports.yarn.preempt_whole_fill`) runs ``yarn-drf``'s incremental descent
  (:class:`mechanisms.ports.yarn.drf._Incremental`) on those integer keys, a parent's heap built only when the
  descent reaches it, and is skipped when no pending app has a task that fits; with one app alive (most fills)
  it places that app's tasks at once;
* the update (:mod:`mechanisms.ports.yarn.preempt_whole_update`) looks only at the apps with pending demand (the
  reference's starvation loops run over no other), reads the fair shares only of the apps whose starvation it
  checks (a node's split computed once per step, reused across steps while the node's share, children and
  weights are unchanged; an app's share and its threshold-capped fair demand kept while its leaf's share, the
  weights and its bound are), the queues' usage and demand in integers, a queue's desired share kept while its
  demand is unchanged, and restarts a min-share clock on one comparison (usage equal to the desired share: the
  reference's zero starvation); a leaf's fair share is kept while the same leaves have apps (apps at leaves
  only); the preemption thread runs in integers, each app's side of ``below`` computed once per starved app.

Exactness: every decision is the same comparison on the same values as the fast step
(:mod:`mechanisms.ports.yarn.preempt_fast`) and the literal one: integer keys scaled by one positive number
order as the exact ratios do, and ``(rank, ratios..., start, name)`` tuples order as ``drf._Keyed`` does (no
NaN: a needy queue's min share is positive in every resource, apps are never needy).  Where the conditions do
not hold the step is the fast one.  tests/mechanisms/test_yarn_preempt_fast.py holds them equal to the literal
step, in exact and in float stepping."""
from __future__ import annotations

import math
from collections import Counter
from operator import eq, is_, itemgetter
from fractions import Fraction
from typing import Any, Optional

from mechverify.allocation import Allocation
from mechverify.model import Environment

from ..java_go import string_key
from .drf import queue_name, whole
from .preempt_calc import INF
from .preempt_whole_calc import (R_DEM, R_DVEC, R_FLOOR, R_INT, R_KEYS, R_POK, R_Q, R_TB, R_USE, R_WGT, R_WN)
from .preempt_whole_fill import WholeFill
from .preempt_whole_update import WholeUpdate

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
        self.idle = [(q, self.name[q]) for q in range(Q) if self.guar[q] is None]  # (queue, path): no min share
        self.guarded = [(q, self.name[q]) for q in range(Q) if self.guar[q] is not None]
        self.upath = {None: (), **{q: self.path[q] for q in range(Q)}}
        self.leafset = frozenset(q for q in range(Q) if not self.children.get(q))
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
                 "changed", "splice", "pend")


_DEM, _INT, _WGT, _TB, _FLOOR, _KEYS, _DVEC, _USE = R_DEM, R_INT, R_WGT, R_TB, R_FLOOR, R_KEYS, R_DVEC, R_USE
_POK, _WN, _Q = R_POK, R_WN, R_Q
_get_dem, _get_wgt, _get_tb, _get_int, _get_floor, _get_pok, _get_wn, _get_q = (
    itemgetter(k) for k in (_DEM, _WGT, _TB, _INT, _FLOOR, _POK, _WN, _Q))
_UNSET = object()  # a new record's task bound: not yet read
_FLOAT_ROWS: list = []  # h -> an allocation's row of h tasks, (float(h),) and (Fraction(h),): shared (immutable)
_WHOLE_ROWS: list = []


class WholeSteps(WholeFill, WholeUpdate):
    """The integer step (module docstring) of a :class:`~mechanisms.ports.yarn.preempt.Preempting` run, on its
    state (``launched``, ``report``, ``start``, the clocks ``last_fair`` and ``last_min``, ``preempted``) and its
    ``_preempt_for``; :meth:`_step_whole` returns ``None`` where its conditions do not hold."""

    _tree: Optional[_Tree] = None  # the queue tree as read (the execution's)
    _wcap: Any = None  # (the capacity tuple, its integers or None, lcm / c_r, the cluster as exact numbers)
    _wusers: dict  # app -> its record: demand, its integers, weight, task bound, its floor, {scale: key vector},
    #                 its demand vector (integers, inf), (tasks, usage)
    _wdesired: dict  # queue -> (its demand and the capacity, its desired share) of the last update
    _wfair: dict  # node -> (share, children, weights, split) of its last split
    _wprev: Any = None  # the last view's users, demands, weights, bounds, queues and records
    _wst: Any = None  # after an integer step: (users, tasks held, paths, per-task demands, usage, queues' usage)

    def _view(self, env: Environment) -> Optional[_View]:
        prev, self._wprev = self._wprev, None
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
            wc = self._wcap = (cap, ints, tuple(L // c for c in ints) if ints else None, tuple(cap))
        if wc[1] is None:
            return None
        users = env.users
        got = self._spliced(env, prev) if prev is not None else None
        splice = None
        if got is None:
            rl = list(map(self._wusers.get, users))
            changed = self._checked(env, rl)
            if changed is None:
                return None
        else:
            rl, splice = got
            changed = []  # the present apps whose record was built or whose task bound was read
            if rl and rl[-1] is None:  # one arrival
                if not self._record(env, len(rl) - 1, rl):
                    return None
                changed.append(len(rl) - 1)
        self._wprev = (users, env.demand, env.weight, env.tasks, env.user_queue, rl)
        W = tree.lcm_wn
        for x in set(map(_get_wn, rl)):
            if W % x:
                W = math.lcm(W, x)
        v = _View()
        v.env, v.J, v.R, v.C, v.Lc, v.cluster, v.W, v.recs = env, env.n_users, len(cap), wc[1], wc[2], wc[3], W, rl
        v.changed, v.splice = changed, splice
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

    def _spliced(self, env: Environment, prev: tuple) -> Optional[tuple]:
        """The apps' records from the last view's (``prev``: its users, demands, weights, bounds, queues and
        records) where this step's apps are the same, with one more at the end or one fewer, all else EQUAL
        (compared as tuples: the same values give the same records); a new app's place is ``None``.  With the
        splice ``(0: the same, 1: one more, 2: one fewer; its position; the last view's users)``; else ``None``."""
        users, pu = env.users, prev[0]
        n, pn = len(users), len(pu)
        if n == pn:
            if users == pu and env.demand == prev[1] and env.weight == prev[2] and env.tasks == prev[3] and \
                    env.user_queue == prev[4]:
                return list(prev[5]), (0, 0, pu)
        elif n == pn + 1:
            if users[:-1] == pu and env.demand[:-1] == prev[1] and env.weight[:-1] == prev[2] and \
                    env.tasks[:-1] == prev[3] and env.user_queue[:-1] == prev[4]:
                return prev[5] + [None], (1, n - 1, pu)
        elif n == pn - 1:
            gone = set(pu).difference(users)
            if len(gone) == 1:
                i = pu.index(gone.pop())
                if users == pu[:i] + pu[i + 1:] and env.demand == prev[1][:i] + prev[1][i + 1:] and \
                        env.weight == prev[2][:i] + prev[2][i + 1:] and env.tasks == prev[3][:i] + prev[3][i + 1:] \
                        and env.user_queue == prev[4][:i] + prev[4][i + 1:]:
                    return prev[5][:i] + prev[5][i + 1:], (2, i, pu)
        return None

    def _checked(self, env: Environment, rl: list) -> Optional[list]:
        """The apps' records ``rl`` (``None``: none yet) checked against the step's apps by identity and built
        anew where their demand, weight or queue changed, their bound read where it changed: the apps whose
        record was built or bound read (``None`` where an app is outside the integer step's conditions)."""
        changed: list = []
        if None in rl:  # new apps
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
        return changed

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
        key = (v.Lc, v.W)
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
        flt = getattr(self, "_float_out", False)  # a float run: the counts as floats (exact: whole numbers)
        rows = _FLOAT_ROWS if flt else _WHOLE_ROWS
        if max(held, default=0) >= len(rows):
            rows.extend([(float(h) if flt else whole(h),) for h in range(len(rows), max(held) + 1)])
        return Allocation(env, tuple(map(rows.__getitem__, held)), self.name, not flt,
                          {"preempted": tuple(self.preempted)})

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

        sp = v.splice
        if sp is not None and sp[2] is pusers:  # the apps as the last step's, one more or one fewer
            if sp[0] == 0:
                held = list(pheld)
            elif sp[0] == 1:
                held = pheld + [0]
                u = users[-1]
                start[u] = t
                last_fair[u] = t
            else:
                i = sp[1]
                u = pusers[i]
                h = pheld[i]
                if h:
                    release(h, pD[i], ppath[i])
                    for _ in range(h):
                        launched.remove(u)
                report.pop(u, None)
                self._per_user.pop(u, None)
                recs.pop(u, None)
                last_fair.pop(u, None)
                start.pop(u, None)
                held = pheld[:i] + pheld[i + 1:]
        elif pusers == users:
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
