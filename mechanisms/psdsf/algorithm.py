"""One server's procedure of PS-DSF as water filling with head starts (the best response ``BR_s``).

Fix every column but server ``s``'s; ``h_j = x_j - x[j,s]`` is ``j``'s head start.  Theorem 1 restricted
to ``s`` is the bottleneck characterisation of max-min fairness of the keys ``(h_j + y_j)/(w_j gamma[j,s])``
over ``s``'s polytope, which is unique: ``BR_s`` is a function, and PS-DSF allocations are exactly the
fixed points ``x[., s] = BR_s(x)``.  :func:`waterfill` computes it exactly in at most ``2 x users``
events (raise a level; freeze the users of a resource when it saturates).  Why this is the paper's
server procedure: docs/psdsf.md, "The key observation".
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Optional, Sequence

from mechverify.model import Environment

from .shares import ZERO, Matrix, PSDSFError, gamma_matrix, server_demands

__all__ = ["waterfill", "server_response", "per_server_drf_start"]


def waterfill(heads: Sequence[Fraction], weights: Sequence[Fraction], demands: Sequence[Sequence[Fraction]],
               cap: Sequence[Fraction]) -> list[Fraction]:
    """Max-min fair column of one server for keys ``(h_u + y_u) / w_u`` (see module docstring).

    Exact; at most ``2 U`` events.  Every user must demand some resource of positive capacity and
    no resource of zero capacity (gamma > 0)."""
    U, R = len(heads), len(cap)
    start = [heads[u] / weights[u] for u in range(U)]
    frozen = [False] * U
    y = [ZERO] * U
    used_frozen = [ZERO] * R
    if U == 0:
        return y
    L = min(start)
    for _ in range(2 * U + 2):
        live = [u for u in range(U) if not frozen[u]]
        if not live:
            return y
        active = [u for u in live if start[u] <= L]
        waiting = [start[u] for u in live if start[u] > L]
        next_start = min(waiting) if waiting else None
        sat_level = None
        for r in range(R):
            rate = sum((weights[u] * demands[u][r] for u in active), ZERO)
            if rate <= 0:
                continue
            base = used_frozen[r] - sum((heads[u] * demands[u][r] for u in active), ZERO)
            lev = (cap[r] - base) / rate
            if sat_level is None or lev < sat_level:
                sat_level = lev
        if sat_level is None or (next_start is not None and next_start < sat_level):
            if next_start is None:
                raise PSDSFError("water filling: no resource limits the active users (gamma = inf?)")
            L = next_start
            continue
        L = max(L, sat_level)
        usage = [used_frozen[r] + sum(((L * weights[u] - heads[u]) * demands[u][r] for u in active), ZERO)
                 for r in range(R)]
        saturated = [r for r in range(R) if usage[r] >= cap[r] and any(demands[u][r] > 0 for u in live)]
        to_freeze = [u for u in live if any(demands[u][r] > 0 for r in saturated)]
        if not to_freeze:  # cannot happen: the saturating resource is demanded by an active user
            raise PSDSFError("water filling: a resource saturated without freezing anyone")
        for u in to_freeze:
            frozen[u] = True
            if start[u] <= L:
                y[u] = L * weights[u] - heads[u]
                for r in range(R):
                    used_frozen[r] += y[u] * demands[u][r]
    raise PSDSFError("water filling did not finish")  # pragma: no cover


def server_response(env: Environment, x: Sequence[Sequence[Any]], s: int, mode: str = "rdm",
                    users: Optional[Iterable[int]] = None, totals: Optional[Sequence[Fraction]] = None
                    ) -> list[Fraction]:
    """Server ``s``'s procedure: the column ``BR_s`` (exact) given every other column of ``x``.

    Uses only server ``s``'s capacities, the users' demands there, their weights and their totals
    elsewhere -- the information of 002 Sec. III-D.  ``users`` restricts the participants (active
    users); others get 0 at ``s``."""
    g = gamma_matrix(env)
    part = [j for j in (range(env.n_users) if users is None else users) if g[j][s]]
    col = [ZERO] * env.n_users
    if not part:
        return col
    heads = [sum((x[j][t] for t in range(env.n_servers) if t != s), ZERO) for j in part]
    weights = [env.weight[j] * g[j][s] for j in part]
    dem, cap = server_demands(env, s, mode, part, g)
    y = waterfill(heads, weights, dem, cap)
    for u, j in enumerate(part):
        col[j] = y[u]
    return col


def per_server_drf_start(env: Environment, mode: str = "rdm", users: Optional[Iterable[int]] = None) -> Matrix:
    """Algorithm I's initialisation: weighted DRF on every server separately (zero head starts)."""
    zero = [[ZERO] * env.n_servers for _ in range(env.n_users)]
    x = [row[:] for row in zero]
    ulist = None if users is None else list(users)
    for s in range(env.n_servers):
        col = server_response(env, zero, s, mode, ulist)
        for j in range(env.n_users):
            x[j][s] = col[j]
    return x
