"""THE notion of a time budget: an absolute wall-clock ``deadline`` (a :func:`time.monotonic` value, or
``None`` for no limit) handed down from a command (``run``, ``check``, ``audit``) through the engines to
every long loop (Hypothesis phases, the optimiser, enumerations of misreports, LP loops in properties,
minimisation steps), which checks it between steps.

Deep loops that have no deadline parameter (a property's ``evaluate``: EF's pairs, SI's users, BF's
premise resources) call :func:`tick`, which checks the deadline of the innermost :func:`scope`.

The deadline, the scope and :class:`BudgetExhausted` live in the core (``mechverify.deadline``), where
the LP layer reads them: within a scope every HiGHS solve stops at the deadline.  Any other step
already running is not interrupted, so a command ends within its budget plus the longest single step; callers that can estimate a step (one allocation of the mechanism on
this instance) do not start it when it cannot finish in time.  What a budget cut short is reported as
verdict ``unknown`` with a note starting with :data:`BUDGET` (``unknown: budget ...``).
"""
from __future__ import annotations

import math
from typing import Optional

from mechverify.deadline import (BUDGET, BudgetExhausted, budget_note, call_limit_for, call_limit_scope,  # noqa: F401
                                 current, now, scope)

__all__ = ["BUDGET", "BudgetExhausted", "now", "deadline_after", "left", "expired", "check", "earliest",
           "budget_note", "scope", "tick", "current", "call_limit_for", "user_calls"]


def deadline_after(seconds: Optional[float]) -> Optional[float]:
    """The deadline ``seconds`` from now (``None``: no limit)."""
    return None if seconds is None else now() + seconds


def left(deadline: Optional[float]) -> float:
    """Seconds left before ``deadline`` (``inf`` without one; negative once it passed)."""
    return math.inf if deadline is None else deadline - now()


def expired(deadline: Optional[float]) -> bool:
    """Has ``deadline`` passed?"""
    return deadline is not None and now() >= deadline


def check(deadline: Optional[float], what: str = "") -> None:
    """Raise :class:`BudgetExhausted` once ``deadline`` has passed."""
    if deadline is not None and now() >= deadline:
        raise BudgetExhausted(what)


def earliest(*deadlines: Optional[float]) -> Optional[float]:
    """The first of several deadlines (``None`` entries are no limit)."""
    ds = [d for d in deadlines if d is not None]
    return min(ds) if ds else None


def tick(what: str = "") -> None:
    """:func:`check` the deadline of the innermost :func:`scope` (nothing outside a scope)."""
    check(current(), what)


def user_calls(mech, budget: Optional[float]):
    """The per-call time limit of ``mech``'s calls (a user's mechanism runs in a worker process,
    ``mechverify.isolation``) within a command of ``budget`` seconds: ``mech.call_limit`` (``--call-limit``)
    when given, else an enclosing command's limit, else :func:`call_limit_for` ``(budget)``."""
    given = getattr(mech, "call_limit", None)
    if given is not None:  # (``mechanisms.allocate`` applies it to every call too)
        return call_limit_scope(given, override=True)
    return call_limit_scope(call_limit_for(budget))
