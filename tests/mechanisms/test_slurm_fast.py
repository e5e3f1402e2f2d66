"""Slurm's fast stepping (src/mechanisms/ports/slurm/policy.py and fast.py: the fair-share order computed only when
the scheduler reads it -- not where every pending task fits on the one server at once, where any order places all of
them -- and then from the state of that step; in floats the usages in numpy arrays per account (``FloatUsage``),
the step in integers where its numbers are whole (``_fast``; else the held tasks counted in integers, ``_Held``),
and the order of the waiting users only: Fair Tree's ranks counted, ``fair_tree_ranks_some``, classic's ratios
down each user's path, ``classic_ratios_some``) held EQUAL to the literal one (``literal=True``: the order
recomputed at every tick and every new association over every association, read by every fill, the usages in a
dict): the same allocations and usages at every step of seeded random traces -- nested accounts with shares, users
at the root, arrivals with work, departures, report changes, one server or two, a server that shrinks -- and of
seeded job traces of the benchmark's shape, for ``slurm-classic`` and ``slurm-fairtree``, in exact arithmetic and
in floats."""
from __future__ import annotations

import random
from fractions import Fraction as F

from mechanisms.ports.slurm.policy import begin
from mechverify.execution import Event, Execution, UserSpec, run


def _trace(rng: random.Random) -> Execution:
    R = rng.randint(1, 2)
    S = rng.choice((1, 1, 2))
    queues = []
    for a in range(rng.randint(0, 3)):
        queues.append(f"a{a}")
        queues += [f"a{a}/b{b}" for b in range(rng.randint(0, 2))]
    weights = tuple(F(rng.choice([1, 1, 2, 3])) for _ in queues)
    homes = [None] + queues
    cap = tuple(tuple(F(rng.randint(3, 10)) for _ in range(R)) for _ in range(S))

    def spec(name: str) -> UserSpec:
        tasks = F(rng.randint(0, 4)) if rng.random() < 0.85 else None
        d = tuple(F(rng.choice([0, 1, 1, 2])) for _ in range(R))
        if tasks is None and not any(d):
            tasks = F(2)
        kw: dict = {}
        if tasks and rng.random() < 0.6:
            kw["duration"] = F(rng.randint(1, 4), rng.choice([1, 2]))
            kw["work"] = kw["duration"] * tasks
        return UserSpec(name, d, weight=F(rng.choice([1, 1, 2])), tasks=tasks, queue=rng.choice(homes), **kw)

    initial = tuple(spec(f"u{j}") for j in range(rng.randint(0, 4)))
    present = [u.name for u in initial]
    events, t, k = [], F(0), len(initial)
    for _ in range(rng.randint(1, 12)):
        t += F(rng.randint(0, 3), rng.choice([1, 2]))
        roll = rng.random()
        if roll < 0.45 or not present:
            name = f"v{k}"
            k += 1
            events.append(Event(t, "arrive", name, spec=spec(name)))
            present.append(name)
        elif roll < 0.6:
            events.append(Event(t, "leave", present.pop(rng.randrange(len(present)))))
        elif roll < 0.75:
            events.append(Event(t, "demand", rng.choice(present), demand=tuple(F(rng.randint(0, 2)) for _ in range(R)),
                                tasks=F(rng.randint(0, 4))))
        elif roll < 0.85:
            events.append(Event(t, "capacity", server="s0", capacity=tuple(F(rng.randint(2, 10)) for _ in range(R))))
        else:
            events.append(Event(t, "round"))
    return Execution(tuple(f"r{r}" for r in range(R)), tuple(f"s{s}" for s in range(S)), cap, initial, tuple(events),
                     queues=tuple(queues), queue_weight=weights, end=t + rng.randint(0, 3))


def _steps(ex: Execution, algorithm: str, exact: bool, literal: bool) -> list:
    st = begin(None, ex, exact, algorithm=algorithm, literal=literal)
    return [(s.t, s.users, None if s.alloc is None else (s.alloc.x, s.alloc.info["usage"])) for s in run(ex, st, exact)]


def test_fast_stepping_equals_the_literal_one():
    rng = random.Random(1905)
    contested = 0
    for _ in range(200):
        ex = _trace(rng)
        for algorithm in ("classic", "fair-tree"):
            for exact in (True, False):
                want = _steps(ex, algorithm, exact, True)
                assert _steps(ex, algorithm, exact, False) == want, (ex.to_dict(), algorithm, exact)
        contested += any(s[2] is not None and any(not row[0] for row in s[2][0]) for s in want)
    assert contested >= 50  # steps where somebody waits: the order decides


