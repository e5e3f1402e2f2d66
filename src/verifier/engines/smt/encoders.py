"""Encodings of "x is the mechanism's allocation" for symbolic environments: :func:`leximin` (Lemma L3),
:func:`common_level` (seed 004 Algorithm 1), :func:`lp_argmax` (CRU), :func:`nash_kkt` (MNW),
:func:`drf_closed_form`.  Every split of the totals the definition allows satisfies an encoding, so an
UNSAT query speaks about all of them; a SAT model is only a candidate (docs/z3.md, "Encoders").
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import comb
from typing import Any, Optional, Sequence

import z3

from .outcome import tick
from .symbolic import (Ctx, Poly, Row, SymEnv, build_poly, column_dual, dual_objective, is_sym,
                       known_zero, vmul, vsum)

__all__ = ["SymAlloc", "leximin", "leximin_cases", "leximin_case_count", "common_level", "common_level_cases",
           "common_level_case_count", "lp_argmax",
           "nash_kkt", "drf_closed_form", "Norm"]

Norm = Optional[tuple]  # (num, den): N = num/den > 0; None = the user takes no part


@dataclass
class SymAlloc:
    """An encoded allocation: its polytope (``None``: totals only, Lemma L6) and per-user totals ``X``."""

    poly: Poly
    X: list  # totals per user (V)
    note: str = ""

    def x(self, j: int, s: int) -> Any:
        """User ``j``'s tasks on server ``s`` (0 where it has no column)."""
        return self.poly.x.get((j, s), Fraction(0))  # poly None: only totals are encoded (Lemma L6)


def _score_le(X, w, norms, a: int, b: int, strict: bool = False, equal: bool = False):
    """``X_a/(w_a N_a)  (<= | < | ==)  X_b/(w_b N_b)`` without division (``N = num/den > 0``)."""
    na, da = norms[a]
    nb, db = norms[b]
    lhs = vmul(vmul(X[a], da), vmul(w[b], nb))
    rhs = vmul(vmul(X[b], db), vmul(w[a], na))
    if equal:
        return lhs == rhs
    return lhs < rhs if strict else lhs <= rhs


def _const_bool(v):
    if isinstance(v, bool):
        return z3.BoolVal(v)
    return v


# ---------------------------------------------------------------------- leximin
def _ordered_partitions(items: list):
    """Every ordered partition (weak order) of ``items``, generated one at a time."""
    if not items:
        yield []
        return
    first = items[0]
    for rest in _ordered_partitions(items[1:]):
        for i in range(len(rest)):
            yield rest[:i] + [rest[i] + [first]] + rest[i + 1:]
        for i in range(len(rest) + 1):
            yield rest[:i] + [[first]] + rest[i:]


@lru_cache(maxsize=None)
def _fubini(n: int) -> int:
    """Number of ordered partitions of ``n`` items (ordered Bell number)."""
    return 1 if n == 0 else sum(comb(n, k) * _fubini(n - k) for k in range(1, n + 1))


def leximin_case_count(participants: int, targets: int) -> int:
    """How many cases :func:`leximin_cases` gives (exact for 0, 1 or every participant a target; an
    upper bound otherwise), without enumerating them."""
    if participants == 0 or targets == 0:
        return 1
    if targets == 1:  # the others below the target (ordered) or in its group; the rest above
        last = [sum(comb(m, j) * _fubini(m - j) for j in range(m + 1)) for m in range(participants)]
        return sum(comb(participants - 1, k) * last[k] for k in range(participants))
    return _fubini(participants)


def common_level_case_count(bounded: int) -> int:
    """How many cases :func:`common_level_cases` gives for ``bounded`` users, without enumerating."""
    return sum(comb(bounded, k) * _fubini(k) for k in range(bounded + 1))


