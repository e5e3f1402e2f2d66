"""Seed 004 (Meskar & Liang, TSF-ER): the static mechanisms on every numeric example of the paper.

Instances: examples/004-*.json.  Notation: ``X_j`` = user j's total tasks, ``g`` = common task share.
Every asserted number comes from the paper, from a hand derivation written beside it, or from an
exact computation that is itself checked (feasibility, certificates).  The utility example
min(6/2, 4/1, 300/150) = 2 is in tests/test_core.py.
"""
from __future__ import annotations

import math
from fractions import Fraction as F
from pathlib import Path

import pytest

import mechanisms
from mechanisms.paper.normalisers import etas
from mechanisms.core.registry import SettingError
from mechanisms.paper.external_resources import make_alpha_mechanism, resolve_alpha
from mechverify.allocation import feasibility_violations
from mechverify.instances import load_environment, parse_environment
from mechverify.numbers import InstanceError
from mechverify.utility import utility
from tests.helpers import ROOT

EX = Path(ROOT) / "examples"


def env_of(name):
    return load_environment(str(EX / name))


def run(name, env, exact=True):
    a = mechanisms.allocate(name, env, exact=exact)
    assert not feasibility_violations(env, a.x), (name, feasibility_violations(env, a.x))
    return a


def totals(a):
    return list(a.totals())


# ====================================================================== Fig. 2
# Normalised: s1 = (1/3, 2/3), s2 = (2/3, 1/3), link 1; d1 = (2/15, 1/15 | 1/6), d2 = (1/15, 2/15 | 1/30).
# Writing a = x[u1,s1], b = x[u1,s2], c = x[u2,s1], d = x[u2,s2] and multiplying by 15 (by 30 for the link):
#   s1 cpu 2a + c <= 5,  s1 mem a + 2c <= 10,  s2 cpu 2b + d <= 10,  s2 mem b + 2d <= 5,
#   link 5(a + b) + (c + d) <= 30.
# Pooled: cpu 2 X1 + X2 <= 15, mem X1 + 2 X2 <= 15.

def test_fig2_eta():
    """eq. (6): eta1 = min(min(5/2, 10) + min(5, 5), 1/(1/6)) = min(15/2, 6) = 6;
    eta2 = min(min(5, 5) + min(10, 5/2), 30) = 15/2."""
    assert etas(env_of("004-fig2.json")) == [6, F(15, 2)]


@pytest.mark.parametrize("name", ["cru", "mnw"])
def test_fig2_cru_and_mnw_give_five_tasks_each(name):
    """Fig. 2(a): "Both CRU and MNW allocate server 1 to user 2 and server 2 to user 1. Each user executes
    5 tasks."  Hand check: over the pooled relaxation {2X1 + X2 <= 15, X1 + 2X2 <= 15}, CRU's objective
    X1/6 + X2/(15/2) = (1/15)(2X1 + X2) + (1/30)(X1 + 2X2) and MNW's gradient (1/5, 1/5) =
    (1/15)(2, 1) + (1/15)(1, 2) at (5, 5): nonnegative multipliers on both tight rows, so (5, 5) is
    optimal for the relaxation; it is feasible (s1 -> u2: cpu 5, mem 10; s2 -> u1: cpu 10, mem 5; link
    5/6 + 5/30 = 1), EF (rho_12 = 1/5, rho_21 = 1/2) and SI (psi = eta/2 = (3, 15/4) <= 5)."""
    env = env_of("004-fig2.json")
    a = run(name, env)
    assert a.exact  # MNW: the rational optimum is certified exactly (first-order condition)
    assert totals(a) == [5, 5]
    assert [list(r) for r in a.x] == [[0, 5], [5, 0]]  # server 1 -> user 2, server 2 -> user 1
    if name == "cru":
        assert a.info["total_range"] == [(5, 5), (5, 5)]  # the optimum is unique


