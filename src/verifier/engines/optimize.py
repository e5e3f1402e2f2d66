"""Misreport optimiser: structured moves + multi-start local search, for the variants whose
``Hints.optimizer`` is set (SP, GSP).

Given seed environments (the ones Hypothesis found closest to a violation), for every user (one-user
report kinds ``demand``, ``eligible``, ``tasks``) or pair of users (kind ``coalition``):

* **structured moves** -- ``verifier.properties.moves`` (the same list ``check`` tries);
* **local search** -- Nelder-Mead (scipy) over log-scale factors ``d' = d * exp(z)`` of the positive demand
  entries (``demand``; jointly for a coalition) or over ``log n'`` (``tasks``), from ``z = 0`` and a few
  random starts (numpy ``default_rng(seed)``), maximising the deviator's TRUE utility (GSP: the smallest
  relative gain of the coalition, losses penalised).

Objective values are floats; a promising point is rounded to simple rationals (denominators 1, 2, 3, 4,
... 10^6) and sent to ``prop.recheck`` -- only an exact certificate is returned.
"""
from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Any, Optional, Sequence

import numpy as np

from mechverify.model import Environment
from mechverify.utility import utility

from ..properties import moves
from ..properties.base import Certificate, Deviation, PropertyFailure, Report

__all__ = ["optimize_misreports"]

DENOMS = (1, 2, 3, 4, 6, 8, 12, 16, 32, 100, 1000, 10 ** 6)


class _Stop(Exception):
    pass


class _Ctx:
    def __init__(self, mech, prop, variant, deadline: float, max_trials: Optional[int], result, clock,
                 accept=None) -> None:
        self.mech, self.prop, self.variant, self.clock, self.accept = mech, prop, variant, clock, accept
        self.kind = prop.hints_for(variant).deviation
        self.deadline, self.max_trials, self.result = deadline, max_trials, result
        self.trials = 0
        self.seen: set = set()

    def tick(self) -> None:
        """Count one trial; stop the optimiser once its deadline or trial cap is reached."""
        if self.clock() > self.deadline or (self.max_trials is not None and self.trials >= self.max_trials):
            raise _Stop()
        self.trials += 1

    def evaluate(self, env: Environment, dev: Deviation, base) -> Optional[Certificate]:
        """Float evaluation; exact re-check of a float violation.  A candidate already evaluated (the
        same report of the same user on the same seed environment) is skipped; the same report on
        another environment is a different candidate."""
        key = (id(env), repr(dev))  # ``envs`` outlive the run, so ids are stable
        if key in self.seen:
            return None
        self.seen.add(key)
        if self.accept is not None and not self.accept(env, dev):
            return None
        self.tick()
        try:
            ev = self.prop.evaluate(self.mech, env, self.variant, deviation=dev, exact=False, alloc=base)
        except PropertyFailure:  # the property's own code: a finding about it (the search stops)
            raise
        except Exception as exc:  # noqa: BLE001
            self._error(exc)
            return None
        if ev.measure is not None and self.result is not None and self.prop.worse(ev.measure, self.result.worst):
            self.result.worst = ev.measure
        if ev.violated and ev.witness is not None:
            try:
                cert = self.prop.recheck(self.mech, ev.witness)
            except PropertyFailure:
                raise
            except Exception as exc:  # noqa: BLE001
                self._error(exc)
                return None
            if cert is None and self.result is not None:
                self.result.rejected += 1
            return cert
        return None

    def _error(self, exc: Exception) -> None:
        if self.result is not None:
            self.result.errors += 1
            self.result.first_error = self.result.first_error or f"optimiser: {type(exc).__name__}: {exc}"


def _frac(v) -> Fraction:
    return v if isinstance(v, Fraction) else Fraction(v)


