"""Exact re-checks (``verifier/exact.py``): whole tasks, interval reasoning for mechanisms without an
exact allocation, and the robustness flag."""
from __future__ import annotations

from fractions import Fraction as F

import pytest

from verifier.properties import get_property

from tests.helpers import UTILITARIAN, approx, approx_equal_tasks, env_of, fails, fixed, mis, one_cpu, verdict


def test_whole_tasks_formula():
    """u_j = min(floor(E), sum_s floor(P_s), floor(n_j)) for whole tasks.  Two servers of 3 cpu, a link of 2;
    u1 <1 cpu, 1/2 link>, n1 = 7/2.  Bundle 5/2 cpu on each server, 2 link:
    P = (5/2, 5/2), E = 2/(1/2) = 4: divisible min(4, 5, 7/2) = 7/2; whole min(4, 2 + 2, 3) = 3.
    With n1 unbounded: divisible min(4, 5) = 4, whole min(4, 4) = 4; with 3/2 link: E = 3, whole 3."""
    from mechverify.allocation import Bundle
    from mechverify.utility import true_tasks
    from mechverify.utility import whole_tasks

    def env(n):
        return env_of(["cpu"], [[3], [3]], [{"demand": [1], "external_demand": ["1/2"], "tasks": n}],
                      external=[{"name": "link", "capacity": 2}])
    b = Bundle(((F(5, 2),), (F(5, 2),)), (F(2),))
    assert true_tasks(env("7/2"), 0, b) == F(7, 2) and whole_tasks(env("7/2"), 0, b) == 3
    assert true_tasks(env(None), 0, b) == 4 and whole_tasks(env(None), 0, b) == 4
    assert whole_tasks(env(None), 0, Bundle(b.amounts, (F(3, 2),))) == 3


# ====================================================================== interval reasoning


def test_interval_si_certified_when_margin_positive():
    """u2 runs 5.0 (float) with certified bounds [49/10, 51/10]; its equal split runs 6.
    Even the upper end 51/10 < 6: certified by intervals, gap 6 - 51/10 = 9/10, measure (51/10)/6 = 17/20."""
    m = approx("a", ["7", "5"], [("69/10", "71/10"), ("49/10", "51/10")])
    ev = get_property("si").evaluate(m, one_cpu(12, [1, 1]), "per-server-split", exact=False)
    assert ev.violated
    cert = get_property("si").recheck(m, ev.witness)
    assert cert is not None and cert.method == "interval"
    assert cert.gap == F(9, 10) and cert.measure == F(17, 20)
    r = verdict("si", m, one_cpu(12, [1, 1]), "per-server-split")
    assert r.verdict == "violated"


@pytest.mark.parametrize("hi", ["61/10", "6"])
def test_interval_si_not_certified_when_bounds_reach_benchmark(hi):
    """u2 runs 5.99 (float, a candidate: 5.99 < 6) but its bounds [59/10, hi] reach the benchmark 6:
    the true total may be >= 6, so no certificate; check says 'unknown', never 'violated'."""
    m = approx("b", ["6.01", "5.99"], [("59/10", "61/10"), ("59/10", hi)])
    env = one_cpu(12, [1, 1])
    ev = get_property("si").evaluate(m, env, "per-server-split", exact=False)
    assert ev.violated
    assert get_property("si").recheck(m, ev.witness) is None
    assert verdict("si", m, env, "per-server-split").verdict == "unknown"


def test_interval_sp_certified():
    """SP fixture of equal-tasks with bounds +-1/100: truthful u1 in [599/100, 601/100]; after reporting 2,
    x1' in [399/100, 401/100] of 2-cpu tasks = [798/100, 802/100] TRUE tasks.
    gap 798/100 - 601/100 = 197/100."""
    m, sp = approx_equal_tasks(F(1, 100)), get_property("sp")
    ev = sp.evaluate(m, one_cpu(12, [1, 1]), "demand", mis(0, demand=[2]), exact=False)
    cert = sp.recheck(m, ev.witness)
    assert cert.method == "interval" and cert.gap == F(197, 100)
    assert cert.utilities == {"u[u1] truthful": (F(599, 100), F(601, 100)),
                              "u[u1] misreport": (F(798, 100), F(802, 100))}
    assert cert.robust is None  # no total_range: uniqueness not established


def test_interval_sp_not_certified_when_overlapping():
    """Same with bounds +-1: truthful [5, 7], misreport 2 * [3, 5] = [6, 10] overlaps: no certificate."""
    m, sp = approx_equal_tasks(F(1)), get_property("sp")
    ev = sp.evaluate(m, one_cpu(12, [1, 1]), "demand", mis(0, demand=[2]), exact=False)
    assert ev.violated and sp.recheck(m, ev.witness) is None


def test_interval_ef():
    """u2 with float 4 in [39/10, 41/10], u1 with 8 in [79/10, 81/10] (one cpu, unit demands):
    u2 envies u1 certainly: gap 79/10 - 41/10 = 19/5, measure (79/10)/(41/10) = 79/41."""
    m = approx("c", ["8", "4"], [("79/10", "81/10"), ("39/10", "41/10")])
    ev = get_property("ef").evaluate(m, one_cpu(12, [1, 1]), "placement-aware", exact=False)
    cert = get_property("ef").recheck(m, ev.witness)
    assert cert.method == "interval" and cert.gap == F(19, 5) and cert.measure == F(79, 41)


# ====================================================================== robustness flag


def test_robust_false_when_other_optimal_allocations_satisfy():
    """d = (1, 1), one cpu of 12: returned (12, 0); SI fails for u2 (0 < 6, gap 6) and EF fails
    (u2 envies u1: 12 > 0, gap 12) -- but (6, 6) is optimal too: robust False."""
    env = one_cpu(12, [1, 1])
    fails("si", UTILITARIAN, env, "per-server-split", measure=F(0), gap=F(6), robust=False)
    fails("ef", UTILITARIAN, env, "placement-aware", measure=float("inf"), gap=F(12), robust=False)


def test_robust_true_when_optimum_unique():
    """d = (1, 2): the unique optimum is (12, 0) (a task of u2 costs twice as much); u2's benchmark is 3:
    SI gap 3, robust True.  EF: u2 with u1's 12 cpu runs 6 > 0: gap 6, robust True."""
    env = one_cpu(12, [1, 2])
    fails("si", UTILITARIAN, env, "per-server-split", measure=F(0), gap=F(3), robust=True)
    fails("ef", UTILITARIAN, env, "placement-aware", measure=float("inf"), gap=F(6), robust=True)


def test_robust_none_when_uniqueness_unknown():
    """A mechanism that declares neither unique totals nor a total_range: the EF violation of x = (8, 4)
    (gap 4, as in test_ef_fails_fixed_unequal_split) is certified but its robustness is unknown (None)."""
    m = fixed("8-4-unknown", [[8], [4]], info={})
    fails("ef", m, one_cpu(12, [1, 1]), "literal", measure=F(2), gap=F(4), robust=None)
