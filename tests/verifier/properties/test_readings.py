"""The readings of EF and SI on queue trees and on whole tasks, and the hierarchical share guarantee (hsi).

Each number is derived by hand beside it (one resource, one server: a user running ``t`` tasks of demand 1
holds ``t`` units).  The mechanisms are fixed allocations wrapped as ``Mechanism`` objects with the setting
that selects the reading (``verifier.properties.base.reading``)."""
from __future__ import annotations

from fractions import Fraction as F

import pytest

from mechanisms.core.mechanism import Mechanism, Setting
from mechverify.allocation import Allocation
from mechverify.instances import parse_environment
from verifier.properties import get_property
from verifier.properties.base import reading

TREE = Setting(single_server=True, placement=False, hierarchy=True)
WHOLE = Setting(single_server=True, placement=False, divisible=False)
WHOLE_TREE = Setting(single_server=True, placement=False, divisible=False, hierarchy=True)


def tree_env(cap=12, empty_queue=False):
    """Queues a (weight 1) and b (weight 1) [+ c (weight 2), no users]; a1 in a; b1, b2 in b; demand 1."""
    queues = [{"name": "a"}, {"name": "b"}] + ([{"name": "c", "weight": 2}] if empty_queue else [])
    return parse_environment({
        "resources": ["cpu"], "servers": [{"name": "s", "capacity": [cap]}], "queues": queues,
        "users": [{"name": "a1", "demand": [1], "queue": "a"}, {"name": "b1", "demand": [1], "queue": "b"},
                  {"name": "b2", "demand": [1], "queue": "b"}]})


def flat_env(cap, n=2):
    return parse_environment({"resources": ["cpu"], "servers": [{"name": "s", "capacity": [cap]}],
                              "users": [{"name": f"u{i + 1}", "demand": [1]} for i in range(n)]})


def fixed(tasks, setting, name="fixed"):
    """A mechanism that gives user j ``tasks[j]`` tasks on the one server."""
    def func(env, exact=False):
        return Allocation(env, tuple((F(t),) for t in tasks), name, True)
    return Mechanism(name, name, func, setting)


def verdict(prop, variant, mech, env):
    p = get_property(prop)
    ev = p.evaluate(mech, env, variant, exact=True)
    cert = p.recheck(mech, ev.witness) if ev.violated else None
    assert ev.violated == (cert is not None), "a violation is reported only when the exact re-check certifies it"
    return ev, cert


def test_entitlements_static_and_demanding():
    # static: a, b 1/2 each (c absent); a1 = 1/2; b1 = b2 = 1/2 * 1/2 = 1/4
    env = tree_env()
    assert [env.entitlement(j) for j in range(3)] == [F(1, 2), F(1, 4), F(1, 4)]
    # with c (weight 2, no users): static a = b = 1/4, c = 1/2 -> a1 = 1/4, b1 = b2 = 1/8;
    # demanding siblings only: c demands nothing -> as without c
    env = tree_env(empty_queue=True)
    assert [env.entitlement(j) for j in range(3)] == [F(1, 4), F(1, 8), F(1, 8)]
    assert [env.entitlement(j, demanding=True) for j in range(3)] == [F(1, 2), F(1, 4), F(1, 4)]
    assert env.entitlement_ratio(0, 1) == 2
    # flat: w_j / sum w
    assert flat_env(4, 3).entitlement(1) == F(1, 3)


def test_readings_follow_the_setting():
    assert (reading(Setting()), reading(TREE), reading(WHOLE), reading(WHOLE_TREE)) == \
        (None, "tree", "whole-task", "whole-task")
    ef, si, hsi = get_property("ef"), get_property("si"), get_property("hsi")
    searched = lambda p, s: [v for v in p.variants if p.variant_possible(s, v) is None]  # noqa: E731
    assert searched(ef, Setting()) == ["placement-aware", "literal"]
    assert searched(ef, TREE) == ["tree"] and searched(ef, WHOLE) == searched(ef, WHOLE_TREE) == ["whole-task"]
    assert searched(si, Setting(external=True)) == ["per-server-split", "external", "bounded"]
    assert searched(si, TREE) == ["tree"] and searched(si, WHOLE_TREE) == ["whole-task"]
    assert searched(hsi, Setting()) == [] and searched(hsi, TREE) == searched(hsi, WHOLE_TREE) == ["guarantee"]
    assert ef.variant_possible(WHOLE, "placement-aware") == "whole tasks: see ef/whole-task"
    assert si.variant_possible(TREE, "per-server-split") == "a queue tree: see si/tree"


