"""Executions (docs/executions.md): how fast a mechanism steps through a trace, how fast the search over traces
runs, and what an exact replay costs -- each against a baseline measured in the same run.

1. **A long trace on the float path**: ``--events`` events (arrivals and departures at random, ~``--users``
   present) through ``drf+recompute`` -- DRF on the pooled cluster of ``--servers`` servers (DRF's one-pool
   model) -- and ``per-server-drf+recompute`` (DRF on each of the servers), in floats.  Baseline: the same
   environments allocated by the same float allocator directly (the stepping's own cost is the difference).
   Target (issue "Time I"): 10^4 events on 50 users x 10 servers in <= 5 s.
2. **The search over traces**: traces per second of the search (``verifier.engines.traces``) for a round
   mechanism, per-round max-min (``round-maxmin``), judging ``each-step/si`` and ``each-step/ef`` (at most 10
   events, 3 users).  Baseline: the same traces run without judging.  Target: >= 200 traces/s.
3. **Exact replay**: a 100-event trace (10 users) through ``drf+recompute`` exactly, against the same trace in
   floats.  Target: <= 1 s.

How the cost grows: (1) is run at ``--events`` / 4, / 2 and 1x, and with 25 and 50 users.

    python benchmarks/bench_executions.py [--events 10000] [--users 50] [--servers 10] [--search-seconds 5]
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from fractions import Fraction as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

import mechanisms  # noqa: E402
from mechanisms.core.time import execute  # noqa: E402
from mechverify.execution import Event, Execution, UserSpec  # noqa: E402
from mechverify.model import deferred_validation  # noqa: E402


def trace(events: int, users: int, servers: int, pooled: bool, seed: int = 0, with_users: int = 0) -> Execution:
    rng = random.Random(seed)

    def spec(name: str) -> UserSpec:
        return UserSpec(name, (F(rng.randint(1, 8)), F(rng.randint(1, 32))))

    initial = tuple(spec(f"u{j}") for j in range(users))
    present = [u.name for u in initial]
    evs, k = [], users
    for i in range(events):
        t = F(i + 1)
        if rng.random() < 0.5 and len(present) > users // 2:
            u = rng.choice(present)
            present.remove(u)
            evs.append(Event(t, "leave", u))
        else:
            name = f"v{k}"
            k += 1
            present.append(name)
            evs.append(Event(t, "arrive", name, spec=spec(name)))
    cap = (F(64), F(256))
    if pooled:
        return Execution(("cpu", "mem"), ("pool",), (tuple(c * servers for c in cap),), initial, tuple(evs))
    return Execution(("cpu", "mem"), tuple(f"s{s}" for s in range(servers)), (cap,) * servers, initial, tuple(evs))


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def long_trace(args) -> None:
    print(f"1. a long trace on the float path (target: 10^4 events, 50 users x 10 servers, <= 5 s)")
    for name, pooled in (("drf", True), ("per-server-drf", False)):
        mech = mechanisms.get(name)
        lifted = mechanisms.get(f"{name}+recompute")
        for users, events in ((args.users // 2, args.events), (args.users, args.events // 4),
                              (args.users, args.events // 2), (args.users, args.events)):
            ex = trace(events, users, args.servers, pooled)
            secs, steps = timed(lambda: execute(lifted, ex, exact=False))
            envs = [st.env for st in steps if st.env is not None]
            # the floor: the same environments through the same float allocator (vectorised where it has one)
            one = (lambda e: mech.batch([e])[0] or mech(e, exact=False)) if mech.batch else (lambda e: mech(e, exact=False))
            with deferred_validation():
                base, _ = timed(lambda: [one(e) for e in envs])
            print(f"   {name + '+recompute':26s} {users:3d} users, {events:6d} events: {secs:6.2f} s "
                  f"({events / secs:7.0f} events/s); one-shot calls alone {base:6.2f} s (x{secs / base:4.2f})")


def search_speed(args) -> None:
    from verifier.engines.traces import TraceSpec, search_traces
    from verifier.properties import get_property

    print(f"2. the search over traces (target: >= 200 traces/s, <= 10 events, <= 3 users, round-maxmin)")
    try:
        mech = mechanisms.get("round-maxmin")
    except Exception as exc:  # noqa: BLE001
        print(f"   round-maxmin is not registered ({exc}); skipped")
        return
    prop = get_property("each-step")
    for variant in ("si", "ef"):
        res = search_traces(mech, prop, variant, TraceSpec(seed=0, budget=args.search_seconds, max_events=10,
                                                           max_users=3, exhaustive=False))
        print(f"   each-step/{variant}: {res.generated} traces in {res.wall_seconds:.2f} s = "
              f"{res.generated / res.wall_seconds:6.0f} traces/s ({res.verdict})")
    from verifier.engines.traces import draw_execution

    rng = random.Random(0)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < args.search_seconds / 2:
        execute(mech, draw_execution(rng, mech, 3, 10), exact=False)
        n += 1
    print(f"   baseline (the same draws run, nothing judged): {n / (time.perf_counter() - t0):6.0f} traces/s")


def exact_replay(args) -> None:
    print("3. exact replay of a 100-event trace (target: <= 1 s)")
    ex = trace(100, 10, 1, True, seed=1)
    lifted = mechanisms.get("drf+recompute")
    secs, _ = timed(lambda: execute(lifted, ex, exact=True))
    fl, _ = timed(lambda: execute(lifted, ex, exact=False))
    print(f"   drf+recompute, 100 events, ~10 users: exact {secs:.3f} s; floats {fl:.3f} s (x{secs / fl:.1f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--users", type=int, default=50)
    ap.add_argument("--servers", type=int, default=10)
    ap.add_argument("--search-seconds", type=float, default=5.0)
    args = ap.parse_args()
    long_trace(args)
    search_speed(args)
    exact_replay(args)


if __name__ == "__main__":
    main()
