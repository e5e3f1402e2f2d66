"""Kueue's preemption over executions: the queue manager and scheduling cycle of
:mod:`mechanisms.ports.kueue.scheduling` (heaps, inadmissible set, the sticky preemptor head of PR 7157, requeue
reasons, the admission tournament, evictions) stepping through an execution, with the experimental priority
booster -- the time-based same-priority preemption that exists at the pin (kueue 8522).

Which time-based design exists at the pin (kubernetes-sigs/kueue @ ff69552e79ad21652c36caa97038382e55625cf7)
-----------------------------------------------------------------------------------------------------------
Three designs are written down upstream; only one is code at the pin:

* KEP 8522 (``keps/8522-time-based-same-priority-preemption/README.md``, read at 35eb026a, PR 8646 closed):
  ``withinClusterQueueConfig.minAdmitDuration`` on ``LowerOrNewerEqualPriority``, measured from
  ``QuotaReserved``, preemptible when ``now - reserved > minAdmitDuration`` (strictly greater).  NOT in the
  pin: no ``minAdmitDuration`` anywhere in the tree.
* KEP 9876 (``keps/9876-cross-cq-guaranteed-runtime``, PR 12791 open): cross-ClusterQueue protection,
  ``preemptionProtection.{fairSharing,reclaimWithinCohort}.minAdmitDuration`` from ``Admitted``, protected while
  ``now - admitted < minAdmitDuration`` (eligible at ``>=``); it states that within-ClusterQueue time sharing
  "is currently addressed experimentally by the priority booster".  NOT in the pin.
* The PRIORITY BOOSTER (KEP 7990's priority-boost signal), in the pin:
  ``cmd/experimental/kueue-priority-booster/README.md`` and ``pkg/controller/controller.go``
  (``computeBoost``: no boost while not Admitted or while ``time.Since(Admitted.LastTransitionTime) <
  timeSharing.duration``; from then on ``-negativeBoost``, default 100000; a duration of 0 disables it), the
  ``kueue.x-k8s.io/priority-boost`` annotation read by ``pkg/util/priority/priority.go``
  (``EffectivePriority`` = base + boost, feature gate ``PriorityBoost``, alpha, off by default),
  ``pkg/scheduler/preemption/common/preemption_policy.go`` (``SatisfiesPreemptionPolicy`` on effective
  priorities; the booster is documented for ``withinClusterQueue: LowerPriority``),
  ``pkg/cache/queue/cluster_queue.go`` (``baseCompareFunc`` orders heaps by effective priority, then
  ``GetQueueOrderTimestamp``), ``pkg/workload/workload.go`` (``GetQueueOrderTimestamp``: a workload preempted
  within its ClusterQueue keeps its CREATION timestamp -- only a PodsReady-timeout or admission-check eviction
  moves it; ``PriorityChanged`` compares effective priorities), ``pkg/controller/core/workload_controller.go``
  (``Update``: an admitted workload whose effective priority changed requeues the inadmissible workloads of its
  cohort tree).  The threshold rule is ``>=`` (eligible at exactly the window).

The model (stated in ``list``)
------------------------------
* The cohort tree is :mod:`mechanisms.ports.kueue.cohort`'s mapping of our queue tree (a leaf queue is a
  ClusterQueue with its declared guarantee as nominal quota; an inner queue a Cohort; the pool is the root
  cohort's own quota), with every inner queue's implicit ClusterQueue ``q/.`` and the root's ``.`` present
  from the start (empty ones hold nothing and change no share).  No borrowing limits (declared maxes unread).
* WORKLOADS are the users: ``floor(tasks)`` x demand, admitted whole; equal base priorities; creation order =
  first appearance (then declaration order).  A workload that leaves (or whose work is done) is deleted; one
  whose report changes is deleted and created again (same creation order).  If the pool shrinks below what is
  admitted, every admitted workload is evicted.
* TIME: one execution time unit = 30 minutes (the booster README's example ``duration: "30m"``); the registered
  booster window is 1 unit.  The booster acts at once (no reconcile lag): its expiry is a timer of the policy
  (``wake_at``; upstream: the reconciler's ``RequeueAfter``), a step of its own (a derived ``wake`` event).
* CYCLES: at every event scheduling cycles run until the state settles or repeats (a loop at one instant:
  stopped at the first repeat, recorded in ``info["loop"]``); while the scheduler loops, a ``round`` event is
  one tick: ONE cycle of the loop, so the loop shows up across rounds (the ``cycles`` property).  Each event first applies
  deletions, re-creations, arrivals (pushed) and booster changes (an admitted workload's effective priority
  changed, quota freed or the pool changed: the inadmissible workloads are requeued).
* A preempted workload's work done is kept (checkpointed; upstream restarts it: not modelled).
* Omitted: priorities other than equal, StrictFIFO variants, AdmissionFairSharing, borrowing/lending limits,
  the booster's ``workloadSelector`` / ``maxWorkloadPriority``, the reconcile and requeue batch delays, and
  everything :mod:`mechanisms.ports.kueue.scheduling` omits.
"""
from __future__ import annotations

from fractions import Fraction
from functools import partial
from typing import Any, Optional

