"""Deviations over a trace (docs/executions.md): what a user may report other than the truth where it states its
demands (:class:`TraceMisreport`, online SP), and how a tenant may submit one of its users instead (:class:`
TraceResubmission`, burst gaming) -- each with its exact replay (``apply_to`` or the run's reported state), its
file form and its one-line refusals.  The executions themselves and their stepping are
:mod:`mechverify.execution`'s.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Mapping, Optional

from .execution import Event, Execution, Statement, UserSpec, _stated, time_number
from .instances import _check_keys, _check_name, _show, _vector, instance_number
from .numbers import InstanceError, fmt_exact

__all__ = ["Statement", "TraceMisreport", "statement_places", "Part", "TraceResubmission", "TRACE_DEVIATIONS",
           "trace_deviation_from_dict"]


@dataclass(frozen=True)
class TraceMisreport:
    """One user reports other demands than its true ones where it states them (``"users[k]"`` for a user
    present at 0, ``"events[i]"`` for its arrive or demand event): ``reports`` (:class:`Statement`).  Its true
    demands stay those of the execution: utilities and work are measured in them.  ``kind`` and ``users``
    follow ``verifier.properties.Deviation``'s interface (``users``: none by index -- name it by ``user``)."""

    user: str
    reports: tuple[Statement, ...]
    kind: str = "trace-misreport"

    @property
    def users(self) -> tuple[int, ...]:
        return ()

    def at(self, where: str) -> Optional[Statement]:
        for st in self.reports:
            if st.where == where:
                return st
        return None

    def to_dict(self, env: Any = None) -> dict[str, Any]:
        return {"kind": self.kind, "user": self.user, "reports": {st.where: st.to_dict() for st in self.reports}}

    @staticmethod
    def from_dict(d: Any, ex: Execution) -> "TraceMisreport":
        """Inverse of ``to_dict`` for ``ex``: one line naming the field when anything is wrong."""
        if not isinstance(d, Mapping) or d.get("kind") != "trace-misreport":
            raise InstanceError(f"deviation: expected a trace-misreport object, got {_show(d)}")
        user = d.get("user")
        if user not in ex.user_names:
            raise InstanceError(f"deviation.user: unknown user {_show(user)}")
        raw = d.get("reports")
        if not isinstance(raw, Mapping) or not raw:
            raise InstanceError(f"deviation.reports: expected an object {{where: {{demand, tasks}}}}, got {_show(raw)}")
        places = set(statement_places(ex, user))
        out = []
        for w, rep in raw.items():
            where = f"deviation.reports[{w!r}]"
            if w not in places:
                raise InstanceError(f"deviation.reports: {_show(w)} is not where {user!r} states a demand "
                                    f"(those are {', '.join(sorted(places))})")
            if not isinstance(rep, Mapping) or not rep:
                raise InstanceError(f"{where}: expected an object {{demand, tasks}}, got {_show(rep)}")
            _check_keys(rep, {"demand", "tasks"}, where)
            demand = _vector(rep["demand"], len(ex.resources), f"{where}.demand", "resource") if "demand" in rep else None
            tasks: Any = "keep"
            if "tasks" in rep:
                tasks = None if rep["tasks"] is None else instance_number(rep["tasks"], f"{where}.tasks")
                if tasks is not None and tasks < 0:
                    raise InstanceError(f"{where}.tasks: must be >= 0 or null")
            out.append(Statement(w, demand, tasks))
        return TraceMisreport(user, tuple(out))

    def describe(self, env: Any = None) -> str:
        return f"{self.user} reports " + "; ".join(st.describe() for st in self.reports)

    def apply_to(self, ex: "Execution") -> "Execution":
        """The execution as this user reports it (its statements in place of the true ones)."""
        users = list(ex.users)
        events = list(ex.events)
        for st in self.reports:
            kind, _, idx = st.where.partition("[")
            i = int(idx.rstrip("]"))
            if kind == "users":
                users[i] = _stated(users[i], st)
            elif events[i].kind == "arrive":
                events[i] = replace(events[i], spec=_stated(events[i].spec, st))
            else:
                kw: dict[str, Any] = {}
                if st.demand is not None:
                    kw["demand"] = st.demand
                if st.tasks != "keep":
                    kw["tasks"] = st.tasks
                events[i] = replace(events[i], **kw)
        return replace(ex, users=tuple(users), events=tuple(events))


