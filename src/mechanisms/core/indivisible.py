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
* else the rule hands out free capacity only (called only when some task waits: with none, it may start none).

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
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable, Optional

from mechverify.allocation import VECTOR_MIN, Allocation, seed_matrix
from mechverify.execution import MAX_TIME, Execution, StepContext
from mechverify.model import Environment
from mechverify.numbers import InstanceError, fmt_exact, to_fraction, whole_fractions

from .mechanism import Mechanism, SettingError, call

__all__ = ["DEFAULT_SLOT", "DEFAULT_OVERHEAD", "lift_parameter", "parse_indivisible", "indivisible_name", "Indivisible",
           "Held", "held_view", "residual_rule"]

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


class Held(Sequence):
    """The whole tasks running, as a rule reads them (``Mechanism.task_rule``): ``held[j][s]`` counts, ``J x S``,
    kept sparse -- ``cols[j]`` is user ``j``'s ``(server indices, counts, total)``: the servers where it has tasks
    running (ascending), how many on each, and their sum.  Read as dicts (:attr:`on`), as flat int64 arrays
    (:meth:`arrays`), or a dense row by index (built when read).

    ``memo``: a dict the caller keeps for one run's calls of the rule (``None``: none), where a rule may keep what
    it derived from earlier calls.  The stepper's ``cols[j]`` is a new object whenever user ``j``'s tasks move (and
    whenever the servers change), the same object while they stay: a rule may tell what changed by identity."""

    __slots__ = ("cols", "n_servers", "memo", "_on", "_arrays")

    def __init__(self, cols: list, n_servers: int, memo: Optional[dict] = None) -> None:
        self.cols, self.n_servers, self.memo, self._on, self._arrays = cols, n_servers, memo, None, None

    def __len__(self) -> int:
        return len(self.cols)

    def __getitem__(self, j: int) -> tuple:
        row = [0] * self.n_servers
        servers, counts, _total = self.cols[j]
        for s, n in zip(servers, counts):
            row[int(s)] = int(n)
        return tuple(row)

    @property
    def on(self) -> list:
        """Per user, ``{server index: tasks running}``."""
        if self._on is None:
            self._on = [dict(zip(map(int, servers), map(int, counts))) for servers, counts, _t in self.cols]
        return self._on

    def totals(self) -> list:
        """Per user, its tasks running."""
        return [t for _s, _c, t in self.cols]

    @property
    def n_entries(self) -> int:
        """The (user, server) pairs with a task running."""
        return sum(len(servers) for servers, _c, _t in self.cols)

    def arrays(self) -> tuple:
        """``(users, servers, counts)``: one int64 entry per (user, server) pair with tasks running, by user."""
        if self._arrays is None:
            import numpy as np

            cols = self.cols
            sizes = [len(c[0]) for c in cols]
            users = np.repeat(np.arange(len(cols), dtype=np.int64), sizes)
            servers = np.concatenate([c[0] for c in cols] or [np.zeros(0)])
            counts = np.concatenate([c[1] for c in cols] or [np.zeros(0)])
            self._arrays = (users, servers.astype(np.int64, copy=False), counts.astype(np.int64, copy=False))
        return self._arrays


def held_view(held: Sequence) -> Held:
    """``held`` (a :class:`Held`, or dense ``J x S`` rows of counts) as a :class:`Held`."""
    if isinstance(held, Held):
        return held
    cols = []
    for row in held:
        servers = [s for s, c in enumerate(row) if c]
        counts = [int(row[s]) for s in servers]
        cols.append((servers, counts, sum(counts)))
    return Held(cols, len(held[0]) if len(held) else 0)


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
        hv = held_view(held)
        on, tot = hv.on, hv.totals()
        for j, row in enumerate(on):
            for s, h in row.items():
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


_LAST_SINDEX: list = [None]  # (servers, name -> index) built last (read only once built)

#: the completion heap is cleared of stale entries when it outgrows twice its live ones and this
_COMPACT_MIN = 1024


