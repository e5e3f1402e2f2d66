"""The integer step's arithmetic (:mod:`mechanisms.ports.yarn.preempt_whole`): the clocks' timeout test, the DRF
calculator's comparisons on whole amounts (``preempt_calc.below``'s sides and ``drc_compare``, by
cross-multiplication), and the apps' fair shares computed when read (``preempt_calc.fair_shares``' numbers)."""
from __future__ import annotations

from fractions import Fraction
from functools import cmp_to_key
from typing import Any, Optional, Sequence

from .preempt_calc import INF, _ZERO, _total, water_fill

__all__ = ["Waited", "drc_whole", "max_ratio", "Fair"]

#: an app record's slots (``preempt_whole``'s ``_wusers``, per app name): its demand, its integers, weight, task
#: bound, its floor, {scales: DRF key vector}, its demand vector (integers, inf), (tasks, usage); its fair share
#: as :class:`Fair` last computed it (the leaf's share, the weights' sum, its weight, the share); what the update
#: derives of it (``preempt_whole_update``); a nonzero request; the weight's numerator; its queue
(R_DEM, R_INT, R_WGT, R_TB, R_FLOOR, R_KEYS, R_DVEC, R_USE, FAIRC, FDC, R_POK, R_WN, R_Q) = range(13)


class Waited:
    """One step's ``timeout is None or t - last < timeout`` (a clock not yet timed out): ``t - last`` as the
    reference computes it, compared with a whole timeout as an ``int`` (Python compares a float or a
    ``Fraction`` with an ``int`` exactly, as with the equal ``Fraction``, without converting the float)."""

    def __init__(self, t: Any) -> None:
        self.t = t

    def short(self, last: Any, timeout: Any) -> bool:
        if timeout is None:
            return True
        if timeout.__class__ is Fraction and timeout.denominator == 1:
            return self.t - last < timeout.numerator
        return self.t - last < timeout


def _cmp_share(x: Any, y: Any) -> int:
    """Two shares ``(v, c)`` meaning ``v / c`` (``None``: ``+inf``), as ``-1, 0, 1``; ``+inf`` equals ``+inf``."""
    if x is None or y is None:
        return 0 if x is y else (1 if x is None else -1)
    a, b = x[0] * y[1], y[0] * x[1]
    return (a > b) - (a < b)


def drc_whole(a: Sequence[Any], b: Sequence[Any], C: Sequence[int]) -> int:
    """``preempt_calc.drc_compare(a, b, cluster)`` for whole amounts or ``inf`` and whole positive capacities
    ``C``, its shares ``v / c`` compared by cross-multiplication."""
    if all(x == y for x, y in zip(a, b)):
        return 0
    if len(C) == 2 and INF not in a and INF not in b:  # the same comparisons, on the pairs inline
        c0, c1 = C
        da = 1 if a[1] * c0 > a[0] * c1 else 0
        db = 1 if b[1] * c0 > b[0] * c1 else 0
        for x, cx, y, cy in ((a[da], C[da], b[db], C[db]), (a[1 - da], C[1 - da], b[1 - db], C[1 - db])):
            lhs, rhs = x * cy, y * cx
            if lhs != rhs:
                return 1 if lhs > rhs else -1
        return 0
    sa = [None if x == INF else (x, c) for x, c in zip(a, C)]
    sb = [None if x == INF else (x, c) for x, c in zip(b, C)]
    if len(C) == 2:
        da = 1 if _cmp_share(sa[1], sa[0]) > 0 else 0
        db = 1 if _cmp_share(sb[1], sb[0]) > 0 else 0
        for x, y in ((sa[da], sb[db]), (sa[1 - da], sb[1 - db])):
            c = _cmp_share(x, y)
            if c:
                return c
        return 0
    key = cmp_to_key(_cmp_share)
    sa.sort(key=key, reverse=True)
    sb.sort(key=key, reverse=True)
    for x, y in zip(sa, sb):
        if x is None or y is None:
            continue
        c = _cmp_share(x, y)
        if c:
            return c
    return 0


def max_ratio(vals: Sequence[Any], C: Sequence[int]) -> tuple:
    """The largest ``vals_r / c_r`` (whole or exact finite ``vals``, whole positive ``C``) as a pair ``(n, d)``
    meaning ``n / d`` (``d > 0``), starting from 0: one side of ``preempt_calc.below`` (the largest share of the
    cluster, ``_max_share``; ``below(a, b)`` is ``max_ratio(a) < max_ratio(b)`` compared by cross-multiplication,
    equal vectors having equal maxima)."""
    bn, bd = 0, 1
    for x, c in zip(vals, C):
        if x.__class__ is Fraction:
            n, d = x.numerator, x.denominator * c
        else:
            n, d = x, c
        if n * bd > bn * d:
            bn, bd = n, d
    return bn, bd


