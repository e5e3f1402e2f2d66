"""Shared building block: "a score per user and a feasible set" -> leximin allocation.

Most mechanisms of the seeds are lexicographic max-min problems

    leximin_j  sigma_j(x) = x_j / (w_j * N_j)     over x in chi(E) (+ extra rows)

where ``x_j = sum_s x[j,s]`` and the normaliser ``N_j`` is what the mechanism is about
(DRF: 1/dominant share; DRFH/C-DRFH: 1/global dominant share; TSF/CDRF: gamma_j; TSF-ER: eta_j;
LMM-MMS: MMS_j).  :func:`leximin_allocation` builds the polytope, the scores, runs the one solver
(``mechverify.lexmaxmin``) and returns the ``Allocation``.

Every ``N_j`` lives in ``mechanisms/paper/normalisers.py``.  Normaliser conventions (docs/model.md):
* ``N_j = 0`` or a user with no usable server: the user can run nothing; it gets 0 tasks and takes
  no part in the rounds.
* ``N_j = inf`` (the user's tasks consume nothing the mechanism measures, e.g. all-zero demands):
  the paper's score is identically 0.  We use ``N_j = n_j`` (its task bound) or, without a bound,
  its external-resource limit ``min_k c_er[k]/d_er[j,k]``; the model guarantees one is finite.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.lexmaxmin import lex_max_min
from mechverify.model import Environment
from mechverify.numbers import as_float, is_inf
from mechverify.polytope import TaskPolytope

from .normalisers import fallback_normaliser

__all__ = ["leximin_allocation"]


def leximin_allocation(env: Environment, name: str, exact: bool, normaliser: Sequence[Any], *,
                       mode: str = "rdm", placement: bool = True, external: bool = True, bounds: bool = True,
                       extra_rows: Optional[Callable[[TaskPolytope], None]] = None,
                       info: Optional[dict] = None) -> Allocation:
    """Leximin of ``x_j / (w_j N_j)`` over chi(E).  ``normaliser[j]`` may be 0 / inf (see above)."""
    poly = TaskPolytope(env, mode=mode, placement=placement, external=external, bounds=bounds, exact=exact)
    if extra_rows is not None:
        extra_rows(poly)
    scores: list[Optional[dict]] = []
    used_norm: list[Any] = []
    norms: list[Any] = []
    for j in range(env.n_users):
        N = normaliser[j]
        if N is not None and is_inf(N):
            N = fallback_normaliser(env, j)
        used_norm.append(N)  # as given (0 stays 0 in the diagnostics)
        norms.append(None if N is None or N == 0 or not poly.can_run(j) else N)
    for j, N in enumerate(norms):
        if N is None:
            scores.append({})
            continue
        coef = 1 / (env.weight[j] * Fraction(N)) if exact else 1.0 / (as_float(env.weight[j]) * as_float(N))
        scores.append(poly.total(j, coef))
    res = lex_max_min(poly.lp, scores, exact=exact)  # floats: solved in units of the equal split
    # the leximin score vector is unique, so every user's total x_j is unique (the split over
    # servers need not be)
    meta = {"rounds": res.rounds, "levels": res.levels, "normaliser": used_norm, "unique_totals": True}
    if info:
        meta.update(info)
    return poly.allocation(res.x, exact, name, meta)
