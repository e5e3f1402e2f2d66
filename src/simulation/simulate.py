"""A cluster simulation: a mechanism through a job trace, on the execution model's stepping (docs/simulation.md).

There is no second event loop: :func:`simulate` iterates ``mechverify.execution.run`` -- arrivals, the finishes a
job's work makes (a job of ``tasks`` tasks of ``duration`` each does ``tasks x duration`` of work at the rate of
the tasks it runs, the FLUID task model of seed 004 Sec. 6.1: the mechanism reallocates at every event), the
mechanism's own timers -- and measures every step as it goes, keeping only bounded summaries (memory does not
grow with the steps; it grows with the jobs by two floats each, their JCT and JCT factor, and in the fluid model
by one per present job, its work done):

* per job: JCT (finish - arrival) and JCT factor (standalone JCT over JCT, seed 004 Sec. 6.2: the standalone
  JCT is the job's work over the rate the same mechanism gives it alone on the cluster present at its
  arrival; in the INDIVISIBLE model -- a mechanism lifted ``NAME+indivisible``, ``mechanisms.core.indivisible``:
  whole tasks completed one by one, reallocation slots, the suspend-resume overhead -- its JCT in the same
  model alone from its arrival time); unfinished jobs are counted, never given a JCT, and get their TASKS DONE
  by the end of the run (seed 001 Sec. VI's task completion ratio is tasks done over tasks): in the
  indivisible model the whole tasks completed, in the fluid model the whole tasks' worth of work done
  (``floor(work done / per-task duration)``, the work done being the job's rate -- its true utility --
  integrated over the steps);
* over time (:class:`Series`, time-weighted means in at most ``points`` buckets, which double in width when
  the run outgrows them): utilisation of each resource of the present cluster, tasks waiting (the present
  jobs' tasks not running), each queue's dominant share (without queues: the first ``users_shown`` jobs');
* per property (SI, EF: the seeds' SI-SAT and EF-SAT, ``simulation.metrics``; PO: the domination factor,
  judged on every ``po_every``-th step only, an LP each): the TIME RATIO of the run (with somebody present)
  during which it is violated, its worst depth and its time-averaged value; a step counts as violated when the
  float measure is past its threshold by more than ``TOLERANCE``; the first ``check_first`` flagged steps of
  each property are RE-CHECKED EXACTLY (a fresh stepper in rationals -- for a lift that recomputes from
  scratch, the step alone; else an exact replay of the run up to the step) and the report says how many were
  confirmed.

Deterministic: the same trace and mechanism give the same numbers (a workload's draw is seeded).
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable, Optional

from mechanisms.core.time import execution_of, stepper_for
from mechverify import allocation as _allocation
from mechverify.allocation import (Allocation, RowReuse, dominant_shares, float_matrix, float_totals, resource_totals,
                                   usage)
from mechverify.execution import MAX_TIME, Event, Execution, StepContext, UserSpec, run
from mechverify.model import Environment, deferred_validation
from mechverify.numbers import FLOAT_REL
from mechverify.utility import utilities, utility_floats

from . import metrics as M

__all__ = ["simulate", "Simulation", "Series", "PropertyTrack", "PROPERTIES", "TOLERANCE"]

TOLERANCE = 1e-9  # a float measure counts as violated only past its threshold by more than this (relative)


# ---------------------------------------------------------------------- bounded series over time
class Series:
    """Time-weighted means of a quantity over at most ``points`` equal buckets from time 0.  When a value
    arrives past the last bucket, buckets merge pairwise (width doubles) until it fits: memory is bounded and
    the result depends only on the values, not on when they were added."""

    def __init__(self, points: int = 400, width: float = 1.0) -> None:
        self.points, self.width = points, width
        self.area = [0.0] * points  # value x time, per bucket
        self.cover = [0.0] * points  # time covered, per bucket

    def _grow(self, t: float) -> None:
        while t > self.width * self.points:
            self.area = [self.area[i] + self.area[i + 1] for i in range(0, self.points, 2)] + [0.0] * (self.points // 2)
            self.cover = [self.cover[i] + self.cover[i + 1] for i in range(0, self.points, 2)] + [0.0] * (self.points // 2)
            self.width *= 2

    def add(self, t0: float, t1: float, value: float) -> None:
        """``value`` held over ``[t0, t1)``."""
        if t1 <= t0:
            return
        self._grow(t1)
        w = self.width
        b = int(t0 // w)
        while t0 < t1:
            end = min(t1, (b + 1) * w)
            self.area[b] += value * (end - t0)
            self.cover[b] += end - t0
            t0, b = end, b + 1

    def points_list(self) -> list[tuple[float, float]]:
        """``(bucket midpoint, mean value)`` for every covered bucket."""
        return [((i + 0.5) * self.width, self.area[i] / self.cover[i]) for i in range(self.points) if self.cover[i] > 0]

    def mean(self) -> Optional[float]:
        cov = sum(self.cover)
        return sum(self.area) / cov if cov > 0 else None


# ---------------------------------------------------------------------- properties over the run
def _si(alloc: Allocation) -> Any:
    return M.min_si_sat(None, alloc)


def _ef(alloc: Allocation) -> Any:
    return M.min_ef_sat(None, alloc)


def _po(alloc: Allocation) -> Any:
    return M.domination_factor(None, alloc)


@dataclass(frozen=True)
class _Prop:
    """One measure judged over a run: ``measure(alloc)`` (float for a float allocation, exact for an exact
    one); violated when below 1 (``lower``) or above 1."""

    name: str
    title: str
    measure: Callable[[Allocation], Any]
    lower: bool  # violated when the measure is below 1 (SI-SAT, EF-SAT); else above 1 (domination factor)
    every: bool = True  # judged at every step (else every po_every-th)
    tolerance: float = TOLERANCE  # the float screen's relative margin

    def violated(self, v: Any, exact: bool) -> bool:
        if exact:
            return v < 1 if self.lower else v > 1
        return v < 1 - self.tolerance if self.lower else v > 1 + self.tolerance


#: the properties a simulation measures over time, by name
PROPERTIES = {p.name: p for p in (
    _Prop("si", "sharing incentive (min SI-SAT)", _si, True),
    _Prop("ef", "envy-freeness (min EF-SAT)", _ef, True),
    # an LP optimum: its float value is a solver's, good to the project's float tolerance (the `po` property's
    # screen), not to 1e-9 -- a PO allocation's factor comes out as 1 + a few 1e-9
    _Prop("po", "Pareto optimality (domination factor)", _po, False, every=False, tolerance=FLOAT_REL),
)}


@dataclass
class PropertyTrack:
    """A property over the run: time violated over time judged, worst and time-averaged measure, the steps
    flagged in floats and what their exact re-check said."""

    name: str
    title: str
    cadence: str = "every step"  # which steps are judged
    judged_time: float = 0.0
    violated_time: float = 0.0
    judged_steps: int = 0
    flagged_steps: int = 0
    worst: Optional[float] = None
    area: float = 0.0
    flagged: list = field(default_factory=list)  # up to check_first: (index, t, float measure)
    rechecks: list = field(default_factory=list)  # (index, t, "confirmed"|"not confirmed"|"not re-checked", exact)

    @property
    def time_ratio(self) -> Optional[float]:
        return self.violated_time / self.judged_time if self.judged_time > 0 else None

    @property
    def mean(self) -> Optional[float]:
        return self.area / self.judged_time if self.judged_time > 0 else None

    def to_dict(self) -> dict[str, Any]:
        return {"property": self.name, "title": self.title, "judged": self.cadence, "time_ratio": self.time_ratio,
                "judged_time": self.judged_time, "violated_time": self.violated_time,
                "judged_steps": self.judged_steps, "flagged_steps": self.flagged_steps, "worst": self.worst,
                "time_mean": self.mean,
                "rechecks": [{"step": i, "t": t, "float": v, "exact": None if e is None else str(e), "verdict": w}
                             for (i, t, v, w, e) in self.rechecks]}


# ---------------------------------------------------------------------- the result
@dataclass
class Simulation:
    """What :func:`simulate` measured (module docstring)."""

    mechanism: str
    trace: str
    users: int  # every user of the execution
    jobs: int = 0  # those with work to do (a job trace's jobs): the ones with a JCT
    steps: int = 0
    end_time: float = 0.0
    finished: int = 0
    unfinished: list = field(default_factory=list)  # (name, tasks, arrival, tasks done) per job present at the end
    jct: list = field(default_factory=list)  # (name, tasks, arrival, jct, jct factor) per finished job
    utilisation: dict = field(default_factory=dict)  # resource -> Series
    waiting: Optional[Series] = None
    shares: dict = field(default_factory=dict)  # queue or job -> Series
    shares_by: str = "queue"
    properties: dict = field(default_factory=dict)  # name -> PropertyTrack
    check_first: int = 0
    po_every: int = 0
    stopped: str = ""  # why the run stopped before its end ("" = it ran to the end)
    seconds: float = 0.0
    events: list = field(default_factory=list)  # (t, label) of the first events, for the timeline
    task_counts: dict = field(default_factory=dict)  # whole tasks started, completed, ... (the stepper's; else {})

    def jct_summary(self) -> dict[str, Any]:
        js = sorted(r[3] for r in self.jct)
        fs = sorted(r[4] for r in self.jct)

        def q(xs: list, p: float) -> Optional[float]:
            return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None

        return {"finished": self.finished, "unfinished": len(self.unfinished),
                "tasks": sum(r[1] for r in self.jct) + sum(r[1] for r in self.unfinished),
                "tasks_done": sum(r[1] for r in self.jct) + sum(r[3] for r in self.unfinished),
                "jct_mean": sum(js) / len(js) if js else None, "jct_median": q(js, 0.5), "jct_p95": q(js, 0.95),
                "jct_factor_mean": sum(fs) / len(fs) if fs else None, "jct_factor_median": q(fs, 0.5)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism, "trace": self.trace, "users": self.users, "jobs": self.jobs, "steps": self.steps,
            "end_time": self.end_time, "seconds": round(self.seconds, 3), "stopped": self.stopped or None,
            "task_counts": self.task_counts or None,
            "jct": self.jct_summary(), "check_first": self.check_first, "po_every": self.po_every,
            "utilisation": {r: {"time_mean": s.mean(), "timeline": s.points_list()} for r, s in self.utilisation.items()},
            "waiting": None if self.waiting is None else {"time_mean": self.waiting.mean(),
                                                           "timeline": self.waiting.points_list()},
            "shares_by": self.shares_by,
            "shares": {k: {"time_mean": s.mean(), "timeline": s.points_list()} for k, s in self.shares.items()},
            "properties": {k: p.to_dict() for k, p in self.properties.items()},
            "jobs_table": [{"name": n, "tasks": k, "arrival": a, "jct": j, "jct_factor": f}
                           for (n, k, a, j, f) in self.jct],
            "unfinished_jobs": [{"name": n, "tasks": k, "arrival": a, "tasks_done": d}
                                for (n, k, a, d) in self.unfinished],
        }


# ---------------------------------------------------------------------- the standalone JCT
class _Standalone:
    """A job's rate alone on the cluster present at its arrival under the same mechanism (cached by what it
    depends on: the job's report and the cluster); in the whole-task model its JCT in the same model, alone from
    its arrival time on that cluster (:meth:`jct`)."""

    def __init__(self, mech) -> None:
        self.mech, self.cache = mech, {}
        self._cluster: Any = None  # (servers, capacity, the rates cached on them): the last cluster's, by identity
        self.waves: Optional[bool] = None  # the model's steppers run a job alone in waves (``Stepper.waves_alone``)
        self.runs = 0  # the jobs run alone (the others found in the cache)

    def jct(self, ex: Execution, spec: UserSpec, env: Environment, at: Fraction) -> float:
        """The job's JCT when it arrives at ``at`` (exact) alone on ``env``'s cluster (an execution of its own,
        stepped by a fresh stepper of the same model: slots and overheads included).  Where the model runs a job
        alone in waves (``Stepper.waves_alone``), the waves found for a job serve every job alike but for its
        arrival and per-task duration: its JCT is ``float(at + waves x duration) - float(at)``, what its own run
        would give, bit for bit."""
        report = spec.to_dict()
        report.pop("name")
        key = (json.dumps(report, sort_keys=True), at, env.servers, env.cluster_key())
        got = self.cache.get(key)
        if got is not None:
            return got
        d, wkey = spec.duration, None
        if self.waves is not False and d is not None:
            report.pop("duration")
            wkey = ("waves", json.dumps(report, sort_keys=True), env.servers, env.cluster_key())
            w = self.cache.get(wkey)
            if w is not None and at + w * d <= MAX_TIME:
                got = self.cache[key] = float(at + w * d) - float(at)
                return got
        alone = replace(ex, servers=env.servers, capacity=env.capacity, users=(),
                        events=(Event(at, "arrive", spec=spec),), end=None, name="")
        stepper = stepper_for(self.mech, alone, False)
        self.runs += 1
        if self.waves is None:
            self.waves = bool(getattr(stepper, "waves_alone", False))
        got, waves = math.inf, 0
        for st in run(alone, stepper, exact=False):
            ev = st.event
            if ev is not None and ev.kind == "finish" and ev.derived:  # (in waves: a wave completed)
                waves += 1
                if ev.user not in st.users:
                    got = float(st.t) - float(at)
                    if self.waves and wkey is not None and float(at + waves * d) == float(st.t):
                        self.cache[wkey] = waves
        self.cache[key] = got
        return got

    def rate(self, env: Environment, j: int) -> float:
        # by cluster, then by the job's report: a run's environments share their cluster's tuples until it
        # changes, so the cluster's exact numbers are not hashed again at every arrival
        cl = self._cluster
        if cl is None or cl[0] is not env.servers or cl[1] is not env.capacity:
            cl = self._cluster = (env.servers, env.capacity, self.cache.setdefault((env.servers, env.cluster_key()), {}))
        cache = cl[2]
        key = (env.demand[j], env.tasks[j], env.weight[j], env.eligible[j],
               tuple(sorted((s, v) for (k, s), v in env.server_demand.items() if k == j)))
        got = cache.get(key)
        if got is None:
            with deferred_validation():  # a state of the run (valid: the execution was) restricted to one user
                alone = env.restrict([j])
            ex = execution_of(alone)
            alloc = stepper_for(self.mech, ex, False).step(StepContext(0, 0.0, None, alone, None, ex, False))
            got = cache[key] = float(utilities(alone, alloc)[0])
        return got


# ---------------------------------------------------------------------- the run
def simulate(mech, ex: Execution, *, trace: str = "", properties: tuple = ("si", "ef"), check_first: int = 5,
             po_every: int = 10, points: int = 400, users_shown: int = 10, deadline: Optional[float] = None,
             progress: Optional[Callable[[int, float, int], None]] = None) -> Simulation:
    """``mech`` (a mechanism with a time facet; a one-shot one is lifted by the caller) through ``ex`` in floats,
    measured as the module docstring says; ``deadline`` (``time.monotonic()`` value): stop there and say so
    (``Simulation.stopped``); the exact re-checks run inside the same deadline."""
    t_start = time.monotonic()
    unknown = [p for p in properties if p not in PROPERTIES]
    if unknown:
        raise ValueError(f"properties: unknown {unknown[0]!r} (known: {', '.join(PROPERTIES)})")
    sim = Simulation(mech.name, trace, ex.n_users_total, check_first=check_first,
                     po_every=po_every if "po" in properties else 0)
    # buckets sized for the trace's last event (they double if the jobs run on past it)
    width = float(ex.horizon) / points if ex.horizon > 0 else 1.0

    def new_series() -> Series:
        return Series(points, width)

    sim.utilisation = {r: new_series() for r in ex.resources}
    sim.waiting = new_series()
    sim.shares_by = "queue" if ex.queues else "job"
    if ex.queues:
        sim.shares = {q: new_series() for q in ex.queues}
    sim.properties = {p: PropertyTrack(p, PROPERTIES[p].title, "every step" if PROPERTIES[p].every else
                                       f"every step whose index is a multiple of {po_every}") for p in properties}
    arrival: dict[str, tuple[float, float, int]] = {}  # name -> (arrival, standalone JCT, tasks)
    standalone = _Standalone(mech)
    specs = {u.name: u for u in ex.users}
    specs.update((e.spec.name, e.spec) for e in ex.events if e.kind == "arrive")
    work = {u: float(spec.work) for u, spec in specs.items() if spec.work is not None}
    whole = mech.time is not None and mech.time.kind == "indivisible"  # the whole-task model
    done: dict[str, float] = {}  # fluid model: work done by each present job (its rate integrated over the steps)
    sim.jobs = len(work)
    stepper = stepper_for(mech, ex, False)
    steps = run(ex, stepper, exact=False)
    # whole tasks (a stepper keeping users' rows while their tasks stay put): their usage and totals kept while
    # their rows are unchanged (the same bits); a fluid run's rows all change at every step
    rows = RowReuse() if whole else None
    last_t = 0.0
    last_env: Optional[Environment] = None  # the true environment of the last step with somebody present
    for st in steps:
        sim.steps = st.index + 1
        t0, t1 = float(st.t), float(st.until)
        last_t = max(last_t, t1)
        ev = st.event
        if ev is not None and len(sim.events) < 200 and not ev.derived:
            sim.events.append((t0, ev.kind + (f" {ev.spec.name}" if ev.kind == "arrive" else
                                              f" {ev.user}" if ev.user else "")))
        if ev is not None and ev.kind == "finish" and ev.derived and ev.user in arrival and ev.user not in st.users:
            a, alone, n = arrival.pop(ev.user)
            done.pop(ev.user, None)
            jct = t0 - a
            sim.jct.append((ev.user, n, a, jct, M.jct_factor(alone, jct) if jct > 0 else 1.0))
            sim.finished += 1
        alloc, env = st.alloc, st.true_env
        if env is not None:
            last_env = env
        if alloc is None:
            if deadline is not None and time.monotonic() > deadline:
                sim.stopped = f"budget: stopped at t = {t1:g} after {sim.steps} steps"
                break
            continue
        new = env.users if st.index == 0 else (ev.spec.name,) if ev is not None and ev.kind == "arrive" else ()
        for u in new:
            j = env.users.index(u)
            w = work.get(u)
            if w is not None and whole:  # a job in the whole-task model: alone in the same model
                at = ev.t if ev is not None else Fraction(0)
                arrival[u] = (t0, standalone.jct(ex, specs[u], env, at), int(env.tasks[j] or 0))
            elif w is not None:  # a job (its work stated): its standalone JCT
                rate = standalone.rate(env, j)
                arrival[u] = (t0, w / rate if rate > 0 else math.inf, int(env.tasks[j] or 0))
                done[u] = 0.0
        dt = t1 - t0
        if dt > 0:
            if done:  # the work done in the step: each job's rate, its true utility (as the run's progress takes it)
                _accrue(done, env, alloc, dt)
            run_tasks = None
            if rows is not None:  # whole tasks: the users whose rows are unchanged keep their uses and totals
                used, run_tasks = rows.usage(alloc), rows.totals(alloc)
            else:
                # what each user uses: the loops' lists, computed once here; a float matrix's array is memoised
                # on the allocation (resource_totals and dominant_shares read it, no list in between)
                used = usage(alloc) if float_matrix(alloc) is None or alloc.env.server_demand else None
            pooled = alloc.env.total_capacity()
            in_all = resource_totals(alloc, used)  # per resource, the users' uses summed in user order
            for r, (name, series) in enumerate(sim.utilisation.items()):
                if pooled[r] > 0:
                    series.add(t0, t1, in_all[r] / float(pooled[r]))
            sim.waiting.add(t0, t1, _waiting(env, alloc, run_tasks))
            if ex.queues or len(sim.shares) < users_shown or not sim.shares.keys().isdisjoint(env.users):
                shares = dominant_shares(alloc, by_queue=bool(ex.queues), used=used)
            else:  # every job shown has left: no share is read
                shares = {}
            if ex.queues or len(sim.shares) >= users_shown:  # only the series shown: no new one
                for k, s in sim.shares.items():
                    v = shares.get(k)
                    if v is not None:
                        s.add(t0, t1, float(v))
            else:
                for k, v in shares.items():
                    s = sim.shares.get(k)
                    if s is None and len(sim.shares) < users_shown:
                        s = sim.shares[k] = new_series()
                    if s is not None:
                        s.add(t0, t1, float(v))
            for name, track in sim.properties.items():
                p = PROPERTIES[name]
                if not p.every and (po_every <= 0 or st.index % po_every):
                    continue
                v = float(p.measure(alloc))
                track.judged_steps += 1
                track.judged_time += dt
                track.area += (1.0 if math.isinf(v) else v) * dt
                if track.worst is None or (v < track.worst if p.lower else v > track.worst):
                    track.worst = v
                if p.violated(v, False):
                    track.violated_time += dt
                    track.flagged_steps += 1
                    if len(track.flagged) < check_first:
                        track.flagged.append((st.index, t0, v, st.env))
        if progress is not None and st.index % 500 == 0:
            progress(sim.steps, t1, sim.finished)
        if deadline is not None and time.monotonic() > deadline:
            sim.stopped = f"budget: stopped at t = {t1:g} after {sim.steps} steps"
            break
    sim.end_time = last_t
    counts = getattr(stepper, "task_counts", None)  # (optional: a stepper of whole tasks)
    sim.task_counts = counts() if counts is not None else {}
    sim.unfinished = [(u, n, a, _tasks_done(u, n, done.get(u), work[u], last_env))
                      for u, (a, _, n) in sorted(arrival.items())]
    _recheck(mech, ex, sim, deadline)
    sim.seconds = time.monotonic() - t_start
    return sim


def _tasks_done(u: str, n: int, done: Optional[float], work: float, env: Optional[Environment]) -> int:
    """Job ``u``'s tasks done by the end (module docstring): of its ``n`` tasks, in the fluid model (``done``: its
    work done, of ``work``) the whole tasks' worth of work, ``floor(n done / work)`` (within ``TOLERANCE``); in
    the indivisible model (``done`` None) those its task bound has dropped by in ``env``, the last step's."""
    if n == 0:  # no task bound: no task count
        return 0
    if done is None:
        left = env.tasks[env.users.index(u)] if env is not None and u in env.users else n
        return n - int(left)
    return min(n, math.floor(n * done / work * (1 + TOLERANCE))) if work > 0 else n


