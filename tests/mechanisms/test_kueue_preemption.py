"""Kueue's fair-sharing preemption (src/mechanisms/ports/kueue/preemption.py) on upstream's own cases.

Every expected target set is upstream's: ``pkg/scheduler/preemption/preemption_fair_test.go``
(``TestFairPreemptions``) and ``test/integration/singlecluster/scheduler/fairsharing/fair_sharing_test.go``
("should not cause an infinite preemption cycle") @ ff69552e79ad21652c36caa97038382e55625cf7.  Upstream's
admitted workloads all reserve quota at the same instant and carry their names as UIDs, so
``CandidatesOrdering`` ends on the names; our state lists them in REVERSE name order (the last admitted
first), which gives the same order."""
from __future__ import annotations

from fractions import Fraction as F

import pytest

from mechanisms.ports.kueue.preemption import S2A, S2B, Config, Node, Tree, Workload, get_targets

BASE = {"all": (None, 0, 1), "a": ("all", 3, 1), "b": ("all", 3, 1), "c": ("all", 3, 1),
        "preemptible": ("all", 0, 1)}


def build(nodes: dict, admitted: list, incoming: tuple):
    """``nodes``: name -> (parent, cpu quota, weight), parents first; ``admitted``: (name, cq, cpu, priority);
    ``incoming``: (name, cq, cpu, priority).  Returns (tree, state, preemptor index, names)."""
    names = list(nodes)
    ns = [Node(n, None if p is None else names.index(p), (F(q),), F(w)) for n, (p, q, w) in nodes.items()]
    wls = [Workload(n, names.index(cq), (F(cpu),), pr) for n, cq, cpu, pr in sorted(admitted)]
    wls.append(Workload(incoming[0], names.index(incoming[1]), (F(incoming[2]),), incoming[3]))
    tree = Tree(ns, ["cpu"], wls)
    state = tuple(reversed(range(len(wls) - 1)))
    return tree, state, len(wls) - 1, [w.name for w in wls]


def unit(names_cq: str, prio: int = 0):
    return [(n, n.rstrip("0123456789").split("_")[0], 1, prio) for n in names_cq.split()]


