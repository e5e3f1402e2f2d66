"""Seed 004 Algorithm 1 (iterative LP-TaskShare (8)) for any normaliser, exact and in floats.

Rounds of ``max g`` s.t. chi(E) without the task-bound rows (8b)-(8d), ``x_j = n_j`` for saturated
users (8e) and ``x_j / (w_j N_j) = g`` for active users (8f, an EQUALITY); active users that reach
``n_j`` move to the saturated set until none moves.  Two decisions the pseudo-code leaves open:
(i) with no active user left, return the feasible point of (8b)-(8e); (ii) a round whose LP is
unbounded (an active user limited only by the omitted ``n_j``) is re-solved with
``g <= max_{j active, bounded} n_j / (w_j N_j)`` -- at that cap the same users saturate, so the
output is unchanged.  Totals are unique: active users sit at ``w_j N_j g*``, saturated ones at ``n_j``.
The float path (:func:`algorithm1_float`) builds the same LP directly for HiGHS, with column
generation for large instances.  Details: docs/seed004-mechanisms.md, "Algorithm 1 as printed".
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.lp import LPSession, is_small
from mechverify.model import Environment
from mechverify.numbers import as_float
from mechverify.polytope import TaskPolytope

from ..normalisers import finite_normaliser
from .algorithm1_float import algorithm1_float
from .rounds import run_rounds

__all__ = ["algorithm1", "run_rounds", "server_external_rows"]


def algorithm1(env: Environment, name: str, exact: bool, normaliser: Sequence[Any], *,
               external: bool = True, extra_rows: Optional[Callable[[TaskPolytope], None]] = None,
               server_external_caps: Optional[Sequence[Sequence[Any]]] = None,
               info: Optional[dict] = None, cg_threshold: Optional[int] = None) -> Allocation:
    """Seed 004 Algorithm 1 (iterative LP-TaskShare (8)) with the score ``x_j / (w_j N_j)``.

    ``normaliser`` is ``eta`` for TSF-ER; DRF-ER / DRF-alpha / TSF-alpha reuse this routine with their
    own normaliser (seed 004 Sec. 8: DRF-ER "can be derived by modifying (8f) to equalize the active
    users' dominant shares").  ``external=False`` drops the global external rows (8b) (alpha variants
    replace them by per-server rows).  ``server_external_caps[s][k]`` adds the rows
    ``sum_j x[j,s] d_er[j,k] <= server_external_caps[s][k]`` (DRF/TSF-alpha); ``extra_rows`` is any
    other callback on the ``TaskPolytope``.  See the module docstring for the two decisions the
    pseudo-code leaves open (docs/seed004-mechanisms.md, "Algorithm 1 as printed").

    Float mode without ``extra_rows`` (and without per-server demands) takes a fast path that builds
    the same LP directly in numpy/HiGHS (:func:`algorithm1_float`) unless the LP is small enough for the
    LP layer's GLPK path (``lp.is_small``; numpy and HiGHS then cost more than the whole solve) and
    no ``cg_threshold`` is given;
    exact mode always goes through ``TaskPolytope`` and the exact LP layer.
    """
    J, S = env.n_users, env.n_servers
    n_rows = S * env.n_resources + (S if server_external_caps is not None else 1) * env.n_external + J
    small = cg_threshold is None and is_small(n_rows, J * S + 1)
    if not exact and extra_rows is None and not env.has_server_demand and not small:
        return algorithm1_float(env, name, normaliser, external=external,
                                server_external_caps=server_external_caps, info=info, cg_threshold=cg_threshold)
    poly = TaskPolytope(env, mode="rdm", placement=True, external=external, bounds=False, exact=exact)
    if server_external_caps is not None:
        server_external_rows(poly, server_external_caps)
    if extra_rows is not None:
        extra_rows(poly)
    lp = poly.lp
    n_x = lp.n_cols
    g = lp.add_var(0, None, 0, name="g")
    lp.set_cost({g: 1})
    lp.maximize = True
    coef: dict[int, Any] = {}
    used_norm = [finite_normaliser(env, normaliser[j], j) for j in range(env.n_users)]
    part = [j for j in range(env.n_users) if used_norm[j] is not None and poly.can_run(j)]
    # floats: the level g in units of the equal split (see lexmaxmin.lex_max_min); divided back in run_rounds
    scale = 1.0 if exact else float(max(1, len(part)))
    row_of: dict[int, int] = {}
    part_set = set(part)
    for j in range(env.n_users):
        if j not in part_set:
            for _, col in poly.user_vars[j]:  # it can run nothing: pin it to 0 explicitly
                lp.col_upper[col] = lp.zero
    for j in part:
        N = used_norm[j]
        c = 1 / (env.weight[j] * N) if exact else scale / (as_float(env.weight[j]) * as_float(N))
        coef[j] = c
        row = {col: c for _, col in poly.user_vars[j]}
        row[g] = -1
        row_of[j] = lp.add_row(row, 0, 0)  # (8f)
    active = sorted(row_of)
    if not active:
        lp.col_upper[g] = lp.zero
    session = LPSession(lp)

    def total(x: Sequence[Any], j: int) -> Any:
        return sum((x[col] for _, col in poly.user_vars[j]), Fraction(0) if exact else 0.0)

    x, rounds, trace, saturated = run_rounds(session, env, name, exact, g, row_of, coef, active, total, scale)
    meta = {"rounds": rounds, "levels_by_round": [t[1] for t in trace], "saturated": sorted(saturated),
            "saturated_by_round": [t[2] for t in trace], "normaliser": used_norm,
            "level": None if not trace or trace[-1][1] is None else trace[-1][1],
            "unique_totals": True}
    if info:
        meta.update(info)
    # totals are unique: active users sit at w_j N_j g* (g* the optimal value), saturated ones at n_j
    return poly.allocation(x[:n_x], exact, name, meta)


def server_external_rows(poly: TaskPolytope, caps: Sequence[Sequence[Any]]) -> None:
    """Rows ``sum_j x[j,s] d_er[j,k] <= caps[s][k]`` (a fixed per-server split of the external resources)."""
    env = poly.env
    poly.server_external_rows = {}
    for s in range(env.n_servers):
        for k in range(env.n_external):
            coeffs = {}
            for j in range(env.n_users):
                col = poly.var.get((j, s))
                dk = env.external_demand[j][k]
                if col is not None and dk:
                    coeffs[col] = dk
            if coeffs:
                poly.server_external_rows[(s, k)] = poly.lp.add_row(coeffs, None, caps[s][k])
