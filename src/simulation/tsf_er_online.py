"""The event simulator of online TSF-ER (seed 004 Sec. 5-6): Algorithm 2 over time, JCT and metrics.

One job per user: user ``j`` arrives at ``arrival[j]`` with ``floor(n_j)`` tasks of length
``duration[j]``.  Time is exact (``Fraction``).  Simultaneous events form one batch: completions,
then arrivals, then -- at a reallocation boundary ``t = k * slot`` with activity in the slot --
Reallocation, else one AllocateFromQueues (``mechanisms.paper.external_resources.online.Scheduler``).  A suspended
task keeps its progress and pays ``overhead``.  JCT factors compare with the same simulator run for
the user alone; time-averaged metrics weight each snapshot's ``simulation.metrics`` by its duration.
Exact semantics: docs/seed004-mechanisms.md, "Online TSF-ER (Algorithm 2)".
"""
from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional, Sequence

from mechanisms.paper.external_resources.online import SETTING, Scheduler, task_count
from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.instances import parse_environment
from mechverify.numbers import InstanceError, to_fraction

from .metrics import domination_factor, jct_factor, min_ef_sat, min_si_sat, utilization

__all__ = ["simulate", "SimResult", "jct_factors", "snapshot_allocation", "time_averaged_metrics",
           "synthetic_workload"]


@dataclass
class SimResult:
    """Outcome of :func:`simulate` (times are ``Fraction``)."""

    env: Environment
    arrival: tuple
    duration: tuple
    n_tasks: tuple
    completion: list  # per user: time its last task finished
    jct: list  # completion - arrival
    timeline: list  # per user: [(t, running, waiting, done)] at every change
    snapshots: list = field(default_factory=list)  # [(t, running matrix [j][s], done[j])] after every batch
    reallocations: int = 0
    suspensions: int = 0
    batches: int = 0
    steps: int = 0
    makespan: Fraction = Fraction(0)


def _validate_times(env: Environment, arrival, duration, slot, overhead):
    J = env.n_users
    if len(arrival) != J:
        raise InstanceError(f"arrival: expected {J} times (one per user), got {len(arrival)}")
    if len(duration) != J:
        raise InstanceError(f"duration: expected {J} task lengths (one per user), got {len(duration)}")
    arr = tuple(to_fraction(v, f"arrival[{j}]") for j, v in enumerate(arrival))
    dur = tuple(to_fraction(v, f"duration[{j}]") for j, v in enumerate(duration))
    for j in range(J):
        if arr[j] < 0:
            raise InstanceError(f"arrival[{j}]: must be >= 0 (got {arrival[j]!r})")
        if dur[j] <= 0:
            raise InstanceError(f"duration[{j}]: must be > 0 (got {duration[j]!r})")
    sl = None if slot is None else to_fraction(slot, "slot")
    if sl is not None and sl <= 0:
        raise InstanceError(f"slot: must be > 0 or None (got {slot!r})")
    ov = to_fraction(overhead, "overhead")
    if ov < 0:
        raise InstanceError(f"overhead: must be >= 0 (got {overhead!r})")
    return arr, dur, sl, ov


