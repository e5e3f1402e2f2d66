"""THE true-utility function.  Every property (SP, GSP, EF, SI, PO, BF, PM) goes through it.

Seed 004 eq. (1) (with seed 001 eq. (1) as the no-external special case and seed 002's placement):

    u_j(A) = min{ min_k A_er[k] / d_er[j,k],                      (k with d_er[j,k] > 0)
                  sum_{s in M} min_{r: d[j,s,r] > 0} A[s,r] / d[j,s,r],
                  n_j }

where ``d`` are user ``j``'s TRUE demands, ``A`` any bundle (its own, another user's, an equal
split...), and ``M`` the servers whose resources count for ``j``: by default its TRUE eligible
servers ``E_j`` (a task cannot run where ``j`` is not allowed, whatever it reported).  The
"literal" EF variant passes ``M = S``.

A server where ``d[j,s]`` is zero on every resource contributes ``inf`` (it is then capped by the
external term or ``n_j``; the model guarantees one of them is finite, see ``model.py``).

Indivisible tasks (seed 001 Sec. V-B; seed 004 Algorithm 2): a task runs on ONE server with its whole
demand, so a bundle is worth ``min(floor(E), sum_s floor(P_s), floor(n_j))`` whole tasks, ``P_s`` the
Leontief value of server ``s`` and ``E`` the external limit.  :func:`whole_tasks` computes it from
:func:`true_tasks` (per server and overall); every function here takes ``integral=True`` for it.

Lemma (seed 004 Lemma 2 in our notation): for a non-wasteful bundle computed from the truthful
report, ``u_j = min(x_j, n_j) = x_j`` for every feasible allocation, so truthful utilities are the
task totals.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Iterable, Optional

from .allocation import Allocation, Bundle, _row_sums, float_matrix, memo
from .model import Environment, leontief_tasks
from .numbers import INF, as_float

__all__ = ["Reuse", "true_tasks", "capped_tasks", "whole_tasks", "bundle_value", "utility", "utilities", "envy_value",
           "equal_split_bundle", "si_benchmark", "hsi_benchmark", "scaled", "envy_value_up_to_one"]


def true_tasks(env: Environment, j: int, bundle: Bundle, servers: Optional[Iterable[int]] = None) -> Any:
    """Number of tasks user ``j`` (with its TRUE data in ``env``) can run with ``bundle``."""
    mask = env.eligible[j] if servers is None else servers
    total: Any = 0
    for s in mask:
        total = total + leontief_tasks(bundle.amounts[s], env.d(j, s))
    return capped_tasks(total, leontief_tasks(bundle.external, env.external_demand[j]), env.tasks[j])


def capped_tasks(total: Any, ext: Any, nj: Any) -> Any:
    """``min(total, ext, n_j)``, compared in this order (a binding ``n_j`` is returned as it is)."""
    result = total
    if ext is not INF and ext < result:  # (the float +inf is less than nothing)
        result = ext
    if nj is not None:
        if result.__class__ is float and nj.__class__ is Fraction and nj._denominator == 1:
            if nj._numerator < result:  # an int against a float: Python compares them exactly, as Fraction does
                result = nj
        elif result.__class__ is Fraction and nj.__class__ is Fraction:  # Fraction's comparison, in integers
            if nj._numerator * result._denominator < result._numerator * nj._denominator:
                result = nj
        elif nj < result:
            result = nj
    return result


def _floor(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isinf(v) else float(math.floor(v + 1e-9 * max(1.0, abs(v))))
    return Fraction(math.floor(v))


def whole_tasks(env: Environment, j: int, bundle: Bundle, servers: Optional[Iterable[int]] = None) -> Any:
    """Whole tasks ``j`` runs with ``bundle`` when tasks are indivisible (see the module docstring).

    Identity used: with ``T_s = true_tasks(.., [s]) = min(P_s, E, n)`` and
    ``T = true_tasks(.., all) = min(E, sum_s P_s, n)``, ``min(sum_s floor(T_s), floor(T))`` equals
    ``min(floor(E), sum_s floor(P_s), floor(n))``."""
    mask = list(env.eligible[j] if servers is None else servers)
    per = sum((_floor(true_tasks(env, j, bundle, [s])) for s in mask), Fraction(0))
    return min(per, _floor(true_tasks(env, j, bundle, mask)))


def bundle_value(env: Environment, j: int, bundle: Bundle, servers: Optional[Iterable[int]] = None,
                 integral: bool = False) -> Any:
    """:func:`whole_tasks` if ``integral`` else :func:`true_tasks`."""
    return (whole_tasks if integral else true_tasks)(env, j, bundle, servers)


def utility(true_env: Environment, alloc: Allocation, j: int, integral: bool = False) -> Any:
    """``u_j`` of user ``j``'s own bundle under ``alloc`` (computed from whatever was reported)."""
    if not integral:
        row = alloc.x[j]
        if not alloc.exact:
            if all(v.__class__ is float for v in row):
                return _float_own_tasks(true_env, alloc, j)
        elif all(v.__class__ is Fraction for v in row):
            return _exact_own_tasks(true_env, alloc, j)
    return bundle_value(true_env, j, alloc.bundle(j), None, integral)


