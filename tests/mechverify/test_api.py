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
    results = mechverify.check(GREEDY, env, ["si"])
    assert repr(results[0]).startswith("<Result greedy si/per-server-split: violated")
    report = mechverify.run(GREEDY, ["ef"], budget=30, trials=100)
    assert repr(report) == "<RunReport greedy: 1 cells, 1 violated (ef/placement-aware), 1 claims REFUTED>"
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


def test_pytest_plugin_option(tmp_path):
    (tmp_path / "test_mine.py").write_text(textwrap.dedent(f'''
        import mechverify.testing as t
        from mechverify.testing import assert_property

        def test_budget_option():
            assert t.DEFAULT_BUDGET == 2.5

        def test_greedy_is_envy_free():
            assert_property({GREEDY!r}, "ef", trials=50)
    '''))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--mechverify-budget",
                          "2.5", str(tmp_path / "test_mine.py")], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert "1 failed, 1 passed" in out.stdout, out.stdout + out.stderr
    assert "greedy violates ef/placement-aware" in out.stdout
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--mechverify-budget",
                          "-1", str(tmp_path / "test_mine.py")], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 4 and "--mechverify-budget: must be > 0" in out.stderr
