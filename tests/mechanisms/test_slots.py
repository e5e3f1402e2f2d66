"""The Slots scheduler (``slots``, seed 001 Sec. VI / Table II; ``src/mechanisms/paper/slots.py``).

Reading (module docstring): a slot is 1/k of the maximum server in every resource, ``slot_r = M_r / k``; server l
holds ``min_r floor(c[l, r] / slot_r)`` slots; a task takes one slot and must fit in it; slots go one at a time to
the user with the fewest slots per weight (ties: lowest index), on its first eligible server with a free slot.
Every expected number is derived in the comment beside it.  ``reference`` re-implements the rule from that
definition alone (an explicit list of slots, everything recomputed at every step) and must agree with the
registered code on random instances.
"""
from __future__ import annotations

import math
import random
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.paper.slots import DEFAULT_K, TABLE_II_K, make_slots_mechanism, slot_size, slots_per_server
from mechverify.allocation import feasibility_violations
from mechverify.instances import parse_environment
from tests.helpers import example


def env_of(servers, users, resources=("cpu", "mem")):
    return parse_environment({"resources": list(resources),
                              "servers": [{"name": f"s{i + 1}", "capacity": c} for i, c in enumerate(servers)],
                              "users": users})


def x_of(a):
    return tuple(tuple(row) for row in a.x)


def slots_k(k, env, exact=True):
    a = make_slots_mechanism(k)(env, exact)
    assert feasibility_violations(env, a.x) == [], a.x
    return a


# ---------------------------------------------------------------------- the paper's numbers
def test_registered_with_the_papers_slot_count_and_claim():
    m = mechanisms.get("slots")
    # Table II: "Number of Slots" 10, 12, 14, 16, 20 per maximum server; Sec. VI: 14 gives the highest
    # overall utilisation (CPU 43.9%, memory 28.0%), the paper's choice
    assert TABLE_II_K == (10, 12, 14, 16, 20) and DEFAULT_K == 14
    assert not m.setting.divisible and not m.setting.external
    assert [(c.property, c.status, c.source[:3]) for c in m.claims] == [("po", "fails", "001")]
    env = env_of([[1, 1]], [{"name": "u", "demand": [F(1, 14), F(1, 14)]}])
    assert mechanisms.allocate("slots", env).info["slots"] == (14,)  # the maximum server holds k = 14 slots


def test_table_i_servers_and_slots():
    """Seed 001 Table I, normalised to the maximum server (1, 1); k = 14: slot (1/14, 1/14).
    (1, 1): 14 slots; (0.5, 0.5): floor(7) = 7; (0.5, 0.25): min(floor(7), floor(3.5)) = 3;
    (0.25, 0.25): floor(3.5) = 3; (0.5, 0.03): min(7, floor(0.42)) = 0 -- a server with no slot."""
    env = env_of([[1, 1], [F(1, 2), F(1, 2)], [F(1, 2), F(1, 4)], [F(1, 4), F(1, 4)], [F(1, 2), F(3, 100)]],
                 [{"name": "u", "demand": [0, 0], "tasks": 0}])
    slot = slot_size(env, 14)
    assert slot == (F(1, 14), F(1, 14))
    assert slots_per_server(env, slot) == (14, 7, 3, 3, 0)


# ---------------------------------------------------------------------- hand-derived allocations
def test_one_server_three_slots():
    """1 server (9 CPU, 18 GB), k = 3: slot (3, 6), 3 slots.  A (1, 4) and B (3, 1) both fit a slot.
    Fewest slots first, ties to the lower index: A (0 vs 0), B (1 vs 0), A (1 vs 1): A 2, B 1.
    Used: 2 x (1, 4) + (3, 1) = (5, 9) of (9, 18) -- 4 CPU and 9 GB idle, though one more A task would fit."""
    env = env_of([[9, 18]], [{"name": "A", "demand": [1, 4]}, {"name": "B", "demand": [3, 1]}])
    a = slots_k(3, env)
    assert x_of(a) == ((2,), (1,))
    assert a.info["slot"] == (3, 6) and a.info["slots"] == (3,) and a.info["steps"] == 3


def test_a_task_larger_than_a_slot_never_runs():
    """Same server, k = 3 (slot (3, 6)); C (4, 1) needs 4 CPU > 3: it fits no slot and gets 0 tasks although
    two of its tasks, (8, 2), fit the server; A (1, 4) takes all 3 slots."""
    env = env_of([[9, 18]], [{"name": "A", "demand": [1, 4]}, {"name": "C", "demand": [4, 1]}])
    assert x_of(slots_k(3, env)) == ((3,), (0,))


