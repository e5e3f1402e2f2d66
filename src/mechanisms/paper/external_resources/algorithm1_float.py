"""Seed 004 Algorithm 1 in floats: LP-TaskShare (8) built as numpy arrays, solved by the LP layer's
column-generation session (``mechverify.colgen.ColumnGenerationSession.from_arrays``).

The same LP as the exact path (``algorithm1.py``): a column per ``(j, s)`` with ``gamma[j,s] > 0``,
RDM rows per ``(s, r)``, external rows (global, or per server for the alpha variants) and one (8f) row
per participating user; column 0 is ``g``.  Building it from arrays instead of a ``LinearProgram`` of
dicts is what keeps 1000 users x 100 servers at about a second.  The rounds are ``algorithm1``'s own
loop (:func:`mechanisms.paper.external_resources.rounds.run_rounds`) on this session.

Column generation (more than ``CG_THRESHOLD`` candidate columns): the session starts with every user's
``CG_INITIAL_SERVERS`` servers where it could run the most tasks alone (monopoly counts), prices the others with the row duals and adds up to ``CG_ADD_PER_USER`` per user and round until none
prices out.  Below the threshold every column is in and HiGHS keeps its default options.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from mechverify.allocation import Allocation
from mechverify.colgen import ColumnGenerationSession
from mechverify.lp import pooled_highs
from mechverify.model import Environment
from mechverify.numbers import as_float

from ..normalisers import finite_normaliser, monopoly_counts_float
from .rounds import run_rounds

__all__ = ["algorithm1_float", "TaskShareArrays", "CG_THRESHOLD", "CG_INITIAL_SERVERS",
           "CG_ADD_PER_USER"]

#: above this many (user, server) columns, LP-TaskShare is solved by column generation
CG_THRESHOLD = 20000
CG_INITIAL_SERVERS = 20  # per user: columns in the first master
CG_ADD_PER_USER = 10  # per user and pricing round: the most negative reduced costs


class TaskShareArrays:
    """LP-TaskShare (8) of one environment as arrays (see the module docstring): ``a`` (the constraint
    matrix by columns), bounds, ``owner`` / ``score`` for column generation, and the per-user columns."""

    def __init__(self, env: Environment, normaliser: Sequence[Any], external: bool,
                 server_external_caps: Optional[Sequence[Sequence[Any]]]) -> None:
        J, S, R, K = env.n_users, env.n_servers, env.n_resources, env.n_external
        self.env = env
        cap = np.array([[as_float(v) for v in row] for row in env.capacity], dtype=float)
        d = np.array([[as_float(v) for v in row] for row in env.demand], dtype=float)
        de = np.array([[as_float(v) for v in row] for row in env.external_demand], dtype=float) if K else np.zeros((J, 0))
        w = np.array([as_float(v) for v in env.weight], dtype=float)
        elig = np.zeros((J, S), dtype=bool)
        for j in range(J):
            elig[j, list(env.eligible[j])] = True
        lacks = ((d[:, None, :] > 0) & (cap[None, :, :] <= 0)).any(axis=2)  # gamma[j,s] = 0
        usable = elig & ~lacks
        coef = np.zeros(J)
        self.used_norm: list = []
        for j in range(J):
            N = finite_normaliser(env, normaliser[j], j)
            N = None if N is None else float(N)
            self.used_norm.append(N)
            if N is not None and usable[j].any():
                coef[j] = 1.0 / (w[j] * N)
        part = coef > 0  # users in (8f); the others can run nothing and get no column at all
        # g in units of the equal split (coefficients times the number of participants): levels are O(1)
        # for any number of users, so HiGHS's absolute tolerances (1e-7) are relative ones (at 1000 users
        # the unscaled level is ~1e-3 and column generation stopped 4e-5 short of the optimum)
        self.scale = float(max(1, int(part.sum())))
        self.coef = coef * self.scale
        self.active = [int(j) for j in np.nonzero(part)[0]]
        cand = usable & part[:, None]
        self.n_cand = int(cand.sum())
        m, eq_of = self._rows(cap, external, server_external_caps)
        self._columns(cand, d, de, eq_of, m, external or server_external_caps is not None,
                      server_external_caps is not None)
        self.layout = ("algorithm1", J, S, R, K, server_external_caps is not None, external, cand.tobytes(),
                       tuple(self.active))
        self._x: tuple = (None, None)  # the last solution given to total(), as an array

    def _rows(self, cap: np.ndarray, external: bool, server_external_caps: Any) -> tuple[int, np.ndarray]:
        """Row bounds: RDM ``(s, r)`` at ``s*R + r``; external (per server, or global); one (8f) row per
        participant (``row_of``).  Returns the number of rows and every user's (8f) row (-1: none)."""
        env = self.env
        S, K = env.n_servers, env.n_external
        row_up = list(cap.reshape(-1))
        if server_external_caps is not None:
            row_up += [float(server_external_caps[s][k]) for s in range(S) for k in range(K)]
        elif external:
            row_up += [as_float(v) for v in env.external_capacity]
        eq0 = len(row_up)
        self.row_of = {j: eq0 + i for i, j in enumerate(self.active)}
        eq_of = np.full(env.n_users, -1, dtype=np.int64)
        for j, r in self.row_of.items():
            eq_of[j] = r
        m = eq0 + len(self.active)
        self.row_lower = np.full(m, -np.inf)
        self.row_upper = np.array(row_up + [0.0] * len(self.active))
        self.row_lower[eq0:] = 0.0
        return m, eq_of

    def _columns(self, cand: np.ndarray, d: np.ndarray, de: np.ndarray, eq_of: np.ndarray,
                 m: int, with_external: bool, per_server: bool) -> None:
        """Column 0 is ``g`` (-1 in every (8f) row); then every candidate pair ``(j, s)`` (row-major) with
        its RDM, external and (8f) entries; bounds, cost, owners, scores and the first master's rank."""
        S, R, K = self.env.n_servers, self.env.n_resources, self.env.n_external
        ext0 = S * R
        eq0 = m - len(self.active)
        pairs = np.argwhere(cand)
        pj, ps = pairs[:, 0], pairs[:, 1]
        P = len(pairs)
        blocks_i = [ps[:, None] * R + np.arange(R)[None, :]]
        blocks_v = [d[pj]]
        if K and with_external:
            if per_server:
                blocks_i.append(ext0 + ps[:, None] * K + np.arange(K)[None, :])
            else:
                blocks_i.append(np.broadcast_to(ext0 + np.arange(K)[None, :], (P, K)))
            blocks_v.append(de[pj])
        blocks_i.append(eq_of[pj][:, None])
        blocks_v.append(self.coef[pj][:, None])
        idx_m, val_m = np.hstack(blocks_i), np.hstack(blocks_v)
        mask = val_m > 0
        mask[:, -1] = True  # the (8f) coefficient (> 0 for every participant)
        g_rows = np.arange(eq0, m)
        indptr = np.concatenate([[0, len(g_rows)], len(g_rows) + np.cumsum(mask.sum(axis=1))])
        indices = np.concatenate([g_rows, idx_m[mask]])
        data = np.concatenate([np.full(len(g_rows), -1.0), val_m[mask]])
        import scipy.sparse as sp

        self.a = sp.csc_matrix((data, indices, indptr), shape=(m, P + 1))
        self.g = 0
        n = P + 1
        self.cost = np.zeros(n)
        self.cost[0] = 1.0 if self.active else 0.0
        self.col_lower = np.zeros(n)
        self.col_upper = np.full(n, np.inf)
        if not self.active:
            self.col_upper[0] = 0.0
        self.owner = np.concatenate([[-1], eq_of[pj]])
        self.score = np.concatenate([[0.0], self.coef[pj]])
        # the first master: each user's servers by the tasks it could run there alone (RDM rows only)
        self.rank = np.concatenate([[np.inf], monopoly_counts_float(self.env)[pj, ps]])
        self.colid = -np.ones((self.env.n_users, S), dtype=np.int64)
        self.colid[pj, ps] = 1 + np.arange(P)
        self.user_cols = [self.colid[j][self.colid[j] >= 0] for j in range(self.env.n_users)]

    def session(self, generate: bool, highs: Any = None) -> ColumnGenerationSession:
        """The LP in a session: column generation if ``generate``, else every column in."""
        # primal simplex from the first master: ~1.2x faster here (bench_tsf_er.py; not for tsf's leximin)
        return ColumnGenerationSession.from_arrays(
            self.a, self.cost, True, self.col_lower, self.col_upper, self.row_lower, self.row_upper, self.owner,
            self.score, self.layout, per_row=CG_INITIAL_SERVERS, add_per_row=CG_ADD_PER_USER, generate=generate,
            primal_first=True, highs=highs, rank=self.rank)

    def total(self, x: Sequence[float], j: int) -> float:
        """``x_j`` from the column values ``x`` (converted once per solution)."""
        if x is not self._x[0]:
            self._x = (x, np.asarray(x))
        return float(self._x[1][self.user_cols[j]].sum())

    def task_matrix(self, x: Sequence[float]) -> tuple:
        """The ``J x S`` task matrix of the column values ``x`` (solver dust below 0 clipped)."""
        J, S = self.env.n_users, self.env.n_servers
        xm = np.zeros((J, S))
        have = self.colid >= 0
        xm[have] = np.maximum(np.asarray(x)[self.colid[have]], 0.0)
        return tuple(tuple(float(v) for v in row) for row in xm)


