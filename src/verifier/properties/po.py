"""Pareto optimality (PO) -- seed 004 Def. 4 (also 001 Sec. III-C, 003 PE, 002 Sec. II-A).

The mechanism's allocation ``x*`` with TRUE utilities ``u_j`` is Pareto optimal iff there is no
``y in chi(E)`` (the mechanism's own feasible set: RDM or TDM per its setting, TRUE placement,
external resources, task bounds) with ``sum_s y[j,s] >= u_j`` for all ``j`` and ``>`` for some ``j``.

Check = the LP of seed 004 Sec. 6.2:

    D(x*) = max sum_j sum_s y[j,s]  s.t.  y in chi(E),  sum_s y[j,s] >= u_j  (all j)

``x*`` is dominated iff ``D(x*) > sum_j u_j``; the optimal ``y`` is the witness (a dominating
allocation).  Measure: the domination factor ``D(x*) / sum_j u_j`` (004 Sec. 6.2); violated iff > 1.

Two readings (variants), one per kind of mechanism:

* ``fractional`` (divisible tasks): ``y`` ranges over every divisible allocation of chi(E).
* ``whole-task`` (indivisible tasks, ``Setting.divisible = False``): ``y`` ranges over the INTEGRAL
  allocations of chi(E) (a task bound ``n_j`` then allows ``floor(n_j)`` tasks), ``u_j`` counts whole
  tasks.  The same program with ``y`` integer, a MIP of the LP layer.  Against a whole-task policy a
  fractional ``y`` only shows that tasks are indivisible (one user, one server with room for half its
  task: 0 tasks is the best any whole-task policy can do), not a defect of the policy, so the
  fractional reading is not searched for it (``variant_possible``), nor whole-task for a divisible one.

Nothing is certified on the solver's word: ``recheck`` re-solves the program exactly (the MIP's
integral ``y`` taken exactly) and verifies the dominating ``y`` independently in rationals -- feasible
in chi(E), integral for ``whole-task``, every user at least its utility, someone more
(:func:`dominating_gains`).  A MIP that fails or does not finish in time claims nothing (an
evaluation with a note), never "holds".  For mechanisms with interval allocations the rows use the
upper ends of the utility intervals, so a certified domination is domination of the true allocation.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.allocation import Allocation, feasibility_violations
from mechverify.domination import dominating_allocation
from mechverify.lp_certificates import pareto_certificate
from mechverify.numbers import FLOAT_REL, ratio
from mechverify.utility import utility

from ..exact import exact_run, own_utility, utility_interval
from .base import Certificate, Evaluation, Measure, Property, Witness, reading, reading_possible

__all__ = ["ParetoOptimality", "dominating_gains", "MIP_TIME_LIMIT"]

#: seconds one whole-task domination MIP may take (within the command's deadline); a MIP that does not
#: finish claims nothing
MIP_TIME_LIMIT = 20.0

FRACTIONAL, WHOLE_TASK = "fractional", "whole-task"


def dominating_gains(env, y: Sequence[Sequence[Any]], targets: Sequence[Fraction], mode: str,
                     integral: bool) -> Optional[list[int]]:
    """The users ``y`` gives more than ``targets``, verified exactly; ``None`` unless ``y`` dominates:
    every entry a ``Fraction`` (an integer when ``integral``), ``y`` in chi(E) (``mode``, TRUE placement,
    external resources, task bounds: ``feasibility_violations`` in rationals), every user's total
    ``>= targets[j]`` and some user's ``>``."""
    if len(y) != env.n_users or any(len(row) != env.n_servers for row in y):
        return None
    if any(v.__class__ is not Fraction for row in y for v in row):
        return None
    if integral and any(v.denominator != 1 for row in y for v in row):
        return None
    if feasibility_violations(env, y, mode):
        return None
    tot = [sum(row, Fraction(0)) for row in y]
    if any(tot[j] < targets[j] for j in range(env.n_users)):
        return None
    gains = [j for j in range(env.n_users) if tot[j] > targets[j]]
    return gains or None


