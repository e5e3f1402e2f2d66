"""Foundation: numbers, model validation, utility, feasibility, LP layer, lexicographic max-min."""
from __future__ import annotations

import json
from fractions import Fraction as F

import pytest

from mechverify.allocation import Allocation, feasibility_violations
from mechverify.lexmaxmin import lex_max_min
from mechverify.lp import LinearProgram, solve
from mechverify.model import describe_shape
from mechverify.instances import parse_environment
from mechverify.numbers import InstanceError, fmt_exact, to_fraction
from mechverify.utility import true_tasks, utility


def base(**over):
    inst = {"resources": ["cpu", "mem"],
            "servers": [{"name": "s1", "capacity": [9, 12]}, {"name": "s2", "capacity": [12, 12]}],
            "users": [{"name": "u1", "demand": [1, 2]}, {"name": "u2", "demand": [1, "1/2"]}]}
    inst.update(over)
    return inst


# ---------------------------------------------------------------------- numbers
@pytest.mark.parametrize("raw,expected", [(3, F(3)), ("1/3", F(1, 3)), ("0.25", F(1, 4)), (0.1, F(1, 10)),
                                          ("-2/4", F(-1, 2)), ("1e-2", F(1, 100))])
def test_numbers_parse_exactly(raw, expected):
    assert to_fraction(raw, "f") == expected


@pytest.mark.parametrize("raw", [float("nan"), float("inf"), True, "abc", "1/0", None, [1]])
def test_numbers_reject(raw):
    with pytest.raises(InstanceError) as e:
        to_fraction(raw, "users[0].demand[1]")
    assert str(e.value).startswith("users[0].demand[1]:")


def test_fmt_value_one_text_per_number():
    from mechverify.numbers import fmt_value
    assert [fmt_value(v) for v in (1200000.0, 1200000, F(1200000), 0.1, F(1, 3), 2.5)] == \
        ["1200000", "1200000", "1200000", "0.1", "1/3", "2.5"]


def test_a_float_output_names_its_numbers_as_the_instance_does():
    import mechverify
    from mechanisms.core.mechanism import MechanismOutputError

    @mechverify.mechanism()
    def over(env):
        return [[13.0]]

    env = mechverify.instance({"resources": ["cpu"], "servers": [{"capacity": [12]}], "users": [{"demand": [1]}]})
    with pytest.raises(MechanismOutputError) as e:
        mechverify.allocate(over, env)
    assert "uses 13 > 12" in str(e.value) and ".0" not in str(e.value)


def test_user_path_is_indices_into_queues():
    import mechverify
    env = mechverify.instance({"resources": ["cpu"], "servers": [{"capacity": [4]}],
                               "queues": [{"name": "eng"}, {"name": "ops"}, {"name": "eng/dev"}],
                               "users": [{"demand": [1], "queue": "eng/dev"}, {"demand": [1]}]})
    assert env.user_path(0) == (0, 2) and [env.queues[q] for q in env.user_path(0)] == ["eng", "eng/dev"]
    assert env.user_path(1) == ()


def test_fmt_exact():
    assert fmt_exact(F(60, 11)) == "60/11" and fmt_exact(F(6)) == "6"


