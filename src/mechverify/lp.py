"""The one LP layer: float backends (GLPK for small LPs, HiGHS) and an exact path in rationals.

An LP is kept in exact form (``Fraction`` coefficients; ``LinearProgram(exact=False)`` keeps floats, for
callers that only solve in floats)::

    minimise / maximise   c^T x
    subject to            L_i <= a_i^T x <= U_i      (rows;  None = infinite)
                          l_j <=   x_j   <= u_j      (columns)

``LPSession`` holds one live HiGHS model (warm-started between modifications) and its exact
mirror.  Small LPs (``is_small``) are first solved by GLPK through :mod:`mechverify.small_lp` (HiGHS
costs ~0.2 ms per run however small the LP, GLPK ~20 us with building its problem); only an optimal
basis is taken from it, and whatever it does not finish goes to HiGHS.  ``solve(exact=True)`` takes the
optimal basis found (GLPK or HiGHS) and re-solves it in rational arithmetic (python-flint
``fmpq_mat``), then *verifies* the certificate exactly:

* primal:  the basic solution satisfies every row and column bound;
* dual:    the reduced costs have the right signs for every non-basic column/row.

A verified basis is an exact optimal solution with exact duals.  A basis that is optimal only within
HiGHS's tolerances (data with more bits than a double) is repaired by a few rational simplex pivots
(:mod:`mechverify.exact_basis`) and verified again.  Only if that fails too is the LP re-solved
exactly by z3's rational simplex (no duals then).
Solver trouble is reported as ``status='error'`` with a reason, never as optimal.

Integer columns (``add_var(integer=True)``, ``set_integer``) make the LP a MIP, solved by HiGHS's
branch and bound (never GLPK; a relative gap of 0, so ``optimal`` is HiGHS's optimum within its absolute
gap).  ``solve(exact=True)`` of a MIP rounds the integer columns of HiGHS's solution, solves what is
left (the continuous columns) exactly with the integer columns fixed, and *verifies* every row and bound
in rationals: the solution returned is exactly feasible; its optimality is HiGHS's word (no duals).  A
MIP HiGHS does not finish (time limit, solution limit, ...) is ``status='error'``, never an answer.

Sign convention of the exact duals returned here: ``row_dual[i] = d objective* / d b_i`` for the
*stated* sense (max or min), where ``b_i`` is the active bound of row ``i``; for a maximisation,
a row ``a^T x >= L`` that blocks the optimum has ``row_dual[i] < 0`` (raising ``L`` lowers the optimum).
"""
from __future__ import annotations

import weakref
from fractions import Fraction
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from . import deadline as _deadline
from .exact_basis import ExactBasis, _integer_rows, solve_from_basis
from .farkas import ray_proves_infeasible
from .highs import _BS, _INF, _acquire_highs, _release_highs, highspy, new_highs, pooled_highs, run_highs
from .lp_program import _ZERO, LinearProgram, LPError, LPResult
from .numbers import as_float
from .small_lp import SMALL_LP_MAX, solve_small

__all__ = ["LinearProgram", "LPSession", "LPResult", "LPError", "solve", "solve_z3", "new_highs", "pooled_highs",
           "run_highs", "is_small"]


def is_small(n_rows: int, n_cols: int) -> bool:
    """Whether ``LPSession`` solves an LP of this size with GLPK (:mod:`mechverify.small_lp`)
    first; code that drives HiGHS directly for speed (``new_highs``) should use ``LPSession`` then."""
    return n_rows * (n_rows + n_cols) <= SMALL_LP_MAX


_float = as_float  # the LP layer's float conversion (mechverify.numbers)


def _fl(v: Optional[Fraction], inf: float) -> float:
    return inf if v is None else _float(v)


def _small_cost(lp: LinearProgram) -> list:
    """The cost in floats for :func:`small_lp.solve_small` (minimised: a maximisation's negated)."""
    sign = -1.0 if lp.maximize else 1.0
    if lp.exact:
        return [sign * (c.numerator / c.denominator) if c else 0.0 for c in lp.cost]
    return [sign * c for c in lp.cost]