class ParetoOptimality(Property):
    """PO: no allocation in the mechanism's chi(E) gives everyone as much and someone more."""

    name = "po"
    title = "Pareto optimality"
    measure = Measure("the domination factor: by how much another feasible allocation can scale up everyone's tasks", 1,
                      ">")
    variants = {
        FRACTIONAL: "domination by any divisible y in the mechanism's chi(E) (004 Def. 4); divisible-task mechanisms",
        WHOLE_TASK: "domination by a whole-task (integral) y in the mechanism's chi(E), task bounds floor(n_j); "
                    "whole-task mechanisms",
    }
    default_variant = FRACTIONAL
    z3 = "verifier.engines.smt.goals.po"  # its z3 goal (docs/z3.md, "Goals"): the fractional reading

    def variant_possible(self, setting, variant):
        """One reading per kind of mechanism: ``whole-task`` for indivisible tasks, else ``fractional``."""
        return reading_possible(setting, variant, self.name, has=(WHOLE_TASK,))

    def applicable(self, mech, env, variant):
        """As ``variant_possible``, for the mechanism's setting."""
        return self.variant_possible(mech.setting, variant)

    def claim_variants(self, mech):
        """A paper's plain PO claim speaks about the reading of the mechanism's kind."""
        return (reading(mech.setting, has=(WHOLE_TASK,)) or FRACTIONAL,)

    def lp_certificate(self, mech, env, variant, alloc):
        """The fractional reading rests on the domination LP: its exact primal and dual
        (``mechverify.lp_certificates.pareto_certificate``: Pareto optimal, or dominated).  The whole-task
        reading is a MIP: no dual certificate."""
        why = self.applicable(mech, env, variant)
        if why:
            return None, f"not applicable: {why}"
        if variant != FRACTIONAL:
            return None, "the whole-task reading is a MIP: no dual certificate"
        cert, why = pareto_certificate(env, alloc, mech.setting.feasibility,
                                       {"mechanism": mech.name, "property": self.name, "variant": variant})
        if cert is not None:  # the check verdict the certificate proves
            cert["claim"]["verdict"] = "satisfied" if cert["claim"]["kind"] == "pareto-optimal" else "violated"
        return cert, why

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The domination factor ``D(x*) / sum_j u_j`` of the domination LP (``whole-task``: MIP)."""
        why = self.applicable(mech, env, variant)
        if why:  # never a fractional domination against a whole-task policy (module docstring)
            return Evaluation(None, False, note=f"not applicable: {why}")
        alloc = alloc or mech(env, exact=exact)
        integral = variant == WHOLE_TASK
        if integral:
            u = [own_utility(mech, env, alloc, j) for j in range(env.n_users)]
        else:
            u = [utility(env, alloc, j) for j in range(env.n_users)]
        total = sum(u)
        if not exact:
            # never demand more than the mechanism gave, up to float noise
            u = [max(0.0, float(v) * (1 - 1e-9)) for v in u]
        D, y = dominating_allocation(env, u, mech.setting.feasibility, exact, support=alloc.x, integral=integral,
                                     time_limit=MIP_TIME_LIMIT if integral else None)
        if D is None:
            return Evaluation(None, False, note=("whole-task domination MIP failed or did not finish: no verdict"
                                                 if integral else "domination LP failed"))
        measure = ratio(D, total)
        violated = (D > total) if exact else float(D) > float(total) * (1 + FLOAT_REL) + FLOAT_REL
        w = Witness(self.name, variant, mech.name, env, None, measure, ()) if violated else None
        return Evaluation(measure, violated, w)

    def recheck(self, mech, witness):
        """Re-solve the domination program exactly and verify the dominating allocation independently
        (:func:`dominating_gains`)."""
        env = witness.env
        if self.applicable(mech, env, witness.variant):
            return None  # the other kind's reading: not a violation of this mechanism (module docstring)
        integral = witness.variant == WHOLE_TASK
        mode = mech.setting.feasibility
        limit = MIP_TIME_LIMIT if integral else None
        run = exact_run(mech, env)
        ivs = [utility_interval(env, run, j) for j in range(env.n_users)]
        if any(iv is None for iv in ivs):
            return None
        upper = [iv[1] for iv in ivs]
        D, y = dominating_allocation(env, upper, mode, exact=True, integral=integral, time_limit=limit)
        if D is None:
            return None
        # independent exact re-verification of the witness allocation
        gainers = dominating_gains(env, y, upper, mode, integral)
        if gainers is None:
            return None
        ytot = [sum(row, Fraction(0)) for row in y]
        D = sum(ytot, Fraction(0))
        total = sum(upper, Fraction(0))
        gap = D - total
        robust = None
        if run.total_range is not None:
            rr = [utility_interval(env, run, j, over_range=True) for j in range(env.n_users)]
            if all(r is not None for r in rr):
                Dr, _ = dominating_allocation(env, [r[1] for r in rr], mode, exact=True, integral=integral,
                                              time_limit=limit)
                robust = None if Dr is None else bool(Dr > sum((r[1] for r in rr), Fraction(0)))
        elif run.unique_totals and run.exact:
            robust = True  # domination is about totals only
        dom = Allocation(env, y, f"dominating {mech.name}", True)
        unit = " tasks" if integral else ""
        gains = ", ".join(f"{env.users[j]} {upper[j]}->{ytot[j]}{unit}" for j in gainers)
        what = "a whole-task allocation" if integral else "a feasible allocation"
        return Certificate(witness, Fraction(gap), ratio(D, total), {"allocation": run.alloc, "dominating": dom},
                           {"sum u": total, "sum y": D}, robust, "", "exact" if run.exact else "interval",
                           f"{what} gives every user at least as much and {gains}")
