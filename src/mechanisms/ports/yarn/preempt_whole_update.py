"""``yarn-drf-preempt``'s update in Python integers (:class:`WholeUpdate`, a base of
:class:`mechanisms.ports.yarn.preempt_whole.WholeSteps`): ``Preempting._update_reference``'s decisions and clocks,
and ``Preempting._preempt_for``, on the integer step's view (:mod:`mechanisms.ports.yarn.preempt_whole`, whose
docstring states the conditions and why each comparison is the reference's).  The sources are cited in
:mod:`mechanisms.ports.yarn.preempt`."""
from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any, Optional

from .preempt_calc import INF, _inf_sub, drc_compare, java_heap_order
from .preempt_whole_calc import FDC, R_DVEC, R_INT, Fair, Waited, drc_whole, max_ratio

__all__ = ["WholeUpdate"]

_INT_MAX = 2 ** 31 - 1


class WholeUpdate:
    """The update of an integer step (its view ``v``: :class:`mechanisms.ports.yarn.preempt_whole._View`), on
    the run's state: ``config``, the clocks ``last_min`` and ``last_fair``, ``launched``, ``preempted``, the
    desired shares kept (``_wdesired``) and the step's ``_tree``, ``_base`` and ``_use_whole``."""

    def _update_whole(self, v: Any, t: Any, held: list, left: list, quse: list) -> None:
        """``Preempting._update_reference``'s decisions and clocks on the view (module docstring): every queue's
        min-share clock (a queue with a min share restarts it when its usage equals its desired share, the
        reference's zero starvation; one without when nothing below it runs), then, queue by queue in the
        reference's order, the starvation of the apps with pending demand only (the others are never checked:
        the reference's loops run over the pending apps of a leaf)."""
        cfg = self.config
        tree = self._tree
        assert tree is not None
        env, R = v.env, v.R
        th = cfg.utilization_threshold
        if th.__class__ is not Fraction:
            th = Fraction(th)
        if not (cfg.enabled and any((c - lv) * th.denominator > th.numerator * c for lv, c in zip(left, v.C))):
            return  # shouldAttemptPreemption (utilisation = the largest used / capacity; capacities > 0)
        recs, bound = v.recs, v.bound
        at = v.at
        last_min, last_fair = self.last_min, self.last_fair
        waited = Waited(t)
        # the queues' demand (integers, inf), summed only where a queue with a min share is above
        dem_q: dict = {}
        gpath = tree.gpath
        for q, members in at.items():
            if q is None or not gpath[q]:
                continue
            tot = [sum(col) for col in zip(*[recs[j][R_DVEC] for j in members])]
            for a in gpath[q]:
                acc = dem_q.get(a)
                if acc is None:
                    dem_q[a] = list(tot)
                else:
                    for r in range(R):
                        acc[r] += tot[r]
        # every queue's clock; a queue's min-share starvation where apps with pending demand are at it
        pend: dict = {}
        uq = env.user_queue
        for j in v.pend:  # the fill's pending apps, less those it gave their last tasks
            b = bound[j]
            if b is None or held[j] < b:
                q = uq[j]
                got = pend.get(q)
                if got is None:
                    pend[q] = [j]
                else:
                    got.append(j)
        guar = tree.guar
        zeros = [0] * R
        zero_t = Fraction(0)
        for q, name in tree.idle:  # no min share: the clock restarts when nothing below it runs
            if quse[q] == zeros:
                last_min[name] = t
            elif name not in last_min:
                last_min[name] = zero_t
        ms_q: dict = {}
        for q, name in tree.guarded:
            dem = dem_q.get(q) or zeros
            if q in pend:
                ms_q[q] = self._min_share_whole(v, tree, q, quse[q], dem, t, waited)
            elif self._desired_whole(v, tree, q, dem) == quse[q]:  # (_min_share_whole's clock, inline)
                last_min[name] = t
            elif name not in last_min:
                last_min[name] = zero_t
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
                fc = rec[FDC]
                if fc is None or fc[0] is not f or fc[1] is not C or fc[2] is not rec[R_DVEC]:
                    fd = [min(x * fst, d) for x, d in zip(f, rec[R_DVEC])]
                    fc = rec[FDC] = (f, C, rec[R_DVEC], fd) + max_ratio(fd, C) + max_ratio(rec[R_INT], C)
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
                mine = [x if x > 0 else 0 for x in [_inf_sub(d, u) - f for d, u, f in zip(recs[j][R_DVEC], use, fs)]]
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
            self._preempt_whole(v, j, starvation[j], fair, t)

    def _desired_whole(self, v: Any, tree: Any, q: int, dem: list) -> list:
        """Queue ``q``'s desired share, ``Resources.min(calculator, cluster, minShare, demand)``, kept while its
        demand ``dem`` and the capacity are unchanged."""
        hit = self._wdesired.get(q)
        if hit is not None and hit[1] is v.C and hit[0] == dem:
            return hit[2]
        g = list(tree.guar[q])  # type: ignore[arg-type]
        desired = g if drc_whole(g, dem, v.C) <= 0 else list(dem)
        self._wdesired[q] = (list(dem), v.C, desired)
        return desired

    def _min_share_whole(self, v: Any, tree: Any, q: int, use: list, dem: list, t: Any,
                         waited: Optional[Waited]) -> list:
        """``Preempting._min_share`` of a queue with a min share, in integers; the desired share kept while the
        queue's demand is unchanged.  Its clock, and its starvation when ``waited`` (``None``: nobody reads it)."""
        path = tree.name[q]
        last_min = self.last_min
        if path not in last_min:
            last_min[path] = Fraction(0)
        desired = self._desired_whole(v, tree, q, dem)
        if desired == use:  # the starvation desired - usage is the zero vector (usage is finite)
            last_min[path] = t
        if waited is None or waited.short(last_min[path], self.config.min_share_timeout):
            return [0] * v.R
        return [INF if a == INF else a - b for a, b in zip(desired, use)]

    def _preempt_whole(self, v: Any, j: int, starvation: list, fair: Fair, t: Any) -> None:
        """``Preempting._preempt_for`` in integers: the containers that may be preempted for app ``j`` (oldest
        first; an app's container may go while its usage after losing it and those already chosen or marked,
        ``(h - m - 1)`` tasks of its per-task demand, is not below its fair share -- ``below`` on the two sides'
        largest shares, each app's computed once per call), the starved app's tasks on the freed pool."""
        env = v.env
        users = env.users
        launched = self.launched
        counts = Counter(launched)
        held = [counts.get(u, 0) for u in users]
        d, b = v.D[j], v.bound[j]
        s0 = starvation[0]
        if d[0] == 0:
            if not s0 > 0:
                return
            k: Any = _INT_MAX
        elif s0 == INF:
            k = _INT_MAX
        elif s0.__class__ is Fraction:
            k = s0.numerator // (s0.denominator * d[0])
        else:
            k = s0 // d[0]
        if b is not None and b - held[j] < k:
            k = b - held[j]
        if k <= 0:
            return
        C, D = v.C, v.D
        idx = {u: n for n, u in enumerate(users)}
        free = list(C)  # the pool left
        for a, h in enumerate(held):
            if h:
                for r, dv in enumerate(D[a]):
                    free[r] -= h * dv
        thr: dict = {}  # app -> (h - m - 1 tasks are not below its fair share iff (h - m - 1)+ x [0] >= [1])
        marked: set = set()
        mcount: dict = {}  # app -> its containers marked
        found = 0
        for _ in range(min(k, len(launched) + 1)):
            potential = list(free)
            chosen = []
            cons: dict = {}  # app -> its containers chosen this round
            ok = False
            for pos, owner in enumerate(launched):
                if pos in marked:
                    continue
                a = idx[owner]
                T = thr.get(a)
                if T is None:
                    dn, dd = max_ratio(D[a], C)
                    fn, fd = max_ratio(fair[a], C)
                    T = thr[a] = (dn * fd, fn * dd)
                r = held[a] - mcount.get(a, 0) - cons.get(a, 0) - 1
                if (r if r > 0 else 0) * T[0] >= T[1]:  # not below its fair share after losing it
                    chosen.append(pos)
                    cons[a] = cons.get(a, 0) + 1
                    for i, dv in enumerate(D[a]):
                        potential[i] += dv
                if all(x <= p for x, p in zip(d, potential)):
                    ok = True
                    break
            if not ok:
                break
            found += 1
            marked.update(chosen)
            for a, c in cons.items():
                mcount[a] = mcount.get(a, 0) + c
        if not marked:
            return
        victims = tuple(launched[p] for p in sorted(marked))
        launched = [u for p, u in enumerate(launched) if p not in marked]
        for u in victims:  # their tasks go back to the pool
            for r, dv in enumerate(D[idx[u]]):
                free[r] += dv
        got = 0
        uj = users[j]
        while got < found and all(x <= f for x, f in zip(d, free)):
            launched.append(uj)
            for r, x in enumerate(d):
                free[r] -= x
            got += 1
        self.launched = launched
        self.preempted.append((t, uj, victims))
