"""The indivisible lift: a one-shot mechanism stepping WHOLE tasks through an execution (seed 004 Sec. 5-6.1's
indivisible task model; docs/executions.md, docs/simulation.md "The task model").

``NAME+indivisible`` (slot 256, overhead 1/4: seed 004's defaults) or ``NAME+indivisible(slot=S,overhead=O)``
(``slot=none``: never reallocate).  Every user's tasks are whole; each of user ``j``'s tasks lasts its declared
per-task ``duration`` (a user without one runs tasks that never complete on their own); the stepper owns the
completions (``Stepper.owns_completions``): its timer fires at the next task completion and the run applies them
as derived finishes.  Simultaneous events form one batch (``StepContext.more_at_t``): completions, then the
execution's events, then one decision --

* at a reallocation boundary ``t = k * slot`` with activity since the last reallocation (a task completed, a user
  arrived or left, a report, task bound or server changed): every running task is SUSPENDED (it keeps its progress
  and pays ``overhead`` when it resumes) and the rule allocates from nothing held (Algorithm 2's Reallocation);
* else the rule hands out free capacity only.

The rule is the mechanism's own (``Mechanism.task_rule``: TSF-ER online's AllocateFromQueues), else the one-shot
function on the residual capacity and residual task bounds, each entry rounded DOWN to whole tasks (the
irrevocable lift's residual; seed 004 rounds MNW and CRU down the same way).  A started task is a user's lowest
waiting one: suspended tasks (by index) before fresh ones.  Conventions beyond Algorithm 2 (stated): a lowered
task bound drops waiting tasks first (fresh, then suspended), then running ones, highest index first; a changed
report (demand) suspends the user's running tasks; a server whose capacity falls below what runs on it, or that
disappears, suspends every task on it.
"""
from __future__ import annotations

import heapq
import math
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable, Optional

from mechverify.allocation import Allocation
from mechverify.execution import MAX_TIME, Execution, StepContext
from mechverify.model import Environment
from mechverify.numbers import InstanceError, fmt_exact, to_fraction, whole_fractions

from .mechanism import Mechanism, SettingError, call

__all__ = ["DEFAULT_SLOT", "DEFAULT_OVERHEAD", "lift_parameter", "parse_indivisible", "indivisible_name", "Indivisible", "residual_rule"]

#: seed 004's reallocation slot in most of its experiments (Sec. 6.2 table: 256 s) and its suspend-resume
#: overhead (Sec. 6.1: 250 ms)
DEFAULT_SLOT = Fraction(256)
DEFAULT_OVERHEAD = Fraction(1, 4)
_PARAMS = re.compile(r"^indivisible(?:\((?P<args>[^()]*)\))?$")


def lift_parameter(value: str, what: str, allow_none: bool) -> Optional[Fraction]:
    """``slot`` (``allow_none``: ``none`` = never reallocate; > 0) or ``overhead`` (>= 0) from text; one line else."""
    if allow_none and value.strip().lower() == "none":
        return None
    try:
        f = to_fraction(value.strip(), what)
    except (InstanceError, ValueError, ZeroDivisionError):
        raise InstanceError(f"{what}: expected a number{' or none' if allow_none else ''}, got {value!r}") from None
    if f < 0 or (what == "slot" and f == 0) or f > MAX_TIME:
        raise InstanceError(f"{what}: must be {'> 0' if what == 'slot' else '>= 0'} and at most 1e9 (got {value})")
    return f


def parse_indivisible(how: str) -> Optional[tuple[Optional[Fraction], Fraction]]:
    """``"indivisible"`` -> the defaults; ``"indivisible(slot=64,overhead=0)"`` -> ``(64, 0)`` (``slot=none``: no
    reallocation); ``None`` when ``how`` is not this lift; one ``InstanceError`` line for a bad parameter."""
    m = _PARAMS.match(how) if isinstance(how, str) else None
    if m is None:
        return None
    slot, overhead = DEFAULT_SLOT, DEFAULT_OVERHEAD
    for part in (m.group("args") or "").split(","):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in ("slot", "overhead"):
            raise InstanceError(f"lift: indivisible takes slot=S and overhead=O, got {part.strip()!r}")
        if key == "slot":
            slot = lift_parameter(value, "slot", True)
        else:
            overhead = lift_parameter(value, "overhead", False)
    return slot, overhead


def indivisible_name(slot: Optional[Fraction], overhead: Fraction) -> str:
    """The lift's name for these parameters (``indivisible`` for the defaults), what :func:`parse_indivisible` reads."""
    if slot == DEFAULT_SLOT and overhead == DEFAULT_OVERHEAD:
        return "indivisible"
    return f"indivisible(slot={'none' if slot is None else fmt_exact(slot)},overhead={fmt_exact(overhead)})"


