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
from mechverify.numbers import is_inf, whole_fractions
from mechverify.placement import BestFitHeaps, best_fit_score

from .drfh_servers import Rows, VectorServers
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


#: from this many servers on, the fill searches the servers with numpy (``drfh_servers.VectorServers``): the same
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
        remaining: Any = Rows(A)
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

        servers = VectorServers(env, remaining, A, demand, pooled, best_fit)
        steps = servers.fill(users, total, per, limit, place_many, MAX_STEPS, too_many)
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
