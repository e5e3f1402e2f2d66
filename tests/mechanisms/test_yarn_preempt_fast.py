"""``yarn-drf-preempt``'s fast step held EQUAL to the literal one (``Preempting(..., literal=True)``): the second
fill of a step skipped when the update preempted nothing (the first fill placed all it could), a fill skipped when
no app with pending demand has a task that fits in the free pool, the users below each queue found once per
update, and ``water_fill``'s breakpoint found by bisection -- the same tasks, preemptions and clocks at every step,
on seeded random traces (nested queues with weights, min shares and maxes, apps at the root, arrivals with work,
departures, report changes, finishes, capacity changes, ticks) under the registered configuration and others."""
from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction as F

import pytest

from mechanisms.ports.yarn.preempt import INF, REGISTERED, Config, Preempting, water_fill
from mechanisms.ports.yarn.preempt_calc import _open_fill
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


def test_water_fill_without_max_shares_in_integers_equals_the_scan():
    """``_open_fill`` (no max share: one sort and prefix sums in integers) gives the scan's exact numbers and
    types, with breakpoints tied, mins that alone nearly reach the total, int weights, up to 30 children."""
    rng = random.Random(6)
    fast = 0
    for _ in range(1000):
        n = rng.randint(1, 30)
        w = [F(rng.randint(1, 6), rng.randint(1, 3)) if rng.random() < 0.8 else rng.randint(1, 5) for _ in range(n)]
        lo = [F(rng.choice([0, 0, 1, 2, 4, 5, 7]), rng.choice([1, 1, 2, 3])) for _ in range(n)]
        total = F(rng.randint(1, 20 * n), rng.randint(1, 3))
        hi = [INF] * n
        got, want = water_fill(w, lo, hi, total), water_fill(w, lo, hi, total, literal=True)
        assert got == want and list(map(type, got)) == list(map(type, want)), (w, lo, total)
        fast += _open_fill(w, lo, hi, total) is not None
    assert fast > 650
    # breakpoints whose floats tie though the numbers differ: the exact order decides
    big = 2 ** 60
    w, lo = [F(1), F(3), F(1)], [F(big + 1), F(3 * big + 2), F(big)]
    for total in (F(3 * big + 1), F(5 * big + 2), F(5 * big + 4), F(6 * big)):
        assert water_fill(w, lo, [INF] * 3, total) == water_fill(w, lo, [INF] * 3, total, literal=True)


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
    ex = _jobs_trace(200, 8)
    for exact in (True, False):
        want = _run_steps(ex, exact, True)
        got = _run_steps(ex, exact, False)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert a == b
        assert sum(len(s[3][1]) for s in want if s[3] is not None) >= 10  # it preempts


