"""First-/Best-Fit DRFH's own whole-task rule (``drfh_indivisible.task_rule``, the indivisible lift's rule for free
capacity): the fill continued from the tasks running, which count in their users' shares; its vectorised server
search on many servers (``drfh_servers.VectorServers``) places exactly what the per-user scan places; the cluster memo that
shares O(servers) values between the environments of one cluster; what runs, kept between a run's calls
(``Held.memo``), counted as a call alone counts it."""
from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

import mechanisms
import mechanisms.paper.drfh_indivisible as di
from mechanisms.core.indivisible import Held, held_view
from mechanisms.core.time import lift
from mechverify.allocation import float_matrix
from mechverify.execution import run
from mechverify.job_trace import parse_job_trace
from mechverify.model import Environment
from mechverify.workloads import get
from verifier.rates import sample_rng


def _one_server(cap: int, held: tuple) -> tuple:
    env = Environment(resources=("cpu",), servers=("a",), capacity=((Fraction(cap),),), users=("u", "v"),
                      demand=((Fraction(1),), (Fraction(1),)), tasks=(Fraction(10), Fraction(10)))
    return env, tuple((h,) for h in held)


@pytest.mark.parametrize("name", ["drfh-first-fit", "drfh-best-fit"])
def test_the_tasks_running_count_in_the_shares(name):
    # one server of 4 cpu, u and v ask 1 cpu per task (shares 1/4 each); u runs 2, v none, 2 cpu free.  DRFH at a
    # scheduling opportunity serves the lowest share INCLUDING what runs: v (0) then v (1/4 < u's 2/4): both to v.
    # (The one-shot function on the residual would count only new tasks: u, then v -- a tie broken by index.)
    env, held = _one_server(4, (2, 0))
    assert mechanisms.get(name).task_rule(env, held) == [(1, 0), (1, 0)]
    # v runs 1, u 1, 2 free: u (1/4, index 0) then v (1/4 < u's 2/4)
    env, held = _one_server(4, (1, 1))
    assert mechanisms.get(name).task_rule(env, held) == [(0, 0), (1, 0)]


@pytest.mark.parametrize("best_fit", [False, True], ids=["first-fit", "best-fit"])
def test_from_nothing_held_the_rule_is_the_one_shot(best_fit):
    for i in range(6):
        env = get("google2011").sampler(servers="12", users="5", bounded="true")(sample_rng(5, {}, i))
        placed = di.task_rule(best_fit)(env, tuple((0,) * env.n_servers for _ in range(env.n_users)))
        x = [[0] * env.n_servers for _ in range(env.n_users)]
        for j, s in placed:
            x[j][s] += 1
        one_shot = di._progressive_fill(env, best_fit, "drfh")
        assert tuple(tuple(Fraction(v) for v in row) for row in x) == one_shot.x


def _cases():
    out = []
    for i in range(16):
        rng = random.Random(i)
        point = {"servers": str(rng.choice([6, 20, 70])), "users": str(rng.choice([2, 5, 9])),
                 "bounded": "true" if i % 2 else "false"}
        out.append(("google2011", point, i))
    # the project's random instances: placement constraints (eligible servers), bounds, weights
    out += [("uniform", {}, i) for i in range(12)]
    return out


@pytest.mark.parametrize("best_fit", [False, True], ids=["first-fit", "best-fit"])
@pytest.mark.parametrize("workload,point,i", _cases())
def test_the_vectorised_search_places_what_the_scan_places(workload, point, i, best_fit, monkeypatch):
    # drawn Google 2011 clusters (many identical machines: ties) with Alibaba task demands, and random instances
    # with placement constraints; what runs: a random prefix of the one-shot's own placements, given dense (as a
    # test or a user's rule hands it) or sparse
    env = get(workload).sampler(**point)(sample_rng(3, point, i))
    monkeypatch.setattr(di, "VECTOR_SERVERS", {False: 10 ** 9, True: 10 ** 9})
    placed, _ = di._fill(env, best_fit, "drfh")
    k = random.Random(i).randint(0, len(placed))
    dense = [[0] * env.n_servers for _ in range(env.n_users)]
    for j, s in placed[:k]:
        dense[j][s] += 1
    held = held_view(dense) if i % 2 else tuple(map(tuple, dense))
    scan = di._fill(env, best_fit, "drfh", held)
    one_shot = di._fill(env, best_fit, "drfh")
    monkeypatch.setattr(di, "VECTOR_SERVERS", {False: 1, True: 1})
    assert di._fill(env, best_fit, "drfh", held) == scan
    assert di._fill(env, best_fit, "drfh") == one_shot
    assert len(one_shot[0]) > 0 or workload == "uniform"  # (a drawn uniform instance may fit no task at all)


