"""``certify`` over several shapes: a sweep through an executor, with one writer and a wall-clock limit."""
from __future__ import annotations

import json

from mechanisms import get
from verifier.executors import DaskCluster, InProcess, LocalPool
from verifier.store import find_files, replay
from verifier.sweep import NOT_REACHED, ShapeCell, sweep

from tests.helpers import run_cli


def _cells(mech, prop, shapes):
    return [ShapeCell(mech, prop, "demand", sh) for sh in shapes]


def test_cli_sweep_certifies_every_shape_and_stores_one_violation(tmp_path):
    out = run_cli("certify", "drf", "--property", "sp", "--users", "2-3", "--resources", "2,3", "--jobs", "2",
                  "--store", str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = [x for x in out.stdout.splitlines() if x.startswith("drf sp/demand on ")]
    assert len(lines) == 4 and all("certified for domain D (z3" in x for x in lines)
    assert "sweep: 4 shapes, local processes, 2 at a time" in out.stderr
    # CRU is not SP (seed 004 App. 9.1): violated on both shapes; the workers only return certificates,
    # this process stores them -- one file for the cell, the smallest, and it replays
    out = run_cli("certify", "cru", "--property", "sp", "--users", "2", "--resources", "2-3", "--jobs", "2",
                  "--store", str(tmp_path), "--format", "json")
    assert out.returncode == 1, out.stdout + out.stderr
    got = json.loads(out.stdout)
    assert [r["shape"] for r in got] == [[2, 1, 2, 0], [2, 1, 3, 0]] and {r["status"] for r in got} == {"violated"}
    (path,) = find_files([str(tmp_path / "cru")])
    assert replay(path).ok


def test_same_verdicts_in_process_on_two_processes_and_on_dask():
    from distributed import LocalCluster

    cells = _cells("cru", "sp", [(2, 1, 2, 0), (2, 1, 3, 0)]) + _cells("drf", "sp", [(2, 1, 2, 0), (3, 1, 2, 0)])
    verdicts = lambda ex: [(r.mechanism, r.details["shape"], r.verdict) for r in sweep(cells, timeout=120,
                                                                                       executor=ex)[0]]
    one = verdicts(InProcess())
    assert one == [("cru", [2, 1, 2, 0], "violated"), ("cru", [2, 1, 3, 0], "violated"),
                   ("drf", [2, 1, 2, 0], "certified"), ("drf", [3, 1, 2, 0], "certified")]
    assert verdicts(LocalPool(2)) == one
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        assert verdicts(DaskCluster(cluster)) == one


def test_cells_the_timeout_does_not_reach_are_unknown():
    seen = []
    results, interrupted = sweep(_cells("drf", "sp", [(2, 1, 2, 0), (3, 1, 3, 0)]), timeout=0.0,
                                 on_result=lambda c, r: seen.append(r.verdict))
    assert not interrupted and [r.verdict for r in results] == ["unknown", "unknown"] == seen
    assert all(r.note == NOT_REACHED for r in results)
    assert get("drf")  # the registry is untouched by the sweep
