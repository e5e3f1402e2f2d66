"""The bounded preemption-cycle search (src/mechanisms/ports/kueue/cycles.py) and its z3 query."""
from __future__ import annotations

from fractions import Fraction as F

from mechanisms.ports.kueue.drs import dominant_resource_share
from mechanisms.ports.kueue.preemption import NO_STICKY, S2A, S2B, Config, Node, Tree, Workload
from mechanisms.ports.kueue.scheduling import run
from mechanisms.ports.kueue.cycles import DEFAULT_POLICY, Variant, _forests, search, shapes, two_cycle_query


def test_shapes_up_to_isomorphism():
    """Rooted unordered forests: 1, 2, 4, 9 of 1..4 nodes (OEIS A000081 shifted: trees of n+1 nodes)."""
    assert [len(_forests(n)) for n in range(1, 5)] == [1, 2, 4, 9]
    assert len(shapes(4)) == 16


def test_small_bound_has_no_loop():
    """At most 2 queues and 2 workloads, 1 resource, default policies, equal priorities, weights 1/2 and 1:
    every layer is enumerated and no state repeats (a loop needs a victim, a preemptor and a third workload)."""
    rep = search(2, 2, budget=None, per_layer=10_000, resources=(1,),
                 space={"policies": DEFAULT_POLICY, "priorities": (0,), "weights": (F(1, 2), F(1))})
    assert rep.layer_cut is None and all(lr.exhaustive for lr in rep.layers)
    assert rep.configurations > 1000 and rep.findings == []


def _documented():
    """The smallest loop docs/findings.md reported before the sticky head was modelled: root quota 0;
    ClusterQueues n1 (quota 2, weight 1/2) and n2 (quota 2, weight 2); lendable 4.  w0 (n1, 3), w1 (n2, 3),
    w2 (n1, 2), created in that order, equal priorities."""
    nodes = [Node("root", None, (0,)), Node("n1", 0, (2,), F(1, 2)), Node("n2", 0, (2,), F(2))]
    return Tree(nodes, ["cpu"], [Workload("w0", 1, (3,)), Workload("w1", 2, (3,)), Workload("w2", 1, (2,))])


def test_documented_case_settles_at_the_pin():
    """Hand-derived.  Cycle 1: heads w0 (n1) and w1 (n2) both fit; the tournament takes w1 (n2 with it borrows
    1: 1 x 1000 / 4 / 2 = 125, against n1's 250 / (1/2) = 500); w0 no longer fits (FailedAfterNomination, back
    to the heap).  Cycle 2: w0 has no target (n1 with it 500 is above n2's 125 and n2's 0 after a removal):
    PreemptionNoCandidates, parked.  Cycle 3: w2 heads n1, within n1's quota, preempts w1 (PendingPreemption:
    w2 becomes n1's sticky preemptor); the eviction requeues w0.  Cycle 4: w2 (sticky, though created after w0)
    heads n1 and wins the tournament (n1 with it does not borrow); w1 no longer fits.  Cycle 5: w1 and w0 both
    have no target: parked; nothing is left in a heap: settled with w2 admitted."""
    out = run(_documented(), Config())
    assert out.kind == "settled" and out.steps == 5
    assert out.trace[3].admitted == (2,) and [h.sticky for h in out.trace[3].heads] == [True, False]
    assert out.trace[-1].state.admitted == (2,) and out.trace[-1].state.inadmissible == {0, 1}


def test_documented_case_loops_without_the_sticky_head():
    """The pin without PR 7157: after w2's preemption the eviction requeues w0, which (created before w2) heads
    n1 again and loses the tournament to w1 again -- the loop kueue 6929 / 7101 describe; w2 never runs."""
    out = run(_documented(), Config().version(**NO_STICKY))
    assert out.kind == "loop" and out.loop_kind == "starved"
    assert [(r.state.admitted, r.admitted, r.preempted) for r in out.loop] == [
        ((1,), (1,), ()), ((1,), (), ()), ((), (), ((2, (1,)),))]
    # the preemption does not depend on FairSharingPreemptWithinNominal: S2-a holds (0 <= 0)
    assert run(_documented(), Config(within_nominal=False).version(**NO_STICKY)).kind == "loop"


