"""What one z3 question established: its :class:`~verifier.results.Result` and clock (:class:`Attempt`),
and SAT models turned into exact certificates (:func:`confirm`).  Nothing here stores: a confirmed
certificate and the provenance to record with it go back to the caller in the result."""
from __future__ import annotations

import time
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

import z3

from mechverify.deadline import BudgetExhausted
from mechverify.lp import LPError
from mechverify.numbers import InstanceError

from ...properties import budget as bud
from ...properties import get_property
from ...properties.base import Deviation, Report, Witness
from ...results import Result, Verdict
from .symbolic import SymEnv, is_sym, to_fraction_value

__all__ = ["Attempt", "Budget", "check_budget", "tick", "evaluator", "substitute_env", "rationalisations", "first_confirmed", "confirm",
           "RECHECK_ERRORS"]

#: what an exact re-check of a rounded model may raise: the candidate is then simply not confirmed
RECHECK_ERRORS = (InstanceError, LPError, ZeroDivisionError, ValueError, ArithmeticError)


#: the z3 layer's name for THE budget exception (``mechverify.deadline``; ``verifier.properties.budget``)
Budget = BudgetExhausted


def check_budget(deadline: Optional[float], what: str) -> None:
    """Raise :class:`~mechverify.deadline.BudgetExhausted` (note ``budget: time budget exhausted while
    <what>``) once ``deadline`` has passed (``verifier.properties.budget.check``)."""
    bud.check(deadline, f"time budget exhausted while {what}")


def tick(what: str) -> None:
    """:func:`check_budget` against the innermost deadline scope (``certify`` and ``instance_query`` open
    one): for the enumerations deep inside the encoders, which take no deadline parameter."""
    check_budget(bud.current(), what)


class Attempt:
    """One z3 question in progress: the mechanism, property and variant resolved, the result being
    filled in, and the clock (``deadline`` is a ``time.monotonic()`` value)."""

    def __init__(self, mech, prop_name: str, variant: Optional[str], timeout: float) -> None:
        self.t0 = time.monotonic()
        self.deadline = self.t0 + timeout
        if isinstance(mech, str):
            from mechanisms import get
            mech = get(mech)
        self.mech = mech
        self.prop = get_property(prop_name)
        self.variant = self.prop.variant_of(variant, mech.setting)
        self.result = Result(mech.name, self.prop.name, self.variant, verdict=Verdict.UNKNOWN, engine="z3")

    def done(self, verdict: str, note: str = "") -> Result:
        """Close the result with ``verdict`` and its reason."""
        self.result.verdict, self.result.note = verdict, note
        self.result.seconds = time.monotonic() - self.t0
        return self.result

    def violated(self, cert, provenance: dict) -> Result:
        """Close the result with a confirmed certificate and the provenance the store should record."""
        self.result.certificate = cert
        self.result.details["provenance"] = dict(provenance, z3=z3.get_version_string())
        return self.done(Verdict.VIOLATED, cert.summary)


def evaluator(values: dict, params: dict) -> Callable[[Any], Any]:
    """``ev(v)``: the value of a (possibly symbolic) entry once the parameters take ``values``."""
    subs = [(params[n], z3.RealVal(v)) for n, v in values.items() if n in params]

    def ev(v):
        if not is_sym(v):
            return v
        return to_fraction_value(z3.simplify(z3.substitute(v, *subs)) if subs else z3.simplify(v))
    return ev


def substitute_env(senv: SymEnv, values: dict, params: dict):
    """``(Environment, ev)``: the concrete environment for parameter values (entries may be
    expressions of parameters) and the evaluator that built it."""
    ev = evaluator(values, params)
    return senv.concrete_with(ev), ev


def rationalisations(values: dict, algebraic: Sequence[str] = ()) -> list[dict]:
    """Candidate rational parameter vectors, simplest first, the model's own values last."""
    out, seen = [], set()
    for den in (1, 2, 4, 10, 100, 10 ** 3, 10 ** 4, 10 ** 6, 10 ** 9, 10 ** 12):
        cand = {}
        for n, v in values.items():
            r = v.limit_denominator(den)
            if v > 0 and r <= 0:
                r = Fraction(1, den) if Fraction(1, den) < v * 2 else v
            cand[n] = r
        key = tuple(sorted(cand.items()))
        if key not in seen:
            seen.add(key)
            out.append(cand)
    key = tuple(sorted(values.items()))
    if key not in seen:
        out.append(dict(values))
    return out


def first_confirmed(candidates, recheck: Callable[[Any], Any]):
    """The certificate of the first candidate that ``recheck`` confirms (``None``: none did); a
    candidate whose re-check raises one of :data:`RECHECK_ERRORS` is not confirmed."""
    for cand in candidates:
        try:
            cert = recheck(cand)
        except RECHECK_ERRORS:
            continue
        if cert is not None:
            return cert
    return None


def confirm(mech, prop, variant: str, dom, values: dict, algebraic: Sequence[str], users: tuple):
    """Round a SAT model of a certification domain ``dom`` to rationals, simplest first, and run the
    property's exact re-check on each; the first certificate, or ``None``."""
    def recheck(cand):
        env, ev = substitute_env(dom.truth, cand, dom.params)
        dev = None
        if dom.misreport is not None:  # the goal's user 1 misreported (a misreport goal's domain)
            md, me = dom.misreport
            dev = Deviation("misreport", (Report(users[0], demand=tuple(ev(v) for v in md),
                                                 external_demand=tuple(ev(v) for v in me) if me else None),))
        return prop.recheck(mech, Witness(prop.name, variant, mech.name, env, dev, None, users))
    return first_confirmed(rationalisations(values, algebraic), recheck)
