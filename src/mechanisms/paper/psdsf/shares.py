"""PS-DSF's quantities: ``gamma[j,s]`` (002 eq. (7)), virtual dominant shares and keys, one server's data.

``k[j,s] = x_j / (w_j gamma[j,s])`` is the weighted virtual dominant share (002 Def. 2 eq. (8)); a
server is *eligible* for ``j`` when ``gamma[j,s] > 0`` (``Environment.usable``).
"""
from __future__ import annotations

import weakref
from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.lp import LPError
from mechverify.model import Environment, leontief_tasks
from mechverify.numbers import InstanceError, is_inf, to_fraction

__all__ = ["PSDSFError", "Matrix", "ZERO", "check_env", "gamma_matrix", "totals", "vds", "keys", "server_demands",
           "server_demand_for_gamma", "demanders"]

ZERO = Fraction(0)


class PSDSFError(LPError):
    """The PS-DSF computation did not reach an allocation satisfying Theorem 1/2.  Solver trouble, never
    a verdict (an ``LPError``: ``allocate`` exits 3 with one line, ``--batch`` prints an error line,
    ``check`` says unknown)."""


Matrix = list  # list[list[Fraction]]


# ---------------------------------------------------------------------- basics
def check_env(env: Environment) -> None:
    """Reject what PS-DSF is not defined for (infinite gamma, external resources, task bounds)."""
    for j in range(env.n_users):
        for s in range(env.n_servers):
            if s in env.eligible[j] and all(v == 0 for v in env.d(j, s)):
                raise InstanceError(f"users[{j}].demand: zero on every resource at server {env.servers[s]!r}; "
                                    f"PS-DSF needs gamma[j,s] finite (002 eq. (7))")
    if env.n_external:
        raise InstanceError("external: PS-DSF is defined without external resources")
    if env.has_bounds:
        j = next(j for j in range(env.n_users) if env.tasks[j] is not None)
        raise InstanceError(f"users[{j}].tasks: PS-DSF is defined for unbounded task counts")


_GAMMA_CACHE: dict[int, tuple[Any, list]] = {}


def gamma_matrix(env: Environment) -> list[list[Fraction]]:
    """``gamma[j][s]`` (002 eq. (7)); 0 where ``j`` may not or cannot run.  Cached per environment
    (environments are immutable); do not modify the returned lists."""
    hit = _GAMMA_CACHE.get(id(env))
    if hit is not None and hit[0]() is env:
        return hit[1]
    g = [[env.gamma(j, s) for s in range(env.n_servers)] for j in range(env.n_users)]  # 0 if not eligible
    g = [[v if v > 0 else ZERO for v in row] for row in g]  # usable = eligible and gamma > 0
    if len(_GAMMA_CACHE) > 256:
        _GAMMA_CACHE.clear()
    _GAMMA_CACHE[id(env)] = (weakref.ref(env), g)
    return g


def totals(x: Matrix) -> list:
    """Row sums ``x_j`` of a task matrix."""
    return [sum(row, ZERO) for row in x]


def vds(env: Environment, x: Sequence[Sequence[Any]]) -> list[list[Optional[Fraction]]]:
    """Virtual dominant shares ``s[j][s] = x_j / gamma[j,s]`` (002 eq. (8)); ``None`` where not eligible."""
    g = gamma_matrix(env)
    tot = totals([list(r) for r in x])
    return [[(tot[j] / g[j][s]) if g[j][s] else None for s in range(env.n_servers)] for j in range(env.n_users)]


def keys(env: Environment, x: Sequence[Sequence[Any]]) -> list[list[Optional[Fraction]]]:
    """Weighted VDS ``k[j][s] = x_j / (w_j gamma[j,s])``; ``None`` where not eligible."""
    v = vds(env, x)
    return [[None if v[j][s] is None else v[j][s] / env.weight[j] for s in range(env.n_servers)]
            for j in range(env.n_users)]


def server_demands(env: Environment, s: int, mode: str, users: Sequence[int], g) -> tuple[list, list]:
    """Demand vectors and capacities of server ``s`` as water-filling input.  TDM is one resource,
    time, of capacity 1 of which a task of ``j`` uses ``1/gamma[j,s]`` (002 eq. (10))."""
    if mode == "tdm":
        return [(1 / g[j][s],) for j in users], [Fraction(1)]
    return [tuple(env.d(j, s)) for j in users], list(env.capacity[s])


def demanders(users: Sequence[int], dem: Sequence[Sequence[Any]], resources: Sequence[int]
              ) -> tuple[list[int], list[int]]:
    """Split ``users`` (order kept) into those whose ``dem[u]`` is nonzero at some resource of
    ``resources`` -- the users a water filling freezes when these resources saturate -- and the rest."""
    hit, rest = [], []
    for u in users:
        du = dem[u]
        for r in resources:
            if du[r]:
                hit.append(u)
                break
        else:
            rest.append(u)
    return hit, rest


def server_demand_for_gamma(env: Environment, j: int, s: int, gamma: Any) -> tuple[Fraction, ...]:
    """Per-server demand of ``j`` at ``s`` whose eq.-(7) gamma equals ``gamma`` (002 Sec. IV scenario 2).

    ``d[j,s] * gamma_0 / gamma`` where ``gamma_0`` is the monopoly count of ``j``'s base demand ``d[j]``
    at ``s``: a co-processor that speeds every resource of the task up by ``gamma / gamma_0``.  Under
    TDM this is exact (only gamma matters); under RDM it is that modelling choice."""
    gf = to_fraction(gamma, f"gamma[{j},{s}]")
    if gf <= 0:
        raise InstanceError(f"gamma[{j},{s}]: must be > 0 (got {gamma!r})")
    base = env.demand[j]
    g0 = leontief_tasks(env.capacity[s], base)
    if is_inf(g0) or g0 == 0:
        g0 = None if is_inf(g0) else g0
        raise InstanceError(f"gamma[{j},{s}]: user {env.users[j]!r} cannot run at {env.servers[s]!r} "
                            f"with its base demand (gamma_0 = {g0})")
    return tuple(dr * g0 / gf for dr in base)
