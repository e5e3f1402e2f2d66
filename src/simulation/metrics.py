"""The seed-004 evaluation metrics on any allocation (Meskar & Liang, TSF-ER, Sec. 6.2-6.3).

SI-SAT, EF-SAT, the domination factor, the JCT factor and utilisation.  Every metric goes through THE
utility (``mechverify.utility``) and the one domination LP (``mechverify.domination``), so the numbers
mean what the verifier's properties mean.  Exact allocations give exact ``Fraction`` metrics; float
allocations give floats.  ``env`` is the TRUE environment (``None``: ``alloc.env``, truthful reports).
Ratios use ``mechverify.numbers.ratio`` (``x/0 = inf``, ``0/0 = 1``).  The definitions, reconstructed
from the seed's prose, are in docs/seed004-mechanisms.md, section "Evaluation metrics".
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from mechverify.allocation import Allocation, feasibility_violations, float_matrix
from mechverify.domination import dominating_allocation
from mechverify.model import Environment, leontief_tasks
from mechverify.numbers import INF, InstanceError, as_floats, is_inf, ratio
from mechverify.utility import capped_tasks, envy_value, equal_split_bundle, si_benchmark, true_tasks, utilities, utility

__all__ = ["si_benchmark", "si_sat", "si_sats", "min_si_sat", "ef_sat", "ef_sats", "min_ef_sat",
           "dominating_allocation", "domination", "domination_factor", "jct_factor", "static_jct_factor", "utilization",
           "Metrics", "all_metrics"]

FLOAT_SHRINK = 1e-9  # float utilities are lowered by this relative amount before the domination LP


def _cap1(v: Any, exact: bool) -> Any:
    one = Fraction(1) if exact else 1.0
    if is_inf(v):
        return one
    return one if v >= 1 else (v if exact else float(v))


def _check(env: Optional[Environment], alloc: Allocation) -> Environment:
    if not isinstance(alloc, Allocation):
        raise InstanceError(f"allocation: expected an Allocation, got {type(alloc).__name__}")
    env = alloc.env if env is None else env
    J, S = env.n_users, env.n_servers
    if len(alloc.x) != J or any(len(row) != S for row in alloc.x):
        raise InstanceError(f"allocation: expected a {J}x{S} task matrix (users x servers) for this environment")
    if alloc.env.n_users != J or alloc.env.n_servers != S or alloc.env.n_resources != env.n_resources \
            or alloc.env.n_external != env.n_external:
        raise InstanceError("allocation: computed for an environment of a different shape than the true one")
    return env


def _exact(alloc: Allocation) -> bool:
    return bool(alloc.exact) and all(isinstance(v, Fraction) for row in alloc.x for v in row)


# ---------------------------------------------------------------------- SI-SAT
def si_sat(env: Optional[Environment], alloc: Allocation, j: int) -> Any:
    """``SI-SAT_j = min{ u_j(A_j) / psi_j, 1 }`` (seed 004 Sec. 6.2-6.3)."""
    env = _check(env, alloc)
    return _cap1(ratio(utility(env, alloc, j), si_benchmark(env, j)), _exact(alloc))


def si_sats(env: Optional[Environment], alloc: Allocation) -> tuple:
    """Every user's SI-SAT.  When the users' demands are per user (no per-server ones) and the allocation is all
    floats or all rationals: the own utilities by ``utility.utilities`` (a float matrix's at once: the same bits) and
    each benchmark
    ``psi_j`` from its user's share times the tasks its demand fits in the whole of its eligible servers, kept per
    (eligible servers, demand) in the cluster's memo: exact, so the same numbers (``share x c / d`` summed is
    ``share x`` the sum of ``c / d``)."""
    env = _check(env, alloc)
    exact = _exact(alloc)
    if not env.server_demand and (exact or _float_rows(alloc)):
        own = utilities(env, alloc)
        return tuple(_cap1(ratio(own[j], _si_psi(env, j)), exact) for j in range(env.n_users))
    return tuple(si_sat(env, alloc, j) for j in range(env.n_users))


def _float_rows(alloc: Allocation) -> bool:
    return all(v.__class__ is float for row in alloc.x for v in row)


def _si_psi(env: Environment, j: int) -> Any:
    """:func:`si_benchmark` of ``j`` (no per-server demands): ``min(share x K, external, n_j)`` with ``K`` the sum,
    over ``j``'s eligible servers, of the tasks of its demand a whole server holds."""
    memo = env.cluster_memo().setdefault("si-fits", {})
    key = (env.eligible[j], env.demand[j])
    K = memo.get(key)
    if K is None:
        if len(memo) >= 4096:  # (a bound: a key forgotten only costs its sum again)
            memo.clear()
        d, cap = env.demand[j], env.capacity
        K = 0
        for s in env.eligible[j]:
            K = K + leontief_tasks(cap[s], d)
        memo[key] = K
    share = env.entitlement(j)
    if is_inf(K):  # (nothing demanded: the generic path's infinities)
        return si_benchmark(env, j)
    ext = leontief_tasks(tuple(share * v for v in env.external_capacity), env.external_demand[j])
    return capped_tasks(share * K, ext, env.tasks[j])


