"""The characterisations every PS-DSF output is checked against (002 Thm 1 / Thm 2, 000 Thm 1).

* RDM (Thm 1): every user has, at every eligible server, a *bottleneck* resource it demands that is
  saturated there and whose users all have keys no larger than its own.
* TDM (Thm 2): every server with an eligible user is fully time-shared, and a user holding tasks at a
  server has the smallest key there.
"""
from __future__ import annotations

from typing import Any, Sequence

from mechverify.allocation import feasibility_violations
from mechverify.model import Environment

from .shares import ZERO, gamma_matrix, keys

__all__ = ["theorem1_violations", "theorem2_violations", "characterisation_violations"]


def theorem1_violations(env: Environment, x: Sequence[Sequence[Any]]) -> list[str]:
    """002 Thm 1 (RDM): users without a bottleneck resource at an eligible server, plus feasibility."""
    out = list(feasibility_violations(env, x, "rdm"))
    if out:
        return out
    k = keys(env, x)
    J, S, R = env.n_users, env.n_servers, env.n_resources
    for s in range(S):
        used = [sum((x[m][s] * env.d(m, s)[r] for m in range(J)), ZERO) for r in range(R)]
        for j in range(J):
            if k[j][s] is None:
                continue
            ok = False
            for r in range(R):
                if env.d(j, s)[r] <= 0 or used[r] != env.capacity[s][r]:
                    continue
                if all(k[m][s] <= k[j][s] for m in range(J) if x[m][s] * env.d(m, s)[r] > 0):
                    ok = True
                    break
            if not ok:
                out.append(f"Thm 1: {env.users[j]} has no bottleneck resource at {env.servers[s]} "
                           f"(key x_j/(w_j gamma) = {k[j][s]})")
    return out


def theorem2_violations(env: Environment, x: Sequence[Sequence[Any]]) -> list[str]:
    """002 Thm 2 (TDM): eq. (10) with equality at every server with an eligible user, and (13)."""
    out = list(feasibility_violations(env, x, "tdm"))
    if out:
        return out
    k = keys(env, x)
    g = gamma_matrix(env)
    J, S = env.n_users, env.n_servers
    for s in range(S):
        elig = [j for j in range(J) if g[j][s]]
        if not elig:
            continue
        share = sum((x[j][s] / g[j][s] for j in elig), ZERO)
        if share != 1:
            out.append(f"Thm 2: time shares at {env.servers[s]} sum to {share} != 1")
        kmin = min(k[j][s] for j in elig)
        for m in elig:
            if x[m][s] > 0 and k[m][s] > kmin:
                out.append(f"Thm 2: {env.users[m]} holds tasks at {env.servers[s]} with key {k[m][s]} > "
                           f"min key {kmin}")
    return out


def characterisation_violations(env: Environment, x, mode: str) -> list[str]:
    """Theorem 1 (RDM) or Theorem 2 (TDM) violations of ``x``."""
    return theorem1_violations(env, x) if mode == "rdm" else theorem2_violations(env, x)
