"""Online TSF-ER with indivisible tasks (seed 004 Sec. 5, Algorithm 2) and its event simulator.

Algorithm 2 (Meskar & Liang) keeps, per user ``j``, a waiting-task queue and the *active task share*
``s_j = (running tasks of j) / eta_j`` with ``eta_j`` of eq. (6)::

    eta_j = min{ sum_s min_{r: d_j,r > 0} c_s,r / d_j,r ,  min_k c_er,k / d_j,er,k }

(the seed normalises capacities to 1, so its ``1/d_j,er`` is ``c_er/d_j,er`` here; several external
resources give the inner ``min_k``, Sec. 8; ``eta_j`` is not bounded by ``n_j``).  Weights (Sec. 8:
"normalizing the number of allocated tasks of a user with respect to w_j eta_j"): one task is worth
``1/(w_j eta_j)`` of task share; with equal weights this is the seed's ``1/eta_j``.  Routines:

* ``TaskArrival``   -- append the arrived tasks to their users' queues; ``AllocateFromQueues``.
* ``TaskDeparture`` -- release the finished tasks' resources, ``s_j -= 1/(w_j eta_j)``; ``AllocateFromQueues``.
* ``Reallocation``  -- suspend every running task back into its queue, ``s_j := 0``, release
  everything; ``AllocateFromQueues``.
* ``AllocateFromQueues`` -- while some user has a waiting task that fits the available resources
  (``J_feas``): line 3 ``J_min = argmin s_j``; line 4 ``j* = argmin_{J_min} 1/(w_j eta_j)`` (the user
  whose share grows least by one task); line 5 the machines where one task of ``j*`` fits; line 6 best
  fit ``m = argmin_s sum_r (a_s,r - d_j*,r)^2``; place one task of ``j*`` on ``m``;
  ``s_j* += 1/(w_j* eta_j*)``; recompute ``J_feas`` (line 10).

Decisions the paper leaves open (all exact ``Fraction`` arithmetic, so every choice is deterministic):

* Line 6 is written in the seed's normalised units (every computational resource's pooled capacity is 1),
  so ``a_s,r`` and ``d_j,r`` are divided by the pooled capacity ``C_r = sum_s c_s,r`` (resources with
  ``C_r = 0`` are skipped; nobody can demand them).  The external resource is the same for every
  server, so it does not enter line 6; it does enter "fits" (line 1/5/10).
* Ties: line 4 ties (equal ``s_j`` and ``eta_j``) go to the lowest user index, line 6 ties to the
  lowest server index.  Within a user's queue the task with the lowest index is taken first
  (suspended tasks keep their index, so they are resumed before fresh ones).
* ``eta_j`` is ``mechanisms.tsf_er.eta`` (the same function ``tsf-er`` uses).
* ``eta_j = inf`` (a task that uses nothing) falls back to ``n_j`` (``mechanisms/common.py``
  ``fallback_normaliser``, as every mechanism of the project); ``eta_j = 0``: ``j`` can run nothing.

Static mechanism ``tsf-er-online`` (registered below): every user's ``floor(n_j)`` tasks are waiting at
time 0 (``n_j = None``: an unbounded queue) and the allocation is the state after one
``AllocateFromQueues`` from an empty cluster (= one ``Reallocation``).  Setting: indivisible tasks,
external resources, task bounds and weights (Sec. 8); no placement constraints or per-server demands
(seed 004 defines neither) -- the same domain as ``tsf-er``.  Seed 004 states no property for the online algorithm (Sec. 6.3: "In the
indivisible task model, no allocation rule can satisfy the fairness and efficiency properties"), so it
carries no claims; the verifier reports what holds.

Simulator (:func:`simulate`).  One job per user (seed Sec. 6.2: "we consider each job ... as a distinct
user"): user ``j`` arrives at ``arrival[j]`` with ``floor(n_j)`` tasks of length ``duration[j]`` each.
Time is exact (``Fraction``).  All events at the same instant form one batch, processed as: task
completions (``TaskDeparture`` without allocating), arrivals (``TaskArrival`` without allocating), then
-- at a reallocation boundary ``t = k * slot`` with an arrival or departure in ``((k-1) slot, k slot]``
(the seed: no arrival or departure in the slot, no reallocation) -- ``Reallocation``, else one
``AllocateFromQueues``.  Batching simultaneous events is what the routines' set-valued inputs
(``J_arr``, ``J_dep``) express.  A suspended task keeps its progress and pays ``overhead`` (seed: 250 ms
suspend/resume) added to its remaining work.  ``slot=None`` never reallocates.  A user whose single task
fits on no empty server is rejected (it could never finish).

JCT (seed Sec. 6.1): completion of the user's last task minus its arrival.  Standalone JCT
(:func:`jct_factors`): the same simulator, same settings, the user alone in the cluster ("its JCT if it
had received all resources of all servers").  Time-averaged MIN-SI-SAT, MIN-EF-SAT, domination factor and
utilisation (:func:`time_averaged_metrics`) are computed on snapshots: between two batches the
allocation is constant; the snapshot environment holds the users present (arrived, not finished) with
``n_j`` = their unfinished tasks, the allocation is their running tasks; each snapshot is weighted by its
duration (seed Sec. 6.3 "average ... over the simulation time").
"""
from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify import metrics as M
from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError, to_fraction

