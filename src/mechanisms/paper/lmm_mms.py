"""LMM-MMS: lexicographic max-min of max-min-share ratios with bounded tasks (seed 003, Li et al. 2025).

Setting (seed 003 Sec. 2.1): ONE resource pool with capacities ``c_j > 0`` for ``m`` resources, ``n``
users with per-task demands ``d_ij > 0`` and a bounded number of tasks ``B_i`` (every user has one),
no weights, no placement, no external resources.  Environments outside it are rejected by
:data:`SETTING` (``requires_bounds``, ``positive_data``) with one line naming the field (``B_i = 0`` would make ``MMS_i = 0`` and
``theta_i = x_i / MMS_i`` undefined; ``d_ij > 0`` and ``c_j > 0`` are the paper's assumptions).

Definitions (reconstructed from the extracted text and checked against Examples 1 and 2)
-----------------------------------------------------------------------------------------
* utility ``u_i(A_i) = min(min_j a_ij / d_ij, B_i)``                             (Sec. 2.1)
* Theorem 1: ``MMS_i = u_i(C / n) = min(min_j c_j / (n d_ij), B_i)``   (Ex. 1: MMS = (1, 4);
  Ex. 2: MMS = (2, 1, 2/3) -- both need the ``B_i`` cap: Ex. 1 user 1 gets 1, not 2)
* ``theta_i = x_i / MMS_i``,  ``theta_i^max = B_i / MMS_i``                     (Sec. 2.1, eq. (9))
* program (LMM-MMS), Sec. 3.2: leximin of ``theta`` s.t. ``sum_i x_i d_ij <= c_j``, ``0 <= x_i <= B_i``.

``lmm-mms`` is that definition, solved by the shared leximin solver (``common.leximin_allocation``
with normaliser ``MMS_i``); exact in exact mode.

``lmm-mms-linear`` is Algorithm 1 (Sec. 4.1) AS PRINTED.  Taken literally it cannot run, so eight
readings are needed (full text, the pseudo-code and why: docs/lmm-mms.md):

R1 ``theta*_i`` in the branch conditions is this iteration's ``min(theta^max_i, theta)``;
R2 ``Q`` is ``{theta^max_i : i in U}`` (the undecided users);
R3 line 10's test is AS PRINTED (every undecided user at its full ``B_i``; the proof of Thm 2 differs);
R4 dummies are the users with ``theta_i = theta`` (``dummy_rule="gt"`` is the printed strict rule);
R5 the sums of lines 11 and 14 run over ``i in U``;
R6 "median" is the UPPER median (``median="lower"`` for comparison);
R7 line 23 assigns the output ``theta*_i``;
R8 line 23's ``c_j`` is the capacity already reduced by line 11 (satisfied users subtracted once).

All arithmetic is exact (``Fraction``) whatever ``exact`` says; ``info["trace"]`` records every
iteration and ``info["bound_exceeded"]`` the users with ``x_i > B_i``.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Optional

from mechverify.allocation import Allocation
from mechverify.lp import LPError
from mechverify.model import Environment
from mechverify.numbers import fmt_exact

from .leximin import leximin_allocation
from ..core.registry import Claim, Setting, register
from ..core.z3spec import Z3Spec

__all__ = ["AlgorithmStall", "mms", "theta_max", "algorithm1", "SETTING", "CLAIMS"]


class AlgorithmStall(LPError):
    """Algorithm 1 under a reading that makes no progress (an iteration removes nobody from U).  Solver
    trouble, never a verdict (an ``LPError``, like PS-DSF's ``PSDSFError``)."""


# Seed 003's domain (Sec. 2.1): one pool, every user bounded (B_i > 0, else MMS_i = 0 and theta_i is
# undefined), d_ij > 0 and c_j > 0.  The generic Setting flags enforce it with one-line errors.
SETTING = Setting(single_server=True, placement=False, external=False, bounds=True, weights=False,
                  server_demand=False, feasibility="rdm", divisible=True, exact=True,
                  requires_bounds=True, positive_data=True)

CLAIMS = (
    Claim("po", "holds", "003 Sec. 4.2 Thm 3 (PE); Table 1"),
    Claim("si", "holds", "003 Sec. 2.2 (SI with bounds), Sec. 4.2 Thm 4; Table 1", variant="bounded"),
    Claim("ef", "holds", "003 Sec. 2.2 (EF with bounds), Sec. 4.2 Thm 5; Table 1"),
    Claim("gsp", "holds", "003 Sec. 2.2 (GSP), Sec. 4.2 Thm 6; Table 1", variant="demand"),
    Claim("sp", "holds", "003 Sec. 4.2 Thm 6 (GSP, coalition of one); Sec. 1", variant="demand"),
)
_VIA_T2 = "; via Thm 2 (Algorithm 1 finds it)"
LINEAR_CLAIMS = tuple(Claim(c.property, c.status, c.source + _VIA_T2, c.variant, c.note) for c in CLAIMS)


# ---------------------------------------------------------------------- definitions
def mms(env: Environment, i: int) -> Fraction:
    """Theorem 1: ``MMS_i = u_i(C/n) = min(min_j c_j / (n d_ij), B_i)`` (single pool)."""
    n = env.n_users
    share = min(c / (n * d) for c, d in zip(env.capacity[0], env.demand[i]) if d > 0)
    b = env.tasks[i]
    return share if b is None else min(share, b)


def theta_max(env: Environment, i: int) -> Fraction:
    """``theta^max_i = B_i / MMS_i`` (Sec. 4.1, eq. (9))."""
    return env.tasks[i] / mms(env, i)


def _info(env: Environment, totals, mms_v) -> dict:
    return {"mms": list(mms_v), "theta_max": [env.tasks[i] / mms_v[i] for i in range(env.n_users)],
            "theta": [totals[i] / mms_v[i] for i in range(env.n_users)]}


@register("lmm-mms", "LMM-MMS: leximin of x_i/MMS_i, x_i <= B_i, one pool (definition, Sec. 3.2)",
          SETTING, CLAIMS, source="003 Sec. 2.1 Thm 1, Sec. 3.2 program (LMM-MMS)",
          z3=Z3Spec.none("max-min share normalisers with task bounds: not encoded"))
def lmm_mms(env: Environment, exact: bool = False) -> Allocation:
    """LMM-MMS by its definition: leximin of ``x_i / MMS_i`` with ``x_i <= B_i`` (seed 003 Sec. 3.2)."""
    SETTING.check(env, "lmm-mms")
    mms_v = [mms(env, i) for i in range(env.n_users)]
    alloc = leximin_allocation(env, "lmm-mms", exact, mms_v, placement=False, external=False, bounds=True)
    alloc.info.update(_info(env, alloc.totals(), mms_v))
    return alloc


# ---------------------------------------------------------------------- Algorithm 1
def algorithm1(env: Environment, median: str = "upper", test: str = "printed", dummy_rule: str = "ge") -> dict:
    """Algorithm 1 of seed 003 with the readings R1-R8 of the module docstring.

    ``median``: ``"upper"`` (R6, registered) or ``"lower"``; ``test``: ``"printed"`` (line 10, R3,
    registered) or ``"proof"`` (Thm 2's ``x_i = theta_i MMS_i``); ``dummy_rule``: ``"ge"`` (R4,
    registered) or ``"gt"`` (the printed strict ``<``).  Returns ``theta_star``, ``x``, ``mms``,
    ``theta_max`` and the ``trace``.  Exact ``Fraction`` arithmetic throughout.
    """
    if median not in ("upper", "lower"):
        raise ValueError(f"median: expected 'upper' or 'lower', got {median!r}")
    if test not in ("printed", "proof"):
        raise ValueError(f"test: expected 'printed' or 'proof', got {test!r}")
    if dummy_rule not in ("ge", "gt"):
        raise ValueError(f"dummy_rule: expected 'ge' or 'gt', got {dummy_rule!r}")
    n, m = env.n_users, env.n_resources
    d = env.demand
    B = env.tasks
    M = [mms(env, i) for i in range(n)]
    tmax = [B[i] / M[i] for i in range(n)]
    # Step 1
    theta_star: list[Optional[Fraction]] = [Fraction(0)] * n
    U = list(range(n))
    U_dum: list[int] = []
    c = list(env.capacity[0])
    delta = [Fraction(0)] * m
    theta = Fraction(0)
    trace = []
    while U:  # Step 3: "if U != {} go to Step 2"
        # Step 2
        Q = sorted(tmax[i] for i in U)  # R2
        theta = Q[len(Q) // 2] if median == "upper" else Q[(len(Q) - 1) // 2]  # R6
        th = {i: min(tmax[i], theta) for i in U}  # R1
        theta_dum = theta
        if test == "printed":  # R3: line 10 as printed
            use = [theta_dum * delta[j] + sum((B[i] * d[i][j] for i in U), Fraction(0)) for j in range(m)]
        else:
            use = [theta_dum * delta[j] + sum((th[i] * M[i] * d[i][j] for i in U), Fraction(0)) for j in range(m)]
        ok = all(use[j] <= c[j] for j in range(m))
        if ok:
            S = [i for i in U if th[i] == tmax[i]]  # R1, R5
            for j in range(m):
                c[j] -= sum((B[i] * d[i][j] for i in S), Fraction(0))
            for i in S:
                theta_star[i] = tmax[i]  # R7
            moved = S
            U = [i for i in U if i not in S]
        else:
            if dummy_rule == "ge":  # R4
                T = [i for i in U if th[i] == theta]
            else:
                T = [i for i in U if th[i] < tmax[i]]
            for j in range(m):
                delta[j] += sum((M[i] * d[i][j] for i in T), Fraction(0))
            U_dum += T
            moved = T
            U = [i for i in U if i not in T]
        trace.append({"median": theta, "use": use, "capacity": list(c), "feasible": ok,
                      "satisfied" if ok else "dummy": list(moved), "delta": list(delta)})
        if not moved:
            raise AlgorithmStall(f"Algorithm 1 makes no progress at median theta = {fmt_exact(theta)} "
                                 f"(test {'passed' if ok else 'failed'}, dummy rule {dummy_rule!r}): "
                                 f"U = {[env.users[i] for i in U]} never shrinks")
    theta_dum_final = None
    if U_dum:  # Step 3 else-branch, R7/R8
        theta_dum_final = min(c[j] / delta[j] for j in range(m) if delta[j] > 0)
        for i in U_dum:
            theta_star[i] = theta_dum_final
    x = [theta_star[i] * M[i] for i in range(n)]
    return {"theta_star": theta_star, "x": x, "mms": M, "theta_max": tmax, "U_dum": U_dum,
            "theta_dum": theta_dum_final, "trace": trace}


@register("lmm-mms-linear", "LMM-MMS by Algorithm 1 as printed (median-based, 'O(n)'), exact arithmetic",
          SETTING, LINEAR_CLAIMS, source="003 Sec. 4.1 Algorithm 1, Thm 2, Example 2",
          notes="Readings R1-R8 in mechanisms/paper/lmm_mms.py; line 10 tests every undecided user at its full "
                "bound B_i as printed (the proof of Thm 2 uses theta_i MMS_i); the final common level is not "
                "capped by B_i, so x_i > B_i can occur.",
          may_violate=("bounds",),
          z3=Z3Spec.none("max-min share normalisers with task bounds: not encoded"))
def lmm_mms_linear(env: Environment, exact: bool = False) -> Allocation:
    """LMM-MMS by Algorithm 1 as printed (readings R1-R8 in the module docstring), exact."""
    SETTING.check(env, "lmm-mms-linear")
    res = algorithm1(env)
    info = {"mms": res["mms"], "theta_max": res["theta_max"], "theta": res["theta_star"],
            "trace": res["trace"], "U_dum": res["U_dum"], "theta_dum": res["theta_dum"],
            "unique_totals": True,
            "bound_exceeded": [i for i in range(env.n_users) if res["x"][i] > env.tasks[i]]}
    return Allocation(env, tuple((v,) for v in res["x"]), "lmm-mms-linear", True, info)
