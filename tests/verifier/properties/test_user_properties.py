"""A researcher's own property, audited like SP or EF (docs/properties.md, "Write your own property"):
examples/my_properties.py searched, minimised, stored, replayed, reported and asserted -- from a file
outside the package, by reference."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from fractions import Fraction

import pytest

import mechverify
from mechanisms import get
from mechverify.testing import assert_property
from tests.helpers import ROOT, run_cli
from verifier.properties import get_property, parse_cells
from verifier.store import load_witness, replay
from verifier.run import run_mechanism
from verifier.config import RunConfig

PROPS = os.path.join(ROOT, "examples", "my_properties.py")
DS = f"{PROPS}:ds_proportional"
SP = f"{PROPS}:sp_restated"
ASSET = f"{PROPS}:asset_fairness"

# the smallest violating instance (docs/properties.md): pool (1, 1), u1 (1, 1), u2 (1, 2)
POOL = {"resources": ["cpu", "mem"], "servers": [{"capacity": [1, 1]}],
        "users": [{"demand": [1, 1]}, {"demand": [1, 2]}]}


def test_the_hand_derivation_of_the_docs():
    env = mechverify.instance(POOL)
    # asset fairness: t = 6/7, x = (3/7, 2/7), dominant shares 3/7 and 4/7: margin 1/2 - 3/7 = 1/14
    (ds,) = [r for r in mechverify.check(ASSET, env, DS) if r.property == "ds-proportional"]
    assert ds.verdict == "violated" and ds.certificate.gap == Fraction(1, 14)
    assert [row[0] for row in ds.certificate.allocations["allocation"].x] == [Fraction(3, 7), Fraction(2, 7)]
    # DRF: x = (1/2, 1/4), dominant shares 1/2 and 1/2: margin 0, holds
    (ds,) = mechverify.check("drf", env, DS)
    assert ds.verdict == "satisfied" and ds.measure == 0


def test_a_property_from_a_file_is_searched_minimised_stored_replayed_and_reported(tmp_path):
    store = tmp_path / "store"
    out = run_cli("run", ASSET, "--properties", DS, "--budget", "30", "--trials", "300", "--store", str(store),
                  "--out", str(tmp_path / "out"), "--format", "json", "--quiet", timeout=300)
    assert out.returncode == 0, out.stderr  # no claim is refuted: the finding is reported, exit 0
    report = json.loads(out.stdout)
    (cell,) = [r for r in report["results"] if r["property"] == "ds-proportional"]
    assert cell["verdict"] == "violated" and cell["minimality"] == "1-minimal" and cell["measure_exact"] == "1/14"
    stored = json.load(open(cell["counterexample"]))
    assert stored["environment"]["users"] == [{"name": "u1", "demand": ["1", "1"]},
                                              {"name": "u2", "demand": ["1", "2"]}]
    assert stored["gap"] == "1/14"
    prov = stored["provenance"]
    assert prov["property_reference"] == DS and len(prov["property_sha256"]) == 64
    assert replay(cell["counterexample"]).ok
    for ext in ("md", "html", "json"):
        text = (tmp_path / "out" / f"asset-fairness.{ext}").read_text()
        assert "ds-proportional" in text and "1/14" in text
    rep = run_cli("replay", str(store))
    assert rep.returncode == 0 and "1 passed, 0 failed" in rep.stdout


def test_replay_says_when_the_propertys_source_changed(tmp_path):
    mine = tmp_path / "mine.py"
    shutil.copy(PROPS, mine)
    store = str(tmp_path / "store")
    report = run_mechanism(get(ASSET), [f"{mine}:ds_proportional"], RunConfig(budget=30, trials=300, store=store))
    (cell,) = [r for r in report.results if r.property == "ds-proportional"]
    assert cell.verdict == "violated"
    assert replay(cell.counterexample).ok and "changed" not in replay(cell.counterexample).message
    mine.write_text(mine.read_text() + "\n# edited\n")
    r = replay(cell.counterexample)
    assert r.ok and "the source of the property" in r.message and "changed since it was stored" in r.message


def test_assert_property_takes_a_users_property():
    assert_property("drf", DS, budget=20, trials=150)  # DRF satisfies it (its sharing incentive)
    with pytest.raises(AssertionError, match="ds-proportional"):
        assert_property(ASSET, DS, budget=20, trials=300)


def test_sp_restated_agrees_with_the_built_in_sp_on_a_stored_counterexample():
    # CRU is not SP (counterexamples/cru/sp-*.json): the restatement certifies the same gain on that witness
    path = sorted(p for p in os.listdir(os.path.join(ROOT, "counterexamples", "cru")) if p.startswith("sp-"))[0]
    w = load_witness(os.path.join(ROOT, "counterexamples", "cru", path))
    cru, mine = get("cru"), get_property(SP)
    built_in = get_property("sp").recheck(cru, w)
    w.property, w.variant = mine.name, mine.default_variant
    restated = mine.recheck(cru, w)
    assert built_in is not None and restated is not None and restated.gap == built_in.gap


def test_names_and_references_parse_like_the_built_in_ones():
    props, variants = parse_cells([SP, "sp/demand", f"{DS}/default"])
    assert props == [SP, "sp", DS] and variants == {"sp": ["demand"], DS: ["default"]}


def test_a_bad_reference_is_one_line_before_any_work():
    for ref, text in [("nothere.py:f", "property: no file 'nothere.py'"),
                      (f"{PROPS}:nope", "has no attribute 'nope'"),
                      ("examples/001-fig1.json:x", "property: ")]:
        out = run_cli("run", "drf", "--properties", ref, "--budget", "5")
        assert out.returncode == 2 and text in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_a_property_that_fails_on_every_call_says_so(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(textwrap.dedent('''
        def loops(env, alloc):
            while True:
                pass
    '''))
    report = run_mechanism(get("drf"), [f"{bad}:loops"], RunConfig(budget=6, store=None))
    (cell,) = report.results
    # a finding about the property (its own code), with the instance it failed on -- not about drf
    assert cell.verdict == "unknown" and cell.property_failed and not cell.mechanism_failed
    assert "exceeds the time limit" in cell.property_failure and "exceeds the time limit" in cell.note
    assert mechverify.instance(cell.details["failed_instance"]).n_users >= 1


def test_entry_point_properties_are_listed_and_usable(tmp_path):
    (tmp_path / "acme_props.py").write_text(textwrap.dedent('''
        def nobody_idle(env, alloc):
            """Every user runs something: margin 1 when someone runs no task."""
            return 1 if any(sum(row) == 0 for row in alloc.x) else -1
    '''))
    dist = tmp_path / "acme_props-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-props\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[mechverify.properties]\nacme-idle = acme_props:nobody_idle\n")
    envp = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    out = subprocess.run([sys.executable, "-m", "verifier", "list", "--properties"], cwd=ROOT, env=envp,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "acme-idle" in out.stdout, out.stderr
    out = subprocess.run([sys.executable, "-m", "verifier", "check", "drfh", os.path.join(ROOT, "examples",
                          "001-fig1.json"), "--properties", "acme-idle"], cwd=ROOT, env=envp,
                         capture_output=True, text=True, timeout=120)
    assert "acme-idle" in out.stdout, out.stdout + out.stderr


def test_audit_takes_a_users_property_as_a_row_of_every_table(tmp_path):
    out = run_cli("audit", "--mechanisms", f"drf,{ASSET}", "--properties", f"{DS},si", "--trials", "40",
                  "--budget", "60", "--store", str(tmp_path / "store"), "--quiet", timeout=300)
    assert out.returncode == 0, out.stderr
    assert "| ds-proportional | – → not refuted |" in out.stdout  # DRF: its sharing incentive
    assert "| ds-proportional | – → violated |" in out.stdout  # asset fairness: the 1/14 instance