def test_fig2_mnw_float_bounds_contain_the_optimum():
    env = env_of("004-fig2.json")
    a = run("mnw", env, exact=False)
    assert not a.exact and a.info["exactness"]
    for j in range(2):
        lo, hi = a.info["bounds"][j]
        assert lo <= 5 <= hi and hi - lo < F(1, 10 ** 5)
        assert abs(a.total(j) - 5) < 1e-9
    f_lo, g_hi = a.info["objective_bounds"]
    assert f_lo <= 2 * math.log(5) <= g_hi


@pytest.mark.parametrize("name", ["tsf-er", "tsf-er-maxmin"])
def test_fig2_tsf_er(name):
    """TSF-ER: X1 = 6g, X2 = (15/2)g.  Upper bound: pooled memory X1 + 2X2 <= 15 gives 21g <= 15, g <= 5/7.
    Attained: a = 0, b = 30/7, c = 5, d = 5/14 (s1 cpu 5 <= 5, s1 mem 10 <= 10, s2 cpu 125/14 <= 10,
    s2 mem 5 <= 5, link 5*30/7 + 75/14 = 375/14 <= 30).  So X = (30/7, 75/14)."""
    a = run(name, env_of("004-fig2.json"))
    assert totals(a) == [F(30, 7), F(75, 14)]


def test_fig2_drf_er_equals_tsf_er_here():
    """DRF-ER normalisers 1/max_r d[j,r] = (1/(1/6), 1/(2/15)) = (6, 15/2) coincide with eta on Fig. 2,
    so DRF-ER = TSF-ER = (30/7, 75/14) here; the external split it chooses is reported."""
    a = run("drf-er", env_of("004-fig2.json"))
    assert totals(a) == [F(30, 7), F(75, 14)]
    used = a.info["alpha"]  # link share used per server: u1's 30/7 tasks on s2 (1/6 each) + u2's
    assert used == [[F(5, 30)], [F(30, 7) / 6 + F(5, 14) / 30]]


def test_fig2_drf_eq_and_tsf_cpu_leave_both_users_worse_off_than_tsf_er():
    """Fig. 2(b) DRF-eq (alpha = (1/2, 1/2)): link rows 5a + c <= 15, 5b + d <= 15; normalisers
    (6, 15/2).  Multipliers q on s1 cpu, q/3 on s2 mem, q/3 on s2 link (q > 0) give
    6(2q)g + (15/2)q g <= 5q + 5q/3 + 15q/3, i.e. g <= 70/117, attained at a = 95/117, b = 25/9,
    c = 395/117, d = 10/9: X = (140/39, 175/39).
    Fig. 2(c) TSF-cpu (alpha = (1/3, 2/3)): link rows 5a + c <= 10, 5b + d <= 20; (7c) gives
    gamma1 = min(5/2, 10, 2) + min(5, 5, 4) = 6, gamma2 = min(5, 5, 10) + min(10, 5/2, 20) = 15/2; the
    same multipliers give 39/2 g <= 5 + 5/3 + 20/3 = 40/3, g <= 80/117: X = (160/39, 200/39).
    The paper (Sec. 3.3): both users execute fewer tasks than with TSF-ER; CRU/MNW's (5, 5) shows DRF-eq
    is not Pareto optimal."""
    env = env_of("004-fig2.json")
    tsf_er = totals(run("tsf-er", env))
    drf_eq = totals(run("drf-eq", env))
    tsf_cpu = totals(run("tsf-cpu", env))
    assert drf_eq == [F(140, 39), F(175, 39)]
    assert tsf_cpu == [F(160, 39), F(200, 39)]
    assert all(a < b for a, b in zip(drf_eq, tsf_er)) and all(a < b for a, b in zip(tsf_cpu, tsf_er))
    assert all(v < 5 for v in drf_eq)  # Pareto-dominated by CRU/MNW's (5, 5)


