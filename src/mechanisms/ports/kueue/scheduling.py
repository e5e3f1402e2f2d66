"""Kueue's queue manager and scheduling cycle on a cohort tree, exactly: ClusterQueue heaps, the inadmissible
set, the sticky preemptor head, requeue reasons, the admission tournament and evictions -- the state machine in
which preemptions can loop.

Source (read, not copied; our code follows the semantics): kubernetes-sigs/kueue @
ff69552e79ad21652c36caa97038382e55625cf7 (:data:`mechanisms.ports.kueue.port.COMMIT`).  File and function per rule:

* ``pkg/cache/queue/manager.go``: ``heads`` (every active ClusterQueue pops its heap's first workload),
  ``RequeueWorkload``, ``deleteWorkloadWithoutLock`` (an admitted workload leaves its queue),
  ``QueueAssociatedInadmissibleWorkloadsAfter``;
* ``pkg/cache/queue/cluster_queue.go``: the ``preemptorWorkload`` type ("a workload is considered a preemptor until
  it is admitted, unschedulable, or deleted"; PR 7157, kueue 6929 / 7101), ``RequeueIfNotPresent`` (which reasons
  are immediate), ``requeueIfNotPresent`` (a ``PendingPreemption`` requeue sets the preemptor, sticky iff the
  queueing strategy is BestEffortFIFO; immediate -> the heap, else -> inadmissible, then the equivalence-hash
  bulk move), ``handleInadmissibleHash``, ``PushOrUpdate`` (a pushed workload whose hash was bulk-moved goes to
  inadmissible), ``delete`` (clears the preemptor), ``baseCompareFunc`` (heap order: the sticky workload first,
  then higher priority, then the queue-order timestamp, then UID), ``Pop``;
* ``pkg/cache/queue/inadmissible_workloads.go``: ``notifyRetryInadmissibleWithoutLock`` (a ClusterQueue in a
  cohort requeues its ROOT cohort's tree), ``queueInadmissibleWorkloads`` (every inadmissible workload back to
  the heap; the bulk-moved hashes cleared; ``queueInadmissibleCycle = popCycle``);
* ``pkg/scheduler/scheduler.go``: ``schedule`` (heads, snapshot, ``nominate``, the iterator, ``processEntry``
  for every entry, ``requeueAndUpdate`` for every entry not admitted), ``processEntry`` (NoFit ->
  ``RequeueReasonNoFit``; Preempt without targets -> ``PreemptionNoCandidates`` and
  ``reserveCapacityForUnreclaimablePreempt``; DeferredFit -> ``PendingPreemption`` and ``cq.AddUsage``; overlapping
  targets or no longer fitting -> skipped; Preempt -> ``issuePreemptions`` -> ``PendingPreemption``; Fit ->
  ``admit``), ``updateAssignmentIfNeeded`` (``RecomputeAssignmentUponPreemptionTargetsOverlap``: Fit becomes
  DeferredFit), ``fits``, ``quotaResourcesToReserve``, ``requeueAndUpdate`` (a nominated entry with no reason is
  ``FailedAfterNomination``);
* ``pkg/scheduler/fair_sharing_iterator.go``: the tournament (:mod:`mechanisms.ports.kueue.tournament`'s; ``entryComparer.less``
  with ``PrioritizePreemptorWorkloads`` off: non-borrowing, DRS, priority, FIFO);
* ``pkg/controller/core/workload_controller.go``: ``Update`` (Pending -> QuotaReserved: the workload leaves the
  queues; QuotaReserved -> Pending, an eviction: the workload is pushed back at once and the inadmissible
  workloads of its cohort tree are requeued); ``pkg/workload/workload.go``: ``GetQueueOrderTimestamp`` (with
  ``PrioritySortingWithinCohort`` on, the creation timestamp), ``computeSchedulingHash`` (priority and requests);
* ``pkg/features/kube_features.go``: defaults ``SchedulingEquivalenceHashing`` on (0.18),
  ``PrioritizePreemptorWorkloads`` off, ``RecomputeAssignmentUponPreemptionTargetsOverlap`` on,
  ``PrioritySortingWithinCohort`` on.

The STATE (:class:`QueueState`) is everything the next cycle reads: the admitted workloads in admission order
(``CandidatesOrdering`` reads admission times), each pending workload's place (a ClusterQueue's heap or its
inadmissible set), each ClusterQueue's preemptor workload, and the bulk-moved equivalence classes.  A heap's
order is a function of that state (sticky first, priority, creation order = timestamp and UID), so a state
that repeats is a loop of the whole scheduler, not only of the admitted set.

One cycle (:func:`schedule`) and the events after it
----------------------------------------------------
1. Every ClusterQueue with a non-empty heap pops its first workload (``heads``).
2. Each head is nominated on the snapshot (the admitted workloads' usage): NoFit (a request above the root's
   subtree quota), Fit, or Preempt with :func:`mechanisms.ports.kueue.preemption.get_targets`'s targets (maybe none).
3. The heads are processed in the tournament's order (the snapshot's usage plus what this cycle has reserved),
   each by ``processEntry`` as listed above.  A Preempt head with no targets reserves its request when its
   ClusterQueue's ``reclaimWithinCohort`` is not ``Any`` (``CanAlwaysReclaim``; with no borrowing limit the
   reserved amount is the whole request).
4. Requeues, by reason (BestEffortFIFO): ``PendingPreemption`` and ``FailedAfterNomination`` are immediate (back
   to the heap); ``PendingPreemption`` also makes the workload its ClusterQueue's preemptor.  ``NoFit`` and
   ``PreemptionNoCandidates`` park the workload as inadmissible and, with equivalence hashing, move every heap
   workload of that ClusterQueue with the same priority and requests there too.  StrictFIFO: every reason is
   immediate, the preemptor is recorded but never sticky, nothing is bulk-moved.
5. Admitted workloads leave their queues (a ClusterQueue's preemptor is cleared when it is admitted).
6. Evictions: the victims become pending and are pushed to their heaps (inadmissible if their class was
   bulk-moved), then the root cohort's inadmissible workloads are all requeued to the heaps and the bulk-moved
   classes forgotten (when: ``Config.requeue_timing``, below).

Conventions (upstream's timing is open; these are the model's choices)
-----------------------------------------------------------------------
* An eviction completes, and pushes its victims back, before the next cycle.  The requeue of inadmissible
  workloads it triggers comes ``requeueBatchPeriod`` (1 s) later upstream, while cycles go on: two conventions
  bracket that (``Config.requeue_timing``): ``"eager"`` (the default: before the next cycle) and ``"idle"``
  (once no heap holds a workload, i.e. after every cycle that could run in between; the state then records that
  a requeue is pending).  Nothing else happens (no finishing, deletion or quota change), so a requeue never
  lands between a ``Pop`` and its requeue: ``queueInadmissibleCycle >= popCycle`` never holds and is not part of
  the state.
* Upstream's heads are popped in map order; the tournament decides the processing order, so the heads' order
  does not matter.  Creation timestamps are distinct, in index order; UIDs in the same order.
* A run is SETTLED when a cycle leaves the state as it is and issues no preemption (BestEffortFIFO: typically
  every heap empty, so ``heads`` blocks); a LOOP is a state that repeats with something done in between
  (found by the generic repeated-state detector, ``mechverify.cycles.RepeatDetector``; it forgets the states
  of a stage when the next stage's workloads are created).
* Omitted (none reachable in the modelled configuration unless said): ``PendingMigration`` (ConcurrentAdmission
  variants), ``PreemptionFailed`` (API errors), ``PreemptionGated``, second passes, admission checks, requeue
  backoff (``RequeueState``: set by waitForPodsReady), namespace mismatches, LastAssignment's pending flavours
  (one flavour), partial admission, TAS, AdmissionFairSharing, ``PrioritizePreemptorWorkloads`` (off by default;
  the only other reader of ``IsPreemptor``), the preemption expectations store.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from mechverify.cycles import RepeatDetector

from .cohort import nominee_requests
from .tournament import _Tournament
from .preemption import ADMISSION, Config, Tree, fits, get_targets, needs_preemption

__all__ = ["QueueState", "Head", "CycleResult", "schedule", "arrive", "requeue", "withdraw", "evict",
           "requeue_inadmissible", "Outcome", "run", "classify", "REASONS"]

NO_FIT = "NoFit"
NO_CANDIDATES = "PreemptionNoCandidates"
PENDING_PREEMPTION = "PendingPreemption"
FAILED_AFTER_NOMINATION = "FailedAfterNomination"
ADMITTED = "admitted"
#: every outcome of ``processEntry`` the model reaches, with what it means for the head
REASONS = {NO_FIT: "requests more than the root's subtree quota", NO_CANDIDATES: "needs preemption, no targets",
           PENDING_PREEMPTION: "preemption issued (or DeferredFit)", FAILED_AFTER_NOMINATION: "skipped",
           ADMITTED: "admitted"}
_IMMEDIATE = {FAILED_AFTER_NOMINATION, PENDING_PREEMPTION}  # RequeueIfNotPresent under BestEffortFIFO
_BULK = {NO_FIT, NO_CANDIDATES}  # requeueIfNotPresent: the reasons that bulk-move an equivalence class


@dataclass(frozen=True)
class QueueState:
    """What the next cycle reads (module docstring): ``admitted`` in admission order; ``active`` (in the heaps)
    and ``inadmissible`` pending workloads; ``preemptor``: (ClusterQueue, workload) pairs; ``bulk``: the
    bulk-moved equivalence classes (ClusterQueue, requests, priority); ``requeue_pending``: an eviction's requeue
    of inadmissible workloads has not happened yet (``requeue_timing="idle"``)."""

    admitted: tuple = ()
    active: frozenset = frozenset()
    inadmissible: frozenset = frozenset()
    preemptor: tuple = ()
    bulk: frozenset = frozenset()
    requeue_pending: bool = False

    @property
    def pending(self) -> frozenset:
        return self.active | self.inadmissible


class _Queues:
    """The mutable queue manager of one cycle (:func:`schedule`), frozen back into a :class:`QueueState`."""

    def __init__(self, tree: Tree, cfg: Config, st: QueueState) -> None:
        self.tree, self.cfg = tree, cfg
        self.admitted = list(st.admitted)
        self.active, self.inadmissible = set(st.active), set(st.inadmissible)
        self.preemptor = dict(st.preemptor)
        self.bulk = set(st.bulk)
        self.requeue_pending = st.requeue_pending

    def freeze(self) -> QueueState:
        return QueueState(tuple(self.admitted), frozenset(self.active), frozenset(self.inadmissible),
                          tuple(sorted(self.preemptor.items())), frozenset(self.bulk), self.requeue_pending)

    def sticky(self, j: int) -> bool:
        """``stickyMatches``: ``j`` is its ClusterQueue's preemptor and the queueing strategy makes it sticky."""
        return (self.cfg.sticky_head and self.cfg.queueing == "BestEffortFIFO"
                and self.preemptor.get(self.tree.workloads[j].cq) == j)

    def head_key(self, j: int) -> tuple:
        """``baseCompareFunc``: sticky first, higher priority, earlier creation (timestamp, then UID)."""
        return (not self.sticky(j), -self.tree.priority[j], self.tree.queue_ts(j), j)

    def cls(self, j: int) -> tuple:
        """``computeSchedulingHash``: priority and requests (one pod set, one flavour); per ClusterQueue."""
        w = self.tree.workloads[j]
        return (w.cq, self.tree.requests[j], w.priority)

    def pop_heads(self) -> dict[int, int]:
        heads: dict[int, int] = {}
        for j in sorted(self.active, key=self.head_key):
            cq = self.tree.workloads[j].cq
            if cq not in heads:
                heads[cq] = j
        self.active -= set(heads.values())
        return heads

    def push(self, j: int) -> None:
        """``PushOrUpdate`` of a pending workload (created, or evicted): a bulk-moved class goes inadmissible."""
        hashing = self.cfg.equivalence_hashing and self.cfg.queueing == "BestEffortFIFO"
        (self.inadmissible if hashing and self.cls(j) in self.bulk else self.active).add(j)

    def requeue(self, j: int, reason: str) -> None:
        """``RequeueIfNotPresent`` / ``requeueIfNotPresent`` for a head that was not admitted."""
        cq = self.tree.workloads[j].cq
        if reason == PENDING_PREEMPTION and self.cfg.sticky_head:
            self.preemptor[cq] = j
        strict = self.cfg.queueing == "StrictFIFO"
        if strict or reason in _IMMEDIATE:
            self.inadmissible.discard(j)
            self.active.add(j)
            return
        self.inadmissible.add(j)
        if self.cfg.equivalence_hashing and reason in _BULK:  # handleInadmissibleHash (BestEffortFIFO only)
            c = self.cls(j)
            self.bulk.add(c)
            moved = {k for k in self.active if self.cls(k) == c}
            self.active -= moved
            self.inadmissible |= moved

    def admit(self, j: int) -> None:
        """Pending -> QuotaReserved: the workload leaves the queues (``delete`` clears the preemptor)."""
        self.admitted.append(j)
        cq = self.tree.workloads[j].cq
        if self.preemptor.get(cq) == j:
            del self.preemptor[cq]

    def evict(self, victims: Sequence[int]) -> None:
        """QuotaReserved -> Pending for every victim, then (now, or when idle) the requeue of inadmissible ones."""
        gone = set(victims)
        self.admitted = [a for a in self.admitted if a not in gone]
        for v in victims:
            self.push(v)
        if self.cfg.requeue_timing == "eager":
            self.requeue_inadmissible()
        else:
            self.requeue_pending = True

    def requeue_inadmissible(self) -> None:
        """``queueInadmissibleWorkloads`` on every ClusterQueue of the root cohort's tree."""
        self.active |= self.inadmissible
        self.inadmissible = set()
        self.bulk = set()
        self.requeue_pending = False