def leximin_cases(participants: Sequence[int], targets: Sequence[int]) -> list:
    """Weak orders of the participants' scores, truncated after the last group holding a target:
    ``(groups, above)`` with ``groups`` a tuple of sorted tuples and ``above`` a sorted tuple."""
    parts = list(participants)
    tg = [t for t in targets if t in parts]
    if not parts:
        return [((), ())]
    if not tg:
        return [((), tuple(sorted(parts)))]
    seen, out = set(), []
    for n, op in enumerate(_ordered_partitions(parts)):
        if n % 256 == 0:
            tick(f"enumerating the leximin orders ({len(out)} found)")
        last = max(i for i, g in enumerate(op) if any(t in g for t in tg))
        key = (tuple(tuple(sorted(g)) for g in op[:last + 1]), tuple(sorted(sum(op[last + 1:], []))))
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def leximin(ctx: Ctx, poly: Poly, norms: Sequence[Norm], case, tag: str, style: str = "cs") -> SymAlloc:
    """``x`` is leximin of the scores ``X_j / (w_j N_j)`` on ``poly`` in the weak order ``case`` (Lemma L3;
    the module docstring states the constraints)."""
    senv = poly.senv
    X = [poly.total(j) for j in range(senv.J)]
    w = senv.weight
    groups, above = case
    flat: list[int] = []
    for qi, g in enumerate(groups):
        tick(f"encoding leximin group {qi + 1} of {len(groups)}")
        for a, b in zip(g, g[1:]):
            ctx.add(_const_bool(_score_le(X, w, norms, a, b, equal=True)))
        if qi > 0:
            ctx.add(_const_bool(_score_le(X, w, norms, groups[qi - 1][0], g[0], strict=True)))
        flat = flat + list(g)
        mu = [ctx.nonneg(f"mu_{tag}_{qi}") for _ in poly.rows]
        nu = {k: ctx.nonneg(f"nu_{tag}_{qi}_{k}") for k in flat}
        for ci, col in enumerate(poly.cols):
            if ci % 64 == 0:
                tick(f"encoding leximin group {qi + 1} of {len(groups)} ({ci} of {len(poly.cols)} columns)")
            k = col[0]
            need = vsum([nu[k] if k in nu else Fraction(0), Fraction(1) if k in g else Fraction(0)])
            cd = column_dual(poly, mu, col)
            ctx.add(_const_bool(cd >= need))
            if style == "cs":  # complementary slackness with y = x: a used column prices exactly
                ctx.add(z3.Or(poly.x[col] == 0, _const_bool(cd == need)))
        if style == "cs":
            tick(f"encoding leximin group {qi + 1} of {len(groups)} (rows)")
            for m, row in zip(mu, poly.rows):  # a priced row is tight at x
                ctx.add(z3.Or(m == 0, _const_bool(vsum(vmul(c, poly.x[col]) for col, c in row.coeffs.items())
                                                  == row.rhs)))
        else:  # strong duality: b^T mu <= the objective at y = x (products nu_k X_k)
            ctx.add(_const_bool(dual_objective(poly, mu) <= vsum([vsum(X[k] for k in g)] +
                                                                  [vmul(nu[k], X[k]) for k in flat])))
    if groups:
        top = groups[-1][0]
        for k in above:
            ctx.add(_const_bool(_score_le(X, w, norms, top, k, strict=True)))
    return SymAlloc(poly, X, f"leximin case {case}")


# ---------------------------------------------------------------------- Algorithm 1 (common level)
def common_level_cases(bounded_participants: Sequence[int]) -> list:
    """Sequences of disjoint non-empty sets of bounded users saturating in rounds 1, 2, ..."""
    items = list(bounded_participants)
    out = [()]
    def rec(prefix, remaining):
        for size in range(1, len(remaining) + 1):
            for sub in itertools.combinations(remaining, size):
                tick(f"enumerating the saturation sequences ({len(out)} found)")
                seq = prefix + (tuple(sub),)
                out.append(seq)
                rec(seq, [r for r in remaining if r not in sub])
    rec((), items)
    return out


