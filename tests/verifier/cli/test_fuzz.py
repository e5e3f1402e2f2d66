"""Fuzzing the instance format through ``allocate``, ``check`` and ``replay`` (the harness is
``benchmarks/fuzz_instances.py``; its 10^4-case run is on demand).  Here: a few hundred cases
in-process, every one must end without a traceback, within the time limit, with a meaningful exit
code and, for exit 2, exactly one ``error: <field>: ...`` line.  Then regression tests for what the
harness found (a damaged counterexample file crashed replay's re-check; a misreport ``"1e999999"``
would have built a million-digit integer; a name with a lone surrogate crashed printing the table)."""
from __future__ import annotations

import importlib.util
import json
import os
import time
from collections import Counter, defaultdict

import pytest

from mechverify.instances import instance_number
from mechverify.numbers import InstanceError
from tests.helpers import ROOT


def _harness():
    spec = importlib.util.spec_from_file_location("fuzz_instances", os.path.join(ROOT, "benchmarks",
                                                                                "fuzz_instances.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


fuzz = _harness()
CASES = 600


def test_fuzz_cases(tmp_path):
    """Every case ends as the harness requires; together they reach every mutation kind and every meaningful
    exit code.  One test: the coverage is of all the cases, whichever process of a parallel run ran them."""
    seen: dict[str, Counter] = defaultdict(Counter)
    failures = []
    for i in range(CASES):
        case = fuzz.make_case(1, i)
        res = fuzz.run_case(case, str(tmp_path))
        seen["kinds"].update(res["kinds"])
        for cmd, code in res["codes"].items():
            seen[cmd][code] += 1
        failures += [f"case {i} ({case['kinds']}, {case['mechanism']}) {f['command']}: {f['why']}"
                     for f in res["failures"]]
    assert not failures, "\n".join(failures)
    assert set(seen["kinds"]) == set(fuzz.MUTATIONS) | {"none"}, seen["kinds"]
    assert {0, 2} <= set(seen["allocate"]) and {0, 1, 2} <= set(seen["check"]), seen
    assert {0, 1} <= set(seen["replay"]) and {0, 1} <= set(seen["batch"]) and {0, 2} <= set(seen["stdin"]), seen
    assert seen["allocate"][0] >= CASES // 10, seen  # enough cases reach the mechanisms


def test_cases_are_deterministic():
    assert fuzz.make_case(7, 123) == fuzz.make_case(7, 123)
    assert fuzz.make_case(7, 123)["instance"] != fuzz.make_case(7, 124)["instance"]


def test_judge_flags_what_is_not_one_error_line():
    ok = {"traceback": None, "code": 2, "stdout": "", "stderr": "error: users[0].demand: missing\n"}
    assert fuzz.judge("allocate", ok) is None
    assert "exactly one" in fuzz.judge("allocate", dict(ok, stderr="error: a: b\nmore\n"))
    assert "names no field" in fuzz.judge("allocate", dict(ok, stderr="error: something broke\n"))
    assert "exit code" in fuzz.judge("allocate", dict(ok, code=1))
    assert fuzz.judge("check", dict(ok, traceback="Traceback ...\nZeroDivisionError: x")).startswith("traceback")
    assert "hid a crash" in fuzz.judge("replay", dict(ok, code=1, stderr="", stdout=(
        "FAIL cx/a.json: error while re-checking: TypeError: 'int' object is not iterable\n0 passed, 1 failed\n")))


# ---------------------------------------------------------------------- what the harness found
def _stored(name: str) -> dict:
    with open(os.path.join(ROOT, "counterexamples", name), encoding="utf-8") as fh:
        return json.load(fh)


SP_FILE = "cru/sp-39440cb8ef67.json"  # a misreport: deviation {"kind": "misreport", "reports": [...]}


@pytest.mark.parametrize("deviation, field", [
    (7, "deviation: expected an object"),
    ([1], "deviation: expected an object"),
    ({"kind": "misreport", "reports": True}, "deviation.reports: expected a list"),
    ({"kind": "misreport", "reports": [3]}, "deviation.reports[0]: expected an object"),
    ({"kind": "misreport", "reports": [{"user": ["u1"]}]}, "deviation.reports[0].user: unknown user"),
    ({"kind": "leave", "users": 5}, "deviation.users: expected a list of user names"),
    ({"kind": "leave", "users": [{}]}, "deviation.users: expected a list of user names"),
])
def test_damaged_deviation_is_one_line_naming_the_field(deviation, field):
    """Found by the harness: a stored file whose deviation is not an object crashed the re-check
    (``AttributeError: 'list' object has no attribute 'get'``), which replay could only report as a
    Python error."""
    from verifier.properties import Deviation
    from verifier.store import witness_from

    d = _stored(SP_FILE)
    env = witness_from(d).env
    with pytest.raises(InstanceError) as e:
        Deviation.from_dict(deviation, env)
    assert str(e.value).startswith(field) and "\n" not in str(e.value), e.value


@pytest.mark.parametrize("value", ["1e999999", "1e-999999", "9" * 101, 10 ** 500])
def test_misreport_number_is_not_built_when_absurd(value):
    """A stored misreport's number goes through the instance format's cost guards (not its range:
    a misreport may lie outside it): ``"1e999999"`` is refused before conversion."""
    from verifier.properties import Deviation
    from verifier.store import witness_from

    d = _stored(SP_FILE)
    env = witness_from(d).env
    dev = json.loads(json.dumps(d["deviation"]))
    dev["reports"][0]["demand"] = [value] * env.n_resources
    t0 = time.perf_counter()
    with pytest.raises(InstanceError) as e:
        Deviation.from_dict(dev, env)
    assert time.perf_counter() - t0 < 0.5
    assert str(e.value).startswith("deviation.reports[0].demand[0]: "), e.value


def test_misreport_numbers_outside_the_instance_range_still_replay():
    assert instance_number("1/100000", "f", limits=False) == instance_number("1/100000", "f", limits=False)
    with pytest.raises(InstanceError, match="out of range"):
        instance_number("1/100000", "f")
    with pytest.raises(InstanceError, match="out of range"):
        instance_number("1e999999", "f", limits=False)


@pytest.mark.parametrize("name", [["drf"], {"a": 1}, None, 3])
def test_mechanism_and_property_lookup_of_a_non_name(name):
    """Found by the harness: a damaged file's ``mechanism``/``property`` (a list, an object) made the
    registry lookups raise ``TypeError: unhashable type``."""
    from mechanisms import get
    from verifier.properties import get_property

    with pytest.raises(InstanceError, match="^mechanism: unknown name"):
        get(name)
    with pytest.raises(InstanceError, match="^properties: unknown property"):
        get_property(name)


def test_replay_of_damaged_files_names_the_field(tmp_path, capsys):
    """Through the command: replay reports the damaged deviation as one FAIL line naming the field."""
    from verifier.cli import main
    from verifier.store import identity_hash

    d = _stored(SP_FILE)
    d["deviation"] = {"kind": "misreport", "reports": [{"user": d["users"][0], "demand": ["1e999999"]}]}
    d["id"] = f"{d['property']}-{identity_hash(d)}"
    path = tmp_path / f"{d['id']}.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    assert main(["replay", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[0].startswith(f"FAIL {path}: error while re-checking: InstanceError: "
                                               f"deviation.reports[0].demand[0]: '1e999999' is out of range"), out


@pytest.mark.parametrize("command", [["allocate", "drf", "-"], ["allocate", "drf", "-", "--exact"]])
def test_undecodable_byte_in_a_name_on_stdin(command):
    """Found by the harness (once it encoded stdout as a real process does): a name with a lone
    surrogate -- JSON ``"\\ud800"``, or a byte that is not UTF-8 read from stdin -- was accepted and
    crashed printing the table (``UnicodeEncodeError``).  The parser now rejects it, naming the field."""
    import subprocess
    import sys

    for name in (b'"\xff"', b'"x\\ud800"'):
        text = b'{"resources": ["cpu"], "servers": [{"capacity": [1]}], "users": [{"name": ' + name + \
            b', "demand": [1]}]}'
        out = subprocess.run([sys.executable, "-m", "verifier", *command], input=text, cwd=ROOT,
                             capture_output=True, timeout=120)
        err = out.stderr.decode("utf-8", "replace")
        assert out.returncode == 2 and out.stdout == b"", out
        assert err.count("\n") == 1 and err.startswith("error: users[0].name: name contains the lone surrogate"), err


# a legal instance on which PS-DSF's Algorithm I does not converge in 300 rounds (found by the harness,
# seed 3 case 869: the PSDSFError escaped main as a traceback, and ended a whole --batch run)
PSDSF_NO_CONVERGENCE = {
    "resources": ["r1", "r2", "r3"],
    "servers": [{"name": "s1", "capacity": [7.2184, 9999.9999, 11.311]}, {"name": "s2", "capacity": [5, "0.25", 21.5]}],
    "users": [{"name": "u1", "demand": [17, 0, 2], "weight": 11}, {"name": "u2", "demand": ["14/12", 15, "31/1"]},
              {"name": "u3", "demand": [2, ".5", 0.0], "server_demand": {"s2": ["5/8", 0, 9]}},
              {"name": "u4", "demand": [0.0, 0.0001, "0"]}]}


def test_mechanism_that_does_not_converge_is_solver_trouble(tmp_path, capsys, monkeypatch):
    """A mechanism's iterative algorithm that gives up is solver trouble (exit 3, one line), never a
    traceback; in --batch it is that line's error and the run goes on.  (PS-DSF's float path solves
    this instance -- a PS-DSF allocation, Theorem 1 checked exactly -- so it is switched off here: the
    exact iteration alone gives up on it.)"""
    import mechanisms.paper.psdsf.iteration as psdsf_iteration
    from mechanisms.paper.lmm_mms import AlgorithmStall

    monkeypatch.setattr(psdsf_iteration, "fast_fixed_point", lambda *a, **k: None)
    from mechanisms.paper.psdsf import PSDSFError
    from mechverify.lp import LPError
    from verifier.cli import main

    assert issubclass(PSDSFError, LPError) and issubclass(AlgorithmStall, LPError)
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(PSDSF_NO_CONVERGENCE), encoding="utf-8")
    for argv in (["allocate", "psdsf-rdm", str(path)], ["check", "psdsf-rdm", str(path), "--properties", "ef"]):
        assert main(argv) == 3
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and err.startswith("solver error: psdsf-rdm (Algorithm I): "), err
    batch = tmp_path / "b.jsonl"
    batch.write_text(json.dumps(PSDSF_NO_CONVERGENCE) + "\n" + json.dumps(
        {"resources": ["cpu"], "servers": [{"capacity": [2]}], "users": [{"demand": [1]}]}) + "\n", encoding="utf-8")
    assert main(["allocate", "psdsf-rdm", "--batch", str(batch)]) == 1
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["error"].startswith("line 1: psdsf-rdm (Algorithm I): no PS-DSF allocation") and "tasks" in lines[1]


