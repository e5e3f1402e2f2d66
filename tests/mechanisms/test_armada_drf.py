"""``armada-drf`` (src/mechanisms/ports/armada.py): upstream's own cost tests as regression tests, the queue order
and the loop by hand (proposed cost, FIFO, the queue-name tie, the drop of a job that does not fit), the
order facet, the queue mapping, the heap loop against a literal recomputation, the setting and ``list``.

Upstream: armadaproject/armada @ 207cc9e04ef07aaeacfb446d1517446bb702a8e6 (``COMMIT``):
``internal/scheduler/scheduling/fairness/fairness_test.go`` (``TestDominantResourceFairness``,
``TestNewDominantResourceFairness``, ``TestNewDominantResourceFairness_InvalidConfig``); the order:
``internal/scheduler/scheduling/queue_scheduler.go``.  Upstream's test resources are ``foo``, ``bar`` and the
floating resource ``baz``; every case has total ``<foo 1, bar 2, baz 3>`` unless said.
"""
from __future__ import annotations

import math
import random
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.ports.armada import (UPSTREAM, ArmadaDRF, armada_queues, armada_variant, unweighted_cost,
                                   weighted_cost)
from mechanisms.core.registry import SettingError
from mechverify.allocation import Allocation, feasibility_violations
from mechverify.instances import parse_environment
from tests.helpers import run_cli

COMMIT = "207cc9e04ef07aaeacfb446d1517446bb702a8e6"
FOO_BAR = ["foo", "bar"]  # dominantResourceFairnessResourcesToConsider of every upstream case


def env_of(resources, capacities, users, queues=None):
    """Servers ``s1..`` with ``capacities``; ``users``: dicts (name, demand, and optionally tasks, weight,
    queue, eligible); ``queues``: (path, weight)."""
    d = {"resources": resources, "servers": [{"name": f"s{i + 1}", "capacity": c} for i, c in enumerate(capacities)],
         "users": users}
    if queues:
        d["queues"] = [{"name": p, "weight": w} for p, w in queues]
    return parse_environment(d)


def state(env, tasks):
    """The state where user ``j`` holds ``tasks[j]`` tasks, all on the first server."""
    return Allocation(env, tuple((F(t),) + (F(0),) * (env.n_servers - 1) for t in tasks), "state", True)


def names(env, order):
    return [env.users[j] for j in order]


# ---------------------------------------------------------------------------------------- upstream's tests
def cost(total, allocation, considered=FOO_BAR, weight=1):
    """``WeightedCostFromAllocation`` of upstream's test, twice: on the vectors, and as the order facet's share
    of a user holding ``allocation`` as one task (the state need not fit: a total may be 0)."""
    env = env_of(["foo", "bar", "baz"], [total], [{"name": "u", "demand": allocation, "weight": weight}])
    mult = ArmadaDRF(considered).multipliers(env)
    direct = weighted_cost([F(a) for a in allocation], [F(t) for t in total], mult, F(weight))
    via_facet = armada_variant(considered).order.share(state(env, [1]), 0)
    assert direct == via_facet
    return direct