def test_seed001_fig1_slot_sizes():
    """Seed 001 Fig. 1: s1 (2, 12), s2 (12, 2); d1 (0.2, 1), d2 (1, 0.2).  Maximum per resource M = (12, 12).
    k = 12: slot (1, 1); s1 min(floor(2), floor(12)) = 2 slots, s2 2.  Both tasks fit (0.2 <= 1, 1 <= 1).
      u1 (tie, lower index) -> s1;  u2 (0 < 1) -> s1 (now full);  u1 (tie) -> s2;  u2 -> s2.
      u1 (1, 1), u2 (1, 1): 2 tasks each where DRFH gives 10 each (Fig. 3).
    k = 14: slot (6/7, 6/7); u1 needs 1 GB > 6/7, u2 1 CPU > 6/7: nobody runs."""
    env = example("001-fig1.json")
    assert x_of(slots_k(12, env)) == ((1, 1), (1, 1))
    assert slot_size(env, 14) == (F(6, 7), F(6, 7))
    assert x_of(mechanisms.allocate("slots", env, exact=True)) == ((0, 0), (0, 0))


def test_heterogeneous_servers_waste_slots():
    """s1 (4, 2), s2 (2, 4), k = 2: M = (4, 4), slot (2, 2); s1 min(2, 1) = 1 slot, s2 min(1, 2) = 1.
    A (1, 1), B (2, 2): A (tie) -> s1, B -> s2.  1 task each, (3, 3) of (6, 6) used."""
    env = env_of([[4, 2], [2, 4]], [{"name": "A", "demand": [1, 1]}, {"name": "B", "demand": [2, 2]}])
    a = slots_k(2, env)
    assert a.info["slots"] == (1, 1)
    assert x_of(a) == ((1, 0), (0, 1))


def test_weights_and_bounds():
    """1 server (6, 6), k = 6: slot (1, 1), 6 slots; A weight 2, B weight 1, both (1, 1).
    Keys slots/weight: A 0 = B 0 -> A (1/2); B 0 -> B (1); A 1/2 -> A (1); A 1 = B 1 -> A (3/2);
    B 1 -> B (2); A 3/2 -> A (2).  A 4, B 2 -- the weighted max-min split 2 : 1 of 6 slots.
    B bounded to 1 task: A 0 = B 0 -> A; B 0 -> B (bound reached, B leaves); A takes the other 4: A 5, B 1."""
    users = [{"name": "A", "demand": [1, 1], "weight": 2}, {"name": "B", "demand": [1, 1]}]
    env = env_of([[6, 6]], users)
    assert x_of(slots_k(6, env)) == ((4,), (2,))
    users[1]["tasks"] = F(3, 2)  # floor(3/2) = 1 whole task
    assert x_of(slots_k(6, env_of([[6, 6]], users))) == ((5,), (1,))


def test_placement_and_first_server_order():
    """s1 (2, 2), s2 (2, 2), k = 2: slot (1, 1), 2 slots each.  A eligible on s2 only, B anywhere, both (1, 1).
    A (tie) -> s2 (its first eligible server with a free slot); B -> s1 (first in server order);
    A 1 = B 1 -> A -> s2 (full); B -> s1 (full).  A (0, 2), B (2, 0)."""
    env = env_of([[2, 2], [2, 2]], [{"name": "A", "demand": [1, 1], "eligible": ["s2"]},
                                    {"name": "B", "demand": [1, 1]}])
    assert x_of(slots_k(2, env)) == ((0, 2), (2, 0))


def test_a_resource_nobody_has():
    """Resources (cpu, mem, gpu), one server (4, 4, 0), k = 4: M = (4, 4, 0), slot (1, 1, 0); gpu bounds no slot
    count: min(floor(4), floor(4)) = 4 slots.  G (1, 1, 1) needs gpu 1 > 0: no slot fits it.  Z (0, 0, 0), bound 3,
    fits any slot (each task still holds one).  A (1, 1, 0) and Z share the 4 slots:
      A 0 = Z 0 -> A;  Z 0 < 1 -> Z;  A 1 = Z 1 -> A;  Z 1 < 2 -> Z.  G 0, A 2, Z 2 (Z's bound 3 not reached)."""
    env = env_of([[4, 4, 0]], [{"name": "G", "demand": [1, 1, 1]}, {"name": "A", "demand": [1, 1, 0]},
                               {"name": "Z", "demand": [0, 0, 0], "tasks": 3}], resources=("cpu", "mem", "gpu"))
    a = slots_k(4, env)
    assert a.info["slot"] == (1, 1, 0) and a.info["slots"] == (4,)
    assert x_of(a) == ((0,), (2,), (2,))


