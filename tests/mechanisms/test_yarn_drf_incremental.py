"""``yarn-drf``'s incremental descent (children in heaps by the comparator's key, the served path re-keyed, dead
children dropped; src/mechanisms/ports/yarn/drf.py, ``_Incremental``) held EQUAL to the literal one (every visited
parent's ``TreeSet`` filled afresh every round, ``place(..., literal=True)``): the same tasks per user and the same
number of rounds, on seeded random instances -- flat and nested trees, user and queue weights, min shares
(guarantees, some with a zero component: 0 / 0 min-share ratios, the comparator's intransitive case), queue maxes,
task bounds, zero requests on a resource, a resource the cluster has none of (NaN usage ratios), tasks already held
(``yarn-drf-preempt``'s refill), and both versions: the fixed policy and ``yarn-drf@YARN-11482`` (two resources:
Comparator2, run literally; one or three: ComparatorN, incrementally)."""
from __future__ import annotations

import random

import mechanisms
from mechanisms.ports.yarn import drf
from mechanisms.ports.yarn.drf import place, yarn_drf_reference
from mechverify.instances import parse_environment


def _tree(rng: random.Random, nested: bool) -> list[str]:
    names: list[str] = []
    for i in range(rng.randint(1, 6)):
        parent = rng.choice(names) if nested and names and rng.random() < 0.6 else None
        if parent is not None and parent.count("/") >= 2:
            parent = None
        names.append(f"{parent}/q{i}" if parent else f"q{i}")
    return names


def _instance(rng: random.Random) -> dict:
    R = rng.randint(1, 3)
    cap = [rng.randint(4, 14) for _ in range(R)]
    if R > 1 and rng.random() < 0.15:
        cap[rng.randrange(R)] = 0  # a resource type no node has: usage ratio 0 / 0 for everybody
    shape = rng.choice(("flat", "flat-apps", "nested"))
    queues = [] if shape == "flat-apps" else _tree(rng, shape == "nested")
    qs = []
    for name in queues:
        q: dict = {"name": name}
        if rng.random() < 0.5:
            q["weight"] = rng.choice([1, 2, 3, "1/2", "3/2"])
        if rng.random() < 0.5:  # a min share, zero on some resource now and then
            q["guarantee"] = [rng.choice([0, 2, 2, 4]) for _ in range(R)]
        if rng.random() < 0.15:
            q["max"] = [rng.randint(2, 12) for _ in range(R)]
        qs.append(q)
    users = []
    for j in range(rng.randint(1, 7)):
        d = [rng.choice([0, 1, 1, 1, 2]) for _ in range(R)]
        if not any(d):
            d[rng.randrange(R)] = 1
        u: dict = {"name": f"u{j}", "demand": d}
        if queues and (shape != "flat" or rng.random() < 0.9):
            u["queue"] = queues[j % len(queues)] if shape == "flat" else rng.choice(queues)
        if rng.random() < 0.4:
            u["weight"] = rng.choice([1, 2, 3, "1/3"])
        if rng.random() < 0.3:
            u["tasks"] = rng.randint(0, 4)
        users.append(u)
    return {"resources": [f"r{r}" for r in range(R)], "servers": [{"name": "pool", "capacity": cap}],
            "queues": qs, "users": users}


def _needy_ties(rng: random.Random) -> dict:
    """Queues that stay needy and tie on their dominant min-share ratio, some with a 0 / 0 ratio on a resource
    they neither use nor are guaranteed: where the comparator cycles (test_yarn_drf.py) and the ``TreeSet``'s
    order is not a sort's."""
    R = rng.choice((2, 3))
    qs, users = [], []
    for i in rng.sample(range(8), rng.randint(3, 6)):  # names in random declaration order
        g = [4] + [rng.choice([0, 4, 8]) for _ in range(R - 1)]
        qs.append({"name": f"q{i}", "guarantee": g})
        d = [1] + [rng.choice([0, 1]) if gr else 0 for gr in g[1:]]
        users.append({"name": f"a{i}", "queue": f"q{i}", "demand": d})
    return {"resources": [f"r{r}" for r in range(R)], "servers": [{"name": "pool", "capacity": [12] * R}],
            "queues": qs, "users": users}


def _held(rng: random.Random, env) -> list[int]:
    """A few tasks per user already running that fit in the pool (what yarn-drf-preempt refills around)."""
    left = list(env.capacity[0])
    held = [0] * env.n_users
    for j in rng.sample(range(env.n_users), env.n_users):
        for _ in range(rng.randint(0, 2)):
            d = env.d(j, 0)
            if all(lv >= dv for lv, dv in zip(left, d)):
                left = [lv - dv for lv, dv in zip(left, d)]
                held[j] += 1
    return held