def residual_rule(mech: Mechanism) -> Callable[[Environment, tuple], list]:
    """The rule of a mechanism without its own: the one-shot function (exact) on the residual capacity (what is
    held taken off every server and external resource) and the residual task bounds, rounded down to whole
    tasks; a mechanism refusing a residual in which no task fits (an exhausted server) starts nothing, one refusing
    a residual with room for a task raises (its SettingError: the run fails, it does not silently starve)."""
    def rule(env: Environment, held: tuple) -> list:
        J, S, R = env.n_users, env.n_servers, env.n_resources
        zero = Fraction(0)
        cap = list(env.capacity)
        used: dict[int, list] = {}  # only the servers something runs on (the others keep their capacity)
        tot = [sum(row) for row in held]
        for j, row in enumerate(held):
            if tot[j]:
                for s, h in enumerate(row):
                    if h:
                        d, acc = env.d(j, s), used.setdefault(s, [zero] * R)
                        for r in range(R):
                            acc[r] += h * d[r]
        for s, acc in used.items():
            cap[s] = tuple(max(c - u, zero) for c, u in zip(env.capacity[s], acc))
        ext = tuple(max(c - sum((tot[j] * env.external_demand[j][k] for j in range(J)), zero), zero)
                    for k, c in enumerate(env.external_capacity))
        tasks = tuple(None if env.tasks[j] is None else max(Fraction(math.floor(env.tasks[j])) - tot[j], zero)
                      for j in range(J))
        try:
            x = call(mech, replace(env, capacity=tuple(cap), external_capacity=ext, tasks=tasks), True).x
        except SettingError:
            if any(_fits(env, j, s, cap[s], ext) for j in range(J) if tasks[j] is None or tasks[j] >= 1
                   for s in env.eligible[j]):  # a server the user may run on
                raise  # not an exhausted residual: the mechanism cannot allocate this (say so, never starve)
            return []
        return [(j, s) for j in range(J) for s in range(S) if x[j][s] for _ in range(math.floor(x[j][s]))]

    return rule


def _fits(env: Environment, j: int, s: int, cap: tuple, ext: tuple) -> bool:
    """One more task of ``j`` fits in server ``s``'s residual ``cap`` and the external residual ``ext``."""
    return all(d <= c for d, c in zip(env.d(j, s), cap)) and \
        all(d <= c for d, c in zip(env.external_demand[j], ext))


@dataclass
class _Job:
    """One user's whole tasks: ``n`` not completed (``None``: unbounded), the env's bound last seen (``bound``),
    completions not yet applied by the run (``unapplied``), the next fresh index, the suspended tasks (a heap of
    ``(index, work left including the overhead)``) and the running ones (``index -> (server, finish or None)``)."""

    n: Optional[int]
    bound: Any
    duration: Optional[Fraction]
    key: tuple
    unapplied: int = 0
    fresh: int = 0
    suspended: list = field(default_factory=list)
    running: dict = field(default_factory=dict)

    def waiting(self) -> Optional[int]:
        return None if self.n is None else self.n - len(self.running)


def _key(env: Environment, j: int) -> tuple:
    return (env.demand[j], env.external_demand[j] if env.external_demand else (),
            tuple(sorted((env.servers[s], v) for (u, s), v in env.server_demand.items() if u == j)))


