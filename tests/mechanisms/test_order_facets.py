"""The ORDER facets of the production ports (``mechanisms.OrderSpec``) against the mechanisms themselves.

For ``mesos-drf`` and ``volcano-hdrf`` the facet is the order the mechanism serves by: on random small
instances, the first user of ``order(empty state)`` is the user the mechanism serves first, and after every
``k`` steps of the mechanism the first user of the facet's order in that state, among the users that can take
a task (bound not reached, the task fits on an eligible server), is the mechanism's next choice.  The
mechanism's steps are recorded from the real run (its task counts are watched, nothing is re-implemented).
``volcano-hdrf``'s facet is upstream's comparator, not repaired, which is cyclic where ``compareQueues`` ties
queues of different depths: there the next choice is the least user among those that can take a task
wherever one precedes all the others, and otherwise the one the module's rule names
(``mechanisms.ports.volcano.tree.next_user``).

For ``armada-drf`` the facet is upstream's order at the start of a scheduling round, before any job is
dropped (src/mechanisms/ports/armada.py): its first user that still has a job is the next one the loop TRIES, as
long as no user was dropped; the loop's choices are read from its own trace of placements and drops.

A user's policy (``examples/my_policy.py``, ``@mechverify.mechanism(order=key)``) feeds the same facet
(``mechanisms.core.order.user_order_facet``), and the same replay holds for it: its declared key is the order its
``progressive_filling`` loop serves by.
"""
from __future__ import annotations

import math
import random
from fractions import Fraction as F

import pytest

import mechanisms
import mechanisms.ports.volcano.fast as vf
import mechanisms.ports.volcano.tree as vh
import mechverify.policies as policies
from mechanisms.core.order import view
from mechverify.allocation import Allocation
from mechverify.instances import parse_environment


class _Watched(list):
    """A list that reports every increment of an entry to ``log`` (as ``label(index)``)."""

    def __init__(self, items, log, label):
        super().__init__(items)
        self.log, self.label = log, label

    def __setitem__(self, i, v):
        if v > self[i]:
            self.log.append(self.label(i))
        super().__setitem__(i, v)


def steps_of(name, env, monkeypatch):
    """The mechanism's placements in order, ``[(user, server), ...]``, read from its own state while it runs,
    and its allocation."""
    log: list[tuple[int, int]] = []
    with monkeypatch.context() as mp:
        mp.setenv("MECHVERIFY_IN_PROCESS", "1")  # a user's policy: its loop runs here, where it is watched
        if name == "volcano-hdrf":
            class Hdrf(vf._Hdrf):
                def __init__(self, env):
                    super().__init__(env)
                    self.t = _Watched(self.t, log, lambda j: (j, 0))

            mp.setattr(vf, "_Hdrf", Hdrf)
        else:
            class Fill(policies.FillState):
                def __init__(self, env):
                    super().__init__(env)
                    self.x = [_Watched(row, log, lambda s, j=j: (j, s)) for j, row in enumerate(self.x)]

            mp.setattr(policies, "FillState", Fill)
        out = mechanisms.allocate(name, env)
    return log, out


def can_take(env, st, j) -> bool:
    """Bound not reached (``floor(n_j)``) and one task fits on an eligible server (what ``progressive_filling``
    and the ports' loops ask)."""
    v = view(st)
    b = env.tasks[j]
    if b is not None and v.tasks[j] >= math.floor(b):
        return False
    return any(all(not d or left >= d for left, d in zip(v.remaining[s], env.d(j, s))) for s in env.eligible[j])


def empty(env):
    return Allocation(env, tuple((F(0),) * env.n_servers for _ in range(env.n_users)), "state", True)