def min_si_sat(env: Optional[Environment], alloc: Allocation) -> Any:
    """``MIN-SI-SAT = min_j SI-SAT_j`` -- the SI violation of the most disadvantaged user."""
    return min(si_sats(env, alloc))


# ---------------------------------------------------------------------- EF-SAT
def ef_sat(env: Optional[Environment], alloc: Allocation, j: int, placement_aware: bool = True,
           _bundles: Optional[list] = None) -> Any:
    """``EF-SAT_j = min{ min_i u_j(A_j) / u_j(A_i), 1 }`` (seed 004 Sec. 6.3)."""
    env = _check(env, alloc)
    exact = _exact(alloc)
    own = utility(env, alloc, j)
    worst: Any = Fraction(1) if exact else 1.0
    servers = None if placement_aware else range(env.n_servers)
    empty_value: Any = None  # u_j of an empty bundle: the same for every user holding nothing
    for i in range(env.n_users):
        if i == j:
            continue
        if _bundles is not None and env.weight[i] == env.weight[j]:
            # what envy_value computes for equal weights, with i's bundle built once per allocation
            if all(v == 0 for v in alloc.x[i]):
                if empty_value is None:
                    empty_value = true_tasks(env, j, _bundles[i], servers)
                v = empty_value
            else:
                v = true_tasks(env, j, _bundles[i], servers)
        else:
            v = envy_value(env, alloc, j, i, placement_aware=placement_aware)
        r = _cap1(ratio(own, v), exact)
        if r < worst:
            worst = r
    return worst


def ef_sats(env: Optional[Environment], alloc: Allocation, placement_aware: bool = True) -> tuple:
    """Every user's EF-SAT (each other user's bundle built once).  Without the passes over every server (a float
    allocation's in numpy, :func:`_float_ef`; an exact one's pair by pair, :func:`_exact_ef`) where
    :func:`_ef_applies`: the same numbers."""
    env = _check(env, alloc)
    fast = _exact_ef(env, alloc, placement_aware) if _exact(alloc) else _float_ef(env, alloc, placement_aware)
    if fast is not None:
        return fast
    bundles = [alloc.bundle(i) for i in range(env.n_users)]
    return tuple(ef_sat(env, alloc, j, placement_aware, bundles) for j in range(env.n_users))


def _ef_applies(env: Environment, alloc: Allocation) -> bool:
    """The fast EF-SATs' domain: the reports are the truth, equal weights, per-user demands, nothing external,
    every user demanding something, two users or more."""
    return env.n_users >= 2 and alloc.env is env and not env.server_demand and not env.n_external \
        and len(set(env.weight)) == 1 and all(any(v > 0 for v in d) for d in env.demand)


def _exact_ef(env: Environment, alloc: Allocation, placement_aware: bool) -> Optional[tuple]:
    """:func:`ef_sat` of every user for an exact allocation, in rationals (so the same numbers): on a server,
    ``min_r x_is d_ir / d_jr`` is ``x_is`` times ``rho_ij = min_r d_ir / d_jr`` (over ``j``'s demanded resources),
    so ``u_j(A_i)`` is ``rho_ij`` times ``i``'s tasks on ``j``'s eligible servers, capped by ``n_j`` -- one product
    per pair instead of a pass over the servers.  ``None`` outside :func:`_ef_applies`."""
    if not _ef_applies(env, alloc):
        return None
    J, x = env.n_users, alloc.x
    own = utilities(env, alloc)
    on: dict = {}  # id(eligible set) -> each user's tasks on those servers
    kinds: dict = {}  # demand -> its index among the distinct demands (a pair is looked up by indices)
    kind = [kinds.setdefault(d, len(kinds)) for d in env.demand]
    rho: dict = {}  # (kind of i, kind of j) -> rho_ij
    one = Fraction(1)
    out = []
    for j in range(J):
        E = env.eligible[j] if placement_aware else None
        T = on.get(id(E))
        if T is None:
            T = on[id(E)] = alloc.totals() if E is None or len(E) == env.n_servers else \
                [sum((x[i][s] for s in E), Fraction(0)) for i in range(J)]
        dj, worst = env.demand[j], one
        for i in range(J):
            if i == j:
                continue
            p = rho.get((kind[i], kind[j]))
            if p is None:
                p = rho[(kind[i], kind[j])] = min(a / b for a, b in zip(env.demand[i], dj) if b > 0)
            r = _cap1(ratio(own[j], capped_tasks(p * T[i], INF, env.tasks[j])), True)
            if r < worst:
                worst = r
        out.append(worst)
    return tuple(out)