def common_level(ctx: Ctx, senv: SymEnv, norms: Sequence[Norm], case, tag: str, *, external: bool = True,
                 server_external_caps=None, need: str = "exact") -> SymAlloc:
    """Seed 004 Algorithm 1 (see ``mechanisms/paper/external_resources/tsf_er.py``): rounds of ``max g`` s.t. chi(E) without
    task-bound rows, ``X_j = w_j N_j g`` for active users, ``X_j = n_j`` for saturated ones;
    ``case`` = the saturating sets per round.  Users without a normaliser are pinned to 0.

    ``need`` (one round only, i.e. no task bounds): ``"lower"`` keeps only the dual certificate, so
    the encoded level is ``>= g*`` (totals ``X_j = w_j N_j g`` without columns); ``"upper"`` keeps
    only primal feasibility, so the level is ``<= g*``.  Sound for goals monotone in the level
    (Lemma L5, docs/z3.md)."""
    w = senv.weight
    part = [j for j in range(senv.J) if norms[j] is not None]
    if tuple(case) == () and not any(senv.tasks[j] is not None for j in part):
        if server_external_caps is None and poolable(senv):
            return _common_level_pooled(ctx, senv, norms, tag, need, external)
        if need != "exact":
            return _common_level_one_sided(ctx, senv, norms, tag, need, external, server_external_caps)
    sat_so_far: list[int] = []
    rounds = list(case) + [None]
    final = None
    for ri, Q in enumerate(rounds):
        tick(f"encoding Algorithm 1's round {ri + 1} of {len(rounds)}")
        rt = f"{tag}r{ri}"
        poly = build_poly(ctx, senv, rt, placement=True, external=external, bounds=False,
                          server_external_caps=server_external_caps)
        part_r = [j for j in part if poly.can_run(j)]
        for j in range(senv.J):
            if j not in part_r:
                for s in poly.user_cols[j]:
                    ctx.add(poly.x[(j, s)] == 0)
        X = [poly.total(j) for j in range(senv.J)]
        active = [j for j in part_r if j not in sat_so_far]
        sat = [j for j in part_r if j in sat_so_far]
        for j in sat:
            ctx.add(_const_bool(X[j] == senv.tasks[j]))
        if not active:
            if Q is not None:
                ctx.add(z3.BoolVal(False))  # a saturation round with nobody active: impossible case
            final = SymAlloc(poly, X, f"algorithm1 case {case}: all saturated")
            break
        g = ctx.nonneg(f"g_{rt}")
        for j in active:
            num, den = norms[j]
            ctx.add(_const_bool(vmul(den, X[j]) == vmul(vmul(w[j], num), g)))
        _level_dual(ctx, poly, norms, part_r, active, sat, g, rt)
        # saturation decisions of this round
        newly = set(Q) if Q is not None else set()
        for j in active:
            if senv.tasks[j] is None:
                if j in newly:
                    ctx.add(z3.BoolVal(False))
                continue
            num, den = norms[j]
            reach = vmul(vmul(w[j], num), g) >= vmul(senv.tasks[j], den)
            ctx.add(_const_bool(reach) if j in newly else z3.Not(_const_bool(reach)))
        if Q is None:
            final = SymAlloc(poly, X, f"algorithm1 case {case}")
            break
        sat_so_far.extend(Q)
    return final


def _level_dual(ctx: Ctx, poly: Poly, norms: Sequence[Norm], part: Sequence[int], active: Sequence[int],
                sat: Sequence[int], g: Any, rt: str) -> None:
    """A dual certificate that no feasible ``x`` reaches a level above ``g`` in this round of
    ``max g`` (``X_j = w_j N_j g`` for ``active`` users, ``X_j = n_j`` for the saturated ``sat``):
    rows ``mu >= 0``, user rows ``pi`` free, ``(A^T mu)_(j,s) + pi_j coef_j >= 0`` on the columns of
    ``part``, ``sum_active pi_j w_j num_j <= -1`` and ``b^T mu + sum_sat pi_j n_j <= g``."""
    senv, w = poly.senv, poly.senv.weight
    mu = [ctx.nonneg(f"mu_{rt}") for _ in poly.rows]
    pi = {j: ctx.var(f"pi_{rt}_{j}") for j in part}
    for col in poly.cols:
        j = col[0]
        if j not in part:
            continue
        coef = norms[j][1] if j in active else Fraction(1)
        ctx.add(_const_bool(vsum([column_dual(poly, mu, col), vmul(pi[j], coef)]) >= 0))
    ctx.add(_const_bool(vsum(vmul(vmul(pi[j], w[j]), norms[j][0]) for j in active) <= -1))
    ctx.add(_const_bool(vsum([dual_objective(poly, mu)] + [vmul(pi[j], senv.tasks[j]) for j in sat]) <= g))


