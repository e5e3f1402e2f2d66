"""MNW (seed 004 Sec. 3.2, Thm 2; App. 9.2): maximum Nash welfare over chi(E), with certified bounds.

The optimum is irrational in general, so the float allocation comes with rigorous intervals for every
user's optimal total (see :func:`mnw`); chi(E) is the feasible set (the extraction's per-server alpha
rows in (12c) are a copy-paste of (7): Sec. 3.2 and Thm 2 use chi(E)).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

import numpy as np

from mechverify.allocation import Allocation
from mechverify.exact_basis import _fr, _q
from mechverify.lp import LPSession
from mechverify.model import Environment
from mechverify.numbers import is_inf
from mechverify.polytope import TaskPolytope

from ..normalisers import max_total
from ...core.registry import Setting, register
from .mnw_ipm import log_barrier, primal_dual_ipm
from .setting import welfare_claims
from ...core.z3spec import Z3Spec

__all__ = ["mnw", "MNW_CLAIMS"]


MNW_CLAIMS = welfare_claims("Thm 2", "App. 9.2")


@register("mnw", "MNW: maximum Nash welfare, max sum_j w_j log X_j over chi(E) (float, certified bounds)",
          Setting(placement=False, external=True, bounds=True, weights=True, server_demand=False, exact=False),
          MNW_CLAIMS, source="004 Sec. 3.2, Thm 2, App. 9.2",
          notes="Irrational in general: float allocation with info['bounds'] (certified intervals for every "
                "user's optimal total); exact only when a rational optimum is certified (exact mode).",
          z3=Z3Spec("kkt", description="KKT of max sum w_j log X_j"))
def mnw(env: Environment, exact: bool = False) -> Allocation:
    """Maximum Nash welfare ``max sum_{j in P} w_j log X_j`` over chi(E) (``P``: users that can run
    something; the others get 0).  ``X*`` is unique; the split over servers need not be.

    A float solver proposes a point and prices (:mod:`mechanisms.paper.external_resources.mnw_ipm`); ``info["bounds"]``
    (= ``info["total_bounds"]``) are RIGOROUS intervals for every ``X*_j`` (Lagrangian duality gap in
    ball arithmetic + strong concavity of log), ``info["objective_bounds"]`` for the optimum.  Exact
    mode returns ``exact=True`` only when a rational candidate passes the exact first-order optimality
    check.  Derivation: docs/seed004-mechanisms.md, "MNW: certified bounds"."""
    poly = TaskPolytope(env, mode="rdm", placement=True, external=True, bounds=True)
    lp = poly.lp
    J = env.n_users
    # columns pinned to 0 by a zero-capacity packing row
    dead = set()
    for i, row in enumerate(lp.rows):
        if lp.row_upper[i] == 0:
            dead.update(row)
    cols_of = {j: [col for _, col in poly.user_vars[j] if col not in dead] for j in range(J)}
    part = [j for j in range(J) if cols_of[j]]
    zero_alloc = all(not cols_of[j] for j in range(J))
    w = [env.weight[j] for j in range(J)]
    info: dict = {"participants": [env.users[j] for j in part]}
    if zero_alloc:
        info.update({"exactness": "nobody can run anything: the zero allocation", "bounds": [(Fraction(0),) * 2] * J,
                     "total_bounds": [(Fraction(0),) * 2] * J, "unique_totals": True})
        zero = Fraction(0) if exact else 0.0
        return poly.allocation([zero] * lp.n_cols, exact, "mnw", info)
    cols = sorted(c for j in part for c in cols_of[j])
    cidx = {c: i for i, c in enumerate(cols)}
    rows = [i for i, row in enumerate(lp.rows) if lp.row_upper[i] != 0 and any(c in cidx for c in row)]
    m, n = len(rows), len(cols)
    A = np.zeros((m, n))
    for a, i in enumerate(rows):
        for c, v in lp.rows[i].items():
            if c in cidx:
                A[a, cidx[c]] = float(v)
    b = np.array([float(lp.row_upper[i]) for i in rows])
    U = np.zeros((len(part), n))
    for u, j in enumerate(part):
        for c in cols_of[j]:
            U[u, cidx[c]] = 1.0
    wf = np.array([float(w[j]) for j in part])
    best = None
    for solver in (primal_dual_ipm, log_barrier):
        xf, pf = solver(A, b, U, wf)
        cert, xq = _certified_point(env, lp, rows, cidx, cols_of, part, w, xf, pf)
        if best is None or (cert["gap"] is not None and (best[0]["gap"] is None or cert["gap"] < best[0]["gap"])):
            best = (cert, xq)
        if cert["gap"] is not None and cert["gap"] <= Fraction(1, 10 ** 11) * max(1, sum(w[j] for j in part)):
            break  # good enough: the primal-dual method is ~5x faster; the barrier is the fallback
    cert, xq = best
    Xq = {j: sum((xq[cidx[c]] for c in cols_of[j]), Fraction(0)) for j in part}
    full = [Fraction(0)] * lp.n_cols
    for c in cols:
        full[c] = xq[cidx[c]]
    info.update(cert)
    info["unique_totals"] = True
    if exact:
        ex = _exact_candidate(env, poly, part, w, Xq)
        if ex is not None:
            x_exact, v = ex
            info.update({"exactness": "exact: the rational candidate satisfies the first-order optimality "
                                      "condition exactly (max of the linearisation over chi(E) equals sum_j w_j)",
                         "bounds": [(v[j], v[j]) if j in v else (Fraction(0), Fraction(0)) for j in range(J)],
                         "total_bounds": [(v[j], v[j]) if j in v else (Fraction(0), Fraction(0)) for j in range(J)]})
            return poly.allocation(x_exact, True, "mnw", info)
    info.setdefault("exactness", "float approximation of an in general irrational optimum; info['bounds'] are "
                                 "certified intervals for every user's optimal total (Lagrangian duality gap "
                                 "evaluated rigorously + strong concavity of log)")
    fl = [float(v) for v in full]
    top = max(fl) if fl else 0.0
    fl = [0.0 if v < 1e-12 * top else v for v in fl]  # solver dust (lowering x keeps it feasible)
    return poly.allocation(fl, False, "mnw", info)


def _certified_point(env, lp, rows, cidx, cols_of, part, w, xf, pf) -> tuple[dict, list]:
    """Exactly feasible rational point from the solver's ``xf`` and the best certificate for it."""
    xq = [max(Fraction(float(v)), Fraction(0)) for v in xf]
    fx = [_q(v) for v in xq]  # the sums in flint's rationals (the same values, ~5x faster than Fraction's)
    theta = _q(Fraction(1))
    for a, i in enumerate(rows):
        act = sum((_q(v) * fx[cidx[c]] for c, v in lp.rows[i].items() if c in cidx), _q(Fraction(0)))
        up = _q(lp.row_upper[i])
        if act > up:
            theta = min(theta, up / act)
    theta = _fr(theta)
    xq = [v * theta for v in xq]
    Xq = {j: sum((xq[cidx[c]] for c in cols_of[j]), Fraction(0)) for j in part}
    # prices: the barrier's mu/slack, and the duals of the linearisation LP at X^ (its value minus
    # sum_j w_j is the Frank-Wolfe gap, an upper bound on G(p) - F(X^)); keep the better certificate
    price_sets = [[max(Fraction(float(v)), Fraction(0)) for v in pf]]
    if all(Xq[j] > 0 for j in part):
        lin = lp.copy()
        lin.set_cost({c: w[j] / Xq[j] for j in part for c in cols_of[j]})
        lin.maximize = True
        rl = LPSession(lin).solve(exact=False)
        if rl.ok and rl.row_dual is not None:
            price_sets.append([max(Fraction(float(rl.row_dual[i])), Fraction(0)) for i in rows])
    cert = None
    for pq in price_sets:
        c = _certify(env, lp, rows, cidx, cols_of, part, w, Xq, pq)
        if cert is None or (c["gap"] is not None and (cert["gap"] is None or c["gap"] < cert["gap"])):
            cert = c
    return cert, xq


