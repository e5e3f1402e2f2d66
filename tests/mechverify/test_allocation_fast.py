"""The all-float and the all-Fraction RDM fast paths of ``feasibility_violations`` agree with the general
code on random matrices around the boundary of chi(E) (capacities -- met with equality too, for the exact
path --, external rows, bounds, placement, negative entries, nan): the same verdict "feasible" / "not
feasible" every time."""
from __future__ import annotations

import random
from fractions import Fraction as F

from mechverify import allocation as A
from mechverify.instances import parse_environment

from tests.helpers import random_instance


def _env(rng):
    inst = random_instance(rng, rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3),
                           demand=lambda rng, r: F(rng.randint(1, 5), rng.randint(1, 3)), external=(1, 9),
                           tasks=0.4, eligible=0.3)
    return parse_environment(inst)


def test_fast_path_agrees_with_general_code(monkeypatch):
    rng = random.Random(3)
    cases = []
    for _ in range(400):
        env = _env(rng)
        scale = rng.choice([0.05, 0.3, 1.0, 3.0])
        x = tuple(tuple(rng.choice([0.0, rng.uniform(-1e-7, 1e-7), rng.uniform(0, scale), float("nan")])
                        if rng.random() < 0.05 else rng.choice([0.0, rng.uniform(0, scale)])
                        for _ in range(env.n_servers)) for _ in range(env.n_users))
        cases.append((env, x, A.feasibility_violations(env, x)))
    assert any(c[2] == [] for c in cases) and any(c[2] for c in cases)
    monkeypatch.setattr(A, "_float_rdm_feasible", lambda *a: False)
    for env, x, fast in cases:
        assert (fast == []) == (A.feasibility_violations(env, x) == []), (env.to_json(), x)


def test_exact_fast_path_agrees_with_general_code(monkeypatch):
    rng = random.Random(5)
    cases = []
    for _ in range(600):
        env = _env(rng)
        x = [[F(rng.choice([0, 0, rng.randint(1, 12), -1]) if rng.random() < 0.05 else rng.choice([0, rng.randint(0, 12)]),
                rng.randint(1, 6)) for _ in range(env.n_servers)] for _ in range(env.n_users)]
        if rng.random() < 0.5:  # scale a random matrix onto the boundary: some capacity met with equality
            s = rng.randrange(env.n_servers)
            r = rng.randrange(env.n_resources)
            used = sum((x[j][s] * env.d(j, s)[r] for j in range(env.n_users)), F(0))
            if used > 0:
                f = env.capacity[s][r] / used
                x = [[v * f for v in row] for row in x]
        x = tuple(tuple(row) for row in x)
        cases.append((env, x, A.feasibility_violations(env, x)))
    assert sum(c[2] == [] for c in cases) > 50 and sum(bool(c[2]) for c in cases) > 50
    monkeypatch.setattr(A, "_exact_rdm_feasible", lambda *a: False)
    for env, x, fast in cases:
        assert (fast == []) == (A.feasibility_violations(env, x) == []), (env.to_json(), x)


def test_row_reuse_gives_the_usage_and_totals_of_each_step():
    # a run's steps as a stepper makes them: each step keeps some users' rows (the same tuple objects), gives
    # others new ones, drops and adds users; RowReuse's values are usage()'s and totals()'s, to the bit
    from dataclasses import replace

    from mechverify.allocation import Allocation, RowReuse, usage

    rng = random.Random(8)
    for _ in range(40):
        env = _env(rng)
        reuse = RowReuse()
        rows = [tuple(float(rng.randint(0, 3)) * rng.choice([1.0, 0.1, 1 / 3]) for _ in range(env.n_servers))
                for _ in range(env.n_users)]
        for _step in range(6):
            for j in range(env.n_users):
                if rng.random() < 0.4:
                    rows[j] = tuple(float(rng.randint(0, 4)) * rng.choice([1.0, 0.7, 1 / 7])
                                    for _ in range(env.n_servers))
            step_env = env
            if env.n_users > 1 and rng.random() < 0.3:  # a user absent this step
                step_env = env.restrict([j for j in range(env.n_users) if j != 0])
            x = tuple(rows[j] for j in range(env.n_users) if step_env is env or j != 0)
            if rng.random() < 0.15:  # a Fraction somewhere: the general paths
                x = (tuple(F(1, 3) if s == 0 else v for s, v in enumerate(x[0])),) + x[1:]
            a = Allocation(step_env, x, "m", False)
            b = replace(a)  # a twin without the memo, computed as usual
            got_u, got_t = reuse.usage(a), reuse.totals(a)
            want_u, want_t = usage(b), list(b.totals())
            assert [list(map(repr, u)) for u in got_u] == [list(map(repr, u)) for u in want_u]
            assert list(map(repr, got_t)) == list(map(repr, want_t))
