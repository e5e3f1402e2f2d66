"""Slurm's two fair-share factors on an association tree, as pure functions (our code from upstream's semantics).

Source: SchedMD/slurm @ 284c3b95f08a2dc2478499837b03355e1b9c5c75 --
``doc/html/classic_fair_share.shtml`` (normalized shares, effective usage, ``F = 2**(-UE/S)``, the worked
example), ``doc/html/fair_tree.shtml`` (Level Fairshare ``LF = S / U``, the ranking walk, the tie rules) and,
where the docs leave a rule open, ``src/plugins/priority/multifactor/priority_multifactor.c``
(``_set_usage_efctv``, ``_set_assoc_usage_efctv``, ``set_assoc_usage_norm``, ``_set_assoc_fs_factor``: the
dampening factor, ``S = 0`` gives factor 0) and ``src/plugins/priority/multifactor/fair_tree.c``
(``_calc_assoc_fs``, ``_cmp_level_fs``, ``_count_tied_accounts``, ``_calc_tree_fs``).

An association tree (:class:`Tree`) has accounts and users; every association has raw ``shares``; a user has
a raw (decayed) ``usage``, an account's usage is the sum of the users below it (Slurm charges a job's usage to
its association and every parent).  ``FairShare=parent`` associations are not modelled.

Classic (:func:`classic`): a user's normalized share ``S`` is the product down its path of ``shares /
(shares of it and its siblings)`` (the doc); normalized usage ``UA = usage / total`` (the code: ``total`` is
the root's raw usage, 0 when that is 0; the doc's example normalizes by the machine); effective usage ``UE =
UA`` for the children of root, else ``UA + (UE_parent - UA) * shares / level_shares`` (``UE_parent`` when
``level_shares`` is 0, as the code does); factor ``F = 2**(-(UE/S)/d)`` (``d``: FairShareDampeningFactor; 0
when ``S`` is 0).  ``F`` is irrational in general and is computed in float (:func:`classic_factor`); the ORDER
is by the exact ratio ``UE/S`` (F is strictly decreasing in it for every ``d > 0``), so ``d`` and the normalizer
``total`` never change the order.

Fair Tree (:func:`fair_tree`): at each level ``S = shares / level_shares``, ``U = usage / parent's usage`` (0
when the parent's usage is 0), ``LF = S / U`` (``inf`` when ``U = 0 < S``; 0 when ``S = 0``), exact.  Children
are sorted by ``LF`` descending, users before accounts at equal ``LF`` (``_cmp_level_fs``), and visited depth
first with ``rank`` starting at the number of user associations: a user gets ``rank / count`` and the next rank
drops by one, except that a user tied with the previous sibling (or the first user of an account tied with
its previous sibling) keeps the previous rank (``_calc_tree_fs``, ``rnt``).  The doc's third tie rule --
"sibling accounts with the same Level Fairshare have their children lists merged before descending" -- is
NOT what the code at this commit does: ``_count_tied_accounts`` stops at the first following sibling that is an
account (``if (!next_assoc->user) break;``) and users sort before tied accounts, so it always returns 0 and tied
accounts are descended one after the other, the second starting tied with the first one's last user.  We
follow the code (``merge_tied=True`` gives the doc's reading).  Equal keys keep declaration order (upstream's
``qsort`` is not stable: an order among exactly tied ACCOUNTS is upstream's unspecified choice).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Optional, Sequence

__all__ = ["Assoc", "Tree", "ClassicResult", "classic", "classic_factor", "FairTreeResult", "fair_tree", "INF"]

INF = math.inf
_ZERO = Fraction(0)


@dataclass(frozen=True)
class Assoc:
    """One association: ``name``, its parent account (``None``: root), raw ``shares``, whether it is a user."""

    name: str
    parent: Optional[str]
    shares: Any
    user: bool


class Tree:
    """Associations (accounts and users, in declaration order) and the users' raw usages."""

    def __init__(self, assocs: Sequence[Assoc], usage: Mapping[str, Any]) -> None:
        self.assocs = tuple(assocs)
        self.by_name = {a.name: a for a in self.assocs}
        if len(self.by_name) != len(self.assocs):
            raise ValueError("association names must be distinct")
        self.children: dict[Optional[str], list[Assoc]] = {}
        for a in self.assocs:
            self.children.setdefault(a.parent, []).append(a)
        zero = _ZERO
        for v in usage.values():
            zero = v * 0
            break
        self.zero = zero
        self.usage: dict[Optional[str], Any] = {}
        self._level: dict[Optional[str], Any] = {}

        def total(name: Optional[str]) -> Any:
            acc = zero
            for c in self.children.get(name, ()):
                acc = acc + (usage.get(c.name, zero) if c.user else total(c.name))
            if name is not None and self.by_name[name].user:
                acc = usage.get(name, zero)
            self.usage[name] = acc
            return acc

        total(None)
        for a in self.assocs:
            if a.user:
                self.usage[a.name] = usage.get(a.name, zero)

    def level_shares(self, parent: Optional[str]) -> Any:
        """The raw shares of ``parent``'s children summed (once per parent: every child of it asks)."""
        got = self._level.get(parent)
        if got is None:
            got = self._level[parent] = sum((c.shares for c in self.children.get(parent, ())), self.zero)
        return got

    def users(self) -> list[str]:
        return [a.name for a in self.assocs if a.user]