def poolable(senv: SymEnv) -> bool:
    """Lemma L6: with one server, or one computational resource and no placement constraints, a
    vector of totals ``X`` is feasible iff it fits the POOLED capacities (one row per resource and per
    external resource): the split over servers is free."""
    if any(senv.eligible[j] != frozenset(range(senv.S)) for j in range(senv.J)):
        return False
    return senv.S == 1 or senv.R == 1


def _level_totals(ctx, senv, norms, part, g, rt, fresh) -> list:
    """Totals ``X_j = w_j N_j g`` (``N = num/den``) of the participants, 0 for the others: a fresh
    variable tied by ``den X_j = w_j num g`` when ``den`` is symbolic or ``fresh(num)``, else the
    expression itself."""
    w = senv.weight
    X = []
    for j in range(senv.J):
        if j not in part:
            X.append(Fraction(0))
            continue
        num, den = norms[j]
        if is_sym(den) or fresh(num):
            Xj = ctx.var(f"X_{rt}_{j}")
            ctx.add(_const_bool(vmul(den, Xj) == vmul(vmul(w[j], num), g)))
        else:
            Xj = vmul(vmul(w[j], num), g) * (1 / Fraction(den))
        X.append(Xj)
    return X


def _common_level_pooled(ctx, senv, norms, tag, need, external) -> SymAlloc:
    """Algorithm 1's one round over pooled rows: ``X_j = w_j N_j g`` and ``g* = min_rows cap/load``,
    i.e. every row ``<=`` and some row tight -- no LP duals (the DRF closed form, generalised)."""
    rt = f"{tag}p"
    g = ctx.nonneg(f"g_{rt}")
    part = [j for j in range(senv.J) if norms[j] is not None and any(senv.usable(j, s) for s in range(senv.S))]
    X = _level_totals(ctx, senv, norms, part, g, rt, fresh=lambda num: need == "upper" or is_sym(num))
    rows = []
    for r in range(senv.R):
        load = vsum(vmul(X[j], senv.demand[j][r]) for j in part if not known_zero(senv.demand[j][r]))
        if not (not is_sym(load) and load == 0):
            rows.append((load, senv.total_capacity(r)))
    if external:
        for k in range(senv.K):
            load = vsum(vmul(X[j], senv.external_demand[j][k]) for j in part
                        if not known_zero(senv.external_demand[j][k]))
            if not (not is_sym(load) and load == 0):
                rows.append((load, senv.external_capacity[k]))
    if need in ("exact", "upper"):
        for load, cap in rows:
            ctx.add(_const_bool(load <= cap))
    if need in ("exact", "lower"):
        ctx.add(z3.Or([_const_bool(load >= cap) for load, cap in rows]) if rows else z3.BoolVal(False))
    return SymAlloc(None, X, f"algorithm1 over pooled rows (Lemma L6), need={need}")


def _common_level_one_sided(ctx, senv, norms, tag, need, external, server_external_caps) -> SymAlloc:
    w = senv.weight
    rt = f"{tag}r0"
    poly = build_poly(ctx, senv, rt, placement=True, external=external, bounds=False,
                      server_external_caps=server_external_caps, primal=(need == "upper"))
    part = [j for j in range(senv.J) if norms[j] is not None and poly.can_run(j)]
    g = ctx.nonneg(f"g_{rt}")
    if need == "upper":
        for j in range(senv.J):
            if j not in part:
                for s in poly.user_cols[j]:
                    ctx.add(poly.x[(j, s)] == 0)
        X = [poly.total(j) for j in range(senv.J)]
        for j in part:
            num, den = norms[j]
            ctx.add(_const_bool(vmul(den, X[j]) == vmul(vmul(w[j], num), g)))
        return SymAlloc(poly, X, "algorithm1 (level <= optimum: primal only)")
    # need == "lower": X_j = w_j N_j g and a dual certificate g >= g*
    X = _level_totals(ctx, senv, norms, part, g, rt, fresh=lambda num: False)
    _level_dual(ctx, poly, norms, part, part, [], g, rt)
    return SymAlloc(poly, X, "algorithm1 (level >= optimum: dual only)")