def test_fair_tree_ranks_of_some_users_equal_the_walk():
    """:func:`fair_tree_ranks_some` (the ranks of a few users, counted) against :func:`fair_tree`, and
    :func:`classic_ratios_some` against :func:`classic`, on random float
    trees as above, deeper (accounts under accounts under accounts, users beside accounts), for random subsets of
    the users: unused users and accounts (LF inf), equal usages (ties, tied accounts starting tied, a tie carried
    from the last user of a tied sibling's subtree), zero shares (LF 0), empty accounts."""
    import numpy as np

    from mechanisms.ports.slurm.fairshare import (Assoc, Tree, classic, classic_ratios_some, fair_tree,
                                                  fair_tree_ranks_some)

    rng = random.Random(1906)
    tied = carried = 0
    for _ in range(1500):
        accts: list = []
        for a in range(rng.randint(0, 8)):
            accts.append((f"a{a}", rng.choice([None] + list(range(len(accts)))), rng.choice([1, 1, 2, 3, 0])))
        users = [(rng.choice([None] + list(range(len(accts)))), rng.choice([1, 1, 2, F(1, 3), 0]),
                  rng.choice([0, 0.0, 1.0, 2.0, 0.5, 3.0, 1e-3, 1.0, 2.0])) for _ in range(rng.randint(1, 16))]
        users[0] = (users[0][0], users[0][1], rng.choice([1.0, 0.0, 2.0]))
        tree = Tree([Assoc(f"a{a}", None if p is None else f"a{p}", F(sh), False) for a, (_, p, sh) in enumerate(accts)]
                    + [Assoc(f"u{i}", None if p is None else f"a{p}", F(sh), True) for i, (p, sh, _) in enumerate(users)],
                    {f"u{i}": v for i, (_, _, v) in enumerate(users)})
        want = fair_tree(tree)
        where, usage, shares = [], {}, {}
        for p, sh, v in users:
            where.append((p, len(usage.get(p, ()))))
            usage.setdefault(p, []).append(float(v))
            shares.setdefault(p, []).append(float(F(sh)))
        usage = {p: np.array(v) for p, v in usage.items()}
        shares = {p: np.array(v) for p, v in shares.items()}
        some = [i for i in range(len(users)) if rng.random() < 0.5] or [0]
        levels: dict = {}
        for _ in range(2):  # the second time with the level shares kept
            got = fair_tree_ranks_some([p for _, p, _ in accts], [float(F(sh)) for _, _, sh in accts], usage, shares,
                                       [where[i] for i in some], levels)
            assert got == [want.rank[f"u{i}"] for i in some], (accts, users, some)
        classic_want = classic(tree)
        got = classic_ratios_some([p for _, p, _ in accts], [float(F(sh)) for _, _, sh in accts], usage, shares,
                                  [where[i] for i in some], levels)
        assert got == [classic_want.ratio(f"u{i}") for i in some], (accts, users, some)
        tied += len(set(want.rank.values())) < len(users)
        first = {}
        for name in want.walk:
            first.setdefault(want.rank[name], name)
        carried += any(tree.by_name[first[r]].parent != tree.by_name[n].parent for n in want.walk
                       for r in [want.rank[n]])
    assert tied >= 300 and carried >= 50, (tied, carried)


