"""Online TSF-ER with indivisible tasks (seed 004 Sec. 5, Algorithm 2): the scheduler and its static form.

:class:`Scheduler` holds Algorithm 2's state (available resources, queues, running tasks, active task
shares ``s_j``) and its routines (TaskDeparture, Reallocation, AllocateFromQueues: lowest task share
first, then lowest ``1/(w_j eta_j)``, best-fit server by line 6).  Every number is a ``Fraction``
and every tie has a fixed rule, so the result is exact and deterministic.  ``tsf-er-online`` (static
audit form) is the state after one AllocateFromQueues with all ``floor(n_j)`` tasks waiting (an
unbounded queue for ``n_j = None``); seed 004 claims no property for it (Sec. 6.3).  The event
simulator is ``simulation.tsf_er_online``.  Decisions the paper leaves open:
docs/seed004-mechanisms.md, "Online TSF-ER (Algorithm 2)".
"""
from __future__ import annotations

import heapq
import math
from fractions import Fraction
from typing import Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment

from ..filling import fill_whole_tasks
from ..normalisers import eta, finite_normaliser
from ...core.registry import Setting, register
from ...core.z3spec import Z3Spec

__all__ = ["Scheduler", "tsf_er_online", "allocate_from_queues", "task_count", "SETTING", "MAX_STEPS"]

MAX_STEPS = 2_000_000

#: ``tsf-er``'s domain (``SEED004_SETTING``) with indivisible tasks.
SETTING = Setting(placement=False, external=True, bounds=True, weights=True, server_demand=False,
                  divisible=False)


def _task_share_unit(env: Environment, j: int) -> Optional[Fraction]:
    """``1/(w_j eta_j)`` (one task's share), or ``None`` when ``j`` can run nothing."""
    e = finite_normaliser(env, eta(env, j), j)
    return None if e is None else 1 / (env.weight[j] * e)


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
        """``j`` has a waiting task."""
        return self.unbounded[j] or bool(self.queue[j])

    def enqueue(self, j: int, tasks: Sequence[int]) -> None:
        """TaskArrival lines 1-4 (no allocation): the tasks join ``j``'s queue."""
        for t in tasks:
            heapq.heappush(self.queue[j], t)

    def _pop(self, j: int) -> int:
        if self.queue[j]:
            return heapq.heappop(self.queue[j])
        t = self.next_fresh[j]
        self.next_fresh[j] += 1
        return t

    # ------------------------------------------------------------------ resources
    def ext_fits(self, j: int) -> bool:
        """One task of ``j`` fits the available external resources."""
        return all(self.ext_avail[k] >= dk for k, dk in enumerate(self.env.external_demand[j]))

    def server_fits(self, j: int, s: int) -> bool:
        """``j`` may run at ``s`` and one task fits its available resources."""
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

    def hold(self, held: Sequence[Sequence[int]]) -> None:
        """Load ``held[j][s]`` whole tasks of each user as running (ids ``-1, -2, ...``: they are not queued): their
        resources taken, ``s_j`` raised by ``1/(w_j eta_j)`` each -- the state AllocateFromQueues starts from."""
        for j, row in enumerate(held):
            k = 0
            for s, c in enumerate(row):
                for _ in range(int(c)):
                    k += 1
                    self.running[(j, -k)] = s
                    self.count[j][s] += 1
                    self._take(j, s, +1)
                    self.share[j] += self.unit[j]

    def allocate_from_queues(self) -> list[tuple[int, int, int]]:
        """AllocateFromQueues; returns the placements ``(j, task, server)`` in order."""
        env = self.env
        J, S = env.n_users, env.n_servers
        fits: dict[int, set[int]] = {}
        for j in range(J):  # line 1
            if self.unit[j] is None or not self.waiting(j) or not self.ext_fits(j):
                continue
            fs = {s for s in range(S) if self.server_fits(j, s)}
            if fs:
                fits[j] = fs
        placed: list[tuple[int, int, int]] = []

        def place(j: int, m: int) -> None:
            task = self._pop(j)  # line 7
            self.running[(j, task)] = m
            self.count[j][m] += 1
            self._take(j, m, +1)  # line 8
            self.share[j] += self.unit[j]  # line 9
            placed.append((j, task, m))

        def user_open(u: int, last: int) -> bool:  # line 10: only server m and the external resources changed
            return self.waiting(u) and (not any(env.external_demand[last]) or self.ext_fits(u))

        # line 2 loop; lines 3-4: lowest active task share, then lowest 1/(w_j eta_j), then lowest index;
        # lines 5-6: best-fit machine among those where one task fits (ties: lowest index)
        self.steps += fill_whole_tasks(
            fits, lambda u: (self.share[u], self.unit[u], u), lambda j, s: (self._fit_score(j, s), s), place,
            self.server_fits, user_open, MAX_STEPS,
            f"instance: tsf-er-online would run more than {MAX_STEPS} whole tasks at once; "
            f"give users finite 'tasks' or scale demands up")
        return placed


# ---------------------------------------------------------------------- the static mechanism
def task_count(env: Environment, j: int) -> Optional[int]:
    """Whole tasks of ``j``: ``floor(n_j)``, ``None`` when unbounded."""
    n = env.tasks[j]
    return None if n is None else math.floor(n)


def allocate_from_queues(env: Environment, held: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """The mechanism's own rule for free capacity (``Mechanism.task_rule``): with ``held`` whole tasks running and
    ``floor(n_j)`` unfinished (``n_j = None``: an unbounded queue), the others waiting, one AllocateFromQueues;
    the tasks it starts as ``(user, server)`` in order.  From nothing held it is Algorithm 2's Reallocation."""
    sch = Scheduler(env)
    sch.hold(held)
    for j in range(env.n_users):
        n = task_count(env, j)
        if n is None:
            sch.unbounded[j] = True
        else:
            sch.enqueue(j, range(sum(int(c) for c in held[j]), n))
    return [(j, s) for j, _task, s in sch.allocate_from_queues()]


@register("tsf-er-online", "Online TSF-ER (Algorithm 2): whole tasks, lowest task share first, best-fit server",
          SETTING, (), source="004 Sec. 5 Algorithm 2",
          notes="Static audit form: all floor(n_j) tasks waiting at time 0, state after AllocateFromQueues. "
                "Seed 004 claims no property for it (Sec. 6.3).",
          z3=Z3Spec.none("online indivisible algorithm: not encoded"), task_rule=allocate_from_queues)
def tsf_er_online(env: Environment, exact: bool = False) -> Allocation:
    """Every user's ``floor(n_j)`` tasks waiting at time 0; the state after one AllocateFromQueues."""
    sch = Scheduler(env)
    for j in range(env.n_users):
        n = task_count(env, j)
        if n is None:
            sch.unbounded[j] = True
        else:
            sch.enqueue(j, range(n))
    sch.allocate_from_queues()
    x = tuple(tuple(Fraction(v) for v in row) for row in sch.count)
    return Allocation(env, x, "tsf-er-online", True,
                      {"steps": sch.steps, "eta": [None if e is None else e for e in sch.eta]})
