"""How a mechanism is encoded: a :class:`Spec` (its family, normaliser and cases; ``covers`` says when an
environment is outside the encoding), built by :func:`get_spec` from the facet the mechanism declares where
it is registered (``Mechanism.z3``, a ``mechanisms.core.z3spec.Z3Spec``: the encoder and normaliser by their
names here, :data:`NORMALISERS`).  No mechanism is looked up by its name.  The normalisers mirror
``mechanisms/`` and are checked against them by :func:`.validate.validate_spec` (table: docs/z3.md, "Specs").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from mechverify.numbers import INF, is_inf

from .encoders import (Norm, SymAlloc, common_level, common_level_case_count, common_level_cases, drf_closed_form,
                       leximin, leximin_case_count, leximin_cases, lp_argmax, nash_kkt)
from .symbolic import Ctx, Row, SymEnv, build_poly, is_sym, known_zero, vsum

__all__ = ["Spec", "NORMALISERS", "get_spec", "not_covered", "encoded"]


# ---------------------------------------------------------------------- normalisers
def _fallback(ctx: Ctx, senv: SymEnv, j: int, tag: str) -> Any:
    """``mechanisms.paper.normalisers.fallback_normaliser``: ``n_j``, else the external limit, else ``None``."""
    if senv.tasks[j] is not None:
        return senv.tasks[j] if senv.tasks[j] > 0 else None
    m = _external_limit(ctx, senv, j, f"fb_{tag}_{j}")
    if is_inf(m) or known_zero(m):
        return None
    return m


def _external_limit(ctx: Ctx, senv: SymEnv, j: int, name: str) -> Any:
    """``min_k c_er[k] / d_er[j,k]`` over the external resources ``j`` demands (``INF``: none)."""
    return ctx.min_ratio([(senv.external_capacity[k], senv.external_demand[j][k]) for k in senv.ext_demands(j)],
                         name)


def _norm_from_value(ctx, senv, j, N, tag) -> Norm:
    """``N`` (V, ``INF`` or 0) -> ``(num, den)`` or ``None`` (fallback for ``INF``)."""
    if is_inf(N):
        N = _fallback(ctx, senv, j, tag)
    if N is None or known_zero(N):
        return None
    return (N, Fraction(1))


def _norm_from_share(ctx, senv, j, share, tag) -> Norm:
    """``N = 1/share`` (share inf -> 0 -> None; share 0 -> N inf -> fallback)."""
    if is_inf(share):
        return None
    if known_zero(share):
        return _norm_from_value(ctx, senv, j, INF, tag)
    return (Fraction(1), share)


def dominant_share(ctx: Ctx, senv: SymEnv, j: int, tag: str, *, pooled: bool, ext: bool) -> Any:
    """``max`` over demanded resources of ``d/c`` with ``c`` the server-0 capacity (``pooled=False``,
    DRF) or the pooled capacity; external resources count with ``ext`` (their capacity ``c_er``).
    ``INF`` if a demanded resource has zero capacity; 0 if nothing is demanded."""
    if getattr(senv, "unit_dominant", None) and senv.unit_dominant[j] and (ext or not senv.K):
        return Fraction(1)  # the domain normalised this vector: its largest share is exactly 1
    pairs = []
    for r in senv.demands(j):
        cap = senv.total_capacity(r) if pooled else senv.capacity[0][r]
        pairs.append((senv.demand[j][r], cap))
    if ext:
        for k in senv.ext_demands(j):
            pairs.append((senv.external_demand[j][k], senv.external_capacity[k]))
    if any(known_zero(c) for _, c in pairs):
        return INF
    return ctx.max_ratio(pairs, f"ds_{tag}_{j}")


def tsf_gamma(ctx: Ctx, senv: SymEnv, j: int, tag: str) -> Any:
    """TSF's ``gamma_j = sum_s min_r c[s,r] / d[j,r]`` (monopoly tasks summed over servers)."""
    terms = [senv.monopoly(ctx, j, s, tag) for s in range(senv.S)]
    if any(is_inf(t) for t in terms):
        return INF
    return vsum(terms)


def tsf_er_eta(ctx: Ctx, senv: SymEnv, j: int, tag: str) -> Any:
    """TSF-ER's ``eta_j = min(gamma_j, min_k c_er[k] / d_er[j,k])`` (seed 004 eq. (6))."""
    comp = tsf_gamma(ctx, senv, j, tag)
    e = _external_limit(ctx, senv, j, f"eer_{tag}_{j}")
    if is_inf(e):
        return comp
    if is_inf(comp):
        return e
    return ctx.min_of([comp, e], f"eta_{tag}_{j}")