@dataclass
class _Job:
    """One user's whole tasks: ``n`` not completed (``None``: unbounded), the env's bound last seen (``bound``),
    completions not yet applied by the run (``unapplied``), the next fresh index, the suspended tasks (a heap of
    ``(index, work left including the overhead)``), the running ones in GROUPS of consecutive indices started
    together (``running``: group id -> ``(first index, last index + 1, place, finish or None)``, ``place`` the
    ``(server, tasks)`` pairs in task-index order; ``count`` of them in all), how many run on each server
    (``on``: server name -> count), and kept while ``on`` and the servers are unchanged: its row of the last
    allocation (``row``) and what runs as ``Held`` reads it (``cols``)."""

    n: Optional[int]
    bound: Any
    duration: Optional[Fraction]
    key: tuple
    unapplied: int = 0
    fresh: int = 0
    suspended: list = field(default_factory=list)
    running: dict = field(default_factory=dict)
    count: int = 0
    on: dict = field(default_factory=dict)
    row: Optional[tuple] = None
    cols: Optional[tuple] = None
    seen: Optional[tuple] = None  # (demand, external demand) objects its key was last computed from

    def stop(self, gid: int) -> tuple:
        """Group ``gid`` no longer runs (completed, suspended or dropped): ``(first, end, place, finish)`` it had."""
        got = self.running.pop(gid)
        self.count -= got[1] - got[0]
        on = self.on
        for server, k in got[2]:
            c = on[server] - k
            if c:
                on[server] = c
            else:
                del on[server]
        self.row = self.cols = None
        return got

    def by_index(self, reverse: bool = False) -> list:
        """The running groups' ids in the order of their tasks' indices."""
        return sorted(self.running, key=lambda g: self.running[g][0], reverse=reverse)


def _first(place: tuple, m: int) -> tuple:
    """The servers of a group's first ``m`` tasks (``place``: ``(server, tasks)`` pairs in task-index order)."""
    out = []
    for server, k in place:
        if m <= 0:
            break
        out.append((server, min(k, m)))
        m -= k
    return tuple(out)


def _key(env: Environment, j: int) -> tuple:
    return (env.demand[j], env.external_demand[j] if env.external_demand else (),
            tuple(sorted((env.servers[s], v) for (u, s), v in env.server_demand.items() if u == j)))


