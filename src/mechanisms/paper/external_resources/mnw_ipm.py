"""Float solvers for ``max sum_j w_j log (Ux)_j  s.t.  Ax <= b,  x >= 0`` (MNW, seed 004 Sec. 3.2).

They only PROPOSE a point and row prices; ``mnw.py`` certifies bounds rigorously whatever they return.
"""
from __future__ import annotations

import math

import numpy as np

from mechverify.lp import LPError

__all__ = ["primal_dual_ipm", "log_barrier", "interior_start", "step_to_boundary"]


def interior_start(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A strictly interior start: every column at the same ``delta``, half of what the tightest packing
    row allows (``LPError`` if no row limits some column, i.e. a total is unbounded)."""
    loads = A.sum(axis=1)
    with np.errstate(divide="ignore"):
        delta = 0.5 * np.min(np.where(loads > 0, b / np.where(loads > 0, loads, 1), np.inf))
    if not np.isfinite(delta):
        raise LPError("mnw: a user's total is unbounded (no row limits its tasks)")
    return np.full(A.shape[1], delta)


def step_to_boundary(v: np.ndarray, dv: np.ndarray) -> float:
    """Largest ``a <= 1`` with ``v + a dv >= 0``."""
    neg = dv < 0  # (the array methods, not np.any/np.min: the same values without their dispatch, ~10x per call)
    return min(1.0, float((-v[neg] / dv[neg]).min())) if neg.any() else 1.0


def _step_all(vs: tuple, dvs: tuple) -> float:
    """``min(step_to_boundary(v, dv) for v, dv in zip(vs, dvs))`` in one pass over the arrays joined: the same
    quotients, and a minimum is exact, so the same float -- unless a quotient is NaN (a broken iterate; the
    minimum of the union is NaN where the separate calls skip it): then the separate calls."""
    v, dv = np.concatenate(vs), np.concatenate(dvs)
    neg = dv < 0
    if not neg.any():
        return 1.0
    q = float((-v[neg] / dv[neg]).min())
    if math.isnan(q):
        return min(step_to_boundary(v, dv) for v, dv in zip(vs, dvs))
    return min(1.0, q)


def primal_dual_ipm(A: np.ndarray, b: np.ndarray, U: np.ndarray, w: np.ndarray,
         max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Primal-dual interior point (Mehrotra predictor-corrector) for
    ``max sum_j w_j log (Ux)_j  s.t.  Ax + s = b,  x, s >= 0``; returns ``(x, y)`` (``y`` = row prices).

    KKT with ``mu -> 0``: ``A^T y - z = grad``, ``Ax + s = b``, ``x z = mu``, ``s y = mu``.  Newton on it,
    eliminating ``dz``, ``ds`` and ``dy``, gives ``(Q + Z/X + A^T (Y/S) A) dx = rhs`` with
    ``Q = U^T diag(w/X^2) U`` (minus the Hessian of the objective).  That matrix gets a tiny proximal
    term (``1e-14 tr/n``): with a degenerate optimal face (non-unique split over servers) it is
    otherwise singular.  Steps stay strictly interior (0.99 of the way to the boundary)."""
    m, n = A.shape
    x = interior_start(A, b)
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

        ys = y / s  # (each quotient computed once: the same values as computing it where it is used)

        def direction(target_mu, corr_xz=0.0, corr_sy=0.0):
            r_xz = x * z - target_mu + corr_xz
            r_sy = s * y - target_mu + corr_sy
            r_sy_y = r_sy / y
            rhs = -r_d - r_xz / x - A.T @ (ys * (r_p - r_sy_y))
            dx = np.linalg.solve(M, rhs)
            dy = ys * (A @ dx + r_p - r_sy_y)
            return dx, dy, -(r_sy + s * dy) / y, -(r_xz + z * dx) / x

        try:
            dx, dy, ds, dz = direction(0.0)  # predictor (affine scaling)
            a = _step_all((x, s, y, z), (dx, ds, dy, dz))
            mu_aff = ((x + a * dx) @ (z + a * dz) + (s + a * ds) @ (y + a * dy)) / (n + m)
            sigma = min(1.0, (mu_aff / mu) ** 3)
            dx, dy, ds, dz = direction(sigma * mu, dx * dz, ds * dy)  # corrector
        except np.linalg.LinAlgError:
            break
        a = 0.99 * _step_all((x, s, y, z), (dx, ds, dy, dz))
        x, s, y, z = x + a * dx, s + a * ds, y + a * dy, z + a * dz
    return x, y


def log_barrier(A: np.ndarray, b: np.ndarray, U: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Primal log-barrier Newton method; returns ``(x, p)`` with ``p_i = mu / slack_i``."""
    m, n = A.shape
    x = interior_start(A, b)
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
