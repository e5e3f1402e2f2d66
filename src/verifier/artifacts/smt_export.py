"""The artifact kind SMT export: the queries a certified verdict of ``certify`` / ``query`` rests on, exported
with ``--export DIR`` (docs/z3.md, "Second solver and export"); the only reader and writer of export
directories.

:func:`export` writes every query a certified verdict rests on as an SMT-LIB2 file (``q0001.smt2``, ...;
``set-logic``, declarations, assertions, ``check-sat``), cvc5's proofs beside them (``--proofs``), the
instance of a ``query``, and :data:`EXPORT_FILE` ``certificate.json`` (schema ``certificate.schema.json``,
shipped with the package; the file and schema names are the stored format's): what was certified, how
(method, lemmas), the sha256 of each query, each solver's answer and version, the mechverify commit.
Everything is written atomically (``verifier.files``).

:func:`replay` checks an export against the current code: each file's hash, the queries the current code
builds for the same question (a changed encoding shows as a different hash), and both solvers' answers on
every exported file.  :data:`SMT_EXPORT` is the kind (``verifier.artifacts``).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Optional

from ..files import atomic_write_json, atomic_write_text, json_tag
from ..results import ACCEPTED, MALFORMED, REJECTED, ArtifactResult
from .base import ArtifactKind

__all__ = ["SCHEMA", "EXPORT_FILE", "MalformedExport", "export", "load", "is_export", "replay", "export_schema",
           "PROOF_CHECKER", "SMT_EXPORT"]

SCHEMA = "mechverify.certificate/1"  # the stored format's id (unchanged since the first export)
EXPORT_FILE = "certificate.json"  # what an export directory's description is named

#: the checker of cvc5's Alethe proofs: the command (``{proof}``, ``{query}``: file names) and its program
PROOF_CHECKER = {"format": "alethe", "program": "carcara", "command": "carcara check {proof} {query}"}


class MalformedExport(ValueError):
    """An export's ``certificate.json`` that cannot be read as one: ``why`` names the field (one line)."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path, self.why = path, why


def export_schema() -> dict:
    """The JSON Schema (draft 2020-12) of ``certificate.json``, shipped as ``verifier/certificate.schema.json``."""
    from importlib import resources

    return json.loads(resources.files("verifier").joinpath("certificate.schema.json").read_text(encoding="utf-8"))


