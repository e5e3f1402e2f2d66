"""The exact LP path repairs HiGHS's basis by rational simplex pivots instead of falling back to z3.

PS-DSF's pattern LP (mechanisms/paper/psdsf/iteration.py) has 80-bit right-hand sides; HiGHS's basis is
optimal only within its 1e-7 tolerances and its exact basic solution violated rows by ~1e-24, so every
such LP used to be re-solved by z3.  Now exact simplex pivots from HiGHS's basis and, when they run
out of budget, iterative refinement with HiGHS repair the basis.  Here z3 is made to raise, and the results must equal the ones the
z3 path gives (the LP optimum value is unique; the vertices agree on these instances too).
"""
from __future__ import annotations

import random
from fractions import Fraction as F

import pytest

import mechanisms
import mechverify.lp as lp_mod
from mechverify import exact_basis
from mechverify.instances import parse_environment
from mechverify.lp import LinearProgram, solve


def _instances(n: int, seed: int):
    """The random 3 users x 2 servers x 2 resources instances of benchmarks/bench_mechanisms.py."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        out.append({"resources": ["r0", "r1"],
                    "servers": [{"name": f"s{s}", "capacity": [rng.randint(1, 20) for _ in range(2)]}
                                for s in range(2)],
                    "users": [{"name": f"u{j}", "demand": [rng.randint(1, 6) for _ in range(2)]}
                              for j in range(3)]})
    return out


# indices (seed 0) whose PS-DSF run ends with the pattern LP, which went to z3 before the repair
USED_Z3 = [10, 12, 28, 32, 37, 44]
# HiGHS calls instance 20's pattern LP at pass 40 infeasible: exact pivots prove it (z3 confirmed it before)
INFEASIBLE_FIRST = [20]


def _no_z3(*args, **kwargs):
    raise AssertionError("z3 fallback called")


@pytest.mark.parametrize("pivots", [True, False])
@pytest.mark.parametrize("name", ["psdsf-rdm", "psdsf-tdm"])
def test_pattern_lp_needs_no_z3_and_matches_the_z3_path(monkeypatch, name, pivots):
    """Both repairs on their own: exact pivots, and (no pivots allowed) iterative refinement."""
    import mechanisms.paper.psdsf.iteration as psdsf_iteration

    # these instances' pattern LPs are the subject: skip PS-DSF's float path (it solves them without LP)
    monkeypatch.setattr(psdsf_iteration, "fast_fixed_point", lambda *a, **k: None)
    dicts = _instances(max(USED_Z3) + 1, 0)
    used = USED_Z3 + (INFEASIBLE_FIRST if pivots else [])
    mech = mechanisms.get(name)
    with monkeypatch.context() as m:
        m.setattr(lp_mod, "_exact_from_basis", lambda *a, **k: None)  # the old path: every such LP by z3
        old = [mechanisms.allocate(mech, parse_environment(dicts[i]), exact=True) for i in used]
    monkeypatch.setattr(lp_mod, "solve_z3", _no_z3)
    if not pivots:
        monkeypatch.setattr(exact_basis, "PIVOT_WORK", -1)
    new = [mechanisms.allocate(mech, parse_environment(dicts[i]), exact=True) for i in used]
    for a, b in zip(old, new):
        assert b.info["method"] == "algorithm-i/pattern-lp"
        assert b.exact and b.x == a.x


@pytest.mark.parametrize("pivots", [True, False])
def test_basis_optimal_only_within_tolerance_is_repaired(monkeypatch, pivots):
    """min e s.t. e >= x - a, e >= a - x, x <= a - 2^-90 (a = 1/3): by hand x = a - 2^-90, e = 2^-90.
    HiGHS cannot see 2^-90; its basis (x = a, e = 0) violates x <= a - 2^-90 exactly."""
    monkeypatch.setattr(lp_mod, "solve_z3", _no_z3)
    if not pivots:
        monkeypatch.setattr(exact_basis, "PIVOT_WORK", -1)
    a, eps = F(1, 3), F(1, 2 ** 90)
    lp = LinearProgram()
    x, e = lp.add_var(0, None, 0), lp.add_var(0, None, 1)
    lp.add_row({e: 1, x: -1}, -a, None)
    lp.add_row({e: 1, x: 1}, a, None)
    lp.add_row({x: 1}, None, a - eps)
    res = solve(lp, exact=True)
    assert res.ok and res.exact and res.method == "basis"
    assert res.x == [a - eps, eps] and res.objective == eps
    # duals by hand: the rows e + x >= a and x <= a - eps are tight; d obj/d b = (0, 1, -1)
    assert res.row_dual == [0, 1, -1]


def test_infeasible_beyond_double_precision_is_proved_without_z3(monkeypatch):
    """x >= 1/3 and x <= 1/3 - 2^-90: infeasible, but within HiGHS's tolerance of feasible."""
    monkeypatch.setattr(lp_mod, "solve_z3", _no_z3)
    lp = LinearProgram()
    x = lp.add_var(0, None, 1)
    lp.add_row({x: 1}, F(1, 3), None)
    lp.add_row({x: 1}, None, F(1, 3) - F(1, 2 ** 90))
    res = solve(lp, exact=True)
    assert res.status == "infeasible" and res.exact and res.method == "basis"


def test_sparse_solve_agrees_with_the_definition(monkeypatch):
    """Random sparse square systems (exact data): the peeled solve satisfies every equation exactly,
    and None only for singular matrices (checked by the rank of the dense matrix)."""
    from flint import fmpq_mat

    monkeypatch.setattr(exact_basis, "DENSE_BELOW", 0)  # peel even the small systems

    rng = random.Random(3)
    solved = singular = 0
    for _ in range(400):
        k = rng.randint(1, 7)
        rows = [{p: F(rng.choice([-3, -2, -1, 1, 2, 3]), rng.randint(1, 4)) for p in range(k) if rng.random() < 0.45}
                for _ in range(k)]
        rhs = [F(rng.randint(-5, 5), rng.randint(1, 3)) for _ in range(k)]
        z = exact_basis._sparse_solve(rows, rhs)
        M = fmpq_mat(k, k)
        for r, row in enumerate(rows):
            for p, v in row.items():
                M[r, p] = exact_basis._q(v)
        regular = M.rref()[1] == k
        assert (z is not None) == regular
        if z is None:
            singular += 1
            continue
        solved += 1
        for r, row in enumerate(rows):
            assert sum((v * z[p] for p, v in row.items()), F(0)) == rhs[r]
    assert solved > 50 and singular > 50