def test_a_best_fit_tie_between_different_servers_goes_to_the_exact_value(monkeypatch):
    # 1-cpu tasks of demand (1, 1) on three servers with (2, 4), (4, 2), (3, 3) left (pooled 9, 9): eq. (9) is
    # |1 - 2| = 1, |1 - 1/2| = 1/2, |1 - 1| = 0 -- the third; then (2, 2) left there: 0 again, and so on
    env = Environment(resources=("cpu", "mem"), servers=("a", "b", "c"),
                      capacity=((Fraction(2), Fraction(4)), (Fraction(4), Fraction(2)), (Fraction(3), Fraction(3))),
                      users=("u",), demand=((Fraction(1), Fraction(1)),), tasks=(Fraction(4),))
    monkeypatch.setattr(di, "VECTOR_SERVERS", {False: 1, True: 1})
    # 3 on c ((3,3) -> (0,0)); then a: |1 - 4/2| = 1 vs b: |1 - 2/4| = 1/2 -> b
    assert di._fill(env, True, "drfh")[0] == [(0, 2), (0, 2), (0, 2), (0, 1)]
    monkeypatch.setattr(di, "VECTOR_SERVERS", {False: 10 ** 9, True: 10 ** 9})
    assert di._fill(env, True, "drfh")[0] == [(0, 2), (0, 2), (0, 2), (0, 1)]


@pytest.mark.parametrize("row,expected", [
    # (4, 2) left on each, tasks of (1, 1), pooled (12, 6): eq. (9) is |2 - 1| = 1 on each; a task leaves (3, 1):
    # |2 - 2/3| = 4/3, so the next task goes to the next server alike: 0, 1, 2, then 0, 1 (all at (3, 1))
    ((4, 2), [0, 1, 2, 0, 1]),
    # (3, 3) left, tasks of (1, 1): eq. (9) is 0 and stays 0 after a task (each term's numerator c_r d_r0 - c_r0 d_r
    # does not change when d is taken off c): the tie goes to the lower index -- server 0 until it is full
    ((3, 3), [0, 0, 0, 1, 1]),
])
def test_best_fit_takes_servers_alike_in_turn_only_while_the_one_served_ranks_after(row, expected, monkeypatch):
    env = Environment(resources=("cpu", "mem"), servers=("a", "b", "c"), capacity=(tuple(map(Fraction, row)),) * 3,
                      users=("u",), demand=((Fraction(1), Fraction(1)),), tasks=(Fraction(5),))
    for vector in (10 ** 9, 1):
        monkeypatch.setattr(di, "VECTOR_SERVERS", {False: vector, True: vector})
        assert di._fill(env, True, "drfh")[0] == [(0, s) for s in expected]


def test_environments_of_one_cluster_share_its_memo():
    env = get("google2011").sampler(servers="80", users="3")(sample_rng(1, {}, 0))
    same = Environment(resources=env.resources, servers=env.servers, capacity=tuple(env.capacity),
                       users=env.users[:1], demand=env.demand[:1])
    assert same.cluster_memo() is env.cluster_memo() and same.cluster_key() == env.cluster_key()
    assert same.total_capacity() == env.total_capacity()
    # equal numbers, other objects: its own memo
    copied = Environment(resources=env.resources, servers=env.servers,
                         capacity=tuple(tuple(list(c)) for c in env.capacity), users=env.users, demand=env.demand)
    assert copied.cluster_memo() is not env.cluster_memo() and copied.cluster_key() != env.cluster_key()
    small = get("google2011").sampler(servers="5", users="2")(sample_rng(1, {}, 0))
    assert small.cluster_key() == small.capacity  # a small cluster: its capacities are the key


@pytest.mark.parametrize("name", ["drfh-first-fit", "drfh-best-fit"])
def test_whole_tasks_on_many_servers_run_feasibly_to_the_end(name):
    # seed 001's model on 80 servers: every step's allocation fits the cluster, its numpy matrix is its rows, and
    # every job finishes (whole tasks run to completion, the rule starts what fits)
    trace = get("google2011").jobs(np.random.default_rng(4), jobs=12, servers=80)
    for job in trace["jobs"]:
        job["tasks"] = min(job["tasks"], 40)
        job["duration"] = min(job["duration"], 3600)
    ex = parse_job_trace(trace)
    mech = lift(mechanisms.get(name), "indivisible(slot=none,overhead=0)")
    from mechanisms.core.time import stepper_for

    finished = set()
    stepper = stepper_for(mech, ex, False)
    for st in run(ex, stepper, exact=False):
        if st.alloc is not None:
            X = float_matrix(st.alloc)
            assert X is not None and (X == np.array(st.alloc.x)).all()
        if st.event is not None and st.event.kind == "finish" and st.event.user not in st.users:
            finished.add(st.event.user)
        if st.alloc is not None:
            cap = np.array([[float(v) for v in c] for c in st.env.capacity])
            load = np.zeros_like(cap)
            for j in range(st.env.n_users):
                load += np.outer(X[j], np.array([float(v) for v in st.env.demand[j]]))
            assert (load <= cap * (1 + 1e-12)).all()
    assert len(finished) == 12
    # every task started once (nothing suspended: no slot) and completed
    n = sum(job["tasks"] for job in trace["jobs"])
    assert stepper.task_counts() == {"started": n, "completed": n, "suspended": 0, "reallocations": 0}


