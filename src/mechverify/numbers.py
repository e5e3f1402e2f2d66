"""Exact numbers: parsing user input into ``Fraction`` and printing them back.

Every number that enters the model is exact.  Accepted spellings:

* JSON/Python ints: ``3``
* strings ``"p/q"``, ``"3"``, ``"0.25"``, ``"-1/2"`` (sign checked by the caller)
* JSON/Python floats: read through their shortest decimal representation,
  so ``0.1`` becomes ``1/10`` (not the binary double ``3602879701896397/2**55``).
* ``Fraction`` instances.

Rejected with an :class:`InstanceError` naming the field: booleans, NaN, infinities,
anything non-numeric.
"""
from __future__ import annotations

import math
import re
import sys
from fractions import Fraction
from typing import Any

__all__ = ["InstanceError", "to_fraction", "fmt", "fmt_exact", "fmt_value", "is_number_like", "INF", "FLOAT_REL", "is_inf",
           "ratio", "rel_change", "gt", "json_number", "from_exact_text", "as_float", "as_floats", "plural"]

#: Infinity, the one spelling (an unbounded normaliser, ``x/0`` ratios, a user whose tasks use nothing).
INF = math.inf

#: THE float tolerance of the project: a float comparison ``a > b`` counts only beyond
#: ``FLOAT_REL * max(1, |b|)``.  Float results are candidates; exact arithmetic decides verdicts.
FLOAT_REL = 1e-7


def as_float(v: Any) -> float:
    """``float(v)``; for a ``Fraction`` the same correctly rounded ``numerator / denominator`` without the
    generic ``numbers.Rational.__float__`` overhead (float paths call this for every number)."""
    if v.__class__ is Fraction:
        return v._numerator / v._denominator
    return float(v)


_FLOATS: dict = {}  # id(tuple) -> (the tuple, its floats): a float run converts each demand vector once


def as_floats(vec: tuple) -> tuple:
    """``tuple(as_float(v) for v in vec)``, remembered for the tuple object itself (a user's demand is the same
    tuple from step to step of a run: converted once, not at every step)."""
    got = _FLOATS.get(id(vec))
    if got is None or got[0] is not vec:
        if len(_FLOATS) > 100_000:
            _FLOATS.clear()
        got = _FLOATS[id(vec)] = (vec, tuple([as_float(v) for v in vec]))
    return got[1]


def is_inf(v: Any) -> bool:
    """``v`` is a float infinity (exact numbers never are)."""
    return isinstance(v, float) and math.isinf(v)


def ratio(num: Any, den: Any) -> Any:
    """``num/den`` with ``x/0 = inf`` for ``x > 0`` and ``0/0 = 1`` (no change)."""
    if den == 0:
        return Fraction(1) if num == 0 else INF
    return num / den


def rel_change(new: Any, old: Any) -> Any:
    """Relative change ``(new - old) / old``: ``0`` when nothing changes (also ``0 -> 0``, where
    :func:`ratio` would say 1), ``inf`` for ``0 -> positive``."""
    if new == old:
        return 0.0 if isinstance(new, float) or isinstance(old, float) else Fraction(0)
    return ratio(new - old, old)


def gt(a: Any, b: Any, exact: bool) -> bool:
    """``a > b``: exactly, or in floats beyond :data:`FLOAT_REL` (relative to ``max(1, |b|)``)."""
    if exact:
        return a > b
    return float(a) > float(b) + FLOAT_REL * max(1.0, abs(float(b)))


def json_number(v: Any, floats: str = "exact") -> Any:
    """A number as JSON: ``Fraction``/int -> ``"p/q"``, infinity -> ``"inf"``, ``None`` stays ``None``.
    Finite floats and ints: ``floats="exact"`` -> their exact ``"p/q"`` text, ``"keep"`` -> the JSON number
    itself.  Tuples (intervals) become lists."""
    if v is None:
        return None
    if isinstance(v, (tuple, list)):
        return [json_number(a, floats) for a in v]
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v if floats == "keep" else fmt_exact(Fraction(v))
    if isinstance(v, int) and floats == "keep":
        return v
    if isinstance(v, (Fraction, int)):
        return fmt_exact(v)
    return v


class InstanceError(ValueError):
    """Bad input.  The message is one line: ``<field>: <what is wrong> (got <value>)``."""


_RATIONAL = re.compile(r"^\s*[+-]?\d+\s*/\s*[+-]?\d+\s*$")
_DECIMAL = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")


_WHOLE = tuple(Fraction(k) for k in range(1024))


def whole_fractions(counts: Any) -> tuple:
    """Whole task counts (non-negative ints) as ``Fraction``s, the small ones shared (a ``Fraction`` is immutable):
    a whole-task mechanism's row of mostly zeros costs no new object per entry."""
    w = _WHOLE
    return tuple(w[v] if v < 1024 else Fraction(v) for v in counts)


