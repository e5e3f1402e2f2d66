"""convergence, work-conserving and burst-gaming (docs/executions.md): hand-derived traces where each is
violated and where it is not, planted bugs the search finds where the correct mechanism is not refuted, and a
tenant's resubmission stored and replayed."""
import json
import random
from dataclasses import replace
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.core.registry import builtin
from mechanisms.core.time import execute, lift
from mechverify.allocation import Allocation
from mechverify.execution import parse_execution
from mechverify.trace_deviations import Part, TraceResubmission, trace_deviation_from_dict
from mechverify.numbers import InstanceError
from verifier.engines.traces import TraceSpec, minimise, search_traces
from verifier.properties import get_property
from verifier.properties.base import Witness
from verifier.results import Verdict
from verifier.store import persist, replay


def judge(mech, prop, variant, ex, dev=None):
    p = get_property(prop)
    return p.judge(mech, ex, variant, execute(mech, ex), True, dev, execute(mech, ex, True, dev) if dev else None)


def pool(users, events, end, cap=4, **kw):
    return parse_execution({"resources": ["r"], "servers": [{"name": "s", "capacity": [cap]}], "users": users,
                            "events": events, "end": end, **kw})


def one(name, tasks=None, **kw):
    return {"name": name, "demand": [1], **({"tasks": tasks} if tasks is not None else {}), **kw}


class _Stepper:
    """A planted stepper: the rows ``first`` at step 0, ``then`` at every later step (one server)."""

    def __init__(self, first, then):
        self.first, self.then = first, then

    def step(self, ctx):
        rows = self.first if ctx.index == 0 else self.then
        num = F if ctx.exact else float
        return Allocation(ctx.env, tuple((num(v),) for v in rows), "planted", ctx.exact)


class _FirstAlone:
    """Planted bug: at step 0 the first present user runs all it can alone (one server), the others nothing;
    DRF at every later step."""

    def step(self, ctx):
        env, drf = ctx.env, mechanisms.get("drf")
        if ctx.index:
            return drf(env, ctx.exact)
        d, c = env.demand[0], env.capacity[0]
        x = min(F(cr) / dr for cr, dr in zip(c, d) if dr)
        x = x if env.tasks[0] is None else min(x, env.tasks[0])
        num = F if ctx.exact else float
        rows = ((num(x),),) + tuple((num(0),) for _ in env.users[1:])
        return Allocation(env, rows, "first-alone", ctx.exact)


def _planted(stepper, name="planted"):
    drf = mechanisms.get("drf+recompute")
    return replace(drf, name=name, time=replace(drf.time, begin=lambda m, ex, exact: stepper()))


# ---------------------------------------------------------------------- convergence
ROUNDS = [{"t": t, "kind": "round"} for t in (1, 2, 3)]


def test_convergence_time_is_solved_exactly():
    """Pool 2, u1 and u2 unbounded (demand 1), rounds at 1, 2, 3, until 12: one stretch [0, 12), both backlogged,
    entitlement shares 1/2 each.  The planted stepper gives (2, 0) in [0, 1) and (1, 1) after: at T >= 1 u1 has
    2 + (T - 1) = T + 1 of 2T, a share (T + 1) / 2T, within 1/20 of 1/2 iff 1/(2T) <= 1/20, i.e. from T = 10 on.
    (The exact solve, in the last step from t = 3: u1 has 4 of 6, rates 1 and 1; 4 + tau <= 11/20 (6 + 2 tau)
    iff tau >= 7: t = 10.)  Time to converge 10: violated beyond max_wait 9 (by 1), not beyond max_wait 10.
    DRF gives (1, 1) throughout: within from the start, 0."""
    users = [one("u1"), one("u2")]
    mech = _planted(lambda: _Stepper((2, 0), (1, 1)))
    for bound, want in ((None, F(10)), (9, F(1)), (10, F(0))):
        ex = pool(users, ROUNDS, 12, cap=2, **({"max_wait": bound} if bound is not None else {}))
        j = judge(mech, "convergence", "entitlement", ex)
        assert j.measure == want and j.violated == (want > 0) and j.utilities["within 1/20 from"] == 10
    j = judge(mechanisms.get("drf+recompute"), "convergence", "entitlement", pool(users, ROUNDS, 12, cap=2))
    assert j.measure == 0 and not j.violated


