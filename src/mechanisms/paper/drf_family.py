"""DRF and its heterogeneous-server descendants (seeds 000, 001, 002).

Notation: pooled capacity ``C_r = sum_s c[s,r]``; pooled demand share ``D[j,r] = d[j,r] / C_r``
(seed 001 Sec. III-A, where capacities are normalised so that ``C_r = 1``).

* ``drf`` (Ghodsi et al.; seed 000 Sec. II-A eqs. (2)-(3), Def. 1): one server.  Dominant share
  ``s_j = x_j max_r d[j,r]/c_r``; weighted max-min (leximin) of ``s_j / w_j``.  Zero demands:
  resources with ``d[j,r] = 0`` are skipped in the max; progressive filling lets a user rise while
  none of its demanded resources is saturated.  External resources, if given, are pooled resources
  of the single server (``c_r = c_er[k]``, ``d[j,r] = d_er[j,k]``).  Task bounds are rows of chi(E).
* ``per-server-drf`` (seed 001 Sec. III-D): DRF run separately on every server ``s`` among the
  users that can use it, with that server's capacities.
* ``drfh`` (seed 001 eq. (4) and Sec. V-A): leximin of global dominant shares
  ``G_j / w_j = sum_s x[j,s] max_r D[j,r] / w_j`` over chi(E) (no placement in seed 001).
  ``drfh-lp7``: LP (7) exactly as printed -- one common level ``g`` with ``G_j = w_j g`` for every
  active user (equality); with finite task counts (Sec. V-A) users whose tasks are all scheduled
  are frozen and the common level raised again; it stops when the common level cannot rise.
  The two agree when every user demands every resource, with or without task bounds (at LP (7)'s
  optimum a user that could still rise frees a bundle every positive-demand user can share, the
  argument of seed 001 Prop. 2; tests/test_drf_family.py has a bounded example).  With zero demands
  LP (7) can stop early -- a user not demanding the saturated resource could still rise (also a
  bounded user demanding nothing) -- and the verifier shows where (PO fails for ``drfh-lp7``).
* ``c-drfh`` (seeds 000/002 Sec. II-B): DRFH's global dominant share computed as if all resources
  were pooled (placement ignored for ``D``), allocation subject to placement constraints.
* ``tsf`` (seeds 000/002 Sec. II-B, after Wang et al.): ``gamma_j = sum_s min_r c[s,r]/d[j,r]`` over
  ALL servers (monopolising the cluster as if there were no placement constraints); leximin of
  ``x_j / (w_j gamma_j)`` subject to placement.  ``cdrf`` (Friedman et al., 000 Sec. II-B): the same
  without placement constraints.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from mechverify.allocation import Allocation
from mechverify.lp import LPError, LPSession
from mechverify.model import Environment
from mechverify.numbers import as_float
from mechverify.polytope import TaskPolytope

from .leximin import leximin_allocation
from .drf_batch import drf_one_pool_batch, per_server_drf_batch
from .drf_pool import drf_one_pool
from .normalisers import (dominant_share_per_task, drf_normaliser, drfh_normaliser, finite_normaliser,  # noqa: F401
                          global_dominant_share, pooled_normalisers, tsf_gammas)
from ..core.registry import Claim, Setting, register
from ..core.z3spec import Z3Spec


# ---------------------------------------------------------------------- claims
_DRF_SRC = "000 Sec. II-A (Ghodsi et al. [4])"
DRF_CLAIMS = (
    Claim("si", "holds", _DRF_SRC), Claim("ef", "holds", _DRF_SRC), Claim("po", "holds", _DRF_SRC),
    Claim("sp", "holds", _DRF_SRC), Claim("srf", "holds", _DRF_SRC), Claim("bf", "holds", _DRF_SRC),
    Claim("pm", "holds", "001 Sec. III-C/III-D (DRF satisfies the properties of Sec. III-C on one server, [6],[10])",
          domain=("positive_demands",)),
)
_POS = ("positive_demands",)  # 001 Sec. III-A: "we assume positive demands for all users"
DRFH_CLAIMS = (
    Claim("ef", "holds", "001 Prop. 1", domain=_POS), Claim("po", "holds", "001 Prop. 2", domain=_POS),
    Claim("sp", "holds", "001 Prop. 3 (truthfulness)", domain=_POS),
    Claim("single-server-drf", "holds", "001 Prop. 4", domain=_POS),
    Claim("srf", "holds", "001 Prop. 5", domain=_POS), Claim("bf", "holds", "001 Prop. 6", variant="global", domain=_POS),
    Claim("pm", "holds", "001 Prop. 7", domain=_POS), Claim("si", "fails", "001 Sec. IV-D; 000/002 Sec. II-B"),
)
C_DRFH_CLAIMS = (
    Claim("ef", "holds", "002 Table I"), Claim("sp", "holds", "002 Table I"), Claim("po", "holds", "002 Table I"),
    Claim("si", "fails", "002 Table I"),
    Claim("bf", "fails", "000 Sec. II-B Fig. 1; 002 Sec. II-B Fig. 1; Table I", variant="per-server"),
)
TSF_CLAIMS = (
    Claim("si", "holds", "002 Table I (Wang et al. [14])"), Claim("ef", "holds", "002 Table I"),
    Claim("sp", "holds", "002 Table I"), Claim("po", "holds", "002 Table I"),
    Claim("bf", "fails", "000 Sec. II-B Fig. 1; 002 Sec. II-B Fig. 1; Table I", variant="per-server"),
    Claim("single-server-drf", "holds", "000 Sec. II-B (CDRF reduces to DRF on one server)"),
)
CDRF_CLAIMS = (
    Claim("po", "holds", "000 Sec. II-B (Friedman et al. [3])"), Claim("sp", "holds", "000 Sec. II-B"),
    Claim("ef", "holds", "000 Sec. II-B"), Claim("si", "holds", "000 Sec. II-B"),
    Claim("single-server-drf", "holds", "000 Sec. II-B"),
)
PER_SERVER_DRF_CLAIMS = (
    Claim("po", "fails", "001 Sec. III-D, Figs. 1-3 (6 vs 10 tasks)"),
)


# ---------------------------------------------------------------------- drf
def _drf(env: Environment, exact: bool, name: str = "drf") -> Allocation:
    # the closed form (water filling, mechanisms/paper/drf_pool.py); tests/mechanisms/test_drf_pool.py checks it
    # against the LP path leximin_allocation(env, name, exact, [drf_normaliser(env, j) ...]) exactly
    return drf_one_pool(env, exact, name)


@register("drf", "Dominant Resource Fairness (single pool, weighted, zero demands, task bounds)",
          Setting(single_server=True, placement=True, external=True, bounds=True, weights=True),
          DRF_CLAIMS, source="000 Sec. II-A; 001 Sec. III-D",
          z3=Z3Spec("drf-closed-form", "dominant-share", normalisation="dominant",
                    description="closed form X_j D_j = w_j t (one round) when every user demands every resource; "
                                "else leximin"),
          batch=drf_one_pool_batch)
def drf(env: Environment, exact: bool = False) -> Allocation:
    """DRF on one pool: leximin of weighted dominant shares (seed 000 Sec. II-A)."""
    return _drf(env, exact)


@register("per-server-drf", "DRF applied separately on every server (naive extension)",
          Setting(placement=True, external=False, bounds=False, weights=True),
          PER_SERVER_DRF_CLAIMS, source="001 Sec. III-D",
          z3=Z3Spec.none("DRF run per server: not encoded (use the numeric engines)"), batch=per_server_drf_batch)
def per_server_drf(env: Environment, exact: bool = False) -> Allocation:
    """DRF run separately on every server among the users that can use it (seed 001 Sec. III-D)."""
    zero: Any = Fraction(0) if exact else 0.0
    x = [[zero] * env.n_servers for _ in range(env.n_users)]
    rounds = 0
    for s in range(env.n_servers):
        users = [j for j in range(env.n_users) if env.usable(j, s)]
        if not users:
            continue
        sub = env.restrict(users=users, servers=[s])
        a = _drf(sub, exact, "per-server-drf")
        rounds += a.info.get("rounds", 0)
        for jj, j in enumerate(users):
            x[j][s] = a.x[jj][0]
    return Allocation(env, tuple(tuple(r) for r in x), "per-server-drf", exact, {"rounds": rounds})


# ---------------------------------------------------------------------- drfh / c-drfh
def _drfh_norms(env: Environment, exact: bool) -> list:
    return pooled_normalisers(env, exact, ext=False)


@register("drfh", "DRFH: leximin of weighted global dominant shares (Wang, Liang, Li)",
          Setting(placement=False, external=False, bounds=True, weights=True),
          DRFH_CLAIMS, source="001 Sec. IV-A eq. (4), Sec. V-A",
          z3=Z3Spec("leximin", "pooled-dominant-share", placement=False, normalisation="dominant",
                    description="leximin of global dominant shares"))
def drfh(env: Environment, exact: bool = False) -> Allocation:
    """DRFH: leximin of weighted global dominant shares over chi(E) (seed 001 eq. (4))."""
    return leximin_allocation(env, "drfh", exact, _drfh_norms(env, exact))


@register("c-drfh", "C-DRFH: DRFH's pooled global dominant share under placement constraints",
          Setting(placement=True, external=False, bounds=True, weights=True),
          C_DRFH_CLAIMS, source="000 Sec. II-B; 002 Sec. II-B",
          z3=Z3Spec("leximin", "pooled-dominant-share", normalisation="dominant",
                    description="leximin of pooled dominant shares"))
def c_drfh(env: Environment, exact: bool = False) -> Allocation:
    """C-DRFH: DRFH's pooled global dominant share, allocation under placement constraints."""
    return leximin_allocation(env, "c-drfh", exact, _drfh_norms(env, exact))


