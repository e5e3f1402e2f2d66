"""The domination LP (seed 004 Sec. 6.2): the best allocation that gives every user at least a target.

Used by the Pareto-optimality property (a target vector that some feasible allocation beats is a PO
violation) and by the seed-004 domination factor (``simulation.metrics``).  It is one LP over
``mechverify.polytope``'s chi(E), solved by ``mechverify.lp`` (exactly when asked; cluster-sized float
LPs by column generation, ``mechverify.colgen``).  ``integral=True`` asks the same question among
whole-task allocations: every ``y[j,s]`` integer, a MIP of the same LP layer (whose exact form is an
integral ``y`` verified in rationals; its optimality is HiGHS's).

A MIP can take far longer than its time limit says (HiGHS checks its clock between nodes, and one node of a
hard model can be long): within a deadline scope (``mechverify.deadline``) the MIP therefore runs in a worker
process (``mechverify.isolation.Worker``, one per process, kept between calls) that is killed at the deadline,
so a command keeps its budget whatever one solve does; outside a scope, and with ``MECHVERIFY_IN_PROCESS=1``,
it runs here.  LPs always run here: their calls cost microseconds and stop at the deadline themselves.
"""
from __future__ import annotations

import os
from fractions import Fraction
from typing import Any, Optional, Sequence

from .colgen import COLGEN_MIN_COLS, ColumnGenerationSession
from .deadline import BudgetExhausted, call_limit_scope, current, scope, seconds_left
from .lp import solve
from .model import Environment
from .polytope import TaskPolytope

__all__ = ["dominating_allocation", "domination_lp", "MIP_GRACE", "DEFAULT_MIP_LIMIT"]

#: seconds a MIP in its worker may run past its own time limit before it is killed (and fails)
MIP_GRACE = 2.0
#: a MIP's time limit when the caller gives none (the deadline, when earlier, ends it first)
DEFAULT_MIP_LIMIT = 60.0


def domination_lp(env: Environment, utils: Sequence[Any], mode: str) -> Optional[tuple[TaskPolytope, dict[int, int]]]:
    """The domination LP of :func:`dominating_allocation` (maximised, every column costing 1) as a
    ``TaskPolytope`` whose LP carries the target rows, and ``{user: its target row}`` (users with a
    positive target); None when such a user has no column (the LP is then infeasible)."""
    poly = TaskPolytope(env, mode=mode, placement=True, external=True, bounds=True)
    lp = poly.lp
    rows: dict[int, int] = {}
    for j in range(env.n_users):
        if utils[j] > 0:
            if not poly.user_vars[j]:
                return None
            rows[j] = lp.add_row(poly.total(j), utils[j], None)
    lp.set_cost({c: 1 for c in range(lp.n_cols)})
    lp.maximize = True
    return poly, rows


def dominating_allocation(env: Environment, utils: Sequence[Any], mode: str, exact: bool,
                          support: Optional[Sequence[Sequence[Any]]] = None, integral: bool = False,
                          time_limit: Optional[float] = None):
    """The domination LP of seed 004 Sec. 6.2 for target utilities ``utils``:

        D = max sum_j sum_s y[j,s]  s.t.  y in chi(E) (mode, TRUE placement, external, bounds),
                                          sum_s y[j,s] >= utils[j]  (all j)

    Returns ``(D, y)`` or ``(None, None)`` when the LP is infeasible or the solver fails (callers
    report that as solver trouble, never as a verdict).  ``support``: a task matrix meeting the targets
    (the allocation they come from), whose non-zero entries column generation starts with.
    ``integral``: ``y`` integer (whole tasks; a MIP, never column generation; the task bounds ``n_j``
    then act as ``floor(n_j)``).  ``time_limit``: seconds for the solver (within any deadline scope); a
    MIP that does not finish in time is a failure ``(None, None)``."""
    if integral and seconds_left() is not None:
        from .isolation import in_process

        if not in_process():
            return _isolated_mip(env, utils, mode, exact, time_limit)
    return _dominating(env, utils, mode, exact, support, integral, time_limit)


def _dominating(env: Environment, utils: Sequence[Any], mode: str, exact: bool,
                support: Optional[Sequence[Sequence[Any]]], integral: bool, time_limit: Optional[float]):
    built = domination_lp(env, utils, mode)
    if built is None:
        return None, None
    poly, rows = built
    lp = poly.lp
    if lp.n_cols == 0:  # nobody can run anything: y = 0 is the only allocation
        return (Fraction(0) if exact else 0.0), poly.matrix([], exact)
    target_rows = list(rows.values())
    if integral:
        lp.set_integer(range(lp.n_cols))
        res = solve(lp, exact=exact, time_limit=time_limit)
    elif not exact and lp.n_cols >= COLGEN_MIN_COLS:  # cluster-sized: column generation (float only)
        start = [] if support is None else [c for (j, s), c in poly.var.items() if support[j][s]]
        res = ColumnGenerationSession(lp, target_rows, include=start, time_limit=time_limit).solve()
    else:
        res = solve(lp, exact=exact, time_limit=time_limit)
    if not res.ok:
        return None, None
    return res.objective, poly.matrix(res.x, exact)


def _mip_in_worker(deadline: Optional[float], env: Environment, utils: Sequence[Any], mode: str, exact: bool,
                   time_limit: Optional[float]):
    """The MIP, in the worker process: under the caller's deadline (a scope does not cross a fork)."""
    with scope(deadline):
        return _dominating(env, utils, mode, exact, None, True, time_limit)


_WORKER: list = []  # this process's MIP worker (made at the first MIP under a deadline)


def _isolated_mip(env: Environment, utils: Sequence[Any], mode: str, exact: bool, time_limit: Optional[float]):
    """:func:`_dominating` with ``integral=True`` in the worker process, killed at the deadline (module
    docstring): ``BudgetExhausted`` when the deadline comes first, ``(None, None)`` when the solve overruns
    its own limit by :data:`MIP_GRACE` or its process dies (no answer: solver trouble, never a verdict)."""
    from .isolation import UserCodeFailure, Worker

    if not _WORKER or _WORKER[0][0] != os.getpid():
        _WORKER[:] = [(os.getpid(), Worker(_mip_in_worker, label="a MIP solve"))]
    worker = _WORKER[0][1]
    limit = (time_limit if time_limit is not None else DEFAULT_MIP_LIMIT) + MIP_GRACE
    with call_limit_scope(limit, override=True):
        try:
            return worker(current(), env, list(utils), mode, exact, time_limit)
        except UserCodeFailure:
            left = seconds_left()
            if left is not None and left <= 0:  # the solve ended at the deadline in its process
                raise BudgetExhausted("a MIP solve") from None
            return None, None
