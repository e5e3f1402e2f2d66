"""A policy that honours declared queue guarantees (docs/model.md, "Declared amounts"; the ``quota`` property).

Whole tasks, one at a time (``mechverify.policies.progressive_filling``): first to a user below a queue that
declares a guarantee when one more of its tasks still fits within the guarantee of EVERY guaranteed queue
above it (the subtree reading: what the users below a queue hold together, pooled); then, once no guarantee
has room, to the user with the smallest dominant share of the pool over its weight; ties to the name.  A
queue's ``max`` is not read (``limit`` will say so where one binds).

It honours guarantees declared on top-level queues, as in ``examples/guarantee-10cpu.json``.  Below a
guaranteed queue it does not protect a guaranteed child from an unguaranteed sibling: both are "within" the
parent's guarantee, and the sibling may take the room the child is guaranteed (``quota`` says so:
tests/verifier/properties/test_quota_limit.py), so it makes no claim.

    python -m verifier check hdrf-tasks examples/guarantee-10cpu.json --properties quota          # violated: A 5 < 8
    python -m verifier check examples/guarantee_policy.py:guarantees_first examples/guarantee-10cpu.json --properties quota
"""
from fractions import Fraction

import mechverify
from mechverify.policies import progressive_filling


@mechverify.mechanism(name="guarantees-first", divisible=False, hierarchy=True, placement=True, bounds=True,
                      weights=True, reads=("guarantee",), source="examples/guarantee_policy.py")
def guarantees_first(env):
    """Within-guarantee first, then the smallest weighted dominant share (module docstring)."""
    totals = env.total_capacity()
    R = env.n_resources
    guarded = [[q for q in env.user_path(j) if env.queue_guarantee[q] is not None] for j in range(env.n_users)]
    below = {q: [j for j in range(env.n_users) if q in env.user_path(j)] for q in range(env.n_queues)}

    def room(state, j):  # one more task of j fits within every guarantee above it
        if not guarded[j]:
            return False
        for q in guarded[j]:
            g = env.queue_guarantee[q]
            held = [sum((state.allocated[i][r] for i in below[q]), Fraction(0)) for r in range(R)]
            if any(held[r] + env.demand[j][r] > g[r] for r in range(R)):
                return False
        return True

    def key(state, j):  # reads the other users' holdings (their queues' guarantees): local=False
        share = max((state.allocated[j][r] / totals[r] for r in range(R) if totals[r]), default=Fraction(0))
        return (0 if room(state, j) else 1, share / env.weight[j], env.users[j])

    return progressive_filling(env, key, local=False, name="guarantees-first")
