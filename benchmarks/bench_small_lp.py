"""Where tiny LPs should stop going to GLPK (``mechverify.small_lp``) and go to HiGHS: one float
allocation of a leximin mechanism (default ``tsf``) on random instances of growing size, solved once
with every LP through GLPK first and once with every LP through HiGHS (for Algorithm 1 mechanisms:
their numpy-built HiGHS path), in the same process.  Not a test; run on demand:

    python benchmarks/bench_small_lp.py                 # tsf, the default shapes
    python benchmarks/bench_small_lp.py --mechanism drfh-lp7 --instances 50

Prints, per shape, the size measure of ``lp.is_small`` (``rows * (rows + cols)`` of the first LP) and
the CPU milliseconds per allocation of both paths; ``SMALL_LP_MAX`` belongs where they cross.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(2, 2, 2), (3, 2, 2), (4, 2, 2), (4, 3, 2), (5, 3, 2), (6, 3, 3), (8, 3, 3), (8, 4, 3), (10, 4, 3),
          (12, 5, 3), (16, 5, 3)]


def environments(n: int, seed: int, users: int, servers: int, resources: int) -> list:
    """``n`` random environment dicts (capacities 1..20, demands 1..6, no placement)."""
    rng = random.Random(seed)
    return [{"resources": [f"r{r}" for r in range(resources)],
             "servers": [{"name": f"s{s}", "capacity": [rng.randint(1, 20) for _ in range(resources)]}
                         for s in range(servers)],
             "users": [{"name": f"u{j}", "demand": [rng.randint(1, 6) for _ in range(resources)]}
                       for j in range(users)]} for _ in range(n)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mechanism", default="tsf")
    ap.add_argument("--instances", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many passes")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.dirname(HERE))
    import mechanisms
    import mechverify.lp as L
    from mechverify.instances import parse_environment

    mech = mechanisms.get(args.mechanism)
    print(f"{args.mechanism}, {args.instances} instances per shape, CPU ms per float allocation\n")
    print("| users x servers x resources | rows*(rows+cols) | GLPK ms | HiGHS ms | HiGHS / GLPK |")
    print("|---|---|---|---|---|")
    seen: list = []
    real, limit0 = L.LPSession.solve, L.SMALL_LP_MAX

    def spy(self, exact=False):  # the size of the first LP of an allocation
        if not seen:
            seen.append(self.lp.n_rows * (self.lp.n_rows + self.lp.n_cols))
        return real(self, exact)

    for shape in SHAPES:
        dicts = environments(args.instances, 0, *shape)
        times = {}
        for label, limit in (("glpk", 10 ** 9), ("highs", -1)):
            L.SMALL_LP_MAX = limit
            best = None
            for _ in range(args.repeat):
                envs = [parse_environment(d) for d in dicts]
                t0 = time.process_time()
                for e in envs:
                    mechanisms.allocate(mech, e, exact=False)
                dt = (time.process_time() - t0) / len(envs)
                best = dt if best is None else min(best, dt)
            times[label] = best
        seen.clear()
        L.SMALL_LP_MAX = 10 ** 9  # the size as the GLPK path sees it (Algorithm 1's HiGHS path builds no LPSession)
        L.LPSession.solve = spy
        mechanisms.allocate(mech, parse_environment(dicts[0]), exact=False)
        L.LPSession.solve = real
        size = seen[0] if seen else "-"
        print(f"| {' x '.join(map(str, shape))} | {size} | {times['glpk'] * 1e3:.3f} | {times['highs'] * 1e3:.3f} | "
              f"{times['highs'] / times['glpk']:.2f} |")
    L.SMALL_LP_MAX = limit0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
