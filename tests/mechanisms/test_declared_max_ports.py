"""Kueue's borrowing limit as the model's declared max (docs/model.md, "Declared amounts"): a queue's max is
nominalQuota + borrowingLimit of its subtree, and admission sets aside a workload that would take a node
above it.  Hand derivation beside each assertion."""
from __future__ import annotations

import json
from fractions import Fraction as F

import mechverify
from mechanisms import get
from mechverify.instances import parse_environment_text


def instance(max_a=None):
    a = {"name": "A", "guarantee": [4], **({"max": [max_a]} if max_a is not None else {})}
    return parse_environment_text(json.dumps({
        "resources": ["cpu"], "servers": [{"capacity": [10]}], "queues": [a, {"name": "B", "guarantee": [6]}],
        "users": [{"name": "a1", "demand": [1], "tasks": 3, "queue": "A"},
                  {"name": "a2", "demand": [1], "tasks": 3, "queue": "A"},
                  {"name": "a3", "demand": [1], "tasks": 2, "queue": "A"},
                  {"name": "b1", "demand": [1], "tasks": 2, "queue": "B"}]}), "inst.json")


def test_without_a_max_every_workload_fits_the_pool():
    # 3 + 3 + 2 + 2 = 10 cpu = the pool: all admitted; A holds 8
    assert [row[0] for row in mechverify.allocate("kueue-drs", instance()).x] == [3, 3, 2, 2]


def test_a_max_sets_aside_the_workload_that_would_exceed_it():
    # FIFO in A: a1, a2, a3.  Cycle 1: heads a1 and b1, both fit (A 3, B 2).  Cycle 2: a2, A 3 + 3 = 6 <= 6.
    # Cycle 3: a3, A 6 + 2 = 8 > 6: set aside
    for name in ("kueue-drs", "kueue-drs@6577", "kueue-drs@10126"):
        a = mechverify.allocate(name, instance(6))
        assert [row[0] for row in a.x] == [3, 3, 0, 2] and a.info["admitted"] == ["a1", "b1", "a2"], name
        (r,) = [r for r in mechverify.check(name, instance(6), "limit") if r.variant == "whole-task"]
        assert r.verdict == "satisfied" and r.measure == 1  # A holds 6 of 6


def test_limit_catches_a_policy_that_ignores_the_max():
    # hdrf-tasks reads no max: weights 1 and 1 split the 10 cpu 5 / 5 between A and B, bounded by the tasks:
    # A's users ask for 8, B's for 2 -> B gets 2, A the other 8 (work-conserving): 8 > 6
    (r,) = [r for r in mechverify.check("hdrf-tasks", instance(6), "limit") if r.variant == "whole-task"]
    assert r.verdict == "violated" and r.certificate.gap == 2 and r.certificate.measure == F(4, 3)
    assert "max" in get("kueue-drs").notes and "lendingLimit is not representable" in get("kueue-drs").notes


# ---------------------------------------------------------------------- YARN FairScheduler: maxResources
def yarn_instance(max_a=None):
    a = {"name": "A", **({"max": [max_a]} if max_a is not None else {})}
    return parse_environment_text(json.dumps({
        "resources": ["cpu"], "servers": [{"capacity": [10]}], "queues": [a, {"name": "B"}],
        "users": [{"name": "a1", "demand": [1], "queue": "A"}, {"name": "b1", "demand": [1], "tasks": 2, "queue": "B"}]}),
        "inst.json")


def test_yarn_drf_honours_max_resources():
    # b1 wants 2 containers, a1 unbounded: without a max a1 takes the other 8 (the pool is 10)
    assert [row[0] for row in mechverify.allocate("yarn-drf", yarn_instance()).x] == [8, 2]
    # A's maxResources 6: FSQueue.fitsInMaxShare refuses a1's 7th container (6 + 1 > 6); 2 cpu stay idle
    for name in ("yarn-drf", "yarn-drf@YARN-11482"):
        assert [row[0] for row in mechverify.allocate(name, yarn_instance(6)).x] == [6, 2], name
        (r,) = [r for r in mechverify.check(name, yarn_instance(6), "limit") if r.variant == "whole-task"]
        assert r.verdict == "satisfied"
    assert "fitsInMaxShare" in get("yarn-drf").notes and "declared max is not read" in get("yarn-capacity").notes
