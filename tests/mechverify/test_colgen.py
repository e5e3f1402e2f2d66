"""Column generation (``mechverify.colgen``) and the solver deadline (``mechverify.deadline``).

Column generation must give the whole LP's optimum: with the size threshold lowered to 0 every float
leximin round goes through it, and the task totals and levels must agree with the plain session's
(the totals of a leximin allocation are unique, so any correct LP path gives the same numbers).
"""
from __future__ import annotations

import random
import zlib

import pytest

import mechverify.lexmaxmin as lexmaxmin
from mechanisms import get
from mechverify import colgen, deadline
from mechverify.instances import parse_environment
from mechverify.lp import LinearProgram, LPSession

from tests.helpers import random_instance


def _instance(rng: random.Random, users: int, servers: int, resources: int, placement: float) -> dict:
    return random_instance(rng, users, servers, resources, capacity=(0, 20), tasks=0.2, task_range=(1, 10),
                           eligible=placement)


def _close(a, b) -> bool:
    return all(abs(float(x) - float(y)) <= 1e-6 * max(1.0, abs(float(y))) for x, y in zip(a, b))


@pytest.mark.parametrize("name", ["tsf", "c-drfh", "drfh"])
def test_column_generation_agrees_with_the_whole_lp(monkeypatch, name):
    rng = random.Random(zlib.crc32(name.encode()))  # the same instances in every run (str hash is salted)
    mech = get(name)
    envs = []
    for _ in range(60):
        d = _instance(rng, rng.randint(2, 8), rng.randint(2, 6), rng.randint(1, 3),
                      placement=0.5 if mech.setting.placement else 0.0)
        envs.append(parse_environment(d))
    plain = [mech(e, exact=False) for e in envs]
    colgen.forget_layouts()
    monkeypatch.setattr(lexmaxmin, "COLGEN_MIN_COLS", 0)
    monkeypatch.setattr(colgen, "INITIAL_PER_ROW", 1)  # small masters: pricing must bring columns in
    monkeypatch.setattr(colgen, "ADD_PER_ROW", 1)
    calls = []
    real = colgen.ColumnGenerationSession.solve

    def counted(self, exact=False):
        calls.append(1)
        return real(self, exact)
    monkeypatch.setattr(colgen.ColumnGenerationSession, "solve", counted)
    for e, p in zip(envs, plain):
        c = mech(e, exact=False)
        assert _close(c.totals(), p.totals()), (e, c.totals(), p.totals())
        assert _close([v or 0 for v in c.info["levels"]], [v or 0 for v in p.info["levels"]])
    assert len(calls) >= len(envs)  # the column-generation path was really taken


def test_column_generation_warm_start_from_a_remembered_layout(monkeypatch):
    """A misreport of the same layout (same rows and columns) starts from the last basis: same answer."""
    monkeypatch.setattr(lexmaxmin, "COLGEN_MIN_COLS", 0)
    colgen.forget_layouts()
    rng = random.Random(7)
    d = _instance(rng, 12, 6, 3, placement=0.0)
    tsf = get("tsf")
    first = tsf(parse_environment(d), exact=False)
    assert colgen._LAST  # remembered
    d["users"][0]["demand"] = [0, 5, 2]
    warm = tsf(parse_environment(d), exact=False)
    colgen.forget_layouts()
    cold = tsf(parse_environment(d), exact=False)
    monkeypatch.setattr(lexmaxmin, "COLGEN_MIN_COLS", 10 ** 9)
    whole = tsf(parse_environment(d), exact=False)
    assert _close(warm.totals(), cold.totals()) and _close(warm.totals(), whole.totals())
    assert not _close(first.totals(), whole.totals())  # the misreport did change the allocation


def test_algorithm1_float_path_shares_the_session_and_its_layout_memory(monkeypatch):
    """Algorithm 1's float path builds LP-TaskShare as arrays and solves it in the same session
    (``from_arrays``): a misreported demand has the truthful LP's layout and starts from its final basis;
    warm, cold and exact give the same totals (Algorithm 1's totals are unique)."""
    from mechanisms.paper import external_resources
    from mechanisms.paper.normalisers import etas, etas_float

    rng = random.Random(3)
    d = random_instance(rng, 12, 6, 2, capacity=(1, 20), external=(20, 80), external_demand=(0, 3), tasks=0.3,
                        task_range=(1, 9))
    colgen.forget_layouts()
    env = parse_environment(d)
    external_resources.algorithm1(env, "tsf-er", False, etas_float(env), cg_threshold=0)
    assert [k[0] for k in colgen._LAST] == ["algorithm1"]
    starts = []
    real = colgen.ColumnGenerationSession._set_basis
    monkeypatch.setattr(colgen.ColumnGenerationSession, "_set_basis",
                        lambda self, c, r: (starts.append(1), real(self, c, r)))
    d["users"][0]["demand"] = [v + 1 for v in d["users"][0]["demand"]]
    dev = parse_environment(d)
    warm = external_resources.algorithm1(dev, "tsf-er", False, etas_float(dev), cg_threshold=0)
    assert starts == [1] and warm.info["column_generation"]["used"]
    colgen.forget_layouts()
    cold = external_resources.algorithm1(dev, "tsf-er", False, etas_float(dev), cg_threshold=0)
    exact = external_resources.algorithm1(dev, "tsf-er", True, etas(dev))
    assert starts == [1]  # the cold run did not start from a remembered basis
    assert _close(warm.totals(), exact.totals()) and _close(cold.totals(), exact.totals())