class LPSession:
    """A live LP plus its exact mirror; modifications keep both in sync (warm starts).

    Small LPs (``rows * (rows + cols) <= small_lp.SMALL_LP_MAX``) are solved by GLPK through
    :mod:`mechverify.small_lp` (warm-started from its previous basis); anything it does not finish
    cleanly -- and every larger LP, and every MIP -- goes to HiGHS, whose model is built only when first
    needed (integer columns are read then: mark them before the first solve)."""

    def __init__(self, lp: LinearProgram, time_limit: Optional[float] = None) -> None:
        self.lp = lp
        self.time_limit = time_limit
        self._h: Any = None
        self._small: Optional[tuple] = None  # float copy of the LP for GLPK (None: rebuild)
        self._start: Optional[tuple] = None  # GLPK's last basis (warm start)
        self._irows: Optional[list] = None  # the rows in integers for the exact re-solve (None: rebuild)
        self.method = ""  # 'glpk' or 'highs': who solved the last LP

    @property
    def h(self) -> Any:
        """The HiGHS solver object holding this LP (created and loaded on first use)."""
        if self._h is None:
            self._h = _acquire_highs()
            self._load()
            # a MIP sets MIP options: the pool gets the object back with the options of a fresh one
            weakref.finalize(self, _release_highs, self._h, self.lp.is_mip)
        return self._h

    def _load(self) -> None:
        lp = self.lp
        n, m = lp.n_cols, lp.n_rows
        hl = highspy.HighsLp()
        hl.num_col_ = n
        hl.num_row_ = m
        sign = -1.0 if lp.maximize else 1.0
        hl.col_cost_ = np.array([sign * _float(c) for c in lp.cost], dtype=float)
        hl.col_lower_ = np.array([_fl(v, -_INF) for v in lp.col_lower], dtype=float)
        hl.col_upper_ = np.array([_fl(v, _INF) for v in lp.col_upper], dtype=float)
        hl.row_lower_ = np.array([_fl(v, -_INF) for v in lp.row_lower], dtype=float)
        hl.row_upper_ = np.array([_fl(v, _INF) for v in lp.row_upper], dtype=float)
        # row-wise matrix
        starts, idx, vals = [0], [], []
        for row in lp.rows:
            for c, v in row.items():
                idx.append(c)
                vals.append(_float(v))
            starts.append(len(idx))
        hl.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        hl.a_matrix_.start_ = np.array(starts, dtype=np.int32)
        hl.a_matrix_.index_ = np.array(idx, dtype=np.int32)
        hl.a_matrix_.value_ = np.array(vals, dtype=float)
        hl.a_matrix_.num_col_ = n
        hl.a_matrix_.num_row_ = m
        if lp.integer:
            kint, kcont = highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous
            hl.integrality_ = [kint if j in lp.integer else kcont for j in range(n)]
            self._h.setOptionValue("mip_rel_gap", 0.0)
        st = self._h.passModel(hl)
        if st == highspy.HighsStatus.kError:
            raise LPError("HiGHS rejected the LP model")

    # -------------------------------------------------------------- modifications
    def set_row_bounds(self, i: int, lower: Any, upper: Any) -> None:
        """Change row ``i``'s bounds (kept in the warm-started model)."""
        num = self.lp.num
        self.lp.row_lower[i], self.lp.row_upper[i] = num(lower), num(upper)
        lo, up = _fl(self.lp.row_lower[i], -_INF), _fl(self.lp.row_upper[i], _INF)
        if self._small is not None:
            n = self.lp.n_cols
            self._small[3][n + i], self._small[4][n + i] = lo, up
        if self._h is not None:
            self._h.changeRowBounds(i, lo, up)

    def set_coef(self, i: int, col: int, value: Any) -> None:
        """Change the coefficient of ``col`` in row ``i``."""
        v = self.lp.num(value) or self.lp.zero
        self._irows = None
        if not v:
            self.lp.rows[i].pop(col, None)
        else:
            self.lp.rows[i][col] = v
        if self._small is not None:
            frow = self._small[0][i]
            if v:
                frow[col] = _float(v)
            else:
                frow.pop(col, None)
        if self._h is not None:
            self._h.changeCoeff(i, col, _float(v))

    def set_col_bounds(self, col: int, lower: Any, upper: Any) -> None:
        """Change a column's bounds."""
        num = self.lp.num
        self.lp.col_lower[col], self.lp.col_upper[col] = num(lower), num(upper)
        lo, up = _fl(self.lp.col_lower[col], -_INF), _fl(self.lp.col_upper[col], _INF)
        if self._small is not None:
            self._small[3][col], self._small[4][col] = lo, up
        if self._h is not None:
            self._h.changeColBounds(col, lo, up)

    def set_cost(self, coeffs: Mapping[int, Any], maximize: Optional[bool] = None) -> None:
        """Replace the objective (and optionally its sense)."""
        if maximize is not None:
            self.lp.maximize = maximize
        self.lp.set_cost(coeffs)
        if self._small is not None:  # only the cost changes (rows and bounds stay converted)
            self._small = (self._small[0], self._small[1], _small_cost(self.lp), self._small[3], self._small[4])
        if self._h is not None:
            sign = -1.0 if self.lp.maximize else 1.0
            n = self.lp.n_cols
            self._h.changeColsCost(n, np.arange(n, dtype=np.int32),
                                   np.array([sign * _float(c) for c in self.lp.cost], dtype=float))

    def add_row(self, coeffs: Mapping[int, Any], lower: Any = None, upper: Any = None) -> int:
        """Add a row to the session's LP; returns its index."""
        i = self.lp.add_row(coeffs, lower, upper)
        self._small = None
        self._irows = None
        if self._start is not None:
            self._start = (self._start[0], self._start[1] + ["B"])  # the new row's logical is basic
        if self._h is not None:
            row = self.lp.rows[i]
            cols = np.array(list(row.keys()), dtype=np.int32)
            vals = np.array([_float(v) for v in row.values()], dtype=float)
            self._h.addRow(_fl(self.lp.row_lower[i], -_INF), _fl(self.lp.row_upper[i], _INF), len(cols), cols, vals)
        return i

    # -------------------------------------------------------------- solving
    def _small_data(self) -> tuple:
        """``(rows, n, cost, lo, up)`` in floats for :func:`small_lp.solve_small` (cached; the
        modifications keep it in sync)."""
        if self._small is None:
            lp = self.lp
            if lp.exact:
                rows = [{c: v.numerator / v.denominator for c, v in row.items()} for row in lp.rows]
                lo = [_fl(v, -_INF) for v in lp.col_lower] + [_fl(v, -_INF) for v in lp.row_lower]
                up = [_fl(v, _INF) for v in lp.col_upper] + [_fl(v, _INF) for v in lp.row_upper]
            else:  # already floats (or None: no bound); the rows are shared (set_coef changes both alike)
                rows = lp.rows
                lo = [-_INF if v is None else v for v in lp.col_lower + lp.row_lower]
                up = [_INF if v is None else v for v in lp.col_upper + lp.row_upper]
            self._small = (rows, lp.n_cols, _small_cost(lp), lo, up)
        return self._small

    def _int_rows(self) -> list:
        """The rows in integers (``exact_basis._integer_rows``), kept while the rows do not change (costs and
        bounds do not enter them; ``set_coef`` and ``add_row`` drop them)."""
        if self._irows is None:
            self._irows = _integer_rows(self.lp)
        return self._irows

    def _solve_small(self, exact: bool) -> Optional[LPResult]:
        """GLPK (warm-started from its previous basis); with ``exact``, its basis re-solved
        in rationals.  None if either does not succeed (the caller then runs HiGHS)."""
        rows, n, cost, lo, up = self._small_data()
        sol = solve_small(rows, n, cost, lo, up, start=self._start)
        if sol is None:
            return None
        self._start = (sol.col_status, sol.row_status)
        if exact:
            return _exact_from_basis(self.lp, sol.col_status, sol.row_status, _SMALL_KINDS, self._int_rows())
        sign = -1.0 if self.lp.maximize else 1.0
        return LPResult("optimal", x=sol.x, objective=sign * sol.obj, row_dual=[sign * v for v in sol.y],
                        row_activity=sol.act, exact=False, method="glpk")

    def solve(self, exact: bool = False) -> LPResult:
        """Solve the current LP (warm-started in floats; re-solved exactly when ``exact``)."""
        if exact and not self.lp.exact:
            raise ValueError("an exact solve needs an exact LP (this one was built with exact=False)")
        left = _deadline.seconds_left()
        if left is not None and left <= 0:
            raise _deadline.BudgetExhausted("an LP solve was not started: the deadline passed")
        if self.lp.integer:
            return self._solve_mip(exact)
        if is_small(self.lp.n_rows, self.lp.n_cols):
            res = self._solve_small(exact)
            if res is not None:
                self.method = "glpk"
                return res
        self.method = "highs"
        h = self.h
        run_highs(h, self.time_limit)
        ms = h.getModelStatus()
        if ms == highspy.HighsModelStatus.kInfeasible:
            res = LPResult("infeasible", method="highs")
            if exact:  # confirm infeasibility exactly: HiGHS's dual ray checked in rationals, else exact
                # pivots from HiGHS's statuses (any statuses are a starting basis; an infeasibility
                # proof is a dual simplex row), else z3
                st, has_ray, ray = self.h.getDualRay()
                if has_ray and len(ray) == self.lp.n_rows and ray_proves_infeasible(self.lp, ray):
                    return LPResult("infeasible", exact=True, method="farkas")
                basis = self.h.getBasis()
                ex = _exact_from_basis(self.lp, list(basis.col_status), list(basis.row_status),
                                       irows=self._int_rows())
                return ex if ex is not None else solve_z3(self.lp)
            return res
        if ms in (highspy.HighsModelStatus.kUnbounded, highspy.HighsModelStatus.kUnboundedOrInfeasible):
            if exact:
                return solve_z3(self.lp)
            return LPResult("unbounded", method="highs")
        if ms != highspy.HighsModelStatus.kOptimal:
            if exact:
                return solve_z3(self.lp)
            return LPResult("error", method="highs", reason=f"HiGHS status {self.h.modelStatusToString(ms)}")
        sol = self.h.getSolution()
        x = list(sol.col_value)
        sign = -1.0 if self.lp.maximize else 1.0
        duals = [sign * v for v in sol.row_dual]
        obj = sign * self.h.getInfo().objective_function_value
        res = LPResult("optimal", x=x, objective=obj, row_dual=duals, row_activity=list(sol.row_value),
                       exact=False, method="highs")
        if not exact:
            return res
        basis = self.h.getBasis()
        ex = _exact_from_basis(self.lp, list(basis.col_status), list(basis.row_status), irows=self._int_rows())
        if ex is None:
            ex = _refine(self.lp, basis)
        if ex is not None:
            return ex
        return solve_z3(self.lp)

    def _solve_mip(self, exact: bool) -> LPResult:
        """A MIP by HiGHS's branch and bound; with ``exact``, its solution made exact and verified
        (:func:`_exact_mip`).  Anything but a finished solve is ``error`` (a time limit included)."""
        self.method = "highs"
        h = self.h
        run_highs(h, self.time_limit, mip=True)
        ms = h.getModelStatus()
        if ms == highspy.HighsModelStatus.kInfeasible:
            return LPResult("infeasible", method="highs-mip")  # HiGHS's word (no exact proof for a MIP)
        if ms == highspy.HighsModelStatus.kUnbounded:
            return LPResult("unbounded", method="highs-mip")
        if ms != highspy.HighsModelStatus.kOptimal:
            return LPResult("error", method="highs-mip",
                            reason=f"the MIP did not finish (HiGHS status {h.modelStatusToString(ms)})")
        x = list(h.getSolution().col_value)
        for j in self.lp.integer:
            x[j] = float(round(x[j]))
        if exact:
            return _exact_mip(self.lp, x)
        lp = self.lp
        obj = sum(_float(c) * x[j] for j, c in enumerate(lp.cost) if c)
        act = [sum(_float(v) * x[c] for c, v in row.items()) for row in lp.rows]
        return LPResult("optimal", x=x, objective=obj, row_dual=None, row_activity=act, exact=False,
                        method="highs-mip")


