"""``order POLICY INSTANCE [--allocation ALLOC.json] [--format json]``: the upstream cases, and bad input."""
from __future__ import annotations

import json

from tests.helpers import run_cli


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return str(p)


def order(*args):
    p = run_cli("order", *args, "--format", "json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_mesos_sorter_drf_case(tmp_path):
    """apache/mesos @ c1b42f79, src/tests/sorter_tests.cpp, DRFSorterTest.DRF: total cpus 100, mem 100;
    a <5, 5>, b <6, 6> -> [a, b]; + c <1, 1>, d <3, 1> -> [c, d, a, b] (shares 1/100, 3/100, 5/100, 6/100)."""
    users = [{"name": "a", "demand": [1, 1], "usage": [5]}, {"name": "b", "demand": [1, 1], "usage": [6]}]
    inst = {"resources": ["cpus", "mem"], "servers": [{"name": "agent", "capacity": [100, 100]}], "users": users}
    assert order("mesos-drf", write(tmp_path, "ab.json", inst))["order"] == ["a", "b"]
    users += [{"name": "c", "demand": [1, 1], "usage": [1]}, {"name": "d", "demand": [3, 1], "usage": [1]}]
    out = order("mesos-drf", write(tmp_path, "abcd.json", inst))
    assert out["order"] == ["c", "d", "a", "b"]
    assert out["shares"] == {"a": "1/20", "b": "3/50", "c": "1/100", "d": "3/100"}


def test_yarn_capacity_utilization_ordering_case_3(tmp_path):
    """apache/hadoop TestPriorityUtilizationQueueOrderingPolicy.testUtilizationOrdering, case 3 (the PR 7278 branch,
    Hean-Chhinling/hadoop @ 6d5350fa): a (used .1, abs .2), b (0, abs .3), c (.2, abs .4) -> [b, a, c].  Ours: weights
    2, 3, 4 and a filler of weight 1 on one resource of 100; a holds 2 (= .1 x .2 x 100), c 8, the filler 10."""
    queues = [{"name": "a", "weight": 2}, {"name": "b", "weight": 3}, {"name": "c", "weight": 4}, {"name": "f", "weight": 1}]
    users = [{"name": f"u{q}", "queue": q, "demand": [1], **({"usage": [h]} if h else {})}
             for q, h in (("a", 2), ("b", 0), ("c", 8), ("f", 10))]
    inst = {"resources": ["mem"], "servers": [{"name": "pool", "capacity": [100]}], "queues": queues, "users": users}
    out = order("yarn-capacity", write(tmp_path, "cs.json", inst))
    assert out["order"] == ["ub", "ua", "uc", "uf"]


def test_the_state_can_come_from_an_allocation_file(tmp_path):
    """``allocate --format json`` output as the state: the same order as the instance's own usage."""
    inst = {"resources": ["cpus", "mem"], "servers": [{"name": "agent", "capacity": [100, 100]}],
            "users": [{"name": "a", "demand": [1, 1]}, {"name": "b", "demand": [1, 1]}]}
    path = write(tmp_path, "i.json", inst)
    alloc = write(tmp_path, "alloc.json", {"users": ["b", "a"], "servers": ["agent"], "tasks": [[6], [5]]})
    assert order("mesos-drf", path, "--allocation", alloc)["order"] == ["a", "b"]
    assert order("mesos-drf", path)["order"] == ["a", "b"]  # empty cluster: tie at 0, count 0, then the name


def test_yarn_drf_comparison(tmp_path):
    """apache/hadoop TestDominantResourceFairnessPolicy.testSameDominantResource: cluster <8000 MB, 4 vcores>,
    <1000, 1> before <2000, 1>."""
    inst = {"resources": ["memory", "vcores"], "servers": [{"name": "c", "capacity": [8000, 4]}],
            "users": [{"name": "s2", "demand": [2000, 1], "usage": [1]}, {"name": "s1", "demand": [1000, 1], "usage": [1]}]}
    assert order("yarn-drf", write(tmp_path, "y.json", inst))["order"] == ["s1", "s2"]


def test_armada_costs(tmp_path):
    """armadaproject/armada fairness_test.go: total <foo 1, bar 2, baz 3>: <.5, 0, 0> costs .5, <0, .5, 0> .25,
    <.5, 1.1, 0> .55 (bar 1.1 / 2); each user is its own queue at the root."""
    inst = {"resources": ["foo", "bar", "baz"], "servers": [{"name": "p", "capacity": [1, 2, 3]}],
            "users": [{"name": "x", "demand": [0.5, 0, 0], "usage": [1]}, {"name": "y", "demand": [0, 0.5, 0], "usage": [1]},
                      {"name": "z", "demand": [0.5, 1.1, 0], "usage": [1]}]}
    out = order("armada-drf", write(tmp_path, "a.json", inst))
    assert out["shares"] == {"x": "1/2", "y": "1/4", "z": "11/20"}


def test_bad_input_is_one_line(tmp_path):
    inst = {"resources": ["cpu"], "servers": [{"name": "s", "capacity": [4]}], "users": [{"name": "a", "demand": [1]}]}
    path = write(tmp_path, "i.json", inst)
    p = run_cli("order", "drf", path)
    assert p.returncode == 2 and p.stderr.startswith("error: order: drf exposes no order") and p.stderr.count("\n") == 1
    bad = write(tmp_path, "bad.json", {"users": ["zz"], "servers": ["s"], "tasks": [[1]]})
    p = run_cli("order", "mesos-drf", path, "--allocation", bad)
    assert p.returncode == 2 and "users: expected the instance's users" in p.stderr and "Traceback" not in p.stderr
    nan = write(tmp_path, "nan.json", {"users": ["a"], "servers": ["s"], "tasks": [[-1]]})
    p = run_cli("order", "mesos-drf", path, "--allocation", nan)
    assert p.returncode == 2 and "must be >= 0" in p.stderr
