"""``yarn-drf-preempt``'s arithmetic (the stepper is :mod:`mechanisms.ports.yarn.preempt`, whose docstring cites
the sources): the DRF calculator's comparisons (``DominantResourceCalculator``: :func:`below`, :func:`drc_compare`),
the fair shares (``ComputeFairShares``, exactly: :func:`water_fill`, :func:`fair_shares`) and ``FSStarvedApps``'
heap order (:func:`java_heap_order`); exact numbers and ``math.inf`` for an unbounded amount."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.model import Environment

__all__ = ["INF", "fair_shares", "water_fill", "below", "drc_compare", "java_heap_order"]

INF = math.inf
_ZERO = Fraction(0)

def _inf_sub(a: Any, b: Any) -> Any:
    return INF if a == INF else a - b


def _total(values: list) -> Any:
    """``sum(values, 0)`` of exact numbers; whole numbers summed as integers (the same value, without a
    ``Fraction`` per addition)."""
    n = 0
    for v in values:
        if v.__class__ is not Fraction or v.denominator != 1:
            return sum(values, _ZERO)
        n += v.numerator
    return Fraction(n)


def _nonneg(v: Sequence[Any]) -> list:
    return [x if x > 0 else _ZERO for x in v]


# ---------------------------------------------------------------------- the DRF calculator
def _share(v: Any, c: Any) -> Any:
    """``calculateShare``: ``v / c``, ``+inf`` for a resource the cluster has none of (or an infinite amount)."""
    if c == 0 or v == INF:
        return INF
    return Fraction(v) / c


def _max_share(v: Sequence[Any], cluster: Sequence[Any]) -> Any:
    best: Any = 0.0
    for x, c in zip(v, cluster):
        s = _share(x, c)
        if s != INF and s > best:
            best = s
    return best


def below(usage: Sequence[Any], share: Sequence[Any], cluster: Sequence[Any]) -> bool:
    """``isUsageBelowShare``: the DRF calculator's single-type comparison (the largest finite share of the
    cluster of each side) is negative; equal vectors are not below."""
    if list(usage) == list(share):
        return False
    return _max_share(usage, cluster) < _max_share(share, cluster)


def drc_compare(a: Sequence[Any], b: Sequence[Any], cluster: Sequence[Any]) -> int:
    """``DominantResourceCalculator.compare(cluster, a, b)`` (not single type)."""
    if list(a) == list(b):
        return 0
    if all(c == 0 for c in cluster):
        ag = any(x > y for x, y in zip(a, b))
        bg = any(x < y for x, y in zip(a, b))
        return 0 if ag == bg else (1 if ag else -1)
    sa = [_share(x, c) for x, c in zip(a, cluster)]
    sb = [_share(x, c) for x, c in zip(b, cluster)]
    if len(cluster) == 2:
        da = 1 if sa[1] > sa[0] else 0
        db = 1 if sb[1] > sb[0] else 0
        for x, y in ((sa[da], sb[db]), (sa[1 - da], sb[1 - db])):
            if x != y:
                return 1 if x > y else -1
        return 0
    sa.sort()
    sb.sort()
    for x, y in zip(reversed(sa), reversed(sb)):
        if x == INF or y == INF:
            continue
        if x != y:
            return 1 if x > y else -1
    return 0


# ---------------------------------------------------------------------- fair shares
def water_fill(weights: Sequence[Any], mins: Sequence[Any], maxs: Sequence[Any], total: Any,
               literal: bool = False) -> list:
    """``ComputeFairShares`` for one resource, exactly: ``clamp(w R, min, max)`` with the ``R`` at which the sum
    reaches ``min(total, sum of maxs)`` (R = 0 when the mins alone reach it).  The breakpoints ``min / w`` and
    ``max / w`` are searched by bisection (``literal=True``: one after the other, the reference)."""
    n = len(weights)
    if not n:
        return []
    if not literal and all(lo == 0 for lo in mins) and all(hi == INF for hi in maxs) and total > 0 and \
            all(w > 0 for w in weights):
        # no min share, no max share (apps; queues without either): R = total / the weights, clamp(w R) = w R --
        # the general path's numbers (its only breakpoint search is over an empty set)
        R = total / sum(weights, _ZERO)
        return [w * R for w in weights]
    if not literal:
        got = _open_fill(weights, mins, maxs, total)
        if got is not None:
            return got
    cap = sum((m for m in maxs if m != INF), _ZERO) if all(m != INF for m in maxs) else INF
    target = min(total, cap)

    def at(R: Any) -> list:
        return [min(max(w * R, lo), hi) for w, lo, hi in zip(weights, mins, maxs)]

    if sum(at(_ZERO), _ZERO) >= target:
        return at(_ZERO)
    points = sorted({Fraction(v) / w for w, lo, hi in zip(weights, mins, maxs) for v in (lo, hi) if v != INF and v > 0})
    lo_R = _ZERO
    if literal:
        for p in points:
            if sum(at(p), _ZERO) >= target:
                break
            lo_R = p
    else:  # the same first point reaching the target, by bisection: the sum is nondecreasing in R
        a, b = 0, len(points)
        while a < b:
            mid = (a + b) // 2
            if sum(at(points[mid]), _ZERO) >= target:
                b = mid
            else:
                a = mid + 1
        if a:
            lo_R = points[a - 1]
    # f is linear on [lo_R, next point]: slope = the weights of those neither at their min nor at their max there
    base = at(lo_R)
    slope = sum((w for w, lo, hi, b in zip(weights, mins, maxs, base) if w * lo_R >= lo and b < hi), _ZERO)
    R = lo_R + (target - sum(base, _ZERO)) / slope
    return at(R)


def _open_fill(weights: Sequence[Any], mins: Sequence[Any], maxs: Sequence[Any], total: Any) -> Optional[list]:
    """:func:`water_fill`'s numbers when no max share binds (every max ``inf``), its weights, min shares and total
    exact numbers (weights > 0, mins >= 0), by one sort and prefix sums in integers instead of a bisection that
    evaluates every clamp in ``Fraction``s: ``f(R) = sum_i max(w_i R, lo_i)`` rises with slope ``sum`` of the
    weights whose breakpoint ``lo_i / w_i`` is at most ``R``; scaled by the common denominator ``L`` the weights,
    mins and total are integers ``W, LO, T``, the first breakpoint ``p_k`` in ascending order with
    ``f(p_k) >= T`` is found by comparing ``LO_k SW_k + SL_k W_k`` with ``T W_k`` (``SW``: the weights at or before
    it, ``SL``: the mins after it), and ``R = (T - SL) / SW`` on the segment before it -- the unique ``R`` with
    ``f(R) = T``, so the same exact number the bisection computes (tests/mechanisms/test_yarn_preempt_fast.py).
    ``None``: outside this case (or the mins alone reach the total: :func:`water_fill` returns them)."""
    nums = (*weights, *mins, total)
    if any(v.__class__ is not Fraction and v.__class__ is not int for v in nums) or any(m != INF for m in maxs) or \
            total <= 0 or any(w <= 0 for w in weights) or any(lo < 0 for lo in mins):
        return None
    L = math.lcm(*(v.denominator for v in nums))
    W = [w.numerator * (L // w.denominator) for w in weights]
    LO = [lo.numerator * (L // lo.denominator) for lo in mins]
    T = total.numerator * (L // total.denominator)
    if sum(LO) >= T:
        return None
    n = len(W)
    order = sorted(range(n), key=lambda i: LO[i] / W[i])  # correctly rounded: exact ties may be out of order
    for a, b in zip(order, order[1:]):
        if LO[a] * W[b] > LO[b] * W[a]:
            order.sort(key=lambda i: Fraction(LO[i], W[i]))
            break
    sw, sl = 0, sum(LO)
    for k, i in enumerate(order):  # f at each breakpoint (tied ones give the same f: the first of them decides)
        if LO[i] * sw + sl * W[i] >= T * W[i]:  # f(p_i) = p_i sw + sl >= T: R is at or before p_i
            break
        sl -= LO[i]
        sw += W[i]
    else:
        k = n
    R = Fraction(T - sl, sw)
    rising = set(order[:k])  # w R >= lo: w R; the others lo (what min(max(w R, lo), inf) gives)
    return [w * R if i in rising else lo for i, (w, lo) in enumerate(zip(weights, mins))]


def fair_shares(env: Environment, paths: Optional[Sequence[Sequence[int]]] = None,
                literal: bool = False, memo: Optional[dict] = None) -> tuple[list, list]:
    """Instantaneous fair shares (``FSParentQueue``/``FSLeafQueue.updateInternal`` with ``ComputeFairShares``):
    ``(per user, per queue)`` vectors; the root's is the cluster; at every node its active child queues (some
    present user below) and its users share the node's fair share, per resource, by :func:`water_fill` with
    their weights, min shares (queues: guarantee; apps: 0) and max shares (queues: max; apps: none).  ``paths``:
    every user's ``env.user_path`` when the caller has them; ``memo``: a dict kept by the caller across calls on
    the same queue tree (one execution's): a node whose share, children (queues by index, users by name) and
    weights are those of its last split reuses that split (a pure function of them)."""
    R = env.n_resources
    users: list = [[_ZERO] * R for _ in range(env.n_users)]
    queues: list = [[_ZERO] * R for _ in range(env.n_queues)]
    active = [False] * env.n_queues
    for j in range(env.n_users):
        for q in (env.user_path(j) if paths is None else paths[j]):
            active[q] = True
    at: dict = {}
    for j in range(env.n_users):
        at.setdefault(env.user_queue[j], []).append(j)

    def visit(q: Optional[int], share: Sequence[Any]) -> None:
        kids = [("q", c) for c in env.queue_children(q) if active[c]] + [("u", j) for j in at.get(q, ())]
        if not kids:
            return
        w = [env.queue_weight[i] if k == "q" else env.weight[i] for k, i in kids]
        if memo is not None:  # the same share among the same children (by name) with the same weights: the same split
            key = (tuple(share), tuple(i if k == "q" else env.users[i] for k, i in kids), tuple(w))
            last = memo.get(q)
            if last is not None and last[0] == key:
                got = last[1]  # shared, not copied: the shares are only read
            else:
                got = None
        else:
            got = None
        if got is None:
            got = [[_ZERO] * R for _ in kids]
            for r in range(R):
                mins = [(env.queue_guarantee[i][r] if env.queue_guarantee[i] is not None else _ZERO) if k == "q"
                        else _ZERO for k, i in kids]
                maxs = [(env.queue_max[i][r] if env.queue_max[i] is not None else INF) if k == "q" else INF
                        for k, i in kids]
                for n, v in enumerate(water_fill(w, mins, maxs, share[r], literal)):
                    got[n][r] = v
            if memo is not None:
                memo[q] = (key, got)
        for (k, i), g in zip(kids, got):
            if k == "q":
                queues[i] = g
                visit(i, g)
            else:
                users[i] = g

    visit(None, env.total_capacity())
    return users, queues


# ---------------------------------------------------------------------- java.util.PriorityQueue
def java_heap_order(items: Sequence[Any], cmp) -> list:
    """The order ``java.util.PriorityQueue`` polls ``items`` offered in this order with comparator ``cmp``
    (a binary heap: sift up on offer, sift down on poll) -- exact also for a comparator that is not an order."""
    heap: list = []
    for x in items:
        k = len(heap)
        heap.append(x)
        while k > 0:
            parent = (k - 1) >> 1
            e = heap[parent]
            if cmp(x, e) >= 0:
                break
            heap[k] = e
            k = parent
        heap[k] = x
    out = []
    while heap:
        out.append(heap[0])
        x = heap.pop()
        n = len(heap)
        if not n:
            break
        k, half = 0, n >> 1
        while k < half:
            child = 2 * k + 1
            c = heap[child]
            right = child + 1
            if right < n and cmp(c, heap[right]) > 0:
                child = right
                c = heap[child]
            if cmp(x, c) <= 0:
                break
            heap[k] = c
            k = child
        heap[k] = x
    return out