def _rationalise(xs: Sequence[float]) -> list[tuple[Fraction, ...]]:
    out, seen = [], set()
    for q in DENOMS:
        cand = tuple(Fraction(float(x)).limit_denominator(q) if x > 0 else Fraction(0) for x in xs)
        if any(c <= 0 for c, x in zip(cand, xs) if x > 0):
            continue
        if cand not in seen:
            seen.add(cand)
            out.append(cand)
    return out


def _nelder_mead(f, x0: np.ndarray, maxfev: int) -> None:
    from scipy.optimize import minimize

    minimize(f, x0, method="Nelder-Mead",
             options={"maxfev": maxfev, "xatol": 1e-4, "fatol": 1e-9, "initial_simplex": None})


def _multistart(ctx: _Ctx, value, dim: int, n_random: int, maxfev: int, rng, best_val: float, good, confirm):
    """Maximise ``value(z)`` (``None``: a bad point) by Nelder-Mead from ``z = 0`` and ``n_random`` random
    starts; after each run whose best value is ``good``, ``confirm(z)`` it exactly (a certificate or None)."""
    best: dict[str, Any] = {"val": best_val, "z": None}

    def f(z):
        ctx.tick()
        v = value(z)
        if v is None:
            return 1e9
        if v > best["val"]:
            best["val"], best["z"] = v, np.array(z, dtype=float)
        return -v

    starts = [np.zeros(dim)] + [rng.normal(0.0, 0.8, dim) for _ in range(n_random)]
    for x0 in starts:
        _nelder_mead(f, x0, maxfev=maxfev)
        if best["z"] is not None and good(best["val"]):
            cert = confirm(best["z"])
            if cert is not None:
                return cert
            best["z"] = None  # do not re-confirm the same point
    return None


def _one_user(ctx: _Ctx, env: Environment, j: int, base, rng) -> Optional[Certificate]:
    for rep in moves.reports(ctx.kind, env, j):
        cert = ctx.evaluate(env, Deviation("misreport", (rep,)), base)
        if cert is not None:
            return cert
    u0 = float(utility(env, base, j))
    mech = ctx.mech
    if ctx.kind == "demand":
        d, e = env.demand[j], env.external_demand[j]
        pos = [("d", r, float(v)) for r, v in enumerate(d) if v > 0] + \
              [("e", k, float(v)) for k, v in enumerate(e) if v > 0]
        if not pos:
            return None

        def vec(z):
            nd, ne = [float(v) for v in d], [float(v) for v in e]
            for (kind, i, v0), zi in zip(pos, z):
                (nd if kind == "d" else ne)[i] = v0 * math.exp(max(-6.0, min(6.0, zi)))
            return nd, ne
    elif ctx.kind == "tasks":
        n0 = float(env.tasks[j]) if env.tasks[j] is not None else max(1.0, u0)
        if n0 <= 0:
            n0 = 1.0
        pos = [("t", 0, n0)]

        def vec(z):
            return n0 * math.exp(max(-6.0, min(6.0, z[0]))), None
    else:
        return None

    def report_of(z):
        if ctx.kind == "demand":
            nd, ne = vec(z)
            return Report(j, demand=tuple(_frac(v) for v in nd),
                          external_demand=tuple(_frac(v) for v in ne) if env.n_external else None)
        return Report(j, tasks=_frac(vec(z)[0]))

    def value(z):
        try:
            return float(utility(env, mech(report_of(z).apply(env), exact=False), j))
        except Exception:  # noqa: BLE001 - invalid report or solver trouble at a float point: a bad point
            return None

    return _multistart(ctx, value, len(pos), 3, 40 * len(pos) + 40, rng, u0,
                       lambda v: v > u0 * (1 + 1e-6) + 1e-9, lambda z: _confirm(ctx, env, base, j, z, vec))


