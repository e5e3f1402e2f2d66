"""The second solver (cvc5) behind every certified verdict, the SMT-LIB2 export and the certificate replay
(docs/z3.md, "Second solver and export").

The cell is drf SP on 2 users x 1 server x 2 resources through Lemma L7 (docs/z3.md: DRF's dominant-share
normaliser satisfies rho N(d') <= N(d), proof beside the lemma): z3 proves 4 reduced queries UNSAT (one per
dominant-resource case of the two reports: 2 x 2) and one vacuity control SAT, so the certificate has 5 files.
The same cell by the full encoding has 4 cases x 2 splits = 8 UNSAT queries and one SAT control (9 files).
"""
from __future__ import annotations

import json
import os
import re
import shutil

import pytest

import mechanisms
from tests.helpers import main_cli

from verifier.engines.smt import Shape, certify, instance_query
from verifier.engines.smt import solvers
from verifier.engines.smt.solvers import Answer, logic_of


_cli = main_cli  # in this process


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """``certify drf --property sp --export DIR`` once for the module (the reduction: 5 queries)."""
    d = tmp_path_factory.mktemp("cert")
    code, out, err = _cli("certify", "drf", "--property", "sp", "--users", "2", "--resources", "2", "--jobs", "1",
                          "--timeout", "60", "--store", str(d / "cx"), "--export", str(d / "export"))
    return d / "export", code, out, err


def _copy(src, tmp_path):
    dst = tmp_path / "copy"
    shutil.copytree(src, dst)
    return dst


def test_certify_is_reproduced_by_both_solvers_and_exported(exported):
    d, code, out, err = exported
    assert code == 0, out + err
    assert "certified for domain D (z3 and cvc5 agree, Lemma L7 reduction)" in out
    cert = json.load(open(d / "certificate.json"))
    assert [s["name"] for s in cert["solvers"]] == ["z3", "cvc5"]
    assert cert["method"] == "Lemma L7 reduction" and "L7" in cert["lemmas"]
    qs = cert["queries"]
    assert [q["role"] for q in qs] == ["query"] * 4 + ["control"]  # 2 x 2 dominant cases, one control
    for q in qs:
        text = open(d / q["file"]).read()
        assert q["answers"] == {"z3": q["expected"], "cvc5": q["expected"]}
        assert "(set-logic QF_NRA)" in text and text.rstrip().endswith("(check-sat)\n(exit)".rstrip())
        assert re.search(r"\(declare-fun \|?d\[u1\]\[r2\]\|? \(\) Real\)", text)  # the parameters are declared
        assert solvers.sha256(text) == q["sha256"]


def test_each_exported_file_is_read_by_stock_z3_and_by_cvc5(exported):
    d = exported[0]
    cert = json.load(open(d / "certificate.json"))
    for q in cert["queries"]:
        text = open(d / q["file"]).read()
        assert solvers.solve("cvc5", text, (), 30, q["logic"]).status == q["expected"]
        assert solvers.solve("z3", text, (), 30, "").status == q["expected"]  # z3 reads set-logic and check-sat


def test_replay_of_the_export_passes(exported, tmp_path):
    d = _copy(exported[0], tmp_path)
    code, out, err = _cli("replay", str(d / "certificate.json"), "--jobs", "1")
    assert code == 0, out + err
    assert "1 certificate(s) hold, 0 do not" in out


def test_a_weakened_query_makes_replay_fail(exported, tmp_path):
    """Drop one assertion of an UNSAT query: the file no longer has the certificate's hash (exit 1)."""
    d = _copy(exported[0], tmp_path)
    f = d / "q0001.smt2"
    lines = f.read_text().splitlines(keepends=True)
    last = max(i for i, ln in enumerate(lines) if ln.startswith("(assert"))
    f.write_text("".join(lines[:last] + lines[last + 1:]))
    code, out, err = _cli("replay", str(d / "certificate.json"), "--jobs", "1")
    assert code == 1, out + err
    assert "FAIL" in out and "q0001.smt2: edited" in out


def test_a_changed_encoding_makes_replay_fail(exported, tmp_path, monkeypatch):
    """The current code builds a different query (here: every query gets one more, harmless, declaration)
    while the exported files are untouched: replay compares the rebuilt queries (exit 1)."""
    from verifier.engines.smt import pool

    d = _copy(exported[0], tmp_path)
    real = pool.to_smt2
    monkeypatch.setattr(pool, "to_smt2", lambda cons: real(cons) + "(declare-fun changed () Real)\n")
    code, out, err = _cli("replay", str(d / "certificate.json"), "--jobs", "1")
    assert code == 1, out + err
    assert "the current code builds a different query" in out