def _arb_bounds(v) -> tuple[Fraction, Fraction]:
    mid = v.mid().man_exp()
    rad = v.rad().man_exp()
    fm = Fraction(int(mid[0])) * (Fraction(2) ** int(mid[1]))
    fr = Fraction(int(rad[0])) * (Fraction(2) ** int(rad[1]))
    return fm - fr, fm + fr


def _arb(q: Fraction):
    from flint import arb, fmpq
    return arb(fmpq(q.numerator, q.denominator))


_GRID = Fraction(1, 2 ** 64)


def _down(q: Fraction) -> Fraction:
    return Fraction(math.floor(q / _GRID)) * _GRID


def _up(q: Fraction) -> Fraction:
    return Fraction(math.ceil(q / _GRID)) * _GRID


def _certify(env, lp, rows, cidx, cols_of, part, w, Xq, pq) -> dict:
    """Rigorous objective and total bounds (see :func:`mnw`)."""
    from flint import ctx

    old = ctx.prec
    ctx.prec = 200
    try:
        J = env.n_users
        acc: dict = {}  # sum_i p_i A_ic and p b in flint's rationals (the same values as in Fraction)
        fpb = _q(Fraction(0))
        for a, i in enumerate(rows):
            if not pq[a]:
                continue
            p = _q(pq[a])
            fpb += p * _q(lp.row_upper[i])
            for c, v in lp.rows[i].items():
                if c in cidx:
                    acc[c] = acc[c] + p * _q(v) if c in acc else p * _q(v)
        pb = _fr(fpb)
        a_col: dict[int, Fraction] = {c: _fr(q) for c, q in acc.items()}
        bounds: list = [(Fraction(0), Fraction(0))] * J
        caps = {}
        for j in part:
            caps[j] = max_total(env, j)
        F = _arb(Fraction(0))
        ok_x = all(Xq[j] > 0 for j in part)
        if ok_x:
            for j in part:
                F = F + _arb(w[j]) * _arb(Xq[j]).log()
        pis = {j: min(a_col.get(c, Fraction(0)) for c in cols_of[j]) for j in part}
        ok_p = all(pis[j] > 0 for j in part)
        if ok_p:
            G = _arb(pb)
            for j in part:
                G = G + _arb(w[j]) * ((_arb(w[j] / pis[j])).log() - 1)
        if not (ok_x and ok_p):
            for j in part:
                hi = caps[j] if not is_inf(caps[j]) else None
                bounds[j] = (Fraction(0), hi)
            return {"bounds": bounds, "total_bounds": bounds if all(b[1] is not None for b in bounds) else None,
                    "objective_bounds": None, "gap": None}
        f_lo, _ = _arb_bounds(F)
        _, g_hi = _arb_bounds(G)
        gap = max(g_hi - f_lo, Fraction(0))
        for j in part:
            eps_hi = _arb_bounds((_arb(2 * gap / w[j])).sqrt())[1]
            cap = caps[j]
            if eps_hi < 1:
                D = eps_hi * Xq[j] / (1 - eps_hi)
                lo, hi = max(Fraction(0), _down(Xq[j] - D)), _up(Xq[j] + D)
            else:
                lo, hi = Fraction(0), None
            if not is_inf(cap) and (hi is None or hi > cap):
                hi = Fraction(cap)
            bounds[j] = (lo, hi)
        return {"bounds": bounds, "total_bounds": bounds, "objective_bounds": (_down(f_lo), _up(g_hi)),
                "gap": _up(gap)}
    finally:
        ctx.prec = old


