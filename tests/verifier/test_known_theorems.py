"""Regression suite on the seeds' theorems: every claim registered with a mechanism is re-tested FROM SCRATCH.

* claim "fails": the search (Hypothesis + optimiser, fixed seed, at most ``N_FAIL`` candidates per
  variant) must rediscover an exact violation -- not by replaying a stored counterexample;
* claim "holds": the search finds no violation in ``N_HOLD`` candidates per covered variant (a fixed,
  reproducible sample -- not a proof);
* claim "holds" that the verifier REFUTES (``KNOWN_REFUTED``, each hand-checked below): the search must
  rediscover the violation from scratch, so the refutation itself is regression-tested.

Searches are bounded by candidate counts (not time), so results do not depend on the machine's load.
"""
from __future__ import annotations

from fractions import Fraction as F

import pytest

import mechanisms
from mechverify.instances import parse_environment
from verifier.engines import strategies as S
from verifier.engines.search import search
from verifier.properties import get_property
from verifier.claims import assumption_broken, claims_for, search_domain

SEED = 0
# candidates: (environment, deviation) pairs.  The search draws one deviation per user of an environment
# (verifier.engines.search.PER_USER), so a deviation property's sample of N candidates covers N / 3 to N
# environments: its "holds" sample is N_HOLD * 2 candidates (about N_HOLD environments' worth)
N_HOLD = 60
N_FAIL = 800
CPU_CAP = 120.0  # safety net only; the candidate counts decide

# (mechanism, property, source prefix) -> why a "holds" claim is refuted.  Each was found by `run`,
# minimised, and checked by hand:
KNOWN_REFUTED = {
    ("tsf-er", "po", "004"):
        "Algorithm 1 as printed, zero demands: one server c = (1, 1); u1 d = (0, 1), u2 d = (1, 0), u3 d = (0, 1). "
        "eta = 1 for all; the common task share rises until r2 saturates at 1/2 (u1 + u3); nobody reaches a bound, "
        "so the algorithm stops with u2 at 1/2 while r1 has 1/2 idle; (1/2, 1, 1/2) dominates.",
    ("drf-er", "po", "004"):
        "same instance as tsf-er: DRF-ER's equalised dominant share g stops when r2 saturates (u1, u3), leaving r1 "
        "half idle although u2 could use it.",
    ("tsf", "si", "002"):
        "placement + TSF's gamma 'as if there were no placement constraints' (002 Sec. II-B): s1 = (2, 1), s3 = (1, 1); "
        "u1 d = (1, 1) eligible on s1 only, u2 d = (2, 1).  gamma_1 = 1 + 1 = 2 (counts s3, which u1 cannot use), "
        "gamma_2 = 1 + 1/2 = 3/2.  Equal task shares: x1 = 6/7 (on s1), x2 = 1/7 + 1/2 = 9/14 (s1 memory saturated, "
        "s3 cpu saturated).  u2's equal split: half of s1 = (1, 1/2) runs 1/2, half of s3 = (1/2, 1/2) runs 1/4: "
        "3/4 > 9/14.  Positive demands and capacities; also found with zeros.",
    ("psdsf-rdm", "po", "000"):
        "000 Thm 2 says PS-DSF is PO; 002 Sec. III-B says it is not under RDM (also registered): the search finds "
        "RDM instances where a feasible allocation dominates (tests/test_psdsf.py derives one by hand).",
    ("psdsf-distributed", "po", "000"):
        "as psdsf-rdm (the distributed algorithm converges to the RDM allocation).",
}


# (mechanism, property, source prefix) -> a violation that exists in the mechanism's setting but OUTSIDE the
# claim's standing assumptions (Claim.domain): reported by `run`, it does not refute the claim.
OUTSIDE_DOMAIN = {
    ("drf", "pm", "001"):
        "zero demands (001 assumes d > 0): one pool r = e = 1; u1 d = (2, 1), u2 d = (1, 0), u3 d = (0, 1).  DRF "
        "(leximin of dominant shares 2 x1, x2, x3): r saturates at level 1/2 (x1 = 1/4, x2 = 1/2), then u3 rises "
        "to x3 = 3/4.  When u2 leaves, e binds first: x1 = t/2, x3 = t, t/2 + t = 1, so u3 drops 3/4 -> 2/3.",
    ("drfh-lp7", "po", "001"):
        "zero demands: LP (7) raises ONE common level and stops when a resource saturates, although a user "
        "that does not demand it could still grow (drf_family docstring).",
    ("drfh-lp7", "single-server-drf", "001"):
        "zero demands: one server, r = 1; u1, u2 d = 1, u3 d = 0 with n = 1: DRF gives u3 its whole bound 1 "
        "(it needs nothing), LP (7)'s common level gives it 1/2.",
}