# ---------------------------------------------------------------------------------------------- classic
@dataclass
class ClassicResult:
    shares_norm: dict  # name -> S (product down the path)
    usage_norm: dict  # name -> UA
    usage_efctv: dict  # name -> UE

    def ratio(self, name: str) -> Any:
        """``UE / S`` (the exact key of the order; ``inf`` when ``S`` is 0: factor 0, served last)."""
        s = self.shares_norm[name]
        return INF if not s else self.usage_efctv[name] / s


def classic(tree: Tree, total: Any = None) -> ClassicResult:
    """Normalized shares, normalized and effective usages of every association (module docstring).
    ``total``: the usage normalizer (``None``: the root's raw usage, as the code)."""
    root = tree.usage[None] if total is None else total
    S: dict = {}
    UA: dict = {}
    UE: dict = {}

    def walk(parent: Optional[str], s_parent: Any) -> None:
        level = tree.level_shares(parent)
        for c in tree.children.get(parent, ()):
            S[c.name] = s_parent * c.shares / level if level else tree.zero
            UA[c.name] = tree.usage[c.name] / root if root else tree.zero
            if parent is None:
                UE[c.name] = UA[c.name]
            elif not level:
                UE[c.name] = UE[parent]
            else:
                UE[c.name] = UA[c.name] + (UE[parent] - UA[c.name]) * c.shares / level
            if not c.user:
                walk(c.name, S[c.name])

    walk(None, tree.zero + 1)
    return ClassicResult(S, UA, UE)


def classic_factor(ue: Any, s: Any, dampening: Any = 1) -> float:
    """``2**(-(UE/S)/d)`` in float (irrational in general); 0 when ``S`` is 0 (``_set_assoc_fs_factor``)."""
    if not s:
        return 0.0
    return 2.0 ** (-(float(ue) / float(s)) / float(dampening))


# ---------------------------------------------------------------------------------------------- Fair Tree
@dataclass
class FairTreeResult:
    level_fs: dict  # name -> LF (exact, or inf)
    rank: dict  # user name -> rank (an int, count is the highest)
    count: int  # user associations
    walk: list  # the users in visiting order

    def factor(self, user: str) -> Fraction:
        """``rank / count`` (exact)."""
        return Fraction(self.rank[user], self.count)


def _level_fs(tree: Tree, a: Assoc) -> Any:
    level = tree.level_shares(a.parent)
    S = a.shares / level if level else tree.zero
    pu = tree.usage[a.parent]
    U = tree.usage[a.name] / pu if pu else tree.zero
    if not S:
        return tree.zero
    return INF if not U else S / U


def fair_tree(tree: Tree, merge_tied: bool = False) -> FairTreeResult:
    """The Fair Tree ranking walk (module docstring): ``level_fs`` of every association, every user's rank."""
    users = tree.users()
    count = len(users)
    LF = {a.name: _level_fs(tree, a) for a in tree.assocs}
    rank: dict = {}
    walk: list = []
    state = {"rank": count, "rnt": count}

    def visit(siblings: list[Assoc], account_tied: bool) -> None:
        # sort by LF descending, users before accounts at equal LF; stable (declaration order)
        order = sorted(siblings, key=lambda a: (-LF[a.name], 0 if a.user else 1))
        prev: Any = None
        i = 0
        while i < len(order):
            a = order[i]
            tied = account_tied if i == 0 else (prev is not None and prev == LF[a.name])
            if i == 0 and not account_tied:
                tied = False
            if a.user:
                if not tied:
                    state["rank"] = state["rnt"]
                rank[a.name] = state["rank"]
                walk.append(a.name)
                state["rnt"] -= 1
                i += 1
            else:
                merged = [a]
                if merge_tied:  # the doc's rule: tied sibling accounts' children merged before descending
                    while i + len(merged) < len(order) and not order[i + len(merged)].user \
                            and LF[order[i + len(merged)].name] == LF[a.name]:
                        merged.append(order[i + len(merged)])
                kids = [c for m in merged for c in tree.children.get(m.name, ())]
                if kids:
                    visit(kids, tied)
                i += len(merged)
            prev = LF[a.name]

    visit(list(tree.children.get(None, ())), False)
    return FairTreeResult(LF, rank, count, walk)


