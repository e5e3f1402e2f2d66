"""Every normaliser ``N_j`` of the project's leximin / common-level mechanisms, in one place.

A mechanism of the family ranks users by the score ``x_j / (w_j N_j)`` (``mechanisms/paper/leximin.py``).
What distinguishes DRF, DRFH, TSF, TSF-ER, DRF-ER and the alpha variants is only ``N_j``:

* DRF / DRF-ER / DRF-alpha: ``1 / ds_j``, ``ds_j = max_r d[j,r] / C_r`` (a dominant share per task);
* DRFH / C-DRFH: the same with pooled computational capacities (global dominant share, seed 001);
* TSF / CDRF: ``gamma_j = sum_s min_r c[s,r] / d[j,r]`` (monopoly count, placement ignored);
* TSF-ER: ``eta_j`` = ``gamma_j`` capped by the external limit (seed 004 eq. (6));
* TSF-alpha: (7c), the monopoly count with each server's external share.

Conventions (docs/model.md): ``N_j = 0`` means the user can run nothing; ``N_j = inf`` (its tasks use
nothing the mechanism measures) falls back to ``n_j`` or the external limit
(:func:`fallback_normaliser`).  Every external limit is ``Environment.external_limit``.
"""
from __future__ import annotations

from fractions import Fraction
from math import inf
from typing import Any, Optional, Sequence

from mechverify.model import Environment, leontief_tasks
from mechverify.numbers import INF, as_float, is_inf

__all__ = ["dominant_share_per_task", "norm_from_share", "global_dominant_share", "drf_normaliser",
           "drfh_normaliser", "pooled_dominant_normaliser", "pooled_normalisers", "tsf_gamma", "tsf_gammas", "eta", "etas", "etas_float",
           "monopoly_counts_float", "tsf_alpha_normaliser", "fallback_normaliser", "finite_normaliser", "max_total"]


# ---------------------------------------------------------------------- dominant shares (DRF family)
def _leontief_normaliser(env: Environment, j: int, capacities: Sequence[Any], ext: bool) -> Any:
    """``1 / max_r d[j,r]/c_r = min_r c_r / d[j,r]`` over demanded resources: the tasks these
    capacities allow user ``j`` alone (:func:`mechverify.model.leontief_tasks`: 0 if a demanded resource
    has ``c_r = 0``, inf if nothing is demanded).  With ``ext``, external resources count as pooled."""
    if ext:
        return leontief_tasks(list(capacities) + list(env.external_capacity),
                              list(env.demand[j]) + list(env.external_demand[j]))
    return leontief_tasks(capacities, env.demand[j])


def dominant_share_per_task(env: Environment, j: int, capacities: Sequence[Any], ext: bool = True) -> Any:
    """``max_r d[j,r] / c_r`` over demanded resources (inf if a demanded resource has c_r = 0, 0 if
    nothing is demanded).  With ``ext``, external resources count as pooled resources."""
    return norm_from_share(_leontief_normaliser(env, j, capacities, ext))  # 1/x, 0 <-> inf: its own inverse


def norm_from_share(share: Any) -> Any:
    """Normaliser ``N = 1/share`` (share 0 -> inf, share inf -> 0)."""
    if share.__class__ is Fraction and share._numerator > 0:  # the common case, without Fraction division
        return Fraction(share._denominator, share._numerator)
    if is_inf(share):
        return Fraction(0)
    if share == 0:
        return INF
    return 1 / share


def global_dominant_share(env: Environment, j: int) -> Any:
    """Seed 001 Sec. III-A: ``max_r D[j,r]`` with ``D[j,r] = d[j,r] / C_r`` (pooled capacities)."""
    return dominant_share_per_task(env, j, env.total_capacity(), ext=False)


def drf_normaliser(env: Environment, j: int) -> Any:
    """DRF on one server: ``1 / max_r d[j,r]/c_r`` (external resources are pooled resources)."""
    return _leontief_normaliser(env, j, env.capacity[0], ext=True)


