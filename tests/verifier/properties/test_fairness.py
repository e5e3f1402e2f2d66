"""BF, SRF, PM and single-server DRF fixtures (``verifier/properties/fairness.py``), derived by hand
beside each test."""
from __future__ import annotations

from fractions import Fraction as F

import pytest

from mechanisms import get
from mechverify.instances import parse_environment
from verifier.properties import get_property
from tests.helpers import (EQUAL_TASKS, SENIORITY, env_of, example, external_env, fails, fixed, ghodsi,
                           global_cpu_env, holds, leave, one_cpu, verdict)


# ====================================================================== BF


def test_bf_global_holds_drfh_common_dominant_resource():
    """Max-min fair on cpu: all 12 cpu usable (mem used at most 12 <= 24), so 6 cpu each: u1 6 tasks,
    u2 3 tasks.  DRFH equalises global dominant shares x1/12 = 2 x2/12, the same thing: shortfall 0."""
    assert get("drfh")(global_cpu_env(), exact=True).totals() == (6, 3)
    holds("bf", get("drfh"), global_cpu_env(), "global", measure=F(0))
    holds("bf", get("drfh"), global_cpu_env(), "per-server", measure=F(0))


def test_bf_global_and_per_server_fail_fixed_split():
    """x: u1 (4, 4), u2 (1, 1) (s1 cpu 4 + 2 = 6, mem 5): u1 holds 8 cpu, u2 4; fair is 6 each.
    u2's shortfall (6 - 4)/6 = 1/3, gap 2 cpu."""
    m = fixed("8-2", [[4, 4], [1, 1]])
    for variant in ("global", "per-server"):
        cert = fails("bf", m, global_cpu_env(), variant, measure=F(1, 3), gap=F(2),
                     utilities={"cpu[u2]/w mechanism": F(4), "cpu[u2]/w max-min fair": F(6)})
        assert cert.witness.users == (1,)


def test_bf_per_server_fails_c_drfh_seed000_fig1():
    """Seed 000 Fig. 1: s1 <9, 12, 100>, s2 <12, 12, 0>; u1 <1, 2, 10> (cannot use s2: no bw), u2 <1, 2, 0>.
    mem is dominant for both users at every usable server (u1 at s1: 2/12 > 1/9, 10/100; u2: 2/12 > 1/9, 1/12 -
    and at s2 2/12 > 1/12).  Max-min fair on mem: u1 12 mem (6 tasks on s1), u2 12 mem (6 on s2).
    C-DRFH: global dominant shares 10/100 (bw) and 2/24 (mem): x1/10 = x2/12 = g; u2 runs 6 on s2 and
    x2 - 6 on s1; s1 mem: 2 x1 + 2 (x2 - 6) <= 12 -> 22 g <= 12 -> g = 6/11: x = (60/11, 72/11)
    (the paper prints 5.45 and 6.54).  u1 holds 120/11 mem: gap 12 - 120/11 = 12/11, shortfall 1/11."""
    cert = fails("bf", get("c-drfh"), example("000-fig1.json"), "per-server", measure=F(1, 11), gap=F(12, 11),
                 utilities={"mem[u1]/w mechanism": F(120, 11), "mem[u1]/w max-min fair": F(12)})
    assert cert.allocations["allocation"].totals() == (F(60, 11), F(72, 11))


def test_bf_per_server_fails_tsf_seed000_fig1():
    """TSF: gamma1 = min(9, 6, 10) + 0 = 6, gamma2 = 6 + 6 = 12; x1/6 = x2/12 = g, 6g + 12g - 6 <= 6 ->
    g = 2/3: x = (4, 8) (seed 000: 4 and 8).  u1 holds 8 mem vs 12: gap 4, shortfall 1/3."""
    fails("bf", get("tsf"), example("000-fig1.json"), "per-server", measure=F(1, 3), gap=F(4),
          utilities={"mem[u1]/w mechanism": F(8), "mem[u1]/w max-min fair": F(12)})


def test_bf_per_server_fails_per_server_drf_seed000_fig1():
    """per-server DRF: on s1 both users are mem-dominant, 6 mem each: 3 tasks each; s2 only u2: 6 tasks.
    u1 holds 6 mem vs 12: gap 6, shortfall 1/2."""
    fails("bf", get("per-server-drf"), example("000-fig1.json"), "per-server", measure=F(1, 2), gap=F(6),
          robust=None)  # per-server-drf does not declare unique totals


