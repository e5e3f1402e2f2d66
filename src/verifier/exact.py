"""Exact recomputation: the step that turns a candidate witness into a certificate.

``exact_run(mech, env)`` runs a mechanism in exact mode.  For a mechanism whose allocation is not
rational or not exactly computable (``Setting.exact = False``, e.g. MNW) the allocation carries
``info["total_bounds"]``: per user an exact interval ``[lo, hi]`` that provably contains the true
allocation's total; every exact comparison then uses interval reasoning.

``utility_interval(true_env, run, j, k=None, ...)`` gives exact bounds on what user ``j`` (TRUE data)
gets from user ``k``'s bundle (``k = j``: its own).  It is exact (``lo == hi``) for exact
allocations.  For interval allocations it needs the bundle's utility to be a function of ``k``'s
total only, which holds when the per-server factor
``rho_s = min_r d_rep[k,s,r] / d_true[j,s,r]`` is the same on every server where ``k`` may hold
tasks (true for demand misreports without per-server demands); otherwise it returns ``None`` and the
caller reports "cannot certify" rather than guess.

Indivisible tasks (``Setting.divisible = False``, seed 001 Sec. V-B): utilities count whole tasks
(``mechverify.utility.whole_tasks``); :func:`own_utility` and :func:`envy_utility` pick it for indivisible mechanisms.  Without it a misreport that yields 3/4 of a
task on each of two servers counted as 3/2 tasks: a false SP violation (drfh-first-fit).

Uniqueness (``robust``): a violation must hold for the allocation the mechanism returns, and the
certificate says whether it holds for every allocation the mechanism's definition allows.  Leximin
mechanisms have unique score vectors, hence unique totals (``info["unique_totals"] = True``);
mechanisms with an optimal face expose ``info["total_range"]`` (per-user exact ``[min, max]`` over
the face); otherwise robustness is unknown (``None``).

``certified_excess(above, below)`` is the shape every re-check shares: the violation is
``above > below``, certified when the lower end of ``above``'s interval exceeds the upper end of
``below``'s; robust when the same holds over the whole range the definition allows.
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterable, Optional

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import INF, is_inf
from mechverify.utility import bundle_value, envy_value, scaled, utility

__all__ = ["ExactRun", "exact_run", "known_allocation", "utility_interval", "totals_only_factor", "own_utility", "envy_utility",
           "integral_of", "Excess", "certified_excess"]

Interval = tuple[Any, Any]


@dataclass
class ExactRun:
    """A mechanism's allocation in exact mode, with what is known about its totals."""

    alloc: Allocation
    exact: bool  # alloc.x is exactly the mechanism's allocation
    total_bounds: Optional[list[tuple[Fraction, Fraction]]]  # when not exact
    total_range: Optional[list[tuple[Fraction, Fraction]]]  # over all allocations the definition allows
    unique_totals: Optional[bool]
    integral: bool = False  # the mechanism's tasks are indivisible: utilities count whole tasks


def integral_of(mech) -> bool:
    """The mechanism's tasks are indivisible (utilities count whole tasks)."""
    setting = getattr(mech, "setting", None)
    return setting is not None and not getattr(setting, "divisible", True)


def own_utility(mech, true_env: Environment, alloc: Allocation, j: int) -> Any:
    """``u_j`` of ``j``'s own bundle under ``alloc`` for ``mech``."""
    return utility(true_env, alloc, j, integral_of(mech))


def envy_utility(mech, true_env: Environment, alloc: Allocation, j: int, k: int, placement_aware: bool = True) -> Any:
    """What ``j`` gets from ``(w_j / w_k) * A_k`` for ``mech``."""
    return envy_value(true_env, alloc, j, k, placement_aware=placement_aware, integral=integral_of(mech))


def _pairs(v: Any) -> Optional[list[tuple[Fraction, Fraction]]]:
    if v is None:
        return None
    return [(Fraction(a), Fraction(b)) for a, b in v]


_KNOWN: ContextVar[tuple] = ContextVar("mechverify_known_allocation", default=())


@contextlib.contextmanager
def known_allocation(mech, env: Environment, alloc: Allocation):
    """Within the block, :func:`exact_run` of ``mech`` on this very ``env`` object reuses ``alloc`` (its
    exact-mode allocation, already computed: ``check`` re-checks a large instance without a second run)."""
    token = _KNOWN.set((mech, env, alloc))
    try:
        yield
    finally:
        _KNOWN.reset(token)


def exact_run(mech, env: Environment) -> ExactRun:
    """Run ``mech`` on ``env`` in exact mode (see the module docstring)."""
    known = _KNOWN.get()
    alloc = known[2] if known and known[0] is mech and known[1] is env else mech(env, exact=True)
    info = alloc.info or {}
    rng = _pairs(info.get("total_range"))
    unique = info.get("unique_totals")
    if rng is not None and unique is None:
        unique = all(a == b for a, b in rng)
    if alloc.exact:
        return ExactRun(alloc, True, None, rng, unique, integral_of(mech))
    return ExactRun(alloc, False, _pairs(info.get("total_bounds")), rng, unique, integral_of(mech))