# ---------------------------------------------------------------------------------------------- Fair Tree, some users
def fair_tree_ranks_some(acct_parent: Sequence[Optional[int]], acct_shares: Sequence[float],
                         user_usage: Mapping[Optional[int], Any], user_shares: Mapping[Optional[int], Any],
                         targets: Sequence[tuple], levels: Optional[dict] = None) -> list:
    """The ranks :func:`fair_tree` (``merge_tied=False``) gives the users ``targets`` (each ``(parent, i)``: the
    ``i``-th user under ``parent``, an account index or ``None``) on a tree whose numbers are floats (:class:`Tree`'s
    ``zero`` a float), bit for bit, without walking the others: the same IEEE operations for every number it reads
    -- each account's usage and level shares as left folds over all its children in declaration order (accounts,
    then users; ``numpy.cumsum`` is a sequential fold), ``S = shares / level``, ``U = usage / parent's usage``,
    ``LF = S / U`` (0 when ``S`` is 0, ``inf`` when ``U`` is 0) -- and a user's rank counted instead of walked.

    In a sibling list sorted by ``(-LF, user before account)``, the users of one ``LF`` value ``x`` share the rank
    of the first of them (each is tied with the one before), which is ``count`` minus the users walked before it --
    those of the earlier lists (``pre``), the users of the list with ``LF > x`` and every user below an account with
    ``LF > x`` -- unless nothing precedes it in the list and the list starts tied, when it keeps the rank it
    entered with (the rank of the last user walked before the list).  An account's list starts tied when a sibling
    before it has its ``LF`` (or, first in its list, when its own list started tied).  Only the accounts (few) are
    walked; the users are counted in numpy.

    ``user_usage[p]`` / ``user_shares[p]``: float arrays of the users under ``p`` in declaration order (every user,
    present or not: their usage is in the parent's and they count in the ranks).  ``levels``: each parent's level
    shares, kept by the caller between calls (it changes only when a user is added under that parent).  Returns the
    targets' ranks (ints) in order.  tests/mechanisms/test_slurm_fast.py holds it equal to :func:`fair_tree`."""
    import numpy as np

    A = len(acct_parent)
    kids, total, sub, level_of = _aggregate(acct_parent, acct_shares, user_usage, user_shares, levels)
    count = sub[None]

    lfa: dict = {}
    for a in range(A):
        p = acct_parent[a]
        level, pu = level_of(p), total[p]
        S = float(acct_shares[a]) / level if level else 0.0
        U = total[a] / pu if pu else 0.0
        lfa[a] = 0.0 if not S else (INF if not U else S / U)

    user_lf: dict = {}

    def ul(p: Optional[int]) -> Any:  # the LF of every user under p, elementwise
        got = user_lf.get(p)
        if got is None:
            u = user_usage.get(p)
            if u is None or not len(u):
                got = np.zeros(0)
            else:
                level, pu = level_of(p), total[p]
                with np.errstate(divide="ignore", invalid="ignore"):
                    S = user_shares[p] / level if level else np.zeros(len(u))
                    U = u / pu if pu else np.zeros(len(u))
                    q = np.where(U == 0, INF, S / np.where(U == 0, 1.0, U))
                got = np.where(S == 0, 0.0, q)
            user_lf[p] = got
        return got

    entry: dict = {None: (0, False)}  # list of p's children -> (users walked before it, starts tied)
    rank_in: dict = {None: count}  # the rank state entering it

    def enter(p: Optional[int]) -> tuple:
        got = entry.get(p)
        if got is None:
            q = acct_parent[p]
            pre, tied = enter(q)
            x, lf = lfa[p], ul(q)
            before = [a for a in kids[q] if lfa[a] > x or (lfa[a] == x and a < p)]
            ge = int(np.count_nonzero(lf >= x)) if len(lf) else 0
            eq = int(np.count_nonzero(lf == x)) if ge else 0
            eq += sum(1 for a in before if lfa[a] == x)
            got = entry[p] = (pre + ge + sum(sub[a] for a in before),
                              True if eq else (tied if not ge and not before else False))
        return got

    def last(p: Optional[int], users: Any, accts: list) -> int:  # the rank after the last of these items
        y = float(users.min()) if len(users) else None
        full = [a for a in accts if sub[a]]
        a = max(full, key=lambda a: (-lfa[a], a)) if full else None
        if a is not None and (y is None or y >= lfa[a]):
            return rank_out(a)
        return R(p, y) if y is not None else start(p)

    def start(p: Optional[int]) -> int:
        got = rank_in.get(p)
        if got is None:
            q = acct_parent[p]
            x, lf = lfa[p], ul(q)
            before = [a for a in kids[q] if lfa[a] > x or (lfa[a] == x and a < p)]
            got = rank_in[p] = last(q, lf[lf >= x] if len(lf) else lf, before)
        return got

    def rank_out(a: int) -> int:  # the rank after a's subtree (it has users)
        enter(a)
        return last(a, ul(a), kids.get(a, []))

    def R(p: Optional[int], x: float) -> int:  # the rank of the users under p whose LF is x
        pre, tied = enter(p)
        lf = ul(p)
        gt_u = int(np.count_nonzero(lf > x)) if len(lf) else 0
        gt_a = [a for a in kids.get(p, ()) if lfa[a] > x]
        if tied and not gt_u and not gt_a:
            return start(p)
        return count - pre - gt_u - sum(sub[a] for a in gt_a)

    out: list = [None] * len(targets)
    by: dict = {}
    for k, (p, i) in enumerate(targets):
        by.setdefault(p, []).append(k)
    for p, ks in by.items():  # the users of one list counted at once
        pre, tied = enter(p)
        lf = ul(p)
        xs = lf[[targets[k][1] for k in ks]]
        gt_u = np.count_nonzero(lf[None, :] > xs[:, None], axis=1).tolist()
        for k, x, g in zip(ks, xs.tolist(), gt_u):
            gt_a = [a for a in kids.get(p, ()) if lfa[a] > x]
            out[k] = start(p) if tied and not g and not gt_a else count - pre - g - sum(sub[a] for a in gt_a)
    return out


