"""The deadline of the running command, as the solver layer sees it.

``verifier.properties.budget`` is THE notion of a time budget; this core module holds the part of it the
LP layer needs (the core imports nothing above it): the innermost :func:`scope`'s absolute deadline (a
:func:`time.monotonic` value) and :class:`BudgetExhausted`.  Within a scope every HiGHS solve of
``mechverify.lp`` gets the time left as its time limit, so one allocation that takes far longer than
the caller estimated (a misreport can make an LP much harder than the truthful one) ends at the deadline
with :class:`BudgetExhausted` instead of overrunning the budget.
"""
from __future__ import annotations

import contextlib
import time
from contextvars import ContextVar
from typing import Iterator, Optional

__all__ = ["BUDGET", "BudgetExhausted", "budget_note", "scope", "current", "seconds_left", "now", "call_limit",
           "call_limit_scope", "call_limit_for", "DEFAULT_CALL_LIMIT"]

#: the note (prefix) of a verdict ``unknown`` caused by the time budget
BUDGET = "budget"

#: the clock of every deadline: wall-clock seconds, never going backwards
now = time.monotonic


def budget_note(detail: str = "") -> str:
    """The note of an ``unknown`` verdict the budget caused: ``budget`` or ``budget: <detail>``."""
    return f"{BUDGET}: {detail}" if detail else BUDGET


class BudgetExhausted(Exception):
    """The deadline passed before a loop (or a solver call) finished (``what`` says where)."""

    def __init__(self, what: str = "") -> None:
        super().__init__(budget_note(what))
        self.what = what


_CURRENT: ContextVar[Optional[float]] = ContextVar("mechverify_deadline", default=None)


@contextlib.contextmanager
def scope(deadline: Optional[float]) -> Iterator[None]:
    """Within the block, the deadline is ``deadline`` (or an enclosing scope's, if earlier)."""
    prev = _CURRENT.get()
    token = _CURRENT.set(deadline if prev is None else prev if deadline is None else min(deadline, prev))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> Optional[float]:
    """The deadline of the innermost :func:`scope` (``None``: none)."""
    return _CURRENT.get()


def seconds_left() -> Optional[float]:
    """Seconds left before the innermost scope's deadline (``None``: no deadline; may be negative)."""
    d = _CURRENT.get()
    return None if d is None else d - now()


# ---------------------------------------------------------------------------- the limit of one call
#: seconds one call of a user's code may take when no command set a limit (``allocate``, the Python API)
DEFAULT_CALL_LIMIT = 60.0
_CALL_LIMIT: ContextVar[Optional[float]] = ContextVar("mechverify_call_limit", default=None)


def call_limit_for(budget: Optional[float]) -> float:
    """The per-call time limit a command with ``budget`` seconds gives a user's code: a tenth of the
    budget, at least 1 s and at most :data:`DEFAULT_CALL_LIMIT` (a call that needs more is a finding:
    "exceeds the time limit"; ``--call-limit`` overrides it)."""
    if budget is None:
        return DEFAULT_CALL_LIMIT
    return round(max(1.0, min(DEFAULT_CALL_LIMIT, budget / 10)), 1)  # a round number in findings (3 s, not 2.9992 s)


@contextlib.contextmanager
def call_limit_scope(seconds: Optional[float], override: bool = False) -> Iterator[None]:
    """Within the block, one call of a user's code may take ``seconds`` (``mechverify.isolation``); an
    enclosing scope's limit stands unless ``override`` (``None``: keep the enclosing one)."""
    prev = _CALL_LIMIT.get()
    value = seconds if (prev is None or override) and seconds is not None else prev
    token = _CALL_LIMIT.set(value)
    try:
        yield
    finally:
        _CALL_LIMIT.reset(token)


def call_limit() -> float:
    """Seconds one call of a user's code may take here (:data:`DEFAULT_CALL_LIMIT` outside any scope)."""
    v = _CALL_LIMIT.get()
    return DEFAULT_CALL_LIMIT if v is None else v
