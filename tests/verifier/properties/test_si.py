"""SI fixtures (``verifier/properties/ef_si.py``), derived by hand beside each test."""
from __future__ import annotations

from fractions import Fraction as F

from mechanisms import get
from verifier.properties import get_property
from tests.helpers import (INDIV, external_env, fails, fixed, ghodsi, holds, one_cpu, placement_env,
                           verdict)


# ====================================================================== SI
def test_si_per_server_split_fails_all_to_one_user():
    """One cpu of 12, unit demands, everything to u1: u2 runs 0, its equal split 6 cpu runs 6.
    gap 6, ratio 0/6 = 0."""
    fails("si", fixed("all-to-u1", [[12], [0]]), one_cpu(12, [1, 1]), "per-server-split",
          measure=F(0), gap=F(6), utilities={"u[u2]": F(0), "u[u2] equal split": F(6)})


def test_si_per_server_split_holds_drf():
    """DRF on Ghodsi's example: equal split <9/2, 9> runs min(9/2, 9/4) = 9/4 for u1 and
    min(3/2, 9) = 3/2 for u2; DRF gives 3 and 2: min ratio min(3/(9/4), 2/(3/2)) = min(4/3, 4/3) = 4/3."""
    holds("si", get("drf"), ghodsi(), "per-server-split", measure=F(4, 3))


def test_si_per_server_split_counts_only_eligible_servers():
    """s1 = 6, s2 = 12 cpu, u2 eligible only on s1.  Benchmarks: u1 3 + 6 = 9, u2 3 (half of s2 is useless).
    x: u1 (3, 12), u2 (3, 0): ratios 15/9 = 5/3 and 3/3 = 1: holds with measure 1.
    x: u1 (4, 12), u2 (2, 0): u2 runs 2 < 3: gap 1, ratio 2/3."""
    env = placement_env()
    holds("si", fixed("a", [[3, 12], [3, 0]]), env, "per-server-split", measure=F(1))
    fails("si", fixed("b", [[4, 12], [2, 0]]), env, "per-server-split", measure=F(2, 3), gap=F(1),
          utilities={"u[u2]": F(2), "u[u2] equal split": F(3)})


def test_si_weighted():
    """w = (3, 1), one cpu of 12, unit demands: benchmarks 3/4 * 12 = 9 and 1/4 * 12 = 3.
    DRF (weighted) gives (9, 3): measure 1.  Equal split (6, 6): u1 6/9 = 2/3: gap 3."""
    env = one_cpu(12, [1, 1], weight=[3, 1])
    assert get("drf")(env, exact=True).totals() == (9, 3)
    holds("si", get("drf"), env, "per-server-split", measure=F(1))
    fails("si", fixed("6-6", [[6], [6]]), env, "per-server-split", measure=F(2, 3), gap=F(3),
          utilities={"u[u1]": F(6), "u[u1] equal split": F(9)})


def test_si_external():
    """Equal split (004 Def. 6): u1 gets 6 cpu and 1 link -> min(6/1, 1/(1/4)) = 4; u2 gets 6.
    x = (4, 8): u1 4/4 = 1, u2 8/6: holds with measure 1 (ignoring the link, u1's benchmark would be 6).
    x = (3, 9) (cpu 12, link 3/4 <= 2): u1 3 < 4: gap 1, ratio 3/4."""
    env, st = external_env(), dict(external=True)
    holds("si", fixed("4-8", [[4], [8]], **st), env, "external", measure=F(1))
    fails("si", fixed("3-9", [[3], [9]], **st), env, "external", measure=F(3, 4), gap=F(1),
          utilities={"u[u1]": F(3), "u[u1] equal split": F(4)})


def test_si_bounded():
    """One cpu of 12, unit demands, n1 = 4 (003 Sec. 2.2: x_i = B_i or an equal share):
    benchmarks u1 min(6, 4) = 4, u2 6.  x = (4, 8): measure min(4/4, 8/6) = 1.
    x = (3, 9): u1 3 < 4: gap 1, ratio 3/4."""
    env = one_cpu(12, [1, 1], tasks=[4, None])
    holds("si", fixed("4-8", [[4], [8]]), env, "bounded", measure=F(1))
    fails("si", fixed("3-9", [[3], [9]]), env, "bounded", measure=F(3, 4), gap=F(1),
          utilities={"u[u1]": F(3), "u[u1] equal split": F(4)})


def test_si_external_and_bounded_not_applicable():
    si, m, env = get_property("si"), fixed("6-6", [[6], [6]]), one_cpu(12, [1, 1])
    assert "external" in si.applicable(m, env, "external")
    assert "bound" in si.applicable(m, env, "bounded")
    assert si.applicable(m, env, "per-server-split") is None
    for variant in ("external", "bounded"):
        assert verdict("si", m, env, variant).verdict == "not_applicable"


def test_si_indivisible_whole_task_benchmark():
    """One cpu of 5, unit demands, whole tasks (3, 2): u2's equal split of 5/2 cpu runs 2 whole tasks
    (not 5/2), so u2 gets its benchmark: min ratio min(3/2, 2/2) = 1.  Divisible: 2 < 5/2, gap 1/2."""
    env = one_cpu(5, [1, 1])
    holds("si", fixed("3-2-whole", [[3], [2]], **INDIV), env, "per-server-split", measure=F(1))
    fails("si", fixed("3-2", [[3], [2]], single_server=True), env, "per-server-split", measure=F(4, 5),
          gap=F(1, 2))
