"""``kueue-drs``: Kueue's fair sharing (dominant resource share, the admission tournament up the cohort tree) as a
whole-workload mechanism on a queue tree, with its ORDER in a state, and two historic buggy versions -- declared
once (:data:`PORT`).  The parts: the DRS of one node (:mod:`~mechanisms.ports.kueue.drs`), our queue tree as the
cohort tree and the comparison's versions (:mod:`~mechanisms.ports.kueue.cohort`), the admission cycles
(:mod:`~mechanisms.ports.kueue.tournament`), the order facet (:mod:`~mechanisms.ports.kueue.order`).  Kueue's
preemption model lives beside them (:mod:`~mechanisms.ports.kueue.preemption`,
:mod:`~mechanisms.ports.kueue.scheduling`, the cycle search :mod:`~mechanisms.ports.kueue.cycles`).

Source (read, not copied; our code follows the semantics): kubernetes-sigs/kueue @
ff69552e79ad21652c36caa97038382e55625cf7 (:data:`COMMIT`),

* ``pkg/cache/scheduler/fair_sharing.go``: ``dominantResourceShare``, ``calculateLendable``, the ``DRS`` type
  (``PreciseWeightedShare``, ``CompareDRS``, ``roundedWeightedShare``, ``IsBorrowingOn``, ``zeroWeightBorrows``);
  its test ``fair_sharing_test.go`` (``TestDominantResourceShare``, ``TestIsBorrowingOn``);
* ``pkg/cache/scheduler/resource_node.go``: ``SubtreeQuota``, ``Usage``, ``localQuota``, ``potentialAvailable``,
  ``accumulateFromChild``, ``addUsage``; ``clusterqueue_snapshot.go``: ``SimulateUsageAddition``, ``Fits``;
* ``pkg/scheduler/fair_sharing_iterator.go``: ``pop``, ``runTournament``, ``entryComparer.less``, ``computeDRS``;
* ``pkg/scheduler/scheduler.go``: ``schedule`` (one admission cycle), ``processEntry``;
* ``pkg/features/kube_features.go``: defaults ``FairSharingPrioritizeNonBorrowing`` on (beta, 0.17),
  ``PrioritySortingWithinCohort`` on, ``PrioritizePreemptorWorkloads`` off;
  ``apis/kueue/v1beta2/clusterqueue_types.go``: defaults ``queueingStrategy: BestEffortFIFO``,
  ``reclaimWithinCohort: Never``, ``withinClusterQueue: Never`` (no preemption);
* ``site/content/en/docs/concepts/fair_sharing.md`` (the preemption-loop proof and its open hierarchical case).

Historic versions (each registered as ``kueue-drs@<issue>``, its ``source`` citing issue, PRs and commits)
-------------------------------------------------------------------------------------------------------
* ``kueue-drs@6577`` -- issue 6577 "Fairsharing bug that prevents CQs from reclaiming guarantees", fixed by PR
  6617 (5106fb28c399ad05de55ca313db0238caa060c3a: ``max(1, ...)``) and PR 6925
  (efc4a1bc10eacdd8a86129ccae34eadf3dd75424: the exact ``DRS`` type).  Before them
  (``pkg/cache/fair_sharing.go`` @ 0b7ad55aaacf38892be32e3f33eb61bde28ae791, the parent of 6617) the DRS was
  int64 arithmetic, 0 for a borrowing queue with ``1000 b < lendable`` or ``drs < w``
  (:func:`mechanisms.ports.kueue.drs.integer_drs`, whose module states the formula); its tournament compared
  those integers, then priority, then FIFO (no non-borrowing step: that came with PR 9484).
* ``kueue-drs@10126`` -- issue 10126 "Incorrect admission ordering with FairSharingPrioritizeNonBorrowing",
  fixed by PR 10149 (2a9f6f00cae15104197f2c4a5e592f755c188799).  Before it
  (``pkg/scheduler/fair_sharing_iterator.go`` @ 66c2cf1a93ee3f19d8b29309d27832a4595d4106) step (1) of ``less``
  was ``assignment.RequiresBorrowing()`` -- whether the workload fits its ClusterQueue's OWN nominal quota --
  at EVERY level, so at a higher Cohort a workload whose ClusterQueue fits its quota beat one whose Cohort
  does not borrow, even when its own Cohort borrows (the issue's reproduction is a test).
* Not registered: issue 4961 (weight-0 cohorts preempted workloads within their nominal quota; PR 4962,
  887dddfe202e7b8d4b9d5cf3d05674e8946dfb4a): no instance can show it, our queue weights are > 0
  (:mod:`mechanisms.ports.kueue.drs` keeps its formula).

The variants' switches are :class:`mechanisms.ports.kueue.cohort.Policy`'s: ``integer`` (the integer DRS) and
``borrow_check`` (step (1) of the comparison).
"""
from __future__ import annotations

from typing import Optional

from mechverify.allocation import Allocation
from mechverify.model import Environment

from ...core.registry import Setting
from ...core.z3spec import Z3Spec
from ..declare import Fix, Pin, Port, Variant
from .cohort import Policy
from .order import order
from .tournament import kueue_drs_fast

__all__ = ["COMMIT", "PRE_6617", "PRE_10149", "UPSTREAM", "allocate", "PORT"]

_KUEUE = "kubernetes-sigs/kueue"
#: the pin
COMMIT = "ff69552e79ad21652c36caa97038382e55625cf7"
#: the parent of PR 6617's merge (5106fb28c3): the integer DRS of issue 6577
PRE_6617 = "0b7ad55aaacf38892be32e3f33eb61bde28ae791"
#: the parent of PR 10149's merge (2a9f6f00ca): the ClusterQueue-level non-borrowing step of issue 10126
PRE_10149 = "66c2cf1a93ee3f19d8b29309d27832a4595d4106"

