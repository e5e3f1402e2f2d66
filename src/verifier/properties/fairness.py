"""Bottleneck fairness (BF), single-resource fairness (SRF), population monotonicity (PM) and the
single-server reduction to DRF.

BF and SRF share one check, *max-min fairness on one resource* ``r*``: with
``a_j = x_j d[j,r*]`` the amount of ``r*`` user ``j`` holds, the allocation must be the weighted
max-min fair (leximin) allocation of ``a_j / w_j`` over the mechanism's feasible set chi(E).  The
leximin score vector is unique, so the check compares each user's level with the leximin level
computed by the shared solver; the allocation fails iff some user is below its level (if all
were at or above, the mechanism's vector would beat the leximin optimum).  Measure: the largest
relative shortfall ``(fair_j - a_j/w_j) / fair_j``; violated iff > 0.  When several resources
satisfy the premise, a violation is reported only if the check fails for every one of them.

* BF ``global`` (seed 001 Sec. III-C): premise -- all users have the same global dominant resource
  ``r* in argmax_r d[j,r] / C_r`` (pooled capacities ``C_r``).
* BF ``per-server`` (seeds 000/002 Sec. II/III, Thm. 3 proof): premise -- one resource ``r*`` is
  dominant for every user at every server it can use: ``r* in argmax_r d[j,r] / c[s,r]``.
* SRF (001 Sec. III-C; 000 Sec. II-A): premise -- a single resource, no external resources, one demand
  per user (no per-server demand overrides).

PM (seed 001 Sec. III-C, Prop. 7): when a user leaves (and gives up its allocation), no remaining
user's utility decreases.  Deviation ``leave``.  Measure: min ratio ``u_i(after) / u_i(before)`` over
remaining users; violated iff < 1.

Single-server DRF (001 Prop. 4; 000 Sec. III-B): on one server the mechanism gives every user the
same number of tasks as DRF.  Measure: max relative difference of totals; violated iff > 0.
"""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from mechverify.allocation import Allocation
from mechverify.lexmaxmin import lex_max_min
from mechverify.numbers import FLOAT_REL, InstanceError, plural, ratio
from mechverify.polytope import TaskPolytope
from mechverify.utility import utility

from ..exact import certified_excess, exact_run, utility_interval
from .base import Certificate, Evaluation, Hints, Measure, Property, Witness

__all__ = ["BottleneckFairness", "SingleResourceFairness", "PopulationMonotonicity", "SingleServerDRF",
           "common_dominant_resources", "fair_levels", "mech_levels"]

_BF_NOTE = "each user's demand of r1 raised so that r1 is dominant (the BF premise); instances where the premise " \
           "still fails are skipped"


def common_dominant_resources(env, variant: str) -> list[int]:
    """Resources satisfying the BF premise of ``variant`` (empty list: premise fails)."""
    R = env.n_resources
    if env.n_external:
        return []
    cand = set(range(R))
    if variant == "global":
        pooled = env.total_capacity()
        for j in range(env.n_users):
            if env.has_server_demand:
                return []
            shares = [env.demand[j][r] / pooled[r] if pooled[r] else None for r in range(R)]
            if any(s is None and env.demand[j][r] > 0 for r, s in enumerate(shares)):
                return []
            vals = [s if s is not None else Fraction(0) for s in shares]
            top = max(vals)
            if top == 0:
                return []
            cand &= {r for r in range(R) if vals[r] == top}
    else:
        any_usable = False
        for j in range(env.n_users):
            for s in env.eligible[j]:
                if not env.usable(j, s):
                    continue
                any_usable = True
                d, c = env.d(j, s), env.capacity[s]
                vals = [d[r] / c[r] if c[r] else (None if d[r] else Fraction(0)) for r in range(R)]
                top = max(v for v in vals if v is not None)
                cand &= {r for r in range(R) if vals[r] == top and top > 0}
        if not any_usable:
            return []
    return sorted(cand)


def fair_levels(env, rstar: int, mode: str, exact: bool):
    """Leximin levels of ``a_j / w_j`` with ``a_j = sum_s x[j,s] d[j,s,r*]`` over chi(E)."""
    poly = TaskPolytope(env, mode=mode, placement=True, external=True, bounds=True)
    scores = []
    for j in range(env.n_users):
        form = {c: env.d(j, s)[rstar] / env.weight[j] for s, c in poly.user_vars[j] if env.d(j, s)[rstar]}
        scores.append(form)
    res = lex_max_min(poly.lp, scores, exact=exact)
    return [lv if lv is not None else (Fraction(0) if exact else 0.0) for lv in res.levels], poly.matrix(res.x, exact)


def mech_levels(env, alloc, rstar: int):
    """Each user's ``a_j / w_j`` (its holding of ``r*`` per unit weight) under ``alloc``."""
    return [sum((alloc.x[j][s] * env.d(j, s)[rstar] for s in range(env.n_servers)), 0) / env.weight[j]
            for j in range(env.n_users)]


def _shortfall(fair, have):
    worst, who = Fraction(0), None
    for j, (f, h) in enumerate(zip(fair, have)):
        if f > 0:
            r = (f - h) / f
            if r > worst:
                worst, who = r, j
    return worst, who


