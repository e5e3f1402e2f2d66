"""The DRF family (drf, per-server-drf, drfh, drfh-lp7, c-drfh, tsf, cdrf, drfh-first-fit,
drfh-best-fit) against every worked example of seeds 000, 001 and 002, plus hand-derived cases.

Every expected number is either printed in a seed (rounded printed numbers are replaced by the exact
value, derived in the comment next to it) or derived by hand in the comment next to it.
Notation: x[j][s] tasks of user j on server s, x_j = sum_s x[j][s]; N_j the mechanism's normaliser
(DRF/DRFH: 1 / dominant share per task; TSF/CDRF: gamma_j); leximin over x_j / (w_j N_j).
"""
from __future__ import annotations

import subprocess
import sys
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.paper.drf_family import global_dominant_share
from mechanisms.core.registry import SettingError
from mechverify.allocation import feasibility_violations
from mechverify.instances import parse_environment
from tests.helpers import ROOT
from tests.helpers import example as ex



def run(mech: str, env, exact: bool = True):
    a = mechanisms.allocate(mech, env, exact=exact)
    assert feasibility_violations(env, a.x) == [], (mech, a.x)
    return a


def exact_x(a):
    return tuple(tuple(a.x[j]) for j in range(len(a.x)))


def assert_float_close(a_float, expected, tol=1e-7):
    got = a_float.totals()
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert abs(float(g) - float(e)) <= tol * max(1.0, abs(float(e))), (got, expected)


# ====================================================================== seed 001, Figs. 1-3
# Fig. 1: s1 = (2 CPU, 12 GB), s2 = (12 CPU, 2 GB); d1 = (0.2, 1), d2 = (1, 0.2).  Pooled (14, 14).
FIG1_001 = "001-fig1.json"


def test_001_fig1_instance_is_the_seeds():
    env = ex(FIG1_001)
    assert env.capacity == ((2, 12), (12, 2))
    assert env.demand == ((F(1, 5), 1), (1, F(1, 5)))
    # Sec. III-A: D1 = (1/70, 1/14), D2 = (1/14, 1/70); global dominant share per task 1/14 each
    assert global_dominant_share(env, 0) == F(1, 14) == global_dominant_share(env, 1)


def test_001_fig2_per_server_drf():
    """Sec. III-D / Fig. 2: DRF on s1 equalises CPU (both users' dominant resource there): u1 gets
    1 CPU -> 5 tasks, u2 1 CPU -> 1 task; symmetrically on s2 (memory): 1 and 5.  6 tasks each."""
    env = ex(FIG1_001)
    a = run("per-server-drf", env)
    assert exact_x(a) == ((5, 1), (1, 5))
    assert a.totals() == (6, 6)
    # Fig. 2 labels u1's memory share of s1: 5 tasks x 1 GB of 12 GB = 5/12 (41.7 %, printed "42%");
    # both users hold half of s1's CPU (u1: 5 x 0.2 = 1 of 2; u2: 1 x 1 = 1 of 2)
    b1, b2 = a.bundle(0), a.bundle(1)
    assert b1.amounts[0][1] / env.capacity[0][1] == F(5, 12)
    assert b1.amounts[0][0] / env.capacity[0][0] == F(1, 2) == b2.amounts[0][0] / env.capacity[0][0]
    assert_float_close(run("per-server-drf", env, exact=False), (6, 6))


@pytest.mark.parametrize("mech", ["drfh", "drfh-lp7"])
def test_001_fig3_drfh_10_each_g_5_7(mech):
    """Sec. IV-A / Fig. 3: DRFH gives s1 to u1 and s2 to u2: 10 tasks each, g = 10/14 = 5/7.
    Unique split: with x1 = x2 = 10, adding s1's CPU row (0.2 a1 + b1 <= 2) and s2's memory row
    (a2 + 0.2 b2 <= 2) gives 0.2*10 + 0.2*10 + 0.8 (a2 + b1) <= 4, so a2 = b1 = 0.  No equal level
    above 10 exists: by symmetry and concavity take a1 = b2 = p, a2 = b1 = q; s1's CPU row
    0.2p + q <= 2 with q >= 0 gives p <= 10 and p + q <= 2 + 0.8p <= 10."""
    env = ex(FIG1_001)
    a = run(mech, env)
    assert exact_x(a) == ((10, 0), (0, 10))
    # global dominant share G_j = x_j * max_r D_jr = 10 / 14 = 5/7 for both (Fig. 3: u1 holds 1/7 of
    # the pooled CPU and 5/7 of the pooled memory)
    for j in range(2):
        assert a.total(j) * global_dominant_share(env, j) == F(5, 7)
    assert tuple(v / 14 for v in a.bundle(0).amounts[0]) == (F(1, 7), F(5, 7))
    assert_float_close(run(mech, env, exact=False), (10, 10))


