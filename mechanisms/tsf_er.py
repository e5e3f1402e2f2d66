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
  would at any larger ``g``, so the same set moves to ``J_sat``.  Users that can run nothing
  (``eta_j = 0``) are left out of (8f) (otherwise (8f) would force ``g = 0`` for everybody).

* ``tsf-er-maxmin`` -- the allocation Theorem 5 says Algorithm 1 computes: **leximin** of the task
  shares ``x_j / (w_j eta_j)`` over chi(E) (task bounds are rows of chi(E)), by the project's one
  progressive-filling solver (``mechanisms.common.leximin_allocation``).

**Where they differ.** (8f) keeps every active user at ONE common level.  Leximin freezes only the
users that are blocked at the level and lets the others rise.  Whenever some active user is blocked
by resources that another active user does not need, Algorithm 1 stops everybody at the blocked
level: e.g. one server ``(cpu, mem) = (2, 2)``, users ``a = b = (1, 0)`` and ``c = (0, 1)`` (no
external demand): ``eta = (2, 2, 2)``, Algorithm 1 gives ``(1, 1, 1)`` tasks (``g = 1/2``: cpu
``2g + 2g <= 2``), the leximin gives ``(1, 1, 2)`` (``c`` alone uses memory);
Algorithm 1 is then not Pareto optimal (Thm 7 claims PO) and not max-min fair (Thm 5).  Zero demands
are the cause: if every user demands every computational AND every external resource (d > 0), the
two coincide (same totals).  Sketch: suppose in some leximin round an active user ``k`` could rise
above the common level ``t`` while the others keep ``t``; take such a point and remove a small
fraction of ``k``'s tasks on every server where it runs.  That frees a positive amount of EVERY
resource there (``k`` demands all of them) and of every external resource, so every other active
user can run a few more tasks there: all active users rise above ``t``, contradicting the round's
optimality.  Hence every active user is blocked in every round, i.e. leximin keeps all active users
at one level, as (8f) does (saturated users are handled alike).  Random tests (positive demands,
bounds, weights, several external resources) agree; with zero demands about one instance in eight
differs.  Lemma 1 (active users have the largest task share) holds for Algorithm 1 by
construction.  With task bounds Algorithm 1's intermediate rounds may give a user more than
``n_j``; that is only transient (rows (8e) cut it back to ``n_j``).
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

__all__ = ["eta", "etas", "etas_float", "algorithm1", "tsf_er", "tsf_er_maxmin", "TSF_ER_CLAIMS", "SEED004_SETTING"]

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
               server_external_caps: Optional[Sequence[Sequence[Any]]] = None,
               info: Optional[dict] = None, cg_threshold: Optional[int] = None) -> Allocation:
    """Seed 004 Algorithm 1 (iterative LP-TaskShare (8)) with the score ``x_j / (w_j N_j)``.

    ``normaliser`` is ``eta`` for TSF-ER; DRF-ER / DRF-alpha / TSF-alpha reuse this routine with their
    own normaliser (seed 004 Sec. 8: DRF-ER "can be derived by modifying (8f) to equalize the active
    users' dominant shares").  ``external=False`` drops the global external rows (8b) (alpha variants
    replace them by per-server rows).  ``server_external_caps[s][k]`` adds the rows
    ``sum_j x[j,s] d_er[j,k] <= server_external_caps[s][k]`` (DRF/TSF-alpha); ``extra_rows`` is any
    other callback on the ``TaskPolytope``.  See the module docstring for the two decisions the
    pseudo-code leaves open.

    Float mode without ``extra_rows`` (and without per-server demands) takes a fast path that builds
    the same LP directly in numpy/HiGHS (:func:`_algorithm1_float`); exact mode always goes through
    ``TaskPolytope`` and the exact LP layer.
    """
    if not exact and extra_rows is None and not env.has_server_demand:
        return _algorithm1_float(env, name, normaliser, external=external,
                                 server_external_caps=server_external_caps, info=info, cg_threshold=cg_threshold)
    poly = TaskPolytope(env, mode="rdm", placement=True, external=external, bounds=False)
    if server_external_caps is not None:
        _server_external_rows(poly, server_external_caps)
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


