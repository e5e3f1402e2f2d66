"""``drf``'s vectorised float allocator (``mechanisms.paper.drf_batch``) after its fixed cost was cut (a step of a
simulation is one instance, most of its time numpy's cost per call): the water filling gives the bits of the
round-by-round fill as first written, and one instance alone (views of its arrays) the bits it gets in a batch
of several (stacked copies)."""
from __future__ import annotations

import random
from fractions import Fraction as F

import numpy as np

from mechanisms.paper.drf_batch import drf_one_pool_batch, water_fill
from mechverify.instances import parse_environment


def _water_fill_as_written(C, D, W, B, M):
    """The water filling as first written (every mask taken anew in every round, the last round's usage
    updated, the non-participants zeroed at the end): the reference."""
    n, J, R = D.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(D > 0, D / C[:, None, :], 0.0)
        dead = ((D > 0) & (C[:, None, :] <= 0)).any(axis=2)
        part = M & ~dead
        dom = share.max(axis=2)
        a = np.where(part, W / np.where(dom > 0, dom, 1.0), 0.0)
        e = np.where(part[:, :, None], share * a[:, :, None], 0.0)
        blim_all = np.where(part & np.isfinite(B), B / np.where(a > 0, a, 1.0), np.inf)
    level = np.zeros((n, J))
    active = part.copy()
    used = np.zeros((n, R))
    for _ in range(J):
        if not active.any():
            break
        slope = (e * active[:, :, None]).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lim = np.where(slope > 0, (1.0 - used) / np.where(slope > 0, slope, 1.0), np.inf)
        blim = np.where(active, blim_all, np.inf)
        t = np.minimum(lim.min(axis=1), blim.min(axis=1))
        tt = t[:, None]
        tol = 1e-12 * np.maximum(1.0, np.abs(tt))
        hit_r = np.isfinite(tt) & (lim <= tt + tol)
        demands_hit = ((e > 0) & hit_r[:, None, :]).any(axis=2)
        frozen = active & ((blim <= tt + tol) | demands_hit)
        level = np.where(frozen, tt, level)
        used = used + (e * (frozen * level)[:, :, None]).sum(axis=1)
        active = active & ~frozen
    return np.where(part, level * a, 0.0)


def _bits(x: np.ndarray) -> tuple:
    return x.shape, x.dtype, x.tobytes()


def test_water_fill_is_the_fill_as_written():
    """Random batches -- capacities 0 (a dead user), non-participants, bounds of 0, equal bounds and levels (ties
    within the tolerance), users demanding nothing of a resource, 1 to 40 users over 1-3 rounds or many -- give
    the same bits as the fill as first written."""
    rng = np.random.default_rng(7)
    rounds = set()
    for k in range(4000):
        n, J, R = int(rng.integers(1, 4)), int(rng.integers(1, 41 if k % 4 == 0 else 9)), int(rng.integers(1, 4))
        if rng.random() < 0.5:
            C = rng.choice([0.0, 1.0, 0.5, 3.0, 7.25, 1e-9], size=(n, R))
            D = rng.choice([0.0, 0.1, 0.25, 1.0, 2.0, 1 / 3], size=(n, J, R))
        else:
            C = rng.uniform(0, 5, (n, R))
            D = rng.uniform(0, 2, (n, J, R)) * (rng.random((n, J, R)) < 0.8)
        W = rng.choice([1.0, 2.0, 0.5], size=(n, J))
        B = rng.choice([np.inf, 0.0, 0.5, 1.0, 2.0, 3.0, 5.0], size=(n, J)) if rng.random() < 0.7 else \
            rng.uniform(0, 9, (n, J))
        M = (rng.random((n, J)) < 0.85) & (D > 0).any(axis=2)
        got, want = water_fill(C, D, W, B, M), _water_fill_as_written(C, D, W, B, M)
        assert _bits(got) == _bits(want), (C, D, W, B, M)
        rounds.add(len({v for v in want.ravel().tolist() if v}))
    assert max(rounds) > 10  # fills of many levels, not only one round


def _env(rng: random.Random, J: int, external: bool):
    users = [{"name": f"u{k}", "demand": [F(rng.randint(1, 4), 100), F(rng.randint(0, 8), 100)],
              "tasks": rng.choice([None, rng.randint(1, 20), F(rng.randint(1, 40), 3)]),
              "weight": rng.choice([1, 1, 2, F(1, 2)])} for k in range(J)]
    for u in users:
        if u["tasks"] is None:
            del u["tasks"]
        if external:
            u["external_demand"] = [F(rng.randint(0, 3), 50)]
    inst = {"resources": ["cpu", "mem"], "servers": [{"name": "pool", "capacity": [1, rng.choice([1, 2])]}],
            "users": users}
    if external:
        inst["external"] = [{"name": "bw", "capacity": 1}]
    return parse_environment(inst)


def test_one_instance_alone_is_the_instance_in_a_batch():
    """``drf_one_pool_batch([env])`` (its arrays as views) allocates the bits ``env`` gets in a batch of several of
    its shape (the arrays stacked), with and without external resources; and seeds the same float matrix."""
    from mechverify.allocation import float_matrix

    rng = random.Random(5)
    checked = 0
    for k in range(150):
        J, external = rng.randint(1, 60), k % 3 == 0
        group = [_env(rng, J, external) for _ in range(3)]
        together = drf_one_pool_batch(group)
        for env, b in zip(group, together):
            a = drf_one_pool_batch([env])[0]
            assert b is not None and a is not None
            assert [[v.hex() for v in row] for row in a.x] == [[v.hex() for v in row] for row in b.x]
            fa, fb = float_matrix(a), float_matrix(b)
            assert (fa is None) == (fb is None) and (fa is None or _bits(fa) == _bits(fb))
            checked += 1
    assert checked == 450
