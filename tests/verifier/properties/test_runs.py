"""Property ``runs``: a mechanism that raises or returns an invalid allocation is a finding, certified only
when the exact-mode call fails again on the same instance."""
from __future__ import annotations

from fractions import Fraction

import mechverify
from mechanisms import get
from mechanisms.core.references import from_function
from verifier.properties import get_property
from verifier.properties.base import Witness

from tests.helpers import example, ghodsi

RUNS = get_property("runs")


def test_a_mechanism_that_runs_is_not_flagged():
    ev = RUNS.evaluate(get("drf"), ghodsi(), "any", exact=True)
    assert ev.measure == 0 and not ev.violated


def test_an_exception_and_an_invalid_output_are_certified():
    def boom(env):
        raise RuntimeError("out of\nmemory")

    def wrong_shape(env):
        return [[1]]  # one row for two users

    for f, text in ((boom, "RuntimeError: out of memory"),
                    (wrong_shape, "MechanismOutputError: wrong_shape: output: expected a task matrix")):
        m = from_function(f)
        ev = RUNS.evaluate(m, ghodsi(), "any")
        assert ev.violated and ev.note.startswith(text)
        cert = RUNS.recheck(m, ev.witness)
        assert cert is not None and cert.exception.startswith(text) and cert.gap == 1


def test_a_failure_that_does_not_repeat_is_not_certified():
    calls = []

    def flaky(env):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("once")
        return [[Fraction(1)] for _ in env.users]

    m = from_function(flaky)
    ev = RUNS.evaluate(m, ghodsi(), "any")
    assert ev.violated
    assert RUNS.recheck(m, Witness("runs", "any", m.name, ghodsi())) is None


def test_declared_setting_keeps_runs_inside_it():
    @mechverify.mechanism(name="one-pool", single_server=True)
    def one_pool(env):
        return [[1] for _ in env.users]

    env = example("001-fig1.json")  # two servers: outside the setting, not a finding
    import pytest

    from mechanisms.core.registry import SettingError

    with pytest.raises(SettingError):
        RUNS.evaluate(from_function(one_pool), env, "any")
