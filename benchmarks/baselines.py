"""Straightforward implementations of the mechanisms' definitions, the baselines of ``bench_mechanisms.py``.

Written from the definitions (docs/, mechanisms/*.py docstrings), deliberately WITHOUT the project's
LP layer, so that the benchmark compares the project against what a careful user would write:

* ``scipy_*``: progressive filling by repeated ``scipy.optimize.linprog`` (HiGHS) LPs.  Leximin
  mechanisms: ``max t`` s.t. chi(E), ``x_j/(w_j N_j) >= t`` for active users and ``>= level`` for frozen
  ones; then every active user that cannot rise above ``t*`` (a probe LP each, the definition) freezes
  at ``t*`` -- or, with ``duals=True``, those whose row has a non-zero dual (``ineqlin.marginals``).  Algorithm 1
  (tsf-er, drf-er) and LP (7) (drfh-lp7): one common level (equality rows), bound-saturated users fixed
  at ``n_j`` and the level raised again.
* ``cvxpy_*``: the same rounds as a cvxpy problem (default solver for an LP; duals from
  ``constraint.dual_value``).
* ``fraction_drf``: DRF on one pool as exact ``Fraction`` progressive filling (every round recomputes
  every resource's limit from the frozen users).
* ``numpy_psdsf``: PS-DSF's Algorithm I (per-server DRF, then Gauss-Seidel passes of every server's
  water filling with head starts) in floats (numpy), until a pass moves nothing by more than 1e-12.

Only instances without placement constraints, external resources or task bounds are used (the
benchmark's random instances), so the baselines need not model those parts of chi(E).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

TOL = 1e-9


def arrays(env):
    """``cap`` (S x R), ``d`` (J x R), ``w`` (J) as float arrays."""
    cap = np.array([[float(v) for v in row] for row in env.capacity])
    d = np.array([[float(v) for v in row] for row in env.demand])
    w = np.array([float(v) for v in env.weight])
    return cap, d, w


# ---------------------------------------------------------------------- normalisers (float)
def norm_drfh(cap, d):
    """1 / global dominant share (pooled capacities)."""
    return 1.0 / (d / cap.sum(axis=0)).max(axis=1)


def norm_tsf(cap, d):
    """gamma_j = sum_s min_r c[s,r] / d[j,r]."""
    with np.errstate(divide="ignore"):
        q = np.where(d[:, None, :] > 0, cap[None, :, :] / np.where(d > 0, d, 1)[:, None, :], np.inf)
    return q.min(axis=2).sum(axis=1)


NORMS = {"drfh": norm_drfh, "c-drfh": norm_drfh, "tsf": norm_tsf, "cdrf": norm_tsf, "tsf-er-maxmin": norm_tsf,
         "tsf-er": norm_tsf, "drf-er": norm_drfh, "drfh-lp7": norm_drfh}
COMMON_LEVEL = {"tsf-er", "drf-er", "drfh-lp7"}  # Algorithm 1 / LP (7): one common level (equalities)


def _lp_data(env, name):
    """Columns x[j,s] (every pair: no placement in the benchmark's instances) and t; A_ub rows of chi(E)."""
    cap, d, w = arrays(env)
    J, S, R = d.shape[0], cap.shape[0], cap.shape[1]
    N = NORMS[name](cap, d)
    n = J * S + 1
    A = np.zeros((S * R, n))
    for s in range(S):
        for r in range(R):
            for j in range(J):
                A[s * R + r, j * S + s] = d[j, r]
    b = cap.reshape(-1)
    score = np.zeros((J, n))
    for j in range(J):
        score[j, j * S:(j + 1) * S] = 1.0 / (w[j] * N[j])
    return J, S, n, A, b, score


# ---------------------------------------------------------------------- scipy
def scipy_mechanism(env, name, duals: bool = False):
    """Task totals of ``name`` by repeated ``linprog`` LPs (see the module docstring).  Who freezes after a
    round: ``duals=False`` -- the definition of progressive filling, one probe LP per active user ("can
    its score exceed t* while every other active user keeps t*?"); ``duals=True`` -- the users whose
    level row has a non-zero dual (fewer LPs; what ``mechverify.lexmaxmin`` does)."""
    from scipy.optimize import linprog

    J, S, n, A, b, score = _lp_data(env, name)
    c = np.zeros(n)
    c[-1] = -1.0
    if name in COMMON_LEVEL:  # no task bounds in the benchmark: one round, x_j/(w_j N_j) = g for all j
        A_eq = score.copy()
        A_eq[:, -1] = -1.0
        res = linprog(c, A_ub=A, b_ub=b, A_eq=A_eq, b_eq=np.zeros(J), bounds=[(0, None)] * n, method="highs")
        return res.x[:-1].reshape(J, S).sum(axis=1)
    active, level = list(range(J)), {}
    x = None
    while active:
        rows, rhs = [A], [b]
        for j in range(J):
            row = -score[j].copy()
            if j in level:
                rows.append(row[None, :])
                rhs.append(np.array([-level[j]]))
            else:
                row[-1] = 1.0
                rows.append(row[None, :])
                rhs.append(np.array([0.0]))
        res = linprog(c, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs), bounds=[(0, None)] * n, method="highs")
        x, t = res.x, res.x[-1]
        if duals:
            marg = res.ineqlin.marginals[A.shape[0]:]
            blocked = [j for j in active if abs(marg[j]) > TOL]
        else:
            blocked = []
            A_ub, b_ub = np.vstack(rows), np.concatenate(rhs)
            fix = [(0, None)] * (n - 1) + [(t, t)]
            for j in active:
                cj = -score[j].copy()
                pr = linprog(cj, A_ub=A_ub, b_ub=b_ub, bounds=fix, method="highs")
                if -pr.fun <= t + TOL * max(1.0, abs(t)):
                    blocked.append(j)
        for j in blocked:
            level[j] = t
        active = [j for j in active if j not in blocked]
    return x[:-1].reshape(J, S).sum(axis=1)