def arrive(tree: Tree, cfg: Config, st: QueueState, workloads: Sequence[int]) -> QueueState:
    """New workloads are created (``AddOrUpdateWorkload`` -> ``PushOrUpdate``); no requeue of inadmissible ones."""
    q = _Queues(tree, cfg, st)
    for j in workloads:
        q.push(j)
    return q.freeze()


def withdraw(tree: Tree, cfg: Config, st: QueueState, gone: Sequence[int]) -> QueueState:
    """Workloads deleted or finished (``deleteWorkloadWithoutLock``; ``delete`` clears a preemptor): they leave
    every set; if one held quota, the root cohort's inadmissible workloads are requeued
    (``QueueAssociatedInadmissibleWorkloadsAfter``)."""
    q = _Queues(tree, cfg, st)
    out = set(gone)
    freed = any(a in out for a in q.admitted)
    q.admitted = [a for a in q.admitted if a not in out]
    q.active -= out
    q.inadmissible -= out
    q.preemptor = {cq: j for cq, j in q.preemptor.items() if j not in out}
    if freed:
        q.requeue_inadmissible()
    return q.freeze()


def evict(tree: Tree, cfg: Config, st: QueueState, victims: Sequence[int]) -> QueueState:
    """Admitted workloads evicted outside a cycle (QuotaReserved -> Pending, pushed back), then the requeue of
    inadmissible ones (``Config.requeue_timing``)."""
    q = _Queues(tree, cfg, st)
    q.evict([v for v in victims if v in set(st.admitted)])
    return q.freeze()


