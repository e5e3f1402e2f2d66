"""Executions: an environment that changes over time, and a mechanism stepped through it
(docs/model.md, "Executions").

An execution is the instance fields (resources, servers, external resources, queues, and the users present
at time 0) plus an ordered list of events, each at a time ``t`` (exact, non-decreasing, ``0 <= t <=``
:data:`MAX_TIME`, in the execution's declared ``unit``):

* ``arrive``   -- a user object of the instance format (``user``) joins; it may carry ``duration`` (per task)
  or ``work`` (task-time in all): its work is then done at the rate of the tasks it runs, and it leaves
  when the work is done (a derived ``finish`` event);
* ``leave``    -- a present user leaves;
* ``demand``   -- a present user's per-task ``demand`` (and/or ``external_demand``, ``tasks``) changes;
* ``finish``   -- ``tasks`` of a present user's tasks complete (its task bound drops by that many);
* ``capacity`` -- a ``server`` appears, changes (``capacity``: a vector) or disappears (``capacity``: null);
* ``round``    -- a boundary of a quantum, for mechanisms that allocate per round.

:func:`run` steps a :class:`Stepper` (a mechanism's time facet, ``mechanisms.core.time``) through an execution
and yields one :class:`Step` per state: step 0 at time 0 (the users present at the start), then one per
event, and one per derived finish.  Each step holds the present users' environment as REPORTED (what the
mechanism sees), as TRUE (what utilities are measured in: they differ only under a deviation) and the
allocation the mechanism chose; it lasts until the next step (or the execution's ``end``).

The deviations over a trace (a user's misreports, a tenant's resubmissions) are in
:mod:`mechverify.trace_deviations`; a run takes one and steps the mechanism through what is reported.

Utility over time (docs/model.md): a present user's utility in a step is the one true utility
(``mechverify.utility``) of that step's allocation; over a step it accrues utility x duration; its cumulative
utility is the sum over the steps (for a mechanism that allocates per round: per quantum).
"""
from __future__ import annotations

import gc
import math
import operator
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable, Iterator, Mapping, Optional, Protocol, Sequence

from .allocation import Allocation
from .instances import (MAX_NAME_LENGTH, UserFields, load_instance_data, loads_instance, parse_header, parse_user,
                        instance_number, _check_keys, _check_name, _show, _vector)
from .model import Environment
from .numbers import InstanceError, fmt_exact
from .progress import Progress
from .utility import Reuse

__all__ = ["EVENT_KINDS", "MAX_EVENTS", "MAX_TIME", "UserSpec", "Event", "Execution", "Step", "StepContext",
           "Stepper", "parse_execution", "load_execution", "loads_execution", "is_execution", "run", "cumulative",
           "execution_schema", "time_number", "Statement", "Reports"]

#: the kinds of events (module docstring)
EVENT_KINDS = ("arrive", "leave", "demand", "finish", "capacity", "round")
#: at most this many events in one execution file (generated workloads are not bound by it)
MAX_EVENTS = 2_000_000
#: times, durations and work lie in ``[0, MAX_TIME]`` (their own range: not the 1e-4..1e4 of amounts)
MAX_TIME = 10 ** 9
_TIME_DIGITS = 10 ** 30

_EXEC_KEYS = frozenset({"events", "unit", "end", "max_wait"})
_EVENT_KEYS = {"t", "kind", "user", "demand", "external_demand", "tasks", "server", "capacity"}
_EVENT_FIELDS = {  # what each kind takes besides t and kind
    "arrive": {"user"}, "leave": {"user"}, "demand": {"user", "demand", "external_demand", "tasks"},
    "finish": {"user", "tasks"}, "capacity": {"server", "capacity"}, "round": set(),
}
_USER_TIME_KEYS = frozenset({"duration", "work"})


