"""Compare ``lmm-mms`` (definition, shared leximin solver) with ``lmm-mms-linear`` (Algorithm 1 as printed)
exactly on random instances of seed 003's setting, and shrink the smallest disagreement.

    python benchmarks/compare_lmm_mms.py [--n 1000] [--seed 3] [--write examples/003-lmm-disagreement.json]

Instances: one pool, 1-3 resources, 1-5 users, integer capacities 1..12, integer demands 1..4, integer
bounds 1..8 (small integers, so both sides are exact rationals and compared with ``==``).
Besides the registered reading (upper median, line 10 as printed) it measures two unregistered
readings of Algorithm 1 (``mechanisms.paper.lmm_mms.algorithm1``): the lower median (R6), the proof of
Thm 2's feasibility test (``x_i = theta_i MMS_i`` instead of ``B_i``, R3) and the printed strict
``theta_i < theta^max_i`` dummy rule (R4), to show which printed detail causes the disagreements.
``--exhaustive S`` then checks every instance with <= 3 users, <= 2 resources and numbers summing
to <= S, so the reported disagreement is the smallest one, not just a greedy local minimum.

Shrinking (greedy, deterministic): repeatedly take the first of these moves that keeps the
disagreement -- drop a user, drop a resource, lower one number (to 1, to half, by 1) -- until none
does.  Size order: users, resources, then the sum of all numbers.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from fractions import Fraction

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mechanisms import allocate  # noqa: E402
from mechanisms.paper.lmm_mms import AlgorithmStall, algorithm1  # noqa: E402
from mechverify.instances import parse_environment  # noqa: E402


def instance(caps, demands, bounds) -> dict:
    m = len(caps)
    return {"resources": [f"r{j + 1}" for j in range(m)],
            "servers": [{"name": "pool", "capacity": list(caps)}],
            "users": [{"name": f"u{i + 1}", "demand": list(d), "tasks": b}
                      for i, (d, b) in enumerate(zip(demands, bounds))]}


def random_instance(rng: random.Random):
    m = rng.randint(1, 3)
    n = rng.randint(1, 5)
    caps = [rng.randint(1, 12) for _ in range(m)]
    demands = [[rng.randint(1, 4) for _ in range(m)] for _ in range(n)]
    bounds = [rng.randint(1, 8) for _ in range(n)]
    return caps, demands, bounds


def totals(mech: str, data) -> tuple:
    env = parse_environment(instance(*data))
    return allocate(mech, env, exact=True).totals()


def variant_totals(data, **kw):
    env = parse_environment(instance(*data))
    try:
        return tuple(algorithm1(env, **kw)["x"])
    except AlgorithmStall:
        return "stall"


def disagree(data) -> bool:
    return totals("lmm-mms", data) != totals("lmm-mms-linear", data)


def size(data):
    caps, demands, bounds = data
    return (len(bounds), len(caps), sum(caps) + sum(map(sum, demands)) + sum(bounds))


def moves(data):
    caps, demands, bounds = data
    n, m = len(bounds), len(caps)
    if n > 1:
        for i in range(n):
            yield caps, demands[:i] + demands[i + 1:], bounds[:i] + bounds[i + 1:]
    if m > 1:
        for j in range(m):
            yield caps[:j] + caps[j + 1:], [d[:j] + d[j + 1:] for d in demands], bounds

    def smaller(v):
        return sorted({w for w in (1, v // 2, v - 1) if 1 <= w < v})

    for j in range(m):
        for w in smaller(caps[j]):
            yield caps[:j] + [w] + caps[j + 1:], demands, bounds
    for i in range(n):
        for j in range(m):
            for w in smaller(demands[i][j]):
                nd = [list(d) for d in demands]
                nd[i][j] = w
                yield caps, nd, bounds
    for i in range(n):
        for w in smaller(bounds[i]):
            yield caps, demands, bounds[:i] + [w] + bounds[i + 1:]


def shrink(data):
    steps = 0
    while True:
        for cand in moves(data):
            if disagree(cand):
                data, steps = cand, steps + 1
                break
        else:
            return data, steps


def compositions(k: int, total: int):
    """All tuples of ``k`` positive integers with sum <= ``total``."""
    if k == 0:
        yield ()
        return
    for first in range(1, total - (k - 1) + 1):
        for rest in compositions(k - 1, total - first):
            yield (first,) + rest


def exhaustive(max_sum: int, max_users: int = 3, max_resources: int = 2):
    """Every instance with at most ``max_users`` users and ``max_resources`` resources whose numbers sum
    to at most ``max_sum``; returns (checked, disagreements sorted by size)."""
    checked, found = 0, []
    for n in range(1, max_users + 1):
        for m in range(1, max_resources + 1):
            for nums in compositions(m + n * m + n, max_sum):
                caps = list(nums[:m])
                demands = [list(nums[m + i * m: m + (i + 1) * m]) for i in range(n)]
                bounds = list(nums[m + n * m:])
                checked += 1
                data = (caps, demands, bounds)
                if disagree(data):
                    found.append(data)
    return checked, sorted(found, key=size)


def fmt(v):
    if isinstance(v, str):
        return v
    return "(" + ", ".join(str(Fraction(x)) for x in v) + ")"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--exhaustive", type=int, metavar="S", default=12,
                    help="also check EVERY instance with <= 3 users, <= 2 resources and numbers summing to <= S "
                         "(0: skip)")
    ap.add_argument("--write", metavar="PATH", help="store the shrunk disagreement as an instance JSON file")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    counts = {"printed (registered)": 0, "lower median": 0, "proof test": 0, "strict '<' dummy rule": 0}
    stalls = 0
    infeasible = 0
    first = None
    shapes = {}
    for k in range(args.n):
        data = random_instance(rng)
        ref = totals("lmm-mms", data)
        lin = totals("lmm-mms-linear", data)
        if ref != lin:
            counts["printed (registered)"] += 1
            key = (len(data[2]), len(data[0]))
            shapes[key] = shapes.get(key, 0) + 1
            if any(x > b for x, b in zip(lin, data[2])):
                infeasible += 1
            if first is None or size(data) < size(first):
                first = data
        if variant_totals(data, median="lower") != ref:
            counts["lower median"] += 1
        if variant_totals(data, test="proof") != ref:
            counts["proof test"] += 1
        strict = variant_totals(data, dummy_rule="gt")
        if strict != ref:
            counts["strict '<' dummy rule"] += 1
            stalls += strict == "stall"
    dt = time.perf_counter() - t0
    print(f"{args.n} random instances (seed {args.seed}), exact comparison with lmm-mms, {dt:.1f} s")
    for name, c in counts.items():
        print(f"  Algorithm 1, {name:22s}: {c:5d} disagreements")
    print(f"  strict '<' dummy rule: {stalls} of its disagreements are stalls (no progress, loops forever)")
    print(f"  registered reading: {infeasible} of its disagreements give some x_i > B_i")
    print(f"  disagreements by (users, resources): {dict(sorted(shapes.items()))}")
    small = None
    if first is not None:
        small, steps = shrink(first)
        print(f"smallest random disagreement {size(first)} shrunk in {steps} greedy steps to {size(small)}")
    if args.exhaustive:
        t1 = time.perf_counter()
        checked, found = exhaustive(args.exhaustive)
        print(f"exhaustive: {checked} instances (<= 3 users, <= 2 resources, numbers sum <= {args.exhaustive}) "
              f"in {time.perf_counter() - t1:.1f} s: {len(found)} disagreements; smallest: "
              + (f"{found[0]} size {size(found[0])}" if found else "-"))
        if found and (small is None or size(found[0]) < size(small)):
            print("  (smaller than the greedy result: using it)")
            small = found[0]
    if small is None:
        print("lmm-mms and lmm-mms-linear agree on every instance checked")
        return 0
    inst = instance(*small)
    print("disagreement (users, resources, sum of numbers) = " + str(size(small)) + ":")
    print("  " + json.dumps(inst))
    print(f"  lmm-mms        x = {fmt(totals('lmm-mms', small))}")
    print(f"  lmm-mms-linear x = {fmt(totals('lmm-mms-linear', small))}")
    env = parse_environment(inst)
    for step in algorithm1(env)["trace"]:
        print("    " + ", ".join(f"{k}={fmt(v) if isinstance(v, list) and k in ('use', 'capacity', 'delta') else v}"
                                 for k, v in step.items()))
    if args.write:
        src = (f"seed 003 Algorithm 1 as printed (lmm-mms-linear) vs the LMM-MMS definition (lmm-mms): "
               f"benchmarks/compare_lmm_mms.py --n {args.n} --seed {args.seed}, shrunk greedily"
               + (f"; --exhaustive {args.exhaustive} finds no smaller disagreement" if args.exhaustive else ""))
        desc = (f"lmm-mms x = {fmt(totals('lmm-mms', small))}; "
                f"lmm-mms-linear x = {fmt(totals('lmm-mms-linear', small))} "
                f"(hand derivation in tests/test_lmm_mms.py)")
        lines = ["{" + f'"source": {json.dumps(src)},', f' "description": {json.dumps(desc)},',
                 f' "resources": {json.dumps(inst["resources"])},',
                 f' "servers": {json.dumps(inst["servers"])},', ' "users": [']
        lines += ["   " + json.dumps(u) + ("," if k < len(inst["users"]) - 1 else "")
                  for k, u in enumerate(inst["users"])]
        lines.append("]}")
        with open(args.write, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        print(f"wrote {args.write}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
