"""One artifact protocol (``verifier.artifacts``): ``mechverify.replay`` and ``python -m verifier replay`` accept
the same artifacts with the same results -- one file of each kind (a stored counterexample, an SMT export's
certificate.json, an exact LP certificate) as stored, perturbed and malformed: the same status, report lines,
summary and exit code (0 accepted, 1 rejected, 2 malformed; a damaged counterexample file is rejected and the
replay goes on, as the store's replay has always done)."""
from __future__ import annotations

import json
import os
import shutil
from fractions import Fraction

import pytest

import mechverify
from tests.helpers import ROOT, main_cli
from verifier.artifacts import (COUNTEREXAMPLE, KINDS, LP_CERTIFICATE, SMT_EXPORT, ArtifactKind, Replay, ReplayError,
                                kind_of, replay)
from verifier.results import ArtifactResult

COUNTEREXAMPLE_FILE = os.path.join(ROOT, "counterexamples", "drf", "ef-cc94d4a68ca8.json")
LP_FILE = os.path.join(ROOT, "certificates", "tsf-000-fig1-po.json")


_cli = main_cli  # in this process


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    """``certify drf --property sp --export DIR`` once (Lemma L7: 5 queries, docs/z3.md)."""
    d = tmp_path_factory.mktemp("smt")
    code, out, err = _cli("certify", "drf", "--property", "sp", "--users", "2", "--resources", "2", "--jobs", "1",
                          "--timeout", "60", "--store", str(d / "cx"), "--export", str(d / "export"))
    assert code == 0, out + err
    return d / "export"


def _edit_json(path, edit):
    with open(path, encoding="utf-8") as fh:
        d = json.load(fh)
    edit(d)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(d, fh, indent=1)


def _halve_a_multiplier(d):
    k = sorted(d["dual"])[0]
    d["dual"][k] = str(Fraction(d["dual"][k]) / 2)


def _artifact(kind, variant, tmp_path, export_dir):
    """A copy of one file of ``kind`` under ``tmp_path``: as stored, ``perturbed`` (its numbers or a query
    changed) or ``malformed`` (not readable as one)."""
    if kind == "smt-export":
        d = tmp_path / "export"
        shutil.copytree(export_dir, d)
        path = d / "certificate.json"
        if variant == "perturbed":  # a weakened query: its sha256 is no longer the export's
            q = d / "q0001.smt2"
            q.write_text("\n".join(q.read_text().splitlines()[:-1]) + "\n")
        elif variant == "malformed":
            _edit_json(path, lambda c: c["queries"][0].update(sha256="x"))
        return str(path)
    src = COUNTEREXAMPLE_FILE if kind == "counterexample" else LP_FILE
    path = tmp_path / os.path.basename(src)  # a counterexample's name must start with its id
    shutil.copy(src, path)
    if variant == "perturbed":
        _edit_json(path, (lambda c: c.update(gap="12345")) if kind == "counterexample" else _halve_a_multiplier)
    elif variant == "malformed" and kind == "counterexample":
        path.write_text("{oops")
    elif variant == "malformed":  # still says it is an LP certificate (its format), but has no claim
        _edit_json(path, lambda c: c.pop("claim"))
    return str(path)


#: (kind, variant) -> (status, exit code, a phrase of its first report line)
EXPECTED = {
    ("counterexample", "stored"): ("accepted", 0, "ok   "),
    ("counterexample", "perturbed"): ("rejected", 1, "stored gap differs from the exact recomputation"),
    ("counterexample", "malformed"): ("rejected", 1, "cannot read: InstanceError"),
    ("smt-export", "stored"): ("accepted", 0, "5 queries: every file as exported"),
    ("smt-export", "perturbed"): ("rejected", 1, "q0001.smt2: edited"),
    ("smt-export", "malformed"): ("malformed", 2, "queries.0.sha256"),
    ("lp-certificate", "stored"): ("accepted", 0, "the allocation is Pareto optimal"),
    ("lp-certificate", "perturbed"): ("rejected", 1, "dual infeasible"),
    ("lp-certificate", "malformed"): ("malformed", 2, "claim: missing"),
}


