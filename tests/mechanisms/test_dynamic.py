"""The mechanisms with memory of mechanisms.paper.dynamic: Dynamic DRF (Kash, Procaccia, Shah 2014), per-round
max-min, Karma (Vuppalapati et al. 2023).  Every number asserted comes from the authors' unit tests (cited by
repository, path and commit; paraphrased, not copied), or from a hand derivation written beside it."""
from fractions import Fraction as F

import pytest

import mechanisms  # noqa: F401  (registers)
from mechanisms.core.registry import SettingError, allocate, get
from mechanisms.core.time import execute
from mechverify.execution import parse_execution
from mechverify.instances import parse_environment as parse_instance

def tasks_of(step):
    return [row[0] for row in step.alloc.x]


# ====================================================================== dynamic-drf
def kps_example(**kw):
    d = {"resources": ["r1", "r2"], "servers": [{"name": "s", "capacity": [1, 1]}],
         "users": [{"name": "u1", "demand": [1, "1/2"]}],
         "events": [{"t": 1, "kind": "arrive", "user": {"name": "u2", "demand": ["1/2", 1]}},
                    {"t": 2, "kind": "arrive", "user": {"name": "u3", "demand": [1, "1/4"]}}]}
    d.update(kw)
    return parse_execution(d)


def test_dynamic_drf_worked_example_by_hand():
    """n = 3 users in all, capacity (1, 1), d1 = (1, 1/2), d2 = (1/2, 1), d3 = (1, 1/4); every dominant demand is 1
    of a resource of capacity 1, so tasks = dominant shares x and a_j = d_j.
    k=1: budget 1/3 of each; L (1, 1/2) <= (1/3, 1/3) -> L = 1/3 (r1 binds).  x = (1/3).
    k=2: budget 2/3.  On [0, 1/3] only u2 rises: usage (1/3, 1/6) + L (1/2, 1); at L = 1/3 it is (1/2, 1/2) <= 2/3.
         Above 1/3 both rise, slope (3/2, 3/2): L = 1/3 + (2/3 - 1/2) / (3/2) = 1/3 + 1/9 = 4/9 (both bind).
    k=3: budget 1.  Usage (2/3, 2/3); u3 rises alone with slope (1, 1/4): r1 allows 1/3, r2 4/3, and 1/3 < 4/9 (the
         next breakpoint), so L = 1/3.  x = (4/9, 4/9, 1/3); usage (1, 3/4)."""
    steps = execute(get("dynamic-drf"), kps_example())
    assert [tasks_of(st) for st in steps] == [[F(1, 3)], [F(4, 9), F(4, 9)], [F(4, 9), F(4, 9), F(1, 3)]]
    assert steps[-1].alloc.info["k"] == 3 and steps[-1].alloc.info["n"] == 3
    # the float path agrees
    fl = execute(get("dynamic-drf"), kps_example(), exact=False)
    assert [tasks_of(st) for st in fl][-1] == pytest.approx([4 / 9, 4 / 9, 1 / 3])


def test_dynamic_drf_late_arrival_envies():
    """The EF/DPO tension (hand derivation on the example above): at step 2 u1 holds (4/9)(1, 1/2) = (4/9, 2/9); u3
    (per task (1, 1/4)) could run min(4/9 / 1, (2/9) / (1/4)) = min(4/9, 8/9) = 4/9 tasks with it, more than its own
    1/3: u3 envies u1 (allowed by DEF: u1 arrived earlier and got nothing at step 2)."""
    last = execute(get("dynamic-drf"), kps_example())[-1]
    held1 = [v * last.alloc.x[0][0] for v in last.env.demand[0]]
    d3 = last.env.demand[2]
    assert held1 == [F(4, 9), F(2, 9)]
    assert min(h / d for h, d in zip(held1, d3)) == F(4, 9) > last.alloc.x[2][0] == F(1, 3)


def test_dynamic_drf_irrevocable_and_departure_convention():
    """Nobody is ever lowered on arrivals; a departure frees its resources for the others within (k/n) C (hand:
    after u1 leaves at k = 3, usage is u2 (2/9, 4/9) + u3 (1/3, 1/12) = (5/9, 19/36), budget (1, 1).  From 1/3 u3 rises
    alone (slope (1, 1/4)): r1 would bind at 1/3 + 4/9 = 7/9 > 4/9, so at 4/9 usage is (2/9 + 4/9, 4/9 + 1/9) =
    (2/3, 5/9); then both rise (slope (3/2, 5/4)): r1 binds at 4/9 + (1/3)/(3/2) = 2/3 (r2 at 4/9 + 16/45 = 4/5)."""
    ex = kps_example(events=kps_example().to_dict()["events"] + [{"t": 3, "kind": "leave", "user": "u1"}])
    steps = execute(get("dynamic-drf"), ex)
    for a, b in zip(steps, steps[1:3]):
        for u in a.users:
            assert tasks_of(b)[b.users.index(u)] >= tasks_of(a)[a.users.index(u)]
    assert tasks_of(steps[-1]) == [F(2, 3), F(2, 3)]


def test_dynamic_drf_one_shot_is_drf_and_setting():
    """Everyone present at step 0 with n = k: the whole pool, i.e. DRF (Ghodsi et al.'s 9 CPU / 18 GB example:
    A (1, 4) 3 tasks, B (3, 1) 2 tasks)."""
    env = parse_instance({"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [9, 18]}],
                          "users": [{"name": "A", "demand": [1, 4]}, {"name": "B", "demand": [3, 1]}]})
    assert [r[0] for r in allocate("dynamic-drf", env, exact=True).x] == [3, 2]
    with pytest.raises(SettingError, match="weight"):
        allocate("dynamic-drf", parse_instance({"resources": ["cpu"], "servers": [{"name": "s", "capacity": [1]}],
                                                "users": [{"name": "A", "demand": [1], "weight": 2}]}))
    m = get("dynamic-drf")
    assert m.time.kind == "stateful" and not m.time.revocable and not m.time.rounds
    assert {(c.property, c.variant, c.status) for c in m.claims} >= {("dsi", None, "holds"), ("each-step", "ef", "fails")}
    assert all("arrivals_only" in c.domain for c in m.claims) and "not verified" in m.notes