def _exact_mip(lp: LinearProgram, x: Sequence[float]) -> LPResult:
    """HiGHS's MIP solution ``x`` (integer columns already rounded) made exact: the integer columns are
    taken as the integers they are, the continuous ones (if any) re-solved exactly with the integer
    columns fixed; then every bound and row is verified in rationals.  ``error`` if that fails (the
    solution is then not exactly feasible: nothing is claimed)."""
    ints = {j: Fraction(int(x[j])) for j in lp.integer}
    if len(ints) == lp.n_cols:
        xq = [ints[j] for j in range(lp.n_cols)]
    else:
        fixed = lp.copy()
        fixed.integer = set()
        for j, v in ints.items():
            fixed.col_lower[j] = fixed.col_upper[j] = v
        res = LPSession(fixed).solve(exact=True)
        if not res.ok:
            return LPResult("error", method="highs-mip",
                            reason=f"the MIP solution's integers leave no exact solution ({res.status})")
        xq = list(res.x)
    for j, v in enumerate(xq):
        lo, up = lp.col_lower[j], lp.col_upper[j]
        if (lo is not None and v < lo) or (up is not None and v > up):
            return LPResult("error", method="highs-mip",
                            reason=f"the MIP solution (rounded) breaks the bounds of column {lp.col_names[j] or j}")
    act = [sum((v * xq[c] for c, v in row.items()), _ZERO) for row in lp.rows]
    for i, a in enumerate(act):
        lo, up = lp.row_lower[i], lp.row_upper[i]
        if (lo is not None and a < lo) or (up is not None and a > up):
            return LPResult("error", method="highs-mip", reason=f"the MIP solution (rounded) breaks row {i} exactly")
    obj = sum((c * xq[j] for j, c in enumerate(lp.cost) if c), _ZERO)
    return LPResult("optimal", x=xq, objective=obj, row_dual=None, row_activity=act, exact=True, method="highs-mip")


