"""A researcher's property that reads the queues' DECLARED guarantees (docs/properties.md, "What a property
reads"; tests/verifier/properties/test_reads.py).

``half_guarantee``: a queue that declares a guarantee, with a user below it that always asks for more (no
task bound, a task that fits somewhere), holds at least HALF of its guarantee in some guaranteed resource,
pooled over the servers.  Margin: ``1/2 - S_q`` at the worst such queue, ``S_q = max_r held_q[r] / g_q[r]``.

It declares ``reads=("guarantee",)``: the search then draws queue trees WITH guarantees for it (on mechanisms
defined on queue trees), so ``run hdrf-tasks --properties examples/guarantee_properties.py:half_guarantee``
finds a violation -- H-DRF splits by weights and ignores declared guarantees.  Without ``reads`` no drawn
tree would carry a guarantee, the premise would never hold, and the run could only say "no candidate
evaluated".
"""
from fractions import Fraction

import mechverify


def _declares_guarantee(env):
    """The premise: some queue declares a guarantee."""
    return None if any(g is not None for g in env.queue_guarantee) else "no queue declares a guarantee"


def _hungry(env, j):
    """``j`` always asks for more: no task bound, some eligible server has every resource its task needs."""
    return env.tasks[j] is None and any(all(c > 0 for c, d in zip(env.capacity[s], env.d(j, s)) if d > 0)
                                        for s in env.eligible[j])


@mechverify.property(name="half-guarantee", reads=("guarantee",), applicable=_declares_guarantee,
                     source="examples/guarantee_properties.py (a researcher's reading of declared guarantees)")
def half_guarantee(env, alloc):
    """A queue with a guarantee and a user below it that asks for more holds at least half of it."""
    worst = Fraction(-1, 2)  # no such queue: holds with margin -1/2
    for q, g in enumerate(env.queue_guarantee):
        if g is None or not any(g):
            continue
        users = [j for j in range(env.n_users) if q in env.user_path(j)]
        if not any(_hungry(env, j) for j in users):
            continue
        held = [sum((Fraction(alloc.x[j][s]) * env.d(j, s)[r] for j in users for s in range(env.n_servers)),
                    Fraction(0)) for r in range(env.n_resources)]
        share = max(held[r] / g[r] for r in range(env.n_resources) if g[r])
        worst = max(worst, Fraction(1, 2) - share)
    return worst
