"""quota and limit: properties on DECLARED guarantees and maxes (docs/properties.md, "Declared amounts").
Every number below is derived by hand beside the assertion."""
from __future__ import annotations

import json
from fractions import Fraction as F

import mechverify
from mechanisms import get
from mechverify.allocation import Allocation
from mechverify.instances import parse_environment_text
from tests.helpers import ROOT
from verifier.properties import PROPERTIES
from verifier.properties.limit import worst_excess
from verifier.properties.quota import quota_shortfall

TEN = f"{ROOT}/examples/guarantee-10cpu.json"
POLICY = f"{ROOT}/examples/guarantee_policy.py:guarantees_first"


def env_of(d):
    return parse_environment_text(json.dumps(d), "inst.json")


def verdicts(mech, env, prop):
    return {r.variant: r for r in mechverify.check(mech, env, prop) if r.property == prop}


def test_hdrf_tasks_misses_the_declared_guarantee_of_the_10cpu_example():
    # H-DRF splits the pool by weights: A and B (weight 1 each, both demand) get 5 tasks of 1 cpu each;
    # A is guaranteed 8: S_A = 5/8 < 1 and a1 (unbounded) fits one more task within 8 (5 + 1 <= 8)
    r = verdicts("hdrf-tasks", mechverify.load(TEN), "quota")["whole-task"]
    assert r.verdict == "violated"
    assert r.certificate.measure == F(5, 8) and r.certificate.gap == F(3, 8)
    assert r.certificate.utilities["held[A].cpu"] == 5 and r.certificate.utilities["guarantee[A].cpu"] == 8


def test_the_guarantee_policy_honours_it():
    # a1 is served while A's holding + 1 <= 8: 8 tasks; then by dominant share: b1 (0/10) until the pool is
    # full: 2 tasks.  A holds 8 = its guarantee: S_A = 1
    r = verdicts(POLICY, mechverify.load(TEN), "quota")["whole-task"]
    assert r.verdict == "satisfied"
    x = mechverify.allocate(POLICY, mechverify.load(TEN)).x
    assert [sum(row) for row in x] == [8, 2]


def test_the_guarantee_policy_leaves_a_nested_guarantee_to_an_unguaranteed_sibling():
    # pool 4 cpu; P guaranteed 4, its child P/C guaranteed 4, its child P/U nothing; c1 in P/C, u1 in P/U.
    # Both have room within every guarantee above them at first (key 0); dominant shares alternate, ties to
    # the name: c1, u1, c1, u1 -> 2 and 2.  P/C holds 2 < 4 and c1's next task fits within 4: S = 1/2
    env = env_of({"resources": ["cpu"], "servers": [{"capacity": [4]}],
                  "queues": [{"name": "P", "guarantee": [4]}, {"name": "P/C", "guarantee": [4]}, {"name": "P/U"}],
                  "users": [{"name": "c1", "demand": [1], "queue": "P/C"}, {"name": "u1", "demand": [1], "queue": "P/U"}]})
    assert [sum(row) for row in mechverify.allocate(POLICY, env).x] == [2, 2]
    r = verdicts(POLICY, env, "quota")["whole-task"]
    assert r.verdict == "violated" and r.certificate.measure == F(1, 2)


def test_limit_on_a_declared_max():
    d = json.load(open(TEN))
    d["queues"][0]["max"] = [3]
    env = env_of(d)
    # hdrf-tasks still gives A 5 > 3: ratio 5/3, excess 2 cpu; the guarantee policy ignores max too: A 8 > 3
    r = verdicts("hdrf-tasks", env, "limit")["whole-task"]
    assert r.verdict == "violated" and r.certificate.measure == F(5, 3) and r.certificate.gap == 2
    r = verdicts(POLICY, env, "limit")["whole-task"]
    assert r.verdict == "violated" and r.certificate.gap == 5
    d["queues"][0]["max"] = [5]
    assert verdicts("hdrf-tasks", env_of(d), "limit")["whole-task"].verdict == "satisfied"  # 5 <= 5


def test_the_divisible_readings_on_fractional_hdrf():
    # fractional H-DRF: A and B (weights 1, both unbounded) split the 10 cpu 5 / 5.  quota/tree: A holds 5 of
    # its 8, and more of a1 fits within 8: S = 5/8.  limit/tree with A's max 3: 5 > 3, ratio 5/3, excess 2
    r = verdicts("hdrf", mechverify.load(TEN), "quota")["tree"]
    assert r.verdict == "violated" and r.certificate.measure == F(5, 8)
    d = json.load(open(TEN))
    d["queues"][0]["max"] = [3]
    r = verdicts("hdrf", env_of(d), "limit")["tree"]
    assert r.verdict == "violated" and r.certificate.measure == F(5, 3) and r.certificate.gap == 2


def test_over_committed_guarantees_are_not_applicable():
    r = verdicts("hdrf-tasks", mechverify.load(f"{ROOT}/examples/overcommitted-tree.json"), "quota")["whole-task"]
    assert r.verdict == "not_applicable" and "above the pooled capacity" in r.note