def test_fig2c_percentage_labels():
    """The labels that survive the extraction of Fig. 2(c) (TSF-cpu): 2.8%, 1.4%, 3.5% (u1 at s1: cpu,
    mem, link), 51.8%, 25.9%, 64.8% (u1 at s2), 1.8% (u2's link share at s2).  The split over servers is
    unique: the three rows with positive multipliers above (s1 cpu, s2 mem, s2 link) are tight at every
    optimum, so b + 2d = 5 and 5b + d = 20 give b = 35/9, d = 5/9, then a = 160/39 - b = 25/117.
    Shares of the aggregate (normalised) capacities: 2a/15 = 10/351 = 2.849%, a/15 = 1.4245%,
    a/6 = 25/702 = 3.561%, 2b/15 = 14/27 = 51.85%, b/15 = 7/27 = 25.93%, b/6 = 35/54 = 64.81%,
    d/30 = 1/54 = 1.852%.  The paper TRUNCATES to one decimal (rounding would print 3.6%, 51.9%, 1.9%)."""
    a = run("tsf-cpu", env_of("004-fig2.json"))
    (xa, xb), (xc, xd) = a.x
    assert (xa, xb, xc, xd) == (F(25, 117), F(35, 9), F(535, 117), F(5, 9))
    shares = [2 * xa / 15, xa / 15, xa / 6, 2 * xb / 15, xb / 15, xb / 6, xd / 30]
    labels = ["2.8", "1.4", "3.5", "51.8", "25.9", "64.8", "1.8"]
    assert [f"{math.floor(s * 1000) / 10:.1f}" for s in shares] == labels


@pytest.mark.parametrize("name", ["tsf-er", "cru", "drf-eq", "tsf-cpu", "drf-er"])
def test_fig2_raw_units_give_the_same_totals(name):
    """Normalising capacities (the paper's footnote 1) is a rescaling of every resource: totals unchanged."""
    assert totals(run(name, env_of("004-fig2.json"))) == totals(run(name, env_of("004-fig2-raw.json")))


# ====================================================================== App. 9.1 / 9.2
# One server, 10 CPU, external BW 10.  A = (6 CPU, 3 BW), B = (2, 9); B misreports (4, 7).
# eta_A = min(10/6, 10/3) = 5/3, eta_B = min(10/2, 10/9) = 10/9; B's lie: eta'_B = min(10/4, 10/7) = 10/7.

def test_app91_truthful_cru_gives_b_0625():
    """CRU max (3/5) X_A + (9/10) X_B s.t. 6X_A + 2X_B <= 10, 3X_A + 9X_B <= 10 (+ EF, SI).  Both rows
    tight: X = (35/24, 5/8); (3/5, 9/10) = (9/160)(6, 2) + (7/80)(3, 9) >= 0, so optimal even without
    EF/SI, and EF (rho_AB = rho_BA = 1/3: 5/24 <= 35/24, 35/72 <= 5/8) and SI (5/6, 5/9) hold.
    Paper: "CRU allocates 0.625 task to user B"."""
    env = env_of("004-app91-truthful.json")
    a = run("cru", env)
    assert totals(a) == [F(35, 24), F(5, 8)]
    assert a.info["total_range"] == [(F(35, 24), F(35, 24)), (F(5, 8), F(5, 8))]


def test_app91_cru_misreport_paper_number_is_wrong():
    """The paper: with B's lie "CRU allocates 0.832 tasks to user B", true utility 0.832 x 7/9 ~ 0.647.
    WRONG.  Reported data: max (3/5) X_A + (7/10) X_B s.t. cpu 6X_A + 4X_B <= 10, bw 3X_A + 7X_B <= 10,
    SI X_A >= 5/6, X_B >= min(5/4, 5/7) = 5/7, EF (2/3) X_B <= X_A, (3/7) X_A <= X_B.  Both capacity rows
    tight: X = (1, 1), and (3/5, 7/10) = (7/100)(6, 4) + (3/50)(3, 7) with nonnegative multipliers, so
    (1, 1) is optimal even without EF/SI, and it satisfies them.  So CRU gives B 1 task (not 0.832); B's
    TRUE utility is min(4/2, 7/9) * 1 = 7/9 (not 0.647) > 5/8: the SP violation is real, and larger."""
    true_env = env_of("004-app91-truthful.json")
    a = run("cru", env_of("004-app91-misreport.json"))
    assert totals(a) == [1, 1]
    assert utility(true_env, a, 1) == F(7, 9) > F(5, 8)