def simulate(env: Environment, arrival: Sequence[Any], duration: Sequence[Any], slot: Any = None,
             overhead: Any = 0, record: bool = True) -> SimResult:
    """Event-driven run of Algorithm 2 (see the module docstring for the exact semantics).

    ``env.tasks[j]`` is user ``j``'s task count (``floor``; must be finite); ``arrival[j]`` its arrival
    time, ``duration[j]`` the execution time of each of its tasks; ``slot`` the reallocation slot length
    (``None``: never reallocate); ``overhead`` the suspend/resume cost added to a suspended task's
    remaining work.  ``record=False`` skips snapshots (faster; used for standalone runs).
    """
    SETTING.check(env, "tsf-er-online simulator")
    arr, dur, sl, ov = _validate_times(env, arrival, duration, slot, overhead)
    J, S = env.n_users, env.n_servers
    n_tasks = []
    for j in range(J):
        n = task_count(env, j)
        if n is None:
            raise InstanceError(f"users[{j}].tasks: the simulator needs a finite task count for {env.users[j]!r}")
        n_tasks.append(n)
    empty = Scheduler(env)
    for j in range(J):
        if n_tasks[j] and (empty.unit[j] is None or not empty.ext_fits(j)
                           or not any(empty.server_fits(j, s) for s in range(S))):
            raise InstanceError(f"users[{j}].demand: one task of {env.users[j]!r} fits on no server even when the "
                                f"cluster is empty, so it could never finish")
    sch = Scheduler(env)
    remaining: dict[tuple[int, int], Fraction] = {}  # work left of suspended tasks
    finish: dict[tuple[int, int], Fraction] = {}  # running task -> finish time
    gen: dict[tuple[int, int], int] = {}  # bumps on suspension (lazy heap deletion)
    heap: list = []
    done = [0] * J
    completion: list = [None] * J
    timeline: list = [[] for _ in range(J)]
    arrivals = sorted(range(J), key=lambda j: (arr[j], j))
    ai = 0
    for j in range(J):
        if n_tasks[j] == 0:
            completion[j] = arr[j]
    res = SimResult(env, arr, dur, tuple(n_tasks), completion, [None] * J, timeline)
    dirty = False
    serial = 0
    last_state = [None] * J
    t = Fraction(0)

    def note(j: int, now: Fraction) -> None:
        st = (sum(sch.count[j]), len(sch.queue[j]), done[j])
        if st != last_state[j]:
            last_state[j] = st
            timeline[j].append((now,) + st)

    while True:
        cand = []
        while heap and gen.get((heap[0][2], heap[0][3])) != heap[0][1]:
            heapq.heappop(heap)  # stale entry of a suspended (or finished) task
        if heap:
            cand.append(heap[0][0])
        while ai < J and n_tasks[arrivals[ai]] == 0:
            j0 = arrivals[ai]
            note(j0, arr[j0])
            ai += 1
        if ai < J:
            cand.append(arr[arrivals[ai]])
        if sl is not None and dirty:
            cand.append((t // sl + 1) * sl)
        if not cand:
            break
        t = min(cand)
        res.batches += 1
        touched = set()
        # 1. task completions (TaskDeparture, lines 1-4)
        while heap and heap[0][0] == t:
            _, g, j, task = heapq.heappop(heap)
            if gen.get((j, task)) != g:
                continue
            del gen[(j, task)]
            del finish[(j, task)]
            sch.release(j, task)
            done[j] += 1
            touched.add(j)
            dirty = True
            if done[j] == n_tasks[j]:
                completion[j] = t
        # 2. arrivals (TaskArrival, lines 1-4)
        while ai < J and arr[arrivals[ai]] == t:
            j = arrivals[ai]
            ai += 1
            if n_tasks[j]:
                sch.enqueue(j, range(n_tasks[j]))
                touched.add(j)
                dirty = True
        # 3. Reallocation at a slot boundary with activity, else AllocateFromQueues
        if sl is not None and dirty and t % sl == 0:
            for j, task, _s in sch.suspend_all():
                remaining[(j, task)] = finish.pop((j, task)) - t + ov
                del gen[(j, task)]  # not running any more: its heap entry is stale
                res.suspensions += 1
                touched.add(j)
            res.reallocations += 1
            dirty = False
        for j, task, _s in sch.allocate_from_queues():
            key = (j, task)
            work = remaining.pop(key, dur[j])
            finish[key] = t + work
            serial += 1  # globally unique, so a stale heap entry can never look valid again
            gen[key] = g = serial
            heapq.heappush(heap, (finish[key], g, j, task))
            touched.add(j)
        for j in sorted(touched):
            note(j, t)
        if record:
            res.snapshots.append((t, tuple(tuple(r) for r in sch.count), tuple(done)))
    res.steps = sch.steps
    res.jct = [None if completion[j] is None else completion[j] - arr[j] for j in range(J)]
    res.makespan = max((c for c in completion if c is not None), default=Fraction(0))
    unfinished = [j for j in range(J) if completion[j] is None]
    if unfinished:  # cannot happen after the fit check; fail loudly rather than report nonsense
        raise RuntimeError(f"simulation ended with unfinished users {unfinished}")
    return res


def jct_factors(res: SimResult, slot: Any = None, overhead: Any = 0) -> list:
    """Per user ``standalone JCT / JCT`` (seed 004 Sec. 6.2); standalone = same simulator, user alone.

    ``slot`` and ``overhead`` must be those of the run that produced ``res``."""
    out = []
    for j in range(res.env.n_users):
        alone = simulate(res.env.restrict(users=[j]), [res.arrival[j]], [res.duration[j]], slot, overhead,
                         record=False)
        out.append(jct_factor(alone.jct[0], res.jct[j]))
    return out


def snapshot_allocation(res: SimResult, i: int, exact: bool = True) -> Optional[Allocation]:
    """The allocation in force after batch ``i``: users present, ``n_j`` = unfinished tasks.

    ``exact=False`` gives a float task matrix (same numbers; the metrics then run in floats)."""
    t, counts, done = res.snapshots[i]
    env = res.env
    present = [j for j in range(env.n_users) if res.arrival[j] <= t and done[j] < res.n_tasks[j]]
    if not present:
        return None
    sub = env.restrict(users=present)
    sub = Environment(resources=sub.resources, servers=sub.servers, capacity=sub.capacity, users=sub.users,
                      demand=sub.demand, external=sub.external, external_capacity=sub.external_capacity,
                      external_demand=sub.external_demand, weight=sub.weight, eligible=sub.eligible,
                      tasks=tuple(Fraction(res.n_tasks[j] - done[j]) for j in present))
    conv = Fraction if exact else float
    x = tuple(tuple(conv(counts[j][s]) for s in range(env.n_servers)) for j in present)
    return Allocation(sub, x, "tsf-er-online", exact)


def time_averaged_metrics(res: SimResult, domination: bool = True, exact_lp: bool = False) -> dict[str, Any]:
    """Time-weighted averages over the snapshots with at least one user present (seed Sec. 6.3).

    Returns ``min_si_sat``, ``min_ef_sat``, ``domination_factor`` (fractional, if ``domination``),
    ``utilization`` per resource, ``time`` (the weight) and ``snapshots`` (how many were averaged).
    Each snapshot's SI-SAT, EF-SAT and utilisation are exact (``Fraction``; with this model's
    rational data that is also faster than mixing floats into it); the domination LP is solved in
    floats unless ``exact_lp``.  The averages are floats.
    """
    acc: dict[str, Any] = {"min_si_sat": 0.0, "min_ef_sat": 0.0}
    if domination:
        acc["domination_factor"] = 0.0
    util: dict[str, float] = {}
    total_t, used = Fraction(0), 0
    snaps = res.snapshots
    for i in range(len(snaps)):
        t0 = snaps[i][0]
        t1 = snaps[i + 1][0] if i + 1 < len(snaps) else t0
        w = t1 - t0
        if w <= 0:
            continue
        a = snapshot_allocation(res, i)
        if a is None:
            continue
        used += 1
        total_t += w
        fw = float(w)
        acc["min_si_sat"] += fw * float(min_si_sat(None, a))
        acc["min_ef_sat"] += fw * float(min_ef_sat(None, a))
        if domination:
            acc["domination_factor"] += fw * float(domination_factor(None, a, exact=exact_lp))
        for k, v in utilization(None, a).items():
            util[k] = util.get(k, 0.0) + fw * float(v)
    T = float(total_t) or 1.0
    out = {k: v / T for k, v in acc.items()}
    out["utilization"] = {k: v / T for k, v in util.items()}
    out["time"] = total_t
    out["snapshots"] = used
    return out


# ---------------------------------------------------------------------- synthetic workloads
def synthetic_workload(seed: int, total_tasks: int = 1000, n_users: int = 40, rho: Any = Fraction(7, 10),
                       bandwidth: Any = Fraction(1, 4), mean_interarrival: int = 60, max_duration: int = 600):
    """A seeded workload shaped like seed 004 Sec. 6.2 (returns ``(env, arrival, duration)``).

    Three servers with (CPU, memory) capacities ``(1, 1)``, ``(1 + rho, 1 - rho)``, ``(1 - rho, 1 + rho)``
    (aggregate 3 each, Sec. 6.2), one external resource "bw" of capacity ``bandwidth``.  ``n_users`` jobs
    (one per user) whose task counts sum to ``total_tasks``; per-task CPU and memory demands in
    ``{1/40, ..., 10/40}``; bandwidth per task proportional to CPU demand with a Gamma(4, 1/200)-shaped
    random factor rounded to a rational (Sec. 6.2 synthesises bit rates from CPU demand this way; the
    units here are synthetic); arrivals with integer exponential inter-arrival times; integer task
    lengths in ``[10, max_duration]`` seconds.  Deterministic for a seed (``random.Random(seed)``).
    """
    if total_tasks < n_users or n_users < 1:
        raise InstanceError(f"total_tasks: need at least one task per user (got {total_tasks} for {n_users} users)")
    rng = random.Random(seed)
    rho = to_fraction(rho, "rho")
    if not 0 <= rho < 1:
        raise InstanceError(f"rho: must be in [0, 1) (got {rho})")
    # task counts: a random composition of total_tasks into n_users positive parts
    cuts = sorted(rng.sample(range(1, total_tasks), n_users - 1))
    counts = [b - a for a, b in zip([0] + cuts, cuts + [total_tasks])]
    users, t = [], 0
    arrival, duration = [], []
    for j in range(n_users):
        cpu = Fraction(rng.randint(1, 10), 40)
        mem = Fraction(rng.randint(1, 10), 40)
        x = rng.gammavariate(4, 1 / 200)  # shape 4, rate 200 (seed: [54])
        bw = cpu * Fraction(max(1, round(x * 4000)), 800)  # ~ cpu * 0.1 on average, exact rational
        users.append({"name": f"u{j}", "demand": [cpu, mem], "external_demand": [bw], "tasks": counts[j]})
        arrival.append(t)
        t += max(0, round(rng.expovariate(1 / mean_interarrival)))
        duration.append(rng.randint(10, max_duration))
    env = parse_environment({
        "resources": ["cpu", "mem"],
        "servers": [{"name": "s1", "capacity": [1, 1]}, {"name": "s2", "capacity": [1 + rho, 1 - rho]},
                    {"name": "s3", "capacity": [1 - rho, 1 + rho]}],
        "external": [{"name": "bw", "capacity": to_fraction(bandwidth, "bandwidth")}],
        "users": users,
    })
    return env, arrival, duration
