"""Java and Go semantics the production ports reproduce, on EXACT numbers, written once.

Upstream schedulers compute in ``float``/``double``/``float64`` and sort with their language's library; the ports
compute exactly (``Fraction``) and keep what the language would do where it matters to the ORDER: a division by
zero, a NaN in a comparison, a sort or an ordered set whose comparator is not a strict weak order.  Read, not
copied: the Java Language Specification (floating-point division and comparison, IEEE 754), the JDK's
``java.lang.Math.signum``, ``java.lang.Double.compare``, ``java.lang.String.compareTo``, ``java.util.TimSort``
(``sort``, ``countRunAndMakeAscending``, ``binarySort``, ``MIN_MERGE``) and ``java.util.TreeMap`` (``put``,
``fixAfterInsertion``, ``rotateLeft``, ``rotateRight``); the Go specification (integer division truncates toward
zero).  The tests check every function here against the JDK when one is installed
(tests/mechanisms/test_java_go.py; OpenJDK 17 when they were written).

Numbers.  An exact value is a ``Fraction`` (or an ``int``); the IEEE specials are floats: ``INF`` / ``-INF``
(``mechverify.numbers.INF``) and :data:`NAN`.  Upstream's zeros are ``+0`` (usages, capacities and weights are
never negative), so a signed zero is not modelled.

* :func:`ieee_div` -- ``a / b`` as ``float``/``double``/``float64`` divide: ``x / 0`` is ``+-inf``, ``0 / 0``
  NaN, ``inf / x`` infinite, ``x / inf`` 0, a NaN operand NaN;
* :func:`isnan`, :func:`gt` (``a > b``: false with a NaN), :func:`signum_diff` (``(int) Math.signum(a - b)``: 0
  with a NaN, 0 for the same infinity on both sides), :func:`double_compare` (``Double.compare``: a total order,
  NaN above ``+inf`` and equal to itself) and :func:`double_key` (that order as a sort key);
* :func:`string_key` -- a ``String`` as its UTF-16 code units: byte order is ``String.compareTo``'s order;
* :func:`java_sort` -- ``Collections.sort`` / ``List.sort`` / ``Arrays.sort(T[], Comparator)`` /
  ``Stream.sorted`` (all ``TimSort``): below :data:`MIN_MERGE` elements exactly the JDK's (the first run made
  ascending, then binary insertion), so a comparator that is not a strict weak order gives the JDK's order;
  from :data:`MIN_MERGE` up a stable sort, the JDK's order for a strict weak order (the JDK merges runs and
  may throw "Comparison method violates its general contract!" otherwise; not emulated);
* :func:`treeset_order` -- the iteration order of a ``java.util.TreeSet`` after ``add``-ing items in order
  (``TreeMap``'s red-black insertion: an item comparing 0 to one on its search path is not added);
* :func:`go_int_div` -- Go's integer ``/`` (truncates toward zero).
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import cmp_to_key
from typing import Any, Callable, Optional, Sequence

from mechverify.numbers import INF

__all__ = ["NAN", "MIN_MERGE", "isnan", "ieee_div", "gt", "signum_diff", "double_compare", "double_key",
           "string_key", "java_sort", "treeset_order", "go_int_div"]

#: IEEE NaN, what ``0 / 0`` gives
NAN = math.nan
#: below this many elements the JDK's TimSort is one run made ascending plus a binary insertion sort
MIN_MERGE = 32

_ZERO = Fraction(0)


# ---------------------------------------------------------------------- IEEE arithmetic on exact numbers
def isnan(v: Any) -> bool:
    """``v`` is NaN (exact numbers never are)."""
    return isinstance(v, float) and v != v


def _isinf(v: Any) -> bool:
    return isinstance(v, float) and math.isinf(v)


def ieee_div(a: Any, b: Any) -> Any:
    """``a / b`` as IEEE floating point divides, on exact numbers: ``x / 0`` is ``+inf`` for ``x > 0``
    (``-inf`` for ``x < 0``), ``0 / 0`` is NaN; ``inf / b`` stays infinite (its sign by ``b``'s; ``inf / inf``
    is NaN), ``x / inf`` is 0; a NaN operand gives NaN.  Otherwise the exact quotient (a ``Fraction``)."""
    if isnan(a) or isnan(b):
        return NAN
    if _isinf(a):
        if _isinf(b):
            return NAN
        return a if b >= 0 else -a  # b = 0: inf / +0 = inf (upstream's zeros are +0)
    if _isinf(b):
        return _ZERO
    if b == 0:
        return NAN if a == 0 else (INF if a > 0 else -INF)
    return a / b if a.__class__ is Fraction else Fraction(a) / b


def gt(a: Any, b: Any) -> bool:
    """``a > b`` as Java (or Go) compares floating point: false when either is NaN."""
    if a.__class__ is Fraction and b.__class__ is Fraction:  # the common case, without Fraction's comparison
        return a._numerator * b._denominator > b._numerator * a._denominator
    if isnan(a) or isnan(b):
        return False
    return a > b


def signum_diff(a: Any, b: Any) -> int:
    """``(int) Math.signum(a - b)``: 0 when either is NaN or both are the same infinity (``inf - inf`` is
    NaN), else the sign of the difference."""
    if a.__class__ is Fraction and b.__class__ is Fraction:  # the common case, without Fraction's comparison
        d = a._numerator * b._denominator - b._numerator * a._denominator
        return (d > 0) - (d < 0)
    if isnan(a) or isnan(b):
        return 0
    if _isinf(a) and _isinf(b) and a == b:
        return 0
    return (a > b) - (a < b)


def double_compare(a: Any, b: Any) -> int:
    """``Double.compare(a, b)``: a total order; NaN equals NaN and is above ``+inf``."""
    na, nb = isnan(a), isnan(b)
    if na or nb:
        return (na > nb) - (na < nb)
    return (a > b) - (a < b)


def double_key(v: Any) -> tuple:
    """``Double.compare``'s order as a sort key (NaN above everything)."""
    return (1, 0) if isnan(v) else (0, v)


