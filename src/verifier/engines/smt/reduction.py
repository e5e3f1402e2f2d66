"""Lemmas L7 / L9 (SP) and L8 (EF): SP or EF of a common-level mechanism reduces to one inequality
about its normaliser, which z3 proves over the domain with the spec's own normaliser (statements and
proofs: docs/z3.md, "Proofs of Lemmas L7, L8, L9").  For SP a SAT answer is not a violation (the lemma is
only sufficient); for EF (L8, an equivalence) it is a candidate for the exact re-check.
"""
from __future__ import annotations

import time
from typing import Any, NamedTuple, Optional

import z3

from mechverify.deadline import budget_note

from ...results import Verdict
from .domain import Domain, Shape, build_domain, dominant_cases
from .goals import Z3Goal
from .pool import budget_cut, run_jobs, split_jobs
from .second import Ledger
from .solvers import SolverStatus
from .specs import Spec
from .symbolic import Ctx, vmul

__all__ = ["REDUCIBLE_FAMILIES", "Reduced", "reducible", "reduced_query", "reduced"]

#: spec families whose allocation on the certification domain is the maximal common level
REDUCIBLE_FAMILIES = ("drf-closed-form", "leximin", "algorithm1")


def reducible(spec: Spec) -> bool:
    """The spec is a common-level mechanism on the certification domain (Lemmas L4, L7, L8 apply)."""
    return spec.family in REDUCIBLE_FAMILIES and spec.norm is not None


def reduced_query(spec: Spec, shape: Shape, dom_case, strict: bool, goal: Z3Goal) -> tuple[Domain, Ctx]:
    """A misreport goal (SP, L7): ``exists c, d_1, d': rho N(d') > N(d)`` for ``u1``'s report ``d'``.
    Otherwise (EF, L8): ``exists c, d_1, d_2: rho_12 N(d_2) > N(d_1)`` with ``rho_12 = min d_2/d_1``.
    ``>=`` for the control.  ``N`` on the large side is encoded one-sided (only its size matters)."""
    misreport = goal.misreport
    dom = build_domain(shape, spec.normalisation, dom_case, misreport=misreport)
    ctx = dom.ctx
    small = spec.norm(ctx, dom.truth, 0, "T")
    ctx.relaxed = True  # the large side only needs to be large: one-sided mins / maxes (every
    # normaliser is increasing in its mins and decreasing in its maxes)
    large = spec.norm(ctx, dom.deviated, 0, "D") if misreport else spec.norm(ctx, dom.truth, 1, "T1")
    ctx.relaxed = False
    if small is None or large is None:
        raise ValueError(f"{spec.name}: a positive user has no normaliser")
    rho = ctx.nonneg("rho")
    base_d, base_e = dom.truth.demand[0], dom.truth.external_demand[0]
    if misreport:
        other_d, other_e = dom.misreport
    else:
        other_d, other_e = dom.truth.demand[1], dom.truth.external_demand[1]
    for a, b in list(zip(other_d, base_d)) + list(zip(other_e, base_e)):
        ctx.add(_bool(vmul(rho, b) <= a))  # rho <= other/base (one-sided: the goal wants rho large)
    (nl, dl), (ns, ds) = large, small  # N = num / den, den > 0
    lhs = vmul(vmul(rho, nl), ds)
    rhs = vmul(ns, dl)
    ctx.add(_bool(lhs > rhs if strict else lhs >= rhs))
    return dom, ctx


def _bool(v):
    return z3.BoolVal(v) if isinstance(v, bool) else v


class Reduced(NamedTuple):
    """What :func:`reduced` established (see its docstring)."""

    status: str
    note: str
    queries: int
    model: Optional[tuple] = None
    lemmas: str = "L7"  # which lemmas the certificate rests on ("L7", "L7 + L9", "L8")
    ledger: Any = None  # the queries built and those a 'certified' status rests on (``second.Ledger``)

    @property
    def method(self) -> str:
        """``Lemma L7 reduction`` / ``Lemmas L7 + L9 reduction`` / ``Lemma L8 reduction``."""
        return f"Lemma{'s' if '+' in self.lemmas else ''} {self.lemmas} reduction"


