"""Kueue's queue manager and scheduling cycle (src/mechanisms/ports/kueue/scheduling.py) on upstream's own scenarios.

Upstream's scenarios are Go unit and integration tests @ ff69552e79ad21652c36caa97038382e55625cf7 that cannot run
here; each is re-encoded with upstream's objects (queues, quotas, weights, priorities, requests, creation order)
and upstream's expected outcome.  An integration test creates workloads in steps and waits in between; a STAGE
here is one such step (created together, run until settled).  Upstream finishes evictions by hand
(``FinishEvictionOfWorkloadsInCQ``); the model finishes them before the next cycle, so assertions about the
moments in between are not re-encoded, only the settled outcome and the cumulative metrics.

Not expressible, and why:
* fair_sharing_test.go "sticky workload becomes inadmissible. next workload admits" and "sticky workload deleted,
  next workload can admit": the point of both is an event (a Cohort's quota lowered; the sticky workload
  deleted) WHILE the preemptor's evictions are in flight; the model completes evictions before the next cycle
  and has no quota changes or deletions.
* "Should prevent other workloads from stealing quota when preemptor is waiting for multiple evictions":
  ``PrioritizePreemptorWorkloads`` (off by default, not modelled) and one eviction finished before the other.
* "hero workload sticks to preferred flavor if overlap resolved", "Prefers flavor with remaining guarantees at
  Cohort level": several flavours.  The AdmissionFairSharing scenarios: usage decay, not modelled.
"""
from __future__ import annotations

from fractions import Fraction as F

import pytest

from mechanisms.ports.kueue.drs import dominant_resource_share
from mechanisms.ports.kueue.preemption import HISTORIC_6925, NO_STICKY, Config, Node, Tree, Workload
from mechanisms.ports.kueue.scheduling import (FAILED_AFTER_NOMINATION, NO_CANDIDATES, NO_FIT, PENDING_PREEMPTION,
                                         QueueState, arrive, requeue, run, schedule)


def build(nodes: dict, workloads: list) -> Tree:
    """``nodes``: name -> (parent, cpu quota, weight), parents first; ``workloads``: (name, cq, cpu, priority) in
    creation order."""
    names = list(nodes)
    ns = [Node(n, None if p is None else names.index(p), (F(q),), F(w)) for n, (p, q, w) in nodes.items()]
    return Tree(ns, ["cpu"], [Workload(n, names.index(cq), (F(c),), pr) for n, cq, c, pr in workloads])


def by_name(tree: Tree, names: str) -> list[int]:
    return [next(j for j, w in enumerate(tree.workloads) if w.name == n) for n in names.split()]


def holding(tree: Tree, state: QueueState) -> dict:
    """ClusterQueue name -> number of admitted workloads (``reserving_active_workloads``)."""
    out: dict = {}
    for j in state.admitted:
        out[tree.names[tree.workloads[j].cq]] = out.get(tree.names[tree.workloads[j].cq], 0) + 1
    return out


def admissions(tree: Tree, out) -> dict:
    """ClusterQueue name -> cumulative admissions over the run (``admitted_workloads_total``)."""
    got: dict = {}
    for r in out.trace:
        for j in r.admitted:
            got[tree.names[tree.workloads[j].cq]] = got.get(tree.names[tree.workloads[j].cq], 0) + 1
    return got


def weighted_share(tree: Tree, state: QueueState, node: str) -> F:
    """The node's weighted share as upstream's ``*_weighted_share`` metric reports it (precise; the status field
    ``WeightedShare`` is its ceiling)."""
    n = tree.names.index(node)
    usage = tree.usage(state.admitted)[n]
    d = dominant_resource_share(tree.resources, usage, tree.subtree[n], tree.lendable, tree.weight[n], None, n != 0)
    return d.precise()


# ---------------------------------------------------------------------- cluster_queue_test.go
@pytest.mark.parametrize("reason, inadmissible, sticky", [
    (FAILED_AFTER_NOMINATION, False, False), (PENDING_PREEMPTION, False, True), (NO_FIT, True, False),
    (NO_CANDIDATES, True, False)])