from mechverify.allocation import Allocation
from mechverify.cycles import RepeatDetector
from mechverify.execution import Execution, StepContext
from mechverify.model import Environment

from ...core.mechanism import Mechanism
from ...core.registry import Setting
from ...core.time import TimeSpec, execution_of
from .cohort import CohortTree
from .preemption import PIN, Config, Node, Tree, Workload
from .scheduling import QueueState, arrive, evict, requeue_inadmissible, schedule, withdraw

__all__ = ["KueueOverTime", "begin", "allocate", "time_spec", "SETTING", "WINDOW", "NEGATIVE_BOOST", "boost",
           "BOOSTER", "FAIR_SHARING", "nodes_of"]

#: the registered booster window (``timeSharing.duration``) in execution time units (1 unit = 30 minutes)
WINDOW = Fraction(1)
#: ``timeSharing.negativeBoost``'s default (``defaultOptions.NegativeBoostValue``)
NEGATIVE_BOOST = 100000
#: the booster's documented configuration: ``withinClusterQueue: LowerPriority``, the rest upstream's defaults
BOOSTER = Config(reclaim="Never", within="LowerPriority", **PIN)
#: fair-sharing preemption as the loop search's default (reclaimWithinCohort Any, the rest upstream's defaults)
FAIR_SHARING = Config(**PIN)
_CYCLE_CAP = 10_000


def boost(admitted_at: Optional[Any], now: Any, window: Any, negative: int = NEGATIVE_BOOST) -> int:
    """The booster's ``computeBoost``: 0 while not admitted (``admitted_at`` None), while the window is 0
    (disabled) or while ``now - admitted_at < window``; from then on ``-negative``."""
    if not window or window <= 0 or admitted_at is None:
        return 0
    return 0 if now - admitted_at < window else -negative


def nodes_of(env: Environment) -> tuple[list[Node], dict[Optional[int], int]]:
    """The cohort tree's nodes of ``env``'s queue tree (``cohort.CohortTree``'s mapping, with every implicit
    ClusterQueue present: the same nodes while users come and go) and the ClusterQueue node of each place a
    user can sit in (a queue index, ``None`` for the root)."""
    ct = CohortTree(env, every_place=True)
    nodes = [Node(ct.names[n], ct.parent[n], ct.quota[n], ct.weight[n]) for n in range(ct.n_nodes)]
    return nodes, ct.place_cq


