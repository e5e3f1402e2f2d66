"""``utility`` of a float allocation takes a shortcut (no ``Bundle`` of ``Fraction``-times-float products):
it must return exactly what the general code (``bundle_value`` of ``alloc.bundle``) returns -- the same
bits and the same type (a ``Fraction`` task bound ``n_j`` stays a ``Fraction``) -- for misreported demands,
external demands and eligible sets, zero demands, task bounds, and the exact/integral paths untouched."""
from __future__ import annotations

import random
from fractions import Fraction as F

from mechverify.allocation import Allocation
from mechverify.instances import parse_environment
from mechverify.utility import bundle_value, utility

from tests.helpers import random_instance


def _general(true_env, alloc, j, integral=False):
    return bundle_value(true_env, j, alloc.bundle(j), None, integral)


def test_float_utility_is_bit_identical_to_the_bundle_computation():
    rng = random.Random(11)
    checked = shortcut = capped = 0
    for _ in range(1500):
        inst = random_instance(rng, rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3), capacity=(0, 12),
                               demand=lambda rg, r: F(rg.randint(0, 9), rg.randint(1, 4)),
                               external=(1, 20) if rng.random() < 0.6 else None, external_demand=(0, 4),
                               tasks=0.4, task_range=(0, 6), eligible=0.3)
        true_env = parse_environment(inst)
        j = rng.randrange(true_env.n_users)
        dev = {}
        if rng.random() < 0.7:
            dev["demand"] = [F(rng.randint(0, 9), rng.randint(1, 4)) for _ in range(true_env.n_resources)]
            if not any(dev["demand"]):
                dev["demand"][0] = F(1)
        if true_env.n_external and rng.random() < 0.5:
            dev["external_demand"] = [F(rng.randint(0, 5), rng.randint(1, 3)) for _ in range(true_env.n_external)]
        if rng.random() < 0.3:
            dev["eligible"] = [s for s in range(true_env.n_servers) if rng.random() < 0.6]
        rep = true_env.with_user(j, **dev) if dev else true_env
        x = tuple(tuple(rng.choice([0.0, rng.uniform(0, 5), float(rng.randint(0, 4)), rng.uniform(0, 1e-9)])
                        for _ in range(rep.n_servers)) for _ in range(rep.n_users))
        alloc = Allocation(rep, x, "test", False)
        for k in range(true_env.n_users):
            got, ref = utility(true_env, alloc, k), _general(true_env, alloc, k)
            assert type(got) is type(ref) and repr(got) == repr(ref), (true_env.to_json(), dev, x, k)
            checked += 1
            capped += isinstance(ref, F)
        shortcut += 1
        # integral utilities and exact allocations keep the general code
        assert utility(true_env, alloc, j, integral=True) == _general(true_env, alloc, j, integral=True)
        ex = Allocation(rep, tuple(tuple(F(v) for v in row) for row in x), "test", True)
        assert utility(true_env, ex, j) == _general(true_env, ex, j)
    assert checked > 3000 and capped > 100  # the task bound decided some of them


def test_exact_utility_equals_the_bundle_computation():
    """The exact shortcut (a row of ``Fraction``s): the same value and type as ``bundle_value`` of the bundle."""
    rng = random.Random(12)
    checked = capped = 0
    for _ in range(1500):
        inst = random_instance(rng, rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3), capacity=(0, 12),
                               demand=lambda rg, r: F(rg.randint(0, 9), rg.randint(1, 4)),
                               external=(1, 20) if rng.random() < 0.6 else None, external_demand=(0, 4),
                               tasks=0.4, task_range=(0, 6), eligible=0.3)
        true_env = parse_environment(inst)
        j = rng.randrange(true_env.n_users)
        dev = {}
        if rng.random() < 0.7:
            dev["demand"] = [F(rng.randint(0, 9), rng.randint(1, 4)) for _ in range(true_env.n_resources)]
            if not any(dev["demand"]):
                dev["demand"][0] = F(1)
        if true_env.n_external and rng.random() < 0.5:
            dev["external_demand"] = [F(rng.randint(0, 5), rng.randint(1, 3)) for _ in range(true_env.n_external)]
        if rng.random() < 0.3:
            dev["eligible"] = [s for s in range(true_env.n_servers) if rng.random() < 0.6]
        rep = true_env.with_user(j, **dev) if dev else true_env
        x = tuple(tuple(F(rng.randint(0, 12), rng.choice([1, 1, 2, 3])) for _ in range(rep.n_servers))
                  for _ in range(rep.n_users))
        alloc = Allocation(rep, x, "test", True)
        for k in range(true_env.n_users):
            got, ref = utility(true_env, alloc, k), _general(true_env, alloc, k)
            assert type(got) is type(ref) and got == ref, (true_env.to_json(), dev, x, k)
            checked += 1
            capped += ref == true_env.tasks[k]
    assert checked > 3000 and capped > 100


def test_leontief_of_float_amounts_and_exact_demands_is_what_the_operators_give():
    # a float bundle part against an exact demand: the shortcut computes float(a) / float(dk) as ``a / dk`` does
    # (Fraction's reflected division), skips dk = 0 by its numerator as ``dk > 0`` does, and compares as before
    # -- the same bits and type, tiny and huge demands included (a positive demand whose float is 0.0 raises as
    # ``a / dk`` does)
    import math

    import pytest

    from mechverify.model import INF, leontief_tasks

    def reference(amounts, demand):
        best = INF
        for a, dk in zip(amounts, demand):
            if dk > 0:
                q = a / dk
                if q < best:
                    best = q
        return best

    rng = random.Random(5)
    values = [F(0), F(1, 3), F(7, 2), F(10 ** 30, 3), F(1, 10 ** 30), F(5)]
    for _ in range(3000):
        R = rng.randint(1, 4)
        amounts = tuple(rng.choice([0.0, 1.5, 1e-300, 3.0, rng.random() * 100, math.inf]) for _ in range(R))
        demand = tuple(rng.choice(values) for _ in range(R))
        got, want = leontief_tasks(amounts, demand), reference(amounts, demand)
        assert type(got) is type(want) and (got == want or (math.isnan(got) and math.isnan(want)))
    with pytest.raises(ZeroDivisionError):
        leontief_tasks((1.0,), (F(1, 10 ** 400),))
    with pytest.raises(ZeroDivisionError):
        reference((1.0,), (F(1, 10 ** 400),))
