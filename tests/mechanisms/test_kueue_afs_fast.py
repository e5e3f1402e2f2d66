"""``kueue-afs``'s fast step (per LocalQueue its candidates in order, per ClusterQueue a heap of its LocalQueues;
each workload's request computed once per report; the samples' holdings summed in one pass --
src/mechanisms/ports/kueue/afs.py, ``AdmissionFairSharing._step``) held EQUAL to the literal one (every pending
workload rescanned per cycle, ``literal=True``): the same allocations, decisions and usages at every step, on
seeded random traces -- ClusterQueues with LocalQueues of several weights, workloads directly in a ClusterQueue
and outside every queue, arrivals with work, departures, report changes, a pool that shrinks below what is held,
seeded usage, both half-lives used upstream (0 and not) and both versions (with and without the entry penalty),
in exact arithmetic and in floats (the same IEEE operations in the same order: equal to the bit)."""
from __future__ import annotations

import random
from fractions import Fraction as F

from mechanisms.ports.kueue.afs import AdmissionFairSharing
from mechverify.execution import Event, Execution, UserSpec, run


def _trace(rng: random.Random) -> tuple[Execution, dict]:
    R = rng.randint(1, 2)
    queues, lqs = [], [None]
    for c in range(rng.randint(1, 3)):
        queues.append(f"cq{c}")
        lqs.append(f"cq{c}")  # a workload directly in a ClusterQueue: its implicit LocalQueue
        for k in range(rng.randint(0, 3)):
            queues.append(f"cq{c}/lq{k}")
            lqs.append(f"cq{c}/lq{k}")
    weights = tuple(F(rng.choice([1, 1, 2, 3, "1/2"])) for _ in queues)
    cap = tuple(F(rng.randint(4, 12)) for _ in range(R))

    def spec(name: str) -> UserSpec:
        tasks = F(rng.randint(0, 3))
        d = tuple(F(rng.choice([0, 1, 1, 2, 3])) for _ in range(R))
        kw = {}
        if rng.random() < 0.5 and tasks:
            kw = {"duration": F(rng.randint(1, 4), rng.choice([1, 2])), "work": None}
            kw["work"] = kw["duration"] * tasks
        return UserSpec(name, d, tasks=tasks, queue=rng.choice(lqs), **kw)

    initial = tuple(spec(f"u{j}") for j in range(rng.randint(0, 4)))
    present = [u.name for u in initial]
    events, t, k = [], F(0), len(initial)
    for _ in range(rng.randint(1, 12)):
        t += F(rng.randint(0, 4), rng.choice([1, 2, 3]))
        roll = rng.random()
        if roll < 0.45 or not present:
            name = f"v{k}"
            k += 1
            events.append(Event(t, "arrive", name, spec=spec(name)))
            present.append(name)
        elif roll < 0.6:
            u = present.pop(rng.randrange(len(present)))
            events.append(Event(t, "leave", u))
        elif roll < 0.8:
            u = rng.choice(present)
            events.append(Event(t, "demand", u, demand=tuple(F(rng.randint(0, 2)) for _ in range(R)),
                                tasks=F(rng.randint(0, 3))))
        elif roll < 0.9:
            events.append(Event(t, "capacity", server="s", capacity=tuple(F(rng.randint(2, 12)) for _ in range(R))))
        else:
            events.append(Event(t, "round"))
    ex = Execution(tuple(f"r{r}" for r in range(R)), ("s",), (cap,), initial, tuple(events), queues=tuple(queues),
                   queue_weight=weights, end=t + rng.randint(0, 3))
    kw: dict = {"half_life": rng.choice([0, 1, 1, 2, "1/2"]), "entry_penalty": rng.random() < 0.7}
    if rng.random() < 0.3:
        kw["initial_usage"] = {lq: tuple(F(rng.randint(0, 4)) for _ in range(R)) for lq in queues[1:] if "/" in lq}
    return ex, kw


def _steps(ex: Execution, exact: bool, literal: bool, kw: dict) -> list:
    return [(st.t, st.users, None if st.alloc is None else st.alloc.x,
             None if st.alloc is None else st.alloc.info["decisions"],
             None if st.alloc is None else st.alloc.info["usage"])
            for st in run(ex, AdmissionFairSharing(None, ex, exact, literal=literal, **kw), exact)]


def test_fast_step_equals_the_literal_one():
    rng = random.Random(4136)
    admitted = 0
    for _ in range(300):
        ex, kw = _trace(rng)
        for exact in (True, False):
            want = _steps(ex, exact, True, kw)
            got = _steps(ex, exact, False, kw)
            assert got == want, (ex.to_dict(), kw, exact)
            admitted += sum(1 for st in want if st[3] for d in st[3] if d[3])
    assert admitted > 500  # the traces admit (and set aside) workloads, not only idle through


def test_registered_kueue_afs_runs_the_fast_step():
    import mechanisms
    from mechanisms.core.time import stepper_for

    ex, _ = _trace(random.Random(1))
    assert stepper_for(mechanisms.get("kueue-afs"), ex, True).literal is False