def solve(lp: LinearProgram, exact: bool = False, time_limit: Optional[float] = None) -> LPResult:
    """One-shot solve (builds a fresh HiGHS model)."""
    return LPSession(lp, time_limit=time_limit).solve(exact=exact)


# ---------------------------------------------------------------------- exact basis re-solve
def _basis_kinds() -> dict:
    kinds = {_BS.kBasic: "B", _BS.kLower: "L", _BS.kUpper: "U", _BS.kZero: "Z"}
    if hasattr(_BS, "kNonbasic"):
        kinds[_BS.kNonbasic] = "L"  # at some bound: the finite one, or the repair moves it
    return kinds


_KINDS = _basis_kinds()


_SMALL_KINDS = {"B": "B", "L": "L", "U": "U", "Z": "Z"}  # statuses of small_lp (already in exact_basis's form)


def _exact_from_basis(lp: LinearProgram, col_status: list, row_status: list,
                      kinds: Optional[dict] = None, irows: Optional[list] = None) -> Optional[LPResult]:
    """Re-solve HiGHS's basis in rationals, repair it by exact simplex pivots if it is optimal only
    within HiGHS's tolerances, and verify primal and dual feasibility exactly
    (:mod:`mechverify.exact_basis`); None on failure."""
    try:
        import flint  # noqa: F401
    except ImportError:  # pragma: no cover
        return None
    b = solve_from_basis(lp, col_status, row_status, _KINDS if kinds is None else kinds, irows=irows)
    if b is None:
        return None
    if b.infeasible:
        return LPResult("infeasible", exact=True, method="basis")
    x = b.x
    obj = sum((c * x[j] for j, c in enumerate(lp.cost) if c and x[j]), _ZERO)
    sign = -1 if lp.maximize else 1
    # d obj*/d b_i for the stated sense: for the minimisation form it is pi_i; flip for max
    row_dual = [sign * p for p in b.pi]
    return LPResult("optimal", x=x, objective=obj, row_dual=row_dual, row_activity=b.act, exact=True,
                    method="basis")