def test_incremental_descent_equals_the_literal_treeset_descent(monkeypatch):
    rng = random.Random(2026)
    fallback = {"rounds": 0, "instances": 0}
    real = drf._treeset

    def counting(*a, **k):  # the incremental descent's literal fallback at a parent with a NaN-keyed child
        fallback["rounds"] += 1
        return real(*a, **k)

    checked = 0
    for _ in range(300):
        env = parse_environment(_instance(rng) if rng.random() < 0.8 else _needy_ties(rng))
        zero = [0] * env.n_users
        held = _held(rng, env)
        for s2 in (False, True):
            for start in (zero, held):
                want = place(env, start, s2_needy_from_s1=s2, literal=True)
                before = fallback["rounds"]
                monkeypatch.setattr(drf, "_treeset", counting)
                got = place(env, start, s2_needy_from_s1=s2)
                monkeypatch.setattr(drf, "_treeset", real)
                fallback["instances"] += fallback["rounds"] > before
                assert got == want, (env.to_json(), start, s2)
                checked += 1
    assert checked == 1200
    assert fallback["instances"] >= 50  # the NaN cases were met, and answered the literal way


def test_the_cycle_is_served_in_treeset_order():
    """test_yarn_drf.py's cycle c < a < b < c end to end, hand-derived: on <8, 8> queues a (min <2, 2>), b (min
    <2, 0>), c (min <2, 4>) with one app each already holding one task of <1, 1>, <1, 0>, <1, 1>.  All needy,
    min-share ratios a (1/2, 1/2), b (1/2, 0/0), c (1/2, 1/4).  The root's TreeSet adds a, then b (a tie at
    the NaN, then the names: right of a), then c (before a): c, a, b -- c takes the round.  Any sort by a key
    would put b first or order b between a and c inconsistently; both descents give c."""
    env = parse_environment({"resources": ["m", "c"], "servers": [{"name": "p", "capacity": [8, 8]}],
                             "queues": [{"name": "a", "guarantee": [2, 2]}, {"name": "b", "guarantee": [2, 0]},
                                        {"name": "c", "guarantee": [2, 4]}],
                             "users": [{"name": "x", "queue": "a", "demand": [1, 1]},
                                       {"name": "y", "queue": "b", "demand": [1, 0]},
                                       {"name": "z", "queue": "c", "demand": [1, 1]}]})
    want = place(env, [1, 1, 1], literal=True, rounds=1)
    assert want == ([1, 1, 2], 1)
    assert place(env, [1, 1, 1], rounds=1) == want
    assert place(env, [1, 1, 1]) == place(env, [1, 1, 1], literal=True)


def test_registered_allocate_is_the_incremental_one_and_equals_the_reference():
    """The registered mechanisms run the incremental descent (the fixed policy; the YARN-11482 version with three
    resources) and equal :func:`yarn_drf_reference`; a nested tree of 60 apps."""
    rng = random.Random(7)
    queues = [{"name": f"p{a}", "weight": rng.randint(1, 3)} for a in range(4)]
    queues += [{"name": f"p{a}/l{b}", "weight": rng.randint(1, 3),
                **({"guarantee": [rng.randint(1, 4) for _ in range(3)]} if b % 2 else {})}
               for a in range(4) for b in range(3)]
    leaves = [q["name"] for q in queues if "/" in q["name"]]
    env = parse_environment({"resources": ["m", "c", "g"], "servers": [{"name": "p", "capacity": [90, 90, 60]}],
                             "queues": queues,
                             "users": [{"name": f"u{j}", "queue": leaves[j % len(leaves)], "weight": rng.randint(1, 2),
                                        "demand": [rng.randint(1, 3), rng.randint(1, 3), rng.randint(0, 1)]}
                                       for j in range(60)]})
    for name, s2 in (("yarn-drf", False), ("yarn-drf@YARN-11482", True)):
        got = mechanisms.allocate(name, env)
        assert got.x == yarn_drf_reference(env, name=name, s2_needy_from_s1=s2).x
        assert sum(got.totals()) > 40


def test_the_pool_starts_from_the_held_tasks_usage():
    """``_Pool``'s integer sums (``_whole_usages``) give what the plain loop over the held tasks gives: the pool
    left, every user's and queue's usage -- on whole and on fractional demands (the latter take the loop)."""
    rng = random.Random(77)
    whole = 0
    for _ in range(300):
        env = parse_environment(_instance(rng))
        held = _held(rng, env)
        st = drf._Pool(env, held, "test")
        R = env.n_resources
        left = list(env.capacity[0])
        users = [[0] * R for _ in range(env.n_users)]
        queues = [[0] * R for _ in range(env.n_queues)]
        for j, n in enumerate(held):
            for r, dv in enumerate(env.d(j, 0)):
                left[r] -= n * dv
                users[j][r] += n * dv
                for q in env.user_path(j):
                    queues[q][r] += n * dv
        assert (st.left, st.user_use, st.queue_use) == (left, users, queues), (env.to_json(), held)
        whole += all(v.denominator == 1 for j in range(env.n_users) for v in env.d(j, 0))
    assert whole >= 30
