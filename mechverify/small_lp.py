"""A dense bounded-variable primal simplex in plain Python floats, for tiny LPs (used by ``lp.py`` only).

HiGHS costs about 0.2 ms per ``run()`` however small the LP is; the LPs of the mechanisms on a few users
and servers (a dozen rows and columns) take a few microseconds per pivot here.  ``lp.LPSession`` sends an
LP here when ``rows * (rows + cols) <= SMALL_LP_MAX`` and falls back to HiGHS on ANY trouble: this
module never claims infeasibility or unboundedness, it returns ``None`` instead (iteration cap, a tiny
pivot, an unbounded ray, phase 1 stuck above zero, or a final check that fails).

Method (textbook, e.g. Chvatal ch. 8; Koberstein's thesis for the composite phase 1): the computational
form ``A x - r = 0`` with bounded structural columns ``x`` and logicals ``r`` (one per row, bounded
by the row bounds); the tableau ``M = B^-1 [A | -I]`` kept dense (lists of floats) and updated by
Gauss-Jordan pivots together with the reduced-cost row.  Start: every logical basic, every column at
a finite bound (free ones at 0), or a given starting basis (warm start).  Phase 1 minimises the sum of
infeasibilities (costs -1/+1 on basic variables below/above their bounds, recomputed every pivot; the
ratio test lets an infeasible variable go as far as its violated bound); phase 2 the real costs.
Pricing: Dantzig's largest reduced cost; after ``DEGENERATE_SWITCH`` consecutive degenerate pivots,
Bland's smallest-index rule for the entering and the leaving variable (no cycling).

The result is checked against the ORIGINAL data before it is returned: every column and row within its
bounds (``FEAS_TOL``, relative), non-basic variables at their bound, reduced costs recomputed from the
duals ``y`` (``c - A^T y``) with the sign their bound allows (``DUAL_TOL``).  The statuses are the
``'B' / 'L' / 'U' / 'Z'`` of ``exact_basis``, so the exact path re-solves this basis in rationals.
"""
from __future__ import annotations

from typing import Optional

__all__ = ["SmallSolution", "solve_dense", "SMALL_LP_MAX"]

#: LPs with ``rows * (rows + cols)`` up to this go to the dense simplex.  A dense pivot costs about
#: ``rows * (rows + cols)`` float operations in Python; measured on TSF's leximin LP (float mode, per
#: instance, dense / HiGHS): 98 -> 0.20 / 0.36 ms, 230 -> 0.36 / 0.46, 420 -> 0.55 / 0.58,
#: 546 -> 0.81 / 0.63, 714 -> 0.98 / 0.73 ms; so the crossover is near 450.
SMALL_LP_MAX = 400
FEAS_TOL = 1e-9  # primal feasibility (relative to max(1, |bound|))
DUAL_TOL = 1e-9  # reduced-cost sign tolerance
PIVOT_TOL = 1e-9  # smallest admissible |pivot element|
DEGENERATE_SWITCH = 8  # consecutive degenerate pivots before Bland's rule takes over
_INF = float("inf")


class SmallSolution:
    """An optimal basic solution: ``x`` (columns), ``act`` (rows), ``y`` (row duals of the MINIMISATION
    form ``min c x``, i.e. ``c - A^T y`` are the reduced costs), ``obj`` (``c x``), statuses."""

    __slots__ = ("x", "act", "y", "obj", "col_status", "row_status", "pivots")

    def __init__(self, x, act, y, obj, col_status, row_status, pivots) -> None:
        self.x, self.act, self.y, self.obj = x, act, y, obj
        self.col_status, self.row_status, self.pivots = col_status, row_status, pivots


