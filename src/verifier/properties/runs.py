"""``runs``: the mechanism returns a valid allocation on every instance of its setting.

A user's mechanism that raises, or returns something that is not an allocation in chi(E) (a wrong shape,
a negative, non-finite, too large or non-numeric entry, capacities exceeded beyond its tolerance), or --
in its worker process (``mechverify.isolation``) -- runs past the per-call time limit, calls ``sys.exit``
or ``os._exit``, dies of a signal or exhausts its memory limit, is a finding about the mechanism -- kind
"crash" -- not a crash of the verifier.  The engines search it like any other
instance property; the re-check runs the mechanism again in exact mode and must see the failure again
(a mechanism that fails only sometimes on the same instance is not certified).  ``run`` searches it first
for a user's mechanism (``mechanisms.core.references``); the registered mechanisms are checked by the test
suite instead.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Optional

from mechverify.allocation import Allocation
from mechverify.isolation import UserCodeFailure
from mechverify.model import Environment

from .base import Certificate, Evaluation, Hints, Measure, Property, Witness

__all__ = ["Runs", "failure_of", "failure_text"]


def failure_text(exc: BaseException) -> str:
    """A mechanism's failure as the one-line finding: what happened in its worker process
    (``mechverify.isolation``: ``Type: message`` of its exception, "exceeds the time limit (T s) on this
    instance", "called sys.exit(3)", "the process was killed by SIGSEGV", with what it printed), or
    ``Type: message`` of an exception raised here; at most 1000 characters."""
    if isinstance(exc, UserCodeFailure):
        return exc.finding[:1000]
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:500]


def failure_of(mech, env: Environment, exact: bool) -> Optional[str]:
    """``None`` if ``mech`` returns a valid allocation on ``env``; else the failure in one line
    (``SettingError`` -- the instance is outside the mechanism's setting -- propagates)."""
    got = _failure(mech, env, exact)
    return None if got is None else got[0]


def _failure(mech, env: Environment, exact: bool) -> Optional[tuple[str, str]]:
    """``None``, or (the failure in one line, its kind: ``UserCodeFailure.kind`` or "invalid")."""
    from mechanisms.core.registry import SettingError

    from mechverify.deadline import BudgetExhausted

    try:
        mech(env, exact=exact)
    except (SettingError, BudgetExhausted):  # outside the setting / the command's deadline: not a finding
        raise
    except Exception as exc:  # noqa: BLE001 - the mechanism's exception IS the finding
        return failure_text(exc), (exc.kind if isinstance(exc, UserCodeFailure) else "invalid")
    return None


class Runs(Property):
    """The mechanism returns a valid allocation (see the module docstring)."""

    name = "runs"
    title = "Returns a valid allocation on every instance of its setting (no exception, no invalid output)"
    measure = Measure("1 when the mechanism raises or returns no valid allocation on the instance (a crash), else 0",
                      0, ">")
    variants = {"any": "the mechanism raises, or returns something outside chi(E), on the instance"}
    default_variant = "any"
    hints = Hints()
    mechanism_failure = True

    def evaluate(self, mech, env: Environment, variant: str, deviation=None, exact: bool = False,
                 alloc: Optional[Allocation] = None) -> Evaluation:
        """Measure 1 when the mechanism fails on ``env`` (a candidate), 0 when it returns an allocation."""
        failed = failure_of(mech, env, exact)
        if failed is None:
            return Evaluation(Fraction(0) if exact else 0.0, False)
        w = Witness(self.name, variant, mech.name, env, None, 1, ())
        return Evaluation(Fraction(1) if exact else 1.0, True, w, note=failed)

    def recheck(self, mech, witness: Witness) -> Optional[Certificate]:
        """Certified when the exact-mode call fails again on the same instance."""
        try:
            got = _failure(mech, witness.env, True)
        except Exception:  # noqa: BLE001 - SettingError: outside the setting, nothing to certify
            return None
        if got is None:
            return None
        failed, kind = got
        return Certificate(witness, Fraction(1), Fraction(1), {}, {}, True, "", "exact",
                           f"{mech.name} fails on this instance: {failed}", exception=failed,
                           minimise=kind != "timeout")
