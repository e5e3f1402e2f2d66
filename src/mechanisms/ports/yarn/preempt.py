"""``yarn-drf-preempt``: YARN FairScheduler over time -- the ``yarn-drf`` order between events, plus upstream's
starvation clocks and preemption at events.

Source (read, not copied; our code follows the semantics), apache/hadoop, in
``hadoop-yarn-server-resourcemanager/src/main/java/org/apache/hadoop/yarn/server/resourcemanager/scheduler/fair/``
(``.../fair/`` below):

* ``FSLeafQueue.java`` @ 6e953eb6a3dfcb8da19470e98ffcf1d43bf1887c (the port's pin): ``updateStarvedApps``
  (fair-share starvation of the apps with pending demand in the policy's ``TreeSet`` order, stopping at the first
  app that is not starved; then the queue's min-share starvation less the fair-share starvation found, handed
  out to the apps in the same order by ``updateStarvedAppsMinshare``), ``minShareStarvation`` (desired =
  ``Resources.min(calculator, cluster, minShare, demand)``; starvation = desired - usage, a plain subtraction; the
  clock ``lastTimeAtMinShare`` restarts whenever that difference is the zero vector; none before
  ``minSharePreemptionTimeout`` has passed), ``updateDemand`` (the apps' demands summed, capped by maxResources);
* ``FSAppAttempt.java`` (the revision our index returned for this path; its hash was not resolved by our tools --
  the semantics below are those of ``fairShareStarvation``, ``isUsageBelowShare``, ``canContainerBePreempted``,
  ``getStarvedResourceRequests``, ``getPendingDemand``): an app is starved when its usage is strictly below
  ``fairDemand = componentwiseMin(fairShare x fairSharePreemptionThreshold, demand)`` by the DRF calculator's
  single-type comparison (the largest share of the cluster); its clock ``lastTimeAtFairShare`` starts at its
  start time and restarts at every check where it is not starved; after ``fairSharePreemptionTimeout`` its
  starvation is ``fairDemand - usage`` (non-negative); a container may be preempted from an app only if the app's
  usage after losing it (and the containers already chosen or marked) is not below its fair share;
* ``FSPreemptionThread.java`` @ 049279bb66b036b4767fe6a0283a6f334ac91440: per starved app, per container of its
  starved request, ``identifyContainersToPreemptOnNode`` -- the node's running containers not yet marked, each
  added when its app allows it, until the request fits in the node's unallocated resources plus the added
  containers (whole containers; none when it never fits); then the containers are killed after
  ``waitTimeBeforeKill`` and the node's freed resources are kept for the starved app;
* ``FSStarvedApps.java`` @ 10468529a9b858bd945e7ecb063c9c1438efa474: the starved apps in a
  ``PriorityBlockingQueue`` whose comparator puts ``app1`` first when its starvation fits in ``app2``'s (else
  second) -- we reproduce ``java.util.PriorityQueue``'s binary heap (sift up on offer, sift down on poll);
* ``FairScheduler.java`` (``update``: demands, then fair shares from the root, then, when
  ``shouldAttemptPreemption`` -- preemption enabled and the cluster utilisation, the larger of the allocated
  memory and vcores fractions, strictly above ``preemption.cluster-utilization-threshold`` -- every leaf queue's
  ``updateStarvedApps``); ``policies/ComputeFairShares.java`` (a schedulable's fair share per resource type:
  ``clamp(weight x R, minShare, maxShare)`` with R found by binary search so that the shares sum to the parent's
  share, capped by the sum of max shares; queues without runnable apps get 0);
  ``.../util/resource/DominantResourceCalculator.java`` @ 0f01206e158aa865fe412a37d97bf91e790a03b9
  (``compare``: single type = the largest share; otherwise, for two resources, the dominant then the other share,
  for more, the shares sorted and compared from the largest, skipping infinite ones);
* defaults: ``AllocationFileLoaderService`` -- ``defaultFairSharePreemptionThreshold = 0.5f``,
  ``defaultFairSharePreemptionTimeout = Long.MAX_VALUE``, ``defaultMinSharePreemptionTimeout = Long.MAX_VALUE``;
  ``FairSchedulerConfiguration`` -- ``DEFAULT_PREEMPTION = false``, ``DEFAULT_PREEMPTION_THRESHOLD = 0.8f``
  (cluster utilisation).  These are :class:`Config`'s defaults: with them upstream never preempts.  The
  registered ``yarn-drf-preempt`` turns preemption on with both timeouts 1 (in the execution's time unit) -- our
  configuration, named in ``list``.

Our model (conventions; docs/fidelity.md)
-----------------------------------------
* Users are apps, queues are ``FSQueue``s, as in ``yarn-drf`` (:mod:`mechanisms.ports.yarn.drf`); users placed
  directly at the root form one more leaf (upstream keeps apps in leaf queues only), checked first, with no min
  share; one pool (one server), whole tasks.  An app's DEMAND is its task bound x its per-task demand (unbounded:
  infinite); its PENDING demand is non-zero while it has tasks left and a non-zero per-task demand.
* The update thread runs at every step (upstream: every ``update-interval-ms``): a timeout that expires between
  two events is acted on at the next event (a ``round`` event is a tick that changes nothing else).  A step:
  (1) the event applies -- a user whose per-task demand changed gives back what it holds, a task bound below
  what is held trims the newest containers, a capacity below what is held releases everything; (2) the free
  pool is filled in the ``yarn-drf`` order (node heartbeats; :func:`mechanisms.ports.yarn.drf.place`);
  (3) the update: fair shares, the clocks, the starved apps, and (preemption enabled, utilisation above its
  threshold) the preemption thread takes the starved apps one by one; (4) the pool is filled again.
* Preemption is immediate: the kill timer (``waitTimeBeforeKill``) and the delay before an app is checked again
  (``preemptionTriggered``) are 0.  A starved app gets, after its containers are killed, one task per container
  set found for it, as long as one fits in the free pool; what is left goes back to the ``yarn-drf`` order.
* The node's containers are checked in launch order, oldest first (upstream: the node's HashMap of live
  containers, ordered by container id hashes, AM containers last); there are no AM containers.  The number of
  containers a starved app asks for is ``floor(starvation / per-task demand)`` on resource 0, read as memory
  (upstream's scheduler calculator, ``DefaultResourceCalculator``, is memory only), at most its pending tasks.
* Fair shares are exact (the limit of upstream's 25-step binary search, not truncated to integers); all
  arithmetic is exact.
* What the pinned code says is reproduced where it looks unintended: the min-share clock restarts only when
  usage EQUALS the desired share (an over-served queue's clock keeps running), and when an app's unmet demand
  exceeds the min-share starvation left, the app is attributed its unmet demand LESS that remainder
  (``updateStarvedAppsMinshare``).
* Omitted: node labels, reservations, AM containers and maxAMShare, the kill and recheck timers, locality and
  relaxed locality, per-queue preemption thresholds/timeouts and non-preemptable queues (one value each, for all
  queues), maxRunningApps, size-based weights, the recheck delay, continuous scheduling, several nodes.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.execution import Execution, StepContext
from mechverify.model import Environment

from ...core.mechanism import Mechanism
from ...core.registry import register
from ...core.time import TimeSpec, one_shot
from ..declare import Pin
from ..java_go import treeset_order
from .drf import PORT as DRF_PORT, app_schedulable, place, whole
from .drf_policy import compare_prepared, prepare
from .preempt_calc import (INF, _ZERO, _inf_sub, _nonneg, _total, below, drc_compare, fair_shares, java_heap_order,
                           water_fill)
from .preempt_fast import FastSteps
from .preempt_whole import WholeSteps

__all__ = ["NAME", "Config", "DEFAULTS", "REGISTERED", "PINS", "fair_shares", "water_fill", "below", "drc_compare",
           "java_heap_order", "Preempting", "mechanism"]

NAME = "yarn-drf-preempt"
_INT_MAX = 2 ** 31 - 1


@dataclass(frozen=True)
class Config:
    """The preemption knobs, with upstream's defaults (module docstring): ``enabled``
    (``yarn.scheduler.fair.preemption``, false), ``fair_share_threshold`` (0.5), ``fair_share_timeout`` and
    ``min_share_timeout`` (``None``: ``Long.MAX_VALUE``, never), ``utilization_threshold`` (0.8)."""

    enabled: bool = False
    fair_share_threshold: Fraction = Fraction(1, 2)
    fair_share_timeout: Optional[Fraction] = None
    min_share_timeout: Optional[Fraction] = None
    utilization_threshold: Fraction = Fraction(4, 5)


DEFAULTS = Config()
#: the registered configuration: preemption on, both timeouts one time unit, upstream's thresholds
REGISTERED = Config(enabled=True, fair_share_timeout=Fraction(1), min_share_timeout=Fraction(1))

_HADOOP = "apache/hadoop"
PINS = DRF_PORT.pins + (
    Pin(_HADOOP, "049279bb66b036b4767fe6a0283a6f334ac91440", ".../scheduler/fair/FSPreemptionThread.java"),
    Pin(_HADOOP, "10468529a9b858bd945e7ecb063c9c1438efa474", ".../scheduler/fair/FSStarvedApps.java"),
    Pin(_HADOOP, "0f01206e158aa865fe412a37d97bf91e790a03b9",
        "hadoop-yarn-common/.../util/resource/DominantResourceCalculator.java"),
)
SOURCE = (DRF_PORT.source + "; preemption: " + ", ".join(f"{p.path} @ {p.commit}" for p in PINS[len(DRF_PORT.pins):])
          + "; .../scheduler/fair/FSAppAttempt.java, FairScheduler.java, policies/ComputeFairShares.java, "
            "AllocationFileLoaderService.java, FairSchedulerConfiguration.java at the revisions our index returned "
            "(hashes not resolved)")


# ---------------------------------------------------------------------- the stepper
class _Clocks(dict):
    """A copy of a clock dict for a state digest: compared as a dict, hashed as the set of its items (never
    changed after the copy)."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))


