"""Exact re-solve of an LP basis, repaired by a few rational simplex pivots when it is not optimal.

Used by :mod:`mechverify.lp` (exact mode).  HiGHS's optimal basis is optimal only within its
tolerances (1e-7): on LPs whose data carry more bits than a double (e.g. PS-DSF's pattern LP, whose
right-hand sides are 80-bit approximations) the exact basic solution can violate a row by 1e-24, or
a reduced cost can have the wrong sign by as little.  Such a basis is one or a few pivots away from
an exactly optimal one, so this module continues the simplex method *in rationals* from it:

* dual simplex pivots while the basis is dual feasible but primal infeasible;
* primal simplex pivots while it is primal feasible but dual infeasible;
* when it is neither, dual simplex pivots on zero costs (every basis is dual feasible for them)
  until it is primal feasible, then primal simplex pivots on the real costs;
* a basis matrix that is singular in exact arithmetic is first made regular (``repair``);
* give up (``None``; the caller falls back to z3) when the basis matrix is singular, the
  LP looks infeasible/unbounded from the basis, or ``max_pivots`` pivots (or ``PIVOT_WORK``)
  did not finish.

The representation is the reduced one of the bounded simplex on ``A x = r`` (``r`` = row
activities): the basic structural columns ``B`` and the *tight* rows ``T`` (non-basic row activities,
at a bound) with ``|B| == |T|``; the square system ``A[T, B] x_B = b_T - A[T, N] x_N`` gives the basic
solution and ``A[T, B]^T pi = c_B`` the duals.  Non-basic variables (columns and tight rows) sit at a
bound: ``'L'`` lower, ``'U'`` upper, ``'Z'`` free at zero.  A result is returned only after it was
checked exactly: primal feasible (every column and row within its bounds), dual feasible (every
non-basic reduced cost has the sign its bound allows) -- i.e. an exactly optimal vertex with its duals.
Ties are broken by the smallest index (Bland's rule), which also rules out cycling.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

from .deadline import BudgetExhausted, seconds_left

__all__ = ["ExactBasis", "solve_from_basis", "MAX_PIVOTS"]

MAX_PIVOTS = 200  # pivots of the exact repair before giving up (then z3)
# A pivot costs about one pass over the LP's non-zeros (sparse solves, integer row activities).  On
# the 60 servers x 45 users pattern LP (23902 rows, ~570k non-zeros) HiGHS's basis is ~2000 pivots
# (150 s) from exact optimality, while z3 takes ~18 s; so pivots stop once pivots * non-zeros
# exceeds this budget (small LPs: MAX_PIVOTS; that one: ~9 pivots, ~0.7 s).
PIVOT_WORK = 5_000_000
DENSE_BELOW = 12  # systems up to this size are solved densely at once (peeling costs more in Python)

_ZERO = Fraction(0)


_fmpq: Any = None


def _q(v: Fraction) -> Any:
    global _fmpq
    if _fmpq is None:  # flint is imported on first use (lp.py checks it is installed)
        from flint import fmpq
        _fmpq = fmpq
    return _fmpq(v.numerator, v.denominator)


def _fr(q: Any) -> Fraction:
    return Fraction(int(q.p), int(q.q))


class ExactBasis:
    """A basis of ``lp`` (column statuses, tight rows) with its exact primal and dual solution."""

    def __init__(self, lp: Any, basic_cols: list, col_at: dict, tight: dict) -> None:
        self.lp = lp
        self.basic_cols = list(basic_cols)  # basic structural columns
        self.col_at = dict(col_at)  # non-basic column -> 'L' | 'U' | 'Z'
        self.tight = dict(tight)  # tight (non-basic) row -> 'L' | 'U'
        self.pivots = 0
        self.repairs = 0
        self.infeasible = False  # set with a proof (see solve_from_basis)
        self.phase1 = False  # zero costs: the dual simplex then only restores primal feasibility

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_status(cls, lp: Any, col_status: list, row_status: list, kinds: dict) -> Optional["ExactBasis"]:
        """From HiGHS's statuses (``kinds`` maps a status to 'B', 'L', 'U', 'Z' or '?').  A non-basic
        status naming an infinite bound is read as the finite one (HiGHS reports e.g. ``kLower`` for a
        row ``<= 0`` at 0); ``None`` if the statuses do not make a basis (a superbasic variable)."""
        basic, col_at, tight = [], {}, {}
        for j, st in enumerate(col_status):
            k = kinds.get(st, "?")
            if k == "B":
                basic.append(j)
                continue
            at = _nonbasic_side(k, lp.col_lower[j], lp.col_upper[j])
            if at is None:
                return None
            col_at[j] = at
        for i, st in enumerate(row_status):
            k = kinds.get(st, "?")
            if k == "B":
                continue
            at = _nonbasic_side(k, lp.row_lower[i], lp.row_upper[i])
            if at is None or at == "Z":  # a free row cannot be tight
                return None
            tight[i] = at
        if len(tight) != len(basic):
            return None
        return cls(lp, basic, col_at, tight)

    # ------------------------------------------------------------------ linear algebra
    def _bound(self, lo: Optional[Fraction], up: Optional[Fraction], at: str) -> Fraction:
        return lo if at == "L" else up if at == "U" else _ZERO

    def _matrix(self) -> Any:
        """The basis matrix ``A[T, B]`` as a dense ``fmpq_mat`` (only to repair a singular one)."""
        from flint import fmpq_mat
        k = len(self.T)
        M = fmpq_mat(k, k)
        for r, row in enumerate(self.Mrows):
            for p, v in row.items():
                M[r, p] = _q(v)
        return M

    def evaluate(self) -> bool:
        """Exact basic solution ``x``, row activities ``act``, duals ``pi`` (minimisation form) and
        reduced costs ``d`` of the columns.  False if the basis matrix is singular."""
        lp = self.lp
        n, m = lp.n_cols, lp.n_rows
        x = [_ZERO] * n
        for j, at in self.col_at.items():
            x[j] = self._bound(lp.col_lower[j], lp.col_upper[j], at)
        T = sorted(self.tight)
        bpos = {c: p for p, c in enumerate(self.basic_cols)}
        k = len(T)
        self.T, self.bpos = T, bpos
        self.Mrows = [{bpos[c]: v for c, v in lp.rows[i].items() if c in bpos} for i in T]
        self.MTrows = [{} for _ in range(k)]
        for r, row in enumerate(self.Mrows):
            for p, v in row.items():
                self.MTrows[p][r] = v
        if self.phase1:
            cmin = [_ZERO] * n
        elif lp.maximize:
            cmin = [-c if c else _ZERO for c in lp.cost]
        else:
            cmin = list(lp.cost)
        self.cmin = cmin
        pi = [_ZERO] * m
        if k:
            rhs = []
            for i in T:
                acc = self._bound(lp.row_lower[i], lp.row_upper[i], self.tight[i])
                for c, v in lp.rows[i].items():
                    if c not in bpos:
                        xc = x[c]
                        if xc:
                            acc -= v * xc
                rhs.append(acc)
            sol = _sparse_solve(self.Mrows, rhs)
            dsol = None if sol is None else _sparse_solve(self.MTrows, [cmin[c] for c in self.basic_cols])
            if dsol is None:
                return self.repair() and self.evaluate()
            for p, c in enumerate(self.basic_cols):
                x[c] = sol[p]
            for r, i in enumerate(T):
                pi[i] = dsol[r]
        self.x, self.pi = x, pi
        self._act = None
        self.D, self.act_num = _scaled_products(self.irows, x)
        colsum = [_ZERO] * n
        for i in T:
            p_i = pi[i]
            if p_i:
                for c, v in lp.rows[i].items():
                    colsum[c] += p_i * v
        self.d = [cmin[j] - colsum[j] if colsum[j] else cmin[j] for j in range(n)]
        return True

    @property
    def act(self) -> list:
        """Exact row activities at ``x``."""
        if self._act is None:
            self._act = [self.act_of(i) for i in range(self.lp.n_rows)]
        return self._act

    def act_of(self, i: int) -> Fraction:
        """Exact activity of row ``i`` at ``x``."""
        return Fraction(self.act_num[i], self.D * self.irows[i][0])

    def _row_side(self, i: int) -> str:
        """'L' / 'U' if row ``i``'s activity is below its lower / above its upper bound, else ''
        (compared in integers: activity = act_num / (D * L_i))."""
        lp = self.lp
        num, den = self.act_num[i], self.D * self.irows[i][0]
        lo, up = lp.row_lower[i], lp.row_upper[i]
        if lo is not None and num * lo.denominator < lo.numerator * den:
            return "L"
        if up is not None and num * up.denominator > up.numerator * den:
            return "U"
        return ""

    def verified(self) -> bool:
        """The optimality certificate checked again (guards the bookkeeping): every column and row
        (tight ones too) within its bounds, tight rows and non-basic columns exactly at their bound,
        reduced costs of basic columns and duals of non-tight rows zero.  The signs of the non-basic
        reduced costs are ``dual_violation``'s check, made just before."""
        lp = self.lp
        for j in range(lp.n_cols):
            if _outside(self.x[j], lp.col_lower[j], lp.col_upper[j]):
                return False
        for j, at in self.col_at.items():
            if self.x[j] != self._bound(lp.col_lower[j], lp.col_upper[j], at):
                return False
        for i in range(lp.n_rows):
            if self._row_side(i):
                return False
        for i, at in self.tight.items():
            if self.act_of(i) != self._bound(lp.row_lower[i], lp.row_upper[i], at):
                return False
        if any(self.d[c] for c in self.basic_cols) or any(self.pi[i] for i in range(lp.n_rows) if i not in self.tight):
            return False
        return True  # the non-basic reduced costs' signs: dual_violation, just before

    def repair(self) -> bool:
        """Make a singular basis matrix regular (HiGHS's basis can be singular in exact arithmetic,
        e.g. two tight rows that are the same inequality in both directions): keep a maximal set of
        independent basic columns and of independent tight rows (their submatrix is then regular);
        the other basic columns go to a bound, the other tight rows become basic.  False if nothing
        was dropped (called once per singular matrix, so no loop)."""
        M, T = self._matrix(), self.T
        _, rank = M.rref()
        if rank == len(T) or self.repairs >= 3:
            return False
        self.repairs += 1
        keep_c = _pivot_columns(M)
        keep_r = _pivot_columns(M.transpose())
        lp = self.lp
        for p, c in enumerate(list(self.basic_cols)):
            if p not in keep_c:
                self.basic_cols.remove(c)
                lo, up = lp.col_lower[c], lp.col_upper[c]
                self.col_at[c] = "L" if lo is not None else "U" if up is not None else "Z"
        for r, i in enumerate(T):
            if r not in keep_r:
                del self.tight[i]
        return True

    # ------------------------------------------------------------------ optimality tests
    def primal_violation(self) -> Optional[tuple]:
        """The first basic variable out of its bounds: ``('c', j, side)`` / ``('r', i, side)`` with
        ``side`` the violated bound ('L' below the lower, 'U' above the upper); None if feasible."""
        lp = self.lp
        for j in sorted(self.basic_cols):
            side = _outside(self.x[j], lp.col_lower[j], lp.col_upper[j])
            if side:
                return ("c", j, side)
        for i in range(lp.n_rows):
            if i not in self.tight:
                side = self._row_side(i)
                if side:
                    return ("r", i, side)
        return None

    def _nonbasic(self):
        """``(key, at, reduced cost, fixed)`` of every non-basic variable, keys ``('c', j)`` / ``('r', i)``."""
        lp = self.lp
        for j, at in self.col_at.items():
            lo, up = lp.col_lower[j], lp.col_upper[j]
            yield ("c", j), at, self.d[j], lo is not None and lo == up
        for i, at in self.tight.items():
            lo, up = lp.row_lower[i], lp.row_upper[i]
            yield ("r", i), at, self.pi[i], lo is not None and lo == up

    def dual_violation(self) -> Optional[tuple]:
        """The first non-basic variable whose reduced cost has the wrong sign: ``(key, direction)``
        with ``direction`` +1 (increasing it lowers the objective) or -1; None if dual feasible."""
        for key, at, rc, fixed in sorted(self._nonbasic()):
            if fixed or not rc:
                continue
            if rc < 0 and at in ("L", "Z"):
                return key, 1
            if rc > 0 and at in ("U", "Z"):
                return key, -1
        return None

    # ------------------------------------------------------------------ pivots
    def _solve(self, vec: list, transpose: bool) -> Optional[list]:
        return _sparse_solve(self.MTrows if transpose else self.Mrows, vec)

    def _swap(self, leave: tuple, leave_at: str, enter: tuple) -> None:
        """``leave`` (basic) becomes non-basic at ``leave_at``; ``enter`` (non-basic) becomes basic."""
        kind, idx = leave
        if kind == "c":
            self.basic_cols.remove(idx)
            self.col_at[idx] = leave_at
        else:
            self.tight[idx] = leave_at
        kind, idx = enter
        if kind == "c":
            del self.col_at[idx]
            self.basic_cols.append(idx)
        else:
            del self.tight[idx]
        self.pivots += 1

    def dual_pivot(self, viol: tuple) -> bool:
        """One dual simplex pivot on the violated basic variable ``viol``; False if none is possible
        (the LP is then infeasible, or the basis numerically useless)."""
        kind, idx, side = viol
        lp, T, bpos = self.lp, self.T, self.bpos
        k = len(T)
        if kind == "c":
            e = [_ZERO] * k
            e[bpos[idx]] = Fraction(1)
            y = self._solve(e, True) if k else []
            base: dict = {}
        else:
            row = lp.rows[idx]
            y = self._solve([row.get(c, _ZERO) for c in self.basic_cols], True) if k else []
            base = row
        if y is None:
            return False
        g_rows = {i: y[r] for r, i in enumerate(T)}  # d value / d b_t
        ya: dict = {}
        for r, i in enumerate(T):
            if y[r]:
                for c, v in lp.rows[i].items():
                    ya[c] = ya.get(c, _ZERO) + y[r] * v
        want = 1 if side == "L" else -1  # the leaving value must increase (below its lower bound) or decrease
        best = None
        for key, at, rc, fixed in self._nonbasic():
            if fixed:
                continue
            if key[0] == "c":
                g = base.get(key[1], _ZERO) - ya.get(key[1], _ZERO)
            else:
                g = g_rows[key[1]]
            g *= want
            if not g or (at == "L" and g < 0) or (at == "U" and g > 0):
                continue
            ratio = abs(rc / g)
            if best is None or (ratio, key) < best[:2]:
                best = (ratio, key)
        if best is None:
            return False
        self._swap((kind, idx), side, best[1])
        return True

    def primal_pivot(self, enter: tuple, direction: int) -> bool:
        """One primal simplex pivot bringing ``enter`` into the basis (moving it by ``direction``);
        False if the step is unbounded (the LP is then unbounded) or the basis singular."""
        lp, T, bpos = self.lp, self.T, self.bpos
        k = len(T)
        kind, idx = enter
        if kind == "c":
            rhs = [-lp.rows[i].get(idx, _ZERO) for i in T]
        else:
            rhs = [Fraction(1) if i == idx else _ZERO for i in T]
        dx = self._solve(rhs, False) if k else []
        if dx is None:
            return False
        dxb = {c: dx[p] * direction for p, c in enumerate(self.basic_cols)}
        best = None  # (step, key, side the leaving variable ends at)

        def consider(step, key, at):
            nonlocal best
            if best is None or (step, key) < best[:2]:
                best = (step, key, at)

        for c, v in dxb.items():
            _ratio(self.x[c], v, lp.col_lower[c], lp.col_upper[c], ("c", c), consider)
        moving = dict(dxb)
        if kind == "c":
            moving[idx] = Fraction(direction)
        vec = [_ZERO] * lp.n_cols
        for c, v in moving.items():
            vec[c] = v
        Dd, dnum = _scaled_products(self.irows, vec)
        for i in range(lp.n_rows):
            if dnum[i] and i not in self.tight:
                dv = Fraction(dnum[i], Dd * self.irows[i][0])
                _ratio(self.act_of(i), dv, lp.row_lower[i], lp.row_upper[i], ("r", i), consider)
        lo, up = (lp.col_lower[idx], lp.col_upper[idx]) if kind == "c" else (lp.row_lower[idx], lp.row_upper[idx])
        if lo is not None and up is not None:  # a bound flip of the entering variable itself
            consider(up - lo, enter, "U" if direction > 0 else "L")
        if best is None:
            return False
        step, key, at = best
        if key == enter:
            if kind == "c":
                self.col_at[idx] = at
            else:
                self.tight[idx] = at
            self.pivots += 1
        else:
            self._swap(key, at, enter)
        return True


