"""A planted NON-TRANSITIVE comparator (docs/orders-and-placement.md, "Orders"): users whose shares are within a
factor of two of each other count as equal and are served first come, first served (user index); shares further
apart are served by share.

The rule reads naturally ("close shares are one band, FIFO inside a band"), but the band is a pairwise window,
not a fixed bucket, so it is not a strict weak order: with dominant shares u1 = 4/10, u2 = 2/10, u3 = 1/10, u1
and u2 are close (u1 first: it came first), u2 and u3 are close (u2 first), and u1 and u3 are not (u3 first: the
smaller share) -- the cycle u1 before u2 before u3 before u1.  A sort given it returns whatever its comparisons
happen to meet first.  ``python -m verifier run examples/cyclic_order.py:fifo_within_a_factor_of_two
--properties order`` refutes it (exit 1: its made-up claim of a strict weak order is refuted); ``python -m
verifier order examples/cyclic_order.py:fifo_within_a_factor_of_two INSTANCE`` prints the order a sort makes of it
in the instance's state.
"""
import mechverify
from mechverify.policies import progressive_filling

#: shares within this factor of each other count as equal
CLOSE = 2


def close_shares_fifo(state, i, j):
    """Negative when ``i`` goes first: by dominant share over the weight, unless the two are within a factor
    :data:`CLOSE` of each other -- then by user index (submission order)."""
    a = state.dominant_share(i) / state.env.weight[i]
    b = state.dominant_share(j) / state.env.weight[j]
    if a <= CLOSE * b and b <= CLOSE * a:
        return (i > j) - (i < j)
    return -1 if a < b else 1


@mechverify.mechanism(name="fifo-within-a-factor-of-two", divisible=False, placement=True, bounds=True,
                      weights=True, claims={"order/strict-weak": "holds"},
                      source="examples/cyclic_order.py (a planted non-transitive comparator; the claim is made up)",
                      order=mechverify.comparator(close_shares_fifo))
def fifo_within_a_factor_of_two(env):
    """Serve by dominant share; shares within a factor of two of each other in submission order."""
    return progressive_filling(env, cmp=close_shares_fifo, name="fifo-within-a-factor-of-two")
