"""Exit codes a CI job can use (README "Exit codes"), and a failing property attributed to itself.

``run``, ``check``, ``audit`` and ``rates``: 1 (a violation, a failing mechanism or a failing property) over 3
(solver trouble) over 4 (nothing decided: every judged cell unknown -- 'not applicable' and 'not searched'
decide nothing --, or with ``--strict`` any cell unknown) over 0; the reason for 3 and 4 is one stderr line."""
from __future__ import annotations

import argparse
import json
import os
import textwrap

import mechverify
from tests.helpers import ROOT, run_cli
from verifier.cli.common import EXIT_UNDECIDED, FailOn, results_exit
from verifier.results import Result, Verdict

FIG1 = os.path.join(ROOT, "examples", "001-fig1.json")
RAISES = textwrap.dedent('''
    def raises(env, alloc):
        """Margin of nothing: this property's own code is broken."""
        raise RuntimeError("boom in my property")
''')


def _raising(tmp_path):
    f = tmp_path / "their.py"
    f.write_text(RAISES)
    return f"{f}:raises"


def test_check_blames_a_raising_property_not_the_mechanism_and_keeps_the_others(tmp_path):
    out = run_cli("check", "drfh", FIG1, "--properties", f"ef,{_raising(tmp_path)}", "--format", "json")
    assert out.returncode == 1, out.stderr
    rows = {(r["property"], r["variant"]): r for r in json.loads(out.stdout)["results"]}
    assert rows[("ef", "placement-aware")]["verdict"] == "satisfied"  # DRFH on fig. 1 is envy-free (the paper's claim)
    bad = rows[("raises", "default")]
    assert bad["verdict"] == "unknown" and "boom in my property" in bad["property_failure"]["text"]
    assert bad["property_failure"]["instance"]["users"]  # the instance it failed on
    text = run_cli("check", "drfh", FIG1, "--properties", f"ef,{_raising(tmp_path)}")
    words = " ".join(text.stdout.split())  # the table wraps at the terminal's width, wherever the path ends
    assert text.returncode == 1 and "THE PROPERTY FAILED" in words and "mechanism failed" not in words
    assert "boom in my property" in words and "ef" in words, text.stdout


def test_run_reports_a_raising_property_with_the_instance_and_keeps_the_others(tmp_path):
    # sharing incentive holds for DRF (seed 000's claim): the exit 1 is the failing property's alone
    out = run_cli("run", "drf", "--properties", f"si,{_raising(tmp_path)}", "--trials", "200", "--budget", "60", "--no-store",
                  "--format", "json")
    assert out.returncode == 1, out.stderr
    rows = {r["property"]: r for r in json.loads(out.stdout)["results"]}
    assert rows["si"]["verdict"] == "not_refuted" and "property_failure" not in rows["si"]
    bad = rows["raises"]
    assert "boom in my property" in bad["property_failure"]["text"]
    mechverify.instance(bad["property_failure"]["instance"])  # a real instance, parsed back


def test_the_api_attributes_a_raising_property_too(tmp_path):
    results = mechverify.check("drfh", FIG1, ["ef", _raising(tmp_path)])
    by = {r.property: r for r in results}
    assert by["ef"].verdict == "satisfied" and not by["ef"].property_failed
    assert by["raises"].property_failed and not by["raises"].mechanism_failed


def test_a_property_returning_garbage_is_its_own_failure(tmp_path):
    f = tmp_path / "garbage.py"
    f.write_text("def words(env, alloc):\n    return 'not a margin'\n")
    (r,) = [r for r in mechverify.check("drfh", FIG1, f"{f}:words") if r.property == "words"]
    assert r.property_failed and "not a number" in r.property_failure and r.verdict == "unknown"


def test_run_that_decides_nothing_exits_4_with_one_line():
    out = run_cli("run", "drf", "--budget", "1e-9", "--no-store")
    assert out.returncode == EXIT_UNDECIDED, (out.returncode, out.stderr)
    assert out.stderr.strip().splitlines()[-1].startswith("nothing decided: ")  # after the progress lines


def test_check_of_only_inapplicable_properties_decides_nothing():
    # hsi reads a queue tree; fig. 1 has none: 'not applicable' is no decision
    out = run_cli("check", "drfh", FIG1, "--properties", "hsi")
    assert out.returncode == EXIT_UNDECIDED and out.stderr.startswith("nothing decided: "), out.stderr


def _r(verdict, **kw):
    r = Result("m", "p", "v", verdict)
    for k, v in kw.items():
        setattr(r, k, v)
    return r


def test_precedence_one_over_three_over_four_over_zero(capsys):
    args = argparse.Namespace(fail_on=FailOn.VIOLATED, strict=False)
    sat, unk = _r(Verdict.SATISFIED), _r(Verdict.UNKNOWN)
    trouble = _r(Verdict.UNKNOWN, solver_trouble="HiGHS: model status Unknown")
    assert results_exit(args, [_r(Verdict.VIOLATED), trouble, unk]) == 1
    assert results_exit(args, [sat, trouble]) == 3
    assert results_exit(args, [unk, _r(Verdict.NOT_APPLICABLE)]) == 4
    assert results_exit(args, [sat, unk]) == 0  # something was decided
    assert results_exit(argparse.Namespace(fail_on=FailOn.VIOLATED, strict=True), [sat, unk]) == 4
    assert results_exit(args, [sat, _r(Verdict.NOT_REFUTED)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [ln.split(":")[0] for ln in err] == ["solver error", "nothing decided", "--strict"]


def test_strict_is_a_flag_of_run_check_audit_and_rates(capsys):
    import pytest

    from verifier.cli.main import main

    for cmd in ("run", "check", "audit", "rates"):
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0 and "--strict" in capsys.readouterr().out, cmd


def test_rates_that_evaluates_nothing_exits_4():
    out = run_cli("rates", "drf", "--workload", "uniform", "--properties", "ef", "--budget", "1e-9", "--quiet")
    assert out.returncode == EXIT_UNDECIDED, (out.returncode, out.stdout, out.stderr)
    assert out.stderr.strip().splitlines()[-1].startswith("nothing decided: ")


def test_audit_marks_a_failing_property_and_exits_1(tmp_path):
    out = run_cli("audit", "--mechanisms", "drf", "--properties", f"{_raising(tmp_path)},si", "--trials", "20",
                  "--budget", "60", "--store", str(tmp_path / "store"), "--quiet", timeout=300)
    assert out.returncode == 1, out.stderr
    assert "| raises | – → unknown (**the property failed**: its own code) |" in out.stdout
    assert "boom in my property" in out.stdout and "| si |" in out.stdout  # si still judged


def test_rates_counts_a_failing_property_apart_and_exits_1(tmp_path):
    out = run_cli("rates", "drf", "--workload", "uniform", "--servers", "1", "--properties",
                  f"{_raising(tmp_path)},si", "--samples", "5", "--quiet")
    assert out.returncode == 1, out.stderr
    assert "!! drf raises/default: THE PROPERTY FAILED (its own code, not the mechanism) on 5 instance(s)" in out.stdout
    assert "drf        si/per-server-split" in out.stdout  # si was still evaluated