def reduced(spec: Spec, goal: Z3Goal, shape: Shape, n_workers: int, deadline: float, timeout: float,
            split: int = 256) -> Reduced:
    """``Reduced(status, note, queries, model, lemmas)`` for ``goal.reduction``.  Status: 'certified' (every
    query UNSAT, control SAT); 'sat' -- SP: Lemma L7's premise fails (NOT a violation: no verdict); EF:
    Lemma L8 is an equivalence (``Reduction.equivalence``), so ``model = (domain, values, algebraic)`` is a
    candidate violation for the exact re-check; 'vacuous'; 'unknown'."""
    if goal.reduction.per_server and spec.per_server and (shape.servers > 1 or shape.external > 0):
        dims = sorted({shape.resources} | ({shape.external} if shape.external else set()))
        total, notes, ledger = 0, [], Ledger()
        for n in dims:
            sub = reduced(spec, goal, Shape(users=shape.users, servers=1, resources=n), n_workers, deadline, timeout,
                          split)
            st, nq = sub.status, sub.queries
            total += nq
            notes.append(f"n = {n}: {st}")
            if st is not Verdict.CERTIFIED:
                break
            ledger.extend(sub.ledger)
        else:
            return Reduced(Verdict.CERTIFIED, (f"Lemmas L7 + L9 (docs/z3.md): rho N(d') <= N(d) follows from the "
                                         f"one-server inequality rho_n m(v') <= m(v), proved by z3 for n = "
                                         f"{', '.join(map(str, dims))} ({total} queries unsat; vacuity control "
                                         f"sat); holds for any number of users and servers"), total, None, "L7 + L9",
                           ledger)
        if time.monotonic() > deadline:
            return Reduced(Verdict.UNKNOWN, budget_note(f"Lemma L9 not established ({'; '.join(notes)}) and no time left"),
                           total)
        direct = _direct(spec, goal, shape, n_workers, deadline, timeout, split)
        return direct._replace(note=f"{direct.note} (Lemma L9 tried first: {'; '.join(notes)})",
                               queries=direct.queries + total)
    return _direct(spec, goal, shape, n_workers, deadline, timeout, split)


def _direct(spec: Spec, goal: Z3Goal, shape: Shape, n_workers: int, deadline: float, timeout: float,
            split: int) -> Reduced:
    """The reduced query (L7 / L8) on ``shape`` itself."""
    red = goal.reduction
    lemma = red.lemma
    stage = f"Lemma {lemma} on {shape.describe()}"
    ledger = Ledger()
    doms = dominant_cases(shape, misreport=goal.misreport) if spec.normalisation == "dominant" else [None]
    jobs, built = [], {}
    for k, dc in enumerate(doms):
        if time.monotonic() > deadline:
            return Reduced(Verdict.UNKNOWN, budget_note(f"time budget exhausted while building the reduced queries ({k} of "
                                                  f"{len(doms)})"), len(jobs), None, lemma)
        dom, ctx = reduced_query(spec, shape, dc, True, goal)
        built[k] = dom
        jobs.extend(split_jobs(k, ctx.cons, list(dom.params), timeout, split))
    unknown: list = []
    ledger.planned(stage, "query", jobs)
    by_key, done = {j.key: j for j in jobs}, []
    for r in run_jobs(jobs, n_workers, deadline):
        done.append((by_key[r.key], r))
        if r.status == "sat":
            return Reduced("sat", f"z3 found {red.found} (dominant case {doms[r.key[0]]})", len(jobs),
                           (built[r.key[0]], r.values, r.algebraic), lemma)
        if r.status == SolverStatus.UNKNOWN:
            unknown.append(r.reason)
    if unknown:
        note = f"{len(unknown)} of {len(jobs)} reduced queries undecided ({'; '.join(sorted(set(unknown)))})"
        return Reduced(Verdict.UNKNOWN, budget_note(note) if budget_cut(unknown, deadline) else note, len(jobs), None, lemma)
    ctl = []
    for k, dc in enumerate(doms):
        if time.monotonic() > deadline:
            return Reduced(Verdict.UNKNOWN, budget_note(f"time budget exhausted while building the vacuity controls ({k} "
                                                  f"of {len(doms)})"), len(jobs), None, lemma)
        _, ctx = reduced_query(spec, shape, dc, False, goal)
        ctl.extend(split_jobs(k, ctx.cons, (), timeout, split))
    ledger.proved(stage, "query", done)
    ledger.planned(stage, "control", ctl)
    by_key = {j.key: j for j in ctl}
    for r in run_jobs(ctl, n_workers, deadline):
        if r.status == "sat":
            ledger.proved(stage, "control", [(by_key[r.key], r)])
            return Reduced(Verdict.CERTIFIED, (f"Lemma {lemma} reduction (docs/z3.md): {red.inequality} proved by z3 ({len(jobs)} "
                                         f"queries unsat; vacuity control sat); holds for any number of users"),
                           len(jobs), None, lemma, ledger)
    return Reduced(Verdict.VACUOUS, "the reduced query and its control are both unsat", len(jobs), None, lemma)