from .common import fallback_normaliser
from .registry import Setting, register
from .tsf_er import eta  # seed 004 eq. (6), the one definition shared with tsf-er (Algorithm 1)

__all__ = ["eta", "Scheduler", "tsf_er_online", "simulate", "SimResult", "jct_factors",
           "time_averaged_metrics", "synthetic_workload", "SETTING"]

INF = math.inf
MAX_STEPS = 2_000_000

#: ``tsf-er``'s domain (``SEED004_SETTING``) with indivisible tasks.
SETTING = Setting(placement=False, external=True, bounds=True, weights=True, server_demand=False,
                  divisible=False)


def _task_share_unit(env: Environment, j: int) -> Optional[Fraction]:
    """``1/(w_j eta_j)`` (one task's share), or ``None`` when ``j`` can run nothing."""
    e = eta(env, j)
    if isinstance(e, float):  # inf
        e = fallback_normaliser(env, j)
    if e is None or e == 0:
        return None
    return 1 / (env.weight[j] * Fraction(e))


class Scheduler:
    """The state of Algorithm 2 on one cluster: available resources, queues, running tasks, shares.

    Queues hold task indices (a min-heap per user, lowest index first); ``unbounded[j]`` marks an
    infinite queue (static mechanism with ``n_j = None``), whose fresh indices are generated on demand.
    """

    def __init__(self, env: Environment) -> None:
        self.env = env
        J, S, R = env.n_users, env.n_servers, env.n_resources
        self.avail = [list(env.capacity[s]) for s in range(S)]
        self.ext_avail = list(env.external_capacity)
        self.unit = [_task_share_unit(env, j) for j in range(J)]
        self.eta = [None if u is None else 1 / (u * env.weight[j]) for j, u in enumerate(self.unit)]
        self.share = [Fraction(0)] * J
        self.queue: list[list[int]] = [[] for _ in range(J)]
        self.unbounded = [False] * J
        self.next_fresh = [0] * J
        self.running: dict[tuple[int, int], int] = {}  # (j, task) -> server
        self.count = [[0] * S for _ in range(J)]  # running tasks per server
        pooled = env.total_capacity()
        self._norm_r = [r for r in range(R) if pooled[r] > 0]
        self._pooled = pooled
        self.steps = 0

    # ------------------------------------------------------------------ queue helpers
    def waiting(self, j: int) -> bool:
        return self.unbounded[j] or bool(self.queue[j])

    def n_waiting(self, j: int) -> Any:
        return INF if self.unbounded[j] else len(self.queue[j])

    def enqueue(self, j: int, tasks: Sequence[int]) -> None:
        for t in tasks:
            heapq.heappush(self.queue[j], t)

    def _pop(self, j: int) -> int:
        if self.queue[j]:
            return heapq.heappop(self.queue[j])
        t = self.next_fresh[j]
        self.next_fresh[j] += 1
        return t

    # ------------------------------------------------------------------ resources
    def _ext_fits(self, j: int) -> bool:
        return all(self.ext_avail[k] >= dk for k, dk in enumerate(self.env.external_demand[j]))

    def _server_fits(self, j: int, s: int) -> bool:
        if s not in self.env.eligible[j]:
            return False
        a = self.avail[s]
        return all(a[r] >= dr for r, dr in enumerate(self.env.d(j, s)))

    def _fit_score(self, j: int, s: int) -> Fraction:
        """Line 6: ``sum_r (a_s,r - d_j,r)^2`` in units of the pooled capacity."""
        a, d, C = self.avail[s], self.env.d(j, s), self._pooled
        return sum((((a[r] - d[r]) / C[r]) ** 2 for r in self._norm_r), Fraction(0))

    def _take(self, j: int, s: int, sign: int) -> None:
        d = self.env.d(j, s)
        a = self.avail[s]
        for r, dr in enumerate(d):
            if dr:
                a[r] -= sign * dr
        for k, dk in enumerate(self.env.external_demand[j]):
            if dk:
                self.ext_avail[k] -= sign * dk

    # ------------------------------------------------------------------ the routines of Algorithm 2
    def release(self, j: int, task: int) -> int:
        """TaskDeparture lines 3-4 for one task (no allocation): free its resources, ``s_j -= 1/(w_j eta_j)``."""
        s = self.running.pop((j, task))
        self._take(j, s, -1)
        self.count[j][s] -= 1
        self.share[j] -= self.unit[j]
        return s

    def suspend_all(self) -> list[tuple[int, int, int]]:
        """Reallocation lines 1-3: every running task back to its queue, shares zero, resources free."""
        out = [(j, t, s) for (j, t), s in sorted(self.running.items())]
        for j, t, s in out:
            heapq.heappush(self.queue[j], t)
        self.running.clear()
        self.avail = [list(self.env.capacity[s]) for s in range(self.env.n_servers)]
        self.ext_avail = list(self.env.external_capacity)
        self.share = [Fraction(0)] * self.env.n_users
        self.count = [[0] * self.env.n_servers for _ in range(self.env.n_users)]
        return out

    def allocate_from_queues(self) -> list[tuple[int, int, int]]:
        """AllocateFromQueues; returns the placements ``(j, task, server)`` in order."""
        env = self.env
        J, S = env.n_users, env.n_servers
        fits: dict[int, set[int]] = {}
        for j in range(J):  # line 1
            if self.unit[j] is None or not self.waiting(j) or not self._ext_fits(j):
                continue
            fs = {s for s in range(S) if self._server_fits(j, s)}
            if fs:
                fits[j] = fs
        placed = []
        while fits:  # line 2
            self.steps += 1
            if len(placed) >= MAX_STEPS:
                raise InstanceError(f"instance: tsf-er-online would run more than {MAX_STEPS} whole tasks at once; "
                                    f"give users finite 'tasks' or scale demands up")
            # lines 3-4: lowest active task share, then lowest 1/(w_j eta_j), then lowest index
            j = min(fits, key=lambda u: (self.share[u], self.unit[u], u))
            # lines 5-6: best-fit machine among those where one task fits
            m = min(fits[j], key=lambda s: (self._fit_score(j, s), s))
            task = self._pop(j)  # line 7
            self.running[(j, task)] = m
            self.count[j][m] += 1
            self._take(j, m, +1)  # line 8
            self.share[j] += self.unit[j]  # line 9
            placed.append((j, task, m))
            # line 10: only server m and the external resources changed
            ext_used = any(env.external_demand[j])
            for u in list(fits):
                fs = fits[u]
                if m in fs and not self._server_fits(u, m):
                    fs.discard(m)
                if not fs or not self.waiting(u) or (ext_used and not self._ext_fits(u)):
                    del fits[u]
        return placed


