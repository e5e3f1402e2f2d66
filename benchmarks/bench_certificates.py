"""Time of the exact LP certificates (docs/certificates.md): making one (the mechanism's exact allocation,
then the exact domination / level LP with duals, then the checker's own pass) and checking one
(``mechverify.lp_certificate_checker`` alone), on the seed examples and random clusters (``make_cluster``).  Run on demand:

    python benchmarks/bench_certificates.py [--repeat 3]

Prints one line per (mechanism, instance): the shape, seconds for the exact allocation, for the PO and the
level certificate (LP + the checker's pass), for the checker alone on each, and the file sizes.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from make_cluster import make_instance  # noqa: E402

from mechanisms import get  # noqa: E402
from mechverify import lp_certificate_checker  # noqa: E402
from mechverify.instances import load_environment, parse_environment  # noqa: E402
from mechverify.lp_certificates import level_certificate, pareto_certificate  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _best(f, repeat):
    best, out = None, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    cases = [("tsf", "000-fig1", load_environment(os.path.join(ROOT, "examples", "000-fig1.json"))),
             ("drfh", "001-fig1", load_environment(os.path.join(ROOT, "examples", "001-fig1.json"))),
             ("tsf", "002-fig5-cluster", load_environment(os.path.join(ROOT, "examples", "002-fig5-cluster.json")))]
    for users, servers in ((20, 8), (50, 10), (100, 20)):
        cases.append(("tsf", f"cluster {users}x{servers}x3",
                      parse_environment(make_instance(users, servers, 3, seed=1, placement=0.5))))
    print("mechanism  instance                      shape                         alloc_s  po_s    level_s "
          "check_po_s check_level_s  po_kB  level_kB")
    for name, label, env in cases:
        mech = get(name)
        ta, alloc = _best(lambda: mech(env, exact=True), args.repeat)
        tp, (po, why) = _best(lambda: pareto_certificate(env, alloc, mech.setting.feasibility), args.repeat)
        tl, (lv, why2) = _best(lambda: level_certificate(env, alloc, mech.setting.feasibility, mech.z3.normaliser),
                               args.repeat)
        if po is None or lv is None:
            print(f"{name} {label}: no certificate ({why or why2})")
            continue
        cp, _ = _best(lambda: lp_certificate_checker.check_certificate(po), args.repeat)
        cl, _ = _best(lambda: lp_certificate_checker.check_certificate(lv), args.repeat)
        print(f"{name:10s} {label:29s} {env.describe():29s} {ta:7.3f}  {tp:6.3f}  {tl:6.3f}  {cp:9.3f}  "
              f"{cl:12.3f}  {len(json.dumps(po)) / 1024:5.0f}  {len(json.dumps(lv)) / 1024:8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