# ---------------------------------------------------------------------- specs
@dataclass
class Spec:
    """How one mechanism is encoded: its family, normaliser and certification-domain normalisation."""

    name: str
    family: str  # 'drf-closed-form' | 'leximin' | 'algorithm1' | 'lp-argmax' | 'kkt'
    norm: Optional[Callable] = None  # (ctx, senv, j, tag) -> Norm
    placement: bool = True  # polytope honours eligibility
    normalisation: str = "first"  # certification domain: 'first' (d[j,0] = 1) or 'dominant'
    scale_invariant: bool = True
    requires_unbounded: bool = False
    description: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def per_server(self) -> bool:
        """The normaliser is ``min( sum_s m(c_s, d), m(c_er, d_er) )`` with ``m(c, v) = min_i c_i / v_i``
        (:func:`tsf_gamma`, :func:`tsf_er_eta`): Lemma L9 of ``reduction.py`` applies.  Read off the
        normaliser function itself, so a spec with another normaliser never qualifies."""
        return self.norm in (_n_tsf, _n_eta)

    # -------------------------------------------------------------- coverage
    def covers(self, senv: SymEnv) -> Optional[str]:
        """Why ``senv`` is outside what the encoding covers (``None``: covered)."""
        if self.requires_unbounded and any(t is not None for t in senv.tasks):
            return f"{self.name}: the encoding covers unbounded task counts only"
        for j in range(senv.J):
            if not senv.demands(j) and not senv.ext_demands(j) and senv.tasks[j] is None:
                return f"users[{j}]: demands nothing and is unbounded"
        if self.family == "algorithm1":
            ctx = Ctx()
            poly = build_poly(ctx, senv, "cov", bounds=False)
            for j in range(senv.J):
                if poly.can_run(j) and not any(any(c[0] == j for c in row.coeffs) for row in poly.rows):
                    return (f"users[{j}]: uses no resource Algorithm 1's LP limits (its round LP is unbounded; "
                            f"the implementation's cap is not encoded)")
        return None

    def participants(self, senv: SymEnv) -> list[int]:
        """Structurally participating users (can run, normaliser finite and positive)."""
        from .outcome import tick

        ctx = Ctx()
        out = []
        for j in range(senv.J):
            tick(f"computing the normalisers ({j} of {senv.J} users)")
            if not any(senv.usable(j, s, self.placement) for s in range(senv.S)):
                continue
            if self.norm is not None and self.norm(ctx, senv, j, "p") is None:
                continue
            out.append(j)
        return out

    def use_closed_form(self, senv: SymEnv) -> bool:
        """DRF's one-round closed form applies: unbounded tasks, positive capacities and demands."""
        if self.family != "drf-closed-form":
            return False
        if any(t is not None for t in senv.tasks):
            return False
        if any(known_zero(c) for c in list(senv.capacity[0]) + list(senv.external_capacity)):
            return False
        for j in self.participants(senv):
            if any(known_zero(v) for v in list(senv.demand[j]) + list(senv.external_demand[j])):
                return False
        return True

    def positive_domain(self, senv: SymEnv) -> bool:
        """Lemma L4's premise: unbounded tasks, every capacity positive, every user eligible everywhere
        and demanding every resource and every external resource."""
        if any(t is not None for t in senv.tasks):
            return False
        if any(known_zero(c) for row in senv.capacity for c in row) or \
                any(known_zero(c) for c in senv.external_capacity):
            return False
        for j in range(senv.J):
            if len(senv.demands(j)) != senv.R or len(senv.ext_demands(j)) != senv.K:
                return False
            if self.placement and senv.eligible[j] != frozenset(range(senv.S)):
                return False
        return True

    def cases(self, senv: SymEnv, targets: Sequence[int]) -> list:
        """The discrete cases the encoding is split into (``targets``: users the goal reads)."""
        if self.family == "drf-closed-form" and self.use_closed_form(senv):
            return [None]
        if self.family in ("leximin", "drf-closed-form"):
            if self.positive_domain(senv):
                return ["common"]  # Lemma L4: the leximin puts every user at one level
            return leximin_cases(self.participants(senv), targets)
        if self.family == "algorithm1":
            bounded = [j for j in self.participants(senv) if senv.tasks[j] is not None]
            return common_level_cases(bounded)
        return [None]

    def case_count(self, senv: SymEnv, targets: Sequence[int]) -> int:
        """How many cases :meth:`cases` gives (an upper bound), without enumerating them."""
        if self.family == "drf-closed-form" and self.use_closed_form(senv):
            return 1
        if self.family in ("leximin", "drf-closed-form"):
            if self.positive_domain(senv):
                return 1
            parts = self.participants(senv)
            return leximin_case_count(len(parts), len([t for t in set(targets) if t in parts]))
        if self.family == "algorithm1":
            return common_level_case_count(len([j for j in self.participants(senv) if senv.tasks[j] is not None]))
        return 1

    # -------------------------------------------------------------- encoding
    def encode(self, ctx: Ctx, senv: SymEnv, case, tag: str, need: str = "exact") -> SymAlloc:
        """Constraints "x is the allocation" for ``case``.  ``need``: which bound on the totals the
        goal depends on ("exact", "lower": encoded totals >= true ones, "upper": <=); only the
        single-LP encodings use it (Lemma L5), the others are exact."""
        J = senv.J
        if self.family == "drf-closed-form" and case is None:
            poly = build_poly(ctx, senv, tag)
            share = [None] * J
            for j in self.participants(senv):
                share[j] = dominant_share(ctx, senv, j, tag, pooled=False, ext=True)
            return drf_closed_form(ctx, poly, share, tag, need)
        if self.family in ("leximin", "drf-closed-form") and case == "common":
            norms = [self.norm(ctx, senv, j, tag) for j in range(J)]
            alloc = common_level(ctx, senv, norms, (), tag, need=need)
            alloc.note = "leximin = max common level (Lemma L4)"
            return alloc
        if self.family in ("leximin", "drf-closed-form"):
            poly = build_poly(ctx, senv, tag, placement=self.placement)
            norms = [self.norm(ctx, senv, j, tag) if poly.can_run(j) else None for j in range(J)]
            for j in range(J):
                if norms[j] is None and poly.can_run(j):
                    for s in poly.user_cols[j]:
                        ctx.add(poly.x[(j, s)] == 0)  # not participating: the solver leaves it at 0
            return leximin(ctx, poly, norms, case, tag)
        if self.family == "algorithm1":
            norms = [self.norm(ctx, senv, j, tag) for j in range(J)]
            return common_level(ctx, senv, norms, case, tag, need=need)
        if self.family == "lp-argmax":
            return self._cru(ctx, senv, tag)
        if self.family == "kkt":
            poly = build_poly(ctx, senv, tag)
            dead = set()
            for row in poly.rows:
                if known_zero(row.rhs):
                    dead.update(row.coeffs)
            part = [j for j in range(J) if any((j, s) not in dead for s in poly.user_cols[j])]
            for col in dead:
                ctx.add(poly.x[col] == 0)
            return nash_kkt(ctx, poly, part, tag)
        raise ValueError(f"unknown family {self.family}")

    def _cru(self, ctx: Ctx, senv: SymEnv, tag: str) -> SymAlloc:
        """CRU (``mechanisms/paper/external_resources/cru.py``): ``max sum X_j/eta_j`` s.t. chi(E), SI
        ``X_j >= psi_j = u_j(equal split)``, EF ``rho_jk X_k <= X_j`` (unbounded users)."""
        J = senv.J
        poly = build_poly(ctx, senv, tag)
        norms = [_norm_from_value(ctx, senv, j, tsf_er_eta(ctx, senv, j, tag), tag) for j in range(J)]
        extra: list[Row] = []
        for j in range(J):
            # psi_j = min(sum_s min_r (c/J)/d, min_k (c_er/J)/d_er) -- no placement in CRU's setting
            comp_terms = []
            for s in range(senv.S):
                pairs = [(senv.capacity[s][r] * Fraction(1, J), senv.demand[j][r]) for r in senv.demands(j)]
                comp_terms.append(ctx.min_ratio(pairs, f"psi_{tag}_{j}_{s}") if pairs else INF)
            comp = INF if any(is_inf(t) for t in comp_terms) else vsum(comp_terms)
            ext = [(senv.external_capacity[k] * Fraction(1, J), senv.external_demand[j][k])
                   for k in senv.ext_demands(j)]
            terms = [comp] + ([ctx.min_ratio(ext, f"psie_{tag}_{j}")] if ext else [])
            psi = ctx.min_of(terms, f"psim_{tag}_{j}")
            if is_inf(psi) or not poly.can_run(j):
                continue
            if not known_zero(psi):
                extra.append(Row({(j, s): Fraction(-1) for s in poly.user_cols[j]}, -psi if is_sym(psi) else -psi,
                                 "extra"))  # an SI row
        for j in range(J):
            for k in range(J):
                if k == j or not poly.can_run(k):
                    continue
                pairs = [(senv.demand[k][r], senv.demand[j][r]) for r in senv.demands(j)]
                pairs += [(senv.external_demand[k][kk], senv.external_demand[j][kk]) for kk in senv.ext_demands(j)]
                if not pairs:
                    continue  # rho = inf: only with a task bound (not covered)
                rho = ctx.min_ratio(pairs, f"rho_{tag}_{j}_{k}")
                if known_zero(rho):
                    continue
                co = {(k, s): rho for s in poly.user_cols[k]}
                for s in poly.user_cols[j]:
                    co[(j, s)] = co.get((j, s), Fraction(0)) - 1
                extra.append(Row(co, Fraction(0), "extra"))  # an EF row
        objective = [norms[j] if (norms[j] is not None and poly.can_run(j)) else None for j in range(J)]
        return lp_argmax(ctx, poly, extra, objective, tag)