def test_app92_mnw_truthful_and_misreport():
    """MNW truthful: gradient (24/35, 8/5) = (1/35)(6, 2) + (6/35)(3, 9) at (35/24, 5/8): B gets 0.625.
    MNW after B's lie: gradient (1, 1) = (2/15)(6, 4) + (1/15)(3, 7) at (1, 1): B gets 1 task, and its true
    utility is 1 x min(4/2, 7/9) = 7/9 (the paper prints "~ 0.777", truncating 0.7777...)."""
    true_env = env_of("004-app91-truthful.json")
    t = run("mnw", true_env)
    m = run("mnw", env_of("004-app91-misreport.json"))
    assert t.exact and m.exact
    assert totals(t) == [F(35, 24), F(5, 8)] and totals(m) == [1, 1]
    assert utility(true_env, t, 1) == F(5, 8)
    assert utility(true_env, m, 1) == F(7, 9)


def test_app92_mnw_float_bounds():
    """Float mode: the certified intervals contain the exact optima above and B's float utility is 7/9."""
    true_env = env_of("004-app91-truthful.json")
    for path, expect in (("004-app91-truthful.json", (F(35, 24), F(5, 8))), ("004-app91-misreport.json", (1, 1))):
        a = run("mnw", env_of(path), exact=False)
        assert not a.exact
        for (lo, hi), v in zip(a.info["total_bounds"], expect):
            assert lo <= v <= hi and hi - lo < F(1, 10 ** 5)
    assert abs(utility(true_env, a, 1) - 7 / 9) < 1e-9


# ====================================================================== TSF-ER: Algorithm 1 vs max-min
def test_algorithm1_differs_from_leximin_with_zero_demands():
    """One server (cpu 2, mem 2), link 4; a = b = (1, 0 | 1), c = (0, 1 | 0): eta = (2, 2, 2).
    Algorithm 1 (8f) ties everybody to one level: cpu 2g + 2g <= 2, g = 1/2, X = (1, 1, 1).  Leximin
    freezes a, b at 1/2 and lets c (memory only) rise to 1: X = (1, 1, 2).  Algorithm 1's allocation
    is Pareto-dominated (c could run 2 tasks): Thm 5/Thm 7 do not hold for Algorithm 1 as printed."""
    env = parse_environment({
        "resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [2, 2]}],
        "external": [{"name": "link", "capacity": 4}],
        "users": [{"name": "a", "demand": [1, 0], "external_demand": [1]},
                  {"name": "b", "demand": [1, 0], "external_demand": [1]},
                  {"name": "c", "demand": [0, 1], "external_demand": [0]}]})
    assert totals(run("tsf-er", env)) == [1, 1, 1]
    assert totals(run("tsf-er-maxmin", env)) == [1, 1, 2]


def test_algorithm1_saturation_rounds():
    """App. 9.1 instance with n_A = 1/2.  Round 1: X_A = (5/3)g, X_B = (10/9)g; link 5g + 10g <= 10 and
    cpu (110/9)g <= 10 give g = 2/3, X_A = 10/9 >= 1/2: A saturates.  Round 2: X_A = 1/2; link
    3/2 + 9X_B <= 10 and cpu 3 + 2X_B <= 10 give X_B = 17/18.  Without the bound: (10/9, 20/27)."""
    env = env_of("004-app91-truthful.json")
    a = run("tsf-er", env)
    assert totals(a) == [F(10, 9), F(20, 27)] and a.info["rounds"] == 1
    bounded = env.with_user(0, tasks="1/2")
    b = run("tsf-er", bounded)
    assert totals(b) == [F(1, 2), F(17, 18)]
    assert b.info["rounds"] == 2 and b.info["saturated"] == [0] and b.info["levels_by_round"][0] == F(2, 3)
    assert totals(run("tsf-er-maxmin", bounded)) == [F(1, 2), F(17, 18)]
    f = run("tsf-er", bounded, exact=False)
    assert [round(float(v), 12) for v in totals(f)] == [0.5, round(17 / 18, 12)]


