"""The one lexicographic max-min solver ("progressive filling" by repeated LPs).

Problem: given a polytope ``P`` (an LP's rows and columns) and linear scores ``sigma_j(x)`` for the
participating users, find the leximin-optimal score vector: maximise the smallest score, then the
next smallest, and so on.

Algorithm (water filling):

    A := participating users;  F := {} (frozen, with levels lambda_j)
    repeat
        t* := max t  s.t.  x in P,  sigma_j(x) >= t  (j in A),  sigma_j(x) >= lambda_j  (j in F)
        B  := { j in A : the row sigma_j(x) >= t has a non-zero dual }
        freeze every j in B at lambda_j := t*;  A := A \\ B
    until A is empty

Why freezing on a non-zero dual is right: the optimal value ``v(eps)`` of the round LP with the
rows perturbed to ``sigma_j(x) >= t + eps_j`` satisfies ``v(eps) <= t* - sum_j y_j eps_j`` for any
optimal dual ``y >= 0`` (weak duality).  If ``y_j > 0``, asking ``sigma_j >= t* + eps`` while every
other active user keeps ``t*`` is infeasible, so ``j`` cannot rise: it is frozen correctly.  The
duals of the ``t`` column sum to 1, so every round freezes at least one user; rounds <= users.
A blocked user whose dual happens to be 0 in the returned basis simply freezes in a later round at
the same level.  When exact duals are unavailable (z3 fallback), each active user is probed with
its own LP ("can sigma_j exceed t* while the others keep t*?").

In exact mode each round LP is re-solved in rationals (``lp.py``), so levels, freezing decisions
and the final allocation are exact.  Cluster-sized float rounds (>= ``COLGEN_MIN_COLS`` columns) are
solved by column generation (``colgen.py``): same optimum, same duals, a fraction of the columns.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Optional, Sequence

from .colgen import COLGEN_MIN_COLS, ColumnGenerationSession
from .lp import LinearProgram, LPError, LPSession
from .numbers import FLOAT_REL

__all__ = ["lex_max_min", "LexResult", "common_level_lp"]

FLOAT_DUAL_TOL = 1e-9


@dataclass
class LexResult:
    """Outcome of :func:`lex_max_min`: column values, every user's leximin level, rounds."""
    x: list  # LP column values
    levels: list  # per user: the leximin level of its score (None for non-participants)
    rounds: int
    exact: bool
    trace: list = field(default_factory=list)  # [(round, t*, [frozen users])]