CASES = {
    "reclaim nominal from user using the most": (
        BASE, unit("a1 a2 a3 b1 b2 b3 b4 b5 c1"), ("c_incoming", "c", 1, 0), None, {"b1"}),
    "can reclaim from queue using less, if taking the latest workload from user using the most isn't enough": (
        BASE, [("a1", "a", 3, 0), ("a2", "a", 1, 0), ("b1", "b", 2, 0), ("b2", "b", 3, 0)],
        ("c_incoming", "c", 3, 0), None, {"a1"}),
    "reclaim borrowable quota from user using the most": (
        BASE, unit("a1 a2 a3 b1 b2 b3 b4 b5 c1"), ("a_incoming", "a", 1, 0), None, {"b1"}),
    "preempt one from each CQ borrowing": (
        BASE, [("a1", "a", F(1, 2), 0), ("a2", "a", F(1, 2), 0), ("a3", "a", 3, 0), ("b1", "b", F(1, 2), 0),
               ("b2", "b", F(1, 2), 0), ("b3", "b", 3, 0)], ("c_incoming", "c", 2, 0), None, {"a1", "b1"}),
    "can't preempt when everyone under nominal": (
        BASE, unit("a1 a2 a3 b1 b2 b3 c1 c2 c3"), ("c_incoming", "c", 1, 0), None, set()),
    "can't preempt when it would switch the imbalance": (
        BASE, unit("a1 a2 a3 b1 b2 b3 b4 b5"), ("a_incoming", "a", 2, 0), None, set()),
    "can preempt lower priority workloads from same CQ": (
        BASE, [("a1_low", "a", 1, -1), ("a2_low", "a", 1, -1)] + unit("a3 a4 b1 b2 b3 b4 b5"),
        ("a_incoming", "a", 2, 0), None, {"a1_low", "a2_low"}),
    "can preempt a combination of same CQ and highest user": (
        BASE, [("a_low", "a", 1, -1)] + unit("a2 a3 b1 b2 b3 b4 b5 b6"), ("a_incoming", "a", 2, 0), None,
        {"a_low", "b1"}),
    "preempt huge workload if there is no other option, as long as the target CQ gets a lower share": (
        BASE, [("b1", "b", 9, 0)], ("a_incoming", "a", 2, 0), None, {"b1"}),
    "can't preempt huge workload if the incoming is also huge": (
        BASE, [("a1", "a", 2, 0), ("b1", "b", 7, 0)], ("a_incoming", "a", 5, 0), None, set()),
    "can't preempt 2 smaller workloads if the incoming is huge": (
        BASE, [("b1", "b", 2, 0), ("b2", "b", 2, 0), ("b3", "b", 3, 0)], ("a_incoming", "a", 6, 0), None, set()),
    "preempt from target and others even if over nominal": (
        BASE, [("a1_low", "a", 2, -1), ("a2_low", "a", 1, -1), ("b1", "b", 3, 0), ("b2", "b", 3, 0)],
        ("a_incoming", "a", 4, 0), None, {"a1_low", "b1"}),
    "prefer to preempt workloads that don't make the target CQ have the biggest share": (
        BASE, [("b1", "b", 2, 0), ("b2", "b", 1, 0), ("b3", "b", 2, 0), ("c1", "c", 1, 0)],
        ("a_incoming", "a", F(7, 2), 0), None, {"b2"}),
    "preempt from different cluster queues if the end result has a smaller max share": (
        BASE, [("b1", "b", 2, 0), ("b2", "b", F(5, 2), 0), ("c1", "c", 2, 0), ("c2", "c", F(5, 2), 0)],
        ("a_incoming", "a", F(7, 2), 0), None, {"b1", "c1"}),
    "scenario above does not flap": (
        BASE, [("a1", "a", F(7, 2), 0), ("b2", "b", F(5, 2), 0), ("c2", "c", F(5, 2), 0)],
        ("b_incoming", "b", 2, 0), None, set()),
    "workloads under priority threshold not capriciously preempted": (
        BASE, unit("a1 a2 a3 b1 b2 b3") + unit("preemptible1 preemptible2 preemptible3", -3),
        ("a_incoming", "a", 2, 0), None, set()),
    "preempt lower priority first, even if big": (
        BASE, [("a1", "a", 3, 0), ("b_low", "b", 5, 0), ("b_high", "b", 1, 1)], ("a_incoming", "a", 1, 0),
        (S2B,), {"b_low"}),
    "preempt workload that doesn't transfer the imbalance, even if high priority": (
        BASE, [("a1", "a", 3, 0), ("b_low", "b", 5, 0), ("b_high", "b", 1, 1)], ("a_incoming", "a", 1, 0),
        (S2A,), {"b_high"}),
    "can preempt anything borrowing from CQ with 0 weight": (
        {"all": (None, 0, 1), "a": ("all", 3, 1), "b": ("all", 3, 0), "c": ("all", 3, 1)},
        unit("a1 a2 a3 b1 b2 b3 b4 b5 b6"), ("a_incoming", "a", 3, 0), None, {"b1", "b2", "b3"}),
    "hierarchical preemption": (
        {"ROOT": (None, 5, 1), "LEFT": ("ROOT", 5, 2), "RIGHT": ("ROOT", 5, 1), "a": ("LEFT", 1, 2),
         "b": ("LEFT", 1, 1), "c": ("ROOT", 1, 1), "d": ("RIGHT", 1, 1), "e": ("RIGHT", 1, F(99, 100))},
        [(f"{q}{i}", q, 1, i) for q in "bcde" for i in range(1, 6)], ("unit", "a", 5, 0), None,
        {"b1", "b2", "c1", "c2", "e1"}),
    "deep preemption": (
        {"ROOT": (None, 0, 1), "A": ("ROOT", 0, F(101, 100)), "AA": ("A", 0, 1), "AAA": ("AA", 0, 1),
         "B": ("ROOT", 0, F(99, 100)), "BB": ("B", 0, 1), "BBB": ("BB", 0, 1), "C": ("ROOT", 0, 1),
         "CC": ("C", 0, 1), "CCC": ("CC", 0, 1), "CCCC": ("CCC", 1, 1), "a": ("AAA", 0, 1), "b": ("BBB", 0, 1)},
        [("b1", "b", 1, 0)], ("a1", "a", 1, 0), None, {"b1"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_fair_preemption_cases(name):
    nodes, admitted, incoming, strategies, want = CASES[name]
    tree, state, p, names = build(nodes, admitted, incoming)
    cfg = Config(reclaim="Any", within="LowerPriority", strategies=strategies or (S2A, S2B))
    got = {names[j] for j in get_targets(tree, cfg, state, p)}
    assert got == want


def test_configuration_is_validated():
    with pytest.raises(ValueError, match="strategies"):
        Config(strategies=(S2B, S2A))
    with pytest.raises(ValueError, match="queueing"):
        Config(queueing="FIFO")
    with pytest.raises(ValueError, match="drs"):
        Config(drs="6925")
    with pytest.raises(ValueError, match="requeue_timing"):
        Config(requeue_timing="late")


def _issue_14543():
    """kueue issue 14543's two ``TestFairPreemptions`` cases (commit 7e9aaf4b of the reporter's fork, on top of
    the pin's test file): Cohort loop-cohort (no quota), ClusterQueues cq-preemptor and cq-target (10 CPU each,
    withinClusterQueue LowerOrNewerEqualPriority, reclaimWithinCohort Any, both strategies); every workload has
    priority 0; w-incoming (8) was created an hour before w-preemptor (6); w-target requests 13."""
    nodes = [Node("loop-cohort", None, (0,)), Node("cq-preemptor", 0, (10,)), Node("cq-target", 0, (10,))]
    wls = [Workload("w-incoming", 1, (8,)), Workload("w-preemptor", 1, (6,)), Workload("w-target", 2, (13,))]
    return Tree(nodes, ["cpu"], wls), Config(within="LowerOrNewerEqualPriority")


def test_issue_14543_fill_back_invalidates_the_share():
    """Half 1: w-preemptor and w-target admitted, w-incoming (cq-preemptor) preempts w-target.  Half 2:
    w-preemptor and w-incoming admitted, w-target preempts w-incoming (upstream's expected target in both).
    Half 1's preemption is unfair: runFirstFsStrategy takes w-preemptor first (same ClusterQueue, newer, equal
    priority), which lowers cq-preemptor's share so that w-target passes S2-a; fillBackWorkloads then puts
    w-preemptor back: cq-preemptor with w-incoming holds 14 (share 4 x 1000 / 20 = 200), above cq-target's 150
    with w-target."""
    tree, cfg = _issue_14543()
    assert [tree.workloads[j].name for j in get_targets(tree, cfg, (2, 1), 0)] == ["w-target"]
    assert [tree.workloads[j].name for j in get_targets(tree, cfg, (1, 0), 2)] == ["w-incoming"]
