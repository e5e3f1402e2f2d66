"""First-Fit and Best-Fit DRFH for indivisible tasks (seed 001 Sec. V-B).

Progressive filling with whole tasks (``mechanisms.paper.filling``): at every step the scheduler picks the active user with the
lowest weighted global dominant share ``G_j / w_j = x_j max_r D[j,r] / w_j`` (ties: lowest index)
and places ONE task of it on a server where it fits:

* First-Fit: the first server (in instance order) with enough remaining resources;
* Best-Fit: the fitting server minimising eq. (9)
  ``H(j, l) = || D_j / D_{j,r0} - cbar_l / cbar_{l,r0} ||_1``, where ``cbar_l`` is server ``l``'s
  remaining capacity (as a share of the pooled capacity, like ``D``).  The paper normalises by
  resource 1; a user that does not demand resource 1 would divide by zero, so we normalise by the
  user's first demanded resource ``r0`` (identical whenever ``D_{j,1} > 0``).  Ties: lowest index.
  Eq. (9) and its incremental form live in ``mechverify.placement`` (``best_fit_score``,
  ``BestFitHeaps``), shared with ``progressive_filling(..., placement="best-fit")``.

A user with no fitting server, or whose bound ``n_j`` is reached (``floor(n_j)`` whole tasks),
becomes inactive.  Stops when no user is active.  All arithmetic is exact (``Fraction``), so the
result is exact whatever ``--exact`` says.  Eligibility is honoured (placement constraints).
A user demanding nothing at all (only possible with a finite bound) gets ``floor(n_j)`` tasks on
its first eligible server.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import is_inf, whole_fractions
from mechverify.placement import BestFitHeaps, best_fit_score

from .filling import fill_whole_tasks
from .normalisers import global_dominant_share
from ..core.registry import Setting, register
from ..core.z3spec import Z3Spec

MAX_STEPS = 2_000_000

# Seed 001 states no property theorem for the heuristics (only "a fairly good approximation to
# DRFH", Sec. V-B), so they carry no claims: the verifier reports what holds without a paper claim.
_INDIV_CLAIMS: tuple = ()


#: the common denominator per resource above which the fill stays in ``Fraction``s (integers that large would
#: cost more than the fractions they replace)
MAX_SCALE_BITS = 256


def integer_scale(env: Environment) -> Optional[list]:
    """Per resource ``r``, the least common multiple ``L_r`` of the denominators of every server's capacity and
    every user's demand of ``r``: multiplied by it, every number the fill reads is an integer, and every test it
    makes (``remaining >= demand``) and every ratio eq. (9) takes (``d / pooled``, ``remaining / pooled``) is
    unchanged -- one positive factor per resource.  ``None`` when some ``L_r`` exceeds ``MAX_SCALE_BITS`` bits."""
    out = []
    for r in range(env.n_resources):
        dens = {c[r].denominator for c in env.capacity}
        dens.update(d[r].denominator for d in env.demand)
        L = math.lcm(*dens) if dens else 1
        if L.bit_length() > MAX_SCALE_BITS:
            return None
        out.append(L)
    return out


def _progressive_fill(env: Environment, best_fit: bool, name: str) -> Allocation:
    """The fill in integers: capacities and demands multiplied per resource by :func:`integer_scale` (exact, the
    same placements as in ``Fraction``s, tests/mechanisms/test_drfh_integer.py); in ``Fraction``s when a common
    denominator is too large."""
    J, S, R = env.n_users, env.n_servers, env.n_resources
    scale = integer_scale(env)
    if scale is None:
        capacity, demand = [list(c) for c in env.capacity], list(env.demand)
        pooled = env.total_capacity()
    else:
        capacity = [[c[r].numerator * (scale[r] // c[r].denominator) for r in range(R)] for c in env.capacity]
        demand = [tuple(d[r].numerator * (scale[r] // d[r].denominator) for r in range(R)) for d in env.demand]
        # Fractions, so that eq. (9)'s ratios (an integer over the pooled capacity) stay exact
        pooled = tuple(Fraction(sum(c[r] for c in capacity)) for r in range(R))
    remaining = capacity
    x = [[0] * S for _ in range(J)]
    share = [global_dominant_share(env, j) for j in range(J)]
    limit = [math.floor(env.tasks[j]) if env.tasks[j] is not None else None for j in range(J)]
    total = [0] * J

    def server_fits(j: int, s: int) -> bool:
        rem, d = remaining[s], demand[j]
        for r in range(R):
            if rem[r] < d[r]:
                return False
        return True

    def user_open(j: int, _last: int = -1) -> bool:
        return limit[j] is None or total[j] < limit[j]

    def place(j: int, s: int) -> None:
        rem, d = remaining[s], demand[j]
        for r in range(R):
            rem[r] -= d[r]
        x[j][s] += 1
        total[j] += 1

    fits: dict[int, set[int]] = {}
    for j in range(J):
        if not env.eligible[j] or is_inf(share[j]) or not user_open(j):
            continue
        if all(v == 0 for v in env.demand[j]):  # only with a finite bound (the model's guard)
            if limit[j] is not None:
                fits[j] = {min(env.eligible[j])}
            continue
        fs = {s for s in env.eligible[j] if server_fits(j, s)}
        if fs:
            fits[j] = fs
    pick = None
    if best_fit:
        def server_key(j: int, s: int) -> Any:
            return (best_fit_score(demand[j], remaining[s], pooled), s)

        pick, place = _best_fit_heaps(env, remaining, pooled, place, demand)
    else:
        def server_key(j: int, s: int) -> Any:
            return s

        def pick(j: int, fs: set) -> int:  # the scan by server_key, in C: the lowest index
            return min(fs)
    # the key is tasks x G_j / w_j: in integers, each G_j / w_j times the common denominator M of them all
    g = {u: share[u] / env.weight[u] for u in fits}
    M = math.lcm(*(v.denominator for v in g.values())) if g else 1
    per = {u: v.numerator * (M // v.denominator) for u, v in g.items()}
    steps = fill_whole_tasks(fits, lambda u: (total[u] * per[u], u), server_key, place,
                             server_fits, user_open, MAX_STEPS,
                             f"instance: {name} would place more than {MAX_STEPS} whole tasks; "
                             f"scale capacities/demands down", pick_server=pick)
    return Allocation(env, tuple(map(whole_fractions, x)), name, True, {"steps": steps})


def _best_fit_heaps(env: Environment, remaining: list, pooled: tuple, place, demand: Sequence):
    """Best-Fit's server choice by eq. (9) kept in per-user heaps (``mechverify.placement.BestFitHeaps``, the
    one definition of eq. (9) and its incremental form, shared with ``progressive_filling(...,
    placement="best-fit")``): the same server as scanning the fitting servers with ``best_fit_score``, ties included.
    Returns ``(pick_server, place)`` for ``fill_whole_tasks``."""
    heaps = BestFitHeaps(env, remaining, pooled, lambda j, s: demand[j])

    def pick(j: int, fs: set) -> int:
        return heaps.pick(j, fs, fs.__contains__)

    def place_and_update(j: int, s: int) -> None:
        place(j, s)
        heaps.changed(s)

    return pick, place_and_update


_SETTING = Setting(placement=True, external=False, bounds=True, weights=True, divisible=False)


@register("drfh-first-fit", "First-Fit DRFH: progressive filling with whole tasks, first fitting server",
          _SETTING, _INDIV_CLAIMS, source="001 Sec. V-B",
          z3=Z3Spec.none("indivisible tasks (integer allocations): not encoded"))
def drfh_first_fit(env: Environment, exact: bool = False) -> Allocation:
    """First-Fit DRFH (seed 001 Sec. V-B): whole tasks, first fitting server."""
    return _progressive_fill(env, False, "drfh-first-fit")


@register("drfh-best-fit", "Best-Fit DRFH: progressive filling with whole tasks, server by H(i,l) of eq. (9)",
          _SETTING, _INDIV_CLAIMS, source="001 Sec. V-B eq. (9)",
          z3=Z3Spec.none("indivisible tasks (integer allocations): not encoded"))
def drfh_best_fit(env: Environment, exact: bool = False) -> Allocation:
    """Best-Fit DRFH (seed 001 Sec. V-B): whole tasks, the fitting server minimising eq. (9)."""
    return _progressive_fill(env, True, "drfh-best-fit")