def test_bf_per_server_holds_six_six():
    """x: u1 6 on s1, u2 6 on s2 is exactly the max-min fair mem split (12, 12): shortfall 0."""
    holds("bf", fixed("6-6", [[6, 0], [0, 6]]), example("000-fig1.json"), "per-server", measure=F(0))


def test_bf_not_applicable():
    """000 Fig. 1: u1's global dominant resource is bw (10/100 > 2/24 > 1/21), u2's is mem: no global premise.
    001 Fig. 1: u1 is cpu-dominant on s1 but mem-dominant on s2: no per-server premise (nor global:
    pooled <14, 14>, u1 mem, u2 cpu).  External resources: no premise."""
    bf, m = get_property("bf"), fixed("any", [[0, 0], [0, 0]])
    assert bf.applicable(m, example("000-fig1.json"), "global") is not None
    for variant in ("global", "per-server"):
        assert bf.applicable(m, example("001-fig1.json"), variant) is not None
        assert bf.applicable(fixed("e", [[0], [0]], external=True), external_env(), variant) is not None
    r = verdict("bf", get("c-drfh"), example("000-fig1.json"), "global")
    assert r.verdict == "not_applicable" and "global dominant" in r.note


# ====================================================================== SRF
def test_srf_holds_drf_weighted():
    """One cpu of 12, w = (2, 1), d = (1, 2): weighted max-min of a_j/w_j: a1/2 = a2, a1 + a2 = 12 ->
    a = (8, 4), x = (8, 2).  DRF: (x1/12)/2 = (2 x2/12)/1 -> x1 = 4 x2, x1 + 2 x2 = 12 -> (8, 2): shortfall 0."""
    env = one_cpu(12, [1, 2], weight=[2, 1])
    assert get("drf")(env, exact=True).totals() == (8, 2)
    holds("srf", get("drf"), env, "max-min", measure=F(0))


def test_srf_holds_drf_with_bound():
    """One cpu of 12, d = (1, 2), n1 = 2: max-min fair gives u1 its 2 (bound), u2 the other 10 cpu
    (5 tasks).  DRF: (2, 5).  shortfall 0."""
    env = one_cpu(12, [1, 2], tasks=[2, None])
    assert get("drf")(env, exact=True).totals() == (2, 5)
    holds("srf", get("drf"), env, "max-min", measure=F(0))


def test_srf_fails_equal_tasks():
    """equal-tasks, one cpu of 12, d = (1, 2): t = 12/3 = 4: u1 holds 4 cpu, u2 8; fair 6 each.
    u1's shortfall (6 - 4)/6 = 1/3, gap 2."""
    fails("srf", EQUAL_TASKS, one_cpu(12, [1, 2]), "max-min", measure=F(1, 3), gap=F(2),
          utilities={"cpu[u1]/w mechanism": F(4), "cpu[u1]/w max-min fair": F(6)})


def test_srf_not_applicable():
    srf = get_property("srf")
    assert srf.applicable(get("drf"), ghodsi(), "max-min") is not None
    assert srf.applicable(fixed("e", [[0], [0]], external=True), external_env(), "max-min") is not None
    assert verdict("srf", get("drf"), ghodsi(), "max-min").verdict == "not_applicable"


# ====================================================================== PM
def test_pm_holds_drf():
    """DRF, one cpu of 12, three unit-demand users: 4 each; u3 leaves: 6 each.  min ratio 6/4 = 3/2."""
    holds("pm", get("drf"), one_cpu(12, [1, 1, 1]), "leave", leave(2), measure=F(3, 2))


def test_pm_fails_seniority():
    """seniority, one cpu of 12, three users: 4 each.  u1 leaves: u2 (now senior) gets 9, u3 gets 3 < 4.
    gap 4 - 3 = 1, ratio 3/4."""
    cert = fails("pm", SENIORITY, one_cpu(12, [1, 1, 1]), "leave", leave(0), measure=F(3, 4), gap=F(1),
                 utilities={"u[u3] before": F(4), "u[u3] after": F(3)})
    assert cert.witness.users == (2,)


