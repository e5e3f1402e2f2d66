"""Single-server DRF (001 Prop. 4; 000 Sec. III-B): on one server the mechanism gives every user the same
number of tasks as DRF.  Measure: max relative difference of totals; violated iff > 0.  Its ``whole-task``
reading (a user a whole task short of DRF's total that a fair move could give it) is the one BF and SRF use
(:func:`.fairness.whole_task_shortfalls`; the reading is explained in :mod:`.fairness`).
"""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from mechverify.numbers import FLOAT_REL, fmt_exact, plural

from ..exact import exact_run
from .base import Certificate, Evaluation, Hints, Measure, Property, Witness, reading_possible
from .fairness import WHOLE_TASK, whole_task_shortfalls

__all__ = ["SingleServerDRF"]


class SingleServerDRF(Property):
    """On one server the mechanism gives every user DRF's number of tasks (whole tasks: none is a whole task
    short of DRF's)."""

    name = "single-server-drf"
    title = "reduces to DRF on one server"
    measure = Measure("the largest relative difference from DRF's allocation on a single server; whole-task "
                      "reading: the most whole tasks a user is short of DRF's", 0, ">")
    variants = {"totals": "on one server every user's total equals DRF's (001 Prop. 4; 000 Sec. III-B)",
                WHOLE_TASK: "whole tasks, one server: no user runs a whole task fewer than DRF gives it"}
    default_variant = "totals"
    hints = Hints(one_server=True, no_server_demand=True, no_queues=True, uses_users=True,
                  premise_note="one server, no queue tree")

    def variant_possible(self, setting, variant):
        """Indivisible tasks: ``whole-task`` only; divisible (on queue trees too, checked on flat instances):
        ``totals``."""
        return reading_possible(setting, variant, self.name, has=(WHOLE_TASK,))

    def applicable(self, mech, env, variant):
        """Only instances with one server and no queue tree (DRF is flat)."""
        if env.n_servers != 1:
            return "more than one server"
        if env.has_queues:
            return "a queue tree: DRF is flat (no hierarchical DRF to compare with; checked on flat instances)"
        return None

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
        """The max relative difference between the mechanism's and DRF's totals (``whole-task``: the most
        whole tasks a user is short of DRF's total)."""
        why = self.applicable(mech, env, variant)
        if why:
            return Evaluation(None, False, note=why)
        alloc = alloc or mech(env, exact=exact)
        ref = self._reference(env, exact)
        worst, who = Fraction(0), None
        if variant == WHOLE_TASK:
            gaps = [(ref.total(j) - alloc.total(j)) if exact else float(ref.total(j)) - float(alloc.total(j))
                    for j in range(env.n_users)]
            worst, who = whole_task_shortfalls(env, alloc, gaps, [-g for g in gaps], exact)
        for j in range(env.n_users) if variant != WHOLE_TASK else ():
            a, b = alloc.total(j), ref.total(j)
            d = abs(a - b) / max(abs(b), abs(a)) if max(abs(b), abs(a)) else 0
            if d > worst:
                worst, who = d, j
        violated = (worst > 0) if exact or variant == WHOLE_TASK else float(worst) > FLOAT_REL
        w = Witness(self.name, variant, mech.name, env, None, worst, (who,)) if violated else None
        return Evaluation(worst, violated, w)

    def recheck(self, mech, witness):
        """Certified iff the exact totals differ (``whole-task``: the mechanism's total is at least one task
        below DRF's); exact allocations only."""
        env = witness.env
        if self.applicable(mech, env, witness.variant):
            return None
        run = exact_run(mech, env)
        ref = self._reference(env, True)
        if not run.exact:
            return None
        (j,) = witness.users
        a, b = run.alloc.total(j), ref.total(j)
        name = env.users[j]
        if witness.variant == WHOLE_TASK:
            gaps = [Fraction(ref.total(i)) - Fraction(run.alloc.total(i)) for i in range(env.n_users)]
            k, who = whole_task_shortfalls(env, run.alloc, gaps, [-g for g in gaps], True, users=(j,))
            if who is None:
                return None
            return Certificate(witness, Fraction(b) - Fraction(a), Fraction(k),
                               {"allocation": run.alloc, "drf": ref}, {f"x[{name}]": a, f"x[{name}] under DRF": b},
                               True if run.unique_totals else None, "", "exact",
                               f"on one server {name} gets {fmt_exact(a)} {plural(a, 'task')}, DRF gives "
                               f"{fmt_exact(b)} (whole tasks: {k} more {plural(k, 'task')} would fit within it)")
        if a == b:
            return None
        return Certificate(witness, abs(a - b), abs(a - b) / max(abs(a), abs(b)),
                           {"allocation": run.alloc, "drf": ref}, {f"x[{name}]": a, f"x[{name}] under DRF": b},
                           True if run.unique_totals else None, "", "exact",
                           f"on one server {name} gets {a} {plural(a, 'task')}, DRF gives {b}")
