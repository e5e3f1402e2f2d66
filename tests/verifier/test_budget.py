"""Budgets are wall-clock promises (``verifier.properties.budget``): a deadline that has passed stops every
engine at once with ``unknown: budget ...``; ``run`` and ``check`` end within budget + 10% plus the
interpreter's start-up (measured here, not assumed); misreports of large instances are sampled across
users; EF's float screening of many users gives the same verdict and measure as every pair one by one."""
from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from fractions import Fraction as F

import pytest

from mechanisms import get
from mechverify.allocation import Allocation
from mechverify.instances import parse_environment
from verifier.check import check_instance
from verifier.engines.minimize import minimize
from verifier.engines.search import search
from verifier.properties import budget as bud
from verifier.properties import get_property, moves
from verifier.properties import ef_si
from verifier.run import run_cell, run_mechanism
from verifier.store import find_files, load_witness

from tests.helpers import ROOT, example
from verifier.config import RunConfig


def _passed() -> float:
    return bud.now() - 1.0


def test_search_past_its_deadline_is_unknown_budget():
    res = search(get("c-drfh"), "sp", "demand", budget=30, deadline=_passed())
    assert res.verdict == "unknown" and res.trials == 0
    assert res.note.startswith(bud.BUDGET), res.note


def test_run_cell_and_run_past_the_deadline_report_unknown_budget(tmp_path):
    cell = run_cell(get("c-drfh"), "bf", "per-server", RunConfig(budget=30, store=str(tmp_path), deadline=_passed()))
    assert cell.verdict == "unknown" and cell.note == "budget: not reached"
    assert cell.claims  # the claims are still named (bf/per-server: 000/002 say it fails)
    rep = run_mechanism(get("c-drfh"), ["sp", "bf"], RunConfig(budget=30, store=str(tmp_path), deadline=_passed()))
    assert rep.results and all(r.verdict == "unknown" and r.note.startswith("budget") for r in rep.results)
    assert not find_files([str(tmp_path)])


def test_minimise_past_its_deadline_returns_the_certificate_as_found():
    path = sorted(find_files([f"{ROOT}/counterexamples/c-drfh"]))[0]
    w = load_witness(path)
    cert = get_property(w.property).recheck(get("c-drfh"), w)
    assert cert is not None
    out, record = minimize(get("c-drfh"), cert, budget=30, deadline=_passed())
    assert out is cert
    assert record["status"] == "not minimised (budget)" and record["one_minimal"] is False
    assert record["exact_rechecks"] == 0 and record["size"] == record["original_size"]


def test_check_past_its_deadline_is_unknown_budget_except_where_the_premise_fails():
    env = example("000-fig1.json")
    results = check_instance(get("c-drfh"), env, None, RunConfig(budget=30, deadline=_passed()))
    assert results
    for r in results:
        assert r.verdict in ("unknown", "not_applicable"), (r.property, r.variant, r.verdict)
        if r.verdict == "unknown":
            assert r.note.startswith("budget: not reached"), r.note


def test_tick_raises_inside_a_passed_scope_only():
    bud.tick()  # no scope: no limit
    with bud.scope(_passed()):
        try:
            bud.tick("here")
        except bud.BudgetExhausted as exc:
            assert str(exc) == "budget: here"
        else:
            raise AssertionError("tick did not raise past the deadline")
    bud.tick()


def test_large_instances_sample_misreports_of_many_users():
    """Beyond EXHAUSTIVE_USERS users the deviations go round-robin over a random order of users: the first
    J deviations are J different users' (one user's moves after another would give user 0's only)."""
    J = 3 * moves.EXHAUSTIVE_USERS
    env = parse_environment({"resources": ["a", "b"], "servers": [{"name": "s", "capacity": [10, 10]}],
                             "users": [{"name": f"u{j}", "demand": [1 + j % 3, 1]} for j in range(J)]})
    devs = list(moves.deviations("demand", env, random.Random(0)))
    assert len({d.users for d in devs[:J]}) == J
    structured = set(moves.reports("demand", env, 0))  # without an rng: the structured moves only
    assert structured <= {d.reports[0] for d in devs if d.users == (0,)}  # nothing lost, only reordered
    leave = [d.leave for d in moves.deviations("leave", env, random.Random(0))]
    assert sorted(leave) == [(k,) for k in range(J)]


