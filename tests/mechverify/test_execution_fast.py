"""The float stepping's shortcuts hold nothing stale and change no bit (mechverify.execution, .progress,
.allocation, .utility): the present environment built from rows cached per user (arrivals, leaves, demand and
task events, servers coming and going, a misreport), the carried allocation, every user's utility in one pass
over a float matrix, what an allocation uses, its dominant shares and totals, and the work bookkeeping --
each against the loop it replaces, bit for bit and type for type."""
from __future__ import annotations

import importlib
from dataclasses import replace
import random
from fractions import Fraction as F

import pytest

from mechverify.allocation import Allocation, dominant_shares, usage
from mechverify.execution import parse_execution, run
from mechverify.instances import parse_environment
from mechverify.numbers import InstanceError
from mechverify.progress import Progress
from mechverify.trace_deviations import Statement, TraceMisreport
from mechverify.utility import utilities, utility
from mechanisms.core.registry import get
from mechanisms.core.time import stepper_for

from tests.helpers import random_instance

A, E, U = (importlib.import_module(f"mechverify.{m}") for m in ("allocation", "execution", "utility"))


@pytest.fixture(autouse=True)
def _vectorised(monkeypatch):
    """The vectorised paths on for every size (they start at allocation.VECTOR_MIN entries otherwise)."""
    monkeypatch.setattr(A, "VECTOR_MIN", 0)


