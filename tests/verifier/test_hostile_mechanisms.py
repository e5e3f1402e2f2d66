"""A user's code is untrusted: mechanisms that loop, sleep, return None or huge numbers, print, call
``sys.exit`` or ``os._exit``, or raise on some calls only (tests/data/hostile.py).  Through the real
command line, each is a finding (property ``runs``, exit 1) or a one-line error, the command ends within
its budget (+10%, plus interpreter start-up), and ``--format json`` stays valid JSON."""
from __future__ import annotations

import json
import os
import time

import pytest

from tests.helpers import ROOT, run_cli

pytestmark = pytest.mark.wallclock  # the commands must end within their budgets

HOSTILE = os.path.join(ROOT, "tests", "data", "hostile.py")
BUDGET = 4.0
QUICK = 2.5  # a mechanism that fails at once needs no per-call limit to pass: the budget only bounds the run
STARTUP = 3.0  # seconds of interpreter start-up and imports allowed beyond the budget's 10% (a loaded CI box)


def _run(fn: str, tmp_path, *extra: str, budget: float = BUDGET):
    t0 = time.monotonic()
    out = run_cli("run", f"{HOSTILE}:{fn}", "--properties", "ef", "--budget", str(budget), "--format", "json",
                  "--jobs", "1", "--store", str(tmp_path / "store"), "--quiet", *extra, timeout=120)
    took = time.monotonic() - t0
    assert took <= budget * 1.1 + STARTUP, (fn, took)
    assert "Traceback" not in out.stderr, out.stderr
    return out, json.loads(out.stdout)  # valid JSON whatever the mechanism printed


def _cell(report: dict, prop: str) -> dict:
    (cell,) = [r for r in report["results"] if r["property"] == prop]
    return cell


@pytest.mark.parametrize("fn, finding", [
    ("loops", "exceeds the time limit (1 s) on this instance"),  # --budget 4: a tenth, at least 1 s
    ("sleeps", "exceeds the time limit (1 s) on this instance"),
    ("returns_none", "MechanismOutputError: returns_none: output: expected a task matrix x[user][server]"),
    ("huge", "is too large (a number of 401 digits)"),
    ("float_overflow", "= inf is not finite"),
    ("huge_denominator", "has a numerator or denominator of more than 4096 bits"),
    ("exits", "called sys.exit(3)"),
    ("hard_exit", "the process exited with code 7"),
    ("prints_then_raises", "RuntimeError: boom [output: about to fail]"),
    ("sometimes", "ValueError: second user demands more"),
])
def test_every_failure_is_a_runs_finding_even_under_properties_ef(fn, finding, tmp_path):
    # calls that hit the 1 s per-call limit need the longer budget to show it; the others fail at once
    out, report = _run(fn, tmp_path, budget=BUDGET if fn in ("loops", "sleeps") else QUICK)
    assert out.returncode == 1, (fn, out.stdout[-500:], out.stderr[-500:])
    runs = _cell(report, "runs")
    assert runs["verdict"] == "violated" and runs["counterexample"], runs
    stored = json.load(open(runs["counterexample"]))
    assert finding in stored["exception"], stored["exception"]
    ef = _cell(report, "ef")
    if fn != "sometimes":  # every call fails: EF says so, never "budget"
        assert ef["verdict"] == "unknown" and ef["note"].startswith("every call failed") and "see runs" in ef["note"]
        assert "budget" not in ef["note"]


def test_printing_never_corrupts_the_output(tmp_path):
    out, report = _run("prints", tmp_path)
    assert "hello from the mechanism" not in out.stdout + out.stderr
    assert _cell(report, "runs")["verdict"] == "not_refuted"


def test_a_timeout_is_stored_as_found_and_replays(tmp_path):
    out, report = _run("sleeps", tmp_path, "--call-limit", "0.5")
    stored = json.load(open(_cell(report, "runs")["counterexample"]))
    assert stored["exception"] == "exceeds the time limit (0.5 s) on this instance"
    assert stored["minimality"]["status"].startswith("not minimised (a call that exceeds the time limit")
    rep = run_cli("replay", _cell(report, "runs")["counterexample"], timeout=120)
    assert rep.returncode == 0, rep.stdout + rep.stderr


def test_check_with_a_looping_mechanism_ends_within_its_budget():
    t0 = time.monotonic()
    out = run_cli("check", f"{HOSTILE}:loops", os.path.join(ROOT, "examples", "001-fig1.json"), "--budget", "5",
                  "--format", "json", timeout=120)
    assert time.monotonic() - t0 <= 5 * 1.1 + STARTUP
    assert out.returncode == 1 and "Traceback" not in out.stderr
    report = json.loads(out.stdout)
    cells = report["results"] if isinstance(report, dict) else report
    runs = [c for c in cells if c["property"] == "runs"]
    assert runs and runs[0]["verdict"] == "violated"


def test_allocate_names_the_failure_in_one_line():
    out = run_cli("allocate", f"{HOSTILE}:exits", os.path.join(ROOT, "examples", "001-fig1.json"), timeout=60)
    assert out.returncode == 1
    assert out.stderr.strip() == "error: the mechanism failed on this instance: called sys.exit(3)"
