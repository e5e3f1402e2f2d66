"""The literal server procedure of 002 Table II / 000 Algorithm I (beta steps), as a reference.

The mechanisms use the water filling of ``algorithm.py``; the tests check both give the same column.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from mechverify.model import Environment

from .shares import ZERO, PSDSFError, gamma_matrix, server_demands

__all__ = ["server_procedure_table2"]


def server_procedure_table2(env: Environment, x: Sequence[Sequence[Any]], s: int, mode: str = "rdm",
                            max_steps: int = 10000) -> tuple[list[Fraction], int]:
    """The literal server procedure of 002 Table II / 000 Algorithm I for server ``s`` (exact).

    Returns ``(column, number of Update-Allocation calls)``.  Reading of the printed steps:
    ``S* = min key`` over ``N_s`` (eq. (16)), ``N*`` its minimisers, ``R*`` the saturated resources
    demanded by some user of ``N*``.  A resource ``r`` of ``R*`` passes the Corollary-1 test when no
    user holding ``r`` at ``s`` has a key above ``S*`` (the printed test takes the max over ``N_s``;
    users already removed from ``N_s`` that hold ``r`` have keys <= S*, so this is the same test and
    is well defined when no user of ``N_s`` holds ``r``); then every user demanding ``r`` leaves
    ``N_s`` (eq. (17)).  Otherwise Update-Allocation: ``n_r`` = holder of ``r`` with the largest key
    (ties: lowest index), free resources ``f`` plus the release of every ``n_r``,
    ``D* = sum_{N*} w gamma d``, ``z* = min_r f_r / D*_r``, and beta the LARGEST value in (0, 1] with
    ``S* + beta z* <= (x_{n_r} - beta x[n_r,s]) / (w gamma)`` for every ``r``."""
    J = env.n_users
    g = gamma_matrix(env)
    col = [x[j][s] for j in range(J)]
    other = [sum((x[j][t] for t in range(env.n_servers) if t != s), ZERO) for j in range(J)]
    N = [j for j in range(J) if g[j][s]]
    dem_list, cap = server_demands(env, s, mode, N, g)
    dem = {j: dem_list[u] for u, j in enumerate(N)}
    R = len(cap)

    def key(j):
        return (other[j] + col[j]) / (env.weight[j] * g[j][s])

    steps = 0
    while N:
        kk = {j: key(j) for j in N}
        Sstar = min(kk.values())
        Nstar = [j for j in N if kk[j] == Sstar]
        used = [sum((col[j] * dem[j][r] for j in dem), ZERO) for r in range(R)]
        Rstar = [r for r in range(R) if used[r] >= cap[r] and any(dem[j][r] > 0 for j in Nstar)]
        passed = None
        for r in Rstar:
            holders = [m for m in dem if col[m] * dem[m][r] > 0]
            if all(key(m) <= Sstar for m in holders):
                passed = r
                break
        if passed is not None:
            N = [j for j in N if dem[j][passed] <= 0]
            continue
        steps += 1
        if steps > max_steps:
            raise PSDSFError(f"Table II server procedure at {env.servers[s]}: more than {max_steps} "
                             f"Update-Allocation steps")
        f = [cap[r] - used[r] for r in range(R)]
        released = []
        for r in Rstar:
            cands = [j for j in N if col[j] * dem[j][r] > 0]
            nr = max(cands, key=lambda j: (kk[j], -j))
            if nr not in released:
                released.append(nr)
        for nr in released:
            for r in range(R):
                f[r] += col[nr] * dem[nr][r]
        Dstar = [sum((env.weight[j] * g[j][s] * dem[j][r] for j in Nstar), ZERO) for r in range(R)]
        zstar = min(f[r] / Dstar[r] for r in range(R) if Dstar[r] > 0)
        beta = Fraction(1)
        for nr in released:
            wg = env.weight[nr] * g[nr][s]
            b = (kk[nr] - Sstar) / (zstar + col[nr] / wg)
            if b < beta:
                beta = b
        if beta <= 0:
            raise PSDSFError("Table II server procedure: beta = 0 (no progress)")
        for j in Nstar:
            col[j] += beta * env.weight[j] * g[j][s] * zstar
        for nr in released:
            col[nr] = (1 - beta) * col[nr]
    return col, steps