def test_best_effort_fifo_requeue(reason, inadmissible, sticky):
    """``TestBestEffortFIFORequeueIfNotPresent`` (cluster_queue_test.go): which reasons park a workload as
    inadmissible and which make it the sticky preemptor (PreemptionFailed and NamespaceMismatch are not
    reachable in the model)."""
    tree = build({"root": (None, 1, 1), "cq": ("root", 1, 1)}, [("workload-1", "cq", 1, 0)])
    st = requeue(tree, Config(), QueueState(), 0, reason)
    assert (0 in st.inadmissible, 0 in st.active) == (inadmissible, not inadmissible)
    assert (st.preemptor == ((1, 0),)) == sticky
    strict = requeue(tree, Config(queueing="StrictFIFO"), QueueState(), 0, reason)
    assert strict.active == {0} and not strict.inadmissible  # StrictFIFO: every reason is immediate


def test_sticky_preemptor_heads_its_queue_until_admitted():
    """``baseCompareFunc``: the sticky workload first, whatever its priority; StrictFIFO records it but does
    not make it sticky.  w0 (priority 9) and w1 (priority 0) in one ClusterQueue that holds 2; w1 is the
    preemptor."""
    tree = build({"root": (None, 0, 1), "cq": ("root", 2, 1)}, [("w0", "cq", 2, 9), ("w1", "cq", 2, 0)])
    st = QueueState(active=frozenset({0, 1}), preemptor=((1, 1),))
    r = schedule(tree, Config(), st)
    assert [(h.workload, h.sticky) for h in r.heads] == [(1, True)] and r.admitted == (1,)
    assert r.state.preemptor == ()  # cleared on admission (delete)
    assert schedule(tree, Config(queueing="StrictFIFO"), st).admitted == (0,)
    assert schedule(tree, Config().version(**NO_STICKY), st).admitted == (0,)


def test_equivalence_class_is_bulk_moved():
    """``handleInadmissibleHash``: once a workload is parked for NoFit, the heap workloads of its ClusterQueue
    with the same priority and requests follow it, and an evicted one of that class is pushed there too until
    the next requeue of inadmissible workloads.  cq (quota 1) with a, b (2 CPU each, NoFit) and c (1 CPU)."""
    tree = build({"root": (None, 0, 1), "cq": ("root", 1, 1)}, [("a", "cq", 2, 0), ("b", "cq", 2, 0),
                                                                  ("c", "cq", 1, 0)])
    st = arrive(tree, Config(), QueueState(), [0, 1, 2])
    r = schedule(tree, Config(), st)
    assert [(h.workload, h.reason) for h in r.heads] == [(0, NO_FIT)]
    assert r.state.inadmissible == {0, 1} and r.state.active == {2}
    no_hash = schedule(tree, Config(equivalence_hashing=False), st)
    assert no_hash.state.inadmissible == {0} and no_hash.state.active == {1, 2}


# ---------------------------------------------------------------------- fair_sharing_test.go
def _weight0_cluster():
    """"should not cause an infinite preemption cycle": Cohort top-cohort (8 CPU), two ClusterQueues of weight 0
    and quota 0 (reclaimWithinCohort Any); wlA1 (priority 9001) and wlA2 (100) in cq-a, 4 CPU each, admitted;
    then wlB1 (100, 4 CPU) in cq-b."""
    return build({"top-cohort": (None, 8, 1), "cq-a": ("top-cohort", 0, 0), "cq-b": ("top-cohort", 0, 0)},
                 [("wlA1", "cq-a", 4, 9001), ("wlA2", "cq-a", 4, 100), ("wlB1", "cq-b", 4, 100)])


def test_weight0_integration_case_settles_at_the_pin():
    """Upstream expects wlB1 to preempt wlA2 (the lower priority), then wlA1 and wlB1 to run, no more
    preemptions."""
    tree = _weight0_cluster()
    out = run(tree, Config(), stages=[[0, 1], [2]])
    assert out.kind == "settled"
    assert [p for r in out.trace for p in r.preempted] == [(2, (1,))]
    assert set(out.trace[-1].state.admitted) == {0, 2}


def test_weight0_loop_before_pr6925():
    """Before PR 6925 both weight-0 queues had the int share MaxInt: wlA2 (earlier FIFO, equal priority) wins the
    tie against its preemptor wlB1 and is admitted back; wlB1 preempts it again: issue 6774's loop."""
    out = run(_weight0_cluster(), Config().version(**HISTORIC_6925), stages=[[0, 1], [2]])
    assert out.kind == "loop" and out.loop_kind == "starved"
    assert [(r.state.admitted, r.admitted, r.preempted) for r in out.loop] == [
        ((0,), (), ((2, (1,)),)), ((0, 1), (1,), ())]