def time_number(value: Any, field: str) -> Fraction:
    """A time, duration or amount of work: exact, ``0 <= v <= MAX_TIME``; one line naming ``field`` otherwise
    (NaN and infinities included)."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        raise InstanceError(f"{field}: must be a finite number (got {value!r})")
    f = instance_number(value, field, limits=False)
    if f < 0:
        raise InstanceError(f"{field}: must be >= 0 (got {_show(value)})")
    if f > MAX_TIME:
        raise InstanceError(f"{field}: {_show(value)} is out of range (times and durations are at most 1e9)")
    if f.denominator > _TIME_DIGITS:
        raise InstanceError(f"{field}: {_show(value)} has too many digits")
    return f


# ---------------------------------------------------------------------- data
@dataclass(frozen=True)
class UserSpec:
    """A user as an execution knows it (servers and queues by NAME: servers come and go).  ``eligible``:
    server names (``None``: every server present); ``work``: task-time still to do (``None``: none declared);
    ``duration``: the per-task duration it was declared with (work = tasks x duration)."""

    name: str
    demand: tuple[Fraction, ...]
    external_demand: tuple[Fraction, ...] = ()
    weight: Fraction = Fraction(1)
    eligible: Optional[tuple[str, ...]] = None
    tasks: Optional[Fraction] = None
    server_demand: Mapping[str, tuple[Fraction, ...]] = field(default_factory=dict)
    queue: Optional[str] = None
    duration: Optional[Fraction] = None
    work: Optional[Fraction] = None

    def to_dict(self) -> dict[str, Any]:
        """The user object of the format."""
        out: dict[str, Any] = {"name": self.name, "demand": [fmt_exact(v) for v in self.demand]}
        if self.external_demand:
            out["external_demand"] = [fmt_exact(v) for v in self.external_demand]
        if self.weight != 1:
            out["weight"] = fmt_exact(self.weight)
        if self.eligible is not None:
            out["eligible"] = list(self.eligible)
        if self.tasks is not None:
            out["tasks"] = fmt_exact(self.tasks)
        if self.server_demand:
            out["server_demand"] = {s: [fmt_exact(v) for v in vec] for s, vec in self.server_demand.items()}
        if self.queue is not None:
            out["queue"] = self.queue
        if self.duration is not None:
            out["duration"] = fmt_exact(self.duration)
        elif self.work is not None:
            out["work"] = fmt_exact(self.work)
        return out


@dataclass(frozen=True)
class Event:
    """One event (module docstring).  ``tasks``: ``"keep"`` (not given), ``None`` (unbounded) or a number;
    ``capacity``: a vector, or ``None`` (the server disappears); ``derived``: a finish that follows from a
    user's work (not in the file)."""

    t: Fraction
    kind: str
    user: Optional[str] = None
    spec: Optional[UserSpec] = None  # arrive
    demand: Optional[tuple[Fraction, ...]] = None
    external_demand: Optional[tuple[Fraction, ...]] = None
    tasks: Any = "keep"
    server: Optional[str] = None
    capacity: Optional[tuple[Fraction, ...]] = None
    derived: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": fmt_exact(self.t), "kind": self.kind}
        if self.kind == "arrive":
            out["user"] = self.spec.to_dict()
        elif self.user is not None:
            out["user"] = self.user
        if self.demand is not None:
            out["demand"] = [fmt_exact(v) for v in self.demand]
        if self.external_demand is not None:
            out["external_demand"] = [fmt_exact(v) for v in self.external_demand]
        if self.tasks != "keep":
            out["tasks"] = None if self.tasks is None else fmt_exact(self.tasks)
        if self.kind == "capacity":
            out["server"] = self.server
            out["capacity"] = None if self.capacity is None else [fmt_exact(v) for v in self.capacity]
        return out

    def describe(self) -> str:
        """One short line: ``arrive u3 (2, 1)``, ``demand u1 (1, 1)``, ``capacity s2 removed``."""
        t = self.kind
        if self.kind == "arrive":
            return f"arrive {self.spec.name} ({', '.join(fmt_exact(v) for v in self.spec.demand)})"
        if self.kind == "finish" and self.derived:
            return f"finish {self.user} ({'work' if self.tasks == 'keep' else fmt_exact(self.tasks) + ' tasks'} done)"
        if self.kind == "capacity":
            return f"capacity {self.server} " + ("removed" if self.capacity is None else
                                                 "(" + ", ".join(fmt_exact(v) for v in self.capacity) + ")")
        if self.user is not None:
            t += f" {self.user}"
        if self.demand is not None:
            t += " (" + ", ".join(fmt_exact(v) for v in self.demand) + ")"
        if self.tasks != "keep":
            t += f" tasks {'unbounded' if self.tasks is None else fmt_exact(self.tasks)}"
        return t


@dataclass(frozen=True)
class Execution:
    """An environment over time (module docstring): the instance's fields, the users present at time 0
    (``users``, possibly none), the ``events`` in time order, the time ``unit``, the ``end`` (``None``: the last
    event's time) and the declared ``max_wait`` (the starvation bound, ``None``: 0)."""

    resources: tuple[str, ...]
    servers: tuple[str, ...]
    capacity: tuple[tuple[Fraction, ...], ...]
    users: tuple[UserSpec, ...]
    events: tuple[Event, ...]
    external: tuple[str, ...] = ()
    external_capacity: tuple[Fraction, ...] = ()
    queues: tuple[str, ...] = ()
    queue_weight: tuple[Fraction, ...] = ()
    queue_guarantee: tuple = ()
    queue_max: tuple = ()
    unit: str = "s"
    end: Optional[Fraction] = None
    max_wait: Optional[Fraction] = None
    name: str = ""

    @property
    def n_events(self) -> int:
        return len(self.events)

    @property
    def user_names(self) -> tuple[str, ...]:
        """Every user of the execution, in order of appearance (the present at 0, then arrivals)."""
        return tuple(u.name for u in self.users) + tuple(e.spec.name for e in self.events if e.kind == "arrive")

    @property
    def n_users_total(self) -> int:
        return len(self.user_names)

    @property
    def horizon(self) -> Fraction:
        """The time the execution is judged until: ``end``, or the last event's time (0 without events)."""
        last = self.events[-1].t if self.events else Fraction(0)
        return max(last, self.end) if self.end is not None else last

    def to_dict(self) -> dict[str, Any]:
        """The execution file's JSON (exact numbers as text, like instances)."""
        d: dict[str, Any] = {}
        if self.name:
            d["name"] = self.name
        d["resources"] = list(self.resources)
        d["servers"] = [{"name": s, "capacity": [fmt_exact(v) for v in c]} for s, c in zip(self.servers, self.capacity)]
        if self.external:
            d["external"] = [{"name": k, "capacity": fmt_exact(c)} for k, c in zip(self.external, self.external_capacity)]
        if self.queues:
            qs = []
            for q, path in enumerate(self.queues):
                o: dict[str, Any] = {"name": path}
                if self.queue_weight and self.queue_weight[q] != 1:
                    o["weight"] = fmt_exact(self.queue_weight[q])
                if self.queue_guarantee and self.queue_guarantee[q] is not None:
                    o["guarantee"] = [fmt_exact(v) for v in self.queue_guarantee[q]]
                if self.queue_max and self.queue_max[q] is not None:
                    o["max"] = [fmt_exact(v) for v in self.queue_max[q]]
                qs.append(o)
            d["queues"] = qs
        d["users"] = [u.to_dict() for u in self.users]
        d["unit"] = self.unit
        if self.end is not None:
            d["end"] = fmt_exact(self.end)
        if self.max_wait is not None:
            d["max_wait"] = fmt_exact(self.max_wait)
        d["events"] = [e.to_dict() for e in self.events]
        return d

    def describe(self) -> str:
        def n(k: int, noun: str) -> str:
            return f"{k} {noun}{'' if k == 1 else 's'}"

        return (f"{n(self.n_users_total, 'user')}, {n(len(self.servers), 'server')} at the start, "
                f"{n(len(self.resources), 'resource')}, {n(self.n_events, 'event')} until t = "
                f"{fmt_exact(self.horizon)} ({self.unit})")

    def without_events(self, drop: Sequence[int]) -> "Execution":
        """A copy without the events at positions ``drop`` (the minimiser's move; may be invalid: parse the
        ``to_dict()`` again to validate)."""
        gone = set(drop)
        return replace(self, events=tuple(e for i, e in enumerate(self.events) if i not in gone))


