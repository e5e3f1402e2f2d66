"""burst-gaming -- online strategy-proofness against a TENANT's submission strategy (docs/executions.md).

A tenant is a user's queue (users outside queues are tenants of their own).  Its strategy is a
resubmission of one of its users (``mechverify.trace_deviations.TraceResubmission``): the user submitted as ``k``
users with its per-task demand, weight, queue and eligibility and its tasks divided among them, arriving with
it (``split``), or submitted later, whole or in two arrivals (``timing``; never earlier).  Nothing is
misreported, so every utility in the resubmitted run is true; the parts' tasks add up to the user's, so what
they run together is capped by its true demand, as ``online-sp`` caps a misreport.  The measure is the
tenant's gain in cumulative true service: the sum over its users (the parts in place of the resubmitted one)
of ``execution.cumulative`` up to the horizon, resubmitted less truthful; violated when > 0.

It is a property of its own, not a variant of ``online-sp``: its deviator is the tenant, not the user (the
gain is summed over the queue), and its deviation is a submission, not a report (``online-sp``'s bounded
certificate over traces is about misreports only).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Optional

from mechverify.execution import Execution, cumulative
from mechverify.trace_deviations import Part, TraceResubmission
from mechverify.numbers import InstanceError

from .base import Hints, Measure
from .temporal import ExecutionProperty, Judgement, fmt

__all__ = ["BurstGaming", "resubmissions", "tenant_of"]

#: the later arrivals the search tries (in the execution's time unit)
DELAYS = (Fraction(1, 2), Fraction(1), Fraction(2))


def _specs(ex: Execution) -> dict:
    return {**{u.name: u for u in ex.users}, **{e.spec.name: e.spec for e in ex.events if e.kind == "arrive"}}


def tenant_of(ex: Execution, user: str) -> tuple[Optional[str], tuple[str, ...]]:
    """The tenant of ``user`` (its queue; ``None``: a user outside queues, its own tenant) and its users."""
    specs = _specs(ex)
    q = specs[user].queue
    return q, ((user,) if q is None else tuple(u for u, s in specs.items() if s.queue == q))


def _divided(tasks: Optional[Fraction], k: int, whole: bool) -> Optional[list[Optional[Fraction]]]:
    """``tasks`` divided into ``k`` positive parts, the larger first (whole ones when ``tasks`` is a whole number
    of at least ``k``; for a whole-task mechanism only then); ``None`` when it cannot be; an unbounded user's
    parts are unbounded."""
    if tasks is None:
        return [None] * k
    if tasks.denominator == 1 and tasks >= k:
        n = int(tasks)
        return [Fraction(n // k + (1 if i < n % k else 0)) for i in range(k)]
    return None if whole or not tasks > 0 else [tasks / k] * k


def resubmissions(ex: Execution, variant: str, whole: bool, rng, per_user: int = 6) -> list[TraceResubmission]:
    """The resubmissions the search tries for every user that states its demand once: split into 2 or 3
    (``split``), or submitted 1/2, 1 or 2 later, whole or (a bounded user) half now and half then (``timing``; an
    unbounded user's two arrivals would be a split); those that break a
    rule (an arrival at or after its leave or the horizon) are left out.  ``rng`` samples ``per_user`` of them."""
    out: list[TraceResubmission] = []
    taken = set(ex.user_names)
    for user, spec in _specs(ex).items():
        names = [user] + [n for n in (f"{user}#{i}" for i in range(2, 9)) if n not in taken][:2]
        cands = []
        if variant == "split":
            for k in (2, 3):
                parts = _divided(spec.tasks, k, whole)
                if parts is not None and len(names) >= k:
                    cands.append(TraceResubmission(user, tuple(Part(names[i], parts[i]) for i in range(k))))
        else:
            halves = _divided(spec.tasks, 2, whole)
            for d in DELAYS:
                cands.append(TraceResubmission(user, (Part(user, spec.tasks, d),)))
                if spec.tasks is not None and halves is not None and len(names) >= 2:  # unbounded: a split
                    cands.append(TraceResubmission(user, (Part(names[0], halves[0]), Part(names[1], halves[1], d))))
        ok = []
        for c in cands:
            try:
                c.apply_to(ex)
            except InstanceError:  # a rule it breaks (TraceResubmission's docstring)
                continue
            ok.append(c)
        rng.shuffle(ok)
        out += ok[:per_user]
    return out


class BurstGaming(ExecutionProperty):
    name = "burst-gaming"
    title = "Burst gaming: a tenant never gains cumulative true service by splitting a user or submitting it later"
    variants = {"split": "one of its users submitted as 2 or 3 users with its per-task demand, weight, queue and "
                         "arrival, its tasks divided among them",
                "timing": "one of its users submitted later (1/2, 1 or 2 time units), whole or (a bounded user) half "
                          "at its time and half later; never earlier"}
    default_variant = "split"
    hints = Hints(deviation="trace")
    measure = Measure("the tenant's gain in cumulative true service (tasks x time, summed over its users) over the "
                      "run", 0, ">")
    #: what the search tries, in a verdict's note
    tried = "resubmissions"

    def trace_deviations(self, mech, ex: Execution, variant: str, rng) -> Iterable[TraceResubmission]:
        return resubmissions(ex, variant, not getattr(mech.setting, "divisible", True), rng)

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        if not isinstance(deviation, TraceResubmission) or deviated is None:
            return Judgement(None, False, note="no resubmission")
        queue, users = tenant_of(ex, deviation.user)
        parts = tuple(p.name for p in deviation.parts)
        horizon = ex.horizon if exact else float(ex.horizon)
        truth_by = cumulative(steps, horizon)
        lie_by = cumulative(deviated, horizon)
        zero: Any = 0 if exact else 0.0
        truth = sum((truth_by.get(u, zero) for u in users), zero)
        lie = sum((lie_by.get(u, zero) for u in users if u != deviation.user), zero) + \
            sum((lie_by.get(p, zero) for p in parts), zero)
        gain = lie - truth
        tenant = f"queue {queue}" if queue is not None else f"tenant {deviation.user}"
        return Judgement(gain, self.is_violation(gain, exact), None, (deviation.user,), [],
                         {f"service of {tenant} truthful": truth, f"service of {tenant} resubmitting": lie},
                         summary=f"{deviation.describe()}: the cumulative true service of {tenant} rises from "
                                 f"{fmt(truth)} to {fmt(lie)}")