@pytest.mark.parametrize("case, total, allocation, weight, considered, expected", [
    ("single resource 1", (1, 2, 3), ("0.5", 0, 0), 1, FOO_BAR, F(1, 2)),
    ("single resource 2", (1, 2, 3), (0, "0.5", 0), 1, FOO_BAR, F(1, 4)),
    ("pool override - experimental resource", (1, 2, 3), (0, "0.5", 0), 1, FOO_BAR, F(1, 4)),
    ("multiple resources", (1, 2, 3), ("0.5", "1.1", 0), 1, FOO_BAR, F(11, 20)),  # 1.1 / 2
    ("considered resources", (1, 2, 3), ("0.5", 0, 3), 1, FOO_BAR, F(1, 2)),  # baz (3/3 = 1) not considered
    ("zero available resource", (1, 0, 3), ("0.5", "2.0", 0), 1, FOO_BAR, F(1, 2)),  # bar: total 0 -> 0
    ("weight", (1, 2, 3), ("0.5", 0, 0), 2, FOO_BAR, F(1, 4)),
    ("experimental config", (1, 2, 3), ("0.5", "1.1", 0), 1, {"foo": 1, "bar": 1}, F(11, 20)),
    ("experimental config defaults multipliers to one", (1, 2, 3), ("0.5", "1.1", 0), 1, {"foo": 0, "bar": 0},
     F(11, 20)),
    ("experimental config non-unit multiplier", (1, 2, 3), ("0.5", "1.1", 0), 1, {"foo": 4, "bar": 1}, F(2)),
    # the pool's override {foo 1, bar 0.5} replaces the global experimental list: max(.5, .5 x 2 / 2)
    ("pool override - experimental config", (1, 2, 3), ("0.5", "2", 0), 1, {"foo": 1, "bar": "0.5"}, F(1, 2)),
])
def test_upstream_dominant_resource_fairness(case, total, allocation, weight, considered, expected):
    """fairness_test.go, TestDominantResourceFairness (every case, by its upstream name), armadaproject/armada
    @ 207cc9e04ef07aaeacfb446d1517446bb702a8e6.  Upstream compares float64 with assert.Equal; ours is exact."""
    assert cost(total, allocation, considered, weight) == expected, case


def test_upstream_config_errors():
    """fairness_test.go, TestNewDominantResourceFairness (nothing to consider is an error); a negative
    multiplier is a config error in NewDominantResourceFairness (fairness.go).  Upstream's other error (both
    config lists given) has no counterpart: our variant takes one list."""
    with pytest.raises(ValueError, match="no resource to consider"):
        armada_variant([])
    with pytest.raises(ValueError, match="negative multiplier"):
        armada_variant({"foo": -1})


def test_cost_conventions():
    """Zero total: 0 (DivideZeroOnError); nothing considered on the instance (names that are no resource are
    ignored): 0 (Max of an all-zero list); a negative allocation: 0 (max(0, .)); the weight divides."""
    assert unweighted_cost((F(5), F(1)), (F(0), F(4)), (F(1), F(1))) == F(1, 4)
    assert unweighted_cost((F(5),), (F(0),), (F(1),)) == 0
    assert unweighted_cost((F(-3), F(1)), (F(1), F(0)), (F(1), F(1))) == 0
    assert weighted_cost((F(1), F(0)), (F(4), F(4)), (F(1), F(1)), F(1, 2)) == F(1, 2)
    env = env_of(["cpu"], [[4]], [{"name": "u", "demand": [2]}])
    assert armada_variant(["gpu"]).order.share(state(env, [1]), 0) == 0  # "gpu" is no resource here


# ---------------------------------------------------------------------------------------- the loop by hand
def test_big_job_waits_for_its_proposed_cost_and_is_dropped():
    """cpu 10; flat: a <6> and b <1>, each its own queue.  Keys are PROPOSED costs (allocation + next job):
      a 6/10, b 1/10 -> b; ... b at 5: b 6/10 = a 6/10, tie -> queue name "a" -> a: 5 cpu left < 6: a's job is
      dropped (Clear); then b alone up to 10.  a 0, b 10.
    Mesos' sorter (current share, then count, then name) serves a first: a 1, b 4."""
    env = env_of(["cpu"], [[10]], [{"name": "a", "demand": [6]}, {"name": "b", "demand": [1]}])
    out = mechanisms.allocate("armada-drf", env)
    assert out.totals() == (0, 10) and out.info["dropped"] == ["a", "b"] and out.info["steps"] == 10
    assert mechanisms.allocate("mesos-drf", env).totals() == (1, 4)