def solve_dense(rows: list, n: int, cost: list, lo: list, up: list,
                start: Optional[tuple] = None, max_iter: Optional[int] = None) -> Optional[SmallSolution]:
    """Minimise ``cost . x`` s.t. ``lo[n+i] <= rows[i] . x <= up[n+i]``, ``lo[j] <= x_j <= up[j]``.

    ``rows``: one ``{col: float}`` per row; ``cost``: ``n`` floats; ``lo``/``up``: ``n + m`` floats
    (``-inf``/``inf`` for none), columns first, then rows.  ``start``: ``(col_status, row_status)`` of a
    previous basis (``'B'``/``'L'``/``'U'``/``'Z'``) to start from (ignored if it is not a basis).
    ``None`` on any trouble (see the module docstring)."""
    m = len(rows)
    N = n + m
    for k in range(N):
        if lo[k] > up[k]:
            return None
    # tableau rows: M[i] = coefficients of sum_k M[i][k] v_k = 0, identity on the basic columns
    M = []
    for i, row in enumerate(rows):
        t = [0.0] * N
        for c, v in row.items():
            t[c] = -v
        t[n + i] = 1.0
        M.append(t)
    basis = list(range(n, N))  # basis[i] = variable basic in row i
    status = [""] * N  # '' basic; 'L' / 'U' / 'Z' non-basic
    val = [0.0] * N
    for k in range(n):
        status[k] = "L" if lo[k] > -_INF else "U" if up[k] < _INF else "Z"
    c = list(cost) + [0.0] * m
    pivots = 0
    if start is not None:
        wanted = _start_basis(start, n, m, lo, up)
        if wanted is not None:
            want_basic, want_status = wanted
            for k in range(N):
                if k not in want_basic:
                    status[k] = want_status[k]
            for k in sorted(want_basic):
                if k >= n and status[k] == "":
                    continue  # already basic (its own logical)
                p = _best_row(M, basis, k, n, want_basic)
                if p is None:
                    break  # singular: keep what we have (the rest as the default start)
                _pivot(M, p, k)
                old = basis[p]
                basis[p] = k
                status[k] = ""
                status[old] = want_status[old] if old in want_status else _side(lo[old], up[old])
            for k in range(N):
                if status[k] == "" and k not in basis:  # pragma: no cover - defensive
                    status[k] = _side(lo[k], up[k])
    for k in range(N):
        s = status[k]
        if s:
            val[k] = lo[k] if s == "L" else up[k] if s == "U" else 0.0
    for k in basis:
        status[k] = ""
    _basic_values(M, basis, status, val)
    limit = max_iter if max_iter is not None else 20 * N + 50
    lo_t = [v - FEAS_TOL * max(1.0, abs(v)) if v > -_INF else v for v in lo]  # bounds with the tolerance
    up_t = [v + FEAS_TOL * max(1.0, abs(v)) if v < _INF else v for v in up]
    movable = [k for k in range(N) if lo[k] != up[k]]
    degenerate = 0
    phase = 1
    dr: Optional[list] = None  # phase 2: the reduced-cost row, pivoted along with the tableau
    while True:
        if phase == 1:
            # phase-1 costs (sum of infeasibilities), recomputed every pivot
            cb = [0.0] * m
            infeasible = False
            for i, b in enumerate(basis):
                v = val[b]
                if v < lo_t[b]:
                    cb[i] = -1.0
                    infeasible = True
                elif v > up_t[b]:
                    cb[i] = 1.0
                    infeasible = True
            if infeasible:
                d = [0.0] * N
            else:
                phase = 2
                cb = [c[b] for b in basis]
                d = c
            # reduced costs d_k = c_k - sum_i cb_i M[i][k]  (x_B = -sum_{non-basic} M[i][k] v_k)
            for i in range(m):
                cbi = cb[i]
                if cbi:
                    d = [a - cbi * b for a, b in zip(d, M[i])]
            if phase == 2:
                dr = d
        else:
            d = dr
        enter, direction, best = -1, 0, 0.0
        bland = degenerate >= DEGENERATE_SWITCH
        for k in movable:
            s = status[k]
            if not s:
                continue
            dk = d[k]
            if dk < -DUAL_TOL and s != "U":
                score, dr_ = -dk, 1
            elif dk > DUAL_TOL and s != "L":
                score, dr_ = dk, -1
            else:
                continue
            if bland:
                enter, direction = k, dr_
                break
            if score > best:
                enter, direction, best = k, dr_, score
        if enter < 0:
            if phase == 1:  # stuck infeasible: let HiGHS decide (never claim infeasibility here)
                return None
            break
        if pivots >= limit:
            return None
        # ratio test: v_enter moves by direction * theta; basic b_i moves by -M[i][enter] * direction * theta
        q = enter
        theta = up[q] - lo[q] if lo[q] > -_INF and up[q] < _INF else _INF
        leave = -1  # -1: bound flip of the entering variable
        leave_to = ""
        best_alpha = 0.0
        col = [-M[i][q] * direction for i in range(m)]  # d b_i / d theta
        for i in range(m):
            a = col[i]
            if -PIVOT_TOL < a < PIVOT_TOL:
                continue
            b = basis[i]
            v = val[b]
            if phase == 1 and cb[i]:
                # infeasible: may move up to its violated bound (where it becomes feasible)
                if cb[i] < 0 and a > 0:
                    t, to = (lo[b] - v) / a, "L"
                elif cb[i] > 0 and a < 0:
                    t, to = (up[b] - v) / a, "U"
                else:
                    continue  # moving away from feasibility: no breakpoint on this side
            elif a > 0:
                if up[b] == _INF:
                    continue
                t, to = (up[b] - v) / a, "U"
            else:
                if lo[b] == -_INF:
                    continue
                t, to = (lo[b] - v) / a, "L"
            if t < 0.0:
                t = 0.0
            aa = abs(a)
            if leave < 0 and t < theta or leave >= 0 and (t < theta - 1e-12 or (
                    t <= theta + 1e-12 and (basis[i] < basis[leave] if bland else aa > best_alpha))):
                theta, leave, leave_to, best_alpha = t, i, to, aa
        if theta == _INF:
            return None  # unbounded ray (phase 2) or a phase-1 direction without a breakpoint
        pivots += 1
        if theta <= 1e-12:
            degenerate += 1
        else:
            degenerate = 0
            for i in range(m):  # move along the edge
                if col[i]:
                    val[basis[i]] += col[i] * theta
            val[q] += direction * theta
        if leave < 0:  # the entering variable goes to its other bound
            status[q] = "U" if direction > 0 else "L"
            val[q] = up[q] if direction > 0 else lo[q]
            continue
        b = basis[leave]
        rp = _pivot(M, leave, q)
        if dr is not None:
            f = dr[q]
            if f:
                dr = [x - f * y for x, y in zip(dr, rp)]
                dr[q] = 0.0
        basis[leave] = q
        status[q] = ""
        status[b] = leave_to if lo[b] != up[b] else "L"
        val[b] = lo[b] if status[b] == "L" else up[b]
    _basic_values(M, basis, status, val)
    _refine(rows, n, M, basis, val)
    return _finish(rows, n, m, cost, lo, up, lo_t, up_t, dr, status, val, pivots)


