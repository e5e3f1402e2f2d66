"""tools/reproduce_fig8.py (``reproduce.py seed001-fig8``): the dedicated clouds, the shared and dedicated runs of a
hand-derived trace, and the google2011 target end to end (small)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests import helpers

TOOL = os.path.join(helpers.ROOT, "tools", "reproduce_fig8.py")


@pytest.fixture(scope="module")
def fig8():
    spec = importlib.util.spec_from_file_location("reproduce_fig8", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_dedicated_clouds_cut_the_servers_in_consecutive_groups(fig8):
    assert fig8.dedicated_clouds(4, 2) == [range(0, 2), range(2, 4)]
    # 7 servers, 3 users: 7 = 3 + 2 + 2, the first 7 mod 3 = 1 group one larger
    assert fig8.dedicated_clouds(7, 3) == [range(0, 3), range(3, 5), range(5, 7)]
    with pytest.raises(ValueError, match="at least one whole server"):
        fig8.dedicated_clouds(2, 3)


# Three servers s1 (6, 6), s2 (2, 2), s3 (2, 2); every task demands (1, 1), so a server runs as many tasks as its
# capacity.  j1 and j2 arrive at 0 with 8 tasks of 10 s each (work 80); j3 arrives at 10 (1 task): the window is
# [0, 10].  Dedicated clouds (3 servers, 3 users): j1 s1, j2 s2, j3 s3.
#  SC: j1 and j2 share the 10 task slots at equal dominant shares, 5 tasks each (whole tasks, picked in turn), for
#      10 s: 50 of 80 -> 5 tasks done each; j3 0 of 1.
#  DC: j1 alone on s1: 6 tasks -> 60 -> 6 done; j2 alone on s2: 2 tasks -> 20 -> 2 done; j3 0.
#  So j1 has fewer in SC (5/8 vs 6/8: a drop of 1/8), j2 more (5/8 vs 2/8), j3 the same (0 of 1, not complete).
#  Mean ratios: DC (6/8 + 2/8 + 0) / 3 = 1/3, SC (5/8 + 5/8 + 0) / 3 = 5/12; tasks 17, done DC 8, SC 10.
TRACE = {"resources": ["cpu", "mem"], "unit": "s",
         "servers": [{"name": "s1", "capacity": [6, 6]}, {"name": "s2", "capacity": [2, 2]},
                     {"name": "s3", "capacity": [2, 2]}],
         "jobs": [{"arrival": 0, "tasks": 8, "duration": 10, "demand": [1, 1], "name": "j1"},
                  {"arrival": 0, "tasks": 8, "duration": 10, "demand": [1, 1], "name": "j2"},
                  {"arrival": 10, "tasks": 1, "duration": 1, "demand": [1, 1], "name": "j3"}]}


@pytest.mark.parametrize("mechanism", ["drfh-best-fit", "drfh-first-fit"])
def test_shared_and_dedicated_runs_of_a_hand_derived_trace(fig8, tmp_path, mechanism):
    res = fig8.compare(TRACE, str(tmp_path), mechanism)
    assert res["window"] == 10 and res["dc_servers"] == [1, 1, 1] and res["shared"]["stopped"] is None
    got = {u["name"]: (u["dc_done"], u["sc_done"], u["tasks"]) for u in res["users"]}
    assert got == {"j1": (6, 5, 8), "j2": (2, 5, 8), "j3": (0, 0, 1)}
    s = res["summary"]
    assert (s["users"], s["fewer_in_sc"], s["more_in_sc"], s["equal"], s["equal_complete"]) == (3, 1, 1, 1, 0)
    assert s["largest_drop"] == pytest.approx(1 / 8)
    assert s["mean_dc_ratio"] == pytest.approx(1 / 3) and s["mean_sc_ratio"] == pytest.approx(5 / 12)
    assert (s["tasks"], s["dc_tasks_done"], s["sc_tasks_done"]) == (17, 8, 10)
    # the shared run is kept, and read back instead of run again
    shared = json.load(open(tmp_path / "shared" / "simulation.json"))
    assert fig8.tasks_done(shared) == {"j1": (5, 8), "j2": (5, 8), "j3": (0, 1)}
    assert fig8.compare(TRACE, str(tmp_path), mechanism, recompute=False)["users"] == res["users"]


def test_seed001_fig8_end_to_end(fig8, tmp_path):
    out = str(tmp_path)
    text = fig8.seed001_fig8(0, out, jobs=6, servers=12, budget=120, mechanism="drfh-first-fit")
    data = json.load(open(os.path.join(out, "fig8.json")))
    assert data["dc_servers"] == [2] * 6 and data["window"] == data["horizon"] and len(data["users"]) == 6
    s = data["summary"]
    assert s["fewer_in_sc"] + s["more_in_sc"] + s["equal"] == 6
    for u in data["users"]:
        assert 0 <= u["dc_done"] <= u["tasks"] and 0 <= u["sc_done"] <= u["tasks"]
    for name in ("fig8.png", "fig8.md"):
        assert os.path.getsize(os.path.join(out, name)) > 0
    assert "fewer tasks done in SC than in DC" in text


def test_the_command_refuses_fewer_servers_than_users(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(helpers.ROOT, "tools", "reproduce.py"), "seed001-fig8",
                        "--trace-jobs", "5", "--servers", "4", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "at least one whole server" in r.stderr