@register("drfh-lp7", "DRFH as LP (7) printed: one common level, bound-saturated users frozen",
          Setting(placement=False, external=False, bounds=True, weights=True),
          DRFH_CLAIMS, source="001 Sec. IV-A LP (7), Sec. V-A",
          notes="Differs from leximin DRFH only when some user demands zero of some resource: the common "
                "level stops while that user could still rise (task bounds alone do not make them differ).",
          z3=Z3Spec.none("LP (7) with bound freezing and its early stop: not encoded"))
def drfh_lp7(env: Environment, exact: bool = False) -> Allocation:
    """LP (7): ``max g`` s.t. capacities, ``G_j = w_j g`` for active users; Sec. V-A: freeze users
    whose tasks are all scheduled (``x_j = n_j``) and repeat; stop when ``g`` cannot rise."""
    poly = TaskPolytope(env, mode="rdm", placement=False, external=False, bounds=True, exact=exact)
    lp = poly.lp
    g = lp.add_var(0, None, 0, name="g")
    norms = _drfh_norms(env, exact)
    Ns = [finite_normaliser(env, N, j) for j, N in enumerate(norms)]
    active = [j for j in range(env.n_users) if Ns[j] is not None and poly.can_run(j)]
    # coef[j] = 1 / (w_j N_j); floats: times the number of active users, so that g is O(1) (the
    # solvers' tolerances are absolute; see lexmaxmin.lex_max_min) -- g itself is never reported
    scale = 1 if exact else max(1, len(active))
    coef: dict[int, Any] = {}
    eq_rows: dict[int, int] = {}
    for j in active:
        coef[j] = 1 / (env.weight[j] * Ns[j]) if exact else scale / (as_float(env.weight[j]) * as_float(Ns[j]))
        coeffs = poly.total(j, coef[j])
        coeffs[g] = -1
        eq_rows[j] = lp.add_row(coeffs, 0, 0)
    lp.set_cost({g: 1})
    lp.maximize = True
    zero: Any = Fraction(0) if exact else 0.0
    if not active:
        return poly.allocation([zero] * lp.n_cols, exact, "drfh-lp7", {"rounds": 0})
    session = LPSession(lp)
    rounds, last_g = 0, None
    x = None
    while active:
        rounds += 1
        res = session.solve(exact=exact)
        if not res.ok:
            raise LPError(f"drfh-lp7 round {rounds}: {res.status} {res.reason}".strip())
        x, gval = res.x, res.x[g]
        # users whose bound is reached at this level: G_j = g reaches coef[j] * n_j
        done = []
        for j in active:
            if env.tasks[j] is None:
                continue
            if exact:
                reached = gval >= coef[j] * env.tasks[j]
            else:
                reached = gval >= coef[j] * as_float(env.tasks[j]) * (1 - 1e-9)
            if reached:
                done.append(j)
        if not done or (last_g is not None and gval == last_g):
            break
        last_g = gval
        for j in done:
            target = coef[j] * (env.tasks[j] if exact else as_float(env.tasks[j]))
            session.set_coef(eq_rows[j], g, 0)
            session.set_row_bounds(eq_rows[j], target, target)
        active = [j for j in active if j not in done]
    return poly.allocation(x[: g], exact, "drfh-lp7", {"rounds": rounds})