def _exact_own_tasks(true_env: Environment, alloc: Allocation, j: int) -> Any:
    """:func:`true_tasks` of ``j``'s own bundle when its row of the task matrix is ``Fraction``s, without building
    the bundle: per eligible server ``min`` over the true demand's positive entries of ``x * d_reported / d_true``,
    compared as integer pairs and built as one ``Fraction`` (:func:`leontief_tasks`' way) -- exact numbers, so the
    same value (tests/mechverify/test_utility_fast.py)."""
    rep, row = alloc.env, alloc.x[j]
    total: Any = 0
    for s in true_env.eligible[j]:
        xs = row[s]
        xn, xd = xs._numerator, xs._denominator
        bn = bd = 0
        for dr, dt in zip(rep.d(j, s), true_env.d(j, s)):
            dn = dt._numerator
            if dn > 0:
                qn, qd = xn * dr._numerator * dt._denominator, xd * dr._denominator * dn  # qd > 0
                if not bd or qn * bd < bn * qd:
                    bn, bd = qn, qd
        total = total + (Fraction(bn, bd) if bd else INF)
    ext_r = rep.external_demand[j]
    tot = alloc.total(j) if ext_r else 0
    ext = leontief_tasks(tuple(tot * v for v in ext_r), true_env.external_demand[j])
    return capped_tasks(total, ext, true_env.tasks[j])


def _float_own_tasks(true_env: Environment, alloc: Allocation, j: int) -> Any:
    """:func:`true_tasks` of ``j``'s own bundle when its row of the task matrix is floats, without
    building the bundle: the same IEEE operations in the same order (``Fraction`` op ``float`` is
    ``float(Fraction)`` op ``float``), so the result is bit-identical (tests/mechverify/test_utility_fast.py)."""
    rep, row = alloc.env, alloc.x[j]
    total: Any = 0
    for s in true_env.eligible[j]:
        xs = row[s]
        best = INF
        for dr, dt in zip(rep.d(j, s), true_env.d(j, s)):
            if dt._numerator > 0:  # (the environment's numbers are checked Fractions)
                q = xs * as_float(dr) / as_float(dt)
                if q < best:
                    best = q
        total = total + best
    ext = INF
    ext_d = true_env.external_demand[j]
    if ext_d:
        tot = alloc.total(j)
        for dr, dt in zip(rep.external_demand[j], ext_d):
            if dt._numerator > 0:
                q = tot * as_float(dr) / as_float(dt)
                if q < ext:
                    ext = q
    return capped_tasks(total, ext, true_env.tasks[j])


