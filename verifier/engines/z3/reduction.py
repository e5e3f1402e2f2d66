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
module does not rely on these hand proofs: :func:`reduced` asks z3 for a violation of (L7) over the
domain, with the spec's own normaliser, and certifies only on UNSAT with a SAT vacuity control
(``>=``: the truthful report meets it with equality).  A SAT answer is NOT a violation of SP (the
lemma is only sufficient): the caller falls back to the full encoding.

**Lemma L9 (per-server normalisers).**  Let ``N(d) = min( sum_s m(c_s, d), m(c_er, d_er) )`` with
``m(c, v) = min_i c_i / v_i`` (TSF's ``gamma``, TSF-ER's ``eta``; no external term when ``K = 0``;
``Spec.per_server``).  If the one-server inequality

        rho_n * m(1, v') <= m(1, v)   for all v, v' > 0 in n dimensions, rho_n = min_i v'_i / v_i   (L9)

holds for ``n = R`` and (when ``K > 0``) ``n = K``, then (L7) holds for every number of servers.
*Proof.*  Fix a server ``s`` and put ``v_r = d_r / c_sr``, ``v'_r = d'_r / c_sr``: then ``m(c_s, d) =
m(1, v)`` and ``rho_R = min_r d'_r / d_r = min_r v'_r / v_r >= rho``, so ``rho m(c_s, d') <= rho_R m(1, v')
<= m(1, v) = m(c_s, d)``.  Summing over ``s``, and likewise for the external term (``rho_K >= rho``),
``rho min(A', E') = min(rho A', rho E') <= min(A, E)``.  QED.  (L9) is scale-free in ``v`` and ``v'``
separately (both sides scale alike), so the one-server domain's normalisation (capacities 1,
``v_1 = 1``) loses nothing, and the query is exactly the reduced query of the SAME spec on the shape
``users x 1 server x n resources``, whose normaliser is ``m(1, .)``.  A failure of (L9) says nothing:
the direct S-server query is tried next.

