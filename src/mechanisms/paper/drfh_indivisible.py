"""First-Fit and Best-Fit DRFH for indivisible tasks (seed 001 Sec. V-B).

Progressive filling with whole tasks (``mechanisms.paper.filling``): at every step the scheduler picks the active user with the
lowest weighted global dominant share ``G_j / w_j = x_j max_r D[j,r] / w_j`` (ties: lowest index)
and places ONE task of it on a server where it fits:

* First-Fit: the first server (in instance order) with enough remaining resources;
* Best-Fit: the fitting server minimising eq. (9)
  ``H(j, l) = || D_j / D_{j,r0} - cbar_l / cbar_{l,r0} ||_1``, where ``cbar_l`` is server ``l``'s
  remaining capacity (as a share of the pooled capacity, like ``D``).  The paper normalises by
  resource 1; a user that does not demand resource 1 would divide by zero, so we normalise by the
  user's first demanded resource ``r0`` (identical whenever ``D_{j,1} > 0``).  Ties: lowest index.
  Eq. (9), its incremental form and its integer form live in ``mechverify.placement`` (``best_fit_score``,
  ``BestFitHeaps``, ``best_fit_scaled``), shared with ``progressive_filling(..., placement="best-fit")``.

A user with no fitting server, or whose bound ``n_j`` is reached (``floor(n_j)`` whole tasks),
becomes inactive.  Stops when no user is active.  Every decision is exact (integers scaled from the
``Fraction``s; on many servers a float screen, then the exact choice), so the result is exact whatever
``--exact`` says.  Eligibility is honoured (placement constraints).
A user demanding nothing at all (only possible with a finite bound) gets ``floor(n_j)`` tasks on
its first eligible server.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError, is_inf, whole_fractions
from mechverify.placement import BestFitHeaps, best_fit_scaled, best_fit_score

from .filling import fill_whole_tasks
from ..core.indivisible import held_view
from .normalisers import global_dominant_share
from ..core.registry import Setting, register
from ..core.z3spec import Z3Spec

MAX_STEPS = 2_000_000

# Seed 001 states no property theorem for the heuristics (only "a fairly good approximation to
# DRFH", Sec. V-B), so they carry no claims: the verifier reports what holds without a paper claim.
_INDIV_CLAIMS: tuple = ()


#: the common denominator per resource above which the fill stays in ``Fraction``s (integers that large would
#: cost more than the fractions they replace)
MAX_SCALE_BITS = 256


def integer_scale(env: Environment, info: Optional[list] = None) -> Optional[list]:
    """Per resource ``r``, the least common multiple ``L_r`` of the denominators of every server's capacity and
    every user's demand of ``r``: multiplied by it, every number the fill reads is an integer, and every test it
    makes (``remaining >= demand``) and every ratio eq. (9) takes (``d / pooled``, ``remaining / pooled``) is
    unchanged -- one positive factor per resource.  ``None`` when some ``L_r`` exceeds ``MAX_SCALE_BITS`` bits.
    ``info``: the users' :func:`_demand_info`, when at hand."""
    out = []
    cap = _base(env).lcm  # per resource, the lcm of the capacities' denominators
    per_user = {e[1] for e in (info if info is not None else _demand_info(env))}  # each demand's denominators
    for r in range(env.n_resources):
        dens = {cap[r]}
        dens.update(v[r] for v in per_user)
        L = math.lcm(*dens)
        if L.bit_length() > MAX_SCALE_BITS:
            return None
        out.append(L)
    return out