def test_weights_and_two_external_resources():
    """Sec. 8.  Weights: App. 9.1 with w_B = 2: X_A = (5/3)g, X_B = 2 (10/9) g; link 5g + 20g <= 10 binds
    before cpu (130/9)g <= 10: g = 2/5, X = (2/3, 8/9).
    Second external resource 'power' (capacity 1; A needs 1, B 0): eta_A = min(5/3, 10/3, 1) = 1;
    X_A = g, X_B = (10/9)g; link 3g + 10g <= 10 binds before power g <= 1 and cpu (74/9)g <= 10:
    g = 10/13, X = (10/13, 100/117)."""
    env = env_of("004-app91-truthful.json")
    assert totals(run("tsf-er", env.with_user(1, weight=2))) == [F(2, 3), F(8, 9)]
    two = parse_environment({
        "resources": ["cpu"], "servers": [{"name": "server", "capacity": [10]}],
        "external": [{"name": "bw", "capacity": 10}, {"name": "power", "capacity": 1}],
        "users": [{"name": "A", "demand": [6], "external_demand": [3, 1]},
                  {"name": "B", "demand": [2], "external_demand": [9, 0]}]})
    assert etas(two) == [1, F(10, 9)]
    for name in ("tsf-er", "tsf-er-maxmin"):
        assert totals(run(name, two)) == [F(10, 13), F(100, 117)]


# ====================================================================== alpha family
def test_custom_alpha_split():
    """make_alpha_mechanism('tsf', [1, 0]) on Fig. 2: all of the link reserved for s1, so nobody runs on
    s2; (7c) gamma = (min(5/2, 10, 6), min(5, 5, 30)) = (5/2, 5); s1 cpu 2a + c <= 5 with X = (5g/2, 5g)
    gives g = 1/2 (mem: 5g/2 + 10g <= 10 is slack): X = (5/4, 5/2)."""
    env = env_of("004-fig2.json")
    a = make_alpha_mechanism("tsf", [1, 0])(env, exact=True)
    assert totals(a) == [F(5, 4), F(5, 2)] and a.x[0][1] == 0 and a.x[1][1] == 0


@pytest.mark.parametrize("alpha,field", [([F(2, 3), F(2, 3)], "alpha:"), ([1], "alpha:"),
                                        ([-1, 1], "alpha[0][0]:"), (["x", 0], "alpha[0]:"),
                                        ([[1, 0], 0], "alpha[0]:")])
def test_bad_alpha_is_one_line_naming_the_field(alpha, field):
    with pytest.raises(InstanceError) as e:
        resolve_alpha(env_of("004-fig2.json"), alpha)
    assert str(e.value).startswith(field) and "\n" not in str(e.value)


@pytest.mark.parametrize("name,env_name,field", [
    ("drf-mem", "004-app91-truthful.json", "resources:"),  # one resource: no memory to split by
    ("tsf-er", "001-fig1.json", None),  # no external resource: allowed (eta = TSF's gamma)
])
def test_setting_errors(name, env_name, field):
    env = env_of(env_name)
    if field is None:
        run(name, env)
        return
    with pytest.raises(SettingError) as e:
        mechanisms.allocate(name, env)
    assert str(e.value).startswith(field) and "\n" not in str(e.value)


def test_setting_rejects_placement_and_cru_weights():
    env = env_of("004-fig2.json")
    with pytest.raises(SettingError, match=r"^users\[0\]\.eligible:"):
        mechanisms.allocate("tsf-er", env.with_user(0, eligible=[0]))
    with pytest.raises(SettingError, match=r"^users\[1\]\.weight:"):
        mechanisms.allocate("cru", env.with_user(1, weight=2))


