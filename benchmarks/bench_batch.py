"""Throughput of ``python -m verifier allocate MECH --batch`` (not a test; run on demand).

Generates N random small instances (3 users x 2 servers x 2 resources, seeded) into a JSONL file and
times one ``allocate --batch`` process per mechanism (process start-up and imports included, as a
user would see it).  Prints instances/second.

    python benchmarks/bench_batch.py                      # 1000 instances, drfh and tsf, float mode
    python benchmarks/bench_batch.py --exact              # the exact (rational) path
    python benchmarks/bench_batch.py --profile drfh       # cProfile of the in-process batch, top 25

Instances: integer capacities 1..20, demands 0..5 per resource (never all zero), weights 1 or 2;
no placement constraints and no task bounds, so drfh, tsf, cdrf and c-drfh all accept them.

Measured (2-core box shared with other jobs, load 5-7, so wall times are noisy; CPU = user + sys,
best of 5 runs, 1000 instances, float mode, whole process):
    before (9fcbb98):  drfh CPU 1.89 s (~530/s), tsf CPU 1.56-1.79 s (~560-640/s); best wall 1.6-1.9 s
    after  (perf commits 7670586, 54f918f):  drfh CPU 1.31 s (~760/s), tsf CPU 1.37 s (~730/s); best wall 1.4 s
In-process (parse + allocate + JSON, no start-up), best of 9: 1.35 s -> 1.02-1.07 s per 1000.
Output is byte-identical before/after (float and --exact).  HiGHS ``run`` is now the largest single
cost (~0.4 ms per instance); presolve off would be faster but changes which optimal vertex (server
split) is returned, so it is not used.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_instances(n: int, seed: int, users: int = 3, servers: int = 2, resources: int = 2) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        us = []
        for j in range(users):
            d = [rng.randint(0, 5) for _ in range(resources)]
            if not any(d):
                d[rng.randrange(resources)] = rng.randint(1, 5)
            us.append({"name": f"u{j + 1}", "demand": d, "weight": rng.choice([1, 1, 1, 2])})
        out.append({"resources": [f"r{r + 1}" for r in range(resources)],
                    "servers": [{"name": f"s{s + 1}", "capacity": [rng.randint(1, 20) for _ in range(resources)]}
                                for s in range(servers)],
                    "users": us})
    return out


def write_jsonl(instances: list[dict], path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for inst in instances:
            fh.write(json.dumps(inst) + "\n")


def time_batch(mech: str, path: str, exact: bool, root: str = ROOT) -> tuple[float, float, list[str]]:
    """(wall seconds, CPU seconds of the child, output lines) of one ``allocate --batch`` process."""
    cmd = [sys.executable, "-m", "verifier", "allocate", mech, "--batch", path] + (["--exact"] if exact else [])
    env = dict(os.environ, PYTHONPATH=root)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if out.returncode != 0:
        raise SystemExit(f"{mech}: exit {out.returncode}\n{out.stderr[-2000:]}")
    return dt, cpu, out.stdout.splitlines()


def profile(mech: str, path: str, exact: bool, top: int = 25) -> None:
    import cProfile
    import io
    import pstats

    sys.path.insert(0, ROOT)
    from verifier.cli import main

    argv = ["allocate", mech, "--batch", path] + (["--exact"] if exact else [])
    pr = cProfile.Profile()
    real = sys.stdout
    sys.stdout = io.StringIO()
    try:
        pr.enable()
        main(argv)
        pr.disable()
    finally:
        sys.stdout = real
    pstats.Stats(pr).sort_stats("cumulative").print_stats(top)
    pstats.Stats(pr).sort_stats("tottime").print_stats(top)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mechanisms", default="drfh,tsf")
    p.add_argument("--exact", action="store_true")
    p.add_argument("--out", default=None, help="where to write the JSONL (default: a temp file)")
    p.add_argument("--results", default=None, help="write each mechanism's output lines to RESULTS.MECH.jsonl")
    p.add_argument("--profile", metavar="MECH", default=None, help="cProfile one mechanism in-process instead")
    p.add_argument("--repeat", type=int, default=3, help="runs per mechanism; the best is reported (default 3)")
    p.add_argument("--root", default=ROOT, help="checkout to benchmark (e.g. an older 'git archive' of the repo)")
    args = p.parse_args()

    path = args.out or os.path.join(tempfile.mkdtemp(prefix="mechverify-bench-"), "instances.jsonl")
    write_jsonl(make_instances(args.n, args.seed), path)
    if args.profile:
        profile(args.profile, path, args.exact)
        return 0
    print(f"{args.n} instances (3 users x 2 servers x 2 resources, seed {args.seed}) in {path}; "
          f"{'exact' if args.exact else 'float'} mode")
    print("(best of %d runs; wall time includes start-up and imports; CPU = user + sys of the process)" % args.repeat)
    for mech in args.mechanisms.split(","):
        runs = [time_batch(mech, path, args.exact, args.root) for _ in range(args.repeat)]
        dt = min(r[0] for r in runs)
        cpu = min(r[1] for r in runs)
        lines = runs[0][2]
        errors = sum(1 for line in lines if '"error"' in line)
        print(f"{mech:10s} {len(lines)} results ({errors} errors): wall {dt:6.2f} s -> {args.n / dt:7.1f} instances/s;"
              f"  CPU {cpu:6.2f} s -> {args.n / cpu:7.1f} instances/s")
        if args.results:
            with open(f"{args.results}.{mech}.jsonl", "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
