"""Where a whole task goes: the server a PLACEMENT rule picks among those the task fits on.

An ordering says WHO is served next (``mechverify.policies.progressive_filling``); a placement rule says
WHERE the task goes.  Every rule chooses among the same servers: those the user is eligible for where every
resource has at least the task's demand there (``env.d(j, s)``) left.  External resources are shared by
all servers, so they decide WHETHER a task fits, never where it goes.  Ties go to the lower server index
(instance order).  The rules (docs/orders-and-placement.md, "Placement"):

* ``first-fit`` -- the first fitting server in server order;
* ``best-fit`` -- the fitting server minimising seed 001's eq. (9) (Best-Fit DRFH, Sec. V-B),
  :func:`best_fit_score`: ``H(j, l) = || D_j / D_{j,r0} - cbar_l / cbar_{l,r0} ||_1`` -- the server whose
  remaining capacity is most like the task's demand in proportions;
* ``spread`` -- the fitting server with the most remaining dominant capacity, :func:`spread_score`: the
  largest free fraction ``remaining[s][r] / c[s][r]`` on its most used resource (the minimum over the
  resources it has), i.e. the least loaded server, as a spreading scheduler (Kubernetes' LeastAllocated)
  picks it;
* a function ``score(state, j, s)`` of the caller's: the fitting server with the smallest score.

Best-Fit DRFH (``mechanisms.paper.drfh_indivisible``) and progressive filling use the same eq. (9) and the
same incremental form of it (:class:`BestFitHeaps`).  Everything is exact (``Fraction``).

This module is core: it imports nothing above ``mechverify`` (docs/architecture.md).
"""
from __future__ import annotations

import heapq
from fractions import Fraction
from typing import Any, Callable, Iterable, Optional, Sequence

from .model import Environment
from .numbers import INF

__all__ = ["PLACEMENTS", "FIRST_FIT", "BEST_FIT", "SPREAD", "best_fit_score", "best_fit_scaled", "spread_score",
           "BestFitHeaps"]

FIRST_FIT, BEST_FIT, SPREAD = "first-fit", "best-fit", "spread"
#: the placement rules by name (a caller's function ``score(state, j, s)`` is the other kind)
PLACEMENTS = (FIRST_FIT, BEST_FIT, SPREAD)

_ZERO = Fraction(0)


def best_fit_score(d: Sequence[Any], rem: Sequence[Any], pooled: Sequence[Any]) -> Any:
    """Seed 001 eq. (9), ``H = || D / D_{r0} - cbar / cbar_{r0} ||_1``, for a task of demand ``d`` on a server
    with ``rem`` left: ``D`` and ``cbar`` are shares of the ``pooled`` capacity.  The paper normalises by
    resource 1; a task that does not demand resource 1 would divide by zero, so we normalise by the task's
    first demanded resource ``r0`` (identical whenever ``d[0] > 0``).  0 for a task that demands nothing; inf
    when the server has none of ``r0`` left."""
    r0 = next((r for r, v in enumerate(d) if v > 0), None)
    if r0 is None:
        return _ZERO
    D = [d[r] / pooled[r] if pooled[r] else _ZERO for r in range(len(d))]
    cbar = [rem[r] / pooled[r] if pooled[r] else _ZERO for r in range(len(d))]
    if cbar[r0] == 0:
        return INF
    return sum((abs(D[r] / D[r0] - cbar[r] / cbar[r0]) for r in range(len(d))), _ZERO)


def best_fit_scaled(d: Sequence[int], rem: Sequence[int], weights: Sequence[int]) -> tuple[int, int]:
    """Eq. (9) for INTEGER demand ``d`` and remaining ``rem``, as ``(N, M)`` with ``H = c N / M`` for a constant
    ``c > 0`` that depends on the task alone -- so that two servers' ``H`` for one task compare as their ``N / M``
    do, in integers: ``D_r / D_r0 - cbar_r / cbar_r0 = (d_r rem_r0 - rem_r d_r0) P_r0 / (d_r0 rem_r0 P_r)``, so
    ``H = (P_r0 / (d_r0 L)) * sum_r |d_r rem_r0 - rem_r d_r0| (L / P_r) / rem_r0`` with ``L`` a common multiple of
    the pooled capacities ``P_r``.  ``weights[r] = L / P_r`` (0 where ``P_r = 0``: that term is 0 in eq. (9) too).
    ``M = 0`` (no ``r0`` left) stands for infinity.  A task demanding nothing: ``(0, 1)``."""
    r0 = next((r for r, v in enumerate(d) if v > 0), None)
    if r0 is None:
        return 0, 1
    m, d0 = rem[r0], d[r0]
    return sum(abs(dr * m - rr * d0) * w for dr, rr, w in zip(d, rem, weights) if w), m