def algorithm1_float(env: Environment, name: str, normaliser: Sequence[Any], *, external: bool,
                     server_external_caps: Optional[Sequence[Sequence[Any]]], info: Optional[dict],
                     cg_threshold: Optional[int] = None) -> Allocation:
    """Algorithm 1's rounds (``rounds.run_rounds``) on :class:`TaskShareArrays` (same semantics as the
    exact path)."""
    lp = TaskShareArrays(env, normaliser, external, server_external_caps)
    use_cg = lp.n_cand > (CG_THRESHOLD if cg_threshold is None else cg_threshold)
    with pooled_highs() as h:  # a pooled solver object: creating one costs about as much as a small solve
        session = lp.session(use_cg, highs=h)
        x, rounds, trace, saturated = run_rounds(session, env, name, False, lp.g, lp.row_of, lp.coef,
                                                 list(lp.active), lp.total, lp.scale)
        columns = len(session.idx) - 1
    meta = {"rounds": rounds, "levels_by_round": [t[1] for t in trace], "saturated": sorted(saturated),
            "saturated_by_round": [t[2] for t in trace], "normaliser": lp.used_norm,
            "level": trace[-1][1] if trace else None, "unique_totals": True,
            "column_generation": {"used": use_cg, "columns": columns, "candidates": lp.n_cand,
                                  "pricing_rounds": session.priced}}
    if info:
        meta.update(info)
    return Allocation(env, lp.task_matrix(x), name, False, meta)
