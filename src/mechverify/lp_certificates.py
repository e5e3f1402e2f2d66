"""Exact LP certificates from the one LP layer, in the form the independent checker
:mod:`mechverify.lp_certificate_checker` checks.

The producing side: the LPs are built by the project's own builders (``domination.domination_lp``,
``lexmaxmin.common_level_lp`` over ``polytope.TaskPolytope``), solved exactly (``lp.solve(exact=True)``:
HiGHS's or GLPK's optimal basis re-solved in rationals, with exact duals), and their rows renamed the way
the checker names the rows it re-derives from the instance.  Every certificate is run through the
checker before it is returned: one that the checker does not accept is never written (``None`` and the
checker's reason instead) -- a bug in either side shows up as a refusal, never as a certificate.

Multipliers are stored in the checker's form (``lp_certificate_checker``'s docstring): ``lambda_i >= 0`` for the row
written ``a_i^T y <= b_i``, and for a ``>=`` row for ``-a_i^T y <= -b_i``.  The LP layer's exact duals are
``d objective / d b_i`` of a maximisation, so a ``<=`` row's multiplier is its dual and a ``>=`` row's
is minus its dual.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Sequence

from . import lp_certificate_checker as checker
from .allocation import Allocation
from .domination import domination_lp
from .lexmaxmin import common_level_lp
from .lp import solve
from .model import Environment
from .numbers import fmt_exact, is_inf
from .polytope import TaskPolytope
from .utility import utility

__all__ = ["pareto_certificate", "level_certificate", "unreachable_from_level", "NORMALISERS"]

NORMALISERS = tuple(checker.NORMALISERS)


def _row_names(env: Environment, poly: TaskPolytope) -> dict[int, str]:
    """chi(E)'s rows of ``poly`` under the checker's names."""
    names = {i: checker.row_name("cap", env.servers[s], env.resources[r]) for (s, r), i in poly.capacity_rows.items()}
    names.update({i: checker.row_name("tdm", env.servers[s]) for s, i in poly.tdm_rows.items()})
    names.update({i: checker.row_name("ext", env.external[k]) for k, i in poly.external_rows.items()})
    names.update({i: checker.row_name("bound", env.users[j]) for j, i in poly.bound_rows.items()})
    return names


def _multipliers(lp: Any, row_dual: Sequence[Fraction], names: dict[int, str]) -> dict[str, str]:
    """The LP layer's exact duals as the checker's multipliers (module docstring), zeros left out."""
    out = {}
    for i, name in names.items():
        v = row_dual[i]
        if v:
            out[name] = fmt_exact(v if lp.row_upper[i] is not None else -v)
    return out


def _matrix(x: Sequence[Sequence[Any]]) -> list:
    return [[fmt_exact(v) for v in row] for row in x]


def _finish(cert: dict) -> tuple[Optional[dict], str]:
    """The checker's rows added for a reader, then the checker's verdict on the whole certificate."""
    try:
        cert["lp"] = checker.lp_of(cert).to_json()
        cert["claim"]["statement"] = checker.check_certificate(cert)
    except checker.LPCertificateError as exc:
        return None, f"the checker does not accept it ({exc})"
    return cert, ""


def _base(env: Environment, kind: str, mode: str, about: dict) -> dict:
    return {"format": checker.FORMAT, "claim": {"kind": kind, **about}, "instance": env.to_dict(),
            "feasible_set": {"mode": mode, "placement": True, "external": True, "bounds": True}}


def pareto_certificate(env: Environment, alloc: Allocation, mode: str,
                       about: Optional[dict] = None) -> tuple[Optional[dict], str]:
    """The domination LP's certificate for the exact allocation ``alloc`` in chi(E) of ``mode``:
    ``pareto-optimal`` (primal and dual, optimum = the allocation's total) or ``dominated`` (the LP's
    optimal allocation, which gives every user at least as much and someone more, with the dual proving
    its total maximal).  ``about``: what the claim is about (mechanism, property, ...).  Returns
    ``(certificate, "")`` or ``(None, why not)``."""
    if not alloc.exact:
        return None, "the allocation is not exact"
    u = [utility(env, alloc, j) for j in range(env.n_users)]
    built = domination_lp(env, u, mode)
    if built is None:
        return None, "the domination LP has no columns for a user with tasks"
    poly, targets = built
    res = solve(poly.lp, exact=True)
    if not res.ok or res.row_dual is None:
        return None, f"the exact domination LP gave no duals ({res.status}{', ' + res.method if res.method else ''})"
    names = _row_names(env, poly)
    names.update({i: checker.row_name("target", env.users[j]) for j, i in targets.items()})
    total = sum(u, Fraction(0))
    kind = "dominated" if res.objective > total else "pareto-optimal"
    cert = _base(env, kind, mode, dict(about or {}))
    cert["allocation"] = _matrix(alloc.x)
    cert["primal"] = {checker.col_name(env.users[j], env.servers[s]): fmt_exact(res.x[c])
                      for (j, s), c in poly.var.items() if res.x[c]}
    cert["dual"] = _multipliers(poly.lp, res.row_dual, names)
    cert["optimum"] = fmt_exact(res.objective)
    cert["solver"] = res.method
    return _finish(cert)


def level_certificate(env: Environment, alloc: Allocation, mode: str, normaliser: str,
                      about: Optional[dict] = None) -> tuple[Optional[dict], str]:
    """The maximal common level of the scores ``x_j / (w_j N_j)`` over chi(E) of ``mode`` (the first level
    of a leximin mechanism: ``mechanisms.paper.leximin.leximin_allocation``), proven by the dual of
    ``lexmaxmin.common_level_lp``, with the exact allocation ``alloc`` (whose ``info["normaliser"]`` holds
    its ``N_j``) as the primal.  ``normaliser``: the checker's name of the ``N_j`` formula
    (:data:`NORMALISERS`).  Returns ``(certificate, "")`` or ``(None, why not)``."""
    if normaliser not in checker.NORMALISERS:
        return None, f"the checker does not re-derive the normaliser {normaliser!r}"
    norms = (alloc.info or {}).get("normaliser")
    if not alloc.exact or norms is None or len(norms) != env.n_users:
        return None, "the allocation is not exact or carries no normalisers"
    derived = checker.normalisers(env, normaliser)
    infinite = [env.users[j] for j, N in enumerate(norms) if N is None or is_inf(N) or derived[j] is None]
    if infinite:  # the mechanism then uses its fallback (docs/model.md), which the checker does not re-derive
        return None, f"the normaliser of {', '.join(infinite)} is infinite (a fallback the checker does not re-derive)"
    poly = TaskPolytope(env, mode=mode, placement=True, external=True, bounds=True)
    scores = [poly.total(j, 1 / (env.weight[j] * Fraction(N))) if N and poly.can_run(j) else {}
              for j, N in enumerate(norms)]
    if not any(scores):
        return None, "no user takes part in the rounds (no common level to certify)"
    lp, t, row_of = common_level_lp(poly.lp, scores)
    res = solve(lp, exact=True)
    if not res.ok or res.row_dual is None:
        return None, f"the exact level LP gave no duals ({res.status})"
    names = _row_names(env, poly)
    names.update({i: checker.row_name("level", env.users[j]) for j, i in row_of.items()})
    cert = _base(env, "level", mode, {"normaliser": normaliser, **(about or {})})
    cert["allocation"] = _matrix(alloc.x)
    cert["normalisers"] = {env.users[j]: fmt_exact(N) for j, N in enumerate(norms)}
    cert["level"] = fmt_exact(res.objective)
    cert["dual"] = _multipliers(lp, res.row_dual, names)
    cert["solver"] = res.method
    return _finish(cert)


def unreachable_from_level(level_cert: dict, factor: Fraction) -> tuple[Optional[dict], str]:
    """From a ``level`` certificate (level ``t*``): no allocation gives every participating user the tasks
    of the score ``L = factor * t*`` (``factor > 1``: ``tau_j = L w_j N_j``), by a Farkas ray built from the
    level's dual (chi(E)'s multipliers as they are, ``target[u]``'s = ``level[u]``'s / (w_u N_u); then the
    combined right-hand side is ``t* - L sum_u mu_u <= t* - L < 0`` since the ``t`` column makes
    ``sum_u mu_u >= 1``).  Returns ``(certificate, "")`` or ``(None, why not)``."""
    env_data = level_cert["instance"]
    from .instances import parse_environment

    env = parse_environment(env_data)
    t_star = Fraction(level_cert["level"])
    L = factor * t_star
    if factor <= 1 or L <= 0:
        return None, "the level must be positive and the factor above 1"
    ray, targets = {}, {}
    for name, v in level_cert["dual"].items():
        if name.startswith("level["):
            u = name[len("level["):-1]
            j = env.users.index(u)
            wN = env.weight[j] * Fraction(level_cert["normalisers"][u])
            targets[u] = fmt_exact(L * wN)
            ray[checker.row_name("target", u)] = fmt_exact(Fraction(v) / wN)
        else:
            ray[name] = v
    about = {k: v for k, v in level_cert["claim"].items() if k not in ("kind", "statement", "normaliser")}
    cert = {"format": checker.FORMAT, "claim": {"kind": "unreachable", **about,
                                                  "derived_from": f"level {fmt_exact(t_star)} x {fmt_exact(factor)}"},
            "instance": env_data, "feasible_set": dict(level_cert["feasible_set"]), "targets": targets, "ray": ray}
    return _finish(cert)