def test_a_disagreement_is_exit_3_naming_both_solvers(tmp_path, monkeypatch):
    """cvc5 replaced (at the solver registry the workers read) by a double that answers 'sat' to everything:
    the UNSAT queries are disputed, so no 'certified'."""
    for name in ("cvc5", solvers.COVERINGS):  # cvc5 as the double answers, whatever its options
        monkeypatch.setitem(solvers.SOLVERS, name, lambda text, names, timeout, logic, proof=False: Answer("sat", 0.0))
    code, out, err = _cli("certify", "drf", "--property", "sp", "--users", "2", "--resources", "2", "--jobs", "1",
                          "--timeout", "60", "--store", str(tmp_path / "cx"), "--export", str(tmp_path / "e"))
    assert code == 3, out + err
    assert "certified" not in out.replace("not certified", "")
    assert "the solvers disagree: z3 says unsat, cvc5 says sat on Lemma L7" in out
    assert not os.path.exists(tmp_path / "e" / "certificate.json")


@pytest.mark.parametrize("reason", ["cvc5 error: RuntimeError: out of memory", "cvc5: resourceout"])
def test_a_cvc5_failure_is_never_certified(monkeypatch, reason):
    """A cvc5 error or a limit it ran into on any query: not certified (exit 3), whatever the others say."""
    monkeypatch.setitem(solvers.SOLVERS, "cvc5",
                        lambda text, names, timeout, logic, proof=False: Answer("unknown", 0.0, reason=reason))
    res = certify("drf", "sp", shape=Shape(2, 1, 2), timeout=60, jobs=0, method="reduction")
    assert res.verdict == "unknown"
    assert f"cvc5 did not confirm z3: z3 says unsat, cvc5 says unknown ({reason})" in res.note


def _first_incomplete(real):
    """cvc5 as it is, except that the first UNSAT query (its file's comment: ``query (0, None)``) is answered
    ``incomplete``, as cvc5's nonlinear solver does on some of Lemma L8's queries."""
    def solve(text, names, timeout, logic, proof=False):
        if "query (0, None)\n" in text:
            return Answer("incomplete", 0.0, reason="cvc5: incomplete")
        return real(text, names, timeout, logic, proof)
    return solve


def test_an_incomplete_cvc5_leaves_z3s_verdict_and_names_the_gap(monkeypatch):
    """cvc5 incomplete on one of the 5 queries (and no worker to run the coverings retry in): certified by
    z3, the agreement counted exactly -- never ``z3 and cvc5 agree``."""
    monkeypatch.setitem(solvers.SOLVERS, "cvc5", _first_incomplete(solvers.SOLVERS["cvc5"]))
    res = certify("drf", "sp", shape=Shape(2, 1, 2), timeout=60, jobs=0, method="reduction")
    assert res.verdict == "certified", res.note
    assert res.details["agreement"] == "z3; cvc5 agrees on 4 of 5 queries, incomplete on 1: QF_NRA"
    assert "z3 and cvc5 agree" not in res.note and res.note.endswith("incomplete on 1: QF_NRA")
    assert len(res.details["incomplete"]) == 1 and "no coverings retry" in res.details["incomplete"][0]


def _slow_first_coverings(real):
    """cvc5's coverings as they are, except that the first try of the query ``query (0, None)`` (its short
    limit, below 5 s) runs past its limit, as coverings do on some queries: its worker must be killed."""
    def solve(text, names, timeout, logic, proof=False):
        if "query (0, None)\n" in text and timeout < 5:
            import time
            time.sleep(timeout + 30)
        return real(text, names, timeout, logic, proof)
    return solve


def test_coverings_decide_first_and_cvc5s_default_is_not_asked(monkeypatch):
    """With workers, every nonlinear query goes to coverings alone first; when they decide all of them,
    cvc5's default procedure is never run (here it would answer ``unknown``)."""
    monkeypatch.setitem(solvers.SOLVERS, "cvc5", lambda text, names, timeout, logic, proof=False:
                        Answer("unknown", 0.0, reason="not to be asked"))
    res = certify("drf", "sp", shape=Shape(2, 1, 2), timeout=60, jobs=1, method="reduction")
    assert res.verdict == "certified", res.note
    assert res.details["agreement"] == "z3 and cvc5 agree"


