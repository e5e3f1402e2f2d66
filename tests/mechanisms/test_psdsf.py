"""PS-DSF (seeds 000 / 002): worked examples, Tables III-IV, Sec. IV extensions, the distributed
version, and the RDM Pareto-optimality failure.  Every number is an exact Fraction.

Printed numbers that are wrong (each test below says why):
* 000/002 Sec. III-A: "s4,1 = 12/12 = 1" -- gamma[4,1] = min(9/1, 12/(1/2)) = 9, so s4,1 = 8/9;
  and "s3,1 = s4,1 = 8/12" for the SECOND server means s3,2 = s4,2 = 8/12.
* 002 Table IV, TSF: user 3 on class C "58.33" is 10560/181 = 58.3425... (rounds to 58.34);
  the other TSF entries are roundings (8.05 = 2915/362 = 8.0525...; 35 + 170 = 205 ~ 93660/457 =
  204.945...; 22.5 + 85 = 107.5 ~ 49140/457 = 107.527...).
"""
from __future__ import annotations

import json
import time
from fractions import Fraction as F
from pathlib import Path

import pytest

import mechanisms
from mechanisms.paper import psdsf as P
from mechanisms.core.registry import SettingError
from mechverify.allocation import feasibility_violations
from mechverify.model import Environment
from mechverify.instances import load_environment, parse_environment
from mechverify.numbers import InstanceError
from simulation.psdsf_distributed import run_distributed
from tests.helpers import ROOT

EX = Path(ROOT) / "examples"


def env_of(name: str) -> Environment:
    return load_environment(str(EX / name))


def totals(alloc):
    return [sum(row, F(0)) for row in alloc.x]


def run(name: str, env: Environment):
    a = mechanisms.allocate(name, env, exact=True)
    assert a.exact and all(isinstance(v, F) for row in a.x for v in row)
    return a


# ---------------------------------------------------------------------- Fig. 1
def test_fig1_two_users_000():
    """000 Sec. II-B: PS-DSF gives x1 = x1,1 = 6 and x2 = x2,2 = 6."""
    env = env_of("000-fig1.json")
    for name in ("psdsf-rdm", "psdsf-tdm", "psdsf-distributed"):
        a = run(name, env)
        assert [list(r) for r in a.x] == [[6, 0], [0, 6]], name
    assert run("psdsf-rdm", env).info["rounds"] == 2  # one pass that moves, one that confirms


def test_fig1_three_weighted_users_002():
    """002 Sec. II-B: weights 1, 1, 2; PS-DSF x = 3, 3, 6 (RAM split 6, 6, 12 GB).  TSF 2, 2, 8."""
    env = env_of("002-fig1-weighted.json")
    for name in ("psdsf-rdm", "psdsf-tdm", "psdsf-distributed"):
        a = run(name, env)
        assert [list(r) for r in a.x] == [[3, 0], [3, 0], [0, 6]], name
    assert totals(run("tsf", env)) == [2, 2, 8]


# ---------------------------------------------------------------------- Fig. 2
def test_fig2_rdm_allocation_and_vds():
    """000/002 Sec. III-A (Fig. 3, RDM): x = 3.6, 3.6, 8, 8 with no tasks of users 3, 4 on s1.

    VDS s[n,i] = x_n / gamma[n,i]: gamma = [[6, 0], [6, 0], [12, 12], [9, 12]] (users 1, 2 lack
    bandwidth on s2).  s1,1 = s2,1 = 3.6/6 = 0.6 and s3,1 = 8/12 as printed; the printed
    "s4,1 = 12/12 = 1" is wrong: gamma[4,1] = min(9/1, 12/0.5) = 9, s4,1 = 8/9.  The printed
    "s3,1 = s4,1 = 8/12" for the second server is s3,2 = s4,2 = 8/12 (typo in the index)."""
    env = env_of("000-fig2.json")
    a = run("psdsf-rdm", env)
    assert [list(r) for r in a.x] == [[F(18, 5), 0], [F(18, 5), 0], [0, 8], [0, 8]]
    assert P.gamma_matrix(env) == [[6, 0], [6, 0], [12, 12], [9, 12]]
    s = P.vds(env, a.x)
    assert s[0][0] == s[1][0] == F(3, 5)
    assert s[2][0] == F(8, 12)
    assert s[3][0] == F(8, 9) != 1
    assert s[2][1] == s[3][1] == F(8, 12)
    assert s[0][1] is None and s[1][1] is None
    assert P.theorem1_violations(env, a.x) == []
    # the same point is reached by the distributed version
    assert run("psdsf-distributed", env).x == a.x