def requeue_inadmissible(tree: Tree, cfg: Config, st: QueueState) -> QueueState:
    """``QueueAssociatedInadmissibleWorkloadsAfter``: every inadmissible workload of the root cohort's tree back to
    its heap (an admitted workload's effective priority changed, quota was freed, a quota changed)."""
    q = _Queues(tree, cfg, st)
    q.requeue_inadmissible()
    return q.freeze()


def requeue(tree: Tree, cfg: Config, st: QueueState, j: int, reason: str) -> QueueState:
    """``RequeueIfNotPresent`` of workload ``j`` (popped, so in no set) with ``reason``, alone."""
    q = _Queues(tree, cfg, st)
    q.active.discard(j)
    q.inadmissible.discard(j)
    q.requeue(j, reason)
    return q.freeze()


@dataclass(frozen=True)
class Head:
    """One head's cycle: its nomination (``mode``: NoFit, Fit, Preempt; ``targets``) and ``processEntry``'s
    outcome (``reason``: one of :data:`REASONS`; ``targets`` then are the ones issued, if any)."""

    workload: int
    mode: str
    reason: str
    targets: tuple = ()
    sticky: bool = False


@dataclass(frozen=True)
class CycleResult:
    """``state`` after the cycle and its events; ``heads`` in the tournament's processing order."""

    state: QueueState
    heads: tuple = ()
    admitted: tuple = ()
    preempted: tuple = ()  # (preemptor, targets) per issued preemption

    @property
    def did_something(self) -> bool:
        return bool(self.admitted or self.preempted)


