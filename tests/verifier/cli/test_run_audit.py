"""``python -m verifier run`` and ``audit``: verdicts, JSON schema, stored counterexamples, reports, errors."""
from __future__ import annotations

import json
import os

import pytest

import mechanisms
from verifier.claims import claims_for
from verifier.report import render_markdown, render_table, report_to_json
from verifier.results import verdict_text
from verifier.run import plan, run_mechanism
from verifier.store import replay
from verifier.config import RunConfig

KEYS = {"property", "variant", "claimed", "verdict", "counterexample", "measure", "trials", "seconds"}




def test_run_json_schema_and_stored_counterexample(tmp_path, cli):
    store = tmp_path / "ce"
    out = cli("run", "c-drfh", "--properties", "bf", "--budget", "20", "--trials", "300", "--seed", "0",
              "--format", "json", "--store", str(store))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)  # stdout is pure JSON: progress went to stderr
    assert {"mechanism", "seed", "budget", "domain", "results"} <= set(data)
    assert data["mechanism"] == "c-drfh" and data["seed"] == 0 and data["budget"] == 20
    assert {"users", "servers", "resources", "numbers", "features"} <= set(data["domain"])
    by = {(r["property"], r["variant"]): r for r in data["results"]}
    assert set(by) == {("bf", "global"), ("bf", "per-server")}
    for r in data["results"]:
        assert KEYS <= set(r)
        assert r["verdict"] in ("violated", "certified", "not_refuted", "unknown")
        assert r["claimed"] in ("holds", "fails", None)
    bf = by[("bf", "per-server")]
    assert bf["verdict"] == "violated" and bf["claimed"] == "fails" and bf["refuted"] is False
    assert bf["claim_status"] == "confirmed"
    assert os.path.exists(bf["counterexample"]) and replay(bf["counterexample"]).ok
    assert bf["minimality"] in ("1-minimal", "already 1-minimal")
    assert bf["size"]["users"] == 2
    with open(bf["counterexample"]) as fh:
        stored = json.load(fh)
    assert stored["minimality"]["one_minimal"] is True and stored["provenance"]["kind"] == "search"
    assert "[" in out.stderr  # progress lines on stderr


def test_run_table_and_markdown_say_what_they_mean(tmp_path, cli):
    out = cli("run", "drf", "--properties", "srf,ef", "--trials", "25", "--budget", "30", "--no-store")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "srf/max-min" in text and "no violation found in 25 trials" in text
    assert "holds [000 Sec. II-A" in text  # the paper's claim, labelled as such
    assert "not refuted" in text
    for line in text.splitlines():  # never a bare "holds" as a verdict
        assert line.strip() != "holds"
    md = cli("run", "drf", "--properties", "srf", "--trials", "10", "--budget", "30", "--no-store", "--format", "md",
             "--quiet")
    assert md.returncode == 0 and md.stdout.startswith("# mechverify run: `drf`")
    assert "| srf/max-min |" in md.stdout and md.stderr == ""


def test_out_dir_writes_md_json_html(tmp_path, cli):
    out = cli("run", "tsf", "--properties", "bf", "--trials", "300", "--budget", "30", "--store",
              str(tmp_path / "ce"), "--out", str(tmp_path / "rep"), "--quiet")
    assert out.returncode == 0, out.stderr
    for ext in ("md", "json", "html"):
        assert (tmp_path / "rep" / f"tsf.{ext}").exists()
    html = (tmp_path / "rep" / "tsf.html").read_text()
    assert "<svg" in html and "bf/per-server" in html
    data = json.loads((tmp_path / "rep" / "tsf.json").read_text())
    assert data["schema"] == "mechverify.run/1"
    assert not [p for p in os.listdir(tmp_path / "rep") if p.startswith(".tmp")]  # atomic writes