def _confirm(ctx: _Ctx, env: Environment, base, j: int, z, vec) -> Optional[Certificate]:
    if ctx.kind == "demand":
        nd, ne = vec(z)
        flat = list(nd) + list(ne)
        for cand in _rationalise(flat):
            rd, re_ = cand[:len(nd)], cand[len(nd):]
            rep = Report(j, demand=tuple(rd), external_demand=tuple(re_) if env.n_external else None)
            cert = ctx.evaluate(env, Deviation("misreport", (rep,)), base)
            if cert is not None:
                return cert
    else:
        t = vec(z)[0]
        for cand in _rationalise([t]):
            cert = ctx.evaluate(env, Deviation("misreport", (Report(j, tasks=cand[0]),)), base)
            if cert is not None:
                return cert
    return None


def _gsp_pair(ctx: _Ctx, env: Environment, coal: tuple[int, int], base, rng) -> Optional[Certificate]:
    mech = ctx.mech
    u0 = [float(utility(env, base, j)) for j in coal]
    pos = []
    for j in coal:
        for r, v in enumerate(env.demand[j]):
            if v > 0:
                pos.append((j, "d", r, float(v)))
        for k, v in enumerate(env.external_demand[j]):
            if v > 0:
                pos.append((j, "e", k, float(v)))
    if not pos:
        return None

    def vecs(z):
        out = {j: ([float(v) for v in env.demand[j]], [float(v) for v in env.external_demand[j]]) for j in coal}
        for (j, kind, i, v0), zi in zip(pos, z):
            out[j][0 if kind == "d" else 1][i] = v0 * math.exp(max(-6.0, min(6.0, zi)))
        return out

    def dev_of(vs) -> Deviation:
        return Deviation("misreport", tuple(
            Report(j, demand=tuple(_frac(v) for v in vs[j][0]),
                   external_demand=tuple(_frac(v) for v in vs[j][1]) if env.n_external else None) for j in coal))

    def score(us) -> float:
        rel = [(a - b) / max(b, 1e-9) for a, b in zip(us, u0)]
        return max(rel) if min(rel) >= -1e-12 else 10 * min(rel)

    def value(z):
        try:
            a = mech(dev_of(vecs(z)).apply(env), exact=False)
            return score([float(utility(env, a, j)) for j in coal])
        except Exception:  # noqa: BLE001
            return None

    def confirm(z):
        vs = vecs(z)
        flat = [v for j in coal for v in vs[j][0] + vs[j][1]]
        for cand in _rationalise(flat):
            it = iter(cand)
            exact_vs = {j: ([next(it) for _ in vs[j][0]], [next(it) for _ in vs[j][1]]) for j in coal}
            cert = ctx.evaluate(env, dev_of(exact_vs), base)
            if cert is not None:
                return cert
        return None

    return _multistart(ctx, value, len(pos), 2, 30 * len(pos) + 40, rng, 0.0, lambda v: v > 1e-6, confirm)


def optimize_misreports(mech, prop, variant: str, envs: Sequence[Environment], *, seed: int = 0,
                        deadline: float, max_trials: Optional[int] = None, result=None,
                        clock=time.monotonic, accept=None) -> tuple[Optional[Certificate], int]:
    """Run the optimiser over ``envs`` until a certificate, the ``deadline`` (on ``clock``, by default
    wall-clock ``time.monotonic`` like ``verifier.properties.budget``) or ``max_trials``.  Returns
    ``(certificate or None, trials used)``."""
    ctx = _Ctx(mech, prop, variant, deadline, max_trials, result, clock, accept)
    rng = np.random.default_rng(seed)
    try:
        for env in envs:
            if clock() > deadline:
                break
            try:
                base = mech(env, exact=False)
            except Exception as exc:  # noqa: BLE001
                ctx._error(exc)
                continue
            if ctx.kind in ("demand", "eligible", "tasks"):
                for j in range(env.n_users):
                    cert = _one_user(ctx, env, j, base, rng)
                    if cert is not None:
                        return cert, ctx.trials
            elif ctx.kind == "coalition":
                for a in range(env.n_users):
                    for b in range(a + 1, env.n_users):
                        cert = _gsp_pair(ctx, env, (a, b), base, rng)
                        if cert is not None:
                            return cert, ctx.trials
    except _Stop:
        pass
    return None, ctx.trials