def _n_drf(ctx, senv, j, tag):
    return _norm_from_share(ctx, senv, j, dominant_share(ctx, senv, j, tag, pooled=False, ext=True), tag)


def _n_drfh(ctx, senv, j, tag):
    return _norm_from_share(ctx, senv, j, dominant_share(ctx, senv, j, tag, pooled=True, ext=False), tag)


def _n_drf_er(ctx, senv, j, tag):
    return _norm_from_share(ctx, senv, j, dominant_share(ctx, senv, j, tag, pooled=True, ext=True), tag)


def _n_tsf(ctx, senv, j, tag):
    return _norm_from_value(ctx, senv, j, tsf_gamma(ctx, senv, j, tag), tag)


def _n_eta(ctx, senv, j, tag):
    return _norm_from_value(ctx, senv, j, tsf_er_eta(ctx, senv, j, tag), tag)


#: ``Z3Spec.normaliser`` -> the symbolic normaliser ``(ctx, senv, j, tag) -> Norm`` (looked up when a spec is
#: built, so a test may swap one)
NORMALISERS: dict[str, Callable] = {
    "dominant-share": _n_drf,  # 1 / max_{r in R + K} d/c, server 0's capacities, external pooled
    "pooled-dominant-share": _n_drfh,  # 1 / max_r d/C_r, pooled capacities
    "pooled-dominant-share+external": _n_drf_er,  # 1 / max(d/C, d_er/c_er)
    "monopoly-sum": _n_tsf,  # TSF's gamma: sum_s min_r c[s,r]/d[r]
    "eta": _n_eta,  # TSF-ER's eta: min(gamma, min_k c_er/d_er)
}


