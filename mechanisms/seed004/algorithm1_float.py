"""Seed 004 Algorithm 1 in floats: LP-TaskShare (8) built as numpy arrays for HiGHS.

The same LP as the exact path (``algorithm1.py``): a column per ``(j, s)`` with ``gamma[j,s] > 0``,
RDM rows per ``(s, r)``, external rows (global, or per server for the alpha variants) and one (8f) row
per participating user; column 0 is ``g``.  One ``Highs`` object is warm-started across rounds (rows
(8f) turn into (8e) in place).

Column generation (more than ``CG_THRESHOLD`` candidate columns): start with every user's
``CG_INITIAL_SERVERS`` best servers (largest monopoly count), price every missing column with the row
duals (reduced cost ``-(sum_r y[s,r] d[j,r] + sum_k y_er d_er[j,k] + y_j / (w_j N_j))``), add the most
negative ones, repeat until none is below ``-CG_RC_TOL``: the restricted optimum is then optimal for
the full LP (within HiGHS's tolerances).  A basic optimum uses at most one column per row, so few of
the ``|J||S|`` columns are ever needed; columns are never removed, so a round's previous solution
(saturated users cut back to ``n_j``) stays feasible.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import highspy
import numpy as np

from mechverify.allocation import Allocation
from mechverify.lp import LPError, new_highs, pooled_highs, run_highs
from mechverify.model import Environment

from ..normalisers import finite_normaliser

__all__ = ["algorithm1_float", "FLOAT_SAT_TOL", "CG_THRESHOLD", "CG_INITIAL_SERVERS", "CG_ADD_PER_USER", "CG_RC_TOL"]

FLOAT_SAT_TOL = 1e-9  # a float total counts as having reached n_j within this relative tolerance
#: above this many (user, server) columns, LP-TaskShare is solved by column generation
CG_THRESHOLD = 20000
CG_INITIAL_SERVERS = 20  # per user: the servers where it could run most tasks alone
CG_ADD_PER_USER = 10  # per user and pricing round: the most negative reduced costs
CG_RC_TOL = 1e-7  # HiGHS's default dual feasibility tolerance
INFH = highspy.kHighsInf


class TaskShareLP:
    """LP-TaskShare (8) of one environment in a warm-started HiGHS model (see the module docstring)."""

    def __init__(self, env: Environment, normaliser: Sequence[Any], external: bool,
                 server_external_caps: Optional[Sequence[Sequence[Any]]], highs: Any = None) -> None:
        """``highs``: an empty solver object to build the LP in (default: a fresh one)."""
        J, S, R, K = env.n_users, env.n_servers, env.n_resources, env.n_external
        self.env = env
        self.cap = np.array([[v.numerator / v.denominator for v in row] for row in env.capacity], dtype=float)
        self.d = np.array([[v.numerator / v.denominator for v in row] for row in env.demand], dtype=float)
        self.de = (np.array([[v.numerator / v.denominator for v in row] for row in env.external_demand], dtype=float)
                   if K else np.zeros((J, 0)))
        w = np.array([v.numerator / v.denominator for v in env.weight], dtype=float)
        elig = np.zeros((J, S), dtype=bool)
        for j in range(J):
            elig[j, list(env.eligible[j])] = True
        lacks = ((self.d[:, None, :] > 0) & (self.cap[None, :, :] <= 0)).any(axis=2)  # gamma[j,s] = 0
        usable = elig & ~lacks
        self.tasks = [None if t is None else float(t) for t in env.tasks]
        self.coef = np.zeros(J)
        self.used_norm: list = []
        for j in range(J):
            N = finite_normaliser(env, normaliser[j], j)
            N = None if N is None else float(N)
            self.used_norm.append(N)
            if N is not None and usable[j].any():
                self.coef[j] = 1.0 / (w[j] * N)
        part = self.coef > 0  # users in (8f); the others can run nothing and get no column at all
        # g in units of the equal split (coefficients times the number of participants): levels are O(1)
        # for any number of users, so HiGHS's absolute tolerances (1e-7) are relative ones (at 1000 users
        # the unscaled level is ~1e-3 and column generation stopped 4e-5 short of the optimum)
        self.scale = float(max(1, int(part.sum())))
        self.coef *= self.scale
        self.active = [int(j) for j in np.nonzero(part)[0]]
        self.cand = usable & part[:, None]
        self.per_server = server_external_caps is not None
        self.external = external
        self.colid = -np.ones((J, S), dtype=np.int64)
        self.pricing = 0
        self.use_cg = False
        self._build_rows(server_external_caps, highs)

    def _build_rows(self, server_external_caps, highs: Any = None) -> None:
        """RDM ``(s, r)`` at ``s*R + r``; then external rows; then one (8f) row per participant."""
        env = self.env
        S, R, K = env.n_servers, env.n_resources, env.n_external
        row_lo = [-INFH] * (S * R)
        row_up = [float(v) for v in self.cap.reshape(-1)]
        self.ext0 = S * R
        if self.per_server:
            for s in range(S):
                for k in range(K):
                    row_lo.append(-INFH)
                    row_up.append(float(server_external_caps[s][k]))
        elif self.external:
            for k in range(K):
                row_lo.append(-INFH)
                row_up.append(float(env.external_capacity[k]))
        active = self.active
        eq0 = len(row_lo)
        self.eq_row = {j: eq0 + i for i, j in enumerate(active)}
        self.eq_of = np.full(env.n_users, -1, dtype=np.int64)
        for j, r in self.eq_row.items():
            self.eq_of[j] = r
        row_lo += [0.0] * len(active)
        row_up += [0.0] * len(active)
        h = new_highs() if highs is None else highs
        self.g = 0
        h.addVar(0.0, INFH if active else 0.0)
        h.changeColCost(self.g, -1.0 if active else 0.0)  # HiGHS minimises
        n_rows = len(row_lo)
        starts = np.zeros(n_rows, dtype=np.int32)
        starts[eq0:] = np.arange(len(active), dtype=np.int32)
        h.addRows(n_rows, np.array(row_lo), np.array(row_up), len(active), starts,
                  np.zeros(len(active), dtype=np.int32), np.full(len(active), -1.0))
        self.h = h

    def add_columns(self, pairs) -> None:
        """Columns ``x[j,s]`` for the given pairs: their RDM, external and (8f) coefficients (in that
        order within a column), built as numpy blocks."""
        if not len(pairs):
            return
        R, K = self.env.n_resources, self.env.n_external
        P = len(pairs)
        pj = np.fromiter((p[0] for p in pairs), dtype=np.int64, count=P)
        ps = np.fromiter((p[1] for p in pairs), dtype=np.int64, count=P)
        blocks_i = [ps[:, None] * R + np.arange(R)[None, :]]
        blocks_v = [self.d[pj]]
        if K and (self.per_server or self.external):
            de = self.de[pj]
            if self.per_server:
                blocks_i.append(self.ext0 + ps[:, None] * K + np.arange(K)[None, :])
            else:
                blocks_i.append(np.broadcast_to(self.ext0 + np.arange(K)[None, :], (P, K)))
            blocks_v.append(de)
        blocks_i.append(self.eq_of[pj][:, None])
        blocks_v.append(self.coef[pj][:, None])
        idx_m = np.hstack(blocks_i)
        val_m = np.hstack(blocks_v)
        mask = val_m > 0
        mask[:, -1] = True  # the (8f) coefficient 1/(w_j N_j) (> 0 for every participant)
        counts = mask.sum(axis=1)
        starts = np.zeros(P, dtype=np.int32)
        np.cumsum(counts[:-1], out=starts[1:])
        idx = idx_m[mask].astype(np.int32)
        val = val_m[mask].astype(float)
        first = self.h.getNumCol()
        self.colid[pj, ps] = first + np.arange(P)
        self.h.addCols(P, np.zeros(P), np.zeros(P), np.full(P, INFH), len(idx), starts, idx, val)

    def add_initial_columns(self, threshold: int) -> None:
        """Every candidate column, or (column generation) each user's best servers."""
        cand = self.cand
        self.n_cand = int(cand.sum())
        self.use_cg = self.n_cand > threshold
        if self.use_cg:
            # primal simplex: columns added by pricing leave the basis primal feasible (about 1.7x faster
            # than HiGHS's default dual simplex on bench_tsf_er.py's instances).  Only here: below the
            # threshold the float path keeps HiGHS's defaults (and so its optimal vertex).
            self.h.setOptionValue("simplex_strategy", 4)
        if not self.use_cg:
            self.add_columns([(int(j), int(s)) for j, s in np.argwhere(cand)])
            return
        d, cap = self.d, self.cap
        with np.errstate(divide="ignore", invalid="ignore"):
            mono = np.where(d[:, None, :] > 0, cap[None, :, :] / np.where(d > 0, d, 1.0)[:, None, :],
                            np.inf).min(axis=2)
        mono = np.where(cand, mono, -1.0)
        first = np.argsort(-mono, axis=1, kind="stable")[:, :CG_INITIAL_SERVERS]
        self.add_columns([(j, int(s)) for j in self.active for s in first[j] if cand[j, s]])

    def _cap_g(self) -> Optional[float]:
        caps = [self.tasks[j] * self.coef[j] for j in self.active if self.tasks[j] is not None]
        return max(caps) if caps else None

    def _run(self) -> str:
        h = self.h
        run_highs(h)
        st = h.getModelStatus()
        if st == highspy.HighsModelStatus.kOptimal:
            return "optimal"
        if st in (highspy.HighsModelStatus.kUnbounded, highspy.HighsModelStatus.kUnboundedOrInfeasible):
            return "unbounded"
        return h.modelStatusToString(st)

    def _price(self) -> list:
        """Column generation pricing: the missing columns with the most negative reduced costs."""
        env = self.env
        J, S, R, K = env.n_users, env.n_servers, env.n_resources, env.n_external
        y = np.array(self.h.getSolution().row_dual)
        price = self.d @ y[:S * R].reshape(S, R).T  # J x S
        if self.per_server and K:
            price += self.de @ y[self.ext0:self.ext0 + S * K].reshape(S, K).T
        elif self.external and K:
            price += (self.de @ y[self.ext0:self.ext0 + K])[:, None]
        yeq = np.zeros(J)
        for j in self.active:
            yeq[j] = y[self.eq_row[j]]
        rc = -(price + (yeq * self.coef)[:, None])
        rc[~self.cand | (self.colid >= 0)] = 0.0
        bad = np.argwhere(rc < -CG_RC_TOL)
        if not len(bad):
            return []
        order = np.argsort(rc[bad[:, 0], bad[:, 1]], kind="stable")
        count: dict[int, int] = {}
        pick = []
        for i in order:
            j, s = int(bad[i, 0]), int(bad[i, 1])
            if count.get(j, 0) < CG_ADD_PER_USER:
                count[j] = count.get(j, 0) + 1
                pick.append((j, s))
        return pick

    def solve_round(self) -> str:
        """One round's LP (with decision (ii)'s cap if unbounded), priced to optimality under CG."""
        h, g = self.h, self.g
        while True:
            st = self._run()
            if st == "unbounded" and self.active and self._cap_g() is not None:
                h.changeColBounds(g, 0.0, self._cap_g())  # decision (ii)
                st = self._run()
                h.changeColBounds(g, 0.0, INFH)
            if st != "optimal" or not self.use_cg:
                return st
            pick = self._price()
            if not pick:
                return st
            self.pricing += 1
            self.add_columns(pick)

    def fix_objective_for_no_active(self) -> None:
        """(8b)-(8e) only: any feasible point."""
        self.h.changeColCost(self.g, 0.0)
        self.h.changeColBounds(self.g, 0.0, 0.0)

    def saturate(self, j: int) -> None:
        """Row (8f) of ``j`` becomes (8e): ``x_j = n_j``."""
        r = self.eq_row[j]
        self.h.changeCoeff(r, self.g, 0.0)
        target = self.tasks[j] * self.coef[j]
        self.h.changeRowBounds(r, target, target)

    def reached_bound(self, x: np.ndarray) -> list[int]:
        """Active users whose total reached ``n_j`` (within ``FLOAT_SAT_TOL``)."""
        out = []
        for j in self.active:
            nj = self.tasks[j]
            if nj is None:
                continue
            ids = self.colid[j][self.colid[j] >= 0]
            if float(x[ids].sum()) >= nj - FLOAT_SAT_TOL * max(1.0, nj):
                out.append(j)
        return out

    def task_matrix(self, x: np.ndarray) -> tuple:
        """The ``J x S`` task matrix of the column values ``x`` (solver dust below 0 clipped)."""
        J, S = self.env.n_users, self.env.n_servers
        xm = np.zeros((J, S))
        have = self.colid >= 0
        xm[have] = np.maximum(x[self.colid[have]], 0.0)
        return tuple(tuple(float(v) for v in row) for row in xm)


