"""The command line: ``list``, ``allocate`` (table / json / --exact / --batch) and its error handling.

Most cases call ``verifier.cli.main`` in-process (``python -m verifier`` is ``sys.exit(main())``, so an
exception escaping ``main`` is exactly a traceback); a few run the real subprocess end to end.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction as F

import pytest

import mechanisms
from verifier.cli import main
from tests.helpers import ROOT

FIG1_000 = os.path.join(ROOT, "examples", "000-fig1.json")
FIG1_001 = os.path.join(ROOT, "examples", "001-fig1.json")
RESULT_KEYS = {"mechanism", "users", "servers", "tasks", "totals", "exact"}


def run_main(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def small(**user_over):
    u = {"name": "u", "demand": [1, 1]}
    u.update(user_over)
    return {"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [4, 4]}, {"name": "s2", "capacity": [2, 6]}],
            "users": [u, {"name": "v", "demand": [2, 1]}]}


# ---------------------------------------------------------------------- list
def test_list_names_every_registered_mechanism(capsys):
    names = [m.name for m in mechanisms.all_mechanisms()]
    assert len(names) >= 9
    code, out, _ = run_main(capsys, "list")
    assert code == 0
    body, _, legend = out.partition("\nsources: ")
    listed = {line.split()[0] for line in body.splitlines() if line and not line.startswith(" ")}
    assert listed == set(names)
    assert "004 = Meskar & Liang" in legend  # the seed codes the claims cite, expanded once
    code, out, _ = run_main(capsys, "list", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [d["name"] for d in data] == names
    for d in data:
        assert {"name", "title", "source", "setting", "claims"} <= set(d)


# ---------------------------------------------------------------------- allocate
def test_allocate_json_schema_float(capsys):
    code, out, err = run_main(capsys, "allocate", "tsf", FIG1_000, "--format", "json")
    assert code == 0 and err == ""
    res = json.loads(out)
    assert set(res) == RESULT_KEYS
    assert res["mechanism"] == "tsf" and res["users"] == ["u1", "u2"] and res["servers"] == ["s1", "s2"]
    assert res["exact"] is False
    assert all(isinstance(v, float) for row in res["tasks"] for v in row)
    # seed 000 Fig. 1, TSF: x1 = 4 (s1), x2 = 2 + 6
    assert [row for row in res["tasks"]] == [pytest.approx([4, 0]), pytest.approx([2, 6])]
    assert res["totals"] == pytest.approx([4, 8])


def test_allocate_json_schema_exact(capsys):
    code, out, _ = run_main(capsys, "allocate", "c-drfh", FIG1_000, "--format", "json", "--exact")
    assert code == 0
    res = json.loads(out)
    assert set(res) == RESULT_KEYS and res["exact"] is True
    assert all(isinstance(v, str) for row in res["tasks"] for v in row)
    # seed 000 Fig. 1, C-DRFH: 60/11 and 6/11 + 6 = 72/11 (derivation in test_drf_family.py)
    assert res["tasks"] == [["60/11", "0"], ["6/11", "6"]] and res["totals"] == ["60/11", "72/11"]
    # the strings sum exactly to the totals
    for row, tot in zip(res["tasks"], res["totals"]):
        assert sum(F(v) for v in row) == F(tot)


def test_allocate_table(capsys):
    code, out, _ = run_main(capsys, "allocate", "per-server-drf", FIG1_001, "--exact")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "mechanism: per-server-drf  (exact)"
    assert lines[2].split() == ["u1", "5", "1", "6"] and lines[3].split() == ["u2", "1", "5", "6"]


def test_allocate_stdin(capsys, monkeypatch):
    import io

    with open(FIG1_001) as fh:
        monkeypatch.setattr(sys, "stdin", io.StringIO(fh.read()))
    code, out, _ = run_main(capsys, "allocate", "drfh", "-", "--format", "json", "--exact")
    assert code == 0 and json.loads(out)["totals"] == ["10", "10"]  # seed 001 Fig. 3


def test_batch_one_json_line_per_instance(capsys, tmp_path):
    insts = [json.load(open(FIG1_000)), json.load(open(FIG1_001)), small()]
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in insts) + "\n")  # a blank line is skipped
    code, out, err = run_main(capsys, "allocate", "tsf", "--batch", str(path), "--exact")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == 3
    res = [json.loads(line) for line in lines]
    assert all(set(r) == RESULT_KEYS and r["mechanism"] == "tsf" for r in res)
    assert res[0]["totals"] == ["4", "8"]  # seed 000 Fig. 1
    assert res[1]["totals"] == ["10", "10"]  # seed 001 Fig. 1: gamma = 10 + 2 for both -> s1 to u1, s2 to u2
    # each line equals the single-instance result
    for inst, r in zip(insts, res):
        p = tmp_path / "one.json"
        p.write_text(json.dumps(inst))
        code, out, _ = run_main(capsys, "allocate", "tsf", str(p), "--format", "json", "--exact")
        assert code == 0 and json.loads(out) == r


def test_batch_bad_line_gives_error_line_and_nonzero_exit(capsys, tmp_path):
    bad_capacity = small()
    bad_capacity["servers"][0]["capacity"] = [-1, 4]
    lines = [json.dumps(small()), "{not json", json.dumps(bad_capacity), json.dumps(small())]
    path = tmp_path / "b.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_main(capsys, "allocate", "drfh", "--batch", str(path))
    assert code != 0 and err == ""
    res = [json.loads(line) for line in out.splitlines()]
    assert len(res) == 4
    assert set(res[0]) == RESULT_KEYS and set(res[3]) == RESULT_KEYS
    assert res[1] == {"error": res[1]["error"]} and res[1]["error"].startswith("line 2: invalid JSON")  # "at line 1 column ..." follows
    assert res[2]["error"].startswith("line 3: servers[0].capacity[0]: must be >= 0")


def test_batch_subprocess(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps(small()) + "\n" + "[1, 2]\n")
    out = subprocess.run([sys.executable, "-m", "verifier", "allocate", "cdrf", "--batch", str(path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 2 and set(json.loads(lines[0])) == RESULT_KEYS
    assert json.loads(lines[1])["error"].startswith("line 2: instance: expected a JSON object")


# ---------------------------------------------------------------------- malformed input: one line, exit 2
def _write(tmp_path, content, name="inst.json"):
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    elif isinstance(content, str):
        p.write_text(content)
    else:
        p.write_text(json.dumps(content))
    return str(p)


def _with(mutate):
    inst = small()
    mutate(inst)
    return inst


MALFORMED = {
    "missing file": ("drfh", None, "cannot read instance file"),
    "invalid JSON": ("drfh", '{"resources": ["cpu"], ', "invalid JSON at line"),
    "negative capacity": ("drfh", _with(lambda d: d["servers"][1].__setitem__("capacity", [2, -6])),
                          "servers[1].capacity[1]: must be >= 0"),
    "NaN literal": ("drfh", '{"resources": ["cpu"], "servers": [{"name": "s", "capacity": [NaN]}], '
                            '"users": [{"name": "u", "demand": [1]}]}', "servers[0].capacity[0]: must be a finite number"),
    "NaN string": ("drfh", _with(lambda d: d["users"][1].__setitem__("demand", [1, "NaN"])),
                   "users[1].demand[1]: not a number"),
    "shape mismatch": ("drfh", _with(lambda d: d["users"][0].__setitem__("demand", [1, 1, 1])),
                       "users[0].demand: expected 2 numbers"),
    "unknown eligible server": ("c-drfh", _with(lambda d: d["users"][0].__setitem__("eligible", ["s9"])),
                                "users[0].eligible: unknown server 's9'"),
    "eligible not a name": ("c-drfh", _with(lambda d: d["users"][0].__setitem__("eligible", [["s1"]])),
                            "users[0].eligible"),
    "unknown mechanism": ("no-such-mechanism", small(), "mechanism: unknown name 'no-such-mechanism'"),
    "setting: drf on two servers": ("drf", small(), "servers: drf is defined for one server"),
    "setting: drfh with placement": ("drfh", _with(lambda d: d["users"][0].__setitem__("eligible", ["s1"])),
                                     "users[0].eligible: drfh is defined without placement constraints"),
    "setting: per-server-drf with bounds": ("per-server-drf", _with(lambda d: d["users"][0].__setitem__("tasks", 3)),
                                            "users[0].tasks: per-server-drf is defined for unbounded task counts"),
    "not UTF-8": ("drfh", b"\xff\xfe{}", "inst.json"),
    "not an object": ("drfh", "[1, 2]", "instance: expected a JSON object"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_instance_one_line_exit_2(case, capsys, tmp_path):
    mech, content, expect = MALFORMED[case]
    path = str(tmp_path / "missing.json") if content is None else _write(tmp_path, content)
    code, out, err = run_main(capsys, "allocate", mech, path)
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], err


def test_malformed_batch_file_not_utf8(capsys, tmp_path):
    path = _write(tmp_path, b"\xff\xfe{}\n", "b.jsonl")
    code, out, err = run_main(capsys, "allocate", "drfh", "--batch", path)
    assert code == 1 and err == ""
    assert [json.loads(line) for line in out.splitlines()] == [{"error": "line 1: not UTF-8 text (byte 0)"}]


def test_malformed_subprocess_no_traceback(tmp_path):
    path = _write(tmp_path, _with(lambda d: d["servers"][0].__setitem__("capacity", [1])))
    out = subprocess.run([sys.executable, "-m", "verifier", "allocate", "tsf", path],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == ["error: servers[0].capacity: expected 2 numbers (one per resource), got 1: [1]"]


def test_stdout_is_only_the_result(cli):
    """A fresh process whose first HiGHS solver is the TSF-ER/DRF-alpha float path prints no solver banner:
    ``--format json`` output is pure JSON (HiGHS used to print its copyright lines on stdout)."""
    out = cli("allocate", "drf-cpu", "examples/004-fig2.json", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["mechanism"] == "drf-cpu"
