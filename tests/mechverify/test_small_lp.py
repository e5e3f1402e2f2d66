"""The tiny-LP path of ``mechverify.small_lp`` (GLPK) pinned against HiGHS (through ``lp.LPSession``,
which dispatches small LPs to it), on random LPs, degenerate LPs and the mechanisms' own leximin LPs;
and its guards (GLPK aborts the process on invalid input, so nothing invalid may reach it)."""
from __future__ import annotations

import random
from fractions import Fraction

import pytest

import mechverify.lp as L
from mechverify.lp import LinearProgram, LPSession
from mechverify.small_lp import solve_small


def _highs(lp: LinearProgram, exact: bool, monkeypatch) -> L.LPResult:
    """Solve ``lp`` with HiGHS only (the GLPK path switched off)."""
    with monkeypatch.context() as mp:
        mp.setattr(L, "SMALL_LP_MAX", -1)
        return LPSession(lp.copy()).solve(exact=exact)


def _rand_lp(rng: random.Random, degenerate: bool) -> LinearProgram:
    n, m = rng.randint(1, 7), rng.randint(0, 7)
    lp = LinearProgram(maximize=rng.random() < 0.5)
    for _ in range(n):
        kind = rng.random()
        lo = 0 if kind < 0.6 else (None if kind < 0.8 else rng.randint(-3, 3))
        up = None if rng.random() < 0.6 else rng.randint(0 if lo is None else lo, 6)
        lp.add_var(lo, up, rng.choice([0, 1, -1, 2, Fraction(1, 3), rng.randint(-5, 5)]))
    for _ in range(m):
        vals = [1, 2, -1] if degenerate else [1, 2, 3, -1, Fraction(1, 2), Fraction(rng.randint(1, 9), rng.randint(1, 9))]
        coeffs = {c: rng.choice(vals) for c in range(n) if rng.random() < 0.6}
        t = rng.random()
        if degenerate:  # right-hand sides 0 / 1: many bases share a vertex (ties in every ratio test)
            lo, up = (None, rng.choice([0, 1])) if t < 0.7 else (rng.choice([0, 1]), None)
        elif t < 0.5:
            lo, up = None, rng.randint(0, 10)
        elif t < 0.7:
            lo, up = rng.randint(-2, 4), None
        elif t < 0.85:
            lo = up = rng.randint(0, 5)
        else:
            lo = rng.randint(-2, 3)
            up = lo + rng.randint(0, 4)
        lp.add_row(coeffs, lo, up)
    return lp


def _feasible(lp: LinearProgram, x: list, tol: float) -> bool:
    for j, v in enumerate(x):
        lo, up = lp.col_lower[j], lp.col_upper[j]
        if lo is not None and v < lo - tol or up is not None and v > up + tol:
            return False
    for i, row in enumerate(lp.rows):
        a = sum((c * x[j] if isinstance(x[j], Fraction) else float(c) * x[j] for j, c in row.items()), 0)
        lo, up = lp.row_lower[i], lp.row_upper[i]
        if lo is not None and a < lo - tol or up is not None and a > up + tol:
            return False
    return True


@pytest.mark.parametrize("degenerate", [False, True])
def test_glpk_path_agrees_with_highs_on_random_lps(degenerate, monkeypatch):
    rng = random.Random(7 + degenerate)
    small_optimal = 0
    for it in range(400):
        lp = _rand_lp(rng, degenerate)
        exact = it % 2 == 0
        s = LPSession(lp.copy())
        r = s.solve(exact=exact)
        h = _highs(lp, exact, monkeypatch)
        assert r.status == h.status, (it, r.status, h.status)
        if s.method == "glpk":
            assert r.status == "optimal"  # the GLPK path never claims anything else
            small_optimal += 1
        if r.status != "optimal":
            continue
        if exact:
            assert r.objective == h.objective  # both exact, from (possibly) different bases
            assert _feasible(lp, r.x, 0)
        else:
            assert r.objective == pytest.approx(h.objective, rel=1e-7, abs=1e-7)
            assert _feasible(lp, r.x, 1e-7)
            # the duals certify the objective: c x = y^T (active bounds) + reduced costs at bounds
            assert len(r.row_dual) == lp.n_rows
    # the random LPs are mostly infeasible/unbounded (HiGHS decides those); many are still optimal here
    assert small_optimal >= 100


