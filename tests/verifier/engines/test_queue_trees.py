"""Queue trees in the engines: the strategies draw trees only for settings with ``hierarchy=True`` (flat
settings draw exactly what they drew before), and the minimiser removes and merges queues while the
violation persists."""
from __future__ import annotations

import hashlib
from fractions import Fraction as F

from hypothesis import HealthCheck, Phase, given, seed, settings

import mechanisms
from mechanisms.core.registry import Mechanism, Setting
from mechverify.allocation import Allocation
from mechverify.instances import parse_environment
from verifier.engines import strategies as S
from verifier.engines.minimize import minimize
from verifier.properties import Witness, get_property

HIER = Setting(hierarchy=True)


def _collect(strategy, n: int, at: int) -> list:
    out = []

    @settings(database=None, max_examples=n, deadline=None, suppress_health_check=list(HealthCheck),
              phases=(Phase.generate,))
    @seed(at)
    @given(strategy)
    def run(x):
        out.append(x)

    run()
    return out


def test_hierarchical_setting_draws_trees_within_the_domain():
    envs = _collect(S.environments(HIER), 150, 3)
    assert all(env.has_queues for env in envs)
    leaves, depths = set(), set()
    for env in envs:
        env.validate()
        HIER.check(env, "h")
        ls = env.queue_leaves()
        assert 2 <= len(ls) <= 6
        assert all(env.user_queue[j] in ls for j in range(env.n_users))  # users in leaves
        assert all(w.denominator == 1 and 1 <= w <= 4 for w in env.queue_weight)
        assert all(g is None for g in env.queue_guarantee)
        leaves.add(len(ls))
        depths.add(max(env.queue_depth(q) for q in range(env.n_queues)))
    assert leaves == {2, 3, 4, 5, 6} and depths == {1, 2, 3}
    dom = S.domain_for(HIER)
    assert dom.hierarchy and dom.describe()["features"]["queue_tree"] is True
    assert not S.domain_for(HIER, hierarchy=False).hierarchy  # a hierarchical domain narrowed to flat


def test_all_zero_bytes_are_the_simplest_tree():
    dom = S.domain_for(HIER)
    env = S.decode_environment(dom, 2, 1, 1, 0, b"")
    assert env.queues == ("q1", "q2") and env.queue_weight == (F(1), F(1)) and env.user_queue == (0, 0)


def test_flat_settings_draw_no_trees_and_exactly_what_they_drew_before():
    for name in ("drf", "tsf", "c-drfh"):
        assert not S.domain_for(mechanisms.get(name).setting).hierarchy
    assert "queue_tree" not in S.domain_for(mechanisms.get("drf").setting).describe()["features"]
    assert not any(env.has_queues for env in _collect(S.environments(), 60, 5))
    # the same seed gives the same cases as before queue trees existed (digest of the code before them)
    texts = []
    for name in ("drf", "tsf", "c-drfh"):
        texts += [env.to_json() + repr(dev) for env, dev in
                  _collect(S.cases(mechanisms.get(name).setting, "sp", "demand"), 40, 7)]
    assert len(texts) == 120
    assert hashlib.sha256("\n".join(texts).encode()).hexdigest() == \
        "463379fce2300ffe80d443ab74261ee0b9ae579d4cad7623e3d7dbd105c5ef71"


# ---------------------------------------------------------------------- the minimiser
def _siblings(env, exact=False):
    """Test-only: fails whenever two queues with the same parent (the root too) both hold users directly."""
    for parent in [None] + list(range(env.n_queues)):
        busy = [q for q in env.queue_children(parent) if env.queue_users(q)]
        if len(busy) >= 2:
            raise RuntimeError(f"sibling queues {env.queues[busy[0]]} and {env.queues[busy[1]]} both hold users")
    zero = F(0) if exact else 0.0
    return Allocation(env, tuple((zero,) * env.n_servers for _ in env.users), "siblings", exact)


SIBLINGS = Mechanism("sibling-queues", "test: fails on two sibling queues with users", _siblings, HIER,
                     origin="function")


def test_minimiser_removes_and_merges_queues_to_a_minimal_tree():
    env = parse_environment({
        "resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [10, 10]}],
        "queues": [{"name": "eng", "weight": 3}, {"name": "eng/dev", "weight": 2, "guarantee": [1, 2]},
                   {"name": "eng/dev/x", "weight": "3/2"}, {"name": "eng/dev/y"}, {"name": "eng/ops"},
                   {"name": "research"}, {"name": "research/ml", "weight": "5/2"}],
        "users": [{"name": "a", "demand": [1, 1], "queue": "eng/dev/x"},
                  {"name": "b", "demand": [1, 2], "queue": "eng/dev/y"},
                  {"name": "c", "demand": [2, 1], "queue": "eng/ops"},
                  {"name": "d", "demand": [1, 1], "queue": "research/ml"}, {"name": "e", "demand": [3, 1]}]})
    prop = get_property("runs")
    cert = prop.recheck(SIBLINGS, Witness("runs", "any", SIBLINGS.name, env, None, 1, ()))
    assert cert is not None
    small, rec = minimize(SIBLINGS, cert, budget=60)
    out = small.witness.env
    assert rec["one_minimal"] and rec["status"] == "1-minimal"
    # hand-checked: two top-level queues of weight 1 with one user each is the least that still fails
    # (removing either queue moves its user to the root, where it has no busy sibling queue)
    assert out.n_users == 2 and out.queues == ("x", "y") and out.queue_weight == (F(1), F(1))
    assert out.queue_guarantee == (None, None) and out.user_queue == (0, 1)
    moves = rec["moves"]
    assert "remove queue research/ml (its users move to research)" in moves  # an emptied leaf
    assert "remove queue eng/ops (its users move to eng)" in moves
    assert moves.index("merge queue eng/dev into eng") < moves.index("merge queue eng into the root")
    assert rec["size"]["queues"] == 2 and rec["original_size"]["queues"] == 7
    assert "queue" in rec["definition"]
    assert prop.recheck(SIBLINGS, small.witness) is not None
    for q in range(out.n_queues):
        assert prop.recheck(SIBLINGS, Witness("runs", "any", SIBLINGS.name, out.without_queue(q), None, 1, ())) is None


def test_minimiser_leaves_flat_instances_alone_as_before():
    """No queue move is proposed for a flat instance, and its record has no ``queues`` entry."""
    env = parse_environment({"resources": ["r"], "servers": [{"name": "s", "capacity": [10]}],
                             "users": [{"name": "a", "demand": [1]}, {"name": "b", "demand": [1]}]})

    def two_users(e, exact=False):
        if e.n_users >= 2:
            raise RuntimeError("two users")
        return Allocation(e, ((F(0),),), "two", exact)

    mech = Mechanism("two-users", "test", two_users, Setting(), origin="function")
    prop = get_property("runs")
    cert = prop.recheck(mech, Witness("runs", "any", mech.name, env, None, 1, ()))
    small, rec = minimize(mech, cert, budget=30)
    assert "queues" not in rec["size"] and not any("queue" in m for m in rec["moves"])
    assert "queue" not in rec["definition"]
