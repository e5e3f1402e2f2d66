"""``python -m verifier simulate-sweep``: a sweep end to end (table, JSON, --out, --campaign resumed) and bad
arguments as one line with exit 2 before any work."""
from __future__ import annotations

import json

import pytest

from verifier.cli.main import main

SMALL = ["simulate-sweep", "drfh", "google2011", "--param", "servers=2", "--sweep", "jobs=3,5", "--seeds", "2",
         "--jobs", "1", "--quiet"]


def test_a_sweep_prints_and_writes_its_table(tmp_path, capsys):
    assert main(SMALL + ["--out", str(tmp_path / "o"), "--campaign", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "4 cells (4 done; 0 read back from the campaign)" in out  # 1 mechanism x 2 points x 2 seeds
    assert "| drfh+recompute | jobs=3, servers=2 | 2/2 |" in out
    doc = json.loads((tmp_path / "o" / "sweep.json").read_text())
    assert doc["format"] == "mechverify-simulation-sweep-1" and len(doc["cells"]) == 4 and len(doc["groups"]) == 2
    assert (tmp_path / "o" / "sweep.md").read_text().startswith("# simulation sweep on google2011")
    # again on the same campaign: every cell read back, the same numbers
    assert main(SMALL + ["--format", "json", "--campaign", str(tmp_path / "c")]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["resumed"] == 4 and again["groups"] == doc["groups"]


@pytest.mark.parametrize("argv, message", [
    (["simulate-sweep", "drfh", "google2011", "--sweep", "nope=1,2"], "nope"),
    (["simulate-sweep", "drfh", "google2011", "--sweep", "jobs"], "--sweep: expected KEY=VALUE"),
    (["simulate-sweep", "drfh", "google2011", "--sweep", "jobs=3,3"], "--sweep: a value is given twice"),
    (["simulate-sweep", "drfh", "google2011", "--sweep", "jobs=3", "--param", "jobs=4"], "--sweep: jobs is given twice"),
    (["simulate-sweep", "drfh", "google2011", "--param", "jobs=3,4"], "--param: one value per key"),
    (["simulate-sweep", "drfh", "seed004", "--sweep", "rho=0.5,1.5"], "rho"),
    (["simulate-sweep", "drfh", "google2011", "--seeds", "0"], "--seeds: must be >= 1"),
    (["simulate-sweep", "drfh", "google2011", "--sweep", "slot=64,256"], "--slot: only the whole-task model"),
    (["simulate-sweep", "tsf-er-online", "seed004", "--tasks", "whole", "--sweep", "slot=0"], "--slot"),
    (["simulate-sweep", "drfh,drfh", "google2011"], "mechanisms: a mechanism is named twice"),
    (["simulate-sweep", "no-such", "google2011"], "unknown name 'no-such'"),
    (["simulate-sweep", "drfh", "nowhere"], "workload: unknown 'nowhere'"),
    (["simulate-sweep", "drfh", "uniform"], "draws no job traces"),
    (["simulate-sweep", "drfh", "google2011", "--budget", "0"], "--budget"),
    (["simulate-sweep", "drfh", "google2011", "--scheduler", "tcp://127.0.0.1:1"], "--scheduler: only with --executor dask"),
    (["simulate-sweep", "drfh", "google2011", "--properties", "si,si"], "--properties: a property is named twice"),
])
def test_bad_arguments_are_one_line_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


def test_another_configuration_on_a_campaign_is_refused(tmp_path, capsys):
    assert main(SMALL + ["--campaign", str(tmp_path / "c")]) == 0
    capsys.readouterr()
    assert main(SMALL + ["--campaign", str(tmp_path / "c"), "--properties", "si"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "another configuration: properties" in err
