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
be feasible for it).  Float mode only: exact solves take ``LPSession`` (the exact basis re-solve needs
the whole LP).  The session has ``LPSession``'s interface for what ``lexmaxmin`` uses: ``solve``,
``set_coef``, ``set_row_bounds``.
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
    """A float LP session over a large ``lp`` that keeps only a working set of columns in HiGHS."""

    def __init__(self, lp: LinearProgram, seed_rows: Sequence[int], per_row: Optional[int] = None,
                 add_per_row: Optional[int] = None, time_limit: Optional[float] = None,
                 include: Sequence[int] = ()) -> None:
        """``per_row`` / ``add_per_row``: columns per seed row in the first master / added per pricing
        round (default :data:`INITIAL_PER_ROW` / :data:`ADD_PER_ROW`); ``include``: columns to put in
        the first master too (the support of a known feasible point, so that a master with lower bounds
        on rows starts feasible)."""
        per_row = INITIAL_PER_ROW if per_row is None else per_row
        self.lp = lp
        self.add_per_row = ADD_PER_ROW if add_per_row is None else add_per_row
        self.deadline = None if time_limit is None else time.monotonic() + time_limit
        n, m = lp.n_cols, lp.n_rows
        sign = -1.0 if lp.maximize else 1.0
        self.sign = sign
        self.cost = np.array([sign * _float(c) for c in lp.cost], dtype=float)
        self.col_lower = np.array([_fl(v, -_INF) for v in lp.col_lower], dtype=float)
        self.col_upper = np.array([_fl(v, _INF) for v in lp.col_upper], dtype=float)
        rows_i, cols_i, vals = [], [], []
        for i, row in enumerate(lp.rows):
            rows_i.extend([i] * len(row))
            cols_i.extend(row.keys())
            vals.extend(_float(v) for v in row.values())
        import scipy.sparse as sp

        a = sp.csc_matrix((np.array(vals, dtype=float), (np.array(rows_i, dtype=np.int64),
                                                         np.array(cols_i, dtype=np.int64))), shape=(m, n))
        self.a = a
        self.at = a.T.tocsr()
        # candidates for leaving out: lower bound exactly 0 (0 is then a feasible value)
        cand = np.array([lo is not None and lo == 0 for lo in lp.col_lower], dtype=bool)
        # the owner (seed row) of every column and its attractiveness
        owner = np.full(n, -1, dtype=np.int64)
        score = np.zeros(n)
        seed = np.zeros(m, dtype=bool)
        seed[list(seed_rows)] = True
        for i in seed_rows:
            for c, v in lp.rows[i].items():
                owner[c] = i
                score[c] = abs(_float(v))
        cap = np.array([(lp.row_lower[i] is None and lp.row_upper[i] is not None and lp.row_upper[i] > 0
                         and not seed[i]) for i in range(m)], dtype=bool)
        ru = np.array([_fl(lp.row_upper[i], 1.0) if cap[i] else 1.0 for i in range(m)], dtype=float)
        scaled = sp.diags(np.where(cap, 1.0 / ru, 0.0)) @ a
        use = abs(scaled).max(axis=0).toarray().ravel() if n else np.zeros(0)
        with np.errstate(divide="ignore"):
            ratio = np.where(use > 0, score / np.where(use > 0, use, 1.0), np.inf)
        cand &= owner >= 0  # a column no seed row scores is kept in
        self.owner = owner
        self.sel = ~cand
        self.cand = cand
        oc = np.nonzero(cand)[0]
        if len(oc):
            self.sel[_top_per_group(oc, owner[oc], -ratio[oc], per_row)] = True
        if len(include):
            self.sel[np.asarray(list(include), dtype=np.int64)] = True
        self.key = (m, tuple(lp.col_names))
        warm = _LAST.get(self.key)
        if warm is not None:  # the last LP of this layout (the truthful one, for a misreport): its columns
            self.sel |= warm[0]
        self.idx = np.nonzero(self.sel)[0]
        self.pos = np.full(n, -1, dtype=np.int64)
        self.pos[self.idx] = np.arange(len(self.idx))
        self.h = new_highs()
        self.rounds = 0
        self._load()
        if warm is not None:  # ... and its final basis, as the starting basis
            self._set_basis(warm[1], warm[2])

    def _load(self) -> None:
        lp, idx = self.lp, self.idx
        sub = self.a[:, idx].tocsc()
        hl = highspy.HighsLp()
        hl.num_col_ = len(idx)
        hl.num_row_ = lp.n_rows
        hl.col_cost_ = self.cost[idx]
        hl.col_lower_ = self.col_lower[idx]
        hl.col_upper_ = self.col_upper[idx]
        hl.row_lower_ = np.array([_fl(v, -_INF) for v in lp.row_lower], dtype=float)
        hl.row_upper_ = np.array([_fl(v, _INF) for v in lp.row_upper], dtype=float)
        hl.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        hl.a_matrix_.start_ = sub.indptr.astype(np.int32)
        hl.a_matrix_.index_ = sub.indices.astype(np.int32)
        hl.a_matrix_.value_ = sub.data.astype(float)
        hl.a_matrix_.num_col_ = len(idx)
        hl.a_matrix_.num_row_ = lp.n_rows
        if self.h.passModel(hl) == highspy.HighsStatus.kError:
            raise LPError("HiGHS rejected the LP model")

    def _set_basis(self, col_status: np.ndarray, row_status: list) -> None:
        b = highspy.HighsBasis()
        b.col_status = [_BS(int(v)) for v in col_status[self.idx]]
        b.row_status = row_status
        b.valid = True
        self.h.setBasis(b)

    def _remember(self) -> None:
        basis = self.h.getBasis()
        col = np.full(self.lp.n_cols, int(_BS.kLower), dtype=np.int64)
        col[self.idx] = [int(v) for v in basis.col_status]
        _LAST.pop(self.key, None)
        _LAST[self.key] = (self.sel.copy(), col, list(basis.row_status))
        while len(_LAST) > LAYOUTS_KEPT:  # the least recently solved layout goes
            del _LAST[next(iter(_LAST))]

    # -------------------------------------------------------------- modifications (as LPSession)
    def set_row_bounds(self, i: int, lower: Any, upper: Any) -> None:
        """Change row ``i``'s bounds."""
        num = self.lp.num
        self.lp.row_lower[i], self.lp.row_upper[i] = num(lower), num(upper)
        self.h.changeRowBounds(i, _fl(self.lp.row_lower[i], -_INF), _fl(self.lp.row_upper[i], _INF))

    def set_coef(self, i: int, col: int, value: Any) -> None:
        """Change the coefficient of ``col`` in row ``i`` (a column kept in the working set)."""
        v = self.lp.num(value) or self.lp.zero
        if v == 0:
            self.lp.rows[i].pop(col, None)
        else:
            self.lp.rows[i][col] = v
        if self.pos[col] < 0:  # outside the working set: update the pricing matrix, then bring it in
            self._set_matrix(i, col, float(v))
            self._add(np.array([col]))
        self.h.changeCoeff(i, int(self.pos[col]), float(v))

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
            if self.rounds == 1:  # warm re-solves (columns added, rows relaxed): the basis stays primal
                self.h.setOptionValue("simplex_strategy", 4)  # feasible -- primal simplex (dual: 100x slower)
            run_highs(self.h, left)
            self.rounds += 1
            ms = self.h.getModelStatus()
            if ms not in _VERDICTS and self.rounds > 1 and not cold:
                # a warm primal re-solve can end without a verdict (HiGHS's "Unknown", seen after rows
                # were tightened); once more from scratch with HiGHS's default (dual) simplex
                cold = True
                self.h.clearSolver()
                self.h.setOptionValue("simplex_strategy", 1)
                run_highs(self.h, left)
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
                rc = self.cost[out] - self.at[out] @ y
                bad = rc < -PRICE_TOL * np.maximum(1.0, np.abs(self.cost[out]))
                if bad.any():
                    add = out[bad]
                    self._add(_top_per_group(add, self.owner[add], rc[bad], self.add_per_row))
                    continue
            self._remember()
            x = np.zeros(self.lp.n_cols)
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