def statement_places(ex: Execution, user: str) -> list[str]:
    """Where ``user`` states a demand in ``ex``: ``users[k]`` / its arrive event, then its demand events."""
    out = [f"users[{k}]" for k, u in enumerate(ex.users) if u.name == user]
    for i, e in enumerate(ex.events):
        if (e.kind == "arrive" and e.spec.name == user) or (e.kind == "demand" and e.user == user):
            out.append(f"events[{i}]")
    return out


# ---------------------------------------------------------------------- a tenant's submission strategy
@dataclass(frozen=True)
class Part:
    """One user a resubmitted user is submitted as: its ``name``, its ``tasks`` (``None``: unbounded, as the
    user is) and its arrival ``delay`` after the user's own arrival (``>= 0``: never earlier)."""

    name: str
    tasks: Optional[Fraction]
    delay: Fraction = Fraction(0)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tasks": None if self.tasks is None else fmt_exact(self.tasks),
                "delay": fmt_exact(self.delay)}


@dataclass(frozen=True)
class TraceResubmission:
    """A TENANT's submission strategy for one of its users (burst gaming): ``user`` is submitted as ``parts``
    instead -- each a user with its per-task demand, weight, queue and eligibility, arriving ``delay`` after it
    (split into k users at once, submitted later, or in two arrivals), with ``tasks`` of its tasks (the parts'
    tasks add up to the user's; unbounded parts for an unbounded user; a per-task duration is kept, declared
    work is divided in proportion).  Nothing is misreported: the run is the execution :meth:`apply_to` returns,
    and every utility in it is true.  Only a user that states its demand once (no ``demand`` or ``finish``
    event) is resubmitted; a ``leave`` applies to every part, and every part arrives before it and before the
    horizon.  ``kind`` and ``users`` follow ``verifier.properties.Deviation``'s interface."""

    user: str
    parts: tuple[Part, ...]
    kind: str = "trace-resubmission"

    @property
    def users(self) -> tuple[int, ...]:
        return ()

    def to_dict(self, env: Any = None) -> dict[str, Any]:
        return {"kind": self.kind, "user": self.user, "parts": [p.to_dict() for p in self.parts]}

    @staticmethod
    def from_dict(d: Any, ex: Execution) -> "TraceResubmission":
        """Inverse of ``to_dict`` for ``ex``: one line naming the field when anything is wrong."""
        if not isinstance(d, Mapping) or d.get("kind") != "trace-resubmission":
            raise InstanceError(f"deviation: expected a trace-resubmission object, got {_show(d)}")
        _check_keys(d, {"kind", "user", "parts"}, "deviation")
        user = d.get("user")
        if user not in ex.user_names:
            raise InstanceError(f"deviation.user: unknown user {_show(user)}")
        raw = d.get("parts")
        if not isinstance(raw, list) or not raw:
            raise InstanceError(f"deviation.parts: expected a list of parts {{name, tasks, delay}}, got {_show(raw)}")
        parts = []
        for k, p in enumerate(raw):
            where = f"deviation.parts[{k}]"
            if not isinstance(p, Mapping):
                raise InstanceError(f"{where}: expected an object {{name, tasks, delay}}, got {_show(p)}")
            _check_keys(p, {"name", "tasks", "delay"}, where)
            name = _check_name(p.get("name"), f"{where}.name")
            tasks = None if p.get("tasks") is None else instance_number(p["tasks"], f"{where}.tasks")
            parts.append(Part(name, tasks, time_number(p.get("delay", 0), f"{where}.delay")))
        dev = TraceResubmission(user, tuple(parts))
        dev.apply_to(ex)  # every rule of a resubmission, one line
        return dev

    def describe(self, env: Any = None) -> str:
        def part(p: Part) -> str:
            n = "unbounded tasks" if p.tasks is None else f"{fmt_exact(p.tasks)} task{'' if p.tasks == 1 else 's'}"
            return f"{p.name} ({n}, {'arriving with it' if not p.delay else f'{fmt_exact(p.delay)} later'})"

        return f"{self.user} is submitted as " + ", ".join(part(p) for p in self.parts)

    def apply_to(self, ex: Execution) -> Execution:
        """The execution as the tenant submits it (class docstring); ``InstanceError``, one line, when the
        resubmission breaks a rule."""
        u = self.user
        where = "deviation"
        k0 = next((k for k, s in enumerate(ex.users) if s.name == u), None)
        i0 = next((i for i, e in enumerate(ex.events) if e.kind == "arrive" and e.spec.name == u), None)
        if k0 is None and i0 is None:
            raise InstanceError(f"{where}.user: {u!r} is not a user of this execution")
        spec, t0 = (ex.users[k0], Fraction(0)) if k0 is not None else (ex.events[i0].spec, ex.events[i0].t)
        if any(e.user == u and e.kind in ("demand", "finish") for e in ex.events):
            raise InstanceError(f"{where}.user: {u!r} changes its demand or finishes tasks by an event (only a user "
                                f"that states its demand once is resubmitted)")
        leave = next((i for i, e in enumerate(ex.events) if e.kind == "leave" and e.user == u), None)
        until = ex.events[leave].t if leave is not None else ex.horizon
        names = [p.name for p in self.parts]
        if not self.parts or len(set(names)) != len(names):
            raise InstanceError(f"{where}.parts: expected one or more parts with distinct names")
        taken = set(ex.user_names) - {u}
        for k, p in enumerate(self.parts):
            if p.name in taken:
                raise InstanceError(f"{where}.parts[{k}].name: {p.name!r} is already a user of this execution")
            if t0 + p.delay >= until:
                raise InstanceError(f"{where}.parts[{k}].delay: it would arrive at {fmt_exact(t0 + p.delay)}, not "
                                    f"before {fmt_exact(until)} ({'its leave' if leave is not None else 'the horizon'})")
            if (p.tasks is None) != (spec.tasks is None) or (p.tasks is not None and not p.tasks > 0):
                raise InstanceError(f"{where}.parts[{k}].tasks: expected "
                                    f"{'null (the user is unbounded)' if spec.tasks is None else 'a count > 0'}")
        if spec.tasks is not None and sum((p.tasks for p in self.parts), Fraction(0)) != spec.tasks:
            raise InstanceError(f"{where}.parts: their tasks add up to "
                                f"{fmt_exact(sum((p.tasks for p in self.parts), Fraction(0)))}, not {u!r}'s "
                                f"{fmt_exact(spec.tasks)}")

        def as_part(p: Part) -> UserSpec:
            work = spec.work
            if spec.duration is not None:
                work = spec.duration * p.tasks
            elif work is not None:
                work = work * p.tasks / spec.tasks if spec.tasks else work / len(self.parts)
            return replace(spec, name=p.name, tasks=p.tasks, work=work)

        now = [as_part(p) for p in self.parts if not p.delay]
        later = sorted(((t0 + p.delay, as_part(p)) for p in self.parts if p.delay), key=lambda tp: tp[0])
        users = list(ex.users)
        events: list[Event] = []
        for i, e in enumerate(ex.events):
            while later and later[0][0] < e.t:
                t, s = later.pop(0)
                events.append(Event(t, "arrive", s.name, spec=s))
            if i == i0:
                events += [Event(t0, "arrive", s.name, spec=s) for s in now]
            elif i == leave:
                events += [replace(e, user=s.name) for s in map(as_part, self.parts)]
            else:
                events.append(e)
        events += [Event(t, "arrive", s.name, spec=s) for t, s in later]
        if k0 is not None:
            users[k0:k0 + 1] = now
        return replace(ex, users=tuple(users), events=tuple(events))


#: the deviations over a trace, by ``kind`` (what a stored counterexample names)
TRACE_DEVIATIONS = {"trace-misreport": TraceMisreport, "trace-resubmission": TraceResubmission}


def trace_deviation_from_dict(d: Any, ex: Execution) -> Any:
    """A stored deviation over ``ex`` (a misreport or a resubmission, by its ``kind``); one line when wrong."""
    kind = d.get("kind") if isinstance(d, Mapping) else None
    if kind not in TRACE_DEVIATIONS:
        raise InstanceError(f"deviation.kind: expected one of {', '.join(TRACE_DEVIATIONS)}, got {_show(kind)}")
    return TRACE_DEVIATIONS[kind].from_dict(d, ex)