class Preempting(FastSteps, WholeSteps):
    """One run (module docstring): the tasks each present user holds, the node's containers in launch order, the
    per-task demand each holding was for, and the two clocks."""

    def __init__(self, mech: Optional[Mechanism], ex: Execution, exact: bool, config: Config = REGISTERED,
                 name: str = NAME, literal: bool = False) -> None:
        self.config, self.name, self.literal = config, name, literal
        self._shares_memo: dict = {}  # fair_shares' splits per node (the queue tree is the execution's)
        self._per_user: dict = {}  # name -> what _update_fast derives of its holding (while that is unchanged)
        self._paths: dict = {}  # a user's queue -> its path (the queue tree is the execution's)
        self._desired: dict = {}  # queue -> ((its apps' demand, the cluster), its desired share) of the last update
        self._wusers: dict = {}  # the integer step's per-app record (preempt_whole)
        self._wdesired: dict = {}  # the integer step's desired shares (preempt_whole)
        self._wfair: dict = {}  # the integer step's fair-share splits (preempt_whole)
        self.launched: list[str] = []  # one entry per running container, oldest first
        self.report: dict[str, tuple] = {}
        self.start: dict[str, Any] = {}
        self.last_fair: dict[str, Any] = {}
        self.last_min: dict[str, Any] = {}  # queue path -> lastTimeAtMinShare (queues exist from time 0)
        self.preempted: list[tuple] = []  # (t, starved user, victims) of the last step

    def state_key(self) -> Any:
        # the clocks as copies compared as dicts (equal whatever the order they were set in), hashed only when a
        # reader (the cycle detector) hashes them: no sort or hash of every clock at every step
        return (tuple(self.launched), _Clocks(self.last_fair), _Clocks(self.last_min))

    # -- helpers
    def _held(self, env: Environment) -> list[int]:
        count = Counter(self.launched)
        return [count[u] for u in env.users]

    def _drop_newest(self, u: str, k: int) -> None:
        for i in range(len(self.launched) - 1, -1, -1):
            if k <= 0:
                break
            if self.launched[i] == u:
                del self.launched[i]
                k -= 1

    def _reconcile(self, env: Environment, t: Any) -> None:
        present = set(env.users)
        self.launched = [u for u in self.launched if u in present]
        for j, u in enumerate(env.users):
            key = env.demand[j]
            if u not in self.start:
                self.start[u] = t
                self.last_fair[u] = t
            if self.report.get(u, key) != key or 0 not in env.eligible[j]:
                self._drop_newest(u, len(self.launched))
            self.report[u] = key
        for u in list(self.report):
            if u not in present:  # gone for good (an execution never reuses a name): its clocks too
                del self.report[u]
                self._per_user.pop(u, None)
                self.last_fair.pop(u, None)
                self.start.pop(u, None)
        held = self._held(env)
        for j, u in enumerate(env.users):
            b = env.tasks[j]
            if b is not None and held[j] > math.floor(b):
                self._drop_newest(u, held[j] - math.floor(b))
        held = self._held(env)
        left = None if self.literal or not env.n_servers else self._free(env, held)
        if left is not None:  # the same test in integers: usage above capacity
            if any(v < 0 for v in left):
                self.launched = []
            return
        used = self._usage(env, held)
        if env.n_servers and any(x > c for x, c in zip(used, env.capacity[0])):
            self.launched = []

    @staticmethod
    def _usage(env: Environment, held: Sequence[int]) -> list:
        return [_total([n * env.demand[j][r] for j, n in enumerate(held) if n]) for r in range(env.n_resources)]

    def _fill(self, env: Environment) -> None:
        held = self._held(env)
        if not self.literal and not self._room_fast(env, held):
            return  # no app with pending demand has a task that fits in the free pool: place() would place none
        tasks, _ = place(env, held, name=self.name)
        for j, u in enumerate(env.users):
            self.launched.extend([u] * (tasks[j] - held[j]))

    @staticmethod
    def _room(env: Environment, held: Sequence[int]) -> bool:
        """Could :func:`place` give anybody a task: an app with pending demand (tasks left, a nonzero request, the
        pool eligible) whose task fits in the pool left (``_Pool.pending`` and the pool's part of ``_Pool.fits``)?"""
        left = list(env.capacity[0])
        for j, n in enumerate(held):
            if n:
                for r, dv in enumerate(env.d(j, 0)):
                    if dv:
                        left[r] -= n * dv
        for j in range(env.n_users):
            b = env.tasks[j]
            d = env.d(j, 0)
            if (b is None or held[j] < math.floor(b)) and any(d) and 0 in env.eligible[j] and \
                    all(not dv or lv >= dv for lv, dv in zip(left, d)):
                return True
        return False

    # -- one step
    def step(self, ctx: StepContext) -> Allocation:
        """The step's allocation: whole containers, exact; in a float run the same counts as floats (exactly
        representable), so that the stepping around it (every present app's utility, its rate of work) is
        computed in floats like every other float run, not in ``Fraction``s."""
        self._float_out = not ctx.exact  # the integer step builds its floats directly (preempt_whole)
        got = self._decide(ctx.env, ctx.t)
        if ctx.exact or not got.exact:
            return got
        return Allocation(got.env, tuple(tuple(map(float, row)) for row in got.x), got.mechanism, False, got.info)

    def _decide(self, env: Environment, t: Any) -> Allocation:
        if not self.literal:
            got = self._step_whole(env, t)  # in integers where the numbers are whole (preempt_whole)
            if got is not None:
                return got
        self.preempted = []
        self._reconcile(env, t)
        if env.n_servers:
            self._fill(env)
            self._update(env, t)
            if self.literal or self.preempted:  # else nothing changed since the fill, which placed all it could
                self._fill(env)
        held = self._held(env)
        x = tuple((whole(held[j]),) * env.n_servers for j in range(env.n_users))
        return Allocation(env, x, self.name, True, {"preempted": tuple(self.preempted)})

    def _update(self, env: Environment, t: Any) -> None:
        if self.literal:
            self._update_reference(env, t)
        else:
            self._update_fast(env, t)

    def _update_reference(self, env: Environment, t: Any) -> None:
        """The update as first written (``literal=True``): every quantity recomputed from the step's environment."""
        cfg = self.config
        J, R = env.n_users, env.n_resources
        cluster = env.total_capacity()
        held = self._held(env)
        usage = [[held[j] * dv for dv in env.demand[j]] for j in range(J)]
        used = self._usage(env, held)
        util = max((u / c for u, c in zip(used, cluster) if c > 0), default=_ZERO)
        if not (cfg.enabled and cfg.utilization_threshold < util):
            return  # shouldAttemptPreemption: no update of the starvation clocks either
        paths = [env.user_path(j) for j in range(J)]
        below_q: dict = {}  # queue -> the users below it, in order
        for j, path in enumerate(paths):
            for q in path:
                below_q.setdefault(q, []).append(j)
        fair_u, _fair_q = fair_shares(env, paths, self.literal, None if self.literal else self._shares_memo)
        bound = [None if b is None else math.floor(b) for b in env.tasks]
        demand = [[INF if (bound[j] is None and dv) else (bound[j] or 0) * dv for dv in env.demand[j]] for j in range(J)]
        pending = [any(env.demand[j]) and (bound[j] is None or held[j] < bound[j]) for j in range(J)]
        fair_starv = [[_ZERO] * R for _ in range(J)]
        min_starv = [[_ZERO] * R for _ in range(J)]
        starved: list[int] = []
        leaves: dict = {}
        for j in range(J):
            leaves.setdefault(env.user_queue[j], []).append(j)
        order = [None] + list(range(env.n_queues))
        for q in order:
            members = leaves.get(q)
            if not members:
                if q is not None:
                    self._min_share(env, q, [], usage, demand, cluster, t, below_q)  # its clock (no app: demand 0)
                continue
            apps = [j for j in members if pending[j]]
            keyed = {j: prepare(app_schedulable(env, usage[j], j), cluster) for j in apps}
            apps = treeset_order(apps, lambda a, b: compare_prepared(keyed[a], keyed[b]))
            total = [_ZERO] * R
            for j in apps:
                s = self._fair_starvation(env, j, fair_u[j], demand[j], usage[j], cluster, t)
                fair_starv[j] = s
                if any(s):
                    if j not in starved:
                        starved.append(j)
                    total = [a + b for a, b in zip(total, s)]
                else:
                    break
            if q is None:
                continue
            ms = self._min_share(env, q, members, usage, demand, cluster, t, below_q)
            left = _nonneg([a - b for a, b in zip(ms, total)])
            for j in apps:
                if any(left):
                    mine = _nonneg([_inf_sub(d, u) - f for d, u, f in zip(demand[j], usage[j], fair_starv[j])])
                    if drc_compare(mine, left, cluster) > 0:
                        mine = _nonneg([_inf_sub(a, b) for a, b in zip(mine, left)])
                        left = [_ZERO] * R
                    else:
                        left = _nonneg([a - b for a, b in zip(left, mine)])
                    min_starv[j] = mine
                    if j not in starved:
                        starved.append(j)
                else:
                    min_starv[j] = [_ZERO] * R
        if not starved:
            return
        starvation = {j: [a + b for a, b in zip(fair_starv[j], min_starv[j])] for j in starved}

        def cmp(a: int, b: int) -> int:
            return -1 if all(x <= y for x, y in zip(starvation[a], starvation[b])) else 1

        for j in java_heap_order(starved, cmp):
            self._preempt_for(env, j, starvation[j], fair_u, cluster, t)

    def _fair_starvation(self, env, j, fair, demand, usage, cluster, t) -> list:
        cfg = self.config
        u = env.users[j]
        fair_demand = [min(f * cfg.fair_share_threshold, d) for f, d in zip(fair, demand)]
        if not below(usage, fair_demand, cluster):
            self.last_fair[u] = t
            return [_ZERO] * len(usage)
        timeout = cfg.fair_share_timeout
        if timeout is None or t - self.last_fair[u] < timeout:
            return [_ZERO] * len(usage)
        return _nonneg([a - b for a, b in zip(fair_demand, usage)])

    def _min_share(self, env, q, members, usage, demand, cluster, t, below=None) -> list:
        cfg = self.config
        R = env.n_resources
        path = env.queues[q]
        self.last_min.setdefault(path, Fraction(0))
        if below is None or self.literal:
            below_q = [j for j in range(env.n_users) if q in env.user_path(j)]
        else:
            below_q = below.get(q, [])
        if self.literal:
            use_q = [sum((usage[j][r] for j in below_q), _ZERO) for r in range(R)]
            dem = [_ZERO] * R
            for j in below_q:
                dem = [INF if (a == INF or b == INF) else a + b for a, b in zip(dem, demand[j])]
        else:  # the same sums (exact: the order does not matter), whole numbers as integers
            use_q = [_total([usage[j][r] for j in below_q]) for r in range(R)]
            dem = []
            for r in range(R):
                col = [demand[j][r] for j in below_q]
                dem.append(INF if any(v == INF for v in col) else _total(col))
        if env.queue_max[q] is not None:
            dem = [min(a, m) for a, m in zip(dem, env.queue_max[q])]
        g = env.queue_guarantee[q]
        mins = list(g) if g is not None else [_ZERO] * R
        desired = mins if drc_compare(mins, dem, cluster) <= 0 else dem
        starvation = [_inf_sub(a, b) for a, b in zip(desired, use_q)]
        if not any(starvation):
            self.last_min[path] = t
        timeout = cfg.min_share_timeout
        if timeout is None or t - self.last_min[path] < timeout:
            return [_ZERO] * R
        return starvation

    def _preempt_for(self, env: Environment, j: int, starvation: Sequence[Any], fair_u, cluster, t) -> None:
        d = env.demand[j]
        held = self._held(env)
        bound = None if env.tasks[j] is None else math.floor(env.tasks[j])
        outstanding = INF if bound is None else bound - held[j]
        if d[0] == 0:
            ratio = INF if starvation[0] > 0 else None
        else:
            ratio = Fraction(starvation[0]) / d[0] if starvation[0] != INF else INF
        if ratio is None:
            return
        k = _INT_MAX if ratio == INF else math.floor(ratio)
        k = min(k, outstanding)
        if k <= 0:
            return
        idx = {u: n for n, u in enumerate(env.users)}
        cap = env.capacity[0]
        marked: set[int] = set()
        to_be = {}  # app -> resources already marked for preemption
        found = 0
        for _ in range(int(min(k, len(self.launched) + 1))):
            used = self._usage(env, self._held(env))
            potential = [c - u for c, u in zip(cap, used)]
            chosen: list[int] = []
            considering: dict[int, list] = {}
            ok = False
            for pos, owner in enumerate(self.launched):
                if pos in marked:
                    continue
                a = idx[owner]
                dv = env.demand[a]
                already = [x + y for x, y in zip(to_be.get(a, [_ZERO] * len(dv)), considering.get(a, [_ZERO] * len(dv)))]
                after = [h * v - x - v for h, v, x in zip([held[a]] * len(dv), dv, already)]
                if not below(after, fair_u[a], cluster):
                    chosen.append(pos)
                    considering[a] = [x + v for x, v in zip(considering.get(a, [_ZERO] * len(dv)), dv)]
                    potential = [p + v for p, v in zip(potential, dv)]
                if all(r <= p for r, p in zip(d, potential)):
                    ok = True
                    break
            if not ok:
                break
            found += 1
            for pos in chosen:
                marked.add(pos)
            for a, v in considering.items():
                to_be[a] = [x + y for x, y in zip(to_be.get(a, [_ZERO] * len(v)), v)]
        if not marked:
            return
        victims = [self.launched[p] for p in sorted(marked)]
        self.launched = [u for p, u in enumerate(self.launched) if p not in marked]
        # the freed resources go to the starved app: one task per container set found, while one fits
        used = self._usage(env, self._held(env))
        free = [c - u for c, u in zip(cap, used)]
        got = 0
        while got < found and all(v <= f for v, f in zip(d, free)):
            self.launched.append(env.users[j])
            free = [f - v for f, v in zip(free, d)]
            got += 1
        self.preempted.append((t, env.users[j], tuple(victims)))