def _server_external_rows(poly: TaskPolytope, caps: Sequence[Sequence[Any]]) -> None:
    """Rows ``sum_j x[j,s] d_er[j,k] <= caps[s][k]`` (a fixed per-server split of the external resources)."""
    env = poly.env
    poly.server_external_rows = {}
    for s in range(env.n_servers):
        for k in range(env.n_external):
            coeffs = {}
            for j in range(env.n_users):
                col = poly.var.get((j, s))
                dk = env.external_demand[j][k]
                if col is not None and dk:
                    coeffs[col] = dk
            if coeffs:
                poly.server_external_rows[(s, k)] = poly.lp.add_row(coeffs, None, caps[s][k])


def etas_float(env: Environment) -> list:
    """eq. (6) in floating point (numpy), for the float path; ``inf`` / ``0`` as in :func:`eta`."""
    import numpy as np

    cap = np.array([[float(v) for v in row] for row in env.capacity])  # S x R
    d = np.array([[float(v) for v in row] for row in env.demand])  # J x R
    pos = d > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(pos[:, None, :], cap[None, :, :] / np.where(pos, d, 1.0)[:, None, :], np.inf)
    mono = q.min(axis=2)  # J x S (inf when the user demands nothing computational)
    comp = mono.sum(axis=1)
    out = comp
    if env.n_external:
        de = np.array([[float(v) for v in row] for row in env.external_demand])
        ce = np.array([float(v) for v in env.external_capacity])
        with np.errstate(divide="ignore"):
            ext = np.where(de > 0, ce[None, :] / np.where(de > 0, de, 1.0), np.inf).min(axis=1)
        out = np.minimum(comp, ext)
    return [float(v) for v in out]


#: float path: above this many (user, server) columns, LP-TaskShare is solved by column generation
CG_THRESHOLD = 20000
CG_INITIAL_SERVERS = 20  # per user: the servers where it could run most tasks alone
CG_ADD_PER_USER = 10  # per user and pricing round: the most negative reduced costs
CG_RC_TOL = 1e-7  # HiGHS's default dual feasibility tolerance