def utilities(true_env: Environment, alloc: Allocation, integral: bool = False,
              reuse: Optional["Reuse"] = None) -> tuple[Any, ...]:
    """``u_j`` of every user's own bundle (:func:`utility` for each ``j``).  A float allocation's are computed
    once per true environment (memoised on the allocation: a run's rates of work and a simulation's measures
    share them), over the whole matrix at once (:func:`_float_utilities`).

    ``reuse`` (float allocations; a :class:`Reuse` the caller keeps across the steps of one run): a user whose
    inputs to :func:`utility` are the same objects or equal numbers as at its last computation -- its row of the
    task matrix, its reported and true demand and external demand, its eligible servers and task bound -- gets the
    value computed then (:func:`_reused`); the others are computed."""
    if integral or alloc.exact:
        return tuple(utility(true_env, alloc, j, integral) for j in range(true_env.n_users))
    m = memo(alloc)
    got = m.get("utilities")
    if got is not None and got[0] is true_env:
        return got[1]
    out = None
    if reuse is not None:
        if reuse.skip:
            reuse.skip -= 1
        else:
            out = _reused(true_env, alloc, reuse)
    if out is None:
        out = _float_utilities(true_env, alloc)
    if out is None:
        out = tuple(utility(true_env, alloc, j) for j in range(true_env.n_users))
    m["utilities"] = (true_env, out)
    return out


def utility_floats(true_env: Environment, alloc: Allocation, reuse: Optional["Reuse"] = None) -> Any:
    """:func:`utilities` of a float allocation as a numpy float array (``float`` of each value: a bound that caps a
    user is a ``Fraction``), memoised beside them: a run's work bookkeeping and a simulation's work done read the
    same array.  Shared read-only."""
    m = memo(alloc)
    got = m.get("utility_floats")
    if got is not None and got[0] is true_env:
        return got[1]
    import numpy as np

    arr = np.array(utilities(true_env, alloc, reuse=reuse), dtype=float)
    m["utility_floats"] = (true_env, arr)
    return arr


class Reuse:
    """What :func:`utilities` keeps across the steps of one float run (``reuse=``): each user's last inputs and
    value (``values``, name -> (inputs, eligible set, value)).  Where most users' inputs change at every step (a
    mechanism that recomputes every share at every event), looking them up costs more than it saves: after a step
    with fewer than a quarter found, or so many to compute that the whole matrix was computed anyway, the next
    :data:`BACK_OFF` steps compute everyone (``skip``), twice as many after each such look-up in a row (up to
    :data:`MAX_BACK_OFF`: a run where nothing is ever found -- ``drf+recompute`` -- looks up once in that many
    steps), :data:`BACK_OFF` again after a look-up that found enough."""

    BACK_OFF = 16
    MAX_BACK_OFF = 256
    #: from this many users to compute on, the whole matrix at once (``_float_utilities``) costs less than one at a time
    VECTOR = 16
    __slots__ = ("values", "skip", "wait")

    def __init__(self) -> None:
        self.values: dict = {}
        self.skip = 0
        self.wait = self.BACK_OFF  # the next back-off

    def back_off(self) -> None:
        """The look-ups of this step saved nothing: none for the next ``wait`` steps, and twice as long next time."""
        self.skip, self.wait = self.wait, min(2 * self.wait, self.MAX_BACK_OFF)