# ====================================================================== CRU: faces and task bounds
def test_cru_optimal_face_total_range_and_tie_break():
    """Servers s0 = (1, 4), s1 = (4, 3), external 4; u0 = (2, 2 | 1), u1 = (2, 0 | 2).  eta = (2, 2)
    (u0: min(1/2 + 3/2, 4); u1: min(1/2 + 2, 2)).  Objective (X0 + X1)/2; pooled r0: 2X0 + 2X1 <= 5 is
    the binding row, so every point with X0 + X1 = 5/2 that meets SI (psi = (1, 1)), EF (only
    X0/2 <= X1) and the link (X0 + 2X1 <= 4) is optimal: X0, X1 in [1, 3/2].  Tie-break (leximin of
    X_j/eta_j): (5/4, 5/4)."""
    env = parse_environment({
        "resources": ["r0", "r1"],
        "servers": [{"name": "s0", "capacity": [1, 4]}, {"name": "s1", "capacity": [4, 3]}],
        "external": [{"name": "e0", "capacity": 4}],
        "users": [{"name": "u0", "demand": [2, 2], "external_demand": [1]},
                  {"name": "u1", "demand": [2, 0], "external_demand": [2]}]})
    a = run("cru", env)
    assert a.info["objective"] == F(5, 4)
    assert a.info["total_range"] == [(1, F(3, 2)), (1, F(3, 2))]
    assert totals(a) == [F(5, 4), F(5, 4)]


def test_cru_bounded_envy_is_a_disjunction():
    """One server, 10 cpu, two users with demand 1, n_A = 2.  SI: X_A >= min(5, 2) = 2, X_B >= 5.  A's EF
    reads min(X_B, 2) <= X_A: satisfied by X_A = n_A = 2 whatever X_B is.  The linear row X_B <= X_A
    would contradict SI; the exact disjunction gives CRU = (2, 8) (all cpu used, objective (2 + 8)/10)."""
    env = parse_environment({"resources": ["cpu"], "servers": [{"name": "s", "capacity": [10]}],
                             "users": [{"name": "A", "demand": [1], "tasks": 2}, {"name": "B", "demand": [1]}]})
    a = run("cru", env)
    assert totals(a) == [2, 8] and a.info["saturated_set"] == [0]
    assert a.info["total_range"] == [(2, 2), (8, 8)]


# ====================================================================== registry
def test_registered_with_claims():
    from verifier.claims import claims_for  # THE claims rule (docs/claims.md)

    for name in ("tsf-er", "tsf-er-maxmin", "drf-er", "cru", "mnw", "drf-eq", "drf-cpu", "drf-mem",
                 "tsf-eq", "tsf-cpu", "tsf-mem"):
        m = mechanisms.get(name)
        assert m.setting.external and not m.setting.placement
        assert claims_for(m, "si", "external")

    def statuses(name, prop, variant):
        return [c.status for c in claims_for(mechanisms.get(name), prop, variant)]

    assert statuses("tsf-er", "si", "external") == ["holds"]
    assert statuses("drf-er", "si", "external") == ["fails"]
    assert statuses("tsf-cpu", "po", "fractional") == ["fails"]
    assert statuses("cru", "sp", "demand") == ["fails"]
    assert not mechanisms.get("mnw").setting.exact


# ====================================================================== float fast path == exact path
def _random_instance(rng, zero_demands):
    S, R, J, K = rng.randint(1, 3), rng.randint(1, 3), rng.randint(2, 5), rng.randint(0, 2)
    lo = 0 if zero_demands else 1
    inst = {"resources": ["cpu", "mem", "gpu"][:R],
            "servers": [{"name": f"s{s}", "capacity": [rng.randint(0, 9) for _ in range(R)]} for s in range(S)],
            "users": []}
    if K:
        inst["external"] = [{"name": f"e{k}", "capacity": rng.randint(1, 9)} for k in range(K)]
    for j in range(J):
        u = {"name": f"u{j}", "demand": [rng.randint(lo, 5) for _ in range(R)]}
        if not any(u["demand"]):
            u["demand"][0] = 1
        if K:
            u["external_demand"] = [rng.randint(lo, 5) for _ in range(K)]
        if rng.random() < 0.4:
            u["tasks"] = rng.randint(0, 4)
        if rng.random() < 0.3:
            u["weight"] = rng.randint(1, 3)
        inst["users"].append(u)
    return parse_environment(inst)