def test_001_drfh_leximin_level_is_g():
    a = run("drfh", ex(FIG1_001))
    assert a.info["levels"] == [F(5, 7), F(5, 7)] and a.info["rounds"] == 1


def test_001_per_server_drf_is_not_po():
    """Sec. III-D: 6 tasks each under per-server DRF vs 10 each under DRFH (Pareto improvement)."""
    env = ex(FIG1_001)
    ps, dr = run("per-server-drf", env).totals(), run("drfh", env).totals()
    assert all(p < d for p, d in zip(ps, dr))


def test_001_first_fit():
    """Sec. V-B First-Fit on Fig. 1 (whole tasks; lowest global dominant share first, ties -> lower
    index; shares per task are 1/14 for both, so the users alternate u1, u2, u1, ...):
      u1#1 -> s1 (cpu 2 -> 1.8);  u2#1 -> s1 (needs 1 CPU, s1 has 1.8; cpu -> 0.8)
      u1#2..#5 -> s1 (cpu 0.8 -> 0; 4 x 0.2) while u2#2..#5 -> s2 (s1 has < 1 CPU)
      u1#6: s1 has 0 CPU -> s2 (s2 left: cpu 8, mem 2 - 4*0.2 = 1.2 >= 1) -> mem 0.2
      u2#6: s2 has mem 0.2 >= 0.2 -> s2 -> mem 0
      u1#7, u2#7: nothing fits (s1 cpu 0; s2 mem 0) -> stop.
    Result: u1 (5, 1), u2 (1, 5) -- the per-server DRF allocation of Fig. 2, 6 tasks each."""
    a = run("drfh-first-fit", ex(FIG1_001))
    assert exact_x(a) == ((5, 1), (1, 5))
    assert a.exact


def test_001_best_fit():
    """Sec. V-B Best-Fit, eq. (9) H(i,l) = |D_i/D_i1 - cbar_l/cbar_l1|_1 on Fig. 1.
    D1/D11 = (1, 5), D2/D21 = (1, 1/5).  By symmetry, before u1's (k+1)-th task u1 has k tasks on s1
    and u2 k on s2: s1 left (2 - k/5, 12 - k) -> cbar ratio 5(12-k)/(10-k), H(1,s1) = 10/(10-k);
    s2 left (12 - k, 2 - k/5) -> ratio (10-k)/(5(12-k)) <= 1/6, H(1,s2) >= 5 - 1/6 = 29/6.
    u1's task fits s2 only while 2 - k/5 >= 1, i.e. k <= 5, and then H(1,s1) <= 2 < 29/6: u1 always
    goes to s1 (symmetrically u2 to s2), until s1's CPU (10 x 0.2) and s2's memory are used up.
    Result: u1 (10, 0), u2 (0, 10) = the DRFH allocation of Fig. 3."""
    a = run("drfh-best-fit", ex(FIG1_001))
    assert exact_x(a) == ((10, 0), (0, 10))