def totals_only_factor(true_env: Environment, rep_env: Environment, j: int, k: int,
                       mask: Optional[Iterable[int]] = None, scale: Any = 1) -> Optional[tuple[Any, Any, Any]]:
    """If ``u_j(scale * bundle_k) = min(a X_k, b X_k, n_j)`` for every split of ``k``'s total ``X_k``
    over the servers ``k`` may use in ``rep_env``, return ``(a, b, n_j)`` (``b = inf`` without external
    demand, ``n_j = inf`` when unbounded); else ``None``."""
    mask_set = set(true_env.eligible[j] if mask is None else mask)
    factors = set()
    for s in range(rep_env.n_servers):
        if not rep_env.usable(k, s):
            continue
        if s not in mask_set:
            factors.add(Fraction(0))
            continue
        f: Any = INF
        for r, dr in enumerate(true_env.d(j, s)):
            if dr > 0:
                q = Fraction(rep_env.d(k, s)[r]) / dr
                if q < f:
                    f = q
        factors.add(f)
    if len(factors) > 1:
        return None
    a = (next(iter(factors)) if factors else Fraction(0))
    b: Any = INF
    for kk, dk in enumerate(true_env.external_demand[j]):
        if dk > 0:
            q = Fraction(rep_env.external_demand[k][kk]) / dk
            b = min(b, q)
    n = true_env.tasks[j] if true_env.tasks[j] is not None else INF
    if not is_inf(a):
        a = a * scale
    if not is_inf(b):
        b = b * scale
    return a, b, n


def _eval_factor(f: tuple[Any, Any, Any], X: Fraction) -> Any:
    a, b, n = f
    vals = []
    for c in (a, b):
        if is_inf(c):
            vals.append(INF if X > 0 else Fraction(0))
        else:
            vals.append(c * X)
    vals.append(n)
    return min(vals)


def utility_interval(true_env: Environment, run: ExactRun, j: int, k: Optional[int] = None,
                     mask: Optional[Iterable[int]] = None, scale: Any = 1,
                     over_range: bool = False) -> Optional[tuple[Any, Any]]:
    """Exact ``(lo, hi)`` of ``u_j(scale * bundle_k)`` (``k`` defaults to ``j``).

    ``over_range=True`` widens to every allocation the mechanism's definition allows (uses
    ``total_range``; returns ``None`` when that is unknown)."""
    k = j if k is None else k
    alloc = run.alloc
    if run.integral and not run.exact:
        return None  # whole tasks depend on the split over servers, which bounds on totals do not give
    if over_range:
        if run.integral:
            return None  # the split over servers matters for whole tasks: robustness unknown
        if run.unique_totals and run.exact:
            rng = None
        elif run.total_range is not None:
            rng = run.total_range
        else:
            return None
        if rng is not None:
            f = totals_only_factor(true_env, alloc.env, j, k, mask, scale)
            if f is None:
                return None
            lo, hi = rng[k]
            return _eval_factor(f, lo), _eval_factor(f, hi)
        if run.unique_totals:
            f = totals_only_factor(true_env, alloc.env, j, k, mask, scale)
            if f is None:
                return None  # totals unique but the split matters: unknown
    if run.exact:
        v = bundle_value(true_env, j, scaled(alloc.bundle(k), scale), mask, run.integral)
        return v, v
    if run.total_bounds is None:
        return None
    f = totals_only_factor(true_env, alloc.env, j, k, mask, scale)
    if f is None:
        return None
    lo, hi = run.total_bounds[k]
    return _eval_factor(f, lo), _eval_factor(f, hi)


@dataclass
class Excess:
    """A certified ``above > below``: both exact intervals, the exact ``gap = above_lo - below_hi > 0``,
    and whether it holds for every allocation the mechanism's definition allows (``None``: unknown)."""

    above: Interval
    below: Interval
    gap: Any
    robust: Optional[bool]


def certified_excess(above: Callable[[bool], Optional[Interval]],
                     below: Callable[[bool], Optional[Interval]]) -> Optional[Excess]:
    """Certify ``above > below`` from interval functions of ``over_range`` (e.g. ``lambda o:
    utility_interval(env, run, j, over_range=o)``); ``None`` if the intervals are unknown or overlap."""
    a, b = above(False), below(False)
    if a is None or b is None:
        return None
    gap = a[0] - b[1]
    if not gap > 0:
        return None
    ra, rb = above(True), below(True)
    return Excess(a, b, gap, None if (ra is None or rb is None) else bool(ra[0] > rb[1]))
