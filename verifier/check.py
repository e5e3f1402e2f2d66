"""``check``: every property's verdict for one mechanism on one instance.

Instance properties (EF, SI, PO, BF, SRF, single-server DRF) are evaluated exactly when the
mechanism's allocation is exact, so their verdict on the instance is definite.  Deviation
properties (SP, GSP, PM) search deviations within the time budget: candidates are found in floats
and every candidate goes through the property's exact re-check; only a certificate makes a
"violated" verdict.

Verdicts (``PropertyResult.verdict``):
* ``violated``        -- exact certificate (``certificate``; ``path`` once stored);
* ``satisfied``       -- instance property checked exactly on this instance;
* ``not_refuted``     -- no violation among ``trials`` deviations in ``seconds``;
* ``not_applicable``  -- the property's premise fails here (``note`` says why);
* ``unknown``         -- solver trouble or a candidate that could not be certified (``note``).
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from mechverify.lp import LPError
from mechverify.model import Environment

from .properties import Property, get_property
from .properties.base import Certificate

__all__ = ["PropertyResult", "check_instance", "DEFAULT_PROPERTIES"]

DEFAULT_PROPERTIES = ["sp", "gsp", "ef", "si", "po", "bf", "srf", "pm", "single-server-drf"]


@dataclass
class PropertyResult:
    property: str
    variant: str
    verdict: str
    measure: Any = None
    certificate: Optional[Certificate] = None
    trials: int = 0
    seconds: float = 0.0
    note: str = ""
    path: Optional[str] = None
    claimed: Optional[str] = None
    claim_source: Optional[str] = None
    claims: list = field(default_factory=list)  # every claim {status, source, outside} -- papers may disagree


def claims_for(mech, prop: Property, variant: str) -> list:
    """The mechanism's claims that speak about ``prop``/``variant`` (variant-less claims cover
    ``prop.claim_variants(mech)``)."""
    return [c for c in mech.claims_for(prop.name, variant)
            if c.variant is not None or variant in prop.claim_variants(mech)]


def _claims(mech, prop: Property, variant: str, env: Optional[Environment] = None) -> list[dict]:
    """``[{"status", "source", "outside"}]``; ``outside`` names the paper's assumption ``env`` breaks
    (then a violation on ``env`` does not refute that claim), else ``None``."""
    return [{"status": c.status, "source": c.source, "outside": c.covers(env) if env is not None else None}
            for c in claims_for(mech, prop, variant)]


def refuted_claims(res: "PropertyResult") -> list[dict]:
    """Claims of 'holds' that this result refutes (a certified violation inside the claim's domain)."""
    if res.verdict != "violated":
        return []
    return [c for c in res.claims if c["status"] == "holds" and not c["outside"]]


def check_property(mech, env: Environment, prop: Property, variant: str, budget: float, seed: int,
                   alloc_exact=None, alloc_float=None) -> PropertyResult:
    t0 = time.perf_counter()
    claims = _claims(mech, prop, variant, env)
    claimed, src = (claims[0]["status"], claims[0]["source"]) if claims else (None, None)
    res = PropertyResult(prop.name, variant, "unknown", claimed=claimed, claim_source=src, claims=claims)
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
            else:
                pass
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
                   seed: int = 0, variants: Optional[dict[str, Sequence[str]]] = None) -> list[PropertyResult]:
    """Check every requested property (default: all) and each of its variants on ``env``."""
    names = list(properties or DEFAULT_PROPERTIES)
    props = [get_property(n) for n in names]
    mech.setting.check(env, mech.name)
    alloc_float = mech(env, exact=False)
    alloc_exact = None
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
            out.append(check_property(mech, env, p, p.variant_of(v), per, seed, alloc_exact, alloc_float))
    return out
