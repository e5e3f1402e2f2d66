"""YARN FairScheduler's ``DominantResourceFairnessPolicy`` comparator, as pure functions on schedulables (the
port, ``yarn-drf``, is :mod:`mechanisms.ports.yarn.drf`).

Source (read, not copied; our code follows the semantics): apache/hadoop @
ee91492f16528292c4ad173dd018807a63fe6106, ``hadoop-yarn-server-resourcemanager/src/main/java/org/apache/hadoop/
yarn/server/resourcemanager/scheduler/fair/policies/DominantResourceFairnessPolicy.java``: ``getComparator``
(``COMPARATOR2`` when exactly two resource types are configured, else ``COMPARATORN``),
``DominantResourceFairnessComparatorN`` (``compare``, ``calculateClusterAndFairRatios``, ``sortRatios``,
``calculateMinShareRatios``, ``compareRatios``), ``DominantResourceFairnessComparator2`` and
``compareAttribrutes`` (start time, then name); upstream's tests ``TestDominantResourceFairnessPolicy.java`` @
9193ed22dd9eb00f82573a9ba763db72ee65aad0 (tests/mechanisms/test_yarn_drf.py replays every comparison).

The comparator (``compare(s1, s2)``: < 0 means ``s1`` gets a container first)
-----------------------------------------------------------------------------
For a schedulable with usage ``u``, min share ``m`` and weight ``w``, on a cluster of capacity ``c``:

* usage ratios ``u_r / c_r`` and fair ratios ``(u_r / c_r) / w`` for every resource type;
* its DOMINANT resource: the first index with the largest usage ratio (a later one replaces it only when
  strictly larger; ``Comparator2``: vcores when its ratio is strictly larger than memory's, else memory --
  the same rule for two resources);
* NEEDY: its usage of the dominant resource is below its min share of that resource (an exact comparison of
  amounts, no division);
* a needy one goes before a non-needy one;
* neither needy: both ratio vectors are sorted by usage ratio, DESCENDING (``Arrays.sort``, stable), and the
  fair ratios are compared position by position; the first difference decides;
* both needy: the same with the min-share ratios ``u_r / m_r`` (sorted by usage ratio);
* a tie: start time, then name (``String.compareTo``).

``Comparator2`` (two resource types) and ``ComparatorN`` agree in exact arithmetic, NaN included: both pick
the same dominant resource and compare the dominant position first, then the other.  We compute
``ComparatorN`` for any number of resources (one resource, which upstream cannot configure, is its
one-row case).

Division by zero: upstream divides in ``float`` (``ComparatorN``) or ``double`` (``Comparator2``) and we
reproduce what IEEE arithmetic gives, on exact numbers: ``x / 0`` is ``+inf`` for ``x > 0`` (``-inf`` for
``x < 0``) and ``0 / 0`` is NaN; ``inf / w`` stays ``inf``.  A comparison step is ``(int) Math.signum(a -
b)``: 0 when either side is NaN, 0 for ``inf`` against ``inf`` (``inf - inf`` is NaN), else the sign.  The
dominant-resource scan uses ``>``, false with NaN (so a NaN ratio at index 0 stays dominant).  The sort of
the ratio rows is Java's ``TimSort`` below its merge threshold (32 rows): the longest initial run (reversed
if strictly descending), then binary insertion; we run exactly that, with the comparator ``signum(o2[0] -
o1[0])``, so rows with a NaN usage ratio (a resource the cluster has none of) land where upstream's sort
puts them.  These semantics are :mod:`mechanisms.ports.java_go`'s (``ieee_div``, ``signum_diff``, ``gt``,
``java_sort``, ``treeset_order``, ``string_key``), shared with ``yarn-capacity``.  Where each case arises:

* weight 0: ``x / 0`` -- upstream's comment: "this Schedulable will lose out to any other Schedulable with
  non-zero weight" (our instance format forbids weight 0; the pure functions take it);
* min share 0 on a resource: its min-share ratio is ``+inf`` with usage > 0 and NaN with usage 0 (only read
  when both are needy, i.e. below a positive min share of their dominant resource);
* cluster capacity 0 of a resource: its usage ratio is NaN (usage 0) -- a resource type configured that
  no node has.

A NaN in a compared position makes that position a tie.  So upstream's comparator is NOT a strict weak
order when it meets one: two needy queues tied on their dominant min-share ratio that differ on another
resource, and a third queue tied with both except for a NaN there (usage 0 of a resource its min share
gives 0 of), are ordered by the ratio between the first two and by NAME against the third -- a cycle when
the names disagree with the ratios (tests/mechanisms/test_yarn_drf.py, e.g. three GPU-cluster queues, one
without GPUs and without a GPU min share).  That is upstream's behaviour today, reproduced, not repaired.

Exact arithmetic otherwise: upstream rounds to ``float``/``double``; two ratios equal exactly tie here and go
to the tie-breaks even where rounding would order them.

The historic bug: ``yarn-drf@YARN-11482``
-----------------------------------------
Before the fix, ``Comparator2`` decided whether ``s2`` is needy from ``s1``'s usage::

    s2Needy = usage1[dominant2] < minShare2[dominant2]      (fixed: usage2[dominant2])

(DominantResourceFairnessPolicy.java @ ee91492f, ``DominantResourceFairnessComparator2.compare``; PR 5607
quotes the same lines.)  Only ``Comparator2`` had it: ``ComparatorN`` at the same revision reads ``usage2``.
So the variant differs from the fixed policy only with exactly two resources, where upstream uses
``Comparator2``; ``compare(a, b)`` and ``compare(b, a)`` then need not be opposite (a needy queue looks
non-needy next to a heavier sibling, but needy when it is the first argument).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, NamedTuple, Sequence

from ..java_go import gt, ieee_div, java_sort, signum_diff, string_key

__all__ = ["Schedulable", "cluster_ratios", "min_share_ratios", "sort_ratios", "compare_ratios", "Prepared",
           "prepare", "compare_prepared", "compare_schedulables"]

_ZERO = Fraction(0)


# ---------------------------------------------------------------------- the comparator's parts
class Schedulable(NamedTuple):
    """What the comparator reads of a schedulable (``Schedulable`` upstream)."""

    usage: tuple  # getResourceUsage(), per resource
    min_share: tuple  # getMinShare(), per resource (0 for apps and for queues without a guarantee)
    weight: Any  # getWeight()
    start: int  # getStartTime()
    name: str  # getName()


def cluster_ratios(usage: Sequence[Any], cluster: Sequence[Any], weight: Any) -> tuple[int, list, list]:
    """``calculateClusterAndFairRatios``: ``(dominant, usage ratios u_r / c_r, fair ratios (u_r / c_r) / w)``;
    the dominant index is the first with the largest usage ratio (replaced only by a strictly larger one)."""
    usage_r, fair = [], []
    dominant = 0
    for i, (u, c) in enumerate(zip(usage, cluster)):
        q = ieee_div(u, c)
        usage_r.append(q)
        if gt(q, usage_r[dominant]):
            dominant = i
        fair.append(ieee_div(q, weight))
    return dominant, usage_r, fair


def min_share_ratios(usage: Sequence[Any], min_share: Sequence[Any]) -> list:
    """``calculateMinShareRatios``: ``u_r / m_r`` (``+inf`` for ``m_r = 0 < u_r``, NaN for ``0 / 0``)."""
    return [ieee_div(u, m) for u, m in zip(usage, min_share)]


def sort_ratios(usage_ratios: Sequence[Any]) -> list[int]:
    """``sortRatios``: the row indices in the order ``Arrays.sort`` leaves them with the comparator
    ``signum(o2[0] - o1[0])`` (descending usage ratio; a NaN compares equal to everything): the JDK's TimSort
    (:func:`mechanisms.ports.java_go.java_sort`; exact below 32 rows -- upstream clusters have a handful of
    resource types)."""
    return java_sort(range(len(usage_ratios)), lambda i, j: signum_diff(usage_ratios[j], usage_ratios[i]))


def compare_ratios(ratios1: Sequence[Any], ratios2: Sequence[Any]) -> int:
    """``compareRatios``: position by position, ``signum(r1 - r2)``; the first nonzero decides (0 if none)."""
    for x, y in zip(ratios1, ratios2):
        ret = signum_diff(x, y)
        if ret:
            return ret
    return 0


def _attributes(p1: "Prepared", p2: "Prepared") -> int:
    """``compareAttribrutes``: start time, then name."""
    a, b = p1.s.start, p2.s.start
    if a != b:
        return (a > b) - (a < b)
    x, y = p1.name_key, p2.name_key
    return (x > y) - (x < y)


class Prepared(NamedTuple):
    """What the comparator computes of ONE schedulable on a cluster (each side's part of ``compare``, done once
    when the same schedulable is compared many times, e.g. while a ``TreeSet`` is filled)."""

    s: Schedulable
    dominant: int
    order: list  # sortRatios: the resource indices by descending usage ratio
    fair: list  # the fair ratios in that order
    needy: bool  # its own usage of the dominant resource below its min share of it
    name_key: bytes  # its name as UTF-16 code units (``String.compareTo``'s order)


def prepare(s: Schedulable, cluster: Sequence[Any]) -> Prepared:
    """One schedulable's part of the comparator (:class:`Prepared`)."""
    dominant, usage_r, fair = cluster_ratios(s.usage, cluster, s.weight)
    order = sort_ratios(usage_r)
    return Prepared(s, dominant, order, [fair[i] for i in order], gt(s.min_share[dominant], s.usage[dominant]),
                    string_key(s.name))


