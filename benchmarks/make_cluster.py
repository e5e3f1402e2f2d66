"""Write a large random instance (JSON, the instance format of README.md) for the scale benchmarks.

    python benchmarks/make_cluster.py --users 1000 --servers 100 --resources 3 > /tmp/big.json
    python benchmarks/make_cluster.py --users 100 --servers 30 --resources 3 --placement 0.5 -o /tmp/mid.json

Servers come in four classes (like seed 002's Table IV cluster): capacities are the class's vector
(integers 8..64 per resource) so that the instance has few distinct server types, as real clusters do.
Demands are integers 1..8 per resource (``--zero`` makes a fraction of entries 0); with ``--placement p``
each user is eligible on a random subset holding each server with probability ``p`` (at least one).
Deterministic for a given ``--seed``.  Nothing generated here is committed: tests and benchmarks make
their own instances.
"""
from __future__ import annotations

import argparse
import json
import random
import sys


def make_instance(users: int, servers: int, resources: int, seed: int = 0, placement: float = 1.0,
                  zero: float = 0.0, classes: int = 4) -> dict:
    """A random instance as a dict (the instance format); see the module docstring."""
    rng = random.Random(seed)
    kinds = [[rng.randint(8, 64) for _ in range(resources)] for _ in range(classes)]
    names = [f"s{s + 1}" for s in range(servers)]
    out = {"resources": [f"r{r + 1}" for r in range(resources)],
           "servers": [{"name": n, "capacity": kinds[s % classes]} for s, n in enumerate(names)],
           "users": []}
    for j in range(users):
        d = [0 if rng.random() < zero else rng.randint(1, 8) for _ in range(resources)]
        if not any(d):
            d[rng.randrange(resources)] = rng.randint(1, 8)
        u = {"name": f"u{j + 1}", "demand": d}
        if placement < 1.0:
            el = [n for n in names if rng.random() < placement] or [rng.choice(names)]
            u["eligible"] = el
        out["users"].append(u)
    return out


def main(argv=None) -> int:
    """Command line: print (or write ``-o``) one instance."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--users", type=int, default=100)
    p.add_argument("--servers", type=int, default=30)
    p.add_argument("--resources", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--placement", type=float, default=1.0, help="probability a server is eligible (default 1)")
    p.add_argument("--zero", type=float, default=0.0, help="probability a demand entry is 0 (default 0)")
    p.add_argument("-o", "--out", default=None, help="output file (default: stdout)")
    a = p.parse_args(argv)
    text = json.dumps(make_instance(a.users, a.servers, a.resources, a.seed, a.placement, a.zero))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
