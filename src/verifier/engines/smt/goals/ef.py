"""Envy-freeness (weighted): does user j run more TRUE tasks with user k's (weight-scaled) bundle than with
its own?  ``EnvyFreeness.z3`` names this module (docs/z3.md, "Goals")."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..encoders import SymAlloc
from ..symbolic import Ctx, SymEnv
from .base import GoalQuery, Reduction, Z3Goal, alloc_utility_lower, compare

__all__ = ["GOAL", "ef_goal"]


def ef_goal(ctx: Ctx, true: SymEnv, alloc: SymAlloc, j: int, k: int, variant: str, strict: bool) -> Any:
    """``u_j((w_j/w_k) A_k) > X_j`` (weighted EF, ``verifier/properties/ef_si.py``)."""
    scale = Fraction(true.weight[j]) / Fraction(true.weight[k])
    mask = sorted(true.eligible[j]) if variant == "placement-aware" else list(range(true.S))
    v = alloc_utility_lower(ctx, true, j, true, alloc, k, mask, f"ef{j}{k}", scale)
    ctx.add(compare(v, alloc.X[j], strict))
    return v


def _formula(ctx: Ctx, q: GoalQuery) -> Any:
    return ef_goal(ctx, q.truth, q.alloc, q.users[0], q.users[1], q.variant, q.strict)


GOAL = Z3Goal(
    _formula, users=(0, 1), need="exact", certify_variants=("placement-aware", "literal"),
    reduction=Reduction("L8", equivalence=True, per_server=False, found="users with rho_12 N(d_2) > N(d_1)",
                        inequality="rho_12 N(d_2) <= N(d_1)"),
    space="every ordered pair of users", control="encoding")