def is_execution(data: Any) -> bool:
    """Is a decoded JSON document an execution (it has ``events``)?"""
    return isinstance(data, Mapping) and "events" in data


# ---------------------------------------------------------------------- parsing
def _spec(f: UserFields, raw: Mapping[str, Any], where: str, servers: tuple[str, ...], queues: tuple[str, ...]) -> UserSpec:
    duration = work = None
    if "duration" in raw and "work" in raw:
        raise InstanceError(f"{where}: give duration (per task) or work (in all), not both")
    if "duration" in raw:
        duration = time_number(raw["duration"], f"{where}.duration")
        if f.tasks is None:
            raise InstanceError(f"{where}.duration: a per-task duration needs a finite task count (tasks)")
        work = duration * f.tasks
    elif "work" in raw:
        work = time_number(raw["work"], f"{where}.work")
    if f.usage is not None and any(f.usage):
        raise InstanceError(f"{where}.usage: an execution starts from its own allocations (no usage)")
    return UserSpec(f.name, f.demand, f.external_demand, f.weight,
                    None if f.eligible is None else tuple(servers[s] for s in sorted(f.eligible)),
                    f.tasks, {servers[s]: v for s, v in f.server_demand.items()},
                    None if f.queue is None else queues[f.queue], duration, work)


def parse_execution(data: Any) -> Execution:
    """Build an :class:`Execution` from its JSON (the instance fields, ``events``, ``unit``, ``end``,
    ``max_wait``).  Every rejection is one ``InstanceError`` line naming the field: events out of time order,
    an event for a user not present (a double leave, a demand for an absent user), an arrival of a name
    already used, a server removed that does not exist or the last one, too many events, NaN times."""
    if not isinstance(data, Mapping):
        raise InstanceError(f"execution: expected a JSON object, got {type(data).__name__}")
    raw_events = data.get("events")
    if not isinstance(raw_events, list):
        raise InstanceError(f"events: expected a list of events, got {_show(raw_events)}")
    if len(raw_events) > MAX_EVENTS:  # before walking them
        raise InstanceError(f"events: too many events ({len(raw_events)}, limit {MAX_EVENTS})")
    h = parse_header(data, _EXEC_KEYS, need_users=False)
    R, K = len(h.resources), len(h.external)
    unit = data.get("unit", "s")
    if not isinstance(unit, str) or not unit.strip() or len(unit) > MAX_NAME_LENGTH:
        raise InstanceError(f"unit: expected a name of the time unit such as 's' or 'round', got {_show(unit)}")
    end = None if data.get("end") is None else time_number(data["end"], "end")
    max_wait = None if data.get("max_wait") is None else time_number(data["max_wait"], "max_wait")
    # every server name the execution ever knows (users' eligible sets and server_demand may name later ones)
    known_servers = list(h.servers)
    for i, e in enumerate(raw_events):
        if isinstance(e, Mapping) and e.get("kind") == "capacity" and isinstance(e.get("server"), str) \
                and e["server"] not in known_servers:
            known_servers.append(_check_name(e["server"], f"events[{i}].server"))
    servers_all = tuple(known_servers)
    raw_users = data.get("users", [])
    if not isinstance(raw_users, list):
        raise InstanceError(f"users: expected a list of users (possibly empty in an execution), got {_show(raw_users)}")
    users: list[UserSpec] = []
    seen: dict[str, str] = {}
    for j, u in enumerate(raw_users):
        f = parse_user(u, f"users[{j}]", R, K, servers_all, h.queues, h.qindex, default_name=f"u{j + 1}",
                       keys=_USER_TIME_KEYS)
        if f.name in seen:
            raise InstanceError(f"users: duplicate name {f.name!r}")
        seen[f.name] = f"users[{j}]"
        users.append(_spec(f, u, f"users[{j}]", servers_all, h.queues))
    present = {u.name for u in users}
    servers_now = {s: c for s, c in zip(h.servers, h.capacity)}
    events: list[Event] = []
    last_t = Fraction(0)
    for i, e in enumerate(raw_events):
        where = f"events[{i}]"
        if not isinstance(e, Mapping):
            raise InstanceError(f"{where}: expected an object {{t, kind, ...}}, got {_show(e)}")
        kind = e.get("kind")
        if kind not in EVENT_KINDS:
            raise InstanceError(f"{where}.kind: expected one of {', '.join(EVENT_KINDS)}, got {_show(kind)}")
        _check_keys(e, {"t", "kind"} | _EVENT_FIELDS[kind], where)
        if "t" not in e:
            raise InstanceError(f"{where}.t: missing (every event has a time)")
        t = time_number(e["t"], f"{where}.t")
        if t < last_t:
            raise InstanceError(f"{where}.t: {fmt_exact(t)} is before the previous event's time {fmt_exact(last_t)} "
                                f"(events must be in time order)")
        last_t = t
        if kind == "arrive":
            raw_u = e.get("user")
            f = parse_user(raw_u, f"{where}.user", R, K, servers_all, h.queues, h.qindex, keys=_USER_TIME_KEYS)
            if f.name in seen:
                raise InstanceError(f"{where}.user.name: {f.name!r} is already a user of this execution (since "
                                    f"{seen[f.name]}); a user arrives once")
            seen[f.name] = where
            present.add(f.name)
            events.append(Event(t, kind, f.name, spec=_spec(f, raw_u, f"{where}.user", servers_all, h.queues)))
            continue
        if kind == "round":
            events.append(Event(t, kind))
            continue
        if kind == "capacity":
            s = e.get("server")
            if not isinstance(s, str):
                raise InstanceError(f"{where}.server: expected a server name, got {_show(s)}")
            if "capacity" not in e:
                raise InstanceError(f"{where}.capacity: missing (a vector, or null: the server disappears)")
            if e["capacity"] is None:
                if s not in servers_now:
                    raise InstanceError(f"{where}.server: {s!r} is not present (it cannot disappear)")
                if len(servers_now) == 1:
                    raise InstanceError(f"{where}.capacity: {s!r} is the last server (an execution keeps at least one)")
                del servers_now[s]
                events.append(Event(t, kind, server=s, capacity=None))
            else:
                cap = _vector(e["capacity"], R, f"{where}.capacity", "resource")
                servers_now[s] = cap
                events.append(Event(t, kind, server=s, capacity=cap))
            continue
        user = e.get("user")
        if not isinstance(user, str):
            raise InstanceError(f"{where}.user: expected a user name, got {_show(user)}")
        if user not in present:
            why = "it left before" if user in seen else "no such user has arrived"
            raise InstanceError(f"{where}.user: {kind} for {user!r}, who is not present ({why})")
        if kind == "leave":
            present.discard(user)
            events.append(Event(t, kind, user))
        elif kind == "demand":
            demand = _vector(e["demand"], R, f"{where}.demand", "resource") if "demand" in e else None
            ext = _vector(e["external_demand"], K, f"{where}.external_demand", "external resource") \
                if "external_demand" in e else None
            tasks: Any = "keep"
            if "tasks" in e:
                tasks = None if e["tasks"] is None else instance_number(e["tasks"], f"{where}.tasks")
                if tasks is not None and tasks < 0:
                    raise InstanceError(f"{where}.tasks: must be >= 0 or null (got {_show(e['tasks'])})")
            if demand is None and ext is None and tasks == "keep":
                raise InstanceError(f"{where}: a demand event changes demand, external_demand or tasks (none given)")
            events.append(Event(t, kind, user, demand=demand, external_demand=ext, tasks=tasks))
        else:  # finish
            if "tasks" not in e:
                raise InstanceError(f"{where}.tasks: missing (how many of {user!r}'s tasks complete)")
            k = instance_number(e["tasks"], f"{where}.tasks")
            if k <= 0:
                raise InstanceError(f"{where}.tasks: must be > 0 (got {_show(e['tasks'])})")
            events.append(Event(t, kind, user, tasks=k))
    if end is not None and end < last_t:
        raise InstanceError(f"end: {fmt_exact(end)} is before the last event's time {fmt_exact(last_t)}")
    ex = Execution(h.resources, h.servers, h.capacity, tuple(users), tuple(events), h.external, h.external_capacity,
                   h.queues, h.queue_weight, h.queue_guarantee, h.queue_max, unit, end, max_wait,
                   data.get("name", "") if isinstance(data.get("name", ""), str) else "")
    _check_replayable(ex)
    return ex