def test_glpk_duals_match_highs_on_a_nondegenerate_lp():
    """max 3x + 2y s.t. x + y <= 4, x + 3y <= 7, x <= 3: optimum (3, 1), value 11; row 0 and x's upper
    bound active, row 1 slack (6 < 7).  By hand: y's cost 2 = y0 * 1, so y0 = 2 (raising 4 raises the
    optimum by 2), y1 = 0; x's reduced cost 3 - y0 = 1 > 0 at its upper bound."""
    lp = LinearProgram(maximize=True)
    x = lp.add_var(0, 3, 3)
    y = lp.add_var(0, None, 2)
    lp.add_row({x: 1, y: 1}, None, 4)
    lp.add_row({x: 1, y: 3}, None, 7)
    s = LPSession(lp)
    r = s.solve()
    assert s.method == "glpk"
    assert r.x == pytest.approx([3, 1]) and r.objective == pytest.approx(11)
    assert r.row_dual == pytest.approx([2, 0])
    e = LPSession(lp.copy()).solve(exact=True)
    assert e.x == [3, 1] and e.objective == 11 and e.row_dual == [2, 0]


def test_degenerate_vertex_many_tied_rows():
    """Eight rows through the optimal vertex (0, ..., 0, 1) of max x_last: a fully degenerate LP (every
    ratio test ties); GLPK must neither cycle nor hand the LP to HiGHS."""
    lp = LinearProgram(maximize=True)
    cols = [lp.add_var(0, None, 1 if j == 3 else 0) for j in range(4)]
    for k in range(8):
        lp.add_row({c: 1 + (k * (c + 1)) % 3 for c in cols[:3]} | {cols[3]: 1}, None, 1)
    s = LPSession(lp)
    r = s.solve()
    assert s.method == "glpk" and r.objective == pytest.approx(1)
    assert LPSession(lp.copy()).solve(exact=True).objective == 1


def test_glpk_path_declines_infeasible_and_unbounded():
    """It never claims infeasibility or unboundedness: ``None``, and the session asks HiGHS."""
    assert solve_small([{0: 1.0}], 1, [0.0], [0.0, 2.0], [1.0, 3.0]) is None  # 0<=x<=1, 2<=x<=3
    assert solve_small([], 1, [-1.0], [0.0], [float("inf")]) is None  # min -x, x >= 0
    lp = LinearProgram(maximize=True)
    lp.add_var(0, None, 1)
    s = LPSession(lp)
    assert s.solve().status == "unbounded" and s.method == "highs"


def test_warm_start_after_modifications_matches_cold_solve(monkeypatch):
    """A leximin-like sequence: solve, freeze a row, change a coefficient, add a row; every re-solve
    (warm-started from GLPK's previous basis) equals a cold HiGHS solve of the same LP."""
    rng = random.Random(3)
    for _ in range(60):
        lp = LinearProgram(maximize=True)
        n = rng.randint(2, 5)
        xs = [lp.add_var(0, None, 0) for _ in range(n)]
        t = lp.add_var(None, None, 1)
        for _ in range(rng.randint(1, 3)):
            lp.add_row({c: rng.randint(1, 5) for c in xs}, None, rng.randint(1, 20))
        score_rows = [lp.add_row({xs[j]: Fraction(1, rng.randint(1, 4)), t: -1}, 0, None) for j in range(n)]
        s = LPSession(lp)
        for i in score_rows[: rng.randint(1, n)]:
            r = s.solve()
            h = _highs(s.lp, False, monkeypatch)
            assert r.status == h.status == "optimal"
            assert r.objective == pytest.approx(h.objective, rel=1e-9, abs=1e-9)
            s.set_coef(i, t, 0)
            s.set_row_bounds(i, r.x[t], None)
        s.add_row({xs[0]: 1}, None, 100)
        r, h = s.solve(exact=True), _highs(s.lp, True, monkeypatch)
        assert r.status == h.status and r.objective == h.objective


@pytest.mark.parametrize("name", ["drfh", "tsf", "tsf-er", "tsf-er-maxmin", "drf-er", "c-drfh"])
def test_mechanisms_exact_totals_same_with_and_without_glpk(name, monkeypatch):
    """Leximin / Algorithm 1 totals are unique, so the exact totals must be identical whichever float
    solver found the basis (the split over servers may differ: another optimal vertex), and the float
    totals must agree within 1e-9.  Random environments of the mechanism's setting (placement, task
    bounds, external resources, zero demands and capacities, weights) drawn as the engines draw them."""
    import mechanisms
    from verifier.engines.strategies.decode import decode_environment, env_bytes
    from verifier.engines.strategies.domain import domain_for

    mech = mechanisms.get(name)
    dom = domain_for(mech.setting, max_users=4, max_servers=3, max_resources=3, max_external=2)
    rng = random.Random(11)
    for _ in range(40):
        J, S, R = rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3)
        K = rng.randint(0, 2) if dom.external else 0
        env = decode_environment(dom, J, S, R, K, bytes(rng.getrandbits(8) for _ in range(env_bytes(dom))))
        new_x, new_f = mechanisms.allocate(mech, env, exact=True), mechanisms.allocate(mech, env, exact=False)
        with monkeypatch.context() as mp:
            mp.setattr(L, "SMALL_LP_MAX", -1)
            old_x, old_f = mechanisms.allocate(mech, env, exact=True), mechanisms.allocate(mech, env, exact=False)
        assert new_x.totals() == old_x.totals(), env.to_dict()
        assert new_f.totals() == pytest.approx(old_f.totals(), rel=1e-9, abs=1e-9)