class _MaxMinOnResource(Property):
    """BF and SRF: weighted max-min fairness on a premise resource ``r*`` (module docstring)."""


    def premise(self, env, variant) -> list[int]:
        """The resources satisfying the premise of ``variant`` at ``env`` (empty: it fails)."""
        raise NotImplementedError

    def applicable(self, mech, env, variant):
        """Applies iff some resource satisfies the premise."""
        if not self.premise(env, variant):
            return self.premise_text(variant)
        return None

    def premise_text(self, variant) -> str:
        """Why the premise of ``variant`` fails (the ``not applicable`` reason)."""
        return "premise fails"

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The largest relative shortfall from the leximin levels (best premise resource)."""
        cands = self.premise(env, variant)
        if not cands:
            return Evaluation(None, False, note=self.premise_text(variant))
        alloc = alloc or mech(env, exact=exact)
        best = None
        for r in cands:
            fair, _ = fair_levels(env, r, mech.setting.feasibility, exact)
            m, who = _shortfall(fair, mech_levels(env, alloc, r))
            if best is None or m < best[0]:
                best = (m, who)
        m, who = best
        violated = (m > 0) if exact else float(m) > FLOAT_REL
        w = Witness(self.name, variant, mech.name, env, None, m, (who,) if who is not None else ()) \
            if violated else None
        return Evaluation(m, violated, w)

    def recheck(self, mech, witness):
        """Certified iff the exact check fails on every premise resource."""
        env = witness.env
        run = exact_run(mech, env)
        if not run.exact:
            return None  # levels need the split over servers; no interval form implemented
        best = None
        for r in self.premise(env, witness.variant):
            fair, fair_x = fair_levels(env, r, mech.setting.feasibility, exact=True)
            have = mech_levels(env, run.alloc, r)
            m, who = _shortfall(fair, have)
            if not m > 0:
                return None  # fair on some premise resource: no violation
            if best is None or m < best[0]:
                best = (m, who, r, fair, have, fair_x)
        if best is None:
            return None
        m, who, r, fair, have, fair_x = best
        name, res = env.users[who], env.resources[r]
        gap = fair[who] - have[who]
        w = env.weight[who]
        return Certificate(witness, Fraction(gap), m,
                           {"allocation": run.alloc, "max-min fair": Allocation(env, fair_x, "max-min fair", True)},
                           {f"{res}[{name}]/w mechanism": have[who], f"{res}[{name}]/w max-min fair": fair[who]},
                           True if run.unique_totals else None, "",
                           "exact", f"{name} holds {have[who] * w} of {res}; max-min fairness on {res} gives it {fair[who] * w}")


class BottleneckFairness(_MaxMinOnResource):
    """BF: with a common dominant resource, the allocation is weighted max-min fair on it."""

    name = "bf"
    title = "bottleneck fairness"
    measure = Measure("the largest relative shortfall on the common bottleneck resource from its weighted max-min "
                      "fair allocation", 0, ">")
    variants = {
        "global": "all users share one global dominant resource -> weighted max-min fair on it (001 III-C)",
        "per-server": "one resource dominant for every user at every usable server (000/002)",
    }
    default_variant = "per-server"
    variant_hints = {v: Hints(no_external=True, no_server_demand=True, dominant=v, premise_note=_BF_NOTE)
                     for v in ("global", "per-server")}

    def premise(self, env, variant):
        """The common dominant resources of ``variant`` (``common_dominant_resources``)."""
        return common_dominant_resources(env, variant)

    def premise_text(self, variant):
        """Why the premise of ``variant`` fails."""
        return ("users do not share one global dominant resource" if variant == "global"
                else "no resource is dominant for every user at every usable server")


class SingleResourceFairness(_MaxMinOnResource):
    """SRF: with one resource type, the allocation is weighted max-min fair on it."""

    name = "srf"
    title = "single-resource fairness"
    measure = Measure("the largest relative shortfall on the single resource from its weighted max-min fair "
                      "allocation", 0, ">")
    variants = {"max-min": "one resource type -> weighted max-min fair allocation of it (001 III-C)"}
    default_variant = "max-min"
    hints = Hints(one_resource=True, no_external=True, no_server_demand=True,
                  premise_note="one resource, no external resources, no per-server demands")

    def premise(self, env, variant):
        # one resource type, and one demand per user: with per-server demand overrides (002 Sec. IV,
        # co-processors -- "future work" there) "max-min fair on the resource" no longer says anything
        # about tasks, and no seed defines or claims SRF for it
        """Resource 0 when there is one resource type and nothing else; else none."""
        return [0] if env.n_resources == 1 and not env.n_external and not env.has_server_demand else []

    def premise_text(self, variant):
        """Why the premise fails."""
        return "more than one resource type (or external resources, or per-server demands)"


class PopulationMonotonicity(Property):
    """PM: when a user leaves, no remaining user loses."""

    name = "pm"
    title = "population monotonicity"
    measure = Measure("the smallest ratio of a remaining user's tasks after a departure to its tasks before", 1, "<")
    variants = {"leave": "one user leaves and relinquishes its allocation (001 Prop. 7)"}
    default_variant = "leave"
    hints = Hints(deviation="leave", min_users=2, uses_users=True)

    def applicable(self, mech, env, variant):
        """Someone must remain when a user leaves: at least 2 users."""
        return "needs at least 2 users" if env.n_users < 2 else None

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The min ratio of a remaining user's utility after the departure to before."""
        if deviation is None:
            raise ValueError("pm.evaluate needs a deviation")
        alloc = alloc or mech(env, exact=exact)
        sub = deviation.apply(env)
        after_alloc = mech(sub, exact=exact)
        remaining = [j for j in range(env.n_users) if j not in deviation.leave]
        worst, who = None, None
        for i, j in enumerate(remaining):
            b = utility(env, alloc, j)
            a = utility(sub, after_alloc, i)
            r = ratio(a, b)
            if worst is None or r < worst:
                worst, who = r, (j, b, a)
        j, b, a = who
        violated = (a < b) if exact else float(a) < float(b) * (1 - FLOAT_REL) - FLOAT_REL
        w = Witness(self.name, variant, mech.name, env, deviation, worst, (j,)) if violated else None
        return Evaluation(worst, violated, w)

    def recheck(self, mech, witness):
        """Certified iff a remaining user's lower utility before exceeds its upper one after."""
        env, dev = witness.env, witness.deviation_of("leave")
        if len(witness.users) != 1 or witness.users[0] in dev.leave:
            raise InstanceError(f"users: {self.name} names one user who stays, got "
                                f"{[env.users[j] for j in witness.users]}")
        (j,) = witness.users
        sub = dev.apply(env)
        i = [jj for jj in range(env.n_users) if jj not in dev.leave].index(j)
        run_b, run_a = exact_run(mech, env), exact_run(mech, sub)
        ex = certified_excess(lambda o: utility_interval(env, run_b, j, over_range=o),
                              lambda o: utility_interval(sub, run_a, i, over_range=o))
        if ex is None:
            return None
        b, a, gap, robust = ex.above, ex.below, ex.gap, ex.robust
        name = env.users[j]
        return Certificate(witness, Fraction(gap), ratio(a[1], b[0]), {"before": run_b.alloc, "after": run_a.alloc},
                           {f"u[{name}] before": b[0], f"u[{name}] after": a[1]}, robust, "",
                           "exact" if run_a.exact and run_b.exact else "interval",
                           f"after '{dev.describe(env)}', {name} drops from {b[0]} to {a[1]} {plural(a[1], 'task')}")