# ---------------------------------------------------------------------- model validation
@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["servers"][0].__setitem__("capacity", [-1, 12]), "servers[0].capacity[0]"),
    (lambda d: d["servers"][0].__setitem__("capacity", [1]), "servers[0].capacity"),
    (lambda d: d["servers"][0].__setitem__("capacity", ["NaN", 1]), "servers[0].capacity[0]"),
    (lambda d: d["users"][1].__setitem__("demand", [1, float("inf")]), "users[1].demand[1]"),
    (lambda d: d["users"][0].__setitem__("weight", 0), "users[0].weight"),
    (lambda d: d["users"][0].__setitem__("weight", -2), "users[0].weight"),
    (lambda d: d["users"][0].__setitem__("eligible", ["s9"]), "users[0].eligible"),
    (lambda d: d["users"][0].__setitem__("eligible", ["s1", "s1"]), "users[0].eligible"),
    (lambda d: d["users"][1].__setitem__("name", "u1"), "users"),
    (lambda d: d["servers"][1].__setitem__("name", "s1"), "servers"),
    (lambda d: d.__setitem__("resources", []), "resources"),
    (lambda d: d.__setitem__("servers", []), "servers"),
    (lambda d: d.__setitem__("users", []), "users"),
    (lambda d: d["users"][0].__setitem__("external_demand", [1]), "users[0].external_demand"),
    (lambda d: d["users"][0].__setitem__("tasks", -1), "users[0].tasks"),
    (lambda d: d["users"][0].__setitem__("demand", [0, 0]), "users[0].demand"),
    (lambda d: d["users"][0].__setitem__("colour", "red"), "users[0]"),
    (lambda d: d.__setitem__("external", [{"name": "link", "capacity": 1}]), "users[0].external_demand"),
    (lambda d: d.__setitem__("resources", ["cpu", "cpu"]), "resources"),
])
def test_validation_names_field(mutate, field):
    inst = base()
    mutate(inst)
    with pytest.raises(InstanceError) as e:
        parse_environment(json.loads(json.dumps(inst)))
    msg = str(e.value)
    assert msg.startswith(field + ":") and "\n" not in msg, msg


def test_zero_demand_user_needs_a_bound():
    inst = base()
    inst["users"][0]["demand"] = [0, 0]
    inst["users"][0]["tasks"] = 5
    env = parse_environment(inst)
    assert env.tasks[0] == 5


def test_user_without_eligible_server_is_legal_and_gets_nothing():
    import mechanisms

    inst = base()
    inst["users"][0]["eligible"] = []
    env = parse_environment(inst)
    a = mechanisms.allocate("tsf", env, exact=True)
    assert a.totals()[0] == 0
    # user 2 gets everything it can use: 9 + 12 cpu-limited on s1,s2 vs mem 12/(1/2)=24: min(9,24)+min(12,24)=21
    assert a.totals()[1] == 21


def test_roundtrip_to_dict():
    inst = base()
    inst["users"][0]["eligible"] = ["s2"]
    inst["users"][0]["tasks"] = "7/2"
    inst["users"][1]["weight"] = 2
    inst["users"][1]["server_demand"] = {"s1": [2, 1]}
    env = parse_environment(inst)
    assert parse_environment(json.loads(env.to_json())) == env


# ---------------------------------------------------------------------- utility
def test_utility_seed004_example():
    """Seed 004 Sec. 2: 2 CPU, 1 GB, 150 MHz per task; 6 CPU, 4 GB, 300 MHz -> min(6/2, 4/1, 300/150) = 2."""
    env = parse_environment({"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [6, 4]}],
                             "external": [{"name": "bw", "capacity": 300}],
                             "users": [{"name": "j", "demand": [2, 1], "external_demand": [150]}]})
    a = Allocation(env, ((F(3),),))  # 3 tasks' worth of CPU is what the bundle holds...
    from mechverify.allocation import Bundle

    b = Bundle(amounts=((F(6), F(4)),), external=(F(300),))
    assert true_tasks(env, 0, b) == 2
    assert utility(env, Allocation(env, ((F(2),),)), 0) == 2
    assert a.bundle(0).amounts == ((F(6), F(3)),)


def test_utility_true_vs_reported_demand():
    """A user that over-reports memory receives a bigger bundle; its TRUE utility is Leontief in its
    TRUE demand: bundle 4*(1,3) = (4,12) with true demand (1,2) runs min(4/1, 12/2) = 4 tasks."""
    true_env = parse_environment(base())
    reported = true_env.with_user(0, demand=[1, 3])
    a = Allocation(reported, ((F(4), F(0)), (F(0), F(0))))
    assert utility(true_env, a, 0) == 4
    # under-reporting memory: bundle 4*(1,1) = (4,4) runs only min(4, 2) = 2 true tasks
    a2 = Allocation(true_env.with_user(0, demand=[1, 1]), ((F(4), F(0)), (F(0), F(0))))
    assert utility(true_env, a2, 0) == 2


