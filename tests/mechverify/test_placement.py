"""``progressive_filling(..., placement=...)`` (``mechverify.placement``; docs/orders-and-placement.md,
"Placement"): the four rules on a hand-derived instance, ties by server index, best-fit equal to Best-Fit DRFH
(the one eq. (9)), first-fit unchanged, a caller's score function, bad input."""
from __future__ import annotations

import glob
import os
import random
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.core.mechanism import SettingError
from mechanisms.paper.normalisers import global_dominant_share
from mechverify.allocation import feasibility_violations
from mechverify.instances import load_environment, parse_environment
from mechverify.placement import best_fit_score, spread_score
from mechverify.policies import progressive_filling
from tests.helpers import env_of, random_instance

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fewest(st, j):
    return st.tasks[j]


# Three servers of different shapes, pooled <16, 16>: s1 <2, 8>, s2 <8, 2>, s3 <6, 6>; one user u1 <1, 1>
# with a bound of 2 tasks.  Where its two tasks go:
#   first-fit: t1 s1 (left <1, 7>), t2 s1 (left <0, 6>)                                  -> (2, 0, 0)
#   best-fit (eq. (9), D_j / D_{j,cpu} = <1, 1>; cbar_l / cbar_{l,cpu}):
#       s1 <2, 8> -> <1, 4>: H = 0 + 3 = 3;  s2 <8, 2> -> <1, 1/4>: H = 3/4;  s3 <6, 6> -> <1, 1>: H = 0
#       t1 s3 (left <5, 5>: still <1, 1>, H = 0), t2 s3                                   -> (0, 0, 2)
#   spread (the largest free fraction of the most used resource, min_r left_r / c_r):
#       t1: 1, 1, 1 (a tie: the lowest index) s1, left <1, 7>: min(1/2, 7/8) = 1/2;
#       t2: s1 1/2, s2 1, s3 1 (a tie: s2)                                                  -> (1, 1, 0)
#   score = minus the cpu left (most cpu left first): t1 cpu 2, 8, 6 -> s2 (left <7, 1>); t2 7, 6 -> s2
#                                                                                           -> (0, 2, 0)
def shapes():
    return env_of(["cpu", "mem"], [[2, 8], [8, 2], [6, 6]], [{"demand": [1, 1], "tasks": 2}])


def test_the_rules_by_hand():
    env = shapes()
    got = {p: progressive_filling(env, fewest, placement=p).x for p in ("first-fit", "best-fit", "spread")}
    assert got == {"first-fit": ((2, 0, 0),), "best-fit": ((0, 0, 2),), "spread": ((1, 1, 0),)}
    assert progressive_filling(env, fewest).x == got["first-fit"]  # the default
    most_cpu_left = lambda st, j, s: -st.remaining[s][0]  # noqa: E731
    assert progressive_filling(env, fewest, placement=most_cpu_left).x == ((0, 2, 0),)


def test_the_scores_by_hand():
    """The numbers of the derivation above, from the two score functions."""
    pooled = (16, 16)
    assert [best_fit_score((1, 1), c, pooled) for c in ((2, 8), (8, 2), (6, 6))] == [3, F(3, 4), 0]
    assert spread_score((F(1), F(7)), (2, 8)) == -F(1, 2) and spread_score((8, 2), (8, 2)) == -1
    # a server with none of a resource: that resource is not counted; a server with nothing at all scores 0
    assert spread_score((F(3), F(0)), (6, 0)) == -F(1, 2) and spread_score((0, 0), (0, 0)) == 0
    # eq. (9) normalises by the task's first demanded resource (mem here: D / D_mem = <0, 1>, cbar / cbar_mem)
    assert best_fit_score((0, 2), (4, 8), pooled) == F(1, 2)  # |0 - 1/2| + |1 - 1|
    assert best_fit_score((1, 1), (0, 5), pooled) == float("inf")  # no cpu left: never best


def test_spread_spreads_two_users():
    """Two servers <4 cpu>; u1 and u2 <1 cpu>, 2 tasks each, fewest tasks first (ties by index).
    first-fit: u1 s1, u2 s1, u1 s1, u2 s1 -> u1 (2, 0), u2 (2, 0).
    spread: u1 s1 (free 1, 1: s1; left 3/4), u2 s2 (3/4 < 1), u1: s1 3/4, s2 3/4 -> s1 (left 1/2), u2 s2.
    -> u1 (2, 0), u2 (0, 2)."""
    env = env_of(["cpu"], [[4], [4]], [{"demand": [1], "tasks": 2}, {"demand": [1], "tasks": 2}])
    assert progressive_filling(env, fewest).x == ((2, 0), (2, 0))
    assert progressive_filling(env, fewest, placement="spread").x == ((2, 0), (0, 2))


