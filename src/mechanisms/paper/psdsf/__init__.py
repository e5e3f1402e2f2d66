"""Per-Server Dominant-Share Fairness (PS-DSF), seeds 000 (short) and 002 (long version).

``psdsf-rdm`` / ``psdsf-tdm`` are Algorithm I (``iteration.py``): per-server weighted DRF, then
Gauss-Seidel passes in which each server replaces its column by its exact best response ``BR_s``
(water filling with head starts, ``algorithm.py``) until a pass changes nothing.  Why that is correct:
PS-DSF allocations are exactly the fixed points of the ``BR_s`` (Theorem 1/2 restricted to one server
is a max-min fairness characterisation, whose solution is unique), and every output is checked
against Theorem 1 (RDM) / Theorem 2 (TDM) exactly (``theorems.py``).  ``reference.py`` is the literal
Table II procedure; ``distributed.py`` the Sec. III-D variant; ``fast.py`` the fast path to the same
fixed points (float iteration, one exact integer solve of the fixed point's pattern).  PS-DSF need not be unique under RDM;
under TDM totals are unique (a linear Fisher market).  Details and findings: docs/psdsf.md.
"""
from __future__ import annotations

from mechverify.allocation import Allocation
from mechverify.model import Environment

from ...core.registry import Setting, register
from .algorithm import per_server_drf_start, server_response, waterfill  # noqa: F401
from .claims import PSDSF_RDM_CLAIMS, PSDSF_TDM_CLAIMS, SETTING_NOTE
from .distributed import (SCHEDULES, Schedule, apply_round, distributed_fixed_point, psdsf_distributed,  # noqa: F401
                          round_servers)
from .iteration import MAX_ROUNDS, algorithm_i, as_allocation, gauss_seidel_pass, psdsf  # noqa: F401
from .reference import server_procedure_table2  # noqa: F401
from .shares import (ZERO, PSDSFError, check_env, gamma_matrix, keys, server_demand_for_gamma,  # noqa: F401
                     vds)
from .theorems import characterisation_violations, theorem1_violations, theorem2_violations  # noqa: F401
from ...core.z3spec import Z3Spec

__all__ = [
    "PSDSFError", "gamma_matrix", "vds", "keys", "theorem1_violations", "theorem2_violations",
    "characterisation_violations", "server_response", "server_procedure_table2", "per_server_drf_start",
    "algorithm_i", "psdsf", "distributed_fixed_point", "server_demand_for_gamma", "MAX_ROUNDS",
    "gauss_seidel_pass", "psdsf_rdm", "psdsf_tdm", "psdsf_distributed", "PSDSF_RDM_CLAIMS", "PSDSF_TDM_CLAIMS",
]


def _mech(env: Environment, exact: bool, mode: str, name: str) -> Allocation:
    """Algorithm I's exact fixed point as the mechanism's allocation."""
    x, info = psdsf(env, mode, name=name)
    return as_allocation(env, x, name, exact, info)


@register("psdsf-rdm", "PS-DSF under resource division (RDM): Algorithm I fixed point, checked by Thm 1",
          Setting(placement=True, external=False, bounds=False, weights=True, server_demand=True, feasibility="rdm"),
          PSDSF_RDM_CLAIMS, source="000 Sec. III; 002 Sec. III (Def. 5, Thm 1, Table II)",
          notes="Deterministic: per-server weighted DRF, then Gauss-Seidel server procedures in server order "
                "until a pass changes nothing. PS-DSF allocations need not be unique. " + SETTING_NOTE,
          z3=Z3Spec.none("per-server virtual dominant shares: not encoded"))
def psdsf_rdm(env: Environment, exact: bool = False) -> Allocation:
    """PS-DSF under RDM: Algorithm I's fixed point (Theorem 1 checked)."""
    return _mech(env, exact, "rdm", "psdsf-rdm")


@register("psdsf-tdm", "PS-DSF under time division (TDM): Algorithm I fixed point, checked by Thm 2",
          Setting(placement=True, external=False, bounds=False, weights=True, server_demand=True, feasibility="tdm"),
          PSDSF_TDM_CLAIMS, source="002 Sec. III (Def. 4, Def. 5, Thm 2)",
          notes="Totals are unique (Thm 2 = linear Fisher-market equilibrium). " + SETTING_NOTE,
          z3=Z3Spec.none("TDM feasibility: not encoded"))
def psdsf_tdm(env: Environment, exact: bool = False) -> Allocation:
    """PS-DSF under TDM: Algorithm I's fixed point (Theorem 2 checked)."""
    return _mech(env, exact, "tdm", "psdsf-tdm")