def test_exhaustive_layer_at_the_pin_and_without_the_sticky_head():
    """1 resource, up to 2 ClusterQueues (flat or nested) and 3 workloads, default policies, equal priorities,
    weight 1/2: every layer EXHAUSTIVE; the pin never loops; without the sticky head the flat 3-workload
    layer does (the search can fail)."""
    space = {"policies": DEFAULT_POLICY, "priorities": (0,), "weights": (F(1, 2),)}
    pin = search(2, 3, budget=None, per_layer=100_000, resources=(1,), space=space)
    assert pin.layer_cut is None and all(lr.exhaustive for lr in pin.layers) and pin.findings == []
    loose = search(2, 3, budget=None, per_layer=100_000, resources=(1,), space=space, variant=Variant("no-sticky"),
                   stop_at_first=True)
    assert loose.findings and loose.findings[0].kind == "starved"
    assert loose.findings[0].layer.n_workloads == 3 and len(loose.findings[0].layer.parents) == 3


def chain_tree(w_n1=F(1), w_n2=F(1)):
    """The smallest CHAIN the search finds at the pin (flat, two resources, four workloads; docs/findings.md,
    "Kueue: can preemption cycle?").  Root Cohort: quota cpu 0, gpu 2; ClusterQueue n1: cpu 2, gpu 0; n2: cpu 1,
    gpu 0 (lendable cpu 3, gpu 2); w0 (n1, <0, 2>), w1 (n1, <1, 0>), w2 (n2, <3, 0>), w3 (n2, <3, 1>); equal
    priorities; default policies (reclaimWithinCohort Any)."""
    nodes = [Node("root", None, (0, 2)), Node("n1", 0, (2, 0), w_n1), Node("n2", 0, (1, 0), w_n2)]
    wls = [Workload("w0", 1, (0, 2)), Workload("w1", 1, (1, 0)), Workload("w2", 2, (3, 0)),
           Workload("w3", 2, (3, 1))]
    return Tree(nodes, ["cpu", "gpu"], wls)


def test_chain_at_the_pin():
    """Hand-derived (docs/findings.md walks every step against upstream's code), workloads created one at a time.
    1-2: w0, w1 admitted (n1 holds <1, 2>, borrowing 2 gpu).  3: w2 needs cpu, n1 does not borrow cpu: no
    candidate, parked.  4: w3 needs cpu and gpu; n1 borrows gpu, so w0 (gpu) AND w1 (cpu, within n1's cpu
    quota) are candidates; S2-a takes w1 (n2 with w3: 2000/3 / 1 = 666.7 <= n1 without w1: 1000) and S2-b w0
    (666.7 < 1000): w3 preempts both.  5: w3 (sticky) admitted.  6: w0 and w2 have no candidate: parked.
    7: w1 reclaims n1's nominal cpu (FairSharingPreemptWithinNominal): preempts w3.  8: w1 (sticky) admitted,
    w2 no longer fits.  9: w2 parked, w0 admitted (n1 borrows gpu again).  10: w3 preempts w1 and w0: the
    state of cycle 5 again.  Every preemptor is admitted in the loop: a chain, w3 -> w1 -> w3."""
    out = run(chain_tree(), Config(), arrivals=True)
    assert out.kind == "loop" and out.loop_kind == "chain" and out.steps == 10 and len(out.loop) == 6
    assert [r.preempted for r in out.trace] == [(), (), (), ((3, (1, 0)),), (), (), ((1, (3,)),), (), (),
                                                ((3, (1, 0)),)]
    assert [r.admitted for r in out.trace] == [(0,), (1,), (), (), (3,), (), (), (1,), (0,), ()]
    assert out.trace[4].heads[0].sticky and out.trace[7].heads[0].sticky
    # all at once it loops too; weights that favour n2 less keep it (the S2-a step needs n2's share <= n1's)
    assert run(chain_tree(), Config()).loop_kind == "chain"
    assert run(chain_tree(F(1, 2), F(1)), Config(), arrivals=True).loop_kind == "chain"
    assert run(chain_tree(F(2), F(1)), Config(), arrivals=True).kind == "settled"


