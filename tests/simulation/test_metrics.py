"""Seed 004 metrics (Sec. 6.2-6.3) on hand-derived allocations.

The main instance is seed 004 Fig. 2 in raw units: server s1 = (5 CPU, 10 GB), s2 = (10, 5);
link capacity 15 (the seed's "x/15 of the link"); user 1 needs (2, 1) and 5/2 of the link per task,
user 2 needs (1, 2) and 1/2.  The seed (Sec. 3.1-3.2, Fig. 2(a)): CRU and MNW give server 1 to
user 2 and server 2 to user 1, "each user executes 5 tasks".
"""
from __future__ import annotations

import math
from fractions import Fraction as F

import pytest

from simulation import metrics as M
from mechverify.allocation import Allocation
from mechverify.instances import parse_environment
from mechverify.numbers import InstanceError

FIG2 = {"resources": ["cpu", "mem"],
        "servers": [{"name": "s1", "capacity": [5, 10]}, {"name": "s2", "capacity": [10, 5]}],
        "external": [{"name": "bw", "capacity": 15}],
        "users": [{"name": "u1", "demand": [2, 1], "external_demand": ["5/2"]},
                  {"name": "u2", "demand": [1, 2], "external_demand": ["1/2"]}]}


def fig2():
    return parse_environment(FIG2)


def alloc(env, rows, exact=True):
    conv = F if exact else float
    return Allocation(env, tuple(tuple(conv(v) for v in r) for r in rows), "hand", exact)


def test_si_benchmark_fig2_def6():
    # Def. 6: psi_1 = min{ (15/2)/(5/2) = 3, s1: min((5/2)/2, 5/1) = 5/4 + s2: min(5/2, (5/2)/1) = 5/2 -> 15/4 } = 3
    #         psi_2 = min{ (15/2)/(1/2) = 15, s1: min(5/2, 5/2) = 5/2 + s2: min(5, 5/4) = 5/4 -> 15/4 } = 15/4
    env = fig2()
    assert M.si_benchmark(env, 0) == 3 and M.si_benchmark(env, 1) == F(15, 4)


def test_cru_allocation_of_fig2_is_perfect():
    # Fig. 2(a): x = [[0, 5], [5, 0]] uses cpu 10+5, mem 5+10, bw 5*5/2 + 5*1/2 = 15: everything.
    # SI: 5/3 and 5/(15/4) are >= 1 -> SI-SAT 1.
    # EF: u1(A_2): A_2 = s1 (5, 10), bw 5/2 -> min(bw (5/2)/(5/2) = 1, s1 min(5/2, 10)) = 1 -> 5/1 -> 1;
    #     u2(A_1): A_1 = s2 (10, 5), bw 25/2 -> min(25, s2 min(10, 5/2)) = 5/2 -> 5/(5/2) -> 1.
    # Domination: without the link, s1 runs at most 5 tasks (max a+c: 2a+c<=5, a+2c<=10 -> (0,5)) and s2
    # at most 5 -> D <= 10 = sum u: factor 1 (the seed: CRU is PO, Thm 1).
    env = fig2()
    a = alloc(env, [[0, 5], [5, 0]])
    m = M.all_metrics(None, a)
    assert m.si_sat == (1, 1) and m.min_si_sat == 1
    assert m.ef_sat == (1, 1) and m.min_ef_sat == 1
    assert m.domination_factor == 1 and isinstance(m.domination_factor, F)
    assert m.utilization == {"cpu": 1, "mem": 1, "bw": 1}
    # static JCT factor u_j / u_j(whole cluster) = 5/eta_j with eta = (6, 15/2) (eq. (6))
    assert m.static_jct_factor == (F(5, 6), F(2, 3))


