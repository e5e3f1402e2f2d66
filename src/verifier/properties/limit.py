"""limit -- no queue holds more than its DECLARED max (an instance property on queue trees).

Production schedulers cap queues: YARN's maxResources, Kueue's nominalQuota + borrowingLimit, YuniKorn's max,
Volcano's capability.  The model declares the cap as ``queues[].max``, the most of each resource the queue's
SUBTREE may hold, pooled over the servers (docs/model.md, "Declared amounts").  Violated iff some queue ``q``
with a max ``m_q`` holds ``H_q[r] = sum_{j below q} sum_s x[j,s] d[j,s,r] > m_q[r]`` for some resource ``r``.

A max is a hard cap that whole tasks can meet exactly (a task that does not fit under it is not placed), so
both readings make the same check: ``tree`` (divisible tasks) and ``whole-task``.  Measure: the largest ratio
``H_q[r] / m_q[r]`` (``inf`` for a positive holding of a resource whose max is 0; violated iff > 1).  A
mechanism that does not read maxes (``Setting.reads``) is expected to fail it wherever they bind: the verdict
says that the policy ignores the cap.  Searched for mechanisms defined on queue trees (``Setting.hierarchy``),
on trees drawn with maxes (``reads``).
"""
from __future__ import annotations

from mechverify.declared import held, users_below
from mechverify.numbers import FLOAT_REL, fmt_exact

from ..exact import exact_run
from .base import Certificate, Evaluation, Measure, Property, Witness, reading_possible
from .quota import NO_TREE

__all__ = ["Limit", "worst_excess"]

INF = float("inf")


class Limit(Property):
    """limit: every queue's subtree holds at most its declared max."""

    name = "limit"
    title = "declared maxes (limit)"
    measure = Measure("the largest ratio of what a queue holds to its declared max", 1, ">")
    variants = {"tree": "no queue holds more of a resource than its declared max (divisible tasks)",
                "whole-task": "the same with whole tasks (a max is a hard cap: no rounding)"}
    default_variant = "tree"
    reads = ("max",)

    def variant_possible(self, setting, variant):
        """Mechanisms defined on queue trees, under the reading their setting calls for."""
        if not getattr(setting, "hierarchy", False):
            return NO_TREE
        return reading_possible(setting, variant, self.name)

    def applicable(self, mech, env, variant):
        """A tree with a declared max."""
        return None if env.has_maxes else "no queue declares a max"

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The largest ratio of a holding to a max, a candidate in floats."""
        if not env.has_maxes:
            return Evaluation(None, False)
        alloc = alloc or mech(env, exact=exact)
        ratio, q, r = worst_excess(env, alloc.x, exact)
        violated = ratio > 1 if exact else ratio > 1 + FLOAT_REL
        w = Witness(self.name, variant, mech.name, env, None, ratio) if violated else None
        return Evaluation(ratio, violated, w)

    def recheck(self, mech, witness):
        """The excess recomputed on the mechanism's exact allocation, in Fractions."""
        env = witness.env
        if not env.has_maxes:
            return None
        run = exact_run(mech, env)
        if not run.exact:
            return None
        ratio, q, r = worst_excess(env, run.alloc.x, True)
        if not ratio > 1:
            return None
        H, m = held(env, run.alloc.x, users_below(env, q)), env.queue_max[q]
        name, res = env.queues[q], env.resources[r]
        summary = f"queue {name} holds {fmt_exact(H[r])} {res}, above its declared max {fmt_exact(m[r])}"
        return Certificate(witness, H[r] - m[r], ratio, {"allocation": run.alloc},
                           {f"held[{name}].{res}": H[r], f"max[{name}].{res}": m[r]}, None, "", "exact", summary)


def worst_excess(env, x, exact: bool):
    """``(H_q[r] / m_q[r], q, r)`` at its largest over the queues with a max and their resources (``(0, -1,
    -1)`` when nothing is held anywhere a max is declared)."""
    worst = (0, -1, -1)
    for q, m in enumerate(env.queue_max):
        if m is None:
            continue
        H = held(env, x, users_below(env, q), exact)
        for r in range(env.n_resources):
            if not H[r] or (not exact and H[r] <= 1e-12):
                continue
            ratio = INF if not m[r] else (H[r] / m[r] if exact else H[r] / float(m[r]))
            if ratio > worst[0]:
                worst = (ratio, q, r)
    return worst