def string_key(s: str) -> bytes:
    """``s`` as big-endian UTF-16: byte order is ``String.compareTo``'s order (code units; a prefix first)."""
    return s.encode("utf-16-be", "surrogatepass")


# ---------------------------------------------------------------------- java.util.TimSort
def _count_run_and_make_ascending(a: list, cmp: Callable[[Any, Any], int]) -> int:
    """``countRunAndMakeAscending`` on the whole list: the length of the run at its start -- non-descending
    (``cmp(a[i], a[i-1]) >= 0``), or strictly descending and then reversed in place."""
    hi = len(a)
    if hi == 1:
        return 1
    run = 2
    if cmp(a[1], a[0]) < 0:
        while run < hi and cmp(a[run], a[run - 1]) < 0:
            run += 1
        a[:run] = a[:run][::-1]
    else:
        while run < hi and cmp(a[run], a[run - 1]) >= 0:
            run += 1
    return run


def _binary_sort(a: list, start: int, cmp: Callable[[Any, Any], int]) -> None:
    """``binarySort``: insert ``a[start:]`` one by one into the sorted prefix, each after every element it does
    not compare below (``cmp(pivot, a[mid]) < 0`` goes left), so equal elements keep their order."""
    for i in range(start, len(a)):
        pivot, left, right = a[i], 0, i
        while left < right:
            mid = (left + right) >> 1
            if cmp(pivot, a[mid]) < 0:
                right = mid
            else:
                left = mid + 1
        a[left + 1:i + 1] = a[left:i]
        a[left] = pivot


def java_sort(items: Sequence[Any], cmp: Callable[[Any, Any], int]) -> list:
    """The order ``Collections.sort(list, cmp)`` leaves ``items`` in (module docstring): exactly the JDK's below
    :data:`MIN_MERGE` elements, whatever ``cmp`` is; a stable sort from :data:`MIN_MERGE` up."""
    a = list(items)
    if len(a) < 2:
        return a
    if len(a) >= MIN_MERGE:
        return sorted(a, key=cmp_to_key(cmp))
    _binary_sort(a, _count_run_and_make_ascending(a, cmp), cmp)
    return a


