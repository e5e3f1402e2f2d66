"""``check_property`` verdicts on the property fixtures, the counterexample store and replay, and the
``check`` command."""
from __future__ import annotations

import json
import os
from fractions import Fraction as F

import pytest

from mechanisms import get
from verifier.properties import get_property
from verifier.store import persist, replay
from tests.helpers import (EQUAL_TASKS, SENIORITY, corrupt, example, first_fit_env, ghodsi,
                           mis, one_cpu, po_cert, run_cli, verdict)


# ====================================================================== check_property verdicts
def test_check_verdicts_instance_properties():
    """check_property turns the fixtures above into verdicts: exact certificate -> violated."""
    r = verdict("po", get("per-server-drf"), example("001-fig1.json"), "fractional")
    assert r.verdict == "violated" and r.measure == F(5, 3) and r.certificate.gap == 8
    r = verdict("po", get("drfh"), example("001-fig1.json"), "fractional")
    assert r.verdict == "satisfied" and r.measure == 1


def test_check_verdicts_deviation_properties():
    """The deviation search finds the equal-tasks SP violation and certifies it exactly."""
    r = verdict("sp", EQUAL_TASKS, one_cpu(12, [1, 1]), "demand", budget=5)
    assert r.verdict == "violated" and r.certificate.gap > 0 and r.certificate.method == "exact"
    r = verdict("pm", SENIORITY, one_cpu(12, [1, 1, 1]), "leave")
    assert r.verdict == "violated" and r.measure == F(3, 4)


# ====================================================================== store / replay


def test_store_replay_roundtrip_and_idempotent(tmp_path):
    cert = po_cert()
    p1 = persist(cert, None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    p2 = persist(cert, None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    assert p1 == p2 and os.path.dirname(p1) == os.path.join(str(tmp_path), "per-server-drf")
    d = json.load(open(p1))
    assert d["gap"] == "8" and d["measure"] == "5/3" and d["utilities"] == {"sum u": "12", "sum y": "20"}
    assert os.listdir(os.path.dirname(p1)) == [os.path.basename(p1)]  # no temporary files left
    r = replay(p1)
    assert r.ok, r.message


@pytest.mark.parametrize("what,edit,expect", [
    ("utility", lambda d: d["utilities"].__setitem__("sum u", "13"), "stored utilities differs"),
    ("gap", lambda d: d.__setitem__("gap", "9"), "stored gap differs"),
    ("allocation", lambda d: d["allocations"]["allocation"]["tasks"][0].__setitem__(0, "6"),
     "stored allocations differs"),
    ("capacity", lambda d: d["environment"]["servers"][0]["capacity"].__setitem__(0, "3"),
     "content does not match"),
])
def test_replay_detects_corruption(tmp_path, what, edit, expect):
    path = persist(po_cert(), None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    corrupt(path, edit)
    r = replay(path)
    assert not r.ok and expect in r.message, r.message


def test_store_replay_deviation_certificate(tmp_path):
    """An SP certificate (with its deviation) round-trips through the store; corrupting the deviation
    changes the content hash, corrupting the stored misreport utility fails the recomputation."""
    sp, m, env, dev = get_property("sp"), get("drfh-first-fit"), first_fit_env(), mis(0, demand=[3, 2])
    cert = sp.recheck(m, sp.evaluate(m, env, "demand", dev, exact=True).witness)
    path = persist(cert, None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    d = json.load(open(path))
    assert d["deviation"] == {"kind": "misreport", "reports": [{"user": "u1", "demand": ["3", "2"]}]}
    assert d["allocations"]["deviation"]["environment"] == "deviation" and d["gap"] == "1"
    assert replay(path).ok
    corrupt(path, lambda d: d["utilities"].__setitem__("u[u1] misreport", "3"))
    r = replay(path)
    assert not r.ok and "utilities" in r.message
    path = persist(cert, None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    corrupt(path, lambda d: d["deviation"]["reports"][0].__setitem__("demand", ["3", "3"]))
    r = replay(path)
    assert not r.ok and "content does not match" in r.message


def test_replay_cli_exit_codes(tmp_path):
    path = persist(po_cert(), None, provenance={"kind": "test"}, root=str(tmp_path), minimise=False).path
    ok = run_cli("replay", str(tmp_path))
    assert ok.returncode == 0 and "1 passed, 0 failed" in ok.stdout, ok.stdout + ok.stderr
    corrupt(path, lambda d: d["utilities"].__setitem__("sum y", "21"))
    bad = run_cli("replay", str(tmp_path))
    assert bad.returncode == 1 and "FAIL" in bad.stdout and "utilities" in bad.stdout, bad.stdout + bad.stderr


# ====================================================================== CLI check
@pytest.mark.parametrize("mech,gap", [("c-drfh", "12/11"), ("tsf", "4")])
def test_cli_check_bf_per_server_violated(mech, gap):
    res = run_cli("check", mech, "examples/000-fig1.json", "--format", "json", "--budget", "0.5")
    assert res.returncode == 1, res.stderr  # a property is violated on the instance (--fail-on violated)
    out = {(r["property"], r["variant"]): r for r in json.loads(res.stdout)["results"]}
    bf = out[("bf", "per-server")]
    assert bf["verdict"] == "violated" and bf["witness"]["gap"] == gap and bf["claimed"] == "fails"
    assert out[("bf", "global")]["verdict"] == "not_applicable"
    assert out[("po", "fractional")]["verdict"] == "satisfied"


def test_cli_check_drf_single_server_no_violation(tmp_path):
    inst = tmp_path / "ghodsi.json"
    inst.write_text(json.dumps(ghodsi().to_dict()))
    res = run_cli("check", "drf", str(inst), "--format", "json", "--budget", "1")
    assert res.returncode == 0, res.stderr
    results = json.loads(res.stdout)["results"]
    assert {r["verdict"] for r in results} <= {"satisfied", "not_refuted", "not_applicable"}
    by = {(r["property"], r["variant"]): r["verdict"] for r in results}
    assert by[("single-server-drf", "totals")] == "satisfied" and by[("srf", "max-min")] == "not_applicable"
