"""Trials per second of ``run`` against samples per second of ``rates`` on the same mechanism x property, in
the same process and run (not a test; run on demand).

``run MECH --properties P --trials N`` (the Hypothesis search, one worker, no store) is timed per cell from
its own report (``trials`` / ``seconds`` of every cell); ``rates MECH --workload W --properties P
--samples M`` (the batch path: numpy sampling, the mechanism's vectorised float allocator, the property's
vectorised float evaluation, exact re-checks of candidates only) is timed on the wall clock, one worker.
Then ``rates`` with 2 local workers, for the scaling.

    python benchmarks/bench_rates.py                         # drf x si on uniform (one server), 20 000 samples
    python benchmarks/bench_rates.py --mechanism per-server-drf --workload google2011 --params servers=4,users=5
    python benchmarks/bench_rates.py --mechanism drf-eq --workload seed004 --params rho=0.9

Measured 2026-11-26 on this 2-core box shared with four other sessions (load 3-8, so absolute numbers are
noisy; the ratio within one run is what matters), drf x si on uniform with one server (3 users):
    si/per-server-split only (the default):  run 153 trials/s, rates 1 555 samples/s (one worker) -> 10.1x
    every SI variant (--property si):         run 328 trials/s (414, 381, 243 per variant), rates 1 121 samples/s
                                              (3 cells each; external and bounded not applicable on uniform) -> 3.4x
    rates with 2 local workers: 0.83-1.09x one worker's samples/s on the 2 busy cores (no gain measured here).
Re-measured 2026-11-26 10:02 on a quiet box (load 0.7), same commands, before -> after the chunk's reused Philox
stream (rate_records._Stream, 39 -> 5 us a sample), the lazy per-cell deviation Random and drf_batch's direct Fraction -> float:
    si/per-server-split only:  run 753-826 trials/s; rates 5 248 -> 7 322 samples/s: 7.0x -> 9.0x
    every SI variant:          run 848 trials/s; rates 6 639 samples/s -> 7.8x (was 3.4x under load)
    rates with 2 local workers: 1.16-1.70x one worker's samples/s.
Then the screening draws skip the model's checks (deferred_validation; each candidate is validated before its
exact re-check), quiet box (load 0.5), three runs:
    si/per-server-split only:  run 811 trials/s; rates 8 653-9 458 samples/s -> 10.6x-11.1x
    every SI variant:          rates 8 204 samples/s -> 10.2x
    rates with 2 local workers: 1.66x one worker's samples/s.
Where the time of a rates sample went before (drf x si, profiled): the workload's draw of an exact, validated
Environment ~ 45-50%, the per-sample generator ~ 10%, the vectorised allocation and SI's numpy evaluation
~ 15% each.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from verifier.rates import Sampling
from verifier.config import RunConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bench_run(mech: str, prop: str, trials: int, seed: int) -> tuple[int, float]:
    """(trials, seconds) summed over the cells of ``run`` (in-process, no store)."""
    from mechanisms import get
    from verifier.properties import parse_cells
    from verifier.run import run_mechanism

    props, variants = parse_cells(prop)
    rep = run_mechanism(get(mech), props, RunConfig(budget=600, seed=seed, store=None, trials=trials), variants=variants)
    n = sum(r.trials or 0 for r in rep.results)
    s = sum(r.seconds or 0.0 for r in rep.results)
    for r in rep.results:
        print(f"  run   {mech} {r.property}/{r.variant}: {r.trials} trials in {r.seconds:.2f} s -> "
              f"{(r.trials or 0) / max(r.seconds or 1e-9, 1e-9):.0f}/s ({r.verdict})")
    return n, s


def bench_rates(mech: str, prop: str, workload: str, point: dict, samples: int, seed: int, jobs: int):
    """(samples done, seconds, report) of ``rates``."""
    from mechanisms import get
    from verifier.executors import make_executor
    from verifier.properties import parse_cells
    from verifier.rates import rates

    props, variants = parse_cells(prop)
    t0 = time.perf_counter()
    rep = rates([get(mech)], Sampling(workload, samples, points=[point]), props, RunConfig(seed=seed, executor=make_executor("local", jobs)), variants=variants)
    dt = time.perf_counter() - t0
    return rep.samples_done, dt, rep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mechanism", default="drf")
    ap.add_argument("--property", default="si/per-server-split", help="PROPERTY[/VARIANT]")
    ap.add_argument("--workload", default="uniform")
    ap.add_argument("--params", default="servers=1", help="KEY=VALUE,... of the workload")
    ap.add_argument("--samples", type=int, default=20_000)
    ap.add_argument("--trials", type=int, default=1500, help="run: trials per cell")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "src"))
    point = dict(kv.split("=", 1) for kv in a.params.split(",") if kv)
    n_run, s_run = bench_run(a.mechanism, a.property, a.trials, a.seed)
    run_rate = n_run / s_run
    print(f"run:   {n_run} trials in {s_run:.2f} s -> {run_rate:.0f} trials/s")
    n1, s1, rep = bench_rates(a.mechanism, a.property, a.workload, point, a.samples, a.seed, 1)
    cells = len(rep.cells)
    print(f"rates: {n1} samples x {cells} cells in {s1:.2f} s -> {n1 / s1:.0f} samples/s "
          f"({n1 * cells / s1:.0f} cell evaluations/s); {n1 / s1 / run_rate:.1f}x run's trials/s")
    for c in rep.cells:
        print(f"  rates {c.mechanism} {c.property}/{c.variant}: {c.violations}/{c.evaluated} violations "
              f"({c.rechecked} exact re-checks)")
    n2, s2, _ = bench_rates(a.mechanism, a.property, a.workload, point, a.samples, a.seed, 2)
    print(f"rates --jobs 2: {n2} samples in {s2:.2f} s -> {n2 / s2:.0f} samples/s ({s1 / s2:.2f}x one worker)")


if __name__ == "__main__":
    main()
