"""The feasible set chi(E) of task matrices as LP rows over variables ``x[j,s]``.

One builder for every mechanism and property: a mechanism is "a score per user and this feasible
set (plus, sometimes, extra rows)".  Variables exist only for pairs ``(j, s)`` where ``j`` may use
``s`` (eligible, unless placement is ignored) and ``gamma[j,s] > 0``; every other ``x[j,s]`` is 0.

Rows (see ``allocation.py`` for the formulas): RDM or TDM per server, external per resource,
task bounds per user.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Sequence

from .allocation import Allocation
from .lp import LinearProgram
from .model import Environment
from .numbers import is_inf

__all__ = ["TaskPolytope"]


class TaskPolytope:
    """Builds ``LinearProgram`` rows for chi(E).

    Parameters
    ----------
    mode: ``"rdm"`` (seed 002 eq. (9)) or ``"tdm"`` (eq. (10)).
    placement: honour eligibility (``False``: every server is usable, e.g. CDRF / per-server variants).
    external, bounds: include the external-resource rows / task-bound rows.
    exact: build a ``Fraction`` LP (the default) or a float one (``LinearProgram(exact=False)``, for a
    mechanism's float mode: no ``Fraction`` arithmetic at all; it can only be solved in floats).
    """

    def __init__(self, env: Environment, mode: str = "rdm", placement: bool = True, external: bool = True,
                 bounds: bool = True, maximize: bool = True, exact: bool = True) -> None:
        if mode not in ("rdm", "tdm"):
            raise ValueError(f"mode: expected 'rdm' or 'tdm', got {mode!r}")
        self.env, self.mode = env, mode
        self.lp = LinearProgram(maximize=maximize, exact=exact)
        self.var: dict[tuple[int, int], int] = {}
        self.user_vars: list[list[tuple[int, int]]] = [[] for _ in range(env.n_users)]  # (s, col)
        J, S = env.n_users, env.n_servers
        for j in range(J):
            for s in range(S):
                if placement and s not in env.eligible[j]:
                    continue
                if not env.runs_on(j, s):
                    continue
                col = self.lp.add_var(0, None, 0, name=f"x[{env.users[j]},{env.servers[s]}]")
                self.var[(j, s)] = col
                self.user_vars[j].append((s, col))
        self.capacity_rows: dict[tuple[int, int], int] = {}
        self.tdm_rows: dict[int, int] = {}
        self.external_rows: dict[int, int] = {}
        self.bound_rows: dict[int, int] = {}
        if mode == "rdm":
            for s in range(S):
                on_s = [(col, env.d(j, s)) for j in range(J) if (col := self.var.get((j, s))) is not None]
                for r in range(env.n_resources):
                    coeffs = {col: d[r] for col, d in on_s if d[r]}
                    if coeffs:
                        self.capacity_rows[(s, r)] = self.lp.add_row(coeffs, None, env.capacity[s][r])
        else:
            for s in range(env.n_servers):
                coeffs = {}
                for j in range(env.n_users):
                    col = self.var.get((j, s))
                    if col is not None:
                        g = env.monopoly_tasks(j, s)
                        if not is_inf(g):
                            coeffs[col] = 1 / g
                if coeffs:
                    self.tdm_rows[s] = self.lp.add_row(coeffs, None, 1)
        if external:
            for k in range(env.n_external):
                coeffs = {}
                for j in range(env.n_users):
                    dk = env.external_demand[j][k]
                    if dk:
                        for s, col in self.user_vars[j]:
                            coeffs[col] = dk
                if coeffs:
                    self.external_rows[k] = self.lp.add_row(coeffs, None, env.external_capacity[k])
        if bounds:
            for j in range(env.n_users):
                if env.tasks[j] is not None and self.user_vars[j]:
                    self.bound_rows[j] = self.lp.add_row({c: 1 for _, c in self.user_vars[j]}, None, env.tasks[j])

    # ------------------------------------------------------------------ helpers
    def total(self, j: int, scale: Any = 1) -> dict[int, Any]:
        """Linear form ``scale * x_j = scale * sum_s x[j,s]``."""
        return {c: scale for _, c in self.user_vars[j]}

    def can_run(self, j: int) -> bool:
        """User ``j`` has a column (an eligible server where it can run)."""
        return bool(self.user_vars[j])

    def matrix(self, values: Sequence[Any], exact: bool) -> tuple[tuple[Any, ...], ...]:
        """Task matrix ``x[j][s]`` from LP column values."""
        zero: Any = Fraction(0) if exact else 0.0
        rows = [[zero] * self.env.n_servers for _ in range(self.env.n_users)]
        for (j, s), col in self.var.items():
            v = values[col]
            if not exact:
                v = float(v)
                if v <= 0:
                    v = 0.0  # also turns HiGHS's -0.0 into 0.0
            rows[j][s] = v
        return tuple(tuple(r) for r in rows)

    def allocation(self, values: Sequence[Any], exact: bool, mechanism: str, info: Optional[dict] = None) -> Allocation:
        """The ``Allocation`` of LP column values (:meth:`matrix`)."""
        return Allocation(self.env, self.matrix(values, exact), mechanism, exact, dict(info or {}))
