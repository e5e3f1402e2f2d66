"""Pareto optimality: is there a feasible allocation that gives every user as many tasks and one more?
``ParetoOptimality.z3`` names this module (docs/z3.md, "Goals")."""
from __future__ import annotations

from typing import Any

from ..encoders import SymAlloc
from ..symbolic import Ctx, SymEnv, build_poly, vsum
from .base import GoalQuery, Z3Goal, compare

__all__ = ["GOAL", "po_goal"]


def po_goal(ctx: Ctx, true: SymEnv, alloc: SymAlloc, strict: bool) -> Any:
    """Some ``y`` in chi(E) (RDM, true placement, external, bounds) with ``Y_j >= X_j`` for all ``j``
    and ``sum Y > sum X`` (``verifier/properties/po.py``)."""
    poly = build_poly(ctx, true, "dom", placement=True, external=True, bounds=True)
    for j in range(true.J):
        ctx.add(compare(poly.total(j), alloc.X[j], False))
    ctx.add(compare(vsum(poly.total(j) for j in range(true.J)), vsum(alloc.X), strict))
    return poly


def _formula(ctx: Ctx, q: GoalQuery) -> Any:
    return po_goal(ctx, q.truth, q.alloc, q.strict)


GOAL = Z3Goal(_formula, users=None, need="lower", certify_variants=("fractional",),
              space="every allocation of chi(E)", control="relaxed")
