"""DRF on one pool in closed form: water filling in exact integer-pair arithmetic.

On one server (external resources pooled with it) DRF's leximin problem has a closed form
(seed 000 Sec. II-A, progressive filling).  With ``a_j = w_j N_j`` (``N_j`` the normaliser of
``mechanisms.paper.normalisers.drf_normaliser``, fallbacks as in ``mechanisms.paper.leximin``) every active user
holds ``x_j = a_j t`` at the common level ``t``; with ``e[j,r] = d[j,r] a_j / c_r`` (its share of
resource ``r`` per unit of level) resource ``r`` stays feasible while

    t <= (1 - used_r) / slope_r,   slope_r = sum_{j active} e[j,r],   used_r = sum_{j frozen} e[j,r] t_j,

and a bounded user while ``t <= n_j / a_j``.  Each round raises ``t`` to the smallest of these
limits ``t*`` and freezes (at ``t_j = t*``) every active user that reached its bound or demands a
resource whose limit is ``t*``: such a user cannot rise without lowering a user at a level ``<= t*``
(the resource is full and every user of it is at its minimum), and every other active user can
(its resources have slack), so this is the leximin optimum the LP solver of
``mechverify.lexmaxmin`` finds (the totals are unique; on one server they are the allocation).

Arithmetic: every rational is a pair of Python ints ``(num, den)``, ``den > 0``, reduced by gcd
after each operation -- exact, and about ten times cheaper than ``fractions.Fraction`` operations.
The float path runs the same exact computation and rounds the results (correctly) to floats.
"""
from __future__ import annotations

from fractions import Fraction
from math import gcd
from typing import Any

from mechverify.allocation import Allocation
from mechverify.model import Environment

__all__ = ["drf_one_pool"]


def _red(n: int, d: int) -> tuple[int, int]:
    g = gcd(n, d)
    return (n // g, d // g) if g > 1 else (n, d)


def _frac(p: tuple[int, int]) -> Fraction:
    return Fraction(p[0], p[1])


def drf_one_pool(env: Environment, exact: bool, name: str = "drf") -> Allocation:
    """The leximin of ``x_j / (w_j N_j)`` on one server (external resources pooled), by water filling.

    Same allocation, levels and normalisers as ``leximin_allocation(env, name, exact,
    [drf_normaliser(env, j) ...])`` (exactly, with ``exact``; correctly rounded otherwise)."""
    n_users = env.n_users
    caps = [(c.numerator, c.denominator) for c in env.capacity[0]] + \
           [(c.numerator, c.denominator) for c in env.external_capacity]
    n_res = len(caps)
    a: list = [None] * n_users  # a_j = w_j N_j as a pair (None: not participating)
    norm: list[Any] = [None] * n_users  # the normaliser as leximin_allocation reports it
    e_rows: list = [None] * n_users  # [(r, e_jr pair)] per participant
    for j in range(n_users):
        dem = tuple(env.demand[j]) + tuple(env.external_demand[j])
        best_n, best_d = 0, 1  # dominant share per task (pair); 0 = demands nothing
        dead = False
        for r in range(n_res):
            d = dem[r]
            if d > 0:
                cn, cd = caps[r]
                if cn == 0:
                    dead = True  # a demanded resource has capacity 0: N_j = 0, x_j = 0
                    break
                qn, qd = d.numerator * cd, d.denominator * cn
                if qn * best_d > best_n * qd:
                    best_n, best_d = qn, qd
        if dead:
            norm[j] = Fraction(0)
            continue
        bound = env.tasks[j]
        if best_n == 0:  # N_j = inf: fallback n_j (the model guarantees a bound, external demand is pooled)
            if bound is None or bound <= 0:
                continue
            nn, nd = bound.numerator, bound.denominator
        else:
            nn, nd = _red(best_d, best_n)
        norm[j] = Fraction(nn, nd)
        if 0 not in env.eligible[j]:
            continue
        w = env.weight[j]
        an, ad = _red(w.numerator * nn, w.denominator * nd)
        a[j] = (an, ad)
        row = []
        for r in range(n_res):
            d = dem[r]
            if d > 0:
                cn, cd = caps[r]
                row.append((r, _red(d.numerator * an * cd, d.denominator * ad * cn)))
        e_rows[j] = row
    active = [j for j in range(n_users) if a[j] is not None]
    level: list = [None] * n_users
    slope = [(0, 1)] * n_res
    used = [(0, 1)] * n_res
    users_of: list[list[int]] = [[] for _ in range(n_res)]
    for j in active:
        for r, (en, ed) in e_rows[j]:
            sn, sd = slope[r]
            slope[r] = _red(sn * ed + en * sd, sd * ed)
            users_of[r].append(j)
    rounds = 0
    while active:
        rounds += 1
        tn, td = -1, 1  # t* (pair); -1 = no limit yet
        lim: list = [None] * n_res
        for r in range(n_res):
            sn, sd = slope[r]
            if sn == 0:
                continue
            un, ud = used[r]
            # (1 - used) / slope
            ln, ld = _red((ud - un) * sd, ud * sn)
            lim[r] = (ln, ld)
            if tn < 0 or ln * td < tn * ld:
                tn, td = ln, ld
        blim: dict[int, tuple[int, int]] = {}
        for j in active:
            b = env.tasks[j]
            if b is not None:
                an, ad = a[j]
                bn, bd = _red(b.numerator * ad, b.denominator * an)
                blim[j] = (bn, bd)
                if tn < 0 or bn * td < tn * bd:
                    tn, td = bn, bd
        if tn < 0:  # cannot happen: every participant demands a finite resource or has a bound
            raise ValueError(f"{name}: a user's dominant share is unbounded")
        frozen = {j for j, (bn, bd) in blim.items() if bn * td == tn * bd}
        for r in range(n_res):
            lr = lim[r]
            if lr is not None and lr[0] * td == tn * lr[1]:
                frozen.update(u for u in users_of[r] if level[u] is None)
        for j in frozen:
            level[j] = (tn, td)
            for r, (en, ed) in e_rows[j]:
                sn, sd = slope[r]
                slope[r] = _red(sn * ed - en * sd, sd * ed)
                un, ud = used[r]
                pn, pd = en * tn, ed * td
                used[r] = _red(un * pd + pn * ud, ud * pd)
        active = [j for j in active if level[j] is None]
    if exact:
        zero: Any = Fraction(0)
        xs = [zero] * n_users
        levels: list[Any] = [zero] * n_users
        for j in range(n_users):
            if level[j] is not None:
                tn, td = level[j]
                an, ad = a[j]
                xs[j] = Fraction(tn * an, td * ad)
                levels[j] = Fraction(tn, td)
    else:
        xs = [0.0] * n_users
        levels = [0.0] * n_users
        for j in range(n_users):
            if level[j] is not None:
                tn, td = level[j]
                an, ad = a[j]
                xs[j] = (tn * an) / (td * ad)
                levels[j] = tn / td
    meta = {"rounds": rounds, "levels": levels, "normaliser": norm, "unique_totals": True}
    return Allocation(env, tuple((v,) for v in xs), name, exact, meta)
