"""TSF-ER: Task Share Fairness with External Resource (seed 004, Meskar & Liang, Sec. 4 and Sec. 8).

Notation as in ``mechverify/model.py``.  Seed 004 normalises every aggregate capacity to one
(``sum_s c[s,r] = 1``, ``c_er = 1``); we keep raw capacities, which is the same up to scaling.

Monopoly count, seed 004 eq. (6) (the PDF extraction mangles it; reconstructed from the prose "the
maximum number of tasks that user j can execute by monopolizing the resources" and checked on Fig. 2,
where it gives ``eta = (6, 15/2)``)::

    eta_j = min{ sum_s min_{r: d[j,r] > 0} c[s,r] / d[j,r] ,  min_{k: d_er[j,k] > 0} c_er[k] / d_er[j,k] }

Several external resources (Sec. 8: "adding more constraints regarding the other external resources")
give the inner ``min_k``; ``eta_j`` is not bounded by ``n_j`` (Table 1).  Weights (Sec. 8): a user's
task share is ``x_j / (w_j eta_j)``.  Zero demands are skipped in every ``min`` (docs/model.md);
``eta_j = inf`` (the user's tasks use nothing) falls back to ``n_j`` (``mechanisms/common.py``);
``eta_j = 0`` (the user can run nothing) -- the user gets 0 and takes no part in the levels.

Two mechanisms are registered, because the paper's algorithm and the paper's definition are not
the same object:

* ``tsf-er`` -- **Algorithm 1 exactly as printed**: solve LP-TaskShare (8a)-(8f)

      max g  s.t.  x in chi(E) WITHOUT the task-bound rows   (8b)-(8d)
                   x_j = n_j                    for j in J_sat     (8e)
                   x_j / (w_j eta_j) = g        for j in J_active  (8f)   (an EQUALITY)

  then move every active user with ``x_j >= n_j`` to ``J_sat`` and repeat until no user moves.
  Two things the pseudo-code leaves open, decided here: (i) once ``J_active`` is empty, LP (8) is
  unbounded in ``g``; we return the feasible point of (8b)-(8e) (all users at ``n_j``); (ii) when
  a round's LP is unbounded (an active user whose tasks use nothing, limited only by ``n_j``, which
  (8) omits), that round is re-solved with ``g <= max_{j active, bounded} n_j / (w_j eta_j)``.  The
  cap does not change the output: at the cap every active bounded user has ``x_j >= n_j``, as it
  would at any larger ``g``, so the same set moves to ``J_sat``.  Users that can run nothing (``eta_j = 0``) are left out of (8f) (otherwise (8f) would
  force ``g = 0`` for everybody).

* ``tsf-er-maxmin`` -- the allocation Theorem 5 says Algorithm 1 computes: **leximin** of the task
  shares ``x_j / (w_j eta_j)`` over chi(E) (task bounds are rows of chi(E)), by the project's one
  progressive-filling solver (``mechanisms.common.leximin_allocation``).

**Where they differ.** (8f) keeps every active user at ONE common level.  Leximin freezes only the
users that are blocked at the level and lets the others rise.  Whenever some active user is blocked
by resources that another active user does not need, Algorithm 1 stops everybody at the blocked
level: e.g. one server ``(cpu, mem) = (2, 2)``, users ``a = b = (1, 0)`` and ``c = (0, 1)`` (no
external demand): ``eta = (2, 2, 2)``, Algorithm 1 gives ``(1, 1, 1)`` tasks (``g = 1/2``: cpu
``2g + 2g <= 2``), the leximin gives ``(1, 1, 2)`` (``c`` alone uses memory); Algorithm 1 is then not Pareto optimal (Thm 7 claims PO).  Zero demands
are the usual cause; with every user demanding every resource and the external resource the two
coincided on every instance we tried, but the proof of Thm 5 does not cover the case, so both are
registered and the verifier compares them.  Lemma 1 (active users have the largest task share)
holds for Algorithm 1 by construction.  With task bounds Algorithm 1's intermediate rounds may give
a user more than ``n_j``; that is only transient (rows (8e) cut it back to ``n_j``).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.lp import LPError, LPSession
from mechverify.model import Environment
from mechverify.polytope import TaskPolytope

from .common import fallback_normaliser, is_inf, leximin_allocation
from .registry import Claim, Setting, register

__all__ = ["eta", "etas", "algorithm1", "tsf_er", "tsf_er_maxmin", "TSF_ER_CLAIMS", "SEED004_SETTING"]

INF = math.inf
FLOAT_SAT_TOL = 1e-9

#: Seed 004's domain: many heterogeneous servers, RDM, external resources, task bounds n_j, weights
#: (Sec. 8); no placement constraints and no per-server demands (neither appears in the paper).
SEED004_SETTING = Setting(placement=False, external=True, bounds=True, weights=True, server_demand=False)

_T2 = "004 Table 2"
TSF_ER_CLAIMS = (
    Claim("ef", "holds", f"{_T2} / Thm 6", variant="literal"),
    Claim("po", "holds", f"{_T2} / Thm 7", variant="fractional"),
    Claim("sp", "holds", f"{_T2} / Thm 8", variant="demand"),
    Claim("sp", "holds", "004 Thm 8 (proof: reporting a fake number of tasks does not help)", variant="tasks"),
    Claim("si", "holds", f"{_T2} / Thm 9", variant="external"),
)


# ---------------------------------------------------------------------- eq. (6)
def eta(env: Environment, j: int) -> Any:
    """Seed 004 eq. (6): ``min{ sum_s min_r c[s,r]/d[j,r], min_k c_er[k]/d_er[j,k] }``.

    Placement is ignored (seed 004 has none; the registered setting rejects it).  Returns a
    ``Fraction``, ``0`` (the user can run nothing) or ``inf`` (its tasks use nothing)."""
    comp: Any = Fraction(0)
    for s in range(env.n_servers):
        m = env.monopoly_tasks(j, s)
        if is_inf(m):
            comp = INF
            break
        comp += m
    best = comp
    for k, dk in enumerate(env.external_demand[j]):
        if dk > 0:
            q = env.external_capacity[k] / dk
            if q < best:
                best = q
    return best


def etas(env: Environment) -> list:
    return [eta(env, j) for j in range(env.n_users)]


def finite_normaliser(env: Environment, N: Any, j: int) -> Optional[Fraction]:
    """The normaliser actually used: ``inf`` -> fallback (``n_j`` or external limit); 0 -> ``None``."""
    if N is not None and is_inf(N):
        N = fallback_normaliser(env, j)
    if N is None or N == 0:
        return None
    return Fraction(N)


# ---------------------------------------------------------------------- Algorithm 1 (generic)
def algorithm1(env: Environment, name: str, exact: bool, normaliser: Sequence[Any], *,
               external: bool = True, extra_rows: Optional[Callable[[TaskPolytope], None]] = None,
               info: Optional[dict] = None) -> Allocation:
    """Seed 004 Algorithm 1 (iterative LP-TaskShare (8)) with the score ``x_j / (w_j N_j)``.

    ``normaliser`` is ``eta`` for TSF-ER; DRF-ER / DRF-alpha / TSF-alpha reuse this routine with their
    own normaliser (seed 004 Sec. 8: DRF-ER "can be derived by modifying (8f) to equalize the active
    users' dominant shares").  ``external=False`` drops the global external rows (8b) (alpha variants
    replace them by per-server rows given in ``extra_rows``).  See the module docstring for the two
    decisions the pseudo-code leaves open.
    """
    poly = TaskPolytope(env, mode="rdm", placement=True, external=external, bounds=False)
    if extra_rows is not None:
        extra_rows(poly)
    lp = poly.lp
    n_x = lp.n_cols
    g = lp.add_var(0, None, 0, name="g")
    lp.set_cost({g: 1})
    lp.maximize = True
    coef: dict[int, Fraction] = {}
    used_norm: list = []
    row_of: dict[int, int] = {}
    for j in range(env.n_users):
        N = finite_normaliser(env, normaliser[j], j)
        used_norm.append(N)
        if N is None or not poly.can_run(j):
            for _, col in poly.user_vars[j]:  # it can run nothing: pin it to 0 explicitly
                lp.col_upper[col] = Fraction(0)
            continue
        c = 1 / (env.weight[j] * N)
        coef[j] = c
        row = {col: c for _, col in poly.user_vars[j]}
        row[g] = Fraction(-1)
        row_of[j] = lp.add_row(row, 0, 0)  # (8f)
    active = sorted(row_of)
    saturated: list[int] = []

    def cap() -> Optional[Fraction]:
        caps = [env.tasks[j] * coef[j] for j in active if env.tasks[j] is not None]
        return max(caps) if caps else None

    if not active:
        lp.col_upper[g] = Fraction(0)
    session = LPSession(lp)
    zero: Any = Fraction(0) if exact else 0.0
    rounds, trace = 0, []
    x: list = [zero] * lp.n_cols
    while True:
        rounds += 1
        if rounds > env.n_users + 2:
            raise LPError(f"{name}: Algorithm 1 did not finish in {env.n_users + 2} rounds")
        if not active:
            session.set_cost({}, maximize=True)  # (8b)-(8e) only: any feasible point
            session.set_col_bounds(g, 0, 0)
        res = session.solve(exact=exact)
        if res.status == "unbounded" and active and cap() is not None:
            session.set_col_bounds(g, 0, cap())  # see the module docstring, decision (ii)
            res = session.solve(exact=exact)
            session.set_col_bounds(g, 0, None)
        if not res.ok:
            raise LPError(f"{name}: LP-TaskShare round {rounds}: {res.status} {res.reason}".strip())
        x = res.x
        if not active:
            trace.append((rounds, None, []))
            break
        gval = x[g]
        Q = []
        for j in active:
            nj = env.tasks[j]
            if nj is None:
                continue
            tot = sum((x[col] for _, col in poly.user_vars[j]), zero)
            if exact:
                hit = tot >= nj
            else:
                hit = float(tot) >= float(nj) - FLOAT_SAT_TOL * max(1.0, float(nj))
            if hit:
                Q.append(j)
        trace.append((rounds, gval, list(Q)))
        if not Q:
            break
        for j in Q:  # (8e): x_j = n_j from now on
            r = row_of[j]
            session.set_coef(r, g, 0)
            target = env.tasks[j] * coef[j]
            session.set_row_bounds(r, target, target)
        active = [j for j in active if j not in Q]
        saturated.extend(Q)
    meta = {"rounds": rounds, "levels_by_round": [t[1] for t in trace], "saturated": sorted(saturated),
            "saturated_by_round": [t[2] for t in trace], "normaliser": used_norm,
            "level": None if not trace or trace[-1][1] is None else trace[-1][1],
            "unique_totals": True}
    if info:
        meta.update(info)
    # totals are unique: active users sit at w_j N_j g* (g* the optimal value), saturated ones at n_j
    return poly.allocation(x[:n_x], exact, name, meta)


# ---------------------------------------------------------------------- registrations
@register("tsf-er", "TSF-ER, Algorithm 1 as printed: iterative LP-TaskShare (8), task shares x_j/(w_j eta_j)",
          SEED004_SETTING, TSF_ER_CLAIMS, source="004 Sec. 4 Algorithm 1, eq. (6), (8a)-(8f); Sec. 8 (weights, "
          "several external resources)",
          notes="(8f) equalises ALL active users; differs from tsf-er-maxmin (leximin) when some active user is "
                "blocked by a resource another does not use (see mechanisms/tsf_er.py).")
def tsf_er(env: Environment, exact: bool = False) -> Allocation:
    """Seed 004 Algorithm 1 with ``eta_j`` from eq. (6) (see the module docstring)."""
    return algorithm1(env, "tsf-er", exact, etas(env), info={"eta": etas(env)})


@register("tsf-er-maxmin", "TSF-ER as Theorem 5 states it: leximin of task shares x_j/(w_j eta_j) over chi(E)",
          SEED004_SETTING, TSF_ER_CLAIMS, source="004 Sec. 4 Thm 5, eq. (6); Sec. 8",
          notes="The max-min fair allocation Algorithm 1 is claimed to compute; compare with tsf-er.")
def tsf_er_maxmin(env: Environment, exact: bool = False) -> Allocation:
    """Leximin of ``x_j / (w_j eta_j)`` over chi(E) (external rows and task-bound rows included)."""
    e = etas(env)
    return leximin_allocation(env, "tsf-er-maxmin", exact, e, mode="rdm", placement=True, external=True,
                              bounds=True, info={"eta": e})
