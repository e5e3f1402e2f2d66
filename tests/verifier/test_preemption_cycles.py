"""The bounded preemption-cycle search (src/verifier/preemption_cycles.py) and its z3 query."""
from __future__ import annotations

from fractions import Fraction as F

from mechanisms.kueue_drs import dominant_resource_share
from mechanisms.kueue_preemption import Config, Node, Tree, Workload, run
from verifier.preemption_cycles import DEFAULT_POLICY, _forests, search, shapes, two_cycle_query


def test_shapes_up_to_isomorphism():
    """Rooted unordered forests: 1, 2, 4, 9 of 1..4 nodes (OEIS A000081 shifted: trees of n+1 nodes)."""
    assert [len(_forests(n)) for n in range(1, 5)] == [1, 2, 4, 9]
    assert len(shapes(4)) == 16


def test_small_bound_has_no_cycle():
    """At most 2 queues and 2 workloads, 1 resource, default policies, equal priorities, weights 1/2 and 1:
    every layer is enumerated and no state repeats through a preemption (a starved loop needs a victim, a
    head that loses the tournament to it and a preemptor: three workloads)."""
    rep = search(2, 2, budget=None, per_layer=10_000, resources=(1,), policies=DEFAULT_POLICY, priorities=(0,),
                 weights=(F(1, 2), F(1)))
    assert rep.layer_cut is None and all(ex for _, ex, _ in rep.layers_done)
    assert rep.configurations > 1000 and rep.findings == []


def _starved():
    """The smallest loop the search reports at the pin (hand-checked): root quota 0; ClusterQueues n1 (quota 2,
    weight 1/2) and n2 (quota 2, weight 2); lendable 4.  w0 (n1, 3), w1 (n2, 3), w2 (n1, 2), created in that
    order, equal priorities.  Empty cluster: heads w0 and w1 both fit; n1 with w0 borrows 1: 1 x 1000 / 4 /
    (1/2) = 500, n2 with w1: 250 / 2 = 125, so w1 is admitted and w0 no longer fits.  With w1 admitted, w0 has
    no target (its share 500 is above n2's 125 and n2's 0 without w1) and is parked; w2 is n1's next head,
    within n1's quota, and preempts w1.  Once w1 is evicted the cluster is empty again and w0 (created before
    w2) is n1's head: the same cycle, forever; w2 is never admitted."""
    nodes = [Node("root", None, (0,)), Node("n1", 0, (2,), F(1, 2)), Node("n2", 0, (2,), F(2))]
    return Tree(nodes, ["cpu"], [Workload("w0", 1, (3,)), Workload("w1", 2, (3,)), Workload("w2", 1, (2,))])


def test_starved_preemptor_loop_at_the_pin():
    out = run(_starved(), Config())
    assert out.kind == "cycle"
    assert [(r.state, r.admitted, r.preempted) for r in out.loop] == [((1,), (1,), ()), ((), (), ((2, (1,)),))]
    # the preemption does not depend on FairSharingPreemptWithinNominal: S2-a holds (0 <= 0)
    assert run(_starved(), Config(within_nominal=False)).kind == "cycle"


def test_search_finds_the_smallest_loop():
    rep = search(2, 3, budget=None, per_layer=1000, resources=(1,), policies=DEFAULT_POLICY, priorities=(0,),
                 weights=(F(1, 2), F(2)), stop_at_first=True)
    assert rep.findings, "the search must be able to find cycles"
    f = rep.findings[0]
    assert f.kind == "starved" and f.layer.n_workloads == 3 and len(f.layer.parents) == 3


def test_z3_no_two_cycle_on_one_resource():
    """One resource: no state lets A preempt B and then B preempt A by a fair-sharing strategy, in the flat and
    the hierarchical shape, for any quotas, usages and requests (reals), weights in {1/2, 1, 2}."""
    for hier in (False, True):
        r = two_cycle_query(1, hierarchical=hier)
        assert r["sat"] is False and r["pairs"] == 9 and "unknown" not in r


def test_z3_two_resource_two_cycle_rechecked_exactly():
    """z3's model for two resources (flat shape, weights 1/2): neither workload touches its queue's dominant
    resource r1, so admitting it leaves the share at 2 and S2-a (<=) holds both ways -- the equality upstream's
    proof assumes away ("admission increases DRS").  Rechecked with kueue_drs's exact DRS."""
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
