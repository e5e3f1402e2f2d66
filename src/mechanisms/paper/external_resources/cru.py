"""CRU (seed 004 Sec. 3.1, Thm 1): ``max sum_j X_j / eta_j`` over chi(E) cap chi_EF(E) cap chi_SI(E).

Unweighted (the paper has none).  With reported demands and no placement, Lemma 2 gives
``u_j(bundle_k) = min(rho_jk X_k, n_j)`` (:func:`rho`), so SI and EF for an unbounded user are linear
rows.  EF for a bounded user is the disjunction ``X_j = n_j OR rho_jk X_k <= X_j (all k)``; it is
solved EXACTLY by enumerating the subsets of "branching" users (at most ``MAX_CRU_BRANCH``) and
keeping the best LP.  Tie-break: leximin of ``X_j / eta_j`` on the optimal face, so totals are
unique; ``info["total_range"]`` gives every user's total over ALL optima.  Derivation:
docs/seed004-mechanisms.md, "CRU".
"""
from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any, Optional

from mechverify.allocation import Allocation
from mechverify.farkas import ray_proves_infeasible
from mechverify.lexmaxmin import lex_max_min
from mechverify.lp import LinearProgram, LPError, LPSession
from mechverify.model import Environment
from mechverify.numbers import INF, is_inf
from mechverify.polytope import TaskPolytope
from mechverify.utility import equal_split_bundle, true_tasks

from ..normalisers import etas, finite_normaliser, max_total
from ...core.registry import Setting, SettingError, register
from .setting import welfare_claims
from ...core.z3spec import Z3Spec

__all__ = ["cru", "rho", "MAX_CRU_BRANCH", "CRU_CLAIMS"]

MAX_CRU_BRANCH = 10


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


CRU_CLAIMS = welfare_claims("Thm 1", "App. 9.1")


@register("cru", "CRU: cautious relative utilitarian, max sum_j X_j/eta_j subject to chi(E), EF and SI",
          Setting(placement=False, external=True, bounds=True, weights=False, server_demand=False),
          CRU_CLAIMS, source="004 Sec. 3.1, Thm 1, App. 9.1",
          notes="Bounded tasks: EF is a disjunction, solved exactly by enumeration; tie-break = leximin of "
                "X_j/eta_j on the optimal face; info['total_range'] = totals over all optima.",
          z3=Z3Spec("lp-argmax", requires_unbounded=True,
                    description="one LP: max sum X_j/eta_j with SI and EF rows (primal + dual + strong duality)"))
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
    M = [max_total(env, k) for k in range(J)]
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

    def lp_for(T: frozenset) -> tuple[LinearProgram, list]:
        """The LP of saturated set ``T`` and the key of each of its rows (``("base", i)``, ``("sat", j)``,
        ``("ef", j, k)``: a row of one key is the same row in every ``T`` that has it)."""
        lp = base.copy()
        keys: list = [("base", i) for i in range(base.n_rows)]
        for j in range(J):
            if j in T:
                if env.tasks[j] > 0:
                    lp.add_row(poly.total(j), env.tasks[j], None)  # with the bound row: X_j = n_j
                    keys.append(("sat", j))
                continue
            for k in range(J):
                if k == j or not R[j][k] or not poly.can_run(k):
                    continue
                row = dict(poly.total(k, R[j][k]))
                for _, col in poly.user_vars[j]:
                    row[col] = row.get(col, 0) - 1
                lp.add_row(row, None, 0)  # EF: rho_jk X_k - X_j <= 0
                keys.append(("ef", j, k))
        lp.set_cost(obj)
        lp.maximize = True
        return lp, keys

    candidates = []
    # Farkas certificates of the saturated sets found infeasible, as the keys of the rows they combine: a set
    # whose LP has all of one's rows (the same rows, the same column bounds) is infeasible by the same
    # certificate, with no LP solved (exact mode, where an infeasible LP is skipped only on an exact proof)
    proofs: list[frozenset] = []
    for r in range(len(branch) + 1):
        for sub in itertools.combinations(branch, r):
            T = frozenset(forced) | frozenset(sub)
            if exact and proofs:
                have = _row_keys(T, J, env, R, poly, base.n_rows)
                if any(pf <= have for pf in proofs):
                    continue
            lp, keys = lp_for(T)
            sess = LPSession(lp)
            res = sess.solve(exact=exact)
            if res.status == "infeasible":
                if exact and len(branch) > 1:
                    pf = _farkas_rows(sess, lp, keys)
                    if pf is not None:
                        proofs.append(pf)
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


def _row_keys(T: frozenset, J: int, env: Environment, R: list, poly: TaskPolytope, n_base: int) -> frozenset:
    """The keys of the rows of saturated set ``T``'s LP (as ``lp_for`` in :func:`cru` builds it, without
    building it)."""
    keys = {("base", i) for i in range(n_base)}
    for j in range(J):
        if j in T:
            if env.tasks[j] > 0:
                keys.add(("sat", j))
            continue
        keys.update(("ef", j, k) for k in range(J) if k != j and R[j][k] and poly.can_run(k))
    return frozenset(keys)


def _farkas_rows(sess: LPSession, lp: LinearProgram, keys: list) -> Optional[frozenset]:
    """The keys of the rows of a Farkas certificate of ``lp`` (just found infeasible by ``sess``), or None.

    HiGHS's dual ray, checked exactly (:func:`mechverify.farkas.ray_proves_infeasible`), proves infeasible
    every LP with the rows it puts a multiplier on (the check reads only those rows and the bounds of their
    columns); its rows with a nonzero entry are returned (a superset of what the rationalised ray uses)."""
    if sess.method != "highs":
        return None
    _st, has_ray, ray = sess.h.getDualRay()
    if not has_ray or len(ray) != lp.n_rows or not ray_proves_infeasible(lp, ray):
        return None
    return frozenset(keys[i] for i, v in enumerate(ray) if v)


def _lex_greater(a: list, b: list, exact: bool) -> bool:
    for u, v in zip(a, b):
        if exact:
            if u != v:
                return u > v
        else:
            if abs(float(u) - float(v)) > 1e-9 * max(1.0, abs(float(v))):
                return float(u) > float(v)
    return False
