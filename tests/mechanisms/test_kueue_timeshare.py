"""Kueue's preemption over executions with the priority booster (``mechanisms.ports.kueue.timeshare``): the
pin's booster re-encoded from its upstream unit tests, and the model's runs derived by hand.

Upstream tests re-encoded (kubernetes-sigs/kueue @ ff69552e79ad21652c36caa97038382e55625cf7):

* ``cmd/experimental/kueue-priority-booster/pkg/controller/controller_test.go`` ``TestComputeBoost`` (window
  30 min, negative boost 100000): not admitted -> 0; Admitted condition False -> 0; admitted 5 min ago -> 0
  (requeue after 25 min); admitted 31 min ago -> -100000; window 0 -> 0 (disabled);
* ``pkg/scheduler/preemption/common/preemption_policy_test.go`` ``TestSatisfiesPreemptionPolicy``: the
  LowerPriority and LowerOrNewerEqualPriority cases with and without boosts, on effective priorities;
* ``cmd/experimental/kueue-priority-booster/test/integration/priority_boost_envtest_test.go``: no boost during
  the window, the negative boost after it.
"""
from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction

import pytest

import mechanisms
from mechanisms.core.time import execute
from mechanisms.ports.kueue import timeshare
from mechanisms.ports.kueue.preemption import Node, Tree, Workload, _satisfies
from mechverify.execution import parse_execution

W = Fraction(30)  # minutes, the upstream test's window
NEG = timeshare.NEGATIVE_BOOST


@pytest.mark.parametrize("admitted_at, now, window, want", [
    (None, Fraction(100), W, 0),  # "not admitted" (and "admitted condition false": no Admitted=True time)
    (Fraction(0), Fraction(5), W, 0),  # "within window": 5 min after admission
    (Fraction(0), Fraction(31), W, -NEG),  # "window expired negative boost"
    (Fraction(0), Fraction(1), Fraction(0), 0),  # "disabled zero window"
    (Fraction(0), Fraction(30), W, -NEG),  # exactly at the window: elapsed < window is false (>=)
])
def test_compute_boost_is_upstreams(admitted_at, now, window, want):
    assert timeshare.boost(admitted_at, now, window) == want


def _pair(pp, cp):
    nodes = [Node("", None, (Fraction(1),)), Node("cq", 0, (Fraction(1),))]
    return Tree(nodes, ["r"], [Workload("preemptor", 1, (Fraction(1),), pp), Workload("candidate", 1, (Fraction(1),), cp)])


@pytest.mark.parametrize("policy, pp, cp, preemptor_first, want", [
    ("LowerPriority", 10, 5, True, True),
    ("LowerPriority", 10, 10, True, False),
    ("LowerOrNewerEqualPriority", 10, 10, False, False),  # the candidate is older
    ("LowerOrNewerEqualPriority", 10, 10, True, True),  # the candidate is newer
    ("Any", 10, 10, True, True),
    ("Never", 10, 10, True, False),
    ("LowerPriority", 200, 100 + 150, True, False),  # boost 150 makes the low priority immune
    ("LowerPriority", 100 + 200, 200, True, True),  # boost 200 on the preemptor
    ("LowerOrNewerEqualPriority", 100 + 100, 200, True, True),  # equal effective priority, older preemptor
    ("LowerOrNewerEqualPriority", 100 + 100, 200, False, False),  # equal effective priority, newer preemptor
    ("Any", 50, 100 + 200, True, True),
])
def test_satisfies_preemption_policy_on_effective_priorities(policy, pp, cp, preemptor_first, want):
    tree = _pair(pp, cp)
    if not preemptor_first:  # creation order: the candidate first
        tree.queue_order = [1, 0]
    assert _satisfies(policy, tree, 0, 1) is want


def _ex(users, end=6, events=()):
    return parse_execution({"resources": ["gpu"], "servers": [{"name": "s1", "capacity": [8]}],
                            "queues": [{"name": "ml", "guarantee": [8]}],
                            "users": [{"name": n, "demand": [d], "tasks": 1, "queue": "ml"} for n, d in users],
                            "events": list(events), "end": end})


def _tasks(mech, ex):
    return [(s.t, s.event.kind if s.event else "start", tuple(int(v[0]) for v in s.alloc.x)) for s in execute(mech, ex)]


def test_issue_8522_scenario_without_the_booster_the_first_admitted_monopolises():
    # kueue 8522: a ClusterQueue of 8 GPUs, three same-priority workloads of 8 GPUs: A is admitted and runs to
    # its end; LowerPriority never lets an equal priority preempt
    run = _tasks(mechanisms.get("kueue-timeshare@8522"), _ex([("A", 8), ("B", 8), ("C", 8)]))
    assert run == [(0, "start", (1, 0, 0))]


def test_the_booster_alternates_the_two_oldest_and_starves_the_third():
    # window 1: at t = 1 A has been admitted for the window (>=): boost -100000, B (effective 0 > -100000, the
    # heap's head: created before C) preempts it and is admitted; A is requeued with its CREATION timestamp
    # (GetQueueOrderTimestamp), so A, not C, heads the heap; at t = 2 B is boosted and A preempts it; and so on:
    # C is never a head (derived by hand from the cited rules; each step is a booster expiry, a derived wake)
    run = _tasks(mechanisms.get("kueue-timeshare"), _ex([("A", 8), ("B", 8), ("C", 8)]))
    assert run == [(0, "start", (1, 0, 0)), (1, "wake", (0, 1, 0)), (2, "wake", (1, 0, 0)),
                   (3, "wake", (0, 1, 0)), (4, "wake", (1, 0, 0)), (5, "wake", (0, 1, 0))]


