"""Campaign benchmark (on demand, not a test): the speed-up of ``audit`` with 1 vs 2 local workers, and the
Dask executor's overhead per cell.

    python benchmarks/bench_campaign.py [--trials 400] [--mechanisms drf,tsf,c-drfh,...] [--properties ...]

The work is fixed (``--trials``, ``--fresh`` stores), so the verdicts of every run are the same (checked)
and only the wall-clock time differs.  Speed-up = wall(1 worker) / wall(2 workers), target >= 1.8 on an
otherwise idle machine with >= 2 cores.  Dask overhead per cell = the round trip of an empty cell on a
``LocalCluster`` (one at a time) minus the same in-process; the full audit also runs on a 2-worker
``LocalCluster`` (verdicts compared).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from verifier.audit import run_audit  # noqa: E402
from verifier.campaign import Outcome, Task, execute, failed  # noqa: E402
from verifier.executors import DaskCluster, InProcess, LocalPool  # noqa: E402
from verifier.config import RunConfig


def _noop(task: Task) -> Outcome:
    """An empty cell: what the executor costs without the search."""
    return Outcome(failed(task, "empty cell (benchmark)"))


def _audit(executor, mechs, props, trials):
    with tempfile.TemporaryDirectory() as store:
        t0 = time.perf_counter()
        res = run_audit(RunConfig(budget=3600, seed=0, store=store, trials=trials, executor=executor), fresh=True, only=mechs, properties=props)
        wall = time.perf_counter() - t0
    ev = [e for c in res["cells"] for e in c.evidence]
    verdicts = {(e.mechanism, e.property, e.variant): e.verdict for e in ev}
    return wall, verdicts, sum(e.seconds for e in ev)


def _busy(seconds: float) -> None:
    """Burn ``seconds`` of CPU."""
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass


def _control(seconds: float = 2.0) -> float:
    """The speed-up two busy processes get on this machine now: the most a 2-worker run can reach."""
    import concurrent.futures as cf

    t0 = time.perf_counter()
    _busy(seconds)
    one = time.perf_counter() - t0
    with cf.ProcessPoolExecutor(2) as pool:
        t0 = time.perf_counter()
        list(pool.map(_busy, [seconds, seconds]))
        two = time.perf_counter() - t0
    return 2 * one / two


def main() -> None:
    """Run the three configurations and print the numbers."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mechanisms", default="drf,tsf,c-drfh,drfh,per-server-drf,cru")
    ap.add_argument("--properties", default="si,ef,bf,po")
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=1, help="best of N for each configuration")
    ap.add_argument("--noop-cells", type=int, default=200, help="empty cells for the Dask overhead")
    args = ap.parse_args()
    mechs, props = args.mechanisms.split(","), args.properties.split(",")
    print(f"audit --mechanisms {args.mechanisms} --properties {args.properties} --trials {args.trials} "
          f"(cores: {os.cpu_count()})")

    print(f"  load average before: {os.getloadavg()[0]:.2f}; control: 2 busy processes run {_control():.2f}x "
          f"as fast as 1 (the most a 2-worker run can reach on this machine now)")

    def best(make):
        runs = [_audit(make(), mechs, props, args.trials) for _ in range(args.repeat)]
        return min(r[0] for r in runs), runs[0][1], runs[0][2]

    w1, v1, c1 = best(InProcess)
    cells = len(v1)
    print(f"  1 worker (in-process): {w1:7.2f} s wall, {c1:.1f} CPU s in the cells, {cells} searched cells")
    w2, v2, c2 = best(lambda: LocalPool(2))
    print(f"  2 local workers:       {w2:7.2f} s wall, {c2:.1f} CPU s in the cells -> speed-up {w1 / w2:.2f}x "
          f"(target >= 1.8x)")
    assert v2 == v1, "verdicts differ between 1 and 2 workers"

    from distributed import LocalCluster

    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        _audit(DaskCluster(cluster), mechs, props[:1], 5)  # warm the workers (imports) before the clock starts
        wd, vd, _ = _audit(DaskCluster(cluster), mechs, props, args.trials)
        assert vd == v1, "verdicts differ on Dask"
        print(f"  Dask, 2 workers:       {wd:7.2f} s wall  (same verdicts)")
        n = args.noop_cells
        tasks = [Task(mechs[0], "ef", f"noop-{i}") for i in range(n)]
        t0 = time.perf_counter()
        execute(tasks, RunConfig(executor=InProcess(), budget=3600, store=None), fn=_noop)
        local = (time.perf_counter() - t0) / n
        ex = DaskCluster(cluster)
        ex.slots = 1  # one cell at a time: the round trip of each
        t0 = time.perf_counter()
        got, _ = execute(tasks, RunConfig(executor=ex, budget=3600, store=None), fn=_noop)
        dask = (time.perf_counter() - t0) / n
        assert len(got) == n
    print(f"  Dask executor overhead: {(dask - local) * 1000:.1f} ms per cell (round trip of {n} empty cells, one "
          f"at a time: {dask * 1000:.1f} ms vs {local * 1000:.1f} ms in-process)")
    print(f"  load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
