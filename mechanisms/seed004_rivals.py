"""The rivals of TSF-ER in seed 004 (Meskar & Liang): DRF-ER, DRF-alpha / TSF-alpha, CRU and MNW.

Notation as in ``mechverify/model.py`` and ``mechanisms/tsf_er.py`` (``eta_j`` is seed 004 eq. (6),
``X_j = sum_s x[j,s]``).  Every mechanism here lives on seed 004's domain
(``tsf_er.SEED004_SETTING``: heterogeneous servers, RDM, external resources, task bounds; no
placement constraints, no per-server demands), except where a docstring says otherwise.

DRF-ER (Sec. 3.3, [37]; Sec. 8)
    DRF-alpha with the external split ``alpha`` a decision variable.  Eliminating ``alpha``
    (``sum_s alpha_s <= c_er``, ``sum_j x[j,s] d_er[j] <= alpha_s``) leaves exactly chi(E)'s
    external row, so DRF-ER is Algorithm 1 with (8f) "modified to equalize the active users'
    dominant shares" (Sec. 8, verbatim): score ``x_j * ds_j / w_j`` with the DRF/DRFH dominant share
    per task ``ds_j = max_{r in R^} d[j,r] / C_r`` over pooled capacities ``C_r = sum_s c[s,r]`` and
    the external capacities.  ``info["alpha"]`` reports the split the LP chose
    (``alpha[s][k] = sum_j x[j,s] d_er[j,k] / c_er[k]``; any split with these lower bounds works).

DRF-alpha / TSF-alpha (Sec. 3.3, LP (7), Fig. 2 (b)-(c), Sec. 6.2)
    A FIXED split: server ``s`` may use at most ``alpha[s][k] * c_er[k]`` of external resource ``k``
    (rows ``sum_j x[j,s] d_er[j,k] <= alpha[s][k] c_er[k]`` replace chi(E)'s global external rows;
    ``algorithm1(..., server_external_caps=...)`` adds them as extra rows of the ``TaskPolytope``, or
    of the float path's numpy LP).  DRF-alpha equalises dominant shares (same ``ds_j``
    as DRF-ER); TSF-alpha equalises ``x_j / gamma^alpha_j`` with (7c)'s
    ``gamma^alpha_j = sum_s min{ min_r c[s,r]/d[j,r], min_k alpha[s][k] c_er[k] / d_er[j,k] }``.
    The paper defines both only for unbounded tasks (one LP with the equality rows); with task bounds
    we run the same iteration as Algorithm 1 (saturated users pinned at ``n_j``) -- documented choice.
    How alpha is passed: ``make_alpha_mechanism(kind, alpha_rule)`` where ``alpha_rule(env)`` returns
    per-server shares (``S`` numbers, the same split for every external resource) or an ``S x K``
    matrix; shares must be >= 0 and sum to <= 1 per external resource.  Registered presets
    (Sec. 6.2): ``-eq`` (``1/|S|``), ``-cpu`` (``c[s,cpu] / sum_s c[s,cpu]``), ``-mem`` (likewise for
    memory).  The cpu resource is the one NAMED ``cpu`` (case-insensitive) if the instance has one,
    else resource index 0; memory is the one named ``mem`` or ``memory``, else index 1 (no such
    resource: ``SettingError`` naming ``resources``; total capacity 0: the split is 0/0 and we use
    the equal split -- nobody who demands that resource can run anyway).  There is no
    bare ``drf-alpha`` / ``tsf-alpha`` registration: without a split they are not mechanisms.

CRU (Sec. 3.1, Thm 1)
    ``max sum_j X_j / eta_j`` over ``chi(E) cap chi_EF(E) cap chi_SI(E)`` (unweighted: the paper has no
    weights; the setting rejects them).  With reported demands and no placement, Lemma 2 gives
    ``u_j(bundle_k) = min(rho_jk X_k, n_j)`` with ``rho_jk = min_{r in R^: d[j,r] > 0} d[k,r] / d[j,r]``
    (``inf`` when ``j`` demands nothing at all), and Def. 6 gives ``psi_j = u_j((c, c_er)/|J|)``.
    SI: ``X_j >= psi_j`` (``psi_j`` already capped by ``n_j``) -- linear.  EF for unbounded ``j``:
    ``rho_jk X_k <= X_j`` -- linear (the paper's ``|J|^2 + |S||R| + 1`` inequalities).  EF for a
    bounded ``j`` is the disjunction ``X_j = n_j  OR  rho_jk X_k <= X_j (all k)``: not convex.  We
    solve it EXACTLY by enumerating the subsets ``T`` of "branching" users (bounded users whose cap
    can bind, i.e. ``rho_jk M_k > n_j`` for some ``k`` with ``M_k = min(eta_k, n_k)``): LP_T pins
    ``X_j = n_j`` for ``j in T`` and keeps the EF rows of everybody else; CRU's optimum is the best
    LP_T.  At most ``MAX_CRU_BRANCH`` branching users (else ``SettingError`` naming ``users[].tasks``).
    Tie-break (the optimum can be a face, or several faces): among all optimal points, the leximin of
    the task shares ``X_j / eta_j`` (exact second stage; several optimal ``T``: the lexicographically
    largest sorted level vector, then the first ``T`` in enumeration order).  Totals are then unique.
    ``info["total_range"][j] = [min, max]`` of ``X_j`` over ALL optimal points (exact LPs in exact
    mode), so a verdict can be checked against every allocation CRU's definition allows.

MNW (Sec. 3.2, Thm 2; App. 9.2)
    ``max sum_j w_j log X_j`` over chi(E) (the users that can run nothing are left out; (12c)'s
    per-server ``alpha`` rows in the extraction are a copy-paste of (7) -- Sec. 3.2 and Thm 2 use
    chi(E)).  Not rational in general: see :func:`mnw` for the float solver and the certified bounds.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

import numpy as np

from mechverify.allocation import Allocation
from mechverify.lexmaxmin import lex_max_min
from mechverify.lp import LinearProgram, LPError, LPSession
from mechverify.model import Environment
from mechverify.numbers import InstanceError, to_fraction
from mechverify.polytope import TaskPolytope
from mechverify.utility import equal_split_bundle, true_tasks

from .drf_family import dominant_share_per_task
from .registry import Claim, Setting, SettingError, register
from dataclasses import replace
from .tsf_er import SEED004_SETTING, algorithm1, eta, etas, finite_normaliser, is_inf

__all__ = ["drf_er", "make_alpha_mechanism", "alpha_equal", "alpha_by_resource", "resolve_alpha",
           "cru", "mnw", "rho", "MAX_CRU_BRANCH"]

INF = math.inf
MAX_CRU_BRANCH = 10
_T2 = "004 Table 2"
_UNB = "the theorem assumes n_j = inf for every user"


# ====================================================================== DRF-ER
def dominant_normaliser(env: Environment, j: int) -> Any:
    """``1 / ds_j`` with ``ds_j = max_{r in R^} d[j,r]/C_r`` (pooled, external resources included)."""
    share = dominant_share_per_task(env, j, env.total_capacity(), ext=True)
    if is_inf(share):
        return Fraction(0)
    if share == 0:
        return INF
    return 1 / share


def _alpha_used(env: Environment, alloc: Allocation) -> list:
    out = []
    for s in range(env.n_servers):
        row = []
        for k in range(env.n_external):
            used = sum((alloc.x[j][s] * env.external_demand[j][k] for j in range(env.n_users)),
                       Fraction(0) if alloc.exact else 0.0)
            cap = env.external_capacity[k]
            row.append(used / cap if cap else (Fraction(0) if alloc.exact else 0.0))
        out.append(row)
    return out


DRF_ER_CLAIMS = (
    Claim("ef", "holds", f"{_T2} ([37])", variant="literal"),
    Claim("po", "holds", f"{_T2} ([37])", variant="fractional"),
    Claim("sp", "holds", f"{_T2} ([37])", variant="demand"),
    Claim("si", "fails", f"{_T2} ([37]); Sec. 6.2 Fig. 3", variant="external"),
)


@register("drf-er", "DRF-ER: equalised dominant shares, external split chosen by the LP (Algorithm 1 with DRF shares)",
          SEED004_SETTING, DRF_ER_CLAIMS, source="004 Sec. 3.3 and Sec. 8 ([37])",
          notes="alpha as a decision variable = chi(E)'s external row; info['alpha'] is the split used.")
def drf_er(env: Environment, exact: bool = False) -> Allocation:
    norms = [dominant_normaliser(env, j) for j in range(env.n_users)]
    a = algorithm1(env, "drf-er", exact, norms)
    a.info["alpha"] = _alpha_used(env, a)
    return a


# ====================================================================== DRF-alpha / TSF-alpha
AlphaRule = Callable[[Environment], Sequence[Any]]


def alpha_equal(env: Environment) -> list:
    """``alpha_s = 1/|S|`` (DRF-eq / TSF-eq)."""
    return [Fraction(1, env.n_servers)] * env.n_servers


def _find_resource(env: Environment, names: Sequence[str], default_index: int, label: str, mech: str) -> int:
    low = [r.lower() for r in env.resources]
    for n in names:
        if n in low:
            return low.index(n)
    if default_index < env.n_resources:
        return default_index
    raise SettingError(f"resources: {mech} needs a {label} resource (named {' or '.join(map(repr, names))} "
                       f"or at index {default_index}); got {list(env.resources)}")


def alpha_by_resource(which: str) -> AlphaRule:
    """``alpha_s = c[s,r] / sum_s c[s,r]`` for ``r`` = cpu (``which='cpu'``) or memory (``'mem'``)."""
    if which not in ("cpu", "mem"):
        raise ValueError(f"which: expected 'cpu' or 'mem', got {which!r}")
    names, idx = (("cpu",), 0) if which == "cpu" else (("mem", "memory"), 1)

    def rule(env: Environment) -> list:
        r = _find_resource(env, names, idx, which, f"alpha split by {which}")
        total = sum((env.capacity[s][r] for s in range(env.n_servers)), Fraction(0))
        if total == 0:  # the proportional split is 0/0: nobody demanding r runs anyway; split equally
            return alpha_equal(env)
        return [env.capacity[s][r] / total for s in range(env.n_servers)]

    rule.__name__ = f"alpha_{which}"
    return rule


def resolve_alpha(env: Environment, alpha: Any) -> list[list[Fraction]]:
    """Validate a split: ``alpha[s]`` a number (all external resources) or ``K`` numbers; returns S x K."""
    raw = alpha(env) if callable(alpha) else alpha
    S, K = env.n_servers, env.n_external
    if not isinstance(raw, (list, tuple)) or len(raw) != S:
        raise InstanceError(f"alpha: expected {S} per-server shares (one per server), got {raw!r}")
    out: list[list[Fraction]] = []
    for s, a in enumerate(raw):
        if isinstance(a, (list, tuple)):
            if len(a) != K:
                raise InstanceError(f"alpha[{s}]: expected {K} shares (one per external resource), got {a!r}")
            row = [to_fraction(v, f"alpha[{s}][{k}]") for k, v in enumerate(a)]
        else:
            row = [to_fraction(a, f"alpha[{s}]")] * K
        for k, v in enumerate(row):
            if v < 0:
                raise InstanceError(f"alpha[{s}][{k}]: must be >= 0 (got {v})")
        out.append(row)
    for k in range(K):
        tot = sum((out[s][k] for s in range(S)), Fraction(0))
        if tot > 1:
            raise InstanceError(f"alpha: shares of external resource {env.external[k]!r} sum to {tot} > 1")
    return out


def tsf_alpha_normaliser(env: Environment, j: int, alpha: list[list[Fraction]]) -> Any:
    """(7c): ``sum_s min{ min_r c[s,r]/d[j,r], min_k alpha[s][k] c_er[k] / d_er[j,k] }``."""
    total: Any = Fraction(0)
    for s in range(env.n_servers):
        m = env.monopoly_tasks(j, s)
        for k, dk in enumerate(env.external_demand[j]):
            if dk > 0:
                q = alpha[s][k] * env.external_capacity[k] / dk
                if q < m:
                    m = q
        if is_inf(m):
            return INF
        total += m
    return total


def make_alpha_mechanism(kind: str, alpha_rule: Any, name: Optional[str] = None) -> Callable[..., Allocation]:
    """DRF-alpha (``kind='drf'``) or TSF-alpha (``kind='tsf'``) with the split ``alpha_rule``.

    ``alpha_rule`` is ``env -> shares`` or a fixed list (see :func:`resolve_alpha`).  The returned
    function has the mechanism signature ``f(env, exact=False) -> Allocation``."""
    if kind not in ("drf", "tsf"):
        raise ValueError(f"kind: expected 'drf' or 'tsf', got {kind!r}")
    label = name or f"{kind}-alpha"

    def mechanism(env: Environment, exact: bool = False) -> Allocation:
        alpha = resolve_alpha(env, alpha_rule)
        if kind == "drf":
            norms = [dominant_normaliser(env, j) for j in range(env.n_users)]
        else:
            norms = [tsf_alpha_normaliser(env, j, alpha) for j in range(env.n_users)]
        caps = [[alpha[s][k] * env.external_capacity[k] for k in range(env.n_external)]
                for s in range(env.n_servers)]
        return algorithm1(env, label, exact, norms, external=False, server_external_caps=caps,
                          info={"alpha": alpha})

    mechanism.__name__ = label.replace("-", "_")
    split = getattr(alpha_rule, "__name__", alpha_rule)
    mechanism.__doc__ = f"{kind.upper()}-alpha (seed 004 Sec. 3.3) with external split {split}."
    return mechanism


def _alpha_claims(kind: str) -> tuple:
    thm = "Thm 3" if kind == "drf" else "Thm 4"
    return (
        Claim("ef", "holds", _T2, variant="literal"),
        Claim("po", "fails", f"{_T2} / {thm}", variant="fractional"),
        Claim("sp", "holds", _T2, variant="demand"),
        Claim("si", "fails", f"{_T2} / {thm}", variant="external"),
    )


_PRESETS = {"eq": (alpha_equal, "alpha_s = 1/|S| (external resource reserved equally)"),
            "cpu": (alpha_by_resource("cpu"), "alpha_s proportional to the servers' cpu (resource 'cpu' or index 0)"),
            "mem": (alpha_by_resource("mem"), "alpha_s proportional to the servers' memory (resource 'mem'/'memory' "
                                              "or index 1)")}
for _kind, _title, _src in (("drf", "DRF-alpha: equalised dominant shares with a fixed external split",
                             "004 Sec. 3.3 (DRF-alpha), Sec. 6.2, Fig. 2(b)"),
                            ("tsf", "TSF-alpha: LP (7), equalised x_j/gamma^alpha_j with a fixed external split",
                             "004 Sec. 3.3 LP (7), Sec. 6.2, Fig. 2(c)")):
    for _p, (_rule, _what) in _PRESETS.items():
        _name = f"{_kind}-{_p}"
        _setting = replace(SEED004_SETTING, min_resources=2) if _p == "mem" else SEED004_SETTING
        register(_name, f"{_title}: {_what}", _setting, _alpha_claims(_kind), source=_src,
                 notes="Build other splits with mechanisms.seed004_rivals.make_alpha_mechanism(kind, alpha_rule).")(
            make_alpha_mechanism(_kind, _rule, _name))


# ====================================================================== CRU
def rho(env: Environment, j: int, k: int) -> Any:
    """``u_j(bundle_k) = min(rho_jk X_k, n_j)`` (Lemma 2, no placement, no per-server demands)."""
    best: Any = INF
    for dj, dk in zip(env.demand[j], env.demand[k]):
        if dj > 0 and dk / dj < best:
            best = dk / dj
    for dj, dk in zip(env.external_demand[j], env.external_demand[k]):
        if dj > 0 and dk / dj < best:
            best = dk / dj
    return best


def _max_total(env: Environment, j: int) -> Any:
    e = eta(env, j)
    if env.tasks[j] is not None and (is_inf(e) or env.tasks[j] < e):
        return env.tasks[j]
    return e


CRU_CLAIMS = (
    Claim("ef", "holds", f"{_T2} / Thm 1", variant="literal", note=_UNB, domain=("unbounded",)),
    Claim("po", "holds", f"{_T2} / Thm 1", variant="fractional", note=_UNB, domain=("unbounded",)),
    Claim("sp", "fails", f"{_T2} / Thm 1, App. 9.1", variant="demand"),
    Claim("si", "holds", f"{_T2} / Thm 1", variant="external", note=_UNB, domain=("unbounded",)),
)


def _leq(a: Any, b: Any, exact: bool, tol: float = 1e-9) -> bool:
    return a <= b if exact else float(a) <= float(b) + tol * max(1.0, abs(float(b)))


@register("cru", "CRU: cautious relative utilitarian, max sum_j X_j/eta_j subject to chi(E), EF and SI",
          Setting(placement=False, external=True, bounds=True, weights=False, server_demand=False),
          CRU_CLAIMS, source="004 Sec. 3.1, Thm 1, App. 9.1",
          notes="Bounded tasks: EF is a disjunction, solved exactly by enumeration; tie-break = leximin of "
                "X_j/eta_j on the optimal face; info['total_range'] = totals over all optima.")
def cru(env: Environment, exact: bool = False) -> Allocation:
    """See the module docstring (CRU)."""
    J = env.n_users
    e = etas(env)
    poly = TaskPolytope(env, mode="rdm", placement=True, external=True, bounds=True)
    norms = [finite_normaliser(env, e[j], j) for j in range(J)]
    part = [j for j in range(J) if norms[j] is not None and poly.can_run(j)]
    share = Fraction(1, J)
    psi = [true_tasks(env, j, equal_split_bundle(env, share)) for j in range(J)]
    R = [[rho(env, j, k) if k != j else None for k in range(J)] for j in range(J)]
    M = [_max_total(env, k) for k in range(J)]
    forced: list[int] = []
    branch: list[int] = []
    for j in range(J):
        nj = env.tasks[j]
        if nj is None:
            continue
        if any(is_inf(R[j][k]) for k in range(J) if k != j) or nj == 0:
            forced.append(j)
        elif any(R[j][k] > 0 and (is_inf(M[k]) or R[j][k] * M[k] > nj) for k in range(J) if k != j):
            branch.append(j)
    if len(branch) > MAX_CRU_BRANCH:
        raise SettingError(f"users[].tasks: cru solves EF with task bounds by enumeration and handles at most "
                           f"{MAX_CRU_BRANCH} users whose bound can bind; got {len(branch)}")
    base = poly.lp
    if base.n_cols == 0:  # nobody can run anything: the zero allocation is the only one
        zero = Fraction(0) if exact else 0.0
        zr = (zero, zero)
        return poly.allocation([], exact, "cru", {"objective": zero, "eta": e, "psi": psi, "saturated_set": [],
                                                  "total_range": [zr] * J, "unique_totals": True})
    obj = {}
    for j in part:
        for _, col in poly.user_vars[j]:
            obj[col] = 1 / norms[j]
    for j in range(J):  # SI (Def. 6, psi_j capped by n_j)
        if psi[j] > 0:
            base.add_row(poly.total(j), psi[j], None)

    def lp_for(T: frozenset) -> LinearProgram:
        lp = base.copy()
        for j in range(J):
            if j in T:
                if env.tasks[j] > 0:
                    lp.add_row(poly.total(j), env.tasks[j], None)  # with the bound row: X_j = n_j
                continue
            for k in range(J):
                if k == j or not R[j][k] or not poly.can_run(k):
                    continue
                row = dict(poly.total(k, R[j][k]))
                for _, col in poly.user_vars[j]:
                    row[col] = row.get(col, 0) - 1
                lp.add_row(row, None, 0)  # EF: rho_jk X_k - X_j <= 0
        lp.set_cost(obj)
        lp.maximize = True
        return lp

    candidates = []
    for r in range(len(branch) + 1):
        for sub in itertools.combinations(branch, r):
            T = frozenset(forced) | frozenset(sub)
            lp = lp_for(T)
            res = LPSession(lp).solve(exact=exact)
            if res.status == "infeasible":
                continue
            if not res.ok:
                raise LPError(f"cru: LP for saturated set {sorted(T)}: {res.status} {res.reason}".strip())
            candidates.append((T, lp, res.objective))
    if not candidates:
        raise LPError("cru: no feasible EF/SI allocation found (the equal split should be one)")
    best = max(c[2] for c in candidates)
    optimal = [c for c in candidates
               if (c[2] == best if exact else float(c[2]) >= float(best) - 1e-9 * max(1.0, abs(float(best))))]
    scores = [poly.total(j, 1 / norms[j]) if j in part else {} for j in range(J)]
    chosen = None
    ranges: list = [None] * J
    for T, lp, _ in optimal:
        face = lp.copy()
        lo = best if exact else float(best) - 1e-9 * max(1.0, abs(float(best)))
        face.add_row(obj, lo, None)
        lex = lex_max_min(face, scores, exact=exact)
        key = sorted((v for j, v in enumerate(lex.levels) if j in part))
        if chosen is None or _lex_greater(key, chosen[0], exact):
            chosen = (key, lex, T)
        sess = LPSession(face.copy())
        for j in range(J):
            cols = {col: 1 for _, col in poly.user_vars[j]}
            if not cols:
                vals = (Fraction(0), Fraction(0)) if exact else (0.0, 0.0)
            else:
                v = []
                for maximize in (False, True):
                    sess.set_cost(cols, maximize=maximize)
                    r = sess.solve(exact=exact)
                    if not r.ok:
                        raise LPError(f"cru: total_range LP for user {env.users[j]}: {r.status} {r.reason}".strip())
                    v.append(r.objective)
                vals = (v[0], v[1])
            if ranges[j] is None:
                ranges[j] = list(vals)
            else:
                ranges[j] = [min(ranges[j][0], vals[0]), max(ranges[j][1], vals[1])]
    key, lex, T = chosen
    info = {"objective": best, "eta": e, "psi": psi, "saturated_set": sorted(T), "branching_users": branch,
            "optimal_sets": [sorted(c[0]) for c in optimal], "levels": lex.levels,
            "total_range": [tuple(r) for r in ranges], "tie_break": "leximin of X_j/eta_j over the optimal face",
            "unique_totals": True}
    return poly.allocation(lex.x, exact, "cru", info)


def _lex_greater(a: list, b: list, exact: bool) -> bool:
    for u, v in zip(a, b):
        if exact:
            if u != v:
                return u > v
        else:
            if abs(float(u) - float(v)) > 1e-9 * max(1.0, abs(float(v))):
                return float(u) > float(v)
    return False


# ====================================================================== MNW
MNW_CLAIMS = (
    Claim("ef", "holds", f"{_T2} / Thm 2", variant="literal", note=_UNB, domain=("unbounded",)),
    Claim("po", "holds", f"{_T2} / Thm 2", variant="fractional", note=_UNB, domain=("unbounded",)),
    Claim("sp", "fails", f"{_T2} / Thm 2, App. 9.2", variant="demand"),
    Claim("si", "holds", f"{_T2} / Thm 2", variant="external", note=_UNB, domain=("unbounded",)),
)


@register("mnw", "MNW: maximum Nash welfare, max sum_j w_j log X_j over chi(E) (float, certified bounds)",
          Setting(placement=False, external=True, bounds=True, weights=True, server_demand=False, exact=False),
          MNW_CLAIMS, source="004 Sec. 3.2, Thm 2, App. 9.2",
          notes="Irrational in general: float allocation with info['bounds'] (certified intervals for every "
                "user's optimal total); exact only when a rational optimum is certified (exact mode).")
def mnw(env: Environment, exact: bool = False) -> Allocation:
    """Maximum Nash welfare ``max sum_{j in P} w_j log X_j`` over chi(E).

    ``P`` are the users that can run something (a variable exists and no row with capacity 0 pins it
    to 0); the others get 0 and are left out of the objective.  ``X*`` is unique (strictly concave in
    the totals); the split over servers need not be.

    **Solver.** A primal-dual interior-point method (Mehrotra predictor-corrector, dense Newton
    systems in numpy) on ``max sum_j w_j log X_j  s.t.  Ax + s = b,  x, s >= 0`` (``A, b`` = chi(E)'s
    packing rows); if its certificate (below) is weaker than ``1e-11 sum_j w_j``, a primal log-barrier
    method is run as well and the better certificate kept.  The solvers only PROPOSE ``(x, p)``; the
    bounds below are rigorous whatever they return.

    **Certified bounds (derivation).**  Let ``x^`` be the solver's point, made exactly feasible in
    rationals (negatives clipped, scaled by ``theta = min(1, min_i b_i / A_i x^)``; every row is a
    packing row), with totals ``X^``; let ``p >= 0`` be rational row prices (the interior-point duals,
    or the duals of the linearisation LP ``max sum_j (w_j/X^_j) X_j`` over chi(E), whichever certifies
    the smaller gap).  Weak Lagrangian duality:
    for every feasible ``x``,
    ``sum_j w_j log X_j <= p.b + sum_j sup_{X>0} (w_j log X - pi_j X) = p.b + sum_j (w_j log(w_j/pi_j) - w_j) =: G(p)``
    with ``pi_j = min_s (A^T p)_{(j,s)}`` (the cheapest price of one task of ``j``; ``G = inf`` if some
    ``pi_j = 0``).  So ``F(X^) <= F(X*) <= G(p)`` and ``gap := G(p) - F(X^) >= F(X*) - F(X^)``.
    Strong concavity: ``log`` satisfies ``log b <= log a + (b - a)/a - (b - a)^2 / (2 max(a,b)^2)``;
    summing at ``a = X*_j``, ``b = X^_j`` and using first-order optimality of ``X*`` over the convex
    set of feasible totals (``grad F(X*).(X^ - X*) <= 0``) gives
    ``sum_j w_j D_j^2 / (2 max(X^_j, X*_j)^2) <= F(X*) - F(X^) <= gap`` with ``D_j = |X^_j - X*_j|``.
    Each term alone is ``<= gap`` and ``max <= X^_j + D_j``, so ``D_j / (X^_j + D_j) <= eps_j :=
    sqrt(2 gap / w_j)``, i.e. ``D_j <= eps_j X^_j / (1 - eps_j)`` when ``eps_j < 1`` (else we only claim
    ``0 <= X*_j <= min(eta_j, n_j)``).  ``G(p)``, ``F(X^)`` and ``sqrt`` are evaluated in ball
    arithmetic (python-flint ``arb``, rigorous), everything else in ``Fraction``; the interval ends are
    rounded outward to multiples of ``2^-64``.  ``info["bounds"]`` (= ``info["total_bounds"]``, the key
    ``verifier/exact.py`` reads) holds ``[lo_j, hi_j]`` containing ``X*_j``; ``info["objective_bounds"]``
    holds ``[F(X^), G(p)]`` containing the optimal value.

    **Exact mode.**  A rational candidate ``v`` (the vertex maximising the linearisation at ``X^``, then
    ``X^`` rounded to small denominators) is certified optimal EXACTLY, without logarithms: ``v`` is
    feasible and ``max { sum_j (w_j / v_j) X_j : x in chi(E) } = sum_j w_j`` (exact LP) -- the
    first-order optimality condition of a concave objective over a polytope, which is sufficient.
    Then the allocation is returned with ``exact=True`` (and degenerate bounds ``[v_j, v_j]``).
    Otherwise exact mode returns the float allocation with its certified bounds.
    """
    poly = TaskPolytope(env, mode="rdm", placement=True, external=True, bounds=True)
    lp = poly.lp
    J = env.n_users
    # columns pinned to 0 by a zero-capacity packing row
    dead = set()
    for i, row in enumerate(lp.rows):
        if lp.row_upper[i] == 0:
            dead.update(row)
    cols_of = {j: [col for _, col in poly.user_vars[j] if col not in dead] for j in range(J)}
    part = [j for j in range(J) if cols_of[j]]
    zero_alloc = all(not cols_of[j] for j in range(J))
    w = [env.weight[j] for j in range(J)]
    info: dict = {"participants": [env.users[j] for j in part]}
    if zero_alloc:
        info.update({"exactness": "nobody can run anything: the zero allocation", "bounds": [(Fraction(0),) * 2] * J,
                     "total_bounds": [(Fraction(0),) * 2] * J, "unique_totals": True})
        zero = Fraction(0) if exact else 0.0
        return poly.allocation([zero] * lp.n_cols, exact, "mnw", info)
    cols = sorted(c for j in part for c in cols_of[j])
    cidx = {c: i for i, c in enumerate(cols)}
    rows = [i for i, row in enumerate(lp.rows) if lp.row_upper[i] != 0 and any(c in cidx for c in row)]
    m, n = len(rows), len(cols)
    A = np.zeros((m, n))
    for a, i in enumerate(rows):
        for c, v in lp.rows[i].items():
            if c in cidx:
                A[a, cidx[c]] = float(v)
    b = np.array([float(lp.row_upper[i]) for i in rows])
    U = np.zeros((len(part), n))
    for u, j in enumerate(part):
        for c in cols_of[j]:
            U[u, cidx[c]] = 1.0
    wf = np.array([float(w[j]) for j in part])
    best = None
    for solver in (_ipm, _barrier):
        xf, pf = solver(A, b, U, wf)
        cert, xq = _certified_point(env, lp, rows, cidx, cols_of, part, w, xf, pf)
        if best is None or (cert["gap"] is not None and (best[0]["gap"] is None or cert["gap"] < best[0]["gap"])):
            best = (cert, xq)
        if cert["gap"] is not None and cert["gap"] <= Fraction(1, 10 ** 11) * max(1, sum(w[j] for j in part)):
            break  # good enough: the primal-dual method is ~5x faster; the barrier is the fallback
    cert, xq = best
    Xq = {j: sum((xq[cidx[c]] for c in cols_of[j]), Fraction(0)) for j in part}
    full = [Fraction(0)] * lp.n_cols
    for c in cols:
        full[c] = xq[cidx[c]]
    info.update(cert)
    info["unique_totals"] = True
    if exact:
        ex = _exact_candidate(env, poly, part, w, Xq)
        if ex is not None:
            x_exact, v = ex
            info.update({"exactness": "exact: the rational candidate satisfies the first-order optimality "
                                      "condition exactly (max of the linearisation over chi(E) equals sum_j w_j)",
                         "bounds": [(v[j], v[j]) if j in v else (Fraction(0), Fraction(0)) for j in range(J)],
                         "total_bounds": [(v[j], v[j]) if j in v else (Fraction(0), Fraction(0)) for j in range(J)]})
            return poly.allocation(x_exact, True, "mnw", info)
    info.setdefault("exactness", "float approximation of an in general irrational optimum; info['bounds'] are "
                                 "certified intervals for every user's optimal total (Lagrangian duality gap "
                                 "evaluated rigorously + strong concavity of log)")
    fl = [float(v) for v in full]
    top = max(fl) if fl else 0.0
    fl = [0.0 if v < 1e-12 * top else v for v in fl]  # solver dust (lowering x keeps it feasible)
    return poly.allocation(fl, False, "mnw", info)


def _certified_point(env, lp, rows, cidx, cols_of, part, w, xf, pf) -> tuple[dict, list]:
    """Exactly feasible rational point from the solver's ``xf`` and the best certificate for it."""
    xq = [max(Fraction(float(v)), Fraction(0)) for v in xf]
    theta = Fraction(1)
    for a, i in enumerate(rows):
        act = sum((v * xq[cidx[c]] for c, v in lp.rows[i].items() if c in cidx), Fraction(0))
        if act > lp.row_upper[i]:
            theta = min(theta, lp.row_upper[i] / act)
    xq = [v * theta for v in xq]
    Xq = {j: sum((xq[cidx[c]] for c in cols_of[j]), Fraction(0)) for j in part}
    # prices: the barrier's mu/slack, and the duals of the linearisation LP at X^ (its value minus
    # sum_j w_j is the Frank-Wolfe gap, an upper bound on G(p) - F(X^)); keep the better certificate
    price_sets = [[max(Fraction(float(v)), Fraction(0)) for v in pf]]
    if all(Xq[j] > 0 for j in part):
        lin = lp.copy()
        lin.set_cost({c: w[j] / Xq[j] for j in part for c in cols_of[j]})
        lin.maximize = True
        rl = LPSession(lin).solve(exact=False)
        if rl.ok and rl.row_dual is not None:
            price_sets.append([max(Fraction(float(rl.row_dual[i])), Fraction(0)) for i in rows])
    cert = None
    for pq in price_sets:
        c = _certify(env, lp, rows, cidx, cols_of, part, w, Xq, pq)
        if cert is None or (c["gap"] is not None and (cert["gap"] is None or c["gap"] < cert["gap"])):
            cert = c
    return cert, xq