def _begin_with(config: Config, name: str):
    def begin(mech: Optional[Mechanism], ex: Execution, exact: bool) -> Preempting:
        return Preempting(mech, ex, exact, config, name)
    return begin


_MODEL = ("the yarn-drf order places whole tasks on the free pool at every event; at every event upstream's update "
          "runs (fair shares, the fair-share and min-share starvation clocks) and, past a timeout, whole containers "
          "of apps that stay at or above their fair share are preempted for the starved app; held in between")
_NOTES = ("FairScheduler preemption (our code from upstream's semantics): an app is fair-share starved when its usage "
          "is below min(fair share x threshold, demand) (DRF calculator, largest share) for fairSharePreemptionTimeout, "
          "a leaf queue min-share starved below Resources.min(guarantee, demand) for minSharePreemptionTimeout "
          "(clock restarts only when usage equals it, as at the pin); starved apps in FSStarvedApps' heap order; "
          "victims: the node's containers oldest first whose app stays at or above its fair share, until one "
          "container of the starved app fits; kill and recheck timers 0; update at every event; registered with "
          "preemption on, both timeouts 1 time unit, thresholds 0.5 (fair share) and 0.8 (utilisation) -- upstream's "
          "defaults are preemption off and infinite timeouts; one pool, no AM containers, reservations, node labels, "
          "locality, per-queue settings; no claims (upstream states none)")


def mechanism(config: Config = REGISTERED, name: str = NAME) -> Mechanism:
    """The stateful mechanism with ``config`` (not registered): ``yarn-drf``'s setting, marked dynamic."""
    from ...core.registry import builtin

    begin = _begin_with(config, name)
    spec = TimeSpec(begin=begin, kind="stateful", rounds=False, revocable=True, model=_MODEL)
    return builtin(name, "YARN FairScheduler DRF with fair-share and min-share preemption", one_shot(begin, name),
                   replace(DRF_PORT.setting), (), SOURCE, _NOTES, z3=DRF_PORT.z3, order=DRF_PORT.order(), time=spec)


_M = mechanism()
register(_M.name, _M.title, DRF_PORT.setting, (), SOURCE, _NOTES, z3=DRF_PORT.z3, order=DRF_PORT.order(),
         time=_M.time)(_M.func)