def test_one_cycle_preemptor_waits_for_eviction():
    """processEntry: a preemptor evicts its targets and is admitted in a LATER cycle."""
    tree = _weight0_cluster()
    st = QueueState(admitted=(0, 1), active=frozenset({2}))
    r = schedule(tree, Config(), st)
    assert r.state.admitted == (0,) and r.preempted == ((2, (1,)),) and r.admitted == ()
    assert r.state.preemptor == ((2, 2),) and r.state.active == {1, 2}
    assert schedule(tree, Config(), r.state).admitted == (2,)


P1P2 = {"root-cohort": (None, 0, 1), "cohort-a": ("root-cohort", 9, 1), "cq-p1": ("cohort-a", 0, 1),
        "cq-p2": ("cohort-a", 0, 1)}
P1P2_CFG = Config(reclaim="Any", within="LowerPriority")


@pytest.mark.parametrize("name, blockers, small", [
    ("workload of size 5 preempts using LessThanInitialShare policy and admits", [], 5),
    ("workload of size 5 admits with inadmissible higher priority workload at ClusterQueue head", [6], 5),
    ("workload of size 4 admits with inadmissible higher priority workload at ClusterQueue head", [6], 4),
    ("workload admits when several higher priority blocking workloads in front", [7, 6], 5)])
def test_pr7157_clusterqueue_head_ineligible(name, blockers, small):
    """PR 7157's scenarios (kueue 7101): cq-p1 and cq-p2 (quota 0, weight 1) under cohort-a (9 CPU); four 2-CPU
    workloads fill cq-p1; the ``blockers`` (priority 999) in cq-p2 cannot preempt (a 6 needs 667 <= cq-p1's
    share after a removal, 444, or < its 667 before: neither) and are parked; then ``small`` (priority 0) is
    created.  Upstream: admitted totals cq-p1 4 and cq-p2 1 (no re-admission in cq-p1), weighted shares
    cq-p1 445 (4 CPU: 4000 / 9, ceiling) and cq-p2 ``p2_share`` -- with the sticky head, the small workload,
    once it has preempted, stays the head of cq-p2 when the eviction requeues the blockers."""
    wls = [(f"p1-{i}", "cq-p1", 2, 0) for i in range(4)] + [(f"blocker{c}", "cq-p2", c, 999) for c in blockers]
    wls.append(("small", "cq-p2", small, 0))
    tree = build(P1P2, wls)
    stages = [[0, 1, 2, 3]] + [[4 + i] for i in range(len(blockers))] + [[len(wls) - 1]]
    out = run(tree, P1P2_CFG, stages=stages)
    final = out.trace[-1].state
    assert out.kind == "settled" and admissions(tree, out) == {"cq-p1": 4, "cq-p2": 1}
    assert [tree.workloads[j].name for j in final.admitted if tree.workloads[j].cq == 3] == ["small"]
    assert (weighted_share(tree, final, "cq-p1"), weighted_share(tree, final, "cq-p2")) == (F(4000, 9),
                                                                                          F(small * 1000, 9))
    if blockers:  # without the sticky head, a blocker heads cq-p2 after the eviction and cq-p1 takes quota back
        loose = run(tree, P1P2_CFG.version(**NO_STICKY), stages=stages)
        assert admissions(tree, loose) != {"cq-p1": 4, "cq-p2": 1}


def test_kueue_6929_workload_behind_an_inadmissible_head_admits():
    """"workload which fits behind ClusterQueue head is able to admit" (kueue 6929): cohort-a (3 CPU) holds cq1
    (quota 0); cq2 (quota 0) is beside it under root; two 1-CPU workloads borrow in cq2; a 4-CPU workload
    (priority 999) in cq1 can never fit (NoFit: 4 > 3); a 3-CPU one (priority 0) reclaims cohort-a's quota.
    Upstream @ the pin: admitted totals cq1 1, cq2 2; weighted shares 1000 (cq1 borrows all 3 CPU it holds, of
    a lendable 3) and 0.  (PR 7157's first version of this test expected 0 for cq1; the pin's expects 1000.)"""
    tree = build({"root": (None, 0, 1), "cohort-a": ("root", 3, 1), "cq1": ("cohort-a", 0, 1),
                  "cq2": ("root", 0, 1)},
                 [("b1", "cq2", 1, 0), ("b2", "cq2", 1, 0), ("big", "cq1", 4, 999), ("fits", "cq1", 3, 0)])
    out = run(tree, Config(reclaim="Any", within="LowerPriority"), stages=[[0, 1], [2], [3]])
    final = out.trace[-1].state
    assert out.kind == "settled" and admissions(tree, out) == {"cq1": 1, "cq2": 2}
    assert final.admitted == (3,)
    assert (weighted_share(tree, final, "cq1"), weighted_share(tree, final, "cq2")) == (1000, 0)


