"""The declaration of ``kueue-afs`` (Kueue's Admission Fair Sharing over time, :mod:`mechanisms.ports.kueue.afs`:
the model, its conventions and omissions) and its two historic versions.

* ``kueue-afs@5339`` -- issue 5339 "[AFS] Add entrance penalty for admitted Workloads": Kueue 0.12's AFS
  updated a LocalQueue's consumed usage only at the reconciler's samples, so every workload of a LocalQueue
  whose usage is lowest (or tied, e.g. all 0) is admitted ahead of the others until the next sample -- the
  KEP's "Entry penalty" burst (0.1 vs 0.05 CPU, 5 min).  Fixed by PR 5933
  (e7ad6900a2e1f373eca96469872f774889a42aa1, "Add entrance penalty for admitted Workloads", Kueue 0.13); read
  at its parent 847fa3ae80e9a38177d86853756551a5a3d3e99d (``pkg/controller/core/localqueue_controller.go``:
  ``reconcileConsumedUsage`` only; ``pkg/queue/cluster_queue.go``: ``queueOrderingFunc``).
* ``kueue-afs@11134`` -- issue 11134 "usageHalfLifeTime defaults to 0s when not explicitly set, effectively
  disabling admission fair sharing": with the half-life unset, ``calculateAlphaRate`` is 0, the entry penalty
  is 0 and the reconciler resets the consumed usage to empty, so every LocalQueue's usage is 0 and they all
  tie: the order is the base order (priority, timestamp) -- fair sharing silently off.  Open at the pin (the
  pin's ``apis/config/v1beta2/defaults.go`` defaults only the sampling interval); PR 15228 ("Default
  admissionFairSharing.usageHalfLifeTime to 1h", not merged at the pin) proposes the fix.  The registered
  ``kueue-afs`` sets the half-life explicitly, as a configured cluster does.
"""
from __future__ import annotations

from ...core.z3spec import Z3Spec
from ..declare import Fix, Pin, Port, Variant
from . import afs

__all__ = ["COMMIT", "PRE_5933", "PORT"]

_KUEUE = "kubernetes-sigs/kueue"
COMMIT = "ff69552e79ad21652c36caa97038382e55625cf7"
#: the parent of PR 5933's merge (e7ad6900a2): Kueue 0.12's AFS without the entry penalty
PRE_5933 = "847fa3ae80e9a38177d86853756551a5a3d3e99d"
_FILES = ("keps/4136-admission-fair-sharing/README.md", "pkg/util/admissionfairsharing/admission_fair_sharing.go",
          "pkg/cache/queue/cluster_queue.go", "pkg/controller/core/localqueue_controller.go",
          "pkg/controller/core/workload_controller.go", "pkg/scheduler/scheduler.go",
          "pkg/cache/queue/afs/usage_ledger.go", "apis/config/v1beta2/defaults.go")
_SOURCE = (f"{_KUEUE} @ {COMMIT}: keps/4136-admission-fair-sharing/README.md; "
           "pkg/util/admissionfairsharing/admission_fair_sharing.go (calculateAlphaRate, CalculateEntryPenalty, "
           "CalculateUsage, CalculateDecayedConsumed, LQWeightAsFloat64); pkg/cache/queue/cluster_queue.go "
           "(queueOrderingFunc, baseCompareFunc, Pop); pkg/controller/core/localqueue_controller.go (Reconcile, "
           "reconcileConsumedUsage); pkg/controller/core/workload_controller.go (updateAfsConsumedUsage); "
           "pkg/scheduler/scheduler.go (updateEntryPenalty); pkg/cache/queue/afs/usage_ledger.go; "
           "apis/config/v1beta2/defaults.go (usageSamplingInterval 5m, no usageHalfLifeTime default)")
_MODEL = ("time unit = one usageSamplingInterval (upstream default 5 min), half-life 1 unit (A = 1/2 per interval; "
          "no upstream default); ClusterQueues = the root's children, LocalQueues = their descendants (weight = the "
          "queue's weight; a workload directly in a ClusterQueue: an implicit LocalQueue, weight 1; outside every "
          "queue: an implicit ClusterQueue '.'); workloads = users, admitted whole (floor(tasks) x demand), equal "
          "priorities, timestamp = arrival, UID = declaration order; one pool shared by every ClusterQueue (no "
          "nominal quotas, borrowing or lending limits; declared guarantees and maxes not read); usage decayed "
          "towards the LocalQueue's held resources every interval from its LastUpdate, resourceWeights 1; "
          "BestEffortFIFO cycles (each ClusterQueue's head by (LocalQueue usage / weight, timestamp, UID), heads "
          "in FIFO order, a head that does not fit set aside until the next event); no preemption (a report "
          "change gives back); exact rationals; omitted: priorities, StrictFIFO, quotas, preemption, admission "
          "checks, resets, Cohort-level AdmissionScope, Quantity rounding; no claims (upstream states none)")
_Z3 = Z3Spec.none("a stateful admission policy over executions with whole workloads: not encoded")

PORT = Port(
    name="kueue-afs",
    title="Kueue admission fair sharing (KEP 4136): LocalQueues ordered in their ClusterQueue by decayed consumed "
          "usage / weight, entry penalty at admission; whole workloads, no preemption",
    pins=tuple(Pin(_KUEUE, COMMIT, p) for p in _FILES),
    source=_SOURCE, setting=afs.SETTING,
    notes="port of the semantics (our code); with the entry penalty A x request folded at admission; " + _MODEL,
    z3=_Z3, allocate=afs.allocate, order=None, time=afs.time_spec,
    variants=(
        Variant(issue="5339", switches={"entry_penalty": False},
                fixed_by=(Fix("5933", "e7ad6900a2e1f373eca96469872f774889a42aa1"),), read_at=PRE_5933,
                title="Kueue admission fair sharing before PR 5933 (issue 5339, Kueue 0.12): no entry penalty, a "
                      "LocalQueue's usage changes only at the samples",
                source=(f"{_KUEUE} issue 5339, fixed by PR 5933 (e7ad6900a2e1f373eca96469872f774889a42aa1); "
                        f"pkg/controller/core/localqueue_controller.go and pkg/queue/cluster_queue.go @ {PRE_5933} "
                        "(the parent of 5933); keps/4136-admission-fair-sharing/README.md, 'Entry penalty'"),
                notes="the historic version: no usage update at admission (the KEP's burst within one sampling "
                      "window); otherwise as kueue-afs: " + _MODEL),
        Variant(issue="11134", switches={"half_life": 0},
                fixed_by=(Fix("15228"),), read_at=COMMIT,
                title="Kueue admission fair sharing with usageHalfLifeTime unset (issue 11134): A = 0, usage always "
                      "0, every LocalQueue ties -- fair sharing silently off",
                source=(f"{_KUEUE} issue 11134 (open at the pin), fix proposed by PR 15228 (not merged at the pin); "
                        f"apis/config/v1beta2/defaults.go and pkg/util/admissionfairsharing/admission_fair_sharing.go "
                        f"@ {COMMIT}"),
                notes="the pinned code with its default configuration (half-life 0s): entry penalty and decay both "
                      "0, the reconciler resets usage; otherwise as kueue-afs: " + _MODEL),
    ))
PORT.register()
