"""A user's policy exposes its ORDER (docs/orders-and-placement.md, "Orders"): ``@mechverify.mechanism(order=key)``
or ``order=mechverify.comparator(cmp)`` feeds the same order facet the ports have (``mechanisms.OrderSpec``), so the
``order`` command, ``mechverify.order`` and the ``order``/``share`` properties read it; a referenced file that
registers with ``register(..., order=OrderSpec(...))`` keeps it; bad declarations are one line.

Every order and tie below is derived beside its test."""
from __future__ import annotations

import json
import textwrap
from fractions import Fraction as F

import pytest

import mechverify
from mechanisms.core.references import from_function
from mechverify.allocation import state_of
from mechverify.instances import parse_environment
from mechverify.policies import progressive_filling
from tests.helpers import run_cli
from verifier.properties import get_property

# one server <10 cpu, 10 mem>; the state (usage): a <1, 0> x 2, b <0, 1> x 1, c <1, 1> x 2, d <2, 2> x 1
#   tasks:            a 2, b 1, c 2, d 1
#   dominant shares:  a 2/10 = 1/5, b 1/10, c max(2/10, 2/10) = 1/5, d max(2/10, 2/10) = 1/5
INSTANCE = {"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [10, 10]}],
            "users": [{"name": "a", "demand": [1, 0], "usage": [2]}, {"name": "b", "demand": [0, 1], "usage": [1]},
                      {"name": "c", "demand": [1, 1], "usage": [2]}, {"name": "d", "demand": [2, 2], "usage": [1]}]}

POLICIES = '''
import mechverify
from mechverify.policies import progressive_filling


def by_tasks(state, j):
    return state.tasks[j]


@mechverify.mechanism(name="by-tasks", divisible=False, order=by_tasks)
def round_robin(env):
    return progressive_filling(env, by_tasks)


def by_share(state, i, j):
    a, b = state.dominant_share(i), state.dominant_share(j)
    return (a > b) - (a < b)


@mechverify.mechanism(name="by-share", divisible=False, order=mechverify.comparator(by_share))
def drf_like(env):
    return progressive_filling(env, cmp=by_share)


def plain(env):
    return progressive_filling(env, by_tasks)
'''


def by_tasks(state, j):
    return state.tasks[j]


def by_share(state, i, j):
    a, b = state.dominant_share(i), state.dominant_share(j)
    return (a > b) - (a < b)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "policies.py").write_text(POLICIES)
    (tmp_path / "inst.json").write_text(json.dumps(INSTANCE))
    return tmp_path


def test_a_key_and_a_comparator_become_the_order_facet():
    """by_tasks: keys a 2, b 1, c 2, d 1 -> b, d (tie: index), a, c (tie: index).
    by_share: b 1/10, then a, c, d all 1/5 (one tie of three, by index)."""
    env = parse_environment(INSTANCE)
    st = state_of(env)
    key = from_function(mechverify.mechanism(name="k", divisible=False, order=by_tasks)(lambda env: None))
    cmp = from_function(mechverify.mechanism(name="c", divisible=False, order=mechverify.comparator(by_share))(
        lambda env: None))
    for m in (key, cmp):
        assert m.setting.ordered and not m.setting.quota_first and m.order is not None
    assert key.order.order(st) == [1, 3, 0, 2]
    assert [key.order.compare(st, *p) for p in ((1, 3), (3, 0), (2, 0), (2, 1))] == [0, -1, 0, 1]
    assert [key.order.key(st, j) for j in range(4)] == ["2", "1", "2", "1"]
    assert cmp.order.order(st) == [1, 0, 2, 3] and cmp.order.key is None
    # the share facet of a user's policy: the model's weighted dominant share
    assert [cmp.order.share(st, j) for j in range(4)] == [F(1, 5), F(1, 10), F(1, 5), F(1, 5)]
    # no order: no facet, not ordered
    assert from_function(lambda env: None).order is None


