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
``u_i(E') >= u_i(E)`` for every ``i in C`` and ``u_i(E') > u_i(E)`` for some ``i in C`` (why this
reading of seed 003: docs/properties.md, "Readings of the seeds").
Measure: the largest relative gain of a member when no member loses (violated iff > 0); when some
member loses, the (negative) worst relative loss.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Optional, Union

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import FLOAT_REL, InstanceError, gt, plural, ratio, rel_change

from ..exact import certified_excess, exact_run, own_utility, utility_interval
from .base import Certificate, Deviation, Evaluation, Hints, Measure, Property, Witness

__all__ = ["StrategyProofness", "GroupStrategyProofness"]


def _run(mech, env: Environment, exact: bool) -> Optional[Allocation]:
    try:
        return mech(env, exact=exact)
    except InstanceError:
        return None  # the deviation leaves the mechanism's setting: not a valid misreport


def _deviated(prop: Property, mech, env: Environment, deviation: Optional[Deviation], exact: bool,
              alloc: Optional[Allocation]) -> Union[Evaluation, tuple[Allocation, Allocation]]:
    """The truthful and the deviated allocations, or an ``Evaluation`` saying why there is no measure."""
    if deviation is None:
        raise ValueError(f"{prop.name}.evaluate needs a deviation (use deviations() or an engine)")
    try:
        env_d = deviation.apply(env)
    except InstanceError as exc:
        return Evaluation(None, False, note=f"invalid misreport: {exc}")
    alloc = alloc or mech(env, exact=exact)
    alloc_d = _run(mech, env_d, exact)
    if alloc_d is None:
        return Evaluation(None, False, note="misreport outside the mechanism's setting")
    return alloc, alloc_d


# The truthful allocation a batch of deviations is compared with, and its users' utilities: an engine
# passes ONE allocation (``alloc=``) for many deviations of one environment, so each truthful utility is
# computed once.  Replaced (never mutated across allocations) when another allocation comes in.
_TRUTHFUL: tuple = (None, None, {})


def _truthful_utility(mech, env: Environment, alloc: Allocation, j: int):
    global _TRUTHFUL
    last = _TRUTHFUL
    if last[0] is not alloc or last[1] is not env:
        last = (alloc, env, {})
        _TRUTHFUL = last
    memo = last[2]
    if j not in memo:
        memo[j] = own_utility(mech, env, alloc, j)
    return memo[j]


def _s(iv) -> str:
    lo, hi = iv
    return str(lo) if lo == hi else f"[{lo}, {hi}]"