def _accrue(done: dict, env: Environment, alloc: Allocation, dt: float) -> None:
    """Each job's work done in a step of ``dt``: ``done[u] += float(rate) * dt`` for the users in ``done``, its
    rate its true utility (``env``: the true environment).  When every user is in ``done`` and there are
    ``allocation.VECTOR_MIN`` of them or more, over numpy arrays (``utility.utility_floats``, the array the run's
    work bookkeeping read): the same multiplication and addition per user."""
    users = env.users
    if len(users) >= _allocation.VECTOR_MIN and not alloc.exact:
        now = list(map(done.get, users))
        if None not in now:
            import numpy as np

            done.update(zip(users, (np.array(now, dtype=float) + utility_floats(env, alloc) * dt).tolist()))
            return
    for u, rate in zip(users, utilities(env, alloc)):
        if u in done:
            done[u] += float(rate) * dt


def _waiting(env: Environment, alloc: Allocation, known: Optional[list] = None) -> float:
    """The tasks waiting in a step: over the users with a task bound, ``max(n_j - x_j, 0)`` summed in user order
    (a float allocation's in one pass over numpy arrays: the same subtractions and sum); ``known``: the users'
    totals ``x_j`` when already computed."""
    import numpy as np

    if known is not None:
        run_tasks = None if alloc.exact or any(v.__class__ is not float for v in known) else \
            np.array(known, dtype=float)
    else:
        run_tasks = float_totals(alloc)
    if run_tasks is None:
        run_tasks = alloc.totals() if known is None else known
        return float(sum(max(float(env.tasks[j]) - float(run_tasks[j]), 0.0)
                         for j in range(env.n_users) if env.tasks[j] is not None))
    bound = env.floats().tasks
    has = np.isfinite(bound)  # (a bound is a number; no bound: inf)
    v = bound[has] - run_tasks[has]
    return float(sum(np.where(0.0 > v, 0.0, v).tolist()))


