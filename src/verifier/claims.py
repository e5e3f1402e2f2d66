"""THE claims interpreter: which registered claim speaks about which (property, variant, environment),
and what a verdict means for it.  ``check``, ``run``, ``audit``, the z3 commands and the store all use
these functions; the rule is stated once in ``docs/claims.md``.

Coverage.  A claim with a variant covers that variant and every variant that is the same check in the
mechanism's setting (``Property.canonical_variant``: without placement constraints EF ``literal`` is
``placement-aware``).  A variant-less claim covers the property's *claim variants*
(``Property.claim_variants``): SP means demand misreports, plus eligible-set misreports where the setting
has placement constraints (users declare eligibility, 002 Sec. III-B) -- task-count misreports only where
a paper claims them (004 Thm 8); EF means the placement-aware reading; every other property all its variants.

Standing assumptions.  ``Claim.domain`` names the paper's assumptions (positive demands, ...): a
violation outside them (in the true or in the misreported environment) does not refute the claim.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Sequence

from mechverify.model import Environment

from .properties import get_property

__all__ = ["covers", "claims_for", "assumption_broken", "outcome", "outcomes", "claim_record",
           "search_domain", "scoped_claim", "REFUTED"]

REFUTED = "REFUTED"

# a claim's standing assumptions (mechanisms.core.registry.DOMAIN_CONDITIONS) as search-domain narrowing;
# conditions not listed here are enforced by the search's accept filter alone
_CONDITION_DOMAIN = {"positive_demands": {"zero_demands": False}, "positive_capacities": {"zero_capacities": False},
                     "no_placement": {"placement": False}, "unbounded": {"bounds": False},
                     "unweighted": {"weights": False}, "uniform_demands": {"server_demand": False}}


def covers(claim, mech, prop_name: str, variant: str) -> bool:
    """Does ``claim`` (registered with ``mech``) speak about ``prop_name``/``variant``?"""
    if claim.property != prop_name:
        return False
    prop = get_property(prop_name)
    canon = prop.canonical_variant(mech.setting, variant)
    if claim.variant is not None:
        return prop.canonical_variant(mech.setting, claim.variant) == canon
    return canon in {prop.canonical_variant(mech.setting, v) for v in prop.claim_variants(mech)}


def claims_for(mech, prop_name: str, variant: str) -> list:
    """Every claim of ``mech`` covering ``prop_name``/``variant``, in registration order (papers can
    disagree: PS-DSF, seed 000 Thm 2 vs seed 002 Thm 3)."""
    return [c for c in mech.claims if covers(c, mech, prop_name, variant)]


def assumption_broken(claim, env: Environment, deviation=None, execution=None) -> Optional[str]:
    """``None`` if ``env`` (and the environment a misreport ``deviation`` reports) lies inside the
    claim's standing assumptions; else the assumption it breaks.  A violation over an ``execution`` is read
    on the execution (and, under a trace misreport, on the execution as reported)."""
    if execution is not None:
        why = claim.covers(execution)
        if why is None and deviation is not None and hasattr(deviation, "apply_to"):
            why = claim.covers(deviation.apply_to(execution))
            if why:
                why = f"the misreport: {why}"
        return why
    why = claim.covers(env)
    if why is None and deviation is not None and deviation.kind == "misreport":
        why = claim.covers(deviation.apply(env))
        if why:
            why = f"the misreport: {why}"
    return why


def outcome(claim, verdict: str, witness=None) -> str:
    """What ``verdict`` (with the violation's ``witness``: its true environment and deviation) means
    for ``claim``."""
    if verdict == "violated":
        w = witness
        why = assumption_broken(claim, w.env, w.deviation, getattr(w, "execution", None)) if w is not None else None
        if claim.status == "holds":
            return REFUTED if why is None else f"not refuted (the violation is outside the claim's domain: {why})"
        return "confirmed" if why is None else f"not reproduced inside the claim's domain ({why})"
    if verdict == "certified":
        return "confirmed on the certified domain" if claim.status == "holds" else "CONTRADICTED (certified)"
    if verdict in ("not_refuted", "satisfied"):
        return "not refuted" if claim.status == "holds" else "not reproduced"
    return "undecided"


def outcomes(claims: Sequence, verdict: str, witness=None) -> list[str]:
    """:func:`outcome` per claim."""
    return [outcome(c, verdict, witness) for c in claims]


def claim_record(claims: Sequence) -> Optional[dict]:
    """What a stored counterexample records about the claims of its cell: the first claim's status and
    source, plus ``all`` when papers disagree; ``None`` without a claim."""
    if not claims:
        return None
    rec: dict[str, Any] = {"status": claims[0].status, "source": claims[0].source}
    if len(claims) > 1:
        rec["all"] = [{"status": c.status, "source": c.source} for c in claims]
    return rec


def scoped_claim(claims: Sequence):
    """The claim whose standing assumptions a search explores first: a 'holds' claim with assumptions,
    else any claim with assumptions, else ``None``."""
    return next((c for c in claims if c.status == "holds" and c.domain), None) or \
        next((c for c in claims if c.domain), None)


def search_domain(claim, base):
    """``base`` (a search ``Domain``) narrowed to ``claim``'s standing assumptions where they are
    features of the domain."""
    kw: dict[str, Any] = {}
    for cond in claim.domain:
        kw.update(_CONDITION_DOMAIN.get(cond, {}))
    return replace(base, **kw)