class StrategyProofness(Property):
    """SP: no single user gains by misreporting (module docstring)."""

    name = "sp"
    title = "strategy-proofness"
    measure = Measure("the deviator's regret (u' - u)/u: relative gain in TRUE tasks from misreporting", 0, ">")
    variants = {
        "demand": "misreport per-task demands (computational and external); 001 III-C, 004 Def. 5",
        "eligible": "misreport the set of eligible servers; 002 Sec. III-B",
        "tasks": "misreport the number of tasks n_j; 004 Thm. 8",
    }
    default_variant = "demand"
    hints = Hints(deviation="demand", optimizer=True)
    z3 = "verifier.engines.smt.goals.sp"  # its z3 goal (docs/z3.md, "Goals")
    variant_hints = {"eligible": Hints(deviation="eligible", optimizer=True),
                     "tasks": Hints(deviation="tasks", optimizer=True)}

    def applicable(self, mech, env, variant):
        """``eligible`` / ``tasks`` need placement constraints / task bounds in the setting."""
        if variant == "eligible" and not mech.setting.placement:
            return "the mechanism's setting has no placement constraints"
        if variant == "tasks" and not mech.setting.bounds:
            return "the mechanism's setting has no task bounds"
        return None

    def claim_variants(self, mech):
        """The variants a paper's plain SP claim covers: demand misreports; with placement constraints users
        also declare their eligible servers (002 Sec. III-B).  Task-count misreports only where claimed
        (004 Thm 8)."""
        return ("demand", "eligible") if mech.setting.placement else ("demand",)

    def variant_possible(self, setting, variant):
        """As ``applicable``, for a setting."""
        if variant == "eligible" and not setting.placement:
            return "the setting has no placement constraints (no eligible sets to misreport)"
        if variant == "tasks" and not setting.bounds:
            return "the setting has no task bounds"
        return None

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The deviator's regret ``(u' - u)/u``; a candidate if it gains."""
        runs = _deviated(self, mech, env, deviation, exact, alloc)
        if isinstance(runs, Evaluation):
            return runs
        alloc, alloc_d = runs
        (j,) = deviation.users
        u, u2 = _truthful_utility(mech, env, alloc, j), own_utility(mech, env, alloc_d, j)
        measure = rel_change(u2, u)
        violated = gt(u2, u, exact)
        w = None
        if violated:
            w = Witness(self.name, variant, mech.name, env, deviation, measure, (j,))
        return Evaluation(measure, violated, w)

    def recheck(self, mech, witness):
        """Certified iff the deviator's lower utility after exceeds its upper one before."""
        env, dev = witness.env, witness.deviation_of("misreport", users=1)
        (j,) = dev.users
        run_t = exact_run(mech, env)
        run_d = exact_run(mech, dev.apply(env))
        ex = certified_excess(lambda o: utility_interval(env, run_d, j, over_range=o),
                              lambda o: utility_interval(env, run_t, j, over_range=o))
        if ex is None:
            return None
        it, id_, gap, robust = ex.below, ex.above, ex.gap, ex.robust
        exact_both = run_t.exact and run_d.exact
        name = env.users[j]
        summary = (f"{name} truthful gets {_s(it)} {plural(_s(it), 'task')}; after '{dev.describe(env)}' it really "
                   f"runs {_s(id_)} {plural(_s(id_), 'task')} (gain {gap})")
        return Certificate(witness, Fraction(gap), ratio(gap, it[1]),
                           {"truthful": run_t.alloc, "deviation": run_d.alloc},
                           {f"u[{name}] truthful": it[1] if exact_both else it,
                            f"u[{name}] misreport": id_[0] if exact_both else id_},
                           robust, "" if robust is not None else "uniqueness of the allocation is not established",
                           "exact" if exact_both else "interval", summary)


class GroupStrategyProofness(Property):
    """GSP: no coalition gains by misreporting without a member losing (module docstring)."""

    name = "gsp"
    title = "group strategy-proofness"
    measure = Measure("the coalition's gain: relative change in TRUE tasks of its members after a joint misreport "
                      "(violated when no member loses and one gains)", 0, ">")
    variants = {"demand": "a coalition misreports per-task demands; 003 Sec. 2.2 (weak-domination form)"}
    default_variant = "demand"
    hints = Hints(deviation="coalition", min_users=2, optimizer=True)

    @staticmethod
    def _measure(before, after):
        changes = [rel_change(a, b) for b, a in zip(before, after)]
        if any(a < b for b, a in zip(before, after)):
            return min(changes)
        return max(changes)

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """Largest member gain when nobody loses (else the worst loss); a candidate if so."""
        runs = _deviated(self, mech, env, deviation, exact, alloc)
        if isinstance(runs, Evaluation):
            return runs
        alloc, alloc_d = runs
        users = deviation.users
        before = [_truthful_utility(mech, env, alloc, j) for j in users]
        after = [own_utility(mech, env, alloc_d, j) for j in users]
        tol = 0 if exact else FLOAT_REL
        none_loses = all(float(a) >= float(b) - tol * max(1.0, abs(float(b))) for b, a in zip(before, after))
        some_gains = any(gt(a, b, exact) for b, a in zip(before, after))
        measure = self._measure(before, after)
        violated = none_loses and some_gains
        w = Witness(self.name, variant, mech.name, env, deviation, measure, users) if violated else None
        return Evaluation(measure, violated, w)

    def recheck(self, mech, witness):
        """Certified iff no member's utility can drop and some member's certainly rises."""
        env, dev = witness.env, witness.deviation_of("misreport")
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
