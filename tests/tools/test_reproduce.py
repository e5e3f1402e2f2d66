"""tools/reproduce.py's event-simulation subcommands: they run through the simulation sweep, write their table,
and a second run resumes from the campaign (reads every finished cell back instead of running it)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests import helpers

TOOL = os.path.join(helpers.ROOT, "tools", "reproduce.py")


@pytest.fixture(scope="module")
def reproduce():
    spec = importlib.util.spec_from_file_location("reproduce_tool", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_seed004_table3_time_runs_every_column_and_resumes(reproduce, tmp_path):
    out = str(tmp_path)
    text = reproduce.seed004_table3_time(1, 0, out, jobs=1)
    data = json.load(open(os.path.join(out, "table3.json")))
    # 7 distinct points (the paper's repeated column is one) x 3 rules x 1 seed, all run to their end
    assert data["sweep"]["counts"] == {"done": 21}
    for rule in ("tsf-er", "mnw", "cru"):
        cols = data["table"][rule]
        assert sorted(int(c) for c in cols) == list(range(1, 10))
        for c, v in cols.items():
            assert 0 < v["ours"] <= 1 + 1e-9 and v["seeds"] == 1
            assert v["paper"] == reproduce.TABLE3_PAPER[rule][int(c) - 1]
            assert set(v["properties"]) == {"si", "ef"}
        # columns 2, 5 and 8 are the same point
        assert cols["2"]["ours"] == cols["5"]["ours"] == cols["8"]["ours"]
    assert "| tsf-er | " in text and "/ 0.608 (1)" in text
    again = reproduce.seed004_table3_time(1, 0, out, jobs=1)
    assert json.load(open(os.path.join(out, "table3.json")))["sweep"]["resumed"] == 21
    assert again.split("\n", 1)[1] == text.split("\n", 1)[1]  # the same table (the first line names timings)


def test_seed004_table3_time_rejects_bad_jobs(tmp_path):
    r = subprocess.run([sys.executable, TOOL, "seed004-table3-time", "--jobs", "0", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "--jobs" in r.stderr