def test_queues_fifo_and_a_dropped_head_holds_its_queue_back():
    """cpu 10; queue x holds b <1>; queue y holds a1 <6>, then a2 <1> (FIFO: a1 is y's first job).
      x 1/10 < y 6/10 -> b (x 1) ... b 5: x 6/10 = y 6/10, tie -> "x" -> b 6 (4 cpu left: a1 no longer fits);
      x 7/10 > y 6/10 -> y: a1 does not fit -> dropped; y's head is a2: y 1/10 -> a2 1, 2, 3, 4 (cpu full);
      then a2 and b are dropped.  b 6, a1 0, a2 4.
    Had y been re-keyed by a2 as soon as a1 stopped fitting (after b's 5th task), a2 would have been served at
    once and y and x would end 5 and 5: upstream keeps a1's key until y's turn, and so do we."""
    env = env_of(["cpu"], [[10]], [{"name": "b", "demand": [1], "queue": "x"},
                                   {"name": "a1", "demand": [6], "queue": "y"},
                                   {"name": "a2", "demand": [1], "queue": "y"}], queues=[("x", 1), ("y", 1)])
    out = mechanisms.allocate("armada-drf", env)
    assert out.totals() == (6, 0, 4) and out.info["dropped"] == ["a1", "a2", "b"]
    spec = mechanisms.get("armada-drf").order
    assert names(env, spec.order(state(env, [0, 0, 0]))) == ["b", "a1", "a2"]  # x 1/10 < y 6/10
    assert names(env, spec.order(state(env, [6, 0, 0]))) == ["a1", "a2", "b"]  # y 6/10 < x 7/10
    assert spec.share(state(env, [6, 0, 2]), 0) == F(3, 5) and spec.share(state(env, [6, 0, 2]), 2) == F(1, 5)
    assert spec.queue_share(state(env, [6, 0, 2]), 1) == F(1, 5)


def test_fifo_inside_a_queue_and_task_bounds():
    """cpu 10; queue q holds u1 <1> (2 jobs) then u2 <1> (3 jobs); the root user r <2> is its own queue "r".
    q's jobs are FIFO: u1's two, then u2's.  Keys (proposed cost):
      q 1/10 < r 2/10 -> u1;  q 2/10 = r 2/10, "q" < "r" -> u1 (exhausted: q's head is now u2);
      q 3/10 > r 2/10 -> r;  q 3/10 < r 4/10 -> u2;  q 4/10 = r 4/10 -> "q" -> u2;  q 5/10 > r 4/10 -> r;
      q 5/10 < r 6/10 -> u2 (exhausted: q has no job left; cpu used 5 + 4 = 9);
      r: 1 cpu left < 2 -> dropped.  u1 2, u2 3, r 2."""
    env = env_of(["cpu"], [[10]], [{"name": "u1", "demand": [1], "tasks": 2, "queue": "q"},
                                   {"name": "u2", "demand": [1], "tasks": 3, "queue": "q"},
                                   {"name": "r", "demand": [2]}], queues=[("q", 1)])
    out = mechanisms.allocate("armada-drf", env)
    assert out.totals() == (2, 3, 2) and out.info["dropped"] == ["r"]
    spec = mechanisms.get("armada-drf").order
    # u1 exhausted: q's head is u2, so q's proposed cost is (2 + 1) / 10, r's (2 + 2) / 10
    assert names(env, spec.order(state(env, [2, 0, 1]))) == ["u1", "u2", "r"]
    # q without a head (both exhausted) comes after every queue with one
    assert names(env, spec.order(state(env, [2, 3, 4]))) == ["r", "u1", "u2"]


def test_weights_top_level_queues_and_users_at_the_root():
    """cpu 6; queue p (weight 2) with sub-queue p/q (weight 100: folded into p, unread) holding c <1>; d <1> at
    the root is its own queue "d" (weight 1):
      p (1/6)/2 = 1/12 < d 1/6 -> c; p 2/12 = d 1/6 -> "d" < "p" -> d; p 2/12 < d 2/6 -> c; p 3/12 < 1/3 -> c;
      p 4/12 = d 1/3 -> "d" -> d; p 4/12 < d 3/6 -> c (cpu full).  c 4, d 2."""
    env = env_of(["cpu"], [[6]], [{"name": "c", "demand": [1], "queue": "p/q"}, {"name": "d", "demand": [1]}],
                 queues=[("p", 2), ("p/q", 100)])
    aq = armada_queues(env)
    assert aq.names == ("p", "d") and aq.weights == (2, 1) and aq.of_user == (0, 1) and aq.of_queue == (0, 0)
    assert mechanisms.allocate("armada-drf", env).totals() == (4, 2)
    spec = mechanisms.get("armada-drf").order
    st = state(env, [4, 2])
    assert spec.queue_share(st, 0) == spec.queue_share(st, 1) == spec.share(st, 0) == F(1, 3)
    # flat: user weights are the queues' weights
    flat = env_of(["cpu"], [[6]], [{"name": "c", "demand": [1], "weight": 2}, {"name": "d", "demand": [1]}])
    assert mechanisms.allocate("armada-drf", flat).totals() == (4, 2)