def _exact_candidate(env, poly, part, w, Xq) -> Optional[tuple[list, dict]]:
    """Try rational candidates ``v`` for ``X*``; return ``(x column values, {j: v_j})`` for the first one, in the
    order (a), (b) below, that is in chi(E) and passes the exact first-order optimality check
    (:func:`_first_order_optimal`).

    (a) the totals of the exact vertex maximising the linearisation at ``X^``; (b) ``X^`` rounded to small
    denominators, each with the exact vertex of chi(E) having those totals (a feasibility LP).  A candidate is
    checked BEFORE its feasibility LP is solved (the check depends on ``v`` only, and most candidates fail it):
    the answer is the same as solving every candidate's LP and then checking them in order, and the LPs that
    give the returned ``x`` are built and solved exactly as then (a fresh session each: an LP with several
    optimal vertices gives the same one)."""
    if any(Xq[j] <= 0 for j in part):
        return None
    target = sum((w[j] for j in part), Fraction(0))
    seen: list[dict] = []
    known = [Xq]  # totals in chi(E): X^ is the certified point's (``_certified_point`` scales it into chi(E))

    def first(v, x_of):
        if v in seen:  # a repeated candidate: its check (or its feasibility) failed already
            return None
        seen.append(v)
        if any(v[j] <= 0 for j in part) or not _first_order_optimal(poly, part, w, v, target, known):
            return None
        x = x_of()
        return None if x is None else (x, v)

    # (a) the vertex maximising the linearisation at X^
    lin = poly.lp.copy()
    lin.set_cost({col: w[j] / Xq[j] for j in part for _, col in poly.user_vars[j]})
    lin.maximize = True
    r = LPSession(lin).solve(exact=True)
    if r.ok:
        v = {j: sum((r.x[col] for _, col in poly.user_vars[j]), Fraction(0)) for j in part}
        known.append(v)  # an exact vertex of chi(E)
        found = first(v, lambda: list(r.x[:poly.lp.n_cols]))
        if found is not None:
            return found
    # (b) X^ rounded to small denominators
    for den in (10 ** 2, 10 ** 4, 10 ** 6, 10 ** 9):
        v = {j: Xq[j].limit_denominator(den) for j in part}

        def feasible(v=v):
            fe = poly.lp.copy()
            for j in part:
                fe.add_row(poly.total(j), v[j], v[j])
            fe.set_cost({})
            rr = LPSession(fe).solve(exact=True)
            return list(rr.x[:poly.lp.n_cols]) if rr.ok else None
        found = first(v, feasible)
        if found is not None:
            return found
    return None