def _mechanism(mech):
    if isinstance(mech, str):
        from mechanisms import get

        return get(mech)
    return mech


def get_spec(mech) -> Optional[Spec]:
    """The spec of a mechanism (or its name), built from the facet it declares (``Mechanism.z3``); ``None``:
    no symbolic encoding (:func:`not_covered` says why)."""
    mech = _mechanism(mech)
    z = getattr(mech, "z3", None)
    if z is None or not z.encoder:
        return None
    norm = NORMALISERS[z.normaliser] if z.normaliser else None
    return Spec(mech.name, z.encoder, norm, placement=z.placement, normalisation=z.normalisation,
                requires_unbounded=z.requires_unbounded, description=z.description)


def not_covered(mech) -> str:
    """Why a mechanism has no symbolic encoding (its facet's ``not_encoded``, or that it declares none)."""
    mech = _mechanism(mech)
    z = getattr(mech, "z3", None)
    return z.not_encoded if z is not None and z.not_encoded else f"{mech.name}: no symbolic encoding"


def encoded() -> dict[str, Spec]:
    """Every registered mechanism with a symbolic encoding: name -> its spec (registry order)."""
    from mechanisms import all_mechanisms

    return {m.name: spec for m in all_mechanisms() if (spec := get_spec(m)) is not None}