def test_many_servers_placement_and_pooled_total():
    """s1 <cpu 2>, s2 <cpu 4> (pool total 6); u <2> on any node, v <1> only on s2.
      u 2/6 > v 1/6 -> v (on s2, 3 left); u 2/6 = v 2/6 -> "u" < "v" -> u (on s1, first fitting: 0 left);
      u 4/6 > v 2/6 -> v (s2, 2 left); v 3/6 < u 4/6 -> v (s2, 1 left); v 4/6 = u 4/6 -> "u": s1 full, s2 has
      1 < 2 -> u dropped; v (s2, 0 left); v dropped.  u x = (1, 0), v x = (0, 4)."""
    env = env_of(["cpu"], [[2], [4]], [{"name": "u", "demand": [2]}, {"name": "v", "demand": [1], "eligible": ["s2"]}])
    out = mechanisms.allocate("armada-drf", env)
    assert out.x == ((1, 0), (0, 4)) and feasibility_violations(env, out.x) == []


def test_variant_with_multipliers_changes_the_order():
    """cpu 10, gpu 10; flat: a <1 cpu>, b <1 cpu, 1 gpu>.  Every resource at multiplier 1: keys (a + 1)/10 and
    (b + 1)/10, ties -> "a": a, b, a, b, ... a 5, b 5 (cpu full).
    gpu counted 4 times (``armada_variant({"cpu": 1, "gpu": 4})``): b's key is 4 (b + 1)/10:
      a 1/10, 2/10, 3/10 < 4/10 -> a 3;  a 4/10 = b 4/10 -> "a" -> a 4;  b 4/10 < a 5/10 -> b 1 (b: 8/10);
      a 5/10 .. 7/10 -> a 7;  a 8/10 = b 8/10 -> "a" -> a 8;  b 8/10 < a 9/10 -> b 2 (cpu full: 8 + 2);
      a 9/10 < b 12/10: a dropped; b dropped.  a 8, b 2."""
    env = env_of(["cpu", "gpu"], [[10, 10]], [{"name": "a", "demand": [1, 0]}, {"name": "b", "demand": [1, 1]}])
    assert mechanisms.allocate("armada-drf", env).totals() == (5, 5)
    m = armada_variant({"cpu": 1, "gpu": 4}, name="armada-drf-gpu4")
    out = m(env)
    assert out.totals() == (8, 2) and m.setting.ordered and out.mechanism == "armada-drf-gpu4"
    assert names(env, m.order.order(state(env, [4, 0]))) == ["b", "a"]  # b 4/10 < a 5/10
    assert names(env, m.order.order(state(env, [3, 0]))) == ["a", "b"]  # tie 4/10 -> "a"
    assert names(env, m.order.order(state(env, [4, 1]))) == ["a", "b"]  # a 5/10 < b 8/10
    assert m.order.share(state(env, [4, 1]), 1) == F(2, 5)  # (1 gpu / 10) x 4