def _tree_jobs_trace(jobs: int, seed: int, tree: str, R: int = 2, at_root: bool = False) -> Execution:
    """Like :func:`_jobs_trace` over another tree: ``PxL`` (P parents of L leaves) or ``L`` (flat leaves), min
    shares on every other leaf, some apps directly at the root (``at_root``), ``R`` resources (the third a gpu
    that most jobs do not ask for)."""
    rng = random.Random(f"{seed}/{tree}/{R}")
    if "x" in tree:
        p, l = (int(v) for v in tree.split("x"))
        parents = [f"p{a}" for a in range(p)]
        leaves = [f"p{a}/l{b}" for a in range(p) for b in range(l)]
    else:
        parents, leaves = [], [f"l{b}" for b in range(int(tree))]
    queues = tuple(parents + leaves)
    guar = tuple(None for _ in parents) + tuple(
        tuple(F(rng.randint(2, 8)) * (4 if r == 1 else 1) for r in range(R)) if i % 2 else None
        for i in range(len(leaves)))
    homes = leaves + ([None] if at_root else [])
    events, t, cpu_time = [], F(0), 0
    for i in range(jobs):
        t += F(rng.randint(0, 40), 100)
        tasks, dur = rng.randint(1, 6), rng.randint(1, 8)
        d = [F(rng.randint(1, 4)), F(rng.randint(1, 16))] + ([F(rng.random() < 0.3)] if R == 3 else [])
        cpu_time += tasks * d[0] * dur
        spec = UserSpec(f"j{i}", tuple(d), tasks=F(tasks), queue=rng.choice(homes), duration=F(dur),
                        work=F(tasks * dur), weight=F(rng.choice([1, 1, 2, 3])))
        events.append(Event(t, "arrive", f"j{i}", spec=spec))
    cpu = max(16, int(cpu_time / max(t, F(1)) / F(6, 5)))
    cap = (F(cpu), F(4 * cpu)) + ((F(max(8, cpu // 4)),) if R == 3 else ())
    return Execution(("cpu", "mem", "gpu")[:R], ("pool",), (cap,), (), tuple(events), queues=queues,
                     queue_weight=tuple(F(rng.randint(1, 4)) for _ in queues), queue_guarantee=guar,
                     queue_max=tuple(None for _ in queues))


def _count_whole(monkeypatch) -> list:
    """Counts the steps the integer step (``preempt_whole``) took: ``[taken, declined]``."""
    seen = [0, 0]
    orig = Preempting._step_whole

    def counted(self, env, t):
        got = orig(self, env, t)
        seen[got is None] += 1
        return got

    monkeypatch.setattr(Preempting, "_step_whole", counted)
    return seen


@pytest.mark.parametrize("seed,tree,R,at_root", [(1, "4x4", 2, False), (2, "3", 2, True), (3, "2x3", 3, True),
                                                 (4, "2x2", 2, False)])
def test_integer_step_equals_the_literal_one_on_jobs_traces(monkeypatch, seed, tree, R, at_root):
    """Traces of 320 jobs (120 with three resources) over several trees (flat, nested, apps at the root, a third resource, weighted apps)
    through the integer step and the literal one, in exact and in float stepping: the same allocation,
    preemptions and clocks at every step -- and the integer step took every step."""
    ex = _tree_jobs_trace(320 if R == 2 else 120, seed, tree, R, at_root)
    seen = _count_whole(monkeypatch)
    for exact in (True, False):
        want = _run_steps(ex, exact, True)
        got = _run_steps(ex, exact, False)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert a == b
        assert sum(len(s[3][1]) for s in want if s[3] is not None) >= 5  # it preempts
    assert seen[0] > 2 * 2 * 120 * 0.9 and seen[1] == 0


def test_integer_step_equals_the_literal_one_on_random_traces(monkeypatch):
    """The random traces of :func:`test_fast_step_equals_the_literal_one` with the integer step's conditions
    met more often (whole demands; min shares positive, zero or absent; no max shares), each step taken by the
    integer step or, where a condition fails, by the fast one: both equal to the literal step."""
    rng = random.Random(2024)
    seen = _count_whole(monkeypatch)
    preempted = 0
    for _ in range(250):
        ex = _trace(rng)
        guar = tuple(None if g is None else (tuple(F(1) + v for v in g) if rng.random() < 0.7 else g)
                     for g in ex.queue_guarantee)
        maxs = tuple(None if rng.random() < 0.8 else m for m in ex.queue_max)
        ex = replace(ex, queue_guarantee=guar, queue_max=maxs)
        config = rng.choice(_CONFIGS)
        want = _steps(ex, config, True)
        assert _steps(ex, config, False) == want, (ex.to_dict(), config)
        preempted += sum(len(s[3][1]) for s in want if s[3] is not None)
    assert preempted >= 30
    assert seen[0] > 1000 and seen[1] > 100  # both steps ran


def _busy_trace(rng: random.Random) -> Execution:
    """A trace for the integer step's state carried between steps: a nested tree with min shares, whole demands,
    events in bursts at one time (several arrivals, departures of apps that hold or wait, finishes that trim a
    task bound, demand changes, some to the same demand, capacity changes, one now and then not whole so that
    a step is not the integer step's and the next starts anew), unbounded apps now and then."""
    R = rng.randint(1, 3)
    queues = ["p0", "p0/a", "p0/b", "p1", "p1/a"]
    weights = tuple(F(rng.choice([1, 2, 3])) for _ in queues)
    guar = tuple(None if rng.random() < 0.4 else tuple(F(rng.randint(1, 3)) for _ in range(R)) for _ in queues)
    homes = [None] + queues
    cap = tuple(F(rng.randint(6, 16)) for _ in range(R))

    def spec(name: str) -> UserSpec:
        d = tuple(F(rng.choice([0, 1, 1, 2, 3])) for _ in range(R))
        if not any(d):
            d = (F(1),) + d[1:]
        tasks = None if rng.random() < 0.1 else F(rng.randint(1, 6))
        kw: dict = {}
        if tasks and rng.random() < 0.5:
            kw["duration"] = F(rng.randint(1, 3))
            kw["work"] = kw["duration"] * tasks
        return UserSpec(name, d, weight=F(rng.choice([1, 1, 2])), tasks=tasks, queue=rng.choice(homes), **kw)

    initial = tuple(spec(f"u{j}") for j in range(rng.randint(2, 6)))
    present = {u.name: u for u in initial}
    events, t, k = [], F(0), len(initial)
    for _ in range(rng.randint(6, 16)):
        t += F(rng.randint(1, 3), 2)
        for _ in range(rng.randint(1, 4)):  # a burst: several events at one time
            roll = rng.random()
            if roll < 0.35 or not present:
                name = f"v{k}"
                k += 1
                events.append(Event(t, "arrive", name, spec=spec(name)))
                present[name] = events[-1].spec
            elif roll < 0.55:
                events.append(Event(t, "leave", present.pop(rng.choice(sorted(present))).name))
            elif roll < 0.65:
                u = present[rng.choice(sorted(present))]
                if u.tasks is not None and u.tasks >= 1 and u.work is None:
                    events.append(Event(t, "finish", u.name, tasks=F(1)))
                    present[u.name] = replace(u, tasks=u.tasks - 1)
            elif roll < 0.75:
                u = present[rng.choice(sorted(present))]
                d = u.demand if rng.random() < 0.5 else tuple(F(rng.randint(1, 2)) for _ in range(R))
                events.append(Event(t, "demand", u.name, demand=tuple(F(v) for v in d)))
                present[u.name] = replace(u, demand=d)
            elif roll < 0.82:
                u = present[rng.choice(sorted(present))]
                events.append(Event(t, "demand", u.name, tasks=F(rng.randint(0, 5))))
                present[u.name] = replace(u, tasks=events[-1].tasks)
            elif roll < 0.92:
                c = tuple(F(rng.randint(2, 16)) for _ in range(R))
                if rng.random() < 0.2:
                    c = (c[0] + F(1, 2),) + c[1:]
                events.append(Event(t, "capacity", server="n", capacity=c))
            else:
                events.append(Event(t, "round"))
    return Execution(tuple(f"r{r}" for r in range(R)), ("n",), (cap,), initial, tuple(events), queues=tuple(queues),
                     queue_weight=weights, queue_guarantee=guar, queue_max=tuple(None for _ in queues),
                     end=t + rng.randint(0, 3))


def test_integer_step_carried_state_equals_the_literal_one_on_busy_traces(monkeypatch):
    """The integer step's tasks, usage and queues' usage carried from one step to the next (only the apps that
    left, arrived, changed or lost tasks looked at) on bursts of simultaneous events, departures of apps that
    hold tasks or are starved, trims, demand changes, capacity changes and steps the integer step declines:
    every step equal to the literal one, and the carried state used at most steps."""
    rng = random.Random(39)
    seen = _count_whole(monkeypatch)
    anew = [0]
    orig = Preempting._reconcile_anew

    def counted(self, v, t):
        anew[0] += 1
        return orig(self, v, t)

    monkeypatch.setattr(Preempting, "_reconcile_anew", counted)
    preempted = 0
    for _ in range(150):
        ex = _busy_trace(rng)
        config = rng.choice(_CONFIGS)
        want = _steps(ex, config, True)
        assert _steps(ex, config, False) == want, (ex.to_dict(), config)
        preempted += sum(len(s[3][1]) for s in want if s[3] is not None)
    assert preempted >= 30
    assert seen[1] > 50  # steps the integer step declined
    assert anew[0] >= 150 + 20  # each trace's first integer step starts anew, and some after a declined step
    assert seen[0] - anew[0] > 2 * anew[0]  # most integer steps carried the last one's state


def test_integer_step_carried_state_follows_an_app_moved_to_another_queue():
    """Steps fed environments directly (not an execution, where an app keeps its queue): an app holding tasks
    moved to another queue between two steps is held under the new one -- the queues' usage carried by the
    integer step is summed anew, every step equal to the literal one."""
    from types import SimpleNamespace

    ex = _tree_jobs_trace(40, 5, "2x2")
    envs = [s.alloc.env for s in run(ex, Preempting(None, ex, True, REGISTERED, literal=True), True)
            if s.alloc is not None]
    leaves = [q for q in range(envs[0].n_queues) if not envs[0].queue_children(q)]
    moved = 0
    seq = []
    for i, env in enumerate(envs[:40]):
        seq.append(env)
        if i % 3 == 2 and env.n_users:  # the same users, the first app in another leaf
            uq = list(env.user_queue)
            uq[0] = leaves[(leaves.index(uq[0]) + 1) % len(leaves)]
            seq.append(replace(env, user_queue=tuple(uq)))
            moved += 1
    assert moved >= 10
    lit = Preempting(None, ex, True, REGISTERED, literal=True)
    fast = Preempting(None, ex, True, REGISTERED)
    t = F(0)
    for env in seq:
        t += F(1, 3)
        ctx = SimpleNamespace(env=env, t=t, exact=True)
        a, b = lit.step(ctx), fast.step(ctx)
        assert (a.x, a.info["preempted"], lit.state_key()) == (b.x, b.info["preempted"], fast.state_key())
