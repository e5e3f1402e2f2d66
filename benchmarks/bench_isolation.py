"""The cost of running a user's mechanism in a worker process (``mechverify.isolation``).

Times ``run``'s SP search (the property that calls the mechanism most: once per misreport) on the
README's ``greedy`` (examples/my_mechanisms.py), a cheap user mechanism, with a fixed number of trials:
through the worker process (the default) and in the verifier's own process (``MECHVERIFY_IN_PROCESS=1``),
alternating, best of ``--repeat`` passes each.  Target (issue "A user's code is untrusted"): the worker
path keeps at least half of the in-process trials/s.

    python benchmarks/bench_isolation.py [--trials 2000] [--repeat 3] [--property sp]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from verifier.config import RunConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def one_pass(prop: str, trials: int, isolated: bool) -> tuple[float, int, int]:
    from mechanisms import get
    from verifier.run import run_mechanism

    os.environ["MECHVERIFY_IN_PROCESS"] = "" if isolated else "1"
    mech = get(os.path.join(ROOT, "examples", "my_mechanisms.py") + ":greedy")
    worker = mech.func.worker
    calls0 = worker.calls
    t0 = time.perf_counter()
    rep = run_mechanism(mech, [prop], RunConfig(budget=600, trials=trials, store=None))
    took = time.perf_counter() - t0
    (cell,) = [r for r in rep.results if r.property == prop]
    return took, cell.trials, worker.calls - calls0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--property", default="sp")
    args = ap.parse_args()
    one_pass(args.property, 50, True)  # warm up: imports, the first fork
    one_pass(args.property, 50, False)
    best = {True: None, False: None}
    for _ in range(args.repeat):
        for isolated in (True, False):
            took, trials, calls = one_pass(args.property, args.trials, isolated)
            rate = trials / took
            if best[isolated] is None or rate > best[isolated][0]:
                best[isolated] = (rate, trials, took, calls)
    print(f"{'path':<12} {'trials':>7} {'seconds':>8} {'trials/s':>9} {'worker calls':>13}")
    for isolated, label in ((False, "in-process"), (True, "worker")):
        rate, trials, took, calls = best[isolated]
        print(f"{label:<12} {trials:>7} {took:>8.2f} {rate:>9.0f} {calls:>13}")
    ratio = best[False][0] / best[True][0]
    print(f"in-process / worker trials/s: {ratio:.2f}x (target <= 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