def _random_case(seed: int, external: bool):
    rng = random.Random(seed)
    J, S, R = rng.randint(16, 22), rng.randint(1, 3), rng.randint(1, 3)
    users = []
    for j in range(J):
        d = [rng.choice([0, 1, 2, 3]) for _ in range(R)]
        d[rng.randrange(R)] = rng.randint(1, 3)
        u = {"name": f"u{j}", "demand": d}
        if external:
            u["external_demand"] = [rng.choice([0, 1, "1/2"])]
        if rng.random() < 0.4:
            u["eligible"] = [f"s{s}" for s in range(S) if rng.random() < 0.6] or ["s0"]
        if rng.random() < 0.3:
            u["weight"] = rng.choice([2, 3])
        if rng.random() < 0.2:
            u["tasks"] = rng.randint(1, 5)
        users.append(u)
    env = parse_environment({"resources": [f"r{r}" for r in range(R)],
                             "external": [{"name": "e", "capacity": 9}] if external else [],
                             "servers": [{"name": f"s{s}", "capacity": [rng.randint(4, 12) for _ in range(R)]}
                                         for s in range(S)], "users": users})
    if not external:  # the mechanism's own allocation (EF holds or nearly: ties)
        return env, get("c-drfh")(env, exact=True)
    # an arbitrary (not necessarily feasible) task matrix: EF's evaluation only reads bundles
    base = [F(rng.randint(1, 6), rng.randint(1, 3)) for _ in range(J)]
    x = tuple(tuple(base[j] + F(rng.randint(0, 2), 7) if s in env.eligible[j] and rng.random() < 0.8 else F(0)
                    for s in range(S)) for j in range(J))
    return env, Allocation(env, x, "arbitrary", exact=True)


def test_ef_screening_gives_the_verdict_and_measure_of_every_pair(monkeypatch):
    """Exact mode: the same measure (a Fraction), verdict and envious pair as the loop over all J^2 pairs,
    on random instances with placement, weights, task bounds, zero demand entries and either external
    demands (an arbitrary task matrix) or C-DRFH's allocation."""
    prop, mech = get_property("ef"), get("c-drfh")
    seen = set()
    for seed in range(12):
        env, alloc = _random_case(seed, external=seed % 2 == 0)
        for variant in ("placement-aware", "literal"):
            monkeypatch.setattr(ef_si, "SCREEN_USERS", 16)
            fast = prop.evaluate(mech, env, variant, exact=True, alloc=alloc)
            monkeypatch.setattr(ef_si, "SCREEN_USERS", 10 ** 9)
            slow = prop.evaluate(mech, env, variant, exact=True, alloc=alloc)
            assert (fast.measure, fast.violated) == (slow.measure, slow.violated), (seed, variant)
            assert (fast.witness and fast.witness.users) == (slow.witness and slow.witness.users)
            seen.add(slow.violated)
    assert seen == {True, False}  # both outcomes were exercised


def _seconds(*args) -> float:
    t = time.monotonic()
    subprocess.run([sys.executable, "-m", "verifier", *args], cwd=ROOT, capture_output=True, text=True,
                   timeout=600)
    return time.monotonic() - t


@pytest.mark.wallclock
def test_run_and_check_end_within_their_budget(tmp_path):
    """``--budget 3`` ends within 3 x 1.1 s plus the interpreter's start-up, measured here as the slower
    of two ``--help`` runs (twice: the start-up and the process exit both vary with the machine's load)."""
    startup = max(_seconds("--help"), _seconds("--help"))
    limit = 3 * 1.1 + 2 * startup
    took = _seconds("run", "c-drfh", "--budget", "3", "--store", str(tmp_path), "--quiet")
    assert took <= limit, (took, limit)
    took = _seconds("check", "psdsf-rdm", "examples/002-fig5-cluster.json", "--budget", "3")
    assert took <= limit, (took, limit)


def test_a_deviation_cut_by_the_deadline_keeps_the_deviations_finished():
    """Within ``check`` the LP layer stops at the deadline (``BudgetExhausted`` from the solve): the cell
    keeps the deviations it finished and says the budget ended them -- nothing is reported as a crash."""
    import dataclasses

    from verifier.check import Allocations, check_property
    from verifier.planning import Cell

    base = get("c-drfh")
    env = example("000-fig1.json")
    truthful = base(env, exact=False)

    def cut_at(n):  # the mechanism, except that its n-th call runs into the deadline
        calls = []

        def func(e, exact=False):
            calls.append(1)
            if len(calls) == n:
                raise bud.BudgetExhausted("an LP solve stopped at the deadline (test)")
            return base.func(e, exact)
        return dataclasses.replace(base, func=func)
    res = check_property(cut_at(3), env, Cell(cut_at(3), get_property("sp"), "demand"), RunConfig(budget=30),
                         Allocations(None, truthful, 0.0))
    assert res.verdict == "not_refuted" and res.trials == 2, (res.verdict, res.trials, res.note)
    assert res.note.endswith("then the budget ended"), res.note
    res = check_property(cut_at(1), env, Cell(cut_at(1), get_property("sp"), "demand"), RunConfig(budget=30),
                         Allocations(None, truthful, 0.0))
    assert res.verdict == "unknown" and res.trials == 0
    assert res.note.startswith("budget: the first deviation's allocation did not finish"), res.note


