"""Exact infeasibility certificates from a float solver's dual ray (Farkas' lemma), for ``lp.LPSession``.

HiGHS reports an infeasible LP with a dual ray ``y`` (row multipliers).  :func:`proves_infeasible`
checks in rationals that ``y`` is a proof; :func:`ray_proves_infeasible` also tries the ray
rationalised, since float rounding leaves tiny wrong-signed terms.  ``lp`` is a ``lp.LinearProgram``
in exact form (rows as ``{col: Fraction}``, bounds ``Fraction`` or ``None``).
"""
from __future__ import annotations

from fractions import Fraction
from math import inf as INF
from typing import Any, Optional

__all__ = ["ray_proves_infeasible", "proves_infeasible"]

ZERO = Fraction(0)


def ray_proves_infeasible(lp: Any, ray: Any) -> bool:
    """HiGHS's dual ray proves the exact ``lp`` infeasible (see :func:`proves_infeasible`): tried as given
    (each float taken exactly) and, since its rounding leaves tiny wrong-signed terms, rationalised
    (entries over the largest, nearest fractions with denominators <= 10**6, tiny ones dropped) -- the
    exact combinatorial certificate is usually that simple.  Either way the check is exact."""
    if proves_infeasible(lp, ray):
        return True
    top = max((abs(v) for v in ray), default=0.0)
    if not top or top != top or top == INF:
        return False
    return proves_infeasible(lp, [Fraction(v / top).limit_denominator(10 ** 6) if abs(v) > 1e-9 * top else 0
                                  for v in ray])


def proves_infeasible(lp: Any, ray: Any) -> bool:
    """The row multipliers ``ray`` prove ``lp`` infeasible (Farkas): with ``z = A^T y``, the values of
    ``y^T (A x)`` that the row bounds allow and the values of ``z^T x`` that the column bounds allow
    are disjoint intervals.  Checked in rationals, so True is a proof."""
    z: dict[int, Fraction] = {}
    rlo, rhi = [ZERO, False], [ZERO, False]  # [sum, some term is infinite]
    for i, v in enumerate(ray):
        if not v:
            continue
        y = Fraction(v)
        lo, up = lp.row_lower[i], lp.row_upper[i]
        _add_range(rlo, rhi, y, lo, up)
        for c, a in lp.rows[i].items():
            z[c] = z.get(c, ZERO) + y * a
    xlo, xhi = [ZERO, False], [ZERO, False]
    for c, zc in z.items():
        if zc:
            _add_range(xlo, xhi, zc, lp.col_lower[c], lp.col_upper[c])
    return (not rlo[1] and not xhi[1] and rlo[0] > xhi[0]) or (not rhi[1] and not xlo[1] and rhi[0] < xlo[0])


def _add_range(lo_acc: list, hi_acc: list, y: Fraction, lo: Optional[Fraction], up: Optional[Fraction]) -> None:
    """Add the range of ``y * v`` for ``lo <= v <= up`` (None: infinite) to the accumulators."""
    a, b = (lo, up) if y > 0 else (up, lo)
    if a is None:
        lo_acc[1] = True
    else:
        lo_acc[0] += y * a
    if b is None:
        hi_acc[1] = True
    else:
        hi_acc[0] += y * b
