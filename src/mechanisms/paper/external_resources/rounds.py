"""Seed 004 Algorithm 1's rounds (docs/seed004-mechanisms.md, "Algorithm 1 as printed"), on any LP session:
the exact path (``algorithm1.py``, an ``LPSession``) and the float path (``algorithm1_float.py``, a
column-generation session over arrays) run this one loop."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from mechverify.lp import LPError
from mechverify.model import Environment

__all__ = ["run_rounds", "FLOAT_SAT_TOL"]

FLOAT_SAT_TOL = 1e-9  # a float total counts as having reached n_j within this relative tolerance


def run_rounds(session: Any, env: Environment, name: str, exact: bool, g: int, row_of: dict, coef: Any,
               active: list, total: Callable[[Sequence[Any], int], Any], scale: float) -> tuple:
    """Algorithm 1's rounds on an LP session (``LPSession``, or the float path's column-generation
    session over arrays): ``g`` the level's column, ``row_of[j]`` user ``j``'s (8f) row with coefficient
    ``coef[j]`` on its columns, ``total(x, j)`` its total.  Returns ``(x, rounds, trace, saturated)``,
    ``trace`` of ``(round, level, saturated in that round)`` with float levels divided by ``scale``."""
    def cap() -> Any:
        caps = [env.tasks[j] * coef[j] for j in active if env.tasks[j] is not None]
        return max(caps) if caps else None

    rounds, trace, saturated = 0, [], []
    x: Any = None
    while True:
        rounds += 1
        if rounds > env.n_users + 2:
            raise LPError(f"{name}: Algorithm 1 did not finish in {env.n_users + 2} rounds")
        if not active:
            session.set_cost({}, maximize=True)  # (8b)-(8e) only: any feasible point
            session.set_col_bounds(g, 0, 0)
        res = session.solve(exact=exact)
        if res.status == "unbounded" and active and cap() is not None:
            session.set_col_bounds(g, 0, cap())  # decision (ii) of the module docstring
            res = session.solve(exact=exact)
            session.set_col_bounds(g, 0, None)
        if not res.ok:
            raise LPError(f"{name}: LP-TaskShare round {rounds}: {res.status} {res.reason}".strip())
        x = res.x
        if not active:
            trace.append((rounds, None, []))
            break
        gval = x[g]
        Q = []
        for j in active:
            nj = env.tasks[j]
            if nj is None:
                continue
            tot = total(x, j)
            if exact:
                hit = tot >= nj
            else:
                hit = float(tot) >= float(nj) - FLOAT_SAT_TOL * max(1.0, float(nj))
            if hit:
                Q.append(j)
        trace.append((rounds, gval if exact else gval / scale, list(Q)))
        if not Q:
            break
        for j in Q:  # (8e): x_j = n_j from now on
            r = row_of[j]
            session.set_coef(r, g, 0)
            target = env.tasks[j] * coef[j]
            session.set_row_bounds(r, target, target)
        active = [j for j in active if j not in Q]
        saturated.extend(Q)
    return x, rounds, trace, saturated