class SingleServerDRF(Property):
    """On one server the mechanism gives every user DRF's number of tasks."""

    name = "single-server-drf"
    title = "reduces to DRF on one server"
    measure = Measure("the largest relative difference from DRF's allocation on a single server", 0, ">")
    variants = {"totals": "on one server every user's total equals DRF's (001 Prop. 4; 000 Sec. III-B)"}
    default_variant = "totals"
    hints = Hints(one_server=True, no_server_demand=True, uses_users=True, premise_note="one server")

    def applicable(self, mech, env, variant):
        """Only instances with one server."""
        return None if env.n_servers == 1 else "more than one server"

    def _drf(self):
        from mechanisms import get

        return get("drf")

    def _reference(self, env, exact):
        """DRF's allocation of ``env``.  On one server a per-server demand (seed 002 Sec. IV) is just the
        user's demand; DRF does not take ``server_demand``, so it is folded into ``demand`` first."""
        if env.has_server_demand:
            env = replace(env, demand=tuple(env.d(j, 0) for j in range(env.n_users)), server_demand={})
        return self._drf()(env, exact=exact)

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The max relative difference between the mechanism's and DRF's totals."""
        if env.n_servers != 1:
            return Evaluation(None, False, note="more than one server")
        alloc = alloc or mech(env, exact=exact)
        ref = self._reference(env, exact)
        worst, who = Fraction(0), None
        for j in range(env.n_users):
            a, b = alloc.total(j), ref.total(j)
            d = abs(a - b) / max(abs(b), abs(a)) if max(abs(b), abs(a)) else 0
            if d > worst:
                worst, who = d, j
        violated = (worst > 0) if exact else float(worst) > FLOAT_REL
        w = Witness(self.name, variant, mech.name, env, None, worst, (who,)) if violated else None
        return Evaluation(worst, violated, w)

    def recheck(self, mech, witness):
        """Certified iff the exact totals differ (exact allocations only)."""
        env = witness.env
        run = exact_run(mech, env)
        ref = self._reference(env, True)
        if not run.exact:
            return None
        (j,) = witness.users
        a, b = run.alloc.total(j), ref.total(j)
        if a == b:
            return None
        name = env.users[j]
        return Certificate(witness, abs(a - b), abs(a - b) / max(abs(a), abs(b)),
                           {"allocation": run.alloc, "drf": ref}, {f"x[{name}]": a, f"x[{name}] under DRF": b},
                           True if run.unique_totals else None, "", "exact",
                           f"on one server {name} gets {a} {plural(a, 'task')}, DRF gives {b}")
