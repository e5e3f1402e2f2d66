"""work-conserving -- over an execution, no resource sits idle while a present user asking for more could run
one more task there (docs/executions.md).

At every step the test is ``lend``'s (``lend.refusals``, one implementation): a present user ``j`` that asks for
more (below its task bound and external limit) is refused what fits in the capacity nobody holds -- on the
servers it may use (``eligible``), packed server by server, in the free external resources, and within the
declared max of every queue on its path (a declared max is the policy's stated limit: capacity above it is not
idle for ``j``).  What must fit is ONE more task for a whole-task policy (a whole task on one server), any
positive amount for a divisible one, and THE REST OF ITS REQUEST for a policy that admits whole requests
(``Setting.whole_requests``: Kueue admits a workload's pods together, so the test is "a pending whole request
fits").  A user's wait runs from the first step such a task fits until the first judged step it does not
(a round mechanism holds its allocation between rounds by design: it is judged at its rounds, as
``judged_at`` says, and its wait goes on between them).  The measure is the longest wait (0 when nothing ever
fits); violated when > 0, so a fitting task left waiting at an instant only (a step of zero duration, events
at one time) is not a violation.
"""
from __future__ import annotations

from typing import Any

from .base import Measure
from .lend import refusals
from .temporal import ExecutionProperty, Judgement, fmt, judged_at

__all__ = ["WorkConserving"]


class WorkConserving(ExecutionProperty):
    name = "work-conserving"
    title = "Work conservation: no resource sits idle while a present user asking for more could run a task there"
    variants = {"idle": "one more task (a whole task on one server; divisible: any positive amount; a policy "
                        "admitting whole requests: the rest of the request) fits in the free capacity of a server "
                        "the user may use, within its queues' declared maxes"}
    default_variant = "idle"
    measure = Measure("the longest time a user's fitting task waited while capacity sat idle (time)", 0, ">")
    reads = ()

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        since: dict[str, Any] = {}
        per, worst, at, who, utils = [], None, None, (), {}
        zero: Any = 0 if exact else 0.0
        for st in steps:
            if st.alloc is None:
                since.clear()
                per.append(None)
                continue
            for u in list(since):
                if u not in st.users:
                    del since[u]
            if not judged_at(mech, st):
                per.append(None)
                continue
            fits = dict(refusals(st.true_env, st.alloc, mech, exact))
            m = None
            for j, u in enumerate(st.users):
                if j not in fits:
                    since.pop(u, None)
                    continue
                start = since.setdefault(u, st.t)
                wait = st.until - start
                m = wait if m is None or wait > m else m
                if worst is None or wait > worst:
                    worst, at, who = wait, st.index, (u,)
                    utils = {f"fits for {u}": fits[j], "idle from": start, "until": st.until}
            per.append(zero if m is None else m)
        if worst is None:
            return Judgement(zero, False, per_step=per, summary="no task of a user asking for more ever fitted in "
                                                                "idle capacity")
        u = who[0]
        what = "its whole request" if getattr(mech.setting, "whole_requests", False) else (
            "a whole task" if not getattr(mech.setting, "divisible", True) else f"{fmt(utils[f'fits for {u}'])} tasks")
        return Judgement(worst, self.is_violation(worst, exact), at, who, per, utils,
                         summary=f"{u} asks for more and {what} fits in idle capacity from t = "
                                 f"{fmt(utils['idle from'])} to {fmt(utils['until'])}, unallocated")