def test_convergence_never_reached_is_the_stretch_length():
    """drf+irrevocable, pool 4: a (unbounded) holds all 4 from 0; b arrives at 1 and gets nothing until 3.  Only
    [1, 3) has two backlogged users (a wants more than 4, b gets 0): shares (1, 0) against (1/2, 1/2), never
    within 1/20 -- the stretch's length 2, beyond max_wait 1 by 1; drf+recompute gives (2, 2): 0."""
    ex = pool([one("a")], [{"t": 1, "kind": "arrive", "user": one("b")}], 3, max_wait=1)
    j = judge(mechanisms.get("drf+irrevocable"), "convergence", "entitlement", ex)
    assert j.violated and j.measure == 1 and j.users == ("a", "b") and j.utilities["within 1/20 from"] == 3
    assert judge(mechanisms.get("drf+recompute"), "convergence", "entitlement", ex).measure == -1
    alone = pool([one("a")], [], 3)  # never two backlogged users: not judged
    assert judge(mechanisms.get("drf+recompute"), "convergence", "entitlement", alone).measure is None


def test_convergence_search_finds_a_planted_bug_not_drf():
    """On one resource (where DRF's shares are the entitlement shares among backlogged users) drf+recompute is
    not refuted; a planted stepper serving the first user alone at step 0 is."""
    spec = TraceSpec(seed=1, budget=60, max_trials=150, accept=lambda ex: len(ex.resources) == 1)
    prop = get_property("convergence")
    ok = search_traces(mechanisms.get("drf+recompute"), prop, "entitlement", spec)
    assert ok.verdict is Verdict.NOT_REFUTED and ok.trials == 150, ok.note
    bad = search_traces(_planted(_FirstAlone), prop, "entitlement", spec)
    assert bad.verdict is Verdict.VIOLATED and bad.certificate.gap > 0


# ---------------------------------------------------------------------- work-conserving
def test_work_conserving_by_hand():
    """dynamic-drf, pool 4, n = 2 users in the execution: a (unbounded) alone in [0, 1) is water-filled within
    k/n = 1/2 of the pool -- 2 tasks, and 2 more fit in the idle 2: a fitting task waits 1.  From 1 both hold 2,
    the pool is full.  drf+recompute gives a all 4 at once: 0."""
    ex = pool([one("a")], [{"t": 1, "kind": "arrive", "user": one("b")}], 3)
    j = judge(mechanisms.get("dynamic-drf"), "work-conserving", "idle", ex)
    assert j.violated and j.measure == 1 and j.users == ("a",) and j.utilities["fits for a"] == 2
    assert j.per_step == [1, 0]
    j = judge(mechanisms.get("drf+recompute"), "work-conserving", "idle", ex)
    assert j.measure == 0 and not j.violated


def test_work_conserving_reads_whole_requests():
    """kueue-afs admits a workload's whole request: pool 4, u1 and u2 each 3 tasks of 1 in queue q.  u1's 3 are
    admitted; u2's 3 do not fit in the 1 left, so nothing that fits waits: 0.  Read as a whole-task policy
    that places single tasks (the same port with whole_requests off), one of u2's tasks fits in that 1 for the
    whole run [0, 2): 2."""
    ex = pool([one("u1", 3, queue="q"), one("u2", 3, queue="q")], [], 2, queues=[{"name": "q"}])
    kueue = mechanisms.get("kueue-afs")
    steps = execute(kueue, ex)
    assert [steps[0].utilities()[u] for u in ("u1", "u2")] == [3, 0]
    prop = get_property("work-conserving")
    assert prop.judge(kueue, ex, "idle", steps, True).measure == 0
    tasks = replace(kueue, setting=replace(kueue.setting, whole_requests=False))
    j = prop.judge(tasks, ex, "idle", steps, True)
    assert j.violated and j.measure == 2 and j.users == ("u2",)


def _half_drf(env, exact=False):
    """Planted bug: DRF's allocation halved (half of what it would run stays idle)."""
    alloc = mechanisms.get("drf")(env, exact)
    return Allocation(env, tuple(tuple(v / 2 for v in row) for row in alloc.x), "half-drf", alloc.exact)


def test_work_conserving_search_finds_a_planted_bug_not_drf():
    spec = TraceSpec(seed=2, budget=60, max_trials=150)
    prop = get_property("work-conserving")
    ok = search_traces(mechanisms.get("drf+recompute"), prop, "idle", spec)
    assert ok.verdict is Verdict.NOT_REFUTED and ok.trials == 150, ok.note
    bad = search_traces(lift(builtin("half-drf", "planted bug", _half_drf, mechanisms.get("drf").setting), "recompute"),
                        prop, "idle", spec)
    assert bad.verdict is Verdict.VIOLATED and bad.certificate.gap > 0


