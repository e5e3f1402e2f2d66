"""The seed-004 evaluation metrics on any allocation (Meskar & Liang, TSF-ER, Sec. 6.2-6.3).

Every metric goes through THE utility (``mechverify.utility``); the only LP (domination factor) goes
through ``mechverify.lp`` on ``mechverify.polytope``'s chi(E).  Exact allocations (``alloc.exact``
with ``Fraction`` entries) give exact ``Fraction`` metrics; float allocations give floats.

``env`` is the TRUE environment (as in ``utility(true_env, alloc, j)``); ``None`` means
``alloc.env`` (truthful reports).  Ratios use the convention of ``verifier.properties.base.ratio``:
``x/0 = inf`` for ``x > 0`` and ``0/0 = 1`` ("nothing to compare, no violation").

Definitions, reconstructed from the seed's prose (the PDF extraction mangles the formulas):

* **SI-SAT** (Sec. 6.2 "task ratio", restated in Sec. 6.3).  ``psi_j`` is "the total number of tasks
  that user j can execute when the resources are equally split among the users" -- Def. 6's right-hand
  side ``psi_j = min{ (c_er/|J|)/d_j,er , sum_s min_r (c_s,r/|J|)/d_j,r , n_j }``, i.e.
  ``u_j`` of the bundle ``(1/|J|) (c, c_er)``.  Task ratio ``sum_s x*_j,s / psi_j``;
  ``SI-SAT_j = min{ u_j(A_j) / psi_j, 1 }`` and ``MIN-SI-SAT = min_j SI-SAT_j``.  (The seed writes the
  numerator as ``sum_s x*_j,s``; with truthful reports this is ``u_j(A_j)``, seed Lemma 2 /
  ``utility.py``.)  Weighted generalisation (not in seed 004, which has no weights): the equal
  share ``1/|J|`` becomes ``w_j / sum_i w_i`` -- the same formula as the verifier's SI property; for
  equal weights it is exactly the seed's.
* **EF-SAT** (Sec. 6.3): ``EF-SAT_j = min{ min_{i in J} u_j(A_j) / u_j(A_i), 1 }`` and
  ``MIN-EF-SAT = min{ min_{i,j} u_j(A_j)/u_j(A_i), 1 } = min_j EF-SAT_j``.  ``u_j(A_i)`` is
  ``envy_value`` (the envious user's TRUE demands, ``n_j`` cap, placement-aware by default, weight
  scaling ``w_j/w_i`` -- identity for the seed's unweighted users).
* **Domination factor** (Sec. 6.2, Fig. 4): "we find the dominating allocation with the maximum social
  utility (i.e., maximizing sum_j sum_s x_j,s such that sum_s x_j,s >= sum_s x*_j,s for all j). The
  domination factor ... is the ratio of the social utility of the found dominating allocation to the
  social utility of the allocation derived from the allocation rule."  So

      D(x*) = max { sum_j sum_s y_j,s : y in chi(E), sum_s y_j,s >= u_j(A_j) for all j }
      domination factor = D(x*) / sum_j u_j(A_j)        (>= 1; = 1 iff x* is Pareto optimal, Def. 4)

  ``y`` ranges over the divisible chi(E) (seed eq. (2), TRUE placement, external resources, task
  bounds), also for indivisible allocations (the seed, Sec. 6.3: integer domination "requires solving
  an integer program"); it is then an upper bound on the integer domination factor.
* **JCT factor** (Sec. 6.2): "the ratio of the user's standalone JCT to the user's JCT", where the
  standalone JCT is "its JCT if it had received all resources of all servers"; at most 1, larger is
  better.  :func:`jct_factor` is that ratio; the event simulator
  (``mechanisms.tsf_er_online.simulate``) produces both JCTs.  :func:`static_jct_factor` is the same
  ratio for a single static allocation held while a fluid user runs (derivation in its docstring).
* **Utilisation** (Sec. 6.3 uses it as the efficiency proxy): used / capacity per resource.

Indivisible allocations: the seed states its Sec. 6.3 metrics with utility (1), which counts
fractions of tasks (e.g. an equal split worth 3/10 of a task gives ``psi_j = 3/10``, so a user with no
whole task has SI-SAT 0), and these functions follow it.  The verifier's properties count whole tasks
for indivisible mechanisms (``verifier.exact.whole_tasks``); that reading is not available here because
the core does not import the verifier.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Sequence

from .allocation import Allocation, feasibility_violations
from .lp import solve
from .model import Environment
from .numbers import InstanceError
from .polytope import TaskPolytope
from .utility import envy_value, equal_split_bundle, si_benchmark, true_tasks, utility

__all__ = ["si_benchmark", "si_sat", "si_sats", "min_si_sat", "ef_sat", "ef_sats", "min_ef_sat",
           "dominating_allocation", "domination", "domination_factor", "jct_factor", "static_jct_factor", "utilization",
           "Metrics", "all_metrics"]

INF = math.inf
FLOAT_SHRINK = 1e-9  # float utilities are lowered by this relative amount before the domination LP


def _ratio(num: Any, den: Any) -> Any:
    if den == 0:
        return Fraction(1) if num == 0 else INF
    return num / den


def _cap1(v: Any, exact: bool) -> Any:
    one = Fraction(1) if exact else 1.0
    if isinstance(v, float) and math.isinf(v):
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
    return _cap1(_ratio(utility(env, alloc, j), si_benchmark(env, j)), _exact(alloc))


def si_sats(env: Optional[Environment], alloc: Allocation) -> tuple:
    env = _check(env, alloc)
    return tuple(si_sat(env, alloc, j) for j in range(env.n_users))


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
        r = _cap1(_ratio(own, v), exact)
        if r < worst:
            worst = r
    return worst


def ef_sats(env: Optional[Environment], alloc: Allocation, placement_aware: bool = True) -> tuple:
    env = _check(env, alloc)
    bundles = [alloc.bundle(i) for i in range(env.n_users)]
    return tuple(ef_sat(env, alloc, j, placement_aware, bundles) for j in range(env.n_users))


def min_ef_sat(env: Optional[Environment], alloc: Allocation, placement_aware: bool = True) -> Any:
    """``MIN-EF-SAT = min{ min_{i,j} u_j(A_j)/u_j(A_i), 1 }`` -- the most envious user."""
    return min(ef_sats(env, alloc, placement_aware))


# ---------------------------------------------------------------------- domination factor
def dominating_allocation(env: Environment, utils: Sequence[Any], mode: str, exact: bool):
    """The domination LP of seed 004 Sec. 6.2 for target utilities ``utils``:

        D = max sum_j sum_s y[j,s]  s.t.  y in chi(E) (mode, TRUE placement, external, bounds),
                                          sum_s y[j,s] >= utils[j]  (all j)

    Returns ``(D, y)`` or ``(None, None)`` when the LP is infeasible or the solver fails (callers
    report that as solver trouble, never as a verdict)."""
    poly = TaskPolytope(env, mode=mode, placement=True, external=True, bounds=True)
    lp = poly.lp
    if lp.n_cols == 0:  # nobody can run anything: y = 0 is the only allocation
        if any(u > 0 for u in utils):
            return None, None
        return (Fraction(0) if exact else 0.0), poly.matrix([], exact)
    for j in range(env.n_users):
        if utils[j] > 0:
            if not poly.user_vars[j]:
                return None, None
            lp.add_row(poly.total(j), utils[j], None)
    lp.set_cost({c: 1 for c in range(lp.n_cols)})
    lp.maximize = True
    res = solve(lp, exact=exact)
    if not res.ok:
        return None, None
    return res.objective, poly.matrix(res.x, exact)


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
    return _ratio(D, total), D, y


def domination_factor(env: Optional[Environment], alloc: Allocation, mode: str = "rdm",
                      exact: Optional[bool] = None) -> Any:
    """``D(x*) / sum_j u_j`` (seed 004 Sec. 6.2, Fig. 4); 1 iff Pareto optimal (Def. 4)."""
    return domination(env, alloc, mode, exact)[0]


# ---------------------------------------------------------------------- JCT factor
def jct_factor(standalone_jct: Any, jct: Any) -> Any:
    """``standalone JCT / JCT`` (seed 004 Sec. 6.2).  ``0/0 = 1``; an unfinished job (``jct = inf``) is 0."""
    if isinstance(jct, float) and math.isinf(jct):
        return 0.0
    if jct < 0 or standalone_jct < 0:
        raise InstanceError(f"jct: must be >= 0 (got standalone {standalone_jct}, actual {jct})")
    return _ratio(standalone_jct, jct)


def static_jct_factor(env: Optional[Environment], alloc: Allocation, j: int) -> Any:
    """JCT factor of ``j`` if ``alloc`` were held fixed while ``j`` runs its ``n_j`` tasks (fluid model).

    Derivation: with ``x`` tasks running in parallel, each of length ``tau``, ``n`` tasks take
    ``n tau / x``.  With all resources of all servers (standalone) ``j`` runs
    ``u_j(c, c_er) = min(eta_j, n_j)`` tasks in parallel (THE utility of the whole cluster; ``eta_j`` of
    seed eq. (6)).  Hence ``standalone JCT / JCT = u_j(A_j) / u_j(c, c_er)``, in ``[0, 1]``.
    """
    env = _check(env, alloc)
    whole = true_tasks(env, j, equal_split_bundle(env, Fraction(1)))
    r = _ratio(utility(env, alloc, j), whole)
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
        out[name] = _ratio(used, pooled[r]) if pooled[r] else zero
    for k, name in enumerate(aenv.external):
        used = sum((alloc.total(j) * aenv.external_demand[j][k] for j in range(aenv.n_users)), zero)
        cap = aenv.external_capacity[k]
        out[name] = _ratio(used, cap) if cap else zero
    if not exact:
        out = {k: float(v) for k, v in out.items()}
    return out


# ---------------------------------------------------------------------- all at once
@dataclass(frozen=True)
class Metrics:
    si_sat: tuple
    min_si_sat: Any
    ef_sat: tuple
    min_ef_sat: Any
    domination_factor: Any
    static_jct_factor: tuple
    utilization: dict


def all_metrics(env: Optional[Environment], alloc: Allocation, mode: str = "rdm",
                exact: Optional[bool] = None, placement_aware: bool = True) -> Metrics:
    env = _check(env, alloc)
    si = si_sats(env, alloc)
    ef = ef_sats(env, alloc, placement_aware)
    return Metrics(si, min(si), ef, min(ef), domination_factor(env, alloc, mode, exact),
                   tuple(static_jct_factor(env, alloc, j) for j in range(env.n_users)), utilization(env, alloc))