class KueueOverTime:
    """One run: the queue state (by workload index = creation order), the workloads created so far, when each
    admitted workload was admitted, and the effective priorities of the last step."""

    def __init__(self, mech: Optional[Mechanism], ex: Execution, exact: bool, *, cfg: Config = BOOSTER,
                 window: Any = WINDOW, to_back: bool = False, name: str = "kueue-timeshare") -> None:
        self.cfg, self.window, self.to_back, self.name = cfg, Fraction(window), to_back, name
        self.exact = exact
        self.st = QueueState()
        self.index: dict[str, int] = {}  # user -> workload index (the CURRENT incarnation)
        self.wls: list[tuple] = []  # index -> (user, place, request, report key)
        self.admitted_at: dict[int, Any] = {}
        self.last_prio: dict[int, int] = {}
        self.queue_ts: list[Any] = []  # the counterfactual to-back ordering's timestamps
        self.nodes_key: Any = None
        self.nodes: list[Node] = []
        self.cq_of: dict = {}
        self.loop = False

    def state_key(self) -> Any:
        """The queue state by user name, and which admitted workloads are boosted."""
        st = self.st
        name = lambda j: self.wls[j][0]  # noqa: E731
        return (tuple(name(j) for j in st.admitted), frozenset(map(name, st.active)),
                frozenset(map(name, st.inadmissible)), tuple(sorted((c, name(j)) for c, j in st.preemptor)),
                st.bulk, st.requeue_pending, frozenset(name(j) for j, p in self.last_prio.items() if p))

    def wake_at(self) -> Optional[Fraction]:
        """The booster's next expiry (``computeBoost``'s ``RequeueAfter``): the earliest time an admitted workload
        not yet boosted has been admitted for the window."""
        if not self.window or self.window <= 0:
            return None
        due = [a + self.window for j, a in self.admitted_at.items() if not self.last_prio.get(j)]
        return min(due) if due else None

    def _tree(self, t: Any) -> Tree:
        wls = []
        for j, (u, place, req, _) in enumerate(self.wls):
            wls.append(Workload(u, self.cq_of[place], req, boost(self.admitted_at.get(j), t, self.window)))
        tree = Tree(self.nodes, ["r"] * len(self.nodes[0].quota), wls)
        if self.to_back:
            tree.queue_order = self.queue_ts
        return tree

    def step(self, ctx: StepContext) -> Allocation:
        env, t = ctx.env, Fraction(ctx.t)
        cfg = self.cfg
        nk = (env.capacity, env.queues, env.queue_guarantee, env.queue_weight)
        pool_changed = self.nodes_key is not None and nk != self.nodes_key
        if nk != self.nodes_key:
            self.nodes, self.cq_of = nodes_of(env)
            self.nodes_key = nk
        present: dict[str, tuple] = {}
        for j, u in enumerate(env.users):
            n = env.tasks[j]
            n = Fraction(int(n)) if n is not None else Fraction(0)
            req = tuple(n * d for d in env.demand[j])
            present[u] = (env.user_queue[j], req, (env.demand[j], n, env.user_queue[j]))
        gone = [j for u, j in self.index.items() if u not in present or self.wls[j][3] != present[u][2]]
        for j in gone:
            del self.index[self.wls[j][0]]
            self.admitted_at.pop(j, None)
        new = []
        for u, (place, req, key) in present.items():
            if u not in self.index and any(req):
                self.index[u] = len(self.wls)
                self.wls.append((u, place, req, key))
                self.queue_ts.append((t, len(self.wls) - 1))
                new.append(self.index[u])
        tree = self._tree(t)  # every workload created so far, with this step's effective priorities
        st = withdraw(tree, cfg, self.st, gone) if gone else self.st
        if pool_changed:
            usage = tree.usage(st.admitted)
            if any(usage[0][r] > tree.lendable[r] for r in range(len(tree.lendable))):
                st = evict(tree, cfg, st, list(st.admitted))
                self.admitted_at.clear()
            st = requeue_inadmissible(tree, cfg, st)
        st = arrive(tree, cfg, st, new)
        prio = {j: tree.priority[j] for j in st.admitted}
        if any(self.last_prio.get(j, p) != p for j, p in prio.items()):  # PriorityChanged on an admitted workload
            st = requeue_inadmissible(tree, cfg, st)
        # a round event while the scheduler loops is one tick: one cycle of the loop (module docstring)
        tick = self.loop and ctx.event is not None and ctx.event.kind == "round"
        self.loop = False
        seen = RepeatDetector()
        seen.see(st)
        cycles = 0
        preempted: list = []
        while cycles < (1 if tick else _CYCLE_CAP):
            res = schedule(tree, cfg, st)
            if res.state == st and not res.did_something:
                break
            cycles += 1
            for j in res.admitted:
                self.admitted_at[j] = t
            for p, targets in res.preempted:
                preempted.append((self.wls[p][0], tuple(self.wls[v][0] for v in targets)))
                for v in targets:
                    self.admitted_at.pop(v, None)
                    if self.to_back:
                        self.queue_ts[v] = (t, len(self.queue_ts) + cycles)
            st = res.state
            if tick or seen.see(st, res) is not None:
                self.loop = True  # (a tick of a loop: the loop goes on)
                break
        self.st = st
        self.last_prio = {j: boost(self.admitted_at.get(j), t, self.window) for j in st.admitted}
        held = set(st.admitted)
        num = Fraction if ctx.exact else float
        x = tuple((num(int(env.tasks[j])) if self.index.get(u) in held and env.tasks[j] is not None else num(0),)
                  for j, u in enumerate(env.users))
        return Allocation(env, x, self.name, ctx.exact,
                          info={"cycles": cycles, "loop": self.loop, "preempted": tuple(preempted),
                                "boosted": tuple(sorted(self.wls[j][0] for j in held if self.last_prio[j]))})


def begin(mech: Optional[Mechanism], ex: Execution, exact: bool, *, name: str = "kueue-timeshare",
          cfg: Config = BOOSTER, window: Any = WINDOW, to_back: bool = False) -> KueueOverTime:
    return KueueOverTime(mech, ex, exact, cfg=cfg, window=window, to_back=to_back, name=name)


def allocate(env: Environment, exact: bool = False, *, name: str = "kueue-timeshare", cfg: Config = BOOSTER,
             window: Any = WINDOW, to_back: bool = False) -> Allocation:
    """The first step (every workload created at time 0, settled): what the one-instance properties judge."""
    ex = execution_of(env)
    st = begin(None, ex, exact, name=name, cfg=cfg, window=window, to_back=to_back)
    return st.step(StepContext(0, Fraction(0), None, env, None, ex, exact))


def time_spec(*, name: str = "kueue-timeshare", cfg: Config = BOOSTER, window: Any = WINDOW,
              to_back: bool = False) -> TimeSpec:
    booster = (f"priority booster window {window} unit(s) (30 min each), boost -{NEGATIVE_BOOST} once admitted that "
               f"long (>=)" if window else "no priority booster")
    return TimeSpec(begin=partial(begin, name=name, cfg=cfg, window=window, to_back=to_back), kind="stateful",
                    rounds=False, revocable=True,
                    model=f"Kueue's queue manager and scheduling cycles over time (heaps, inadmissible set, sticky "
                          f"preemptor head, requeue reasons, tournament, evictions; reclaimWithinCohort "
                          f"{cfg.reclaim}, withinClusterQueue {cfg.within}); {booster}; cycles until settled at "
                          f"each event, one cycle per round event while it loops"
                          + ("; preempted workloads requeued behind the waiting ones (counterfactual)" if to_back
                             else ""))


SETTING = Setting(single_server=True, placement=False, external=False, bounds=True, weights=False, divisible=False,
                  requires_bounds=True, hierarchy=True, whole_requests=True)