class Indivisible:
    """The indivisible stepper (module docstring) of ``mech`` for one run of ``ex``."""

    owns_completions = True

    def __init__(self, mech: Mechanism, ex: Execution, exact: bool, slot: Optional[Fraction], overhead: Fraction) -> None:
        self.mech, self.slot, self.overhead = mech, slot, overhead
        self.rule = mech.task_rule if mech.task_rule is not None else residual_rule(mech)
        self.duration: dict[str, Optional[Fraction]] = {}
        specs = [(f"users[{k}]", u) for k, u in enumerate(ex.users)]
        specs += [(f"events[{i}].user", e.spec) for i, e in enumerate(ex.events) if e.kind == "arrive"]
        for where, u in specs:
            if u.duration is None and u.work is not None:
                raise InstanceError(f"{where}.work: the whole-task model needs a per-task duration (tasks x "
                                    f"duration), not work in all")
            if u.duration is not None and u.duration <= 0:
                raise InstanceError(f"{where}.duration: a whole task must last > 0 (got {fmt_exact(u.duration)})")
            self.duration[u.name] = u.duration
        self.jobs: dict[str, _Job] = {}
        self.now = Fraction(0)
        self.dirty = False
        self.wake: Optional[Fraction] = None
        self.fired: Optional[Fraction] = None
        self.reallocations = self.suspensions = 0

    # ------------------------------------------------------------------ tasks
    def _start(self, job: _Job, server: str) -> None:
        if job.suspended:
            idx, work = heapq.heappop(job.suspended)
        else:
            idx, work = job.fresh, job.duration
            job.fresh += 1
        job.running[idx] = (server, None if work is None else self.now + work)

    def _suspend(self, job: _Job, idx: int) -> None:
        _server, fin = job.running.pop(idx)
        heapq.heappush(job.suspended, (idx, None if fin is None else fin - self.now + self.overhead))
        self.suspensions += 1

    def _lower(self, job: _Job, n: int) -> None:
        """The bound fell to ``n`` whole tasks: waiting ones go first (fresh, then suspended, highest index first),
        then running ones."""
        excess = len(job.running) + len(job.suspended) - n
        while excess > 0 and job.suspended:
            job.suspended.remove(max(job.suspended))
            heapq.heapify(job.suspended)
            excess -= 1
        for idx in sorted(job.running, reverse=True)[:max(excess, 0)]:
            del job.running[idx]
        job.n = n

    # ------------------------------------------------------------------ the stepper protocol
    def completed(self) -> dict[str, int]:
        """The tasks completing at the timer just fired (``Stepper.completed``), by user in arrival order."""
        out: dict[str, int] = {}
        self.fired = self.wake  # the time of this timer (later steps at it re-arm ``wake``)
        for u, job in self.jobs.items():
            done = [idx for idx, (_s, fin) in job.running.items() if fin is not None and fin <= self.fired]
            for idx in done:
                del job.running[idx]
            if done:
                job.n -= len(done)
                job.unapplied += len(done)
                out[u] = len(done)
                self.dirty = True
        return out

    def wake_at(self) -> Optional[Fraction]:
        return self.wake

    def step(self, ctx: StepContext) -> Allocation:
        ev, env = ctx.event, ctx.env
        if ev is None:
            self.now = Fraction(0)
        elif not ev.derived:
            self.now = ev.t
        elif ev.kind == "wake" or ev.tasks != "keep":
            self.now = self.fired
            if ev.kind == "finish" and ev.user in self.jobs:  # the run applied these completions
                job = self.jobs[ev.user]
                job.bound -= ev.tasks
                job.unapplied -= int(ev.tasks)
        self._reconcile(env)
        if not ctx.more_at_t:  # the batch is complete: decide
            if self.slot is not None and self.dirty and self.now % self.slot == 0:
                for job in self.jobs.values():
                    for idx in sorted(job.running):
                        self._suspend(job, idx)
                self.dirty = False
                self.reallocations += 1
            held = self._held(env)
            for j, s in self.rule(env, held):
                self._start(self.jobs[env.users[j]], env.servers[s])
        fins = [fin for job in self.jobs.values() for (_s, fin) in job.running.values() if fin is not None]
        if self.slot is not None and self.dirty:
            fins.append((self.now // self.slot + 1) * self.slot)
        self.wake = min(fins) if fins else None
        x = self._held(env)
        rows = tuple(map(whole_fractions, x)) if ctx.exact else tuple(tuple(map(float, row)) for row in x)
        return Allocation(env, rows, self.mech.name, ctx.exact,
                          info={"lift": "indivisible"})

    def _held(self, env: Environment) -> tuple:
        sindex = {s: i for i, s in enumerate(env.servers)}
        out = []
        for u in env.users:
            row = [0] * env.n_servers
            for server, _fin in self.jobs[u].running.values():
                row[sindex[server]] += 1
            out.append(tuple(row))
        return tuple(out)

    def _reconcile(self, env: Environment) -> None:
        """Bring the jobs in line with the present users, their reports and bounds, and the servers."""
        present = set(env.users)
        for u in [u for u in self.jobs if u not in present]:
            del self.jobs[u]
            self.dirty = True
        for j, u in enumerate(env.users):
            bound, key = env.tasks[j], _key(env, j)
            n = None if bound is None else math.floor(bound)
            job = self.jobs.get(u)
            if job is None:
                self.jobs[u] = _Job(n, bound, self.duration.get(u), key)
                self.dirty = self.dirty or n != 0
                continue
            if key != job.key:  # a changed report: its running tasks are suspended
                for idx in sorted(job.running):
                    self._suspend(job, idx)
                job.key, self.dirty = key, True
            if bound != job.bound:
                if n is None or (job.n is not None and n >= job.n):
                    job.n = n
                else:
                    self._lower(job, n)
                job.bound, self.dirty = bound, True
        sindex = {s: i for i, s in enumerate(env.servers)}
        uindex = {u: j for j, u in enumerate(env.users)}
        count: dict[tuple, int] = {}  # (user index, server name) -> its tasks running there
        for u, job in self.jobs.items():
            j = uindex[u]
            for server, _fin in job.running.values():
                count[(j, server)] = count.get((j, server), 0) + 1
        used: dict[str, list] = {}
        zero = Fraction(0)
        for (j, server), n in count.items():
            if server in sindex:
                d = env.d(j, sindex[server])
                acc = used.setdefault(server, [zero] * env.n_resources)
                for r in range(env.n_resources):
                    acc[r] += n * d[r]
        lost = {s for s in {srv for _j, srv in count}
                if s not in sindex or any(a > c for a, c in zip(used.get(s, ()), env.capacity[sindex[s]]))}
        for job in self.jobs.values():
            for idx in sorted(i for i, (srv, _f) in job.running.items() if srv in lost):
                self._suspend(job, idx)
        if lost:
            self.dirty = True
