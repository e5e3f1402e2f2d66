"""MNW's and CRU's exact allocations on the residual environments of seed 004 Table 4's indivisible traces, held
equal to the code the faster paths replaced (docs/performance.md, "Seed 004 Table 4 columns on a quiet box").

* ``mnw``: ``_exact_candidate`` now checks a candidate before solving its feasibility LP and decides the
  first-order check by rigorous float bounds (``_float_bounds``) before an exact LP; the reference below is the
  previous ``_exact_candidate`` verbatim (every candidate's LP solved exactly, then every check exactly).
* ``cru``: a saturated set whose LP contains the rows of an earlier set's Farkas certificate is skipped; the
  reference is ``cru`` with no certificate kept (``_farkas_rows`` answering None: every set's LP solved).

The environments are what the lift (``indivisible.residual_rule``) hands the mechanism at the first steps of the
seed 004 workload's traces (the first ``N`` calls of a run, deterministic: no clock involved).
"""
from __future__ import annotations

import importlib
from fractions import Fraction
from typing import Optional

import numpy as np

import mechanisms
import mechanisms.core.indivisible as indivisible
from mechanisms.core.indivisible import DEFAULT_OVERHEAD, indivisible_name
from mechanisms.core.time import lift
from mechverify.job_trace import parse_job_trace
from mechverify.lp import LinearProgram, LPSession
from mechverify.workloads import get as get_workload
from simulation.simulate import simulate

MNW = importlib.import_module("mechanisms.paper.external_resources.mnw")
CRU = importlib.import_module("mechanisms.paper.external_resources.cru")


class _Enough(BaseException):
    """Stops a run once enough residual environments are collected."""


def residuals(mech: str, point: dict, seed: int, n: int, skip: int = 0) -> list:
    """The environments ``mech`` is called on (exact) by the indivisible lift (slot 256 s, overhead 1/4 s: Table
    4's) over the ``seed004`` trace ``point``/``seed``: calls ``skip`` to ``skip + n - 1`` (fewer if the run ends
    first)."""
    envs: list = []
    seen = [0]
    call = indivisible.call

    def record(m, env, *args, **kw):
        seen[0] += 1
        if seen[0] > skip:
            envs.append(env)
            if len(envs) >= n:
                raise _Enough
        return call(m, env, *args, **kw)

    ex = parse_job_trace(get_workload("seed004").jobs(np.random.default_rng(seed), **point))
    indivisible.call = record
    try:
        simulate(lift(mechanisms.get(mech), indivisible_name(Fraction(256), DEFAULT_OVERHEAD)), ex, trace="seed004",
                 properties=())
    except _Enough:
        pass
    finally:
        indivisible.call = call
    return envs


def _old_exact_candidate(env, poly, part, w, Xq) -> Optional[tuple[list, dict]]:
    """``mnw._exact_candidate`` before the faster path (the reference, verbatim)."""
    tried = []
    if any(Xq[j] <= 0 for j in part):
        return None
    lin = poly.lp.copy()
    lin.set_cost({col: w[j] / Xq[j] for j in part for _, col in poly.user_vars[j]})
    lin.maximize = True
    r = LPSession(lin).solve(exact=True)
    if r.ok:
        v = {j: sum((r.x[col] for _, col in poly.user_vars[j]), Fraction(0)) for j in part}
        tried.append((v, r.x))
    for den in (10 ** 2, 10 ** 4, 10 ** 6, 10 ** 9):
        v = {j: Xq[j].limit_denominator(den) for j in part}
        if any(tv == v for tv, _ in tried):
            continue
        fe = poly.lp.copy()
        for j in part:
            fe.add_row(poly.total(j), v[j], v[j])
        fe.set_cost({})
        rr = LPSession(fe).solve(exact=True)
        if rr.ok:
            tried.append((v, rr.x))
    for v, x in tried:
        if any(v[j] <= 0 for j in part):
            continue
        chk = poly.lp.copy()
        chk.set_cost({col: w[j] / v[j] for j in part for _, col in poly.user_vars[j]})
        chk.maximize = True
        rc = LPSession(chk).solve(exact=True)
        if rc.ok and rc.objective == sum((w[j] for j in part), Fraction(0)):
            return list(x[:poly.lp.n_cols]), v
    return None


def _same(a, b) -> None:
    assert a.exact == b.exact
    assert a.x == b.x  # exact: Fractions (float mode: the same floats)
    assert repr(a.info) == repr(b.info)


