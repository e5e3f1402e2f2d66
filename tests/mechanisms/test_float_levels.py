"""Float mode solves leximin / Algorithm 1 / LP (7) with scores in units of the equal split (the paper's score times
the number of participants, so that levels are O(1) for any number of users and HiGHS's absolute 1e-7
tolerances act as relative ones).  What a float allocation reports must still be the paper's numbers:
its levels agree with the exact path's (computed without any scaling) within 1e-9 relative, and so do
the task totals -- on the sizes GLPK solves and on sizes that go to HiGHS (and, for tsf-er, to the
numpy-built Algorithm 1)."""
from __future__ import annotations

import random

import pytest

from mechanisms import get
from mechverify.instances import parse_environment

from tests.helpers import random_instance


def _near(a, b) -> bool:
    return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))


def _envs(seed: int, users: int, servers: int, n: int, external=None, eligible=0.5):
    rng = random.Random(seed)
    return [parse_environment(random_instance(rng, users, servers, 2, capacity=(1, 30), external=external,
                                              external_demand=(0, 3), tasks=0.3, task_range=(1, 9), eligible=eligible))
            for _ in range(n)]


@pytest.mark.parametrize("users,servers,n", [(3, 2, 30), (40, 6, 4)])
def test_tsf_float_levels_are_the_unscaled_ones(users, servers, n):
    tsf = get("tsf")
    for env in _envs(users, users, servers, n):
        fl, ex = tsf(env, exact=False), tsf(env, exact=True)
        assert all(_near(a, b) for a, b in zip(fl.totals(), ex.totals()))
        assert all((a is None) == (b is None) and (a is None or _near(a, b))
                   for a, b in zip(fl.info["levels"], ex.info["levels"]))


@pytest.mark.parametrize("users,servers,n", [(3, 2, 30), (40, 6, 4)])
def test_tsf_er_float_levels_are_the_unscaled_ones(users, servers, n):
    mech = get("tsf-er")
    for env in _envs(100 + users, users, servers, n, external=(20, 80), eligible=0.0):
        fl, ex = mech(env, exact=False), mech(env, exact=True)
        assert all(_near(a, b) for a, b in zip(fl.totals(), ex.totals()))
        assert len(fl.info["levels_by_round"]) == len(ex.info["levels_by_round"])
        assert all((a is None) == (b is None) and (a is None or _near(a, b))
                   for a, b in zip(fl.info["levels_by_round"], ex.info["levels_by_round"]))
        assert (fl.info["level"] is None) == (ex.info["level"] is None)
        assert fl.info["level"] is None or _near(fl.info["level"], ex.info["level"])


@pytest.mark.parametrize("users,servers,n", [(3, 2, 30), (40, 6, 4)])
def test_drfh_lp7_float_totals_are_the_exact_ones(users, servers, n):
    """LP (7)'s level g is solved times the number of users; bound-saturated rows are fixed at the
    scaled targets: the float totals must still be the exact path's."""
    mech = get("drfh-lp7")
    for env in _envs(200 + users, users, servers, n, eligible=0.0):
        fl, ex = mech(env, exact=False), mech(env, exact=True)
        assert all(_near(a, b) for a, b in zip(fl.totals(), ex.totals()))
        assert fl.info["rounds"] == ex.info["rounds"]