def test_coverings_past_their_first_limit_are_killed_and_cvc5s_default_decides(monkeypatch):
    monkeypatch.setitem(solvers.SOLVERS, solvers.COVERINGS, _slow_first_coverings(solvers.SOLVERS[solvers.COVERINGS]))
    res = certify("drf", "sp", shape=Shape(2, 1, 2), timeout=60, jobs=1, method="reduction")
    assert res.verdict == "certified", res.note
    assert res.details["agreement"] == "z3 and cvc5 agree"
    first = next(a for a in res.details["answers"] if a["key"] == "(0, None)")
    assert first["seconds"]["cvc5"] < 25  # killed at its first limit (max(0.5 s, 4 x z3's)), not after 30 s


def test_an_incomplete_answer_is_retried_by_coverings_in_a_worker(monkeypatch):
    """With workers: coverings' first try runs past its short limit (killed), cvc5's default answers
    ``incomplete``, and the retry -- coverings alone with the longer limit (the real solver) -- decides it:
    z3 and cvc5 agree on all 5."""
    monkeypatch.setitem(solvers.SOLVERS, "cvc5", _first_incomplete(solvers.SOLVERS["cvc5"]))
    monkeypatch.setitem(solvers.SOLVERS, solvers.COVERINGS, _slow_first_coverings(solvers.SOLVERS[solvers.COVERINGS]))
    res = certify("drf", "sp", shape=Shape(2, 1, 2), timeout=60, jobs=1, method="reduction")
    assert res.verdict == "certified", res.note
    assert res.details["agreement"] == "z3 and cvc5 agree"
    assert sum(a["answers"]["cvc5"] == a["expected"] for a in res.details["answers"]) == 5


def test_cvc5s_first_pass_runs_ahead_of_the_vacuity_control_and_is_stopped_if_unused(monkeypatch):
    """The full encoding starts cvc5 on its UNSAT queries while it builds the vacuity control
    (``second.Ahead``): used when the verdict is certified, stopped -- no worker process, no thread left --
    when it is not."""
    import multiprocessing
    import threading

    import importlib

    from verifier.engines.smt import second

    certify_module = importlib.import_module("verifier.engines.smt.certify")  # the package exports the function

    started = []
    real_ahead = second.Ahead

    class Spy(real_ahead):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            started.append(self)
    monkeypatch.setattr(second, "Ahead", Spy)
    res = certify(mechanisms.get("tsf-er"), "sp", "demand", Shape(2, 1, 2), timeout=120, method="encoding", jobs=2)
    assert res.verdict == "certified" and res.details["agreement"] == "z3 and cvc5 agree", res.note
    assert len(started) == 1 and started[0].keys  # the queries went ahead
    monkeypatch.setattr(certify_module, "_control", lambda a, *rest: a.done("unknown", "stopped by the test"))
    res = certify(mechanisms.get("tsf-er"), "sp", "demand", Shape(2, 1, 2), timeout=120, method="encoding", jobs=2)
    assert res.verdict == "unknown" and len(started) == 2 and started[1].keys
    assert not multiprocessing.active_children()
    assert not [t for t in threading.enumerate() if t.name == "cvc5-ahead"]


def test_cvc5_decides_the_queries_its_incremental_mode_left_incomplete():
    """A reduced Lemma L8 query of tsf-er on 3 x 3 x 3 + 1 (dominant case (1, 0, 0, 0, 0)), on which cvc5 1.4 in
    incremental mode (its API's default) answers ``unknown (incomplete)``: with ``incremental=false``
    (``solvers.CVC5_OPTIONS``) it is UNSAT, as z3 says."""
    from verifier.engines.smt.goals import goal_of
    from verifier.engines.smt.pool import split_jobs
    from verifier.engines.smt.reduction import reduced_query
    from verifier.engines.smt.specs import get_spec
    from verifier.properties import get_property
    import mechanisms

    spec, goal = get_spec(mechanisms.get("tsf-er")), goal_of(get_property("ef"))
    shape = Shape(3, 3, 3, 1)
    assert spec.normalisation != "dominant"  # one domain case (None), split on the normaliser's mins
    _, ctx = reduced_query(spec, shape, None, True, goal)
    job = next(j for j in split_jobs(0, ctx.cons, (), 60) if j.key[1] == (1, 0, 0, 0, 0))
    text = solvers.smt2_file(job.smt2, logic_of(job.smt2))
    assert solvers.solve("cvc5", text, (), 60, "QF_NRA").status == "unsat"


