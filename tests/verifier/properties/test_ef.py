"""EF fixtures (``verifier/properties/ef_si.py``), derived by hand beside each test."""
from __future__ import annotations

from fractions import Fraction as F

from mechanisms import get

from tests.helpers import INDIV, fails, fixed, ghodsi, holds, one_cpu, placement_env


# ====================================================================== EF
def test_ef_fails_fixed_unequal_split():
    """One cpu of 12, unit demands, x = (8, 4): u2 runs 8 with u1's bundle, 4 with its own.
    gap 8 - 4 = 4, envy ratio 8/4 = 2 (both variants: one server)."""
    m, env = fixed("8-4", [[8], [4]]), one_cpu(12, [1, 1])
    for variant in ("placement-aware", "literal"):
        cert = fails("ef", m, env, variant, measure=F(2), gap=F(4),
                     utilities={"u[u2] own": F(4), "u[u2] of u1's bundle": F(8)})
        assert cert.witness.users == (1, 0)


def test_ef_holds_equal_split():
    """x = (6, 6): each values the other's bundle at 6 = its own: max envy ratio 6/6 = 1."""
    for variant in ("placement-aware", "literal"):
        holds("ef", fixed("6-6", [[6], [6]]), one_cpu(12, [1, 1]), variant, measure=F(1))


def test_ef_literal_fails_placement_aware_holds():
    """x: u1 runs 12 on s2, u2 runs 6 on s1.
    placement-aware: u2 cannot use s2, so u1's bundle is worth 0 to it (ratio 0/6); u1 values u2's
    bundle (6 cpu on s1, where u1 is eligible) at 6 < 12 (ratio 1/2): measure max(0, 1/2) = 1/2.
    literal (004 Def. 3, every server counts): u2 values u1's 12 cpu at 12 > 6: gap 6, ratio 2."""
    m, env = fixed("placed", [[0, 12], [6, 0]]), placement_env()
    holds("ef", m, env, "placement-aware", measure=F(1, 2))
    fails("ef", m, env, "literal", measure=F(2), gap=F(6),
          utilities={"u[u2] own": F(6), "u[u2] of u1's bundle": F(12)})


def test_ef_weighted():
    """Weights w = (2, 1), one cpu of 12, unit demands (seed 002 Sec. II-A: U_n(phi_n/phi_m a_m) <= U_n(a_n)).
    x = (8, 4): u1 values 2 * u2's bundle at 8 = own; u2 values (1/2) * u1's at 4 = own: measure 1.
    x = (9, 3): u2 values (1/2) * 9 = 9/2 > 3: gap 3/2, ratio (9/2)/3 = 3/2."""
    env = one_cpu(12, [1, 1], weight=[2, 1])
    holds("ef", fixed("8-4", [[8], [4]]), env, "placement-aware", measure=F(1))
    fails("ef", fixed("9-3", [[9], [3]]), env, "placement-aware", measure=F(3, 2), gap=F(3, 2),
          utilities={"u[u2] own": F(3), "u[u2] of u1's bundle": F(9, 2)})


def test_ef_holds_drf_ghodsi():
    """DRF (3, 2) on Ghodsi's example: u1 with u2's bundle 2*<3,1> = <6, 2> runs min(6/1, 2/4) = 1/2 < 3;
    u2 with u1's bundle 3*<1,4> = <3, 12> runs min(3/3, 12/1) = 1 < 2.  max ratio max(1/6, 1/2) = 1/2."""
    holds("ef", get("drf"), ghodsi(), "placement-aware", measure=F(1, 2))


def test_ef_indivisible_whole_tasks():
    """Whole tasks, one cpu of 7: u1 <3> runs 1 task (3 cpu), u2 <2> runs 2 (4 cpu).
    u1 with u2's 4 cpu: 4/3 divisible tasks (envy ratio 4/3) but 1 whole task = own: no envy;
    u2 with u1's 3 cpu: 1 whole task < 2.  max ratio max(1/1, 1/2) = 1.
    Same allocation with divisible tasks: u1 envies, gap 4/3 - 1 = 1/3."""
    env = one_cpu(7, [3, 2])
    holds("ef", fixed("1-2-whole", [[1], [2]], **INDIV), env, "placement-aware", measure=F(1))
    fails("ef", fixed("1-2", [[1], [2]], single_server=True), env, "placement-aware", measure=F(4, 3), gap=F(1, 3))
