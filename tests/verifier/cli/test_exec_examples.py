"""The policies in other languages of examples/exec/ audited end to end from the CLI (docs/exec-protocol.md):
the JavaScript equal split (node) and the Java DRF (javac/java, compiled here into a temporary folder), a
correct policy and a planted bug the search finds.  Skipped, with the reason, where the toolchain is absent
-- and FAILING instead when ``CI=true``: CI must run them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from fractions import Fraction as F

import pytest

import mechverify as mv
from mechanisms import get

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
JS = "exec:node examples/exec/js/policy.js"


def needs(*tools: str) -> None:
    """Skip (CI: fail) unless every tool is on PATH."""
    missing = [t for t in tools if shutil.which(t) is None]
    if not missing:
        return
    why = f"{', '.join(missing)} not installed: the exec examples need {' and '.join(tools)}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {why}")
    pytest.skip(why)


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    return subprocess.run([sys.executable, "-m", "verifier", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def java_classes(tmp_path_factory) -> str:
    """examples/exec/java/DrfPolicy.java compiled into a temporary folder."""
    needs("javac", "java")
    out = tmp_path_factory.mktemp("drf-classes")
    subprocess.run(["javac", "-d", str(out), os.path.join(ROOT, "examples", "exec", "java", "DrfPolicy.java")],
                   check=True, timeout=300)
    return str(out)


def test_needs_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true: no-such-tool-37 not installed"):
        needs("no-such-tool-37")
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception):
        needs("no-such-tool-37")


# ------------------------------------------------------------------------------------- JavaScript (node)
def test_the_js_equal_split_allocates_as_derived_by_hand(monkeypatch):
    """examples/000-fig1.json, J = 2 users: x[j][s] = min over the resources j demands of c[s][r] / (2 d[j][r]).
    s1 = (9, 12, 100): u1 (1, 2, 10): min(9/2, 12/4, 100/20) = 3; u2 (1, 2, 0): min(9/2, 12/4) = 3.
    s2 = (12, 12, 0): u1 demands bw, s2 has none: 0; u2: min(12/2, 12/4) = 3."""
    needs("node")
    monkeypatch.chdir(ROOT)
    alloc = mv.allocate(JS, "examples/000-fig1.json")
    assert alloc.x == ((3, 0), (3, 3))  # JavaScript writes the float 3.0 as "3": a JSON integer, exact


def test_check_the_js_policy_from_the_cli():
    """Its claims hold where the equal split keeps them and its claimed PO failure is found (an equal split
    leaves u2's second server half idle: 000-fig1's PO witness raises u2 from 6 to 9 tasks)."""
    needs("node")
    p = cli("check", JS, "examples/000-fig1.json")
    assert p.returncode == 1, p.stderr  # violations found (po, bf): exit 1
    lines = p.stdout.splitlines()
    assert lines[0] == "equal-split-js on examples/000-fig1.json (2 users x 2 servers x 3 resources)"
    row = {ln.split()[0]: ln for ln in lines if ln.startswith("  ") and not ln.startswith("   ")}
    assert "VIOLATED" in row["po/fractional"] and "u2 6->9" in p.stdout
    assert "(claimed fails [examples/exec/js/policy.js])" in p.stdout
    for cell in ("runs/any", "ef/placement-aware", "si/per-server-split"):
        assert "satisfied on this instance (exact check)" in row[cell], row[cell]
    assert "no violation found" in row["sp/demand"]


# ------------------------------------------------------------------------------------------------- Java
def test_the_java_drf_is_the_registered_drf(java_classes):
    """Ghodsi et al.'s example (seed 000 Sec. II-A): c = (9 CPU, 18 GB); u1 (1, 4), u2 (3, 1).  Dominant
    shares per task 4/18 = 2/9 and 3/9 = 1/3; t = min(9 / (1/(2/9) + 3/(1/3)), 18 / (4/(2/9) + 1/(1/3))) =
    min(9/13.5, 18/21) = 2/3: u1 runs (2/3)/(2/9) = 3 tasks, u2 (2/3)/(1/3) = 2 -- the registered drf's too."""
    env = mv.environment({"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": ["9", "18"]}],
                          "users": [{"name": "u1", "demand": ["1", "4"]}, {"name": "u2", "demand": ["3", "1"]}]})
    m = get(f"exec:java -cp {java_classes} DrfPolicy")
    assert m.name == "drf-java" and m.setting.single_server and m.setting.positive_data
    assert m(env, exact=True).x == ((F(3),), (F(2),)) == get("drf")(env, exact=True).x
    odd = mv.environment({"resources": ["a", "b", "c"], "servers": [{"name": "s", "capacity": ["7/2", "5", "11/3"]}],
                          "users": [{"name": f"u{j}", "demand": [f"{j + 1}/3", f"{2 * j + 1}/5", "1/7"]}
                                    for j in range(3)]})
    assert m(odd, exact=True).x == get("drf")(odd, exact=True).x


def test_run_the_java_drf_from_the_cli_finds_no_violation(java_classes):
    p = cli("run", f"exec:java -cp {java_classes} DrfPolicy", "--trials", "100", "--budget", "60", "--no-store",
            "--quiet")  # a reproducible amount of work (100 candidates a cell), the budget a guard
    assert p.returncode == 0, p.stdout + p.stderr
    assert "mechanism: drf-java -- Dominant Resource Fairness on one resource pool (Java, exact rationals)" in p.stdout
    assert "no claim was refuted in this run" in p.stdout
    assert " violated " not in p.stdout and "REFUTED" not in p.stdout


def test_run_the_planted_bug_finds_and_replays_its_violation(java_classes, tmp_path):
    store = str(tmp_path / "store")
    p = cli("run", f"exec:java -cp {java_classes} DrfPolicy --cpu-only", "--properties", "si", "--trials", "150", "--budget", "60",
            "--store", store, "--quiet")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "si/per-server-split" in p.stdout and "REFUTED" in p.stdout
    (stored,) = os.listdir(os.path.join(store, "drf-java-cpu-only"))
    r = cli("replay", store)
    assert r.returncode == 0 and r.stdout.startswith("ok ") and "violation confirmed exactly" in r.stdout, r.stdout
