"""z3 layer: the scale-invariance lemma it relies on, encodings vs implementations, certification
(certified / violated / unknown), and the CLI."""
from __future__ import annotations

import random
import subprocess
import sys
from fractions import Fraction as F

import pytest

import mechanisms
from mechverify.model import parse_environment
from verifier.store import replay
from verifier.z3engine import SPECS, Shape, certify
from verifier.z3engine.validate import random_env, validate_spec

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


@pytest.mark.parametrize("name", sorted(n for n in SPECS if n not in ("mnw",)))
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
    r = certify(mechanisms.get("drf"), "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=60)
    assert r.status == "certified", r.reason
    assert r.control.startswith("sat")
    assert r.domain["shape"] == {"users": 2, "servers": 1, "resources": 2, "external": 0}


def test_tiny_timeout_is_unknown_never_certified():
    r = certify(mechanisms.get("drf"), "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=0.001)
    assert r.status == "unknown"


def test_certify_cru_sp_finds_a_violation_that_rechecks_exactly(tmp_path):
    """CRU is not SP (seed 004 App. 9.1); z3's SAT model goes through the exact re-check and the store."""
    r = certify(mechanisms.get("cru"), "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=120,
                store_dir=str(tmp_path))
    assert r.status == "violated", r.reason
    assert r.counterexample_path and replay(r.counterexample_path).ok


def test_certify_cli():
    ok = subprocess.run([sys.executable, "-m", "verifier", "certify", "drf", "--property", "sp", "--users", "2",
                         "--resources", "2", "--timeout", "60"], capture_output=True, text=True)
    assert ok.returncode == 0 and "certified for domain D (z3)" in ok.stdout, ok.stdout + ok.stderr
    bad = subprocess.run([sys.executable, "-m", "verifier", "certify", "drf", "--property", "bf"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
