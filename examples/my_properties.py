"""Properties (and one mechanism) of "a researcher" (not from the seed papers), to audit with mechverify
(docs/properties.md, "Write your own property"; tests/verifier/properties/test_user_properties.py).

* ``ds_proportional``: dominant-share proportionality on one resource pool -- every user's dominant share
  is at least 1/n.  DRF satisfies it (it is DRF's sharing incentive, Ghodsi et al., NSDI 2011, Sec. 4);
  asset fairness does not (ibid., Sec. 2.2).
* ``sp_restated``: strategy-proofness in our own words -- no user runs more tasks (valued with its TRUE
  demands) after misreporting its demands.  It must agree with the built-in ``sp/demand``.
* ``asset_fairness``: a mechanism -- equalise every user's sum over resources of its shares of the pool
  (Ghodsi et al., Sec. 2.2), filling until a resource is used up.
"""
from fractions import Fraction

import mechverify
from mechverify.utility import utility


def _pool(env):
    """The pool's capacity per resource (one server here: the setting says so)."""
    return [sum(env.capacity[s][r] for s in range(env.n_servers)) for r in range(env.n_resources)]


def _plain_pool(env):
    """The premise of DRF's sharing incentive: one demand vector per user with every resource in it, no task
    bounds, equal weights, no placement constraints and no external resources."""
    if any(d <= 0 for row in env.demand for d in row):
        return "every user must demand every resource (d > 0)"
    if any(t is not None for t in env.tasks) or any(w != 1 for w in env.weight) or env.n_external:
        return "unbounded users with equal weights and no external resources"
    if env.has_placement or env.has_server_demand:
        return "every user may use the whole pool with one demand vector"
    if any(c <= 0 for c in _pool(env)):
        return "every resource must be in the pool (c > 0)"
    return None


@mechverify.property(name="ds-proportional", source="Ghodsi et al., NSDI 2011, Sec. 4 (sharing incentive)",
                     applicable=_plain_pool)
def ds_proportional(env, alloc):
    """Every user's dominant share is at least 1/n; margin 1/n - the smallest dominant share."""
    cap = _pool(env)
    shares = [sum(alloc.x[j]) * max(env.demand[j][r] / cap[r] for r in range(env.n_resources))
              for j in range(env.n_users)]
    return Fraction(1, env.n_users) - min(shares)


@mechverify.property(name="sp-restated", deviation="demand", source="SP restated (seed 001 Sec. III-C)")
def sp_restated(env, alloc, user, reported_alloc):
    """A misreport of demands never lets the user run more tasks; margin: the tasks it gains."""
    return utility(env, reported_alloc, user) - utility(env, alloc, user)


@mechverify.mechanism(name="asset-fairness", single_server=True, placement=False, positive_data=True,
                      source="Ghodsi et al., NSDI 2011, Sec. 2.2")
def asset_fairness(env):
    """Asset fairness: equal sums of resource shares, x_j * sum_r d_jr / c_r = t for every user."""
    cap = _pool(env)
    assets = [sum(Fraction(env.demand[j][r]) / cap[r] for r in range(env.n_resources)) for j in range(env.n_users)]
    # t is as large as the pool allows: sum_j (t / a_j) d_jr <= c_r for every resource r
    t = min(cap[r] / sum(env.demand[j][r] / assets[j] for j in range(env.n_users)) for r in range(env.n_resources)
            if any(env.demand[j][r] > 0 for j in range(env.n_users)))
    return [[t / assets[j]] for j in range(env.n_users)]
