"""Known upstream bugs rediscovered by search alone (issue 26): each historic version of a policy, registered as
``POLICY@ISSUE`` with its source, is refuted by the search from an empty store on the property its bug breaks,
with a minimal exactly re-checked counterexample, while the fixed policy is not refuted with the same search.

The searches are bounded by trials (reproducible for a seed), not only by time."""
from __future__ import annotations

import pytest

import mechanisms
from verifier.run import run_mechanism

CASES = [
    # (buggy version, fixed policy, property, variant)
    ("kueue-drs@6577", "kueue-drs", "share", "borrowing"),  # borrowed x 1000 / lendable truncated to 0
    ("yarn-drf@YARN-11482", "yarn-drf", "order", "strict-weak"),  # neediness of the second read off the first
    ("yarn-capacity@YARN-11745", "yarn-capacity", "order", "strict-weak"),  # min resources compared only if both set
]


def _search(name, prop, variant, trials):
    rep = run_mechanism(mechanisms.get(name), [prop], variants={prop: [variant]}, budget=60, seed=0, store_dir=None,
                        max_trials=trials)
    (r,) = [r for r in rep.results if r.property == prop and r.variant == variant]
    return r


@pytest.mark.parametrize("buggy, fixed, prop, variant", CASES)
def test_buggy_version_is_refuted_and_the_fixed_one_is_not(buggy, fixed, prop, variant):
    r = _search(buggy, prop, variant, 400)
    assert r.verdict == "violated", (r.verdict, r.note)
    assert r.certificate is not None and r.certificate.gap > 0
    assert r.size["users"] <= 3 and r.size["servers"] == 1, r.size  # minimal: a handful of users, one pool
    f = _search(fixed, prop, variant, 400)
    assert f.verdict == "not_refuted", (f.verdict, f.note, f.certificate and f.certificate.summary)
