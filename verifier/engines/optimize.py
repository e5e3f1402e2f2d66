"""Misreport optimiser for SP and GSP: structured moves + multi-start local search.

Given seed environments (the ones Hypothesis found closest to a violation), for every user (SP) or pair
of users (GSP):

* **structured moves** -- scale one resource's demand (computational or external) by a simple factor,
  make a zero demand positive, flatten the demand vector, drop or add one eligible server (``eligible``),
  change the task count (``tasks``);
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
from mechverify.numbers import InstanceError
from mechverify.utility import utility

from ..properties.base import Certificate, Deviation, Report

__all__ = ["optimize_misreports", "structured_reports"]

FACTORS = [Fraction(0), Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(2, 3), Fraction(3, 4),
           Fraction(4, 3), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(4), Fraction(10)]
FRESH = [Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(5)]
DENOMS = (1, 2, 3, 4, 6, 8, 12, 16, 32, 100, 1000, 10 ** 6)
REL = 1e-7


class _Stop(Exception):
    pass


class _Ctx:
    def __init__(self, mech, prop, variant, deadline: float, max_trials: Optional[int], result, clock,
                 accept=None) -> None:
        self.mech, self.prop, self.variant, self.clock, self.accept = mech, prop, variant, clock, accept
        self.deadline, self.max_trials, self.result = deadline, max_trials, result
        self.trials = 0
        self.seen: set = set()

    def tick(self) -> None:
        if self.clock() > self.deadline or (self.max_trials is not None and self.trials >= self.max_trials):
            raise _Stop()
        self.trials += 1

    def evaluate(self, env: Environment, dev: Deviation, base) -> Optional[Certificate]:
        """Float evaluation; exact re-check of a float violation."""
        key = repr(dev)
        if key in self.seen:
            return None
        self.seen.add(key)
        if self.accept is not None and not self.accept(env, dev):
            return None
        self.tick()
        try:
            ev = self.prop.evaluate(self.mech, env, self.variant, deviation=dev, exact=False, alloc=base)
        except Exception as exc:  # noqa: BLE001
            self._error(exc)
            return None
        if ev.measure is not None and self.result is not None and self.prop.worse(ev.measure, self.result.worst):
            self.result.worst = ev.measure
        if ev.violated and ev.witness is not None:
            try:
                cert = self.prop.recheck(self.mech, ev.witness)
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


def _demand_report(env: Environment, j: int, d: Sequence[Fraction], e: Sequence[Fraction]) -> Report:
    return Report(j, demand=tuple(d), external_demand=tuple(e) if env.n_external else None)


def structured_reports(env: Environment, j: int, variant: str) -> list[Report]:
    """The structured moves for user ``j`` (see module docstring)."""
    out: list[Report] = []
    if variant == "demand":
        d, e = list(env.demand[j]), list(env.external_demand[j])
        vecs = [(d, "d", r) for r in range(len(d))] + [(e, "e", k) for k in range(len(e))]
        for vec, kind, i in vecs:
            opts = [vec[i] * f for f in FACTORS] if vec[i] > 0 else FRESH
            for v in opts:
                nd, ne = list(d), list(e)
                (nd if kind == "d" else ne)[i] = v
                if nd != d or ne != e:
                    out.append(_demand_report(env, j, nd, ne))
        top = max(d)
        if top > 0 and any(v != top for v in d):
            out.append(_demand_report(env, j, [top] * len(d), e))
        # scale everything but one resource (the "inflate the others" move)
        for r in range(len(d)):
            for f in (Fraction(2), Fraction(1, 2)):
                nd = [v * f if i != r else v for i, v in enumerate(d)]
                if nd != d:
                    out.append(_demand_report(env, j, nd, e))
    elif variant == "eligible":
        true = env.eligible[j]
        for s in range(env.n_servers):
            out.append(Report(j, eligible=frozenset(true ^ {s})))
        if env.n_servers <= 4:
            for mask in range(1 << env.n_servers):
                fs = frozenset(s for s in range(env.n_servers) if mask >> s & 1)
                if fs != true and len(fs ^ true) > 1:
                    out.append(Report(j, eligible=fs))
    elif variant == "tasks":
        n = env.tasks[j]
        base = n if n is not None else Fraction(1)
        opts: list[Any] = [None] if n is not None else []
        opts += [base * f for f in FACTORS] + [Fraction(v) for v in range(0, 11)]
        for v in opts:
            if v != n:
                out.append(Report(j, tasks=v))
    return out


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


def _sp_user(ctx: _Ctx, env: Environment, j: int, base, rng) -> Optional[Certificate]:
    for rep in structured_reports(env, j, ctx.variant):
        cert = ctx.evaluate(env, Deviation("misreport", (rep,)), base)
        if cert is not None:
            return cert
    u0 = float(utility(env, base, j))
    mech = ctx.mech
    if ctx.variant == "demand":
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
    elif ctx.variant == "tasks":
        n0 = float(env.tasks[j]) if env.tasks[j] is not None else max(1.0, u0)
        if n0 <= 0:
            n0 = 1.0
        pos = [("t", 0, n0)]

        def vec(z):
            return n0 * math.exp(max(-6.0, min(6.0, z[0]))), None
    else:
        return None

    best: dict[str, Any] = {"val": u0, "z": None}

    def report_of(z_vals, exact_vals=None):
        if ctx.variant == "demand":
            nd, ne = vec(z_vals) if exact_vals is None else exact_vals
            return Report(j, demand=tuple(Fraction(v) if not isinstance(v, Fraction) else v for v in nd),
                          external_demand=(tuple(Fraction(v) if not isinstance(v, Fraction) else v for v in ne)
                                           if env.n_external else None))
        t = vec(z_vals)[0] if exact_vals is None else exact_vals
        return Report(j, tasks=Fraction(t) if not isinstance(t, Fraction) else t)

    def f(z):
        ctx.tick()
        try:
            env_d = report_of(z).apply(env)
            a = mech(env_d, exact=False)
            u = float(utility(env, a, j))
        except InstanceError:
            return 1e9
        except Exception:  # noqa: BLE001 - solver trouble at a float point: just a bad point
            return 1e9
        if u > best["val"]:
            best["val"], best["z"] = u, np.array(z, dtype=float)
        return -u

    starts = [np.zeros(len(pos))] + [rng.normal(0.0, 0.8, len(pos)) for _ in range(3)]
    for x0 in starts:
        _nelder_mead(f, x0, maxfev=40 * len(pos) + 40)
        if best["z"] is not None and best["val"] > u0 * (1 + 1e-6) + 1e-9:
            cert = _confirm(ctx, env, base, j, best["z"], vec)
            if cert is not None:
                return cert
            best["z"] = None  # do not re-confirm the same point
    return None


def _confirm(ctx: _Ctx, env: Environment, base, j: int, z, vec) -> Optional[Certificate]:
    if ctx.variant == "demand":
        nd, ne = vec(z)
        flat = list(nd) + list(ne)
        for cand in _rationalise(flat):
            rd, re_ = cand[:len(nd)], cand[len(nd):]
            rep = _demand_report(env, j, rd, re_)
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
            _demand_report(env, j, [Fraction(v) if not isinstance(v, Fraction) else v for v in vs[j][0]],
                           [Fraction(v) if not isinstance(v, Fraction) else v for v in vs[j][1]]) for j in coal))

    best: dict[str, Any] = {"val": 0.0, "z": None}

    def score(us) -> float:
        rel = [(a - b) / max(b, 1e-9) for a, b in zip(us, u0)]
        return max(rel) if min(rel) >= -1e-12 else 10 * min(rel)

    def f(z):
        ctx.tick()
        try:
            a = mech(dev_of(vecs(z)).apply(env), exact=False)
            us = [float(utility(env, a, j)) for j in coal]
        except Exception:  # noqa: BLE001
            return 1e9
        sc = score(us)
        if sc > best["val"]:
            best["val"], best["z"] = sc, np.array(z, dtype=float)
        return -sc

    starts = [np.zeros(len(pos))] + [rng.normal(0.0, 0.8, len(pos)) for _ in range(2)]
    for x0 in starts:
        _nelder_mead(f, x0, maxfev=30 * len(pos) + 40)
        if best["z"] is not None and best["val"] > 1e-6:
            vs = vecs(best["z"])
            flat = [v for j in coal for v in vs[j][0] + vs[j][1]]
            for cand in _rationalise(flat):
                it = iter(cand)
                exact_vs = {j: ([next(it) for _ in vs[j][0]], [next(it) for _ in vs[j][1]]) for j in coal}
                cert = ctx.evaluate(env, dev_of(exact_vs), base)
                if cert is not None:
                    return cert
            best["z"] = None
    return None


def optimize_misreports(mech, prop, variant: str, envs: Sequence[Environment], *, seed: int = 0,
                        deadline: float, max_trials: Optional[int] = None, result=None,
                        clock=time.process_time, accept=None) -> tuple[Optional[Certificate], int]:
    """Run the optimiser over ``envs`` until a certificate, the ``deadline`` (on ``clock``) or
    ``max_trials``.  Returns ``(certificate or None, trials used)``."""
    ctx = _Ctx(mech, prop, variant, deadline, max_trials, result, clock, accept)
    rng = np.random.default_rng(seed)
    try:
        for env in envs:
            try:
                base = mech(env, exact=False)
            except Exception as exc:  # noqa: BLE001
                ctx._error(exc)
                continue
            if prop.name == "sp":
                for j in range(env.n_users):
                    cert = _sp_user(ctx, env, j, base, rng)
                    if cert is not None:
                        return cert, ctx.trials
            elif prop.name == "gsp":
                for a in range(env.n_users):
                    for b in range(a + 1, env.n_users):
                        cert = _gsp_pair(ctx, env, (a, b), base, rng)
                        if cert is not None:
                            return cert, ctx.trials
    except _Stop:
        pass
    return None, ctx.trials
