"""The DRFH fill's server search on many servers (``drfh_indivisible._fill``, seed 001 Sec. V-B): the remaining
capacities as an ``S x R`` int64 array of exact scaled integers (``Rows``: the same as Python rows, made when read),
First-Fit's scan and Best-Fit's eq. (9) screened in floats and decided exactly (``VectorServers``).  The same
placements as the per-user scan: tests/mechanisms/test_drfh_rule.py."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Optional

from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.placement import best_fit_scaled

__all__ = ["Rows", "VectorServers"]


class Rows(dict):
    """The remaining capacities of the vectorised fill as Python integers, a server's row made from the int64
    array when first read (before the array is written for it: the fill places, then updates the array)."""

    def __init__(self, A: Any) -> None:
        super().__init__()
        self.A = A

    def __missing__(self, s: int) -> list:
        row = self[s] = self.A[s].tolist()
        return row


class VectorServers:
    """The fill's server search on many servers: the remaining capacities (integers) also as an ``S x R`` int64
    array, each user's fitting servers found by one numpy comparison instead of a set per user.  The same loop
    as ``fill_whole_tasks`` (the lowest key among the users with a fitting server gets one task on its fitting
    server with the lowest key), lazily: users wait in a heap by key, and the one on top with no fitting server
    left leaves it for good (capacities only shrink during a fill).

    * First-Fit: each user keeps the index below which no server fits it (none will again); its next server is
      that one when it still fits, else found by a numpy scan from there.
    * Best-Fit: eq. (9) in floats for every server at once, per demand direction (users with the same ``D_j /
      D_{j,r0}`` share it; after a placement only that server's value is recomputed, when next read), as a
      SCREEN: the servers whose float value is within its rounding bound of the smallest are the candidates,
      and the smallest EXACT value among them wins (eq. (9) rearranged in integers, ``best_fit_scaled``; ties to
      the lower index).  A float of eq. (9) is a handful of correctly rounded operations on numbers exact in
      float64 (the scaled integers are below 2^52), so its error is below 2^-50 times the sum of the magnitudes of
      its terms; the screen allows 10^-12 times that sum on either side."""

    def __init__(self, env: Environment, remaining: Any, A: Any, demand: list, pooled: tuple, best_fit: bool) -> None:
        import numpy as np

        self.np, self.env, self.remaining, self.demand, self.best_fit = np, env, remaining, demand, best_fit
        self.A = A
        self.D: dict[int, Any] = {}  # user -> its demand as an int64 row
        self.mask: dict[int, Any] = {}  # user -> its eligible servers as a bool row (users eligible everywhere: none)
        self.first: dict[int, int] = {}  # First-Fit: user -> no server below this index fits it
        self.alike: Any = None  # Best-Fit: the servers alike the last pick's, when a run may take them in turn
        if best_fit:
            self.pooled_list = [float(p) if p else 0.0 for p in pooled]
            # best_fit_scaled's weights L / P_r (the pooled capacities are integers here: scaled)
            self.pooled_int = [int(p) for p in pooled]
            L = math.lcm(*(p for p in self.pooled_int if p))
            self.weights = [L // p if p else 0 for p in self.pooled_int]
            self.pooled_f = np.array(self.pooled_list)
            self.log: list[int] = []  # the servers placed on, in order (what each demand has not yet re-read)
            # (scaled demand, eligible) -> [r0, D / D_r0 in floats, eligible mask, eq. (9) -+ bound, log read so far]
            self.direction: dict[Any, list] = {}

    def _row(self, j: int) -> Any:
        got = self.D.get(j)
        if got is None:
            np = self.np
            got = self.D[j] = np.array(self.demand[j], dtype=np.int64)
            el = self.env.eligible[j]
            if len(el) < self.env.n_servers:
                m = np.zeros(self.env.n_servers, dtype=bool)
                m[sorted(el)] = True
                self.mask[j] = m
        return got

    def fill(self, users: list, total: list, per: dict, limit: list, place: Callable, max_steps: int,
             too_many: str) -> int:
        """The loop, users keyed ``(total[u] x per[u], u)`` and bounded by ``limit``; ``place(j, s, k)`` commits
        ``k`` tasks of ``j`` on ``s``; more than ``max_steps`` tasks in all: ``InstanceError(too_many)``.  First-Fit commits at once every task the loop would give the same user on
        the same server in a row: while its key stays below the next user's (``key`` grows by ``per`` a task),
        its bound allows, and the server has room (it stays the first that fits)."""
        import heapq

        env = self.env
        zero = {j for j in users if all(v == 0 for v in env.demand[j])}  # only with a finite bound (the model's guard)
        heap = [(total[j] * per[j], j) for j in users if j not in zero or env.tasks[j] is not None]
        heapq.heapify(heap)
        steps = 0
        while heap:
            j = heap[0][1]
            s = min(env.eligible[j]) if j in zero else self._pick(j)
            if s is None:
                heapq.heappop(heap)
                continue
            k, run = 1, None
            if j in zero:
                k = limit[j] - total[j]  # its key stays (0, j): every task in a row
            elif not self.best_fit:
                k = self._run_length(j, s, heap, total, per, limit)
            elif self.alike is not None and len(self.alike) > 1:
                # Best-Fit's run: one task on each server alike s (its exact minimum), in index order
                run = self.alike[:self._allowance(j, len(self.alike), heap, total, per, limit)]
            steps += k if run is None else len(run)
            if steps > max_steps:
                raise InstanceError(too_many)
            if run is None:
                place(j, s, k)
                self.A[s] -= k * self._row(j)
                if self.best_fit:
                    self.log.append(s)
            else:
                lst = run.tolist()
                for t in lst:
                    place(j, t, 1)
                self.A[run] -= self._row(j)
                self.log.extend(lst)
            if limit[j] is None or total[j] < limit[j]:
                heapq.heapreplace(heap, (total[j] * per[j], j))
            else:
                heapq.heappop(heap)
        return steps

    def _run_length(self, j: int, s: int, heap: list, total: list, per: dict, limit: list) -> int:
        """How many tasks in a row the loop gives ``j`` (on top of ``heap``) on ``s``, its first fitting server."""
        rem, d = self.remaining[s], self.demand[j]
        k = min(c // v for c, v in zip(rem, d) if v > 0)  # room on s (j demands something: not a zero user)
        return self._allowance(j, k, heap, total, per, limit)

    @staticmethod
    def _allowance(j: int, k: int, heap: list, total: list, per: dict, limit: list) -> int:
        """At most ``k``: how many tasks in a row ``j`` (on top of ``heap``) gets before another user's turn -- its
        bound, and while ``(total + t) x per`` stays below the runner-up's key (ties: the lower index first)."""
        if limit[j] is not None:
            k = min(k, limit[j] - total[j])
        if len(heap) > 1:
            nxt = min(heap[1:3])
            gap = nxt[0] - total[j] * per[j]
            k = min(k, 1 + (gap // per[j] if j < nxt[1] else (gap - 1) // per[j]))
        return max(k, 1)

    def _fits_from(self, j: int, lo: int) -> Any:
        m = (self.A[lo:] >= self._row(j)).all(axis=1)
        mask = self.mask.get(j)
        return m if mask is None else m & mask[lo:]

    def _pick(self, j: int) -> Optional[int]:
        if not self.best_fit:
            lo = self.first.get(j, 0)
            self._row(j)  # (its eligibility mask)
            if lo < self.env.n_servers and (j not in self.mask or self.mask[j][lo]) and \
                    all(c >= d for c, d in zip(self.remaining[lo], self.demand[j])):
                return lo
            m = self._fits_from(j, lo)
            i = int(m.argmax()) if len(m) else 0
            if not len(m) or not m[i]:
                self.first[j] = self.env.n_servers
                return None
            self.first[j] = lo + i
            return lo + i
        np = self.np
        self.alike = None
        lo, hi = self._class(j)
        m = hi.min()
        if m == np.inf:  # no server fits
            return None
        cand = np.flatnonzero(lo <= m)
        if len(cand) == 1:
            return int(cand[0])
        rows = self.A[cand]
        if (rows == rows[0]).all():  # servers alike (the usual tie): the lowest index
            self._alike(j, cand, rows[0].tolist())
            return int(cand[0])
        # eq. (9) compared exactly in integers (best_fit_scaled: H up to a factor of the task's own), once per
        # distinct remaining capacity among the candidates, at its lowest server; the lowest index among equals
        first: dict = {}
        while len(cand) and len(first) < 8:  # the usual case: a few distinct rows, many servers each (numpy)
            same = (rows == rows[0]).all(axis=1)
            first[tuple(rows[0].tolist())] = int(cand[0])
            cand, rows = cand[~same], rows[~same]
        for s, rem in zip(cand.tolist(), map(tuple, rows.tolist())):
            first.setdefault(rem, s)
        d, w, best = self.demand[j], self.weights, None
        for rem, s in first.items():
            n, m = best_fit_scaled(d, rem, w)
            if best is None or n * best[1] < best[0] * m or (n * best[1] == best[0] * m and s < best[2]):
                best = (n, m, s)
        return best[2]

    def _alike(self, j: int, cand: Any, rem: list) -> None:
        """``cand``, servers with the same remaining capacity ``rem``, are the candidates of ``j``'s pick: every other
        server's eq. (9) is above theirs (the screen's bound is rigorous), so the loop gives ``j`` the first of them,
        then -- while ``j`` stays on top -- the next, and so on, PROVIDED a server that took a task ranks after the
        ones still alike: eq. (9) exactly larger there (or no room left for another task).  Then ``self.alike`` is
        ``cand`` (the fill commits that run at once)."""
        d, w = self.demand[j], self.weights
        after = [c - v for c, v in zip(rem, d)]
        if any(c < v for c, v in zip(after, d)):
            self.alike = cand
            return
        n0, m0 = best_fit_scaled(d, rem, w)
        n1, m1 = best_fit_scaled(d, after, w)
        if m1 == 0 or n1 * m0 > n0 * m1:  # (M = 0: infinite)
            self.alike = cand

    def _screen(self, j: int, r0: int, af: list, mask: Any, idx: Any) -> tuple:
        """Eq. (9) in floats minus and plus its bound at the servers ``idx`` (``None``: all), ``inf`` where no task
        of ``j`` fits (or ``mask`` excludes the server)."""
        np = self.np
        A, pf = (self.A if idx is None else self.A[idx]), self.pooled_f
        with np.errstate(divide="ignore", invalid="ignore"):
            cbar = np.where(pf > 0, A / np.where(pf > 0, pf, 1.0), 0.0)
            b = cbar / cbar[:, r0:r0 + 1]
            h = np.abs(np.array(af) - b).sum(axis=1)
            bound = 1e-12 * (sum(abs(v) for v in af) + np.abs(b).sum(axis=1))
        fit = (A >= self._row(j)).all(axis=1) & (A[:, r0] > 0)
        if mask is not None:
            fit &= mask if idx is None else mask[idx]
        return np.where(fit, h - bound, np.inf), np.where(fit, h + bound, np.inf)

    def _class(self, j: int) -> tuple:
        """For ``j``'s demand and eligible servers (users with the same share it): per server, eq. (9) in
        floats minus and plus its screening bound where a task fits (``inf`` where none does).  Computed for every
        server at the demand's first pick; after that only at the servers placed on since (the log), in Python
        floats -- the same correctly rounded operations, within the same bound."""
        np = self.np
        d = self.demand[j]
        key = (d, self.env.eligible[j])
        got = self.direction.get(key)
        if got is None:
            r0 = next(r for r, v in enumerate(d) if v > 0)  # (a zero user never gets here)
            P = self.pooled_int
            af = [float(Fraction(d[r] * P[r0], P[r] * d[r0])) if P[r] else 0.0 for r in range(len(d))]  # D_r / D_r0
            self._row(j)  # (its eligibility mask)
            mask = self.mask.get(j)
            lo, hi = self._screen(j, r0, af, mask, None)
            got = self.direction[key] = [r0, af, mask, lo, hi, len(self.log)]
            return lo, hi
        r0, af, mask, lo, hi, seen = got
        if len(self.log) - seen > 32:  # many changed (a run): in numpy, as at the first pick
            idx = np.unique(np.array(self.log[seen:], dtype=np.int64))
            lo[idx], hi[idx] = self._screen(j, r0, af, mask, idx)
            got[5] = len(self.log)
        elif seen < len(self.log):
            pf = self.pooled_list
            changed = list(set(self.log[seen:]))
            for s, rem in zip(changed, self.A[changed].tolist()):
                if (mask is not None and not mask[s]) or rem[r0] <= 0 or any(c < v for c, v in zip(rem, d)):
                    lo[s] = hi[s] = np.inf
                    continue
                c0 = rem[r0] / pf[r0]
                b = [(rem[r] / pf[r] if pf[r] > 0 else 0.0) / c0 for r in range(len(rem))]
                h = sum(abs(x - y) for x, y in zip(af, b))
                bound = 1e-12 * (sum(abs(v) for v in af) + sum(abs(v) for v in b))
                lo[s], hi[s] = h - bound, h + bound
            got[5] = len(self.log)
        return lo, hi