def _float_ef(env: Environment, alloc: Allocation, placement_aware: bool) -> Optional[tuple]:
    """:func:`ef_sat` of every user for a float allocation, the same IEEE operations as its loops (bit for bit;
    tests/simulation/test_metrics.py): ``u_j(A_i)`` is, over ``j``'s eligible servers in the order its loop takes
    them, the sum from the left of ``min_r (x_is float(d_ir)) / float(d_jr)`` over ``j``'s demanded resources,
    then capped by ``n_j``.  Users alike (the same demand numbers, the same eligible set object) share the
    ``u_j(A_i)`` before the cap: one numpy pass per kind of user.  ``None`` where it does not apply (the loops
    then): reports other than the truth, unequal weights, per-server demands, external resources, a user demanding
    nothing, an allocation not all finite floats."""
    J = env.n_users
    if _exact(alloc) or not _ef_applies(env, alloc):
        return None
    X = float_matrix(alloc)
    if X is None:
        return None
    import numpy as np

    own = np.array(utilities(env, alloc), dtype=float)
    D = np.array([as_floats(d) for d in env.demand], dtype=float).reshape(J, env.n_resources)
    S = env.n_servers
    every = list(range(S))
    out = np.ones(J)
    kinds: dict = {}
    for j in range(J):
        kinds.setdefault((env.demand[j], id(env.eligible[j])), []).append(j)
    B: dict = {}  # resource r -> x_is * float(d_ir), J x S (every bundle's amounts of r)
    for (d, _e), js in kinds.items():
        j0 = js[0]
        cols = list(env.eligible[j0]) if placement_aware else every
        whole = cols == every  # (every server in order: no copy)
        if cols:
            per = None
            for r in (r for r, v in enumerate(d) if v > 0):  # min over j's demanded resources of amount / float(d_jr)
                b = B.get(r)
                if b is None:
                    b = B[r] = X * D[:, r:r + 1]
                q = (b if whole else b[:, cols]) / D[j0, r]
                per = q if per is None else np.minimum(per, q)
            V = np.add.accumulate(per, axis=1)[:, -1]  # from the left, as the loop adds
        else:
            V = np.zeros(J)
        for j in js:
            v = V
            n = env.tasks[j]
            if n is not None:  # capped_tasks: n_j where it is below (compared exactly: the same choice, the same float)
                fn = float(n)
                v = np.where(V > fn, fn, V)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(v == 0, 1.0, own[j] / v)
            r[j] = 1.0
            out[j] = min(1.0, float(r.min()))
    return tuple(out.tolist())


def min_ef_sat(env: Optional[Environment], alloc: Allocation, placement_aware: bool = True) -> Any:
    """``MIN-EF-SAT = min{ min_{i,j} u_j(A_j)/u_j(A_i), 1 }`` -- the most envious user."""
    return min(ef_sats(env, alloc, placement_aware))


# ---------------------------------------------------------------------- domination factor
def domination(env: Optional[Environment], alloc: Allocation, mode: str = "rdm",
               exact: Optional[bool] = None) -> tuple[Any, Any, tuple]:
    """``(factor, D, y)``: the domination LP of seed 004 Sec. 6.2 (see the module docstring).

    ``y`` is an optimal dominating task matrix.  ``exact`` defaults to the allocation's exactness.
    Raises ``InstanceError`` if ``alloc`` is not in chi(E) of the environment it was computed for.
    """
    env = _check(env, alloc)
    exact = _exact(alloc) if exact is None else exact
    bad = feasibility_violations(alloc.env, alloc.x, mode)
    if bad:
        raise InstanceError(f"allocation: not in chi(E) ({bad[0]})")
    u = [utility(env, alloc, j) for j in range(env.n_users)]
    total = sum(u, Fraction(0) if exact else 0.0)
    lower = [Fraction(v) if exact else max(0.0, float(v) * (1 - FLOAT_SHRINK)) for v in u]
    D, y = dominating_allocation(env, lower, mode, exact)
    if D is None:  # y = the allocation itself is feasible, so this is solver trouble
        raise RuntimeError("domination LP failed")
    if not exact:
        D = max(float(D), float(total))
    return ratio(D, total), D, y


