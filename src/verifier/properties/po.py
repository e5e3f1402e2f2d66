"""Pareto optimality (PO) -- seed 004 Def. 4 (also 001 Sec. III-C, 003 PE, 002 Sec. II-A).

The mechanism's allocation ``x*`` with TRUE utilities ``u_j`` is Pareto optimal iff there is no
``y in chi(E)`` (the mechanism's own feasible set: RDM or TDM per its setting, TRUE placement,
external resources, task bounds) with ``sum_s y[j,s] >= u_j`` for all ``j`` and ``>`` for some ``j``.

Check = the LP of seed 004 Sec. 6.2:

    D(x*) = max sum_j sum_s y[j,s]  s.t.  y in chi(E),  sum_s y[j,s] >= u_j  (all j)

``x*`` is dominated iff ``D(x*) > sum_j u_j``; the optimal ``y`` is the witness (a dominating
allocation).  Measure: the domination factor ``D(x*) / sum_j u_j`` (004 Sec. 6.2); violated iff > 1.

Indivisible-task mechanisms are compared with divisible ``y`` (seed 004's chi(E)); their PO verdict
is about fractional domination.  For mechanisms with interval allocations the rows use the upper
ends of the utility intervals, so a certified domination is domination of the true allocation.
"""
from __future__ import annotations

from fractions import Fraction

from mechverify.allocation import Allocation, feasibility_violations
from mechverify.domination import dominating_allocation
from mechverify.numbers import FLOAT_REL, ratio
from mechverify.utility import utility

from ..exact import exact_run, utility_interval
from .base import Certificate, Evaluation, Measure, Property, Witness

__all__ = ["ParetoOptimality"]


class ParetoOptimality(Property):
    """PO: no allocation in the mechanism's chi(E) gives everyone as much and someone more."""

    name = "po"
    title = "Pareto optimality"
    measure = Measure("the domination factor: by how much another feasible allocation can scale up everyone's tasks", 1,
                      ">")
    variants = {"fractional": "domination by any divisible y in the mechanism's chi(E) (004 Def. 4)"}
    default_variant = "fractional"
    z3 = "verifier.engines.z3.goals.po"  # its z3 goal (docs/z3.md, "Goals")

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The domination factor ``D(x*) / sum_j u_j`` of the domination LP."""
        alloc = alloc or mech(env, exact=exact)
        u = [utility(env, alloc, j) for j in range(env.n_users)]
        total = sum(u)
        if not exact:
            # never demand more than the mechanism gave, up to float noise
            u = [max(0.0, float(v) * (1 - 1e-9)) for v in u]
        D, y = dominating_allocation(env, u, mech.setting.feasibility, exact, support=alloc.x)
        if D is None:
            return Evaluation(None, False, note="domination LP failed")
        measure = ratio(D, total)
        violated = (D > total) if exact else float(D) > float(total) * (1 + FLOAT_REL) + FLOAT_REL
        w = Witness(self.name, variant, mech.name, env, None, measure, ()) if violated else None
        return Evaluation(measure, violated, w)

    def recheck(self, mech, witness):
        """Re-solve the domination LP exactly and verify the dominating allocation independently."""
        env = witness.env
        run = exact_run(mech, env)
        ivs = [utility_interval(env, run, j) for j in range(env.n_users)]
        if any(iv is None for iv in ivs):
            return None
        upper = [iv[1] for iv in ivs]
        D, y = dominating_allocation(env, upper, mech.setting.feasibility, exact=True)
        if D is None:
            return None
        total = sum(upper, Fraction(0))
        gap = D - total
        if not gap > 0:
            return None
        # independent exact re-verification of the witness allocation
        if feasibility_violations(env, y, mech.setting.feasibility):
            return None
        ytot = [sum(row, Fraction(0)) for row in y]
        if any(ytot[j] < upper[j] for j in range(env.n_users)):
            return None
        robust = None
        if run.total_range is not None:
            rr = [utility_interval(env, run, j, over_range=True) for j in range(env.n_users)]
            if all(r is not None for r in rr):
                Dr, _ = dominating_allocation(env, [r[1] for r in rr], mech.setting.feasibility, exact=True)
                robust = None if Dr is None else bool(Dr > sum((r[1] for r in rr), Fraction(0)))
        elif run.unique_totals and run.exact:
            robust = True  # domination is about totals only
        dom = Allocation(env, y, f"dominating {mech.name}", True)
        gains = [f"{env.users[j]} {upper[j]}->{ytot[j]}" for j in range(env.n_users) if ytot[j] > upper[j]]
        return Certificate(witness, Fraction(gap), ratio(D, total), {"allocation": run.alloc, "dominating": dom},
                           {"sum u": total, "sum y": D}, robust, "", "exact" if run.exact else "interval",
                           "a feasible allocation gives every user at least as much and " + ", ".join(gains))
