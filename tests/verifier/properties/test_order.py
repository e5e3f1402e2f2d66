"""The order properties (``order``: strict weak order, scale; ``share``: monotone, borrowing, weight) on
hand-made policies whose defects are known, and the ``order`` command.

The policies are tiny comparators over a state (``mechanisms.OrderSpec``); each number is derived beside it."""
from __future__ import annotations

import json
from fractions import Fraction as F

from mechanisms.core.mechanism import Mechanism, OrderSpec, Setting
from mechverify.allocation import Allocation, state_of
from mechverify.instances import parse_environment
from verifier.properties import get_property

SETTING = Setting(single_server=True, hierarchy=True, divisible=False, ordered=True)


def env_of(usage, demands=((1, 0), (0, 1), (1, 1)), cap=(10, 10), queues=None, user_queue=None, guarantees=None):
    users = [{"name": f"u{j + 1}", "demand": list(d), "usage": [u]} for j, (d, u) in enumerate(zip(demands, usage))]
    data = {"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": list(cap)}], "users": users}
    if queues:
        data["queues"] = [{"name": q, **({"guarantee": guarantees[i]} if guarantees and guarantees[i] else {})}
                          for i, q in enumerate(queues)]
        for j, q in enumerate(user_queue):
            users[j]["queue"] = q
    return parse_environment(data)


def held(state, j):
    env = state.env
    return [state.x[j][0] * d for d in env.demand[j]]


def dominant(state, j):
    env = state.env
    tot = env.total_capacity()
    return max((a / t for a, t in zip(held(state, j), tot) if t), default=F(0)) / env.weight[j]


def drf_compare(state, i, j):
    a, b = dominant(state, i), dominant(state, j)
    return (a > b) - (a < b)


def policy(compare, share=dominant, queue_share=None, name="p", request=None):
    return Mechanism(name, name, lambda env, exact=False: None,
                     SETTING if request is None else Setting(**{**SETTING.__dict__, "quota_first": True}),
                     order=OrderSpec(compare, share, queue_share, request))


def verdict(prop, variant, mech, env):
    p = get_property(prop)
    assert p.applicable(mech, env, variant) is None
    ev = p.evaluate(mech, env, variant, exact=True)
    cert = p.recheck(mech, ev.witness) if ev.violated else None
    assert ev.violated == (cert is not None)
    return cert


def test_dominant_share_order_is_a_strict_weak_order_and_unit_free():
    # state: u1 holds 2 x <1, 0> (share 2/10), u2 3 x <0, 1> (3/10), u3 2 x <1, 1> (2/10): u1 ~ u3 < u2
    env = env_of([2, 3, 2])
    mech = policy(drf_compare)
    assert mech.order.order(state_of(env)) == [0, 2, 1]
    assert verdict("order", "strict-weak", mech, env) is None
    assert verdict("order", "scale", mech, env) is None
    assert verdict("share", "monotone", mech, env) is None
    assert verdict("share", "weight", mech, env) is None


def test_a_cyclic_comparator_is_not_transitive():
    # rock-paper-scissors on user index: u1 < u2 < u3 < u1
    def rps(state, i, j):
        if i == j:
            return 0
        return -1 if (j - i) % 3 == 1 else 1
    cert = verdict("order", "strict-weak", policy(rps), env_of([0, 0, 0]))
    assert cert.witness.users == (0, 1, 2)
    assert cert.summary == "u1 before u2 before u3, but compare(u1, u3) = 1: not transitive"


