"""PO fixtures (``verifier/properties/po.py``), derived by hand beside each test."""
from __future__ import annotations

from fractions import Fraction as F

from mechanisms import get

from tests.helpers import env_of, example, fails, fixed, holds, one_cpu, verdict


# ====================================================================== PO
def test_po_fails_per_server_drf_seed001_fig1():
    """Seed 001 Sec. III-D: per-server DRF gives 6 + 6 tasks (Fig. 2); s1 to u1 alone and s2 to u2 alone
    gives 10 + 10 (u1: min(2/0.2, 12/1) = 10 on s1).  D = 20 > 12: gap 8, domination factor 20/12 = 5/3."""
    cert = fails("po", get("per-server-drf"), example("001-fig1.json"), "fractional", measure=F(5, 3), gap=F(8), robust=None,
                 utilities={"sum u": F(12), "sum y": F(20)})
    assert cert.allocations["allocation"].totals() == (6, 6)
    assert cert.allocations["dominating"].totals() == (10, 10)


def test_po_holds_drfh_seed001_fig1():
    """DRFH on the same instance (001 Fig. 3): 10 + 10.  Nothing dominates it (with x_j >= 10, s1's cpu
    0.2 a1 + b1 <= 2 forces u1's tasks on s1 to 10 and u2's to 0, symmetric on s2): factor 20/20 = 1."""
    holds("po", get("drfh"), example("001-fig1.json"), "fractional", measure=F(1))


def test_po_holds_all_to_one_user():
    """Everything to u1 on one cpu of 12 (unit demands): every allocation runs at most 12 tasks in total,
    so nothing dominates (12, 0): factor 12/12 = 1 (PO says nothing about fairness)."""
    holds("po", fixed("all-to-u1", [[12], [0]]), one_cpu(12, [1, 1]), "fractional", measure=F(1))


def test_po_holds_when_nobody_can_run_anything():
    """Bug fix: every user demands r1, which no server has: chi(E) = {0}, every mechanism gives (0, 0),
    which is trivially Pareto optimal (factor 0/0 read as 1).  The domination LP has no variables and
    the LP layer rejected it: verdict 'unknown' (domination LP failed) instead of 'satisfied'."""
    env = env_of(["r0", "r1"], [[5, 0], [5, 0]], [{"demand": [1, 3]}, {"demand": [1, 2], "tasks": 2}])
    assert get("drfh")(env, exact=True).totals() == (0, 0)
    holds("po", get("drfh"), env, "fractional", measure=F(1))
    assert verdict("po", get("drfh"), env, "fractional").verdict == "satisfied"


def test_po_rdm_versus_tdm():
    """One server <2 cpu, 2 mem>, u1 <2, 1>, u2 <1, 2>; x = (1/2, 1/2).
    TDM (002 eq. (10)): gamma = (1, 1), chi = {x1 + x2 <= 1}: nothing beats total 1: factor 1.
    RDM (002 eq. (9)): 2 x1 + x2 <= 2, x1 + 2 x2 <= 2 allows (2/3, 2/3): D = 4/3 > 1: gap 1/3, factor 4/3."""
    env = env_of(["cpu", "mem"], [[2, 2]], [{"demand": [2, 1]}, {"demand": [1, 2]}])
    half = [["1/2"], ["1/2"]]
    holds("po", fixed("half-tdm", half, feasibility="tdm"), env, "fractional", measure=F(1))
    cert = fails("po", fixed("half-rdm", half), env, "fractional", measure=F(4, 3), gap=F(1, 3),
                 utilities={"sum u": F(1), "sum y": F(4, 3)})
    assert cert.allocations["dominating"].totals() == (F(2, 3), F(2, 3))