def drfh_key(st, j):
    """Best-Fit DRFH's order: tasks x global dominant share / weight (ties: the user index)."""
    return st.tasks[j] * global_dominant_share(st.env, j) / st.env.weight[j]


def _drfh_envs():
    envs = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.json"))):
        try:
            env = load_environment(path)
            mechanisms.get("drfh-best-fit").setting.check(env, "drfh-best-fit")
        except (SettingError, ValueError):
            continue
        envs.append(pytest.param(env, id=os.path.basename(path)))
    rng = random.Random(11)
    for i in range(30):
        inst = random_instance(rng, rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3), capacity=(1, 9),
                               tasks=0.5, eligible=0.3)
        for u in inst["users"]:
            u["weight"] = rng.choice([1, 2, "1/2"])
        envs.append(pytest.param(parse_environment(inst), id=f"random-{i}"))
    return envs


@pytest.mark.parametrize("env", _drfh_envs())
def test_best_fit_is_best_fit_drfh(env):
    """DRFH's order with ``placement="best-fit"`` IS Best-Fit DRFH, and with the default First-Fit DRFH: the same
    exact allocation (the examples it applies to, and drawn instances with placement, bounds and weights)."""
    best = progressive_filling(env, drfh_key, placement="best-fit")
    assert best.x == mechanisms.allocate("drfh-best-fit", env, exact=True).x
    assert feasibility_violations(env, best.x) == []
    assert progressive_filling(env, drfh_key).x == mechanisms.allocate("drfh-first-fit", env, exact=True).x


def test_a_constant_score_is_first_fit():
    """Every server scores the same: the ties go to the lowest index, which is first-fit."""
    rng = random.Random(3)
    for _ in range(30):
        env = parse_environment(random_instance(rng, rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3),
                                                capacity=(1, 9), tasks=0.4, eligible=0.3))
        assert (progressive_filling(env, fewest, placement=lambda st, j, s: 0).x
                == progressive_filling(env, fewest).x)


def test_bad_placement_is_one_line():
    env = shapes()
    for bad in ("best_fit", "", 3, None):
        with pytest.raises(ValueError, match=r"^placement: expected one of 'first-fit', 'best-fit', 'spread' or a "
                                             r"function score\(state, j, s\), got") as exc:
            progressive_filling(env, fewest, placement=bad)
        assert "\n" not in str(exc.value)


def test_eq9_in_integers_orders_servers_as_eq9():
    """``best_fit_scaled`` is eq. (9) times a positive factor of the task alone: for one task, any two servers
    compare (<, =, >) as ``best_fit_score`` compares them -- on integer demands, remaining capacities and pooled
    capacities (a resource the cluster lacks: weight 0), including proportional remaining capacities (exact ties)."""
    import math
    from fractions import Fraction

    from mechverify.placement import best_fit_scaled, best_fit_score

    rng = random.Random(9)
    for _ in range(2000):
        R = rng.randint(1, 3)
        pooled = [rng.choice([0, rng.randint(1, 60)]) for _ in range(R)]
        pooled[rng.randrange(R)] = rng.randint(1, 60)  # some resource the cluster has
        d = [rng.randint(0, 5) if pooled[r] else 0 for r in range(R)]
        if not any(d):
            d[next(r for r in range(R) if pooled[r])] = 1
        L = math.lcm(*(p for p in pooled if p))
        w = [L // p if p else 0 for p in pooled]
        base = [rng.randint(1, 9) for _ in range(R)]
        rems = [[rng.randint(1, 30) for _ in range(R)] for _ in range(3)] + [[2 * v for v in base], base]
        exact = [best_fit_score(d, rem, [Fraction(p) for p in pooled]) for rem in rems]
        scaled = [best_fit_scaled(d, rem, w) for rem in rems]
        for a in range(len(rems)):
            for b in range(len(rems)):
                (na, ma), (nb, mb) = scaled[a], scaled[b]
                lhs, rhs = na * mb, nb * ma
                assert (lhs < rhs) == (exact[a] < exact[b]) and (lhs == rhs) == (exact[a] == exact[b]), (d, rems[a],
                                                                                                       rems[b], pooled)