def _cases():
    out = []
    for m in mechanisms.all_mechanisms():
        seen = set()
        for c in m.claims:
            prop = get_property(c.property)
            if prop.over != "instance":  # claims over executions: tests/verifier/test_dynamic_theorems.py
                continue
            variants = tuple(v for v in prop.variants if not S.variant_possible(m.setting, c.property, v)
                             and c in claims_for(m, c.property, v))
            key = (c.property, variants, c.status)
            if not variants or key in seen:
                continue
            seen.add(key)
            refuted = KNOWN_REFUTED.get((m.name, c.property, c.source[:3]))
            expect = "violated" if (c.status == "fails" or refuted) else "none"
            ident = f"{m.name}-{c.property}{'/' + c.variant if c.variant else ''}-{c.status}-{c.source[:3]}"
            out.append(pytest.param(m.name, c.property, variants, expect, refuted, c, id=ident))
    return out


CASES = _cases()


def test_every_known_refutation_is_a_registered_holds_claim():
    for (name, prop, src), why in list(KNOWN_REFUTED.items()) + list(OUTSIDE_DOMAIN.items()):
        m = mechanisms.get(name)
        assert any(c.property == prop and c.status == "holds" and c.source.startswith(src) for c in m.claims), \
            (name, prop, src)
        assert why


def test_claims_exist():
    assert len(CASES) >= 20


def _search(mech, prop, v, claim, n):
    """Search inside the claim's standing assumptions (``Claim.domain``): only there can a violation
    confirm or refute it."""
    dom = search_domain(claim, S.domain_for(mech.setting))
    accept = (lambda e: claim.covers(e) is None) if getattr(claim, "domain", ()) else None
    return search(mech, prop, v, seed=SEED, budget=CPU_CAP, max_trials=n, domain=dom, accept=accept)


@pytest.mark.parametrize("name,prop,variants,expect,why,claim", CASES)
def test_known_theorem(name, prop, variants, expect, why, claim):
    mech = mechanisms.get(name)
    if expect == "violated":
        tried = []
        for v in variants:
            res = _search(mech, prop, v, claim, N_FAIL)
            tried.append(f"{v}: {res.verdict} after {res.trials} trials")
            if res.verdict == "violated":
                cert = res.certificate
                assert cert.gap > 0
                assert get_property(prop).recheck(mech, cert.witness) is not None  # exact, re-derivable
                return
        pytest.fail(f"{name} {prop}: expected a violation ({why or 'the paper says it fails'}); " + "; ".join(tried))
    n_hold = N_HOLD * 2 if get_property(prop).needs_deviation else N_HOLD
    for v in variants:
        res = _search(mech, prop, v, claim, n_hold)
        assert res.verdict != "violated", (
            f"{name} {prop}/{v}: the paper says it holds, but {res.certificate.summary} "
            f"(env {res.certificate.witness.env.to_json()})")
        # the sample must be real: most candidates evaluated, not swallowed by errors
        assert res.trials >= n_hold // 2, f"{name} {prop}/{v}: only {res.trials} candidates evaluated ({res.note})"


@pytest.mark.parametrize("key", list(OUTSIDE_DOMAIN), ids=lambda k: "-".join(k))
def test_violation_outside_the_claims_assumptions(key):
    """The search over the mechanism's whole setting finds the violation, and it lies outside the claim's
    standing assumptions -- so ``run`` reports it without calling the claim refuted."""

    name, prop, src = key
    mech = mechanisms.get(name)
    claim = next(c for c in mech.claims if c.property == prop and c.source.startswith(src) and c.status == "holds")
    for v in get_property(prop).variants:
        if S.variant_possible(mech.setting, prop, v) or claim not in claims_for(mech, prop, v):
            continue
        res = search(mech, prop, v, seed=SEED, budget=CPU_CAP, max_trials=N_FAIL)
        if res.verdict == "violated":
            w = res.certificate.witness
            assert assumption_broken(claim, w.env, w.deviation) is not None, OUTSIDE_DOMAIN[key]
            return
    pytest.fail(f"{key}: expected a violation outside the claim's domain: {OUTSIDE_DOMAIN[key]}")


# ---------------------------------------------------------------------- properties-layer fix (SRF premise)
def test_srf_premise_excludes_per_server_demands():
    """PS-DSF (one resource) with a per-server demand override (002 Sec. IV co-processors, 'future work' there):
    u1 d = 1 everywhere, u3 d = 2 on s3 but 1 on s1; s1 = 1, s3 = 2.  PS-DSF gives u1 all of s3 (2 tasks) and u3
    all of s1 (1 task).  'Max-min fair on r1' would give both 3/2 units of r1, i.e. u3 only 3/4 TASK -- a notion
    no seed defines or claims for per-server demands.  SRF's premise therefore requires one demand per user;
    without the override the instance is in the premise and PS-DSF is max-min fair there."""
    srf = get_property("srf")
    mech = mechanisms.get("psdsf-rdm")
    inst = {"resources": ["r1"], "servers": [{"name": "s1", "capacity": [1]}, {"name": "s3", "capacity": [2]}],
            "users": [{"name": "u1", "demand": [1]}, {"name": "u3", "demand": [2], "server_demand": {"s1": [1]}}]}
    env = parse_environment(inst)
    assert srf.applicable(mech, env, "max-min") is not None
    del inst["users"][1]["server_demand"]
    env2 = parse_environment(inst)
    assert srf.applicable(mech, env2, "max-min") is None
    ev = srf.evaluate(mech, env2, "max-min", exact=True)
    assert not ev.violated and ev.measure == F(0)
