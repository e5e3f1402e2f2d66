"""Cross-check an encoding against the registered implementation on concrete environments:
:func:`validate_spec` asks z3 whether some case admits the implementation's totals (must be SAT) and
whether some case admits other totals (must be UNSAT), i.e. the encoding pins exactly the
implementation's allocation (certified intervals where it is not rational, MNW).  ``certify`` runs it on
random points of the domain before trusting an UNSAT.
"""
from __future__ import annotations

import random
import time
from fractions import Fraction
from typing import Optional

import z3

from mechverify.deadline import BudgetExhausted
from mechverify.model import Environment

from .domain import Shape
from .outcome import check_budget
from .specs import Spec, get_spec
from .symbolic import Ctx, SymEnv

__all__ = ["validate_spec", "random_env"]


def _totals(mech, env: Environment):
    alloc = mech(env, exact=True)
    if alloc.exact:
        return [(t, t) for t in alloc.totals()]
    tb = alloc.info.get("total_bounds")
    if tb is None:
        return None
    return [(Fraction(a), Fraction(b)) for a, b in tb]


def _solver(cons, timeout: float) -> z3.Solver:
    sol = z3.Solver()  # the default strategy: on a concrete instance the formula is linear
    sol.set("timeout", max(1, int(timeout * 1000)))
    sol.add(*cons)
    return sol


def _cut(clipped: bool, what: str) -> None:
    """An undecided check whose limit the deadline cut short is the budget running out, not a
    disagreement of the encoding."""
    if clipped:
        raise BudgetExhausted(f"time budget exhausted while {what}")


def validate_spec(mech, env: Environment, spec: Optional[Spec] = None, timeout: float = 30.0,
                  deadline: Optional[float] = None) -> Optional[str]:
    """``None`` if the encoding pins exactly the implementation's totals on ``env``; else a reason.
    ``timeout`` limits each z3 check; past ``deadline`` (``time.monotonic()``) it raises
    :class:`~mechverify.deadline.BudgetExhausted` (note ``budget: ...``)."""
    spec = spec or get_spec(mech)
    if spec is None:
        return f"{mech.name}: no encoding"
    senv = SymEnv.from_env(env)
    why = spec.covers(senv)
    if why:
        return f"not covered: {why}"
    bounds = _totals(mech, env)
    if bounds is None:
        return "the implementation gives no exact totals or bounds"
    cases = spec.cases(senv, list(range(env.n_users)))
    matched = False
    for k, case in enumerate(cases):
        what = f"cross-checking the encoding ({k} of {len(cases)} cases)"
        check_budget(deadline, what)
        ctx = Ctx()
        alloc = spec.encode(ctx, senv, case, "v")
        check_budget(deadline, what)
        limit = timeout if deadline is None else max(0.1, min(timeout, deadline - time.monotonic()))
        inside = [z3.And(X >= lo, X <= hi) if not isinstance(X, Fraction) else z3.BoolVal(lo <= X <= hi)
                  for X, (lo, hi) in zip(alloc.X, bounds)]
        # two fresh solvers rather than push/pop: z3's push preprocesses the whole formula outside
        # the timeout (22 s on 50 servers x 12 resources); a fresh check stays within it
        other = _solver(list(ctx.cons) + [z3.Not(z3.And(inside))], limit)
        r = other.check()
        if r == z3.sat:
            m = other.model()
            got = [m.eval(X, model_completion=True) if not isinstance(X, Fraction) else X for X in alloc.X]
            return (f"case {case}: the encoding allows totals {got}, the implementation gives "
                    f"{[lo if lo == hi else (lo, hi) for lo, hi in bounds]}")
        if r != z3.unsat:
            _cut(limit < timeout, what)
            return f"case {case}: z3 {r} ({other.reason_unknown()})"
        check_budget(deadline, what)
        if deadline is not None:  # the time the first check took is gone
            limit = max(0.1, min(limit, deadline - time.monotonic()))
        same = _solver(list(ctx.cons) + [z3.And(inside)], limit)
        r = same.check()
        if r == z3.sat:
            matched = True
        elif r != z3.unsat:
            _cut(limit < timeout, what)
            return f"case {case}: z3 {r} ({same.reason_unknown()})"
    if not matched:
        return "no case of the encoding admits the implementation's allocation"
    return None


def random_env(shape: Shape, rng: random.Random, zeros: bool = False, bounds: bool = False,
               weights: bool = False, placement: bool = False) -> Environment:
    """A random environment of ``shape`` (positive small rationals; optionally zero demands, task
    bounds, weights and placement constraints)."""
    def q():
        return Fraction(rng.randint(1, 12), rng.randint(1, 6))

    def dq():
        return Fraction(0) if zeros and rng.random() < 0.2 else q()

    data = {
        "resources": [f"r{i + 1}" for i in range(shape.resources)],
        "servers": [{"name": f"s{s + 1}", "capacity": [str(q()) for _ in range(shape.resources)]}
                    for s in range(shape.servers)],
        "users": [],
    }
    if shape.external:
        data["external"] = [{"name": f"e{k + 1}", "capacity": str(q())} for k in range(shape.external)]
    for j in range(shape.users):
        d = [dq() for _ in range(shape.resources)]
        if not any(d):
            d[0] = q()
        u = {"name": f"u{j + 1}", "demand": [str(v) for v in d]}
        if shape.external:
            u["external_demand"] = [str(q()) for _ in range(shape.external)]
        if bounds and rng.random() < 0.5:
            u["tasks"] = str(Fraction(rng.randint(1, 8), rng.randint(1, 3)))
        if weights and rng.random() < 0.5:
            u["weight"] = str(Fraction(rng.randint(1, 4), rng.randint(1, 2)))
        if placement and shape.servers > 1 and rng.random() < 0.5:
            k = rng.randint(1, shape.servers - 1)
            u["eligible"] = [f"s{s + 1}" for s in sorted(rng.sample(range(shape.servers), k))]
        data["users"].append(u)
    from mechverify.instances import parse_environment
    return parse_environment(data)
