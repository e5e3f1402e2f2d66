"""What the ORDER facets of the production ports read from a state (``mechanisms.OrderSpec``).

A state is an :class:`~mechverify.allocation.Allocation` of the environment: the current allocation
``x[j][s]`` (task counts per server), not necessarily one the policy would produce.  :func:`view` derives what
the ports' orders read from it -- per user its tasks and its POOLED amounts, per server what is left -- once
per state object: a sort calls ``compare`` O(J log J) times on one state, so every facet of a port keeps the
derived data of the last state it saw (:func:`per_state`).  The memo is keyed by the state object's identity
and keeps the object alive, so it can never answer for another state; states are immutable, so the facets
stay pure functions of the state.
"""
from __future__ import annotations

from functools import wraps
from typing import Any, Callable, TypeVar

from mechverify.allocation import Allocation

__all__ = ["StateView", "view", "per_state"]

T = TypeVar("T")


class StateView:
    """``tasks[j]`` = sum over servers of ``x[j][s]``; ``allocated[j][r]`` = sum over servers of ``x[j][s] *
    d(j, s)[r]`` (pooled, as the ports' shares are); ``remaining[s][r]`` = capacity minus what the state uses
    there (negative when the state overfills a server); ``totals[r]`` = the pooled capacity."""

    __slots__ = ("tasks", "allocated", "remaining", "totals")

    def __init__(self, state: Allocation) -> None:
        env = state.env
        R, S = env.n_resources, env.n_servers
        zero = 0 * env.total_capacity()[0] if R else 0
        self.totals = env.total_capacity()
        self.tasks: list[Any] = []
        self.allocated: list[list[Any]] = []
        self.remaining = [list(row) for row in env.capacity]
        for j in range(env.n_users):
            row = state.x[j]
            t, a = zero, [zero] * R
            for s in range(S):
                n = row[s]
                if not n:
                    continue
                t += n
                for r, d in enumerate(env.d(j, s)):
                    if d:
                        a[r] += n * d
                        self.remaining[s][r] -= n * d
            self.tasks.append(t)
            self.allocated.append(a)


def per_state(fn: Callable[[Allocation], T]) -> Callable[[Allocation], T]:
    """``fn(state)`` computed once for the last state object it was called with (module docstring)."""
    last: list[Any] = [(None, None)]  # one slot holding (state, value): replaced as a whole

    @wraps(fn)
    def memo(state: Allocation) -> T:
        seen, value = last[0]
        if seen is not state:
            value = fn(state)
            last[0] = (state, value)
        return value

    return memo


view = per_state(StateView)