def test_ef_on_a_tree_scales_by_entitlements():
    env = tree_env()  # cap 12: entitlements a1 1/2, b1 = b2 = 1/4
    # 6/3/3: a1 vs b1: (1/2)/(1/4) = 2 x 3 = 6 <= 6; b1 vs a1: 1/2 x 6 = 3 <= 3: envy-free on the tree
    # (flat weighted EF would say b1 envies a1: 6 > 3)
    ev, _ = verdict("ef", "tree", fixed([6, 3, 3], TREE), env)
    assert not ev.violated and ev.measure == 1
    # 4/4/4: a1 runs 4 but 2 x 4 = 8 with b1's bundle: violated, exact margin 8 - 4 = 4
    ev, cert = verdict("ef", "tree", fixed([4, 4, 4], TREE), env)
    assert ev.violated and cert.gap == 4 and cert.measure == 2
    assert cert.summary == "a1 runs 4 tasks with its own bundle but 8 with 2 x b1's bundle"


def test_si_on_a_tree_and_the_share_guarantee():
    # with the empty queue c: static split a1 1/4 of 12 = 3; guarantee (demanding only) a1 1/2 of 12 = 6
    env = tree_env(empty_queue=True)
    mech = fixed([4, 4, 4], TREE)
    ev, _ = verdict("si", "tree", mech, env)
    assert not ev.violated  # 4 >= 3, b's users 4 >= 12/8 = 3/2
    ev, cert = verdict("hsi", "guarantee", mech, env)
    assert ev.violated and cert.gap == 2 and cert.measure == F(2, 3)  # a1: 6 - 4 = 2, ratio 4/6
    assert cert.summary == "a1 runs 4 tasks, but 6 with its hierarchical share guarantee (1/2 of every server)"
    ev, _ = verdict("hsi", "guarantee", fixed([6, 3, 3], TREE), env)
    assert not ev.violated and ev.measure == 1


def test_hsi_ignores_a_user_that_demands_nothing():
    # b2 has task bound 0: it demands nothing, so b1 is b's only demanding child: a1 6, b1 6 of 12
    env = tree_env().with_user(2, tasks=0)
    ev, cert = verdict("hsi", "guarantee", fixed([6, 3, 0], TREE), env)
    assert ev.violated and cert.witness.users == (1,) and cert.gap == 3


def test_a_user_that_can_run_nothing_demands_nothing():
    """q1 holds u1 <1, 0> and u2 <0, 1>, u3 <1, 0> is at the root; r2 has capacity 0, so u2 can run nothing.
    Guarantees: q1 and u3 1/2 each, u1 all of q1's 1/2 (u2 demands nothing).  u1 = u3 = 1/2 task: no envy
    (ratio 1) and every guarantee met -- counting u2 would entitle u1 to 1/4 and make u3 envy it."""
    env = parse_environment({
        "resources": ["r1", "r2"], "servers": [{"name": "s", "capacity": [1, 0]}], "queues": [{"name": "q1"}],
        "users": [{"name": "u1", "demand": [1, 0], "queue": "q1"}, {"name": "u2", "demand": [0, 1], "queue": "q1"},
                  {"name": "u3", "demand": [1, 0]}]})
    assert [env.demands(j) for j in range(3)] == [True, False, True]
    assert [env.entitlement(j, demanding=True) for j in range(3)] == [F(1, 2), 0, F(1, 2)]
    mech = Mechanism("half", "half", lambda e, exact=False: Allocation(e, ((F(1, 2),), (F(0),), (F(1, 2),)), "half",
                                                                       True), TREE)
    assert not verdict("ef", "tree", mech, env)[0].violated
    assert not verdict("hsi", "guarantee", mech, env)[0].violated


@pytest.mark.parametrize("tasks, violated", [((1, 0), False), ((2, 1), False), ((3, 0), True)])
def test_ef_up_to_one_task(tasks, violated):
    # capacity sum(tasks) (full use), both demand 1.  (1, 0): u2 of u1's bundle less one task = 0 <= 0 -- the
    # fractional reading called this envy (0 < 1); (2, 1): 2 - 1 = 1 <= 1; (3, 0): 3 - 1 = 2 > 0, margin 2
    env = flat_env(sum(tasks))
    ev, cert = verdict("ef", "whole-task", fixed(tasks, WHOLE), env)
    assert ev.violated == violated
    if violated:
        assert cert.gap == 2 and cert.witness.users == (1, 0)
        assert cert.summary == "u2 runs 0 tasks with its own bundle but 2 with u1's bundle less one of u1's " \
                               "tasks (whole tasks)"