def _step_to_boundary(v: np.ndarray, dv: np.ndarray) -> float:
    """Largest ``a <= 1`` with ``v + a dv >= 0``."""
    neg = dv < 0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if np.any(neg) else 1.0


def _ipm(A: np.ndarray, b: np.ndarray, U: np.ndarray, w: np.ndarray,
         max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Primal-dual interior point (Mehrotra predictor-corrector) for
    ``max sum_j w_j log (Ux)_j  s.t.  Ax + s = b,  x, s >= 0``; returns ``(x, y)`` (``y`` = row prices).

    KKT with ``mu -> 0``: ``A^T y - z = grad``, ``Ax + s = b``, ``x z = mu``, ``s y = mu``.  Newton on it,
    eliminating ``dz``, ``ds`` and ``dy``, gives ``(Q + Z/X + A^T (Y/S) A) dx = rhs`` with
    ``Q = U^T diag(w/X^2) U`` (minus the Hessian of the objective).  That matrix gets a tiny proximal
    term (``1e-14 tr/n``): with a degenerate optimal face (non-unique split over servers) it is
    otherwise singular.  Steps stay strictly interior (0.99 of the way to the boundary)."""
    m, n = A.shape
    loads = A.sum(axis=1)
    with np.errstate(divide="ignore"):
        delta = 0.5 * np.min(np.where(loads > 0, b / np.where(loads > 0, loads, 1), np.inf))
    if not np.isfinite(delta):
        raise LPError("mnw: a user's total is unbounded (no row limits its tasks)")
    x = np.full(n, delta)
    s = b - A @ x
    sw = float(w.sum())
    mu = sw / (m + n)
    y, z = mu / s, mu / x
    tol = 1e-15 * max(1.0, sw)
    for _ in range(max_iter):
        X = U @ x
        grad = U.T @ (w / X)
        r_d = -grad + A.T @ y - z
        r_p = A @ x + s - b
        mu = (x @ z + s @ y) / (n + m)
        if mu < tol and np.abs(r_d).max() < 1e-9 * max(1.0, np.abs(grad).max()):
            break
        M = (U.T * (w / X ** 2)) @ U + np.diag(z / x) + (A.T * (y / s)) @ A
        M[np.diag_indices(n)] += 1e-14 * np.trace(M) / n

        def direction(target_mu, corr_xz=0.0, corr_sy=0.0):
            r_xz = x * z - target_mu + corr_xz
            r_sy = s * y - target_mu + corr_sy
            rhs = -r_d - r_xz / x - A.T @ ((y / s) * (r_p - r_sy / y))
            dx = np.linalg.solve(M, rhs)
            dy = (y / s) * (A @ dx + r_p - r_sy / y)
            return dx, dy, -(r_sy + s * dy) / y, -(r_xz + z * dx) / x

        try:
            dx, dy, ds, dz = direction(0.0)  # predictor (affine scaling)
            a = min(_step_to_boundary(x, dx), _step_to_boundary(s, ds), _step_to_boundary(y, dy),
                    _step_to_boundary(z, dz))
            mu_aff = ((x + a * dx) @ (z + a * dz) + (s + a * ds) @ (y + a * dy)) / (n + m)
            sigma = min(1.0, (mu_aff / mu) ** 3)
            dx, dy, ds, dz = direction(sigma * mu, dx * dz, ds * dy)  # corrector
        except np.linalg.LinAlgError:
            break
        a = 0.99 * min(_step_to_boundary(x, dx), _step_to_boundary(s, ds), _step_to_boundary(y, dy),
                       _step_to_boundary(z, dz))
        x, s, y, z = x + a * dx, s + a * ds, y + a * dy, z + a * dz
    return x, y


def _barrier(A: np.ndarray, b: np.ndarray, U: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Primal log-barrier Newton method; returns ``(x, p)`` with ``p_i = mu / slack_i``."""
    m, n = A.shape
    # strictly interior start: every column at the same delta
    loads = A.sum(axis=1)
    with np.errstate(divide="ignore"):
        delta = 0.5 * np.min(np.where(loads > 0, b / np.where(loads > 0, loads, 1), np.inf))
    if not np.isfinite(delta):
        raise LPError("mnw: a user's total is unbounded (no row limits its tasks)")
    x = np.full(n, delta)
    sw = float(w.sum())
    mu = sw / (m + n)
    mu_end = 1e-14 * sw / (m + n)

    def phi(xv, muv):
        s = b - A @ xv
        if np.any(s <= 0) or np.any(xv <= 0):
            return -np.inf
        X = U @ xv
        return float(w @ np.log(X) + muv * (np.log(s).sum() + np.log(xv).sum()))

    for _ in range(200):
        for _it in range(100):
            s = b - A @ x
            X = U @ x
            grad = U.T @ (w / X) - mu * (A.T @ (1 / s)) + mu / x
            H = (U.T * (w / X ** 2)) @ U + (A.T * (mu / s ** 2)) @ A + np.diag(mu / x ** 2)  # = -Hessian
            try:
                dx = np.linalg.solve(H, grad)
            except np.linalg.LinAlgError:
                dx = np.linalg.lstsq(H, grad, rcond=None)[0]
            dec = float(grad @ dx)
            if dec < 1e-20 * max(1.0, sw):
                break
            t = 1.0
            neg = dx < 0
            if np.any(neg):
                t = min(t, 0.99 * float(np.min(-x[neg] / dx[neg])))
            Adx = A @ dx
            pos = Adx > 0
            if np.any(pos):
                t = min(t, 0.99 * float(np.min(s[pos] / Adx[pos])))
            f0 = phi(x, mu)
            while t > 1e-14 and phi(x + t * dx, mu) < f0 + 0.25 * t * dec:
                t *= 0.5
            if t <= 1e-14:
                break
            x = x + t * dx
            if dec < 1e-12 * max(1.0, sw):
                break
        if mu <= mu_end:
            break
        mu = max(mu * 0.1, mu_end)
    s = b - A @ x
    p = mu / s
    return x, p


def _arb_bounds(v) -> tuple[Fraction, Fraction]:
    mid = v.mid().man_exp()
    rad = v.rad().man_exp()
    fm = Fraction(int(mid[0])) * (Fraction(2) ** int(mid[1]))
    fr = Fraction(int(rad[0])) * (Fraction(2) ** int(rad[1]))
    return fm - fr, fm + fr


def _arb(q: Fraction):
    from flint import arb, fmpq
    return arb(fmpq(q.numerator, q.denominator))


_GRID = Fraction(1, 2 ** 64)


def _down(q: Fraction) -> Fraction:
    return Fraction(math.floor(q / _GRID)) * _GRID


def _up(q: Fraction) -> Fraction:
    return Fraction(math.ceil(q / _GRID)) * _GRID


def _certify(env, lp, rows, cidx, cols_of, part, w, Xq, pq) -> dict:
    """Rigorous objective and total bounds (see :func:`mnw`)."""
    from flint import ctx

    old = ctx.prec
    ctx.prec = 200
    try:
        J = env.n_users
        a_col: dict[int, Fraction] = {}
        pb = Fraction(0)
        for a, i in enumerate(rows):
            if not pq[a]:
                continue
            pb += pq[a] * lp.row_upper[i]
            for c, v in lp.rows[i].items():
                if c in cidx:
                    a_col[c] = a_col.get(c, Fraction(0)) + pq[a] * v
        bounds: list = [(Fraction(0), Fraction(0))] * J
        caps = {}
        for j in part:
            e = eta(env, j)
            cap = env.tasks[j] if env.tasks[j] is not None and (is_inf(e) or env.tasks[j] < e) else e
            caps[j] = cap
        F = _arb(Fraction(0))
        ok_x = all(Xq[j] > 0 for j in part)
        if ok_x:
            for j in part:
                F = F + _arb(w[j]) * _arb(Xq[j]).log()
        pis = {j: min(a_col.get(c, Fraction(0)) for c in cols_of[j]) for j in part}
        ok_p = all(pis[j] > 0 for j in part)
        if ok_p:
            G = _arb(pb)
            for j in part:
                G = G + _arb(w[j]) * ((_arb(w[j] / pis[j])).log() - 1)
        if not (ok_x and ok_p):
            for j in part:
                hi = caps[j] if not is_inf(caps[j]) else None
                bounds[j] = (Fraction(0), hi)
            return {"bounds": bounds, "total_bounds": bounds if all(b[1] is not None for b in bounds) else None,
                    "objective_bounds": None, "gap": None}
        f_lo, _ = _arb_bounds(F)
        _, g_hi = _arb_bounds(G)
        gap = max(g_hi - f_lo, Fraction(0))
        for j in part:
            eps_hi = _arb_bounds((_arb(2 * gap / w[j])).sqrt())[1]
            cap = caps[j]
            if eps_hi < 1:
                D = eps_hi * Xq[j] / (1 - eps_hi)
                lo, hi = max(Fraction(0), _down(Xq[j] - D)), _up(Xq[j] + D)
            else:
                lo, hi = Fraction(0), None
            if not is_inf(cap) and (hi is None or hi > cap):
                hi = Fraction(cap)
            bounds[j] = (lo, hi)
        return {"bounds": bounds, "total_bounds": bounds, "objective_bounds": (_down(f_lo), _up(g_hi)),
                "gap": _up(gap)}
    finally:
        ctx.prec = old


def _exact_candidate(env, poly, part, w, Xq) -> Optional[tuple[list, dict]]:
    """Try rational candidates ``v`` for ``X*``; return ``(x column values, {j: v_j})`` if one is certified."""
    tried = []
    if any(Xq[j] <= 0 for j in part):
        return None
    # (a) the vertex maximising the linearisation at X^
    lin = poly.lp.copy()
    lin.set_cost({col: w[j] / Xq[j] for j in part for _, col in poly.user_vars[j]})
    lin.maximize = True
    r = LPSession(lin).solve(exact=True)
    if r.ok:
        v = {j: sum((r.x[col] for _, col in poly.user_vars[j]), Fraction(0)) for j in part}
        tried.append((v, r.x))
    # (b) X^ rounded to small denominators
    for den in (10 ** 2, 10 ** 4, 10 ** 6, 10 ** 9):
        v = {j: Xq[j].limit_denominator(den) for j in part}
        if any(tv == v for tv, _ in tried):
            continue
        fe = poly.lp.copy()
        for j in part:
            fe.add_row(poly.total(j), v[j], v[j])
        fe.set_cost({})
        rr = LPSession(fe).solve(exact=True)
        if rr.ok:
            tried.append((v, rr.x))
    for v, x in tried:
        if any(v[j] <= 0 for j in part):
            continue
        chk = poly.lp.copy()
        chk.set_cost({col: w[j] / v[j] for j in part for _, col in poly.user_vars[j]})
        chk.maximize = True
        rc = LPSession(chk).solve(exact=True)
        if rc.ok and rc.objective == sum((w[j] for j in part), Fraction(0)):
            return list(x[:poly.lp.n_cols]), v
    return None