def test_chain_does_not_depend_on_the_requeue_timing():
    """Upstream requeues inadmissible workloads 1 s after an eviction while cycles go on; the chain loops whether
    the requeue lands before the next cycle or only once no heap holds a workload.  The loop PR 7157 removed
    needs the early requeue (w0 must be back before w2 is popped)."""
    for arrivals in (False, True):
        assert run(chain_tree(), Config(requeue_timing="idle"), arrivals=arrivals).loop_kind == "chain"
    assert run(_documented(), Config(requeue_timing="idle").version(**NO_STICKY)).kind == "settled"


def test_chain_needs_the_sticky_head_and_both_strategies():
    """Without the sticky head the same workloads loop STARVED (w0 heads n1 after the eviction and wins the
    tournament); with one strategy alone, or StrictFIFO, or reclaimWithinCohort LowerPriority, they settle."""
    t = chain_tree()
    assert run(t, Config().version(**NO_STICKY), arrivals=True).loop_kind == "starved"
    for cfg in (Config(strategies=(S2A,)), Config(strategies=(S2B,)), Config(queueing="StrictFIFO"),
                Config(reclaim="LowerPriority")):
        assert run(t, cfg, arrivals=True).kind == "settled"
    assert run(t, Config(within_nominal=False), arrivals=True).loop_kind == "chain"  # S2-a: 0 <= 0


def test_z3_no_two_cycle_on_one_resource():
    """One resource: no state lets A preempt B and then B preempt A by a fair-sharing strategy, in the flat and
    the hierarchical shape, for any quotas, usages and requests (reals), weights in {1/2, 1, 2}."""
    for hier in (False, True):
        r = two_cycle_query(1, hierarchical=hier)
        assert r["sat"] is False and r["pairs"] == 9 and "unknown" not in r


def test_z3_two_resource_two_cycle_rechecked_exactly():
    """z3's model for two resources (flat shape, weights 1/2): neither workload touches its queue's dominant
    resource r1, so admitting it leaves the share at 2 and S2-a (<=) holds both ways -- the equality upstream's
    proof assumes away ("admission increases DRS").  Rechecked with the Kueue port's exact DRS."""
    names, lend = ("r0", "r1"), (F(3), F(1))
    qa, qc = (F(2), F(0)), (F(1), F(0))
    xa, xc = (F(2003, 2000), F(1, 1000)), (F(3, 1000), F(1, 1000))
    A = B = (F(1), F(0))
    s = lambda u, q: dominant_resource_share(names, u, q, lend, F(1, 2)).precise()  # noqa: E731
    add = lambda u, v: tuple(a + b for a, b in zip(u, v))  # noqa: E731
    a_with, a_without = s(add(xa, A), qa), s(xa, qa)
    c_with, c_without = s(add(xc, B), qc), s(xc, qc)
    assert a_with == a_without == c_with == c_without == 2
    assert a_with <= c_without and c_with <= a_without  # S2-a: A -> B, then B -> A
    total = add(add(xa, xc), B)
    assert total[0] + A[0] > lend[0] and all(t <= c for t, c in zip(total, lend))  # A needs preemption on r0
    assert add(xc, B)[0] > qc[0] and add(xa, A)[0] > qa[0]  # both ClusterQueues borrow r0, which both use


