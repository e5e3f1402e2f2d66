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


def test_seed004_fig34_time_plots_a_sweep(reproduce, tmp_path):
    def group(name, rho, si, po):
        return {"name": name, "point": {"rho": rho, "users": "100"},
                "properties": {"si": {"time_ratio": si, "time_mean": 1 - si / 2, "rechecked": 2, "confirmed": 2},
                               "po": {"time_ratio": po, "time_mean": 1 + po, "rechecked": 1, "confirmed": 1}}}
    sweep = {"counts": {"done": 4}, "groups": [group("drf-cpu", "0.5", 0.0, 0.1), group("drf-cpu", "0.9", 0.4, 0.7),
                                               group("tsf-er", "0.5", 0.0, 0.0), group("tsf-er", "0.9", 0.0, 0.0)]}
    with open(tmp_path / "sweep.json", "w") as f:
        json.dump(sweep, f)
    text = reproduce.seed004_fig34_time(str(tmp_path))
    assert "| drf-cpu | si | 1.0000, 0.0000 (2/2) | 0.8000, 0.4000 (2/2) |" in text
    assert "| tsf-er | po | 1.0000, 0.0000 (1/1) | 1.0000, 0.0000 (1/1) |" in text
    assert (tmp_path / "fig3_time.png").stat().st_size > 0 and (tmp_path / "fig4_time.png").stat().st_size > 0


def test_seed004_figs6_7_overlays_three_runs(reproduce, tmp_path):
    for m, end, done in (("tsf-er-online", 100.0, 3), ("mnw", 125.0, 3), ("cru", 110.0, 1)):
        d = {"mechanism": f"{m}+indivisible(slot=64,overhead=1/4)", "trace": "alibaba2018", "jobs": 3,
             "end_time": end, "jct": {"finished": done, "jct_factor_mean": 0.6 if done == 1 else 0.5},
             "utilisation": {"cpu": {"time_mean": 0.5, "timeline": [[5.0, 0.4], [15.0, 0.6]]},
                             "mem": {"time_mean": 0.25, "timeline": [[5.0, 0.2], [15.0, 0.3]]}},
             "waiting": {"time_mean": 2.0, "timeline": [[5.0, 3.0], [15.0, 1.0]]}}
        os.makedirs(tmp_path / m)
        with open(tmp_path / m / "simulation.json", "w") as f:
            json.dump(d, f)
    text = reproduce.seed004_figs6_7(str(tmp_path))
    assert "| tsf-er-online | 3 of 3 | 100 | 50.0% / 25.0% | 2.0 | 0.500 / 0.500 | +0.0% |" in text
    assert "| mnw | 3 of 3 | 125 | 50.0% / 25.0% | 2.0 | 0.500 / 0.500 | -20.0% |" in text
    # a run that left jobs unfinished: its factor over all jobs counts them as 0, and no work rate
    assert "| cru | 1 of 3 | 110 | 50.0% / 25.0% | 2.0 | 0.600 / 0.200 | - (not all finished) |" in text
    assert (tmp_path / "figs6-7.png").stat().st_size > 0
    # a rule without a run is left out
    os.remove(tmp_path / "cru" / "simulation.json")
    assert "| cru |" not in reproduce.seed004_figs6_7(str(tmp_path))
