"""DRF-ER (seed 004 Sec. 3.3, [37]; Sec. 8): DRF-alpha with the external split a decision variable.

Eliminating ``alpha`` (``sum_s alpha_s <= c_er``, ``sum_j x[j,s] d_er[j] <= alpha_s``) leaves exactly
chi(E)'s external row, so DRF-ER is Algorithm 1 with (8f) "modified to equalize the active users'
dominant shares" (Sec. 8): normaliser ``1 / ds_j`` over pooled capacities and the external
capacities (``mechanisms.paper.normalisers.pooled_dominant_normaliser``).  ``info["alpha"]`` reports the
split the LP chose (any split with these lower bounds works).
"""
from __future__ import annotations

from fractions import Fraction

from mechverify.allocation import Allocation
from mechverify.model import Environment

from ..normalisers import pooled_normalisers
from ...core.registry import Claim, register
from .algorithm1 import algorithm1
from .setting import SEED004_SETTING, T2
from ...core.z3spec import Z3Spec

__all__ = ["drf_er", "alpha_used", "DRF_ER_CLAIMS"]


def alpha_used(env: Environment, alloc: Allocation) -> list:
    """The external split an allocation uses: ``alpha[s][k] = sum_j x[j,s] d_er[j,k] / c_er[k]``."""
    out = []
    for s in range(env.n_servers):
        row = []
        for k in range(env.n_external):
            used = sum((alloc.x[j][s] * env.external_demand[j][k] for j in range(env.n_users)),
                       Fraction(0) if alloc.exact else 0.0)
            cap = env.external_capacity[k]
            row.append(used / cap if cap else (Fraction(0) if alloc.exact else 0.0))
        out.append(row)
    return out


DRF_ER_CLAIMS = (
    Claim("ef", "holds", f"{T2} ([37])", variant="literal"),
    Claim("po", "holds", f"{T2} ([37])", variant="fractional"),
    Claim("sp", "holds", f"{T2} ([37])", variant="demand"),
    Claim("si", "fails", f"{T2} ([37]); Sec. 6.2 Fig. 3", variant="external"),
)


@register("drf-er", "DRF-ER: equalised dominant shares, external split chosen by the LP (Algorithm 1 with DRF shares)",
          SEED004_SETTING, DRF_ER_CLAIMS, source="004 Sec. 3.3 and Sec. 8 ([37])",
          notes="alpha as a decision variable = chi(E)'s external row; info['alpha'] is the split used.",
          z3=Z3Spec("algorithm1", "pooled-dominant-share+external", normalisation="dominant",
                    description="Algorithm 1 with dominant shares"))
def drf_er(env: Environment, exact: bool = False) -> Allocation:
    """Algorithm 1 with DRF-ER's pooled dominant-share normaliser; ``info['alpha']`` is the split used."""
    norms = pooled_normalisers(env, exact, ext=True)
    a = algorithm1(env, "drf-er", exact, norms)
    a.info["alpha"] = alpha_used(env, a)
    return a