def test_float_path_and_column_generation_match_the_exact_path(monkeypatch):
    """``tsf-er`` / alpha variants in float mode use a numpy/HiGHS path (column generation above a size
    threshold, forced here with ``cg_threshold=0`` and one initial server per user, so that pricing
    rounds happen); Algorithm 1's totals are unique, so they must agree with the exact path
    (``TaskPolytope`` + exact LP)."""
    import random

    import mechanisms.paper.external_resources.algorithm1_float as T
    from mechanisms.paper.normalisers import etas_float
    from mechanisms.paper.external_resources import algorithm1

    monkeypatch.setattr(T, "CG_INITIAL_SERVERS", 1)
    monkeypatch.setattr(T, "CG_ADD_PER_USER", 1)
    rng = random.Random(4)
    priced = 0
    for it in range(25):
        env = _random_instance(rng, zero_demands=it % 2 == 0)
        exact = run("tsf-er", env)
        for kw in ({}, {"cg_threshold": 0}):
            fl = algorithm1(env, "tsf-er", False, etas_float(env), **kw)
            assert not feasibility_violations(env, fl.x)
            for a, b in zip(fl.totals(), exact.totals()):
                assert abs(a - float(b)) <= 1e-7 * max(1.0, float(b)), (env.to_dict(), kw)
            assert fl.info["saturated"] == exact.info["saturated"]
            # small LPs without a cg_threshold take the LP layer's GLPK path (no column generation)
            priced += fl.info.get("column_generation", {}).get("pricing_rounds", 0)
        if env.n_external:
            for name in ("drf-eq", "tsf-eq"):
                e, f = run(name, env), run(name, env, exact=False)
                assert all(abs(a - float(b)) <= 1e-7 * max(1.0, float(b)) for a, b in zip(f.totals(), e.totals()))
    assert priced > 0  # column generation really added columns


# ====================================================================== MNW: irrational optimum, rigour of the bounds
def test_mnw_irrational_optimum_is_bracketed():
    """One server (cpu 1, mem 1); u1 = (1, 0), u2 = (1, 2), u3 = (0, 1).  KKT with prices p (cpu), q (mem):
    1/X1 = p, 1/X2 = p + 2q, 1/X3 = q, and both rows tight: X1 = 1 - X2, X3 = 1 - 2 X2.  So
    1/X2 = 1/(1 - X2) + 2/(1 - 2 X2), i.e. 6 X2^2 - 6 X2 + 1 = 0, X2 = (3 - sqrt 3)/6 (irrational):
    exact mode cannot certify a rational optimum and must return the float allocation with bounds.
    Checked exactly: lo <= (3 - sqrt 3)/6 <= hi  <=>  (3 - 6 hi)^2 <= 3 <= (3 - 6 lo)^2 (both bases >= 0)."""
    env = parse_environment({"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [1, 1]}],
                             "users": [{"name": "u1", "demand": [1, 0]}, {"name": "u2", "demand": [1, 2]},
                                       {"name": "u3", "demand": [0, 1]}]})
    a = run("mnw", env, exact=True)
    assert not a.exact
    lo, hi = a.info["bounds"][1]
    assert 3 - 6 * hi >= 0 and (3 - 6 * hi) ** 2 <= 3 <= (3 - 6 * lo) ** 2
    assert hi - lo < F(1, 10 ** 5)
    lo1, hi1 = a.info["bounds"][0]  # X1 = (3 + sqrt 3)/6: (6 lo1 - 3)^2 <= 3 <= (6 hi1 - 3)^2
    assert 6 * lo1 - 3 >= 0 and (6 * lo1 - 3) ** 2 <= 3 <= (6 * hi1 - 3) ** 2
    lo3, hi3 = a.info["bounds"][2]  # X3 = sqrt(3)/3: lo3^2 <= 1/3 <= hi3^2
    assert lo3 >= 0 and lo3 ** 2 <= F(1, 3) <= hi3 ** 2
    assert abs(a.total(1) - (3 - math.sqrt(3)) / 6) < 1e-9


