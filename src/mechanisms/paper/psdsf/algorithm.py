"""One server's procedure of PS-DSF as water filling with head starts (the best response ``BR_s``).

Fix every column but server ``s``'s; ``h_j = x_j - x[j,s]`` is ``j``'s head start.  Theorem 1 restricted
to ``s`` is the bottleneck characterisation of max-min fairness of the keys ``(h_j + y_j)/(w_j gamma[j,s])``
over ``s``'s polytope, which is unique: ``BR_s`` is a function, and PS-DSF allocations are exactly the
fixed points ``x[., s] = BR_s(x)``.  :func:`waterfill` computes it exactly in at most ``2 x users``
events (raise a level; freeze the users of a resource when it saturates).  Why this is the paper's
server procedure: docs/psdsf.md, "The key observation".
"""
from __future__ import annotations

import weakref
from fractions import Fraction
from math import gcd
from typing import Any, Iterable, Optional, Sequence

from mechverify.model import Environment

from .shares import ZERO, Matrix, PSDSFError, demanders, gamma_matrix, server_demands

__all__ = ["waterfill", "waterfill_prepare", "waterfill_pairs", "server_response", "per_server_drf_start"]


def _q(v: Any) -> tuple[int, int]:
    return v.numerator, v.denominator


def _lt(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] * b[1] < b[0] * a[1]


