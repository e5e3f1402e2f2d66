"""Allocation throughput of the mechanisms against straightforward implementations, in ONE process on the
SAME random instances; prints a Markdown table of per-instance times and RATIOS.  Not a test; run on demand:

    python benchmarks/bench_mechanisms.py                    # 100 instances, every baseline
    python benchmarks/bench_mechanisms.py --no-cvxpy         # skip the (slow) cvxpy baselines
    python benchmarks/bench_mechanisms.py --root /other/checkout   # time another checkout's mechanisms
                                                             # (same baselines, same instances)

Baselines (``benchmarks/baselines.py``): for every LP mechanism a ``scipy.optimize.linprog`` progressive
filling and a cvxpy formulation (cvxpy is the ``bench`` extra: ``pip install -e .[bench]``); for ``drf``
an exact-``Fraction`` progressive filling; for ``psdsf-rdm``/``psdsf-tdm`` Algorithm I with a float
water filling in numpy.  Instances (seeded): 3 users x 2 servers x 2 resources (drf: 4 users x 1
server x 3 resources), integer capacities 1..20, per-task demands 1..6, weights 1, no placement, no
bounds, no external resources.  Times are CPU seconds per instance.  Ratios are baseline time / mechanism time (> 1: the mechanism is
faster).  LP mechanisms are compared in float mode (the baselines are floats; the exact column is
shown too); drf in exact mode against the exact baseline; PS-DSF (always exact inside) against floats.
``scipy`` freezes users by the definition (a probe LP per active user after every round); ``scipy
(duals)`` by non-zero duals (fewer LPs, the project's own method).  Every baseline's task totals are compared with the mechanism's (column "max |diff|").
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LP_MECHS = ["drfh", "c-drfh", "drfh-lp7", "tsf", "cdrf", "tsf-er", "tsf-er-maxmin", "drf-er"]
TARGETS = {"scipy": 10.0, "cvxpy": 30.0, "fraction": 20.0, "numpy": 3.0}


def instances(n: int, seed: int, users: int, servers: int, resources: int):
    """``n`` random instances as dicts (see the module docstring)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        out.append({"resources": [f"r{r}" for r in range(resources)],
                    "servers": [{"name": f"s{s}", "capacity": [rng.randint(1, 20) for _ in range(resources)]}
                                for s in range(servers)],
                    "users": [{"name": f"u{j}", "demand": [rng.randint(1, 6) for _ in range(resources)]}
                              for j in range(users)]})
    return out


def per_instance(fn, items, repeat: int) -> float:
    """Best-of-``repeat`` mean CPU seconds per item of ``fn(item)`` (CPU time: the box may be shared).
    ``items`` is a list of environments, or a function returning a FRESH list for every pass (so that
    no pass profits from the memos an earlier pass left in the environment objects)."""
    best = None
    make = items if callable(items) else (lambda: items)
    for _ in range(repeat):
        items = make()
        t0 = time.process_time()
        for it in items:
            fn(it)
        dt = (time.process_time() - t0) / len(items)
        best = dt if best is None else min(best, dt)
    return best


def max_diff(a, b) -> float:
    return max(abs(float(x) - float(y)) / max(1.0, abs(float(y))) for x, y in zip(a, b))


def ms(v):
    return "-" if v is None else f"{v * 1e3:.3f}"


