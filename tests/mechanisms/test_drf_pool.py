"""DRF's closed form (``mechanisms/paper/drf_pool.py``, water filling in exact integer pairs) against the LP
path it replaced (``leximin_allocation`` over ``drf_normaliser``: repeated HiGHS LPs re-solved exactly,
``mechverify/lexmaxmin.py``), on 300 random one-server instances with zero demands, zero capacities,
weights, task bounds (0 included), external resources and ineligible users.  Exact allocations and
levels must be IDENTICAL; the float path must be the exact one correctly rounded, and within the LP
float path's tolerance of it.
"""
from __future__ import annotations

import random
from fractions import Fraction as F

import pytest

from mechanisms import allocate
from mechanisms.paper.leximin import leximin_allocation
from mechanisms.paper.drf_pool import drf_one_pool
from mechanisms.paper.normalisers import drf_normaliser
from mechverify.instances import parse_environment
from mechverify.numbers import InstanceError


def lp_drf(env, exact):
    """The previous implementation of ``drf`` (the reference)."""
    return leximin_allocation(env, "drf", exact, [drf_normaliser(env, j) for j in range(env.n_users)])


def random_env(rng: random.Random):
    n_res = rng.randint(1, 3)
    n_ext = rng.choice([0, 0, 1, 2])
    n_users = rng.randint(1, 5)
    cap = [rng.choice([0, 1, 2, 3, 5, 7, 10, 12]) if rng.random() < 0.1 else rng.randint(1, 12)
           for _ in range(n_res)]
    inst = {"resources": [f"r{r}" for r in range(n_res)],
            "servers": [{"name": "s1", "capacity": cap}], "users": []}
    if n_ext:
        inst["external"] = [{"name": f"e{k}", "capacity": rng.randint(0 if rng.random() < 0.1 else 1, 9)}
                            for k in range(n_ext)]
    for j in range(n_users):
        u = {"name": f"u{j}",
             "demand": [0 if rng.random() < 0.25 else F(rng.randint(1, 6), rng.randint(1, 3)) for _ in range(n_res)]}
        if n_ext:
            u["external_demand"] = [0 if rng.random() < 0.4 else rng.randint(1, 4) for _ in range(n_ext)]
        if rng.random() < 0.3:
            u["weight"] = F(rng.randint(1, 4), rng.randint(1, 3))
        if rng.random() < 0.4:
            u["tasks"] = rng.choice([0, 1, F(3, 2), 2, 3, 5, 8])
        if rng.random() < 0.1:
            u["eligible"] = []
        inst["users"].append(u)
    return parse_environment(inst)


def _instances(n, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        try:
            out.append(random_env(rng))
        except InstanceError:  # e.g. a user demanding nothing without a bound: the model rejects it
            continue
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_closed_form_equals_lp_path_exactly(seed):
    for env in _instances(100, seed):
        new, old = drf_one_pool(env, True), lp_drf(env, True)
        assert new.x == old.x, (env.to_json(), new.x, old.x)
        assert new.info["levels"] == old.info["levels"], env.to_json()
        assert new.info["normaliser"] == old.info["normaliser"], env.to_json()
        assert allocate("drf", env, exact=True).x == old.x
        fl = drf_one_pool(env, False)
        assert fl.x == tuple((float(v[0]),) for v in new.x)
        old_fl = lp_drf(env, False)
        for a, b in zip(fl.x, old_fl.x):
            assert abs(a[0] - b[0]) <= 1e-7 * max(1.0, abs(b[0])), (env.to_json(), fl.x, old_fl.x)


def test_hand_case_two_rounds():
    """c = (9 CPU, 18 GB); u1 demands (1, 4), u2 (3, 1) with a bound of 2 tasks.  Dominant shares per task:
    u1 4/18 = 2/9 (memory), u2 3/9 = 1/3 (CPU), so x1 = 9t/2, x2 = 3t.  Round 1: CPU allows
    9t/2 + 9t <= 9 -> t <= 2/3, memory 18t + 3t <= 18 -> t <= 6/7, u2's bound 3t <= 2 -> t <= 2/3:
    t* = 2/3 freezes both u2 (bound) and, through CPU, u1: x = (3, 2)."""
    env = parse_environment({"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [9, 18]}],
                             "users": [{"name": "u1", "demand": [1, 4]},
                                       {"name": "u2", "demand": [3, 1], "tasks": 2}]})
    a = drf_one_pool(env, True)
    assert a.x == ((F(3),), (F(2),))
    assert a.info["levels"] == [F(2, 3), F(2, 3)]
