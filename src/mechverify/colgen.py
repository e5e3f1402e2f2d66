"""Column generation for large float LPs: the one LP layer's path for cluster-sized leximin rounds.

A leximin round of a cluster-sized instance (1000 users x 100 servers) is one LP with a column per
(user, usable server) pair -- 50 000 to 100 000 columns -- of which only a few thousand are non-zero
at the optimum.  HiGHS's simplex on the whole LP takes 7 s there; column generation takes ~2.5 s:

1. the restricted master holds, for every *seed row* (a user's score row), the ``per_row`` columns
   with the best score per unit of capacity they use (``|a_sc| / max_k |a_kc| / u_k`` over the
   capacity rows ``k``), plus every column that is not a candidate (see below);
2. solve it (warm-started), price every column left out: reduced cost ``c_c - a_c^T y`` from the
   restricted duals ``y``;
3. add, for every seed row, the ``add_per_row`` most attractive priced-out columns, and repeat until
   none prices out (then the restricted optimum, with its duals, is optimal for the whole LP).

Warm starts: the restricted master's later solves use the primal simplex (adding columns and relaxing
rows keep the basis primal feasible; HiGHS's default dual simplex took 79 000 iterations / 34 s where
the primal one takes 700 / 0.3 s).  The working columns and final basis of the last few LP *layouts*
(rows and column names) are remembered, and a new LP of a remembered layout starts from them: a search
solves one layout again and again (the truthful report, then misreported demands), and a misreport's
LP then takes ~1 s instead of ~3.5 s on 1000 users x 100 servers.  An LP of another layout (a
misreported eligible set or task bound) starts cold (starting it from the last working columns, by
name, was measured no faster).

A restricted master that is infeasible (a domination LP whose targets need columns left out) takes every
column in and goes on: infeasible is reported only for the whole LP.

Only columns with lower bound exactly 0 are left out (a column outside the master is at 0, which must
be feasible for it).

Two ways in: from a ``LinearProgram`` (leximin rounds, PO's domination LP), or from arrays
(:meth:`ColumnGenerationSession.from_arrays` with a scipy CSC matrix) for a mechanism that builds
its LP in numpy (Algorithm 1's float path: 100 000 columns as dicts would cost more than the solve).

Float mode only: exact solves take ``LPSession`` (the exact basis re-solve needs the whole LP).  The
session has ``LPSession``'s interface for what ``lexmaxmin`` and Algorithm 1's rounds use: ``solve``,
``set_coef``, ``set_row_bounds``, ``set_col_bounds``, ``set_cost``.
"""
from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import numpy as np

from .lp import LinearProgram, LPError, LPResult, _fl, _float, _INF, highspy, new_highs, run_highs

__all__ = ["ColumnGenerationSession", "COLGEN_MIN_COLS", "INITIAL_PER_ROW", "ADD_PER_ROW", "forget_layouts"]

COLGEN_MIN_COLS = 20000  # below this, the whole LP is solved directly (measured: no gain under ~10k)
PRICE_TOL = 1e-9
# measured on 1000 users x 100 servers (tsf): 20 / 5 -> 2.6 s, 10 / 5 -> 3.0 s, 10 / 2 -> 3.2 s, 5 / 2 -> 4.8 s,
# 20 / 20 -> 2.5 s (more columns per solve); the whole LP 7.2 s
INITIAL_PER_ROW = 20
ADD_PER_ROW = 5
_BS = highspy.HighsBasisStatus
_MS = highspy.HighsModelStatus
_VERDICTS = (_MS.kOptimal, _MS.kInfeasible, _MS.kUnbounded, _MS.kUnboundedOrInfeasible)
# the working columns and final basis of the last solve, by LP layout (rows, column names): a search
# solves the same layout again and again (the truthful report, then one misreport after another)
_LAST: dict = {}
LAYOUTS_KEPT = 4


