"""z3 layer: the scale-invariance lemma it relies on, encodings vs implementations, certification
(certified / violated / unknown), and the CLI."""
from __future__ import annotations

import random
import subprocess
import sys
from fractions import Fraction as F

import pytest

import mechanisms
from mechverify.instances import parse_environment
from verifier.store import replay
from verifier.engines.smt import Shape, certify, encoded
from verifier.engines.smt.validate import random_env, validate_spec

# ---------------------------------------------------------------------- Lemma L1 (docs/z3.md)
# Scale invariance of a report: if user j reports lambda * d_j (and lambda * d_er_j), the mechanism gives
# it x_j / lambda tasks -- the same bundle -- and every other user the same totals.  The z3 layer uses
# this to normalise SYMBOLIC demand vectors only; here it is checked exactly on the mechanisms it encodes.
BASE = {"resources": ["cpu", "mem"],
        "servers": [{"name": "s1", "capacity": [3, 2]}, {"name": "s2", "capacity": [1, 4]}],
        "users": [{"name": "u1", "demand": [1, 2]}, {"name": "u2", "demand": [2, 1]}, {"name": "u3", "demand": [1, 1]}]}
EXT = {"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [3, 2]}, {"name": "s2", "capacity": [1, 4]}],
       "external": [{"name": "bw", "capacity": 2}],
       "users": [{"name": "u1", "demand": [1, 2], "external_demand": [1]},
                 {"name": "u2", "demand": [2, 1], "external_demand": ["1/2"]}]}


@pytest.mark.parametrize("name", sorted(n for n in encoded() if n not in ("mnw",)))
@pytest.mark.parametrize("lam", [F(3, 2), F(1, 3)])
def test_scale_invariance_lemma(name, lam):
    mech = mechanisms.get(name)
    inst = EXT if mech.setting.external else BASE
    env = parse_environment(inst)
    if name == "drf":
        env = env.restrict(servers=[0])
    a = mech(env, exact=True)
    scaled = env.with_user(0, demand=[v * lam for v in env.demand[0]],
                           external_demand=[v * lam for v in env.external_demand[0]] if env.n_external else None)
    b = mech(scaled, exact=True)
    assert b.total(0) == a.total(0) / lam
    assert all(b.total(j) == a.total(j) for j in range(1, env.n_users))


# ---------------------------------------------------------------------- encodings reproduce implementations
@pytest.mark.parametrize("name", ["drf", "tsf", "drfh", "tsf-er"])
def test_encoding_pins_the_implementation(name):
    mech = mechanisms.get(name)
    rng = random.Random(1)
    shape = Shape(users=2, servers=1 if name == "drf" else 2, resources=2)
    for _ in range(2):
        env = random_env(shape, rng)
        assert validate_spec(mech, env, timeout=30) is None


# ---------------------------------------------------------------------- certification
def test_certify_drf_sp_2x2_is_certified_with_sat_control():
    r = certify(mechanisms.get("drf"), "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=60,
                method="encoding")
    assert r.verdict == "certified", r.note
    assert r.details["control"].startswith("sat") and r.details["method"] == "full encoding"
    assert r.domain["shape"] == {"users": 2, "servers": 1, "resources": 2, "external": 0}