def _side(lo: float, up: float) -> str:
    return "L" if lo > -_INF else "U" if up < _INF else "Z"


def _start_basis(start: tuple, n: int, m: int, lo: list, up: list) -> Optional[tuple]:
    col_status, row_status = start
    if len(col_status) != n or len(row_status) != m:
        return None
    basic, st = set(), {}
    for k, s in enumerate(list(col_status) + list(row_status)):
        if s == "B":
            basic.add(k)
        elif s == "L" and lo[k] > -_INF or s == "U" and up[k] < _INF:
            st[k] = s
        else:
            st[k] = _side(lo[k], up[k])
    if len(basic) != m:
        return None
    return basic, st


def _best_row(M: list, basis: list, k: int, n: int, want_basic: set) -> Optional[int]:
    """Row to pivot ``k`` into (its basic variable not wanted, largest |element|)."""
    best, bi = PIVOT_TOL * 1e3, None
    for i, b in enumerate(basis):
        if b in want_basic:
            continue
        a = abs(M[i][k])
        if a > best:
            best, bi = a, i
    return bi


def _pivot(M: list, p: int, q: int) -> list:
    """Gauss-Jordan pivot on ``M[p][q]``; returns the new pivot row."""
    rp = M[p]
    piv = rp[q]
    rp = [v / piv for v in rp]
    rp[q] = 1.0
    M[p] = rp
    for i, ri in enumerate(M):
        if i != p:
            f = ri[q]
            if f:
                r = [a - f * b for a, b in zip(ri, rp)]
                r[q] = 0.0
                M[i] = r
    return rp


