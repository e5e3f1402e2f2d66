"""Seed 003 (Li et al., LMM-MMS): the definition ``lmm-mms`` and Algorithm 1 as printed ``lmm-mms-linear``.

Every number is an exact ``Fraction``.  Hand derivations are in the comments; readings R1-R8 of the
printed Algorithm 1 are in ``mechanisms/paper/lmm_mms.py``.
"""
from __future__ import annotations

import json
import os
import random
from fractions import Fraction as F

import pytest

from mechanisms import SettingError, allocate, get
from mechanisms.paper.lmm_mms import AlgorithmStall, algorithm1, mms, theta_max
from mechverify.instances import parse_environment
from mechverify.utility import utilities
from tests.helpers import ROOT, example

MECHS = ("lmm-mms", "lmm-mms-linear")


def run(mech, env):
    a = allocate(mech, env, exact=True)
    assert a.exact
    assert all(isinstance(v, F) for row in a.x for v in row)
    return a


# ---------------------------------------------------------------------- Example 1 (Sec. 3.2)
# capacity (10, 4); u1 (1/2, 1; B=1), u2 (1, 1/2; B=10); n = 2, so C/n = (5, 2).
# Thm 1: MMS_1 = min(5/(1/2), 2/1, B_1=1) = min(10, 2, 1) = 1;  MMS_2 = min(5/1, 2/(1/2), 10) = 4.
# theta^max = (1/1, 10/4) = (1, 5/2).  Leximin: x = (t, 4t); mem: t + 2t <= 4 -> t <= 4/3, but u1's
# bound stops it at t = 1; then u2 alone: cpu 1/2 + x2 <= 10, mem 1 + x2/2 <= 4 -> x2 = 6.
# theta = (1, 6/4) = (1, 3/2).  Paper: MMS = (1, 4), optimal value (1, 1.5) at x = (1, 6) -- correct.
@pytest.mark.parametrize("mech", MECHS)
def test_example1(mech):
    env = example("003-ex1.json")
    a = run(mech, env)
    assert a.totals() == (F(1), F(6))
    assert a.info["mms"] == [F(1), F(4)]
    assert a.info["theta_max"] == [F(1), F(5, 2)]
    assert a.info["theta"] == [F(1), F(3, 2)]


def test_example1_mms_and_theta_max_helpers():
    env = example("003-ex1.json")
    assert [mms(env, i) for i in range(2)] == [F(1), F(4)]
    assert [theta_max(env, i) for i in range(2)] == [F(1), F(5, 2)]


def test_example1_algorithm1_trace():
    # Upper median of {1, 5/2} is 5/2.  Line 10: 0 + B.d = (1/2 + 10, 1 + 5) = (21/2, 6) > (10, 4): else;
    # u2 (theta^max = 5/2 >= 5/2) -> U_dum, delta = 4 (1, 1/2) = (4, 2).  Next median 1: 1 (4, 2) +
    # 1 (1/2, 1) = (9/2, 3) <= (10, 4): u1 satisfied, c = (19/2, 3).  Step 3: min(19/8, 3/2) = 3/2.
    res = algorithm1(example("003-ex1.json"))
    t = res["trace"]
    assert [s["median"] for s in t] == [F(5, 2), F(1)]
    assert [s["feasible"] for s in t] == [False, True]
    assert t[0]["use"] == [F(21, 2), F(6)] and t[0]["dummy"] == [1] and t[0]["delta"] == [F(4), F(2)]
    assert t[1]["use"] == [F(9, 2), F(3)] and t[1]["satisfied"] == [0] and t[1]["capacity"] == [F(19, 2), F(3)]
    assert res["theta_dum"] == F(3, 2) and res["theta_star"] == [F(1), F(3, 2)]


def test_example1_lower_median_reading_breaks_the_example():
    # R6: with the LOWER median theta = 1 the printed test fails ((21/2, 6) > (10, 4)), both users have
    # theta^max >= 1 and become dummies: delta = (1/2 + 4, 1 + 2) = (9/2, 3), level min(20/9, 4/3) = 4/3,
    # x = (4/3 * 1, 4/3 * 4) = (4/3, 16/3): u1 exceeds B_1 = 1.  That is why the upper median is chosen.
    res = algorithm1(example("003-ex1.json"), median="lower")
    assert res["x"] == [F(4, 3), F(16, 3)]