# ---------------------------------------------------------------------- cvxpy
def cvxpy_mechanism(env, name):
    """Task totals of ``name`` by the same rounds as cvxpy problems."""
    import cvxpy as cp

    J, S, n, A, b, score = _lp_data(env, name)
    xv = cp.Variable(n - 1, nonneg=True)
    t = cp.Variable()
    base = [A[:, :-1] @ xv <= b]
    sc = score[:, :-1]
    if name in COMMON_LEVEL:
        prob = cp.Problem(cp.Maximize(t), base + [sc @ xv == t])
        prob.solve()
        return xv.value.reshape(J, S).sum(axis=1)
    active, level = list(range(J)), {}
    while active:
        rows = {}
        cons = list(base)
        for j in range(J):
            con = sc[j] @ xv >= (level[j] if j in level else t)
            rows[j] = con
            cons.append(con)
        prob = cp.Problem(cp.Maximize(t), cons)
        prob.solve()
        tv = float(t.value)
        blocked = [j for j in active if abs(float(rows[j].dual_value)) > 1e-6]
        if not blocked:  # interior-point duals below the threshold: freeze the smallest score
            blocked = [min(active, key=lambda j: float(sc[j] @ xv.value))]
        for j in blocked:
            level[j] = tv
        active = [j for j in active if j not in blocked]
    return xv.value.reshape(J, S).sum(axis=1)


# ---------------------------------------------------------------------- DRF in Fractions
def fraction_drf(env):
    """DRF on one pool (no bounds, no external, every user eligible): exact Fraction progressive filling.
    Returns the task totals."""
    cap = [Fraction(c) for c in env.capacity[0]]
    J, R = env.n_users, env.n_resources
    dem = [[Fraction(v) for v in env.demand[j]] for j in range(J)]
    a = []
    for j in range(J):
        ds = max(dem[j][r] / cap[r] for r in range(R) if dem[j][r] > 0)
        a.append(Fraction(env.weight[j]) / ds)
    x = [Fraction(0)] * J
    frozen = [False] * J
    while not all(frozen):
        best, sat = None, []
        for r in range(R):
            used = sum((dem[j][r] * x[j] for j in range(J) if frozen[j]), Fraction(0))
            rate = sum((dem[j][r] * a[j] for j in range(J) if not frozen[j]), Fraction(0))
            if rate > 0:
                lim = (cap[r] - used) / rate
                if best is None or lim < best:
                    best, sat = lim, [r]
                elif lim == best:
                    sat.append(r)
        for j in range(J):
            if not frozen[j] and any(dem[j][r] > 0 for r in sat):
                frozen[j] = True
                x[j] = a[j] * best
    return x


# ---------------------------------------------------------------------- PS-DSF in floats
def _waterfill(h, w, dm, cap):
    """One server's max-min fair column for keys (h_u + y_u)/w_u (floats, events as in the project)."""
    U = len(h)
    start = h / w
    frozen = np.zeros(U, dtype=bool)
    y = np.zeros(U)
    used = np.zeros(len(cap))
    L = start.min()
    for _ in range(2 * U + 2):
        live = ~frozen
        if not live.any():
            break
        act = live & (start <= L + TOL)
        wait = live & ~act
        nxt = start[wait].min() if wait.any() else None
        rate = (w[act][:, None] * dm[act]).sum(axis=0)
        hs = (h[act][:, None] * dm[act]).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            lev = np.where(rate > 0, (cap - used + hs) / np.where(rate > 0, rate, 1), np.inf)
        sat = lev.min()
        if nxt is not None and nxt < sat:
            L = nxt
            continue
        L = max(L, sat)
        usage = used + L * rate - hs
        satr = (usage >= cap * (1 - TOL)) & (dm[live] > 0).any(axis=0)
        fz = live & (dm[:, satr] > 0).any(axis=1)
        for u in np.nonzero(fz)[0]:
            frozen[u] = True
            if start[u] <= L + TOL:
                y[u] = L * w[u] - h[u]
                used += y[u] * dm[u]
    return y


def numpy_psdsf(env, mode="rdm", max_passes=300):
    """Algorithm I in floats; returns the task matrix (J x S)."""
    cap, d, w = arrays(env)
    J, S = d.shape[0], cap.shape[0]
    with np.errstate(divide="ignore"):
        g = np.where(d[:, None, :] > 0, cap[None, :, :] / np.where(d > 0, d, 1)[:, None, :], np.inf).min(axis=2)
    x = np.zeros((J, S))

    def column(s, x):
        h = x.sum(axis=1) - x[:, s]
        ws = w * g[:, s]
        if mode == "tdm":
            return _waterfill(h, ws, (1.0 / g[:, s])[:, None], np.array([1.0]))
        return _waterfill(h, ws, d, cap[s])

    zero = np.zeros((J, S))
    for s in range(S):
        x[:, s] = column(s, zero)
    for _ in range(max_passes):
        moved = 0.0
        for s in range(S):
            col = column(s, x)
            moved = max(moved, float(np.abs(col - x[:, s]).max()))
            x[:, s] = col
        if moved <= 1e-12:
            break
    return x