class Fair:
    """The apps' fair shares (``preempt_calc.fair_shares``), each computed when first read: a node's split (its
    active child queues, then its apps, by ``water_fill`` per resource) once per step, reused from the run's
    memo (a pure function of the node's share, children and weights): a node with apps keeps its last split,
    a node of queues only every split seen."""

    def __init__(self, owner: Any, v: Any, tree: Any) -> None:
        self.owner, self.v, self.tree = owner, v, tree
        self.at_key = frozenset(v.at)  # the queues with apps at them
        # apps at leaves only: a leaf's share is a function of the tree, the cluster and which leaves have apps
        self.leaves_only = tree.leafset.issuperset(self.at_key)
        self._active: Optional[set] = None
        self.splits: dict = {}
        self.totals: dict = {}  # a node of apps only -> the sum of their weights
        self.memo = owner._wfair

    @property
    def active(self) -> set:
        """The queues with an app below them."""
        if self._active is None:
            active: set = set()
            for q in self.v.at:
                if q is not None:
                    active.update(self.tree.path[q])
            self._active = active
        return self._active

    def _split(self, p: Optional[int], share: Any) -> dict:
        got = self.splits.get(p)
        if got is not None:
            return got
        v, tree, env = self.v, self.tree, self.v.env
        qs = tuple(c for c in tree.children.get(p, ()) if c in self.active)
        js = v.at.get(p, ())
        if not js:  # queues only: the split of the same share object among the same active children, as kept
            hit = self.memo.get(("qs", p, qs))
            if hit is not None and hit[0] is tree and hit[1] is share:
                self.splits[p] = hit[2]
                return hit[2]
        kids = qs + tuple(env.users[j] for j in js)
        w = tuple([env.queue_weight[c] for c in qs] + [env.weight[j] for j in js])
        if js:  # apps: the last split of the node (an app set seldom comes back)
            last = self.memo.get(p)
            hit = last is not None and (last[0] is share or last[0] == share) and last[1] == kids and last[2] == w
            split = last[3] if hit else None
        else:  # child queues only: any split seen (a few sets of active children, a few shares)
            key = (p, tuple(share), kids, w)
            split = self.memo.get(key)
        if split is None:
            R = v.R
            split = [[_ZERO] * R for _ in w]
            mins_q = [env.queue_guarantee[c] for c in qs]
            for r in range(R):
                mins = [(g[r] if g is not None else _ZERO) for g in mins_q] + [_ZERO] * len(js)
                for n, x in enumerate(water_fill(w, mins, [INF] * len(w), share[r], False)):
                    split[n][r] = x
            if len(self.memo) > 1 << 14:
                self.memo.clear()
            if js:
                self.memo[p] = (share, kids, w, split)
            else:
                self.memo[key] = split
        out = {("q", c): s for c, s in zip(qs, split)}
        out.update({("u", j): s for j, s in zip(js, split[len(qs):])})
        self.splits[p] = out
        if not js:
            self.memo[("qs", p, qs)] = (tree, share, out)
        return out

    def _walk(self, j: int) -> tuple:
        """The share of app ``j``'s queue, down the tree from the cluster, and that queue."""
        share: Any = self.v.cluster
        p: Optional[int] = None
        for q in self.v.upath[j]:
            share = self._split(p, share)[("q", q)]
            p = q
        return share, p

    def __getitem__(self, j: int) -> list:
        v, tree = self.v, self.tree
        env = v.env
        if self.leaves_only:  # the leaf's share as last computed for the same leaves with apps
            p = env.user_queue[j]
            hit = self.memo.get(("leaf", p))
            if hit is not None and hit[0] is tree and hit[1] is v.cluster and hit[2] == self.at_key:
                share = hit[3]
            else:
                share, p = self._walk(j)
                self.memo[("leaf", p)] = (tree, v.cluster, self.at_key, share)
        else:
            share, p = self._walk(j)
            if any(c in self.active for c in tree.children.get(p, ())):
                return self._split(p, share)[("u", j)]
        # apps only (no min or max share): water_fill's first case, w R with R = share / the weights' sum --
        # the same number computed for this app alone
        tot = self.totals.get(p)
        if tot is None:
            ws = tuple(map(env.weight.__getitem__, v.at[p]))
            hit = self.memo.get(("tot", p))  # the sum kept while the same weights are there
            if hit is not None and hit[0] == ws:
                tot = hit[1]
            else:
                tot = _total(list(ws))
                self.memo[("tot", p)] = (ws, tot)
            self.totals[p] = tot
        w = v.env.weight[j]
        rec = v.recs[j]
        got = rec[FAIRC]  # the app's last one: the same leaf share (by identity), weights' sum and weight
        if got is not None and got[0] is share and got[2] is w and got[1] == tot:
            return got[3]
        wn, wd, tn, td = w.numerator, w.denominator, tot.numerator, tot.denominator
        # w (x / tot) as one Fraction (normalised once: the same number)
        out = [Fraction(wn * x.numerator * td, wd * x.denominator * tn) if x > 0 else _ZERO for x in share]
        rec[FAIRC] = (share, tot, w, out)
        return out