# ---------------------------------------------------------------------- the static mechanism
def _task_count(env: Environment, j: int) -> Optional[int]:
    n = env.tasks[j]
    return None if n is None else math.floor(n)


@register("tsf-er-online", "Online TSF-ER (Algorithm 2): whole tasks, lowest task share first, best-fit server",
          SETTING, (), source="004 Sec. 5 Algorithm 2",
          notes="Static audit form: all floor(n_j) tasks waiting at time 0, state after AllocateFromQueues. "
                "Seed 004 claims no property for it (Sec. 6.3).")
def tsf_er_online(env: Environment, exact: bool = False) -> Allocation:
    sch = Scheduler(env)
    for j in range(env.n_users):
        n = _task_count(env, j)
        if n is None:
            sch.unbounded[j] = True
        else:
            sch.enqueue(j, range(n))
    sch.allocate_from_queues()
    x = tuple(tuple(Fraction(v) for v in row) for row in sch.count)
    return Allocation(env, x, "tsf-er-online", True,
                      {"steps": sch.steps, "eta": [None if e is None else e for e in sch.eta]})


# ---------------------------------------------------------------------- the simulator
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
        n = _task_count(env, j)
        if n is None:
            raise InstanceError(f"users[{j}].tasks: the simulator needs a finite task count for {env.users[j]!r}")
        n_tasks.append(n)
    empty = Scheduler(env)
    for j in range(J):
        if n_tasks[j] and (empty.unit[j] is None or not empty._ext_fits(j)
                           or not any(empty._server_fits(j, s) for s in range(S))):
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
        out.append(M.jct_factor(alone.jct[0], res.jct[j]))
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
        acc["min_si_sat"] += fw * float(M.min_si_sat(None, a))
        acc["min_ef_sat"] += fw * float(M.min_ef_sat(None, a))
        if domination:
            acc["domination_factor"] += fw * float(M.domination_factor(None, a, exact=exact_lp))
        for k, v in M.utilization(None, a).items():
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
    from mechverify.model import parse_environment

    env = parse_environment({
        "resources": ["cpu", "mem"],
        "servers": [{"name": "s1", "capacity": [1, 1]}, {"name": "s2", "capacity": [1 + rho, 1 - rho]},
                    {"name": "s3", "capacity": [1 - rho, 1 + rho]}],
        "external": [{"name": "bw", "capacity": to_fraction(bandwidth, "bandwidth")}],
        "users": users,
    })
    return env, arrival, duration