def test_swapped_matching_is_dominated_and_violates_si():
    # User 1 alone on s1: min(5/2, 10/1) = 5/2 tasks; user 2 alone on s2: min(10/1, 5/2) = 5/2 tasks.
    # SI-SAT = (5/2)/3 = 5/6 and (5/2)/(15/4) = 2/3; MIN-SI-SAT = 2/3.
    # EF: u1(A_2) with A_2 = s2 (5/2, 5), bw 5/4: min(bw 1/2, s2 min(5/4, 5)) = 1/2 < 5/2 -> 1;
    #     u2(A_1) with A_1 = s1 (5, 5/2), bw 25/4: min(25/2, s1 min(5, 5/4)) = 5/4 < 5/2 -> 1.
    # Domination: the CRU allocation gives (5, 5) >= (5/2, 5/2) and the upper bound is 10: D = 10,
    # factor 10 / 5 = 2.
    env = fig2()
    a = alloc(env, [[F(5, 2), 0], [0, F(5, 2)]])
    assert M.si_sats(None, a) == (F(5, 6), F(2, 3)) and M.min_si_sat(None, a) == F(2, 3)
    assert M.min_ef_sat(None, a) == 1
    factor, D, y = M.domination(None, a)
    assert (factor, D) == (2, 10)
    assert [sum(r) for r in y] >= [F(5, 2), F(5, 2)] and sum(map(sum, y)) == 10
    # float path agrees
    fa = alloc(env, [[2.5, 0], [0, 2.5]], exact=False)
    assert math.isclose(M.domination_factor(None, fa), 2.0, rel_tol=1e-7)
    assert math.isclose(M.min_si_sat(None, fa), 2 / 3)


def test_envy_single_pool():
    # One resource of capacity 10, two users demanding 1 each, x = (2, 3).
    # psi = 5 each -> SI-SAT (2/5, 3/5).  EF-SAT_1 = min(2/3, 1) = 2/3, EF-SAT_2 = min(3/2, 1) = 1.
    # Domination: max y1 + y2 <= 10 with y >= (2, 3) -> 10, factor 10/5 = 2.
    env = parse_environment({"resources": ["r"], "servers": [{"name": "s", "capacity": [10]}],
                             "users": [{"name": "a", "demand": [1]}, {"name": "b", "demand": [1]}]})
    a = alloc(env, [[2], [3]])
    assert M.si_sats(None, a) == (F(2, 5), F(3, 5))
    assert M.ef_sats(None, a) == (F(2, 3), 1) and M.min_ef_sat(None, a) == F(2, 3)
    assert M.domination_factor(None, a) == 2


def test_ef_sat_uses_true_demands_and_task_bound():
    # User a reported demand 2 (true 1) and got 2 tasks = 4 units; b got 3 tasks = 3 units.
    # With TRUE demand 1, a runs 4 tasks from its own bundle and 3 from b's: EF-SAT_a = 1.
    # With a task bound n_a = 2 (true), a runs min(4, 2) = 2 from its bundle and min(3, 2) = 2 from b's: 1.
    true = parse_environment({"resources": ["r"], "servers": [{"name": "s", "capacity": [10]}],
                              "users": [{"name": "a", "demand": [1]}, {"name": "b", "demand": [1]}]})
    rep = true.with_user(0, demand=[2])
    a = alloc(rep, [[2], [3]])
    assert M.ef_sat(true, a, 0) == 1
    assert M.ef_sat(true, a, 1) == F(3, 4)  # b: own 3, from a's 4 units 4 tasks
    bounded = true.with_user(0, tasks=2)
    assert M.ef_sat(bounded, a, 0) == 1 and M.si_sat(bounded, a, 0) == 1  # psi_a = min(5, 2) = 2


def test_zero_conventions():
    # A user that gets nothing and whose equal split is worth nothing (its resource has capacity 0)
    # is not SI-violated (0/0 = 1); an all-zero allocation is dominated infinitely.
    env = parse_environment({"resources": ["r", "q"], "servers": [{"name": "s", "capacity": [4, 0]}],
                             "users": [{"name": "a", "demand": [1, 0]}, {"name": "b", "demand": [0, 1], "tasks": 3}]})
    a = alloc(env, [[0], [0]])
    assert M.si_sat(None, a, 1) == 1 and M.si_sat(None, a, 0) == 0  # psi_a = 2
    assert M.domination_factor(None, a) == math.inf


def test_jct_factor():
    assert M.jct_factor(F(10), F(15)) == F(2, 3)
    assert M.jct_factor(0, 0) == 1
    assert M.jct_factor(F(3), math.inf) == 0.0
    with pytest.raises(InstanceError, match="^jct:"):
        M.jct_factor(-1, 2)