def test_best_fit_normalises_by_first_demanded_resource():
    """A user demanding no CPU (resource 1): eq. (9) would divide by D_i1 = 0; we normalise by the
    first demanded resource (memory).  s1 = (4, 1), s2 = (1, 4), pooled (5, 5); d = (0, 1), 1 task.
    D/D_mem = (0, 1); s1: cbar/cbar_mem = (4, 1), H = 4; s2: (1/4, 1), H = 1/4 -> Best-Fit picks s2.
    First-Fit takes the first server where the task fits: s1 (mem 1 >= 1)."""
    env = parse_environment({"resources": ["cpu", "mem"],
                             "servers": [{"name": "s1", "capacity": [4, 1]}, {"name": "s2", "capacity": [1, 4]}],
                             "users": [{"name": "u", "demand": [0, 1], "tasks": 1}]})
    assert exact_x(run("drfh-first-fit", env)) == ((1, 0),)
    assert exact_x(run("drfh-best-fit", env)) == ((0, 1),)


def test_first_fit_weights_and_bound():
    """One server cpu 6, one resource; d1 = d2 = 1; w2 = 2; n1 = 1.  Shares per task 1/6 each;
    keys x_j/(6 w_j): (0, 0) -> u1 (ties: lower index); (1/6, 0) -> u2; (1/6, 1/12) -> u2;
    (1/6, 1/6) -> u1, at its bound n1 = 1 -> inactive; u2 fills the CPU left: 6 - 1 = 5 tasks."""
    env = parse_environment({"resources": ["cpu"], "servers": [{"name": "s", "capacity": [6]}],
                             "users": [{"name": "u1", "demand": [1], "tasks": 1},
                                       {"name": "u2", "demand": [1], "weight": 2}]})
    assert run("drfh-first-fit", env).totals() == (1, 5)
    assert run("drfh-best-fit", env).totals() == (1, 5)


# ====================================================================== seed 000, Fig. 1
# c1 = (9, 12, 100), c2 = (12, 12, 0) (no bandwidth on s2); d1 = (1, 2, 10), d2 = (1, 2, 0).
FIG1_000 = "000-fig1.json"


def test_000_fig1_c_drfh():
    """Sec. II-B: pooled (21, 24, 100).  u1's global dominant share per task max(1/21, 2/24, 10/100)
    = 1/10 (bandwidth), u2's max(1/21, 1/12) = 1/12 (RAM).  Equal shares: x1/10 = x2/12 = t.
    u1 runs on s1 only; s2's RAM gives u2 at most 6 there; s1's RAM: 2 x1 + 2 x21 <= 12 with
    x21 = 12t - 6:  20t + 24t - 12 <= 12  ->  t = 6/11:  x1 = 60/11, x2 = 72/11 = 6/11 + 6.
    The paper prints 5.45 (= 5.4545..), and 6.54 = 6 + 0.54: truncations of 72/11 = 6.5454..
    and 6/11 = 0.5454.. (rounded: 6.55 and 0.55).  The split is forced (x22 <= 6, x21 <= 6/11)."""
    env = ex(FIG1_000)
    a = run("c-drfh", env)
    assert exact_x(a) == ((F(60, 11), 0), (F(6, 11), 6))
    assert a.totals() == (F(60, 11), F(72, 11))
    assert round(float(a.total(0)), 2) == 5.45
    assert round(float(a.total(1)), 2) == 6.55 and round(float(a.x[1][0]), 2) == 0.55  # printed 6.54, 0.54
    assert_float_close(run("c-drfh", env, exact=False), (F(60, 11), F(72, 11)))


def test_000_fig1_tsf():
    """Sec. II-B: gamma1 = min(9, 12/2, 100/10) + 0 (s2 has no bandwidth) = 6;
    gamma2 = min(9, 6) + min(12, 6) = 12.  x1/6 = x2/12 = t; s1 RAM: 2*6t + 2(12t - 6) <= 12 ->
    t = 2/3: x1 = x11 = 4, x2 = x21 + x22 = 2 + 6 = 8 (as printed)."""
    env = ex(FIG1_000)
    a = run("tsf", env)
    assert exact_x(a) == ((4, 0), (2, 6))
    assert_float_close(run("tsf", env, exact=False), (4, 8))


