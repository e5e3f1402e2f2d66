"""A certification sweep: ``certify`` over several shapes as one campaign of (mechanism, property, shape)
cells, run through an executor (``verifier.executors``: in this process, local processes, a Dask cluster).

Workers run z3 (:func:`certify_cell`, one shape each, one z3 process per worker) and return the
``Result``; they never store.  The coordinator hands the results to ``on_result`` -- the command stores a
violation there (the one writer) -- and prints progress.  ``timeout`` is the wall-clock limit of the whole
sweep: a cell gets, when handed out, ``left x slots / cells not yet handed out``, but at least half of
what is left (the smallest shapes come first and must get enough time to be decided: an equal split of
3 s over 49 shapes gave the 2-user shape 0.07 s and decided nothing); time a cell does not use goes to the
next ones; cells the time does not reach are "unknown: budget (not reached)".  Shapes are handed out
smallest first, so a sweep that runs out of time has settled the small shapes.  The coordinator waits for running cells
only until the sweep's deadline (plus :data:`STOP_GRACE`): a cell still running then is stopped (its
worker process ended) and reported "unknown: budget (still running ...)", never waited for.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from .results import Result

__all__ = ["ShapeCell", "certify_cell", "sweep", "NOT_REACHED", "CUT"]

NOT_REACHED = "budget: not reached (the sweep's --timeout ran out first)"
CUT = "budget: still running when the sweep's --timeout ran out (stopped)"
#: seconds past the deadline a running cell may take to return what it has (its own deadline is the
#: same instant, so it normally returns before)
STOP_GRACE = 0.2


@dataclass(frozen=True)
class ShapeCell:
    """One shape of a sweep, as a worker receives it (plain data; the mechanism is looked up by name)."""

    mechanism: str
    property: str
    variant: str
    shape: tuple[int, int, int, int]  # users, servers, resources, external
    method: str = "auto"
    timeout: float = 0.0  # set when the cell is handed out

    def describe(self) -> str:
        """The shape in words."""
        from mechverify.model import describe_shape

        return describe_shape(*self.shape)


def certify_cell(cell: ShapeCell) -> Result:
    """THE worker function: certify one shape (z3 in this worker, one process); an exception is an
    "unknown" result, never lost."""
    from mechanisms import get

    from .engines.smt import Shape, certify

    try:
        users, servers, resources, external = cell.shape
        res = certify(get(cell.mechanism), cell.property, cell.variant,
                      Shape(users=users, servers=servers, resources=resources, external=external),
                      timeout=max(0.1, cell.timeout), method=cell.method, jobs=1)
    except Exception as exc:  # noqa: BLE001
        res = Result(cell.mechanism, cell.property, cell.variant, verdict="unknown",
                     note=f"worker error: {type(exc).__name__}: {exc}")
    res.details["shape"] = list(cell.shape)
    return res


def _unknown(cell: ShapeCell, note: str) -> Result:
    r = Result(cell.mechanism, cell.property, cell.variant, verdict="unknown", note=note)
    r.details["shape"] = list(cell.shape)
    return r


def _shape_order(cell: ShapeCell) -> tuple:
    return (sum(cell.shape), cell.shape)


def _certify_share(left: float, slots: int, not_handed_out: int) -> float:
    """A certify cell's seconds: ``left x slots / cells not yet handed out``, at least half of ``left``."""
    return min(left, max(left / 2, left * slots / not_handed_out))


def sweep(cells: Sequence[Any], *, timeout: Optional[float], executor=None,
          on_result: Optional[Callable[[Any, Any], None]] = None,
          progress: Optional[Callable[[str], None]] = None,
          fn: Callable[[Any], Any] = certify_cell, order: Callable[[Any], Any] = _shape_order,
          share: Callable[[float, int, int], float] = _certify_share,
          unfinished: Optional[Callable[[Any, str], Any]] = None,
          describe: Optional[Callable[[Any, Any], str]] = None) -> tuple[list[Any], bool]:
    """Run ``fn`` on every cell (see the module docstring); ``(results in the cells' order, interrupted)``.

    The defaults certify :class:`ShapeCell` s; another kind of cell (``verifier.simsweep``'s simulations) is a
    frozen dataclass with a ``timeout`` field and brings its ``order`` (cells handed out by this key),
    ``share`` (a cell's seconds from the seconds left, the slots and the cells not yet handed out),
    ``unfinished(cell, note)`` (its result when cut or not reached: ``note`` is :data:`CUT` or
    :data:`NOT_REACHED`) and ``describe(cell, result)`` (its progress line).  ``timeout`` None: no limit."""
    import math
    from dataclasses import replace

    from .executors import InProcess

    ex = executor or InProcess()
    unfinished = unfinished or _unknown
    deadline = time.monotonic() + (math.inf if timeout is None else timeout)
    pending = sorted(range(len(cells)), key=lambda i: order(cells[i]))
    running: dict = {}
    out: dict[int, Result] = {}
    interrupted = closed = False

    def finish(i: int, r: Result) -> None:
        out[i] = r
        if on_result is not None:
            on_result(cells[i], r)
        if progress:
            said = (describe(cells[i], r) if describe is not None else
                    f"{cells[i].describe()}: {r.verdict}" + (f" ({r.note})" if r.note and r.verdict == "unknown" else ""))
            progress(f"[{len(out)}/{len(cells)}] {said}  (running {len(running)})")

    try:
        while pending or running:
            while pending and len(running) < ex.slots:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                i = pending.pop(0)
                running[ex.submit(fn, replace(cells[i], timeout=share(left, ex.slots, len(pending) + 1)))] = i
            if not running:
                break
            wait = deadline + STOP_GRACE - time.monotonic()
            if wait <= 0:  # past the deadline: stop the cells still running instead of waiting for them
                break
            for handle, value, err in ex.wait_any(timeout=None if math.isinf(wait) else wait):
                i = running.pop(handle)
                finish(i, value if err is None else unfinished(cells[i], f"worker error: {type(err).__name__}: {err}"))
        cut = sorted(running.values())
        closed = True
        ex.close(cancel=bool(running))
        running.clear()
        for i in cut:
            finish(i, unfinished(cells[i], CUT))
        for i in pending:
            finish(i, unfinished(cells[i], NOT_REACHED))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if not closed:
            ex.close(cancel=bool(running) or interrupted)
    return [out[i] for i in range(len(cells)) if i in out], interrupted