def _jobs(n: int, seed: int, servers: int) -> Execution:
    """A seeded trace of ``n`` jobs as benchmarks/bench_policies_over_time.py draws them (Poisson arrivals, 1-8
    tasks of <1-4 cpu, 1-16 mem>, each done after 1-12 time units of running, leaves skewed over a 2x2 account
    tree with shares 1-4), on ``servers`` servers sized for a cpu load of about 0.85, with a server shrinking
    for a while (what runs on it is released) and a user's report changing (it gives back what it holds)."""
    rng = random.Random(f"slurm-fast/{seed}/{n}/{servers}")
    queues = ("p0", "p1", "p0/l0", "p0/l1", "p1/l0", "p1/l1")
    leaves = queues[2:]
    weights = tuple(F(rng.randint(1, 4)) for _ in queues)
    events, t, cpu_time = [], 0.0, 0
    for i in range(n):
        t += rng.expovariate(5.0)
        tasks, dur = rng.randint(1, 8), rng.randint(1, 12)
        d = (F(rng.randint(1, 4)), F(rng.randint(1, 16)))
        cpu_time += tasks * d[0] * dur
        spec = UserSpec(f"j{i}", d, tasks=F(tasks), queue=rng.choices(leaves, [1, 1 / 2, 1 / 3, 1 / 4])[0],
                        duration=F(dur), work=F(tasks * dur))
        events.append(Event(F(round(t * 100), 100), "arrive", f"j{i}", spec=spec))
    cpu = max(16, int(cpu_time / max(t, 1.0) / 0.85 / servers) + 1)
    cap = (F(cpu), F(4 * cpu))
    mid = events[n // 2].t
    events += [Event(mid + F(1, 3), "capacity", server="s0", capacity=(F(cpu // 2), F(2 * cpu))),
               Event(mid + F(7, 3), "capacity", server="s0", capacity=cap),
               Event(mid + F(1, 7), "demand", events[n // 2 - 3].user, demand=(F(1), F(1)), tasks=F(2))]
    events.sort(key=lambda e: e.t)
    return Execution(("cpu", "mem"), tuple(f"s{s}" for s in range(servers)), (cap,) * servers, (), tuple(events),
                     queues=queues, queue_weight=weights)


def test_fast_stepping_equals_the_literal_one_on_job_traces():
    """Seeded traces of a few hundred jobs (``_jobs``: the benchmark's shape, one server and two) through the fast
    path and the literal one (``literal=True``): the same allocations and usages at every step, for
    ``slurm-fairtree`` and ``slurm-classic``, in floats (200 and 100 jobs) and exactly (40 and 30); in floats the same
    order at every step -- the keys of every present user from the float arrays (:meth:`_keys_for`: Fair Tree's
    ranks counted, classic's ratios down each user's path) equal to the literal order's."""
    from mechverify.execution import run as run_

    waited = fast_steps = 0
    for servers, sizes in ((1, ((False, 200), (True, 40))), (2, ((False, 100), (True, 30)))):
        for exact, n in sizes:
            ex = _jobs(n, 0, servers)
            for algorithm in ("fair-tree", "classic"):
                lit = begin(None, ex, exact, algorithm=algorithm, literal=True)
                fast = begin(None, ex, exact, algorithm=algorithm)
                if not exact:  # count the steps the integer path takes
                    def counted(ctx, step=fast._fast):
                        nonlocal fast_steps
                        got = step(ctx)
                        fast_steps += got is not None
                        return got

                    fast._fast = counted
                steps = 0
                for a, b in zip(run_(ex, lit, exact), run_(ex, fast, exact)):
                    assert (a.t, a.users) == (b.t, b.users)
                    assert (a.alloc is None) == (b.alloc is None)
                    if a.alloc is None:
                        continue
                    assert a.alloc.x == b.alloc.x, (servers, exact, algorithm, a.index)
                    assert a.alloc.info["usage"] == b.alloc.info["usage"], (servers, exact, algorithm, a.index)
                    assert [type(v) for v in a.alloc.info["usage"].values()] == \
                        [type(v) for v in b.alloc.info["usage"].values()]
                    if not exact:
                        got = fast._keys_for(b.env, list(b.users))
                        assert got == {u: lit.keys[u] for u in b.users}, (servers, algorithm, a.index)
                    waited += sum(1 for j in range(a.env.n_users) if a.env.tasks[j] > sum(a.alloc.x[j]))
                    steps += 1
                assert steps > n
    assert waited > 500 and fast_steps > 1000, (waited, fast_steps)


def test_the_integer_release_test_is_the_float_runs_release_test():
    """The integer step's "capacity lost" test (``fast._over_int``) decides as the float run's
    (``mechanisms.core.time._over``) on whole amounts, near the threshold and far from it."""
    import random
    from fractions import Fraction

    from mechanisms.core.time import _over
    from mechanisms.ports.slurm.fast import _over_int

    rng = random.Random(3)
    for _ in range(5000):
        c = rng.choice([rng.randint(0, 20), rng.randint(10**8, 10**13)])
        u = c + rng.choice([-1, 0, 1, 2, rng.randint(0, 10**4)])
        assert _over_int(u, c) == _over(Fraction(u), Fraction(c), False), (u, c)
    assert not _over_int(10**12 + 1000, 10**12) and _over_int(10**12 + 1001, 10**12)  # 10**12 x 1e-9 = 1000
