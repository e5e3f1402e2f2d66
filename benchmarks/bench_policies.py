"""Benchmark: ``mechverify.policies.progressive_filling`` (whole tasks) and ``mesos-drf`` on ``--users`` users x
``--servers`` servers x 3 resources, sized so that about ``--tasks`` whole tasks are placed.  Not a test:

    python benchmarks/bench_policies.py [--users 100] [--servers 10] [--tasks 10000] [--seed 0]

Instance (seeded): per-task demands uniform in {1..4} cpu, {1..8} mem, {0..1} gpu; the servers share
``--tasks`` times the mean demand, split evenly (integers).  Prints, per ordering, the time and tasks per
second: the fewest-tasks key (the loop alone), the weighted dominant share key, ``mesos-drf`` (its key
``(share, count, name)`` and the registry's setting and output checks), and the dominant share key with
``local=False`` (every key re-evaluated at every step; on a tenth of the tasks).
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mechanisms  # noqa: E402
from mechverify.instances import parse_environment  # noqa: E402
from mechverify.policies import progressive_filling  # noqa: E402


def build(users: int, servers: int, tasks: int, seed: int):
    rng = random.Random(seed)
    dem = [[rng.randint(1, 4), rng.randint(1, 8), rng.randint(0, 1)] for _ in range(users)]
    mean = [sum(d[r] for d in dem) / users for r in range(3)]
    cap = [max(1, int(tasks * m / servers)) for m in mean]
    return parse_environment({"resources": ["cpu", "mem", "gpu"],
                              "servers": [{"name": f"s{s}", "capacity": cap} for s in range(servers)],
                              "users": [{"name": f"u{j:03d}", "demand": d} for j, d in enumerate(dem)]})


def timed(label, f):
    t0 = time.perf_counter()
    a = f()
    dt = time.perf_counter() - t0
    n = int(sum(a.totals()))
    print(f"{label:40s} {n:7d} tasks  {dt:6.3f} s  {n / dt:9.0f} tasks/s")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--users", type=int, default=100)
    p.add_argument("--servers", type=int, default=10)
    p.add_argument("--tasks", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    env = build(a.users, a.servers, a.tasks, a.seed)
    print(env.describe())
    timed("fewest tasks first", lambda: progressive_filling(env, lambda st, j: st.tasks[j]))
    timed("weighted dominant share", lambda: progressive_filling(env, lambda st, j: st.dominant_share(j)
                                                                  / env.weight[j]))
    timed("mesos-drf (registry: setting + output check)", lambda: mechanisms.allocate("mesos-drf", env))
    small = build(a.users, a.servers, a.tasks // 10, a.seed)
    timed("dominant share, local=False (tasks / 10)",
          lambda: progressive_filling(small, lambda st, j: st.dominant_share(j), local=False))


if __name__ == "__main__":
    main()
