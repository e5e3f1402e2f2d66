"""Strategy-proofness: user 1 misreports; does the bundle it gets give it more TRUE tasks than the truthful
one?  ``StrategyProofness.z3`` names this module (docs/z3.md, "Goals")."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..encoders import SymAlloc
from ..symbolic import Ctx, SymEnv, vmul
from .base import GoalQuery, Reduction, Z3Goal, alloc_utility_lower, compare

__all__ = ["GOAL", "sp_goal"]


def sp_goal(ctx: Ctx, true: SymEnv, deviated: SymEnv, alloc_dev: SymAlloc, i: int, truthful_utility: Any,
            strict: bool, margin: Fraction = Fraction(0)) -> Any:
    """``u_i(misreport bundle) > u_i(truthful)`` (``>=`` for the control); returns the utility variable.
    ``margin`` asks for a relative gain of at least ``margin`` (robust candidates)."""
    v = alloc_utility_lower(ctx, true, i, deviated, alloc_dev, i, sorted(true.eligible[i]), "dev")
    target = truthful_utility if not margin else vmul(1 + margin, truthful_utility)
    ctx.add(compare(v, target, strict))
    return v


def _formula(ctx: Ctx, q: GoalQuery) -> Any:
    return sp_goal(ctx, q.truth, q.deviated, q.alloc_dev, q.users[0], q.own, q.strict, q.margin)


GOAL = Z3Goal(
    _formula, users=(0,), misreport=True, need="lower", certify_variants=("demand",), robust=True,
    reduction=Reduction("L7", equivalence=False, per_server=True, found="reports with rho N(d') > N(d)",
                        inequality="rho N(d') <= N(d)"))
