"""The stored exact LP certificates (``certificates/``, written by ``tools/make_certificates.py``) replayed by
the independent checker, perturbed copies rejected with the failing row named, and the commands
``check --certificates`` and ``verify-certificate``."""
from __future__ import annotations

import copy
import glob
import json
import os
from fractions import Fraction

import pytest

from mechanisms import get
from mechverify import lp_certificate_checker as C
from mechverify.instances import parse_environment

from tests.helpers import ROOT

STORED = sorted(glob.glob(os.path.join(ROOT, "certificates", "*.json")))


def _load(name):
    with open(os.path.join(ROOT, "certificates", name)) as fh:
        return json.load(fh)


def test_the_stored_set_covers_every_claim():
    kinds = {_load(os.path.basename(p))["claim"]["kind"] for p in STORED}
    assert kinds == set(C.KINDS)
    mechs = {_load(os.path.basename(p))["claim"].get("mechanism") for p in STORED}
    assert {"drf", "drfh", "tsf"} <= mechs


@pytest.mark.parametrize("path", STORED, ids=os.path.basename)
def test_stored_certificate_accepted_and_current(path):
    """Accepted by the checker; and the allocation it is about is still the mechanism's (exact) allocation on
    its instance (a certificate about an allocation the code no longer gives would be stale)."""
    cert = _load(os.path.basename(path))
    statement = C.check_certificate(cert)
    assert statement == cert["claim"]["statement"]
    if "allocation" in cert and cert["claim"].get("mechanism"):
        env = parse_environment(cert["instance"])
        alloc = get(cert["claim"]["mechanism"])(env, exact=True)
        assert [[Fraction(v) for v in row] for row in cert["allocation"]] == [list(r) for r in alloc.x]


def _first(d):
    return sorted(d)[0]


def _perturbed(cert, what):
    """A copy of ``cert`` with one number changed: ``dual``: its first multiplier (or ray entry) halved;
    ``primal``: its first primal entry raised by 1 (a level: the level raised by 1/1000 of itself; a Farkas
    certificate: its first target halved); ``instance``: the right-hand side of the first row with a positive
    multiplier raised by 1 (a capacity, an external capacity, a task bound; a tdm row: the server's
    capacities doubled)."""
    c = copy.deepcopy(cert)
    key = "ray" if "ray" in c else "dual"
    if what == "dual":
        row = _first(c[key])
        c[key][row] = str(Fraction(c[key][row]) / 2)
    elif what == "primal":
        if "primal" in c:
            col = _first(c["primal"])
            c["primal"][col] = str(Fraction(c["primal"][col]) + 1)
        elif "level" in c:
            c["level"] = str(Fraction(c["level"]) * Fraction(1001, 1000))
        else:
            u = _first(c["targets"])
            c["targets"][u] = str(Fraction(c["targets"][u]) / 2)
    else:
        inst = c["instance"]
        servers = {s["name"]: s for s in inst["servers"]}
        row = next(r for r in sorted(c[key]) if r.split("[")[0] in ("cap", "ext", "bound", "tdm")
                   and Fraction(c[key][r]) > 0)
        kind, names = row[:-1].split("[")
        if kind == "cap":
            srv, res = names.split(",")
            i = inst["resources"].index(res)
            servers[srv]["capacity"][i] = str(Fraction(servers[srv]["capacity"][i]) + 1)
        elif kind == "tdm":
            servers[names]["capacity"] = [str(2 * Fraction(v)) for v in servers[names]["capacity"]]
        elif kind == "ext":
            ext = next(e for e in inst["external"] if e["name"] == names)
            ext["capacity"] = str(Fraction(ext["capacity"]) + 1)
        else:
            user = next(u for u in inst["users"] if u["name"] == names)
            user["tasks"] = str(Fraction(user["tasks"]) + 1)
    return c


@pytest.mark.parametrize("path", STORED, ids=os.path.basename)
@pytest.mark.parametrize("what", ["dual", "primal", "instance"])
def test_perturbed_certificate_rejected(path, what):
    """Every stored certificate with one number changed is rejected, naming a row or column; an instance
    changed where a multiplier is positive is caught twice: its rows differ from the stored ones, and
    without the stored rows the dual objective no longer equals the primal's (or a level's normaliser
    differs)."""
    cert = _load(os.path.basename(path))
    bad = _perturbed(cert, what)
    with pytest.raises(C.Rejected) as e:
        C.check_certificate(bad)
    assert e.value.where and e.value.why
    if what == "instance":
        # (a level's normalisers are re-derived from the instance first: a capacity changes them too)
        assert "differs" in e.value.why or "the instance gives" in e.value.why
        if cert["claim"]["kind"] != "unreachable":
            bare = {k: v for k, v in bad.items() if k != "lp"}
            with pytest.raises(C.Rejected) as e2:
                C.check_certificate(bare)
            assert e2.value.where  # the objective, a normaliser, or (tdm: the coefficients changed) a column


