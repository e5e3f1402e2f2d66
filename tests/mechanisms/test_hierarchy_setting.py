"""``Setting.hierarchy``: a mechanism without it refuses a queue tree with one ``SettingError`` line naming
``queues``; one with it takes the tree, and says so in ``describe``."""
from __future__ import annotations

from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.core.registry import Setting, SettingError
from mechverify.instances import parse_environment


def _env(queues, user_queue):
    d = {"resources": ["r1", "r2"], "servers": [{"capacity": [4, 4]}],
         "users": [{"demand": [1, 1], **({"queue": q} if q else {})} for q in user_queue]}
    if queues is not None:
        d["queues"] = [{"name": n} for n in queues]
    return parse_environment(d)


@pytest.mark.parametrize("queues, user_queue, placed", [(["a", "a/b"], ["a/b", None], "1 user"),
                                                       (["a"], [None, None], "0 users"),
                                                       (["a", "b"], ["a", "b"], "2 users")])
def test_flat_setting_refuses_any_tree(queues, user_queue, placed):
    env = _env(queues, user_queue)
    with pytest.raises(SettingError) as e:
        Setting().check(env, "flat")
    msg = str(e.value)
    assert msg.startswith("queues: flat is defined without a queue tree") and placed in msg and "\n" not in msg


def test_registered_mechanisms_refuse_a_tree_and_take_flat_instances():
    env, flat = _env(["a"], ["a", None]), _env(None, [None, None])
    flat_ones = [m for m in mechanisms.all_mechanisms() if not m.setting.hierarchy]
    assert mechanisms.get("drf") in flat_ones
    for mech in flat_ones:
        with pytest.raises(SettingError, match=r"^queues: "):
            mech(env)
    assert mechanisms.get("drf")(flat, exact=True).x == ((F(2),), (F(2),))  # and flat instances as before


def test_hierarchical_setting_takes_the_tree_and_says_so():
    st = Setting(hierarchy=True)
    st.check(_env(["a", "a/b"], ["a/b", "a"]), "h")
    st.check(_env(None, [None]), "h")  # a flat instance is a (trivial) tree
    assert "queue tree" in st.describe() and "queue tree" not in Setting().describe()


def test_a_mismatch_names_the_whole_fix_not_only_the_first_field():
    d = {"resources": ["r1"], "servers": [{"capacity": [4]}], "queues": [{"name": "a"}],
         "users": [{"demand": [1], "tasks": 2, "weight": 2, "queue": "a"}]}
    with pytest.raises(SettingError) as e:
        Setting(bounds=False, weights=False).check(parse_environment(d), "mine")
    msg = str(e.value)
    assert msg.startswith("users[0].tasks: mine is defined for unbounded task counts") and "\n" not in msg
    assert "@mechverify.mechanism(..., bounds=True, weights=True, hierarchy=True)" in msg
    Setting(bounds=True, weights=True, hierarchy=True).check(parse_environment(d), "mine")  # the fix works