def _reused(true_env: Environment, alloc: Allocation, reuse: "Reuse") -> Optional[tuple[Any, ...]]:
    """:func:`utilities` with the values of ``reuse`` for users whose inputs are unchanged.  A user's utility is a
    function of its inputs alone: its row ``x_j`` of floats (equal floats: a zero's sign changes no result, the
    sums start from ``0``), ``d_j`` and ``d^e_j`` as reported and as true, ``n_j`` (equal numbers), and ``E_j``
    (the same set object: its iteration order is the order of the sum) -- so a value found under them is the
    one :func:`utility` computes now.  Per-server demands (not among the inputs) or another user count: ``None``."""
    rep = alloc.env
    if rep.server_demand or true_env.server_demand or rep.n_users != true_env.n_users:
        return None
    names, eligible, values = true_env.users, true_env.eligible, reuse.values
    keys = list(zip(alloc.x, rep.demand, rep.external_demand, true_env.demand, true_env.external_demand,
                    true_env.tasks))
    out: list = [None] * len(keys)
    missing = []
    get = values.get
    for j, key in enumerate(keys):
        got = get(names[j])
        if got is not None and got[1] is eligible[j] and got[0] == key:
            for v in key[0]:
                if v.__class__ is not float:  # an int or a Fraction equal to a float: computed anew
                    missing.append(j)
                    break
            else:
                out[j] = got[2]
        else:
            missing.append(j)
    if missing:
        if 2 * len(missing) > len(keys) or len(missing) >= Reuse.VECTOR:  # many: the whole matrix (the same values)
            full = _float_utilities(true_env, alloc)
            if full is not None:
                out = list(full)
                reuse.back_off()  # the look-ups saved nothing: not for a while
        for j in missing:
            if out[j] is None:
                out[j] = utility(true_env, alloc, j)
            if all(v.__class__ is float for v in keys[j][0]):  # what a later hit may be given for
                values[names[j]] = (keys[j], eligible[j], out[j])
            else:
                values.pop(names[j], None)
        if 4 * len(missing) > 3 * len(keys) and not reuse.skip:
            reuse.back_off()
    if not reuse.skip:
        reuse.wait = reuse.BACK_OFF
    if len(values) > 2 * len(keys) + 64:  # users who left
        keep = set(names)
        for u in [u for u in values if u not in keep]:
            del values[u]
    return tuple(out)


def _float_utilities(true_env: Environment, alloc: Allocation) -> Optional[tuple[Any, ...]]:
    """:func:`utility` of every user when ``alloc`` has a :func:`float_matrix`, vectorised: the IEEE operations
    of :func:`_float_own_tasks` in its order -- per server ``min_r x * d_rep / d_true`` (a minimum is exact),
    summed over the servers left to right from ``0``, the external limit ``min_k x_j * d_er_rep / d_er_true``,
    then :func:`capped_tasks`, whose comparison with a ``Fraction`` bound is exact (a float bound that ties is
    compared exactly, one user at a time).  A user eligible on only some servers (its set's order) is computed
    by :func:`utility`; per-server demands: ``None`` (the caller's loop)."""
    X = float_matrix(alloc)
    rep = alloc.env
    if X is None or rep.server_demand or true_env.server_demand or true_env.n_users != rep.n_users:
        return None
    import numpy as np

    S = X.shape[1]
    fr, ft = rep.floats(), true_env.floats()
    pos = ft.demand > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        Q = X[:, :, None] * fr.demand[:, None, :] / np.where(pos, ft.demand, 1.0)[:, None, :]
    best = np.minimum.reduce(np.where(pos[:, None, :], Q, INF), axis=2, initial=INF)  # J x S
    total = _row_sums(best, first=False)  # 0 + the servers' minima, left to right
    if ft.external_demand.shape[1]:
        tot = np.add.accumulate(X, axis=1)[:, -1]  # Allocation.total: sum(row[1:], row[0])
        pe = ft.external_demand > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            Qe = tot[:, None] * fr.external_demand / np.where(pe, ft.external_demand, 1.0)
        ext = np.where(pe, Qe, INF).min(axis=1, initial=INF)
        total = np.where(ext < total, ext, total)
    nj = ft.tasks
    out = total.tolist()
    for j in (nj <= total).nonzero()[0].tolist():  # the bound binds (float < total) or ties (compared exactly)
        out[j] = true_env.tasks[j] if nj[j] < total[j] else capped_tasks(out[j], INF, true_env.tasks[j])
    if set(map(len, true_env.eligible)) != {S}:
        for j, el in enumerate(true_env.eligible):
            if len(el) != S:  # eligible on some servers only: summed in its set's order
                out[j] = utility(true_env, alloc, j)
    return tuple(out)