@pytest.mark.parametrize("name, deviation, words", [
    ("cru/sp-39440cb8ef67.json", None, "deviation: sp needs a misreport by 1 user(s), got null"),
    ("cru/sp-39440cb8ef67.json", {"kind": "leave", "users": ["B"]}, "deviation: sp needs a misreport by 1 user(s), "
                                                                    "got a leave by 1 user(s)"),
    ("cru/sp-39440cb8ef67.json", {"kind": "misreport", "reports": []}, "got a misreport by 0 user(s)"),
    ("c-drfh/pm-996d86371f5d.json", None, "deviation: pm needs a leave, got null"),
])
def test_deviation_property_without_its_deviation(name, deviation, words, tmp_path, capsys):
    """Found by the harness (seed 0, case 8105): a stored SP file whose deviation is null crashed the
    re-check (``AttributeError: 'NoneType' object has no attribute 'users'``); now one line naming it."""
    from verifier.cli import main
    from verifier.store import identity_hash

    d = _stored(name)
    d["deviation"] = deviation
    d["id"] = f"{d['property']}-{identity_hash(d)}"
    path = tmp_path / f"{d['id']}.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    assert main(["replay", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"FAIL {path}: error while re-checking: InstanceError: deviation: ") and words in out[0], out


def test_pm_file_naming_a_leaver_as_the_user_who_stays(tmp_path, capsys):
    from verifier.cli import main
    from verifier.store import identity_hash

    d = _stored("c-drfh/pm-996d86371f5d.json")
    d["users"] = list(d["deviation"]["users"][:1])
    d["id"] = f"{d['property']}-{identity_hash(d)}"
    path = tmp_path / f"{d['id']}.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    assert main(["replay", str(path)]) == 1
    assert "InstanceError: users: pm names one user who stays" in capsys.readouterr().out