def test_tolerance_ties_are_not_transitive():
    # "equal within 1/10": shares 0, 1/20, 1/10 (u1 0 tasks, u2 1/2 task-equivalent... here: 0, 1, 2 tasks of
    # <1/2, 0> on 10): 0 ~ 1/20 ~ 1/10 but 0 < 1/10 by more than... the tolerance is 1/20 exactly: |0 - 1/10| > 1/20
    def sloppy(state, i, j):
        a, b = dominant(state, i), dominant(state, j)
        return 0 if abs(a - b) <= F(1, 20) else (a > b) - (a < b)
    env = env_of([0, 1, 2], demands=((F(1, 2), 0), (F(1, 2), 0), (F(1, 2), 0)))
    cert = verdict("order", "strict-weak", policy(sloppy), env)
    assert "incomparability not transitive" in cert.summary and cert.witness.users == (0, 1, 2)


def test_an_asymmetric_comparator_and_one_that_raises():
    def first_wins(state, i, j):  # "i before j" whatever the order of the arguments: compare(a, b) = compare(b, a)
        return 0 if i == j else -1
    cert = verdict("order", "strict-weak", policy(first_wins), env_of([0, 0, 0]))
    assert cert.witness.users == (0, 1) and "not asymmetric" in cert.summary

    def divides(state, i, j):  # divides by a capacity that can be 0
        return drf_compare(state, i, j) + int(state.x[i][0] / state.env.capacity[0][1])
    cert = verdict("order", "strict-weak", policy(divides), env_of([1, 0, 0], cap=(10, 0)))
    assert "raises ZeroDivisionError" in cert.summary


def test_scale_catches_an_absolute_threshold():
    # "a user holding less than 5 units of anything counts as empty": units matter -- u1 holds 2 cpu (share
    # 1/5), u2 3 mem (3/10): u1 < u2; with cpu x 1000, u1 holds 2000 units >= 5 while u2 still holds 3 < 5:
    # u2 counts as empty and goes first
    def absolute(state, i, j):
        a, b = (dominant(state, k) if max(held(state, k)) >= 5 else F(0) for k in (i, j))
        return (a > b) - (a < b)
    cert = verdict("order", "scale", policy(absolute), env_of([2, 3, 0]))
    assert cert.witness.users == (0, 1) and "cpu counted in units 1000 times smaller" in cert.summary


def test_share_monotone_borrowing_and_weight():
    # a share that saturates and wraps (tasks mod 3): u1 with 2 tasks has share 2/10, with 3 tasks 0
    def wraps(state, j):
        return (state.x[j][0] % 3) / 10
    cert = verdict("share", "monotone", policy(drf_compare, share=wraps), env_of([2, 0, 0]))
    assert cert.gap == F(2, 10) and cert.witness.users == (0,)

    # queue a (guarantee <1, 1>) holds u1's 2 cpu: it borrows; a queue share that is floor(borrowed) / 10
    # rounds 1/10 of a unit... here: floor((2 - 1) / 10) = 0 -> a borrowing queue with share 0 (the 6577 class)
    env = env_of([2, 0, 0], queues=["a", "b"], user_queue=["a", "b", "b"], guarantees=[[1, 1], None])

    def rounded(state, q):
        users = [j for j in range(state.env.n_users) if q in state.env.user_path(j)]
        borrowed = max(sum(state.x[j][0] * state.env.demand[j][r] for j in users) - (state.env.queue_guarantee[q] or (0, 0))[r]
                       for r in range(2))
        return F(int(max(borrowed, 0) * 1000 / 10000))  # integer division: 1 * 1000 / 10000 = 0
    cert = verdict("share", "borrowing", policy(drf_compare, queue_share=rounded), env)
    assert cert.gap == 1 and cert.summary == "queue a holds 2 of cpu, above its subtree's guarantee 1, yet its share is 0"

    # weight used the wrong way round: share x weight -- doubling u1's weight makes it go after u2
    def upside_down(state, i, j):
        a = dominant(state, i) * state.env.weight[i] ** 2
        b = dominant(state, j) * state.env.weight[j] ** 2
        return (a > b) - (a < b)
    cert = verdict("share", "weight", policy(upside_down), env_of([1, 1, 0], demands=((1, 0), (0, 1), (1, 1))))
    assert cert.witness.users[0] == 0 and "twice the weight" in cert.summary