def ratio(base, own, target):
    if base is None or own is None:
        return "-"
    r = base / own
    return f"{r:.1f}x" + ("" if r >= target else " (below target)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many passes for the fast timings")
    ap.add_argument("--no-cvxpy", action="store_true")
    ap.add_argument("--root", default=os.path.dirname(HERE), help="project checkout whose mechanisms are timed")
    ap.add_argument("--only", nargs="*", help="mechanism names (default: all of the table)")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.abspath(args.root))
    sys.path.insert(1, HERE)
    import baselines as B
    import mechanisms
    from mechverify.instances import parse_environment

    print(f"mechanisms from {os.path.abspath(args.root)}; {args.instances} instances, seed {args.seed}\n")
    dicts = instances(args.instances, args.seed, 3, 2, 2)
    envs = [parse_environment(d) for d in dicts]

    def fresh():
        return [parse_environment(d) for d in dicts]
    names = args.only or (LP_MECHS + ["drf", "psdsf-rdm", "psdsf-tdm"])
    for e in envs[:3]:  # warm up imports and caches of every code path timed below
        for name in names:
            for exact in (False, True):  # the exact path's first call imports its libraries
                if name != "drf":  # (drf is timed on one-server instances)
                    mechanisms.allocate(mechanisms.get(name), e, exact=exact)
            if name in LP_MECHS:
                B.scipy_mechanism(e, name)
                if not args.no_cvxpy:
                    B.cvxpy_mechanism(e, name)
    print("| mechanism | own float ms | own exact ms | baseline | baseline ms | ratio | scipy (duals) ms | ratio "
          "| cvxpy ms | ratio | max |diff| |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        mech = mechanisms.get(name)
        if name == "drf":
            ddicts = instances(args.instances, args.seed, 4, 1, 3)
            denvs = [parse_environment(d) for d in ddicts]

            def dfresh():
                return [parse_environment(d) for d in ddicts]
            own_f = per_instance(lambda e: mechanisms.allocate(mech, e, exact=False), dfresh, args.repeat)
            own_x = per_instance(lambda e: mechanisms.allocate(mech, e, exact=True), dfresh, args.repeat)
            base = per_instance(B.fraction_drf, dfresh, args.repeat)
            diff = max(max_diff(mechanisms.allocate(mech, e, exact=True).totals(), B.fraction_drf(e)) for e in denvs)
            print(f"| drf (4x1x3) | {ms(own_f)} | {ms(own_x)} | Fraction filling | {ms(base)} | "
                  f"{ratio(base, own_x, TARGETS['fraction'])} (exact vs exact) | - | - | - | - | {diff:.1e} |")
            continue
        if name.startswith("psdsf"):
            mode = name.split("-")[1]
            own_f = per_instance(lambda e: mechanisms.allocate(mech, e, exact=False), fresh, args.repeat)
            own_x = per_instance(lambda e: mechanisms.allocate(mech, e, exact=True), fresh, args.repeat)
            base = per_instance(lambda e: B.numpy_psdsf(e, mode), fresh, args.repeat)
            diff = max(max_diff(mechanisms.allocate(mech, e, exact=False).totals(), B.numpy_psdsf(e, mode).sum(axis=1))
                       for e in envs) if mode == "tdm" else float("nan")
            print(f"| {name} | {ms(own_f)} | {ms(own_x)} | numpy water filling | {ms(base)} | "
                  f"{ratio(base, own_f, TARGETS['numpy'])} | - | - | - | - | {diff:.1e} |")
            continue
        own_f = per_instance(lambda e: mechanisms.allocate(mech, e, exact=False), fresh, args.repeat)
        own_x = per_instance(lambda e: mechanisms.allocate(mech, e, exact=True), fresh, 1)
        base = per_instance(lambda e: B.scipy_mechanism(e, name), fresh, 1)
        own_tot = [mechanisms.allocate(mech, e, exact=False).totals() for e in envs]
        diff = max(max_diff(B.scipy_mechanism(e, name), t) for e, t in zip(envs, own_tot))
        base_d = per_instance(lambda e: B.scipy_mechanism(e, name, duals=True), fresh, 1)
        diff = max(diff, max(max_diff(B.scipy_mechanism(e, name, duals=True), t) for e, t in zip(envs, own_tot)))
        cv = None
        if not args.no_cvxpy:
            cv = per_instance(lambda e: B.cvxpy_mechanism(e, name), fresh, 1)
            diff = max(diff, max(max_diff(B.cvxpy_mechanism(e, name), t) for e, t in zip(envs, own_tot)))
        print(f"| {name} | {ms(own_f)} | {ms(own_x)} | scipy linprog | {ms(base)} | "
              f"{ratio(base, own_f, TARGETS['scipy'])} | {ms(base_d)} | {ratio(base_d, own_f, TARGETS['scipy'])} | {ms(cv)} | {ratio(cv, own_f, TARGETS['cvxpy'])} | {diff:.1e} |")
        sys.stdout.flush()
    print("\nPS-DSF under RDM need not be unique, so its totals are not compared (nan); psdsf-tdm's are.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