def _nominate(tree: Tree, cfg: Config, admitted: Sequence[int], usage: list, j: int) -> tuple[str, tuple]:
    need = needs_preemption(tree, usage, j)
    if need is None:
        return NO_FIT, ()
    if not need:
        return "Fit", ()
    return "Preempt", tuple(get_targets(tree, cfg, admitted, j, usage))


def schedule(tree: Tree, cfg: Config, st: QueueState) -> CycleResult:
    """One scheduling cycle and the events it causes (module docstring)."""
    q = _Queues(tree, cfg, st)
    if q.requeue_pending and not q.active:  # requeue_timing "idle": the scheduler would block; the requeue lands
        q.requeue_inadmissible()
    heads = q.pop_heads()
    sticky = {j: q.sticky(j) for j in heads.values()}
    usage = tree.usage(st.admitted)
    nominated = {cq: _nominate(tree, cfg, st.admitted, usage, j) for cq, j in heads.items()}
    snap = [list(row) for row in usage]  # the snapshot: + what this cycle reserves (cq.AddUsage)
    # computeDRS simulates each head's assignment usage: a NoFit head has none (cohort.nominee_requests)
    t = _Tournament(tree, ADMISSION[cfg.drs], snap, nominee_requests(tree, tree.requests), heads)
    victims: list[int] = []
    done: list[Head] = []
    preempted: list[tuple] = []
    while (j := t.winner()) is not None:
        cq = tree.workloads[j].cq
        mode, targets = nominated[cq]
        reason, targets = _process(tree, cfg, st.admitted, snap, victims, j, mode, targets)
        if reason == ADMITTED:
            q.admit(j)
        elif reason == PENDING_PREEMPTION and targets:
            victims += targets
            preempted.append((j, targets))
        done.append(Head(j, mode, reason, targets, sticky[j]))
        t.remove(cq)
    for h in done:  # requeueAndUpdate, after every entry was processed
        if h.reason != ADMITTED:
            q.requeue(h.workload, h.reason)
    if victims:
        q.evict(victims)
    return CycleResult(q.freeze(), tuple(done), tuple(h.workload for h in done if h.reason == ADMITTED),
                       tuple(preempted))