def fraction_sum(values: Any) -> Fraction:
    """``sum(values, Fraction(0))`` for ``Fraction``s, exactly, with the numerators of each denominator summed as
    integers first (one ``Fraction`` operation per distinct denominator, not one per term, each with its gcd).
    Any other number among them: the plain sum."""
    values = values if isinstance(values, (list, tuple)) else list(values)
    by: dict[int, int] = {}
    for v in values:
        if v.__class__ is not Fraction:
            return sum(values, Fraction(0))
        n = v._numerator
        if n:
            d = v._denominator
            by[d] = by.get(d, 0) + n
    if len(by) == 1:
        (d, n), = by.items()
        return Fraction(n, d)
    return sum((Fraction(n, d) for d, n in by.items()), Fraction(0))


def is_number_like(value: Any) -> bool:
    """``value`` has a type :func:`to_fraction` may accept (not ``bool``)."""
    return isinstance(value, (int, float, Fraction, str)) and not isinstance(value, bool)


def to_fraction(value: Any, field: str) -> Fraction:
    """Convert ``value`` to an exact ``Fraction`` or raise ``InstanceError`` naming ``field``."""
    if isinstance(value, bool):
        raise InstanceError(f"{field}: expected a number, got boolean {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise InstanceError(f"{field}: must be a finite number (got {value!r})")
        return Fraction(repr(value))
    if isinstance(value, str):
        text = value.strip()
        try:
            if _RATIONAL.match(text):
                num, den = (int(p) for p in text.split("/"))
                if den == 0:
                    raise InstanceError(f"{field}: division by zero in {value!r}")
                return Fraction(num, den)
            if _DECIMAL.match(text):
                return Fraction(text)
        except ValueError as exc:  # e.g. a control character that \s accepts and int() does not: '1/\x1f2'
            if isinstance(exc, InstanceError):
                raise
        raise InstanceError(f"{field}: not a number: {value!r} (use an int, a decimal like '0.25' or 'p/q')")
    # numpy scalars and the like
    try:
        import numpy as np  # local import: numbers must not require numpy at import time

        if isinstance(value, np.integer):
            return Fraction(int(value))
        if isinstance(value, np.floating):
            return to_fraction(float(value), field)
    except ImportError:  # pragma: no cover
        pass
    raise InstanceError(f"{field}: expected a number, got {type(value).__name__} {value!r}")


def _int_text(n: int) -> str:
    """``str(n)`` also beyond Python's default int-to-text guard (4300 digits): an exact result can have
    that many digits although every input number is short (the instance format caps those)."""
    try:
        return str(n)
    except ValueError:
        old = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            return str(n)
        finally:
            sys.set_int_max_str_digits(old)


def from_exact_text(text: str) -> Fraction:
    """The ``Fraction`` that :func:`fmt_exact` printed (``"p/q"`` or ``"p"``), whatever its number of digits."""
    try:
        return Fraction(text)
    except ValueError:
        if not re.fullmatch(r"\s*-?\d+(/\d+)?\s*", text):
            raise
        old = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            return Fraction(text.strip())
        finally:
            sys.set_int_max_str_digits(old)


def fmt_exact(value: Any) -> str:
    """Exact text of a number: ``"p/q"`` or ``"p"`` for integers; ``"inf"`` for infinity."""
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        value = Fraction(value)
    value = Fraction(value)
    num = _int_text(value.numerator)
    return num if value.denominator == 1 else f"{num}/{_int_text(value.denominator)}"


def fmt_value(value: Any) -> str:
    """A number as a message shows it, the same number always the same text: exact values as
    :func:`fmt_exact`, floats by their shortest decimal text without a trailing ``.0`` (``1200000.0`` ->
    ``1200000``, ``0.1`` -> ``0.1``), infinities as ``inf``."""
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return repr(value)
        return str(int(value)) if value.is_integer() else repr(value)
    return fmt_exact(value)


def fmt(value: Any, digits: int = 6) -> str:
    """Human text: integers as integers, everything else rounded to ``digits`` significant digits."""
    if value is None:
        return "-"
    if isinstance(value, Fraction) and value.denominator == 1:
        return str(value.numerator)
    v = float(value)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.{digits}g}"


def plural(n: Any, noun: str) -> str:
    """``noun`` for a count of exactly one (``1 task``), else ``noun + "s"`` (``0 tasks``, ``1/2 tasks``,
    ``2 tasks``): ``f"{n} {plural(n, 'task')}"``.  ``n`` may be a number or its printed text."""
    try:
        one = (n == 1) if not isinstance(n, str) else Fraction(n) == 1
    except (ValueError, ZeroDivisionError, TypeError):
        one = False
    return noun if one else noun + "s"
