"""TSF-ER: Task Share Fairness with External Resource (seed 004, Meskar & Liang, Sec. 4 and Sec. 8).

Task share ``x_j / (w_j eta_j)`` with ``eta_j`` of eq. (6) (``mechanisms.paper.normalisers.eta``).  Two
mechanisms, because the paper's algorithm and its definition are not the same object:

* ``tsf-er`` -- Algorithm 1 exactly as printed (``algorithm1.py``): (8f) keeps every active user at
  ONE common level;
* ``tsf-er-maxmin`` -- what Theorem 5 says Algorithm 1 computes: the leximin of the task shares over
  chi(E) (``mechanisms.paper.leximin.leximin_allocation``).

They coincide when every user demands every resource (proof sketch in docs/seed004-mechanisms.md,
"TSF-ER: Algorithm 1 vs. leximin"); with zero demands Algorithm 1 can stop everybody at a level
where some user is blocked by a resource another does not need, and is then not PO.
"""
from __future__ import annotations

from mechverify.allocation import Allocation
from mechverify.model import Environment

from ..leximin import leximin_allocation
from ..normalisers import eta, etas, etas_float
from ...core.registry import Claim, register
from .algorithm1 import algorithm1
from .setting import SEED004_SETTING, T2
from ...core.z3spec import Z3Spec

__all__ = ["eta", "etas", "etas_float", "algorithm1", "tsf_er", "tsf_er_maxmin", "TSF_ER_CLAIMS", "SEED004_SETTING"]

TSF_ER_CLAIMS = (
    Claim("ef", "holds", f"{T2} / Thm 6", variant="literal"),
    Claim("po", "holds", f"{T2} / Thm 7", variant="fractional"),
    Claim("sp", "holds", f"{T2} / Thm 8", variant="demand"),
    Claim("sp", "holds", "004 Thm 8 (proof: reporting a fake number of tasks does not help)", variant="tasks"),
    Claim("si", "holds", f"{T2} / Thm 9", variant="external"),
)


# ---------------------------------------------------------------------- registrations
@register("tsf-er", "TSF-ER, Algorithm 1 as printed: iterative LP-TaskShare (8), task shares x_j/(w_j eta_j)",
          SEED004_SETTING, TSF_ER_CLAIMS, source="004 Sec. 4 Algorithm 1, eq. (6), (8a)-(8f); Sec. 8 (weights, "
          "several external resources)",
          notes="(8f) equalises ALL active users; differs from tsf-er-maxmin (leximin) when some active user is "
                "blocked by a resource another does not use (see mechanisms/paper/external_resources/tsf_er.py).",
          z3=Z3Spec("algorithm1", "eta", description="Algorithm 1: common level X_j = eta_j g, rounds"))
def tsf_er(env: Environment, exact: bool = False) -> Allocation:
    """Seed 004 Algorithm 1 with ``eta_j`` from eq. (6) (see the module docstring)."""
    e = etas(env, exact)
    return algorithm1(env, "tsf-er", exact, e, info={"eta": e})


@register("tsf-er-maxmin", "TSF-ER as Theorem 5 states it: leximin of task shares x_j/(w_j eta_j) over chi(E)",
          SEED004_SETTING, TSF_ER_CLAIMS, source="004 Sec. 4 Thm 5, eq. (6); Sec. 8",
          notes="The max-min fair allocation Algorithm 1 is claimed to compute; compare with tsf-er.",
          z3=Z3Spec("leximin", "eta", description="leximin of X_j / eta_j"))
def tsf_er_maxmin(env: Environment, exact: bool = False) -> Allocation:
    """Leximin of ``x_j / (w_j eta_j)`` over chi(E) (external rows and task-bound rows included)."""
    e = etas(env, exact)
    return leximin_allocation(env, "tsf-er-maxmin", exact, e, mode="rdm", placement=True, external=True,
                              bounds=True, info={"eta": e})
