"""What a property's z3 goal is (:class:`Z3Goal`, found through the property's ``z3`` facet by
:func:`goal_of`) and what goal formulas share: true utilities of bundles as one-sided bounds.

Goals are over symbolic allocations: the violation (strict) and its vacuity control.
All goals need a LOWER bound on a true utility (``utility > own`` for SP and EF, ``own < equal
split`` for SI), so the Leontief ``min``s are encoded one-sided: ``v <= every term`` -- existential
and exact for such goals (choose ``v`` = the minimum).  The truthful utility of a user's own bundle
is its total ``X_j`` (seed 004 Lemma 2, ``mechverify/utility.py``).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, NamedTuple, Optional, Sequence

import z3

from mechverify.numbers import INF, is_inf

from ..encoders import SymAlloc
from ..symbolic import Ctx, SymEnv, known_zero, vmul, vsum

__all__ = ["Z3Goal", "Reduction", "GoalQuery", "goal_of", "bundle_utility_lower", "alloc_bundle",
           "alloc_utility_lower", "compare"]


class GoalQuery(NamedTuple):
    """What a goal formula is about: the TRUE symbolic environment, the mechanism's (encoded) allocation
    there, the users the query names (an item of :attr:`Z3Goal.items`, or :attr:`Z3Goal.users`), the
    variant, strict (the violation) or not (the vacuity control: ``>=`` for ``>``); a misreport goal also
    gets the deviated environment, the allocation there, the deviator's truthful utility ``own`` and the
    relative ``margin`` a robust candidate must gain."""

    truth: SymEnv
    alloc: Optional[SymAlloc]
    users: tuple
    variant: str
    strict: bool
    deviated: Optional[SymEnv] = None
    alloc_dev: Optional[SymAlloc] = None
    own: Any = None
    margin: Fraction = Fraction(0)


@dataclass(frozen=True)
class Reduction:
    """A lemma that reduces the property, for a common-level mechanism on the certification domain, to one
    inequality about the mechanism's normaliser (``reduction.py``; docs/z3.md, Lemmas L7-L9).  The reduced
    query compares user 1 with its misreport (a misreport goal) or with user 2."""

    lemma: str  # "L7", "L8"
    equivalence: bool  # a SAT model is a violation candidate (else only "the lemma does not apply")
    per_server: bool  # Lemma L9 applies to per-server normalisers (one-server queries)
    found: str  # what a SAT model of the reduced query is, in words
    inequality: str  # what UNSAT proves


@dataclass(frozen=True)
class Z3Goal:
    """How the z3 engine asks "is the property violated?" (docs/z3.md, "Goals").  A property names the module
    defining its ``GOAL`` in its ``z3`` facet; the engine reads nothing else about the property.

    * ``formula(ctx, q: GoalQuery)`` adds the violation (``q.strict``) or its vacuity control to ``ctx``;
    * ``users``: the users the goal names on the certification domain (``None``: every user); the other
      users are interchangeable (the symmetry reduction permutes them) and need no leximin order;
    * ``misreport``: user 1's report is symbolic (the query has a deviated side, encoded as an upper
      bound, Lemma L5, and the truthful side as a lower bound); a per-instance query ranges over the
      deviation kind of the variant (``Hints.deviation``: ``demand`` or ``eligible``);
    * ``need``: what the truthful side's encoding must give ("exact" or "lower": Lemma L5);
    * ``certify_variants``: the variants ``certify`` handles; ``requires(shape, variant)``: why a shape
      cannot be certified (``None``: it can);
    * ``robust``: a rejected candidate is retried asking for a relative gain (``q.margin``);
    * ``reduction``: the lemma of ``reduction.py`` for common-level mechanisms, if any;
    * per-instance queries (``instance_query``; a misreport goal has its own): ``items(env, users)``, one
      query per item (the users ``q.users``); ``premise(env, variant)``: why the question does not apply;
      ``space``: what is quantified over, in words; ``control``: the vacuity control is the same query
      with ``>=`` ("relaxed") or the allocation's encoding alone ("encoding")."""

    formula: Callable[[Ctx, GoalQuery], Any]
    users: Optional[tuple] = (0,)
    misreport: bool = False
    need: str = "lower"
    certify_variants: tuple = ()
    requires: Optional[Callable[[Any, str], Optional[str]]] = None
    robust: bool = False
    reduction: Optional[Reduction] = None
    items: Optional[Callable[[Any, Sequence[int]], list]] = None
    premise: Optional[Callable[[Any, str], Optional[str]]] = None
    space: str = ""
    control: str = "relaxed"

    def targets(self, J: int) -> list[int]:
        """The users whose allocation the goal reads on a J-user domain."""
        return list(range(J)) if self.users is None else list(self.users)

    @property
    def fixed_users(self) -> int:
        """How many leading users the goal names (the rest are interchangeable; at least one)."""
        return max(1, len(self.users or ()))

    @property
    def named(self) -> tuple:
        """The users a certificate's witness names (``()``: every user)."""
        return tuple(self.users or ())

    def why_not(self, shape, variant: str) -> Optional[str]:
        """Why ``certify`` cannot answer for ``shape`` (``None``: it can)."""
        return self.requires(shape, variant) if self.requires is not None else None


