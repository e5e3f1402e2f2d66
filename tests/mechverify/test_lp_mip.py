"""Integer columns in the LP layer (``mechverify.lp``): a MIP solved by HiGHS, its exact form verified in
rationals, a MIP that does not finish is an error (never an answer), the deadline stops it, and the pooled
solver objects get their options back; the whole-task domination program (``mechverify.domination``)
against brute force on small instances."""
from __future__ import annotations

import itertools
import random
from fractions import Fraction as F

import pytest

import mechverify.lp as L
from mechverify import deadline
from mechverify.domination import dominating_allocation
from mechverify.highs import _IDLE
from mechverify.lp import LinearProgram, LPSession, solve
from mechverify.allocation import feasibility_violations

from tests.helpers import env_of


def two_var(integer=True):
    """max x + y  s.t.  2x + y <= 7/2,  x + 3y <= 4,  x, y >= 0.
    LP optimum: both rows tight, x = 13/10, y = 9/10, objective 11/5.
    Integers: (1, 1) gives 2 (2 + 1 = 3 <= 7/2, 1 + 3 = 4 <= 4); 3 would need x + y = 3: (1, 2) breaks
    row 2 (7 > 4), (2, 1) row 1 (5 > 7/2), (3, 0) row 1, (0, 3) row 2 -- so 2 is the integer optimum."""
    lp = LinearProgram(maximize=True)
    x = lp.add_var(0, None, 1, integer=integer)
    y = lp.add_var(0, None, 1, integer=integer)
    lp.add_row({x: 2, y: 1}, None, F(7, 2))
    lp.add_row({x: 1, y: 3}, None, 4)
    return lp


def test_integer_columns_make_a_mip():
    lp = two_var()
    assert lp.is_mip and lp.integer == {0, 1} and lp.copy().integer == {0, 1}
    res = solve(lp, exact=True)
    assert res.ok and res.exact and res.method == "highs-mip"
    assert res.x == [F(1), F(1)] and res.objective == F(2) and all(v.__class__ is F for v in res.x)
    assert res.row_dual is None and res.row_activity == [F(3), F(4)]
    fl = solve(lp)
    assert fl.ok and not fl.exact and fl.x == [1.0, 1.0] and fl.objective == 2.0
    lp.set_integer([0, 1], False)  # continuous again: the LP optimum, with exact duals
    res = solve(lp, exact=True)
    assert res.x == [F(13, 10), F(9, 10)] and res.objective == F(11, 5) and res.method != "highs-mip"


def test_mixed_integer_continuous_part_solved_exactly():
    """max a + b  s.t.  2a + 3b <= 7/2,  a <= 3/2,  a integer, b continuous.  a = 1 (a <= 3/2), then
    b = (7/2 - 2)/3 = 1/2: 3/2; a = 0 gives b = 7/6 only.  The continuous part comes back exact."""
    lp = LinearProgram(maximize=True)
    a = lp.add_var(0, None, 1, integer=True)
    b = lp.add_var(0, None, 1)
    lp.add_row({a: 2, b: 3}, None, F(7, 2))
    lp.add_row({a: 1}, None, F(3, 2))
    res = solve(lp, exact=True)
    assert res.ok and res.x == [F(1), F(1, 2)] and res.objective == F(3, 2)


def test_exact_mip_solution_is_verified_not_trusted():
    """A solution that breaks a row in rationals (as a rounding of a tolerance-feasible point could) is an
    error with the reason, never an optimum."""
    lp = two_var()
    assert L._exact_mip(lp, [1.0, 1.0]).ok
    bad = L._exact_mip(lp, [2.0, 0.0])  # 2 * 2 = 4 > 7/2
    assert bad.status == "error" and "row 0" in bad.reason
    neg = L._exact_mip(lp, [-1.0, 1.0])
    assert neg.status == "error" and "bounds" in neg.reason


