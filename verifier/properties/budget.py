"""THE notion of a time budget: an absolute wall-clock ``deadline`` (a :func:`time.monotonic` value, or
``None`` for no limit) handed down from a command (``run``, ``check``, ``audit``) through the engines to
every long loop (Hypothesis phases, the optimiser, enumerations of misreports, LP loops in properties,
minimisation steps), which checks it between steps.

Deep loops that have no deadline parameter (a property's ``evaluate``: EF's pairs, SI's users, BF's
premise resources) call :func:`tick`, which checks the deadline of the innermost :func:`scope`.

A step already running is never interrupted (a solver call in C cannot be), so a command ends within its
budget plus the longest single step; callers that can estimate a step (one allocation of the mechanism on
this instance) do not start it when it cannot finish in time.  What a budget cut short is reported as
verdict ``unknown`` with a note starting with :data:`BUDGET` (``unknown: budget ...``).
"""
from __future__ import annotations

import contextlib
import math
import time
from contextvars import ContextVar
from typing import Iterator, Optional

__all__ = ["BUDGET", "BudgetExhausted", "now", "deadline_after", "left", "expired", "check", "earliest",
           "budget_note", "scope", "tick", "current"]

#: the note (prefix) of a verdict ``unknown`` caused by the time budget
BUDGET = "budget"

#: the clock of every deadline: wall-clock seconds, never going backwards
now = time.monotonic


class BudgetExhausted(Exception):
    """The deadline passed before a loop finished (``what`` says where)."""

    def __init__(self, what: str = "") -> None:
        super().__init__(budget_note(what))
        self.what = what


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


def budget_note(detail: str = "") -> str:
    """The note of an ``unknown`` verdict the budget caused: ``budget`` or ``budget: <detail>``."""
    return f"{BUDGET}: {detail}" if detail else BUDGET


_CURRENT: ContextVar[Optional[float]] = ContextVar("mechverify_deadline", default=None)


@contextlib.contextmanager
def scope(deadline: Optional[float]) -> Iterator[None]:
    """Within the block, :func:`tick` raises once ``deadline`` (or an enclosing scope's, if earlier) passed."""
    token = _CURRENT.set(earliest(deadline, _CURRENT.get()))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> Optional[float]:
    """The deadline of the innermost :func:`scope` (``None``: none)."""
    return _CURRENT.get()


def tick(what: str = "") -> None:
    """:func:`check` the deadline of the innermost :func:`scope` (nothing outside a scope)."""
    check(_CURRENT.get(), what)
