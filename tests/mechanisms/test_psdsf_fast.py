"""The fast path of PS-DSF (mechanisms/paper/psdsf/fast.py) gives the exact iteration's allocation.

Pinned results: computed with the exact iteration alone (``psdsf(..., fast=False)`` and
``distributed_fixed_point``) before the fast path existed; the fast path must give the same
``Fraction``s.  Besides, on random instances of the project's strategies: the same allocation as the
exact iteration, every column is its server's exact water filling given the others (the definition of
a PS-DSF allocation as a fixed point), and the integer Theorem-1/2 check agrees with ``theorems.py``.
"""
from __future__ import annotations

import random
from fractions import Fraction as F

from hypothesis import HealthCheck, given, settings

import mechanisms
from mechanisms.paper import psdsf as P
from mechanisms.paper.psdsf import fast
from mechanisms.paper.psdsf.distributed import distributed_fixed_point
from mechanisms.paper.psdsf.iteration import algorithm_i
from mechverify.instances import parse_environment
from mechverify.strategies import environments


def _env(servers, users, resources=("r0", "r1")):
    return parse_environment({"resources": list(resources),
                              "servers": [{"name": f"s{s}", "capacity": c} for s, c in enumerate(servers)],
                              "users": [dict({"name": f"u{j}"}, **u) for j, u in enumerate(users)]})


CASES = {
    # gamma ratios equal on both servers: a continuum of PS-DSF splits; Algorithm I stops at its start
    "proportional": _env([[13, 14], [2, 9]], [{"demand": [5, 4]}, {"demand": [4, 3]}, {"demand": [4, 3]}]),
    "three-passes": _env([[20, 5], [10, 4]], [{"demand": [6, 1]}, {"demand": [6, 3]}, {"demand": [4, 5]}]),
    # Algorithm I converges only geometrically here (tests/mechanisms/test_psdsf.py)
    "geometric": _env([[6, 6], [4, 2]], [{"demand": [1, 2], "eligible": ["s1"]},
                                         {"demand": [0, 4], "weight": 2, "eligible": ["s0"]}, {"demand": [4, 4]}]),
    "weights-zeros-placement": _env(
        [[10, 0, 7], ["9/2", 6, 3], [5, 5, 5]],
        [{"demand": [1, 0, 2], "weight": 2}, {"demand": [3, 1, 0], "eligible": ["s1", "s2"]},
         {"demand": ["1/2", 2, 1], "weight": "1/2"}, {"demand": [2, 0, 0]}], ("r0", "r1", "r2")),
}


def _m(rows):
    return [[F(v) for v in row] for row in rows]


# (case, "rdm" | "tdm" | "dist") -> the exact iteration's allocation, computed before the fast path
PINNED = {
    ("proportional", "rdm"): _m([["13/15", "2/15"], ["13/12", "1/6"], ["13/12", "1/6"]]),
    ("proportional", "tdm"): _m([["13/15", "2/15"], ["13/12", "1/6"], ["13/12", "1/6"]]),
    ("proportional", "dist"): _m([["13/15", "2/15"], ["13/12", "1/6"], ["13/12", "1/6"]]),
    ("three-passes", "rdm"): _m([["9/4", 0], ["11/24", "2/3"], ["11/40", "2/5"]]),
    ("three-passes", "tdm"): _m([[2, 0], ["1/3", "2/3"], ["1/5", "2/5"]]),
    ("three-passes", "dist"): _m([["9/4", 0], ["11/24", "2/3"], ["11/40", "2/5"]]),
    ("geometric", "rdm"): _m([[0, 1], [1, 0], ["1/2", 0]]),
    ("geometric", "tdm"): _m([[0, 1], [1, 0], ["1/2", 0]]),
    ("geometric", "dist"): _m([[0, 1], [1, 0], ["1/2", 0]]),
    ("weights-zeros-placement", "rdm"): _m([["45/17", 0, "5/2"], [0, "7/6", "5/6"], [0, 2, 0], ["125/34", 0, 0]]),
    ("weights-zeros-placement", "tdm"): _m([["5/3", 0, 2], [0, "8/9", "1/3"], [0, "11/9", 0], ["55/21", 0, 0]]),
    ("weights-zeros-placement", "dist"): _m([["45/17", 0, "5/2"], [0, "7/6", "5/6"], [0, 2, 0],
                                             ["125/34", 0, 0]]),
}


def _columns_are_water_fillings(env, x, mode):
    for s in range(env.n_servers):
        assert P.server_response(env, x, s, mode) == [x[j][s] for j in range(env.n_users)], s


def test_pinned_results_of_the_exact_iteration():
    """Mechanism outputs (fast path first) equal the pinned exact-iteration results, and so does the
    exact iteration run today; each column is its server's water filling of the others."""
    methods = set()
    for (name, mode), want in PINNED.items():
        env = CASES[name]
        mech = {"rdm": "psdsf-rdm", "tdm": "psdsf-tdm", "dist": "psdsf-distributed"}[mode]
        a = mechanisms.allocate(mech, env, exact=True)
        assert [list(r) for r in a.x] == want, (name, mode)
        methods.add(a.info["method"].split("/")[-1])
        m = "rdm" if mode == "dist" else mode
        _columns_are_water_fillings(env, want, m)
        old = distributed_fixed_point(env, "rdm", "async")[0] if mode == "dist" else P.psdsf(env, m, fast=False)[0]
        assert old == want, (name, mode)
    assert methods == {"pattern-solve", "fixed-point"}  # both ways of the fast path are exercised