def _algorithm1_float(env: Environment, name: str, normaliser: Sequence[Any], *, external: bool,
                      server_external_caps: Optional[Sequence[Sequence[Any]]], info: Optional[dict],
                      cg_threshold: Optional[int] = None) -> Allocation:
    """Algorithm 1 in floats: the LP built directly as numpy arrays for HiGHS (no ``Fraction`` work), one
    ``Highs`` object warm-started across rounds (rows (8f) turn into (8e) in place).

    Same LP as the exact path: a column per ``(j, s)`` with ``s`` eligible and ``gamma[j,s] > 0``, RDM rows
    per ``(s, r)``, external rows (global, or per server with ``server_external_caps``), (8f) rows.

    Large instances (more than ``CG_THRESHOLD`` columns) use column generation: start with every user's
    ``CG_INITIAL_SERVERS`` best servers (largest monopoly count), solve, price every missing column with
    the row duals (reduced cost ``-(sum_r y[s,r] d[j,r] + sum_k y_er d_er[j,k] + y_j / (w_j N_j))``), add
    the most negative ones, repeat until none is below ``-CG_RC_TOL``: then the restricted LP's optimum is
    optimal for the full LP (within HiGHS's tolerances).  A basic optimum uses at most one column per row,
    so few of the ``|J||S|`` columns are ever needed.  Columns are never removed, so a round's previous
    solution (saturated users cut back to ``n_j``) stays feasible.
    """
    import numpy as np
    import highspy

    INFH = highspy.kHighsInf
    J, S, R, K = env.n_users, env.n_servers, env.n_resources, env.n_external
    cap = np.array([[float(v) for v in row] for row in env.capacity])
    d = np.array([[float(v) for v in row] for row in env.demand])
    de = np.array([[float(v) for v in row] for row in env.external_demand]) if K else np.zeros((J, 0))
    ce = np.array([float(v) for v in env.external_capacity])
    w = np.array([float(v) for v in env.weight])
    elig = np.zeros((J, S), dtype=bool)
    for j in range(J):
        elig[j, list(env.eligible[j])] = True
    lacks = ((d[:, None, :] > 0) & (cap[None, :, :] <= 0)).any(axis=2)  # gamma[j,s] = 0
    usable = elig & ~lacks
    tasks = [None if t is None else float(t) for t in env.tasks]

    coef = np.zeros(J)
    used_norm: list = []
    for j in range(J):
        N = normaliser[j]
        if N is not None and is_inf(N):
            N = fallback_normaliser(env, j)
        N = None if N is None or N == 0 else float(N)
        used_norm.append(N)
        if N is not None and usable[j].any():
            coef[j] = 1.0 / (w[j] * N)
    part = coef > 0  # users in (8f); the others can run nothing and get no column at all
    active = [int(j) for j in np.nonzero(part)[0]]

    # ---- rows: RDM (s, r) at s*R + r; external; (8f) per participant.  Column 0 is g.
    row_lo = [-INFH] * (S * R)
    row_up = [float(v) for v in cap.reshape(-1)]
    per_server = server_external_caps is not None
    ext0 = S * R
    if per_server:
        for s in range(S):
            for k in range(K):
                row_lo.append(-INFH)
                row_up.append(float(server_external_caps[s][k]))
    elif external:
        for k in range(K):
            row_lo.append(-INFH)
            row_up.append(float(ce[k]))
    eq0 = len(row_lo)
    eq_row = {j: eq0 + i for i, j in enumerate(active)}
    row_lo += [0.0] * len(active)
    row_up += [0.0] * len(active)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("random_seed", 0)
    g = 0
    h.addVar(0.0, INFH if active else 0.0)
    h.changeColCost(g, -1.0 if active else 0.0)  # HiGHS minimises
    n_rows = len(row_lo)
    starts = np.zeros(n_rows, dtype=np.int32)
    starts[eq0:] = np.arange(len(active), dtype=np.int32)
    h.addRows(n_rows, np.array(row_lo), np.array(row_up), len(active), starts, np.zeros(len(active), dtype=np.int32),
              np.full(len(active), -1.0))

    colid = -np.ones((J, S), dtype=np.int64)

    def add_columns(pairs) -> None:
        if not len(pairs):
            return
        st, idx, val = [], [], []
        first = h.getNumCol()
        for i, (j, s) in enumerate(pairs):
            st.append(len(idx))
            for r in range(R):
                if d[j, r] > 0:
                    idx.append(s * R + r)
                    val.append(d[j, r])
            for k in range(K):
                if de[j, k] > 0:
                    if per_server:
                        idx.append(ext0 + s * K + k)
                        val.append(de[j, k])
                    elif external:
                        idx.append(ext0 + k)
                        val.append(de[j, k])
            idx.append(eq_row[j])
            val.append(coef[j])
            colid[j, s] = first + i
        n = len(pairs)
        h.addCols(n, np.zeros(n), np.zeros(n), np.full(n, INFH), len(idx), np.array(st, dtype=np.int32),
                  np.array(idx, dtype=np.int32), np.array(val, dtype=float))

    cand = usable & part[:, None]
    n_cand = int(cand.sum())
    threshold = CG_THRESHOLD if cg_threshold is None else cg_threshold
    use_cg = n_cand > threshold
    if use_cg:
        with np.errstate(divide="ignore", invalid="ignore"):
            mono = np.where(d[:, None, :] > 0, cap[None, :, :] / np.where(d > 0, d, 1.0)[:, None, :],
                            np.inf).min(axis=2)
        mono = np.where(cand, mono, -1.0)
        first = np.argsort(-mono, axis=1, kind="stable")[:, :CG_INITIAL_SERVERS]
        add_columns([(j, int(s)) for j in active for s in first[j] if cand[j, s]])
    else:
        add_columns([(int(j), int(s)) for j, s in np.argwhere(cand)])

    def cap_g() -> Optional[float]:
        caps = [tasks[j] * coef[j] for j in active if tasks[j] is not None]
        return max(caps) if caps else None

    def run() -> str:
        h.run()
        st = h.getModelStatus()
        if st == highspy.HighsModelStatus.kOptimal:
            return "optimal"
        if st in (highspy.HighsModelStatus.kUnbounded, highspy.HighsModelStatus.kUnboundedOrInfeasible):
            return "unbounded"
        return h.modelStatusToString(st)

    pricing = 0

    def solve_round() -> str:
        nonlocal pricing
        while True:
            st = run()
            if st == "unbounded" and active and cap_g() is not None:
                h.changeColBounds(g, 0.0, cap_g())  # decision (ii) of the module docstring
                st = run()
                h.changeColBounds(g, 0.0, INFH)
            if st != "optimal" or not use_cg:
                return st
            y = np.array(h.getSolution().row_dual)
            price = d @ y[:S * R].reshape(S, R).T  # J x S
            if per_server and K:
                price += de @ y[ext0:ext0 + S * K].reshape(S, K).T
            elif external and K:
                price += (de @ y[ext0:ext0 + K])[:, None]
            yeq = np.zeros(J)
            for j in active:
                yeq[j] = y[eq_row[j]]
            rc = -(price + (yeq * coef)[:, None])
            rc[~cand | (colid >= 0)] = 0.0
            bad = np.argwhere(rc < -CG_RC_TOL)
            if not len(bad):
                return st
            pricing += 1
            order = np.argsort(rc[bad[:, 0], bad[:, 1]], kind="stable")
            count: dict[int, int] = {}
            pick = []
            for i in order:
                j, s = int(bad[i, 0]), int(bad[i, 1])
                if count.get(j, 0) < CG_ADD_PER_USER:
                    count[j] = count.get(j, 0) + 1
                    pick.append((j, s))
            add_columns(pick)

    rounds, trace, saturated = 0, [], []
    x = np.zeros(h.getNumCol())
    while True:
        rounds += 1
        if rounds > J + 2:
            raise LPError(f"{name}: Algorithm 1 did not finish in {J + 2} rounds")
        if not active:
            h.changeColCost(g, 0.0)
            h.changeColBounds(g, 0.0, 0.0)
        st = solve_round()
        if st != "optimal":
            raise LPError(f"{name}: LP-TaskShare round {rounds}: {st}")
        x = np.array(h.getSolution().col_value)
        if not active:
            trace.append((rounds, None, []))
            break
        Q = []
        for j in active:
            nj = tasks[j]
            if nj is None:
                continue
            ids = colid[j][colid[j] >= 0]
            if float(x[ids].sum()) >= nj - FLOAT_SAT_TOL * max(1.0, nj):
                Q.append(j)
        trace.append((rounds, float(x[g]), list(Q)))
        if not Q:
            break
        for j in Q:  # (8e)
            r = eq_row[j]
            h.changeCoeff(r, g, 0.0)
            target = tasks[j] * coef[j]
            h.changeRowBounds(r, target, target)
        active = [j for j in active if j not in Q]
        saturated.extend(Q)
    xm = np.zeros((J, S))
    have = colid >= 0
    xm[have] = np.maximum(x[colid[have]], 0.0)
    meta = {"rounds": rounds, "levels_by_round": [t[1] for t in trace], "saturated": sorted(saturated),
            "saturated_by_round": [t[2] for t in trace], "normaliser": used_norm,
            "level": trace[-1][1] if trace else None, "unique_totals": True,
            "column_generation": {"used": use_cg, "columns": int(have.sum()), "candidates": n_cand,
                                  "pricing_rounds": pricing}}
    if info:
        meta.update(info)
    return Allocation(env, tuple(tuple(float(v) for v in row) for row in xm), name, False, meta)


