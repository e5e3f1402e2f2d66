"""Benchmark: ``yarn-drf``'s incremental descent against the literal one (every visited parent's ``TreeSet``
filled afresh every round), in the same run.  Not a test:

    python benchmarks/bench_yarn_drf.py [--sizes 1000,3000,10000] [--nested 99x100] [--tasks 3] [--budget 20]
                                        [--full] [--seed 0]

Instances (seeded): ``n`` queues of weight 1-4, every other one with a min share (guarantee) of 1-9 units per
resource, one app each demanding 1-3 units of <mem, vcores>, on a pool of <10^4, 10^4> (a unit is
``10^4 / (2 n tasks)``: about ``--tasks`` containers per app fit).  Flat: the queues at the top level;
``--nested PxL``: P parents of L leaf queues each (at most 10^4 queues in all, the instance limit).

The incremental descent runs to the end.  The literal one costs a ``TreeSet`` of every queue per round, O(Q log Q)
comparisons, for about Q x tasks rounds: at 10^4 queues that is hours, so by default it runs the first rounds that
fit in ``--budget`` seconds (calibrated on 2 rounds) and its full time is PROJECTED as (time per literal round) x
(rounds of the run) -- marked ``~``; ``--full`` runs it to the end.  Both must agree: the tasks after the literal
prefix equal the incremental descent's after as many rounds, and with ``--full`` the whole allocation (checked).

Measured (2026-11-28, this 2-core box, load average ~4.5; ``~``: projected from the literal prefix):

    flat 1000:    3241 rounds; incremental 0.26 s; literal ~861 s (92 rounds in 24.5 s); ~3300x
    flat 3000:    9856 rounds; incremental 1.46 s; literal ~9533 s (18 rounds in 17.4 s); ~6500x
    flat 10000:  32884 rounds; incremental 4.61 s; literal ~103 000 s, about 29 hours (7 rounds in 21.9 s)
    nested 99x100: 32499 rounds; incremental 5.55 s; literal ~789 s (242 rounds in 5.9 s); ~140x
    --full: flat 400, 1325 rounds: incremental 0.16 s, literal 106 s, equal; nested 20x30, 1958 rounds:
            0.64 s against 12.8 s, equal

The code before the incremental descent: flat 200 in 10.9 s (the literal path now: 11.7 s; incremental 0.15 s).
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mechanisms.ports.yarn.drf import place  # noqa: E402
from mechverify.instances import parse_environment  # noqa: E402

CAP = 10_000


def build(names: list[str], tasks: int, seed: int, parents: tuple[str, ...] = ()):
    rng = random.Random(seed)
    n = len(names)
    unit = Fraction(CAP, 2 * n * tasks)

    def num(k: int) -> str:
        return str(k * unit)

    qs = [{"name": p, "weight": rng.randint(1, 4)} for p in parents]
    qs += [{"name": q, "weight": rng.randint(1, 4),
            **({"guarantee": [num(rng.randint(1, 9)), num(rng.randint(1, 9))]} if i % 2 else {})}
           for i, q in enumerate(names)]
    users = [{"name": f"u{i}", "queue": q, "demand": [num(rng.randint(1, 3)), num(rng.randint(1, 3))]}
             for i, q in enumerate(names)]
    return parse_environment({"resources": ["mem", "vcores"], "servers": [{"name": "pool", "capacity": [CAP, CAP]}],
                              "queues": qs, "users": users})


def flat(n: int, tasks: int, seed: int):
    return build([f"q{i:05d}" for i in range(n)], tasks, seed)


def nested(p: int, leaves: int, tasks: int, seed: int):
    parents = tuple(f"p{a:03d}" for a in range(p))
    return build([f"{pa}/q{b:03d}" for pa in parents for b in range(leaves)], tasks, seed, parents)


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def compare(label: str, env, budget: float, full: bool) -> None:
    zero = [0] * env.n_users
    (tasks, rounds), t_inc = timed(lambda: place(env, zero))
    if full:
        lit, t_lit = timed(lambda: place(env, zero, literal=True))
        assert lit == (tasks, rounds), "the two descents disagree"
        shown, k = f"{t_lit:.2f} s", rounds
    else:
        _, t2 = timed(lambda: place(env, zero, literal=True, rounds=2))
        k = max(2, min(rounds, int(budget / max(t2 / 2, 1e-9))))
        lit, t_k = timed(lambda: place(env, zero, literal=True, rounds=k))
        assert lit == place(env, zero, rounds=k), "the two descents disagree"
        if k == rounds:
            assert lit == (tasks, rounds), "the two descents disagree"
            t_lit, shown = t_k, f"{t_k:.2f} s"
        else:
            t_lit = t_k / k * rounds
            shown = f"~{t_lit:.0f} s ({k} rounds in {t_k:.1f} s)"
    print(f"{label:>24}: {rounds:6d} rounds; incremental {t_inc:6.2f} s; literal {shown}; "
          f"{'~' if k < rounds else ''}{t_lit / t_inc:.0f}x; equal on {k} rounds", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,3000,10000", help="flat trees of these many queues")
    ap.add_argument("--nested", default="99x100", help="PxL: P parents of L leaf queues ('' for none)")
    ap.add_argument("--tasks", type=int, default=3)
    ap.add_argument("--budget", type=float, default=20.0, help="seconds of literal rounds per instance")
    ap.add_argument("--full", action="store_true", help="run the literal descent to the end")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    for n in (int(s) for s in a.sizes.split(",") if s):
        compare(f"flat {n}", flat(n, a.tasks, a.seed), a.budget, a.full)
    if a.nested:
        p, leaves = (int(v) for v in a.nested.split("x"))
        compare(f"nested {p}x{leaves}", nested(p, leaves, a.tasks, a.seed), a.budget, a.full)


if __name__ == "__main__":
    main()