def lex_max_min(lp: LinearProgram, scores: Sequence[Optional[Mapping[int, Any]]], exact: bool = False,
                max_rounds: Optional[int] = None, time_limit: Optional[float] = None) -> LexResult:
    """Leximin over ``scores`` (one linear form per user; ``None`` or ``{}`` = not participating, level 0).

    ``lp`` is not modified (a copy is used); a float ``lp`` (``LinearProgram(exact=False)``) needs
    ``exact=False``.  Raises ``LPError`` on solver trouble or if some score can
    grow without bound (an unbounded user).

    Floats: the scores are solved multiplied by the number of participants ``n`` -- scores that are
    shares of something the users divide (every caller's) then have O(1) levels for any ``n``, and the
    solvers' absolute tolerances (1e-7 in HiGHS) act as relative ones; on a 1000-user cluster unscaled
    levels of ~1e-3 left column generation 1e-5 short.  Levels and the trace are divided back, so the
    caller sees the scores' own levels.  Exact solves are not scaled.
    """
    n_cols0 = lp.n_cols
    n = len(scores)
    active = [j for j in range(n) if scores[j]]
    scale = 1 if exact else max(1, len(active))  # an int: keeps a Fraction LP's rows Fractions
    if scale != 1:
        scores = [{c: v * scale for c, v in sc.items()} if sc else sc for sc in scores]
    levels: list[Any] = [None] * n
    work, t, row_of = common_level_lp(lp, scores)
    zero = Fraction(0) if exact else 0.0
    if not active:
        # nothing to fill: any feasible point; the polytope contains x = 0 for every mechanism here
        return LexResult(x=[zero] * n_cols0, levels=[zero if scores[j] is not None else None for j in range(n)],
                         rounds=0, exact=exact)
    if not exact and work.n_cols >= COLGEN_MIN_COLS:  # cluster-sized: column generation (float only)
        session: Any = ColumnGenerationSession(work, list(row_of.values()), time_limit=time_limit)
    else:
        session = LPSession(work, time_limit=time_limit)
    rounds, trace = 0, []
    frozen: list = []  # floats: (row, level) frozen since the last relaxation
    limit = max_rounds if max_rounds is not None else n + 1
    x: list = []
    while active:
        rounds += 1
        if rounds > limit:
            raise LPError(f"lexicographic max-min did not finish in {limit} rounds")
        res = session.solve(exact=exact)
        if not exact and not res.ok and res.status == "infeasible" and frozen:
            # floats: levels frozen at a float t* can sit a rounding above what is feasible once more rows
            # bind (seen on seed004 instances of 15-20 users); relax every frozen level by the one float
            # tolerance and solve the round again -- a screening result, the exact path decides
            for row, lo in frozen:
                session.set_row_bounds(row, lo - FLOAT_REL * max(1.0, abs(lo)), None)
            frozen = []
            res = session.solve(exact=exact)
        if res.status == "unbounded":
            raise LPError("a user's score is unbounded (zero demands without a task bound?)")
        if not res.ok:
            raise LPError(f"round {rounds} LP failed: {res.status} {res.reason}".strip())
        x = res.x
        tstar = x[t]
        if res.row_dual is not None:
            if exact:
                blocked = [j for j in active if res.row_dual[row_of[j]] != 0]
            else:
                blocked = [j for j in active if abs(res.row_dual[row_of[j]]) > FLOAT_DUAL_TOL]
        else:
            blocked = []
        if not blocked:
            blocked = _probe_blocked(session, work, scores, active, row_of, t, tstar, exact)
        if not blocked:  # cannot happen for a bounded LP; fail loudly rather than loop
            raise LPError(f"round {rounds}: no user is blocked at level {tstar}")
        for j in blocked:
            levels[j] = tstar / scale if scale != 1 else tstar
            lo = tstar  # floats: HiGHS feasibility tolerance absorbs rounding of t* (else: the retry above)
            session.set_coef(row_of[j], t, 0)
            session.set_row_bounds(row_of[j], lo, None)
            if not exact:
                frozen.append((row_of[j], lo))
        active = [j for j in active if j not in set(blocked)]
        trace.append((rounds, tstar / scale if scale != 1 else tstar, list(blocked)))
    for j in range(n):
        if scores[j] is not None and not scores[j]:
            levels[j] = zero
    return LexResult(x=list(x[:n_cols0]), levels=levels, rounds=rounds, exact=exact, trace=trace)


def common_level_lp(lp: LinearProgram, scores: Sequence[Optional[Mapping[int, Any]]]) -> tuple:
    """The first round's LP of :func:`lex_max_min`: ``max t  s.t.`` the rows of ``lp`` (a copy),
    ``sigma_j(x) - t >= 0`` for every participating ``j`` (a non-empty score); ``t`` is a free column.
    Returns ``(lp, t's column, {j: its row})``; its optimum is the maximal common level of the scores."""
    work = lp.copy()
    work.maximize = True
    t = work.add_var(None, None, 0, name="t")
    work.cost = [work.zero] * work.n_cols
    work.cost[t] = work.num(1)
    minus_one = work.num(-1)
    row_of: dict[int, int] = {}
    for j, sc in enumerate(scores):
        if sc:
            coeffs = dict(sc)
            coeffs[t] = minus_one
            row_of[j] = work.add_row(coeffs, 0, None)
    return work, t, row_of


def _probe_blocked(session: LPSession, work: LinearProgram, scores, active, row_of, t, tstar, exact) -> list[int]:
    """For each active user: can its score exceed t* while every other active user keeps t*?"""
    blocked = []
    probe = work.copy()
    # fix t = t* (rows sigma_i - t >= 0 then say sigma_i >= t*)
    probe.col_lower[t] = probe.col_upper[t] = probe.num(tstar)
    from .lp import solve as lp_solve

    for j in active:
        p = probe.copy()
        p.set_cost(scores[j])
        p.maximize = True
        r = lp_solve(p, exact=exact)
        if r.status == "unbounded":
            continue
        if not r.ok:
            raise LPError(f"probe LP for user {j} failed: {r.status} {r.reason}")
        val = r.objective
        if (val <= tstar) if exact else (val <= tstar + 1e-9 * max(1.0, abs(tstar))):
            blocked.append(j)
    return blocked
