"""The command line on declared guarantees and maxes (docs/model.md, "Declared amounts"): quota's verdicts and
exit codes on examples/guarantee-10cpu.json, warnings (stderr lines and a JSON ``warnings`` list) for an
over-committed tree that still runs, and a malformed max as one line, exit 2."""
from __future__ import annotations

import json

from tests.helpers import ROOT, run_cli

TEN = f"{ROOT}/examples/guarantee-10cpu.json"
OVER = f"{ROOT}/examples/overcommitted-tree.json"
POLICY = f"{ROOT}/examples/guarantee_policy.py:guarantees_first"
WARNINGS = ["warning: queues[1].max: A/x's max (cpu 9) is above its ancestor A's (cpu 8): never reachable",
            "warning: queues: the guarantees of A, B add up to cpu 12, above the pooled capacity (cpu 10)"]


def test_quota_on_the_10cpu_example():
    # hdrf-tasks: A and B split the 10 cpu 5 / 5 by weight; A is guaranteed 8: violated, exit 1
    bad = run_cli("check", "hdrf-tasks", TEN, "--properties", "quota")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    text = " ".join(bad.stdout.split())
    assert "quota/whole-task VIOLATED: queue A holds (cpu 5), S = 5/8 of its declared guarantee (cpu 8)" in text
    assert bad.stderr == ""  # consistent declarations: no warning
    # the guarantee-honouring policy gives A 8: satisfied, exit 0
    good = run_cli("check", POLICY, TEN, "--properties", "quota")
    assert good.returncode == 0 and "VIOLATED" not in good.stdout, good.stdout + good.stderr
    assert "quota/whole-task             satisfied" in good.stdout


def test_an_over_committed_tree_warns_and_still_runs():
    out = run_cli("check", "hdrf-tasks", OVER, "--properties", "quota,limit", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines() == WARNINGS
    doc = json.loads(out.stdout)
    assert doc["warnings"] == WARNINGS
    verdicts = {(r["property"], r["variant"]): r["verdict"] for r in doc["results"]}
    # quota: the guarantees cannot all be honoured (not applicable); limit: A holds 5 <= 8, A/x 5 <= 9
    assert verdicts[("quota", "whole-task")] == "not_applicable" and verdicts[("limit", "whole-task")] == "satisfied"
    alloc = run_cli("allocate", "hdrf-tasks", OVER, "--format", "json")
    assert alloc.returncode == 0 and json.loads(alloc.stdout)["warnings"] == WARNINGS
    assert alloc.stderr.strip().splitlines() == WARNINGS
    table = run_cli("allocate", "hdrf-tasks", OVER)
    assert table.returncode == 0 and table.stderr.strip().splitlines() == WARNINGS and "warning" not in table.stdout


def test_a_malformed_max_is_one_line_exit_2(tmp_path):
    d = json.load(open(TEN))
    d["queues"][0]["max"] = [-1]
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    out = run_cli("check", "hdrf-tasks", str(p), "--properties", "limit")
    assert out.returncode == 2 and out.stdout == ""
    (line,) = out.stderr.strip().splitlines()
    assert "queues[0].max" in line