def test_fig2_tdm_differs():
    """Under TDM (002 Def. 4) server 2 is time-shared: x3,2/12 + x4,2/12 = 1, so 6 and 6; server 1
    gives users 1, 2 the same key 3/6 and u3, u4 keys 6/12, 6/9 >= 1/2 (Thm 2)."""
    env = env_of("000-fig2.json")
    a = run("psdsf-tdm", env)
    assert [list(r) for r in a.x] == [[3, 0], [3, 0], [0, 6], [0, 6]]
    assert P.theorem2_violations(env, a.x) == []
    assert P.theorem1_violations(env, a.x) != []  # RDM resources are left idle: not PS-DSF under RDM


# ---------------------------------------------------------------------- characterisation checks
def test_theorem_checks_reject_non_psdsf():
    env = env_of("000-fig1.json")
    bad = [[F(3), F(0)], [F(3), F(6)]]  # per-server DRF: u2 holds RAM on s1 with a larger key
    v = P.theorem1_violations(env, bad)
    assert v and "u1" in v[0] and "s1" in v[0]
    assert P.theorem1_violations(env, [[F(7), F(0)], [F(0), F(6)]])[0].startswith("RDM")  # infeasible
    assert P.theorem2_violations(env, [[F(6), F(0)], [F(0), F(5)]])  # s2 not fully time-shared


def test_output_failing_theorem_raises(monkeypatch):
    env = env_of("000-fig1.json")
    import mechanisms.paper.psdsf.iteration as iteration

    monkeypatch.setattr(iteration, "fast_fixed_point", lambda *a, **k: None)  # force the exact iteration
    monkeypatch.setattr(iteration, "exact_iteration", lambda *a, **k: None)  # ... the Fraction one
    monkeypatch.setattr(iteration, "algorithm_i", lambda *a, **k: ([[F(3), F(0)], [F(3), F(6)]], 1, "fixed-point"))
    with pytest.raises(P.PSDSFError, match="Theorem 1"):
        mechanisms.allocate("psdsf-rdm", env, exact=True)


def test_table2_procedure_equals_water_filling():
    """The literal server procedure of Table II (Update-Allocation with beta) ends at the same column
    as the water filling, from Algorithm I's initial allocation and from later iterates."""
    for name in ("000-fig2.json", "002-fig1-weighted.json", "002-psdsf-rdm-not-po.json"):
        env = env_of(name)
        for mode in ("rdm", "tdm"):
            x = P.per_server_drf_start(env, mode)
            for _ in range(2):
                for s in range(env.n_servers):
                    col, steps = P.server_procedure_table2(env, x, s, mode)
                    assert col == P.server_response(env, x, s, mode), (name, mode, s)
                P.gauss_seidel_pass(env, x, mode)


def test_geometric_convergence_uses_pattern_lp():
    """Algorithm I can approach its fixed point only geometrically (here the totals of u1 approach 1
    as 1 - 2/3^k); the iteration is then finished by the exact pattern LP, and the result is still
    checked against Theorem 1."""
    env = parse_environment({"resources": ["r0", "r1"],
                             "servers": [{"name": "s0", "capacity": [6, 6]}, {"name": "s1", "capacity": [4, 2]}],
                             "users": [{"name": "u0", "demand": [1, 2], "eligible": ["s1"]},
                                       {"name": "u1", "demand": [0, 4], "weight": 2, "eligible": ["s0"]},
                                       {"name": "u2", "demand": [4, 4]}]})
    x, info = P.psdsf(env, "rdm", fast=False)  # the exact iteration
    assert info["method"] == "algorithm-i/pattern-lp"
    assert [sum(r) for r in x] == [1, 1, F(1, 2)]
    assert P.theorem1_violations(env, x) == []
    assert info["rounds"] <= P.MAX_ROUNDS
    a = run("psdsf-rdm", env)  # the fast path: float iteration, one exact solve of the same pattern
    assert a.info["method"] == "algorithm-i/pattern-solve"
    assert [list(r) for r in a.x] == x


