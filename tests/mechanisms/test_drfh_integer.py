"""First-/Best-Fit DRFH fill in integers (``drfh_indivisible.integer_scale``: capacities and demands multiplied per
resource by the common denominator) places exactly the tasks the fill in ``Fraction``s places: the same matrix and
the same number of placements, on drawn instances (``uniform``: placement constraints, bounds, weights; Google
2011 clusters with Alibaba task demands, whose denominators differ per resource)."""
from __future__ import annotations

from fractions import Fraction

import pytest

import mechanisms.paper.drfh_indivisible as di
from mechverify.model import Environment
from mechverify.workloads import get
from verifier.rates import sample_rng


def _envs():
    out = []
    for name, point, n in (("uniform", {}, 30), ("google2011", {"servers": "15", "users": "6"}, 6)):
        draw = get(name).sampler(**point)
        out += [draw(sample_rng(11, point, i)) for i in range(n)]
    return out


@pytest.mark.parametrize("best_fit", [False, True], ids=["first-fit", "best-fit"])
@pytest.mark.parametrize("env", _envs())
def test_integer_fill_equals_the_fraction_fill(env, best_fit, monkeypatch):
    fast = di._progressive_fill(env, best_fit, "drfh")
    assert di.integer_scale(env) is not None
    monkeypatch.setattr(di, "integer_scale", lambda *a: None)
    slow = di._progressive_fill(env, best_fit, "drfh")
    assert fast.x == slow.x
    assert fast.info["steps"] == slow.info["steps"]
    assert all(v.__class__ is Fraction for row in fast.x for v in row)


def test_scale_is_the_least_common_denominator_per_resource():
    # cpu: capacities 1 and 3/2, demands 1/4 and 1/6 -> lcm(1, 2, 4, 6) = 12; mem: 2, 1/3 and 5/9 -> 9
    env = Environment(resources=("cpu", "mem"), servers=("a", "b"),
                      capacity=((Fraction(1), Fraction(2)), (Fraction(3, 2), Fraction(1, 3))),
                      users=("u", "v"), demand=((Fraction(1, 4), Fraction(5, 9)), (Fraction(1, 6), Fraction(1, 3))))
    assert di.integer_scale(env) == [12, 9]


def test_a_huge_common_denominator_falls_back_to_fractions(monkeypatch):
    env = Environment(resources=("cpu",), servers=("a",), capacity=((Fraction(1),),), users=("u", "v"),
                      demand=((Fraction(1, 3),), (Fraction(1, 7),)))
    monkeypatch.setattr(di, "MAX_SCALE_BITS", 4)  # lcm 21 needs 5 bits
    assert di.integer_scale(env) is None
    a = di._progressive_fill(env, False, "drfh")
    # by hand (key = tasks x G, G_u = 1/3, G_v = 1/7, ties to the lower index): u 1 (key 1/3); v 1, 2, 3 (keys 1/7,
    # 2/7, 3/7: each below u's 1/3 until 3/7); cpu used 1/3 + 3/7 = 16/21, 5/21 left; u (1/3 < 3/7) needs 7/21: no
    # longer fits, drops; v needs 3/21: its 4th task (19/21 used, 2/21 left), then no more
    assert a.x == ((Fraction(1),), (Fraction(4),))
