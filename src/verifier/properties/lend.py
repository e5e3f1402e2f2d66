"""lend -- a policy that LENDS idle capacity lends it: no user that asks for more is refused what sits idle
within its queues' declared maxes (an instance property on queue trees).

Kueue and YARN let a queue borrow what the others leave idle, up to a cap (Kueue: a ClusterQueue borrows its
cohort's unused nominal quota up to ``borrowingLimit``; YARN: a queue grows past its minResources up to
maxResources while capacity is free); the model's cap is the queue's declared ``max`` (docs/model.md,
"Declared amounts").  The borrowing reading of such a policy: at the end of its allocation no user ``j``
that asks for more (below its task bound and external limit) could have been given more from capacity
nobody holds.  Violated iff for some such ``j`` the ``rest`` it is refused fits:

* in the free capacity of the servers ``j`` may use (``eligible``, ``free[s][r] = c[s][r] - what every
  task placed there uses``), packed server by server (``sum_s floor(min_r free[s][r] / d[j,s,r]) >= rest``;
  divisible tasks: the fractional sum), and in the free external resources, and
* within the declared max of every queue on ``j``'s path (``H_q + rest * d[j] <= max_q``, pooled).

``rest`` is what ``j`` is refused: ONE more task (divisible tasks: any positive amount) -- or, for a policy
that admits whole requests (``Setting.whole_requests``: Kueue admits a workload's pods together), THE REST
OF ITS REQUEST, ``min(n_j, external limit) - u_j``, since such a policy does not place a part.  Both readings (``tree``, ``whole-task``) make that
check, the whole-task one in whole tasks.  Searched only for settings that declare they lend
(``Setting.lends``: kueue-drs, yarn-drf, yarn-capacity, or a user's ``lends=True``) on trees drawn with
guarantees and maxes (``reads``).  Measure: what is refused (for a divisible policy, the amount that
fits); 0 when nobody is refused; violated iff > 0.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Iterator, Optional

from mechverify.declared import free_capacity, held, users_below
from mechverify.numbers import FLOAT_REL, fmt_exact

from ..exact import exact_run, integral_of, own_utility
from .base import Certificate, Evaluation, Measure, Property, Witness, reading_possible
from .quota import NO_TREE

__all__ = ["Lend", "refused", "refusals"]

NOT_LENDING = "the policy does not declare that it lends idle capacity (Setting.lends)"


class Lend(Property):
    """lend: a lending policy gives a user that asks for more the rest of its request when it sits idle."""

    name = "lend"
    title = "idle capacity lent (borrowing up to the declared max)"
    measure = Measure("the rest of a refused user's request that fits in idle capacity within its queues' maxes",
                      0, ">")
    variants = {"tree": "no user that asks for more is refused the rest of its request from idle capacity within "
                        "its queues' maxes (divisible tasks)",
                "whole-task": "the same in whole tasks"}
    default_variant = "tree"
    reads = ("guarantee", "max")

    def variant_possible(self, setting, variant):
        """Lending settings on queue trees, under the reading their setting calls for."""
        if not getattr(setting, "hierarchy", False):
            return NO_TREE
        if not getattr(setting, "lends", False):
            return NOT_LENDING
        return reading_possible(setting, variant, self.name)

    def applicable(self, mech, env, variant):
        """Every instance of a lending policy."""
        return None

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The first refused user (module docstring), a candidate in floats."""
        alloc = alloc or mech(env, exact=exact)
        hit = refused(env, alloc, mech, exact)
        if hit is None:
            return Evaluation(0, False)
        j, rest = hit
        m = rest if exact else float(rest)
        return Evaluation(m, True, Witness(self.name, variant, mech.name, env, None, m, (j,)))

    def recheck(self, mech, witness):
        """The refusal recomputed on the mechanism's exact allocation, in Fractions."""
        env = witness.env
        run = exact_run(mech, env)
        if not run.exact:
            return None
        hit = refused(env, run.alloc, mech, True)
        if hit is None:
            return None
        j, rest = hit
        who = env.users[j]
        u = own_utility(mech, env, run.alloc, j)
        if mech.setting.whole_requests:
            what = f"the rest of its request ({fmt_exact(rest)} {'task' if rest == 1 else 'tasks'})"
        else:
            what = "one more task" if run.integral else f"{fmt_exact(rest)} more tasks"
        capped = [env.queues[q] for q in env.user_path(j) if env.queue_max[q] is not None]
        within = f" and within the max of {', '.join(capped)}" if capped else ""
        summary = f"{who} runs {fmt_exact(u)} and asks for more; {what} fits in idle capacity{within}"
        numbers: dict[str, Any] = {f"u[{who}]": u, f"refused[{who}]": rest}
        return Certificate(witness, Fraction(rest), Fraction(rest), {"allocation": run.alloc}, numbers, None, "",
                           "exact", summary)