def test_fair_share_with_preemption_three_queues():
    """"Preemption is enabled / Admits workloads respecting fair share": a, b, c (3 CPU each, cohort all);
    ten 1-CPU workloads in a (9 admitted), then five in b, then c0 in c.  Upstream's settled values: after b,
    a holds 5 and b 4 (shares 2000/9 and 1000/9); after c0, a and b hold 4 (share 1000/9 each; a's status 112,
    the ceiling) and c 1."""
    nodes = {"all": (None, 0, 1), "a": ("all", 3, 1), "b": ("all", 3, 1), "c": ("all", 3, 1)}
    wls = ([(f"a{i}", "a", 1, 0) for i in range(10)] + [(f"b{i}", "b", 1, 0) for i in range(5)]
           + [("c0", "c", 1, 0)])
    tree = build(nodes, wls)
    cfg = Config(reclaim="Any", within="LowerPriority")
    mid = run(tree, cfg, stages=[list(range(10)), list(range(10, 15))])
    assert mid.kind == "settled" and holding(tree, mid.trace[-1].state) == {"a": 5, "b": 4}
    out = run(tree, cfg, stages=[list(range(10)), list(range(10, 15)), [15]])
    final = out.trace[-1].state
    assert out.kind == "settled" and holding(tree, final) == {"a": 4, "b": 4, "c": 1}
    assert [weighted_share(tree, final, q) for q in "abc"] == [F(1000, 9), F(1000, 9), 0]


def test_hierarchical_cohorts_preempt_to_enforce_fair_share():
    """"using hierarchical cohorts / preempts workloads to enforce fair share": root (12 CPU) -> best-effort
    (weight 1/2) and research -> chemistry, physics, llm (weight 2); one ClusterQueue (quota 0) in each;
    research queues reclaimWithinCohort LowerPriority, best-effort's queue none (Never).  Six priority -1
    workloads each in best-effort and physics fill the cluster; then six priority-100 workloads per queue.
    Upstream: best-effort 4, chemistry 2, physics 2, llm 4."""
    nodes = {"root": (None, 12, 1), "research": ("root", 0, 1), "chemistry": ("research", 0, 1),
             "physics": ("research", 0, 1), "llm": ("research", 0, 2), "best-effort": ("root", 0, F(1, 2)),
             "chemistry-queue": ("chemistry", 0, 1), "physics-queue": ("physics", 0, 1),
             "llm-queue": ("llm", 0, 1), "best-effort-queue": ("best-effort", 0, 1)}
    queues = ["chemistry-queue", "physics-queue", "llm-queue", "best-effort-queue"]
    wls = [w for i in range(6) for w in ((f"be{i}", "best-effort-queue", 1, -1), (f"ph{i}", "physics-queue", 1, -1))]
    wls += [(f"{q}-hi{i}", q, 1, 100) for i in range(6) for q in queues]
    tree = build(nodes, wls)
    cfg = Config(reclaim="LowerPriority", within="Never", overrides=(("best-effort-queue", "Never", "Never"),))
    out = run(tree, cfg, stages=[list(range(12)), list(range(12, 36))])
    assert out.kind == "settled"
    assert holding(tree, out.trace[-1].state) == {"best-effort-queue": 4, "chemistry-queue": 2,
                                                  "physics-queue": 2, "llm-queue": 4}


def test_large_quotas_and_weights_reclaim_nominal():
    """"Queue can reclaim its nominal quota" (kueue 6577): a and b (600 CPU, weight 300); ten 100-CPU workloads
    in a, then a 500-CPU one in b.  Upstream: a holds 7, b 1."""
    tree = build({"all": (None, 0, 1), "a": ("all", 600, 300), "b": ("all", 600, 300)},
                 [(f"a{i}", "a", 100, 0) for i in range(10)] + [("b0", "b", 500, 0)])
    out = run(tree, Config(reclaim="Any", within="LowerPriority"), stages=[list(range(10)), [10]])
    assert out.kind == "settled" and holding(tree, out.trace[-1].state) == {"a": 7, "b": 1}