def _rounds(lp: TaskShareLP, env: Environment, name: str, cg_threshold: Optional[int]):
    """Algorithm 1's rounds on ``lp``; returns ``(x, rounds, trace, saturated)``."""
    lp.add_initial_columns(CG_THRESHOLD if cg_threshold is None else cg_threshold)
    J = env.n_users
    rounds, trace, saturated = 0, [], []
    while True:
        rounds += 1
        if rounds > J + 2:
            raise LPError(f"{name}: Algorithm 1 did not finish in {J + 2} rounds")
        if not lp.active:
            lp.fix_objective_for_no_active()
        st = lp.solve_round()
        if st != "optimal":
            raise LPError(f"{name}: LP-TaskShare round {rounds}: {st}")
        x = np.array(lp.h.getSolution().col_value)
        if not lp.active:
            trace.append((rounds, None, []))
            break
        Q = lp.reached_bound(x)
        trace.append((rounds, float(x[lp.g]) / lp.scale, list(Q)))
        if not Q:
            break
        for j in Q:  # (8e)
            lp.saturate(j)
        lp.active = [j for j in lp.active if j not in Q]
        saturated.extend(Q)
    return x, rounds, trace, saturated


def algorithm1_float(env: Environment, name: str, normaliser: Sequence[Any], *, external: bool,
                     server_external_caps: Optional[Sequence[Sequence[Any]]], info: Optional[dict],
                     cg_threshold: Optional[int] = None) -> Allocation:
    """Algorithm 1's rounds on a :class:`TaskShareLP` (same semantics as the exact path)."""
    with pooled_highs() as h:  # a pooled solver object: creating one costs about as much as a small solve
        lp = TaskShareLP(env, normaliser, external, server_external_caps, highs=h)
        x, rounds, trace, saturated = _rounds(lp, env, name, cg_threshold)
        matrix = lp.task_matrix(x)
    meta = {"rounds": rounds, "levels_by_round": [t[1] for t in trace], "saturated": sorted(saturated),
            "saturated_by_round": [t[2] for t in trace], "normaliser": lp.used_norm,
            "level": trace[-1][1] if trace else None, "unique_totals": True,
            "column_generation": {"used": lp.use_cg, "columns": int((lp.colid >= 0).sum()),
                                  "candidates": lp.n_cand, "pricing_rounds": lp.pricing}}
    if info:
        meta.update(info)
    return Allocation(env, matrix, name, False, meta)
