"""Claims: every registered claim names a known property, variant and assumption; the ONE coverage
rule (verifier.claims, docs/claims.md); conflicting papers are both recorded."""
import mechanisms
from mechanisms.core.mechanism import EXECUTION_CONDITIONS
from mechanisms.core.registry import DOMAIN_CONDITIONS, Claim
from verifier import claims
from verifier.engines.strategies import Domain
from verifier.properties import PROPERTIES
from verifier.config import RunConfig


def test_every_claim_names_a_property_variant_and_known_assumptions():
    for m in mechanisms.all_mechanisms():
        for c in m.claims:
            assert c.property in PROPERTIES, (m.name, c.property)
            assert c.variant is None or c.variant in PROPERTIES[c.property].variants, (m.name, c)
            assert c.status in ("holds", "fails"), (m.name, c)
            assert c.source, (m.name, c)
            for cond in c.domain:
                assert cond in DOMAIN_CONDITIONS or cond in EXECUTION_CONDITIONS, (m.name, cond)


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


def test_check_and_run_report_the_same_claims_for_every_mechanism():
    """One interpreter: on one instance per registered mechanism, ``check`` and ``run`` (one trial per
    cell) attach the same claims to every property/variant they both report."""
    from verifier.check import check_instance
    from verifier.engines.strategies import decode_environment, domain_for
    from verifier.run import run_mechanism

    for mech in mechanisms.all_mechanisms():
        dom = domain_for(mech.setting)
        env = decode_environment(dom, 2, dom.min_servers, dom.min_resources, 0, b"")  # the simplest instance
        by_check = {(r.property, r.variant): [(c.status, c.source) for c in r.claims]
                    for r in check_instance(mech, env, None, RunConfig(budget=0.3))}
        rep = run_mechanism(mech, None, RunConfig(budget=5, trials=1, store=None))
        assert rep.results
        for r in rep.results:
            assert by_check[(r.property, r.variant)] == [(c.status, c.source) for c in r.claims], \
                (mech.name, r.property, r.variant)


def test_stored_counterexamples_record_the_claims_the_interpreter_gives():
    import json
    from verifier.store import find_files
    from tests.helpers import ROOT

    files = find_files([f"{ROOT}/counterexamples"])
    assert files
    for path in files:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        expected = claims.claim_record(claims.claims_for(mechanisms.get(d["mechanism"]), d["property"], d["variant"]))
        assert d["claim"] == expected, path


def test_positive_demands_covers_external_demands():
    """'d > 0' is about every resource the user is charged for: a zero external demand breaks it, as a zero
    computational one does (the search's positive-demand domain draws neither).  Instance: the DRF PM
    violation the search finds in drf's whole setting -- u3 demands no e1 (hand check: dominant shares
    equalise at 1/2, e1 binds u1 and u2, u3 grows to 11/8; without u2, r1 binds at 2/3 and u3 gets 4/3)."""
    from mechverify.instances import parse_environment

    holds, _ = DOMAIN_CONDITIONS["positive_demands"]
    inst = {"resources": ["r1"], "servers": [{"name": "s1", "capacity": [2]}], "external": [{"name": "e1", "capacity": 1}],
            "users": [{"name": "u1", "demand": [1], "external_demand": [1]},
                      {"name": "u2", "demand": [1], "external_demand": [4]},
                      {"name": "u3", "demand": [1], "external_demand": [0]}]}
    assert not holds(parse_environment(inst))
    inst["users"][2]["external_demand"] = [1]
    assert holds(parse_environment(inst))