def test_infeasible_mip():
    """x integer, 1/3 <= x <= 2/3: no integer."""
    lp = LinearProgram(maximize=True)
    x = lp.add_var(0, None, 1, integer=True)
    lp.add_row({x: 3}, 1, 2)
    assert solve(lp).status == "infeasible" and solve(lp, exact=True).status == "infeasible"


def market_split(seed=1, m=4, n=30):
    """Market split (Cornuejols-Dawande): sum_j a_ij x_j = floor(sum_j a_ij / 2), x binary -- hard for
    branch and bound at this size (seconds to minutes)."""
    rng = random.Random(seed)
    lp = LinearProgram(maximize=True)
    cols = [lp.add_var(0, 1, 1, integer=True) for _ in range(n)]
    for _ in range(m):
        a = {c: rng.randint(0, 99) for c in cols}
        s = sum(a.values()) // 2
        lp.add_row(a, s, s)
    return lp


def test_a_mip_that_does_not_finish_is_an_error_and_the_deadline_stops_it():
    lp = market_split()
    for _ in range(2):  # the limit is per run (a reused solver object does not run longer)
        t = deadline.now()
        res = solve(lp, time_limit=0.1)
        assert res.status == "error" and "did not finish" in res.reason and deadline.now() - t < 1.0
        t = deadline.now()
        with deadline.scope(deadline.now() + 0.1):
            with pytest.raises(deadline.BudgetExhausted):
                solve(lp)
        assert deadline.now() - t < 1.0
    with deadline.scope(deadline.now() - 1.0):
        with pytest.raises(deadline.BudgetExhausted, match="not started"):
            solve(two_var())


def test_pooled_solver_objects_get_fresh_options_back():
    """A MIP session sets a gap option on its solver object; the pool gets it back with a fresh one's."""
    _IDLE.clear()  # room in the pool
    s = LPSession(two_var())
    assert s.solve().ok
    h = s.h
    assert h.getOptionValue("mip_rel_gap")[1] == 0.0
    del s
    assert any(o is h for o in _IDLE)
    assert h.getOptionValue("mip_rel_gap")[1] == pytest.approx(1e-4)  # HiGHS's default
    assert h.getOptionValue("output_flag")[1] is False


def _brute_force(env, targets):
    """Largest sum of an integral y in chi(E) (RDM, placement, bounds) with y_j >= targets[j]; None if none."""
    J, S = env.n_users, env.n_servers
    best = None
    for y in itertools.product(range(5), repeat=J * S):
        m = tuple(tuple(F(y[j * S + s]) for s in range(S)) for j in range(J))
        if any(sum(m[j]) < targets[j] for j in range(J)) or feasibility_violations(env, m, "rdm"):
            continue
        tot = sum(y)
        best = tot if best is None or tot > best else best
    return best


def test_whole_task_domination_agrees_with_brute_force():
    """2 users x 2 servers x 2 resources, capacities 0..4, demands 1..3, some bounds and eligibility:
    every feasible y has y[j,s] <= 4, so enumerating 0..4 per entry is exhaustive."""
    rng = random.Random(3)
    for _ in range(25):
        users = []
        for j in range(2):
            u = {"demand": [rng.randint(1, 3), rng.randint(1, 3)]}
            if rng.random() < 0.4:
                u["tasks"] = rng.choice([1, 2, "3/2", "5/2"])
            if rng.random() < 0.3:
                u["eligible"] = [rng.choice(["s1", "s2"])]
            users.append(u)
        env = env_of(["r1", "r2"], [[rng.randint(0, 4), rng.randint(0, 4)] for _ in range(2)], users)
        targets = [F(rng.randint(0, 1)) for _ in range(2)]
        want = _brute_force(env, targets)
        D, y = dominating_allocation(env, targets, "rdm", True, integral=True)
        if want is None:
            assert D is None, env.to_dict()
            continue
        assert D == want, (env.to_dict(), targets, D, want)
        assert all(v.denominator == 1 for row in y for v in row) and not feasibility_violations(env, y, "rdm")
