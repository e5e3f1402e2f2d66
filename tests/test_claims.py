"""Claims registry: every claim names a known property and variant, every assumption is one the
search engines can honour, and conflicting papers are both recorded."""
import mechanisms
from mechanisms.registry import DOMAIN_CONDITIONS
from verifier.properties import PROPERTIES
from verifier.run import _COND_DOMAIN


def test_every_claim_names_a_property_variant_and_known_assumptions():
    for m in mechanisms.all_mechanisms():
        for c in m.claims:
            assert c.property in PROPERTIES, (m.name, c.property)
            assert c.variant is None or c.variant in PROPERTIES[c.property].variants, (m.name, c)
            assert c.status in ("holds", "fails"), (m.name, c)
            assert c.source, (m.name, c)
            for cond in c.domain:
                assert cond in DOMAIN_CONDITIONS, (m.name, cond)


def test_engines_know_every_assumption():
    # a claim assumption the search cannot restrict to would be searched outside the claim
    assert set(DOMAIN_CONDITIONS) == set(_COND_DOMAIN)


def test_psdsf_papers_disagree_and_both_are_recorded():
    m = mechanisms.get("psdsf-rdm")
    po = m.claims_for("po")
    assert {c.status for c in po} == {"holds", "fails"}
    assert {c.source[:3] for c in po} == {"000", "002"}