class Indivisible:
    """The indivisible stepper (module docstring) of ``mech`` for one run of ``ex``.

    What runs is kept per job in groups of tasks started together (``_Job.running``) and per server
    (``_Job.on``), and the completions to come in one heap (``_finishes``: ``(finish as a float, finish,
    sequence, user, group, its running entry)`` -- the float first, as it orders like the exact time and compares
    faster; an entry whose group no longer runs is skipped when it surfaces), so a step costs what changed in it
    and the users present, not every task running: the allocation is built from each job's row (rebuilt only for
    a job whose tasks moved), and what runs on the servers is re-checked against their capacity only when the
    servers changed."""

    owns_completions = True

    def __init__(self, mech: Mechanism, ex: Execution, exact: bool, slot: Optional[Fraction], overhead: Fraction) -> None:
        self.mech, self.slot, self.overhead = mech, slot, overhead
        # never reallocating, a job alone is never suspended: its rule (a function of the environment and what
        # runs) starts it from nothing running at its arrival and again each time its whole wave completes
        self.waves_alone = slot is None
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
        #: what happened to the tasks: reallocations, tasks suspended, started (a resumed one again) and completed
        self.reallocations = self.suspensions = self.started = self.completions = 0
        self._finishes: list = []
        self._seq = 0
        self._compact_at = _COMPACT_MIN
        self._fin_memo: tuple = (None, {})  # (now, work -> now + work)
        self._cluster: Optional[tuple] = None  # (servers, capacity) last checked against what runs
        self._sindex: tuple = ((), {})  # (servers, their indices)
        self._rule_memo: dict = {}  # the rule's own, across this run's calls (``Held.memo``)

    # ------------------------------------------------------------------ tasks
    def _start(self, job: _Job, user: str, runs: list) -> None:
        """Start the job's tasks ``runs`` (``(server, k)`` pairs: ``k`` tasks on ``server``, in order), each its lowest
        waiting one: suspended ones (by index, one group each: their work differs) before fresh ones (one group, on
        every server of the runs that takes one)."""
        fresh = []
        for server, k in runs:
            while k and job.suspended:
                idx, work = heapq.heappop(job.suspended)
                self._run(job, user, idx, idx + 1, ((server, 1),), work)
                k -= 1
            if k:
                fresh.append((server, k))
        if fresh:
            lo = job.fresh
            job.fresh += sum(k for _s, k in fresh)
            self._run(job, user, lo, job.fresh, tuple(fresh), job.duration)

    def _run(self, job: _Job, user: str, lo: int, hi: int, place: tuple, work: Optional[Fraction]) -> None:
        fin = key = None
        if work is not None:  # one object per finish time: equal times in the heap compare by identity
            memo = self._fin_memo
            if memo[0] is not self.now:
                memo = self._fin_memo = (self.now, {})
            got = memo[1].get(id(work))  # (by the work's identity: a job's tasks share its duration object)
            if got is None or got[0] is not work:
                t = self.now + work
                got = memo[1][id(work)] = (work, t, float(t))
            fin, key = got[1], got[2]
        self._add(job, user, (lo, hi, place, fin), key)

    def _add(self, job: _Job, user: str, entry: tuple, key: Optional[float] = None) -> None:
        """``key``: ``float(entry[3])`` when at hand."""
        self._seq += 1
        job.running[self._seq] = entry
        k = entry[1] - entry[0]
        job.count += k
        on = job.on
        for server, c in entry[2]:
            on[server] = on.get(server, 0) + c
        job.row = job.cols = None
        self.started += k
        if entry[3] is not None:
            heapq.heappush(self._finishes, (float(entry[3]) if key is None else key, entry[3], self._seq, user,
                                            self._seq, entry))

    def _suspend(self, job: _Job, gid: int, user: str = "", lost: Optional[set] = None) -> None:
        """Suspend the tasks of group ``gid`` (with ``lost``: only those on these servers, of ``user``'s job; the
        others run on, the same finish, as groups of consecutive indices)."""
        lo, _hi, place, fin = job.stop(gid)
        left = None if fin is None else fin - self.now + self.overhead
        idx, start, keep = lo, lo, []
        for server, k in place + ((None, 0),):  # (a sentinel closes the last run of kept tasks)
            if lost is None or server is None or server in lost:
                if keep:  # the tasks before it run on (not started again)
                    n = sum(c for _s, c in keep)
                    self.started -= n
                    self._add(job, user, (start, start + n, tuple(keep), fin))
                    keep = []
                for i in range(idx, idx + k):
                    heapq.heappush(job.suspended, (i, left))
                self.suspensions += k
                start = idx + k
            else:
                keep.append((server, k))
            idx += k

    def _lower(self, job: _Job, user: str, n: int) -> None:
        """The bound fell to ``n`` whole tasks: waiting ones go first (fresh, then suspended, highest index first),
        then running ones."""
        excess = job.count + len(job.suspended) - n
        while excess > 0 and job.suspended:
            job.suspended.remove(max(job.suspended))
            heapq.heapify(job.suspended)
            excess -= 1
        for gid in job.by_index(reverse=True):
            if excess <= 0:
                break
            lo, hi, place, fin = job.stop(gid)
            if hi - lo > excess:  # the group's lowest tasks go on running
                self.started -= hi - lo - excess  # (not started again: the same tasks)
                self._add(job, user, (lo, hi - excess, _first(place, hi - lo - excess), fin))
            excess -= hi - lo
        job.n = n

    def _live(self, top: tuple) -> bool:
        """A completion of the heap whose group still runs as it did when it started."""
        job = self.jobs.get(top[3])
        return job is not None and job.running.get(top[4]) is top[5]

    # ------------------------------------------------------------------ the stepper protocol
    def completed(self) -> dict[str, int]:
        """The tasks completing at the timer just fired (``Stepper.completed``), by user in arrival order."""
        self.fired = self.wake  # the time of this timer (later steps at it re-arm ``wake``)
        done: dict[str, int] = {}
        fin = self._finishes
        fired = float(self.fired)
        while fin and (fin[0][0] < fired or (fin[0][0] == fired and (fin[0][1] is self.fired or
                                                                      fin[0][1] <= self.fired))):
            top = heapq.heappop(fin)
            if self._live(top):
                lo, hi, _s, _f = self.jobs[top[3]].stop(top[4])
                done[top[3]] = done.get(top[3], 0) + hi - lo
                self.completions += hi - lo
        out: dict[str, int] = {}
        for u, job in self.jobs.items():  # arrival order
            k = done.get(u)
            if k:
                job.n -= k
                job.unapplied += k
                out[u] = k
                self.dirty = True
        return out

    def wake_at(self) -> Optional[Fraction]:
        return self.wake

    def task_counts(self) -> dict[str, int]:
        """Tasks started (a resumed one again), completed and suspended so far, and the reallocations
        (``Stepper.task_counts``)."""
        return {"started": self.started, "completed": self.completions, "suspended": self.suspensions,
                "reallocations": self.reallocations}

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
                    for gid in job.by_index():
                        self._suspend(job, gid)
                self.dirty = False
                self.reallocations += 1
            # the rule only when a task waits (with none, no rule may start one: each user at most floor(n_j) in all)
            waits = any(job.n is None or job.count < job.n for job in self.jobs.values())
            starts = self.rule(env, self._held(env)) if waits else ()
            i, n, servers = 0, len(starts), env.servers
            while i < n:  # a run of the same user: its tasks start together (one group, a server or several)
                j = starts[i][0]
                runs: list = []
                while i < n and starts[i][0] == j:
                    s, k = starts[i][1], 1
                    while i + k < n and starts[i + k] == (j, s):
                        k += 1
                    runs.append((servers[s], k))
                    i += k
                u = env.users[j]
                self._start(self.jobs[u], u, runs)
        fin = self._finishes
        if len(fin) > self._compact_at:  # stale completions (suspended, dropped) kept at most as many as live ones
            fin[:] = [e for e in fin if self._live(e)]
            heapq.heapify(fin)
            self._compact_at = max(_COMPACT_MIN, 2 * len(fin))
        while fin and not self._live(fin[0]):
            heapq.heappop(fin)
        nxt = fin[0][1] if fin else None
        if self.slot is not None and self.dirty:
            b = (self.now // self.slot + 1) * self.slot
            nxt = b if nxt is None or b < nxt else nxt
        self.wake = nxt
        return self._allocation(env, ctx.exact)

    def _servers(self, env: Environment) -> dict:
        """Server name -> index in ``env`` (kept while the servers are the same; the last one built is shared with
        the next stepper on the same servers: a simulation's runs of one job alone)."""
        if self._sindex[0] is not env.servers:
            if self._sindex[0] != env.servers:
                last = _LAST_SINDEX[0]
                if last is None or last[0] != env.servers:
                    last = _LAST_SINDEX[0] = (env.servers, {s: i for i, s in enumerate(env.servers)})
                self._sindex = (env.servers, last[1])
                for job in self.jobs.values():
                    job.row = job.cols = None
            else:
                self._sindex = (env.servers, self._sindex[1])
        return self._sindex[1]

    def _held(self, env: Environment) -> Held:
        import numpy as np

        sindex = self._servers(env)
        cols = []
        for u in env.users:
            job = self.jobs[u]
            got = job.cols
            if got is None:
                pairs = sorted((sindex[srv], n) for srv, n in job.on.items())
                got = job.cols = (np.array([s for s, _n in pairs], dtype=np.int64),
                                  np.array([n for _s, n in pairs], dtype=np.int64), job.count)
            cols.append(got)
        return Held(cols, env.n_servers, self._rule_memo)

    def _allocation(self, env: Environment, exact: bool) -> Allocation:
        """What runs as ``env``'s task matrix: each job's row (kept while its tasks stay where they are), and in
        floats the numpy matrix handed to ``float_matrix`` with it (the same numbers)."""
        sindex = self._servers(env)
        S = env.n_servers
        rows = []
        for u in env.users:
            job = self.jobs[u]
            row = job.row
            if row is None or row[0] is not exact:
                dense = [0] * S
                for srv, n in job.on.items():
                    dense[sindex[srv]] = n
                row = job.row = (exact, whole_fractions(dense) if exact else tuple(map(float, dense)))
            rows.append(row[1])
        alloc = Allocation(env, tuple(rows), self.mech.name, exact, info={"lift": "indivisible"})
        if not exact and len(rows) * S >= VECTOR_MIN:
            held = self._held(env)

            def matrix() -> Any:
                import numpy as np

                X = np.zeros((len(rows), S))
                if held.n_entries:
                    users, servers, counts = held.arrays()
                    X[users, servers] = counts
                return X

            seed_matrix(alloc, matrix)
        return alloc

    def _reconcile(self, env: Environment) -> None:
        """Bring the jobs in line with the present users, their reports and bounds, and the servers."""
        present = set(env.users)
        for u in [u for u in self.jobs if u not in present]:
            del self.jobs[u]
            self.dirty = True
        for j, u in enumerate(env.users):
            bound = env.tasks[j]
            job = self.jobs.get(u)
            if job is None:
                n = None if bound is None else math.floor(bound)
                self.jobs[u] = _Job(n, bound, self.duration.get(u), _key(env, j))
                self.dirty = self.dirty or n != 0
                continue
            if job.seen is not None and job.seen[0] is env.demand[j] and job.seen[1] is env.external_demand[j] \
                    and not env.server_demand:
                key = job.key  # (the same report objects: the same report)
            else:
                key = _key(env, j)
                job.seen = (env.demand[j], env.external_demand[j])
            if key != job.key:  # a changed report: its running tasks are suspended
                for gid in job.by_index():
                    self._suspend(job, gid)
                job.key, self.dirty = key, True
            if bound is not job.bound and bound != job.bound:
                n = None if bound is None else math.floor(bound)
                if n is None or (job.n is not None and n >= job.n):
                    job.n = n
                else:
                    self._lower(job, u, n)
                job.bound, self.dirty = bound, True
        # what runs only grows by the rule's starts, which fit; so it can exceed a server only when the servers
        # changed (a report, a bound or a leave only stops tasks)
        cluster = (env.servers, env.capacity)
        if self._cluster is not None and (cluster[0] is self._cluster[0] or cluster[0] == self._cluster[0]) and \
                (cluster[1] is self._cluster[1] or cluster[1] == self._cluster[1]):
            return
        self._cluster = cluster
        sindex = self._servers(env)
        uindex = {u: j for j, u in enumerate(env.users)}
        used: dict[str, list] = {}
        zero = Fraction(0)
        lost = set()
        for u, job in self.jobs.items():
            j = uindex[u]
            for server, n in job.on.items():
                if server not in sindex:
                    lost.add(server)
                    continue
                d = env.d(j, sindex[server])
                acc = used.setdefault(server, [zero] * env.n_resources)
                for r in range(env.n_resources):
                    acc[r] += n * d[r]
        lost.update(s for s, acc in used.items() if any(a > c for a, c in zip(acc, env.capacity[sindex[s]])))
        for u, job in self.jobs.items():
            for gid in [g for g in job.by_index() if any(srv in lost for srv, _k in job.running[g][2])]:
                self._suspend(job, gid, u, lost)
        if lost:
            self.dirty = True