def test_session_modifications_keep_generated_columns_out():
    """Column bounds and costs can only change for columns that column generation never leaves out.
    By hand: max g s.t. x + y <= 4, x + y - g >= 0, 0 <= g <= 3 gives g = 3 (the bound binds)."""
    lp = LinearProgram(maximize=True)
    x = lp.add_var(0, None, 1)
    y = lp.add_var(0, None, 2)
    g = lp.add_var(0, None, 0)
    r = lp.add_row({x: 1, y: 1}, None, 4)
    lp.add_row({x: 1, y: 1, g: -1}, 0, None)
    s = colgen.ColumnGenerationSession(lp, [r], per_row=1)
    with pytest.raises(ValueError, match="never leaves out"):
        s.set_col_bounds(x, 0, 1)
    s.set_col_bounds(g, 0, 3)
    s.set_cost({g: 1})
    res = s.solve()
    assert res.ok and res.objective == 3.0 and lp.col_upper[g] == 3


def test_column_generation_refuses_exact_solves():
    lp = LinearProgram(maximize=True)
    x = lp.add_var(0, None, 1)
    r = lp.add_row({x: 1}, None, 3)
    s = colgen.ColumnGenerationSession(lp, [r])
    with pytest.raises(ValueError, match="float path"):
        s.solve(exact=True)
    res = s.solve()
    assert res.ok and res.x == [3.0]


def _tiny() -> LinearProgram:
    lp = LinearProgram(maximize=True)
    x = lp.add_var(0, None, 1)
    y = lp.add_var(0, None, 2)
    lp.add_row({x: 1, y: 1}, None, 4)
    lp.add_row({y: 1}, None, 3)
    return lp  # optimum x = 1, y = 3, objective 7


def test_an_lp_solve_after_the_deadline_raises_budget_exhausted():
    s = LPSession(_tiny())
    with deadline.scope(deadline.now() - 1.0):
        with pytest.raises(deadline.BudgetExhausted, match="^budget: an LP solve was not started"):
            s.solve()
    with deadline.scope(deadline.now() + 60.0):  # within a scope with time left: solved as usual
        res = s.solve()
    assert res.ok and res.objective == 7.0
    res = LPSession(_tiny()).solve(exact=True)  # outside any scope: no limit at all
    assert res.ok and res.objective == 7


def test_domination_lp_by_column_generation_agrees_with_the_whole_lp(monkeypatch):
    """PO's domination LP (``mechverify.domination``): the same optimum by column generation, with and
    without the allocation's support as the first columns (without it the first master is often
    infeasible -- targets need columns left out -- and every column is brought in)."""
    from mechverify import domination

    rng = random.Random(11)
    tsf = get("tsf")
    checked = 0
    monkeypatch.setattr(colgen, "INITIAL_PER_ROW", 1)
    monkeypatch.setattr(colgen, "ADD_PER_ROW", 1)
    fallbacks = []
    real_add = colgen.ColumnGenerationSession._add

    def add(self, cols):
        if self.h.getModelStatus() == colgen.highspy.HighsModelStatus.kInfeasible:
            fallbacks.append(len(cols))
        return real_add(self, cols)
    monkeypatch.setattr(colgen.ColumnGenerationSession, "_add", add)
    for _ in range(40):
        env = parse_environment(_instance(rng, rng.randint(2, 8), rng.randint(2, 6), rng.randint(1, 3), 0.5))
        a = tsf(env, exact=False)
        u = [float(v) * (1 - 1e-9) for v in a.totals()]
        monkeypatch.setattr(domination, "COLGEN_MIN_COLS", 10 ** 9)
        whole, _ = domination.dominating_allocation(env, u, "rdm", False)
        monkeypatch.setattr(domination, "COLGEN_MIN_COLS", 0)
        colgen.forget_layouts()
        with_support, _ = domination.dominating_allocation(env, u, "rdm", False, support=a.x)
        colgen.forget_layouts()
        without, _ = domination.dominating_allocation(env, u, "rdm", False)
        assert whole is not None and _close([with_support, without], [whole, whole]), (whole, with_support, without)
        checked += 1
    assert checked == 40 and fallbacks  # the infeasible-master path was taken


def test_a_warm_resolve_without_a_verdict_is_retried_from_scratch(monkeypatch):
    """HiGHS's warm primal re-solve of a restricted master can end without a verdict ("Unknown" was seen
    after a remembered basis of the same layout): the session solves that master once more from scratch.
    Simulated with an iteration limit of 0 on the first warm re-solve; the answer must be the whole LP's."""
    monkeypatch.setattr(lexmaxmin, "COLGEN_MIN_COLS", 10 ** 9)
    rng = random.Random(3)
    env = parse_environment(_instance(rng, 8, 6, 3, placement=0.0))
    whole = get("tsf")(env, exact=False)
    monkeypatch.setattr(lexmaxmin, "COLGEN_MIN_COLS", 0)
    monkeypatch.setattr(colgen, "INITIAL_PER_ROW", 1)  # pricing must add columns: re-solves need pivots
    monkeypatch.setattr(colgen, "ADD_PER_ROW", 1)
    colgen.forget_layouts()
    statuses = []
    real = colgen.run_highs

    def stalling(h, left=None):
        stall = len(statuses) == 1  # the first warm re-solve
        if stall:
            h.setOptionValue("simplex_iteration_limit", 0)
        try:
            real(h, left)
        finally:
            if stall:
                h.setOptionValue("simplex_iteration_limit", 2 ** 31 - 1)
        statuses.append(h.modelStatusToString(h.getModelStatus()))
    monkeypatch.setattr(colgen, "run_highs", stalling)
    cg = get("tsf")(env, exact=False)
    assert statuses[1] == "Iteration limit reached" and statuses[2] == "Optimal"  # retried, then solved
    assert _close(cg.totals(), whole.totals())

