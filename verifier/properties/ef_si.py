"""Envy-freeness (EF) and sharing incentive (SI) -- instance properties (no deviation).

EF (weighted; seed 002 Sec. II-A; seed 004 Def. 3; seed 003 Sec. 2.2 with bounds): for all users
``j != k``

    u_j( (w_j / w_k) * A_k ) <= u_j(A_j)

with ``u_j`` THE utility (TRUE demand, Leontief per server, external and ``n_j`` caps).  The ``n_j``
cap makes seed 003's "either x_i = B_i or ..." automatic.  Variants:
* ``placement-aware`` -- only ``k``'s bundles on servers ``j`` may use count (``j``'s eligible set);
* ``literal``         -- every server counts (004 Def. 3 has no placement; with placement this is
  the stricter reading).
Measure: max envy ratio ``u_j(scaled A_k) / u_j(A_j)`` over pairs; violated iff > 1.

SI: user ``j`` must get at least what the weighted equal split gives it,

    u_j(A_j) >= u_j( (w_j / sum_i w_i) * (c, c_er) )      -- a share of every server and external resource.

The three seed definitions are this one formula on our model: seed 002 Sec. III-B (a ``phi`` share of
every server, eligible or not), seed 004 Def. 6 (``min{(1/|J|)/d_er, sum_s min_r (c_sr/|J|)/d_jr, n_j}``),
seed 003 Sec. 2.2 ("x_i = B_i or some resource with x_i d_ij >= c_j/n", i.e. ``x_i >= min(B_i, min_j
(c_j/n)/d_ij)`` on one server).  The variants name which seed's premise is exercised:
``per-server-split`` (always applicable), ``external`` (needs external resources), ``bounded``
(needs task bounds).  Measure: min over users of ``u_j(A_j) / benchmark_j``; violated iff < 1.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from mechverify.utility import si_benchmark as utility_si_benchmark

from ..exact import integral_of, envy_utility, exact_run, own_utility, utility_interval
from .base import Certificate, Evaluation, Property, Witness, ratio

INF = math.inf
FLOAT_REL = 1e-7


def _gt(a, b, exact):
    if exact:
        return a > b
    return float(a) > float(b) + FLOAT_REL * max(1.0, abs(float(b)))


class EnvyFreeness(Property):
    name = "ef"
    title = "envy-freeness (weighted)"
    variants = {
        "placement-aware": "only bundles on servers the envious user may use count (002 II-A with placement)",
        "literal": "every server counts (004 Def. 3)",
    }
    default_variant = "placement-aware"
    threshold = 1

    def claim_variants(self, mech):
        # the seeds' EF compares bundles a user could use; "literal" coincides without placement
        return ("placement-aware",)

    def variant_possible(self, setting, variant):
        if variant == "literal" and not setting.placement:
            return "without placement constraints 'literal' is the same check as 'placement-aware'"
        return None

    def canonical_variant(self, setting, variant):
        return "placement-aware" if not setting.placement else variant

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        alloc = alloc or mech(env, exact=exact)
        aware = variant == "placement-aware"
        worst, pair = None, None
        own = [own_utility(mech, env, alloc, j) for j in range(env.n_users)]
        for j in range(env.n_users):
            for k in range(env.n_users):
                if j == k:
                    continue
                v = envy_utility(mech, env, alloc, j, k, placement_aware=aware)
                r = ratio(v, own[j])
                if worst is None or r > worst:
                    worst, pair = r, (j, k, v)
        if worst is None:
            return Evaluation(Fraction(1), False)
        j, k, v = pair
        violated = _gt(v, own[j], exact)
        w = Witness(self.name, variant, mech.name, env, None, worst, (j, k), {"own": own[j], "envied": v}) \
            if violated else None
        return Evaluation(worst, violated, w)

    def recheck(self, mech, witness):
        env = witness.env
        j, k = witness.users
        run = exact_run(mech, env)
        mask = env.eligible[j] if witness.variant == "placement-aware" else range(env.n_servers)
        scale = env.weight[j] / env.weight[k]
        own = utility_interval(env, run, j)
        envied = utility_interval(env, run, j, k, mask=mask, scale=scale)
        if own is None or envied is None:
            return None
        gap = envied[0] - own[1]
        if not gap > 0:
            return None
        r_own = utility_interval(env, run, j, over_range=True)
        r_env = utility_interval(env, run, j, k, mask=mask, scale=scale, over_range=True)
        robust = None if (r_own is None or r_env is None) else bool(r_env[0] > r_own[1])
        u, v = env.users[j], env.users[k]
        summary = (f"{u} runs {own[1]} tasks with its own bundle but {envied[0]} with "
                   f"{'' if scale == 1 else str(scale) + ' x '}{v}'s bundle")
        return Certificate(witness, Fraction(gap), ratio(envied[0], own[1]), {"allocation": run.alloc},
                           {f"u[{u}] own": own[1], f"u[{u}] of {v}'s bundle": envied[0]}, robust,
                           "", "exact" if run.exact else "interval", summary)


def si_benchmark(env, j, mech=None) -> Any:
    """``u_j((w_j / sum w) * (c, c_er))`` (``mechverify.utility.si_benchmark``); for a mechanism with
    indivisible tasks the split is worth whole tasks, like the user's own bundle."""
    return utility_si_benchmark(env, j, integral=integral_of(mech))


class SharingIncentive(Property):
    name = "si"
    title = "sharing incentive"
    variants = {
        "per-server-split": "a weighted share of every server, eligible or not (002 III-B)",
        "external": "equal split including the external resources (004 Def. 6)",
        "bounded": "equal split capped by the task bound (003 Sec. 2.2)",
    }
    default_variant = "per-server-split"
    higher_is_worse = False
    threshold = 1

    def variant_possible(self, setting, variant):
        if variant == "external" and not setting.external:
            return "the setting has no external resources"
        if variant == "bounded" and not setting.bounds:
            return "the setting has no task bounds"
        return None

    def applicable(self, mech, env, variant):
        if variant == "external" and not env.n_external:
            return "no external resources in this instance"
        if variant == "bounded" and not env.has_bounds:
            return "no task bounds in this instance"
        return None

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        alloc = alloc or mech(env, exact=exact)
        worst, who = None, None
        for j in range(env.n_users):
            b = si_benchmark(env, j, mech)
            u = own_utility(mech, env, alloc, j)
            r = ratio(u, b)
            if worst is None or r < worst:
                worst, who = r, (j, u, b)
        j, u, b = who
        violated = _gt(b, u, exact)
        w = Witness(self.name, variant, mech.name, env, None, worst, (j,), {"own": u, "benchmark": b}) \
            if violated else None
        return Evaluation(worst, violated, w)

    def recheck(self, mech, witness):
        env = witness.env
        (j,) = witness.users
        run = exact_run(mech, env)
        own = utility_interval(env, run, j)
        if own is None:
            return None
        b = si_benchmark(env, j, mech)
        gap = b - own[1]
        if not gap > 0:
            return None
        r_own = utility_interval(env, run, j, over_range=True)
        robust = None if r_own is None else bool(b > r_own[1])
        u = env.users[j]
        return Certificate(witness, Fraction(gap), ratio(own[1], b), {"allocation": run.alloc},
                           {f"u[{u}]": own[1], f"u[{u}] equal split": b}, robust, "",
                           "exact" if run.exact else "interval",
                           f"{u} runs {own[1]} tasks, but {b} with its weighted equal split of every server")