def _recheck(mech, ex: Execution, sim: Simulation, deadline: Optional[float]) -> None:
    """The first flagged steps of each property, re-derived in rationals (module docstring): for a lift that
    recomputes from scratch, the step's environment alone; else one exact replay of the run up to the last of
    them, a flagged step confirmed only when the replay reaches it at the same time.  What the deadline leaves
    is "not re-checked (budget)"."""
    todo = [(name, f) for name, tr in sim.properties.items() for f in tr.flagged]
    if not todo:
        return
    exact_at: dict[int, tuple[Any, Optional[Allocation]]] = {}  # step index -> (exact t, exact allocation)
    memoryless = mech.time is None or mech.time.kind == "recompute"
    if memoryless:
        for name, (i, t, v, env) in todo:
            if i in exact_at or (deadline is not None and time.monotonic() > deadline):
                continue
            env.validate()  # built by a float run, which defers validation: checked before it decides a verdict
            alloc = stepper_for(mech, ex, True).step(StepContext(i, Fraction(t), None, env, None, ex, True))
            exact_at[i] = (Fraction(t), alloc)
    else:
        last = max(f[0] for _, f in todo)
        wanted = {f[0] for _, f in todo}
        for st in run(ex, stepper_for(mech, ex, True), exact=True):
            if st.index in wanted:
                exact_at[st.index] = (st.t, st.alloc)
            if st.index >= last or (deadline is not None and time.monotonic() > deadline):
                break
    for name, (i, t, v, _env) in todo:
        tr, p = sim.properties[name], PROPERTIES[name]
        got = exact_at.get(i)
        if got is None:
            tr.rechecks.append((i, t, v, "not re-checked (budget)", None))
            continue
        te, alloc = got
        if alloc is None or abs(float(te) - t) > 1e-9 * max(1.0, abs(t)):
            tr.rechecks.append((i, t, v, "not confirmed (the exact run differs at this step)", None))
            continue
        m = p.measure(alloc)
        tr.rechecks.append((i, t, v, "confirmed" if p.violated(m, True) else "not confirmed (holds exactly)", m))