# ---------------------------------------------------------------------- burst gaming
def test_burst_gaming_split_by_hand():
    """Pool 4 until 1, a and b unbounded (demand 1).  drf+recompute: 2 each, a's service 2.  Split a into a and
    a#2: three users at 4/3 each, tenant a runs 8/3 -- a gain of 2/3.  hdrf+recompute with a in queue qa and b
    in qb: the queues split the pool 2/2 whatever qa holds inside, a and a#2 run 1 each -- gain 0."""
    split = TraceResubmission("a", (Part("a", None), Part("a#2", None)))
    flat = pool([one("a"), one("b")], [], 1)
    j = judge(mechanisms.get("drf+recompute"), "burst-gaming", "split", flat, split)
    assert j.violated and j.measure == F(2, 3)
    assert j.utilities == {"service of tenant a truthful": 2, "service of tenant a resubmitting": F(8, 3)}
    tree = pool([one("a", queue="qa"), one("b", queue="qb")], [], 1, queues=[{"name": "qa"}, {"name": "qb"}])
    j = judge(mechanisms.get("hdrf+recompute"), "burst-gaming", "split", tree, split)
    assert j.measure == 0 and not j.violated


def test_burst_gaming_timing_by_hand():
    """Pool 4 until 2, a (4 tasks) and b (unbounded).  drf+recompute: 2 each throughout, a's service 4.
    Submitted as a (2 tasks) at 0 and a#2 (2 tasks) at 1: [0, 1) a 2, b 2; [1, 2) three users at 4/3 -- tenant a
    runs 2 + 8/3 = 14/3, a gain of 2/3.  Submitted whole 1 later: 2 in [1, 2) -- it loses 2 (-2)."""
    ex = pool([one("a", 4), one("b")], [], 2)
    drf = mechanisms.get("drf+recompute")
    two = TraceResubmission("a", (Part("a", F(2)), Part("a#2", F(2), F(1))))
    j = judge(drf, "burst-gaming", "timing", ex, two)
    assert j.violated and j.measure == F(2, 3)
    later = TraceResubmission("a", (Part("a", F(4), F(1)),))
    assert judge(drf, "burst-gaming", "timing", ex, later).measure == -2
    tried = get_property("burst-gaming").trace_deviations(drf, ex, "timing", random.Random(0))
    assert two in tried or any(len(d.parts) == 2 for d in tried)
    assert all(p.delay >= 0 for d in tried for p in d.parts)


@pytest.mark.parametrize("parts,why", [
    ((Part("a", F(3)),), "add up to 3, not 'a''s 4"),
    ((Part("a", F(2)), Part("b", F(2))), "'b' is already a user"),
    ((Part("a", F(4), F(2)),), "not before 2"),
    ((Part("a", None),), "expected a count > 0"),
])
def test_a_resubmission_breaking_a_rule_is_refused_in_one_line(parts, why):
    ex = pool([one("a", 4), one("b")], [], 2)
    with pytest.raises(InstanceError) as e:
        TraceResubmission("a", parts).apply_to(ex)
    assert why in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(InstanceError):  # never earlier
        trace_deviation_from_dict({"kind": "trace-resubmission", "user": "a",
                                   "parts": [{"name": "a", "tasks": "4", "delay": "-1"}]}, ex)


def test_burst_gaming_search_minimises_stores_and_replays(tmp_path):
    """drf+recompute shares per user: a split is found, minimised, stored with its resubmission and replayed."""
    drf = mechanisms.get("drf+recompute")
    res = search_traces(drf, get_property("burst-gaming"), "split", TraceSpec(seed=0, budget=60, max_trials=100))
    assert res.verdict is Verdict.VIOLATED
    cert, minimality = minimise(drf, res.certificate, budget=30)
    assert isinstance(cert.witness.deviation, TraceResubmission) and minimality["one_minimal"]
    done = persist(cert, drf, provenance={"kind": "search"}, root=str(tmp_path), minimise=False,
                   minimality=minimality)
    d = json.load(open(done.path))
    assert d["deviation"]["kind"] == "trace-resubmission"
    assert trace_deviation_from_dict(d["deviation"], parse_execution(d["environment"])) == cert.witness.deviation
    assert replay(done.path).status == "accepted"
    w = Witness("burst-gaming", "split", drf.name, None, cert.witness.deviation, None, (),
                execution=cert.witness.execution)
    assert get_property("burst-gaming").recheck(drf, w) is not None


def test_convergence_is_not_searched_for_whole_requests():
    """kueue-afs admits a workload's whole request or nothing: no user is backlogged and served at once, so the
    planner skips convergence for it with that reason (never an 'unknown' from executions it cannot judge)."""
    from verifier.planning import plan

    cells = plan([mechanisms.get("kueue-afs")], ["convergence"])
    assert not cells.cells and "whole requests" in cells.skipped[0].reason
