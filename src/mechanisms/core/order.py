"""The ORDER facets of the production ports (``mechanisms.OrderSpec``): the one way to build one
(:func:`order_facet`) and what they read from a state (:func:`view`, :func:`per_state`).

A state is an :class:`~mechverify.allocation.Allocation` of the environment: the current allocation
``x[j][s]`` (task counts per server), not necessarily one the policy would produce.  A facet answers many
questions about one state (a sort calls ``compare`` O(J log J) times), so a port's facet is built by
:func:`order_facet` from ``derive(state)`` -- everything the policy reads of the state, computed once per state
-- and readers that answer from it.  :func:`view` is what most ports derive first: per user its tasks and its
POOLED amounts, per server what is left.  The memos (:func:`per_state`) are keyed by the state objects'
identity and keep the objects alive, so they can never answer for another state; states are immutable, so the
facets stay pure functions of the state.
"""
from __future__ import annotations

from functools import wraps
from typing import Any, Callable, Optional, TypeVar

from mechverify.allocation import Allocation

from .mechanism import OrderSpec

__all__ = ["StateView", "view", "per_state", "order_facet", "STATES_KEPT"]

#: how many recent states a memo keeps (a property may alternate between a state and its variations)
STATES_KEPT = 4

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
    """``fn(state)`` computed once per state object, for the last :data:`STATES_KEPT` states it was called with
    (module docstring)."""
    kept: list[tuple[Any, Any]] = []  # (state, value), the most recent first

    @wraps(fn)
    def memo(state: Allocation) -> T:
        for i, (seen, value) in enumerate(kept):
            if seen is state:
                if i:
                    kept.insert(0, kept.pop(i))
                return value
        value = fn(state)
        kept.insert(0, (state, value))
        del kept[STATES_KEPT:]
        return value

    return memo


view = per_state(StateView)


def order_facet(derive: Callable[[Allocation], T], compare: Callable[[T, int, int], int],
                share: Callable[[T, int], Any], queue_share: Optional[Callable[[T, int], Any]] = None,
                request: Optional[Callable[[T, int], tuple]] = None) -> OrderSpec:
    """THE way a port builds its order facet (:class:`OrderSpec`): ``derive(state)`` computes what the policy
    reads of a state, once per state (:func:`per_state`, one memo per facet: a version's switches are bound in
    ``derive``); ``compare(derived, i, j)``, ``share(derived, j)``, ``queue_share(derived, q)`` and ``request(derived,
    j)`` answer from it (``None``: the policy has no such part)."""
    read = per_state(derive)

    def by_user(reader: Optional[Callable[[T, int], Any]]) -> Optional[Callable[[Allocation, int], Any]]:
        return None if reader is None else (lambda state, k: reader(read(state), k))

    return OrderSpec(lambda state, i, j: compare(read(state), i, j), by_user(share), by_user(queue_share),
                     by_user(request))
