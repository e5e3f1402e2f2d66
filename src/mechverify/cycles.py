"""Repeated states of a deterministic stepping (docs/cycles.md).

A stepping is a sequence of STATES, each reached by something that HAPPENED (a scheduling cycle, an event and
the allocation it led to).  When the stepping is deterministic and nothing from outside changes it, a state
that repeats repeats forever: the steps from its first occurrence to its repeat are a LOOP.  The caller says
what a state is (a hashable key), what happened on the way into it, and what in a loop is worth counting
(preemptions, say); :class:`RepeatDetector` finds the first repeat and returns the :class:`Loop`.

When something from outside changes the stepping (an arrival, a new stage), earlier states prove nothing about
the future: :meth:`RepeatDetector.forget` drops them (the step count goes on).  Memory is bounded on request:
``window`` keeps the last ``window`` states only (a longer loop is then not seen), ``max_steps`` says when a
stepping has run long enough (:attr:`RepeatDetector.full`).

Users: the Kueue port's preemption-loop search (``mechanisms.ports.kueue.scheduling.run``) and the property
``cycles`` over executions (``verifier.properties.cycles``).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Optional

__all__ = ["Loop", "RepeatDetector", "first_loop"]


@dataclass(frozen=True)
class Loop:
    """A repeated state: first seen at step ``start``, seen again at step ``end``; ``between``: what happened on
    the way into each step ``start + 1 .. end`` (the loop, in order); ``counted``: how many of them the
    detector's ``count`` counts (without one: every step of the loop)."""

    start: int
    end: int
    key: Hashable
    between: tuple
    counted: int

    @property
    def length(self) -> int:
        """Steps in one turn of the loop."""
        return self.end - self.start


class RepeatDetector:
    """Feed it the states of a stepping in order (:meth:`see`); it answers the first repeat since the last
    :meth:`forget` (module docstring).  ``count(happened) -> int`` (or bool) scores one step of a loop."""

    def __init__(self, count: Optional[Callable[[Any], int]] = None, max_steps: Optional[int] = None,
                 window: Optional[int] = None) -> None:
        if window is not None and window < 1:
            raise ValueError("window: at least 1 state")
        self.count, self.max_steps, self.window = count, max_steps, window
        self.steps = 0  # states seen in all, forget or not: the index of the next one
        self._first: dict[Hashable, int] = {}  # state -> the step it was first seen at (since forget)
        self._keys: deque = deque()  # the states remembered, oldest first ...
        self._happened: deque = deque()  # ... and what happened on the way into each

    @property
    def full(self) -> bool:
        """``max_steps`` states have been seen."""
        return self.max_steps is not None and self.steps >= self.max_steps

    def forget(self) -> None:
        """Something from outside changed the stepping: no earlier state can start a loop."""
        self._first.clear()
        self._keys.clear()
        self._happened.clear()

    def see(self, key: Hashable, happened: Any = None) -> Optional[Loop]:
        """Record the next state (``key``), reached by ``happened``; the :class:`Loop` if it was seen since the
        last :meth:`forget` (and is still in the window), else ``None``."""
        i = self.steps
        self.steps += 1
        self._keys.append(key)
        self._happened.append(happened)
        first = self._first.get(key)
        if first is not None:
            base = i - len(self._keys) + 1  # the step of the oldest state remembered
            between = tuple(list(self._happened)[first - base + 1:])
            counted = len(between) if self.count is None else sum(int(self.count(h)) for h in between)
            return Loop(first, i, key, between, counted)
        self._first[key] = i
        if self.window is not None and len(self._keys) > self.window:
            old = self._keys.popleft()
            self._happened.popleft()
            if self._first.get(old) == i - len(self._keys):
                del self._first[old]
        return None


def first_loop(states: Iterable[tuple[Hashable, Any]], count: Optional[Callable[[Any], int]] = None,
               max_steps: Optional[int] = None, window: Optional[int] = None) -> Optional[Loop]:
    """The first repeat in ``(key, happened)`` pairs of a stepping nothing outside changes, or ``None`` (no
    repeat, or ``max_steps`` states seen first)."""
    det = RepeatDetector(count, max_steps, window)
    for key, happened in states:
        if det.full:
            return None
        loop = det.see(key, happened)
        if loop is not None:
            return loop
    return None
