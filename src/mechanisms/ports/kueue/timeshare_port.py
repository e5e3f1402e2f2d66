"""The declarations of Kueue's preemption over executions (:mod:`mechanisms.ports.kueue.timeshare`: the model,
its conventions and omissions):

* ``kueue-timeshare`` -- the pin's time-based same-priority preemption: the experimental priority booster
  (``cmd/experimental/kueue-priority-booster``, KEP 7990's boost signal) with ``withinClusterQueue:
  LowerPriority``, window 1 unit (30 min);
* ``kueue-timeshare@8522`` -- the same without the booster (``timeSharing.duration`` 0, the default, or the
  controller not deployed): the monopolisation issue 8522 reports (the first admitted workload runs until it
  ends while same-priority ones wait);
* ``kueue-preempt`` -- Kueue's fair-sharing preemption (reclaimWithinCohort Any, the rest upstream's defaults,
  the loop search's default policy) stepping through executions, with the sticky preemptor head of PR 7157;
* ``kueue-preempt@6929`` -- the same without the sticky head (the loop PR 7157 removed: kueue 6929 / 7101 /
  6947), a counterfactual at the pin (everything else is the pin's).
"""
from __future__ import annotations

from functools import partial

from ...core.z3spec import Z3Spec
from ..declare import Fix, Pin, Port, Variant
from . import timeshare
from .preemption import NO_STICKY, Config

__all__ = ["COMMIT", "TIMESHARE", "PREEMPT"]

_KUEUE = "kubernetes-sigs/kueue"
COMMIT = "ff69552e79ad21652c36caa97038382e55625cf7"
_BOOSTER = ("cmd/experimental/kueue-priority-booster/README.md",
            "cmd/experimental/kueue-priority-booster/pkg/controller/controller.go",
            "pkg/util/priority/priority.go", "pkg/scheduler/preemption/common/preemption_policy.go",
            "pkg/workload/workload.go", "pkg/cache/queue/cluster_queue.go",
            "pkg/controller/core/workload_controller.go", "pkg/features/kube_features.go")
_CYCLE = ("pkg/cache/queue/cluster_queue.go", "pkg/cache/queue/manager.go", "pkg/scheduler/scheduler.go",
          "pkg/scheduler/preemption/preemption.go", "pkg/scheduler/fair_sharing_iterator.go",
          "pkg/controller/core/workload_controller.go")
_MODEL = ("time unit = 30 min; our queue tree as the cohort tree (leaf queue = ClusterQueue, guarantee = nominal "
          "quota, inner queue = Cohort, the pool = the root's own quota; implicit ClusterQueues q/. and '.'); "
          "workloads = users (floor(tasks) x demand, admitted whole, equal base priorities, creation order = first "
          "appearance); the scheduler's queue manager and cycles as in the preemption-loop model (heaps, "
          "inadmissible set, sticky preemptor head, requeue reasons, tournament, evictions; eager requeue); "
          "cycles until settled (or a repeated state) at every event, ONE cycle per round event while the scheduler "
          "loops; a report change "
          "deletes and re-creates the workload; a preempted workload's work is kept; omitted: other priorities, "
          "borrowing limits, AdmissionFairSharing, reconcile and batch delays")
_TS_SOURCE = (f"{_KUEUE} @ {COMMIT}: " + "; ".join(_BOOSTER) + " (computeBoost: boost -negativeBoost once "
              "time.Since(Admitted) >= timeSharing.duration; EffectivePriority; SatisfiesPreemptionPolicy; "
              "GetQueueOrderTimestamp keeps the creation timestamp of a workload preempted within its ClusterQueue; "
              "PriorityChanged requeues the inadmissible workloads); the two other written designs (KEP 8522 "
              "minAdmitDuration, KEP 9876 preemptionProtection) are not in the pin")
_Z3 = Z3Spec.none("a stateful policy over executions with whole workloads: not encoded")

TIMESHARE = Port(
    name="kueue-timeshare",
    title="Kueue time-based same-priority preemption at the pin: the priority booster (boost -100000 once admitted "
          "for the window) with withinClusterQueue LowerPriority, over executions",
    pins=tuple(Pin(_KUEUE, COMMIT, p) for p in _BOOSTER),
    source=_TS_SOURCE, setting=timeshare.SETTING,
    notes="port of the semantics (our code); booster window 1 unit (the README's example 30m), negativeBoost "
          "100000 (its default), feature gate PriorityBoost on; " + _MODEL,
    z3=_Z3, allocate=timeshare.allocate, order=None, time=timeshare.time_spec,
    variants=(
        Variant(issue="8522", switches={"window": 0}, fixed_by=(), read_at=COMMIT,
                title="Kueue without time-based preemption (issue 8522): same-priority workloads never preempt "
                      "each other under withinClusterQueue LowerPriority; the first admitted runs to its end",
                source=(f"{_KUEUE} issue 8522 (open at the pin: 'A monopolizes the ClusterQueue quota'); "
                        f"cmd/experimental/kueue-priority-booster/pkg/controller/controller.go @ {COMMIT} "
                        "(timeSharing.duration 0, the default, disables the booster)"),
                notes="the pinned code with the booster off; otherwise as kueue-timeshare: " + _MODEL),
    ))
TIMESHARE.register()

PREEMPT = Port(
    name="kueue-preempt",
    title="Kueue fair-sharing preemption over executions: reclaimWithinCohort Any, the sticky preemptor head, the "
          "admission tournament, evictions",
    pins=tuple(Pin(_KUEUE, COMMIT, p) for p in _CYCLE),
    source=f"{_KUEUE} @ {COMMIT}: " + "; ".join(_CYCLE) + " (the preemption-loop model, docs/cycles.md)",
    setting=timeshare.SETTING,
    notes="port of the semantics (our code); no booster; reclaimWithinCohort Any, withinClusterQueue Never, both "
          "fair-sharing strategies, FairSharingPreemptWithinNominal on; " + _MODEL,
    z3=_Z3, allocate=partial(timeshare.allocate, cfg=timeshare.FAIR_SHARING, window=0), order=None,
    time=partial(timeshare.time_spec, name="kueue-preempt", cfg=timeshare.FAIR_SHARING, window=0),
    variants=(
        Variant(issue="6929", switches={"cfg": Config(**NO_STICKY)}, fixed_by=(Fix("7157"),), read_at=COMMIT,
                title="Kueue fair-sharing preemption without the sticky preemptor head (the loop of kueue 6929 / "
                      "7101 / 6947 that PR 7157 removed), a counterfactual at the pin",
                source=(f"{_KUEUE} issues 6929, 7101, 6947, fixed by PR 7157; pkg/cache/queue/cluster_queue.go "
                        f"@ {COMMIT} with the preemptorWorkload's stickiness taken out"),
                notes="the pin without PR 7157's sticky head; otherwise as kueue-preempt: " + _MODEL),
    ))
PREEMPT.register()