**Lemma L8 (EF).** On the same domain, for a common-level mechanism with equal weights, user ``j``
envies ``k`` iff ``rho_jk N_k > N_j`` with ``rho_jk = min( min_r d_k,r / d_j,r, min_k' d_er k / d_er j)``.
*Proof.* ``k``'s bundle is ``x_{k,s} d_k`` on each server (and ``X_k d_er,k``), so ``j`` runs exactly
``rho_jk X_k`` true tasks with it (the same ratio on every server; no placement), and ``X_j = N_j g*``,
``X_k = N_k g*`` with ``g* > 0`` on D.  An equivalence: a SAT model IS a violation candidate (it still
goes through the exact re-check before it is reported).
"""
from __future__ import annotations

import time
from typing import NamedTuple, Optional

import z3

from .domain import Domain, Shape, build_domain, dominant_cases
from .pool import run_jobs, split_jobs
from .specs import Spec
from .symbolic import Ctx, vmul

__all__ = ["REDUCIBLE_FAMILIES", "Reduced", "reducible", "reduced_query", "reduced"]

#: spec families whose allocation on the certification domain is the maximal common level
REDUCIBLE_FAMILIES = ("drf-closed-form", "leximin", "algorithm1")


def reducible(spec: Spec) -> bool:
    """The spec is a common-level mechanism on the certification domain (Lemmas L4, L7, L8 apply)."""
    return spec.family in REDUCIBLE_FAMILIES and spec.norm is not None


def reduced_query(spec: Spec, shape: Shape, dom_case, strict: bool, prop: str = "sp") -> tuple[Domain, Ctx]:
    """SP (L7): ``exists c, d_1, d': rho N(d') > N(d)`` for ``u1``'s report ``d'``.
    EF (L8): ``exists c, d_1, d_2: rho_12 N(d_2) > N(d_1)`` with ``rho_12 = min d_2/d_1``.
    ``>=`` for the control.  ``N`` on the large side is encoded one-sided (only its size matters)."""
    dom = build_domain(shape, spec.normalisation, dom_case, misreport=(prop == "sp"))
    ctx = dom.ctx
    small = spec.norm(ctx, dom.truth, 0, "T")
    ctx.relaxed = True  # the large side only needs to be large: one-sided mins / maxes (every
    # normaliser is increasing in its mins and decreasing in its maxes)
    large = spec.norm(ctx, dom.deviated, 0, "D") if prop == "sp" else spec.norm(ctx, dom.truth, 1, "T1")
    ctx.relaxed = False
    if small is None or large is None:
        raise ValueError(f"{spec.name}: a positive user has no normaliser")
    rho = ctx.nonneg("rho")
    base_d, base_e = dom.truth.demand[0], dom.truth.external_demand[0]
    if prop == "sp":
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

    @property
    def method(self) -> str:
        """``Lemma L7 reduction`` / ``Lemmas L7 + L9 reduction`` / ``Lemma L8 reduction``."""
        return f"Lemma{'s' if '+' in self.lemmas else ''} {self.lemmas} reduction"


def reduced(spec: Spec, prop: str, shape: Shape, n_workers: int, deadline: float, timeout: float,
            split: int = 256) -> Reduced:
    """``Reduced(status, note, queries, model, lemmas)``.  Status: 'certified' (every query UNSAT, control SAT);
    'sat' -- SP: Lemma L7's premise fails (NOT a violation: no verdict); EF: Lemma L8 is an
    equivalence, so ``model = (domain, values, algebraic)`` is a candidate violation for the exact
    re-check; 'vacuous'; 'unknown'."""
    if prop == "sp" and spec.per_server and (shape.servers > 1 or shape.external > 0):
        dims = sorted({shape.resources} | ({shape.external} if shape.external else set()))
        total, notes = 0, []
        for n in dims:
            st, note, nq, _, _ = reduced(spec, prop, Shape(users=shape.users, servers=1, resources=n),
                                         n_workers, deadline, timeout, split)
            total += nq
            notes.append(f"n = {n}: {st}")
            if st != "certified":
                break
        else:
            return Reduced("certified", (f"Lemmas L7 + L9 (docs/z3.md): rho N(d') <= N(d) follows from the "
                                         f"one-server inequality rho_n m(v') <= m(v), proved by z3 for n = "
                                         f"{', '.join(map(str, dims))} ({total} queries unsat; vacuity control "
                                         f"sat); holds for any number of users and servers"), total, None, "L7 + L9")
        if time.monotonic() > deadline:
            return Reduced("unknown", f"Lemma L9 not established ({'; '.join(notes)}) and no time left", total)
        direct = _direct(spec, prop, shape, n_workers, deadline, timeout, split)
        return direct._replace(note=f"{direct.note} (Lemma L9 tried first: {'; '.join(notes)})",
                               queries=direct.queries + total)
    return _direct(spec, prop, shape, n_workers, deadline, timeout, split)


def _direct(spec: Spec, prop: str, shape: Shape, n_workers: int, deadline: float, timeout: float,
            split: int) -> Reduced:
    """The reduced query (L7 / L8) on ``shape`` itself."""
    lemma = "L7" if prop == "sp" else "L8"
    doms = dominant_cases(shape, misreport=(prop == "sp")) if spec.normalisation == "dominant" else [None]
    jobs, built = [], {}
    for k, dc in enumerate(doms):
        if time.monotonic() > deadline:
            return Reduced("unknown", f"time budget exhausted while building the reduced queries ({k} of "
                                      f"{len(doms)})", len(jobs), None, lemma)
        dom, ctx = reduced_query(spec, shape, dc, True, prop)
        built[k] = dom
        jobs.extend(split_jobs(k, ctx.cons, list(dom.params), timeout, split))
    unknown: list = []
    for r in run_jobs(jobs, n_workers, deadline):
        if r.status == "sat":
            what = "reports with rho N(d') > N(d)" if prop == "sp" else "users with rho_12 N(d_2) > N(d_1)"
            return Reduced("sat", f"z3 found {what} (dominant case {doms[r.key[0]]})", len(jobs),
                           (built[r.key[0]], r.values, r.algebraic), lemma)
        if r.status == "unknown":
            unknown.append(r.reason)
    if unknown:
        return Reduced("unknown", f"{len(unknown)} of {len(jobs)} reduced queries undecided "
                                  f"({'; '.join(sorted(set(unknown)))})", len(jobs), None, lemma)
    ctl = []
    for k, dc in enumerate(doms):
        _, ctx = reduced_query(spec, shape, dc, False, prop)
        ctl.extend(split_jobs(k, ctx.cons, (), timeout, split))
    for r in run_jobs(ctl, n_workers, deadline):
        if r.status == "sat":
            ineq = "rho N(d') <= N(d)" if prop == "sp" else "rho_12 N(d_2) <= N(d_1)"
            return Reduced("certified", (f"Lemma {lemma} reduction (docs/z3.md): {ineq} proved by z3 ({len(jobs)} "
                                         f"queries unsat; vacuity control sat); holds for any number of users"),
                           len(jobs), None, lemma)
    return Reduced("vacuous", "the reduced query and its control are both unsat", len(jobs), None, lemma)