def test_rdm_totals_not_unique():
    """Why ``info["unique_totals"]`` is None under RDM: two identical servers [2, 3]; u1 d = [3, 2]
    with weight 2, u2 d = [1, 4].  gamma = 2/3 (u1) and 3/4 (u2) on both servers.  psdsf-rdm gives
    the pooled-DRF-like split (64/57, 36/57), keys 16/19 everywhere.  Another allocation -- u1 2/3
    on s1 (cpu saturated) and 6/17 on s2, u2 only 39/68 on s2 (memory saturated) -- has keys 13/17
    for both users on both servers, so every user has a bottleneck everywhere: it is PS-DSF too, with
    other totals (52/51, 39/68), and the first allocation Pareto-dominates it."""
    env = parse_environment({"resources": ["cpu", "mem"],
                             "servers": [{"name": "s1", "capacity": [2, 3]}, {"name": "s2", "capacity": [2, 3]}],
                             "users": [{"name": "u1", "demand": [3, 2], "weight": 2},
                                       {"name": "u2", "demand": [1, 4]}]})
    a = run("psdsf-rdm", env)
    assert [list(r) for r in a.x] == [[F(32, 57), F(32, 57)], [F(6, 19), F(6, 19)]]
    assert a.info["unique_totals"] is None
    other = [[F(2, 3), F(6, 17)], [F(0), F(39, 68)]]
    assert P.theorem1_violations(env, other) == []
    assert [sum(r) for r in other] == [F(52, 51), F(39, 68)]
    assert {k for row in P.keys(env, other) for k in row} == {F(13, 17)}
    assert all(sum(o) < t for o, t in zip(other, totals(a)))
    assert run("psdsf-tdm", env).info["unique_totals"] is True


# ---------------------------------------------------------------------- Fig. 4 (Sec. IV, scenario 1)
def test_fig4_wireless_channels():
    """002 Sec. IV Fig. 4: channel 1 to user 1, channel 3 to user 2, channel 2 shared half/half:
    1.5 and 1 Mb/s.  Keys on channel 2: 1.5/0.6 = 1/0.4 = 2.5 (equal, so sharing is fair)."""
    env = env_of("002-fig4-channels.json")
    assert P.gamma_matrix(env) == [[F(6, 5), F(3, 5), F(2, 5)], [F(2, 5), F(2, 5), F(4, 5)]]
    for name in ("psdsf-rdm", "psdsf-tdm", "psdsf-distributed"):
        a = run(name, env)
        assert totals(a) == [F(3, 2), 1], name
        assert [list(r) for r in a.x] == [[F(6, 5), F(3, 10), 0], [0, F(1, 5), F(4, 5)]], name
    assert P.vds(env, a.x)[0][1] == P.vds(env, a.x)[1][1] == F(5, 2)


# ---------------------------------------------------------------------- Sec. IV scenario 2 (co-processors)
def test_coprocessor_gamma_through_server_demand():
    """A co-processor on s2 doubles user 3's task rate there (gamma 6 -> 12).  The per-server demand
    from server_demand_for_gamma has exactly that gamma (eq. (7)); the instance round-trips through
    the JSON format; PS-DSF uses it."""
    env = env_of("002-fig1-weighted.json")
    d = P.server_demand_for_gamma(env, 2, 1, 12)
    assert d == (F(1, 2), F(1), F(0))
    env2 = env.with_user(2, server_demand={1: d})
    assert env2.gamma(2, 1) == 12 and env2.gamma(2, 0) == 6
    env3 = parse_environment(json.loads(env2.to_json()))
    assert env3.d(2, 1) == d
    a = run("psdsf-tdm", env3)
    assert P.theorem2_violations(env3, a.x) == []
    assert totals(a) == [3, 3, 12]  # u3 runs 12 tasks on s2 alone; keys 3/6 = 12/(2*12)
    with pytest.raises(InstanceError, match=r"gamma\[2,1\]"):
        P.server_demand_for_gamma(env, 2, 1, 0)
    with pytest.raises(InstanceError, match=r"gamma\[0,1\]"):
        P.server_demand_for_gamma(env, 0, 1, 5)  # u1 needs bandwidth, s2 has none


