"""``mechverify.policies``: an ordering turned into whole-task and fractional progressive filling, on
hand-derived examples; the key, comparator and non-local forms agree; the fractional form is DRF."""
from __future__ import annotations

import random
from fractions import Fraction as F

import pytest

import mechanisms
from mechverify.allocation import feasibility_violations
from mechverify.instances import parse_environment
from mechverify.numbers import InstanceError
from mechverify.policies import FillState, fractional_filling, progressive_filling
from tests.helpers import env_of, random_instance


def fewest_tasks(st: FillState, j: int):
    return st.tasks[j]


def test_fewest_tasks_first_by_hand():
    """Round robin by task count.  s1 <3 cpu>, s2 <2 cpu>; u1 <2>, u2 <1>, u3 <1> with bound 1.
      1. all 0 -> u1 (index) on s1 (left 1)    2. u2 on s1 (left 0)    3. u3 on s2 (left 1); bound reached
      4. tie 1, 1 -> u1: s1 has 0, s2 has 1 < 2: cannot, dropped     5. u2 on s2 (left 0).  Stop.
    x = u1 (1, 0), u2 (1, 1), u3 (0, 1)."""
    env = env_of(["cpu"], [[3], [2]], [{"demand": [2]}, {"demand": [1]}, {"demand": [1], "tasks": 1}])
    a = progressive_filling(env, fewest_tasks, name="round-robin")
    assert a.x == ((1, 0), (1, 1), (0, 1)) and a.exact and a.mechanism == "round-robin"
    assert a.info["steps"] == 4
    assert feasibility_violations(env, a.x) == []


def test_state_amounts_and_dominant_share():
    """Two tasks of u1 <1 cpu, 4 mem> on one server <9, 18>: allocated <2, 8>, shares 2/9 and 4/9."""
    env = env_of(["cpu", "mem"], [[9, 18]], [{"demand": [1, 4], "tasks": 2}])
    seen = []

    def key(st, j):
        seen.append((st.tasks[j], tuple(st.allocated[j]), st.dominant_share(j), st.share(j, 0)))
        return 0

    progressive_filling(env, key)
    assert seen[-1] == (2, (2, 8), F(4, 9), F(2, 9))


def test_first_fitting_server_and_eligibility_and_external():
    """s1 <1 cpu>, s2 <5 cpu>, link 3; u1 <1 cpu, 1 link>, eligible s2 only; u2 <2 cpu>.
    Fewest tasks first, ties by index: u1 s2 (4 left, link 2), u2 s2 (2 left), u1 s2 (1 left, link 1),
    u2: s1 has 1 < 2, s2 has 1 < 2: dropped; u1 s2 (0 left, link 0).  u1 (0, 3), u2 (0, 1)."""
    env = env_of(["cpu"], [[1], [5]], [{"demand": [1], "eligible": ["s2"], "external_demand": [1]},
                                       {"demand": [2], "external_demand": [0]}], external=[{"name": "link", "capacity": 3}])
    a = progressive_filling(env, fewest_tasks)
    assert a.x == ((0, 3), (0, 1))
    # the link binds: u1 demanding 2 link per task gets 1 task, and u2 is not limited by it
    env2 = env.with_user(0, external_demand=[2])
    assert progressive_filling(env2, fewest_tasks).x == ((0, 1), (0, 2))


def _drf(st, j):
    return (st.dominant_share(j) / st.env.weight[j], st.tasks[j])


def _cmp(st, i, j):
    a, b = _drf(st, i), _drf(st, j)
    return (a > b) - (a < b)


def test_key_comparator_and_non_local_forms_agree():
    rng = random.Random(5)
    for _ in range(40):
        inst = random_instance(rng, rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3), tasks=0.4,
                               eligible=0.3)
        env = parse_environment(inst)
        a = progressive_filling(env, _drf)
        assert feasibility_violations(env, a.x) == []
        assert progressive_filling(env, cmp=_cmp).x == a.x
        assert progressive_filling(env, _drf, local=False).x == a.x


def test_non_local_key_reads_the_remaining_capacity():
    """A key that is not local: serve the user whose demand is the largest fraction of what is left
    (smaller key = larger fraction).  One server <4 cpu>; u1 <1>, u2 <3>.
      1. u2: 3/4 > 1/4 -> u2 (left 1)   2. u1: 1/1; u2 cannot fit (3 > 1) -> u1 (left 0).  u1 1, u2 1."""
    env = env_of(["cpu"], [[4]], [{"demand": [1]}, {"demand": [3]}])
    key = lambda st, j: -st.env.demand[j][0] / st.remaining[0][0]  # noqa: E731
    assert progressive_filling(env, key, local=False).totals() == (1, 1)


def test_fractional_filling_is_drf_on_one_pool():
    """With rate = dominant share per task / weight, fractional filling is weighted DRF (``drf``)."""
    def rate(env, j):
        return max((env.demand[j][r] / env.capacity[0][r] for r in range(env.n_resources)
                    if env.capacity[0][r] and env.demand[j][r]), default=F(0)) / env.weight[j]

    # the DRF paper's example: A 3, B 2 (level 2/3)
    env = env_of(["cpu", "mem"], [[9, 18]], [{"demand": [1, 4]}, {"demand": [3, 1]}])
    a = fractional_filling(env, rate)
    assert a.x == ((3,), (2,)) and a.info["level"] == F(2, 3)
    rng = random.Random(7)
    for _ in range(40):
        inst = random_instance(rng, rng.randint(1, 4), 1, rng.randint(1, 3), capacity=(1, 9), tasks=0.4)
        for u in inst["users"]:
            u["weight"] = rng.choice([1, 2, "1/2"])
        env = parse_environment(inst)
        assert fractional_filling(env, rate).x == mechanisms.allocate("drf", env, exact=True).x, inst


def test_errors():
    env = env_of(["cpu"], [[1], [1]], [{"demand": [1]}])
    with pytest.raises(TypeError):
        progressive_filling(env)
    with pytest.raises(TypeError):
        progressive_filling(env, fewest_tasks, cmp=_cmp)
    with pytest.raises(InstanceError, match="one server"):
        fractional_filling(env, lambda e, j: 1)
    big = env_of(["cpu"], [[100]], [{"demand": [1]}])
    with pytest.raises(InstanceError, match="more than 10 whole tasks"):
        progressive_filling(big, fewest_tasks, max_tasks=10)