def test_one_resource_chain_at_the_pin():
    """One resource, flat, default policies (docs/findings.md): root quota 2; n1 quota 2, weight 2; n2 quota 1,
    weight 1/2 (lendable 5); w0 (n2, 2), w1 (n1, 2, priority 1), w2 (n2, 1), w3 (n1, 3), w4 (n1, 3, priority 1),
    all created at once.  In the loop (cycles 6-11): w2 (sticky) and w0 are admitted beside w1; w3 needs 3 and
    takes w2 by S2-a (n1 with w3: 3 x 1000 / 5 / 2 = 300 <= n2 without w2, still borrowing through w0: 1 x 1000 /
    5 / (1/2) = 400) and w0 by S2-b (300 < 400); w3 is admitted; w2, within n2's quota alone, reclaims it
    (FairSharingPreemptWithinNominal).  Equal weights settle."""
    nodes = [Node("root", None, (2,)), Node("n1", 0, (2,), F(2)), Node("n2", 0, (1,), F(1, 2))]
    wls = [Workload("w0", 2, (2,)), Workload("w1", 1, (2,), 1), Workload("w2", 2, (1,)), Workload("w3", 1, (3,)),
           Workload("w4", 1, (3,), 1)]
    tree = Tree(nodes, ["cpu"], wls)
    out = run(tree, Config())
    assert out.kind == "loop" and out.loop_kind == "chain" and out.steps == 11 and len(out.loop) == 6
    assert [r.preempted for r in out.loop] == [(), (), ((3, (2, 0)),), (), (), ((2, (3,)),)]
    assert [r.admitted for r in out.loop] == [(2,), (0,), (), (3,), (), ()]
    nodes[1] = Node("n1", 0, (2,), F(1))
    nodes[2] = Node("n2", 0, (1,), F(1))
    assert run(Tree(nodes, ["cpu"], wls), Config()).kind == "settled"


def test_smallest_starved_loop_at_the_pin():
    """The search's smallest starved loop at the pin, minimised (2 ClusterQueues, 1 resource, 3 workloads;
    reclaimWithinCohort Any, withinClusterQueue LowerPriority): root quota 0; n1 quota 1, weight 1/2; n2 quota 2,
    weight 0; w0 (n2, 3, priority 1), w1 (n2, 1), w2 (n1, 3).  In the loop: w1 (sticky) is admitted; w0 preempts
    w1 inside n2 (lower priority) and becomes n2's sticky preemptor; the freed cluster fits both heads, but n2
    with w0 borrows at weight 0 (+Inf) and w2 wins the tournament; w0 has no target against w2 (its share is
    +Inf: fsStrategyUnsatisfiable) and is parked; w1, within n2's quota, reclaims n2's quota from w2.  w0 is
    never admitted."""
    nodes = [Node("root", None, (0,)), Node("n1", 0, (1,), F(1, 2)), Node("n2", 0, (2,), F(0))]
    wls = [Workload("w0", 2, (3,), 1), Workload("w1", 2, (1,)), Workload("w2", 1, (3,))]
    out = run(Tree(nodes, ["cpu"], wls), Config(within="LowerPriority"))
    assert out.kind == "loop" and out.loop_kind == "starved" and out.steps == 8 and len(out.loop) == 5
    assert [r.preempted for r in out.loop] == [(), ((0, (1,)),), (), (), ((1, (2,)),)]
    assert [r.admitted for r in out.loop] == [(1,), (), (2,), (), ()]


def test_the_command_runs_the_ports_search(capsys):
    """``python -m verifier.preemption_cycles`` is the port's ``main`` (one entry point, the same output)."""
    import json
    import subprocess
    import sys

    import verifier.preemption_cycles as cmd
    from mechanisms.ports.kueue import cycles
    from tests.helpers import ROOT

    assert cmd.main is cycles.main
    args = ["--max-queues", "1", "--max-workloads", "1", "--policies", "default", "--resources", "1", "--weights",
            "1", "--priorities", "0", "--budget", "30"]
    assert cycles.main(args) == 0
    direct = json.loads(capsys.readouterr().out)
    out = subprocess.run([sys.executable, "-m", "verifier.preemption_cycles", *args], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=120)
    via = json.loads(out.stdout)
    direct.pop("seconds"), via.pop("seconds")
    assert via == direct and via["configurations"] > 0 and via["loops"] == 0
