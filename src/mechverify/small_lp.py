"""Small LPs through GLPK's primal simplex (``swiglpk``), for ``lp.LPSession`` only.

HiGHS costs about 0.2 ms per ``run()`` however small the LP is; the LPs of the mechanisms on a few users
and servers (a dozen rows and columns) take GLPK about 10 us, and building its problem object about as
much again.  Each call builds and deletes its own problem object in the calling thread (GLPK's memory
belongs to a per-thread environment, so an object kept between calls could be freed from another
thread).  ``lp.LPSession`` sends an LP here when ``lp.is_small`` and falls back to HiGHS on ANY
trouble: this module never claims infeasibility or unboundedness, it returns ``None`` instead (GLPK's
status is anything but optimal, an error code, the iteration limit).

GLPK reports misuse of its API (an index out of range, invalid bounds, a duplicate matrix entry) by
ABORTING the process, not by an error code, and some internal assertions abort too.  Everything passed
to it is therefore checked here first: indices come from ``range``, one row's coefficients from a dict
(no duplicates), a column or row with ``lo > up`` (or a NaN) returns ``None`` before GLPK sees it, and so
does any number outside ``[MIN_MAGNITUDE, MAX_MAGNITUDE]`` (zero and infinite bounds aside: random
LPs with numbers near 1e300 overflow inside GLPK's pricing and abort it).  A starting basis with a basic
column that has no entry aborts GLPK's factorization (5.0, bflib/sgf.c) instead of reporting a singular
basis: such a start is not used.  tests/mechverify/test_small_lp.py runs random LPs and random starting
bases, extreme numbers included, in a child process.

The statuses returned are the ``'B' / 'L' / 'U' / 'Z'`` of ``exact_basis`` (a fixed non-basic variable
is ``'L'``), so the exact path re-solves this basis in rationals; a previous basis can be given as the
start (GLPK's warm start; a start that is not a basis falls back to GLPK's standard basis).
"""
from __future__ import annotations

import math
from itertools import chain
from typing import Iterable, Optional, Sequence

import swiglpk as _glpk
from swiglpk import _swiglpk as _raw

__all__ = ["SmallSolution", "solve_small", "SMALL_LP_MAX"]

#: LPs with ``rows * (rows + cols)`` up to this go to GLPK first (``lp.is_small``).  Measured with
#: benchmarks/bench_small_lp.py (TSF's leximin, one float allocation, GLPK / HiGHS): GLPK is 2x faster
#: at 9 000, 1.3x at 22 000, even at ~50 000 (docs/model.md, "One LP layer").
SMALL_LP_MAX = 10_000
ITERATION_LIMIT = 10_000  # GLPK's it_lim (a small LP needs a few dozen pivots; never reached in the tests)
#: nonzero numbers outside this range go to HiGHS (the guard above; measured safe up to 1e+-100)
MIN_MAGNITUDE, MAX_MAGNITUDE = 1e-50, 1e50
_INF = math.inf

_PARM = _glpk.glp_smcp()
_glpk.glp_init_smcp(_PARM)
_PARM.msg_lev = _glpk.GLP_MSG_OFF
_PARM.presolve = _glpk.GLP_OFF  # keeps the basis (and warm starts); presolve costs more than it saves here
_PARM.it_lim = ITERATION_LIMIT

_FR, _LO, _UP, _DB, _FX = _glpk.GLP_FR, _glpk.GLP_LO, _glpk.GLP_UP, _glpk.GLP_DB, _glpk.GLP_FX
_TO_GLPK = {"B": _glpk.GLP_BS, "L": _glpk.GLP_NL, "U": _glpk.GLP_NU, "Z": _glpk.GLP_NF}
_FROM_GLPK = {_glpk.GLP_BS: "B", _glpk.GLP_NL: "L", _glpk.GLP_NU: "U", _glpk.GLP_NF: "Z", _glpk.GLP_NS: "L"}
_NONNEG = (_LO, 0.0, 0.0)
_OPT = _glpk.GLP_OPT
_RESTART = (_glpk.GLP_EBADB, _glpk.GLP_ESING, _glpk.GLP_ECOND)  # the start was not a usable basis
# the arrays' element setters called on the raw SWIG pointer: the proxy's __setitem__ costs ~8x more
_set_int, _set_double = _raw.intArray___setitem__, _raw.doubleArray___setitem__


class SmallSolution:
    """An optimal basic solution: ``x`` (columns), ``act`` (rows), ``y`` (row duals of the MINIMISATION
    form ``min c x``, i.e. ``c - A^T y`` are the reduced costs), ``obj`` (``c x``), statuses."""

    __slots__ = ("x", "act", "y", "obj", "col_status", "row_status")

    def __init__(self, x, act, y, obj, col_status, row_status) -> None:
        self.x, self.act, self.y, self.obj = x, act, y, obj
        self.col_status, self.row_status = col_status, row_status