def pool(servers, guarantee, demand=1, eligible=None):
    return env_of({"resources": ["cpu"], "servers": [{"capacity": [c]} for c in servers],
                   "queues": [{"name": "A", "guarantee": [guarantee]}, {"name": "B"}],
                   "users": [{"name": "a1", "demand": [demand], "queue": "A",
                              **({"eligible": eligible} if eligible else {})},
                             {"name": "b1", "demand": [demand], "queue": "B"}]})


def alloc(env, x):
    return Allocation(env, tuple(tuple(F(v) for v in row) for row in x), "hand", True)


def test_one_server_fluid_and_whole_task_readings():
    fluid, whole = get("hdrf"), get("hdrf-tasks")
    env = pool([10], 6)
    # A holds 5 < 6 with a1 unbounded: both readings (whole: 5 + 1 <= 6)
    assert quota_shortfall(env, alloc(env, [[5], [5]]), fluid, True) == (F(5, 6), 0, 0, 0)
    assert quota_shortfall(env, alloc(env, [[5], [5]]), whole, True) == (F(5, 6), 0, 0, 0)
    env2 = pool([10], 6, demand=2)
    # tasks of 2 cpu: A holds 2 x 2 = 4 < 6 and 4 + 2 <= 6: short; at 3 tasks... the pool is 10: A 2 tasks, B 3
    assert quota_shortfall(env2, alloc(env2, [[2], [3]]), whole, True) == (F(4, 6), 0, 0, 0)
    env3 = pool([10], 5, demand=2)
    # guarantee 5: A holds 4, one more task needs 4 + 2 = 6 > 5 -- short by less than a task: served (whole);
    # divisible: more of a1 fits within 5: short
    assert quota_shortfall(env3, alloc(env3, [[2], [3]]), whole, True) is None
    assert quota_shortfall(env3, alloc(env3, [[2], [3]]), fluid, True) == (F(4, 5), 0, 0, 0)


def test_several_servers_count_only_idle_room_the_user_may_use():
    fluid = get("hdrf")
    env = pool([5, 5], 6, eligible=["s1"])
    # a1 may use s1 only.  x: a1 4 on s1, b1 5 on s2: s1 has 1 cpu idle, A holds 4 < 6: short (S 4/6)
    assert quota_shortfall(env, alloc(env, [[4, 0], [0, 5]]), fluid, True) == (F(2, 3), 0, 0, 0)
    # a1 5 on s1, b1 5 on s2: nothing idle, A holds 5 < 6 but the pooled guarantee's room is packed: not reported
    assert quota_shortfall(env, alloc(env, [[5, 0], [0, 5]]), fluid, True) is None
    # a1 4 on s1, b1 1 on s1 and 3 on s2: idle room (2 cpu) only on s2, which a1 may not use: not reported
    assert quota_shortfall(env, alloc(env, [[4, 0], [1, 3]]), fluid, True) is None


def test_a_bounded_user_at_its_bound_asks_for_nothing_more():
    env = env_of({"resources": ["cpu"], "servers": [{"capacity": [10]}],
                  "queues": [{"name": "A", "guarantee": [8]}, {"name": "B"}],
                  "users": [{"name": "a1", "demand": [1], "queue": "A", "tasks": 3},
                            {"name": "b1", "demand": [1], "queue": "B"}]})
    # a1 wants 3 tasks and has them: A holds 3 < 8 but nobody below A asks for more
    assert quota_shortfall(env, alloc(env, [[3], [7]]), get("hdrf-tasks"), True) is None
    assert verdicts("hdrf-tasks", env, "quota")["whole-task"].verdict == "satisfied"


def test_worst_excess_and_a_zero_max():
    env = env_of({"resources": ["cpu", "mem"], "servers": [{"capacity": [10, 10]}],
                  "queues": [{"name": "A", "max": [4, 0]}, {"name": "B", "max": [6, 6]}],
                  "users": [{"name": "a1", "demand": [1, 0], "queue": "A"},
                            {"name": "b1", "demand": [1, 1], "queue": "B"}]})
    # A: 3 cpu of 4 (3/4); B: 5 of 6 in both (5/6): largest 5/6, no excess
    assert worst_excess(env, alloc(env, [[3], [5]]).x, True) == (F(5, 6), 1, 0)
    env2 = env_of({"resources": ["cpu", "mem"], "servers": [{"capacity": [10, 10]}],
                   "queues": [{"name": "A", "max": [4, 0]}],
                   "users": [{"name": "a1", "demand": [1, 1], "queue": "A"}]})
    # A holds 1 mem where its max is 0: infinite ratio
    assert worst_excess(env2, alloc(env2, [[1]]).x, True) == (float("inf"), 0, 1)


def test_searched_only_for_settings_with_a_queue_tree():
    for name in ("quota", "limit"):
        p = PROPERTIES[name]
        assert "no queue tree" in p.variant_possible(get("drf").setting, "tree")
        assert p.variant_possible(get("hdrf").setting, "tree") is None
        assert p.variant_possible(get("hdrf-tasks").setting, "whole-task") is None
        assert "whole tasks" in p.variant_possible(get("hdrf-tasks").setting, "tree")