@pytest.mark.parametrize("best_fit", [False, True], ids=["first-fit", "best-fit"])
def test_a_user_gets_only_servers_it_may_use(best_fit, monkeypatch):
    # u may use b only; a is both the first server and Best-Fit's choice for (1, 1) tasks (eq. (9) is 0 on both:
    # the tie goes to the lower index): its 2 tasks both go to b -- from its very first pick, in the scan and in
    # the array search
    env = Environment(resources=("cpu", "mem"), servers=("a", "b"),
                      capacity=((Fraction(2), Fraction(2)), (Fraction(4), Fraction(4))), users=("u",),
                      demand=((Fraction(1), Fraction(1)),), tasks=(Fraction(2),), eligible=(frozenset({1}),))
    for vector in (10 ** 9, 1):
        monkeypatch.setattr(di, "VECTOR_SERVERS", {False: vector, True: vector})
        assert di._fill(env, best_fit, "drfh")[0] == [(0, 1), (0, 1)]


def test_what_runs_kept_between_calls_is_what_a_call_alone_counts(monkeypatch):
    # the rule keeps the capacities less what runs between a run's calls (Held.memo) and re-counts only the users
    # whose running tasks (their cols object) or demand changed: at every call the array and the fill must be those
    # of a call with nothing kept -- users staying, moving, leaving, arriving, a demand changed (the same scale,
    # then a new one: denominators of 3), the servers changed.  70 servers: environments of one cluster share its
    # memo (model.CLUSTER_MIN_SERVERS), as a simulation's steps do
    monkeypatch.setattr(di, "VECTOR_SERVERS", {False: 1, True: 1})
    F = Fraction
    memo: dict = {}
    names = tuple(f"s{i}" for i in range(70))

    def cols(*pairs):  # (server, count) pairs -> a stepper's cols entry
        pairs = sorted(pairs)
        return (np.array([s for s, _n in pairs], dtype=np.int64), np.array([n for _s, n in pairs], dtype=np.int64),
                sum(n for _s, n in pairs))

    small = (F(1), F(1))
    caps = ((F(8), F(8)), (F(10), F(6)), (F(6), F(10))) + (small,) * 67
    other = ((F(8), F(8)), (F(4), F(6)), (F(6), F(10))) + (small,) * 67
    du, dv, dw, dx = (F(1), F(1)), (F(1), F(2)), (F(2), F(1)), (F(3), F(1))
    cu, cv, cw, cv2, cx = cols((0, 2), (1, 1)), cols((2, 2)), cols((1, 3)), cols((2, 3)), cols((0, 1))
    cv3, cx3 = cols((2, 1)), cols((0, 1))
    steps = [  # users, demands, what runs, capacities, the memo kept from the step before
        (("u", "v", "w"), (du, dv, dw), [cu, cv, cw], caps, False),
        (("u", "v", "x"), (du, dv, dx), [cu, cv2, cols()], caps, True),  # w gone, x new, v moved, u stays
        (("u", "v", "x"), (du, dv, dx), [cu, cv2, cx], caps, True),  # only x moved
        (("u", "v", "x"), (du, (F(2), F(1)), dx), [cu, cv2, cx], caps, True),  # v's demand changed, the same scale
        (("v", "x"), ((F(1, 3), F(2)), dx), [cv3, cx3], caps, False),  # u gone; v's demand in thirds
        (("v", "x"), ((F(1, 3), F(2)), dx), [cv3, cx3], tuple(caps), True),  # the same capacities, another tuple
        (("v", "x"), ((F(1, 3), F(2)), dx), [cv3, cx3], other, False),  # the servers changed
    ]
    for best_fit in (False, True):
        memo.clear()
        last = None
        for users, demand, held, cluster, kept_before in steps:
            env = Environment(resources=("cpu", "mem"), servers=names, capacity=cluster, users=users,
                              demand=demand, tasks=(F(50),) * len(users))
            scale = di.integer_scale(env)
            scaled = di._scaled_demands(env, scale, di._demand_info(env))
            after = [di._after_held(env, Held(held, 70, m), scaled, scale, di._base(env), [c[2] for c in held])
                     for m in (memo, None)]
            assert (after[0] == after[1]).all()
            assert (memo["drfh-after-held"] is last) == kept_before
            last = memo["drfh-after-held"]
            assert set(last[2]) == set(users)  # the users gone were taken back
            kept = di._fill(env, best_fit, "drfh", Held(held, 70, memo))
            alone = di._fill(env, best_fit, "drfh", Held(held, 70))
            assert kept == alone and kept[0]
            assert kept == di._fill(env, best_fit, "drfh", Held(held, 70, memo))  # (the fill wrote a copy)