def drfh_normaliser(env: Environment, j: int) -> Any:
    """DRFH / C-DRFH: ``1 / global dominant share``."""
    return _leontief_normaliser(env, j, env.total_capacity(), ext=False)


def pooled_dominant_normaliser(env: Environment, j: int) -> Any:
    """DRF-ER / DRF-alpha: ``1 / ds_j``, ``ds_j = max_r d[j,r]/C_r`` over pooled capacities, external
    resources included (seed 004 Sec. 3.3)."""
    return _leontief_normaliser(env, j, env.total_capacity(), ext=True)


def pooled_normalisers(env: Environment, exact: bool, ext: bool) -> list:
    """Every user's :func:`drfh_normaliser` (``ext=False``: DRFH, C-DRFH, LP (7)) or
    :func:`pooled_dominant_normaliser` (``ext=True``: DRF-ER, DRF-alpha); with ``exact=False`` each
    rounded to a float (``inf`` stays ``inf``), as the float path uses them."""
    f = pooled_dominant_normaliser if ext else drfh_normaliser
    norms = [f(env, j) for j in range(env.n_users)]
    return norms if exact else [as_float(N) for N in norms]


# ---------------------------------------------------------------------- monopoly counts (TSF family)
def tsf_gamma(env: Environment, j: int) -> Any:
    """TSF/CDRF ``gamma_j = sum_s min_r c[s,r]/d[j,r]`` over every server, ignoring placement."""
    total: Any = Fraction(0)
    for s in range(env.n_servers):
        total = total + env.monopoly_tasks(j, s)
    return total


def eta(env: Environment, j: int) -> Any:
    """Seed 004 eq. (6): ``min{ sum_s min_r c[s,r]/d[j,r], min_k c_er[k]/d_er[j,k] }``.

    Placement is ignored (seed 004 has none).  Returns a ``Fraction``, ``0`` (the user can run
    nothing) or ``inf`` (its tasks use nothing)."""
    comp: Any = Fraction(0)
    for s in range(env.n_servers):
        m = env.monopoly_tasks(j, s)
        if is_inf(m):
            comp = INF
            break
        comp += m
    ext = env.external_limit(j)
    return ext if ext < comp else comp


def etas(env: Environment, exact: bool = True) -> list:
    """:func:`eta` of every user; with ``exact=False``, :func:`etas_float` (the float path's)."""
    if not exact and not env.has_server_demand:
        return etas_float(env)
    return [eta(env, j) for j in range(env.n_users)]


def monopoly_counts_float(env: Environment) -> Any:
    """``min_r c[s,r]/d[j,r]`` (the tasks ``j`` could run alone on ``s``) as a ``J x S`` numpy array
    (``inf`` for a user demanding nothing; placement not applied).  Ignores per-server demands (callers
    take the exact path when ``env.has_server_demand``)."""
    import numpy as np

    cap = np.array([[as_float(v) for v in row] for row in env.capacity])  # S x R
    d = np.array([[as_float(v) for v in row] for row in env.demand])  # J x R
    pos = d > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(pos[:, None, :], cap[None, :, :] / np.where(pos, d, 1.0)[:, None, :], np.inf)
    return q.min(axis=2)


def _monopoly_sums_float(env: Environment) -> Any:
    """``sum_s min_r c[s,r]/d[j,r]`` of every user in floats (numpy): the sum of :func:`tsf_gamma` and
    :func:`eta`, vectorised (:func:`monopoly_counts_float` summed over servers)."""
    return monopoly_counts_float(env).sum(axis=1)


def _monopoly_sums_small(env: Environment) -> list:
    """:func:`_monopoly_sums_float` in plain floats, for small environments (numpy's per-call cost
    dominates there).  The sum over servers runs in server order: for fewer than 8 servers that is
    numpy's order too, so the results are bit-identical."""
    caps = [[as_float(c) for c in row] for row in env.capacity]
    out = []
    for dem in env.demand:
        dm = [(r, as_float(v)) for r, v in enumerate(dem) if v._numerator > 0]  # checked Fractions
        out.append(sum(min((row[r] / v for r, v in dm), default=inf) for row in caps))
    return out