@pytest.mark.parametrize("kind, variant", list(EXPECTED))
def test_the_cli_and_the_api_replay_the_same_artifacts_alike(kind, variant, tmp_path, export_dir):
    path = _artifact(kind, variant, tmp_path, export_dir)
    status, code, phrase = EXPECTED[(kind, variant)]
    got_code, out, err = _cli("replay", path, "--jobs", "1")
    one = mechverify.replay(path, jobs=1)  # one file: its result
    batch = mechverify.replay([path], jobs=1)  # a list: the Replay of them
    assert isinstance(one, ArtifactResult) and isinstance(batch, Replay)
    assert (one.kind, one.path, one.status) == (kind, path, status), one
    assert got_code == code == one.exit_code == batch.exit_code, (got_code, out, err)
    assert batch.results == [one] and batch.kind.name == kind and kind_of([path]).name == kind
    assert phrase in one.report[0]
    assert out.splitlines() == batch.lines()  # what the CLI printed, line for line
    if status == "malformed":  # one line on stderr, nothing on stdout, the replay ends
        assert out == "" and err.splitlines() == [batch.error] == list(one.report)
    else:
        assert err == "" and batch.error is None
        assert out.splitlines() == list(one.report) + [batch.summary]
    assert one.ok == (code == 0)


def test_quiet_and_folders_agree(tmp_path):
    """A folder of counterexamples (one damaged file among them: rejected, the replay goes on) and ``--quiet``;
    ``verify-certificate`` is the replay of the LP certificate kind: a folder, read first."""
    store = tmp_path / "store"
    shutil.copytree(os.path.join(ROOT, "counterexamples", "drf"), store)
    (store / "zz-damaged.json").write_text("[]")
    for quiet in ((), ("--quiet",)):
        code, out, err = _cli("replay", str(store), *quiet)
        rep = mechverify.replay(str(store))
        assert code == rep.exit_code == 1 and err == ""
        assert out.splitlines() == rep.lines(quiet=bool(quiet))
        assert rep.summary == f"{len(rep) - 1} passed, 1 failed" and rep[-1].status == "rejected"
    lp = tmp_path / "lp"
    shutil.copytree(os.path.join(ROOT, "certificates"), lp)
    code, out, err = _cli("verify-certificate", str(lp), "--quiet")
    rep = replay([str(lp)], kind=LP_CERTIFICATE)
    assert code == rep.exit_code == 0 and out.splitlines() == rep.lines(quiet=True) == [rep.summary]
    assert rep.summary == f"{len(os.listdir(lp))} accepted, 0 rejected"


def test_a_malformed_lp_certificate_in_a_batch_stops_it_before_any_check(tmp_path):
    """Every LP certificate is read first: a malformed one is the batch's only result (its line on stderr,
    exit 2), none is reported as checked."""
    good = tmp_path / "a.json"
    shutil.copy(LP_FILE, good)
    bad = tmp_path / "b.json"
    _edit_json(shutil.copy(LP_FILE, bad), lambda d: d.pop("claim"))
    code, out, err = _cli("replay", str(good), str(bad))
    rep = mechverify.replay([str(good), str(bad)])
    assert code == rep.exit_code == 2 and out == "" and rep.lines() == []
    assert err.strip() == rep.error == f"error: malformed certificate {bad}: claim: missing"
    assert [r.path for r in rep] == [str(bad)]


def test_paths_that_mix_kinds_or_do_not_exist(tmp_path, export_dir):
    """One kind per replay: a mix is one line (exit 2) in the CLI and a ReplayError with that line in the API;
    a missing path is FileNotFoundError / exit 2."""
    cases = [([LP_FILE, COUNTEREXAMPLE_FILE], LP_CERTIFICATE.mixed),
             ([LP_FILE, str(export_dir / "certificate.json")], LP_CERTIFICATE.mixed),
             ([str(export_dir / "certificate.json"), COUNTEREXAMPLE_FILE], SMT_EXPORT.mixed)]
    for paths, line in cases:
        code, out, err = _cli("replay", *paths)
        assert code == 2 and out == "" and err == f"error: {line}\n"
        with pytest.raises(ReplayError) as e:
            mechverify.replay(paths)
        assert str(e.value) == line and isinstance(e.value, ValueError)
    missing = str(tmp_path / "missing")
    code, out, err = _cli("replay", missing)
    assert code == 2 and err == f"error: {missing}: no such file or directory\n"
    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        mechverify.replay(missing)


def test_every_kind_offers_the_protocol(export_dir):
    """Each kind recognises its own files and no other kind's (counterexamples: a store directory too)."""
    samples = {"counterexample": COUNTEREXAMPLE_FILE, "smt-export": str(export_dir / "certificate.json"),
               "lp-certificate": LP_FILE}
    assert [k.name for k in KINDS] == ["lp-certificate", "smt-export", "counterexample"]
    for kind in KINDS:
        assert isinstance(kind, ArtifactKind)
        assert {name for name, path in samples.items() if kind.recognise(path)} == {kind.name}
    assert COUNTEREXAMPLE.recognise(os.path.join(ROOT, "counterexamples"))
    assert kind_of([os.path.join(ROOT, "counterexamples")]) is COUNTEREXAMPLE