def _commit() -> Optional[str]:
    """The git commit of the mechverify checkout this code runs from (``None``: not a git checkout)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and len(sha) == 40 else None


def _version() -> Optional[str]:
    try:
        from importlib.metadata import version

        return version("mechverify")
    except Exception:  # noqa: BLE001 - not installed: no version to record
        return None


def _lemmas(res, command: str, trace: bool = False) -> list:
    """The lemmas the verdict names (method, note, encoding), and for ``certify`` of a shape the domain's
    normalisations L1 (scale) and L2 (units) (a bounded trace certificate's domain is not normalised)."""
    import re

    text = " ".join(str(x) for x in (res.details.get("method", ""), res.note, res.details.get("encoding", "")))
    found = set(re.findall(r"\bL\d+\b", text)) | ({"L1", "L2"} if command == "certify" and not trace else set())
    return sorted(found, key=lambda s: int(s[1:]))


def export(res, directory: str, request: dict, env=None) -> str:
    """Write the export of a certified ``res`` (computed with ``keep_queries=True``) under ``directory``;
    ``request``: the question as asked (``command``, ``timeout``, and ``shape``/``method`` for certify,
    ``users``/``joint`` for query, ``trace`` -- users, rounds, misreports -- for a bounded certificate over
    traces, ``verifier.engines.smt.traces``); ``env``: a query's instance (written
    beside, ``instance.json``).  Returns the path of ``certificate.json``."""
    from ..engines.smt.second import SECOND
    from ..engines.smt.solvers import proof_holes, sha256

    ledger = res.details.get("ledger")
    if res.verdict != "certified" or ledger is None:
        raise ValueError("export: only a certified result computed with keep_queries=True")
    os.makedirs(directory, exist_ok=True)
    title = res.details["title"]  # the first comment line of every query file (``second.second_opinion``)
    queries = []
    checker = dict(PROOF_CHECKER, found=shutil.which(PROOF_CHECKER["program"]) is not None)
    any_proof = False
    for i, ob in enumerate(ledger.obligations, 1):
        name = f"q{i:04d}.smt2"
        text = ob.text(title)
        atomic_write_text(os.path.join(directory, name), text)
        entry = {"file": name, "stage": ob.stage, "role": ob.role, "key": ob.key, "logic": ob.logic,
                 "expected": ob.expected, "sha256": sha256(text), "answers": dict(ob.answers),
                 "seconds": dict(ob.seconds), "proof": None}
        if ob.reasons:
            entry["reasons"] = dict(ob.reasons)
        if ob.proof:
            any_proof = True
            pname = f"q{i:04d}.alethe"
            atomic_write_text(os.path.join(directory, pname), ob.proof)
            entry["proof"] = {"file": pname, "format": "alethe", "sha256": sha256(ob.proof),
                              "hole_steps": proof_holes(ob.proof),
                              "check": checker["command"].format(proof=pname, query=name)}
        queries.append(entry)
    req = dict(request, title=title)
    if env is not None:
        atomic_write_json(os.path.join(directory, "instance.json"), env.to_dict())
        req["instance"] = "instance.json"
    cert = {
        "schema": SCHEMA, "command": request["command"], "mechanism": res.mechanism, "property": res.property,
        "variant": res.variant, "shape": request.get("shape"),
        "domain": res.domain or {"space": res.details.get("space", "")},
        "method": res.details.get("method") or ("per-instance query" if request["command"] == "query" else
                                                "full encoding"),
        "lemmas": _lemmas(res, request["command"], "trace" in request), "verdict": res.verdict, "agreement": res.details.get("agreement"),
        "note": res.note, "request": req,
        "solvers": res.details.get("solvers") or [],
        "mechverify": {"version": _version(), "commit": _commit()},
        "proof_checker": checker if any_proof else None,
        "queries": queries,
    }
    if SECOND not in {s["name"] for s in cert["solvers"]}:
        cert["agreement"] = cert["agreement"] or "z3 only (the second solver was not asked)"
    path = os.path.join(directory, EXPORT_FILE)
    atomic_write_json(path, cert)
    return path


def is_export(path: str) -> bool:
    """Is ``path`` a file meant as an export's description (named ``certificate.json``, or JSON whose
    ``schema`` is an export's)?"""
    if os.path.isfile(path) and os.path.basename(path) == EXPORT_FILE:
        return True
    return json_tag(path, "schema").startswith("mechverify.certificate")


def load(path: str) -> dict:
    """The export's ``certificate.json`` at ``path``, validated against its schema; :class:`MalformedExport`
    (one line naming the field) otherwise."""
    from jsonschema import Draft202012Validator

    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except OSError as exc:
        raise MalformedExport(path, f"cannot read ({exc.strerror})") from None
    except ValueError as exc:
        raise MalformedExport(path, f"not JSON ({exc})") from None
    except RecursionError:
        raise MalformedExport(path, "not a certificate (JSON nested too deep)") from None
    if not isinstance(d, dict):
        raise MalformedExport(path, "a certificate is a JSON object")
    if d.get("schema") != SCHEMA:
        raise MalformedExport(path, f"schema: expected {SCHEMA!r} (got {d.get('schema')!r})")
    errors = sorted(Draft202012Validator(export_schema()).iter_errors(d), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = ".".join(str(p) for p in e.absolute_path) or "(top level)"
        raise MalformedExport(path, f"{where}: {e.message}")
    return d


def _regenerate(cert: dict, directory: str, jobs: Optional[int]):
    """The same question asked of the current code (z3 only: the solvers' answers are checked on the files):
    its result, with the queries it built (``details["ledger"]``)."""
    from mechanisms import get

    from ..engines.smt import Shape, certify, instance_query

    req = cert["request"]
    mech = get(cert["mechanism"])
    timeout = float(req.get("timeout", 600.0))
    if cert["command"] == "certify" and req.get("trace") is not None:  # a bounded certificate over traces
        from ..engines.smt.traces import TraceShape, certify_trace

        return certify_trace(mech, cert["property"], cert["variant"], TraceShape(**req["trace"]), timeout=timeout,
                             jobs=jobs, second=False, keep_queries=True)
    if cert["command"] == "certify":
        return certify(mech, cert["property"], cert["variant"], Shape(**cert["shape"]), timeout=timeout, jobs=jobs,
                       method=req.get("method", "auto"), second=False, keep_queries=True)
    from mechverify.instances import load_environment

    env = load_environment(os.path.join(directory, req["instance"]))
    users = None if req.get("users") is None else [env.users.index(u) for u in req["users"]]
    return instance_query(mech, env, cert["property"], cert["variant"], users=users, timeout=timeout, jobs=jobs,
                          joint=bool(req.get("joint")), second=False, keep_queries=True)


def _result(path: str, status: str, lines: list) -> ArtifactResult:
    """An export's replay: accepted or rejected (an ``ok`` / ``FAIL`` report line per finding), or malformed
    (its one line on stderr)."""
    if status == MALFORMED:
        return ArtifactResult(SMT_EXPORT.name, path, status, tuple(lines), tuple(f"error: {path}: {x}" for x in lines))
    tag = "ok  " if status == ACCEPTED else "FAIL"
    return ArtifactResult(SMT_EXPORT.name, path, status, tuple(lines), tuple(f"{tag} {path}: {x}" for x in lines))


def replay(path: str, jobs: Optional[int] = None) -> ArtifactResult:
    """Check the export whose ``certificate.json`` is ``path`` (:func:`load` first: a malformed one is
    ``malformed``, one line naming the field): (1) every exported file has the recorded sha256; (2) the current
    code, asked the same question, builds each exported query byte for byte and rests its verdict on no query
    the export lacks, and still certifies; (3) z3 and cvc5 give every exported file the answer it needs.
    ``jobs``: the solvers' worker processes (default: the CPU count)."""
    from ..engines.smt.pool import Job, run_jobs
    from ..engines.smt.second import EXPECTED, SECOND, Ask, Obligation, ask_cvc5
    from ..engines.smt.solvers import sha256

    try:
        cert = load(path)
    except MalformedExport as exc:
        return _result(path, MALFORMED, [exc.why])
    directory = os.path.dirname(os.path.abspath(path))
    failed: list = []

    def fail(line: str) -> None:
        failed.append(line)

    texts = {}
    for q in cert["queries"]:
        fp = os.path.join(directory, q["file"])
        try:
            with open(fp, encoding="utf-8") as fh:
                texts[q["file"]] = fh.read()
        except OSError as exc:
            fail(f"{q['file']}: missing ({exc.strerror})")
            continue
        if sha256(texts[q["file"]]) != q["sha256"]:
            fail(f"{q['file']}: edited (its sha256 is not the certificate's)")
    if cert["command"] == "query" and not os.path.isfile(os.path.join(directory, cert["request"].get("instance", ""))):
        fail(f"{cert['request'].get('instance')}: missing (the instance of the query)")
        return _result(path, REJECTED, failed)
    res = _regenerate(cert, directory, jobs)
    if res.verdict != "certified":
        fail(f"the current code does not certify it: {res.verdict} ({res.note})")
    ledger = res.details.get("ledger")
    if ledger is not None:
        title = cert["request"]["title"]
        for q in cert["queries"]:
            body = ledger.plan.get((q["stage"], q["role"], q["key"]))
            if body is None:
                fail(f"{q['file']}: the current code no longer builds this query ({q['stage']} {q['role']} {q['key']})")
            elif sha256(Obligation(q["stage"], q["role"], q["key"], body).text(title)) != q["sha256"]:
                fail(f"{q['file']}: the current code builds a different query ({q['stage']} {q['role']} {q['key']})")
        have = {(q["stage"], q["role"], q["key"]) for q in cert["queries"]}
        lacking = [ob for ob in ledger.obligations if ob.role != "control" and (ob.stage, ob.role, ob.key) not in have]
        if res.verdict == "certified" and lacking:
            fail(f"the current code's verdict rests on {len(lacking)} query(ies) the certificate lacks (first: "
                 f"{lacking[0].stage} {lacking[0].role} {lacking[0].key})")
    recorded = {q["file"]: q for q in cert["queries"]}
    runnable = [q for q in cert["queries"] if q["file"] in texts]
    timeout = float(cert["request"].get("timeout", 600.0))
    logic = {q["file"]: "" if q["logic"] == "ALL" else q["logic"] for q in runnable}
    answers: dict = {}
    n_jobs = jobs if jobs is not None else _default_jobs()
    for r in run_jobs([Job((q["file"], "z3"), texts[q["file"]], (), timeout=timeout, logic=logic[q["file"]])
                       for q in runnable], n_jobs):
        answers[r.key] = (r.status, r.reason)
    # cvc5 as when the certificate was made: coverings first, its default, the retry of 'incomplete' (second.py)
    asks = [Ask((q["file"], SECOND), texts[q["file"]], logic[q["file"]],
                hint=float((q.get("seconds") or {}).get("z3", 0.0))) for q in runnable]
    for key, rep in ask_cvc5(asks, n_jobs, None, timeout).items():
        answers[key] = (rep.status, rep.reason)
    for q in runnable:
        need = EXPECTED[q["role"]]
        for s in ("z3", SECOND):
            st, why = answers.get((q["file"], s), ("unknown", "not run"))
            if st == need:
                continue
            if s == SECOND and st in ("unsupported", "incomplete") and recorded[q["file"]]["answers"].get(SECOND) == st:
                continue  # certified by z3 with this gap named, as the certificate says
            fail(f"{q['file']}: {s} says {st}{f' ({why})' if why else ''}, the verdict needs {need} "
                 f"(z3 says {answers.get((q['file'], 'z3'), ('?',))[0]}, {SECOND} says "
                 f"{answers.get((q['file'], SECOND), ('?',))[0]})")
    if failed:
        return _result(path, REJECTED, failed)
    return _result(path, ACCEPTED, [f"{len(runnable)} queries: every file as exported, rebuilt identically by the "
                                    f"current code, and answered as the verdict needs by z3 and {SECOND}; "
                                    f"{cert['verdict']} ({cert['mechanism']} {cert['property']}/{cert['variant']})"])


def _default_jobs() -> int:
    from ..engines.smt.pool import default_jobs

    return default_jobs()


class _SmtExport(ArtifactKind):
    """Exports of ``certify`` / ``query --export DIR``, named by their ``certificate.json``: each replayed in
    turn (:func:`replay`); a malformed one stops the replay (exit 2) after those before it were reported."""

    name = "smt-export"
    mixed = "paths: certificates and counterexamples are replayed separately"
    quiet_hides_accepted = False  # --quiet has never left out an export's lines

    def recognise(self, path: str) -> bool:
        return is_export(path)

    def replay(self, path: str, *, jobs: Optional[int] = None) -> ArtifactResult:
        return replay(path, jobs=jobs)

    def summary(self, results: list) -> str:
        bad = sum(not r.ok for r in results)
        return f"{len(results) - bad} certificate(s) hold, {bad} do not"


#: the kind (``verifier.artifacts``)
SMT_EXPORT = _SmtExport()
