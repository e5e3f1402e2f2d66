"""A user's mechanism through every path: ``allocate``/``check``/``run``/``replay`` on a file reference,
a float implementation whose only "violations" are float noise, a crashing one (kind "crash"), the
stored reference and source hash, and ``certify``'s clean refusal."""
from __future__ import annotations

import json
import os
import shutil
import textwrap
from fractions import Fraction

import mechverify
from mechanisms import get
from mechanisms.core.references import from_function
from verifier.run import run_mechanism
from verifier.store import find_files, replay

from tests.helpers import ROOT, run_cli
from verifier.config import RunConfig

GREEDY = "examples/my_mechanisms.py:greedy"
FIG1 = "examples/001-fig1.json"


def test_allocate_and_check_a_file_reference():
    out = run_cli("allocate", GREEDY, FIG1)
    assert out.returncode == 0, out.stderr
    # 001 Fig. 1: s1 = (2 CPU, 12 GB), s2 = (12 CPU, 2 GB); u1 demands (1/5, 1), u2 (1, 1/5): u1 takes
    # min(2/(1/5), 12/1) = 10 tasks on s1 and min(12/(1/5), 2/1) = 2 on s2, leaving u2 nothing usable
    assert [line.split() for line in out.stdout.splitlines()[1:]] == [["user", "s1", "s2", "total"],
                                                                      ["u1", "10", "2", "12"], ["u2", "0", "0", "0"]]
    out = run_cli("check", GREEDY, FIG1, "--properties", "ef,si")
    assert out.returncode == 1, out.stdout + out.stderr  # violated on this instance: --fail-on violated
    assert "REFUTED" in out.stdout


def test_run_finds_stores_and_replays_the_refutations(tmp_path):
    store = tmp_path / "store"
    out = run_cli("run", GREEDY, "--properties", "sp,ef,si", "--trials", "300", "--store", str(store))
    assert out.returncode == 1, out.stdout + out.stderr  # claims REFUTED
    assert "!! ef/placement-aware" in out.stdout and "!! si/per-server-split" in out.stdout
    files = find_files([str(store)])
    assert {json.load(open(f))["property"] for f in files} == {"ef", "si"}
    d = json.load(open(files[0]))
    prov = d["provenance"]
    assert prov["mechanism_reference"] == GREEDY and len(prov["source_sha256"]) == 64
    assert prov["mechanism_file"] == os.path.join(ROOT, "examples", "my_mechanisms.py") + ":greedy"
    out = run_cli("replay", str(store))
    assert out.returncode == 0 and "2 passed, 0 failed" in out.stdout, out.stdout


def test_replay_says_when_the_source_changed_or_is_gone(tmp_path):
    src = tmp_path / "mine.py"
    shutil.copy(os.path.join(ROOT, "examples", "my_mechanisms.py"), src)
    store = str(tmp_path / "store")
    report = run_mechanism(get(f"{src}:greedy"), ["ef"], RunConfig(budget=20, trials=200, store=store))
    # a user's mechanism: runs/any is searched first (greedy never fails), then ef
    assert [(r.property, r.verdict) for r in report.results] == [("runs", "not_refuted"), ("ef", "violated")]
    (path,) = find_files([store])
    assert replay(path).ok and "changed" not in replay(path).message
    src.write_text(src.read_text() + "\n# edited\n")
    r = replay(path)
    assert r.ok and "changed since it was stored" in r.message  # same numbers, but the user is told
    src.unlink()
    r = replay(path)
    assert not r.ok and "cannot load the mechanism it was stored with" in r.message


def _drf_perturbed(rel):
    drf = get("drf")

    @mechverify.mechanism(name=f"drf-noise-{rel:g}", single_server=True, positive_data=True,
                          claims={"sp": "holds", "ef": "holds", "si": "holds", "po": "holds"})
    def f(env):
        x = drf(env, exact=True).x
        # every other user gets rel more, the others rel less: float noise of an exact mechanism
        return [[float(v) * (1 + rel * (1 if j % 2 else -1)) for v in row] for j, row in enumerate(x)]

    return from_function(f)


def test_float_noise_is_never_a_violation_and_real_errors_are():
    noisy = _drf_perturbed(1e-12)
    report = run_mechanism(noisy, ["sp", "ef", "si", "po"], RunConfig(budget=60, trials=150, store=None))
    assert [r.verdict for r in report.results] and all(r.verdict != "violated" for r in report.results), report
    # the same mechanism off by 1e-3 (far above the 1e-9 tolerance) is caught, with the margin stated
    wrong = _drf_perturbed(1e-3)
    report = run_mechanism(wrong, ["ef"], RunConfig(budget=60, trials=150, store=None))
    runs, r = report.results  # runs/any first: a user's mechanism is always searched for failures
    # 1e-3 more for every other user overfills the pool by far more than the tolerance: invalid output
    assert runs.property == "runs" and runs.verdict == "violated" and "not feasible" in runs.certificate.exception
    assert r.verdict == "violated" and r.refuted
    assert r.certificate.as_written["relative_margin"] > Fraction(1, 10 ** 9)
    assert r.certificate.margin_text().startswith("for the implementation as written, margin ")


def test_a_crash_is_a_finding_minimised_stored_and_replayed(tmp_path):
    store = tmp_path / "store"
    out = run_cli("run", "examples/my_mechanisms.py:fragile", "--properties", "runs", "--trials", "300",
                  "--store", str(store))
    assert out.returncode == 1, out.stdout + out.stderr  # a crash fails the run like a refuted claim
    (path,) = find_files([str(store)])
    d = json.load(open(path))
    assert d["kind"] == "crash" and d["exception"].startswith("ZeroDivisionError")
    # minimal: fragile divides by every demand entry; one user with one zero entry (a user must demand
    # something, so two resources) on one server
    assert (len(d["environment"]["users"]), len(d["environment"]["servers"]),
            len(d["environment"]["resources"])) == (1, 1, 2)
    assert replay(path).ok


def test_certify_and_query_refuse_a_users_mechanism_in_one_line():
    for args in (("certify", GREEDY, "--property", "sp"), ("query", GREEDY, FIG1)):
        out = run_cli(*args)
        assert out.returncode == 2
        assert out.stderr.strip().splitlines()[-1].endswith("'run' and 'check' audit any mechanism")
        assert "not covered: no z3 encoding" in out.stderr


def test_tolerance_flag():
    out = run_cli("check", "drf", "examples/004-fig2.json", "--tolerance", "1e-6")
    assert out.returncode == 2 and "--tolerance: applies to a user's mechanism" in out.stderr
    out = run_cli("check", GREEDY, FIG1, "--tolerance", "2")
    assert out.returncode == 2 and "--tolerance: expected a number in [0, 1)" in out.stderr


def test_audit_and_parallel_run_take_a_reference(tmp_path):
    store = tmp_path / "store"
    out = run_cli("audit", "--mechanisms", GREEDY, "--properties", "ef,si", "--trials", "100", "--store", str(store))
    assert out.returncode == 1, out.stdout + out.stderr  # REFUTED claims
    assert "## greedy (examples/my_mechanisms.py:greedy) -- its claims" in out.stdout
    assert "| ef | ✓ → **REFUTED** |" in out.stdout
    # two worker processes load the file by its reference (and keep --tolerance)
    out = run_cli("run", GREEDY, "--properties", "ef", "--trials", "100", "--jobs", "2", "--tolerance", "1e-6",
                  "--store", str(store))
    assert out.returncode == 1 and "!! ef/placement-aware" in out.stdout, out.stdout + out.stderr
