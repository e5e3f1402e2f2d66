"""Shared fixtures.  Instance builders, test-only mechanisms and the property fixtures' assertions are
plain functions in ``tests/helpers.py``; the fixtures here hand the common ones to any test."""
from __future__ import annotations

import os

import pytest

from tests import helpers


@pytest.fixture
def root() -> str:
    """The repository root (examples/, counterexamples/)."""
    return helpers.ROOT


@pytest.fixture
def example():
    """``example("000-fig1.json")``: an instance of ``examples/`` as an ``Environment``."""
    return helpers.example


@pytest.fixture
def cli():
    """``cli("run", "drf", ...)``: ``python -m verifier`` in a real subprocess (CompletedProcess)."""
    return helpers.run_cli


# ---------------------------------------------------------------------- the commands' terminal
# pytest imports GNU readline early (``_pytest.capture``), and readline exports ``COLUMNS=80``/``LINES=24``
# into the process's C environment, which ``os.environ`` (read at start-up) does not show.  A command a test
# starts would then wrap its report at 80 columns or, given ``dict(os.environ)``, at the 100 of a pipe; and
# pytest-xdist's workers start with the controller's C environment, where both are real variables.  Every
# process of a run puts back what the run was started with, so serial and parallel runs start the same
# commands.
_TERMINAL_VARS = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist's controller: hand each worker the terminal variables the run was started with."""
    node.workerinput["mechverify_terminal_env"] = {k: os.environ.get(k) for k in _TERMINAL_VARS}


def pytest_configure(config):
    workerinput = getattr(config, "workerinput", None)
    started = (workerinput["mechverify_terminal_env"] if workerinput is not None
               else {k: os.environ.get(k) for k in _TERMINAL_VARS})
    for key, value in started.items():
        if value is None:
            os.environ.pop(key, None)
            os.unsetenv(key)  # readline's export is not in os.environ: pop alone would leave it
        else:
            os.environ[key] = value