def test_tiny_timeout_is_unknown_never_certified():
    r = certify(mechanisms.get("drf"), "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=0.001)
    assert r.verdict == "unknown"


def test_certify_cru_sp_finds_a_violation_that_rechecks_exactly(tmp_path):
    """CRU is not SP (seed 004 App. 9.1); z3's SAT model goes through the exact re-check and the store."""
    from verifier.cli.z3 import persist_result

    cru = mechanisms.get("cru")
    r = certify(cru, "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=120)
    assert r.verdict == "violated", r.note
    assert r.counterexample is None and r.details["provenance"]["kind"] == "z3-certify"  # the engine stores nothing
    persist_result(r, cru, str(tmp_path))
    assert r.counterexample and replay(r.counterexample).ok


def test_certify_cli():
    ok = subprocess.run([sys.executable, "-m", "verifier", "certify", "drf", "--property", "sp", "--users", "2",
                         "--resources", "2", "--timeout", "60"], capture_output=True, text=True)
    assert ok.returncode == 0 and "certified for domain D (z3" in ok.stdout, ok.stdout + ok.stderr
    bad = subprocess.run([sys.executable, "-m", "verifier", "certify", "drf", "--property", "bf"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


# ---------------------------------------------------------------------- Lemma L6 (pooled rows)
@pytest.mark.parametrize("name", sorted(n for n, s in encoded().items() if s.family in ("algorithm1", "leximin")))
def test_pooled_encoding_pins_the_implementation(name):
    """With one resource (or one server) and no placement, totals are feasible iff they fit the pooled
    capacities (Lemma L6): the pooled one-round encoding must pin exactly the implementation's totals."""
    mech = mechanisms.get(name)
    rng = random.Random(7)
    for shape in (Shape(users=3, servers=2, resources=1), Shape(users=2, servers=1, resources=2)):
        if mech.setting.single_server and shape.servers > 1:
            continue
        for _ in range(2):
            assert validate_spec(mech, random_env(shape, rng), timeout=30) is None


def test_wrong_encoding_is_never_certified(monkeypatch):
    """Mutation check of the SP query: give tsf-er's encoding the normaliser N_j = d_j[r2] (not what the
    implementation does, and manipulable: on c = (1, 1), d_1 = d_2 = (1, 1/2) each user gets 1/2 task,
    but u1 reporting (1, 1) gets 2/3 task, all of which its true demand can run) and skip the
    cross-check.  z3 must find a 'gain' that the exact re-check of the real mechanism rejects -- so the
    verdict is unknown, never certified -- which also shows the pooled SP query can be satisfied."""
    from verifier.engines.smt import specs

    monkeypatch.setitem(specs.NORMALISERS, "eta", lambda ctx, senv, j, tag: (senv.demand[j][1], F(1)))
    r = certify(mechanisms.get("tsf-er"), "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=60,
                crosscheck=0)
    assert r.verdict == "unknown" and "did not confirm" in r.note, (r.verdict, r.note)
    r = certify(mechanisms.get("tsf-er"), "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=60)
    assert r.verdict == "unknown" and "cross-check failed" in r.note, (r.verdict, r.note)


def test_certify_tsf_er_sp_with_external_resource_on_two_servers():
    """Past the prototype's 2 users x 2 servers x 1 resource (which Lemma L1 makes trivial: one
    resource leaves no free demand entry): with an external resource the misreport has a free entry."""
    r = certify(mechanisms.get("tsf-er"), "sp", "demand", Shape(users=2, servers=2, resources=1, external=1),
                timeout=120, method="encoding")
    assert r.verdict == "certified", r.note
    assert r.details["control"].startswith("sat")


# ---------------------------------------------------------------------- per-instance queries
def test_instance_query_sp_violation_rechecks_and_is_stored(tmp_path):
    """CRU on seed 004 App. 9.1's truthful instance: z3's misreport of A passes the exact re-check."""
    from mechverify.instances import load_environment
    from verifier.cli.z3 import persist_result
    from verifier.engines.smt import instance_query

    env = load_environment("examples/004-app91-truthful.json")
    r = instance_query("cru", env, "sp", users=[0], timeout=60, jobs=1)
    assert r.verdict == "violated", r.note
    assert r.counterexample is None and not list(tmp_path.iterdir())  # the engine stores nothing
    persist_result(r, mechanisms.get("cru"), str(tmp_path))
    assert r.certificate.gap > 0 and replay(r.counterexample).ok
    t = instance_query("tsf-er", env, "sp", timeout=60, jobs=1)
    assert t.verdict == "certified" and "vacuity control sat" in t.note, (t.verdict, t.note)
    e = instance_query("tsf-er", load_environment("examples/004-fig2.json"), "sp", "eligible", timeout=60, jobs=1)
    assert e.verdict == "certified" and "eligible set" in e.details["space"], (e.verdict, e.note)


def test_instance_query_ef_si_po():
    from mechverify.instances import load_environment
    from verifier.engines.smt import instance_query

    env = load_environment("examples/004-fig2.json")
    for prop in ("ef", "po"):
        r = instance_query("tsf-er", env, prop, timeout=60, jobs=1)
        assert r.verdict == "certified", (prop, r.note)
    bad = load_environment("examples/004-drf-er-not-si.json")  # seed 004 Sec. 5: DRF-ER is not SI
    r = instance_query("drf-er", bad, "si", "external", timeout=60, jobs=1)
    assert r.verdict == "violated" and r.certificate.gap > 0, r.note


def test_query_cli(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "verifier", "query", "tsf-er", "examples/004-fig2.json",
                         "--timeout", "60", "--store", str(tmp_path)], capture_output=True, text=True)
    assert ok.returncode == 0 and "certified on this instance for space S (z3 and cvc5 agree)" in ok.stdout, ok.stdout + ok.stderr
    bad = subprocess.run([sys.executable, "-m", "verifier", "query", "tsf-er", "examples/004-fig2.json",
                          "--user", "nobody"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--user" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr


# ---------------------------------------------------------------------- Lemma L7 (reduction.py)
@pytest.mark.parametrize("name,lemmas", [("tsf-er", "Lemmas L7 + L9"), ("tsf", "Lemmas L7 + L9"),
                                          ("drfh", "Lemma L7"), ("drf-er", "Lemma L7")])
def test_lemma_l7_certifies_two_servers_two_resources(name, lemmas):
    """2 x 2 x 2 is out of reach of the full encoding in 10 minutes (docs/z3.md); Lemma L7 reduces SP of
    a common-level mechanism to rho N(d') <= N(d), which z3 proves in about a second (for the TSF
    family through L9's one-server inequality)."""
    r = certify(mechanisms.get(name), "sp", "demand", Shape(users=2, servers=2, resources=2), timeout=120,
                method="reduction")
    assert r.verdict == "certified" and r.details["method"] == f"{lemmas} reduction", r.note
    assert "any number of users" in r.note


def test_direct_l7_query_on_two_servers_for_a_monopoly_sum_normaliser(monkeypatch):
    """The direct S-server L7 query (what L9 is tried before) still certifies tsf-er on 2 x 2 x 2."""
    from verifier.engines.smt import specs
    monkeypatch.setattr(specs.Spec, "per_server", property(lambda self: False))
    r = certify(mechanisms.get("tsf-er"), "sp", "demand", Shape(users=2, servers=2, resources=2), timeout=120,
                method="reduction")
    assert r.verdict == "certified" and r.details["method"] == "Lemma L7 reduction", r.note


def test_lemma_l9_structure_of_the_tsf_normalisers():
    """L9 needs N = min( sum_s min_r c[s,r]/d[r], min_k c_er[k]/d_er[k] ): check the implementations'
    eta (seed 004 eq. 6) and gamma exactly on random positive instances, and that exactly the specs
    built on them are flagged per_server (the encodings are tied to the implementations by validate)."""
    from mechanisms.paper.normalisers import eta, tsf_gamma
    rng = random.Random(9)
    for _ in range(30):
        env = random_env(Shape(users=2, servers=rng.randint(1, 4), resources=rng.randint(1, 3),
                               external=rng.randint(0, 2)), rng)
        for j in range(env.n_users):
            comp = sum(min(env.capacity[s][r] / env.demand[j][r] for r in range(env.n_resources))
                       for s in range(env.n_servers))
            ext = [env.external_capacity[k] / env.external_demand[j][k] for k in range(env.n_external)]
            assert tsf_gamma(env, j) == comp and eta(env, j) == min([comp] + ext)
    assert sorted(n for n, sp in encoded().items() if sp.per_server) == ["cdrf", "tsf", "tsf-er", "tsf-er-maxmin"]


def test_lemma_l9_scales_to_many_servers_and_refuses_a_bad_per_server_term(monkeypatch):
    """Through L9, tsf-er SP on 2 x 5 x 5 + 1 (the direct L7 query: unknown at 600 s, docs/z3.md) is a
    one-server question.  With a manipulable per-server term (d[r2] c[s,r1] instead of min_r c/d) the
    one-server inequality is SAT, L9 gives no verdict, the direct query is SAT too: not certified."""
    from verifier.engines.smt import specs
    from verifier.engines.smt.symbolic import vmul, vsum
    r = certify(mechanisms.get("tsf-er"), "sp", "demand", Shape(2, 5, 5, 1), timeout=120, method="reduction")
    assert r.verdict == "certified" and r.details["method"] == "Lemmas L7 + L9 reduction", r.note
    assert "any number of users and servers" in r.note
    monkeypatch.setattr(specs, "tsf_gamma", lambda ctx, senv, j, tag: vsum(
        [vmul(senv.demand[j][1], senv.capacity[s][0]) for s in range(senv.S)]))
    r = certify(mechanisms.get("tsf-er"), "sp", "demand", Shape(2, 2, 2), timeout=60, crosscheck=0,
                method="reduction")
    assert r.verdict == "unknown" and r.details["reduction"].startswith("sat"), (r.verdict, r.note)
    assert "Lemma L9 tried first: n = 2: sat" in r.details["reduction"], r.details["reduction"]


def test_lemma_l7_premise_failure_is_no_verdict(monkeypatch):
    """With a normaliser that violates (L7) (N_j = d_j[r2]) the reduced query is SAT: that is NOT a
    violation of SP (the lemma is only sufficient), so method='reduction' gives unknown."""
    from verifier.engines.smt import specs

    monkeypatch.setitem(specs.NORMALISERS, "eta", lambda ctx, senv, j, tag: (senv.demand[j][1], F(1)))
    r = certify(mechanisms.get("tsf-er"), "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=60,
                crosscheck=0, method="reduction")
    assert r.verdict == "unknown" and r.details["reduction"].startswith("sat"), (r.verdict, r.note)


def test_lemma_l7_does_not_cover_cru():
    r = certify(mechanisms.get("cru"), "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=30,
                method="reduction")
    assert r.verdict == "unknown" and "Lemmas L7/L8 cover" in r.note


def _resource_perms(R: int, K: int, fixed: int) -> list:
    """Brute force: every permutation of entries 0..R+K-1 that permutes compute resources among
    themselves and external ones among themselves, fixing entry ``fixed``."""
    import itertools

    comp = [i for i in range(R) if i != fixed]
    extl = [R + k for k in range(K) if R + k != fixed]
    perms = []
    for pc in itertools.permutations(comp):
        for pe in itertools.permutations(extl):
            p = list(range(R + K))
            for a, b in zip(comp, pc):
                p[a] = b
            for a, b in zip(extl, pe):
                p[a] = b
            perms.append(p)
    return perms


@pytest.mark.parametrize("shape", [Shape(3, 1, 3), Shape(4, 1, 4), Shape(3, 1, 3, 2), Shape(4, 1, 2, 2)])
def test_dominant_cases_are_one_per_orbit(shape):
    """``dominant_cases`` picks one representative per orbit of the dominant-entry assignments under
    permutations of users 2..J and of interchangeable resources: compare with brute force over every
    permutation (the representatives must be pairwise inequivalent and as many as the orbits)."""
    import itertools

    from verifier.engines.smt.domain import dominant_cases

    J, R, K = shape.users, shape.resources, shape.external
    orbits = set()
    for i0 in [0] + ([R] if K else []):
        perms = _resource_perms(R, K, fixed=i0)
        for rest in itertools.combinations_with_replacement(range(R + K), J - 1):
            for im in range(R + K):
                orbits.add(min(((i0,) + tuple(sorted(p[i] for i in rest)), p[im]) for p in perms))
    reps = dominant_cases(shape)
    canon = set()
    for (dom, im) in reps:
        i0, rest = dom[0], dom[1:]
        perms = _resource_perms(R, K, fixed=i0)
        canon.add(min(((i0,) + tuple(sorted(p[i] for i in rest)), p[im]) for p in perms))
    assert len(reps) == len(canon) == len(orbits) and canon == orbits


def test_lemma_l8_certifies_ef_and_rejects_a_wrong_normaliser(monkeypatch):
    """Lemma L8: EF of a common-level mechanism on D iff rho_12 N(d_2) <= N(d_1).  tsf-er is certified
    on 3 x 3 x 3 + 1 (the full encoding is far from that); with the normaliser N = d[r2] the reduced
    query is SAT, and the exact re-check of the REAL mechanism rejects the candidate: not certified."""
    from verifier.engines.smt import specs

    r = certify(mechanisms.get("tsf-er"), "ef", "placement-aware", Shape(3, 3, 3, 1), timeout=120,
                method="reduction")
    assert r.verdict == "certified" and r.details["method"] == "Lemma L8 reduction", r.note
    monkeypatch.setitem(specs.NORMALISERS, "eta", lambda ctx, senv, j, tag: (senv.demand[j][1], F(1)))
    r = certify(mechanisms.get("tsf-er"), "ef", "placement-aware", Shape(2, 1, 2), timeout=60, crosscheck=0,
                method="reduction")
    assert r.verdict == "unknown" and r.details["reduction"].startswith("sat"), (r.verdict, r.note)


def test_certify_cli_names_the_bad_shape_field():
    for args, msg in ((["--servers", "0"], "--servers: must be >= 1 (got 0)"),
                      (["--users", "1"], "--users: at least 2 (got 1)"),
                      (["--external", "-1"], "--external: must be >= 0 (got -1)")):
        p = subprocess.run([sys.executable, "-m", "verifier", "certify", "tsf"] + args, capture_output=True, text=True)
        assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr


# ---------------------------------------------------------------------- size and time limits of per-instance queries
def test_case_counts_match_the_enumerations():
    """The counts the size guard uses equal the enumerated cases (an upper bound for 2 targets of 4+)."""
    from verifier.engines.smt.encoders import (common_level_case_count, common_level_cases, leximin_case_count,
                                              leximin_cases)
    for p in range(6):
        for t in range(p + 1):
            n, c = len(leximin_cases(list(range(p)), list(range(t)))), leximin_case_count(p, t)
            assert n == c if t in (0, 1, p) else n <= c, (p, t, n, c)
    for b in range(5):
        assert len(common_level_cases(list(range(b)))) == common_level_case_count(b)


def test_instance_query_too_large_is_unknown_at_once():
    """20 users x 10 servers with placement: the leximin cases alone are ~10^20; the query answers
    unknown at once (it used to run out of memory enumerating them)."""
    from verifier.engines.smt import instance_query
    env = random_env(Shape(20, 10, 2), random.Random(3), placement=True)
    r = instance_query("tsf", env, "sp", timeout=60, jobs=1)
    assert r.verdict == "unknown" and r.note.startswith("too large for an exact query (") and r.seconds < 10, r


def test_instance_query_honours_its_timeout_while_building():
    """The 120-server cluster: the cross-check and the query building stop at the deadline."""
    from mechverify.instances import load_environment
    from verifier.engines.smt import instance_query
    r = instance_query("tsf", load_environment("examples/002-fig5-cluster.json"), "sp", timeout=3, jobs=1)
    # (a cross-check that z3 leaves undecided within its own per-check limit is reported as such)
    assert r.verdict == "unknown" and r.seconds < 15, (r.note, r.seconds)
    assert "time budget exhausted" in r.note or "z3 unknown (timeout)" in r.note, r.note


def test_the_engine_reads_facets_not_names(monkeypatch):
    """A property's z3 goal and a mechanism's spec are facets: a property under another name that declares
    EF's goal module is certified like EF (Lemma L8), and a mechanism whose facet says "not encoded" is
    answered with its own reason."""
    import dataclasses

    from verifier.engines.smt import goal_of
    from verifier.properties import PROPERTIES
    from verifier.properties.ef_si import EnvyFreeness

    class Envy(EnvyFreeness):
        name = "envy"

    monkeypatch.setitem(PROPERTIES, "envy", Envy())
    assert goal_of(Envy()) is goal_of(PROPERTIES["ef"])
    r = certify(mechanisms.get("tsf-er"), "envy", "placement-aware", Shape(2, 1, 2), timeout=60, method="reduction")
    assert r.verdict == "certified" and r.property == "envy" and r.details["method"] == "Lemma L8 reduction", r.note
    from mechanisms.core.z3spec import Z3Spec
    odd = dataclasses.replace(mechanisms.get("tsf-er"), z3=Z3Spec.none("no encoding for this one"))
    r = certify(odd, "sp", "demand", Shape(2, 1, 2), timeout=30)
    assert r.verdict == "unknown" and r.note == "no encoding for this one"
