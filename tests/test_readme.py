"""The README's 'Audit your own mechanism' section works as printed: its mechanism is the one in
``examples/my_mechanisms.py`` (so they cannot drift apart), the Python route refutes the EF and SI claims
it makes, and its pytest example fails with the counterexample (greedy is not envy-free: 2 users x 1 server
x 1 resource, the first user takes everything)."""
from __future__ import annotations

import os
import re

import pytest

from tests.helpers import ROOT


def _section(heading: str = "Audit your own mechanism") -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        return fh.read().split(f"## {heading}", 1)[1].split("\n## ", 1)[0]


def test_readme_mechanism_is_the_example_file():
    code = re.findall(r"```python\n(.*?)```", _section(), re.S)[0]
    with open(os.path.join(ROOT, "examples", "my_mechanisms.py"), encoding="utf-8") as fh:
        assert code.split("\n\n\n", 1)[1].strip() in fh.read()


def test_readme_python_and_pytest_routes(tmp_path, monkeypatch):
    import mechverify as mv

    blocks = re.findall(r"```python\n(.*?)```", _section(), re.S)
    ns: dict = {"__name__": "readme"}
    exec(compile(blocks[0], "README.md", "exec"), ns)
    report = mv.run(ns["greedy"], ["ef", "si"], budget=20, trials=200, store=str(tmp_path / "store"))
    # (runs/any is searched first for a user's mechanism whichever properties are named: it refutes nothing)
    assert [r.refuted for r in report.results if r.property != "runs"] == [True, True], report
    assert os.listdir(tmp_path / "store" / "greedy")
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[1], "README.md", "exec"), ns)
    with pytest.raises(AssertionError, match="greedy violates ef/placement-aware"):
        ns["test_greedy_is_envy_free"]()


def test_readme_policy_is_the_example_file():
    code = re.findall(r"```python\n(.*?)```", _section("Audit your scheduler's policy"), re.S)[0]
    with open(os.path.join(ROOT, "examples", "my_policy.py"), encoding="utf-8") as fh:
        assert code.strip() in fh.read()


def test_readme_policy_run_gives_verdicts():
    """``run examples/my_policy.py:fewest_tasks`` as the section prints it, with a reproducible amount of
    work (nothing stored): a verdict for every property; with 150 trials a cell (a budget
    that does not bind) both made-up claims are refuted."""
    import json
    import subprocess
    import sys

    section = _section("Audit your scheduler's policy")
    assert "python -m verifier run examples/my_policy.py:fewest_tasks --budget 10" in section
    p = subprocess.run([sys.executable, "-m", "verifier", "run", "examples/my_policy.py:fewest_tasks", "--budget", "60",
                        "--trials", "150", "--no-store", "--quiet", "--format", "json"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    rep = json.loads(p.stdout)
    assert {r["property"] for r in rep["results"]} >= {"sp", "ef", "si", "po", "bf"}
    assert all(r["verdict"] in ("violated", "not_refuted") for r in rep["results"]), rep["results"]
    assert "ef/whole-task" in rep["refuted"] and set(rep["refuted"]) <= {"sp/demand", "ef/whole-task"}
