"""quota -- every queue gets what its DECLARED guarantee affords its users (an instance property on queue trees).

Production schedulers guarantee declared amounts: YARN's minResources, Kueue's nominalQuota, YuniKorn's
guaranteed, Volcano's capacity plugin's deserved.  The model declares them as ``queues[].guarantee``, the
amount of each resource the queue's SUBTREE is guaranteed (docs/model.md, "Declared amounts"); this is not
H-DRF's weight entitlement, which ``hsi`` checks.

A queue ``q`` with a guarantee ``g_q`` holds ``H_q[r] = sum_{j below q} sum_s x[j,s] d[j,s,r]`` (pooled over the
servers).  It is SERVED when ``H_q`` reaches ``g_q`` in some guaranteed resource -- ``S_q = max_{r: g_q[r] > 0}
H_q[r] / g_q[r] >= 1`` (a queue holding a resource it has no guarantee of is served too) -- or when no user
below it could run more within the guarantee.  Violated iff some queue has ``S_q < 1`` while a user ``j``
below it still asks for more (below its task bound and its external limit: what it demands) and more of
``j`` fits within ``g_q``:

* ``tree`` (divisible tasks): some amount of ``j``'s task uses only resources ``q`` is guaranteed
  (``H_q + eps d[j,s] <= g_q`` for a small ``eps``);
* ``whole-task``: ONE more whole task of ``j`` fits within the guarantee (``H_q + d[j,s] <= g_q``), so a
  queue short of its guarantee by less than a task is served -- the whole-task reading misses a guarantee
  by up to one task's rounding, and says so.

Where the extra goes (placement-aware): on ONE server the guarantee itself says the queue may claim it
(every guarantee can be honoured at once, see the premise, so the resources are reclaimable from queues
above theirs); on SEVERAL servers what a pooled guarantee affords depends on how the other queues' tasks
are packed, so a violation is reported only when the extra fits in room nobody holds on a server ``j`` may
use (``eligible``, the server's free capacity): the policy left room idle that the guarantee gives ``q``.

Premise: the queue tree declares guarantees and they NEST -- no declaration warning about guarantees
(``mechverify.declared.guarantees_nest``: siblings within their parent's guarantee, the top ones within the
pooled capacity, none above a max).  Over-committed guarantees cannot all be honoured; ``check`` says "not
applicable" with the warning.  Measure: the smallest ``S_q`` over the queues found short (violated iff
< 1).  Searched for mechanisms defined on queue trees (``Setting.hierarchy``), on trees drawn with
guarantees (``reads``).
"""
from __future__ import annotations

from typing import Any, Optional

from mechverify.declared import free_capacity, guarantees_nest, held, users_below
from mechverify.numbers import FLOAT_REL, fmt_exact

from ..exact import exact_run, integral_of, own_utility
from .base import Certificate, Evaluation, Measure, Property, Witness, reading_possible

__all__ = ["Quota", "quota_shortfall", "NO_TREE"]

#: why a property on declared amounts is not searched for a flat setting
NO_TREE = "no queue tree in this setting: amounts are declared on queues"