def spread_score(rem: Sequence[Any], cap: Sequence[Any]) -> Any:
    """Minus the server's remaining dominant capacity: ``-min`` over the resources it has (``cap[r] > 0``) of
    ``rem[r] / cap[r]``, the free fraction of its most used resource (0 for a server with no resource at all).
    The smallest score is the least loaded server."""
    free = [rem[r] / c for r, c in enumerate(cap) if c > 0]
    return -min(free) if free else _ZERO


class BestFitHeaps:
    """Best-fit's server choice without rescanning every server at every step: eq. (9) ``H(j, l)`` changes only
    at the server where a task was just placed, so each user keeps a heap of ``(H, l, version)`` and
    :meth:`changed` pushes the new key of that one server (older entries of it are skipped as stale).  The same
    exact values as :func:`best_fit_score` (``D_j / D_{j,r0}`` is computed once per demand vector,
    ``cbar_l / cbar_{l,r0}`` once per server change), so the same server as the scan, ties included.

    ``remaining`` is the caller's list of per-server remaining capacities (read, never written); ``demand(j,
    s)`` the task's demand on a server (default ``env.demand[j]``; progressive filling passes ``env.d``, which
    reads per-server demands)."""

    def __init__(self, env: Environment, remaining: list, pooled: Sequence[Any],
                 demand: Optional[Callable[[int, int], Sequence[Any]]] = None) -> None:
        self.env, self.remaining, self.pooled = env, remaining, pooled
        self.demand = demand if demand is not None else (lambda j, s: env.demand[j])
        self._per_server = bool(env.server_demand) and demand is not None
        self._ratio: dict[Any, Any] = {}  # user (or (user, server)) -> (r0, D / D_r0), (r0, None) or None
        self._cbar: list[dict[int, Any]] = [{} for _ in range(env.n_servers)]  # [server][r0] -> cbar / cbar_r0
        self.version = [0] * env.n_servers
        self.heaps: dict[int, list] = {}

    def _ratio_of(self, j: int, s: int) -> Any:
        rk = (j, s) if self._per_server else j
        got = self._ratio.get(rk, False)
        if got is not False:
            return got
        d, pooled = self.demand(j, s), self.pooled
        r0 = next((r for r, v in enumerate(d) if v > 0), None)
        if r0 is None:
            got = None  # demands nothing: H = 0
        elif not pooled[r0]:
            got = (r0, None)  # demands a resource the cluster has none of
        else:
            D = [d[r] / pooled[r] if pooled[r] else _ZERO for r in range(len(d))]
            got = (r0, [D[r] / D[r0] for r in range(len(d))])
        self._ratio[rk] = got
        return got

    def score(self, j: int, s: int) -> Any:
        """``best_fit_score(demand(j, s), remaining[s], pooled)``, from the caches."""
        rj = self._ratio_of(j, s)
        if rj is None:
            return _ZERO
        r0, a = rj
        if a is None:  # as best_fit_score (such a task never fits anywhere)
            return best_fit_score(self.demand(j, s), self.remaining[s], self.pooled)
        b = self._cbar[s].get(r0, False)
        if b is False:
            rem, pooled = self.remaining[s], self.pooled
            c0 = rem[r0] / pooled[r0]
            b = None if c0 == 0 else [(rem[r] / pooled[r] if pooled[r] else _ZERO) / c0 for r in range(len(rem))]
            self._cbar[s][r0] = b  # None: no r0 left there
        if b is None:
            return INF
        return sum((abs(a[r] - b[r]) for r in range(len(a))), _ZERO)

    def pick(self, j: int, servers: Iterable[int], usable: Callable[[int], bool]) -> Optional[int]:
        """The server with the lowest ``(H, index)`` among ``usable`` ones; ``servers`` (the user's candidates)
        seed the user's heap on its first pick.  A server that is not usable is dropped from the heap for good:
        the caller guarantees that a server that cannot take the user's task now never can again (capacities
        only shrink).  ``None`` when none is usable."""
        h = self.heaps.get(j)
        if h is None:
            h = self.heaps[j] = [(self.score(j, s), s, self.version[s]) for s in servers]
            heapq.heapify(h)
        while h:
            _, s, v = h[0]
            if v == self.version[s] and usable(s):
                return s
            heapq.heappop(h)  # stale (the server changed since) or no longer usable (never again)
        return None

    def changed(self, s: int) -> None:
        """Server ``s``'s remaining capacity changed (a task was placed there): every heap gets its new key."""
        self.version[s] += 1
        self._cbar[s].clear()
        for u, h in self.heaps.items():
            heapq.heappush(h, (self.score(u, s), s, self.version[s]))
