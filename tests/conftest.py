"""Shared fixtures.  Instance builders, test-only mechanisms and the property fixtures' assertions are
plain functions in ``tests/helpers.py``; the fixtures here hand the common ones to any test."""
from __future__ import annotations

import fcntl
import os
import shutil
import tempfile

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


# ---------------------------------------------------------------------- wall-clock tests under pytest-xdist
# A test marked ``wallclock`` asserts a wall-clock limit (a --budget or --timeout kept, a process killed in
# time).  Its margins are those of a machine that runs nothing else of the suite: under ``-n`` it runs while
# no other test runs, through a readers-writer lock shared by the workers (flock on two files: every other
# test holds ``room`` shared; a wallclock test takes ``turn`` first, so no new test starts while it waits for
# the running ones, then ``room`` exclusively).  A worker keeps the lock from one wallclock test to the next.
# A serial run (no worker) takes no lock.
_LOCK_DIR = "mechverify_lock_dir"


def _lock_dir(config) -> str:
    if not hasattr(config, "_mechverify_lock_dir"):
        config._mechverify_lock_dir = tempfile.mkdtemp(prefix="mechverify-xdist-")
    return config._mechverify_lock_dir


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist's controller, for each worker: the terminal variables the run was started with and the
    folder of the run's lock."""
    node.workerinput["mechverify_terminal_env"] = {k: os.environ.get(k) for k in _TERMINAL_VARS}
    node.workerinput[_LOCK_DIR] = _lock_dir(node.config)


def pytest_unconfigure(config):
    if hasattr(config, "_mechverify_lock_dir"):
        shutil.rmtree(config._mechverify_lock_dir, ignore_errors=True)


class _RunLock:
    def __init__(self, folder: str):
        self.turn = os.open(os.path.join(folder, "turn"), os.O_RDWR | os.O_CREAT, 0o600)
        self.room = os.open(os.path.join(folder, "room"), os.O_RDWR | os.O_CREAT, 0o600)
        self.held = None  # None, "shared" or "alone"

    def acquire(self, alone: bool) -> None:
        if self.held == "alone" and alone:
            return
        self.release()
        fcntl.flock(self.turn, fcntl.LOCK_EX)
        if alone:
            fcntl.flock(self.room, fcntl.LOCK_EX)  # keeps ``turn``: no test starts until it is done
            self.held = "alone"
        else:
            fcntl.flock(self.room, fcntl.LOCK_SH)
            fcntl.flock(self.turn, fcntl.LOCK_UN)
            self.held = "shared"

    def release(self) -> None:
        if self.held is not None:
            fcntl.flock(self.room, fcntl.LOCK_UN)
            if self.held == "alone":
                fcntl.flock(self.turn, fcntl.LOCK_UN)
            self.held = None


_RUN_LOCK: _RunLock | None = None  # this worker's


def _wallclock(item) -> bool:
    return item is not None and item.get_closest_marker("wallclock") is not None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _RUN_LOCK
    folder = getattr(item.config, "workerinput", {}).get(_LOCK_DIR)
    if folder is None:
        yield
        return
    if _RUN_LOCK is None:
        _RUN_LOCK = _RunLock(folder)
    _RUN_LOCK.acquire(alone=_wallclock(item))
    try:
        yield
    finally:
        if not (_wallclock(item) and _wallclock(nextitem)):
            _RUN_LOCK.release()
