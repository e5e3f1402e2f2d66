"""``yarn-drf-preempt``'s fast step (:class:`FastSteps`, a base of :class:`mechanisms.ports.yarn.preempt.Preempting`):
the update and the free pool computed with less arithmetic and the same results as the literal step
(``Preempting(..., literal=True)``: the update as first written), held equal to it by
tests/mechanisms/test_yarn_preempt_fast.py."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.model import Environment

from ..java_go import treeset_order
from .drf import app_schedulable, whole
from .drf_policy import compare_prepared, prepare
from .preempt_calc import INF, _ZERO, _inf_sub, _nonneg, _total, drc_compare, fair_shares, java_heap_order

__all__ = ["FastSteps"]


class FastSteps:
    """The fast update (:meth:`_update_fast`) and free pool (:meth:`_free`, :meth:`_room_fast`) of a
    :class:`~mechanisms.ports.yarn.preempt.Preempting` run, on its state: ``config``, the caches ``_per_user``,
    ``_paths``, ``_shares_memo``, ``_desired``, the clocks ``last_min``, and its ``_held``, ``_room``,
    ``_fair_starvation`` and ``_preempt_for``."""

    def _free(self, env: Environment, held: Sequence[int]) -> Optional[list]:
        """The pool left (capacity less what the held tasks use), in integers, where the capacity and every
        holder's per-task demand are whole and the demands are the pool's (no per-server override); else ``None``."""
        if env.server_demand:
            return None
        left = []
        for c in env.capacity[0]:
            if c.__class__ is not Fraction or c.denominator != 1:
                return None
            left.append(c.numerator)
        R = len(left)
        for j, h in enumerate(held):
            if h:
                w = self._user(env, j, h)[4]
                if w is None:
                    return None
                for r in range(R):
                    left[r] -= w[r]
        return left

    def _room_fast(self, env: Environment, held: Sequence[int]) -> bool:
        """:meth:`_room` on :meth:`_free`'s integers (the pending flag :meth:`_user` keeps); ``_room`` itself where
        they do not apply."""
        left = self._free(env, held)
        if left is None:
            return self._room(env, held)
        for j in range(env.n_users):
            if self._user(env, j, held[j])[3] and 0 in env.eligible[j] and \
                    all(not dv or lv >= dv for lv, dv in zip(left, env.demand[j])):
                return True
        return False

    def _user(self, env: Environment, j: int, h: int) -> tuple:
        """What the update reads of app ``j`` holding ``h`` tasks, kept while its holding, per-task demand, task
        bound and weight are unchanged: ``(key, usage, demand, pending, the usage in integers or None, the demand
        in integers and ``inf`` or None, (cluster, DRF order key) or None)`` -- the reference's own expressions,
        computed once per holding."""
        u, d, b, w = env.users[j], env.demand[j], env.tasks[j], env.weight[j]
        c = self._per_user.get(u)
        if c is not None and c[0] == (h, d, b, w):
            return c
        bound = None if b is None else math.floor(b)
        usage = [h * dv for dv in d]
        demand = [INF if (bound is None and dv) else (bound or 0) * dv for dv in d]
        whole_u = [v.numerator for v in usage] if all(v.denominator == 1 for v in usage) else None
        whole_d = [v if v == INF else v.numerator for v in demand] \
            if all(v == INF or v.denominator == 1 for v in demand) else None
        c = ((h, d, b, w), usage, demand, any(d) and (bound is None or h < bound), whole_u, whole_d, None)
        self._per_user[u] = c
        return c

    def _app_key(self, c: tuple, u: str, cluster: Sequence[Any], ckey: tuple, w: Any) -> tuple:
        """The ``yarn-drf`` comparator's key of an app (min share 0: never needy) on a cluster of positive exact
        capacities with a positive exact weight: its fair ratios ``(u_r / c_r) / w`` in ``sortRatios`` order (a
        stable sort by descending usage ratio: the ratios are exact numbers, no NaN), compared position by
        position -- ``compare_ratios``' order; the start time ``1 + j`` (unique) breaks ties."""
        if c[6] is not None and c[6][0] == ckey:  # the cluster as integer pairs
            return c[6][1]
        ratios = [x / cr for x, cr in zip(c[1], cluster)]
        order = sorted(range(len(ratios)), key=ratios.__getitem__, reverse=True)  # stable, as Java's sort
        key = tuple(ratios[r] / w for r in order)
        self._per_user[u] = c[:6] + ((ckey, key),)
        return key

    def _update_fast(self, env: Environment, t: Any) -> None:
        """:meth:`_update_reference`'s decisions and clocks, computing less: what each app's holding gives (usage,
        demand, pending, DRF key) once per holding; the queues' usage and demand summed in one pass, in integers
        where whole; a queue without a min share needs only whether anything below it runs (its desired share is
        the zero vector: ``drc_compare(0, dem) <= 0`` for any ``dem >= 0``, so its starvation ``-usage`` leaves
        nothing for its apps); the apps of a leaf sorted by their key where the comparator is a total order
        (positive exact capacities and weights), else upstream's ``TreeSet`` as the reference fills it."""
        cfg = self.config
        J, R, Q = env.n_users, env.n_resources, env.n_queues
        cluster = env.total_capacity()
        held = self._held(env)
        info = [self._user(env, j, held[j]) for j in range(J)]
        usage = [c[1] for c in info]
        used = [_total([usage[j][r] for j in range(J) if held[j]]) for r in range(R)]
        util = max((u / c for u, c in zip(used, cluster) if c > 0), default=_ZERO)
        if not (cfg.enabled and cfg.utilization_threshold < util):
            return  # shouldAttemptPreemption: no update of the starvation clocks either
        paths = []
        for j in range(J):
            q = env.user_queue[j]
            p = self._paths.get(q)
            if p is None:
                p = self._paths[q] = env.user_path(j)
            paths.append(p)
        fair_u, _fair_q = fair_shares(env, paths, False, self._shares_memo)
        demand = [c[2] for c in info]
        # every queue's usage below it (integers where every usage below is whole) and its apps' demand
        use_i = [[0] * R for _ in range(Q)]
        dem_i = [[0] * R for _ in range(Q)]  # integers, inf where an app below is unbounded
        exact_q = [False] * Q  # some usage or demand below is not whole: summed exactly instead
        for j, p in enumerate(paths):
            wv, wd = info[j][4], info[j][5]
            for q in p:
                if wv is None or wd is None:
                    exact_q[q] = True
                else:
                    acc, dacc = use_i[q], dem_i[q]
                    for r in range(R):
                        acc[r] += wv[r]
                        dacc[r] += wd[r]
        by_q: dict = {}
        for j, p in enumerate(paths):
            for q in p:
                by_q.setdefault(q, []).append(j)
        fair_starv: dict = {}
        min_starv: dict = {}
        starved: list[int] = []
        leaves: dict = {}
        for j in range(J):
            leaves.setdefault(env.user_queue[j], []).append(j)
        fast_order = all(c.__class__ is Fraction and c > 0 for c in cluster)
        ckey = tuple((c.numerator, c.denominator) for c in cluster) if fast_order else None
        for q in [None] + list(range(Q)):
            members = leaves.get(q)
            if not members:
                if q is not None:
                    self._min_share_fast(env, q, use_i, dem_i, exact_q, by_q, usage, demand, cluster, t)
                continue
            apps = [j for j in members if info[j][3]]
            if fast_order and all(env.weight[j].__class__ is Fraction and env.weight[j] > 0 for j in apps):
                keys = {j: (self._app_key(info[j], env.users[j], cluster, ckey, env.weight[j]), j) for j in apps}
                apps.sort(key=keys.__getitem__)
            else:
                keyed = {j: prepare(app_schedulable(env, usage[j], j), cluster) for j in apps}
                apps = treeset_order(apps, lambda a, b: compare_prepared(keyed[a], keyed[b]))
            total = [_ZERO] * R
            for j in apps:
                s = self._fair_starvation(env, j, fair_u[j], demand[j], usage[j], cluster, t)
                fair_starv[j] = s
                if any(s):
                    if j not in starved:
                        starved.append(j)
                    total = [a + b for a, b in zip(total, s)]
                else:
                    break
            if q is None:
                continue
            ms = self._min_share_fast(env, q, use_i, dem_i, exact_q, by_q, usage, demand, cluster, t)
            if ms is None:
                continue  # no min share: nothing left for its apps (their min-share starvation stays 0)
            left = _nonneg([a - b for a, b in zip(ms, total)])
            for j in apps:
                if not any(left):
                    break
                fs = fair_starv.get(j) or [_ZERO] * R
                mine = _nonneg([_inf_sub(d, u) - f for d, u, f in zip(demand[j], usage[j], fs)])
                if drc_compare(mine, left, cluster) > 0:
                    mine = _nonneg([_inf_sub(a, b) for a, b in zip(mine, left)])
                    left = [_ZERO] * R
                else:
                    left = _nonneg([a - b for a, b in zip(left, mine)])
                min_starv[j] = mine
                if j not in starved:
                    starved.append(j)
        if not starved:
            return
        zero = [_ZERO] * R
        starvation = {j: [a + b for a, b in zip(fair_starv.get(j, zero), min_starv.get(j, zero))] for j in starved}

        def cmp(a: int, b: int) -> int:
            return -1 if all(x <= y for x, y in zip(starvation[a], starvation[b])) else 1

        for j in java_heap_order(starved, cmp):
            self._preempt_for(env, j, starvation[j], fair_u, cluster, t)

    def _min_share_fast(self, env, q, use_i, dem_i, exact_q, by_q, usage, demand, cluster, t) -> Optional[list]:
        """:meth:`_min_share` on the sums of :meth:`_update_fast`; ``None`` for a queue without a min share (its
        clock restarts when nothing below it runs; it leaves its apps nothing).  The desired share (the DRF
        comparison of the min share with the demand) is kept while the demand and the cluster are unchanged."""
        cfg = self.config
        R = env.n_resources
        path = env.queues[q]
        if path not in self.last_min:
            self.last_min[path] = Fraction(0)
        below_q = by_q.get(q, ())
        g = env.queue_guarantee[q]
        if g is None:
            if exact_q[q]:
                idle = not any(_total([usage[j][r] for j in below_q]) for r in range(R))
            else:
                idle = not any(use_i[q])
            if idle:
                self.last_min[path] = t
            return None
        if exact_q[q]:
            use_q = [_total([usage[j][r] for j in below_q]) for r in range(R)]
            dem = []
            for r in range(R):
                col = [demand[j][r] for j in below_q]
                dem.append(INF if any(v == INF for v in col) else _total(col))
            key = None
        else:
            use_q = [whole(v) for v in use_i[q]]
            key = (tuple(dem_i[q]), tuple((c.numerator, c.denominator) for c in cluster))
            hit = self._desired.get(q)
            if hit is not None and hit[0] == key:
                dem = None
            else:
                dem = [INF if v == INF else whole(v) for v in dem_i[q]]
        if dem is not None:
            if env.queue_max[q] is not None:
                dem = [min(a, m) for a, m in zip(dem, env.queue_max[q])]
            mins = list(g)
            desired = mins if drc_compare(mins, dem, cluster) <= 0 else dem
            if key is not None:
                self._desired[q] = (key, desired)
        else:
            desired = hit[1]
        starvation = [_inf_sub(a, b) for a, b in zip(desired, use_q)]
        if not any(starvation):
            self.last_min[path] = t
        timeout = cfg.min_share_timeout
        if timeout is None or t - self.last_min[path] < timeout:
            return [_ZERO] * R
        return starvation
