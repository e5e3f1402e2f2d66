"""The fast path to Algorithm I's fixed point: iterate in floats, solve the pattern exactly once.

The float iteration (plain Python lists: the sizes are tiny) follows the same schedule as the exact
one -- Gauss-Seidel passes for Algorithm I, the seeded random single servers for the distributed
variant -- and records each server's water-filling *pattern*: the events (a saturating resource and
the users frozen there with positive tasks).  Once the pattern repeats and the iterate has stopped
moving, the fixed point with that pattern is the solution of a square linear system, solved ONCE in
integers (fraction-free Gauss-Jordan):

* every event ``e`` of server ``s``: the users frozen there with tasks share one key,
  ``x_j / (w_j gamma[j,s]) = x_a / (w_a gamma[a,s])``, and the resource saturates
  (``sum_m d[m,s,r] x[m,s] = c[s,r]``; TDM: time shares sum to 1);
* every other entry is 0.

The solution is accepted only if it is positive where the pattern says so, close to the float
iterate (so it is the iteration's limit, not another PS-DSF allocation), and passes Theorem 1 (RDM)
/ Theorem 2 (TDM) checked exactly in integers (:func:`exact_check`, the same conditions as
``theorems.py``).  Otherwise (a singular system: a continuum of fixed points; a float tie read
wrongly; no convergence) the caller falls back to the exact iteration, so the result is always the
exact iteration's whenever that fixed point is isolated.  Details: docs/psdsf.md.
"""
from __future__ import annotations

import random as _random
from fractions import Fraction
from math import gcd
from typing import Optional

from mechverify.model import Environment

from .shares import demanders


__all__ = ["FastData", "fast_data", "float_waterfill", "solve_pattern", "exact_check", "fast_fixed_point",
           "fixed_point_check", "exact_iteration", "MOVE_TOL", "CLOSE_TOL"]

MOVE_TOL = 1e-10  # a pass that moves every entry by at most this (relative) has stopped moving
CLOSE_TOL = 1e-7  # the exact solution must be this close (relative) to the float iterate
_TIE = 1e-11  # relative: float levels this close are one event


def _lcm(a: int, b: int) -> int:
    return a * b // gcd(a, b)