# ---------------------------------------------------------------------- Example 2 (Sec. 4.1)
# capacity (6, 6); u1 (1,1; B=2), u2 (2,2; B=3), u3 (3,3; B=2); C/n = (2, 2).
# MMS = (min(2, 2), min(1, 3), min(2/3, 2)) = (2, 1, 2/3); theta^max = (2/2, 3/1, 2/(2/3)) = (1, 3, 3).
# Leximin: x_i = t MMS_i uses 2t + 2t + 2t = 6t of each resource -> t = 1 (= theta^max_1, so u1's bound
# is met exactly then): x = (2, 1, 2/3), each user holds (2, 2).  Paper: all these numbers -- correct.
@pytest.mark.parametrize("mech", MECHS)
def test_example2(mech):
    env = example("003-ex2.json")
    a = run(mech, env)
    assert a.totals() == (F(2), F(1), F(2, 3))
    assert a.info["mms"] == [F(2), F(1), F(2, 3)]
    assert a.info["theta_max"] == [F(1), F(3), F(3)]
    assert a.info["theta"] == [F(1), F(1), F(1)]
    assert [a.bundle(i).amounts[0] for i in range(3)] == [(F(2), F(2))] * 3  # all of (6, 6) is used


def test_example2_algorithm1_trace():
    # Paper's walk-through: Q = (1, 3, 3), median 3; 0 + (2 + 6 + 6) = 14 > 6: u2, u3 -> U_dum with
    # delta_j = 1*2 + (2/3)*3 = 4; then median 1: 1*4 + 2*1 = 6 <= 6: u1 satisfied, c = (4, 4);
    # Step 3: theta = 4/4 = 1 for u2, u3.
    res = algorithm1(example("003-ex2.json"))
    t = res["trace"]
    assert [s["median"] for s in t] == [F(3), F(1)]
    assert t[0]["use"] == [F(14), F(14)] and t[0]["dummy"] == [1, 2] and t[0]["delta"] == [F(4), F(4)]
    assert t[1]["use"] == [F(6), F(6)] and t[1]["satisfied"] == [0] and t[1]["capacity"] == [F(4), F(4)]
    assert res["theta_star"] == [F(1), F(1), F(1)]


def test_example2_printed_strict_dummy_rule_stalls():
    # R4: the printed "theta_i < theta^max_i" moves nobody at median 3 (theta_i = min(theta^max_i, 3) =
    # theta^max_i for all three users), so U never shrinks: Algorithm 1 would loop forever on Example 2.
    with pytest.raises(AlgorithmStall):
        algorithm1(example("003-ex2.json"), dummy_rule="gt")


# ---------------------------------------------------------------------- the smallest disagreement
def test_smallest_disagreement_regression():
    """examples/003-lmm-disagreement.json: one resource c = 4, demands (1, 1, 1), bounds B = (1, 1, 3).

    Found by benchmarks/compare_lmm_mms.py (1000 random instances, greedy shrinking) and confirmed the
    smallest by its exhaustive check (every instance with <= 3 users, <= 2 resources and numbers summing
    to <= 12: no disagreement below sum 12; 1 user cannot disagree, and 2 users cannot either, see
    test_two_users_always_agree_small_exhaustive).

    MMS_i = min(4 / (3 * 1), B_i) = (1, 1, 4/3);  theta^max = B / MMS = (1, 1, 9/4).
    Definition: sum_i B_i d_i = 5 > 4, so not everyone is served.  Water level t >= 1: x = (1, 1, 4t/3),
    1 + 1 + 4t/3 = 4 -> t = 3/2 <= 9/4.  x = (1, 1, 2), theta = (1, 1, 3/2).
    Algorithm 1 as printed: Q = {1, 1, 9/4}, median 1; line 10: 0 + (1 + 1 + 3) = 5 > 4 -> else; every
    user has theta_i = min(theta^max_i, 1) = 1 = theta -> all three are dummies, delta = 1 + 1 + 4/3 =
    10/3; U is empty; Step 3: theta = 4 / (10/3) = 6/5 for everyone; x = 6/5 * MMS = (6/5, 6/5, 8/5):
    u1 and u2 get 6/5 > B = 1 tasks (the bound row is violated), u3 gets 8/5 < 2.
    With the proof's test (theta_i MMS_i = (1, 1, 4/3), 10/3 <= 4 passes) u1, u2 are satisfied first
    and u3 gets (4 - 2) / (4/3) * 4/3 = 2: the printed B_i in line 10 is the cause.
    """
    env = example("003-lmm-disagreement.json")
    assert env.capacity == ((F(4),),) and env.demand == ((F(1),),) * 3 and env.tasks == (F(1), F(1), F(3))
    a = run("lmm-mms", env)
    b = run("lmm-mms-linear", env)
    assert a.x == ((F(1),), (F(1),), (F(2),))
    assert a.info["theta"] == [F(1), F(1), F(3, 2)]
    assert b.x == ((F(6, 5),), (F(6, 5),), (F(8, 5),))
    assert b.info["theta"] == [F(6, 5)] * 3
    assert b.info["bound_exceeded"] == [0, 1]
    # true utilities cap at B: the printed algorithm's (1, 1, 8/5) is Pareto-dominated by (1, 1, 2)
    assert utilities(env, b) == (F(1), F(1), F(8, 5)) and utilities(env, a) == (F(1), F(1), F(2))
    assert algorithm1(env, test="proof")["x"] == [F(1), F(1), F(2)]