def tsf_gammas(env: Environment, exact: bool) -> list:
    """:func:`tsf_gamma` of every user; in floats (vectorised) for the float path."""
    if exact or env.has_server_demand or not env.n_servers:
        return [tsf_gamma(env, j) for j in range(env.n_users)]
    if env.n_users * env.n_servers <= 64:
        return _monopoly_sums_small(env)
    return [float(v) for v in _monopoly_sums_float(env)]


def etas_float(env: Environment) -> list:
    """eq. (6) in floating point (numpy), for Algorithm 1's float path; ``inf`` / ``0`` as in :func:`eta`."""
    if env.n_servers < 8 and env.n_users * env.n_servers <= 64:  # small: plain floats, the same bits
        comp = _monopoly_sums_small(env)
        if not env.n_external:
            return comp
        out = []
        for c, row in zip(comp, env.external_demand):
            for ck, dk in zip(env.external_capacity, row):
                if dk._numerator > 0:
                    q = as_float(ck) / as_float(dk)
                    if q < c:
                        c = q
            out.append(c)
        return out
    import numpy as np

    comp = _monopoly_sums_float(env)
    if not env.n_external:
        return [float(v) for v in comp]
    # the external limit, vectorised in floats (the same float operations as ever, so results are
    # bit-identical to earlier versions; Environment.external_limit is its exact form)
    de = np.array([[float(v) for v in row] for row in env.external_demand])
    ce = np.array([float(v) for v in env.external_capacity])
    with np.errstate(divide="ignore"):
        ext = np.where(de > 0, ce[None, :] / np.where(de > 0, de, 1.0), np.inf).min(axis=1)
    return [float(v) for v in np.minimum(comp, ext)]


def tsf_alpha_normaliser(env: Environment, j: int, alpha: Sequence[Sequence[Fraction]]) -> Any:
    """Seed 004 (7c): ``sum_s min{ min_r c[s,r]/d[j,r], min_k alpha[s][k] c_er[k] / d_er[j,k] }``."""
    total: Any = Fraction(0)
    for s in range(env.n_servers):
        m = env.monopoly_tasks(j, s)
        share = [alpha[s][k] * c for k, c in enumerate(env.external_capacity)]  # server s's external part
        ext = leontief_tasks(share, env.external_demand[j])
        if ext < m:
            m = ext
        if is_inf(m):
            return INF
        total += m
    return total


# ---------------------------------------------------------------------- conventions
def fallback_normaliser(env: Environment, j: int) -> Optional[Fraction]:
    """Finite stand-in for an infinite normaliser: ``n_j``, else the external limit; ``None`` when
    neither is finite and positive (the user then takes no part)."""
    if env.tasks[j] is not None:
        return env.tasks[j] if env.tasks[j] > 0 else None
    m = env.external_limit(j)
    if is_inf(m):
        return None
    return m if m > 0 else None


def finite_normaliser(env: Environment, N: Any, j: int) -> Optional[Any]:
    """The normaliser actually used: ``inf`` -> :func:`fallback_normaliser`; ``0`` -> ``None``.  A
    ``Fraction``; a float normaliser (a mechanism's float mode) stays the float."""
    if N is not None and is_inf(N):
        N = fallback_normaliser(env, j)
    if N is None or N == 0:
        return None
    return N if N.__class__ is float else Fraction(N)


def max_total(env: Environment, j: int) -> Any:
    """``min(eta_j, n_j)``: the most tasks ``j`` can run with the whole cluster (``inf`` if unbounded)."""
    e = eta(env, j)
    if env.tasks[j] is not None and (is_inf(e) or env.tasks[j] < e):
        return env.tasks[j]
    return e
