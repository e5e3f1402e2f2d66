"""Claims: every registered claim names a known property, variant and assumption; the ONE coverage
rule (verifier.claims, docs/claims.md); conflicting papers are both recorded."""
import mechanisms
from mechanisms.registry import DOMAIN_CONDITIONS, Claim
from verifier import claims
from verifier.engines.strategies import Domain
from verifier.properties import PROPERTIES


def test_every_claim_names_a_property_variant_and_known_assumptions():
    for m in mechanisms.all_mechanisms():
        for c in m.claims:
            assert c.property in PROPERTIES, (m.name, c.property)
            assert c.variant is None or c.variant in PROPERTIES[c.property].variants, (m.name, c)
            assert c.status in ("holds", "fails"), (m.name, c)
            assert c.source, (m.name, c)
            for cond in c.domain:
                assert cond in DOMAIN_CONDITIONS, (m.name, cond)


def test_the_search_can_restrict_to_every_assumption():
    # a claim assumption the search cannot restrict to would be searched outside the claim
    base = Domain()
    for cond in DOMAIN_CONDITIONS:
        assert claims.search_domain(Claim("sp", "holds", "test", domain=(cond,)), base) != base, cond


def test_variant_less_sp_claim_covers_demand_and_eligible_but_not_task_counts():
    drf = mechanisms.get("drf")  # DRF's setting allows placement (eligible sets) and task bounds
    assert claims.claims_for(drf, "sp", "demand") and claims.claims_for(drf, "sp", "eligible")
    assert not claims.claims_for(drf, "sp", "tasks")  # only 004 Thm 8 (TSF-ER) claims task counts
    assert claims.claims_for(mechanisms.get("tsf-er"), "sp", "tasks")


def test_ef_readings_coincide_without_placement_only():
    cdrfh = mechanisms.get("c-drfh")  # placement: the papers' EF is the placement-aware reading
    assert claims.claims_for(cdrfh, "ef", "placement-aware") and not claims.claims_for(cdrfh, "ef", "literal")
    tsf_er = mechanisms.get("tsf-er")  # no placement: its 'literal' claim is the placement-aware check too
    assert [c.variant for c in claims.claims_for(tsf_er, "ef", "placement-aware")] == ["literal"]
    assert claims.claims_for(tsf_er, "ef", "literal")


def test_psdsf_papers_disagree_and_both_are_recorded():
    m = mechanisms.get("psdsf-rdm")
    po = claims.claims_for(m, "po", "fractional")
    assert {c.status for c in po} == {"holds", "fails"}
    assert {c.source[:3] for c in po} == {"000", "002"}
    rec = claims.claim_record(po)
    assert {a["source"][:3] for a in rec["all"]} == {"000", "002"}