def test_a_stopped_deviation_cell_goes_on_where_it_stopped():
    """``check`` gives time the last cells did not use back to the deviation cells the budget stopped:
    with the same :class:`DeviationSampler` the second call tries the deviations the first one did not
    reach (the one cut by the deadline included), each once -- together exactly the full list."""
    import dataclasses

    from verifier.check import Allocations, DeviationSampler, check_property
    from verifier.planning import Cell

    base = get("c-drfh")
    env = example("000-fig1.json")
    truthful = base(env, exact=False)
    sp = get_property("sp")
    cell, allocs = Cell(base, sp, "demand"), Allocations(None, truthful, 0.0)
    whole = check_property(base, env, cell, RunConfig(budget=30), allocs)
    assert whole.verdict == "not_refuted" and whole.note.endswith("all that were listed") and whole.trials > 3
    calls = []

    def cut_third(e, exact=False):
        calls.append(1)
        if len(calls) == 3:
            raise bud.BudgetExhausted("an LP solve stopped at the deadline (test)")
        return base.func(e, exact)
    smp = DeviationSampler(base, env, sp, "demand", 0)
    first = check_property(dataclasses.replace(base, func=cut_third), env, cell, RunConfig(budget=30), allocs, smp)
    assert first.trials == 2 and first.note.endswith("then the budget ended")
    second = check_property(base, env, cell, RunConfig(budget=30), allocs, smp)
    assert second.verdict == "not_refuted" and second.trials == whole.trials
    assert second.note == whole.note and second.measure == whole.measure


@pytest.mark.wallclock
def test_a_slow_first_allocation_does_not_keep_check_from_trying_a_deviation():
    """The first (truthful) allocation is the slow one: a deviation's LPs start from its basis (cluster
    sizes: ~1 s against ~10 s).  When the first allocation's time leaves no room for a deviation, ``check``
    measures one with the time left instead of giving up, then paces the others by it.  Simulated: the
    mechanism's first call takes 1.2 s, the others are as usual; budget 2 s."""
    import dataclasses

    base = get("c-drfh")
    env = example("000-fig1.json")
    calls = []

    def slow_first(e, exact=False):
        calls.append(1)
        if len(calls) == 1:
            time.sleep(1.2)
        return base.func(e, exact)
    mech = dataclasses.replace(base, func=slow_first)
    (res,) = check_instance(mech, env, ["sp"], RunConfig(budget=2.0), variants={"sp": ["demand"]})
    assert res.verdict == "not_refuted" and res.trials > 1, (res.verdict, res.trials, res.note)
    assert res.seconds < 1.0  # within the 0.8 s the first allocation left


@pytest.mark.wallclock
def test_a_mip_that_ignores_its_time_limit_does_not_break_the_audit_budget(monkeypatch, tmp_path, capsys):
    """``audit --budget 5`` ends within the budget + 10% even when a MIP never returns: the whole-task PO cells'
    MIPs run in a worker process killed at the deadline (``mechverify.domination``), in the campaign's worker
    processes too (they are forked from here, with the planted MIP).  Once, a cell given 0.8 s ran a 20 s MIP
    hundreds of times: its worker had no deadline."""
    import time

    from mechverify import domination
    from verifier.cli.main import main

    real = domination._dominating

    def never_returns(env, utils, mode, exact, support, integral, time_limit):
        if integral:
            time.sleep(3600)  # a MIP that ignores its own time limit
        return real(env, utils, mode, exact, support, integral, time_limit)

    monkeypatch.setattr(domination, "_dominating", never_returns)
    t0 = time.monotonic()
    code = main(["audit", "--budget", "5", "--mechanisms", "armada-drf,hdrf-tasks", "--properties", "po",
                 "--store", str(tmp_path), "--fresh", "--quiet", "--jobs", "2", "--format", "json"])
    elapsed = time.monotonic() - t0
    assert elapsed <= 5 * 1.1, elapsed
    out = json.loads(capsys.readouterr().out)
    verdicts = {(c["mechanism"], e["variant"]): e["verdict"] for t in out["tables"] for c in t["cells"]
                for e in c["evidence"]}
    assert verdicts[("armada-drf", "whole-task")] == "unknown"
    # exit 4 when nothing was decided (every cell unknown: the planted MIP never answers); 0 when something was
    assert code == (4 if all(v == "unknown" for v in verdicts.values()) else 0), (code, verdicts)