def domination_factor(env: Optional[Environment], alloc: Allocation, mode: str = "rdm",
                      exact: Optional[bool] = None) -> Any:
    """``D(x*) / sum_j u_j`` (seed 004 Sec. 6.2, Fig. 4); 1 iff Pareto optimal (Def. 4)."""
    return domination(env, alloc, mode, exact)[0]


# ---------------------------------------------------------------------- JCT factor
def jct_factor(standalone_jct: Any, jct: Any) -> Any:
    """``standalone JCT / JCT`` (seed 004 Sec. 6.2).  ``0/0 = 1``; an unfinished job (``jct = inf``) is 0."""
    if is_inf(jct):
        return 0.0
    if jct < 0 or standalone_jct < 0:
        raise InstanceError(f"jct: must be >= 0 (got standalone {standalone_jct}, actual {jct})")
    return ratio(standalone_jct, jct)


def static_jct_factor(env: Optional[Environment], alloc: Allocation, j: int) -> Any:
    """JCT factor of ``j`` if ``alloc`` were held fixed while ``j`` runs its ``n_j`` tasks (fluid model).

    Derivation: with ``x`` tasks running in parallel, each of length ``tau``, ``n`` tasks take
    ``n tau / x``.  With all resources of all servers (standalone) ``j`` runs
    ``u_j(c, c_er) = min(eta_j, n_j)`` tasks in parallel (THE utility of the whole cluster; ``eta_j`` of
    seed eq. (6)).  Hence ``standalone JCT / JCT = u_j(A_j) / u_j(c, c_er)``, in ``[0, 1]``.
    """
    env = _check(env, alloc)
    whole = true_tasks(env, j, equal_split_bundle(env, Fraction(1)))
    r = ratio(utility(env, alloc, j), whole)
    return r if _exact(alloc) or isinstance(r, float) else float(r)


# ---------------------------------------------------------------------- utilisation
def utilization(env: Optional[Environment], alloc: Allocation) -> dict[str, Any]:
    """Share of each resource in use: pooled computational resources and each external resource.

    Uses the allocation's own bundles (``x[j,s] * d_reported``), i.e. ``alloc.env``'s demands."""
    _check(env, alloc)
    aenv = alloc.env
    exact = _exact(alloc)
    zero: Any = Fraction(0) if exact else 0.0
    out: dict[str, Any] = {}
    pooled = aenv.total_capacity()
    for r, name in enumerate(aenv.resources):
        used = sum((alloc.x[j][s] * aenv.d(j, s)[r] for j in range(aenv.n_users) for s in range(aenv.n_servers)), zero)
        out[name] = ratio(used, pooled[r]) if pooled[r] else zero
    for k, name in enumerate(aenv.external):
        used = sum((alloc.total(j) * aenv.external_demand[j][k] for j in range(aenv.n_users)), zero)
        cap = aenv.external_capacity[k]
        out[name] = ratio(used, cap) if cap else zero
    if not exact:
        out = {k: float(v) for k, v in out.items()}
    return out


# ---------------------------------------------------------------------- all at once
@dataclass(frozen=True)
class Metrics:
    """All seed-004 metrics of one allocation (:func:`all_metrics`)."""

    si_sat: tuple
    min_si_sat: Any
    ef_sat: tuple
    min_ef_sat: Any
    domination_factor: Any
    static_jct_factor: tuple
    utilization: dict


def all_metrics(env: Optional[Environment], alloc: Allocation, mode: str = "rdm",
                exact: Optional[bool] = None, placement_aware: bool = True) -> Metrics:
    """Every metric of this module for one allocation."""
    env = _check(env, alloc)
    si = si_sats(env, alloc)
    ef = ef_sats(env, alloc, placement_aware)
    return Metrics(si, min(si), ef, min(ef), domination_factor(env, alloc, mode, exact),
                   tuple(static_jct_factor(env, alloc, j) for j in range(env.n_users)), utilization(env, alloc))