def _integer_rows(lp: Any) -> list:
    """Every row as ``(L, [(col, int coefficient * L)])`` with ``L`` the lcm of its denominators."""
    out = []
    for row in lp.rows:
        L = math.lcm(*[v.denominator for v in row.values()]) if row else 1
        out.append((L, [(c, v.numerator * (L // v.denominator)) for c, v in row.items()]))
    return out


def _scaled_products(irows: list, x: list) -> tuple:
    """``(D, nums)`` with ``row_i . x = nums[i] / (D * L_i)`` (integer arithmetic; ``D`` = lcm of the
    denominators of ``x``)."""
    D = math.lcm(*[v.denominator for v in x if v]) if any(x) else 1
    X = [v.numerator * (D // v.denominator) if v else 0 for v in x]
    return D, [sum([a * X[c] for c, a in terms]) for _, terms in irows]


def _sparse_solve(rows: list, rhs: list) -> Optional[list]:
    """Exact solution ``z`` of ``sum_p rows[r][p] z_p = rhs[r]`` (square; ``rows`` sparse dicts of
    non-zero Fractions), or None if singular.  Row singletons are solved and substituted, column
    singletons set aside for back substitution; the remaining core is solved densely (``fmpq_mat``).
    Basis matrices of LPs like PS-DSF's pattern LP are mostly peeled away."""
    from flint import fmpq_mat
    k = len(rows)
    if k <= DENSE_BELOW:
        return _dense_solve(rows, list(range(k)), rhs)
    cols: list = [set() for _ in range(k)]
    for r, row in enumerate(rows):
        for p in row:
            cols[p].add(r)
    res = list(rhs)
    live_r = [set(row) for row in rows]  # unknown columns of each live row
    z: list = [None] * k
    row_done = [False] * k
    col_done = [False] * k
    later = []  # (row, col) solved after the core, in reverse order
    changed = True
    while changed:
        changed = False
        for r in range(k):
            if row_done[r] or len(live_r[r]) != 1:
                continue
            (p,) = live_r[r]
            z[p] = res[r] / rows[r][p]
            row_done[r] = col_done[p] = True
            for r2 in cols[p]:
                if not row_done[r2]:
                    res[r2] -= rows[r2][p] * z[p]
                    live_r[r2].discard(p)
            changed = True
        for p in range(k):
            if col_done[p]:
                continue
            live = [r for r in cols[p] if not row_done[r]]
            if len(live) == 1:
                r = live[0]
                later.append((r, p))
                row_done[r] = col_done[p] = True
                for p2 in live_r[r]:
                    if p2 != p:
                        cols[p2].discard(r)
                changed = True
            elif not live:
                return None  # a column with no equation left: singular
    core_r = [r for r in range(k) if not row_done[r]]
    core_c = [p for p in range(k) if not col_done[p]]
    if len(core_r) != len(core_c):
        return None
    if core_r:
        core = _dense_solve([{p: rows[r][p] for p in live_r[r]} for r in core_r], core_c, [res[r] for r in core_r])
        if core is None:
            return None
        for q, p in enumerate(core_c):
            z[p] = core[q]
    for r, p in reversed(later):
        acc = rhs[r]
        for p2, v in rows[r].items():
            if p2 != p:
                acc -= v * z[p2]
        z[p] = acc / rows[r][p]
    return z


def _dense_solve(rows: list, cids: list, rhs: list) -> Optional[list]:
    """Dense exact solve (``fmpq_mat``) of the square system ``rows`` (dicts keyed by the column ids
    ``cids``) with right-hand side ``rhs``; the solution listed in the order of ``cids``; None if
    singular."""
    from flint import fmpq_mat
    n = len(cids)
    cpos = {p: q for q, p in enumerate(cids)}
    M = fmpq_mat(n, n)
    b = fmpq_mat(n, 1)
    for q in range(n):
        for p, v in rows[q].items():
            M[q, cpos[p]] = _q(v)
        b[q, 0] = _q(rhs[q])
    try:
        sol = M.solve(b)
    except (ZeroDivisionError, ValueError):
        return None
    return [_fr(sol[q, 0]) for q in range(n)]


def _pivot_columns(M: Any) -> set:
    """Indices of the pivot columns of ``M``'s reduced row echelon form (a maximal independent set)."""
    R, rank = M.rref()
    out, c = set(), 0
    for r in range(rank):
        while R[r, c] == 0:
            c += 1
        out.add(c)
        c += 1
    return out


def _nonbasic_side(kind: str, lo: Optional[Fraction], up: Optional[Fraction]) -> Optional[str]:
    if kind == "L" and lo is not None:
        return "L"
    if kind == "U" and up is not None:
        return "U"
    if kind in ("L", "U", "Z"):
        if lo is None and up is None:
            return "Z"
        if kind == "Z":  # HiGHS's kZero: at value 0, which must be a bound of a bounded variable
            return "L" if lo == 0 else "U" if up == 0 else None
        return "L" if lo is not None else "U"
    return None


def _outside(v: Fraction, lo: Optional[Fraction], up: Optional[Fraction]) -> str:
    if lo is not None and v < lo:
        return "L"
    if up is not None and v > up:
        return "U"
    return ""


def _ratio(v: Fraction, dv: Fraction, lo: Optional[Fraction], up: Optional[Fraction], key: tuple, consider) -> None:
    if dv > 0 and up is not None:
        consider((up - v) / dv, key, "U")
    elif dv < 0 and lo is not None:
        consider((v - lo) / -dv, key, "L")


def solve_from_basis(lp: Any, col_status: list, row_status: list, kinds: dict,
                     max_pivots: int = MAX_PIVOTS, irows: Optional[list] = None) -> Optional[ExactBasis]:
    """An exactly optimal basis reached from HiGHS's statuses by at most ``max_pivots`` rational
    simplex pivots (its ``x``, ``act``, ``pi`` are exact), a basis with ``infeasible`` set when a dual
    simplex row proves the LP infeasible, or None (see the module docstring).  ``irows``: ``lp``'s rows as
    :func:`_integer_rows` gives them, if the caller keeps them (else computed here)."""
    b = ExactBasis.from_status(lp, col_status, row_status, kinds)
    if b is None:
        return None
    if any(lo is not None and up is not None and lo > up
           for lo, up in zip(lp.col_lower + lp.row_lower, lp.col_upper + lp.row_upper)):
        b.infeasible = True  # a variable or row with lower bound > upper bound
        return b
    b.irows = _integer_rows(lp) if irows is None else irows
    nnz = sum(len(r) for r in lp.rows) + lp.n_cols
    while True:
        left = seconds_left()  # the running command's deadline (mechverify.deadline): each exact
        if left is not None and left <= 0:  # evaluation of a large basis can take seconds
            raise BudgetExhausted("the exact basis re-solve stopped at the deadline")
        if not b.evaluate():
            return None
        pv = b.primal_violation()
        if pv is None and b.phase1:  # primal feasible: back to the real costs
            b.phase1 = False
            continue
        dv = b.dual_violation()
        if pv is None and dv is None:
            return b if b.verified() else None
        if b.pivots >= max_pivots or b.pivots * nnz > PIVOT_WORK:
            return None
        if pv is not None and dv is not None:  # neither: phase 1 by the dual simplex on zero costs
            if b.phase1:  # pragma: no cover - zero costs are dual feasible
                return None
            b.phase1 = True
            continue
        if pv is not None:
            if not b.dual_pivot(pv):
                # no entering variable: the leaving variable's row, an exact identity in the non-basic
                # variables, cannot reach its bound within their bounds -- a proof of infeasibility
                b.infeasible = True
                return b
        elif not b.primal_pivot(*dv):
            return None
