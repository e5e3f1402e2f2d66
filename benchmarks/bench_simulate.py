"""Simulation speed (docs/simulation.md, docs/performance.md "Simulation"): events per second of ``simulate``
(``simulation.simulate``: a mechanism through a job trace on the execution stepping), and how they grow with
the users present and the servers -- against a baseline measured in the same run.  Not a test:

    python benchmarks/bench_simulate.py [--case fluid|whole|all] [--users 25,50,100] [--servers 20,200,2000]
                                        [--events 2000] [--budget 60] [--seed 0] [--src OTHER_CHECKOUT/src]

* ``fluid``: DRF (``drf+recompute``: reallocated from scratch at every event, the fluid task model) on one pool,
  jobs arriving so that about ``U`` are present (Little's law: the rate found by bisection from a first guess,
  a run per try, until the jobs present on average are within 15% of ``U``); 1-20 tasks of <1-4, 1-8> % of the
  pool, 50-150 s per task.
* ``whole``: First-Fit and Best-Fit DRFH with whole tasks (``drfh-first-fit``/``drfh-best-fit``) on ``S`` servers
  of the Google 2011 mix (``google2011``'s job traces at their default rate): lifted with ``recompute`` (a job's
  work done at the rate of its tasks) and in seed 001's model (``indivisible(slot=none,overhead=0)``: whole tasks
  that run to completion on their servers, an event per task completion).

An event is a step of the run (an arrival or a finish).  Every run is cut at ``--budget`` seconds and the events
it finished are counted.  The baseline, ``stepping``: the same trace through a stepper that gives every present
job all its tasks (capacity ignored): the cost of the stepping and of the measures, without a mechanism.
``properties`` are off (``si``/``ef`` cost a pass over the users per step; ``po`` an LP).  Peak memory: the
process's maximum resident set (``resource.getrusage``), after the case.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SRC = next((sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--src"), os.path.join(ROOT, "src"))
sys.path.insert(0, _SRC)

import mechanisms  # noqa: E402
from mechanisms.core.time import lift  # noqa: E402
from mechverify.allocation import Allocation  # noqa: E402
from mechverify.job_trace import parse_job_trace  # noqa: E402
from simulation.simulate import simulate  # noqa: E402


class _AllTasks:
    """The baseline stepper: every present job runs all its tasks on the first server (capacity ignored)."""

    def step(self, ctx):
        env = ctx.env
        one = 0.0
        x = tuple(tuple(([float(env.tasks[j] or 1)] + [one] * (env.n_servers - 1))) for j in range(env.n_users))
        return Allocation(env, x, "all-tasks", False)


def _baseline_mech():
    from dataclasses import replace

    from mechanisms.core.time import TimeSpec

    return replace(mechanisms.get("drf"), name="stepping",
                   time=TimeSpec(begin=lambda m, ex, exact: _AllTasks(), kind="stateful"))


def fluid_trace(n_jobs: int, rate: float, seed: int) -> dict:
    rng = random.Random(seed)
    jobs, t = [], 0.0
    for k in range(n_jobs):
        t += rng.expovariate(rate)
        jobs.append({"arrival": round(t, 3), "tasks": rng.randint(1, 20), "duration": rng.randint(50, 150),
                     "demand": [rng.randint(1, 4) / 100, rng.randint(1, 8) / 100], "name": f"j{k + 1}"})
    return {"resources": ["cpu", "mem"], "servers": [{"name": "pool", "capacity": [1, 1]}], "jobs": jobs}


def row(label: str, mech, ex, budget: float) -> str:
    """One run: events, seconds, events/s, and the jobs present on average (Little: their time in the system
    summed over the simulated time)."""
    start = time.perf_counter()
    sim = simulate(mech, ex, properties=(), deadline=time.monotonic() + budget)
    secs = time.perf_counter() - start
    present = sum(r[3] for r in sim.jct) / sim.end_time if sim.end_time else 0.0
    return (f"| {label} | {sim.steps} | {present:.0f} | {secs:.1f} | {sim.steps / secs:,.0f} |"
            + (" cut at the budget |" if sim.stopped else " |"))


def case_fluid(users: list[int], events: int, budget: float, seed: int) -> list[str]:
    drf, base = lift(mechanisms.get("drf"), "recompute"), _baseline_mech()
    out = ["| fluid DRF, users present (aimed at) | events | jobs present (mean) | seconds | events/s | |",
           "|---|---|---|---|---|---|"]
    for u in users:
        # the arrival rate that keeps about U jobs present (Little: their time in the system over the run's time),
        # found by bisection (the jobs present grow with the rate, steeply near the pool's capacity: corrections
        # by a power of U / present overshoot there); the trace timed is the one last measured
        lo, hi = 0.0, u / (10.5 * 100 * 2)  # U over twice a job's work alone (tasks x seconds): a first guess
        rate = hi
        for _ in range(16):
            ex = parse_job_trace(fluid_trace(events // 2, rate, seed))
            sim = simulate(drf, ex, properties=(), deadline=time.monotonic() + budget)
            present = sum(r[3] for r in sim.jct) / sim.end_time if sim.end_time else 0.0
            if present <= 0 or abs(present - u) <= 0.15 * u:
                break
            if present < u:
                lo = rate
                rate = rate * 2 if rate >= hi else (rate + hi) / 2
                hi = max(hi, rate)
            else:
                hi = rate
                rate = (lo + rate) / 2
        out.append(row(f"~{u}: drf+recompute (rate {rate:.4f}/s)", drf, ex, budget))
        out.append(row(f"~{u}: stepping (baseline)", base, ex, budget))
    return out


SEED001 = "indivisible(slot=none,overhead=0)"


def case_whole(servers: list[int], events: int, budget: float, seed: int) -> list[str]:
    import numpy as np

    from mechverify.workloads import get

    out = ["| whole tasks, servers | events | jobs present (mean) | seconds | events/s | |",
           "|---|---|---|---|---|---|"]
    for s in servers:
        ex = parse_job_trace(get("google2011").jobs(np.random.default_rng(seed), jobs=events // 2, servers=s))
        for name in ("drfh-first-fit", "drfh-best-fit"):
            out.append(row(f"{s}: {name}", lift(mechanisms.get(name), "recompute"), ex, budget))
            # seed 001's model: whole tasks run to completion on their servers (no reallocation, no overhead)
            out.append(row(f"{s}: {name}+{SEED001}", lift(mechanisms.get(name), SEED001), ex, budget))
        out.append(row(f"{s}: stepping (baseline)", _baseline_mech(), ex, budget))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=["fluid", "whole", "all"], default="all")
    ap.add_argument("--users", default="25,50,100")
    ap.add_argument("--servers", default="20,200,2000")
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--src", default=None, help="time another checkout's src/")
    a = ap.parse_args()
    lines = [f"src: {_SRC}; load average {os.getloadavg()[0]:.1f}"]
    if a.case in ("fluid", "all"):
        lines += case_fluid([int(v) for v in a.users.split(",")], a.events, a.budget, a.seed) + [""]
    if a.case in ("whole", "all"):
        lines += case_whole([int(v) for v in a.servers.split(",")], a.events, a.budget, a.seed) + [""]
    lines.append(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