def compare_prepared(p1: Prepared, p2: Prepared, *, s2_needy_from_s1: bool = False) -> int:
    """:func:`compare_schedulables` on prepared schedulables."""
    s1, s2 = p1.s, p2.s
    s1_needy = p1.needy
    if s2_needy_from_s1 and len(s1.usage) == 2:  # Comparator2 before the fix: s2's neediness off s1's usage
        s2_needy = gt(s2.min_share[p2.dominant], s1.usage[p2.dominant])
    else:
        s2_needy = p2.needy
    if not s1_needy and not s2_needy:
        res = compare_ratios(p1.fair, p2.fair)
    elif s1_needy and not s2_needy:
        res = -1
    elif s2_needy and not s1_needy:
        res = 1
    else:
        m1, m2 = min_share_ratios(s1.usage, s1.min_share), min_share_ratios(s2.usage, s2.min_share)
        res = compare_ratios([m1[i] for i in p1.order], [m2[i] for i in p2.order])
    return res or _attributes(p1, p2)


def compare_schedulables(s1: Schedulable, s2: Schedulable, cluster: Sequence[Any], *,
                         s2_needy_from_s1: bool = False) -> int:
    """The policy's comparator (module docstring): < 0 when ``s1`` gets a container before ``s2``.
    ``s2_needy_from_s1=True``: the comparator before YARN-11482's fix -- with exactly two resources (upstream's
    ``Comparator2``) ``s2``'s neediness is read off ``s1``'s usage."""
    return compare_prepared(prepare(s1, cluster), prepare(s2, cluster), s2_needy_from_s1=s2_needy_from_s1)
