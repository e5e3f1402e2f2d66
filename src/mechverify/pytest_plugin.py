"""The pytest plugin (entry point ``pytest11``): ``--mechverify-budget S`` sets the default search budget of
``mechverify.testing.assert_property`` (seconds for a whole call) for the session."""
from __future__ import annotations


def pytest_addoption(parser) -> None:
    """Add ``--mechverify-budget``."""
    group = parser.getgroup("mechverify")
    group.addoption("--mechverify-budget", type=float, default=None, metavar="S",
                    help="default wall-clock seconds of a whole mechverify.testing.assert_property call "
                         "(default: mechverify.testing.DEFAULT_BUDGET)")


def pytest_configure(config) -> None:
    """Apply ``--mechverify-budget``."""
    value = config.getoption("--mechverify-budget", default=None)
    if value is not None:
        if not value > 0:
            import pytest

            raise pytest.UsageError(f"--mechverify-budget: must be > 0 (got {value})")
        from . import testing

        testing.DEFAULT_BUDGET = float(value)
