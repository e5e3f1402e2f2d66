"""``mechverify.numbers.fraction_sum``: the exact sum of ``Fraction``s, numerators summed per denominator first --
the same value as ``sum(values, Fraction(0))`` (so ``Environment.total_capacity`` and the exact feasibility check
that use it say what they said)."""
from __future__ import annotations

import random
from fractions import Fraction

from mechverify.numbers import fraction_sum


def test_equals_the_plain_sum_on_random_fractions():
    rng = random.Random(5)
    for _ in range(500):
        vals = [Fraction(rng.randint(-50, 50), rng.choice([1, 2, 3, 4, 6, 7, 10, 1000])) for _ in range(rng.randint(0, 30))]
        assert fraction_sum(vals) == sum(vals, Fraction(0))
        assert fraction_sum(iter(vals)) == sum(vals, Fraction(0))


def test_small_cases_by_hand():
    assert fraction_sum([]) == 0 and fraction_sum([]).__class__ is Fraction
    assert fraction_sum([Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]) == 1  # 3/6 + 2/6 + 1/6
    assert fraction_sum([Fraction(3, 4), Fraction(1, 4), Fraction(-1)]) == 0
    assert fraction_sum([Fraction(1, 2), 1]) == Fraction(3, 2)  # an int among them: the plain sum
    assert isinstance(fraction_sum([Fraction(1, 2), 0.25]), float)


def test_whole_counts_as_fractions():
    from mechverify.numbers import whole_fractions

    row = (0, 3, 1023, 1024, 5000)
    fr = whole_fractions(row)
    assert fr == tuple(Fraction(v) for v in row) and all(v.__class__ is Fraction for v in fr)