@pytest.mark.parametrize("args,field", [
    (["run", "no-such-mech"], "mechanism"),
    (["run", "drf", "--properties", "sp,nope"], "properties"),
    (["run", "drf", "--budget", "0"], "--budget"),
    (["run", "drf", "--trials", "-1"], "--trials"),
    (["run", "kueue-timeshare", "--max-wait", "-1"], "--max-wait"),
    (["run", "kueue-timeshare", "--max-wait", "soon"], "--max-wait"),
    (["audit", "--mechanisms", "nope"], "mechanism"),
])
def test_bad_input_is_one_line_exit_2(args, field, cli):
    out = cli(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and field in lines[0]


def test_plan_skips_what_the_setting_cannot_express():
    cells, skipped = plan(mechanisms.get("cdrf"))
    assert ("sp", "eligible") not in cells and any(p == "sp" and v == "eligible" for p, v, _ in skipped)
    assert ("sp", "demand") in cells and ("single-server-drf", "totals") in cells


def test_claim_scope():
    """An unqualified EF claim covers the placement-aware reading only (with placement constraints);
    without placement constraints both readings are one check and a 'literal' claim covers it."""
    cd = mechanisms.get("c-drfh")
    assert claims_for(cd, "ef", "placement-aware") and not claims_for(cd, "ef", "literal")
    cru = mechanisms.get("cru")
    assert [c.status for c in claims_for(cru, "ef", "placement-aware")] == ["holds"]


def test_run_mechanism_api_and_renderers(tmp_path):
    rep = run_mechanism(mechanisms.get("per-server-drf"), ["po"], RunConfig(budget=20, seed=0, store=str(tmp_path), trials=300))
    (r,) = rep.results
    assert r.verdict == "violated" and r.claimed == "fails" and not r.refuted
    assert verdict_text(r).startswith("violated (counterexample ")
    assert r.time_to_first is not None and r.time_to_first < 20
    table = render_table(rep)
    assert "po/fractional" in table and "confirmed" in table and "no claim of the paper was refuted" in table
    md = render_markdown(rep)
    assert "| po/fractional |" in md
    j = report_to_json(rep)
    assert j["results"][0]["counterexample"] == r.counterexample


def test_refuted_claim_is_flagged_and_backed_by_a_replayable_file(tmp_path):
    """TSF with placement constraints is not SI (002 Table I says it is): see tests/test_known_theorems.py."""
    rep = run_mechanism(mechanisms.get("tsf"), ["si"], RunConfig(budget=60, seed=0, store=str(tmp_path), trials=400))
    r = next(r for r in rep.results if r.variant == "per-server-split")
    assert r.verdict == "violated" and r.refuted and r.claim_status() == "REFUTED"
    assert replay(r.counterexample).ok
    assert "CLAIMS REFUTED" in render_table(rep)
    assert "si/per-server-split" in report_to_json(rep)["refuted"]


def test_audit_tables(tmp_path, cli):
    # --trials: the searches end on trials, not on the (wall-clock) budget, whatever the machine's load
    out = cli("audit", "--mechanisms", "c-drfh,tsf", "--budget", "120", "--trials", "300", "--store", str(tmp_path / "ce"),
              "--format", "json", "--quiet", timeout=600)
    data = json.loads(out.stdout)
    # exit 1 exactly when some registered claim is REFUTED (--fail-on refuted, the default)
    assert out.returncode == (1 if data["refuted"] else 0), out.stderr
    t1 = next(t for t in data["tables"] if t["id"] == "002-table-1")
    cells = {(c["mechanism"], c["property"]): c for c in t1["cells"]}
    bf = cells[("c-drfh", "bf")]
    assert bf["claimed"] == "fails" and bf["verdict"] == "violated"
    for c in t1["cells"]:
        assert c["verdict"] in ("violated", "certified", "not_refuted", "unknown", "not_applicable")
        for e in c["evidence"]:
            if e.get("verdict") == "violated":
                assert replay(e["counterexample"]).ok  # every violation is a replayable stored file
    for r in data["refuted"]:
        assert r["counterexamples"] and all(replay(p).ok for p in r["counterexamples"] if p)
    md = cli("audit", "--mechanisms", "c-drfh", "--budget", "2", "--store", str(tmp_path / "ce"), "--quiet",
             "--fail-on", "never")
    assert md.returncode == 0
    assert "## 000/002 Table I" in md.stdout and "| bf |" in md.stdout


def test_certifier_hook(tmp_path):
    """A certifier (the z3 layer plugs in the same way) turns 'no violation found' into 'certified' on its
    domain; a violation found by the search still wins."""
    calls = []

    def fake(mech, prop, variant, budget):
        calls.append((mech.name, prop, variant))
        return {"domain": {"users": 2, "resources": 2}, "note": "test certifier"}

    rep = run_mechanism(mechanisms.get("drf"), ["srf"], RunConfig(budget=10, trials=5, certify=True, certifier=fake, store=str(tmp_path)))
    (r,) = rep.results
    assert r.verdict == "certified" and r.certified["domain"] == {"users": 2, "resources": 2}
    assert verdict_text(r).startswith("certified for domain D")
    # the z3 hook's domain carries its shape and method: the verdict spells both out
    r.certified = {"domain": {"shape": {"users": 2, "servers": 1, "resources": 2, "external": 0}},
                   "method": "Lemma L7 reduction"}
    assert verdict_text(r) == ("certified for domain D (z3, Lemma L7 reduction): 2 users x 1 server x "
                               "2 resources; positive data, equal weights, no placement, unbounded tasks "
                               "(docs/z3.md)")
    rep = run_mechanism(mechanisms.get("c-drfh"), ["bf"], RunConfig(budget=20, trials=300, certify=True, certifier=fake, store=str(tmp_path)))
    assert {r.variant: r.verdict for r in rep.results}["per-server"] == "violated"
    assert calls


@pytest.mark.parametrize("args", [("run", "drf"), ("audit",), ("check", "drf", "examples/001-fig1.json")])
@pytest.mark.parametrize("value", ["", " , "])
def test_empty_properties_is_an_error_not_all(cli, args, value):
    out = cli(*args, "--properties", value, "--budget", "5")
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "--properties: no property named" in lines[0], out.stderr


def test_piped_output_wraps_at_100_columns_unless_columns_says_otherwise(tmp_path):
    import subprocess
    import sys

    from tests.helpers import ROOT

    def run(columns):
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        if columns:
            env["COLUMNS"] = columns
        return subprocess.run([sys.executable, "-m", "verifier", "run", "tsf", "--properties", "bf,srf", "--trials",
                               "100", "--budget", "20", "--no-store", "--quiet"],
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)  # stdout: a pipe

    piped = run(None)
    assert piped.returncode == 0, piped.stderr
    assert max(len(ln) for ln in piped.stdout.splitlines()) <= 100  # PIPE_WIDTH
    wide = run("160")
    assert wide.returncode == 0, wide.stderr
    # COLUMNS=160 wins: the domain line (longer than 100 characters) is no longer wrapped
    assert max(len(ln) for ln in wide.stdout.splitlines()) > 100
    assert max(len(ln) for ln in wide.stdout.splitlines()) <= 160


def test_run_max_wait_is_the_bound_every_searched_trace_declares(cli):
    # kueue 8522 without the booster: within the bound of 2 units a workload below its quota waits to the end
    out = cli("run", "kueue-timeshare@8522", "--properties", "starvation", "--max-wait", "2", "--trials", "200",
              "--budget", "30", "--no-store", "--format", "json", "--quiet")
    assert out.returncode == 0, out.stderr  # violated, but no claim refuted
    (r,) = [r for r in json.loads(out.stdout)["results"] if r["variant"] == "quota"]
    assert r["verdict"] == "violated" and "(max_wait 2)" in json.dumps(r), r
