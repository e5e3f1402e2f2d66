"""Kueue's dominant resource share of one node (``DRS``), exactly, and the integer DRS of its historic versions.
The cohort tree it is taken on is :mod:`mechanisms.ports.kueue.cohort`; the port, ``kueue-drs``, is
:mod:`mechanisms.ports.kueue.port`.

Source (read, not copied; our code follows the semantics): kubernetes-sigs/kueue @
ff69552e79ad21652c36caa97038382e55625cf7 (``mechanisms.ports.kueue.port.COMMIT``),
``pkg/cache/scheduler/fair_sharing.go``: ``dominantResourceShare``, ``calculateLendable``, the ``DRS`` type
(``PreciseWeightedShare``, ``CompareDRS``, ``roundedWeightedShare``, ``IsBorrowingOn``, ``zeroWeightBorrows``);
its test ``fair_sharing_test.go`` (``TestDominantResourceShare``, ``TestIsBorrowingOn``).

The dominant resource share (``dominantResourceShare``)
------------------------------------------------------
* A node's SUBTREE QUOTA is its own quota plus its children's subtree quotas; its USAGE is its workloads'
  (a ClusterQueue) or its children's summed usages (a Cohort; no lending limit, so everything is lent up).
* ``borrowed_r = usage_r + request_r - subtreeQuota_r`` where positive (``request``: the nominee's workload,
  added by ``SimulateUsageAddition`` before the DRS is taken).  No resource borrowed: DRS 0, not borrowing.
* ``lendable_r``: ``calculateLendable(parent)`` sums ``potentialAvailable(parent, r)``; without lending and
  borrowing limits ``localQuota`` is 0 at every node and ``potentialAvailable`` is the ROOT's subtree quota,
  whatever the depth.  ``ratio_r = borrowed_r x 1000 / lendable_r`` over the borrowed resources with
  ``lendable_r > 0`` (the others are skipped); the DRS is the largest ratio, ties to the alphabetically first
  resource name.  A node without a parent (the root) has DRS 0.
* Weighted share: ``ratio / weight``; 0 when the ratio is 0 (even while borrowing: every borrowed resource
  skipped); weight 0 while the ratio is positive: ``+inf`` (``CompareDRS`` orders two such nodes by their
  unweighted ratios; the status rounds it to MaxInt64).  Upstream computes the ratio in ``float64``; we
  compute it EXACTLY (``Fraction``) and compare exactly.  The status value (``roundedWeightedShare``) is the
  CEILING of the exact weighted share (:meth:`DRS.rounded`): e.g. ``1 x 1000 / 1500`` gives 1.

The integer DRS of the historic versions (:func:`integer_drs`)
-------------------------------------------------------------
``kueue-drs@6577`` reproduces issue 6577 "Fairsharing bug that prevents CQs from reclaiming guarantees", fixed by PR
6617 (5106fb28c399ad05de55ca313db0238caa060c3a: ``max(1, ...)``) and PR 6925
(efc4a1bc10eacdd8a86129ccae34eadf3dd75424: the exact ``DRS`` type).  Before them
(``pkg/cache/fair_sharing.go`` @ 0b7ad55aaacf38892be32e3f33eb61bde28ae791, the parent of 6617) the DRS was
int64 arithmetic: ``ratio = b * 1000 / lendable`` (integer division), ``drs = max ratio`` starting at -1,
then MaxInt for weight 0, else ``drs * 1000 / weight.MilliValue()`` (integer division; ``MilliValue`` is
``ceil(1000 w)``).  A borrowing queue with ``1000 b < lendable`` (large quotas) or ``drs < w`` (large
weights) gets 0 -- exactly the values PR 6617's new tests pin at 1 (501 vs nominal 500 in a cohort of 1500;
800 vs 500 with weights 300).  Its tournament compared those integers, then priority, then FIFO (no
non-borrowing step: that came with PR 9484).  With every borrowed resource at ``lendable <= 0`` the value is
``-1000 / milli(w)`` truncated (``-1`` for weight 1).  :func:`integer_drs` is that formula.

Not registered: issue 4961 (weight-0 cohorts preempted workloads within their nominal quota; PR 4962,
887dddfe202e7b8d4b9d5cf3d05674e8946dfb4a).  Before it (``pkg/cache/fair_sharing.go`` @
070fa7d9b8ec7dec286dcedd5c1ae5773d5f2786) weight 0 returned MaxInt BEFORE the borrowing check, so a
weight-0 node within its quota had the largest share.  Our queue weights are > 0 (docs/model.md), so no
instance can show it; :func:`integer_drs` keeps that formula (``zero_weight_first=True``) and the tests pin
both behaviours on weight 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.numbers import INF

from ..java_go import go_int_div

__all__ = ["PRE_4962", "MAX_INT64", "DRS", "dominant_resource_share", "compare_drs", "integer_drs", "milli_value"]

#: the parent of PR 4962's merge (887dddfe20): weight 0 before the borrowing check (issue 4961)
PRE_4962 = "070fa7d9b8ec7dec286dcedd5c1ae5773d5f2786"
#: ``math.MaxInt64``: the status value of a weight-0 node that borrows
MAX_INT64 = 2 ** 63 - 1
_ZERO = Fraction(0)


# ---------------------------------------------------------------------- the DRS of one node (numbers only)
def _div(a: Any, b: Any) -> Any:
    """``a / b`` exactly (``Fraction``) unless a float is involved."""
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    return Fraction(a) / Fraction(b)


@dataclass(frozen=True)
class DRS:
    """A node's dominant resource share (upstream's ``DRS``): ``ratio`` is the unweighted
    ``max borrowed_r x 1000 / lendable_r`` (exact), ``resource`` its resource name ("" if none),
    ``borrowing`` whether usage exceeds the subtree quota on some resource, ``borrowed`` those resources'
    indices."""

    weight: Any
    ratio: Any
    resource: str = ""
    borrowing: bool = False
    borrowed: tuple[int, ...] = ()

    @property
    def is_zero(self) -> bool:
        return self.ratio == 0

    @property
    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and not self.is_zero

    def precise(self) -> Any:
        """``PreciseWeightedShare``: 0 if the ratio is 0, ``INF`` for weight 0, else ``ratio / weight``."""
        if self.is_zero:
            return _ZERO
        if self.weight == 0:
            return INF
        return _div(self.ratio, self.weight)

    def rounded(self) -> tuple[int, str]:
        """``roundedWeightedShare`` (the status value): MaxInt64 for a weight-0 node that borrows, else the
        ceiling of the weighted share; with the dominant resource."""
        if self.zero_weight_borrows:
            return MAX_INT64, self.resource
        v = self.precise()
        if isinstance(v, float) and not math.isfinite(v):  # only a float state can get here (NaN, inf)
            return (MAX_INT64 if v > 0 else 0), self.resource
        return int(math.ceil(v)), self.resource

    def key(self) -> tuple:
        """A sort key that orders like ``CompareDRS``: weight-0 borrowers last, among them by unweighted ratio;
        the others by weighted share."""
        return (1, self.ratio) if self.zero_weight_borrows else (0, self.precise())

    def borrowing_on(self, requested: Sequence[Any]) -> bool:
        """``IsBorrowingOn``: borrowing on a resource ``r`` with ``requested[r] > 0``."""
        return any(requested[r] > 0 for r in self.borrowed)


def dominant_resource_share(names: Sequence[str], usage: Sequence[Any], quota: Sequence[Any],
                            lendable: Sequence[Any], weight: Any = 1, request: Optional[Sequence[Any]] = None,
                            has_parent: bool = True) -> DRS:
    """Upstream's ``dominantResourceShare`` for one node: ``usage`` and ``quota`` (its subtree quota) per
    resource, ``lendable`` (what its parent can lend, per resource), its fair-sharing ``weight`` and the
    ``request`` being simulated (module docstring)."""
    if not has_parent:
        return DRS(weight, _ZERO)
    borrowed: list[tuple[int, Any]] = []
    for r in range(len(names)):
        b = usage[r] + (request[r] if request is not None else 0) - quota[r]
        if b > 0:
            borrowed.append((r, b))
    if not borrowed:
        return DRS(weight, _ZERO)
    ratio: Any = _ZERO
    res = ""
    for r, b in borrowed:
        lr = lendable[r]
        if lr > 0:
            v = _div(b * 1000, lr)
            if v > ratio or (v == ratio and names[r] < res):
                ratio, res = v, names[r]
    return DRS(weight, ratio, res, True, tuple(r for r, _ in borrowed))


def compare_drs(a: DRS, b: DRS) -> int:
    """``CompareDRS``: < 0 when ``a`` is preferred for scheduling."""
    ka, kb = a.key(), b.key()
    return -1 if ka < kb else (1 if ka > kb else 0)


def milli_value(w: Any) -> int:
    """``resource.Quantity.MilliValue()``: ``ceil(1000 w)``."""
    if isinstance(w, float):
        return int(math.ceil(w * 1000))
    return -((-Fraction(w) * 1000) // 1)


def _floor_ratio(b: Any, lr: Any) -> int:
    """``b * 1000 / lr`` in int64 division for ``b, lr > 0`` (the exact quotient, floored)."""
    v = _div(b * 1000, lr)
    return int(math.floor(v))


def integer_drs(names: Sequence[str], usage: Sequence[Any], quota: Sequence[Any], lendable: Sequence[Any],
                weight: Any = 1, request: Optional[Sequence[Any]] = None, has_parent: bool = True,
                zero_weight_first: bool = False) -> tuple[int, str]:
    """The integer DRS before PR 6617 (``pkg/cache/fair_sharing.go`` @ ``mechanisms.ports.kueue.port.PRE_6617``;
    module docstring):
    ``(value, dominant resource)``.  ``zero_weight_first=True``: the version before PR 4962 (@ :data:`PRE_4962`),
    where weight 0 gives MaxInt64 before the borrowing check (issue 4961).  Our amounts stand for upstream's
    int64 quantities; a fractional amount enters the integer division as its exact quotient, floored."""
    if not has_parent:
        return 0, ""
    if zero_weight_first and weight == 0:
        return MAX_INT64, ""
    borrowed = []
    for r in range(len(names)):
        b = usage[r] + (request[r] if request is not None else 0) - quota[r]
        if b > 0:
            borrowed.append((r, b))
    if not borrowed:
        return 0, ""
    drs, res = -1, ""
    for r, b in borrowed:
        lr = lendable[r]
        if lr > 0:
            v = _floor_ratio(b, lr)
            if v > drs or (v == drs and names[r] < res):
                drs, res = v, names[r]
    if weight == 0:
        return MAX_INT64, res
    return go_int_div(drs * 1000, milli_value(weight)), res