def test_000_fig1_cli_exact_prints_fractions():
    out = subprocess.run([sys.executable, "-m", "verifier", "allocate", "c-drfh", "examples/000-fig1.json", "--exact"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split() for line in out.stdout.splitlines()[2:]}
    assert rows["u1"] == ["u1", "60/11", "0", "60/11"]
    assert rows["u2"] == ["u2", "6/11", "6", "72/11"]


# ====================================================================== seed 002, Fig. 1 (3 weighted users)
FIG1_002 = "002-fig1-weighted.json"


def test_002_fig1_instance_is_the_seeds():
    env = ex(FIG1_002)
    assert env.capacity == ((9, 12, 100), (12, 12, 0))
    assert env.demand == ((1, 2, 10), (1, 2, 1), (1, 2, 0))
    assert env.weight == (1, 1, 2)


def test_002_fig1_c_drfh():
    """Sec. II-B: pooled (21, 24, 100): dominant share per task u1 10/100 = 1/10 (bw), u2 and u3
    2/24 = 1/12 (RAM); scores x1/10, x2/12, x3/(2*12) = t.  u1, u2 need bandwidth: s1 only.
    s2's RAM: x32 <= 6; s1's RAM: x1 + x2 + x31 <= 6 with x31 = 24t - 6:
    10t + 12t + 24t - 6 <= 6 -> t = 6/23:  x1 = 60/23, x2 = 72/23, x3 = 144/23 = 6 + 6/23.
    Printed 2.609, 3.130, 6.261 = 6 + 0.261: the roundings of these fractions."""
    env = ex(FIG1_002)
    a = run("c-drfh", env)
    assert exact_x(a) == ((F(60, 23), 0), (F(72, 23), 0), (F(6, 23), 6))
    printed = (2.609, 3.130, 6.261)
    assert tuple(round(float(v), 3) for v in a.totals()) == printed
    assert round(float(a.x[2][0]), 3) == 0.261
    assert_float_close(run("c-drfh", env, exact=False), (F(60, 23), F(72, 23), F(144, 23)))


def test_002_fig1_tsf():
    """Sec. II-B: gamma1 = gamma2 = 6 (s1 RAM 12/2; s2 has no bandwidth), gamma3 = 6 + 6 = 12.
    Scores x1/6, x2/6, x3/(2*12) = t; s1 RAM: 6t + 6t + (24t - 6) <= 6 -> t = 1/3:
    x = 2, 2, 8 = 2 + 6 (as printed)."""
    env = ex(FIG1_002)
    a = run("tsf", env)
    assert exact_x(a) == ((2, 0), (2, 0), (2, 6))
    assert_float_close(run("tsf", env, exact=False), (2, 2, 8))


# ====================================================================== DRF on one server
def one_server(cap, users, resources=None, external=None):
    inst = {"resources": resources or [f"r{i}" for i in range(len(cap))],
            "servers": [{"name": "s", "capacity": cap}], "users": users}
    if external:
        inst["external"] = external
    return parse_environment(inst)


# Ghodsi et al.'s example (cited by seed 000 Sec. II-A): c = (9 CPU, 18 GB), d1 = (1, 4), d2 = (3, 1).
# Dominant shares per task: u1 max(1/9, 4/18) = 2/9 (mem), u2 max(3/9, 1/18) = 1/3 (cpu).
def ghodsi(w2=1, n1=None):
    u1 = {"name": "u1", "demand": [1, 4]}
    if n1 is not None:
        u1["tasks"] = n1
    return one_server([9, 18], [u1, {"name": "u2", "demand": [3, 1], "weight": w2}])


# Zero demands: c = (10, 10); d1 = (1, 0), d2 = (0, 1), d3 = (1, 2); N = 10, 10, 5.
# Level t: x = (10t, 10t, 5t); mem 10t + 10t <= 10 binds first at t = 1/2 (cpu: 10t + 5t <= 10
# allows t <= 2/3): u2 and u3 freeze at 5 and 5/2.  u1 demands no memory and keeps rising until the
# CPU is used up: x1 = 10 - 5/2 = 15/2.
ZERO = dict(cap=[10, 10], users=[{"name": "u1", "demand": [1, 0]}, {"name": "u2", "demand": [0, 1]},
                                 {"name": "u3", "demand": [1, 2]}])

CASES = {
    # unweighted: x1 = 9t/2, x2 = 3t; cpu 9t/2 + 9t <= 9 -> t = 2/3 (mem 18t + 3t <= 18 allows 6/7):
    # x = (3, 2) -- Ghodsi et al.'s DRF allocation.
    "ghodsi": (lambda: ghodsi(), (3, 2)),
    # weights 1, 2: x1 = (9/2) t, x2 = 2*3 t = 6t; cpu 9t/2 + 18t <= 9 -> t = 2/5 (mem 18t + 6t <= 18
    # allows 3/4): x = (9/5, 12/5); dominant shares 2/5 and 4/5 = 2 * 2/5.
    "weighted": (lambda: ghodsi(w2=2), (F(9, 5), F(12, 5))),
    # task bound n1 = 1: u1 reaches 1 task at level 2/9 (u2 then has 2/3) and freezes; u2 rises
    # until the CPU is used: 1 + 3 x2 = 9 -> x2 = 8/3 (mem 4 + 8/3 <= 18).
    "bound": (lambda: ghodsi(n1=1), (1, F(8, 3))),
    "zero-demand": (lambda: one_server(**ZERO), (F(15, 2), 5, F(5, 2))),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_drf_single_server_hand_cases(case):
    make, expected = CASES[case]
    env = make()
    assert run("drf", env).totals() == tuple(F(v) for v in expected)
    assert_float_close(run("drf", env, exact=False), expected)


def test_drf_zero_demand_user_rises_while_its_resources_are_free():
    a = run("drf", one_server(**ZERO))
    # after the first level (1/2) only u1 is active: its only demanded resource (CPU) ends saturated,
    # memory (which u1 does not demand) was saturated first
    assert a.info["levels"] == [F(3, 4), F(1, 2), F(1, 2)]  # x1 / 10 = 3/4
    assert a.info["rounds"] == 2
    used = [sum(a.x[j][0] * a.env.demand[j][r] for j in range(3)) for r in range(2)]
    assert used == [10, 10]


def test_drf_external_resource_counts_as_pooled_resource():
    """c = (cpu 10), link 10 (external).  d1 = d2 = (1/2) cpu + 2 link, d3 = 1 cpu, no link.
    Dominant shares per task: u1, u2 max(1/20, 2/10) = 1/5 (the link), u3 1/10.  x = (5t, 5t, 10t);
    link 2(5t + 5t) <= 10 binds at t = 1/2 (cpu 15t <= 10 would allow 2/3): u1 = u2 = 5/2 frozen;
    u3 rises until the CPU is used: 5/4 + 5/4 + x3 = 10 -> x3 = 15/2."""
    env = one_server([10], [{"name": "u1", "demand": ["1/2"], "external_demand": [2]},
                            {"name": "u2", "demand": ["1/2"], "external_demand": [2]},
                            {"name": "u3", "demand": [1], "external_demand": [0]}],
                     resources=["cpu"], external=[{"name": "link", "capacity": 10}])
    assert run("drf", env).totals() == (F(5, 2), F(5, 2), F(15, 2))


def test_drf_external_demand_sets_the_dominant_share():
    """c = (10, 10), link 10; d1 = (1, 1) + 2 link, d2 = (1, 1).  u1's dominant resource is the link
    (2/10 > 1/10): N1 = 5, N2 = 10; x = (5t, 10t), cpu 15t <= 10 -> t = 2/3: x = (10/3, 20/3).
    (Ignoring the link, both would get 5.)"""
    env = one_server([10, 10], [{"name": "u1", "demand": [1, 1], "external_demand": [2]},
                                {"name": "u2", "demand": [1, 1], "external_demand": [0]}],
                     external=[{"name": "link", "capacity": 10}])
    assert run("drf", env).totals() == (F(10, 3), F(20, 3))


def test_drf_rejects_two_servers():
    with pytest.raises(SettingError):
        mechanisms.allocate("drf", ex(FIG1_001))


# ====================================================================== drfh (leximin) vs drfh-lp7
def test_lp7_stops_early_with_zero_demands():
    """ZERO instance (one server): LP (7) asks every user for the same level g: mem binds at g = 1/2
    -> x = (5, 5, 5/2), and no user has a task bound, so LP (7) stops there.  Leximin DRFH continues
    with u1 (only CPU, which still has 10 - 5 - 5/2 = 5/2 free): (15/2, 5, 5/2), which Pareto
    dominates LP (7)'s allocation."""
    env = one_server(**ZERO)
    lex, lp7 = run("drfh", env), run("drfh-lp7", env)
    assert lex.totals() == (F(15, 2), 5, F(5, 2))
    assert lp7.totals() == (5, 5, F(5, 2))
    assert all(a >= b for a, b in zip(lex.totals(), lp7.totals())) and lex.totals() != lp7.totals()
    assert_float_close(run("drfh-lp7", env, exact=False), (5, 5, F(5, 2)))


def test_lp7_stops_early_with_a_bounded_zero_demand_user():
    """c = (cpu 10); d1 = d2 = (1); u3 demands nothing and has n3 = 4 tasks (normaliser n3 = 4,
    docs/model.md).  Levels x1/10 = x2/10 = x3/4 = g: the CPU binds at g = 1/2 (x1 = x2 = 5),
    u3 has 2 < 4 tasks, nobody reached its bound -> LP (7) stops: (5, 5, 2).
    Leximin: u3 uses no CPU and rises to its bound: (5, 5, 4)."""
    env = one_server([10], [{"name": "u1", "demand": [1]}, {"name": "u2", "demand": [1]},
                            {"name": "u3", "demand": [0], "tasks": 4}])
    assert run("drfh", env).totals() == (5, 5, 4)
    assert run("drfh-lp7", env).totals() == (5, 5, 2)


def test_lp7_equals_leximin_with_bounds_and_positive_demands():
    """001 Fig. 1 with n1 = 4: the common level rises to g = 4/14 = 2/7 where u1 has all its tasks
    (Sec. V-A: u1 becomes inactive); u2 then rises alone.  Best for u2: u1's 4 tasks on s1 (0.8 CPU,
    4 GB), u2 takes all of s2 (min(12/1, 2/0.2) = 10) plus s1's 1.2 CPU left = 1.2 tasks: 56/5.
    (Each u1 task moved to s2 costs u2 5 tasks there and frees only 0.2 on s1.)"""
    env = ex(FIG1_001).with_user(0, tasks=4)
    for mech in ("drfh", "drfh-lp7"):
        assert run(mech, env).totals() == (4, F(56, 5)), mech
    assert run("drfh-lp7", env).info["rounds"] == 2


def test_drfh_rejects_placement_but_c_drfh_takes_it():
    env = ex(FIG1_000).with_user(1, eligible=[1])
    with pytest.raises(SettingError):
        mechanisms.allocate("drfh", env)
    # u2 only on s2: u2 <= 6 (s2 RAM); u1 on s1 <= 6 (RAM); equal shares x1/10 = x2/12 = t:
    # u2 hits 6 at t = 1/2 (u1 = 5), then u1 rises alone to 6.
    assert run("c-drfh", env).totals() == (6, 6)


# ====================================================================== single-server reduction
REDUCTION = {
    "ghodsi": CASES["ghodsi"],
    "weighted": CASES["weighted"],
    "bound": CASES["bound"],
    "zero-demand": CASES["zero-demand"],
    # three users, one resource (single-resource fairness): c = 12, d = (1, 2, 3), w = (1, 1, 2):
    # N = 12, 6, 4; x = (12t, 6t, 8t); 12t + 12t + 24t = 12 -> t = 1/4: x = (3, 3/2, 2).
    "one-resource": (lambda: one_server([12], [{"name": "a", "demand": [1]}, {"name": "b", "demand": [2]},
                                               {"name": "c", "demand": [3], "weight": 2}]),
                     (3, F(3, 2), 2)),
}


@pytest.mark.parametrize("mech", ["drf", "c-drfh", "drfh", "tsf", "cdrf"])
@pytest.mark.parametrize("case", sorted(REDUCTION))
def test_single_server_reduction(mech, case):
    """On one server pooled capacity = the server's, and gamma_j = min_r c_r/d_jr = 1/(dominant share
    per task), so c-drfh, drfh, tsf and cdrf all are weighted DRF (000 Sec. II-B, 001 Prop. 4)."""
    make, expected = REDUCTION[case]
    assert run(mech, make()).totals() == tuple(F(v) for v in expected)


def test_lp7_equals_leximin_whenever_demands_are_positive():
    """The claim in drf_family's docstring: with every demand positive, LP (7) with Sec. V-A's
    freezing of users that reach their task bound IS leximin DRFH (exact comparison on seeded
    random instances with weights, bounds and zero capacities)."""
    import random

    rng = random.Random(7)
    for _ in range(40):
        R, S, J = rng.randint(1, 3), rng.randint(1, 3), rng.randint(2, 4)
        users = []
        for j in range(J):
            u = {"name": f"u{j}", "demand": [rng.randint(1, 4) for _ in range(R)], "weight": rng.choice([1, 2, 3])}
            if rng.random() < 0.5:
                u["tasks"] = rng.randint(0, 5)
            users.append(u)
        env = parse_environment({"resources": [f"r{r}" for r in range(R)],
                                 "servers": [{"name": f"s{s}", "capacity": [rng.randint(0, 9) for _ in range(R)]}
                                             for s in range(S)], "users": users})
        assert run("drfh-lp7", env).totals() == run("drfh", env).totals(), env.to_json()


def test_float_gammas_agree_with_the_exact_ones_at_every_size():
    """TSF/CDRF's float path computes gamma_j = sum_s min_r c[s,r]/d[j,r] in plain floats (small instances)
    or numpy (large ones); both must be the exact gamma correctly rounded up to float noise (1e-12
    relative), zero demands and zero capacities included."""
    import random

    from mechanisms.paper.normalisers import tsf_gamma, tsf_gammas
    from mechverify.instances import parse_environment
    from tests.helpers import random_instance

    rng = random.Random(4)
    for users, servers in [(3, 2)] * 300 + [(20, 8)] * 20:  # 6 and 160 pairs: both paths
        inst = random_instance(rng, users, servers, rng.randint(1, 3), capacity=(0, 20), tasks=1.0,
                               task_range=(5, 5))
        env = parse_environment(inst)
        for got, want in zip(tsf_gammas(env, exact=False), (tsf_gamma(env, j) for j in range(users))):
            want = float(want)
            assert got == want or abs(got - want) <= 1e-12 * max(1.0, abs(want)), (inst, got, want)


def test_pooled_normalisers_exact_and_float():
    """``pooled_normalisers`` (DRFH, C-DRFH, LP (7), DRF-ER, DRF-alpha): ``1 / max_r d[j,r]/C_r`` over
    pooled capacities, in floats for the float path.  By hand: pooled capacities (1+1, 1+2, 0+0) =
    (2, 3, 0); u1 d = (1, 2, 0): 1 / max(1/2, 2/3) = 3/2; u2 demands only the resource without capacity:
    0 (it runs nothing); u3 demands nothing: inf (its task bound decides).  With the external
    resource (capacity 1, u1 demands 3 per task): u1's share max(2/3, 3/1) = 3, so 1/3."""
    import math

    from mechanisms.paper.normalisers import pooled_normalisers

    d = {"resources": ["a", "b", "c"],
         "servers": [{"name": "s1", "capacity": [1, 1, 0]}, {"name": "s2", "capacity": [1, 2, 0]}],
         "users": [{"name": "u1", "demand": [1, 2, 0]}, {"name": "u2", "demand": [0, 0, 1]},
                   {"name": "u3", "demand": [0, 0, 0], "tasks": 4}]}
    env = parse_environment(d)
    assert pooled_normalisers(env, True, ext=False) == [F(3, 2), 0, math.inf]
    assert pooled_normalisers(env, False, ext=False) == [1.5, 0.0, math.inf]
    d["external"] = [{"name": "bw", "capacity": 1}]
    for u, k in zip(d["users"], (3, 0, 0)):
        u["external_demand"] = [k]
    env = parse_environment(d)
    assert pooled_normalisers(env, True, ext=True)[0] == F(1, 3)
    assert pooled_normalisers(env, False, ext=True)[0] == 1 / 3