REFINE_ROUNDS = 3
_CLAMP = Fraction(2 ** 50)


def _refine(lp: LinearProgram, basis: Any) -> Optional[LPResult]:
    """Iterative refinement of HiGHS's basis (the LP is too large for many exact pivots): shift the
    LP to the exact basic solution ``x0`` of the current basis and scale it by ``2**k`` so that its
    tiny violations become O(1) -- ``(l - x0) 2**k <= y <= (u - x0) 2**k``, rows likewise (bounds
    beyond ``2**50`` clamped: far from the basis, they do not decide it) -- re-solve it with HiGHS
    warm-started from the basis, and try the new basis exactly (:func:`_exact_from_basis`)."""
    for _ in range(REFINE_ROUNDS):
        b = ExactBasis.from_status(lp, list(basis.col_status), list(basis.row_status), _KINDS)
        if b is None:
            return None
        b.irows = _integer_rows(lp)
        if not b.evaluate():
            return None
        viol = Fraction(0)
        for j in b.basic_cols:
            lo, up = lp.col_lower[j], lp.col_upper[j]
            viol = max(viol, (lo - b.x[j]) if lo is not None else 0, (b.x[j] - up) if up is not None else 0)
        act = b.act
        for i in range(lp.n_rows):
            lo, up = lp.row_lower[i], lp.row_upper[i]
            viol = max(viol, (lo - act[i]) if lo is not None else 0, (act[i] - up) if up is not None else 0)
        if not viol:
            return None  # primal feasible: what is wrong is not a matter of scale
        scale = Fraction(2) ** max(0, min(200, -(viol.numerator.bit_length() - viol.denominator.bit_length())))

        def sc(v, shift):
            if v is None:
                return None
            w = (v - shift) * scale
            return max(-_CLAMP, min(_CLAMP, w))
        ref = lp.copy()
        ref.col_lower = [sc(v, b.x[j]) for j, v in enumerate(lp.col_lower)]
        ref.col_upper = [sc(v, b.x[j]) for j, v in enumerate(lp.col_upper)]
        ref.row_lower = [sc(v, act[i]) for i, v in enumerate(lp.row_lower)]
        ref.row_upper = [sc(v, act[i]) for i, v in enumerate(lp.row_upper)]
        s = LPSession(ref)
        s.h.setBasis(basis)
        run_highs(s.h)
        if s.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        basis = s.h.getBasis()
        ex = _exact_from_basis(lp, list(basis.col_status), list(basis.row_status))
        if ex is not None:
            return ex
    return None