def test_quota_first_holds_a_policy_to_its_promise():
    # Issue 10126's shape on one resource (cpu 15): cohort A (guarantee 10) holds A/qa (none) with u1; cohort B
    # holds B/qb (guarantee 5) with u2 and B/qc (none) with u3, which holds 10.  Requests: one task, 5 cpu each.
    # A after u1's request: 0 + 5 <= 10 (within); B after u2's: 10 + 5 > 5 (borrows 10).  So u1 must go first.
    data = {"resources": ["cpu"], "servers": [{"name": "s", "capacity": [15]}],
            "queues": [{"name": "A", "guarantee": [10]}, {"name": "A/qa"}, {"name": "B"},
                       {"name": "B/qb", "guarantee": [5]}, {"name": "B/qc"}],
            "users": [{"name": "u1", "queue": "A/qa", "demand": [5], "tasks": 1},
                      {"name": "u2", "queue": "B/qb", "demand": [5], "tasks": 1},
                      {"name": "u3", "queue": "B/qc", "demand": [10], "tasks": 1, "usage": [1]}]}
    env = parse_environment(data)

    def request(state, j):
        return tuple(state.env.tasks[j] * d for d in state.env.demand[j])

    def own_queue_first(state, i, j):  # the check at the user's own queue (before PR 10149): u2 fits B/qb, u1 not A/qa
        def borrows(k):
            q = state.env.user_queue[k]
            g = state.env.queue_guarantee[q] or (0,)
            return int(request(state, k)[0] > g[0])
        return (borrows(i) > borrows(j)) - (borrows(i) < borrows(j)) or (i > j) - (i < j)
    cert = verdict("order", "quota-first", policy(own_queue_first, request=request), env)
    assert cert.witness.users == (0, 1)
    assert cert.summary == ("u1's side (queue A) stays within its guarantees after its request <5>, u2's side (queue B) "
                            "borrows 10 of cpu after its request, yet u1 does not go first")
    # the same comparator with the check at the side of the common ancestor keeps the promise
    import mechanisms
    assert verdict("order", "quota-first", mechanisms.get("kueue-drs"), env) is None
    assert verdict("order", "quota-first", mechanisms.get("kueue-drs@10126"), env) is not None
    # a policy that makes no such promise is not judged by it
    assert "does not promise" in get_property("order").variant_possible(mechanisms.get("yarn-drf").setting, "quota-first")


def test_order_properties_are_searched_only_for_policies_with_an_order():
    from verifier.run import plan
    import mechanisms
    cells, skipped = plan(mechanisms.get("drf"), ["order", "share"])
    assert cells == [] and all("no order facet" in why for _, _, why in skipped)


def test_hostile_states_are_one_line():
    import re

    import pytest
    from mechverify.numbers import InstanceError
    from mechanisms import SettingError, get
    base = {"resources": ["cpu"], "servers": [{"name": "s", "capacity": [4]}]}
    for usage, msg in (([-1], "users[0].usage[0]: must be >= 0"), ([float("nan")], "users[0].usage[0]: must be a "
                       "finite number"), ([1, 2], "users[0].usage: expected 1 numbers"), ("x", "users[0].usage: expected "
                       "a list")):
        with pytest.raises(InstanceError, match=re.escape(msg)):
            parse_environment({**base, "users": [{"name": "a", "demand": [1], "usage": usage}]})
    env = parse_environment({**base, "users": [{"name": "a", "demand": [1], "usage": [1]}]})
    with pytest.raises(SettingError, match=r"users\[0\]\.usage: drf reads no state"):
        get("drf")(env)
    # a state round-trips, and an instance without one serialises as before
    assert parse_environment(env.to_dict()) == env
    assert "usage" not in parse_environment({**base, "users": [{"name": "a", "demand": [1], "usage": [0]}]}).to_dict()["users"][0]