def test_infeasibility_proved_by_the_dual_ray_is_confirmed_by_z3():
    """Every random LP that an exact solve calls infeasible through HiGHS's dual ray (the Farkas check,
    ``farkas.ray_proves_infeasible``) is infeasible for z3's rational simplex too."""
    from mechverify.lp import solve_z3

    rng = random.Random(21)
    proved = 0
    for it in range(300):
        lp = _rand_lp(rng, it % 2 == 1)
        r = LPSession(lp.copy()).solve(exact=True)
        if r.method == "farkas":
            proved += 1
            assert r.status == "infeasible" and solve_z3(lp).status == "infeasible", it
    assert proved >= 20


_GUARDS = r'''
from mechverify.small_lp import solve_small as S
inf, nan = float("inf"), float("nan")
cases = [
    ([{0: nan}], 1, [1.0], [0.0, 0.0], [inf, 1.0]),    # a NaN coefficient
    ([{0: inf}], 1, [1.0], [0.0, 0.0], [inf, 1.0]),    # an infinite coefficient
    ([{3: 1.0}], 1, [1.0], [0.0, 0.0], [inf, 1.0]),    # a column index out of range
    ([{0: 1.0}], 1, [nan], [0.0, 0.0], [inf, 1.0]),    # a NaN cost
    ([{0: 1.0}], 1, [1.0], [nan, 0.0], [inf, 1.0]),    # a NaN bound
    ([{0: 1.0}], 1, [1.0], [0.0, 2.0], [inf, 1.0]),    # an empty row range
    ([{0: 1.0}], 1, [1.0], [-inf, -inf], [-inf, 1.0]),  # an upper bound of -inf
    ([{}], 0, [], [2.0], [1.0]),                       # no column, empty range
]
print([S(*c) is None for c in cases])
bad_start = S([{0: 1.0}], 1, [-1.0], [0.0, -inf], [inf, 1.0], start=(["B"], ["B"]))  # two basics, one row
print(bad_start.x, S([], 0, [], [], []).x)
# a basic column without entries: GLPK 5.0 aborts in its factorization (bflib/sgf.c) -- the start is dropped
empty_basic = S([{1: 1.0}], 2, [1.0, 0.0], [0.0, 0.0, 0.0], [inf, inf, 1.0], start=(["B", "L"], ["L"]))
print(empty_basic.x, S([{0: 1e300}], 1, [1.0], [0.0, 0.0], [inf, 1.0]))
# random LPs with numbers from 1e-300 to 1e300 and random starting bases (singular ones included):
# GLPK's pricing overflowed and aborted on such numbers before the magnitude guard
import random
rng = random.Random(5)
def val():
    e = rng.choice([0, 0, 1, 2, 30, 300])
    return rng.choice([-1, 1]) * rng.random() * 10 ** rng.randint(-e, e)
solved = 0
for _ in range(3000):
    n, m = rng.randint(1, 10), rng.randint(0, 10)
    rows = [{c: val() for c in range(n) if rng.random() < 0.5} for _ in range(m)]
    lo, up = [], []
    for k in range(n + m):
        t = rng.random()
        a, b = sorted([val(), val()])
        lo.append(0.0 if t < 0.4 else -inf if t < 0.6 else a)
        up.append(inf if t < 0.4 else b)
    start = ([rng.choice("BLUZ") for _ in range(n)], [rng.choice("BLUZ") for _ in range(m)]) if rng.random() < 0.5 else None
    solved += S(rows, n, [val() if rng.random() < 0.6 else 0.0 for _ in range(n)], lo, up, start) is not None
print(solved > 100)
'''


def test_invalid_input_never_reaches_glpk():
    """GLPK aborts the process (no exception) on invalid bounds, indices or numbers, on numbers near
    1e300 and on a starting basis with an empty basic column; ``solve_small`` must return None (or drop
    the start) before calling it, repair a start that is not a basis, and survive random LPs with
    extreme numbers and random starts.  Run in a child process so that a regression fails this test
    instead of killing the test session."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _GUARDS], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[:4] == ["[True, True, True, True, True, True, True, True]", "[1.0] []",
                                          "[0.0, 0.0] None", "True"]