class ColumnGenerationSession:
    """A float LP session over a large ``lp`` that keeps only a working set of columns in HiGHS.

    Built from a ``LinearProgram`` (``lexmaxmin``, ``domination``) or, by :meth:`from_arrays`, from a
    sparse matrix that a mechanism built directly (Algorithm 1's float path): the same master, pricing,
    warm starts and interface either way."""

    def __init__(self, lp: LinearProgram, seed_rows: Sequence[int], per_row: Optional[int] = None,
                 add_per_row: Optional[int] = None, time_limit: Optional[float] = None,
                 include: Sequence[int] = ()) -> None:
        """``per_row`` / ``add_per_row``: columns per seed row in the first master / added per pricing
        round (default :data:`INITIAL_PER_ROW` / :data:`ADD_PER_ROW`); ``include``: columns to put in
        the first master too (the support of a known feasible point, so that a master with lower bounds
        on rows starts feasible)."""
        n, m = lp.n_cols, lp.n_rows
        rows_i, cols_i, vals = [], [], []
        for i, row in enumerate(lp.rows):
            rows_i.extend([i] * len(row))
            cols_i.extend(row.keys())
            vals.extend(_float(v) for v in row.values())
        import scipy.sparse as sp

        a = sp.csc_matrix((np.array(vals, dtype=float), (np.array(rows_i, dtype=np.int64),
                                                         np.array(cols_i, dtype=np.int64))), shape=(m, n))
        # the owner (seed row) of every column and its attractiveness
        owner = np.full(n, -1, dtype=np.int64)
        score = np.zeros(n)
        for i in seed_rows:
            for c, v in lp.rows[i].items():
                owner[c] = i
                score[c] = abs(_float(v))
        self.lp: Optional[LinearProgram] = lp
        self._setup(a, np.array([_float(c) for c in lp.cost], dtype=float), lp.maximize,
                    np.array([_fl(v, -_INF) for v in lp.col_lower], dtype=float),
                    np.array([_fl(v, _INF) for v in lp.col_upper], dtype=float),
                    np.array([_fl(v, -_INF) for v in lp.row_lower], dtype=float),
                    np.array([_fl(v, _INF) for v in lp.row_upper], dtype=float),
                    owner, score, (m, tuple(lp.col_names)), per_row, add_per_row, time_limit, include)

    @classmethod
    def from_arrays(cls, a: Any, cost: np.ndarray, maximize: bool, col_lower: np.ndarray, col_upper: np.ndarray,
                    row_lower: np.ndarray, row_upper: np.ndarray, owner: np.ndarray, score: np.ndarray,
                    layout: Any, per_row: Optional[int] = None, add_per_row: Optional[int] = None,
                    time_limit: Optional[float] = None, generate: bool = True, primal_first: bool = False,
                    highs: Any = None, rank: Optional[np.ndarray] = None) -> "ColumnGenerationSession":
        """A session over the LP with constraint matrix ``a`` (a scipy CSC matrix) and the given float data
        (``+-inf``: no bound).  ``owner[c]``: the seed row column ``c`` scores in (-1: none; such columns
        are always in) and ``score[c]`` its coefficient there; ``layout``: a hashable name of the LP's
        rows and columns (LPs with equal layouts share warm starts).  ``generate=False``: every column
        is in the master and HiGHS keeps its default options (a plain session, no layout memory);
        ``primal_first``: the first master too is solved by the primal simplex (every later one is;
        which is faster for the first depends on the LP family: measured per caller); ``highs``: an
        empty solver object to use (e.g. a pooled one); ``rank[c]``: how attractive column ``c`` is for
        the first master, larger first (default: its score per unit of the scarcest capacity it uses)."""
        self = cls.__new__(cls)
        self.lp = None
        self._setup(a, np.asarray(cost, dtype=float), maximize, np.asarray(col_lower, dtype=float),
                    np.asarray(col_upper, dtype=float), np.asarray(row_lower, dtype=float),
                    np.asarray(row_upper, dtype=float), np.asarray(owner, dtype=np.int64),
                    np.asarray(score, dtype=float), layout, per_row, add_per_row, time_limit, (), generate, highs,
                    rank)
        if generate and primal_first:
            self.h.setOptionValue("simplex_strategy", 4)
        return self

    def _setup(self, a: Any, cost: np.ndarray, maximize: bool, col_lower: np.ndarray, col_upper: np.ndarray,
               row_lower: np.ndarray, row_upper: np.ndarray, owner: np.ndarray, score: np.ndarray, layout: Any,
               per_row: Optional[int], add_per_row: Optional[int], time_limit: Optional[float],
               include: Sequence[int], generate: bool = True, highs: Any = None,
               rank: Optional[np.ndarray] = None) -> None:
        per_row = INITIAL_PER_ROW if per_row is None else per_row
        self.add_per_row = ADD_PER_ROW if add_per_row is None else add_per_row
        self.deadline = None if time_limit is None else time.monotonic() + time_limit
        m, n = a.shape
        self.n = n
        self.sign = -1.0 if maximize else 1.0  # HiGHS minimises
        self.cost = self.sign * cost
        self.col_lower, self.col_upper = col_lower, col_upper
        self.row_lower, self.row_upper = row_lower, row_upper
        self.a = a
        self.at = a.T.tocsr()  # pricing: A^T y over every column
        self.generate = generate
        self.priced = 0  # pricing rounds that brought columns in
        # candidates for leaving out: lower bound exactly 0 (0 is then a feasible value), scored by a seed row
        cand = (col_lower == 0) & (owner >= 0) if generate else np.zeros(n, dtype=bool)
        seed = np.zeros(m, dtype=bool)
        seed[owner[owner >= 0]] = True
        if rank is None:  # attractiveness: score per unit of capacity used (capacity rows: only an upper
            # bound, > 0)
            cap = np.isinf(row_lower) & (row_lower < 0) & np.isfinite(row_upper) & (row_upper > 0) & ~seed
            import scipy.sparse as sp

            scaled = sp.diags(np.where(cap, 1.0 / np.where(cap, row_upper, 1.0), 0.0)) @ a
            use = abs(scaled).max(axis=0).toarray().ravel() if n else np.zeros(0)
            with np.errstate(divide="ignore"):
                rank = np.where(use > 0, score / np.where(use > 0, use, 1.0), np.inf)
        self.owner = owner
        self.sel = ~cand
        self.cand = cand
        oc = np.nonzero(cand)[0]
        first = _top_per_group(oc, owner[oc], -rank[oc], per_row) if len(oc) else oc
        self.sel[first] = True
        if len(include):
            self.sel[np.asarray(list(include), dtype=np.int64)] = True
        self.key = layout
        warm = _LAST.get(self.key) if generate else None
        if warm is not None:  # the last LP of this layout (the truthful one, for a misreport): its columns
            self.sel |= warm[0]
            self.idx = np.nonzero(self.sel)[0]
        else:  # the columns always in, then every seed row's best first, in that order: HiGHS's pivots
            rest = self.sel.copy()  # follow the column order (Algorithm 1 at 1000 x 100: 1.63 -> 1.47 s)
            rest[first] = False
            self.idx = np.concatenate([np.nonzero(rest)[0], first]).astype(np.int64)
        self.pos = np.full(n, -1, dtype=np.int64)
        self.pos[self.idx] = np.arange(len(self.idx))
        self.h = new_highs() if highs is None else highs
        self.rounds = 0
        self._load()
        if warm is not None:  # ... and its final basis, as the starting basis
            self._set_basis(warm[1], warm[2])

    def _load(self) -> None:
        idx = self.idx
        sub = self.a[:, idx].tocsc()
        hl = highspy.HighsLp()
        hl.num_col_ = len(idx)
        hl.num_row_ = self.a.shape[0]
        hl.col_cost_ = self.cost[idx]
        hl.col_lower_ = self.col_lower[idx]
        hl.col_upper_ = self.col_upper[idx]
        hl.row_lower_ = self.row_lower
        hl.row_upper_ = self.row_upper
        hl.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        hl.a_matrix_.start_ = sub.indptr.astype(np.int32)
        hl.a_matrix_.index_ = sub.indices.astype(np.int32)
        hl.a_matrix_.value_ = sub.data.astype(float)
        hl.a_matrix_.num_col_ = len(idx)
        hl.a_matrix_.num_row_ = self.a.shape[0]
        if self.h.passModel(hl) == highspy.HighsStatus.kError:
            raise LPError("HiGHS rejected the LP model")

    def _set_basis(self, col_status: np.ndarray, row_status: list) -> None:
        b = highspy.HighsBasis()
        b.col_status = [_BS(int(v)) for v in col_status[self.idx]]
        b.row_status = row_status
        b.valid = True
        self.h.setBasis(b)

    def _remember(self) -> None:
        if not self.generate:
            return
        basis = self.h.getBasis()
        col = np.full(self.n, int(_BS.kLower), dtype=np.int64)
        col[self.idx] = [int(v) for v in basis.col_status]
        _LAST.pop(self.key, None)
        _LAST[self.key] = (self.sel.copy(), col, list(basis.row_status))
        while len(_LAST) > LAYOUTS_KEPT:  # the least recently solved layout goes
            del _LAST[next(iter(_LAST))]

    # -------------------------------------------------------------- modifications (as LPSession)
    def set_row_bounds(self, i: int, lower: Any, upper: Any) -> None:
        """Change row ``i``'s bounds (``None``: none)."""
        if self.lp is not None:
            num = self.lp.num
            self.lp.row_lower[i], self.lp.row_upper[i] = lower, upper = num(lower), num(upper)
        self.row_lower[i], self.row_upper[i] = _fl(lower, -_INF), _fl(upper, _INF)
        self.h.changeRowBounds(i, float(self.row_lower[i]), float(self.row_upper[i]))

    def set_col_bounds(self, col: int, lower: Any, upper: Any) -> None:
        """Change the bounds of ``col``, a column that is always in the master (no seed row scores it)."""
        if self.pos[col] < 0 or self.cand[col]:
            raise ValueError("set_col_bounds: only for columns that column generation never leaves out")
        if self.lp is not None:
            self.lp.col_lower[col], self.lp.col_upper[col] = self.lp.num(lower), self.lp.num(upper)
        self.col_lower[col], self.col_upper[col] = _fl(lower, -_INF), _fl(upper, _INF)
        self.h.changeColBounds(int(self.pos[col]), float(self.col_lower[col]), float(self.col_upper[col]))

    def set_cost(self, coeffs: Any, maximize: Optional[bool] = None) -> None:
        """Replace the objective (and optionally its sense) by ``coeffs`` (column -> coefficient)."""
        if self.lp is not None:
            self.lp.set_cost(coeffs)
            if maximize is not None:
                self.lp.maximize = maximize
        if maximize is not None:
            self.sign = -1.0 if maximize else 1.0
        self.cost = np.zeros(self.n)
        for c, v in coeffs.items():
            self.cost[c] = self.sign * float(v)
        self.h.changeColsCost(len(self.idx), np.arange(len(self.idx), dtype=np.int32), self.cost[self.idx])

    def set_coef(self, i: int, col: int, value: Any) -> None:
        """Change the coefficient of ``col`` in row ``i`` (a column kept in the working set)."""
        v = float(value)
        if self.lp is not None:
            lv = self.lp.num(value) or self.lp.zero
            if lv == 0:
                self.lp.rows[i].pop(col, None)
            else:
                self.lp.rows[i][col] = lv
        if self.pos[col] < 0:  # outside the working set: update the pricing matrix, then bring it in
            self._set_matrix(i, col, v)
            self._add(np.array([col]))
        self.h.changeCoeff(i, int(self.pos[col]), v)

    def _set_matrix(self, i: int, col: int, v: float) -> None:
        lo, hi = self.a.indptr[col], self.a.indptr[col + 1]
        hit = np.nonzero(self.a.indices[lo:hi] == i)[0]
        if len(hit):
            self.a.data[lo + hit[0]] = v
        else:
            self.a[i, col] = v  # a new non-zero (a structure change)
        self.at = self.a.T.tocsr()

    def _add(self, cols: np.ndarray) -> None:
        sub = self.a[:, cols].tocsc()
        start = len(self.idx)
        self.h.addCols(len(cols), self.cost[cols], self.col_lower[cols], self.col_upper[cols], sub.nnz,
                       sub.indptr[:-1].astype(np.int32), sub.indices.astype(np.int32), sub.data.astype(float))
        self.idx = np.concatenate([self.idx, cols])
        self.pos[cols] = np.arange(start, start + len(cols))
        self.sel[cols] = True

    # -------------------------------------------------------------- solving
    def solve(self, exact: bool = False) -> LPResult:
        """Solve the whole LP by column generation (float; ``exact`` is refused)."""
        if exact:
            raise ValueError("column generation is a float path; exact solves use LPSession")
        cold = False  # a warm re-solve without a verdict was retried from scratch
        while True:
            left = None if self.deadline is None else self.deadline - time.monotonic()
            if left is not None and left <= 0:
                return LPResult("error", method="highs", reason="time limit reached (column generation)")
            if self.rounds == 1 and self.generate:  # warm re-solves (columns added, rows relaxed): the
                # basis stays primal feasible -- primal simplex (dual: 100x slower)
                self.h.setOptionValue("simplex_strategy", 4)
            run_highs(self.h, left)
            self.rounds += 1
            ms = self.h.getModelStatus()
            if ms not in _VERDICTS and self.rounds > 1 and not cold:
                # a warm re-solve can end without a verdict (HiGHS's "Unknown", seen after rows were
                # tightened); once more from scratch with HiGHS's default (dual) simplex
                cold = True
                self.h.clearSolver()
                self.h.setOptionValue("simplex_strategy", 1)
                run_highs(self.h, left)
                if self.generate:
                    self.h.setOptionValue("simplex_strategy", 4)
                ms = self.h.getModelStatus()
            if ms == highspy.HighsModelStatus.kInfeasible:
                # the restricted master is the LP with the other columns fixed at 0: its infeasibility
                # proves nothing about the whole LP -- bring every column in and solve that
                out = np.nonzero(self.cand & ~self.sel)[0]
                if len(out):
                    self._add(out)
                    continue
                return LPResult("infeasible", method="highs")
            if ms in (highspy.HighsModelStatus.kUnbounded, highspy.HighsModelStatus.kUnboundedOrInfeasible):
                return LPResult("unbounded", method="highs")
            if ms != highspy.HighsModelStatus.kOptimal:
                return LPResult("error", method="highs", reason=f"HiGHS status {self.h.modelStatusToString(ms)}")
            sol = self.h.getSolution()
            y = np.array(sol.row_dual, dtype=float)
            out = np.nonzero(self.cand & ~self.sel)[0]
            if len(out):
                rc = (self.cost - self.at @ y)[out]  # every column at once: cheaper than slicing rows
                bad = rc < -PRICE_TOL * np.maximum(1.0, np.abs(self.cost[out]))
                if bad.any():
                    add = out[bad]
                    self._add(_top_per_group(add, self.owner[add], rc[bad], self.add_per_row))
                    self.priced += 1
                    continue
            self._remember()
            x = np.zeros(self.n)
            x[self.idx] = np.array(sol.col_value, dtype=float)
            duals = [self.sign * v for v in y]
            obj = self.sign * self.h.getInfo().objective_function_value
            return LPResult("optimal", x=x.tolist(), objective=obj, row_dual=duals,
                            row_activity=list(sol.row_value), exact=False, method="highs")


def forget_layouts() -> None:
    """Drop every remembered layout (the next solves start cold)."""
    _LAST.clear()


def _top_per_group(items: np.ndarray, group: np.ndarray, key: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` items of smallest ``key`` in every group."""
    order = np.lexsort((key, group))
    g = group[order]
    first = np.r_[True, g[1:] != g[:-1]] if len(g) else np.zeros(0, dtype=bool)
    grp = np.cumsum(first) - 1
    starts = np.nonzero(first)[0]
    rank = np.arange(len(order)) - starts[grp] if len(order) else np.zeros(0, dtype=np.int64)
    return items[order[rank < k]]