# ---------------------------------------------------------------------- Fig. 5, Tables III and IV
CLASS_SIZES = {"A": 8, "B": 68, "C": 33, "D": 11}


def by_class(env, x):
    out = {}
    for s, name in enumerate(env.servers):
        for j in range(env.n_users):
            out[(j, name[0])] = out.get((j, name[0]), F(0)) + x[j][s]
    return out


@pytest.fixture(scope="module")
def cluster():
    return env_of("002-fig5-cluster.json")


def test_fig5_reconstruction_reproduces_table3(cluster):
    """Table III: gamma[n, class] = servers in the class x tasks on one server of it (eq. (7)).
    Reconstruction (also in the instance's description): seed 002 prints neither the class sizes nor
    the demands; seed 000's Fig. 5 shows A 8, B 68, C 33, D 11 servers and d1 = [.1, .1],
    d2 = [.1, .2], d3 = [.2, .1], d4 = [.2, .3]; with the printed class capacities they reproduce all
    16 entries exactly, e.g. user 4 on class C: 33 * min(0.5/0.2, 0.25/0.3) = 33 * 5/6 = 27.5."""
    env = cluster
    assert env.n_servers == 120 and {c: sum(1 for s in env.servers if s[0] == c) for c in "ABCD"} == CLASS_SIZES
    assert list(env.weight) == [2, 2, 1, 1]
    g = P.gamma_matrix(env)
    table3 = {0: [80, 340, F(165, 2), 55], 1: [40, 170, F(165, 4), F(165, 4)],
              2: [0, 0, F(165, 2), F(55, 2)], 3: [0, 0, F(55, 2), F(55, 2)]}
    for j, row in table3.items():
        got = [sum((g[j][s] for s in range(120) if env.servers[s][0] == c), F(0)) for c in "ABCD"]
        assert got == row, (j, got)
    assert len(json.loads((EX / "002-fig5-cluster.json").read_text())["description"]) > 200


def test_fig5_table4_psdsf(cluster):
    """Table IV, PS-DSF (RDM): classes A, B to users 1, 2 (40/20 and 170/85), class C to user 3
    (82.5), class D to user 4 (27.5) -- reproduced exactly, per class, by psdsf-rdm.  The cluster
    has a continuum of PS-DSF allocations: the symmetric split of Table IV passes Thm 1, and so does
    one where user 1 holds every class-A server (class sums 80/0 and 130/105)."""
    env = cluster
    t0 = time.perf_counter()
    a = run("psdsf-rdm", env)
    elapsed = time.perf_counter() - t0
    assert elapsed < 15 and a.info["rounds"] <= 10
    table4 = {(0, "A"): 40, (1, "A"): 20, (0, "B"): 170, (1, "B"): 85, (2, "C"): F(165, 2), (3, "D"): F(55, 2)}
    cls = {k: v for k, v in by_class(env, a.x).items() if v}
    assert cls == table4
    assert totals(a) == [210, 105, F(165, 2), F(55, 2)]
    assert P.theorem1_violations(env, a.x) == []

    def spread(per_class):  # the table's class totals split evenly over the servers of each class
        return [[F(per_class.get((j, env.servers[s][0]), 0)) / CLASS_SIZES[env.servers[s][0]]
                 for s in range(120)] for j in range(4)]

    assert P.theorem1_violations(env, spread(table4)) == []
    other = dict(table4)
    other.update({(0, "A"): 80, (1, "A"): 0, (0, "B"): 130, (1, "B"): 105})
    assert P.theorem1_violations(env, spread(other)) == []
    # TDM gives the same class totals here
    assert {k: v for k, v in by_class(env, run("psdsf-tdm", env).x).items() if v} == table4


