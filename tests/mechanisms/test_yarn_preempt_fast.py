"""``yarn-drf-preempt``'s fast step held EQUAL to the literal one (``Preempting(..., literal=True)``): the second
fill of a step skipped when the update preempted nothing (the first fill placed all it could), a fill skipped when
no app with pending demand has a task that fits in the free pool, the users below each queue found once per
update, and ``water_fill``'s breakpoint found by bisection -- the same tasks, preemptions and clocks at every step,
on seeded random traces (nested queues with weights, min shares and maxes, apps at the root, arrivals with work,
departures, report changes, finishes, capacity changes, ticks) under the registered configuration and others."""
from __future__ import annotations

import random
from fractions import Fraction as F

from mechanisms.ports.yarn.preempt import INF, REGISTERED, Config, Preempting, water_fill
from mechverify.execution import Event, Execution, UserSpec, run


def _trace(rng: random.Random) -> Execution:
    R = rng.randint(1, 3)
    queues = []
    for a in range(rng.randint(0, 3)):
        queues.append(f"p{a}")
        queues += [f"p{a}/l{b}" for b in range(rng.randint(0, 3))]
    weights = tuple(F(rng.choice([1, 1, 2, 3, "1/2"])) for _ in queues)
    guar = tuple(tuple(F(rng.randint(0, 4)) for _ in range(R)) if rng.random() < 0.5 else None for _ in queues)
    maxs = tuple(tuple(F(rng.randint(3, 14)) for _ in range(R)) if rng.random() < 0.15 else None for _ in queues)
    cap = tuple(F(rng.randint(4, 14)) for _ in range(R))
    homes = [None] + queues

    def spec(name: str) -> UserSpec:
        tasks = F(rng.randint(0, 5)) if rng.random() < 0.85 else None
        d = [F(rng.choice([0, 1, 1, 2])) for _ in range(R)]
        if not any(d):
            d[0] = F(1)
        kw: dict = {}
        if tasks and rng.random() < 0.6:
            kw["duration"] = F(rng.randint(1, 4), rng.choice([1, 2]))
            kw["work"] = kw["duration"] * tasks
        return UserSpec(name, tuple(d), weight=F(rng.choice([1, 1, 2])), tasks=tasks, queue=rng.choice(homes), **kw)

    initial = tuple(spec(f"u{j}") for j in range(rng.randint(0, 4)))
    present = [u.name for u in initial]
    events, t, k = [], F(0), len(initial)
    for _ in range(rng.randint(1, 14)):
        t += F(rng.randint(0, 3), rng.choice([1, 2]))
        roll = rng.random()
        if roll < 0.4 or not present:
            name = f"v{k}"
            k += 1
            events.append(Event(t, "arrive", name, spec=spec(name)))
            present.append(name)
        elif roll < 0.5:
            events.append(Event(t, "leave", present.pop(rng.randrange(len(present)))))
        elif roll < 0.62:
            events.append(Event(t, "demand", rng.choice(present), demand=tuple(F(rng.randint(1, 2)) for _ in range(R))))
        elif roll < 0.7:
            events.append(Event(t, "demand", rng.choice(present), tasks=F(rng.randint(0, 4))))
        elif roll < 0.78:
            events.append(Event(t, "capacity", server="n", capacity=tuple(F(rng.randint(2, 14)) for _ in range(R))))
        else:
            events.append(Event(t, "round"))
    return Execution(tuple(f"r{r}" for r in range(R)), ("n",), (cap,), initial, tuple(events), queues=tuple(queues),
                     queue_weight=weights, queue_guarantee=guar, queue_max=maxs, end=t + rng.randint(0, 3))


_CONFIGS = (REGISTERED, Config(enabled=True, fair_share_threshold=F(1), fair_share_timeout=F(0),
                               min_share_timeout=F(1, 2), utilization_threshold=F(0)),
            Config(enabled=True, fair_share_timeout=F(2), min_share_timeout=None, utilization_threshold=F(1, 2)))