def _check_replayable(ex: Execution) -> None:
    """Apply every event once (who is present, task counts against finishes) and check every demand a user
    ever states against the model's rules (zero demands with unbounded tasks, ...) on the servers present then,
    so that a bad trace fails here, naming its event, and never half-way through a run.  Each user is checked
    alone (what the rules are about), so this costs O(events), not O(events x users); a statement already
    checked on the same servers (the same report, whoever states it) is not checked again, so a trace of many
    alike jobs on many servers costs O(distinct reports x servers), not O(jobs x servers)."""
    state = _State(ex, None)
    checked: set = set()  # (servers version, the report less its name and work)
    version = 0

    def check(name: str, where: Optional[str]) -> None:
        u = state.true[name]
        key = (version, u.demand, u.external_demand, u.weight, u.eligible, u.tasks,
               tuple(sorted(u.server_demand.items())), u.queue)
        if key not in checked:
            _check_user(state, name, where)
            checked.add(key)

    for k, u in enumerate(ex.users):
        check(u.name, f"users[{k}]")
    for i, ev in enumerate(ex.events):
        try:
            state.apply(ev, strict=True)
            if ev.kind == "capacity":
                version += 1
            if ev.kind in ("arrive", "demand"):
                check(ev.user if ev.kind == "demand" else ev.spec.name, None)
        except InstanceError as exc:
            raise InstanceError(f"events[{i}] ({ev.kind} at t={fmt_exact(ev.t)}): {exc}") from None


def _check_user(state: "_State", name: str, where: Optional[str]) -> None:
    try:
        state._build({name: state.true[name]})
    except InstanceError as exc:
        if where is None:
            raise
        raise InstanceError(f"{where}: {exc}") from None