def test_mnw_float_bounds_contain_every_certified_exact_optimum():
    """On random instances: whenever exact mode certifies a rational optimum (exactly, by the
    first-order condition), the float mode's certified intervals must contain it."""
    import random

    rng = random.Random(11)
    certified = 0
    for it in range(20):
        env = _random_instance(rng, zero_demands=it % 2 == 0)
        e = run("mnw", env, exact=True)
        f = run("mnw", env, exact=False)
        for j in range(env.n_users):
            lo, hi = f.info["bounds"][j]
            assert lo <= F(f.total(j)) + F(1, 10 ** 9) and F(f.total(j)) - F(1, 10 ** 9) <= hi
            if e.exact:
                assert lo <= e.total(j) <= hi, (env.to_dict(), j)
        certified += e.exact
    assert certified >= 10


def test_degenerate_instances():
    """Nobody can run anything (cpu capacity 0 everywhere): every mechanism gives 0; the cpu-proportional
    split is 0/0 there and falls back to the equal split (documented in docs/seed004-mechanisms.md)."""
    env = parse_environment({"resources": ["cpu", "mem"],
                             "servers": [{"name": "s1", "capacity": [0, 1]}, {"name": "s2", "capacity": [0, 2]}],
                             "external": [{"name": "bw", "capacity": 1}],
                             "users": [{"name": "a", "demand": [1, 1], "external_demand": [1]},
                                       {"name": "b", "demand": [2, 0], "external_demand": [1]}]})
    for name in ("tsf-er", "tsf-er-maxmin", "drf-er", "tsf-cpu", "cru", "mnw"):
        for exact in (True, False):
            assert all(v == 0 for v in run(name, env, exact=exact).totals()), (name, exact)
    assert run("tsf-cpu", env).info["alpha"] == [[F(1, 2)], [F(1, 2)]]


def test_mnw_irrational_optimum_closed_form_by_sympy():
    """The hand derivation above, redone by sympy: maximise log X1 + log X2 + log X3 on the tight rows
    X1 = 1 - X2, X3 = 1 - 2 X2 (0 < X2 < 1/2); the stationary point is the root of 6 X2^2 - 6 X2 + 1 in
    (0, 1/2), and MNW's certified intervals contain the exact optimum (sympy compares exactly)."""
    import sympy as sp

    x2 = sp.symbols("x2", positive=True)
    f = sp.log(1 - x2) + sp.log(x2) + sp.log(1 - 2 * x2)
    roots = [r for r in sp.solve(sp.diff(f, x2), x2) if 0 < r < sp.Rational(1, 2)]
    assert roots == [(3 - sp.sqrt(3)) / 6]
    opt = {0: 1 - roots[0], 1: roots[0], 2: 1 - 2 * roots[0]}
    env = parse_environment({"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [1, 1]}],
                             "users": [{"name": "u1", "demand": [1, 0]}, {"name": "u2", "demand": [1, 2]},
                                       {"name": "u3", "demand": [0, 1]}]})
    a = run("mnw", env, exact=True)
    for j, (lo, hi) in enumerate(a.info["bounds"]):
        assert sp.Rational(lo.numerator, lo.denominator) <= opt[j] <= sp.Rational(hi.numerator, hi.denominator)


def test_cru_float_leximin_survives_a_level_frozen_a_rounding_too_high():
    """A seed004 draw on which CRU's float leximin froze a level a rounding above what round 9 could still
    reach (LP infeasible; src/mechverify/lexmaxmin.py relaxes the frozen levels by the float tolerance and
    solves the round again).  The float screening result must then match the exact allocation's task totals."""
    from mechverify.instances import load_environment
    env = load_environment(str(Path(__file__).resolve().parent.parent / "data" / "seed004-cru-float-refreeze.json"))
    cru = mechanisms.get("cru")
    fl, ex = cru(env, exact=False), cru(env, exact=True)
    for j in range(env.n_users):
        got, want = sum(float(v) for v in fl.x[j]), float(sum(ex.x[j]))
        assert abs(got - want) <= 1e-6 * max(1.0, want), (env.users[j], got, want)