def _steps(ex: Execution, config: Config, literal: bool) -> list:
    st = Preempting(None, ex, True, config, literal=literal)
    return [(s.t, s.users, s.state_key, None if s.alloc is None else (s.alloc.x, s.alloc.info["preempted"]))
            for s in run(ex, st, True)]


def test_fast_step_equals_the_literal_one():
    rng = random.Random(11482)
    preempted = 0
    for _ in range(250):
        ex = _trace(rng)
        config = rng.choice(_CONFIGS)
        want = _steps(ex, config, True)
        assert _steps(ex, config, False) == want, (ex.to_dict(), config)
        preempted += sum(len(s[3][1]) for s in want if s[3] is not None)
    assert preempted >= 30  # the traces preempt, not only fill


def test_water_fill_bisection_equals_the_scan():
    rng = random.Random(5)
    for _ in range(2000):
        n = rng.randint(1, 7)
        w = [F(rng.randint(1, 4), rng.randint(1, 2)) for _ in range(n)]
        lo = [F(rng.choice([0, 0, 1, 2, 5])) for _ in range(n)]
        hi = [rng.choice([INF, INF, F(rng.randint(0, 9))]) for _ in range(n)]
        total = F(rng.randint(0, 30), rng.randint(1, 3))
        assert water_fill(w, lo, hi, total) == water_fill(w, lo, hi, total, literal=True)


def _jobs_trace(jobs: int, seed: int) -> Execution:
    """A queue tree of 2 parents of 3 leaves (weights, min shares on every other leaf), ``jobs`` jobs arriving
    with work (they finish and leave), one pool offered about 1.2 times its cpu: the benchmark's kind of trace
    (benchmarks/bench_policies_over_time.py), where the update runs at most steps and preempts."""
    rng = random.Random(seed)
    leaves = [f"p{a}/l{b}" for a in range(2) for b in range(3)]
    queues = ("p0", "p1") + tuple(leaves)
    guar = (None, None) + tuple((F(rng.randint(2, 8)), F(rng.randint(8, 32))) if i % 2 else None
                                for i in range(len(leaves)))
    events, t, cpu_time = [], F(0), 0
    for i in range(jobs):
        t += F(rng.randint(0, 40), 100)
        tasks, dur = rng.randint(1, 6), rng.randint(1, 8)
        d = (F(rng.randint(1, 4)), F(rng.randint(1, 16)))
        cpu_time += tasks * d[0] * dur
        spec = UserSpec(f"j{i}", d, tasks=F(tasks), queue=rng.choice(leaves), duration=F(dur), work=F(tasks * dur),
                        weight=F(rng.choice([1, 1, 2])))
        events.append(Event(t, "arrive", f"j{i}", spec=spec))
    cpu = max(16, int(cpu_time / max(t, F(1)) / F(6, 5)))
    return Execution(("cpu", "mem"), ("pool",), ((F(cpu), F(4 * cpu)),), (), tuple(events), queues=queues,
                     queue_weight=tuple(F(rng.randint(1, 4)) for _ in queues), queue_guarantee=guar,
                     queue_max=tuple(None for _ in queues))


def _run_steps(ex: Execution, exact: bool, literal: bool) -> list:
    st = Preempting(None, ex, exact, REGISTERED, literal=literal)
    return [(s.t, s.users, s.state_key, None if s.alloc is None else (s.alloc.x, s.alloc.info["preempted"]))
            for s in run(ex, st, exact)]


def test_fast_step_equals_the_literal_one_on_a_jobs_trace_exact_and_float():
    """A few hundred jobs through the fast step and the literal one, in exact and in float stepping: the same
    allocation, preemptions and clocks at every step."""
    ex = _jobs_trace(300, 8)
    for exact in (True, False):
        want = _run_steps(ex, exact, True)
        got = _run_steps(ex, exact, False)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert a == b
        assert sum(len(s[3][1]) for s in want if s[3] is not None) >= 10  # it preempts
