"""Mechanisms of "a user" (not from the seed papers), to audit with mechverify from the command line,
from Python and from pytest (README, "Audit your own mechanism").

* ``greedy``: first come, first served -- on every server the users, in order, take as many tasks as fit.
  It claims strategy-proofness, envy-freeness and sharing incentive; the audit refutes the last two.
* ``drf_float``: DRF on one resource pool, written with floats as most implementations are.  Its float
  noise must never be reported as a violation (DRF is SP, EF, SI and PO: seed 000 Sec. II-A).
* ``fragile``: divides by every demand entry, so it crashes when a user demands none of a resource.
"""
import mechverify


@mechverify.mechanism(name="greedy", claims={"sp": "holds", "ef": "holds", "si": "holds"},
                      source="examples/my_mechanisms.py (made-up claims)")
def greedy(env):
    """First come, first served: on each server, users in order take as many tasks as fit."""
    x = [[0] * env.n_servers for _ in env.users]
    for s in range(env.n_servers):
        left = list(env.capacity[s])
        for j in range(env.n_users):
            d = env.demand[j]
            fits = min(left[r] / d[r] for r in range(env.n_resources) if d[r] > 0)
            x[j][s] = fits
            left = [left[r] - fits * d[r] for r in range(env.n_resources)]
    return x


@mechverify.mechanism(name="drf-float", claims={"sp": "holds", "ef": "holds", "si": "holds", "po": "holds"},
                      source="000 Sec. II-A (DRF on one pool, Ghodsi et al. [4])", single_server=True, positive_data=True)
def drf_float(env):
    """DRF on one server in floats: equal dominant shares, raised until some resource is full."""
    cap = [float(c) for c in env.capacity[0]]
    shares = [max(float(d) / c for d, c in zip(env.demand[j], cap)) for j in range(env.n_users)]
    # x_j = t / share_j; the largest t with sum_j x_j d_jr <= c_r for every resource r
    t = min(c / sum(float(env.demand[j][r]) / shares[j] for j in range(env.n_users))
            for r, c in enumerate(cap))
    return [[t / shares[j]] for j in range(env.n_users)]


@mechverify.mechanism(name="fragile")
def fragile(env):
    """An equal split of every server that divides by every demand entry (a zero demand crashes it)."""
    return [[min(c / (env.n_users * d) for c, d in zip(env.capacity[s], env.demand[j]))
             for s in range(env.n_servers)] for j in range(env.n_users)]
