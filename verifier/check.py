"""``check``: every property's verdict for one mechanism on one instance.

Instance properties (EF, SI, PO, BF, SRF, single-server DRF) are evaluated exactly when the
mechanism's allocation is exact, so their verdict on the instance is definite.  Deviation
properties (SP, GSP, PM) search deviations within the time budget: candidates are found in floats
and every candidate goes through the property's exact re-check; only a certificate makes a
"violated" verdict.

Verdicts (``Result.verdict``, ``verifier.results``):
* ``violated``        -- exact certificate (``certificate``; ``path`` once stored);
* ``satisfied``       -- instance property checked exactly on this instance;
* ``not_refuted``     -- no violation among ``trials`` deviations in ``seconds``;
* ``not_applicable``  -- the property's premise fails here (``note`` says why);
* ``unknown``         -- solver trouble or a candidate that could not be certified (``note``).
"""
from __future__ import annotations

import random
import time
from typing import Optional, Sequence

from mechverify.lp import LPError
from mechverify.model import Environment

from . import claims as claims_mod
from .properties import DEFAULT_PROPERTIES, USER_PROPERTIES, Property, get_property
from .properties.runs import failure_of
from .results import Result

__all__ = ["check_property", "check_instance", "refuted_claims"]


def check_property(mech, env: Environment, prop: Property, variant: str, budget: float, seed: int,
                   alloc_exact=None, alloc_float=None) -> Result:
    """One property/variant on ``env`` (see the module docstring)."""
    res = _check_property(mech, env, prop, variant, budget, seed, alloc_exact, alloc_float)
    witness = res.certificate.witness if res.certificate is not None else None
    res.outcomes = claims_mod.outcomes(res.claims, res.verdict, witness)
    return res


def refuted_claims(res: Result) -> list:
    """The claims of 'holds' this result refutes (a certified violation inside the claim's domain)."""
    return [c for c, o in zip(res.claims, res.outcomes) if o == claims_mod.REFUTED]


def _check_property(mech, env, prop, variant, budget, seed, alloc_exact, alloc_float) -> Result:
    t0 = time.perf_counter()
    claims = claims_mod.claims_for(mech, prop.name, variant)
    res = Result(mech.name, prop.name, variant, claims=claims,
                 details={"outside": [claims_mod.assumption_broken(c, env) for c in claims]})
    reason = prop.applicable(mech, env, variant)
    if reason:
        res.verdict, res.note = "not_applicable", reason
        return res
    try:
        if not prop.needs_deviation:
            use_exact = alloc_exact is not None
            ev = prop.evaluate(mech, env, variant, exact=use_exact, alloc=alloc_exact if use_exact else alloc_float)
            res.trials = 1
            res.measure = ev.measure
            if ev.measure is None and not ev.violated:
                res.verdict, res.note = "not_applicable" if "applicable" in ev.note else "unknown", ev.note
            elif ev.violated:
                cert = prop.recheck(mech, ev.witness)
                if cert is not None:
                    res.verdict, res.certificate, res.measure = "violated", cert, cert.measure
                else:
                    res.verdict = "unknown"
                    res.note = "a float candidate did not survive the exact re-check" if not use_exact else \
                        "candidate could not be certified (interval too wide)"
            else:
                res.verdict = "satisfied" if use_exact else "not_refuted"
                if not use_exact:
                    res.note = "allocation not exact: float evaluation only"
        else:
            rng = random.Random(seed)
            worst = None
            rejected = 0
            for dev in prop.deviations(mech, env, variant, rng):
                if time.perf_counter() - t0 > budget:
                    res.note = "budget exhausted"
                    break
                res.trials += 1
                ev = prop.evaluate(mech, env, variant, deviation=dev, exact=False, alloc=alloc_float)
                if ev.measure is not None and prop.worse(ev.measure, worst):
                    worst = ev.measure
                if ev.violated:
                    cert = prop.recheck(mech, ev.witness)
                    if cert is not None:
                        res.verdict, res.certificate, res.measure = "violated", cert, cert.measure
                        break
                    rejected += 1
            if res.verdict != "violated":
                res.verdict = "not_refuted"
                res.measure = worst
                if rejected:
                    res.note = (res.note + "; " if res.note else "") + f"{rejected} float candidates failed the exact re-check"
    except (LPError, ArithmeticError) as exc:
        res.verdict, res.note = "unknown", f"solver trouble: {exc}"
    res.seconds = time.perf_counter() - t0
    return res


def check_instance(mech, env: Environment, properties: Optional[Sequence[str]] = None, budget: float = 10.0,
                   seed: int = 0, variants: Optional[dict[str, Sequence[str]]] = None) -> list[Result]:
    """Check every requested property (default: all; a user's mechanism: ``runs`` first) and each of its
    variants on ``env``.  When a user's mechanism fails on ``env`` (raises, or returns no valid allocation),
    ``runs`` reports it and the other properties are "unknown" -- there is no allocation to judge."""
    user = getattr(mech, "tolerance", None) is not None
    names = list(properties or ((USER_PROPERTIES if user else []) + DEFAULT_PROPERTIES))
    props = [get_property(n) for n in names]
    mech.setting.check(env, mech.name)
    failed = failure_of(mech, env, False) if user else None
    alloc_float = alloc_exact = None
    if failed is None:
        alloc_float = mech(env, exact=False)
        try:  # exact whenever the mechanism can give it (MNW certifies some optima exactly)
            a = mech(env, exact=True)
            alloc_exact = a if a.exact else None
        except LPError:
            alloc_exact = None
    deviation_props = sum(len(p.variants) for p in props if p.needs_deviation) or 1
    per = budget / deviation_props
    out = []
    for p in props:
        for v in (variants or {}).get(p.name, list(p.variants)):
            if failed is not None and p.name != "runs":
                r = Result(mech.name, p.name, p.variant_of(v), claims=claims_mod.claims_for(mech, p.name, v),
                           verdict="unknown", note=f"the mechanism fails on this instance ({failed})")
                r.outcomes = claims_mod.outcomes(r.claims, r.verdict, None)
                out.append(r)
                continue
            out.append(check_property(mech, env, p, p.variant_of(v), per, seed, alloc_exact, alloc_float))
    return out