def test_utility_ignores_servers_not_truly_eligible():
    inst = base()
    inst["users"][0]["eligible"] = ["s1"]
    true_env = parse_environment(inst)
    lied = true_env.with_user(0, eligible=[0, 1])
    a = Allocation(lied, ((F(1), F(3)), (F(0), F(0))))
    assert utility(true_env, a, 0) == 1  # the 3 tasks' bundle on s2 is useless to u1


def test_feasibility_rdm_tdm_and_bounds():
    inst = base()
    inst["users"][0]["tasks"] = 2
    env = parse_environment(inst)
    ok = ((F(2), F(0)), (F(7), F(0)))
    assert feasibility_violations(env, ok) == []
    assert any("RDM" in v for v in feasibility_violations(env, ((F(2), F(0)), (F(8), F(0)))))
    assert any("bound" in v for v in feasibility_violations(env, ((F(3), F(0)), (F(0), F(0)))))
    # TDM at s1: gamma_1 = min(9, 6) = 6, gamma_2 = min(9, 24) = 9: 2/6 + 7/9 = 10/9 > 1
    assert any("TDM" in v for v in feasibility_violations(env, ok, mode="tdm"))


# ---------------------------------------------------------------------- LP layer
def test_exact_lp_matches_hand_solution():
    """max x + y s.t. x + 2y <= 4, 3x + y <= 6: vertex x = 8/5, y = 6/5, value 14/5 (by hand)."""
    lp = LinearProgram(maximize=True)
    x, y = lp.add_var(0, None, 1), lp.add_var(0, None, 1)
    lp.add_row({x: 1, y: 2}, None, 4)
    lp.add_row({x: 3, y: 1}, None, 6)
    res = solve(lp, exact=True)
    assert res.ok and res.exact and res.method == "basis"
    assert res.x == [F(8, 5), F(6, 5)] and res.objective == F(14, 5)
    # duals: d obj / d b = (2/5, 1/5) (solve y1 + 3 y2 = 1, 2 y1 + y2 = 1)
    assert res.row_dual == [F(2, 5), F(1, 5)]


def test_float_lp_holds_floats_and_solves_like_the_exact_one():
    """The LP of test_exact_lp_matches_hand_solution built with exact=False: plain floats stored (no
    Fraction anywhere), the same vertex in floats, and an exact solve refused (it has no exact data)."""
    lp = LinearProgram(maximize=True, exact=False)
    x, y = lp.add_var(0, None, 1), lp.add_var(0, F(10), 1)
    lp.add_row({x: 1, y: F(2)}, None, 4)
    lp.add_row({x: 3, y: 1}, float("-inf"), 6)
    assert lp.rows[0][y].__class__ is float and lp.col_upper[y].__class__ is float and lp.row_lower[1] is None
    res = solve(lp)
    assert res.ok and abs(res.x[0] - 1.6) < 1e-12 and abs(res.x[1] - 1.2) < 1e-12
    assert lp.copy().exact is False
    with pytest.raises(ValueError, match="exact LP"):
        solve(lp, exact=True)


def test_lp_infeasible_and_unbounded():
    lp = LinearProgram(maximize=True)
    x = lp.add_var(0, None, 1)
    assert solve(lp).status == "unbounded"
    lp.add_row({x: 1}, 5, 3)
    assert solve(lp, exact=True).status == "infeasible"