def _basic_values(M: list, basis: list, status: list, val: list) -> None:
    """``x_B = -sum_{k non-basic} M[i][k] v_k``."""
    nb = [(k, val[k]) for k, s in enumerate(status) if s and val[k]]
    for i, b in enumerate(basis):
        row = M[i]
        acc = 0.0
        for k, v in nb:
            acc -= row[k] * v
        val[b] = acc


def _refine(rows: list, n: int, M: list, basis: list, val: list) -> None:
    """Two rounds of iterative refinement of the basic values against the ORIGINAL rows (the tableau
    carries the rounding of every pivot): with the residuals ``res_i = a_i x - r_i`` of ``A x - r = 0``,
    ``delta_B = -B^-1 res = sum_i M[:, n+i] res_i`` (the logical columns of ``M`` are ``-B^-1 e_i``)."""
    for _ in range(2):
        res = []
        for i, row in enumerate(rows):
            a = -val[n + i]
            for c, v in row.items():
                a += v * val[c]
            res.append(a)
        if not any(res):
            return
        for p, b in enumerate(basis):
            Mp = M[p]
            delta = 0.0
            for i, r in enumerate(res):
                if r:
                    delta += Mp[n + i] * r
            val[b] += delta


def _finish(rows, n, m, cost, lo, up, lo_t, up_t, dr, status, val, pivots) -> Optional[SmallSolution]:
    """Duals, and the check of the solution against the original data (None if it fails)."""
    x = val[:n]
    # y^T = c_B^T B^-1 is the reduced cost of the logicals (their columns are -e_i, cost 0)
    y = dr[n:]
    act = []
    for i, row in enumerate(rows):
        a = 0.0
        for cidx, v in row.items():
            a += v * x[cidx]
        act.append(a)
    allv = x + act
    for k in range(n + m):
        v = allv[k]
        if v < lo_t[k] or v > up_t[k]:
            return None
        s = status[k]
        # a non-basic variable sits at its bound (within the same tolerance)
        if s == "L" and v > 2 * lo[k] - lo_t[k] or s == "U" and v < 2 * up[k] - up_t[k]:
            return None
    # reduced costs of the columns from the duals: d_j = c_j - sum_i y_i A_ij
    d = list(cost)
    for i, row in enumerate(rows):
        yi = y[i]
        if yi:
            for cidx, v in row.items():
                d[cidx] -= yi * v
    # logical i: d = y_i (its column is -e_i, cost 0)
    scale = 10 * DUAL_TOL * max([1.0] + [abs(v) for v in y] + [abs(v) for v in cost])
    for k in range(n + m):
        dk = d[k] if k < n else y[k - n]
        s = status[k]
        if not s:
            if abs(dk) > scale:
                return None
        elif lo[k] == up[k]:
            continue
        elif s == "L" and dk < -scale or s == "U" and dk > scale or s == "Z" and abs(dk) > scale:
            return None
    obj = sum(cost[j] * x[j] for j in range(n))
    return SmallSolution(x, act, y, obj, ["B" if not status[k] else status[k] for k in range(n)],
                         ["B" if not status[n + i] else status[n + i] for i in range(m)], pivots)