def envy_value(true_env: Environment, alloc: Allocation, j: int, k: int, placement_aware: bool = True,
               weighted: bool = True, integral: bool = False) -> Any:
    """What ``j`` would get from ``k``'s bundle, scaled by ``w_j / w_k`` when ``weighted``
    (seed 002 Sec. II-A weighted EF: ``U_n(phi_n/phi_m a_m) <= U_n(a_n)``; the Leontief utility is
    homogeneous of degree one before the ``n_j`` cap, so the scaling is applied to the bundle)."""
    b = alloc.bundle(k)
    if weighted:
        b = scaled(b, true_env.entitlement_ratio(j, k))
    servers = None if placement_aware else range(true_env.n_servers)
    return bundle_value(true_env, j, b, servers, integral)


def envy_value_up_to_one(true_env: Environment, alloc: Allocation, j: int, k: int,
                         placement_aware: bool = True) -> Any:
    """Whole tasks ``j`` would run with ``k``'s bundle less ONE of ``k``'s tasks (the one whose removal
    leaves ``j`` the least), scaled like :func:`envy_value`: envy-freeness up to one task (EF1), the
    whole-task reading of EF.  ``k`` without a whole task: its bundle as it is."""
    rep = alloc.env
    b = alloc.bundle(k)
    servers = None if placement_aware else range(true_env.n_servers)
    factor = true_env.entitlement_ratio(j, k, whole=True)
    best: Any = None
    for s in range(rep.n_servers):
        if alloc.x[k][s] < 1:
            continue
        amounts = tuple(tuple(a - v for a, v in zip(row, rep.d(k, s))) if t == s else row
                        for t, row in enumerate(b.amounts))
        ext = tuple(a - v for a, v in zip(b.external, rep.external_demand[k]))
        v = bundle_value(true_env, j, scaled(Bundle(amounts, ext), factor), servers, True)
        if best is None or v < best:
            best = v
    return bundle_value(true_env, j, scaled(b, factor), servers, True) if best is None else best


def scaled(bundle: Bundle, factor: Any) -> Bundle:
    """``factor * bundle`` (every server amount and external amount); ``bundle`` itself for factor 1."""
    if factor == 1:
        return bundle
    return Bundle(tuple(tuple(v * factor for v in row) for row in bundle.amounts),
                  tuple(v * factor for v in bundle.external))


def equal_split_bundle(env: Environment, share: Any) -> Bundle:
    """The bundle ``share * c`` of every server and every external resource (SI benchmarks)."""
    return Bundle(tuple(tuple(share * v for v in row) for row in env.capacity),
                  tuple(share * v for v in env.external_capacity))


def si_benchmark(env: Environment, j: int, integral: bool = False) -> Any:
    """``u_j((w_j / sum_i w_i) * (c, c_er))``: what ``j`` runs with its weighted equal share of every
    server and every external resource (seed 002 Sec. III-B, seed 004 Def. 6, seed 003 Sec. 2.2 --
    one formula on this model; see ``verifier/properties/ef_si.py``).  On a queue tree the share is
    the tree's static split, ``Environment.entitlement(j)`` (``w_j / sum_i w_i`` when flat)."""
    return bundle_value(env, j, equal_split_bundle(env, env.entitlement(j)), None, integral)


def hsi_benchmark(env: Environment, j: int, integral: bool = False) -> Any:
    """What ``j`` runs with its hierarchical share guarantee (H-DRF, Bhattacharya et al., SoCC 2013): the
    static split of the tree among the nodes that demand (``Environment.entitlement(j, demanding=True)``)
    of every server and external resource; whole tasks when ``integral``.  Flat: the weighted equal split
    among the users that demand."""
    return bundle_value(env, j, equal_split_bundle(env, env.entitlement(j, True, whole=integral)), None, integral)
