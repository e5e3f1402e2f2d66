"""Shared fixtures.  Instance builders, test-only mechanisms and the property fixtures' assertions are
plain functions in ``tests/helpers.py``; the fixtures here hand the common ones to any test."""
from __future__ import annotations

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