def test_guaranteed_workload_preempts_a_single_best_effort_one():
    """"Guaranteed workloads cause preemption of a single best effort workload": best-effort-a and -b (quota 0,
    no preemption), guaranteed (8 CPU, reclaimWithinCohort Any); a 4-CPU workload of priority 2 in a, one of
    priority 1 in b, then a 4-CPU one in guaranteed.  Upstream: only b's is evicted, the guaranteed one runs."""
    tree = build({"all": (None, 0, 1), "best-effort-a": ("all", 0, 1), "best-effort-b": ("all", 0, 1),
                  "guaranteed": ("all", 8, 1)},
                 [("a", "best-effort-a", 4, 2), ("b", "best-effort-b", 4, 1), ("g", "guaranteed", 4, 0)])
    cfg = Config(reclaim="Never", within="Never", overrides=(("guaranteed", "Any", "Never"),))
    out = run(tree, cfg, stages=[[0], [1], [2]])
    assert out.kind == "settled" and [p for r in out.trace for p in r.preempted] == [(2, (1,))]
    assert set(out.trace[-1].state.admitted) == {0, 2}


def test_hierarchical_cohorts_admit_round_robin():
    """"using hierarchical cohorts / admits workloads respecting fair share": root -> first-left -> second-left
    (cq 2 CPU), second-right (cq 2 CPU); root -> first-right -> bank (10 CPU); five 1-CPU workloads in each
    ClusterQueue, created alternately.  Upstream: all ten admitted; first-left's share 6000/14 (it holds 10 of
    its quota 4, borrowing 6 of the lendable 14)."""
    tree = build({"root": (None, 0, 1), "first-left": ("root", 0, 1), "first-right": ("root", 0, 1),
                  "second-left": ("first-left", 0, 1), "second-right": ("first-left", 0, 1),
                  "bank": ("first-right", 10, 1), "cq-l": ("second-left", 2, 1), "cq-r": ("second-right", 2, 1)},
                 [w for i in range(5) for w in ((f"l{i}", "cq-l", 1, 0), (f"r{i}", "cq-r", 1, 0))])
    out = run(tree, Config(reclaim="Never", within="Never"))
    final = out.trace[-1].state
    assert out.kind == "settled" and holding(tree, final) == {"cq-l": 5, "cq-r": 5}
    assert weighted_share(tree, final, "first-left") == F(6000, 14)


# ---------------------------------------------------------------------- kueue issue 14543
def test_issue_14543_loop_at_the_pin():
    """The issue's integration test (commit 7e9aaf4b of the reporter's fork): loop-cohort (no quota) with
    cq-reclaiming and cq-borrowing (10 CPU each, weight 1, withinClusterQueue LowerOrNewerEqualPriority,
    reclaimWithinCohort Any); w-base (6) and w-borrower (13) admitted; then w-incoming (8, priority 10) in
    cq-reclaiming.  Upstream observes "w-borrower is preempted, w-borrower is admitted" a hundred times.  The
    model loops the same way with the sticky head: w-incoming (targets [w-borrower] after fillBackWorkloads)
    preempts; with the victim gone both heads fit and the tournament takes w-borrower (cq-borrowing with it:
    3 x 1000 / 20 = 150) over the sticky w-incoming (cq-reclaiming with it: 14, 4 x 1000 / 20 = 200): the
    preemptor is starved by the admission order, which no queue-head rule can fix."""
    tree = build({"loop-cohort": (None, 0, 1), "cq-reclaiming": ("loop-cohort", 10, 1),
                  "cq-borrowing": ("loop-cohort", 10, 1)},
                 [("w-base", "cq-reclaiming", 6, 0), ("w-borrower", "cq-borrowing", 13, 0),
                  ("w-incoming", "cq-reclaiming", 8, 10)])
    out = run(tree, Config(within="LowerOrNewerEqualPriority"), stages=[[0, 1], [2]])
    assert out.kind == "loop" and out.loop_kind == "starved"
    assert [(r.preempted, r.admitted) for r in out.loop] == [((), (1,)), (((2, (1,)),), ())]
    assert [(h.workload, h.reason, h.sticky) for h in out.loop[0].heads] == [
        (1, "admitted", False), (2, FAILED_AFTER_NOMINATION, True)]
    late = run(tree, Config(within="LowerOrNewerEqualPriority", requeue_timing="idle"), stages=[[0, 1], [2]])
    assert late.loop_kind == "starved"  # whenever the eviction's requeue of inadmissible workloads lands
