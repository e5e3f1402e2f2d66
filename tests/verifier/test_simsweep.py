"""``verifier.simsweep``: simulations as campaign cells -- a cell is the ``simulate`` run of its trace, the same
records in this process and in local worker processes, a campaign directory resumed (finished cells never run
again), and the budget saying what finished."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

from mechverify.job_trace import parse_job_trace
from mechverify.workloads import get as get_workload
from simulation.simulate import simulate
from verifier import simsweep
from verifier.campaign import Campaign, config_of
from verifier.executors import InProcess, LocalPool
from verifier.simsweep import SimCell, lifted, run_sweep, summary, sweep_points

POINTS = sweep_points({"servers": "2"}, [("jobs", ["3", "5"])])
CELLS = [SimCell("drfh", "recompute", "google2011", p, seed) for p in POINTS for seed in (0, 1)]


def _numbers(rec: dict) -> dict:
    """A cell's record without its wall-clock seconds (the one field that depends on the machine)."""
    return {k: v for k, v in rec.items() if k != "seconds"}


def test_sweep_points_are_the_product_of_the_swept_values():
    # 2 users values x 3 rho values = 6 points, each with the fixed bandwidth, keys sorted
    pts = sweep_points({"bandwidth": "2"}, [("users", ["10", "15"]), ("rho", ["0.5", "0.7", "0.9"])])
    assert len(pts) == 6 and len(set(pts)) == 6
    assert pts[0] == (("bandwidth", "2"), ("rho", "0.5"), ("users", "10"))
    assert all(dict(p)["bandwidth"] == "2" for p in pts)


def test_a_cell_is_the_simulate_run_of_its_seed():
    cell = CELLS[1]  # jobs=3, seed 1
    rec = simsweep.simulate_cell(cell)
    assert rec["status"] == "done" and rec["jobs"] == 3
    ex = parse_job_trace(get_workload("google2011").jobs(np.random.default_rng(1), jobs="3", servers="2"))
    direct = summary(simulate(lifted("drfh", "recompute"), ex, trace="google2011"), cell)
    assert _numbers(rec) == _numbers(direct)
    json.dumps(rec, allow_nan=False)  # strict JSON: what a campaign file holds


def test_in_process_local_processes_and_dask_give_the_same_records():
    from distributed import LocalCluster

    from verifier.executors import DaskCluster

    one = run_sweep(CELLS, executor=InProcess())
    two = run_sweep(CELLS, executor=LocalPool(2))
    assert [c["status"] for c in one.cells] == ["done"] * len(CELLS)
    assert [_numbers(c) for c in one.cells] == [_numbers(c) for c in two.cells]
    assert [g["jct_factor_mean"] for g in one.groups()] == [g["jct_factor_mean"] for g in two.groups()]
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        three = run_sweep(CELLS, executor=DaskCluster(cluster))
    assert [_numbers(c) for c in three.cells] == [_numbers(c) for c in one.cells]


def test_a_resumed_campaign_runs_only_the_missing_cells(tmp_path, monkeypatch):
    camp = lambda: Campaign(str(tmp_path / "c"), config_of(command="simulate-sweep", workload="google2011"))  # noqa: E731
    first = run_sweep(CELLS[:2], campaign=camp())
    assert first.resumed == 0 and len(list((tmp_path / "c" / "cells").iterdir())) == 2
    ran = []
    real = simsweep.simulate_cell

    def counting(cell):
        ran.append(cell.key)
        return real(cell)

    monkeypatch.setattr(simsweep, "simulate_cell", counting)
    again = run_sweep(CELLS, campaign=camp())  # two more cells: only those run
    assert again.resumed == 2 and sorted(ran) == sorted(c.key for c in CELLS[2:])
    assert [_numbers(c) for c in again.cells[:2]] == [_numbers(c) for c in first.cells]
    ran.clear()
    third = run_sweep(CELLS, campaign=camp())
    assert third.resumed == len(CELLS) and ran == []


def test_the_budget_stops_the_sweep_and_says_what_finished(tmp_path):
    # seed004's whole-task runs take ~1 s each: 0.3 s cannot finish 6 of them; a stopped or unreached cell is not
    # recorded in the campaign (the same command runs it again)
    cells = [SimCell("tsf-er-online", "indivisible", "seed004", (("users", "15"),), s) for s in range(6)]
    camp = Campaign(str(tmp_path / "c"), config_of(command="simulate-sweep"))
    t0 = time.monotonic()
    rep = run_sweep(cells, budget=0.3, campaign=camp)
    assert time.monotonic() - t0 < 0.3 * 1.1 + 0.5  # the budget + 10%, plus the unavoidable last step
    counts = rep.counts()
    assert counts.get("done", 0) < 6 and sum(counts.values()) == 6
    assert set(counts) <= {"done", "stopped", "not reached", "cut"}
    stored = list((tmp_path / "c" / "cells").iterdir()) if (tmp_path / "c" / "cells").exists() else []
    assert len(stored) == counts.get("done", 0)


def test_seed004_job_traces_follow_sec_6_2():
    rng = np.random.default_rng(3)
    t = get_workload("seed004").jobs(rng, users="10", rho="0.9", bandwidth="3", span="2")
    # the three servers (1, 1), (1 + rho, 1 - rho), (1 - rho, 1 + rho) and the link of 3 MHz = 3000 kHz
    assert [s["capacity"] for s in t["servers"]] == [[1, 1], ["19/10", "1/10"], ["1/10", "19/10"]]
    assert t["external"] == [{"name": "bw", "capacity": 3000}]
    arrivals = [j["arrival"] for j in t["jobs"]]
    assert len(arrivals) == 10 and arrivals[0] == 0 and arrivals == sorted(arrivals)
    assert arrivals[-1] <= 2 * 3600  # uniform over span = 2 hours, shifted to start at 0
    assert all(1 <= j["tasks"] <= 2854 and 15 <= j["duration"] <= 28 * 86400 for j in t["jobs"])
    ex = parse_job_trace(t)
    assert ex.n_users_total == 10
    # deterministic per seed
    assert get_workload("seed004").jobs(np.random.default_rng(3), users="10", rho="0.9", bandwidth="3", span="2") == t


@pytest.mark.parametrize("mech", ["no-such-mechanism"])
def test_a_failing_cell_is_reported_not_lost(mech):
    rep = run_sweep([SimCell(mech, "recompute", "google2011", POINTS[0], 0)])
    assert rep.cells[0]["status"] == "failed" and "no-such-mechanism" in rep.cells[0]["note"]
