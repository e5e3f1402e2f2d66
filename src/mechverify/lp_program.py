"""The LP layer's data: :class:`LinearProgram` (an LP or MIP with a builder API, exact or float numbers),
:class:`LPResult` (what a solve returns) and :class:`LPError` (solver trouble).  Solving them is
:mod:`mechverify.lp`'s (which re-exports all three); the problem's form and the sign convention of the
duals are stated there.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Mapping, Optional, Sequence

from .highs import _INF
from .numbers import as_float

__all__ = ["LinearProgram", "LPResult", "LPError"]


class LPError(RuntimeError):
    """Solver trouble (numerical failure, unexpected status; also a mechanism's iterative algorithm that
    does not reach its allocation, e.g. PS-DSF's Algorithm I).  Never a verdict."""


@dataclass
class LPResult:
    """Outcome of an LP solve (exact ``Fraction`` values when ``exact``)."""
    status: str  # 'optimal' | 'infeasible' | 'unbounded' | 'error'
    x: Optional[list] = None  # column values (Fraction if exact else float)
    objective: Any = None
    row_dual: Optional[list] = None  # see module docstring for the sign convention; None if unknown
    row_activity: Optional[list] = None
    exact: bool = False
    method: str = ""  # 'highs', 'glpk', 'basis', 'farkas', 'z3'
    reason: str = ""

    @property
    def ok(self) -> bool:
        """The LP was solved to optimality."""
        return self.status == "optimal"


_SMALL_INT = {i: Fraction(i) for i in range(-64, 65)}  # shared (Fractions are immutable)
_ZERO = _SMALL_INT[0]


def _F(v: Any) -> Optional[Fraction]:
    cls = v.__class__
    if cls is Fraction:  # fast paths first: this is called for every LP coefficient
        return v
    if cls is int and -64 <= v <= 64:
        return _SMALL_INT[v]
    if v is None:
        return None
    if isinstance(v, Fraction):
        return v
    if isinstance(v, int):
        return Fraction(v)
    if isinstance(v, float):
        if math.isinf(v):
            return None
        return Fraction(v)
    return Fraction(v)


def _Fl(v: Any) -> Optional[float]:
    """The float twin of :func:`_F` (a float-mode LP's numbers): ``None`` and infinities are ``None``."""
    cls = v.__class__
    if cls is not float:  # this is called for every LP coefficient: floats take one test
        if cls is int:
            return float(v)
        if cls is Fraction:
            return v._numerator / v._denominator
        if v is None:
            return None
        v = as_float(v)
    if -_INF < v < _INF:
        return v
    return None if math.isinf(v) else v  # +-inf: no bound; a NaN passes through unchanged


class LinearProgram:
    """LP data with a builder API.  Row-wise sparse storage.

    ``exact=True`` (the default) keeps every number as a ``Fraction``, so the LP can be solved exactly.
    ``exact=False`` keeps plain floats: for callers that only ever solve it in floats (a mechanism's
    float mode), which then skip every ``Fraction`` conversion; ``LPSession.solve(exact=True)`` refuses it.
    """

    def __init__(self, maximize: bool = False, exact: bool = True) -> None:
        self.maximize = maximize
        self.exact = exact
        self.num = _F if exact else _Fl  # the converter of every number stored
        self.zero: Any = _ZERO if exact else 0.0
        self.col_lower: list[Optional[Fraction]] = []
        self.col_upper: list[Optional[Fraction]] = []
        self.cost: list[Fraction] = []
        self.row_lower: list[Optional[Fraction]] = []
        self.row_upper: list[Optional[Fraction]] = []
        self.rows: list[dict[int, Fraction]] = []  # row -> {col: coef}
        self.col_names: list[str] = []
        self.integer: set[int] = set()  # integer columns: a MIP when not empty (module docstring)

    @property
    def n_cols(self) -> int:
        """Number of columns (variables)."""
        return len(self.cost)

    @property
    def n_rows(self) -> int:
        """Number of rows (constraints)."""
        return len(self.rows)

    @property
    def is_mip(self) -> bool:
        """Some column is integer."""
        return bool(self.integer)

    def set_integer(self, cols: Iterable[int], integer: bool = True) -> None:
        """Mark ``cols`` integer (``integer=False``: continuous again)."""
        if integer:
            self.integer.update(cols)
        else:
            self.integer.difference_update(cols)

    def add_var(self, lower: Any = 0, upper: Any = None, cost: Any = 0, name: str = "",
                integer: bool = False) -> int:
        """Add a column with bounds and cost (``integer``: an integer column); returns its index."""
        if lower.__class__ is int and cost.__class__ is int and upper is None and lower == 0 == cost:
            self.col_lower.append(self.zero)  # x >= 0 without a cost: the usual column, no conversions
            self.col_upper.append(None)
            self.cost.append(self.zero)
        else:
            num = self.num
            self.col_lower.append(num(lower))
            self.col_upper.append(num(upper))
            self.cost.append(num(cost) or self.zero)
        self.col_names.append(name)
        if integer:
            self.integer.add(len(self.cost) - 1)
        return len(self.cost) - 1

    def add_row(self, coeffs: Mapping[int, Any] | Iterable[tuple[int, Any]], lower: Any = None,
                upper: Any = None) -> int:
        """Add the row ``lower <= sum coeffs[c] x_c <= upper`` (``None`` = free); returns its index."""
        num = self.num
        if coeffs.__class__ is dict or isinstance(coeffs, Mapping):  # one entry per column: one pass
            row = {c: fv for c, v in coeffs.items() if (fv := num(v))}
        else:  # pairs may repeat a column: summed
            acc: dict[int, Any] = {}
            for c, v in coeffs:
                fv = num(v)
                if fv:
                    prev = acc.get(c)
                    acc[c] = fv if prev is None else prev + fv
            row = {c: v for c, v in acc.items() if v}
        self.rows.append(row)
        self.row_lower.append(num(lower))
        self.row_upper.append(num(upper))
        return len(self.rows) - 1

    def set_cost(self, coeffs: Mapping[int, Any]) -> None:
        """Replace the objective by ``coeffs`` (columns not named cost 0)."""
        self.cost = [self.zero] * self.n_cols
        for c, v in coeffs.items():
            self.cost[c] = self.num(v) or self.zero

    def activity(self, x: Sequence[Any], i: int) -> Any:
        """``sum_c A[i,c] x_c`` of row ``i`` at ``x``."""
        return sum((v * x[c] for c, v in self.rows[i].items()), Fraction(0) if isinstance(x[0] if x else 0, Fraction) else 0.0)

    def copy(self) -> "LinearProgram":
        """An independent copy (rows, bounds, cost, names)."""
        lp = LinearProgram(self.maximize, self.exact)
        lp.col_lower, lp.col_upper, lp.cost = list(self.col_lower), list(self.col_upper), list(self.cost)
        lp.row_lower, lp.row_upper = list(self.row_lower), list(self.row_upper)
        lp.rows = [dict(r) for r in self.rows]
        lp.col_names = list(self.col_names)
        lp.integer = set(self.integer)
        return lp