def _process(tree: Tree, cfg: Config, admitted: Sequence[int], snap: list, victims: list, j: int, mode: str,
             targets: tuple) -> tuple[str, tuple]:
    """``processEntry`` for head ``j`` (``updateAssignmentIfNeeded`` first): (reason, targets issued)."""
    if mode == "Preempt" and set(targets) & set(victims):  # overlap: re-assign without this cycle's victims
        without = [list(row) for row in snap]
        for v in victims:
            tree.add(without, v, -1)
        need = needs_preemption(tree, without, j)
        if need is None:
            mode, targets = NO_FIT, ()
        elif not need:
            mode, targets = "DeferredFit", ()
        else:
            targets = tuple(get_targets(tree, cfg, [a for a in admitted if a not in victims], j, without))
    if mode == NO_FIT:
        return NO_FIT, ()
    if mode == "Preempt" and not targets:
        if cfg.policy(tree, tree.workloads[j].cq)[0] != "Any":  # reserveCapacity...: not CanAlwaysReclaim
            tree.add(snap, j, 1)
        return NO_CANDIDATES, ()
    if mode == "DeferredFit":
        tree.add(snap, j, 1)
        return PENDING_PREEMPTION, ()
    if set(targets) & set(victims):
        return FAILED_AFTER_NOMINATION, ()
    sim = [list(row) for row in snap]
    for v in set(victims) | set(targets):
        tree.add(sim, v, -1)
    if not fits(tree, sim, j):
        return FAILED_AFTER_NOMINATION, ()
    tree.add(snap, j, 1)
    return (PENDING_PREEMPTION, targets) if mode == "Preempt" else (ADMITTED, ())