def test_mnw_fast_exact_path_equals_the_reference_on_table4_residuals(monkeypatch):
    """Column 7 (BW = 1) seed 2 (the slowest ``mnw`` cell), its calls 140-169, and column 1 (n = 10) seed 1, its
    first 45: both outcomes occur (a certified rational optimum, returned exact, and none: the float point)."""
    mnw = mechanisms.get("mnw")
    exact_seen = []
    for point, seed, n, skip in (({"bandwidth": "1", "rho": "0.7", "users": "15"}, 2, 30, 140),
                                 ({"bandwidth": "2", "rho": "0.7", "users": "10"}, 1, 45, 0)):
        envs = residuals("mnw", point, seed, n, skip)
        assert len(envs) == n
        for env in envs:
            fast = mnw(env, exact=True)
            with monkeypatch.context() as m:
                m.setattr(MNW, "_exact_candidate", _old_exact_candidate)
                ref = mnw(env, exact=True)
            _same(fast, ref)
            exact_seen.append(fast.exact)
    assert 5 <= exact_seen.count(False) and 5 <= exact_seen.count(True)


def test_cru_certificate_skips_equal_the_full_enumeration_on_table4_residuals(monkeypatch):
    """Column 3 (n = 20) seed 6 (the slowest ``cru`` cell): its early residuals have up to 5 branching users (up to
    32 saturated sets); the skips must happen (fewer LP solves) and change nothing."""
    cru = mechanisms.get("cru")
    solves = {"fast": 0, "ref": 0}
    real = LPSession.solve

    def counting(key):
        def solve(self, exact=False):
            solves[key] += 1
            return real(self, exact)
        return solve

    envs = residuals("cru", {"bandwidth": "2", "rho": "0.7", "users": "20"}, 6, 60)
    assert len(envs) == 60
    for env in envs:
        with monkeypatch.context() as m:
            m.setattr(LPSession, "solve", counting("fast"))
            fast = cru(env, exact=True)
        with monkeypatch.context() as m:
            m.setattr(LPSession, "solve", counting("ref"))
            m.setattr(CRU, "_farkas_rows", lambda *a: None)
            ref = cru(env, exact=True)
        _same(fast, ref)
    assert solves["fast"] < solves["ref"]


def _packing(cost):
    """``max c x`` s.t. ``x1 + 2 x2 <= 4``, ``3 x1 + x2 <= 6``, ``x >= 0``."""
    lp = LinearProgram()
    x1, x2 = lp.add_var(lower=0), lp.add_var(lower=0)
    lp.add_row({x1: 1, x2: 2}, None, 4)
    lp.add_row({x1: 3, x2: 1}, None, 6)
    lp.set_cost({x1: cost[0], x2: cost[1]})
    lp.maximize = True
    return lp


def test_float_bounds_bracket_the_exact_optimum_and_refuse_other_lps():
    """By hand: for ``c = (1, 1)`` both rows bind, ``x = (8/5, 6/5)``, optimum 14/5; for ``c = (1, 0)`` the second
    row alone, ``x1 = 2``, optimum 2 (the prices ``(0, 1/3)``)."""
    for cost, opt in (((1, 1), Fraction(14, 5)), ((1, 0), Fraction(2))):
        lo, up = MNW._float_bounds(_packing(cost))
        assert lo <= opt <= up
        assert float(up - lo) < 1e-12
    neg = _packing((1, 1))
    neg.add_row({0: 1}, 1, None)  # a lower row bound: not a packing LP, no bounds claimed
    assert MNW._float_bounds(neg) is None


def test_step_all_is_the_minimum_of_the_separate_steps():
    """``mnw_ipm._step_all`` (one pass over the joined arrays) gives the float the four ``step_to_boundary`` calls
    gave, on random iterates (steps into and away from the boundary, ties, no negative direction at all) and
    with a NaN quotient (then it is the separate calls)."""
    from mechanisms.paper.external_resources.mnw_ipm import _step_all, step_to_boundary

    rng = np.random.default_rng(4)
    for trial in range(2000):
        k = int(rng.integers(1, 6))
        vs = tuple(rng.random(k) + 1e-3 for _ in range(4))
        dvs = tuple(rng.normal(size=k) * (0 if trial % 7 == 0 else 1) for _ in range(4))
        if trial % 11 == 0:
            dvs = (dvs[0], dvs[0].copy(), dvs[2], dvs[3])
            vs = (vs[0], vs[0].copy(), vs[2], vs[3])
        want = min(step_to_boundary(v, dv) for v, dv in zip(vs, dvs))
        assert _step_all(vs, dvs) == want
    vs = (np.array([np.nan, 1.0]), np.array([0.5]), np.array([1.0]), np.array([1.0]))
    dvs = (np.array([-1.0, 1.0]), np.array([-1.0]), np.array([1.0]), np.array([1.0]))
    assert _step_all(vs, dvs) == min(step_to_boundary(v, dv) for v, dv in zip(vs, dvs)) == 0.5