def _aggregate(acct_parent: Sequence[Optional[int]], acct_shares: Sequence[float], user_usage: Mapping, user_shares: Mapping,
               levels: Optional[dict]) -> tuple:
    """``(kids, total, sub, level_of)`` of a float tree given by parent (:func:`fair_tree_ranks_some`): each parent's
    child accounts, each account's usage (``None``: the root's) as :class:`Tree` folds it (child accounts, then
    users, in declaration order), its users below, and its level shares (a left fold the same way, kept in
    ``levels``)."""
    import numpy as np

    kids: dict = {}
    for a in range(len(acct_parent)):
        kids.setdefault(acct_parent[a], []).append(a)
    levels = {} if levels is None else levels
    total: dict = {}
    sub: dict = {}

    def agg(p: Optional[int]) -> None:
        acc, n = 0.0, 0
        for c in kids.get(p, ()):
            agg(c)
            acc = acc + total[c]
            n += sub[c]
        u = user_usage.get(p)
        if u is not None and len(u):
            acc = float(np.cumsum(u)[-1]) if acc == 0.0 else float(np.cumsum(np.concatenate(((acc,), u)))[-1])
            n += len(u)
        total[p], sub[p] = acc, n

    agg(None)

    def level_of(p: Optional[int]) -> float:
        got = levels.get(p)
        if got is None:
            got = 0.0
            for a in kids.get(p, ()):
                got = got + float(acct_shares[a])
            sh = user_shares.get(p)
            if sh is not None and len(sh):
                got = float(np.cumsum(np.concatenate(((got,), sh)))[-1])
            levels[p] = got
        return got

    return kids, total, sub, level_of


def classic_ratios_some(acct_parent: Sequence[Optional[int]], acct_shares: Sequence[float],
                        user_usage: Mapping[Optional[int], Any], user_shares: Mapping[Optional[int], Any],
                        targets: Sequence[tuple], levels: Optional[dict] = None) -> list:
    """:meth:`ClassicResult.ratio` (``UE / S``) of the users ``targets`` on a float tree given as to
    :func:`fair_tree_ranks_some`, as :func:`classic` computes it where :class:`Tree`'s ``zero`` is a float: the
    same operations in the same order (the root's usage a left fold over the tree; ``S``, ``UA``, ``UE`` down the
    path of each target only)."""
    kids, total, sub, level_of = _aggregate(acct_parent, acct_shares, user_usage, user_shares, levels)
    root = total[None]
    SA: dict = {}

    def node(p: Optional[int], shares: float, usage: float, s_parent: float, ue_parent: float) -> tuple:
        level = level_of(p)
        S = s_parent * shares / level if level else 0.0
        UA = usage / root if root else 0.0
        if p is None:
            UE = UA
        elif not level:
            UE = ue_parent
        else:
            UE = UA + (ue_parent - UA) * shares / level
        return S, UE

    def acct(a: Optional[int]) -> tuple:
        if a is None:
            return 1.0, 0.0
        got = SA.get(a)
        if got is None:
            p = acct_parent[a]
            sp, uep = acct(p)
            got = SA[a] = node(p, float(acct_shares[a]), total[a], sp, uep)
        return got

    out = []
    for p, i in targets:
        sp, uep = acct(p)
        S, UE = node(p, float(user_shares[p][i]), float(user_usage[p][i]), sp, uep)
        out.append(INF if not S else UE / S)
    return out