@dataclass(frozen=True)
class Outcome:
    """``kind``: ``"settled"`` (every stage reached a state no cycle changes), ``"loop"`` (a state repeated with
    something done in between: ``loop`` are the cycles from the first repeated state on), ``"limit"``."""

    kind: str
    steps: int
    loop: tuple = ()
    trace: tuple = field(default=(), repr=False)
    stage: int = 0

    @property
    def loop_kind(self) -> Optional[str]:
        return classify(self.loop) if self.kind == "loop" else None


def classify(loop: Sequence[CycleResult]) -> str:
    """``"chain"``: every preemptor of the loop is admitted within it (preemptions answer preemptions, the case
    upstream's proof is about); ``"starved"``: some preemptor never is (its victims come back through admission
    and it preempts them again); ``"stall"``: no preemption in the loop (cannot happen: without evictions the
    queues only move forward)."""
    preemptors = {p for r in loop for p, _ in r.preempted}
    if not preemptors:
        return "stall"
    admitted = {j for r in loop for j in r.admitted}
    return "chain" if preemptors <= admitted else "starved"


def run(tree: Tree, cfg: Config, arrivals: bool = False, max_steps: int = 10_000,
        stages: Optional[Sequence[Sequence[int]]] = None) -> Outcome:
    """Kueue from the empty cluster: the workloads are created in ``stages`` (groups, each created once the
    previous has settled); default all at once (``arrivals=False``) or one at a time in creation order."""
    J = len(tree.workloads)
    if stages is None:
        stages = [[j] for j in range(J)] if arrivals else [list(range(J))]
    st = QueueState()
    trace: list[CycleResult] = []
    states = RepeatDetector()  # the generic repeated-state detector (mechverify.cycles)
    for k, group in enumerate(stages):
        st = arrive(tree, cfg, st, group)
        states.forget()  # new workloads: a state of an earlier stage proves nothing
        states.see(st)
        while True:
            if len(trace) >= max_steps:
                return Outcome("limit", len(trace), (), tuple(trace), k)
            res = schedule(tree, cfg, st)
            if res.state == st and not res.did_something:
                break
            trace.append(res)
            loop = states.see(res.state, res)
            if loop is not None:  # the cycles from the first occurrence of the state on
                return Outcome("loop", len(trace), loop.between, tuple(trace), k)
            st = res.state
    return Outcome("settled", len(trace), (), tuple(trace), len(stages) - 1)