def test_perturbations_name_the_row(tmp_path):
    """Reasons, on one certificate by hand (tsf on 000-fig1: multipliers 1/2 on cap[s1,mem] and cap[s2,mem]):
    halving cap[s1,mem]'s leaves y[u1,s1]'s column 2 x 1/4 = 1/2 < 1; one more task of u1 on s1 breaks
    s1's memory (2 x 5 + 2 x 2 = 14 > 12); a 13th unit of memory on s1 changes the row cap[s1,mem], and
    without the stored rows the dual objective becomes 13/2 + 6 = 25/2 against the primal's 12."""
    cert = _load("tsf-000-fig1-po.json")
    assert cert["dual"] == {"cap[s1,mem]": "1/2", "cap[s2,mem]": "1/2"}
    with pytest.raises(C.Rejected) as e:
        C.check_certificate(_perturbed(cert, "dual"))
    assert (e.value.where, e.value.why) == ("y[u1,s1]", "dual infeasible: sum of multipliers x coefficients 1/2 < cost 1")
    with pytest.raises(C.Rejected) as e:
        C.check_certificate(_perturbed(cert, "primal"))
    assert (e.value.where, e.value.why) == ("cap[s1,mem]", "primal infeasible: 14 > 12")
    bad = _perturbed(cert, "instance")
    with pytest.raises(C.Rejected) as e:
        C.check_certificate(bad)
    assert e.value.where == "cap[s1,mem]" and "differs" in e.value.why
    with pytest.raises(C.Rejected) as e:
        C.check_certificate({k: v for k, v in bad.items() if k != "lp"})
    assert (e.value.where, e.value.why) == ("objective", "primal 12 != dual 25/2")


def test_check_writes_certificates_and_verify_accepts_and_rejects(cli, tmp_path):
    out = tmp_path / "certs"
    r = cli("check", "per-server-drf", "examples/001-fig1.json", "--properties", "po", "--budget", "5",
            "--certificates", str(out), "--format", "json")
    assert r.returncode == 1, r.stderr  # PO violated (the paper's 6 vs 10 tasks)
    path = out / "per-server-drf-001-fig1-po-fractional.json"
    got = {(x["property"], x["variant"]): x for x in json.loads(r.stdout)["results"]}
    assert got[("po", "fractional")]["lp_certificate"] == str(path)
    # check judges run's readings: per-server-drf divides tasks, so po/whole-task is listed as not checked
    assert ("po", "whole-task") not in got
    assert {"property": "po", "variant": "whole-task", "reason": "divisible tasks"} in json.loads(r.stdout)["skipped"]
    assert json.loads(r.stdout)["lp_certificates"] == {"directory": str(out), "files": [str(path)], "notes": []}
    cert = json.loads(path.read_text())
    assert cert["claim"]["kind"] == "dominated" and cert["claim"]["verdict"] == "violated"
    bad = _perturbed(cert, "primal")
    (out / "bad.json").write_text(json.dumps(bad))
    r = cli("verify-certificate", str(out))
    assert r.returncode == 1
    assert "REJECTED" in r.stdout and "bad.json" in r.stdout and "1 accepted, 1 rejected" in r.stdout
    (out / "bad.json").write_text("{}")
    r = cli("verify-certificate", str(out))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "bad.json: format" in r.stderr
    r = cli("verify-certificate", "certificates", "--quiet")
    assert r.returncode == 0 and r.stdout.strip() == f"{len(STORED)} accepted, 0 rejected"


def test_replay_checks_lp_certificate_files_too(tmp_path):
    """``replay FILE`` on an LP certificate runs the solver-free checker (as ``verify-certificate``): a stored
    one is accepted, a perturbed one rejected (exit 1), and a mix with counterexamples is one line, exit 2."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from verifier.cli import main

    def replay(*paths):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["replay", *paths])
        return code, out.getvalue(), err.getvalue()

    good = STORED[0]
    code, out, _ = replay(good)
    assert code == 0 and out.strip().endswith("1 accepted, 0 rejected")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_perturbed(_load(os.path.basename(good)), "primal")))
    code, out, _ = replay(good, str(bad))
    assert code == 1 and "REJECTED" in out and out.strip().endswith("1 accepted, 1 rejected")
    code, out, err = replay(good, os.path.join(ROOT, "counterexamples"))
    assert code == 2 and out == "" and err.strip().count("\n") == 0 and "replayed separately" in err


def test_certificates_flag_is_checked_before_any_work(cli, tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    r = cli("check", "tsf", "examples/000-fig1.json", "--certificates", str(f))
    assert r.returncode == 2 and r.stderr.strip().startswith("error: --certificates:") and r.stdout == ""


def test_the_verdict_line_points_to_the_certificate():
    from verifier.report.text import check_line
    from verifier.results import Result

    r = Result("tsf", "po", "fractional", verdict="satisfied", measure=1)
    assert "certificate" not in check_line(r)
    r.details["lp_certificate"] = "certs/tsf-000-fig1-po-fractional.json"
    assert ("satisfied on this instance (exact check) (measure 1) [dual certificate: "
            "certs/tsf-000-fig1-po-fractional.json]") in check_line(r)


def test_write_certificates_in_process(tmp_path):
    """tsf on 000 Fig. 1: PO's fractional reading and the level (its z3 facet: leximin, monopoly-sum) get a
    certificate, PO's whole-task reading does not (not applicable to a divisible mechanism: no note); the
    files are what the checker accepts: PO with the allocation's 4 and 8 tasks, the level 2/3 (u2's 8 of
    its 12 monopoly tasks, u1's 4 of 6: both 2/3)."""
    from mechverify.instances import load_environment
    from verifier.artifacts import LP_CERTIFICATE, replay
    from verifier.artifacts.lp_certificate import write_certificates

    env = load_environment(os.path.join(ROOT, "examples", "000-fig1.json"))
    w = write_certificates(get("tsf"), env, ["po"], "examples/000-fig1.json", str(tmp_path), None, 5.0)
    assert set(w.files) == {("po", "fractional"), ("level", "")} and w.notes == []
    assert w.files[("po", "fractional")][1] == "satisfied"
    checked = replay(sorted(p for p, _ in w.files.values()), kind=LP_CERTIFICATE)
    assert checked.error is None and len(checked) == 2 and all(c.ok for c in checked)
    level = json.loads(open(w.files[("level", "")][0]).read())
    assert level["level"] == "2/3" and level["normalisers"] == {"u1": "6", "u2": "12"}