def goal_of(prop) -> Optional[Z3Goal]:
    """The z3 goal a property declares in its ``z3`` facet: a :class:`Z3Goal`, or the module that defines
    one as ``GOAL`` (``None``: the property has none)."""
    ref = getattr(prop, "z3", None)
    if not ref:
        return None
    if isinstance(ref, Z3Goal):
        return ref
    goal = getattr(importlib.import_module(ref), "GOAL", None)
    if not isinstance(goal, Z3Goal):
        raise ValueError(f"{prop.name}: z3 = {ref!r} defines no Z3Goal named GOAL")
    return goal


def alloc_bundle(alloc: SymAlloc, rep: SymEnv, k: int, scale: Any = 1) -> tuple[list, list]:
    """User ``k``'s non-wasteful bundle (computed with the REPORTED demands in ``rep``)."""
    amounts = []
    for s in range(rep.S):
        if (k, s) in alloc.poly.x:
            amounts.append([vmul(vmul(scale, alloc.poly.x[(k, s)]), rep.demand[k][r]) for r in range(rep.R)])
        else:
            amounts.append([Fraction(0)] * rep.R)
    ext = [vmul(vmul(scale, alloc.X[k]), rep.external_demand[k][kk]) for kk in range(rep.K)]
    return amounts, ext


def bundle_utility_lower(ctx: Ctx, true: SymEnv, j: int, amounts: Sequence[Sequence[Any]], ext: Sequence[Any],
                         mask: Sequence[int], tag: str) -> Any:
    """A variable ``v`` with ``v <= u_j(bundle)`` (TRUE data of ``j``; ``mechverify.utility.true_tasks``)."""
    v = ctx.var(f"u_{tag}")
    dem = true.demands(j)
    bounded = False
    if mask:
        if not dem:
            comp = INF
        else:
            terms = []
            for s in mask:
                amt = amounts[s]
                if all(known_zero(amt[r]) for r in dem):
                    continue
                p = ctx.var(f"p_{tag}_{s}")
                for r in dem:
                    ctx.add(vmul(p, true.demand[j][r]) <= amt[r])
                terms.append(p)
            comp = vsum(terms)
        if not is_inf(comp):
            ctx.add(v <= comp)
            bounded = True
    return _bound_rest(ctx, true, j, v, mask, bounded, lambda kk: ext[kk])


def _bound_rest(ctx: Ctx, true: SymEnv, j: int, v: Any, mask: Sequence[int], bounded: bool,
                ext_amount) -> Any:
    """The bounds on ``v <= u_j(bundle)`` every bundle shares: ``0`` without a usable server, the
    external amounts ``ext_amount(k)``, the task bound; a ``ValueError`` if nothing bounds ``v``."""
    if not mask:
        ctx.add(v <= 0)
        bounded = True
    for kk in true.ext_demands(j):
        ctx.add(vmul(v, true.external_demand[j][kk]) <= ext_amount(kk))
        bounded = True
    if true.tasks[j] is not None:
        ctx.add(v <= true.tasks[j])
        bounded = True
    if not bounded:
        raise ValueError(f"users[{j}]: infinite utility")
    return v


def compare(a, b, strict: bool):
    """``a > b`` (``a >= b`` unless strict) as a z3 Boolean."""
    r = a > b if strict else a >= b
    return z3.BoolVal(r) if isinstance(r, bool) else r


def alloc_utility_lower(ctx: Ctx, true: SymEnv, j: int, rep: SymEnv, alloc: SymAlloc, k: int, mask: Sequence[int],
                        tag: str, scale: Any = 1) -> Any:
    """``v <= u_j(scale * bundle_k)``.  A bundle is ``x[k,s] * d_rep[k]`` with the SAME vector on
    every server, so ``sum_s min_r x[k,s] a_r / b_r = (sum_{s in mask} x[k,s]) min_r a_r / b_r``:
    only ``k``'s total over ``mask`` matters (no per-server variables)."""
    v = ctx.var(f"u_{tag}")
    if alloc.poly is None:  # totals only (pooled encoding: no placement, the mask is every server)
        Xm = alloc.X[k] if set(mask) == set(range(rep.S)) else None
        if Xm is None:
            raise ValueError("a pooled allocation has no per-server columns")
    else:
        cols = [s for s in mask if (k, s) in alloc.poly.x]
        Xm = vsum(alloc.poly.x[(k, s)] for s in cols)
    bounded = False
    if mask:
        dem = true.demands(j)
        for r in dem:
            ctx.add(vmul(v, true.demand[j][r]) <= vmul(vmul(scale, Xm), rep.demand[k][r]))
        bounded = bool(dem)
    return _bound_rest(ctx, true, j, v, mask, bounded,
                       lambda kk: vmul(vmul(scale, alloc.X[k]), rep.external_demand[k][kk]))