def _red(n: int, d: int) -> tuple[int, int]:
    g = gcd(n, d)
    return (n // g, d // g) if g > 1 else (n, d)


def waterfill(heads: Sequence[Fraction], weights: Sequence[Fraction], demands: Sequence[Sequence[Fraction]],
               cap: Sequence[Fraction]) -> list[Fraction]:
    """Max-min fair column of one server for keys ``(h_u + y_u) / w_u`` (see module docstring).

    Exact; at most ``2 U`` events.  Every user must demand some resource of positive capacity and
    no resource of zero capacity (gamma > 0).  Every rational is a reduced pair of Python ints
    (``fractions.Fraction`` operations cost ten times more); tests/mechanisms/test_psdsf_waterfill.py
    checks it against the same procedure written in ``Fraction``s, exactly.

    Event loop: the level ``L`` rises; a user takes part once ``L`` reaches its start ``h_u / w_u``;
    every resource ``r`` limits ``L`` to ``(c_r - used_r + sum_active h_u d_ur) / sum_active w_u d_ur``;
    at the next event (a start or a saturation) the users demanding a saturated resource freeze."""
    if not heads:
        return []
    y = waterfill_pairs([_q(v) for v in heads], waterfill_prepare(weights, demands, cap))
    return [ZERO if p is None else Fraction(p[0], p[1]) for p in y]


def waterfill_prepare(weights: Sequence[Fraction], demands: Sequence[Sequence[Fraction]],
                      cap: Sequence[Fraction]) -> tuple:
    """The head-start-free data of :func:`waterfill` as int pairs (reusable for many head starts)."""
    w = [_q(v) for v in weights]
    dq = [[_q(v) for v in row] for row in demands]
    wd = [[_red(wn * dn, wdn * dd) for dn, dd in row] for (wn, wdn), row in zip(w, dq)]  # w_u d_ur
    dpos = [[dn > 0 for dn, _ in row] for row in dq]
    return w, dq, wd, dpos, [_q(v) for v in cap]


def waterfill_pairs(h: list, prep: tuple) -> list:
    """:func:`waterfill` on int pairs: head starts ``h`` (reduced pairs), ``prep`` from
    :func:`waterfill_prepare`; returns reduced pairs (None = 0)."""
    w, dq, wd, dpos, c = prep
    U, R = len(h), len(c)
    start = [_red(hn * wd_, hd_ * wn) for (hn, hd_), (wn, wd_) in zip(h, w)]
    hd = [[_red(hn * dn, hdn * dd) if dn else (0, 1) for dn, dd in dq[u]] for u, (hn, hdn) in enumerate(h)]  # h_u d_ur
    frozen = [False] * U
    y: list = [None] * U  # None = 0
    used = [(0, 1)] * R
    L = start[0]  # the first smallest start (as min() picks it), compared in integers
    for su in start:
        if _lt(su, L):
            L = su
    for _ in range(2 * U + 2):
        live = [u for u in range(U) if not frozen[u]]
        if not live:
            break
        Ln, Ld = L
        active = [u for u in live if start[u][0] * Ld <= Ln * start[u][1]]
        next_start = None
        for u in live:
            su = start[u]
            if su[0] * Ld > Ln * su[1] and (next_start is None or _lt(su, next_start)):
                next_start = su
        sat_level = None
        rates, hsums = [], []
        for r in range(R):
            rn, rd, bn, bd = 0, 1, 0, 1
            for u in active:
                an, ad = wd[u][r]
                if an:
                    rn, rd = _red(rn * ad + an * rd, rd * ad)
                    hn, hdn = hd[u][r]
                    bn, bd = _red(bn * hdn + hn * bd, bd * hdn)
            rates.append((rn, rd))
            hsums.append((bn, bd))
            if rn <= 0:
                continue
            # lev = (cap - used + hsum) / rate
            (cn, cd), (un, ud) = c[r], used[r]
            nn = cn * ud * bd - un * cd * bd + bn * cd * ud
            dd = cd * ud * bd
            lev = _red(nn * rd, dd * rn)
            if sat_level is None or _lt(lev, sat_level):
                sat_level = lev
        if sat_level is None or (next_start is not None and _lt(next_start, sat_level)):
            if next_start is None:
                raise PSDSFError("water filling: no resource limits the active users (gamma = inf?)")
            L = next_start
            continue
        if _lt(L, sat_level):
            L = sat_level
        Ln, Ld = L
        saturated = []
        for r in range(R):
            # usage = used + L * rate - hsum >= cap ?
            (un, ud), (rn, rd), (bn, bd), (cn, cd) = used[r], rates[r], hsums[r], c[r]
            den = ud * Ld * rd * bd
            num = un * Ld * rd * bd + Ln * rn * ud * bd - bn * ud * Ld * rd
            if num * cd >= cn * den and any(dpos[u][r] for u in live):
                saturated.append(r)
        to_freeze = demanders(live, dpos, saturated)[0]
        if not to_freeze:  # cannot happen: the saturating resource is demanded by an active user
            raise PSDSFError("water filling: a resource saturated without freezing anyone")
        for u in to_freeze:
            frozen[u] = True
            su = start[u]
            if su[0] * Ld <= Ln * su[1]:
                (wn, wdn), (hn, hdn) = w[u], h[u]
                yu = _red(Ln * wn * hdn - hn * Ld * wdn, Ld * wdn * hdn)
                y[u] = yu
                if yu[0]:
                    for r in range(R):
                        if dpos[u][r]:
                            dn, dd = dq[u][r]
                            un, ud = used[r]
                            pn, pd = yu[0] * dn, yu[1] * dd
                            used[r] = _red(un * pd + pn * ud, ud * pd)
    else:
        raise PSDSFError("water filling did not finish")  # pragma: no cover
    return y


def server_response(env: Environment, x: Sequence[Sequence[Any]], s: int, mode: str = "rdm",
                    users: Optional[Iterable[int]] = None, totals: Optional[Sequence[Fraction]] = None
                    ) -> list[Fraction]:
    """Server ``s``'s procedure: the column ``BR_s`` (exact) given every other column of ``x``.

    Uses only server ``s``'s capacities, the users' demands there, their weights and their totals
    elsewhere -- the information of 002 Sec. III-D.  ``users`` restricts the participants (active
    users); others get 0 at ``s``."""
    g = gamma_matrix(env)
    part = [j for j in (range(env.n_users) if users is None else users) if g[j][s]]
    col = [ZERO] * env.n_users
    if not part:
        return col
    if totals is None:
        heads = [sum((x[j][t] for t in range(env.n_servers) if t != s), ZERO) for j in part]
    else:
        heads = [totals[j] - x[j][s] for j in part]
    key = (id(env), mode, s, tuple(part))
    hit = _PREP.get(key)
    if hit is None or hit[0]() is not env:
        weights = [env.weight[j] * g[j][s] for j in part]
        dem, cap = server_demands(env, s, mode, part, g)
        if len(_PREP) > 512:
            _PREP.clear()
        hit = _PREP[key] = (weakref.ref(env), waterfill_prepare(weights, dem, cap))
    y = waterfill_pairs([_q(v) for v in heads], hit[1])
    for u, j in enumerate(part):
        p = y[u]
        if p is not None and p[0]:
            col[j] = Fraction(p[0], p[1])
    return col


_PREP: dict = {}  # (id(env), mode, server, participants) -> (weakref to env, waterfill_prepare data)


def per_server_drf_start(env: Environment, mode: str = "rdm", users: Optional[Iterable[int]] = None) -> Matrix:
    """Algorithm I's initialisation: weighted DRF on every server separately (zero head starts)."""
    zero = [[ZERO] * env.n_servers for _ in range(env.n_users)]
    x = [row[:] for row in zero]
    ulist = None if users is None else list(users)
    for s in range(env.n_servers):
        col = server_response(env, zero, s, mode, ulist)
        for j in range(env.n_users):
            x[j][s] = col[j]
    return x