def test_pm_fails_drf_with_a_zero_demand():
    """DRF itself (claimed PM, 001 Sec. III-C) with a zero demand and a weight.  One server <6 r0, 3 r1>;
    u1 <3, 0>, u2 <1, 3> with weight w2 = 3, u3 <2, 1>.  Dominant shares per task: 1/2, 1, 1/3.
    Levels (share / weight = t): x1 = 2t, x2 = 3t, x3 = 3t.  r0: 6t + 3t + 6t = 15t <= 6 (t <= 2/5);
    r1: 9t + 3t = 12t <= 3 (t <= 1/4): r1 saturates at t = 1/4, freezing u2, u3 (x2 = x3 = 3/4);
    u1 (no r1) rises alone: 3 x1 + 3/4 + 3/2 <= 6 -> x1 = 5/4.
    u2 leaves: x1 = 2t, x3 = 3t; r0: 12t <= 6 -> t = 1/2 (r1: 3t <= 3): x1 = 1 < 5/4.
    gap 1/4, ratio 1/(5/4) = 4/5.  (The PM proofs assume every user demands every resource.)"""
    env = env_of(["r0", "r1"], [[6, 3]], [{"demand": [3, 0]}, {"demand": [1, 3], "weight": 3}, {"demand": [2, 1]}])
    assert get("drf")(env, exact=True).totals() == (F(5, 4), F(3, 4), F(3, 4))
    fails("pm", get("drf"), env, "leave", leave(1), measure=F(4, 5), gap=F(1, 4),
          utilities={"u[u1] before": F(5, 4), "u[u1] after": F(1)})


def test_pm_not_applicable_single_user():
    assert get_property("pm").applicable(get("drf"), one_cpu(12, [1]), "leave") is not None


# ====================================================================== single-server DRF
def test_single_server_drf_fails_equal_tasks():
    """Ghodsi's example: equal-tasks gives t = min(9/4, 18/5) = 9/4 to both; DRF gives (3, 2).
    relative differences: u1 |9/4 - 3|/3 = 1/4, u2 |9/4 - 2|/(9/4) = 1/9: measure 1/4, gap 3/4 (u1)."""
    cert = fails("single-server-drf", EQUAL_TASKS, ghodsi(), "totals", measure=F(1, 4), gap=F(3, 4),
                 utilities={"x[u1]": F(9, 4), "x[u1] under DRF": F(3)})
    assert cert.witness.users == (0,)


@pytest.mark.parametrize("name", ["drfh", "c-drfh", "tsf", "cdrf"])
def test_single_server_drf_holds(name):
    """On one server DRFH's global dominant share is DRF's dominant share (001 Prop. 4) and TSF's
    x_j/gamma_j is x_j max_r d_jr/c_r, the same score: (3, 2), measure 0."""
    assert get(name)(ghodsi(), exact=True).totals() == (3, 2)
    holds("single-server-drf", get(name), ghodsi(), "totals", measure=F(0))


def test_single_server_drf_with_per_server_demand():
    """Bug fix: a mechanism taking per-server demands (seed 002 Sec. IV, e.g. PS-DSF) on one server made
    the DRF reference crash ('drf does not take per-server demands').  On one server the override IS the
    demand: Ghodsi's example with u1's <1, 4> given as its s1 override (base demand <5, 5>) -> DRF (3, 2).
    (3, 2) holds with measure 0; equal-tasks' (9/4, 9/4) fails with measure 1/4, gap 3/4 as above."""
    env = parse_environment({"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [9, 18]}],
                             "users": [{"name": "u1", "demand": [5, 5], "server_demand": {"s1": [1, 4]}},
                                       {"name": "u2", "demand": [3, 1]}]})
    st = dict(single_server=True, server_demand=True)
    holds("single-server-drf", fixed("3-2", [[3], [2]], **st), env, "totals", measure=F(0))
    fails("single-server-drf", fixed("9/4", [["9/4"], ["9/4"]], **st), env, "totals", measure=F(1, 4),
          gap=F(3, 4), utilities={"x[u1]": F(9, 4), "x[u1] under DRF": F(3)})


def test_single_server_drf_not_applicable():
    r = verdict("single-server-drf", get("c-drfh"), example("000-fig1.json"), "totals")
    assert r.verdict == "not_applicable" and "server" in r.note
