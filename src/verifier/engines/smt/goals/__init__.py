"""Property goals: one module per property with z3 support (``sp``, ``ef``, ``si``, ``po``), each defining
``GOAL``, a :class:`~.base.Z3Goal`; a property names its module in its ``z3`` facet
(``StrategyProofness.z3 = "verifier.engines.smt.goals.sp"``) and the engine finds it with :func:`goal_of`.
Adding z3 support to a property is one module here (docs/z3.md, "Goals")."""
from .base import (GoalQuery, Reduction, Z3Goal, alloc_bundle, alloc_utility_lower, bundle_utility_lower,  # noqa: F401
                   compare, goal_of)

__all__ = ["Z3Goal", "Reduction", "GoalQuery", "goal_of", "alloc_bundle", "alloc_utility_lower",
           "bundle_utility_lower", "compare"]