def execution_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of executions, shipped as ``mechverify/execution.schema.json``: the
    instance schema's definitions (the same, a test keeps them equal) plus ``events``, ``unit``, ``end``,
    ``max_wait`` and the users' ``duration`` / ``work``; what it cannot express is checked by
    :func:`parse_execution`."""
    import json
    from importlib import resources

    return json.loads(resources.files("mechverify").joinpath("execution.schema.json").read_text(encoding="utf-8"))


def loads_execution(text: str, source: str = "execution") -> Execution:
    """Parse execution JSON text."""
    return parse_execution(loads_instance(text, source))


def load_execution(path: str) -> Execution:
    """Read an execution file; errors name the file and the field."""
    data = load_instance_data(path)
    if not is_execution(data):
        raise InstanceError(f"{path}: not an execution (no 'events'; an instance is judged with check, not execute)")
    try:
        return parse_execution(data)
    except InstanceError as exc:
        raise InstanceError(f"{path}: {exc}") from None


# ---------------------------------------------------------------------- what a run reads of a deviation
@dataclass(frozen=True)
class Statement:
    """What a user reports at one place instead of the truth: a per-task ``demand`` (``None``: truthful) and/or a
    task count ``tasks`` (``"keep"``: truthful; round mechanisms read the per-round demand there)."""

    where: str
    demand: Optional[tuple[Fraction, ...]] = None
    tasks: Any = "keep"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.demand is not None:
            out["demand"] = [fmt_exact(v) for v in self.demand]
        if self.tasks != "keep":
            out["tasks"] = None if self.tasks is None else fmt_exact(self.tasks)
        return out

    def describe(self) -> str:
        bits = []
        if self.demand is not None:
            bits.append("(" + ", ".join(fmt_exact(v) for v in self.demand) + ")")
        if self.tasks != "keep":
            bits.append(f"{'unbounded' if self.tasks is None else fmt_exact(self.tasks)} tasks")
        return f"{' and '.join(bits)} at {self.where}"


class Reports(Protocol):
    """What a run reads of a user's deviation over a trace (``mechverify.trace_deviations.TraceMisreport``): whose
    it is, and what it states at a place instead of the truth."""

    user: str

    def at(self, where: str) -> Optional[Statement]: ...


# ---------------------------------------------------------------------- stepping
@dataclass(frozen=True)
class StepContext:
    """What a :class:`Stepper` is told at each step: the step's ``index`` and time ``t``, the ``event`` (``None``
    at step 0), the present users' REPORTED environment ``env``, the previous allocation carried over to it
    (``previous``: rows by user name, columns by server name, zeros for newcomers; ``None`` at step 0), the
    execution (``previous`` is also ``None`` for a stepper that declares ``reads_previous = False``), whether to
    compute exactly, and ``more_at_t``: another input follows at this same time (an
    event of the execution, or a task completion not yet applied) -- the step lasts no time, and a policy
    that treats simultaneous events as one batch may wait for the last."""

    index: int
    t: Any
    event: Optional[Event]
    env: Environment
    previous: Optional[Allocation]
    execution: Execution
    exact: bool
    more_at_t: bool = False


class Stepper(Protocol):
    """A mechanism's state through one execution (``mechanisms.core.time.TimeSpec.begin`` makes a fresh one):
    ``step(ctx)`` returns the allocation for ``ctx.env``; ``state_key()`` (optional) a hashable digest of its
    memory (the cycle detector compares states with it); ``wake_at()`` (optional) the time of the mechanism's
    own next timer after the step just taken (``None``: none): the run steps it again then, with a derived
    ``wake`` event that changes no input (a timer of the policy, e.g. Kueue's priority booster), unless an
    event or a finish comes first or the horizon is reached (a timer due at an event's time fires just before
    it, as a derived finish does).  A stepper with ``owns_completions = True`` runs WHOLE tasks itself: the
    run derives no finish from work for its users (only a user left with no task leaves at once), and when its
    timer fires it reads ``completed()`` -- ``{user: tasks completed now}`` -- and applies each as a derived
    ``finish`` of that many tasks (the task bound drops; the user's last task: it leaves); its timer may then
    fire past the last event when the execution declares no ``end``; ``task_counts()`` (optional) says what
    happened to its whole tasks so far (``{"started": ..., "completed": ..., ...}``: a simulation reports it).  A
    stepper with ``reads_previous = False`` never reads ``StepContext.previous`` (it allocates from the present
    environment alone): the run does not carry the previous allocation over for it (``previous`` is ``None``).  A
    stepper with ``waves_alone = True`` runs one job alone on a cluster that does not change in WAVES: every start
    decided with nothing of the job running, from its report and bound alone, the tasks of a wave completing
    together after the job's per-task ``duration`` -- so the job finishes ``arrival + waves x duration``, ``waves``
    depending on neither its arrival nor its duration (a simulation reuses it for jobs alike)."""

    def step(self, ctx: StepContext) -> Allocation: ...


@dataclass(frozen=True)
class Step:
    """One state of a run (module docstring): ``users`` present (names, in ``env`` order), ``env`` as reported,
    ``true_env`` (the same object without a deviation), the allocation, and until when it lasts (``until``)."""

    index: int
    t: Any
    event: Optional[Event]
    users: tuple[str, ...]
    env: Optional[Environment]
    true_env: Optional[Environment]
    alloc: Optional[Allocation]
    until: Any = None
    note: str = ""
    state_key: Any = None

    @property
    def duration(self) -> Any:
        return self.until - self.t

    def utilities(self) -> dict[str, Any]:
        """Each present user's true utility (tasks) in this step."""
        if self.alloc is None:
            return {}
        from .utility import utilities

        return dict(zip(self.users, utilities(self.true_env, self.alloc)))


#: the cluster built last by a run (``_State._build``): (server names, capacities, every index, name -> index)
_LAST_CLUSTER: list = [None]


class _State:
    """The evolving present users and servers of one execution (reported and true)."""

    def __init__(self, ex: Execution, deviation: Optional[Reports]) -> None:
        self.ex, self.dev = ex, deviation
        self.servers: dict[str, tuple[Fraction, ...]] = dict(zip(ex.servers, ex.capacity))
        # (server names, capacities, every server index, name -> index): the same objects until one changes
        self._cluster: Optional[tuple] = None
        # name -> (spec, its row of the environment): a user's row is built once per spec and cluster, so a step
        # costs one look-up per present user (the user's row changes when its spec or the servers change)
        self._rows: dict[str, tuple[UserSpec, tuple]] = {}
        self._qindex = {q: i for i, q in enumerate(ex.queues)}
        self.true: dict[str, UserSpec] = {}
        self.reported: dict[str, UserSpec] = {}
        self.work: dict[str, Any] = {}
        self.reuse = Reuse()  # utility.utilities' values of the users whose inputs are unchanged (float runs)
        self.finished: set[str] = set()
        self.below_one: set[str] = set()  # present users with less than one whole task (they leave at once)
        self._env: Optional[tuple[Environment, Environment]] = None
        # per specs dict (reported, true): the names, specs and rows of the last environment built from it, and the
        # user the last event touched -- a step's event changes one user: the other rows are taken as they were
        self._built: dict[int, tuple[list, list, list]] = {}
        self._touched: Optional[str] = None
        for k, u in enumerate(ex.users):
            self._arrive(u, f"users[{k}]")

    def _report(self, spec: UserSpec, where: str) -> UserSpec:
        if self.dev is not None and self.dev.user == spec.name:
            st = self.dev.at(where)
            if st is not None:
                return _stated(spec, st)
        return spec

    def _arrive(self, spec: UserSpec, where: str) -> None:
        self.true[spec.name] = spec
        self._low(spec.name)
        self.reported[spec.name] = self._report(spec, where)
        if spec.work is not None:
            self.work[spec.name] = spec.work

    def apply(self, ev: Event, where: str = "", strict: bool = False) -> str:
        """Apply one event; returns a note ("" or why it changed nothing)."""
        self._env = None
        self._touched = ev.user
        if ev.kind == "arrive":
            self._arrive(ev.spec, where)
        elif ev.kind == "round":
            pass
        elif ev.kind == "capacity":
            if ev.capacity is None:
                self.servers.pop(ev.server, None)
            else:
                self.servers[ev.server] = ev.capacity
            self._cluster = None
        else:
            u = ev.user
            if u not in self.true:
                if u in self.finished and not strict:
                    return f"ignored: {u} has finished its work"
                raise InstanceError(f"{u!r} is not present")
            if ev.kind == "leave" or (ev.kind == "finish" and ev.derived and  # work done, or its last whole task
                                      (ev.tasks == "keep" or self.true[u].tasks - ev.tasks < 1)):
                del self.true[u]
                del self.reported[u]
                self.below_one.discard(u)
                self.work.pop(u, None)
                self._rows.pop(u, None)
                if ev.derived:
                    self.finished.add(u)
            elif ev.kind == "demand":
                kw: dict[str, Any] = {}
                if ev.demand is not None:
                    kw["demand"] = ev.demand
                if ev.external_demand is not None:
                    kw["external_demand"] = ev.external_demand
                if ev.tasks != "keep":
                    kw["tasks"] = ev.tasks
                self.true[u] = replace(self.true[u], **kw)
                self._low(u)
                self.reported[u] = replace(self.reported[u], **kw)
                if self.dev is not None and self.dev.user == u:
                    st = self.dev.at(where)
                    if st is not None:
                        self.reported[u] = _stated(self.reported[u], st)
            else:  # finish of some tasks
                n = self.true[u].tasks
                if n is None or n < ev.tasks:
                    raise InstanceError(f"finish: {fmt_exact(ev.tasks)} tasks of {u!r} complete, but it has "
                                        f"{'no task bound' if n is None else fmt_exact(n) + ' tasks'}")
                self.true[u] = replace(self.true[u], tasks=n - ev.tasks)
                self._low(u)
                self.reported[u] = replace(self.reported[u], tasks=n - ev.tasks)
        return ""

    def _low(self, u: str) -> None:
        """Keep :attr:`below_one`: the present users whose (true) task bound is below one whole task."""
        if _below_one(self.true[u].tasks):
            self.below_one.add(u)
        else:
            self.below_one.discard(u)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.true)

    def environment(self, validate: bool = False) -> Optional[tuple[Environment, Environment]]:
        """(reported, true) environments of the present users (``None``: nobody is present)."""
        if self._env is not None:
            return self._env
        if not self.true:
            return None
        rep = self._build(self.reported)
        tru = rep if self.dev is None or self.dev.user not in self.true or \
            self.reported[self.dev.user] == self.true[self.dev.user] else self._build(self.true)
        self._env = (rep, tru)
        return self._env

    def _build(self, specs: Mapping[str, UserSpec]) -> Environment:
        ex = self.ex
        if self._cluster is None:
            names, caps = tuple(self.servers), tuple(self.servers.values())
            last = _LAST_CLUSTER[0]  # the last run's (a simulation's runs alone on its cluster): the same objects
            if last is not None and last[0] == names and len(last[1]) == len(caps) and \
                    all(map(operator.is_, last[1], caps)):
                self._cluster = last
            else:
                self._cluster = _LAST_CLUSTER[0] = (names, caps, frozenset(range(len(names))),
                                                    {s: i for i, s in enumerate(names)})
            self._rows.clear()  # eligible sets are server indices
            self._built.clear()
        servers, capacity, allsrv, sindex = self._cluster
        rows = self._rows
        names, specs_now = list(specs), list(specs.values())
        slot = 0 if specs is self.reported else 1
        out = self._rows_kept(slot, names, specs_now, allsrv, sindex)
        if out is None:
            out = [got[1] if (got := rows.get(name)) is not None and got[0] is u else self._fill(u, allsrv, sindex)
                   for name, u in zip(names, specs_now)]
        self._built[slot] = (names, specs_now, out)
        users, demand, external_demand, weight, eligible, tasks, user_queue, floats, has_sd = zip(*out)
        sd: dict[tuple[int, int], tuple[Fraction, ...]] = {}
        for j, u in enumerate(specs.values() if any(has_sd) else ()):
            if u.server_demand:
                for s, vec in u.server_demand.items():
                    if s in sindex:
                        sd[(j, sindex[s])] = vec
        env = Environment(
            resources=ex.resources, servers=servers, capacity=capacity, users=users, demand=demand,
            external=ex.external, external_capacity=ex.external_capacity, external_demand=external_demand,
            weight=weight, eligible=eligible, tasks=tasks, server_demand=sd, queues=ex.queues,
            queue_weight=ex.queue_weight, queue_guarantee=ex.queue_guarantee, queue_max=ex.queue_max,
            user_queue=user_queue)
        env.seed_floats(floats)
        return env

    def _rows_kept(self, slot: int, names: list, specs: list, allsrv: frozenset, sindex: Mapping[str, int]
                   ) -> Optional[list]:
        """The rows of the users present, from the last environment built from the same specs dict when all but
        one user are the same (the same names in the same order, the same spec objects): one arrived at the end,
        the user the last event touched left or changed (``None``: anything else -- the caller builds every
        row)."""
        last = self._built.get(slot)
        if last is None:
            return None
        was, specs_was, rows_was = last
        n, m = len(names), len(was)
        if n == m + 1 or (n == m and self._touched is None):  # an arrival at the end, or no user touched
            if names[:m] == was and all(map(operator.is_, specs, specs_was)):  # (map stops at the shorter)
                return rows_was + [self._row_of(names[-1], specs[-1], allsrv, sindex)] if n > m else rows_was
            return None
        try:
            k = was.index(self._touched)
        except ValueError:
            return None
        if n == m - 1:  # the touched user left
            if names == was[:k] + was[k + 1:] and all(map(operator.is_, specs, specs_was[:k] + specs_was[k + 1:])):
                return rows_was[:k] + rows_was[k + 1:]
        elif n == m and names == was and all(map(operator.is_, specs[:k], specs_was[:k])) \
                and all(map(operator.is_, specs[k + 1:], specs_was[k + 1:])):  # the touched user changed
            return rows_was[:k] + [self._row_of(names[k], specs[k], allsrv, sindex)] + rows_was[k + 1:]
        return None

    def _row_of(self, name: str, u: UserSpec, allsrv: frozenset, sindex: Mapping[str, int]) -> tuple:
        got = self._rows.get(name)
        return got[1] if got is not None and got[0] is u else self._fill(u, allsrv, sindex)

    def _fill(self, u: UserSpec, allsrv: frozenset, sindex: Mapping[str, int]) -> tuple:
        row = self._row(u, allsrv, sindex)
        self._rows[u.name] = (u, row)
        return row

    def _row(self, u: UserSpec, allsrv: frozenset, sindex: Mapping[str, int]) -> tuple:
        """User ``u``'s entries of the environment: name, demand, external demand, weight, eligible server
        indices, task bound, queue index, its numbers as floats (``Environment.seed_floats``), and whether it has
        per-server demands."""
        ext = u.external_demand if self.ex.external else ()
        return (u.name, u.demand, ext, u.weight,
                allsrv if u.eligible is None else frozenset(sindex[s] for s in u.eligible if s in sindex),
                u.tasks, None if u.queue is None else self._qindex[u.queue],
                Environment.float_row(u.demand, ext, u.weight, u.tasks), bool(u.server_demand))


def _stated(spec: UserSpec, st: Statement) -> UserSpec:
    kw: dict[str, Any] = {}
    if st.demand is not None:
        kw["demand"] = st.demand
    if st.tasks != "keep":
        kw["tasks"] = st.tasks
    return replace(spec, **kw)


def _carry(prev: Optional[Allocation], env: Environment) -> Optional[Allocation]:
    """The previous allocation's rows (by user name) and columns (by server name) on ``env``; zeros elsewhere."""
    if prev is None:
        return None
    zero = Fraction(0) if prev.exact else 0.0
    penv = prev.env
    if penv.servers == env.servers:
        if penv.users == env.users:
            return Allocation(env, prev.x, prev.mechanism, prev.exact)
        rows, none = dict(zip(penv.users, prev.x)), (zero,) * env.n_servers
        return Allocation(env, tuple([rows.get(u, none) for u in env.users]), prev.mechanism, prev.exact)
    pu = {u: j for j, u in enumerate(penv.users)}
    ps = {s: i for i, s in enumerate(penv.servers)}
    cols = [ps.get(s) for s in env.servers]
    x = []
    for u in env.users:
        j = pu.get(u)
        x.append(tuple(zero if j is None or i is None else prev.x[j][i] for i in cols))
    return Allocation(env, tuple(x), prev.mechanism, prev.exact)


def _below_one(n: Any) -> bool:
    """A task bound below one whole task (``None``: no bound)."""
    if n.__class__ is Fraction:
        return n.numerator < n.denominator  # (a Fraction's denominator is positive)
    return n is not None and n < 1


def _num(v: Any, exact: bool) -> Any:
    return v if exact else float(v)


def run(ex: Execution, stepper: Stepper, exact: bool = True, deviation: Optional[Reports] = None,
        on_step: Optional[Callable[[Step], None]] = None) -> Iterator[Step]:
    """Step ``stepper`` through ``ex`` (module docstring): one :class:`Step` per state, in time order.  Under a
    ``deviation`` the mechanism sees the reported demands and utilities and work use the true ones.  A user
    with work left leaves when its work is done (a derived ``finish``, before any event at the same time); a
    stepper with a timer (``Stepper.wake_at``) is stepped again when it fires (a derived ``wake``).
    ``exact=False``: times and work in floats (the fast screen: the present users' environments are not
    validated again -- every state of a parsed execution was, by :func:`parse_execution`); ``exact=True``:
    every number exact, every environment validated.

    While a step is computed the cyclic garbage collector spares its oldest generation (``gc`` threshold 2
    raised, restored before the step is yielded): a caller keeping every step (``execute``, a property over the
    run) grows the heap by a few containers per step, and each full collection walks all of it -- ~15% of a
    10^4-job run.  Young garbage is still collected; the old generation is collected after the run as usual."""
    from .model import deferred_validation

    # both held only while a step is computed, never across a yield: a caller that stops iterating (a budget)
    # must not leave every later environment of the process unvalidated, or its collector changed
    steps = _run(ex, stepper, exact, deviation, on_step)
    try:
        while True:
            th = gc.get_threshold()
            gc.set_threshold(th[0], th[1], max(th[2], _SPARED))
            try:
                if exact:
                    step = next(steps)
                else:
                    with deferred_validation():
                        step = next(steps)
            except StopIteration:
                return
            finally:
                gc.set_threshold(*th)
            yield step
    finally:
        steps.close()


#: the oldest generation's threshold while a step is computed (``run``): no full collection inside a run
_SPARED = 1 << 30


def _run(ex: Execution, stepper: Stepper, exact: bool, deviation: Optional[Reports],
         on_step: Optional[Callable[[Step], None]]) -> Iterator[Step]:
    state = _State(ex, deviation)
    owns = bool(getattr(stepper, "owns_completions", False))  # whole tasks completed by the stepper's timer
    wake, state_key = getattr(stepper, "wake_at", None), getattr(stepper, "state_key", None)  # (optional)
    carry = _carry if getattr(stepper, "reads_previous", True) else lambda prev, env: None
    events = ex.events
    horizon = _num(ex.horizon, exact)
    i = 0
    index = 0
    t: Any = _num(Fraction(0), exact)
    prev: Optional[Allocation] = None
    event: Optional[Event] = None
    note = ""
    pending: list[tuple[str, Any]] = []  # task completions of a fired timer not applied yet
    while True:
        envs = state.environment()
        nxt = _num(events[i].t, exact) if i < len(events) else None
        if envs is None:
            alloc, users, rep, tru = None, (), None, None
        else:
            rep, tru = envs
            users = rep.users
            more = bool(pending) or nxt == t
            alloc = stepper.step(StepContext(index, t, event, rep, carry(prev, rep), ex, exact, more))
        # when does this step end: the next event, a derived finish, or the horizon
        finish_at, who = None, None
        progress: Optional[Progress] = None  # the users' rates of work this step (computed once, used twice)
        if owns and not pending:  # only a user left without a whole task finishes here, at once
            low = state.below_one
            who = next((u for u in users if u in low and u in state.work), None) if low else None
            finish_at = t if who is not None else None
        elif alloc is not None and state.work and not owns:
            progress = Progress(users, state.work, tru, alloc, exact, state.reuse)
            finish_at, who = progress.finish(t)
        if finish_at is not None and nxt is not None and finish_at > nxt:
            finish_at = None
        if finish_at is not None and nxt is None and finish_at > horizon and ex.end is not None:
            finish_at = None
        until = t if pending else finish_at if finish_at is not None else (nxt if nxt is not None else max(horizon, t))
        # the mechanism's own timer (``Stepper.wake_at``): a step of its own, no input changing
        wake_at = wake() if wake is not None and alloc is not None and not pending else None
        if wake_at is not None:
            if exact or wake_at.__class__ is not float or not math.isfinite(wake_at):
                wake_at = _num(Fraction(wake_at), exact)  # (a finite float is its own float of its Fraction)
            at_event = finish_at is None and nxt is not None and wake_at == nxt  # before the event, as a finish is
            open_end = owns and ex.end is None and nxt is None and finish_at is None  # completions go on
            if not (t < wake_at and (wake_at < until or at_event or open_end)) or (wake_at > horizon and not open_end):
                wake_at = None
        if wake_at is not None:
            finish_at, until = None, wake_at
        step = Step(index, t, event, users, rep, tru, alloc, until, note,
                    state_key() if state_key is not None else None)
        if on_step is not None:
            on_step(step)
        yield step
        if progress is not None:  # work done during the step
            progress.advance(until - t)
        prev, t, index = alloc, until, index + 1
        if wake_at is not None and owns:
            pending = [(u, n) for u, n in stepper.completed().items() if n]
        if pending:  # one derived finish per user whose tasks completed at the timer
            u, n = pending.pop(0)
            event = Event(Fraction(t), "finish", u, tasks=Fraction(n), derived=True)
            note = state.apply(event)
            continue
        if wake_at is not None:
            event, note = Event(Fraction(wake_at), "wake", derived=True), ""
            continue
        if finish_at is not None:
            state.work[who] = Fraction(0) if exact else 0.0
            event = Event(Fraction(finish_at) if exact else Fraction(finish_at), "finish", who, derived=True)
            note = state.apply(event)
            continue
        if i >= len(events):
            return
        event = events[i]
        note = state.apply(event, f"events[{i}]")
        i += 1


def cumulative(steps: Sequence[Step], until: Any = None) -> dict[str, Any]:
    """Each user's cumulative true utility over ``steps`` (utility x duration, summed), up to time ``until``
    (default: the end of the last step)."""
    out: dict[str, Any] = {}
    for st in steps:
        if st.alloc is None:
            continue
        end = st.until if until is None else min(st.until, until)
        dt = end - st.t
        if dt <= 0:
            for u in st.users:
                out.setdefault(u, 0 * dt)
            continue
        for u, v in st.utilities().items():
            out[u] = out.get(u, 0 * dt) + v * dt
    return out