@pytest.mark.parametrize("tasks, violated", [((2, 1), False), ((3, 0), True)])
def test_si_in_whole_tasks(tasks, violated):
    # capacity 3, two users demanding 1: the equal split 3/2 is worth floor(3/2) = 1 whole task
    ev, cert = verdict("si", "whole-task", fixed(tasks, WHOLE), flat_env(3))
    assert ev.violated == violated
    if violated:
        assert cert.gap == 1
        assert cert.summary.endswith("(whole tasks)")


def test_whole_task_readings_on_a_tree():
    # whole tasks on the tree, capacity 13: a1's static share 13/2 is worth 6 whole tasks, b's users 13/4 -> 3
    env = tree_env(13)
    ev, _ = verdict("si", "whole-task", fixed([6, 3, 3], WHOLE_TREE), env)
    assert not ev.violated
    ev, cert = verdict("hsi", "guarantee", fixed([7, 3, 2], WHOLE_TREE), env)
    assert ev.violated and cert.witness.users == (2,) and cert.gap == 1  # b2: 3 - 2
    # EF up to one task with entitlement ratios (a1 : b = 2 : 1).  6/4/3: b2 vs a1: 1/2 x (6 - 1) = 5/2 -> 2
    # whole tasks <= 3; b2 vs b1: 4 - 1 = 3 <= 3; b1 vs a1: 2 <= 4; a1 vs b1: 2 x (4 - 1) = 6 <= 6
    ev, _ = verdict("ef", "whole-task", fixed([6, 4, 3], WHOLE_TREE), env)
    assert not ev.violated
    # 7/3/2: b2 vs a1: 1/2 x (7 - 1) = 3 > 2, margin 1
    ev, cert = verdict("ef", "whole-task", fixed([7, 3, 2], WHOLE_TREE), env)
    assert ev.violated and cert.witness.users == (2, 0) and cert.gap == 1


def test_hsi_checks_the_queues_too():
    """Queue a holds twelve one-task users, queue b one unbounded user b1; one server of 12, demand 1, whole
    tasks.  Guarantees: a and b 1/2 each; each a-user 1/2 x 1/12 = 1/24 of 12 = 1/2 task -> 0 whole tasks, b1 6.
    The allocation gives a's users 2 tasks in all and b1 10: every user meets its own (whole-task) guarantee,
    but queue a holds a dominant share 2/12 = 1/6 < 1/2 while a3's task would still fit within 1/2 (1/6 +
    1/12 = 1/4): violated, margin 1/2 - 1/6 = 1/3, measure (1/6) / (1/2) = 1/3.  Fractionally the same
    allocation fails at the users already (a3's guarantee 1/2 task > 0)."""
    env = parse_environment({
        "resources": ["cpu"], "servers": [{"name": "s", "capacity": [12]}], "queues": [{"name": "a"}, {"name": "b"}],
        "users": [{"name": f"a{i}", "demand": [1], "tasks": 1, "queue": "a"} for i in range(1, 13)]
        + [{"name": "b1", "demand": [1], "queue": "b"}]})
    tasks = [1, 1] + [0] * 10 + [10]
    ev, cert = verdict("hsi", "guarantee", fixed(tasks, WHOLE_TREE), env)
    assert ev.violated and cert.gap == F(1, 3) and cert.measure == F(1, 3) and cert.witness.users == (2,)
    assert cert.summary == ("queue a holds a dominant share 1/6 of the pool, below its hierarchical share guarantee "
                            "1/2, while one more task of a3 would fit within it")
    # a at its guarantee (6 tasks) passes, and so does a queue whose users are all at their bounds
    assert not verdict("hsi", "guarantee", fixed([1] * 6 + [0] * 6 + [6], WHOLE_TREE), env)[0].violated
    small = env.restrict(users=[0, 1, 12])  # a holds a1, a2 (bound 1 each): 2 tasks is all a asks for
    assert not verdict("hsi", "guarantee", fixed([1, 1, 10], WHOLE_TREE), small)[0].violated
