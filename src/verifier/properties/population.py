"""Population monotonicity (PM; seed 001 Sec. III-C, Prop. 7): when a user leaves (and gives up its
allocation), no remaining user's utility decreases.  Deviation ``leave``.  Measure: min ratio
``u_i(after) / u_i(before)`` over remaining users; violated iff < 1.
"""
from __future__ import annotations

from fractions import Fraction

from mechverify.numbers import FLOAT_REL, InstanceError, plural, ratio
from mechverify.utility import utility

from ..exact import certified_excess, exact_run, utility_interval
from .base import Certificate, Evaluation, Hints, Measure, Property, Witness

__all__ = ["PopulationMonotonicity"]


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