def _first_order_optimal(poly, part, w, v, target, known) -> bool:
    """Whether ``max sum_j (w_j / v_j) X_j`` over chi(E) equals ``target`` (``= sum_j w_j``), exactly.

    Cheap proofs of "no" first, then the exact LP (a fresh session), so the answer is always the exact one:
    (1) a known point of chi(E) (``known``: totals of exactly feasible allocations) with a value above ``target``
    bounds the maximum from below; (2) a float solve, its point made exactly feasible and its row prices made
    exactly dual feasible (:func:`_float_bounds`), brackets the maximum: a lower bound above ``target`` or an
    upper bound below it decides."""
    if any(sum((w[j] * X[j] / v[j] for j in part), Fraction(0)) > target for X in known):
        return False
    chk = poly.lp.copy()
    chk.set_cost({col: w[j] / v[j] for j in part for _, col in poly.user_vars[j]})
    chk.maximize = True
    bounds = _float_bounds(chk)
    if bounds is not None and (bounds[0] > target or (bounds[1] is not None and bounds[1] < target)):
        return False
    rc = LPSession(chk).solve(exact=True)
    return rc.ok and rc.objective == target


def _float_bounds(lp) -> Optional[tuple[Fraction, Optional[Fraction]]]:
    """Rigorous ``(lower, upper)`` bounds on the optimum of the maximisation ``lp`` from one float solve, or None.

    Only for a packing LP (``max c x``, every row ``a x <= U`` with ``a >= 0``, no lower row bound, columns
    ``x >= 0`` without upper bounds, ``c >= 0``), which ``TaskPolytope``'s with this cost is.  Lower: the float
    point read exactly (``Fraction(float)``), negatives set to 0, scaled by ``theta <= 1`` so that every row holds
    exactly -- a point of the polytope whatever the solver's error.  Upper: the row prices ``y`` (negatives set to
    0) scaled by ``s = max_j c_j / (A^T y)_j`` satisfy ``A^T (s y) >= c``, so for every feasible ``x``,
    ``c x <= (s y)^T A x <= s y^T U`` (weak duality; columns in a row with ``U = 0`` are 0 in every feasible
    ``x`` and left out of ``s``); ``upper`` is None if another priced column has ``(A^T y)_j = 0``."""
    if any(lo is not None for lo in lp.row_lower) or any(up is not None for up in lp.col_upper) or \
            any(lo != 0 for lo in lp.col_lower) or any(up is None or up < 0 for up in lp.row_upper) or \
            any(c < 0 for c in lp.cost) or any(a < 0 for row in lp.rows for a in row.values()):
        return None
    r = LPSession(lp).solve(exact=False)
    if not r.ok or r.x is None or r.row_dual is None:
        return None
    zero = Fraction(0)
    x = [Fraction(v) if v > 0 else zero for v in r.x]
    y = [Fraction(v) if v > 0 else zero for v in r.row_dual]
    theta = Fraction(1)
    aty = [zero] * lp.n_cols
    for i, row in enumerate(lp.rows):
        act = sum((a * x[c] for c, a in row.items() if x[c]), zero)
        if act > lp.row_upper[i]:
            theta = min(theta, lp.row_upper[i] / act)
        if y[i]:
            for c, a in row.items():
                aty[c] += a * y[i]
    lower = theta * sum((c * x[j] for j, c in enumerate(lp.cost) if c and x[j]), zero)
    dead = {c for i, row in enumerate(lp.rows) if not lp.row_upper[i] for c in row}  # pinned to 0 by a row
    s = zero
    for j, c in enumerate(lp.cost):
        if c and j not in dead:
            if not aty[j]:
                return lower, None
            s = max(s, c / aty[j])
    upper = s * sum((yi * lp.row_upper[i] for i, yi in enumerate(y) if yi), zero)
    return lower, upper
