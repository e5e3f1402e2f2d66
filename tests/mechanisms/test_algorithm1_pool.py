"""Algorithm 1's float path on a pooled HiGHS object (``mechverify.lp.pooled_highs``) returns bit-identical
allocations to a fresh solver object, also right after a column-generation run (which switches its solver
to primal simplex): the pool hands every user a solver with the default options."""
from __future__ import annotations

import contextlib
import random

import mechanisms.paper.external_resources.algorithm1_float as AF
from mechanisms.paper.normalisers import etas
from mechverify import highs as H
from mechverify import lp as LP
from mechverify.instances import parse_environment

from tests.helpers import random_instance


def _env(rng):
    return parse_environment(random_instance(
        rng, rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3), capacity=(1, 12),
        demand=lambda rng, r: rng.randint(0 if r else 1, 5), external=(1, 20), external_demand=(0, 4),
        tasks=0.4, task_range=(1, 6)))


def _run(env, cg_threshold=None):
    return AF.algorithm1_float(env, "tsf-er", etas(env), external=True, server_external_caps=None, info=None,
                               cg_threshold=cg_threshold)


def test_pooled_solver_gives_the_fresh_solvers_allocation(monkeypatch):
    rng = random.Random(11)
    envs = [_env(rng) for _ in range(60)]
    pooled = []
    for i, env in enumerate(envs):
        if i % 3 == 0:
            cg = _run(env, cg_threshold=0)  # column generation: primal simplex on a pooled object
            assert cg.info["column_generation"]["used"]
        pooled.append(_run(env).x)
    assert all(h.getOptionValue("simplex_strategy")[1] == 1 for h in H._IDLE)  # HiGHS's default (dual)

    @contextlib.contextmanager
    def fresh():
        yield LP.new_highs()

    monkeypatch.setattr(AF, "pooled_highs", fresh)
    for env, x in zip(envs, pooled):
        assert _run(env).x == x, env.to_json()
