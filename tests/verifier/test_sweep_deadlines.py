"""A sweep keeps its deadline even when a cell does not: the coordinator stops a cell still running at
the deadline (its worker process ends silently) and reports it ``unknown (budget: ...)``."""
from __future__ import annotations

import time

import pytest

from verifier.executors import LocalPool
from verifier.results import Result
from verifier.sweep import CUT, ShapeCell, sweep


def _stuck_cell(cell: ShapeCell) -> Result:  # a cell that ignores its share of the timeout
    time.sleep(60)
    return Result(cell.mechanism, cell.property, cell.variant, verdict="certified")


@pytest.mark.wallclock
def test_a_cell_running_past_the_deadline_is_stopped_and_reported_budget():
    cells = [ShapeCell("drf", "sp", "demand", (j, 1, 2, 0)) for j in (2, 3, 4)]
    t0 = time.monotonic()
    results, interrupted = sweep(cells, timeout=1.0, executor=LocalPool(2), fn=_stuck_cell)
    assert time.monotonic() - t0 < 1.0 * 1.1 + 1.0  # + stopping two worker processes
    assert not interrupted and len(results) == 3
    assert all(r.verdict == "unknown" and r.note.startswith("budget: ") for r in results)
    assert sum(r.note == CUT for r in results) == 2  # the third was never handed out