# ---------------------------------------------------------------------- exact fallback (z3)
def solve_z3(lp: LinearProgram, timeout_ms: int = 60000) -> LPResult:
    """Exact LP by z3's rational simplex (Optimize).  Primal only (no duals).  Within a deadline scope
    (``mechverify.deadline``) the timeout is at most the time left, and running out of it there raises
    ``BudgetExhausted``."""
    import z3

    left = _deadline.seconds_left()
    if left is not None:
        if left <= 0:
            raise _deadline.BudgetExhausted("an exact LP solve was not started: the deadline passed")
        timeout_ms = max(1, min(timeout_ms, int(left * 1000)))
    opt = z3.Optimize()
    opt.set("timeout", timeout_ms)
    xs = [z3.Real(f"x{j}") for j in range(lp.n_cols)]

    def q(v: Fraction):
        return z3.RealVal(f"{v.numerator}/{v.denominator}")

    for j, v in enumerate(xs):
        if lp.col_lower[j] is not None:
            opt.add(v >= q(lp.col_lower[j]))
        if lp.col_upper[j] is not None:
            opt.add(v <= q(lp.col_upper[j]))
    for i, row in enumerate(lp.rows):
        expr = z3.Sum([q(c) * xs[col] for col, c in row.items()]) if row else z3.RealVal(0)
        if lp.row_lower[i] is not None:
            opt.add(expr >= q(lp.row_lower[i]))
        if lp.row_upper[i] is not None:
            opt.add(expr <= q(lp.row_upper[i]))
    objective = z3.Sum([q(c) * xs[j] for j, c in enumerate(lp.cost) if c]) if any(lp.cost) else z3.RealVal(0)
    h = opt.maximize(objective) if lp.maximize else opt.minimize(objective)
    r = opt.check()
    if r == z3.unsat:
        return LPResult("infeasible", exact=True, method="z3")
    if r != z3.sat:
        if left is not None and _deadline.seconds_left() <= 0:
            raise _deadline.BudgetExhausted("an exact LP solve (z3) stopped at the deadline")
        return LPResult("error", method="z3", reason=f"z3 returned {r} ({opt.reason_unknown()})")
    val = opt.upper(h) if lp.maximize else opt.lower(h)
    if z3.is_rational_value(val) is False:
        # +-oo or epsilon terms mean unbounded
        return LPResult("unbounded", exact=True, method="z3")
    model = opt.model()

    def frac(e) -> Fraction:
        e = model.eval(e, model_completion=True)
        return Fraction(e.numerator_as_long(), e.denominator_as_long())

    x = [frac(v) for v in xs]
    obj = sum((c * x[j] for j, c in enumerate(lp.cost)), Fraction(0))
    act = [sum((v * x[c] for c, v in row.items()), Fraction(0)) for row in lp.rows]
    return LPResult("optimal", x=x, objective=obj, row_dual=None, row_activity=act, exact=True, method="z3")
