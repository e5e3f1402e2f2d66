"""Lemma L7: SP of a common-level mechanism reduces to one inequality about its normaliser.

Setting (the certification domain of ``domain.py``: positive capacities and demands, no placement
constraints, unbounded task counts).  A *common-level* mechanism gives every user
``X_j = w_j N_j g`` with ``g* = max{g : (w_j N_j g)_j feasible}``, where ``N_j`` depends only on user
``j``'s report and the capacities.  This is Algorithm 1 of seed 004 without task bounds (tsf-er,
drf-er: one round), DRF's closed form, and -- by Lemma L4 -- every leximin spec on this domain (drfh,
c-drfh, tsf, cdrf, tsf-er-maxmin).  The set ``F`` of feasible total vectors is down-closed.

**Lemma L7.** Let user ``i`` (true demand ``d``, external ``d_er``) report ``d'`` (``d'_er``), all
positive, and let ``rho = min( min_r d'_r / d_r, min_k d'_er,k / d_er,k )``.  If

        rho * N_i(d') <= N_i(d)                                                     (L7)

for every such ``d, d'`` and capacities, then the mechanism is SP on the domain, for ANY number of
users.

*Proof.*  Under the report user ``i`` gets ``x'_{i,s}`` tasks of ``d'`` on server ``s``, so its true
utility is ``sum_s x'_{i,s} min_r d'_r/d_r`` capped by ``X'_i min_k d'_er,k/d_er,k``; both factors
are ``>= rho``, and the minimum of the two is exactly ``rho X'_i`` (the same ratio on every server).
Running ``rho x'_{i,s}`` TRUE tasks on ``s`` uses ``rho x'_{i,s} d_r <= x'_{i,s} d'_r`` of each resource
and ``rho X'_i d_er <= X'_i d'_er`` externally, so ``Y = (rho X'_i, X'_k (k != i))`` is in the TRUE
``F``.  Other users' normalisers do not change, so ``X'_k = w_k N_k g'``.
If ``g' <= g*``: ``Y_i = rho w_i N_i(d') g' <= w_i N_i(d) g* = X_i`` by (L7).
If ``g' > g*`` and ``Y_i > X_i``: with ``h = min(g', Y_i / (w_i N_i(d))) > g*`` the vector
``(w_j N_j(d) h)_j <= Y`` is feasible (down-closed), contradicting the maximality of ``g*``.
So ``u_i(misreport) = Y_i <= X_i`` in both cases.  QED.

(L7) holds for the specs' normalisers: dominant shares ``N = 1 / max_r d_r/C_r`` (``max_r d'_r/C_r
>= d'_{r*}/C_{r*} >= rho d_{r*}/C_{r*}`` at ``d``'s dominant ``r*``), and monopoly sums ``N = sum_s
min_r c_sr/d_r`` (termwise ``rho c_sr/d'_r <= c_sr/d_r``), and their ``min`` with external terms.  The
module does not rely on these hand proofs: ``reduced_sp`` asks z3 for a violation of (L7) over the
domain, with the spec's own normaliser, and certifies only on UNSAT with a SAT vacuity control
(``>=``: the truthful report meets it with equality).  A SAT answer is NOT a violation of SP (the
lemma is only sufficient): the caller falls back to the full encoding.
"""
from __future__ import annotations

import time

import z3

from .domain import Domain, Shape, build_domain, dominant_cases
from .pool import run_jobs, split_jobs
from .specs import Spec
from .symbolic import Ctx, vmul

__all__ = ["REDUCIBLE_FAMILIES", "reducible", "reduced_query", "reduced_sp"]

#: spec families whose allocation on the certification domain is the maximal common level
REDUCIBLE_FAMILIES = ("drf-closed-form", "leximin", "algorithm1")


def reducible(spec: Spec) -> bool:
    return spec.family in REDUCIBLE_FAMILIES and spec.norm is not None


def reduced_query(spec: Spec, shape: Shape, dom_case, strict: bool) -> tuple[Domain, Ctx]:
    """``exists c, d_1, d' in the domain: rho N(d') > N(d)`` (``>=`` for the control) for user ``u1``."""
    dom = build_domain(shape, spec.normalisation, dom_case, misreport=True)
    ctx = dom.ctx
    n_true = spec.norm(ctx, dom.truth, 0, "T")
    ctx.relaxed = True  # N(d') only needs to be large: one-sided mins / maxes (every normaliser is
    n_dev = spec.norm(ctx, dom.deviated, 0, "D")  # increasing in its mins, decreasing in its maxes)
    ctx.relaxed = False
    if n_true is None or n_dev is None:
        raise ValueError(f"{spec.name}: a positive user has no normaliser")
    rho = ctx.nonneg("rho")
    true_d, true_e = dom.truth.demand[0], dom.truth.external_demand[0]
    mis_d, mis_e = dom.misreport
    for a, b in list(zip(mis_d, true_d)) + list(zip(mis_e, true_e)):
        ctx.add(_bool(vmul(rho, b) <= a))  # rho <= d'/d (one-sided: the goal wants rho large)
    (nd, dd), (nt, dt) = n_dev, n_true  # N = num / den, den > 0
    lhs = vmul(vmul(rho, nd), dt)
    rhs = vmul(nt, dd)
    ctx.add(_bool(lhs > rhs if strict else lhs >= rhs))
    return dom, ctx


def _bool(v):
    return z3.BoolVal(v) if isinstance(v, bool) else v


def reduced_sp(spec: Spec, shape: Shape, n_workers: int, deadline: float, timeout: float,
               split: int = 256) -> tuple[str, str, int]:
    """``(status, note, queries)``: 'certified' (every query UNSAT, control SAT), 'premise-fails' (z3
    found ``d, d'`` with ``rho N(d') > N(d)``: the lemma does not apply, no verdict), 'vacuous' or
    'unknown'."""
    doms = dominant_cases(shape, misreport=True) if spec.normalisation == "dominant" else [None]
    jobs = []
    for k, dc in enumerate(doms):
        if time.monotonic() > deadline:
            return "unknown", f"time budget exhausted while building the reduced queries ({k} of {len(doms)})", \
                len(jobs)
        _, ctx = reduced_query(spec, shape, dc, True)
        jobs.extend(split_jobs(k, ctx.cons, (), timeout, split))
    unknown: list = []
    for r in run_jobs(jobs, n_workers, deadline):
        if r.status == "sat":
            return "premise-fails", f"z3 found reports with rho N(d') > N(d) (dominant case {doms[r.key[0]]})", \
                len(jobs)
        if r.status == "unknown":
            unknown.append(r.reason)
    if unknown:
        return "unknown", f"{len(unknown)} of {len(jobs)} reduced queries undecided ({'; '.join(sorted(set(unknown)))})", \
            len(jobs)
    ctl = []
    for k, dc in enumerate(doms):
        _, ctx = reduced_query(spec, shape, dc, False)
        ctl.extend(split_jobs(k, ctx.cons, (), timeout, split))
    for r in run_jobs(ctl, n_workers, deadline):
        if r.status == "sat":
            return "certified", (f"Lemma L7 reduction (docs/z3.md): rho N(d') <= N(d) proved by z3 ({len(jobs)} "
                                 f"queries unsat; vacuity control sat); holds for any number of users"), len(jobs)
    return "vacuous", "the reduced query and its control are both unsat", len(jobs)