# ---------------------------------------------------------------------- one LP (CRU)
def lp_argmax(ctx: Ctx, poly: Poly, extra: Sequence[Row], objective: Sequence[Any], tag: str) -> SymAlloc:
    """``x`` maximises ``sum_j objective[j] * X_j`` over ``poly`` and the ``extra`` rows (all
    ``<=``; their constraints are added here).  ``objective[j]`` is ``None`` or ``(num, den)`` meaning
    ``den/num`` (``num > 0``)."""
    senv = poly.senv
    for row in extra:
        ctx.add(_const_bool(vsum(vmul(c, poly.x[col]) for col, c in row.coeffs.items()) <= row.rhs))
    rows = list(poly.rows) + list(extra)
    mu = [ctx.nonneg(f"y_{tag}") for _ in rows]
    X = [poly.total(j) for j in range(senv.J)]
    cost = []
    for j in range(senv.J):
        o = objective[j]
        if o is None:
            cost.append(Fraction(0))
            continue
        num, den = o
        if not is_sym(num) and not is_sym(den):
            cost.append(Fraction(den) / Fraction(num))
        else:
            c = ctx.var(f"cost_{tag}_{j}")
            ctx.add(vmul(c, num) == den)
            cost.append(c)
    for col in poly.cols:
        cd = vsum(vmul(m, r.coeffs[col]) for m, r in zip(mu, rows) if col in r.coeffs)
        ctx.add(_const_bool(cd >= cost[col[0]]))
    ctx.add(_const_bool(vsum(vmul(m, r.rhs) for m, r in zip(mu, rows)) <=
                        vsum(vmul(cost[j], X[j]) for j in range(senv.J))))
    return SymAlloc(poly, X, "lp argmax")


# ---------------------------------------------------------------------- Nash welfare (MNW)
def nash_kkt(ctx: Ctx, poly: Poly, participants: Sequence[int], tag: str) -> SymAlloc:
    """``x`` maximises ``sum_{j in participants} w_j log X_j`` over ``poly`` (KKT, exact)."""
    senv = poly.senv
    X = [poly.total(j) for j in range(senv.J)]
    for j in range(senv.J):
        if j not in participants:
            for s in poly.user_cols[j]:
                ctx.add(poly.x[(j, s)] == 0)
    for j in participants:
        ctx.add(_const_bool(X[j] > 0))
    mu = [ctx.nonneg(f"mu_{tag}") for _ in poly.rows]
    for col in poly.cols:
        j = col[0]
        if j not in participants:
            continue
        slack = vmul(X[j], column_dual(poly, mu, col)) - senv.weight[j]
        ctx.add(_const_bool(slack >= 0))
        ctx.add(z3.Or(poly.x[col] == 0, slack == 0))
    for m, row in zip(mu, poly.rows):
        lhs = vsum(vmul(c, poly.x[col]) for col, c in row.coeffs.items())
        ctx.add(z3.Or(m == 0, _const_bool(lhs == row.rhs)))
    return SymAlloc(poly, X, "nash kkt")


# ---------------------------------------------------------------------- DRF closed form
def drf_closed_form(ctx: Ctx, poly: Poly, share: Sequence[Any], tag: str, need: str = "exact") -> SymAlloc:
    """DRF on one server when every participating user demands every (pooled) resource and tasks are
    unbounded: ``X_j D_j = w_j t`` for one level ``t`` and some resource row tight.  ``share[j]`` is
    the dominant share per task ``D_j`` (``None``: not participating, pinned to 0)."""
    senv = poly.senv
    X = [poly.total(j) for j in range(senv.J)]
    t = ctx.nonneg(f"t_{tag}")
    for j in range(senv.J):
        if share[j] is None:
            for s in poly.user_cols[j]:
                ctx.add(poly.x[(j, s)] == 0)
            continue
        ctx.add(_const_bool(vmul(X[j], share[j]) == vmul(senv.weight[j], t)))
    if need == "upper":  # t <= t*: feasibility only (the rows were added with the polytope)
        return SymAlloc(poly, X, "drf closed form (level <= optimum)")
    tight = [vsum(vmul(c, poly.x[col]) for col, c in row.coeffs.items()) >= row.rhs
             for row in poly.rows if row.kind in ("cap", "ext")]
    ctx.add(z3.Or([_const_bool(c) for c in tight]) if tight else z3.BoolVal(False))
    return SymAlloc(poly, X, "drf closed form")
