"""``yarn-drf-preempt``'s fill in Python integers (:class:`WholeFill`, a base of
:class:`mechanisms.ports.yarn.preempt_whole.WholeSteps`): ``Preempting._fill`` -- ``yarn-drf``'s placement
(:func:`mechanisms.ports.yarn.drf.place`) on the free pool -- on the integer step's view, the descent of
:class:`mechanisms.ports.yarn.drf._Incremental` on integer keys (:mod:`mechanisms.ports.yarn.preempt_whole`'s
docstring says why they order as the comparator does)."""
from __future__ import annotations

import heapq
from typing import Any, Optional

from mechverify.numbers import InstanceError
from mechverify.policies import MAX_TASKS

__all__ = ["WholeFill"]


class WholeFill:
    """The fill of an integer step (its view ``v``: :class:`mechanisms.ports.yarn.preempt_whole._View`), on the
    run's ``launched``, ``name`` and the step's ``_tree``, ``_base`` and ``_qkey``."""

    def _fill_whole(self, v: Any, held: list, left: list, quse: list) -> None:
        """``Preempting._fill``: the ``yarn-drf`` descent on the free pool when some pending app's task fits
        (``held``, ``left`` and ``quse`` updated)."""
        D, bound, pok, elig = v.D, v.bound, v.pok, v.elig
        # pending (a nonzero request, tasks left; the update's apps are among them: it runs after the fill)
        pend = v.pend = [j for j, (p, b, h) in enumerate(zip(pok, bound, held)) if p and (b is None or h < b)]
        live = []  # pending, eligible, its task fits in the pool left: the apps place() starts with
        for j in pend:
            if elig[j]:
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

    def _place_whole(self, v: Any, tasks: list, left: list, quse: list, live: list) -> None:
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