def test_bad_input_names_allocation():
    env = fig2()
    with pytest.raises(InstanceError, match="^allocation:"):
        M.min_si_sat(None, Allocation(env, ((F(1),),), "bad", True))
    # over capacity: x = [[3, 0], [0, 0]] needs 6 cpu on s1 (capacity 5)
    with pytest.raises(InstanceError, match=r"^allocation: not in chi\(E\)"):
        M.domination_factor(None, alloc(env, [[3, 0], [0, 0]]))
    with pytest.raises(InstanceError, match="^allocation:"):
        M.si_sats(None, "x")


def _float_cases():
    """Float allocations on drawn instances: the project's random ones (placement constraints, task bounds
    fractional and whole, weights, zero demands), google2011 clusters with equal weights, and rows of zeros."""
    import random

    from mechverify.workloads import get
    from verifier.rates import sample_rng

    from dataclasses import replace

    out = []
    for i in range(60):
        name, point = ("uniform", {}) if i % 2 or i >= 40 else ("google2011", {"servers": "40", "users": "6"})
        env = get(name).sampler(**point)(sample_rng(11, point, i))
        rng = random.Random(i)
        if i >= 40:  # the random instances made fit for the vectorised EF-SAT: equal weights, every user demanding,
            # bounds that bind (fractional and whole), placement constraints kept; 32 servers (float_matrix's size)
            servers, every = tuple(f"s{k}" for k in range(32)), frozenset(range(32))
            env = replace(env, servers=servers, capacity=tuple(env.capacity[k % env.n_servers] for k in range(32)),
                          eligible=tuple(every if rng.random() < 0.5 else  # (one set object shared, or a subset)
                                         frozenset(rng.sample(range(32), rng.randint(1, 31))) for _ in env.users),
                          weight=(F(1),) * env.n_users, external=(), external_capacity=(),
                          external_demand=((),) * env.n_users, server_demand={},
                          demand=tuple(d if any(d) else tuple(F(1, 9) for _ in d) for d in env.demand),
                          tasks=tuple(rng.choice([None, F(1, 3), F(5, 2), F(7), F(40)]) for _ in env.users))
        rows = [[0.0 if rng.random() < 0.4 else rng.random() * rng.choice([1, 3, 1 / 7]) for _ in range(env.n_servers)]
                for _ in range(env.n_users)]
        if env.n_users > 1:
            rows[rng.randrange(env.n_users)] = [0.0] * env.n_servers  # someone holding nothing
        out.append((env, Allocation(env, tuple(map(tuple, rows)), "drawn", False)))
    return out


@pytest.mark.parametrize("case", range(60))
def test_the_fast_si_and_ef_sats_are_the_loops_bit_for_bit(case):
    # the vectorised SI-SAT (own utilities over the matrix, each benchmark's fits kept per eligible set and demand)
    # and EF-SAT (one numpy pass per kind of user) give the very floats of the per-user loops -- or decline; on
    # exact allocations the very rationals
    from mechverify.allocation import float_matrix

    env, a = _float_cases()[case]
    loops_si = tuple(M.si_sat(env, a, j) for j in range(env.n_users))
    assert M.si_sats(env, a) == loops_si and M.si_sats(env, a) == loops_si  # (the second: from the memo)
    bundles = [a.bundle(i) for i in range(env.n_users)]
    for aware in (True, False):
        loops_ef = tuple(M.ef_sat(env, a, j, aware, bundles) for j in range(env.n_users))
        assert M.ef_sats(env, a, aware) == loops_ef
    fast = M._float_ef(env, a, True)
    applies = len(set(env.weight)) == 1 and not env.n_external and all(any(v > 0 for v in d) for d in env.demand) \
        and env.n_users > 1 and not env.server_demand
    assert (fast is not None) == (applies and float_matrix(a) is not None)
    # the same rows in rationals: the exact SI-SATs and EF-SATs (rho_ij times the tasks on j's servers) are the
    # loops' numbers
    x = Allocation(env, tuple(tuple(F(v).limit_denominator(1000) for v in row) for row in a.x), "drawn", True)
    assert M.si_sats(env, x) == tuple(M.si_sat(env, x, j) for j in range(env.n_users))
    bundles = [x.bundle(i) for i in range(env.n_users)]
    for aware in (True, False):
        assert M.ef_sats(env, x, aware) == tuple(M.ef_sat(env, x, j, aware, bundles) for j in range(env.n_users))
    assert (M._exact_ef(env, x, True) is not None) == applies