def _same(a, b) -> bool:
    """The same numbers, bit for bit and type for type (tuples and lists alike, dict values in order)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and _same(list(a.values()), list(b.values()))
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and repr(a) == repr(b)


def _slow(monkeypatch) -> None:
    """Every vectorised float path off: the loops decide."""
    monkeypatch.setattr(A, "VECTOR_MIN", 10 ** 9)
    monkeypatch.setattr(A, "float_matrix", lambda a: None)
    monkeypatch.setattr(U, "float_matrix", lambda a: None)


def _random_alloc(rng, rep, ties=None):
    vals = [0.0, -0.0, rng.uniform(0, 5), float(rng.randint(0, 4)), rng.uniform(0, 1e-9), rng.uniform(0, 1e6)]
    x = [[rng.choice(vals) for _ in range(rep.n_servers)] for _ in range(rep.n_users)]
    return Allocation(rep, tuple(map(tuple, x)), "test", False)


def _cases(seed, n):
    rng = random.Random(seed)
    for _ in range(n):
        inst = random_instance(rng, rng.randint(1, 6), rng.randint(1, 4), rng.randint(1, 3), capacity=(0, 12),
                               demand=lambda rg, r: F(rg.randint(0, 9), rg.randint(1, 4)),
                               external=(1, 20) if rng.random() < 0.5 else None, external_demand=(0, 4),
                               tasks=0.5, task_range=(0, 6), eligible=0.3)
        for u in inst["users"]:
            if "tasks" in u and rng.random() < 0.4:
                u["tasks"] = f"{rng.randint(1, 30)}/{rng.randint(2, 7)}"  # a bound that is no integer
        true_env = parse_environment(inst)
        j = rng.randrange(true_env.n_users)
        dev = {}
        if rng.random() < 0.6:
            dev["demand"] = [F(rng.randint(0, 9), rng.randint(1, 4)) for _ in range(true_env.n_resources)]
            if not any(dev["demand"]):
                dev["demand"][0] = F(1)
        if true_env.n_external and rng.random() < 0.5:
            dev["external_demand"] = [F(rng.randint(0, 5), rng.randint(1, 3)) for _ in range(true_env.n_external)]
        rep = true_env.with_user(j, **dev) if dev else true_env
        yield rng, true_env, rep


def test_utilities_in_one_pass_are_the_per_user_utilities():
    checked = capped = ties = 0
    for rng, true_env, rep in _cases(21, 800):
        alloc = _random_alloc(rng, rep)
        if rng.random() < 0.3:  # a bound met exactly: the tie is compared exactly
            k = rng.randrange(rep.n_users)
            if true_env.tasks[k] is not None:
                row = [0.0] * rep.n_servers
                row[0] = float(true_env.tasks[k])
                x = list(alloc.x)
                x[k] = tuple(row)
                alloc = Allocation(rep, tuple(x), "test", False)
                ties += 1
        got = utilities(true_env, alloc)
        ref = tuple(utility(true_env, alloc, k) for k in range(true_env.n_users))
        assert _same(got, ref), (true_env.to_json(), alloc.x)
        assert utilities(true_env, alloc) is got  # computed once per allocation and true environment
        if true_env is not rep:
            assert _same(utilities(rep, alloc), tuple(utility(rep, alloc, k) for k in range(rep.n_users)))
        checked += len(ref)
        capped += sum(isinstance(v, F) for v in ref)
    assert checked > 2000 and capped > 100 and ties > 50


@pytest.mark.parametrize("vector", [16, 1])  # a few missing users computed one at a time, or the whole matrix
def test_reused_utilities_are_the_computed_ones(monkeypatch, vector):
    """A run's :class:`Reuse` (``utilities(..., reuse=)``) gives a user the value computed for equal inputs only: rows
    that change, keep their numbers as new tuples, turn a zero's sign, hold an int or a Fraction equal to a float,
    an eligible set rebuilt, a misreport, a bound met exactly -- each against :func:`utility` computed anew."""
    monkeypatch.setattr(U.Reuse, "VECTOR", vector)
    hits = 0
    for rng, true_env, rep in _cases(23, 300):
        reuse = U.Reuse()
        alloc = _random_alloc(rng, rep)
        for _ in range(6):
            x = [list(row) for row in alloc.x]
            for k in range(rep.n_users):
                c = rng.random()
                if c < 0.3:
                    x[k] = list(_random_alloc(rng, rep).x[k])
                elif c < 0.4:
                    x[k] = [-v if v == 0 else v for v in x[k]]  # 0.0 <-> -0.0
                elif c < 0.5 and true_env.tasks[k] is not None:
                    x[k][0] = rng.choice([float(true_env.tasks[k]), int(true_env.tasks[k]), F(true_env.tasks[k])])
                elif c < 0.55:
                    x[k][0] = int(x[k][0]) if float(x[k][0]).is_integer() else x[k][0]
            env = rep
            if rng.random() < 0.2:  # the same numbers in new objects (an environment rebuilt)
                env = replace(rep, eligible=tuple(frozenset(sorted(e, reverse=True)) for e in rep.eligible))
            tru = true_env if env is rep else replace(true_env, eligible=env.eligible)
            alloc = Allocation(env, tuple(map(tuple, x)), "test", False)
            before = dict(reuse.values)
            reuse.skip = 0
            got = utilities(tru, alloc, reuse=reuse)
            fresh = Allocation(env, alloc.x, "test", False)
            assert _same(got, tuple(utility(tru, fresh, k) for k in range(tru.n_users))), (true_env.to_json(), x)
            if not before:  # nobody found: the next steps compute everyone
                assert U.Reuse.BACK_OFF <= reuse.skip <= U.Reuse.MAX_BACK_OFF
            hits += sum(1 for k, u in enumerate(tru.users) if u in before and before[u] is reuse.values.get(u))
    assert hits > 500


def test_usage_shares_totals_in_one_pass_are_the_loops(monkeypatch):
    fast = []
    for rng, true_env, rep in _cases(22, 500):
        alloc = _random_alloc(rng, rep)
        fast.append((alloc, usage(alloc), dominant_shares(alloc), alloc.totals(),
                     dominant_shares(alloc, used=usage(alloc))))
    assert sum(A.float_matrix(a) is not None for a, *_ in fast) > 400
    _slow(monkeypatch)
    for alloc, used, shares, totals, shares2 in fast:
        fresh = Allocation(alloc.env, alloc.x, "test", False)
        assert _same(usage(fresh), used) and _same(dominant_shares(fresh), shares)
        assert _same(fresh.totals(), totals) and _same(shares2, shares)


def test_a_matrix_that_is_not_all_floats_takes_the_loops():
    env = parse_environment({"resources": ["a"], "servers": [{"name": "s", "capacity": [4]}],
                             "users": [{"name": "u", "demand": [1]}, {"name": "v", "demand": [2], "tasks": 1}]})
    for x in (((1.0,), (F(1, 2),)), ((1.0,), (1,)), ((float("inf"),), (0.5,)), ((float("nan"),), (0.5,))):
        alloc = Allocation(env, x, "test", False)
        assert A.float_matrix(alloc) is None
        assert _same(utilities(env, alloc), tuple(utility(env, alloc, k) for k in range(2)))


def _progress_ref(users, work, rates, t, dt):
    """The loop the float Progress replaces (a float run's rates and work, one user at a time)."""
    finish_at = who = None
    for u, rate in zip(users, rates):
        w = work.get(u)
        if w is None:
            continue
        if rate > 0:
            at = t + float(w) / float(rate)
            if finish_at is None or at < finish_at:
                finish_at, who = at, u
        elif w == 0:
            finish_at, who = t, u
    left = {u: max(work[u] - float(rate * dt), 0.0) for u, rate in zip(users, rates) if u in work}
    return finish_at, who, left


def test_reuse_backs_off_longer_while_nothing_is_found():
    """Look-ups that find nothing (every row changed: a mechanism recomputing every share) wait BACK_OFF steps,
    then twice as long after each such look-up in a row, up to MAX_BACK_OFF; one that finds its users resets the
    wait.  Every value is the computed one throughout."""
    env = parse_environment({"resources": ["a"], "servers": [{"name": "s", "capacity": [100]}],
                             "users": [{"name": f"u{k}", "demand": [1], "tasks": 9} for k in range(8)]})
    reuse, skips = U.Reuse(), []
    for step in range(1600):
        x = tuple(((1.0 if step >= 1000 else step + k / 8),) for k in range(8))  # from 1000 on: the same rows
        alloc = Allocation(env, x, "test", False)
        looked = not reuse.skip
        got = utilities(env, alloc, reuse=reuse)
        assert _same(got, tuple(utility(env, Allocation(env, x, "test", False), k) for k in range(8)))
        if looked:
            skips.append((step, reuse.skip))
    assert U.Reuse.BACK_OFF == 16 and U.Reuse.MAX_BACK_OFF == 256
    # looked up at step 0 (waits 16), 17 (32), 50 (64), 115 (128), 244, 501, 758 (256 each: the cap); at 1015 the
    # rows are those of step 1000 on but not yet recorded (256 more); at 1272 found: every step from then on
    assert skips[:9] == [(0, 16), (17, 32), (50, 64), (115, 128), (244, 256), (501, 256), (758, 256), (1015, 256),
                         (1272, 0)]
    assert skips[9:] == [(step, 0) for step in range(1273, 1600)] and reuse.wait == 16


def test_progress_in_floats_is_the_loop():
    rng = random.Random(23)
    env = parse_environment({"resources": ["a"], "servers": [{"name": "s", "capacity": [100]}],
                             "users": [{"name": f"u{k}", "demand": [1], "tasks": rng.randint(1, 9)}
                                       for k in range(8)]})
    for _ in range(400):
        x = tuple((rng.choice([0.0, rng.uniform(0, 9), 3.0, float(rng.randint(0, 12))]),) for _ in range(8))
        alloc = Allocation(env, x, "test", False)
        work = {f"u{k}": rng.choice([F(rng.randint(0, 50), 7), rng.uniform(0, 20), 0.0, F(0)])
                for k in range(8) if rng.random() < 0.8}
        t, dt = rng.uniform(0, 100), rng.choice([0.0, rng.uniform(0, 10)])
        rates = utilities(env, alloc)
        ref = _progress_ref(env.users, dict(work), rates, t, dt)
        for vector_min in (0, 10 ** 9):  # numpy arrays, and the loop of a few users
            A.VECTOR_MIN = vector_min
            left = dict(work)
            p = Progress(env.users, left, env, alloc, False)
            assert p.loop == (vector_min > 0)
            got = p.finish(t)
            p.advance(dt)
            assert _same(got, ref[:2]) and _same(left, ref[2])


# ---------------------------------------------------------------------- whole runs: nothing stale
def _random_execution(rng, servers, placement):
    users = [{"name": f"u{k}", "demand": [rng.randint(1, 4), rng.randint(0, 4)], "tasks": rng.randint(1, 6),
              "duration": rng.randint(1, 9)} for k in range(rng.randint(1, 3))]
    events, t, present, names = [], 0, [u["name"] for u in users], len(users)
    extra = False
    for _ in range(rng.randint(5, 25)):
        t += rng.choice([0, 1, 2, 3])
        kind = rng.choice(["arrive", "arrive", "leave", "demand", "demand", "capacity", "round", "finish"])
        if kind == "arrive" or not present:
            u = {"name": f"u{names}", "demand": [rng.randint(1, 4), rng.randint(0, 4)], "tasks": rng.randint(1, 6)}
            if rng.random() < 0.7:
                u["duration"] = rng.randint(1, 9)
            if placement and rng.random() < 0.3:
                u["eligible"] = rng.choice([["s0"], ["s1"], ["s1", "s2"], ["s2", "s0"], ["s1", "s0"]])
            names += 1
            present.append(u["name"])
            events.append({"t": t, "kind": "arrive", "user": u})
        elif kind == "leave":
            events.append({"t": t, "kind": "leave", "user": present.pop(rng.randrange(len(present)))})
        elif kind == "demand":
            ev = {"t": t, "kind": "demand", "user": rng.choice(present)}
            if rng.random() < 0.7:
                ev["demand"] = [rng.randint(1, 4), rng.randint(0, 4)]
            else:
                ev["tasks"] = rng.randint(1, 8)
            events.append(ev)
        elif kind == "capacity" and servers > 1:
            if extra and rng.random() < 0.5:
                events.append({"t": t, "kind": "capacity", "server": "s2", "capacity": None})
                extra = False
            else:
                s = "s2" if not extra and rng.random() < 0.6 else "s0"
                events.append({"t": t, "kind": "capacity", "server": s, "capacity": [rng.randint(4, 12), rng.randint(4, 12)]})
                extra = extra or s == "s2"
        elif kind == "finish":
            events.append({"t": t, "kind": "finish", "user": rng.choice(present), "tasks": 1})
        else:
            events.append({"t": t, "kind": "round"})
    return {"resources": ["cpu", "mem"], "servers": [{"name": f"s{s}", "capacity": [rng.randint(4, 12), rng.randint(4, 12)]}
                                                     for s in range(servers)],
            "users": users, "events": events}


def _executions(seed, n, servers, placement):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        try:
            ex = parse_execution(_random_execution(rng, servers, placement))
        except InstanceError:
            continue
        dev = None
        if rng.random() < 0.5:  # a misreport of the first user at its start, and later at a demand event
            stated = [Statement("users[0]", (F(rng.randint(1, 4)), F(rng.randint(0, 4))))]
            for i, e in enumerate(ex.events):
                if e.kind == "demand" and e.user == ex.users[0].name and rng.random() < 0.5:
                    stated.append(Statement(f"events[{i}]", (F(rng.randint(1, 4)), F(rng.randint(1, 4)))))
            dev = TraceMisreport(ex.users[0].name, tuple(stated))
        out.append((ex, dev))
    return out


def _carry_ref(prev, env):
    """The carried allocation as it was defined: rows by user name, columns by server name, zeros elsewhere."""
    if prev is None:
        return None
    zero = F(0) if prev.exact else 0.0
    pu = {u: j for j, u in enumerate(prev.env.users)}
    ps = {s: i for i, s in enumerate(prev.env.servers)}
    return tuple(tuple(zero if pu.get(u) is None or ps.get(s) is None else prev.x[pu[u]][ps[s]] for s in env.servers)
                 for u in env.users)


class _Checked:
    """A stepper that checks what the run carries over against :func:`_carry_ref` at every step."""

    def __init__(self, inner):
        self.inner, self.prev, self.at, self.checked = inner, None, None, 0

    def step(self, ctx):  # (a step with nobody present carries nothing over)
        ref = _carry_ref(self.prev if self.at == ctx.index - 1 else None, ctx.env)
        assert (ctx.previous is None) == (ref is None)
        if ref is not None:
            assert ctx.previous.env is ctx.env and _same(ctx.previous.x, ref)
            self.checked += 1
        self.prev, self.at = self.inner.step(ctx), ctx.index
        return self.prev


def _steps(ex, mech, exact, dev):
    return [(st.index, st.t, st.until, st.users, st.env, st.true_env, None if st.alloc is None else st.alloc.x,
             st.utilities(), st.note) for st in run(ex, stepper_for(mech, ex, exact), exact=exact, deviation=dev)]


@pytest.mark.parametrize("name,servers,placement", [("drf+recompute", 1, False), ("drfh+recompute", 3, False),
                                                    ("drf+irrevocable", 1, False), ("tsf+recompute", 2, True)])
def test_runs_hold_nothing_stale(monkeypatch, name, servers, placement):
    """A float run with every shortcut (rows cached per user, the carried allocation by name, utilities and work
    in one pass) steps exactly as one that rebuilds every row at every step and takes every loop; the carried
    allocation is the one defined by name."""
    mech = get(name)
    runs = _executions(31 + servers, 25, servers, placement)
    fast = [_steps(ex, mech, False, dev) for ex, dev in runs]
    checked = 0
    for ex, dev in runs:
        stepper = _Checked(stepper_for(mech, ex, False))
        list(run(ex, stepper, exact=False, deviation=dev))
        checked += stepper.checked
    assert checked > 100
    build = E._State._build

    def fresh_build(self, specs):
        self._rows.clear()
        self._built.clear()  # no row kept from the last environment either
        return build(self, specs)

    for f in fast:  # an environment's cluster numbers shared with the run's others (Environment.cluster_memo)
        for st in f:
            env = st[4]
            if env is not None:
                # the same numbers in other tuples: nothing memoised, nothing shared
                fresh = replace(env, capacity=tuple(tuple(list(c)) for c in env.capacity))
                assert env.total_capacity() == fresh.total_capacity()
                for a, b in ((env.floats().capacity, fresh.floats().capacity),
                             (env.floats().external_capacity, fresh.floats().external_capacity)):
                    assert a.shape == b.shape and a.tobytes() == b.tobytes()
    monkeypatch.setattr(E._State, "_build", fresh_build)
    monkeypatch.setattr(U, "_reused", lambda *a: None)  # every utility computed at every step
    _slow(monkeypatch)
    slow = [_steps(ex, mech, False, dev) for ex, dev in runs]
    for f, s in zip(fast, slow):
        assert _same([st[:4] + st[6:] for st in f], [st[:4] + st[6:] for st in s])
        assert [st[4:6] for st in f] == [st[4:6] for st in s]
    assert sum(len(f) for f in fast) > 200
    assert any(dev is not None for _, dev in runs)
    assert any(e.kind == "capacity" for ex, _ in runs for e in ex.events) or servers == 1


def test_a_stepper_that_reads_no_previous_allocation_is_carried_none():
    """``reads_previous = False`` (``recompute``'s stepper): the run carries nothing over (``previous`` is ``None``
    at every step) and the steps are those of the same stepper given the carried allocation."""
    mech = get("drf+recompute")
    seen = []

    class Spy:
        def __init__(self, inner, reads):
            self.inner, self.reads_previous = inner, reads

        def step(self, ctx):
            seen.append((self.reads_previous, ctx.previous is None))
            return self.inner.step(ctx)

    runs = _executions(43, 20, 1, False)
    for ex, dev in runs:
        assert stepper_for(mech, ex, False).reads_previous is False
        got = [_steps_of(run(ex, Spy(stepper_for(mech, ex, False), False), exact=False, deviation=dev))]
        want = [_steps_of(run(ex, Spy(stepper_for(mech, ex, False), True), exact=False, deviation=dev))]
        assert _same(got, want)
    assert all(none for reads, none in seen if not reads)
    assert sum(1 for reads, none in seen if reads and not none) > 100  # carried where read


def _steps_of(steps):
    return [(st.index, st.t, st.until, st.users, None if st.alloc is None else st.alloc.x, st.utilities(), st.note)
            for st in steps]


def test_a_step_spares_the_old_generation_and_gives_the_collector_back():
    """While a step is computed the collector's oldest generation is spared (``gc`` threshold 2 raised); between
    steps, after the run and after a caller stops iterating, the caller's thresholds are back."""
    import gc

    ex, _ = _executions(41, 1, 1, False)[0]
    seen = []

    class Spy:
        def __init__(self, inner):
            self.inner = inner

        def step(self, ctx):
            seen.append(gc.get_threshold())
            return self.inner.step(ctx)

    before = gc.get_threshold()
    try:
        gc.set_threshold(500, 7, 9)
        for exact in (False, True):
            seen.clear()
            steps = run(ex, Spy(stepper_for(get("drf+recompute"), ex, exact)), exact=exact)
            for st in steps:
                assert gc.get_threshold() == (500, 7, 9)  # between steps: the caller's
            assert len(seen) > 3 and all(t[:2] == (500, 7) and t[2] >= E._SPARED for t in seen)
            assert gc.get_threshold() == (500, 7, 9)
        it = run(ex, Spy(stepper_for(get("drf+recompute"), ex, False)), exact=False)
        next(it)
        it.close()  # a caller that stops early
        assert gc.get_threshold() == (500, 7, 9)
    finally:
        gc.set_threshold(*before)


def test_a_seeded_matrix_is_the_one_float_matrix_builds():
    """``seed_matrix`` (a batch allocator hands over the numpy matrix it built ``x`` from): the same floats as
    converting ``x`` back, and only where ``float_matrix`` would take one."""
    import numpy as np

    seeded = 0
    for rng, true_env, rep in _cases(24, 200):
        alloc = _random_alloc(rng, rep)
        X = np.array(alloc.x, dtype=float)
        fresh = Allocation(rep, tuple(map(tuple, X.tolist())), "test", False)
        A.seed_matrix(fresh, X)
        want = A.float_matrix(Allocation(rep, alloc.x, "test", False))
        got = A.float_matrix(fresh)
        assert (got is None) == (want is None)
        if got is not None:
            assert got is X and np.array_equal(got, want)
            seeded += 1
    assert seeded > 100
    env = _cases(25, 1).__next__()[2]
    a = Allocation(env, tuple((float("inf"),) * env.n_servers for _ in range(env.n_users)), "test", False)
    A.seed_matrix(a, np.full((env.n_users, env.n_servers), np.inf))
    assert A.float_matrix(a) is None