# ---------------------------------------------------------------------- tsf / cdrf
@register("tsf", "Task Share Fairness: leximin of x_j/(w_j gamma_j), gamma ignoring placement (Wang et al.)",
          Setting(placement=True, external=False, bounds=True, weights=True),
          TSF_CLAIMS, source="000 Sec. II-B; 002 Sec. II-B",
          z3=Z3Spec("leximin", "monopoly-sum", description="leximin of X_j / gamma_j"))
def tsf(env: Environment, exact: bool = False) -> Allocation:
    """TSF: leximin of ``x_j / (w_j gamma_j)``, gamma ignoring placement, allocation honouring it."""
    return leximin_allocation(env, "tsf", exact, tsf_gammas(env, exact))


@register("cdrf", "Containerized DRF: TSF without placement constraints (Friedman et al.)",
          Setting(placement=False, external=False, bounds=True, weights=True),
          CDRF_CLAIMS, source="000 Sec. II-B; 002 Sec. II-B",
          z3=Z3Spec("leximin", "monopoly-sum", placement=False, description="leximin of X_j / gamma_j"))
def cdrf(env: Environment, exact: bool = False) -> Allocation:
    """CDRF: TSF without placement constraints (Friedman et al.)."""
    return leximin_allocation(env, "cdrf", exact, tsf_gammas(env, exact))