def test_two_users_always_agree_small_exhaustive():
    # With the upper median and 2 users, line 10's "every undecided user at B_i" coincides with the
    # proof's test at every step (the median is the larger theta^max, then a single user), so the two
    # mechanisms agree; checked here on every 2-user, 1-resource instance with numbers in 1..3.
    for c in range(1, 4):
        for d1 in range(1, 4):
            for d2 in range(1, 4):
                for b1 in range(1, 4):
                    for b2 in range(1, 4):
                        env = parse_environment(_one_pool([c], [[d1], [d2]], [b1, b2]))
                        assert tuple(algorithm1(env)["x"]) == run("lmm-mms", env).totals(), (c, d1, d2, b1, b2)


def _one_pool(caps, demands, bounds):
    return {"resources": [f"r{j}" for j in range(len(caps))], "servers": [{"name": "pool", "capacity": caps}],
            "users": [{"name": f"u{i}", "demand": d, "tasks": b} for i, (d, b) in enumerate(zip(demands, bounds))]}


def test_proof_reading_matches_definition_on_random_instances():
    # The proof of Thm 2's test (x_i = theta_i MMS_i) is the water-filling argument; with d_ij > 0 the
    # leximin is one common level (Lemma 1), so it must match lmm-mms exactly.
    rng = random.Random(2025)
    for _ in range(40):
        m, n = rng.randint(1, 3), rng.randint(1, 5)
        env = parse_environment(_one_pool([rng.randint(1, 12) for _ in range(m)],
                                          [[rng.randint(1, 4) for _ in range(m)] for _ in range(n)],
                                          [rng.randint(1, 8) for _ in range(n)]))
        assert tuple(algorithm1(env, test="proof")["x"]) == run("lmm-mms", env).totals(), env.to_json()


def test_float_mode_close_to_exact():
    env = example("003-ex1.json")
    a = allocate("lmm-mms", env, exact=False)
    assert abs(float(a.total(0)) - 1) < 1e-7 and abs(float(a.total(1)) - 6) < 1e-7


# ---------------------------------------------------------------------- setting and input errors
def _ex1(**patch):
    with open(os.path.join(ROOT, "examples", "003-ex1.json"), encoding="utf-8") as fh:
        d = json.load(fh)
    for fn in patch.values():
        fn(d)
    return parse_environment(d)


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["servers"].append({"name": "s2", "capacity": [1, 1]}), "servers:"),
    (lambda d: d["users"][1].pop("tasks"), "users[1].tasks:"),
    (lambda d: d["users"][0].__setitem__("tasks", 0), "users[0].tasks:"),
    (lambda d: d["users"][1].__setitem__("demand", [0, 1]), "users[1].demand[0]:"),
    (lambda d: d["servers"][0].__setitem__("capacity", [10, 0]), "servers[0].capacity[1]:"),
    (lambda d: d["users"][0].__setitem__("weight", 2), "users[0].weight:"),
    (lambda d: (d.__setitem__("external", [{"name": "link", "capacity": 1}]),
                [u.__setitem__("external_demand", [1]) for u in d["users"]]), "external:"),
])
@pytest.mark.parametrize("mech", MECHS)
def test_outside_setting_is_rejected_with_one_line(mech, mutate, field):
    env = _ex1(m=mutate)
    with pytest.raises(SettingError) as e:
        allocate(mech, env, exact=True)
    msg = str(e.value)
    assert msg.startswith(field) and "\n" not in msg


def test_claims_registered():
    from verifier.claims import claims_for  # THE claims rule (docs/claims.md)
    from verifier.properties import get_property

    for name in MECHS:
        m = get(name)
        assert m.setting.single_server and not m.setting.weights and not m.setting.external
        for prop, variant in (("po", "fractional"), ("si", "bounded"), ("ef", "placement-aware"), ("gsp", "demand"),
                              ("sp", "demand")):
            cs = claims_for(m, prop, variant)
            assert [c.status for c in cs] == ["holds"] and cs[0].source.startswith("003"), (name, prop)
        # the SI claim speaks about bounded SI only (003's task bounds), not the other SI variants
        assert [v for v in get_property("si").variants if claims_for(m, "si", v)] == ["bounded"]


def test_cli_allocate_exact(capsys):
    from verifier.cli import main

    assert main(["allocate", "lmm-mms", os.path.join(ROOT, "examples", "003-ex1.json"), "--exact",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["totals"] == ["1", "6"] and out["exact"] is True
    assert main(["allocate", "lmm-mms-linear", os.path.join(ROOT, "examples", "003-ex2.json"), "--exact",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"] == ["2", "1", "2/3"]