def test_geometric_case_is_solved_from_its_pattern():
    env = CASES["geometric"]
    got = fast.fast_fixed_point(env, "rdm")
    assert got is not None and got[0] == PINNED[("geometric", "rdm")]
    assert algorithm_i(env, "rdm")[2] == "pattern-lp"  # the exact iteration needed its pattern LP


def test_continuum_falls_back_to_the_exact_iteration():
    """Proportional gammas: the pattern's linear system is singular (a continuum of fixed points), so
    the float pattern cannot say which one Algorithm I picks; its start is taken only because it is
    proved (in integers) to be the per-server DRF and a fixed point."""
    env = CASES["proportional"]
    data = fast.fast_data(env, "rdm")
    pattern = tuple(fast.float_waterfill([0.0] * 3, data.fw[s], data.fdem[s], data.fcap[s])[1] for s in range(2))
    assert fast.solve_pattern(data, pattern) is None
    assert fast.fast_fixed_point(env, "rdm") == (PINNED[("proportional", "rdm")], 1)
    assert fast.exact_iteration(env, "rdm") == ("done", PINNED[("proportional", "rdm")], 1)


def test_fast_data_matches_gamma():
    env = CASES["weights-zeros-placement"]
    g = P.gamma_matrix(env)
    for mode in ("rdm", "tdm"):
        data = fast.fast_data(env, mode)
        for j in range(env.n_users):
            for s in range(env.n_servers):
                wg = data.wg[j][s]
                assert (wg is None) == (g[j][s] == 0)
                if wg is not None:
                    assert F(*wg) == env.weight[j] * g[j][s]


def test_integer_check_agrees_with_the_theorems():
    """``fixed_point_check`` (integers) == ``not characterisation_violations`` (Fractions) on PS-DSF
    allocations and on perturbations of them (hand-checkable: both are Thm 1 / Thm 2)."""
    rng = random.Random(5)
    seen = set()
    for (name, mode), x in PINNED.items():
        env = CASES[name]
        m = "rdm" if mode == "dist" else mode
        for k in range(30):
            y = [row[:] for row in x]
            if k:
                j, s = rng.randrange(env.n_users), rng.randrange(env.n_servers)
                y[j][s] = max(F(0), y[j][s] + F(rng.randint(-3, 3), rng.randint(1, 8)))
            got = fast.fixed_point_check(env, y, m)
            assert got == (not P.characterisation_violations(env, y, m)), (name, mode, y)
            seen.add(got)
    assert seen == {True, False}


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(environments("psdsf-rdm", max_users=3, max_servers=3, max_resources=2))
def test_fast_path_equals_exact_iteration(env):
    """Random instances of the project's strategies (placement, weights, zero demands): the fast path
    gives the exact iteration's allocation, under RDM, TDM and for the distributed variant."""
    for mode in ("rdm", "tdm"):
        try:
            old = P.psdsf(env, mode, fast=False)[0]
        except P.PSDSFError:
            continue
        new, info = P.psdsf(env, mode)
        assert new == old, (mode, info)
        if info["method"].endswith("pattern-solve"):
            _columns_are_water_fillings(env, new, mode)
    try:
        old = distributed_fixed_point(env, "rdm", "async")[0]
    except P.PSDSFError:
        return
    assert [list(r) for r in mechanisms.allocate("psdsf-distributed", env, exact=True).x] == old


def test_int_pair_exact_phase_then_the_rest_of_the_iteration(monkeypatch):
    """Without the float path: the exact phase on int pairs, then ``iterate`` resumed after its round
    40 (rounded iterates, pattern LP) gives the Fraction iteration's result, round count and method."""
    import mechanisms.paper.psdsf.distributed as D
    import mechanisms.paper.psdsf.iteration as I

    monkeypatch.setattr(I, "fast_fixed_point", lambda *a, **k: None)
    monkeypatch.setattr(D, "fast_fixed_point", lambda *a, **k: None)
    env = CASES["geometric"]
    got = fast.exact_iteration(env, "rdm")
    assert got[0] == "resume" and got[1] == 40
    x, info = P.psdsf(env, "rdm")
    old = algorithm_i(env, "rdm")
    assert (x, info["rounds"], info["method"]) == (old[0], old[1], "algorithm-i/" + old[2]) and old[2] == "pattern-lp"
    env = CASES["weights-zeros-placement"]
    x, info = P.psdsf(env, "tdm")
    assert x == PINNED[("weights-zeros-placement", "tdm")] and info["method"] == "algorithm-i/pattern-lp"
    a = mechanisms.allocate("psdsf-distributed", env, exact=True)
    assert [list(r) for r in a.x] == PINNED[("weights-zeros-placement", "dist")]