def test_requeued_behind_the_waiting_ones_the_booster_rotates_all_three():
    # the counterfactual the KEP 8522 text assumes ("the workload moves to the back of the queue"): round robin
    m = mechanisms.get("kueue-timeshare")
    back = replace(m, time=timeshare.time_spec(to_back=True))
    run = _tasks(back, _ex([("A", 8), ("B", 8), ("C", 8)]))
    assert [a for _, _, a in run] == [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 0), (0, 1, 0), (0, 0, 1)]


def test_two_workloads_share_the_queue_in_turns_of_the_window():
    run = _tasks(mechanisms.get("kueue-timeshare"), _ex([("A", 8), ("B", 8)], end=4))
    assert [a for _, _, a in run] == [(1, 0), (0, 1), (1, 0), (0, 1)]


def test_a_smaller_workload_that_fits_beside_the_holder_is_admitted_without_preemption():
    run = _tasks(mechanisms.get("kueue-timeshare"), _ex([("A", 6), ("B", 2)], end=3))
    # both fit (6 + 2 of 8): admitted at once; at t = 1 the booster marks both (its timer: a derived wake) and
    # nothing waits, so nothing is preempted; no timer is left after that
    assert run == [(0, "start", (1, 1)), (1, "wake", (1, 1))]


def test_the_wake_event_is_derived_and_exact_and_float_runs_agree():
    m = mechanisms.get("kueue-timeshare")
    ex = _ex([("A", 8), ("B", 8)], end=3)
    exact = list(execute(m, ex, exact=True))
    flt = list(execute(m, ex, exact=False))
    assert [s.event.derived for s in exact[1:]] == [True, True]
    assert [tuple(int(v[0]) for v in s.alloc.x) for s in exact] == [tuple(int(v[0]) for v in s.alloc.x) for s in flt]


def test_fair_sharing_preemption_over_time_reclaims_nominal_quota():
    # kueue-preempt: reclaimWithinCohort Any.  Queues a (quota 4) and b (quota 4) on 8: w1 of b borrows all 8 at
    # t = 0; w2 of a (4) arrives at t = 1 and reclaims its nominal quota: w1 is preempted (its whole 8 GPUs)
    ex = parse_execution({"resources": ["gpu"], "servers": [{"name": "s1", "capacity": [8]}],
                          "queues": [{"name": "a", "guarantee": [4]}, {"name": "b", "guarantee": [4]}],
                          "users": [{"name": "w1", "demand": [8], "tasks": 1, "queue": "b"}],
                          "events": [{"t": 1, "kind": "arrive",
                                      "user": {"name": "w2", "demand": [4], "tasks": 1, "queue": "a"}}],
                          "end": 2})
    run = _tasks(mechanisms.get("kueue-preempt"), ex)
    assert run == [(0, "start", (1,)), (1, "arrive", (0, 1))]


def _documented_case():
    # docs/findings.md "Kueue: can preemption cycle?": root quota 0; n1 quota 2, weight 1/2; n2 quota 2, weight 2;
    # w0 n1 3 cpu, w1 n2 3 cpu, w2 n1 2 cpu, all created at 0, then quiet rounds
    return parse_execution({"resources": ["cpu"], "servers": [{"name": "s1", "capacity": [4]}],
                            "queues": [{"name": "n1", "guarantee": [2], "weight": "1/2"},
                                       {"name": "n2", "guarantee": [2], "weight": 2}],
                            "users": [{"name": "w0", "demand": [3], "tasks": 1, "queue": "n1"},
                                      {"name": "w1", "demand": [3], "tasks": 1, "queue": "n2"},
                                      {"name": "w2", "demand": [2], "tasks": 1, "queue": "n1"}],
                            "events": [{"t": k, "kind": "round"} for k in range(1, 7)], "end": 7})


def test_documented_case_settles_over_time_at_the_pin_and_loops_without_the_sticky_head():
    from verifier.properties import get_property

    cycles = get_property("cycles")
    ex = _documented_case()
    pin = mechanisms.get("kueue-preempt")
    # at the pin: w1 admitted, w0 parked, w2 preempts w1 and is admitted (sticky): settled with w2 alone
    assert {a for _, _, a in _tasks(pin, ex)} == {(0, 0, 1)}
    assert not cycles.evaluate_execution(pin, ex, "preemptions", exact=True).violated
    # without PR 7157's sticky head the scheduler loops at t = 0 (info["loop"]); each quiet round is one more
    # cycle of it: w1 is admitted and preempted again and again (the loop the sticky head removed)
    no_sticky = mechanisms.get("kueue-preempt@6929")
    steps = execute(no_sticky, ex)
    assert steps[0].alloc.info["loop"]
    assert cycles.evaluate_execution(no_sticky, ex, "preemptions", exact=True).violated


def test_an_infinite_envy_ratio_is_certified_with_the_envy_as_its_margin():
    # without the booster A (8 GPUs) is admitted and B (8 GPUs, both at t = 0) runs nothing: B's utility is 0 and
    # with A's bundle 1 task -- envy ratio 1/0 = inf, not excused (A did not arrive before B); the exact margin is
    # the envy itself, 1 - 0 (an infinite measure was once an error of the exact re-check, not a violation)
    from verifier.properties import get_property

    prop = get_property("def")
    m = mechanisms.get("kueue-timeshare@8522")
    ev = prop.evaluate_execution(m, _ex([("A", 8), ("B", 8)], end=2), "kash", exact=False)
    assert ev.violated
    cert = prop.recheck(m, ev.witness)
    assert cert is not None and cert.gap == 1 and cert.measure == float("inf")
