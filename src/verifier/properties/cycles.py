"""``cycles``: no preemption loop (docs/cycles.md).

A run of a deterministic mechanism through an execution CYCLES when a STATE repeats -- the present users'
environment, the allocation (rows by user, columns by server) and the stepper's memory (``Stepper.state_key()``;
``None`` when it declares none) -- at steps ``k < m`` with nothing but ``round`` events in between (no input
changed: the mechanism steps on alone, so the loop ``k .. m`` repeats for as long as the input stays as it is)
and at least one PREEMPTION in between (a present user's tasks drop from one step to the next).  Repeats are
found by the generic detector (``mechverify.cycles``); a user's work still to do is not part of the state (the
loop lasts until the next event or until some work is done).  The exact re-check is the base class's exact
replay.  The search over traces ends its traces with quiet rounds for it (``needs_quiet_rounds``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from fractions import Fraction
from typing import Any, Optional

from mechverify.cycles import RepeatDetector
from mechverify.execution import Step
from mechverify.numbers import FLOAT_REL

from .base import Measure
from .temporal import ExecutionProperty, Judgement

__all__ = ["Cycles"]


def _frozen(v: Any) -> Any:
    return tuple(sorted(v.items())) if isinstance(v, Mapping) else v


def _env_key(env) -> Any:
    return None if env is None else tuple(_frozen(getattr(env, f.name)) for f in fields(env))


def state_of(st: Step) -> tuple:
    """A step's state: the reported environment, the allocation (rows by user, columns by server) and the
    stepper's memory."""
    alloc = None if st.alloc is None else (st.alloc.env.users, st.alloc.env.servers, st.alloc.x)
    return (_env_key(st.env), alloc, st.state_key)


def preempted(prev: Optional[Step], st: Step, exact: bool) -> tuple[str, ...]:
    """The users present at both steps whose tasks drop from ``prev`` to ``st`` (in floats: by more than noise)."""
    if prev is None or prev.alloc is None or st.alloc is None:
        return ()
    before = {u: prev.alloc.total(j) for j, u in enumerate(prev.users)}
    out = []
    for j, u in enumerate(st.users):
        if u not in before:
            continue
        b, a = before[u], st.alloc.total(j)
        if (a < b) if exact else float(b) - float(a) > FLOAT_REL * max(1.0, abs(float(b))):
            out.append(u)
    return tuple(out)


class Cycles(ExecutionProperty):
    name = "cycles"
    title = "No preemption loop: a state never repeats with preemptions between while the input is unchanged"
    variants = {"preemptions": "a repeated state (environment, allocation, the mechanism's memory) at two steps with "
                               "only round events between them and a present user's tasks dropping in between"}
    default_variant = "preemptions"
    measure = Measure("the preemptions in one turn of a loop (a present user's tasks dropping between two steps)",
                      0, ">")
    needs_quiet_rounds = True

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        det = RepeatDetector(count=len)  # what happened into a step: the users preempted there
        per: list = [None] * len(steps)
        worst = None  # (preemptions, loop)
        in_loop: Optional[int] = None  # the preemptions of the loop this quiet stretch has entered
        prev = None
        for st in steps:
            if st.event is None or st.event.kind != "round":  # the input changed (or the run starts)
                det.forget()
                in_loop = None
            if in_loop is not None:  # a repeated state: every later step of the stretch is in the loop
                per[st.index] = in_loop
                prev = st
                continue
            loop = det.see(state_of(st), preempted(prev, st, exact))
            prev = st
            if loop is None:
                continue
            in_loop = loop.counted
            for i in range(loop.start, loop.end + 1):
                per[i] = in_loop
            if loop.counted and (worst is None or loop.counted > worst[0]):
                worst = (loop.counted, loop)
        num = (lambda v: Fraction(v)) if exact else float
        if worst is None:
            return Judgement(num(0), False, per_step=per, summary="no state repeats with a preemption between")
        n, loop = worst
        users = tuple(dict.fromkeys(u for who in loop.between for u in who))
        return Judgement(num(n), self.is_violation(num(n), exact), loop.end, users, per,
                         {"loop starts at step": Fraction(loop.start), "repeats at step": Fraction(loop.end),
                          "preemptions in one turn": Fraction(n)},
                         summary=f"the state of step {loop.start} repeats at step {loop.end} with only rounds "
                                 f"between and {n} preemption{'' if n == 1 else 's'} ({', '.join(users)}) in "
                                 f"between: it loops while the input stays as it is")