def test_z3_fallback_is_exact():
    from mechverify.lp import solve_z3

    lp = LinearProgram(maximize=True)
    x, y = lp.add_var(0, None, 1), lp.add_var(0, None, 1)
    lp.add_row({x: 1, y: 2}, None, 4)
    lp.add_row({x: 3, y: 1}, None, 6)
    r = solve_z3(lp)
    assert r.ok and r.objective == F(14, 5)


def _infeasible_lp(awkward: bool) -> LinearProgram:
    """x + y <= 1 and x + y >= 3 (x, y >= 0): infeasible; the certificate is y = (-1, 1).  ``awkward``:
    (2/77) x + (1/11) y <= 1/11 and (6/7) x + 3 y >= 6 (the same rows scaled, x weighted 2/7): the
    certificate (-1, 1/33) is not a float, and HiGHS's ray leaves a tiny wrong-signed term in A^T y, so
    only the rationalised ray proves it."""
    lp = LinearProgram()
    x, y = lp.add_var(0, None), lp.add_var(0, None)
    if awkward:
        lp.add_row({x: F(2, 77), y: F(1, 11)}, None, F(1, 11))
        lp.add_row({x: F(6, 7), y: 3}, 6, None)
    else:
        lp.add_row({x: 1, y: 1}, None, 1)
        lp.add_row({x: 1, y: 1}, 3, None)
    return lp


@pytest.mark.parametrize("awkward", [False, True])
def test_exact_infeasibility_from_the_dual_ray(awkward):
    """An exact solve confirms HiGHS's "infeasible" by checking its dual ray (Farkas) in rationals."""
    r = solve(_infeasible_lp(awkward), exact=True)
    assert r.status == "infeasible" and r.exact and r.method == "farkas"


def test_farkas_check_rejects_what_is_no_proof(monkeypatch):
    from mechverify import lp as lpmod
    from mechverify.farkas import proves_infeasible, ray_proves_infeasible

    lp = _infeasible_lp(False)
    assert proves_infeasible(lp, [-1.0, 1.0])
    assert proves_infeasible(lp, [2.0, -2.0])  # any positive multiple of either sign proves it
    assert not proves_infeasible(lp, [1.0, 0.0]) and not proves_infeasible(lp, [1.0, 1.0])
    feasible = LinearProgram()  # x + y <= 3, x + y >= 1: the same ray proves nothing
    x, y = feasible.add_var(0, None), feasible.add_var(0, None)
    feasible.add_row({x: 1, y: 1}, None, 3)
    feasible.add_row({x: 1, y: 1}, 1, None)
    assert not ray_proves_infeasible(feasible, [-1.0, 1.0])
    # without a usable ray the exact pivots (then z3) still confirm it
    monkeypatch.setattr(lpmod, "ray_proves_infeasible", lambda *a: False)
    r = solve(_infeasible_lp(True), exact=True)
    assert r.status == "infeasible" and r.exact and r.method != "farkas"


# ---------------------------------------------------------------------- lexicographic max-min
def test_lexmaxmin_two_levels():
    """Three users share one resource of capacity 10; user 0 is capped at 1.
    Leximin: user 0 gets 1, the others split 9 -> 9/2 each (by hand)."""
    lp = LinearProgram()
    xs = [lp.add_var(0, None) for _ in range(3)]
    lp.add_row({c: 1 for c in xs}, None, 10)
    lp.add_row({xs[0]: 1}, None, 1)
    res = lex_max_min(lp, [{c: 1} for c in xs], exact=True)
    assert res.levels == [1, F(9, 2), F(9, 2)] and res.rounds == 2
    assert res.x == [1, F(9, 2), F(9, 2)]


def test_lexmaxmin_weighted_scores():
    """Scores x0/1 and x1/2 on x0 + x1 <= 6: equal level t with t + 2t = 6 -> t = 2, x = (2, 4)."""
    lp = LinearProgram()
    a, b = lp.add_var(0, None), lp.add_var(0, None)
    lp.add_row({a: 1, b: 1}, None, 6)
    res = lex_max_min(lp, [{a: 1}, {b: F(1, 2)}], exact=True)
    assert res.x == [2, 4] and res.levels == [2, 2]


