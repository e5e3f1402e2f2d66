"""Kueue admission fair sharing's historic versions rediscovered by search from an empty store (the style of
test_rediscovery.py): each is refuted on ``usage-ignored`` with a minimal exactly re-checked trace, while the
pinned kueue-afs is not refuted by the same search (same seed, same trial count).

``online-sp`` and ``starvation`` do not separate them: on whole workloads both refute the pinned policy too (a
workload larger than the pool waits -- starvation with max_wait 0; a workload that shrinks its request to fit
gains -- online-sp), so the differential is ``usage-ignored`` (docs/findings.md)."""
from __future__ import annotations

import time

import pytest

import mechanisms
from verifier.config import RunConfig
from verifier.run import run_mechanism

CASES = [
    # (buggy version, fixed policy, property, variant, seed, trials)
    ("kueue-afs@5339", "kueue-afs", "usage-ignored", "served", 0, 600),  # no entry penalty: the burst
    ("kueue-afs@11134", "kueue-afs", "usage-ignored", "served", 0, 600),  # half-life unset: every LocalQueue ties
]


def _search(name, prop, variant, trials, seed):
    rep = run_mechanism(mechanisms.get(name), [prop], RunConfig(budget=60, seed=seed, store=None, trials=trials),
                        variants={prop: [variant]})
    (r,) = [r for r in rep.results if r.property == prop and r.variant == variant]
    return r


@pytest.mark.parametrize("buggy, fixed, prop, variant, seed, trials", CASES)
def test_afs_historic_version_is_refuted_and_the_pinned_one_is_not(buggy, fixed, prop, variant, seed, trials):
    t0 = time.perf_counter()
    r = _search(buggy, prop, variant, trials, seed)
    assert r.verdict == "violated", (r.verdict, r.note)
    assert r.certificate is not None and r.certificate.gap > 0
    # minimal: three workloads at time 0, no event, one pool (two of one LocalQueue, one of its sibling)
    assert r.size["users"] == 3 and r.size["events"] == 0 and r.size["servers"] == 1, r.size
    f = _search(fixed, prop, variant, trials, seed)
    assert f.verdict == "not_refuted", (f.verdict, f.note, f.certificate and f.certificate.summary)
    assert time.perf_counter() - t0 < 30