class FastData:
    """One environment's numbers for the fast path: floats for the iteration, integers for the solve.

    ``wg[j][s]``: ``w_j gamma[j,s]`` as a reduced pair of ints (None where ``gamma = 0``); ``rows[s]``:
    per resource (TDM: time) ``(coef, rhs)`` with ``sum_j coef[j] x[j,s] <= rhs`` in integers.  Built
    from the environment's numbers in int pairs (``Fraction`` arithmetic costs ten times more)."""

    __slots__ = ("J", "S", "mode", "part", "fw", "fdem", "fcap", "wg", "rows", "scale")

    def __init__(self, env: Environment, mode: str):
        J, S = env.n_users, env.n_servers
        self.J, self.S, self.mode = J, S, mode
        w = [(v.numerator, v.denominator) for v in env.weight]
        self.part = []
        self.wg = [[None] * S for _ in range(J)]
        self.fw, self.fdem, self.fcap, self.rows = [], [], [], []
        big = 1.0
        for s in range(S):
            cap = [(c.numerator, c.denominator) for c in env.capacity[s]]
            part, fw, dems, gam = [], [], [], []
            for j in range(J):
                if s not in env.eligible[j]:
                    continue
                d = env.d(j, s)
                best = None  # gamma = min over demanded r of c_r / d_r (002 eq. (7))
                for (cn, cd), v in zip(cap, d):
                    dn = v.numerator
                    if dn > 0:
                        gn, gd = cn * v.denominator, cd * dn
                        if best is None or gn * best[1] < best[0] * gd:
                            best = (gn, gd)
                if best is None or best[0] == 0:
                    continue  # gamma = inf (check_env rejects it) or 0: not a participant
                n, m = w[j][0] * best[0], w[j][1] * best[1]
                g = gcd(n, m)
                self.wg[j][s] = (n // g, m // g)
                part.append(j)
                fw.append(_fdiv(n, m))
                dems.append(d)
                gam.append(best)
            rows = []
            if mode == "tdm":
                fcap = [1.0]
                fdem = [(_fdiv(gd, gn),) for gn, gd in gam]  # a task uses 1/gamma of the time
                rows.append(_int_row({j: (gd, gn) for j, (gn, gd) in zip(part, gam)}, (1, 1)))
            else:
                fcap = [_fdiv(cn, cd) for cn, cd in cap]
                fdem = [tuple(_fdiv(v.numerator, v.denominator) for v in d) for d in dems]
                for r, c in enumerate(cap):
                    rows.append(_int_row({j: (d[r].numerator, d[r].denominator) for j, d in zip(part, dems)
                                          if d[r]}, c))
                big = max([big] + fcap)
            self.part.append(part)
            self.fw.append(fw)
            self.fdem.append(fdem)
            self.fcap.append(fcap)
            self.rows.append(rows)
        self.scale = big


def _fdiv(n: int, d: int) -> float:
    try:
        return n / d
    except OverflowError:  # beyond floats: the fast path gives up (ArithmeticError), the exact one decides
        return float("nan")


def _int_row(coef: dict, rhs: tuple) -> tuple[dict, int]:
    """``sum coef[j] x[j] <= rhs`` (int pairs) with integer coefficients (same solutions)."""
    m = rhs[1]
    for _, dd in coef.values():
        m = _lcm(m, dd)
    return {j: n * (m // dd) for j, (n, dd) in coef.items()}, rhs[0] * (m // rhs[1])


_CACHE: dict = {}


def fast_data(env: Environment, mode: str) -> FastData:
    """:class:`FastData` of ``env`` (cached on the environment object, which is immutable)."""
    key = (id(env), mode)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is env:
        return hit[1]
    data = FastData(env, mode)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[key] = (env, data)
    return data


def float_waterfill(h: list, w: list, dem: list, cap: list) -> tuple[list, tuple]:
    """Water filling with head starts in floats (``algorithm.waterfill``'s event loop).

    Returns the column over the participants and the pattern: one ``(resource, users)`` per event
    that freezes users with tasks (``users`` = participant positions with ``y > 0``)."""
    U, R = len(h), len(cap)
    start = [a / b for a, b in zip(h, w)]
    y = [0.0] * U
    used = [0.0] * R
    live = list(range(U))
    events = []
    L = min(start)
    inf = float("inf")
    while live:
        nxt = inf
        active = []
        for u in live:
            su = start[u]
            if su <= L:
                active.append(u)
            elif su < nxt:
                nxt = su
        best, br = inf, -1
        levs = [inf] * R
        for r in range(R):
            rate = hs = 0.0
            for u in active:
                d = dem[u][r]
                if d:
                    rate += w[u] * d
                    hs += h[u] * d
            if rate > 0:
                lev = (cap[r] - used[r] + hs) / rate
                levs[r] = lev
                if lev < best:
                    best, br = lev, r
        if nxt < best:
            L = nxt
            continue
        if br < 0:
            raise ArithmeticError("float water filling: no resource limits the active users")
        if best > L:
            L = best
        lim = best + abs(best) * _TIE
        sat = [r for r in range(R) if levs[r] <= lim]
        frozen, rest = demanders(live, dem, sat)
        pos = []
        for u in frozen:
            if start[u] <= L:
                yu = L * w[u] - h[u]
                if yu > abs(L * w[u]) * _TIE:
                    y[u] = yu
                    pos.append(u)
                    du = dem[u]
                    for r in range(R):
                        if du[r]:
                            used[r] += yu * du[r]
        if not frozen:
            raise ArithmeticError("float water filling: a level without a saturated resource")
        if pos:
            events.append((br, tuple(pos)))
        live = rest
    return y, tuple(events)


def _column(data: FastData, x: list, tot: list, s: int) -> tuple[list, tuple]:
    part = data.part[s]
    if not part:
        return [], ()
    h = [tot[j] - x[j][s] for j in part]
    for u, v in enumerate(h):
        if v < 0.0:
            h[u] = 0.0
    return float_waterfill(h, data.fw[s], data.fdem[s], data.fcap[s])


def _set_column(x: list, tot: list, part: list, s: int, col: list) -> float:
    moved = 0.0
    for u, j in enumerate(part):
        v = col[u]
        d = v - x[j][s]
        if d:
            moved = max(moved, abs(d))
            tot[j] += d
            x[j][s] = v
    return moved


def solve_pattern(data: FastData, pattern: tuple, own: bool = False) -> Optional[tuple[dict, int]]:
    """The exact point with ``pattern`` (one entry per server: its events): ``({(j, s): N}, D)`` with
    ``x[j,s] = N / D`` (``D > 0``), or None if the system is singular.  ``own``: zero head starts
    (the keys are ``x[j,s] / (w_j gamma[j,s])``: Algorithm I's initial per-server DRF)."""
    var: dict = {}
    for s, events in enumerate(pattern):
        part = data.part[s]
        for _, users in events:
            for u in users:
                var[(part[u], s)] = len(var)
    n = len(var)
    if n == 0:
        return {}, 1
    user_vars: dict = {}
    for (j, s), i in var.items():
        user_vars.setdefault(j, []).append(i)
    rows = []
    for s, events in enumerate(pattern):
        part = data.part[s]
        for r, users in events:
            coef, rhs = data.rows[s][r]
            row = [0] * (n + 1)
            for j, c in coef.items():
                i = var.get((j, s))
                if i is not None:
                    row[i] += c
            row[n] = rhs
            rows.append(row)
            a = part[users[0]]
            an, ad = data.wg[a][s]
            for u in users[1:]:
                j = part[u]
                jn, jd = data.wg[j][s]
                # x_j * an * jd - x_a * jn * ad = 0  (totals)
                row = [0] * (n + 1)
                cj, ca = an * jd, jn * ad
                for i in ([var[(j, s)]] if own else user_vars[j]):
                    row[i] += cj
                for i in ([var[(a, s)]] if own else user_vars[a]):
                    row[i] -= ca
                rows.append(row)
    if len(rows) != n:
        return None
    # fraction-free Gauss-Jordan
    for c in range(n):
        p = next((k for k in range(c, n) if rows[k][c]), None)
        if p is None:
            return None
        if p != c:
            rows[c], rows[p] = rows[p], rows[c]
        pr = rows[c]
        pv = pr[c]
        for k in range(n):
            if k == c:
                continue
            row = rows[k]
            f = row[c]
            if not f:
                continue
            new = [pv * a - f * b for a, b in zip(row, pr)]
            g = gcd(*new)  # of the non-zero entries (gcd(0, v) = |v|)
            if g > 1:
                new = [v // g for v in new]
            rows[k] = new
    D = 1
    for c in range(n):
        D = _lcm(D, abs(rows[c][c]))
    out = {}
    for key, i in var.items():
        row = rows[i]
        out[key] = row[n] * (D // row[i])
    return out, D


def exact_check(data: FastData, N: dict, D: int, own: bool = False) -> bool:
    """Theorem 1 (RDM) / Theorem 2 (TDM) for ``x[j,s] = N[(j,s)] / D`` (absent = 0), exactly, in integers.

    The conditions of ``theorems.py``: every entry ``>= 0`` and 0 where ``gamma = 0``; every
    resource used at most its capacity (TDM: time shares at most 1); every user has at every eligible
    server a demanded saturated resource whose holders' keys are no larger than its own.  ``own``: the
    keys count only the tasks at that server (zero head starts): then True iff every column is the
    server's weighted DRF, Algorithm I's initial allocation (max-min fairness is unique)."""
    if D <= 0 or any(v < 0 for v in N.values()):
        return False
    tot = [0] * data.J
    for (j, s), v in N.items():
        if data.wg[j][s] is None:
            return False
        tot[j] += v
    for s in range(data.S):
        part = data.part[s]
        if not part:
            continue
        sat_rows = []
        for coef, rhs in data.rows[s]:
            use = 0
            for j, c in coef.items():
                v = N.get((j, s))
                if v:
                    use += c * v
            cap = rhs * D
            if use > cap:
                return False
            if use == cap:
                sat_rows.append(coef)
        if own:
            tot = [N.get((j, s), 0) for j in range(data.J)]
        for j in part:
            jn, jd = data.wg[j][s]
            tj = tot[j]
            ok = False
            for coef in sat_rows:
                if not coef.get(j):
                    continue
                # every holder m of r: k_m <= k_j, i.e. tot_m / wg_m <= tot_j / wg_j
                good = True
                for m, c in coef.items():
                    if m != j and N.get((m, s)):
                        mn, md = data.wg[m][s]
                        if tot[m] * md * jn > tj * jd * mn:
                            good = False
                            break
                if good:
                    ok = True
                    break
            if not ok:
                return False
    return True


def fast_fixed_point(env: Environment, mode: str = "rdm", schedule: str = "sequential", seed: int = 0,
                     max_passes: int = 300) -> Optional[tuple[list, int]]:
    """Algorithm I's fixed point (``schedule="sequential"``: per-server DRF, then Gauss-Seidel passes)
    or the distributed one (``"async"``: one seeded random server per round, ``n_servers`` rounds a
    pass) by the fast path (module docstring): ``(x, passes)`` with ``x`` an exact ``Fraction``
    matrix that passed :func:`exact_check`, or None (then use the exact iteration).  Float trouble
    (overflow, a level no resource limits) is None too: the exact iteration decides."""
    try:
        return _fast_fixed_point(env, mode, schedule, seed, max_passes)
    except ArithmeticError:
        return None


def _fast_fixed_point(env: Environment, mode: str, schedule: str, seed: int, max_passes: int):
    data = fast_data(env, mode)
    J, S = data.J, data.S
    x = [[0.0] * S for _ in range(J)]
    tot = [0.0] * J
    zero = [[0.0] * S for _ in range(J)]
    ztot = [0.0] * J
    cols = [_column(data, zero, ztot, s) for s in range(S)]  # per-server DRF
    for s in range(S):
        _set_column(x, tot, data.part[s], s, cols[s][0])
    pats = [c[1] for c in cols]
    start_pattern = tuple(pats)
    start_fixed = True  # no pass has moved the initial allocation (so far)
    rng = _random.Random(seed) if schedule == "async" else None
    prev_pattern = start_pattern  # a pass whose pattern is the start's may already be at the point
    tried: dict = {}
    dists: list = []  # distances of the iterate to the current pattern's exact point, pass by pass
    scale = data.scale
    for p in range(1, max_passes + 1):
        moved = 0.0
        if rng is None:
            for s in range(S):
                col, pats[s] = _column(data, x, tot, s)
                moved = max(moved, _set_column(x, tot, data.part[s], s, col))
        else:
            for _ in range(S):
                s = rng.randrange(S)
                col, pats[s] = _column(data, x, tot, s)
                moved = max(moved, _set_column(x, tot, data.part[s], s, col))
            # every server's pattern at the current iterate (a server may not have run this pass)
            for s in range(S):
                pats[s] = _column(data, x, tot, s)[1]
        pattern = tuple(pats)
        big = max(scale, max(tot, default=0.0))
        if moved > MOVE_TOL * big:
            start_fixed = False
        if pattern != prev_pattern:
            prev_pattern = pattern
            dists = []
            continue
        if pattern in tried:
            sol = tried[pattern]
        else:
            sol = solve_pattern(data, pattern)
            if sol is not None and not exact_check(data, *sol):
                sol = None
            tried[pattern] = sol
        if sol is None:
            if moved <= MOVE_TOL * big:  # settled on a pattern without an isolated exact fixed point
                return _start_if_fixed(data, start_pattern) if start_fixed else None
            continue
        N, D = sol
        dist = max(abs(N.get((j, s), 0) / D - x[j][s]) for j in range(J) for s in range(S))
        dists.append(dist)
        # accept when the iterate is at the point, or has approached it over three passes of this pattern
        if dist <= CLOSE_TOL * big or (len(dists) >= 3 and dists[-1] < dists[-2] < dists[-3]
                                       and dist <= 1e-3 * big):
            out = [[Fraction(N[(j, s)], D) if (j, s) in N else Fraction(0) for s in range(S)] for j in range(J)]
            return out, p
    return None


def _start_if_fixed(data: FastData, pattern: tuple) -> Optional[tuple[list, int]]:
    """Algorithm I's initial allocation solved exactly from its float pattern, if it provably is that
    allocation (every column its server's DRF) and a fixed point (the exact iteration stops after one
    round that changes nothing): ``(x, 1)``; else None."""
    sol = solve_pattern(data, pattern, own=True)
    if sol is None or not exact_check(data, *sol, own=True) or not exact_check(data, *sol):
        return None
    N, D = sol
    return [[Fraction(N[(j, s)], D) if (j, s) in N else Fraction(0) for s in range(data.S)]
            for j in range(data.J)], 1


def fixed_point_check(env: Environment, x: list, mode: str) -> bool:
    """:func:`exact_check` of an exact (``Fraction``) matrix: True iff ``x`` passes Theorem 1 (RDM) /
    Theorem 2 (TDM), i.e. is a fixed point of every server's water filling."""
    data = fast_data(env, mode)
    D = 1
    for row in x:
        for v in row:
            if v:
                D = _lcm(D, v.denominator)
    N = {}
    for j, row in enumerate(x):
        for s, v in enumerate(row):
            if v:
                N[(j, s)] = v.numerator * (D // v.denominator)
    return exact_check(data, N, D)


def _pair_sub(a: tuple, b: tuple) -> tuple:
    n, d = a[0] * b[1] - b[0] * a[1], a[1] * b[1]
    g = gcd(n, d)
    return (n // g, d // g) if g > 1 else (n, d)


def _pair_add(a: tuple, b: tuple) -> tuple:
    n, d = a[0] * b[1] + b[0] * a[1], a[1] * b[1]
    g = gcd(n, d)
    return (n // g, d // g) if g > 1 else (n, d)


def _pairs_check(data: FastData, x: list) -> bool:
    D = 1
    for row in x:
        for n, d in row:
            if n:
                D = _lcm(D, d)
    N = {}
    for j, row in enumerate(x):
        for s, (n, d) in enumerate(row):
            if n:
                N[(j, s)] = n * (D // d)
    return exact_check(data, N, D)


def exact_iteration(env: Environment, mode: str = "rdm", schedule: str = "sequential", seed: int = 0,
                    exact_passes: int = 40, max_denominator: int = 1 << 256) -> Optional[tuple]:
    """The exact phase of ``iteration.iterate`` for Algorithm I (``"sequential"``) or the distributed
    async schedule, on int pairs (the same water filling, ``algorithm.waterfill_pairs``, so the same
    iterates).  Returns ``("done", x, rounds)`` exactly as ``iterate`` returns them with method
    ``"fixed-point"``; ``("resume", rnd, x, prev, rng)`` where ``iterate`` leaves its exact phase
    (after round ``rnd``; ``prev`` the iterate before it; ``rng`` the schedule's generator, in the
    state ``iterate``'s would be): continue with ``iterate(..., resume=(rnd, prev))``; None on a
    period-2 cycle (``iterate`` raises)."""
    from .algorithm import waterfill_pairs, waterfill_prepare
    from .shares import gamma_matrix, server_demands

    data = fast_data(env, mode)
    J, S = data.J, data.S
    g = gamma_matrix(env)
    preps = []
    for s in range(S):
        part = data.part[s]
        if part:
            dem, cap = server_demands(env, s, mode, part, g)
            preps.append(waterfill_prepare([env.weight[j] * g[j][s] for j in part], dem, cap))
        else:
            preps.append(None)
    z = (0, 1)
    x = [[z] * S for _ in range(J)]
    for s in range(S):  # per-server DRF
        if preps[s] is not None:
            col = waterfill_pairs([z] * len(data.part[s]), preps[s])
            for j, v in zip(data.part[s], col):
                x[j][s] = v if v is not None and v[0] else z
    tot = [z] * J
    for j in range(J):
        for s in range(S):
            tot[j] = _pair_add(tot[j], x[j][s])

    def run(s: int) -> None:
        part = data.part[s]
        if not part:
            return
        col = waterfill_pairs([_pair_sub(tot[j], x[j][s]) for j in part], preps[s])
        for j, v in zip(part, col):
            v = v if v is not None and v[0] else z
            if v != x[j][s]:
                tot[j] = _pair_add(_pair_sub(tot[j], x[j][s]), v)
                x[j][s] = v

    rng = _random.Random(seed) if schedule == "async" else None
    prev = None
    for rnd in range(1, exact_passes + 1):
        before = [row[:] for row in x]
        if rng is None:
            for s in range(S):
                run(s)
            if x == before:
                return "done", _as_fractions(x), rnd
            if _pairs_check(data, x):  # a fixed point: the next pass would change nothing
                return "done", _as_fractions(x), rnd + 1
            if prev is not None and x == prev:
                return None  # period 2: iterate raises
            if rnd == exact_passes or max(d for row in x for _, d in row) > max_denominator:
                return "resume", rnd, _as_fractions(x), _as_fractions(before), rng
        else:
            for k in range(1, S + 1):
                last = [row[:] for row in x]
                run(rng.randrange(S))
                if k < S and max(d for row in x for _, d in row) > max_denominator:
                    return "resume", (rnd - 1) * S + k, _as_fractions(x), _as_fractions(last), rng
            if _pairs_check(data, x):
                return "done", _as_fractions(x), rnd * S
            if rnd == exact_passes or max(d for row in x for _, d in row) > max_denominator:
                return "resume", rnd * S, _as_fractions(x), _as_fractions(last), rng
        prev = before
    return None


def _as_fractions(x: list) -> list:
    return [[Fraction(n, d) if n else Fraction(0) for n, d in row] for row in x]
