"""Strategy-proofness (SP) and group strategy-proofness (GSP).

SP (seed 001 Sec. III-C "truthfulness"; seed 002 Sec. III-B; seed 004 Def. 5).  For the true
environment ``E`` and the environment ``E'`` in which ONE user ``j`` reports something else (all
others truthful), with ``lambda`` the mechanism and ``u_j`` the TRUE utility (``mechverify.utility``):

    SP holds  iff  u_j(Lambda_j(E)) >= u_j(Lambda_j(E'))   for all E, j, E'.

Misreport spaces (variants):
* ``demand``   -- per-task demands, computational and external (001, 004 Def. 5);
* ``eligible`` -- the set of eligible servers (002: users declare it);
* ``tasks``    -- the number of tasks ``n_j`` (004 Thm. 8).
Measure: regret ``(u_j(E') - u_j(E)) / u_j(E)`` (``inf`` if ``u_j(E) = 0 < u_j(E')``); violated iff > 0.

GSP (seed 003 Sec. 2.2, definition of group strategy-proofness; here in its standard "weak
domination" form): a coalition ``C`` misreports; GSP is violated iff
``u_i(E') >= u_i(E)`` for every ``i in C`` and ``u_i(E') > u_i(E)`` for some ``i in C``.  (Seed 003
states it per member -- "the number of tasks user i can process will be no more than under true
reporting" -- which read literally for every member and every coalition would make GSP imply SP and
forbid any gain even when another member loses; we use the standard definition, under which a
member may sacrifice only if nobody in the coalition loses.)
Measure: the largest relative gain of a member when no member loses (violated iff > 0); when some
member loses, the (negative) worst relative loss.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Iterable, Optional

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError

from ..exact import exact_run, own_utility, utility_interval
from .base import Certificate, Deviation, Evaluation, Property, Report, Witness, ratio, rel_change

INF = math.inf
FLOAT_REL = 1e-7

_FACTORS = [Fraction(0), Fraction(1, 4), Fraction(1, 2), Fraction(2, 3), Fraction(3, 2), Fraction(2), Fraction(4)]


def _gt(a: Any, b: Any, exact: bool) -> bool:
    if exact:
        return a > b
    return float(a) > float(b) + FLOAT_REL * max(1.0, abs(float(b)))


def _simple_fraction(rng, lo: float = 0.25, hi: float = 4.0) -> Fraction:
    return Fraction(rng.uniform(lo, hi)).limit_denominator(8) or Fraction(1, 8)


def demand_reports(env: Environment, j: int, rng, n_random: int = 8) -> Iterable[Report]:
    """Structured and random demand misreports of user ``j`` (deterministic given ``rng``)."""
    d, e = env.demand[j], env.external_demand[j]
    seen = set()

    def emit(nd, ne):
        key = (tuple(nd), tuple(ne))
        if key in seen or (tuple(nd) == tuple(d) and tuple(ne) == tuple(e)):
            return None
        seen.add(key)
        return Report(j, demand=tuple(nd), external_demand=tuple(ne) if env.n_external else None)

    for r in range(env.n_resources):
        for f in _FACTORS:
            nd = list(d)
            nd[r] = d[r] * f if d[r] else (f if f else Fraction(0))
            rep = emit(nd, e)
            if rep:
                yield rep
    for k in range(env.n_external):
        for f in _FACTORS:
            ne = list(e)
            ne[k] = e[k] * f if e[k] else f
            rep = emit(d, ne)
            if rep:
                yield rep
    top = max(d) if d else Fraction(0)
    rep = emit([top] * len(d), e)  # flatten to the largest entry
    if rep:
        yield rep
    for _ in range(n_random):
        nd = [v * _simple_fraction(rng) if v else (Fraction(0) if rng.random() < 0.7 else _simple_fraction(rng))
              for v in d]
        ne = [v * _simple_fraction(rng) if v else v for v in e]
        rep = emit(nd, ne)
        if rep:
            yield rep


def eligible_reports(env: Environment, j: int, rng, limit: int = 64) -> Iterable[Report]:
    S = env.n_servers
    true = env.eligible[j]
    cands = []
    for size in range(S + 1):
        for sub in itertools.combinations(range(S), size):
            fs = frozenset(sub)
            if fs != true:
                cands.append(fs)
    # subsets of the true set first (hiding servers), then the rest
    cands.sort(key=lambda fs: (not fs <= true, len(fs ^ true)))
    for fs in cands[:limit]:
        yield Report(j, eligible=fs)


def task_reports(env: Environment, j: int, rng) -> Iterable[Report]:
    n = env.tasks[j]
    opts: list[Any] = [None] if n is not None else []
    base = n if n is not None else Fraction(1)
    for f in (Fraction(0), Fraction(1, 2), Fraction(2), Fraction(3, 2), Fraction(10)):
        opts.append(base * f)
    for v in opts:
        if v != n:
            yield Report(j, tasks=v)


def _reports(env: Environment, j: int, variant: str, rng) -> Iterable[Report]:
    if variant == "demand":
        return demand_reports(env, j, rng)
    if variant == "eligible":
        return eligible_reports(env, j, rng)
    return task_reports(env, j, rng)


def _run(mech, env: Environment, exact: bool) -> Optional[Allocation]:
    try:
        return mech(env, exact=exact)
    except InstanceError:
        return None  # the deviation leaves the mechanism's setting: not a valid misreport


class StrategyProofness(Property):
    name = "sp"
    title = "strategy-proofness"
    variants = {
        "demand": "misreport per-task demands (computational and external); 001 III-C, 004 Def. 5",
        "eligible": "misreport the set of eligible servers; 002 Sec. III-B",
        "tasks": "misreport the number of tasks n_j; 004 Thm. 8",
    }
    default_variant = "demand"
    needs_deviation = True

    def applicable(self, mech, env, variant):
        if variant == "eligible" and not mech.setting.placement:
            return "the mechanism's setting has no placement constraints"
        if variant == "tasks" and not mech.setting.bounds:
            return "the mechanism's setting has no task bounds"
        return None

    def claim_variants(self, mech):
        # "SP" in the seeds means demand misreports; with placement constraints users also declare
        # their eligible servers (002 Sec. III-B).  Task-count misreports only where claimed (004 Thm 8).
        return ("demand", "eligible") if mech.setting.placement else ("demand",)

    def variant_possible(self, setting, variant):
        if variant == "eligible" and not setting.placement:
            return "the setting has no placement constraints (no eligible sets to misreport)"
        if variant == "tasks" and not setting.bounds:
            return "the setting has no task bounds"
        return None

    def deviations(self, mech, env, variant, rng):
        for j in range(env.n_users):
            for rep in _reports(env, j, variant, rng):
                yield Deviation("misreport", (rep,))

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        if deviation is None:
            raise ValueError("sp.evaluate needs a deviation (use deviations() or an engine)")
        try:
            env_d = deviation.apply(env)
        except InstanceError as exc:
            return Evaluation(None, False, note=f"invalid misreport: {exc}")
        alloc = alloc or mech(env, exact=exact)
        alloc_d = _run(mech, env_d, exact)
        if alloc_d is None:
            return Evaluation(None, False, note="misreport outside the mechanism's setting")
        (j,) = deviation.users
        u, u2 = own_utility(mech, env, alloc, j), own_utility(mech, env, alloc_d, j)
        measure = rel_change(u2, u)
        violated = _gt(u2, u, exact)
        w = None
        if violated:
            w = Witness(self.name, variant, mech.name, env, deviation, measure, (j,),
                        {"truthful": u, "misreport": u2})
        return Evaluation(measure, violated, w)

    def recheck(self, mech, witness):
        env, dev = witness.env, witness.deviation
        (j,) = dev.users
        run_t = exact_run(mech, env)
        run_d = exact_run(mech, dev.apply(env))
        it = utility_interval(env, run_t, j)
        id_ = utility_interval(env, run_d, j)
        if it is None or id_ is None:
            return None
        gap = id_[0] - it[1]
        if not gap > 0:
            return None
        exact_both = run_t.exact and run_d.exact
        rt = utility_interval(env, run_t, j, over_range=True)
        rd = utility_interval(env, run_d, j, over_range=True)
        robust = None if (rt is None or rd is None) else bool(rd[0] > rt[1])
        measure = ratio(gap, it[1]) if exact_both else ratio(id_[0] - it[1], it[1])
        name = env.users[j]
        summary = (f"{name} truthful gets {_s(it)} tasks; after '{dev.describe(env)}' it really runs {_s(id_)} "
                   f"tasks (gain {gap})")
        return Certificate(witness, Fraction(gap), measure, {"truthful": run_t.alloc, "deviation": run_d.alloc},
                           {f"u[{name}] truthful": it[1] if exact_both else it,
                            f"u[{name}] misreport": id_[0] if exact_both else id_},
                           robust, "" if robust is not None else "uniqueness of the allocation is not established",
                           "exact" if exact_both else "interval", summary)


def _s(iv) -> str:
    lo, hi = iv
    return str(lo) if lo == hi else f"[{lo}, {hi}]"


class GroupStrategyProofness(Property):
    name = "gsp"
    title = "group strategy-proofness"
    variants = {"demand": "a coalition misreports per-task demands; 003 Sec. 2.2 (weak-domination form)"}
    default_variant = "demand"
    needs_deviation = True

    def deviations(self, mech, env, variant, rng):
        J = env.n_users
        for size in range(2, min(J, 3) + 1):
            for coal in itertools.combinations(range(J), size):
                per_user = {j: list(demand_reports(env, j, rng, n_random=3))[:6] for j in coal}
                for _ in range(6):
                    reps = tuple(rng.choice(per_user[j]) for j in coal if per_user[j])
                    if len(reps) == size:
                        yield Deviation("misreport", reps)

    def _measure(self, before, after):
        changes = [rel_change(a, b) for b, a in zip(before, after)]
        if any(a < b for b, a in zip(before, after)):
            return min(changes)
        return max(changes)

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        if deviation is None:
            raise ValueError("gsp.evaluate needs a deviation")
        try:
            env_d = deviation.apply(env)
        except InstanceError as exc:
            return Evaluation(None, False, note=f"invalid misreport: {exc}")
        alloc = alloc or mech(env, exact=exact)
        alloc_d = _run(mech, env_d, exact)
        if alloc_d is None:
            return Evaluation(None, False, note="misreport outside the mechanism's setting")
        users = deviation.users
        before = [own_utility(mech, env, alloc, j) for j in users]
        after = [own_utility(mech, env, alloc_d, j) for j in users]
        tol = 0 if exact else FLOAT_REL
        none_loses = all(float(a) >= float(b) - tol * max(1.0, abs(float(b))) for b, a in zip(before, after))
        some_gains = any(_gt(a, b, exact) for b, a in zip(before, after))
        measure = self._measure(before, after)
        violated = none_loses and some_gains
        w = Witness(self.name, variant, mech.name, env, deviation, measure, users,
                    {"truthful": before, "misreport": after}) if violated else None
        return Evaluation(measure, violated, w)

    def recheck(self, mech, witness):
        env, dev = witness.env, witness.deviation
        run_t, run_d = exact_run(mech, env), exact_run(mech, dev.apply(env))
        ivs = []
        for j in dev.users:
            a, b = utility_interval(env, run_t, j), utility_interval(env, run_d, j)
            if a is None or b is None:
                return None
            ivs.append((a, b))
        # certified: every member's lowest possible new utility >= its highest old one, one strictly
        if not all(b[0] >= a[1] for a, b in ivs):
            return None
        gains = [b[0] - a[1] for a, b in ivs]
        gap = max(gains)
        if not gap > 0:
            return None
        exact_both = run_t.exact and run_d.exact
        utils = {}
        for j, (a, b) in zip(dev.users, ivs):
            utils[f"u[{env.users[j]}] truthful"] = a[1] if exact_both else a
            utils[f"u[{env.users[j]}] coalition"] = b[0] if exact_both else b
        robust = None
        rr = [(utility_interval(env, run_t, j, over_range=True), utility_interval(env, run_d, j, over_range=True))
              for j in dev.users]
        if all(a is not None and b is not None for a, b in rr):
            robust = all(b[0] >= a[1] for a, b in rr) and any(b[0] > a[1] for a, b in rr)
        summary = f"coalition {', '.join(env.users[j] for j in dev.users)}: '{dev.describe(env)}'; nobody loses, gain {gap}"
        return Certificate(witness, Fraction(gap), self._measure([a[1] for a, _ in ivs], [b[0] for _, b in ivs]),
                           {"truthful": run_t.alloc, "deviation": run_d.alloc}, utils, robust, "",
                           "exact" if exact_both else "interval", summary)
