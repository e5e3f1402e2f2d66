"""HiGHS solver objects for the LP layer (``lp.py``): quiet creation, a pool of idle ones, and every run
bounded by the innermost deadline (``mechverify.deadline``)."""
from __future__ import annotations

import os
from typing import Any, Optional

from . import deadline as _deadline

try:  # pragma: no cover - import guard
    import highspy
except ImportError as exc:  # pragma: no cover
    raise ImportError("mechverify needs highspy (pip install highspy)") from exc

__all__ = ["new_highs", "pooled_highs", "run_highs"]

_INF = highspy.kHighsInf


def _reset_scheduler_in_child() -> None:
    """HiGHS runs a MIP's tasks on a global pool of threads, started at the first MIP.  A process forked after
    that inherits the pool's state but not its threads, and its first MIP waits for them for ever (an audit's
    whole-task PO cell in a campaign worker, or the MIP worker of ``mechverify.domination``, hung until killed
    once the parent had solved a MIP).  Every forked child therefore starts with a fresh pool."""
    highspy.Highs.resetGlobalScheduler(False)


if hasattr(highspy.Highs, "resetGlobalScheduler"):  # every fork: multiprocessing's, the isolation worker's, Dask's
    os.register_at_fork(after_in_child=_reset_scheduler_in_child)
_BS = highspy.HighsBasisStatus

try:  # the solver itself, without highspy's Python callback layer (unused here; it doubles creation cost)
    from highspy._core import _Highs as _HighsSolver
except ImportError:  # pragma: no cover - other highspy layouts
    _HighsSolver = highspy.Highs

# Solver objects of finished sessions, reused: creating one costs about as much as solving a small LP.
# ``passModel`` replaces the model and clears every solver state (basis, solution, info); a reused
# object has exactly the options of a fresh one (``run_highs`` sets the time limit of every run).
_IDLE: list = []
_IDLE_MAX = 8


def _acquire_highs() -> Any:
    try:
        h = _IDLE.pop()
    except IndexError:
        h = _HighsSolver()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("random_seed", 0)
        return h
    h.clearSolver()
    return h


def new_highs() -> Any:
    """A fresh, quiet HiGHS solver object (no banner, no log, fixed random seed) for code that drives HiGHS
    directly (e.g. a column-generation loop); ``LPSession`` is the usual way in."""
    h = _HighsSolver()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("random_seed", 0)
    return h


def _release_highs(h: Any, reset: bool = False) -> None:
    """Back to the pool; ``reset``: the user changed options (a MIP's gap), restored to a fresh one's."""
    if len(_IDLE) < _IDLE_MAX:
        if reset:
            _reset_options(h)
        _IDLE.append(h)


def _reset_options(h: Any) -> None:
    h.resetOptions()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("random_seed", 0)


class pooled_highs:
    """``with pooled_highs() as h:`` -- an empty, quiet HiGHS solver object from the pool of idle ones
    (or a fresh one), for code that builds its model incrementally (``addVar``/``addRows``/``addCols``).
    ``clearModel`` empties the model, basis, solution and info; on exit every option is reset to what
    :func:`new_highs` sets, so the next user sees a solver indistinguishable from a fresh one."""

    def __enter__(self) -> Any:
        try:
            h = _IDLE.pop()
        except IndexError:
            self.h = new_highs()
            return self.h
        h.clearModel()
        self.h = h
        return h

    def __exit__(self, *exc: Any) -> None:
        _release_highs(self.h, reset=True)


def run_highs(h: Any, time_limit: Optional[float] = None, mip: bool = False) -> None:
    """``h.run()`` within the deadline of the innermost ``mechverify.deadline.scope`` (and ``time_limit``
    seconds, if given): HiGHS's time limit is set for this run; a run the deadline stopped raises
    ``BudgetExhausted`` (never reported as solver trouble or as an answer).  Every HiGHS run goes through
    here; ``mip``: the model has integer columns."""
    left = _deadline.seconds_left()
    if left is not None and left <= 0:
        raise _deadline.BudgetExhausted("an LP solve was not started: the deadline passed")
    limits = [v for v in (time_limit, left) if v is not None]
    # HiGHS compares an LP's time_limit with the solver object's run clock, which accumulates over its runs;
    # its branch and bound compares it with the time since this run started
    offset = 0.0 if mip else h.getRunTime()
    h.setOptionValue("time_limit", float(offset + min(limits)) if limits else _INF)
    h.run()
    if left is not None and (time_limit is None or left <= time_limit) \
            and h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit:
        raise _deadline.BudgetExhausted(f"an LP solve stopped at the deadline ({left:.1f} s)")