def test_an_unsupported_fragment_is_certified_by_z3_alone_and_says_so(monkeypatch):
    monkeypatch.setitem(solvers.SOLVERS, "cvc5", lambda text, names, timeout, logic, proof=False:
                        Answer("unsupported", 0.0, reason="cvc5 cannot read the query: test"))
    res = certify("drf", "sp", shape=Shape(2, 1, 2), timeout=60, jobs=0, method="reduction")
    assert res.verdict == "certified"
    assert res.details["agreement"].startswith("z3; cvc5: unsupported fragment QF_NRA")


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.update(queries="none"), "queries"),
    (lambda d: d["queries"][0].update(sha256="x"), "queries.0.sha256"),
    (lambda d: d.pop("request"), "(top level)"),
    (lambda d: d["queries"][0].update(file="../../etc/passwd"), "queries.0.file"),
])
def test_a_malformed_certificate_is_one_line_exit_2(exported, tmp_path, edit, field):
    d = _copy(exported[0], tmp_path)
    p = d / "certificate.json"
    data = json.load(open(p))
    edit(data)
    p.write_text(json.dumps(data))
    code, out, err = _cli("replay", str(p))
    assert code == 2, out + err
    assert len(err.strip().splitlines()) == 1 and field in err, err
    p.write_text("{not json")
    code, out, err = _cli("replay", str(p))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "not JSON" in err


def test_query_export_with_proofs_and_its_replay(tmp_path):
    """drfh PO on examples/000-fig1.json: the allocation is encoded exactly and the instance is concrete, so
    every query is linear (QF_LRA) and cvc5 gives an Alethe proof of each of the 3 UNSAT ones (one query per
    case of the encoding), none for the SAT control."""
    e = tmp_path / "e"
    code, out, err = _cli("query", "drfh", "examples/000-fig1.json", "--property", "po", "--jobs", "1",
                          "--store", str(tmp_path / "cx"), "--export", str(e), "--proofs")
    assert code == 0, out + err
    assert "certified on this instance for space S (z3 and cvc5 agree)" in out
    cert = json.load(open(e / "certificate.json"))
    assert {q["logic"] for q in cert["queries"]} == {"QF_LRA"}
    proofs = [q["proof"] for q in cert["queries"] if q["proof"]]
    assert len(proofs) == sum(q["expected"] == "unsat" for q in cert["queries"]) == 3
    for p in proofs:
        assert open(e / p["file"]).read().lstrip().startswith("(") and p["hole_steps"] == 0
        assert p["check"].startswith("carcara check ")
    assert cert["proof_checker"]["found"] == (shutil.which("carcara") is not None)
    code, out, err = _cli("replay", str(e / "certificate.json"), "--jobs", "1")
    assert code == 0, out + err


def test_proofs_need_export(tmp_path):
    code, out, err = _cli("certify", "drf", "--property", "sp", "--proofs", "--store", str(tmp_path))
    assert code == 2 and err.strip().splitlines() == ["error: --proofs: needs --export DIR (the proofs are written "
                                                      "beside the exported queries)"]


def test_the_json_lists_solvers_versions_and_answers(tmp_path):
    code, out, err = _cli("certify", "drf", "--property", "sp", "--method", "reduction", "--jobs", "1",
                          "--store", str(tmp_path), "--format", "json")
    d = json.loads(out)
    assert code == 0 and d["agreement"] == "z3 and cvc5 agree"
    assert [s["name"] for s in d["solvers"]] == ["z3", "cvc5"] and all(s["version"] for s in d["solvers"])
    assert len(d["answers"]) == 5 and all(a["answers"]["cvc5"] == a["expected"] for a in d["answers"])