def test_order_command_prints_the_order_and_the_ties(files):
    p = run_cli("order", f"{files}/policies.py:round_robin", f"{files}/inst.json")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "by-tasks: order in the given state (first = served next)",
        "   1. b  share 1/10  key 1  [tie 1]",
        "   2. d  share 1/5  key 1  [tie 1]",
        "   3. a  share 1/5  key 2  [tie 2]",
        "   4. c  share 1/5  key 2  [tie 2]",
        "ties the order leaves open (broken by user index (instance order)):",
        "  tie 1: b ~ d",
        "  tie 2: a ~ c",
    ]
    p = run_cli("order", f"{files}/policies.py:drf_like", f"{files}/inst.json", "--format", "json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["order"] == ["b", "a", "c", "d"] and out["ties"] == [["a", "c", "d"]] and "keys" not in out
    assert out["tie_break"] == "by user index (instance order)"
    assert out["shares"] == {"a": "1/5", "b": "1/10", "c": "1/5", "d": "1/5"}


def test_order_without_ties_says_so(files):
    """The instance without d and c's usage: by_share b 1/10, c 0, a 1/5 -> c, b, a: no pair tied."""
    inst = json.loads(json.dumps(INSTANCE))
    del inst["users"][3]
    del inst["users"][2]["usage"]
    (files / "two.json").write_text(json.dumps(inst))
    p = run_cli("order", f"{files}/policies.py:drf_like", f"{files}/two.json")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[1:] == ["   1. c  share 0", "   2. b  share 1/10", "   3. a  share 1/5",
                                         "ties the order leaves open: none (every pair of consecutive users is "
                                         "separated)"]


def test_the_python_api():
    """``mechverify.order``: the same as the command; ``state=`` replaces the instance's usage (a 0, b 3, c 1, d 0:
    tasks keys 0, 3, 1, 0 -> a, d (tie), c, b)."""
    env = parse_environment(INSTANCE)
    pol = mechverify.mechanism(name="by-tasks", divisible=False, order=by_tasks)(
        lambda env: progressive_filling(env, by_tasks))
    got = mechverify.order(pol, env)
    assert [env.users[j] for j in got.users] == ["b", "d", "a", "c"] and got.ties == ((1, 3), (0, 2))
    assert str(got).splitlines()[-1] == "  tie 2: a ~ c"
    assert repr(got) == "<Ordering by-tasks: b d a c; ties: b~d, a~c>"
    other = mechverify.order(pol, INSTANCE, state=[[0], [3], [1], [0]])
    assert other.users == (0, 3, 2, 1) and other.ties == ((0, 3),)
    with pytest.raises(ValueError, match="^state: expected 4 rows"):
        mechverify.order(pol, env, state=[[1]])
    with pytest.raises(ValueError, match="^order: .* exposes no order"):
        mechverify.order(lambda env: None, env)


def test_a_registered_order_in_a_referenced_file_is_kept(tmp_path):
    """``register(..., order=OrderSpec(...))`` in a file given as file.py:function: the reference gets that
    registration.  The comparator puts the higher index first: d, c, b, a; no ties."""
    (tmp_path / "reg.py").write_text(textwrap.dedent('''
        from fractions import Fraction
        from mechanisms import OrderSpec, Setting, register
        from mechverify.allocation import Allocation

        def last_first(state, i, j):
            return (j > i) - (j < i)

        @register("test-last-first", "nothing, in reverse index order", Setting(single_server=True, divisible=False),
                  order=OrderSpec(last_first, lambda state, j: Fraction(0)))
        def nothing(env, exact=False):
            return Allocation(env, tuple((Fraction(0),) for _ in range(env.n_users)), "test-last-first", True)
        '''))
    (tmp_path / "inst.json").write_text(json.dumps(INSTANCE))
    p = run_cli("order", f"{tmp_path}/reg.py:nothing", f"{tmp_path}/inst.json", "--format", "json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["order"] == ["d", "c", "b", "a"] and json.loads(p.stdout)["ties"] == []


def test_a_registering_file_that_changed_registers_again(tmp_path):
    """The file's registration is dropped with its module when the file changes, so the new import registers
    the new version (no "registered twice"); the comparator flips from the last index first to the first."""
    from mechanisms.core.mechanism import REGISTERED
    from mechanisms.core.references import resolve

    src = textwrap.dedent('''
        from fractions import Fraction
        from mechanisms import OrderSpec, Setting, register
        from mechverify.allocation import Allocation

        def cmp(state, i, j):
            return SIGN * ((i > j) - (i < j))

        @register("test-reregistered", "nothing", Setting(single_server=True, divisible=False),
                  order=OrderSpec(cmp, lambda state, j: Fraction(0)))
        def nothing(env, exact=False):
            return Allocation(env, tuple((Fraction(0),) for _ in range(env.n_users)), "test-reregistered", True)
        ''')
    path = tmp_path / "rereg.py"
    env = parse_environment(INSTANCE)
    try:
        path.write_text("SIGN = -1\n" + src)
        assert resolve(f"{path}:nothing").order.order(state_of(env)) == [3, 2, 1, 0]
        path.write_text("SIGN = 1\n" + src)
        assert resolve(f"{path}:nothing").order.order(state_of(env)) == [0, 1, 2, 3]
    finally:
        REGISTERED.pop("test-reregistered", None)


def test_bad_declarations_are_one_line(files):
    with pytest.raises(ValueError, match=r"^ordered: not declared by hand -- a policy exposes its order with "
                                         r"order=key or order=mechverify.comparator\(cmp\)"):
        mechverify.mechanism(ordered=True)
    with pytest.raises(ValueError, match="^quota_first: not declared by hand"):
        mechverify.mechanism(quota_first=True, order=by_tasks)
    with pytest.raises(ValueError, match=r"^order: a function of three arguments \(state, i, j\) is a comparator: "
                                         r"give it as order=mechverify.comparator\(cmp\)"):
        mechverify.mechanism(order=by_share)
    with pytest.raises(ValueError, match="^order: a key takes two arguments \\(state, j\\), got a function of 1"):
        mechverify.mechanism(order=lambda j: j)
    with pytest.raises(ValueError, match="^order: expected a key function key\\(state, j\\) or "
                                         "mechverify.comparator\\(cmp\\), got int"):
        mechverify.mechanism(order=5)
    with pytest.raises(ValueError, match="^comparator: expected a function"):
        mechverify.comparator("by_share")
    # through the CLI: the file fails to import, one line, exit 2, before any work
    (files / "flag.py").write_text("import mechverify\n\n@mechverify.mechanism(ordered=True)\ndef f(env):\n"
                                   "    return [[0] * env.n_servers for _ in range(env.n_users)]\n")
    p = run_cli("order", f"{files}/flag.py:f", f"{files}/inst.json")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "ordered: not declared by hand" in p.stderr, p.stderr
    p = run_cli("order", f"{files}/policies.py:plain", f"{files}/inst.json")
    assert p.returncode == 2 and p.stderr.startswith("error: order: plain exposes no order") and \
        p.stderr.count("\n") == 1, p.stderr


def verdict(mech, env, variant="strict-weak"):
    prop = get_property("order")
    assert prop.variant_possible(mech.setting, variant) is None and prop.applicable(mech, env, variant) is None
    ev = prop.evaluate(mech, env, variant, exact=True)
    cert = prop.recheck(mech, ev.witness) if ev.violated else None
    assert ev.violated == (cert is not None)
    return cert


def test_the_order_property_reads_a_users_order():
    """The planted comparator of examples/cyclic_order.py on the state u1 4, u2 2, u3 1 tasks of <1> on <10>:
    shares 2/5, 1/5, 1/10.  u1 and u2 are within a factor of two: by index, u1 first; u2 and u3 likewise: u2
    first; u1 and u3 are a factor of 4 apart: by share, u3 first -- compare(u1, u3) = 1, so u1 before u2 before
    u3 is not transitive.  The tasks key and the share comparator are strict weak orders on the same state."""
    from mechanisms import get

    env = parse_environment({"resources": ["cpu"], "servers": [{"name": "s", "capacity": [10]}],
                             "users": [{"name": f"u{k + 1}", "demand": [1], "usage": [u]} for k, u in enumerate((4, 2, 1))]})
    cert = verdict(get("examples/cyclic_order.py:fifo_within_a_factor_of_two"), env)
    assert cert.witness.users == (0, 1, 2)
    assert cert.summary == "u1 before u2 before u3, but compare(u1, u3) = 1: not transitive"
    for order in (by_tasks, mechverify.comparator(by_share)):
        mech = from_function(mechverify.mechanism(name="ok", divisible=False, order=order)(lambda env: None))
        assert verdict(mech, env) is None and verdict(mech, env, "scale") is None


def test_a_key_that_raises_is_a_violation():
    """A key dividing by the tasks fails on a user holding none (u3): run in the worker process, the failure is
    the order's, reported by ``order/strict-weak`` (an order must be total on a valid state)."""
    env = parse_environment({"resources": ["cpu"], "servers": [{"name": "s", "capacity": [10]}],
                             "users": [{"name": f"u{k + 1}", "demand": [1], "usage": [u]} for k, u in enumerate((2, 1, 0))]})
    mech = from_function(mechverify.mechanism(name="inverse", divisible=False,
                                              order=lambda state, j: 1 / state.tasks[j])(lambda env: None))
    cert = verdict(mech, env)
    assert cert.summary.startswith("compare(u1, u3) raises ValueError: the key of u3 raises ZeroDivisionError")


def test_run_refutes_the_planted_non_transitive_comparator():
    """``run examples/cyclic_order.py:fifo_within_a_factor_of_two --properties order``: violated, exit 1 (its made-up claim
    that the order is a strict weak order is refuted)."""
    p = run_cli("run", "examples/cyclic_order.py:fifo_within_a_factor_of_two", "--properties", "order", "--budget",
                "120", "--trials", "800", "--no-store", "--quiet", "--format", "json", timeout=300)
    assert p.returncode == 1, p.stderr
    rep = json.loads(p.stdout)
    res = {r["variant"]: r["verdict"] for r in rep["results"] if r["property"] == "order"}
    assert res["strict-weak"] == "violated", rep["results"]
    assert rep["refuted"] == ["order/strict-weak"]