def test_fig5_table4_tsf(cluster):
    """Table IV, TSF (registered ``tsf``; gamma_n ignores placement: 557.5, 292.5, 320, 195).
    Users 3, 4 reach level l = 33/181 (class-C memory: 0.1*320 l + 0.3*(195 l - 27.5) = 8.25 with
    user 4 holding all of class D): x3 = 10560/181 = 58.3425... -- the printed 58.33 is wrong (58.34)
    -- and x4 = 6435/181, of which 2915/362 = 8.0525... (printed 8.05) on class C and 27.5 on D.
    Users 1, 2 reach 84/457 (memory of classes A+B: 0.1*1115 m + 0.2*585 m = 42): 93660/457 =
    204.945... and 49140/457 = 107.527... (printed 35 + 170 = 205 and 22.5 + 85 = 107.5; their
    split over A and B is not unique)."""
    env = cluster
    a = run("tsf", env)
    assert totals(a) == [F(93660, 457), F(49140, 457), F(10560, 181), F(6435, 181)]
    cls = by_class(env, a.x)
    assert cls[(2, "C")] == F(10560, 181) and round(float(cls[(2, "C")]), 2) == 58.34 != 58.33
    assert cls[(3, "C")] == F(2915, 362) and round(float(cls[(3, "C")]), 2) == 8.05
    assert cls[(3, "D")] == F(55, 2) and cls[(2, "D")] == 0
    assert cls[(0, "A")] + cls[(0, "B")] == F(93660, 457)
    for j in (0, 1):
        assert cls[(j, "C")] == cls[(j, "D")] == 0


def test_cli_allocate_cluster_exact(cluster, capsys):
    from verifier.cli import main

    rc = main(["allocate", "psdsf-rdm", str(EX / "002-fig5-cluster.json"), "--exact"])
    out = capsys.readouterr().out
    assert rc in (0, None) and "mechanism: psdsf-rdm  (exact)" in out and "165/2" in out


# ---------------------------------------------------------------------- distributed (Sec. III-D, Sec. V)
def test_distributed_user4_leaves_and_returns(cluster):
    """Sec. V: user 4 inactive for a while, then active again (compressed: rounds 6-10 of 15; a
    round = every server runs its procedure once, in order).  The distributed algorithm re-converges
    to the PS-DSF allocation of the active users within 3 rounds of each change."""
    env = cluster
    act = lambda t: [0, 1, 2] if 5 < t <= 10 else [0, 1, 2, 3]  # noqa: E731
    traj = run_distributed(env, 15, "sequential", active=act)
    assert len(traj) == 16 and traj[0].info["round"] == 0

    def is_psdsf(a):
        users = a.info.get("active", [0, 1, 2, 3])
        return not P.theorem1_violations(env.restrict(users=users), [a.x[j] for j in users])

    ok = [is_psdsf(a) for a in traj]
    assert ok[3:6] == [True] * 3 and ok[8:11] == [True] * 3 and ok[13:] == [True] * 3
    assert not ok[6]  # just after user 4 left
    assert totals(traj[5]) == totals(traj[15]) == [210, 105, F(165, 2), F(55, 2)]
    assert totals(traj[10]) == [F(1005, 4), F(1005, 8), F(165, 2), 0]
    assert all(traj[t].x[3] == tuple([F(0)] * 120) for t in range(6, 11))


def test_synchronous_schedule_oscillates_on_fig5(cluster):
    """When every server runs its procedure at the same time from the same totals, the 76 A/B
    servers all react to the same totals: from round 2 on the allocation alternates between two
    states for ever (user 2 gets everything of class A-D it can, then user 1 does).  So the
    distributed algorithm needs servers to act one at a time (or it oscillates); ``psdsf-distributed``
    therefore uses the asynchronous one-server-per-round schedule."""
    traj = run_distributed(cluster, 6, "sync")
    assert traj[2].x == traj[4].x == traj[6].x and traj[3].x == traj[5].x and traj[2].x != traj[3].x
    assert totals(traj[2]) == [0, F(585, 2), 0, 0]
    with pytest.raises(P.PSDSFError, match="period 2"):
        P.distributed_fixed_point(cluster, "rdm", "sync")


def test_distributed_mechanism_on_cluster(cluster):
    a = run("psdsf-distributed", cluster)
    assert totals(a) == [210, 105, F(165, 2), F(55, 2)]
    assert P.theorem1_violations(cluster, a.x) == []
    assert a.info["passes"] <= 10