@pytest.mark.parametrize("body, logic", [
    ("(declare-fun x () Real)(assert (> (* 2.0 x) 1.0))", "QF_LRA"),  # a constant factor is linear
    ("(declare-fun x () Real)(declare-fun y () Real)(assert (> (* x y) 1.0))", "QF_NRA"),
    ("(declare-fun n () Int)(assert (> (* 3 n) 1))", "QF_LIA"),
    ("(declare-fun n () Int)(declare-fun x () Real)(assert (> (to_real n) x))", "QF_LIRA"),
    ("(declare-fun x () Real)(assert (forall ((y Real)) (> (+ x y) y)))", "LRA"),
    ("(declare-fun f (Real) Real)(assert (> (f 1.0) 1.0))", "QF_UFLRA"),
    ("(declare-fun b () (_ BitVec 4))(assert (= b #x1))", "ALL"),
    # a quotient constant is a constant (z3's probes call it nonlinear); dividing by a variable is not linear
    ("(declare-fun x () Real)(assert (> (* (/ 1.0 3.0) x) (- 1.0)))", "QF_LRA"),
    ("(declare-fun x () Real)(declare-fun y () Real)(assert (> (/ x y) 1.0))", "QF_NRA"),
    # let: a bound constant term keeps a product linear, a bound variable term does not
    ("(declare-fun x () Real)(assert (let ((a!1 (+ 1.0 2.0))) (> (* a!1 x) 1.0)))", "QF_LRA"),
    ("(declare-fun x () Real)(declare-fun y () Real)(assert (let ((a!1 (+ x 1.0))) (> (* a!1 y) 1.0)))", "QF_NRA"),
    # a let inside a let rebinds a name only in its own body
    ("(declare-fun x () Real)(declare-fun y () Real)"
     "(assert (let ((a!1 x)) (and (let ((a!1 2.0)) (> (* a!1 y) 1.0)) (> (* a!1 y) 0.0))))", "QF_NRA"),
    ("(declare-fun x () Real)(declare-fun y () Real)"
     "(assert (let ((a!1 2.0)) (and (let ((a!1 x)) (> (* a!1 1.0) 1.0)) (> (* a!1 y) 0.0))))", "QF_LRA"),
    # quoted symbols with brackets, spaces and parentheses; a comment
    ("(declare-fun |d[u1] (r 2)| () Real)(assert (> |d[u1] (r 2)| 0.0)) ; (* x y)", "QF_LRA"),
    ("(declare-fun x () Real)(assert (> x (root-obj (+ (^ x 2) (- 2)) 1)))", "ALL"),
    ("(declare-fun x () Real)(assert (> x 0.0))(check-sat)", "ALL"),  # a command that is not an assertion
])
def test_the_logic_of_a_query(body, logic):
    assert logic_of(body) == logic


def test_the_logic_of_a_deeply_nested_query():
    """z3 prints shared terms as nested lets; the walk keeps its own stack (no recursion limit)."""
    depth = 20000
    body = "(declare-fun x () Real)(assert " + "".join(f"(let ((a!{i} (+ x 1.0))) " for i in range(depth)) + \
        f"(> (* a!{depth - 1} 2.0) 1.0)" + ")" * depth + ")"
    assert logic_of(body) == "QF_LRA"
    assert logic_of(body.replace("(* a!", "(* x a!")) == "QF_NRA"


def test_the_logic_of_every_query_of_a_certification():
    """The logic read off the text of real queries: tsf-er's full encoding multiplies a level by a demand
    (QF_NRA); a per-instance EF query of drfh is linear (the instance's numbers are constants)."""
    from mechverify.instances import load_environment

    res = certify(mechanisms.get("tsf-er"), "sp", "demand", Shape(users=2, servers=1, resources=2), timeout=120,
                  method="encoding", jobs=0, second=False, keep_queries=True)
    assert res.verdict == "certified", res.note
    assert {ob.logic for ob in res.details["ledger"].obligations} == {"QF_NRA"}
    res = instance_query("drfh", load_environment("examples/000-fig1.json"), "ef", timeout=60, jobs=0,
                         second=False, keep_queries=True)
    assert {ob.logic for ob in res.details["ledger"].obligations} == {"QF_LRA"}


def test_per_instance_sp_is_reproduced_by_cvc5():
    """A misreport query multiplies the symbolic report by the allocation: nonlinear (QF_NRA), and cvc5
    agrees on every query (drfh on examples/000-fig1.json, users symmetric in what is asked)."""
    from mechverify.instances import load_environment

    res = instance_query("drfh", load_environment("examples/000-fig1.json"), "sp", users=[0], timeout=60, jobs=0)
    assert res.verdict == "certified", res.note
    assert res.details["agreement"] == "z3 and cvc5 agree"
    assert {a["logic"] for a in res.details["answers"]} == {"QF_NRA"}