class Quota(Property):
    """quota: a queue short of its declared guarantee serves the users below it that ask for more."""

    name = "quota"
    title = "declared guarantees (quota)"
    measure = Measure("the smallest ratio S_q of what a queue holds to its declared guarantee while more of a user "
                      "below it fits within the guarantee", 1, "<")
    variants = {"tree": "a queue below its declared guarantee serves more of a user below it that fits within it "
                        "(divisible tasks)",
                "whole-task": "the same up to one task: one more whole task of a user below it fits within the "
                              "guarantee"}
    default_variant = "tree"
    reads = ("guarantee",)

    def variant_possible(self, setting, variant):
        """Mechanisms defined on queue trees, under the reading their setting calls for."""
        if not getattr(setting, "hierarchy", False):
            return NO_TREE
        return reading_possible(setting, variant, self.name)

    def applicable(self, mech, env, variant):
        """A tree with a declared guarantee whose guarantees nest (module docstring)."""
        if not env.has_guarantees:
            return "no queue declares a guarantee"
        why = guarantees_nest(env)
        return None if why is None else f"the declared guarantees cannot all be honoured ({why})"

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The worst queue short of its guarantee (module docstring), a candidate in floats."""
        if self.applicable(mech, env, variant):
            return Evaluation(None, False)
        alloc = alloc or mech(env, exact=exact)
        worst = quota_shortfall(env, alloc, mech, exact)
        if worst is None:
            return Evaluation(1, False)
        ratio, q, j, s = worst
        return Evaluation(ratio, True, Witness(self.name, variant, mech.name, env, None, ratio, (j,)))

    def recheck(self, mech, witness):
        """The shortfall recomputed on the mechanism's exact allocation, in Fractions."""
        env = witness.env
        if self.applicable(mech, env, witness.variant):
            return None
        run = exact_run(mech, env)
        if not run.exact:
            return None
        worst = quota_shortfall(env, run.alloc, mech, True)
        if worst is None:
            return None
        ratio, q, j, s = worst
        g, H = env.queue_guarantee[q], held(env, run.alloc.x, users_below(env, q))
        name, who, R = env.queues[q], env.users[j], env.resources
        what = "one more task" if run.integral else "more"
        where = ("within the guarantee" if env.n_servers == 1
                 else f"within the guarantee and in room nobody holds on {env.servers[s]}")
        summary = (f"queue {name} holds {_vec(H, R)}, S = {fmt_exact(ratio)} of its declared guarantee {_vec(g, R)}, "
                   f"while {what} of {who} fits {where}")
        numbers: dict[str, Any] = {f"S[{name}]": ratio, f"u[{who}]": own_utility(mech, env, run.alloc, j)}
        for r in range(env.n_resources):
            numbers[f"held[{name}].{R[r]}"] = H[r]
            numbers[f"guarantee[{name}].{R[r]}"] = g[r]
        return Certificate(witness, 1 - ratio, ratio, {"allocation": run.alloc}, numbers, None, "", "exact", summary)


def _vec(v, names) -> str:
    return "(" + ", ".join(f"{n} {fmt_exact(x)}" for n, x in zip(names, v)) + ")"


def _asks_more(mech, env, alloc, j: int, integral: bool, exact: bool) -> bool:
    """``j`` demands and is below its task bound and external limit (one more whole task for ``integral``)."""
    if not env.demands(j, integral):
        return False
    u = own_utility(mech, env, alloc, j)
    cap = env.external_limit(j)
    if env.tasks[j] is not None:
        cap = min(cap, env.tasks[j])
    if cap == float("inf"):
        return True
    if integral:
        return u + 1 <= cap
    return u < cap if exact else float(u) < float(cap) * (1 - FLOAT_REL)


def _le(a, b, exact: bool) -> bool:
    return a <= b if exact else float(a) <= float(b) * (1 + FLOAT_REL) + 1e-12


def quota_shortfall(env, alloc, mech, exact: bool) -> Optional[tuple[Any, int, int, int]]:
    """The worst queue short of its declared guarantee with a user whose more fits (module docstring), as
    ``(S_q, q, that user, the server the more goes to)``; ``None`` when every queue is served."""
    integral = integral_of(mech)
    R = env.n_resources
    free = free_capacity(env, alloc.x, exact) if env.n_servers > 1 else None
    worst = None
    for q, g in enumerate(env.queue_guarantee):
        if g is None or not any(g):
            continue
        users = users_below(env, q)
        H = held(env, alloc.x, users, exact)
        if any(not g[r] and (H[r] > 0 if exact else H[r] > 1e-12) for r in range(R)):
            continue  # it holds a resource it has no guarantee of: served beyond it
        S = max((H[r] / g[r] if exact else H[r] / float(g[r])) for r in range(R) if g[r])
        if not (S < 1 if exact else S < 1 - FLOAT_REL):
            continue
        hit = None
        for j in users:
            if not _asks_more(mech, env, alloc, j, integral, exact):
                continue
            for s in sorted(env.eligible[j]):
                if not env.runs_on(j, s):
                    continue
                d = env.d(j, s)
                if integral:
                    fits = all(_le(H[r] + d[r], g[r], exact) for r in range(R))
                    if fits and free is not None:
                        fits = all(_le(d[r], free[s][r], exact) for r in range(R))
                else:
                    fits = all(g[r] > 0 for r in range(R) if d[r])
                    if fits and free is not None:
                        fits = all((free[s][r] > 0 if exact else free[s][r] > FLOAT_REL * float(env.capacity[s][r]))
                                   for r in range(R) if d[r])
                if fits:
                    hit = (j, s)
                    break
            if hit:
                break
        if hit is None:
            continue
        if worst is None or S < worst[0]:
            worst = (S, q, hit[0], hit[1])
    return worst