def test_run_distributed_schedules_and_bad_input():
    env = env_of("000-fig2.json")
    final = run("psdsf-rdm", env).x
    for sched in ("sequential", "round-robin", [[0], [1]], lambda t: [t % 2]):
        traj = run_distributed(env, 8, sched)
        assert traj[-1].x == final, sched
    traj = run_distributed(env, 3, "sync", initial=final)
    assert all(a.x == final for a in traj)  # a PS-DSF allocation is a fixed point
    for kwargs, field in (({"schedule": "bogus"}, "schedule"), ({"schedule": [[5]]}, "schedule"),
                          ({"active": [[7]]}, "active"), ({"initial": [[1]]}, "initial")):
        with pytest.raises(ValueError, match=f"^{field}:"):
            run_distributed(env, 2, **kwargs)
    with pytest.raises(ValueError, match="^rounds:"):
        run_distributed(env, -1)
    with pytest.raises(ValueError, match="^mode:"):
        run_distributed(env, 1, mode="fdm")


# ---------------------------------------------------------------------- setting / bad input
def test_setting_rejects_bounds_and_external():
    env = env_of("000-fig1.json").with_user(0, tasks=3)
    with pytest.raises(SettingError, match=r"^users\[0\]\.tasks:"):
        mechanisms.allocate("psdsf-rdm", env)
    with pytest.raises(InstanceError, match=r"^users\[0\]\.tasks:"):
        P.psdsf(env)


def test_claims_cite_both_versions_separately():
    m = mechanisms.get("psdsf-rdm")
    by = {(c.property, c.source[:3]): c.status for c in m.claims}
    assert by[("po", "000")] == "holds" and by[("po", "002")] == "fails"
    assert by[("sp", "000")] == "holds" and by[("sp", "002")] == "fails"
    for p in ("ef", "si", "bf", "srf"):
        assert by[(p, "000")] == by[(p, "002")] == "holds"
    assert {c.variant for c in m.claims if c.property == "bf"} == {"per-server"}
    assert {c.variant for c in m.claims if c.property == "si"} == {"per-server-split"}
    t = {c.property: c.status for c in mechanisms.get("psdsf-tdm").claims}
    assert t["po"] == t["sp"] == "holds"
    assert mechanisms.get("psdsf-rdm").setting.feasibility == "rdm"
    assert mechanisms.get("psdsf-tdm").setting.feasibility == "tdm"


# ---------------------------------------------------------------------- PO under RDM
def test_psdsf_rdm_is_not_pareto_optimal():
    """002 says PS-DSF loses PO under RDM (000 Thm 2 says PO holds).  Smallest instance found by
    search: servers s1 = [1, 1], s2 = [1, 2]; u1 d = [1, 3], u2 d = [2, 1]; equal weights.

    gamma = [[1/3, 2/3], [1/2, 1/2]].  psdsf-rdm: u1 takes s2 (2/3 task, memory saturated), u2 takes
    s1 (1/2 task, cpu saturated); keys: s1: u1 2, u2 1; s2: both 1 -- Thm 1 holds.  It is the ONLY
    PS-DSF allocation: if both users held tasks on a server, its saturated resource is demanded by
    both, so their keys there are equal, i.e. x1/x2 = gamma[1,s]/gamma[2,s] = 2/3 (s1) or 4/3 (s2);
    so at most one server is shared; the four remaining cases (s1 shared or not, s2 shared or not,
    who holds what) are each contradicted by a key inequality or a capacity except this one.
    Dominating RDM-feasible allocation: u1 1/5 on s1 + 3/5 on s2, u2 2/5 + 1/5: every resource is
    saturated, u1 4/5 > 2/3, u2 3/5 > 1/2 (both get 6/5 as much)."""
    env = env_of("002-psdsf-rdm-not-po.json")
    a = run("psdsf-rdm", env)
    assert [list(r) for r in a.x] == [[0, F(2, 3)], [F(1, 2), 0]]
    assert P.theorem1_violations(env, a.x) == []
    y = [[F(1, 5), F(3, 5)], [F(2, 5), F(1, 5)]]
    assert feasibility_violations(env, y, "rdm") == []
    used = [[sum(y[j][s] * env.d(j, s)[r] for j in range(2)) for r in range(2)] for s in range(2)]
    assert used == [list(env.capacity[0]), list(env.capacity[1])]
    ty, tx = [sum(r) for r in y], totals(a)
    assert ty == [F(4, 5), F(3, 5)] and all(ty[j] == F(6, 5) * tx[j] for j in range(2))
    # the dominating allocation is not TDM-feasible: under TDM PS-DSF is PO (Fisher equilibrium)
    assert feasibility_violations(env, y, "tdm")
    assert run("psdsf-tdm", env).x == a.x