UPSTREAM = (f"{_KUEUE} @ {COMMIT}: pkg/cache/scheduler/fair_sharing.go (dominantResourceShare, "
            "calculateLendable, CompareDRS, roundedWeightedShare), pkg/cache/scheduler/resource_node.go, "
            "pkg/scheduler/fair_sharing_iterator.go (runTournament, entryComparer.less, computeDRS), "
            "pkg/scheduler/scheduler.go (schedule, processEntry)")


def allocate(env: Environment, exact: bool = False, *, name: str = "kueue-drs", integer: bool = False,
             borrow_check: Optional[str] = "level") -> Allocation:
    """Kueue's fair-sharing admission (:mod:`mechanisms.ports.kueue.tournament`) with a version's comparison."""
    return kueue_drs_fast(env, Policy(integer=integer, borrow_check=borrow_check), name)


_SETTING = Setting(single_server=True, placement=False, external=False, bounds=True, weights=False,
                   divisible=False, requires_bounds=True, hierarchy=True, lends=True,
                   whole_requests=True)

_MAPPING = ("leaf queues are ClusterQueues, inner queues Cohorts, the root the root cohort whose own quota is the "
            "pool not guaranteed below it (max(0, c - sum of guarantees below)); a queue's guarantee is its own "
            "nominal quota (none: 0), so a Cohort's quota ADDS to its children's (the OWN reading; quota and the "
            "declaration warnings read a guarantee as the subtree's, docs/model.md); a queue's max is nominalQuota + borrowingLimit "
            "(admission sets aside a workload that would take a node above it; lendingLimit is not representable; "
            "the preemption model of the loop search does not read max); users are whole workloads of floor(n_j) pods (an inner queue's users in an "
            "implicit ClusterQueue '<queue>/.', the root's in '.', quota 0, weight 1); FIFO = declaration order, "
            "equal priorities; no lending limits, no preemption (upstream defaults); a popped workload "
            "that does not fit the pool is set aside for good; exact ratios (upstream: float64); the state's "
            "usage is not read by allocate; order: users compared as nominees (request = whole workload) at "
            "their lowest common Cohort (not transitive across levels: served_order gives the cycles' order)")
_NO_Z3 = Z3Spec.none("whole workloads admitted by a tournament on a queue tree: not encoded")


#: the port (``mechanisms.ports.declare``): the pinned version and the two historic ones
PORT = Port(
    name="kueue-drs",
    title="Kueue fair sharing: admission cycles of ClusterQueue heads by a tournament up the cohort tree on the "
          "dominant resource share (borrowed x 1000 / lendable, / weight) after admission; whole workloads",
    pins=tuple(Pin(_KUEUE, COMMIT, path) for path in (
        "pkg/cache/scheduler/fair_sharing.go", "pkg/cache/scheduler/resource_node.go",
        "pkg/scheduler/fair_sharing_iterator.go", "pkg/scheduler/scheduler.go")),
    source=UPSTREAM, setting=_SETTING,
    notes="port of the semantics (our code); " + _MAPPING + "; no claims (upstream states none)",
    z3=_NO_Z3, allocate=allocate, order=order,
    variants=(
        Variant(issue="6577", switches={"integer": True, "borrow_check": None},
                fixed_by=(Fix("6617", "5106fb28c399ad05de55ca313db0238caa060c3a"),
                          Fix("6925", "efc4a1bc10eacdd8a86129ccae34eadf3dd75424")),
                read_at=PRE_6617,
                title="Kueue fair sharing before PR 6617 (issue 6577): the integer DRS, which is 0 for a borrowing "
                      "queue when 1000 x borrowed < lendable or DRS < weight",
                source=(f"{_KUEUE} issue 6577, fixed by PR 6617 (5106fb28c399ad05de55ca313db0238caa060c3a) "
                        "and PR 6925 (efc4a1bc10eacdd8a86129ccae34eadf3dd75424); the DRS of pkg/cache/fair_sharing.go "
                        f"and the tournament of pkg/scheduler/fair_sharing_iterator.go @ {PRE_6617} (the parent of "
                        "6617)"),
                notes=("the historic version: ratio = borrowed x 1000 / lendable and DRS x 1000 / MilliValue(weight) "
                       "in int64 division (truncated), -1 when no borrowed resource is lendable; the tournament "
                       "compares those integers, then FIFO (no non-borrowing step); otherwise as kueue-drs: "
                       + _MAPPING)),
        Variant(issue="10126", switches={"borrow_check": "clusterqueue"},
                fixed_by=(Fix("10149", "2a9f6f00cae15104197f2c4a5e592f755c188799"),), read_at=PRE_10149,
                title="Kueue fair sharing before PR 10149 (issue 10126): the non-borrowing step of the tournament "
                      "asks whether the workload fits its ClusterQueue's own quota, at every level",
                source=(f"{_KUEUE} issue 10126, fixed by PR 10149 (2a9f6f00cae15104197f2c4a5e592f755c188799); "
                        f"pkg/scheduler/fair_sharing_iterator.go @ {PRE_10149} (the parent of 10149): "
                        "entryComparer.less step 1 = assignment.RequiresBorrowing()"),
                notes=("the historic version: step (1) of the comparison is the ClusterQueue-level 'requires "
                       "borrowing' of the nominee at every Cohort, not the compared subtree's borrowing (issue "
                       "4961, weight-0 cohorts, is not registered: our queue weights are > 0); otherwise as "
                       "kueue-drs: " + _MAPPING)),
    ))
PORT.register()
