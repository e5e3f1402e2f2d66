"""Best-Fit DRFH's per-user heaps (``drfh_indivisible._best_fit_heaps``) choose the same server as scanning every
fitting server with eq. (9) at every step: the same whole-task allocation, exactly, on drawn instances (with
placement constraints, bounds and weights from ``uniform``; 20-server clusters of the Google 2011 mix)."""
from __future__ import annotations

import pytest

import mechanisms.paper.drfh_indivisible as di
from mechverify.workloads import get
from verifier.rates import sample_rng


def _envs():
    out = []
    for name, point, n in (("uniform", {}, 25), ("google2011", {"servers": "12", "users": "3"}, 3)):
        draw = get(name).sampler(**point)
        out += [draw(sample_rng(7, point, i)) for i in range(n)]
    return out


@pytest.mark.parametrize("env", _envs())
def test_heaps_equal_the_scan(env, monkeypatch):
    fast = di._progressive_fill(env, True, "drfh-best-fit")
    monkeypatch.setattr(di, "_best_fit_heaps", lambda env_, rem, pooled, place, demand: (None, place))
    scan = di._progressive_fill(env, True, "drfh-best-fit")
    assert fast.x == scan.x
    assert fast.info["steps"] == scan.info["steps"] > 0
