"""PS-DSF's server procedure (``mechanisms.paper.psdsf.algorithm.waterfill``, water filling in reduced pairs of
Python ints) against the same procedure written in ``fractions.Fraction`` (its previous implementation,
kept here verbatim as the reference): identical exact columns on 600 random servers -- zero demands,
equal and distinct head starts, resources nobody demands, TDM's single time resource -- and identical
PS-DSF allocations on random environments (which are also checked by Theorem 1/2 inside ``psdsf``).
"""
from __future__ import annotations

import random
from fractions import Fraction
from typing import Sequence

import pytest

import mechanisms
from mechanisms.paper.psdsf import algorithm as ALG
from mechanisms.paper.psdsf.shares import ZERO, PSDSFError
from mechverify.instances import parse_environment


def reference_waterfill(heads: Sequence[Fraction], weights: Sequence[Fraction], demands: Sequence[Sequence[Fraction]],
               cap: Sequence[Fraction]) -> list[Fraction]:
    """Max-min fair column of one server for keys ``(h_u + y_u) / w_u`` (see module docstring).

    Exact; at most ``2 U`` events.  Every user must demand some resource of positive capacity and
    no resource of zero capacity (gamma > 0)."""
    U, R = len(heads), len(cap)
    start = [heads[u] / weights[u] for u in range(U)]
    frozen = [False] * U
    y = [ZERO] * U
    used_frozen = [ZERO] * R
    if U == 0:
        return y
    L = min(start)
    for _ in range(2 * U + 2):
        live = [u for u in range(U) if not frozen[u]]
        if not live:
            return y
        active = [u for u in live if start[u] <= L]
        waiting = [start[u] for u in live if start[u] > L]
        next_start = min(waiting) if waiting else None
        sat_level = None
        for r in range(R):
            rate = sum((weights[u] * demands[u][r] for u in active), ZERO)
            if rate <= 0:
                continue
            base = used_frozen[r] - sum((heads[u] * demands[u][r] for u in active), ZERO)
            lev = (cap[r] - base) / rate
            if sat_level is None or lev < sat_level:
                sat_level = lev
        if sat_level is None or (next_start is not None and next_start < sat_level):
            if next_start is None:
                raise PSDSFError("water filling: no resource limits the active users (gamma = inf?)")
            L = next_start
            continue
        L = max(L, sat_level)
        usage = [used_frozen[r] + sum(((L * weights[u] - heads[u]) * demands[u][r] for u in active), ZERO)
                 for r in range(R)]
        saturated = [r for r in range(R) if usage[r] >= cap[r] and any(demands[u][r] > 0 for u in live)]
        to_freeze = [u for u in live if any(demands[u][r] > 0 for r in saturated)]
        if not to_freeze:  # cannot happen: the saturating resource is demanded by an active user
            raise PSDSFError("water filling: a resource saturated without freezing anyone")
        for u in to_freeze:
            frozen[u] = True
            if start[u] <= L:
                y[u] = L * weights[u] - heads[u]
                for r in range(R):
                    used_frozen[r] += y[u] * demands[u][r]
    raise PSDSFError("water filling did not finish")  # pragma: no cover



def _frac(rng, lo, hi, zero=0.0):
    if rng.random() < zero:
        return Fraction(0)
    return Fraction(rng.randint(lo, hi), rng.randint(1, 4))


def random_server(rng: random.Random):
    U, R = rng.randint(1, 5), rng.randint(1, 3)
    heads = [Fraction(0) if rng.random() < 0.3 else _frac(rng, 1, 9) for _ in range(U)]
    if rng.random() < 0.2:
        heads = [heads[0]] * U  # ties everywhere
    weights = [_frac(rng, 1, 6) for _ in range(U)]
    cap = [_frac(rng, 1, 20) for _ in range(R)]
    demands = []
    for _ in range(U):
        row = [_frac(rng, 1, 6, zero=0.3) for _ in range(R)]
        if not any(row):
            row[rng.randrange(R)] = _frac(rng, 1, 6)
        demands.append(row)
    return heads, weights, demands, cap


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_waterfill_equals_fraction_reference(seed):
    rng = random.Random(seed)
    for _ in range(200):
        heads, weights, demands, cap = random_server(rng)
        assert ALG.waterfill(heads, weights, demands, cap) == reference_waterfill(heads, weights, demands, cap), \
            (heads, weights, demands, cap)


def _env(rng, U, S, R):
    return parse_environment({
        "resources": [f"r{r}" for r in range(R)],
        "servers": [{"name": f"s{s}", "capacity": [rng.randint(1, 20) for _ in range(R)]} for s in range(S)],
        "users": [{"name": f"u{j}", "demand": [rng.randint(0 if r else 1, 6) for r in range(R)],
                   "weight": rng.choice([1, 1, 2, Fraction(1, 2)])} for j in range(U)]})


@pytest.mark.parametrize("mode", ["rdm", "tdm"])
def test_psdsf_equals_fraction_reference_allocation(mode, monkeypatch):
    rng = random.Random(7)
    envs = [_env(rng, rng.randint(2, 4), rng.randint(1, 3), rng.randint(1, 3)) for _ in range(40)]
    fast = []
    for env in envs:
        try:
            fast.append(mechanisms.allocate(f"psdsf-{mode}", env, exact=True).x)
        except PSDSFError as exc:
            fast.append(str(exc))
    monkeypatch.setattr(ALG, "waterfill", reference_waterfill)
    for env, got in zip(envs, fast):
        try:
            want = mechanisms.allocate(f"psdsf-{mode}", env, exact=True).x
        except PSDSFError as exc:
            want = str(exc)
        assert got == want, env.to_json()