def replay(name, env, steps):
    """Check the facet against the recorded steps; return the number of steps checked."""
    spec = mechanisms.get(name).order
    x = [[F(0)] * env.n_servers for _ in range(env.n_users)]
    for j, s in steps:
        st = Allocation(env, tuple(tuple(row) for row in x), "state", True)
        order = spec.order(st)
        assert sorted(order) == list(range(env.n_users))
        if name == "volcano-hdrf":
            cand = [u for u in range(env.n_users) if can_take(env, st, u)]
            least = [u for u in cand if all(u == v or spec.compare(st, u, v) < 0 for v in cand)]
            if least:
                assert least == [j], (env, x, order)
            else:  # upstream's comparator is cyclic on these users: the module's rule
                nodes, leaves = vh.hdrf_tree(env, [int(sum(row)) for row in x])
                assert vh.next_user(env, nodes, leaves, cand) == j, (env, x)
        else:
            first = next(u for u in order if can_take(env, st, u))
            assert first == j, (env, x, order)
        x[j][s] += 1
    st = Allocation(env, tuple(tuple(row) for row in x), "state", True)
    assert not any(can_take(env, st, u) for u in range(env.n_users))  # the mechanism stopped where it had to
    return len(steps)


# ---------------------------------------------------------------------------------------- random instances
def _paths(rng, n, depth):
    paths: list[str] = []
    for k in range(n):
        p = (rng.choice(paths) + "/" if paths and rng.random() < 0.5 else "") + f"q{k}"
        if p.count("/") < depth:
            paths.append(p)
    return paths


def _env(rng, *, servers, placement, weights, all_fit, queues=True):
    R = rng.randint(1, 3)
    S = rng.randint(1, servers)
    caps = [[rng.choice([0, 3, 4, 6, 9]) for _ in range(R)] for _ in range(S)]
    if all_fit:
        caps = [[max(c, 3) for c in row] for row in caps]
    paths = _paths(rng, rng.randint(0, 4), 3)
    if not queues:
        paths = []
    users = []
    for j in range(rng.randint(1, 5)):
        dem = [rng.choice([0, 1, 1, 2, 3]) for _ in range(R)]
        u = {"name": f"u{rng.randint(0, 9)}{j}", "demand": dem}
        if not any(dem) or rng.random() < 0.5:
            u["tasks"] = rng.choice([1, 2, 3, "5/2"] if all_fit else [0, 1, 2, 3, "5/2"])
        if weights and rng.random() < 0.3:
            u["weight"] = rng.choice([2, 3, "1/2"])
        if paths and rng.random() < 0.75:
            u["queue"] = rng.choice(paths)
        if placement and S > 1 and not all_fit and rng.random() < 0.3:
            u["eligible"] = [f"s{s}" for s in range(S) if rng.random() < 0.6]
        users.append(u)
    d = {"resources": [f"r{r}" for r in range(R)],
         "servers": [{"name": f"s{s}", "capacity": c} for s, c in enumerate(caps)], "users": users}
    if paths:
        d["queues"] = [{"name": p, "weight": rng.choice([1, 1, 2, 3, "1/2"])} for p in paths]
    return parse_environment(d)


SETTINGS = {"mesos-drf": dict(servers=2, placement=True, weights=True),
            "volcano-hdrf": dict(servers=1, placement=False, weights=False)}
#: a user's policy whose order is declared with ``@mechverify.mechanism(order=key)`` (no queue trees)
MY_POLICY = "examples/my_policy.py:fewest_tasks"
ORDERED = {**SETTINGS, MY_POLICY: dict(servers=2, placement=True, weights=True, queues=False)}


@pytest.mark.parametrize("name", sorted(ORDERED))
def test_first_of_the_empty_order_is_served_first(name, monkeypatch):
    """Every user can take a task at the start (capacities >= 3 >= every demand, bounds >= 1): the first user
    of ``order(empty state)`` is the mechanism's first placement."""
    rng = random.Random(f"first-{name}")
    for _ in range(150):
        env = _env(rng, all_fit=True, **ORDERED[name])
        steps, _ = steps_of(name, env, monkeypatch)
        order = mechanisms.get(name).order.order(empty(env))
        assert all(can_take(env, empty(env), u) for u in range(env.n_users))
        assert steps and order[0] == steps[0][0], env


