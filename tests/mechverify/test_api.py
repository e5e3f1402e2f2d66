"""The public Python surface: ``from mechverify import ...``, ``mechverify.strategies`` (its public set is
pinned, as Hypothesis pins its own), ``mechverify.testing.assert_property`` and the pytest plugin."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import pytest
from hypothesis import given, settings

import mechverify
from mechverify import strategies
from mechverify.testing import assert_property

from tests.helpers import ROOT

GREEDY = os.path.join(ROOT, "examples", "my_mechanisms.py") + ":greedy"


def test_the_api_names_and_short_reprs():
    env = mechverify.load(os.path.join(ROOT, "examples", "001-fig1.json"))
    assert repr(env) == "<Environment 2 users x 2 servers x 2 resources: users u1, u2>"
    a = mechverify.allocate(GREEDY, env)
    assert repr(a) == "<Allocation greedy (exact): tasks u1 12, u2 0>"  # 10 on s1 + 2 on s2 (see the CLI test)
    results = [r for r in mechverify.check(GREEDY, env, ["si"]) if r.property == "si"]  # (a user's: runs too)
    assert repr(results[0]).startswith("<Result greedy si/per-server-split: violated")
    report = mechverify.run(GREEDY, ["ef"], budget=30, trials=100)
    cells = len(report.results)  # ef/placement-aware, and runs/any where a user's mechanism is searched for it
    assert repr(report) == f"<RunReport greedy: {cells} cells, 1 violated (ef/placement-aware), 1 claims REFUTED>"
    assert set(mechverify._API) <= set(dir(mechverify))
    with pytest.raises(AttributeError):
        mechverify.no_such_name  # noqa: B018


def test_a_plain_function_gets_an_importable_reference():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import my_mechanisms

        assert mechverify.mechanism_of(my_mechanisms.greedy).reference == "my_mechanisms:greedy"
    finally:
        sys.path.remove(os.path.join(ROOT, "examples"))

    def local(env):
        return [[0] * env.n_servers for _ in env.users]

    assert mechverify.mechanism_of(local).reference == ""  # not importable by name: stored without one


def test_strategies_public_set():
    # pinned like hypothesis' own public API: adding or removing a name is a deliberate change
    assert sorted(strategies.__all__) == sorted([
        "Domain", "environments", "cases", "simple_rationals", "demand_misreports", "eligible_misreports",
        "task_misreports", "coalition_misreports", "leaves", "deviations"])
    for name in strategies.__all__:
        obj = getattr(strategies, name)
        assert obj.__doc__, name
        assert not name.startswith("_")
    assert {n for n in vars(strategies) if not n.startswith("_") and callable(vars(strategies)[n])
            and getattr(vars(strategies)[n], "__module__", "") == strategies.__name__} <= set(strategies.__all__)


@settings(max_examples=30, deadline=None, database=None)
@given(strategies.environments(GREEDY, max_users=3))
def test_environments_inside_a_users_mechanisms_setting(env):
    # greedy's default setting: no placement, no bounds, equal weights, no external resources
    assert not env.has_placement and not env.has_bounds and not env.has_weights and env.n_external == 0
    assert 1 <= env.n_users <= 3


@settings(max_examples=20, deadline=None, database=None)
@given(strategies.cases("drf", "sp"))
def test_cases_give_a_misreport_of_one_user(case):
    env, dev = case
    assert env.n_servers == 1 and dev is not None and dev.kind == "misreport" and len(dev.users) == 1


def test_assert_property_passes_and_fails_with_the_counterexample():
    assert_property(GREEDY, "sp", trials=100, budget=30)  # greedy is SP (see examples/my_mechanisms.py)
    with pytest.raises(AssertionError) as exc:
        assert_property(GREEDY, "ef", trials=100, budget=30)
    msg = str(exc.value)
    # the minimal counterexample: 2 users x 1 server x 1 resource; u1 takes everything
    assert msg.startswith("greedy violates ef/placement-aware (exact margin 1):")
    assert "instance (2 users x 1 server x 1 resource): {" in msg and "allocation " in msg


SRC = os.path.dirname(os.path.dirname(os.path.abspath(mechverify.__file__)))  # the code under test


def test_pytest_plugin_option(tmp_path):
    (tmp_path / "test_mine.py").write_text(textwrap.dedent(f'''
        import mechverify.testing as t
        from mechverify.testing import assert_property

        def test_budget_option():
            assert t.DEFAULT_BUDGET == 30.5

        def test_greedy_is_envy_free():
            assert_property({GREEDY!r}, "ef", trials=50)
    '''))
    # 50 trials bound the search; the budget (not 5 s, the default) only has to leave them room on a busy
    # machine: with 2.5 s the run/any cell alone could use it up and EF was then "unknown: budget"
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--mechverify-budget",
                          "30.5", str(tmp_path / "test_mine.py")], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, ROOT])))
    assert "1 failed, 1 passed" in out.stdout, out.stdout + out.stderr
    assert "greedy violates ef/placement-aware" in out.stdout
    # the failure shows the user's line and the finding, not the library's source
    assert "def assert_property" not in out.stdout and "run_mechanism(" not in out.stdout, out.stdout
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--mechverify-budget",
                          "-1", str(tmp_path / "test_mine.py")], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, ROOT])))
    assert out.returncode == 4 and "--mechverify-budget: must be > 0" in out.stderr


# ---------------------------------------------------------------------- the forms every API call takes
FIG1 = os.path.join(ROOT, "examples", "001-fig1.json")


def test_properties_one_name_a_variant_or_a_list():
    # "ef" is one property, not the letters 'e' and 'f'; drf (placement allowed) has both EF variants
    rep = mechverify.run("drf", "ef", budget=20, trials=5)
    assert [(r.property, r.variant) for r in rep.results] == [("ef", "placement-aware"), ("ef", "literal")]
    rep = mechverify.run("drf", ["sp/demand", "si"], budget=20, trials=5)
    assert [(r.property, r.variant) for r in rep.results][0] == ("sp", "demand")
    assert {r.property for r in rep.results} == {"sp", "si"} and \
        [r.variant for r in rep.results if r.property == "sp"] == ["demand"]
    with pytest.raises(ValueError, match="properties: unknown property 'e'"):
        mechverify.run("drf", ["e"], budget=1)
    with pytest.raises(ValueError, match="variant: sp has no variant 'nope'"):
        mechverify.run("drf", "sp/nope", budget=1)
    with pytest.raises(ValueError, match="properties: no property named"):
        mechverify.run("drf", "", budget=1)


def test_an_instance_is_a_path_a_dict_or_an_environment():
    import json

    env = mechverify.load(FIG1)
    with open(FIG1, encoding="utf-8") as fh:
        data = json.load(fh)
    got = [[r for r in mechverify.check(GREEDY, inst, "si/per-server-split") if r.property == "si"]
           for inst in (FIG1, data, env)]
    assert [[(r.property, r.variant, r.verdict) for r in rs] for rs in got] == \
        [[("si", "per-server-split", "violated")]] * 3  # see test_the_api_names_and_short_reprs
    assert repr(mechverify.allocate(GREEDY, data)) == "<Allocation greedy (exact): tasks u1 12, u2 0>"
    with pytest.raises(TypeError, match="instance: expected a path, a dict"):
        mechverify.check(GREEDY, 42)


def test_replay_a_folder_like_the_cli(tmp_path):
    store = tmp_path / "ce"
    mechverify.run(GREEDY, "ef", budget=20, trials=100, store=str(store))
    files = sorted(str(p) for p in store.rglob("*.json"))
    assert files  # greedy is not envy-free (above)
    got = mechverify.replay(str(store))
    assert [r.path for r in got] == files and all(r.ok for r in got)
    assert mechverify.replay(files[0]).ok  # one file: one result
    assert [r.path for r in mechverify.replay([str(store)])] == files
    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        mechverify.replay(str(tmp_path / "missing"))


def test_a_run_report_prints_as_the_table_and_shows_as_html_in_a_notebook():
    from verifier.report import render_html, render_table

    rep = mechverify.run(GREEDY, "ef", budget=20, trials=100)
    assert str(rep) == render_table(rep, width=100)
    assert all(len(ln) <= 100 for ln in str(rep).splitlines())
    assert "claimed to hold [examples/my_mechanisms.py (made-up claims)]" in " ".join(str(rep).split())
    assert rep._repr_html_() == render_html(rep) and "<table>" in rep._repr_html_()


# ---------------------------------------------------------------------- assert_property's verdicts and budget
@pytest.mark.wallclock
def test_assert_property_budget_is_the_whole_call():
    import time

    from verifier.properties import get_property

    # drf allows placement, bounds and weights: SP has several variants there, so a per-variant budget
    # would take up to (variants) x budget; the whole call must end within budget + 10% (+ slack for the
    # first imports, which the budget's clock does not see)
    variants = [v for v in get_property("sp").variants
                if not get_property("sp").variant_possible(mechverify.mechanism_of("drf").setting, v)]
    assert len(variants) >= 2
    t0 = time.monotonic()
    assert_property("drf", "sp", budget=2, allow_unknown=True)
    assert time.monotonic() - t0 < 2 * 1.1 + 1.5


def test_assert_property_fails_on_unknown_unless_allowed():
    # a budget of 1 microsecond: no cell can be searched, every verdict is "unknown: budget"
    with pytest.raises(AssertionError, match=r"not established within the budget .*unknown: budget"):
        assert_property("drf", "ef", budget=1e-6)
    results = assert_property("drf", "ef", budget=1e-6, allow_unknown=True)
    assert {r.verdict for r in results} == {"unknown"}


def test_assert_property_searches_runs_first_for_a_users_mechanism(tmp_path):
    src = tmp_path / "fragile.py"
    src.write_text(textwrap.dedent('''
        def fragile(env):
            """Divides by the number of users minus one: fails on one user."""
            share = 1 / (env.n_users - 1)
            return [[0] * env.n_servers for _ in env.users]
    '''))
    with pytest.raises(AssertionError) as exc:
        assert_property(f"{src}:fragile", "ef", budget=20, trials=50)
    msg = str(exc.value)
    assert msg.startswith("fragile fails (an exception or an invalid output) before ef could be judged")
    assert "fragile violates runs/any" in msg and "ZeroDivisionError" in msg