# ---------------------------------------------------------------------- java.util.TreeSet (a red-black TreeMap)
class _Entry:
    __slots__ = ("key", "left", "right", "parent", "red")

    def __init__(self, key: Any, parent: Optional["_Entry"]) -> None:
        self.key, self.left, self.right, self.parent, self.red = key, None, None, parent, False


def treeset_order(items: Sequence[Any], cmp: Callable[[Any, Any], int]) -> list:
    """The iteration order of a ``java.util.TreeSet`` with comparator ``cmp`` after ``add``-ing ``items`` in
    order: ``TreeMap.put``'s descent (an item comparing 0 to one on its path is not added) and
    ``fixAfterInsertion``'s recolouring and rotations, as the JDK's red-black tree does them -- for a
    comparator that is not a strict weak order, the order the set happens to hold."""
    root: list[Optional[_Entry]] = [None]

    def rotate(p: Optional[_Entry], up: str, down: str) -> None:
        """``rotateLeft(p)`` (``up="right"``, ``down="left"``: p's right child takes its place) or its mirror
        ``rotateRight(p)`` (``up="left"``, ``down="right"``)."""
        if p is None:
            return
        r = getattr(p, up)
        setattr(p, up, getattr(r, down))
        if getattr(r, down) is not None:
            getattr(r, down).parent = p
        r.parent = p.parent
        if p.parent is None:
            root[0] = r
        elif getattr(p.parent, down) is p:
            setattr(p.parent, down, r)
        else:
            setattr(p.parent, up, r)
        setattr(r, down, p)
        p.parent = r

    def parent_of(e):
        return None if e is None else e.parent

    def child_of(e, side: str):
        return None if e is None else getattr(e, side)

    def is_red(e) -> bool:
        return e is not None and e.red

    def set_red(e, red: bool) -> None:
        if e is not None:
            e.red = red

    def fix_after_insertion(x: _Entry) -> None:
        # the JDK writes the two mirror cases out; ``side`` is the side of x's parent under its grandparent,
        # ``other`` the uncle's (side "left": rotateLeft(x's parent), then rotateRight(the grandparent))
        x.red = True
        while x is not None and x is not root[0] and x.parent.red:
            grand = parent_of(parent_of(x))
            side, other = ("left", "right") if parent_of(x) is child_of(grand, "left") else ("right", "left")
            y = child_of(grand, other)
            if is_red(y):
                set_red(parent_of(x), False)
                set_red(y, False)
                set_red(grand, True)
                x = grand
            else:
                if x is child_of(parent_of(x), other):
                    x = parent_of(x)
                    rotate(x, other, side)
                set_red(parent_of(x), False)
                set_red(parent_of(parent_of(x)), True)
                rotate(parent_of(parent_of(x)), side, other)
        root[0].red = False

    for key in items:
        t = root[0]
        if t is None:
            root[0] = _Entry(key, None)
            continue
        while True:
            c = cmp(key, t.key)
            if c < 0:
                if t.left is None:
                    t.left = e = _Entry(key, t)
                    break
                t = t.left
            elif c > 0:
                if t.right is None:
                    t.right = e = _Entry(key, t)
                    break
                t = t.right
            else:
                e = None  # already "in" the set: TreeSet.add returns false
                break
        if e is not None:
            fix_after_insertion(e)
    out: list = []
    stack: list[_Entry] = []
    node = root[0]
    while stack or node is not None:  # in-order
        while node is not None:
            stack.append(node)
            node = node.left
        node = stack.pop()
        out.append(node.key)
        node = node.right
    return out


# ---------------------------------------------------------------------- Go
def go_int_div(a: int, b: int) -> int:
    """Go's integer division ``a / b`` (truncates toward zero; Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q