def _fits(free, d, integral: bool, exact: bool) -> Any:
    """How many tasks of demand ``d`` fit in ``free`` (whole or fractional; ``inf`` for a zero demand)."""
    n: Any = math.inf
    for f, dr in zip(free, d):
        if dr:
            if exact:
                k: Any = Fraction(f) / Fraction(dr)
            else:
                k = (f + FLOAT_REL * max(1.0, abs(f))) / float(dr)  # float noise never refuses a task
            n = min(n, k)
    if n != math.inf and integral:
        n = math.floor(n)
    return max(n, 0)


def refused(env, alloc, mech, exact: bool) -> Optional[tuple[int, Any]]:
    """The first user (by index) that asks for more and whose rest of request fits in idle capacity within its
    queues' maxes, as ``(j, the rest refused)``; ``None`` when there is none."""
    return next(refusals(env, alloc, mech, exact), None)


def refusals(env, alloc, mech, exact: bool) -> Iterator[tuple[int, Any]]:
    """Every user (by index) that asks for more and whose rest of request fits in idle capacity within its
    queues' maxes, as ``(j, the rest refused)`` (the module docstring's test; ``work-conserving`` reads it at
    every step of a run)."""
    integral = integral_of(mech)
    whole = getattr(mech.setting, "whole_requests", False)
    free = free_capacity(env, alloc.x, exact)
    zero: Any = Fraction(0) if exact else 0.0
    used_ext = [sum((own_utility(mech, env, alloc, i) * env.external_demand[i][k] for i in range(env.n_users)), zero)
                for k in range(env.n_external)]
    for j in range(env.n_users):
        if not env.demands(j, integral):
            continue
        u = own_utility(mech, env, alloc, j)
        cap = env.external_limit(j)
        if env.tasks[j] is not None:
            cap = min(cap, env.tasks[j])
        rest: Any = None  # divisible: any positive amount
        if env.tasks[j] is None and cap == math.inf and whole:
            continue  # an unbounded whole request never fits
        if whole:
            rest = cap - u if exact else float(cap) - float(u)
            if integral:
                rest = math.floor(rest if exact else rest + FLOAT_REL * max(1.0, float(cap)))
            if not (rest > 0 if exact else rest > FLOAT_REL * max(1.0, float(cap))):
                continue
        else:
            if not (u < cap if exact else float(u) < float(cap) * (1 - FLOAT_REL)):
                continue  # at its bound or external limit
            if integral:
                if not (u + 1 <= cap if exact else float(u) + 1 <= float(cap) * (1 + FLOAT_REL)):
                    continue  # not one more whole task
                rest = 1
        room: Any = zero
        for s in sorted(env.eligible[j]):
            if env.runs_on(j, s):
                room += _fits(free[s], env.d(j, s), integral, exact)
        if env.n_external:
            room = min(room, _fits([env.external_capacity[k] - used_ext[k] for k in range(env.n_external)],
                                   env.external_demand[j], integral, exact))
        for q in env.user_path(j):
            m = env.queue_max[q]
            if m is not None:
                H = held(env, alloc.x, users_below(env, q), exact)
                room = min(room, _fits([m[r] - H[r] for r in range(env.n_resources)], env.demand[j], integral, exact))
        if rest is None:
            if room != math.inf and (room > 0 if exact else room > FLOAT_REL):
                yield j, room if cap == math.inf else min(room, cap - u if exact else float(cap) - float(u))
            continue
        if room >= rest:
            yield j, rest