def test_k_must_be_a_positive_whole_number():
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="k: a whole number"):
            make_slots_mechanism(bad)


# ---------------------------------------------------------------------- the independent definition
def reference(env, k):
    """From the definition alone: list every slot (server, i) -- server s holds the largest n <= k with
    n * slot_r <= c[s, r] for every r -- then, until nobody can take one, give the user with the fewest slots per
    weight (ties: lowest index) among those whose task fits a slot, below floor(n_j), with a free eligible slot,
    the first free slot of its eligible servers in (server, i) order."""
    R = env.n_resources
    slot = [F(max(c[r] for c in env.capacity)) / k for r in range(R)]
    free = [(s, i) for s in range(env.n_servers)
            for i in range(max(n for n in range(k + 1) if all(n * slot[r] <= env.capacity[s][r] for r in range(R))))]
    if not any(v > 0 for v in slot):
        free = []  # a slot of nothing at all: no server is divided
    held = [0] * env.n_users
    x = [[0] * env.n_servers for _ in range(env.n_users)]
    while True:
        can = [j for j in range(env.n_users)
               if all(env.demand[j][r] <= slot[r] for r in range(R))
               and (env.tasks[j] is None or held[j] < math.floor(env.tasks[j]))
               and any(s in env.eligible[j] for s, _ in free)]
        if not can:
            return tuple(tuple(row) for row in x)
        j = min(can, key=lambda u: (F(held[u]) / env.weight[u], u))
        s, i = min(p for p in free if p[0] in env.eligible[j])
        free.remove((s, i))
        held[j] += 1
        x[j][s] += 1


def random_instance(rng):
    caps = [0, 1, 2, 4, 8, 12, 16, 20]
    servers = [[rng.choice(caps), rng.choice(caps)] for _ in range(rng.randint(1, 3))]
    users = []
    for j in range(rng.randint(1, 4)):
        u = {"name": f"u{j}", "demand": [F(rng.randint(0, 4), rng.choice([1, 2, 4, 8])) for _ in range(2)],
             "weight": rng.randint(1, 3)}
        if rng.random() < 0.3 or not any(u["demand"]):  # (the model refuses an unbounded user demanding nothing)
            u["tasks"] = F(rng.randint(0, 7), rng.choice([1, 2]))
        if rng.random() < 0.3:
            u["eligible"] = [f"s{s + 1}" for s in range(len(servers)) if rng.random() < 0.6]
        users.append(u)
    return env_of(servers, users)


def test_agrees_with_the_definition_on_random_instances():
    """1000 random instances (1-3 servers with zero capacities, 1-4 users with zero and fractional demands,
    weights, bounds, eligible sets), k in 1..5 and Table II's 10..20: the registered code gives the allocation
    the definition gives."""
    rng = random.Random(1)
    for _ in range(1000):
        env = random_instance(rng)
        k = rng.choice((1, 2, 3, 4, 5) + TABLE_II_K)
        assert x_of(make_slots_mechanism(k)(env, True)) == reference(env, k), (k, env.to_dict())


def test_exact_and_float_modes_agree_and_tasks_are_whole():
    """The same random instances through the registered ``slots`` (k = 14) and k = 3: exact mode equals float
    mode; every entry a whole number; no user above floor(n_j); no server above its slot count; in chi(E)."""
    rng = random.Random(2)
    for _ in range(150):
        env = random_instance(rng)
        for mech in (mechanisms.get("slots").func, make_slots_mechanism(3)):
            ex, fl = mech(env, True), mech(env, False)
            assert x_of(ex) == x_of(fl) and ex.exact and fl.exact
            assert all(isinstance(v, F) and v.denominator == 1 for row in ex.x for v in row)
            for j, t in enumerate(env.tasks):
                assert t is None or ex.total(j) <= math.floor(t)
            for s, n in enumerate(ex.info["slots"]):
                assert sum(ex.x[j][s] for j in range(env.n_users)) <= n
            assert feasibility_violations(env, ex.x) == []


# ---------------------------------------------------------------------- the catalogue
def test_the_catalogue_lists_it(capsys):
    from verifier.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    entry = out.split("\nslots  --  ", 1)[1].split("\n", 4)
    assert entry[0].startswith("Slots scheduler (seed 001's baseline")
    assert entry[1].strip().startswith("source:  001 Sec. VI, Table II")
    assert "indivisible tasks" in entry[2] and "po fails [001 Sec. I" in entry[3]