def test_lexmaxmin_float_agrees_with_exact():
    lp = LinearProgram()
    xs = [lp.add_var(0, None) for _ in range(3)]
    lp.add_row({xs[0]: 1, xs[1]: 2}, None, 7)
    lp.add_row({xs[1]: 1, xs[2]: 3}, None, 5)
    ex = lex_max_min(lp, [{c: 1} for c in xs], exact=True)
    fl = lex_max_min(lp, [{c: 1} for c in xs], exact=False)
    assert all(abs(float(a) - b) < 1e-9 for a, b in zip(ex.x, fl.x))
    flp = LinearProgram(exact=False)  # the same LP with float data
    ys = [flp.add_var(0, None) for _ in range(3)]
    flp.add_row({ys[0]: 1, ys[1]: 2}, None, 7)
    flp.add_row({ys[1]: 1, ys[2]: 3}, None, 5)
    ff = lex_max_min(flp, [{c: 1} for c in ys], exact=False)
    assert all(abs(float(a) - b) < 1e-9 for a, b in zip(ex.x, ff.x)) and ff.levels == fl.levels


def test_lexmaxmin_float_levels_are_the_scores_own():
    """Floats are solved with scores times the number of participants; what comes back is unscaled.
    300 users share one unit, user 0 is capped at 1/1000 (by hand: levels 1/1000 then
    (1 - 1/1000) / 299 for everyone else, in two rounds)."""
    n = 300
    lp = LinearProgram(exact=False)
    xs = [lp.add_var(0, None) for _ in range(n)]
    lp.add_row({c: 1.0 for c in xs}, None, 1.0)
    lp.add_row({xs[0]: 1.0}, None, 1e-3)
    res = lex_max_min(lp, [{c: 1.0} for c in xs], exact=False)
    rest = (1 - 1e-3) / (n - 1)
    assert abs(res.levels[0] - 1e-3) <= 1e-12 and all(abs(v - rest) <= 1e-12 for v in res.levels[1:])
    assert [(r, round(t, 12), len(b)) for r, t, b in res.trace] == [(1, 1e-3, 1), (2, round(rest, 12), n - 1)]
    assert abs(sum(res.x) - 1) <= 1e-9


def test_one_spelling_of_a_shape():
    """Environment.describe, the z3 Shape, the report's size and the certify header share it."""
    from verifier.results import describe_size
    from verifier.engines.smt import Shape
    assert describe_shape(2, 1, 2, 1) == "2 users x 1 server x 2 resources + 1 external"
    assert describe_shape(1, 3, 1) == "1 user x 3 servers x 1 resource"
    assert Shape(users=3, servers=1, resources=2).describe() == "3 users x 1 server x 2 resources"
    assert describe_size({"users": 2, "servers": 2, "resources": 1}) == "2 users x 2 servers x 1 resource"
    env = parse_environment({"resources": ["cpu"], "servers": [{"name": "s", "capacity": [1]}],
                             "users": [{"name": "a", "demand": [1]}]})
    assert env.describe() == "1 user x 1 server x 1 resource"


def test_exact_text_of_numbers_with_more_than_4300_digits():
    """Exact results can outgrow Python's int-to-text guard (found by the fuzz harness: an exact LP
    allocation of an instance with 30-digit inputs); the text is still exact."""
    from fractions import Fraction

    from mechverify.numbers import fmt_exact

    import sys

    big = Fraction(3 ** 10000, 2 ** 9000 + 1)  # 4772 digits over 2710 digits
    text = fmt_exact(big)
    assert sys.get_int_max_str_digits() in (0, 4300)  # the guard is restored for everything else
    p, q = text.split("/")
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        assert len(p) == 4772 and Fraction(int(p), int(q)) == big
    finally:
        sys.set_int_max_str_digits(old)
