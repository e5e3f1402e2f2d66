"""Simulation speed (docs/simulation.md, docs/performance.md "Simulation"): events per second of ``simulate``
(``simulation.simulate``: a mechanism through a job trace on the execution stepping), and how they grow with
the users present and the servers -- against a baseline measured in the same run.  Not a test:

    python benchmarks/bench_simulate.py [--case fluid|whole|all] [--users 25,50,100] [--servers 200,2000]
                                        [--events 2000] [--rate-x 8] [--hours 24] [--budget 60] [--seed 0]
                                        [--src OTHER_CHECKOUT/src]

* ``fluid``: DRF (``drf+recompute``: reallocated from scratch at every event, the fluid task model) on one pool,
  jobs arriving so that about ``U`` are present (Little's law: the rate found by bisection from a first guess,
  a run per try, until the jobs present on average are within 15% of ``U``); 1-20 tasks of <1-4, 1-8> % of the
  pool, 50-150 s per task.  An event is a step of the run (an arrival or a finish); the baseline, ``stepping``:
  the same trace through a stepper that gives every present job all its tasks (capacity ignored): the cost of
  the stepping and of the measures, without a mechanism.
* ``whole``: First-Fit and Best-Fit DRFH with whole tasks (``drfh-first-fit``/``drfh-best-fit``) in seed 001's
  model (``indivisible(slot=none,overhead=0)``: whole tasks that run to completion on their servers) on ``S``
  servers of the Google 2011 mix, ``google2011`` jobs arriving over ``--hours`` at ``--rate-x`` times its default
  rate (8x over 24 h: ~4,000 jobs, over half a million task events).  A task event is a task started or
  completed (``Simulation.task_counts``); each row gives them per second of wall clock and of CPU.  The baseline:
  the same First-Fit without its own task rule (the lift's generic path: the one-shot function on the residual
  capacity at every decision).

Every run is cut at ``--budget`` seconds and what it finished is counted.  ``properties`` are off (``si``/``ef``
cost a pass over the users per step; ``po`` an LP).  Peak memory: the process's maximum resident set
(``resource.getrusage``), after the cases.
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


def day_trace(servers: int, rate_x: float, hours: float, seed: int) -> dict:
    """``google2011`` jobs arriving over ``hours`` at ``rate_x`` times the default rate (1000/48 an hour) on
    ``servers`` servers, the trace ending there (``end``): its task events run into the millions a day at 8x."""
    import numpy as np

    from mechverify.workloads import get

    rate = 1000 / 48 * rate_x
    horizon = 3600 * hours
    tr = get("google2011").jobs(np.random.default_rng(seed), jobs=max(1, int(rate * hours * 1.2)), servers=servers,
                                rate=str(round(rate, 3)))
    tr["jobs"] = [j for j in tr["jobs"] if float(j["arrival"]) < horizon]
    tr["end"] = int(horizon)
    return tr


def whole_row(label: str, mech, ex, budget: float) -> str:
    """One whole-task run: task events (tasks started + completed, the stepper's counts) per second of wall clock
    and of CPU, the simulated time reached, and the steps."""
    start, cpu = time.perf_counter(), time.process_time()
    sim = simulate(mech, ex, properties=(), deadline=time.monotonic() + budget)
    secs, cpu = time.perf_counter() - start, time.process_time() - cpu
    ev = sim.task_counts.get("started", 0) + sim.task_counts.get("completed", 0)
    return (f"| {label} | {ev:,} | {sim.steps:,} | {sim.end_time / 3600:.1f} h | {secs:.1f} | {ev / secs:,.0f} | "
            f"{ev / cpu:,.0f} |" + (" cut at the budget |" if sim.stopped else " |"))


def case_whole(servers: list[int], rate_x: float, hours: float, budget: float, seed: int) -> list[str]:
    from dataclasses import replace

    out = [f"Google 2011 jobs over {hours:g} h at {rate_x:g}x the default rate, seed 001's model ({SEED001}); a "
           f"task event: a task started or completed",
           "| servers: rule | task events | steps | simulated | seconds | task events/s | per CPU second | |",
           "|---|---|---|---|---|---|---|---|"]
    for s in servers:
        ex = parse_job_trace(day_trace(s, rate_x, hours, seed))
        for name in ("drfh-first-fit", "drfh-best-fit"):
            mech = mechanisms.get(name)
            out.append(whole_row(f"{s}: {name}", lift(mech, SEED001), ex, budget))
        # the baseline: the same First-Fit without its own rule -- the lift's generic path, the one-shot function
        # on the residual capacity at every decision (what every mechanism without a task rule gets)
        generic = replace(mechanisms.get("drfh-first-fit"), task_rule=None)
        out.append(whole_row(f"{s}: drfh-first-fit, the generic residual rule (baseline)", lift(generic, SEED001),
                             ex, budget))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=["fluid", "whole", "all"], default="all")
    ap.add_argument("--users", default="25,50,100")
    ap.add_argument("--servers", default="200,2000")
    ap.add_argument("--rate-x", type=float, default=8.0, help="whole: the arrival rate over google2011's default")
    ap.add_argument("--hours", type=float, default=24.0, help="whole: the hours of arrivals")
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--src", default=None, help="time another checkout's src/")
    a = ap.parse_args()
    lines = [f"src: {_SRC}; load average {os.getloadavg()[0]:.1f}"]
    if a.case in ("fluid", "all"):
        lines += case_fluid([int(v) for v in a.users.split(",")], a.events, a.budget, a.seed) + [""]
    if a.case in ("whole", "all"):
        lines += case_whole([int(v) for v in a.servers.split(",")], a.rate_x, a.hours, a.budget, a.seed) + [""]
    lines.append(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
