"""Property goals over symbolic allocations: the violation (strict) and its vacuity control.

All goals need a LOWER bound on a true utility (``utility > own`` for SP and EF, ``own < equal
split`` for SI), so the Leontief ``min``s are encoded one-sided: ``v <= every term`` -- existential
and exact for such goals (choose ``v`` = the minimum).  The truthful utility of a user's own bundle
is its total ``X_j`` (seed 004 Lemma 2, ``mechverify/utility.py``).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import z3

from mechverify.numbers import INF, is_inf

from .encoders import SymAlloc
from .symbolic import Ctx, SymEnv, build_poly, known_zero, vmul, vsum

__all__ = ["bundle_utility_lower", "alloc_bundle", "sp_goal", "ef_goal", "si_goal", "po_goal"]


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


def _cmp(a, b, strict: bool):
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


def sp_goal(ctx: Ctx, true: SymEnv, deviated: SymEnv, alloc_dev: SymAlloc, i: int, truthful_utility: Any,
            strict: bool, margin: Fraction = Fraction(0)) -> Any:
    """``u_i(misreport bundle) > u_i(truthful)`` (``>=`` for the control); returns the utility variable.
    ``margin`` asks for a relative gain of at least ``margin`` (robust candidates)."""
    v = alloc_utility_lower(ctx, true, i, deviated, alloc_dev, i, sorted(true.eligible[i]), "sp")
    target = truthful_utility if not margin else vmul(1 + margin, truthful_utility)
    ctx.add(_cmp(v, target, strict))
    return v


def ef_goal(ctx: Ctx, true: SymEnv, alloc: SymAlloc, j: int, k: int, variant: str, strict: bool) -> Any:
    """``u_j((w_j/w_k) A_k) > X_j`` (weighted EF, ``verifier/properties/ef_si.py``)."""
    scale = Fraction(true.weight[j]) / Fraction(true.weight[k])
    mask = sorted(true.eligible[j]) if variant == "placement-aware" else list(range(true.S))
    v = alloc_utility_lower(ctx, true, j, true, alloc, k, mask, f"ef{j}{k}", scale)
    ctx.add(_cmp(v, alloc.X[j], strict))
    return v


def si_goal(ctx: Ctx, true: SymEnv, alloc: SymAlloc, j: int, strict: bool) -> Any:
    """``X_j < u_j((w_j / sum w) (c, c_er))`` (``si_benchmark``)."""
    share = Fraction(true.weight[j]) / sum(Fraction(w) for w in true.weight)
    amounts = [[vmul(share, true.capacity[s][r]) for r in range(true.R)] for s in range(true.S)]
    ext = [vmul(share, c) for c in true.external_capacity]
    v = bundle_utility_lower(ctx, true, j, amounts, ext, sorted(true.eligible[j]), f"si{j}")
    ctx.add(_cmp(v, alloc.X[j], strict))
    return v


def po_goal(ctx: Ctx, true: SymEnv, alloc: SymAlloc, strict: bool) -> Any:
    """Some ``y`` in chi(E) (RDM, true placement, external, bounds) with ``Y_j >= X_j`` for all ``j``
    and ``sum Y > sum X`` (``verifier/properties/po.py``)."""
    poly = build_poly(ctx, true, "po", placement=True, external=True, bounds=True)
    for j in range(true.J):
        ctx.add(_cmp(poly.total(j), alloc.X[j], False))
    ctx.add(_cmp(vsum(poly.total(j) for j in range(true.J)), vsum(alloc.X), strict))
    return poly