# ---------------------------------------------------------------------------------------- heap = literal
def _literal(env, considered=None):
    """The loop from scratch: every round recompute every queue's head (first user neither exhausted nor
    dropped) and key, take the least, place on the first fitting eligible server or drop."""
    pol = ArmadaDRF(considered)
    aq, mult, totals = armada_queues(env), pol.multipliers(env), env.total_capacity()
    J, S = env.n_users, env.n_servers
    limit = [None if b is None else math.floor(b) for b in env.tasks]
    x = [[0] * S for _ in range(J)]
    left = [list(r) for r in env.capacity]
    dropped = set()
    while True:
        best = None
        for a, members in enumerate(aq.members):
            head = next((j for j in members if j not in dropped and (limit[j] is None or sum(x[j]) < limit[j])), None)
            if head is None:
                continue
            alloc = [sum((sum(x[j]) * env.demand[j][r] for j in members), F(0)) for r in range(env.n_resources)]
            prop = [v + d for v, d in zip(alloc, env.demand[head])]
            key = (weighted_cost(prop, totals, mult, aq.weights[a]), aq.names[a], a)
            if best is None or key < best[0]:
                best = (key, head)
        if best is None:
            return tuple(tuple(F(v) for v in row) for row in x)
        j = best[1]
        s = next((s for s in range(S) if s in env.eligible[j]
                  and all(left[s][r] >= d for r, d in enumerate(env.demand[j]) if d)), None)
        if s is None:
            dropped.add(j)
            continue
        x[j][s] += 1
        for r, d in enumerate(env.demand[j]):
            left[s][r] -= d


def _random_env(rng):
    R, S = rng.randint(1, 3), rng.randint(1, 2)
    paths = []
    for k in range(rng.randint(0, 3)):
        p = (rng.choice(paths) + "/" if paths and rng.random() < 0.4 else "") + f"q{k}"
        paths.append(p)
    users = []
    for j in range(rng.randint(1, 5)):
        dem = [rng.choice([0, 1, 1, 2, 3, 5]) for _ in range(R)]
        u = {"name": f"u{rng.randint(0, 9)}{j}", "demand": dem}
        if not any(dem) or rng.random() < 0.5:
            u["tasks"] = rng.choice([0, 1, 2, 3, "5/2"])
        if rng.random() < 0.3:
            u["weight"] = rng.choice([2, 3, "1/2"])
        if paths and rng.random() < 0.7:
            u["queue"] = rng.choice(paths)
        if S > 1 and rng.random() < 0.3:
            u["eligible"] = [f"s{s + 1}" for s in range(S) if rng.random() < 0.6]
        users.append(u)
    caps = [[rng.choice([0, 3, 5, 8, 12]) for _ in range(R)] for _ in range(S)]
    return env_of([f"r{r}" for r in range(R)], caps, users, [(p, rng.choice([1, 2, "1/2"])) for p in paths])


def test_heap_loop_equals_the_literal_loop():
    """300 random instances (queues nested and at the root, zero demands and capacities, bounds, weights,
    placement, two nodes): the heap loop and the literal recomputation agree, and the result is feasible."""
    rng = random.Random(26)
    dropped = 0
    for _ in range(300):
        env = _random_env(rng)
        out = mechanisms.allocate("armada-drf", env)
        assert out.x == _literal(env), env
        assert feasibility_violations(env, out.x) == []
        dropped += bool(out.info["dropped"])
    assert dropped > 100


# ---------------------------------------------------------------------------------------- setting, list
def test_setting_and_list():
    m = mechanisms.get("armada-drf")
    assert m.source == UPSTREAM and COMMIT in m.source
    assert "internal/scheduler/scheduling/fairness/fairness.go" in m.source
    st = m.setting
    assert st.ordered and st.hierarchy and not st.divisible and not st.external and st.placement and st.weights
    assert m.order is not None and m.order.queue_share is not None and m.claims == ()
    with pytest.raises(SettingError, match=r"^external"):
        mechanisms.allocate("armada-drf", parse_environment(
            {"resources": ["r"], "servers": [{"capacity": [1]}], "external": [{"name": "e", "capacity": 1}],
             "users": [{"demand": [1], "external_demand": [1]}]}))
    out = run_cli("list")
    assert out.returncode == 0
    block = out.stdout[out.stdout.index("armada-drf  --"):].split("\n")
    assert block[1].strip() == f"source:  {UPSTREAM}"
