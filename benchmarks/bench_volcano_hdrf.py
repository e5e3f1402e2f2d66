"""Benchmark: ``volcano-hdrf`` (src/mechanisms/volcano_hdrf.py) on queue trees of growing size, against the literal
full recomputation after every task (:func:`mechanisms.volcano_hdrf.volcano_hdrf_reference`).  Not a test:

    python benchmarks/bench_volcano_hdrf.py [--tasks 1000,10000,20000] [--reference 250,500,1000] [--load 1] [--seed 0]

Instance (seeded) for T tasks: T/10 jobs of 10 tasks each, 10 jobs per leaf queue (T/100 leaf queues), 10 leaf
queues per top-level queue, queue weights in {1..4}; per-task demands {1..4}/10 cpu, {1..8}/10 mem, {0,1}/10 gpu;
one server whose capacity is ``--load`` times the jobs' whole request (1: every task fits, the resources fill
up with the last tasks).  The instance format caps a capacity at 10^4, hence at most ~2x10^4 tasks here.

Prints, per size, the tasks placed, the time of ``mechanisms.allocate("volcano-hdrf", env)`` (the registry:
setting check, the mechanism, the output check) and the time per task; then the reference on the sizes of
``--reference`` (it re-evaluates the whole tree and compares every user at every step: O(users x tree) per
task), checking that both give the same allocation.
"""
from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mechanisms  # noqa: E402
from mechanisms.volcano_hdrf import volcano_hdrf_reference  # noqa: E402
from mechverify.instances import parse_environment  # noqa: E402


def build(tasks: int, seed: int = 0, load: float = 1.0):
    rng = random.Random(seed)
    jobs = max(1, tasks // 10)
    leaves = max(1, jobs // 10)
    tops = max(1, leaves // 10)
    queues = [{"name": f"t{i}", "weight": rng.randint(1, 4)} for i in range(tops)]
    leaf_names = []
    for k in range(leaves):
        name = f"t{k % tops}/q{k}"
        queues.append({"name": name, "weight": rng.randint(1, 4)})
        leaf_names.append(name)
    users, request = [], [0, 0, 0]
    for j in range(jobs):
        d = [rng.randint(1, 4), rng.randint(1, 8), rng.randint(0, 1)]
        for r in range(3):
            request[r] += d[r]  # 10 tasks of d/10
        users.append({"name": f"j{j:05d}", "demand": [f"{x}/10" for x in d], "tasks": 10,
                      "queue": leaf_names[j % leaves]})
    cap = [max(1, math.ceil(load * v)) for v in request]
    return parse_environment({"resources": ["cpu", "mem", "gpu"], "servers": [{"name": "n", "capacity": cap}],
                              "queues": queues, "users": users})


def timed(f):
    t0 = time.perf_counter()
    a = f()
    return a, time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", default="1000,10000,20000", help="comma-separated sizes (whole tasks requested)")
    p.add_argument("--reference", default="250,500,1000", help="sizes for the full-recompute reference ('' = none)")
    p.add_argument("--load", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    head = f"{'tasks':>7} {'jobs':>6} {'queues':>6} {'placed':>7} {'seconds':>8} {'us/task':>8}"
    print(head + "  (volcano-hdrf, registry)")
    for n in [int(v) for v in a.tasks.split(",") if v]:
        env = build(n, a.seed, a.load)
        alloc, dt = timed(lambda: mechanisms.allocate("volcano-hdrf", env))
        placed = alloc.info["steps"]
        print(f"{n:7d} {env.n_users:6d} {env.n_queues:6d} {placed:7d} {dt:8.3f} {1e6 * dt / max(placed, 1):8.1f}"
              f"  (tree rebuilds: {alloc.info['rebuilds']})")
    sizes = [int(v) for v in a.reference.split(",") if v]
    if sizes:
        print(head + "  (reference: full recompute per task)   fast   same allocation")
        for n in sizes:
            env = build(n, a.seed, a.load)
            ref, dt = timed(lambda: volcano_hdrf_reference(env))
            fast, dt_fast = timed(lambda: mechanisms.allocate("volcano-hdrf", env))
            placed = ref.info["steps"]
            print(f"{n:7d} {env.n_users:6d} {env.n_queues:6d} {placed:7d} {dt:8.3f} {1e6 * dt / max(placed, 1):8.1f}"
                  f"  {'':38s}{dt_fast:6.3f} s  {ref.x == fast.x}")


if __name__ == "__main__":
    main()
