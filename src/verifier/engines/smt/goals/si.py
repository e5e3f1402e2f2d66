"""Sharing incentive: does some user run fewer tasks than with its weighted equal split of every server
(and external resource)?  ``SharingIncentive.z3`` names this module (docs/z3.md, "Goals")."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..encoders import SymAlloc
from ..symbolic import Ctx, SymEnv, vmul
from .base import GoalQuery, Z3Goal, bundle_utility_lower, compare

__all__ = ["GOAL", "si_goal"]


def si_goal(ctx: Ctx, true: SymEnv, alloc: SymAlloc, j: int, strict: bool) -> Any:
    """``X_j < u_j((w_j / sum w) (c, c_er))`` (``si_benchmark``)."""
    share = Fraction(true.weight[j]) / sum(Fraction(w) for w in true.weight)
    amounts = [[vmul(share, true.capacity[s][r]) for r in range(true.R)] for s in range(true.S)]
    ext = [vmul(share, c) for c in true.external_capacity]
    v = bundle_utility_lower(ctx, true, j, amounts, ext, sorted(true.eligible[j]), f"si{j}")
    ctx.add(compare(v, alloc.X[j], strict))
    return v


def _formula(ctx: Ctx, q: GoalQuery) -> Any:
    return si_goal(ctx, q.truth, q.alloc, q.users[0], q.strict)


GOAL = Z3Goal(_formula, users=(0,), need="lower", certify_variants=("per-server-split", "external"),
              space="every user", control="encoding")