def _all_fit(values: Iterable[float]) -> bool:
    """Every value is 0 or a float GLPK is safe with (see the module docstring; NaN and inf are not)."""
    lo, hi = MIN_MAGNITUDE, MAX_MAGNITUDE
    return all(v == 0.0 or lo <= abs(v) <= hi for v in values)


def _no_empty_basic(rows: list, col_status: Sequence[str]) -> bool:
    """Every basic column of the start has an entry (GLPK aborts on one without, see the module docstring)."""
    basic = {k for k, st in enumerate(col_status) if st == "B"}
    for row in rows:
        if not basic:
            break
        for c, v in row.items():
            if v:
                basic.discard(c)
    return not basic


def _bounds(lo: float, up: float) -> Optional[tuple]:
    """GLPK's ``(type, lb, ub)`` for ``lo <= v <= up`` (``-inf``/``inf``: none); None if empty or NaN
    (GLPK would abort on invalid bounds; a finite bound must still pass :func:`_all_fit`)."""
    if not lo <= up:
        return None
    if lo == -_INF:
        return (_FR, 0.0, 0.0) if up == _INF else (_UP, 0.0, up)
    return (_LO, lo, 0.0) if up == _INF else (_FX, lo, up) if lo == up else (_DB, lo, up)


def solve_small(rows: list, n: int, cost: list, lo: list, up: list,
                start: Optional[tuple] = None) -> Optional[SmallSolution]:
    """Minimise ``cost . x`` s.t. ``lo[n+i] <= rows[i] . x <= up[n+i]``, ``lo[j] <= x_j <= up[j]``.

    ``rows``: one ``{col: float}`` per row (``0 <= col < n``); ``cost``: ``n`` floats; ``lo``/``up``:
    ``n + m`` floats (``-inf``/``inf`` for none), columns first, then rows.  ``start``: ``(col_status,
    row_status)`` of a previous basis (``'B'``/``'L'``/``'U'``/``'Z'``).  ``None`` on any trouble (see
    the module docstring)."""
    m = len(rows)
    bnds, bound_values = [], []
    for k in range(n + m):
        a, b = lo[k], up[k]
        if a == 0.0 and b == _INF:  # the common case first
            bnds.append(_NONNEG)
        else:
            t = _bounds(a, b)
            if t is None:
                return None
            bnds.append(t)
            bound_values += t[1:]
    if not _all_fit(chain(cost, bound_values, *(row.values() for row in rows))):
        return None
    # the matrix, its indices checked while it is copied (plain C arrays: nothing reaches GLPK before every check)
    nz = sum(map(len, rows))
    ia, ja, ar = _glpk.intArray(nz + 1), _glpk.intArray(nz + 1), _glpk.doubleArray(nz + 1)
    pi, pj, pa = ia.this, ja.this, ar.this
    e = 0
    for i in range(m):
        for c, v in rows[i].items():
            if not 0 <= c < n:
                return None
            if v:  # GLPK would store an explicit zero; leave it out
                e += 1
                _set_int(pi, e, i + 1)
                _set_int(pj, e, c + 1)
                _set_double(pa, e, v)
    P = _raw.glp_create_prob()
    try:
        if m:
            _raw.glp_add_rows(P, m)
        if n:
            _raw.glp_add_cols(P, n)
        set_col, set_row, set_obj = _raw.glp_set_col_bnds, _raw.glp_set_row_bnds, _raw.glp_set_obj_coef
        for k in range(n):
            t, a, b = bnds[k]
            set_col(P, k + 1, t, a, b)
            if cost[k]:
                set_obj(P, k + 1, cost[k])
        for i in range(m):
            t, a, b = bnds[n + i]
            set_row(P, i + 1, t, a, b)
        if e:
            _raw.glp_load_matrix(P, e, pi, pj, pa)
        if start is not None and len(start[0]) == n and len(start[1]) == m and _no_empty_basic(rows, start[0]):
            set_cs, set_rs = _raw.glp_set_col_stat, _raw.glp_set_row_stat
            for k, s in enumerate(start[0]):
                set_cs(P, k + 1, _TO_GLPK[s])
            for i, s in enumerate(start[1]):
                set_rs(P, i + 1, _TO_GLPK[s])
        rc = _raw.glp_simplex(P, _PARM)
        if rc in _RESTART:
            _raw.glp_std_basis(P)
            rc = _raw.glp_simplex(P, _PARM)
        if rc != 0 or _raw.glp_get_status(P) != _OPT:
            return None
        get_cs, get_rs = _raw.glp_get_col_stat, _raw.glp_get_row_stat
        return SmallSolution(_raw.get_col_primals(P), _raw.get_row_primals(P), _raw.get_row_duals(P),
                             _raw.glp_get_obj_val(P), [_FROM_GLPK[get_cs(P, k + 1)] for k in range(n)],
                             [_FROM_GLPK[get_rs(P, i + 1)] for i in range(m)])
    finally:
        _raw.glp_delete_prob(P)