# ---------------------------------------------------------------------- registrations
@register("tsf-er", "TSF-ER, Algorithm 1 as printed: iterative LP-TaskShare (8), task shares x_j/(w_j eta_j)",
          SEED004_SETTING, TSF_ER_CLAIMS, source="004 Sec. 4 Algorithm 1, eq. (6), (8a)-(8f); Sec. 8 (weights, "
          "several external resources)",
          notes="(8f) equalises ALL active users; differs from tsf-er-maxmin (leximin) when some active user is "
                "blocked by a resource another does not use (see mechanisms/tsf_er.py).")
def tsf_er(env: Environment, exact: bool = False) -> Allocation:
    """Seed 004 Algorithm 1 with ``eta_j`` from eq. (6) (see the module docstring)."""
    e = etas(env) if exact or env.has_server_demand else etas_float(env)
    return algorithm1(env, "tsf-er", exact, e, info={"eta": e})


@register("tsf-er-maxmin", "TSF-ER as Theorem 5 states it: leximin of task shares x_j/(w_j eta_j) over chi(E)",
          SEED004_SETTING, TSF_ER_CLAIMS, source="004 Sec. 4 Thm 5, eq. (6); Sec. 8",
          notes="The max-min fair allocation Algorithm 1 is claimed to compute; compare with tsf-er.")
def tsf_er_maxmin(env: Environment, exact: bool = False) -> Allocation:
    """Leximin of ``x_j / (w_j eta_j)`` over chi(E) (external rows and task-bound rows included)."""
    e = etas(env)
    return leximin_allocation(env, "tsf-er-maxmin", exact, e, mode="rdm", placement=True, external=True,
                              bounds=True, info={"eta": e})