class _Base:
    """A cluster's capacities in integers once (kept in its cluster memo): ``lcm[r]`` the common denominator of
    resource ``r``'s capacities, ``rows`` every capacity times it (Python ints), their per-resource sums and
    maxima, and the same rows as an int64 array (``None`` when some value is 2^62 or more).  A fill's scale
    ``L_r`` is a multiple of ``lcm[r]``: its capacities are these rows times ``L_r / lcm[r]``."""

    def __init__(self, env: Environment) -> None:
        R = env.n_resources
        self.lcm = [math.lcm(*{c[r].denominator for c in env.capacity}) for r in range(R)]
        self.rows = tuple(tuple(c[r].numerator * (self.lcm[r] // c[r].denominator) for r in range(R))
                          for c in env.capacity)
        self.sums = [sum(c[r] for c in self.rows) for r in range(R)]
        self.top = [max((c[r] for c in self.rows), default=0) for r in range(R)]
        self.array = None
        if max(self.top, default=0) < 1 << 62:
            import numpy as np

            self.array = np.array(self.rows, dtype=np.int64).reshape(env.n_servers, R)
            self.array.flags.writeable = False

    def factors(self, scale: list) -> list:
        return [L // c for L, c in zip(scale, self.lcm)]

    def pooled(self, scale: list) -> tuple:
        """The pooled scaled capacity, as ``Fraction``s (eq. (9)'s ratios stay exact)."""
        return tuple(Fraction(v * f) for v, f in zip(self.sums, self.factors(scale)))


def _base(env: Environment) -> _Base:
    memo = env.cluster_memo()
    got = memo.get("drfh-base")
    if got is None:
        got = memo["drfh-base"] = _Base(env)
    return got


def _scaled_demands(env: Environment, scale: list, info: list) -> list:
    """Every user's demand times ``scale``, kept with the user's :func:`_demand_info` for the last scale it was
    scaled to (a run's users come back step after step)."""
    R, key = env.n_resources, _scale_key(env, scale)
    out = []
    for e in info:
        got = e[4]
        if got[0] is not key:
            d = e[0]
            got[0], got[1] = key, tuple(d[r].numerator * (scale[r] // d[r].denominator) for r in range(R))
        out.append(got[1])
    return out


def _scale_key(env: Environment, scale: list) -> tuple:
    """``scale`` as one tuple object per scale (kept in the cluster memo): what was derived for a scale is found
    by the key's identity."""
    key = tuple(scale)
    keys = env.cluster_memo().setdefault("drfh-scales", {})
    if len(keys) > 1024:  # (a bound: a key forgotten only costs what was derived for it again)
        keys.clear()
    return keys.setdefault(key, key)


def _demand_info(env: Environment) -> list:
    """Per user: its demand, the demand's denominators per resource, its global dominant share (seed 001 Sec.
    III-A), a dict id(weight) -> (weight, share over weight) and ``[scale, the demand scaled]`` -- kept per demand
    vector in the cluster memo (they depend on the demand and the pooled capacity alone), found by the demand's
    identity (a demand's Fractions hash slowly)."""
    memo = env.cluster_memo().setdefault("drfh-demand", {})
    get = memo.get
    out = []
    for j, d in enumerate(env.demand):
        got = get(id(d))
        if got is None or got[0] is not d:
            got = memo[id(d)] = (d, tuple(v.denominator for v in d), global_dominant_share(env, j), {}, [None, None])
        out.append(got)
    return out


def _progressive_fill(env: Environment, best_fit: bool, name: str) -> Allocation:
    """The one-shot fill (nothing held): the allocation of :func:`_fill`."""
    placed, steps = _fill(env, best_fit, name)
    x = [[0] * env.n_servers for _ in range(env.n_users)]
    for j, s in placed:
        x[j][s] += 1
    return Allocation(env, tuple(map(whole_fractions, x)), name, True, {"steps": steps})


def task_rule(best_fit: bool) -> Callable[[Environment, Sequence], list]:
    """First-/Best-Fit DRFH's own rule for free capacity (``Mechanism.task_rule``, the indivisible lift): seed 001
    Sec. V-B's scheduler at a scheduling opportunity -- the fill continued from the whole tasks ``held`` (they use
    their servers' capacity and count in their users' global dominant shares, so the user with the lowest share
    including what it runs is served first), each user up to ``floor(n_j)`` tasks in all.  From nothing held it is
    the one-shot fill.  Returns the tasks it starts, ``(user, server)`` in order."""
    name = "drfh-best-fit" if best_fit else "drfh-first-fit"

    def rule(env: Environment, held: Sequence) -> list:
        return _fill(env, best_fit, name, held)[0]

    return rule


#: from this many servers on, the fill searches the servers with numpy (:class:`_VectorServers`): the same
#: placements, tests/mechanisms/test_drfh_rule.py.  First-Fit's scan is as fast below 64 servers; Best-Fit's
#: (exact eq. (9) kept in heaps) is 3-6x slower than the array's screen at every size measured (2-20 servers)
VECTOR_SERVERS = {False: 64, True: 1}
#: scaled integers below this are exact as float64 and far from int64's end
_EXACT_FLOAT = 1 << 52


def _fill(env: Environment, best_fit: bool, name: str, held: Optional[Sequence] = None) -> tuple[list, int]:
    """Progressive filling with whole tasks (module docstring) from the tasks ``held`` (``J x S`` counts, or a
    :class:`mechanisms.core.indivisible.Held`; none: nothing): ``(placed, steps)`` -- the tasks it places as
    ``(user, server)`` pairs in order (``held`` not included) and their number.  In integers (capacities and
    demands multiplied per resource by :func:`integer_scale`: exact, the same placements as in ``Fraction``s,
    tests/mechanisms/test_drfh_integer.py); in ``Fraction``s when a common denominator is too large."""
    J, S, R = env.n_users, env.n_servers, env.n_resources
    hv = None if held is None else held_view(held)
    total = [0] * J if hv is None else hv.totals()  # what runs counts in its user's total
    limit = [None if n is None else n.numerator // n.denominator if n.__class__ is Fraction else math.floor(n)
             for n in env.tasks]
    below = [u for u in range(J) if limit[u] is None or total[u] < limit[u]]  # the users with a task waiting
    if not below:
        return [], 0
    info = _demand_info(env)
    scale = integer_scale(env, info)
    if scale is None:
        demand = list(env.demand)
    else:
        demand = _scaled_demands(env, scale, info)
    vector = S >= VECTOR_SERVERS[best_fit] and scale is not None and \
        _exact_in_floats(env, scale, demand, sum(total))
    if vector:
        import numpy as np

        base = _base(env)
        A, pooled = _after_held(env, hv, demand, scale, base, total), base.pooled(scale)
        remaining: Any = _Rows(A)
    else:
        if scale is None:
            remaining, pooled = [list(c) for c in env.capacity], env.total_capacity()
        else:
            base = _base(env)
            f = base.factors(scale)
            remaining, pooled = [[v * k for v, k in zip(row, f)] for row in base.rows], base.pooled(scale)
        if hv is not None:
            for j, row in enumerate(hv.on):
                d = demand[j]
                for s, n in row.items():
                    rem = remaining[s]
                    for r in range(R):
                        rem[r] -= n * d[r]
    placed: list = []

    def server_fits(j: int, s: int) -> bool:
        rem, d = remaining[s], demand[j]
        for r in range(R):
            if rem[r] < d[r]:
                return False
        return True

    def user_open(j: int, _last: int = -1) -> bool:
        return limit[j] is None or total[j] < limit[j]

    def place(j: int, s: int) -> None:
        rem, d = remaining[s], demand[j]
        for r in range(R):
            rem[r] -= d[r]
        total[j] += 1
        placed.append((j, s))

    # the users served, keyed by tasks x G_j / w_j: in integers, each G_j / w_j times the common denominator M of
    # them all (G_j / w_j kept with the user's demand, by the weight's identity)
    users, g, eligible, weight = [], {}, env.eligible, env.weight
    for u in below:
        e = info[u]
        share = e[2]
        if not eligible[u] or (share.__class__ is not Fraction and is_inf(share)):
            continue
        users.append(u)
        w = weight[u]
        got = e[3].get(id(w))
        if got is None or got[0] is not w:
            got = e[3][id(w)] = (w, share / w)
        g[u] = got[1]
    M = math.lcm(*(v.denominator for v in g.values())) if g else 1
    per = {u: v.numerator * (M // v.denominator) for u, v in g.items()}
    too_many = (f"instance: {name} would place more than {MAX_STEPS} whole tasks; "
                f"scale capacities/demands down")
    if vector:
        def place_many(j: int, s: int, k: int) -> None:
            if not best_fit:  # (Best-Fit reads the array alone)
                rem, d = remaining[s], demand[j]
                for r in range(R):
                    rem[r] -= k * d[r]
            total[j] += k
            placed.extend([(j, s)] * k)

        servers = _VectorServers(env, remaining, A, demand, pooled, best_fit)
        steps = servers.fill(users, total, per, limit, place_many, too_many)
        return placed, steps
    fits: dict[int, set[int]] = {}
    for j in users:
        if all(v == 0 for v in env.demand[j]):  # only with a finite bound (the model's guard)
            if limit[j] is not None:
                fits[j] = {min(env.eligible[j])}
            continue
        fs = {s for s in env.eligible[j] if server_fits(j, s)}
        if fs:
            fits[j] = fs
    pick = None
    if best_fit:
        def server_key(j: int, s: int) -> Any:
            return (best_fit_score(demand[j], remaining[s], pooled), s)

        pick, place = _best_fit_heaps(env, remaining, pooled, place, demand)
    else:
        def server_key(j: int, s: int) -> Any:
            return s

        def pick(j: int, fs: set) -> int:  # the scan by server_key, in C: the lowest index
            return min(fs)
    steps = fill_whole_tasks(fits, lambda u: (total[u] * per[u], u), server_key, place,
                             server_fits, user_open, MAX_STEPS, too_many, pick_server=pick)
    return placed, steps


def _after_held(env: Environment, hv: Any, demand: list, scale: list, base: _Base, total: list) -> Any:
    """The scaled capacities less what runs (``hv``, ``total`` its users' sums), an ``S x R`` int64 array the fill
    may write.  Exact: every value and partial sum is an integer of magnitude below 2^52 (``_exact_in_floats``).
    With the caller's memo (``Held.memo``) the array is kept between calls, each user's part in it with the
    ``cols`` and scaled demand it was counted from: a call re-counts only the users whose running tasks or demand
    changed (by identity) and takes back those gone -- a step of a simulation moves a few users' tasks while
    thousands run."""
    import numpy as np

    R = env.n_resources
    memo = hv.memo if hv is not None else None
    if memo is None:
        A = base.array * np.array(base.factors(scale), dtype=np.int64)
        if hv is not None and any(total):  # what runs takes its servers' capacity
            users, servers, counts = hv.arrays()
            used = counts[:, None] * np.array(demand, dtype=np.int64).reshape(env.n_users, R)[users]
            for r in range(R):  # summed per server in float64: exact, every partial sum < 2^52
                A[:, r] -= np.bincount(servers, weights=used[:, r], minlength=env.n_servers).astype(np.int64)
        return A
    key = _scale_key(env, scale)
    got = memo.get("drfh-after-held")
    # the same scale OBJECT: the same cluster (it is interned in the cluster's memo, which is the capacities' own)
    if got is None or got[0] is not key:
        got = memo["drfh-after-held"] = (key, base.array * np.array(base.factors(scale), dtype=np.int64), {})
    A, kept = got[1], got[2]

    def count(c: tuple, d: tuple, sign: int) -> None:  # a user's tasks running (cols c, scaled demand d) in or out
        if c[2]:
            A[np.asarray(c[0], dtype=np.int64)] -= sign * np.multiply.outer(np.asarray(c[1], dtype=np.int64),
                                                                          np.array(d, dtype=np.int64))

    for u, c, d in zip(env.users, hv.cols, demand):
        was = kept.get(u)
        if was is not None:
            if was[0] is c and was[1] is d:
                continue
            count(*was, -1)
        count(c, d, 1)
        kept[u] = (c, d)
    if len(kept) > len(env.users):  # some users counted before are gone
        here = set(env.users)
        for u in [u for u in kept if u not in here]:
            count(*kept.pop(u), -1)
    return A.copy()


class _Rows(dict):
    """The remaining capacities of the vectorised fill as Python integers, a server's row made from the int64
    array when first read (before the array is written for it: the fill places, then updates the array)."""

    def __init__(self, A: Any) -> None:
        super().__init__()
        self.A = A

    def __missing__(self, s: int) -> list:
        row = self[s] = self.A[s].tolist()
        return row


def _best_fit_heaps(env: Environment, remaining: list, pooled: tuple, place, demand: Sequence):
    """Best-Fit's server choice by eq. (9) kept in per-user heaps (``mechverify.placement.BestFitHeaps``, the
    one definition of eq. (9) and its incremental form, shared with ``progressive_filling(...,
    placement="best-fit")``): the same server as scanning the fitting servers with ``best_fit_score``, ties included.
    Returns ``(pick_server, place)`` for ``fill_whole_tasks``."""
    heaps = BestFitHeaps(env, remaining, pooled, lambda j, s: demand[j])

    def pick(j: int, fs: set) -> int:
        return heaps.pick(j, fs, fs.__contains__)

    def place_and_update(j: int, s: int) -> None:
        place(j, s)
        heaps.changed(s)

    return pick, place_and_update


def _exact_in_floats(env: Environment, scale: list, demand: list, held: int) -> bool:
    """Every number the vectorised fill holds is an integer below 2^52 in size: the scaled capacities and demands,
    and what remains of a capacity (at least the capacity minus ``held`` tasks of the largest demand)."""
    base = _base(env)
    if base.array is None:
        return False
    top = max((v * f for v, f in zip(base.top, base.factors(scale))), default=0)
    d = max(map(max, demand), default=0)
    return max(top, d) < _EXACT_FLOAT and held * d < _EXACT_FLOAT


class _VectorServers:
    """The fill's server search on many servers: the remaining capacities (integers) also as an ``S x R`` int64
    array, each user's fitting servers found by one numpy comparison instead of a set per user.  The same loop
    as ``fill_whole_tasks`` (the lowest key among the users with a fitting server gets one task on its fitting
    server with the lowest key), lazily: users wait in a heap by key, and the one on top with no fitting server
    left leaves it for good (capacities only shrink during a fill).

    * First-Fit: each user keeps the index below which no server fits it (none will again); its next server is
      that one when it still fits, else found by a numpy scan from there.
    * Best-Fit: eq. (9) in floats for every server at once, per demand direction (users with the same ``D_j /
      D_{j,r0}`` share it; after a placement only that server's value is recomputed, when next read), as a
      SCREEN: the servers whose float value is within its rounding bound of the smallest are the candidates,
      and the smallest EXACT value among them wins (eq. (9) rearranged in integers, ``best_fit_scaled``; ties to
      the lower index).  A float of eq. (9) is a handful of correctly rounded operations on numbers exact in
      float64 (the scaled integers are below 2^52), so its error is below 2^-50 times the sum of the magnitudes of
      its terms; the screen allows 10^-12 times that sum on either side."""

    def __init__(self, env: Environment, remaining: Any, A: Any, demand: list, pooled: tuple, best_fit: bool) -> None:
        import numpy as np

        self.np, self.env, self.remaining, self.demand, self.best_fit = np, env, remaining, demand, best_fit
        self.A = A
        self.D: dict[int, Any] = {}  # user -> its demand as an int64 row
        self.mask: dict[int, Any] = {}  # user -> its eligible servers as a bool row (users eligible everywhere: none)
        self.first: dict[int, int] = {}  # First-Fit: user -> no server below this index fits it
        self.alike: Any = None  # Best-Fit: the servers alike the last pick's, when a run may take them in turn
        if best_fit:
            self.pooled_list = [float(p) if p else 0.0 for p in pooled]
            # best_fit_scaled's weights L / P_r (the pooled capacities are integers here: scaled)
            self.pooled_int = [int(p) for p in pooled]
            L = math.lcm(*(p for p in self.pooled_int if p))
            self.weights = [L // p if p else 0 for p in self.pooled_int]
            self.pooled_f = np.array(self.pooled_list)
            self.log: list[int] = []  # the servers placed on, in order (what each demand has not yet re-read)
            # (scaled demand, eligible) -> [r0, D / D_r0 in floats, eligible mask, eq. (9) -+ bound, log read so far]
            self.direction: dict[Any, list] = {}

    def _row(self, j: int) -> Any:
        got = self.D.get(j)
        if got is None:
            np = self.np
            got = self.D[j] = np.array(self.demand[j], dtype=np.int64)
            el = self.env.eligible[j]
            if len(el) < self.env.n_servers:
                m = np.zeros(self.env.n_servers, dtype=bool)
                m[sorted(el)] = True
                self.mask[j] = m
        return got

    def fill(self, users: list, total: list, per: dict, limit: list, place: Callable, too_many: str) -> int:
        """The loop, users keyed ``(total[u] x per[u], u)`` and bounded by ``limit``; ``place(j, s, k)`` commits
        ``k`` tasks of ``j`` on ``s``.  First-Fit commits at once every task the loop would give the same user on
        the same server in a row: while its key stays below the next user's (``key`` grows by ``per`` a task),
        its bound allows, and the server has room (it stays the first that fits)."""
        import heapq

        env = self.env
        zero = {j for j in users if all(v == 0 for v in env.demand[j])}  # only with a finite bound (the model's guard)
        heap = [(total[j] * per[j], j) for j in users if j not in zero or env.tasks[j] is not None]
        heapq.heapify(heap)
        steps = 0
        while heap:
            j = heap[0][1]
            s = min(env.eligible[j]) if j in zero else self._pick(j)
            if s is None:
                heapq.heappop(heap)
                continue
            k, run = 1, None
            if j in zero:
                k = limit[j] - total[j]  # its key stays (0, j): every task in a row
            elif not self.best_fit:
                k = self._run_length(j, s, heap, total, per, limit)
            elif self.alike is not None and len(self.alike) > 1:
                # Best-Fit's run: one task on each server alike s (its exact minimum), in index order
                run = self.alike[:self._allowance(j, len(self.alike), heap, total, per, limit)]
            steps += k if run is None else len(run)
            if steps > MAX_STEPS:
                raise InstanceError(too_many)
            if run is None:
                place(j, s, k)
                self.A[s] -= k * self._row(j)
                if self.best_fit:
                    self.log.append(s)
            else:
                lst = run.tolist()
                for t in lst:
                    place(j, t, 1)
                self.A[run] -= self._row(j)
                self.log.extend(lst)
            if limit[j] is None or total[j] < limit[j]:
                heapq.heapreplace(heap, (total[j] * per[j], j))
            else:
                heapq.heappop(heap)
        return steps

    def _run_length(self, j: int, s: int, heap: list, total: list, per: dict, limit: list) -> int:
        """How many tasks in a row the loop gives ``j`` (on top of ``heap``) on ``s``, its first fitting server."""
        rem, d = self.remaining[s], self.demand[j]
        k = min(c // v for c, v in zip(rem, d) if v > 0)  # room on s (j demands something: not a zero user)
        return self._allowance(j, k, heap, total, per, limit)

    @staticmethod
    def _allowance(j: int, k: int, heap: list, total: list, per: dict, limit: list) -> int:
        """At most ``k``: how many tasks in a row ``j`` (on top of ``heap``) gets before another user's turn -- its
        bound, and while ``(total + t) x per`` stays below the runner-up's key (ties: the lower index first)."""
        if limit[j] is not None:
            k = min(k, limit[j] - total[j])
        if len(heap) > 1:
            nxt = min(heap[1:3])
            gap = nxt[0] - total[j] * per[j]
            k = min(k, 1 + (gap // per[j] if j < nxt[1] else (gap - 1) // per[j]))
        return max(k, 1)

    def _fits_from(self, j: int, lo: int) -> Any:
        m = (self.A[lo:] >= self._row(j)).all(axis=1)
        mask = self.mask.get(j)
        return m if mask is None else m & mask[lo:]

    def _pick(self, j: int) -> Optional[int]:
        if not self.best_fit:
            lo = self.first.get(j, 0)
            self._row(j)  # (its eligibility mask)
            if lo < self.env.n_servers and (j not in self.mask or self.mask[j][lo]) and \
                    all(c >= d for c, d in zip(self.remaining[lo], self.demand[j])):
                return lo
            m = self._fits_from(j, lo)
            i = int(m.argmax()) if len(m) else 0
            if not len(m) or not m[i]:
                self.first[j] = self.env.n_servers
                return None
            self.first[j] = lo + i
            return lo + i
        np = self.np
        self.alike = None
        lo, hi = self._class(j)
        m = hi.min()
        if m == np.inf:  # no server fits
            return None
        cand = np.flatnonzero(lo <= m)
        if len(cand) == 1:
            return int(cand[0])
        rows = self.A[cand]
        if (rows == rows[0]).all():  # servers alike (the usual tie): the lowest index
            self._alike(j, cand, rows[0].tolist())
            return int(cand[0])
        # eq. (9) compared exactly in integers (best_fit_scaled: H up to a factor of the task's own), once per
        # distinct remaining capacity among the candidates, at its lowest server; the lowest index among equals
        first: dict = {}
        while len(cand) and len(first) < 8:  # the usual case: a few distinct rows, many servers each (numpy)
            same = (rows == rows[0]).all(axis=1)
            first[tuple(rows[0].tolist())] = int(cand[0])
            cand, rows = cand[~same], rows[~same]
        for s, rem in zip(cand.tolist(), map(tuple, rows.tolist())):
            first.setdefault(rem, s)
        d, w, best = self.demand[j], self.weights, None
        for rem, s in first.items():
            n, m = best_fit_scaled(d, rem, w)
            if best is None or n * best[1] < best[0] * m or (n * best[1] == best[0] * m and s < best[2]):
                best = (n, m, s)
        return best[2]

    def _alike(self, j: int, cand: Any, rem: list) -> None:
        """``cand``, servers with the same remaining capacity ``rem``, are the candidates of ``j``'s pick: every other
        server's eq. (9) is above theirs (the screen's bound is rigorous), so the loop gives ``j`` the first of them,
        then -- while ``j`` stays on top -- the next, and so on, PROVIDED a server that took a task ranks after the
        ones still alike: eq. (9) exactly larger there (or no room left for another task).  Then ``self.alike`` is
        ``cand`` (the fill commits that run at once)."""
        d, w = self.demand[j], self.weights
        after = [c - v for c, v in zip(rem, d)]
        if any(c < v for c, v in zip(after, d)):
            self.alike = cand
            return
        n0, m0 = best_fit_scaled(d, rem, w)
        n1, m1 = best_fit_scaled(d, after, w)
        if m1 == 0 or n1 * m0 > n0 * m1:  # (M = 0: infinite)
            self.alike = cand

    def _screen(self, j: int, r0: int, af: list, mask: Any, idx: Any) -> tuple:
        """Eq. (9) in floats minus and plus its bound at the servers ``idx`` (``None``: all), ``inf`` where no task
        of ``j`` fits (or ``mask`` excludes the server)."""
        np = self.np
        A, pf = (self.A if idx is None else self.A[idx]), self.pooled_f
        with np.errstate(divide="ignore", invalid="ignore"):
            cbar = np.where(pf > 0, A / np.where(pf > 0, pf, 1.0), 0.0)
            b = cbar / cbar[:, r0:r0 + 1]
            h = np.abs(np.array(af) - b).sum(axis=1)
            bound = 1e-12 * (sum(abs(v) for v in af) + np.abs(b).sum(axis=1))
        fit = (A >= self._row(j)).all(axis=1) & (A[:, r0] > 0)
        if mask is not None:
            fit &= mask if idx is None else mask[idx]
        return np.where(fit, h - bound, np.inf), np.where(fit, h + bound, np.inf)

    def _class(self, j: int) -> tuple:
        """For ``j``'s demand and eligible servers (users with the same share it): per server, eq. (9) in
        floats minus and plus its screening bound where a task fits (``inf`` where none does).  Computed for every
        server at the demand's first pick; after that only at the servers placed on since (the log), in Python
        floats -- the same correctly rounded operations, within the same bound."""
        np = self.np
        d = self.demand[j]
        key = (d, self.env.eligible[j])
        got = self.direction.get(key)
        if got is None:
            r0 = next(r for r, v in enumerate(d) if v > 0)  # (a zero user never gets here)
            P = self.pooled_int
            af = [float(Fraction(d[r] * P[r0], P[r] * d[r0])) if P[r] else 0.0 for r in range(len(d))]  # D_r / D_r0
            self._row(j)  # (its eligibility mask)
            mask = self.mask.get(j)
            lo, hi = self._screen(j, r0, af, mask, None)
            got = self.direction[key] = [r0, af, mask, lo, hi, len(self.log)]
            return lo, hi
        r0, af, mask, lo, hi, seen = got
        if len(self.log) - seen > 32:  # many changed (a run): in numpy, as at the first pick
            idx = np.unique(np.array(self.log[seen:], dtype=np.int64))
            lo[idx], hi[idx] = self._screen(j, r0, af, mask, idx)
            got[5] = len(self.log)
        elif seen < len(self.log):
            pf = self.pooled_list
            changed = list(set(self.log[seen:]))
            for s, rem in zip(changed, self.A[changed].tolist()):
                if (mask is not None and not mask[s]) or rem[r0] <= 0 or any(c < v for c, v in zip(rem, d)):
                    lo[s] = hi[s] = np.inf
                    continue
                c0 = rem[r0] / pf[r0]
                b = [(rem[r] / pf[r] if pf[r] > 0 else 0.0) / c0 for r in range(len(rem))]
                h = sum(abs(x - y) for x, y in zip(af, b))
                bound = 1e-12 * (sum(abs(v) for v in af) + sum(abs(v) for v in b))
                lo[s], hi[s] = h - bound, h + bound
            got[5] = len(self.log)
        return lo, hi


_SETTING = Setting(placement=True, external=False, bounds=True, weights=True, divisible=False)


@register("drfh-first-fit", "First-Fit DRFH: progressive filling with whole tasks, first fitting server",
          _SETTING, _INDIV_CLAIMS, source="001 Sec. V-B",
          z3=Z3Spec.none("indivisible tasks (integer allocations): not encoded"), task_rule=task_rule(False))
def drfh_first_fit(env: Environment, exact: bool = False) -> Allocation:
    """First-Fit DRFH (seed 001 Sec. V-B): whole tasks, first fitting server."""
    return _progressive_fill(env, False, "drfh-first-fit")


@register("drfh-best-fit", "Best-Fit DRFH: progressive filling with whole tasks, server by H(i,l) of eq. (9)",
          _SETTING, _INDIV_CLAIMS, source="001 Sec. V-B eq. (9)",
          z3=Z3Spec.none("indivisible tasks (integer allocations): not encoded"), task_rule=task_rule(True))
def drfh_best_fit(env: Environment, exact: bool = False) -> Allocation:
    """Best-Fit DRFH (seed 001 Sec. V-B): whole tasks, the fitting server minimising eq. (9)."""
    return _progressive_fill(env, True, "drfh-best-fit")