@pytest.mark.parametrize("name", sorted(ORDERED))
def test_the_order_in_every_state_gives_the_next_choice(name, monkeypatch):
    """After every step k of the mechanism (zero capacities and demands, bounds, user weights, placement where
    the setting allows, users at the root and in inner queues), the facet's order in that state, restricted to
    the users that can take a task, starts with the user the mechanism serves next."""
    rng = random.Random(f"steps-{name}")
    checked = 0
    for _ in range(150):
        env = _env(rng, all_fit=False, **ORDERED[name])
        steps, out = steps_of(name, env, monkeypatch)
        assert sum(out.totals()) == len(steps)
        checked += replay(name, env, steps)
    assert checked > 300


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_shares_are_the_ports_own(name):
    """``share`` and ``queue_share`` on a hand example: 10 cpu, 10 mem; queue a (weight 2) with sub-queue a/b;
    u <1, 2> in a, v <2, 1> in a/b, w <1, 1> at the root; state u 2, v 1, w 3.
    Mesos: u's share max(2/10, 4/10) = 2/5; v 1/5 (user weights 1); a's subtree <4, 5>: 1/2 over weight 2 =
    1/4; a/b <2, 1>: 1/5.  Volcano: the same flat shares; a/b's node holds v only: 1/5 (weight 1); a's
    children are u (2/5) and a/b (1/5), both non-saturated, M = 1/5: u scaled by 1/2 to <1, 2>, a/b as is
    <2, 1>, sum <3, 3>: 3/10, over the weight 2: 3/20."""
    env = parse_environment({"resources": ["cpu", "mem"], "servers": [{"name": "n", "capacity": [10, 10]}],
                             "queues": [{"name": "a", "weight": 2}, {"name": "a/b"}],
                             "users": [{"name": "u", "demand": [1, 2], "queue": "a"},
                                       {"name": "v", "demand": [2, 1], "queue": "a/b"},
                                       {"name": "w", "demand": [1, 1]}]})
    st = Allocation(env, ((F(2),), (F(1),), (F(3),)), "state", True)
    spec = mechanisms.get(name).order
    assert [spec.share(st, j) for j in range(3)] == [F(2, 5), F(1, 5), F(3, 10)]
    expected = {"mesos-drf": [F(1, 4), F(1, 5)], "volcano-hdrf": [F(3, 20), F(1, 5)]}[name]
    assert [spec.queue_share(st, q) for q in range(2)] == expected


# ---------------------------------------------------------------------------------------- armada-drf
def test_armada_facet_is_the_order_the_loop_tries_until_a_drop():
    """Random instances (as above, several nodes and placement): while no user has been dropped, the loop's
    next attempt is the first user of the facet's order that still has a job (bound not reached); the facet's
    order never depends on what fits."""
    from mechanisms.ports.armada import ArmadaDRF

    rng = random.Random("armada")
    spec = mechanisms.get("armada-drf").order
    checked = 0
    for _ in range(200):
        env = _env(rng, all_fit=False, servers=2, placement=True, weights=True)
        trace: list = []
        out = ArmadaDRF().allocate(env, trace=trace)
        assert out.x == mechanisms.allocate("armada-drf", env).x
        x = [[F(0)] * env.n_servers for _ in range(env.n_users)]
        for event in trace:
            st = Allocation(env, tuple(tuple(row) for row in x), "state", True)
            v = view(st)
            live = [u for u in spec.order(st)
                    if env.tasks[u] is None or v.tasks[u] < math.floor(env.tasks[u])]
            assert live[0] == event[1], (env, x, trace)
            checked += 1
            if event[0] == "drop":
                break
            x[event[1]][event[2]] += 1
    assert checked > 300
