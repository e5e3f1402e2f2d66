"""The one planner (src/verifier/planning.py) and the one run configuration (src/verifier/config.py)."""
from __future__ import annotations

import pytest

import mechverify as mv
from mechanisms import get
from mechverify.testing import assert_property
from tests.helpers import example
from verifier import planning
from verifier.audit import run_audit
from verifier.check import check_instance
from verifier.config import RunConfig
from verifier.properties import get_property
from verifier.rates import Sampling, rates
from verifier.run import run_mechanism


@pytest.fixture
def spy(monkeypatch):
    """Every call of the planner, by whichever entry point."""
    calls = []
    real = planning.plan

    def plan(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(planning, "plan", plan)
    return calls


def test_every_entry_point_plans_through_the_planner(spy, tmp_path):
    drf = get("drf")
    env = example("003-ex1.json")
    entries = {
        "run": lambda: run_mechanism(drf, ["ef"], RunConfig(budget=30, trials=5, store=None)),
        "check": lambda: check_instance(drf, env, ["ef"], RunConfig(budget=30)),
        "audit": lambda: run_audit(RunConfig(budget=60, trials=5, store=str(tmp_path)), only=["drf"],
                                   properties=["ef"], fresh=True),
        "rates": lambda: rates([drf], Sampling("uniform", 2, points=[{"servers": "1"}]), ["ef"]),
        "mv.run": lambda: mv.run("drf", "ef", budget=30, trials=5),
        "mv.check": lambda: mv.check("drf", env, "ef", budget=30),
        "assert_property": lambda: assert_property("drf", "ef", budget=30, trials=5),
    }
    for name, call in entries.items():
        before = len(spy)
        call()
        assert len(spy) > before, f"{name} did not plan through verifier.planning.plan"
        assert any(m is drf or getattr(m, "name", None) == "drf" for ms in spy[before:] for m in ms), name


def test_a_users_mechanism_is_judged_for_its_own_failures_first():
    """The mechanism-failure facet, applied once, by the planner: a user's mechanism gets ``runs`` first
    whatever was asked; a registered one does not; ``rates`` counts what it was asked to count."""
    user = mv.mechanism_of("examples/my_mechanisms.py:greedy")
    runs = get_property("runs")
    assert runs.mechanism_failure and not get_property("ef").mechanism_failure
    p = planning.plan([user], ["ef"])
    assert [c.prop.name for c in p.cells][0] == "runs" and {c.prop.name for c in p.cells} == {"runs", "ef"}
    assert "runs" not in {c.prop.name for c in planning.plan([get("drf")], ["ef"]).cells}
    assert "runs" not in {c.prop.name for c in planning.plan([user], ["ef"], failures_first=False).cells}


def test_the_reading_is_decided_once():
    """A variant the setting does not allow is skipped, with the reason -- by ``check`` as by ``run``: a
    whole-task policy is judged in the whole-task reading only."""
    tasks = get("drfh-first-fit")
    p = planning.plan([tasks], ["ef"])
    skipped = {(s.prop.name, s.variant): s.reason for s in p.skipped}
    assert skipped and all(reason for reason in skipped.values())
    assert [c.variant for c in p.cells] == ["whole-task"]
    checked = mv.check(tasks, example("000-fig1.json"), properties=["ef"])
    assert [(r.property, r.variant) for r in checked] == [("ef", "whole-task")]


def test_a_run_configuration_starts_and_refuses_unknown_options():
    cfg = RunConfig(budget=5).start()
    assert cfg.deadline is not None and 4 < cfg.left() <= 5
    assert RunConfig(budget=100, deadline=cfg.deadline).start().deadline == cfg.deadline  # the earlier one
    assert RunConfig().start().deadline is None
    with pytest.raises(TypeError, match="unexpected option max_trials"):
        RunConfig.of(max_trials=3)
    with pytest.raises(TypeError, match="unexpected option"):
        mv.run("drf", "ef", store_dir="x")
