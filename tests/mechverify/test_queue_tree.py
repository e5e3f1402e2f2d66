"""Queue trees in the model and the instance format: parsing, the helpers, round-trip, editing
(``restrict``, ``without_queue``), the limits, and every bad tree as one ``InstanceError`` line naming the
field -- through the API, the CLI (exit 2) and a real process."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from fractions import Fraction as F

import pytest
from jsonschema import Draft202012Validator

from mechverify.instances import MAX_QUEUE_DEPTH, MAX_QUEUES, instance_schema, parse_environment, parse_environment_text
from mechverify.model import Environment, InstanceError
from verifier.cli import main
from tests.helpers import ROOT


def tree() -> dict:
    """eng (weight 3) > eng/dev (guarantee), eng/ops; research; users in dev, ops, research and at the root."""
    return {"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [10, 20]}],
            "queues": [{"name": "eng", "weight": 3}, {"name": "eng/dev", "weight": "1/2", "guarantee": [4, 8]},
                       {"name": "eng/ops"}, {"name": "research"}],
            "users": [{"name": "a", "demand": [1, 2], "queue": "eng/dev"},
                      {"name": "b", "demand": [2, 1], "queue": "eng/ops"},
                      {"name": "c", "demand": [1, 1], "queue": "research"},
                      {"name": "d", "demand": [1, 3]}]}


def parse(d: dict) -> Environment:
    return parse_environment_text(json.dumps(d), "inst.json")


# ---------------------------------------------------------------------- the model
def test_tree_is_parsed_with_its_helpers():
    env = parse(tree())
    assert env.queues == ("eng", "eng/dev", "eng/ops", "research")
    assert env.queue_weight == (F(3), F(1, 2), F(1), F(1))
    assert env.queue_guarantee == (None, (F(4), F(8)), None, None)
    assert env.user_queue == (1, 2, 3, None)
    assert env.n_queues == 4 and env.has_queues
    assert [env.queue_parent(q) for q in range(4)] == [None, 0, 0, None]
    assert env.queue_children() == (0, 3) and env.queue_children(0) == (1, 2) and env.queue_children(1) == ()
    assert [env.queue_depth(q) for q in (None, 0, 1, 3)] == [0, 1, 2, 1]
    assert env.queue_leaves() == (1, 2, 3)
    assert env.user_path(0) == (0, 1) and env.user_path(2) == (3,) and env.user_path(3) == ()
    assert env.queue_users(0) == () and env.queue_users(1) == (0,) and env.queue_users(None) == (3,)
    assert env.queue_index("eng/ops") == 2
    assert env.describe() == "4 users x 1 server x 2 resources in 4 queues"


def test_round_trip_and_defaults():
    env = parse(tree())
    d = env.to_dict()
    assert d["queues"] == [{"name": "eng", "weight": "3"}, {"name": "eng/dev", "weight": "1/2", "guarantee": ["4", "8"]},
                           {"name": "eng/ops"}, {"name": "research"}]
    assert [u.get("queue") for u in d["users"]] == ["eng/dev", "eng/ops", "research", None]
    assert list(d) == ["resources", "servers", "queues", "users"]
    assert parse_environment(d) == env
    assert parse_environment(json.loads(env.to_json())) == env
    # absent / null queue fields read as the flat instance
    flat = {k: v for k, v in tree().items() if k != "queues"}
    for u in flat["users"]:
        u["queue"] = None
    assert parse(flat) == parse({**flat, "queues": None}) == parse({**flat, "queues": []})


def test_flat_instance_is_unchanged():
    """No queue fields in a flat instance's JSON (stored counterexamples keep their ids and hashes), and an
    Environment built without the new fields equals the parsed one."""
    d = {"resources": ["r"], "servers": [{"name": "s1", "capacity": ["3"]}], "users": [{"name": "u1", "demand": ["1"]}]}
    env = parse_environment(d)
    assert env.to_dict() == d and not env.has_queues and env.user_queue == (None,)
    assert env.queue_children() == () and env.queue_leaves() == () and env.user_path(0) == ()
    assert env == Environment(("r",), ("s1",), ((F(3),),), ("u1",), ((F(1),),))
    assert env.describe() == "1 user x 1 server x 1 resource"


def test_restrict_keeps_the_tree_consistent():
    env = parse(tree())
    sub = env.restrict(users=[3, 1], resources=[1])
    assert sub.queues == env.queues and sub.queue_weight == env.queue_weight
    assert sub.user_queue == (None, 2)
    assert sub.queue_guarantee == (None, (F(8),), None, None)  # guarantees follow the kept resources
    assert parse_environment(sub.to_dict()) == sub


def test_without_queue_removes_a_leaf_and_merges_an_inner_queue():
    env = parse(tree())
    leaf = env.without_queue(1)  # eng/dev: a's users move to eng
    assert leaf.queues == ("eng", "eng/ops", "research") and leaf.user_queue == (0, 1, 2, None)
    assert leaf.queue_weight == (F(3), F(1), F(1))
    inner = env.without_queue(0)  # eng: its children become top-level queues, keeping their weights
    assert inner.queues == ("dev", "ops", "research") and inner.user_queue == (0, 1, 2, None)
    assert inner.queue_weight == (F(1, 2), F(1), F(1)) and inner.queue_guarantee[0] == (F(4), F(8))
    deep = parse({**tree(), "queues": [{"name": "a"}, {"name": "a/b"}, {"name": "a/b/c"}, {"name": "a/b/c/d"}],
                  "users": [{"demand": [1, 1], "queue": "a/b/c/d"}, {"demand": [1, 1], "queue": "a/b"}]})
    merged = deep.without_queue(1)
    assert merged.queues == ("a", "a/c", "a/c/d") and merged.user_queue == (2, 0)
    clash = parse({**tree(), "queues": [{"name": "a"}, {"name": "a/x"}, {"name": "x"}], "users": [{"demand": [1, 1]}]})
    with pytest.raises(InstanceError, match=r"duplicate queue 'x'"):
        clash.without_queue(0)  # a/x would become x, which exists


def test_direct_construction_is_checked_too():
    base = dict(resources=("r",), servers=("s",), capacity=((F(1),),), users=("u",), demand=((F(1),),))
    with pytest.raises(InstanceError, match=r"^queues\[1\]\.name: parent queue 'b' of 'b/c' is not declared"):
        Environment(**base, queues=("a", "b/c"))
    with pytest.raises(InstanceError, match=r"^users\[0\]\.queue: unknown queue index 1"):
        Environment(**base, queues=("a",), user_queue=(1,))
    with pytest.raises(InstanceError, match=r"^users\[0\]\.queue: unknown queue index 0"):
        Environment(**base, user_queue=(0,))
    with pytest.raises(InstanceError, match=r"^queues\[0\]\.weight: must be > 0"):
        Environment(**base, queues=("a",), queue_weight=(F(0),))
    with pytest.raises(InstanceError, match=r"^queues\[\]\.weight: expected 1 entries"):
        Environment(**base, queues=("a",), queue_weight=(F(1), F(1)))
    with pytest.raises(InstanceError, match=r"^queues: too many queues \(10001, limit 10000\)"):
        Environment(**base, queues=tuple(f"q{i}" for i in range(MAX_QUEUES + 1)))


def test_limits_are_exact():
    chain = ["/".join(["a"] * (i + 1)) for i in range(MAX_QUEUE_DEPTH)]
    env = parse({**tree(), "queues": [{"name": p} for p in chain],
                 "users": [{"demand": [1, 1], "queue": chain[-1]}]})
    assert env.queue_depth(env.user_queue[0]) == MAX_QUEUE_DEPTH and len(env.user_path(0)) == MAX_QUEUE_DEPTH
    many = parse({**tree(), "queues": [{"name": f"q{i}"} for i in range(MAX_QUEUES)],
                  "users": [{"demand": [1, 1], "queue": f"q{MAX_QUEUES - 1}"}]})
    assert many.n_queues == MAX_QUEUES and many.user_queue == (MAX_QUEUES - 1,)


# ---------------------------------------------------------------------- bad trees: one line naming the field
def _with(mutate) -> str:
    d = tree()
    mutate(d)
    return json.dumps(d)


def _add(q: dict):
    return lambda d: d["queues"].append(q)


def _weight(w):
    return lambda d: d["queues"][0].__setitem__("weight", w)


BAD = {
    "parent missing": (lambda d: d["queues"].pop(0), "queues[0].name",
                       "parent queue 'eng' of 'eng/dev' is not declared"),
    "grandparent missing": (_add({"name": "x/y/z"}), "queues[4].name", "parent queue 'x/y' of 'x/y/z' is not declared"),
    "duplicate": (_add({"name": "eng/dev"}), "queues[4].name", "duplicate queue 'eng/dev' (also queues[1])"),
    "self-reference (an empty segment)": (_add({"name": "eng//dev"}), "queues[4].name", "empty segment"),
    "leading slash": (_add({"name": "/eng"}), "queues[4].name", "empty segment"),
    "trailing slash": (_add({"name": "eng/"}), "queues[4].name", "empty segment"),
    "blank segment": (_add({"name": "eng/ /x"}), "queues[4].name", "empty segment"),
    "blank name": (_add({"name": "  "}), "queues[4].name", "expected a non-empty name"),
    "missing name": (_add({"weight": 2}), "queues[4].name", "missing"),
    "control character": (_add({"name": "eng/\x1b[31m"}), "queues[4].name", "control character '\\x1b'"),
    "lone surrogate": (_add({"name": "a\ud800"}), "queues[4].name", "lone surrogate"),
    "name too long": (_add({"name": "x" * 201}), "queues[4].name", "name too long"),
    "unknown field": (_add({"name": "x", "colour": "red"}), "queues[4]", "unknown field 'colour'"),
    "not an object": (_add("x"), "queues[4]", "expected an object"),
    "queues not a list": (lambda d: d.__setitem__("queues", {"eng": 1}), "queues", "expected a list"),
    "weight 0": (_weight(0), "queues[0].weight", "must be > 0"),
    "weight '0/3'": (_weight("0/3"), "queues[0].weight", "must be > 0"),
    "weight negative": (_weight(-2), "queues[0].weight", "must be > 0"),
    "weight NaN": (_weight(float("nan")), "queues[0].weight", "must be a finite number"),
    "weight inf": (_weight(float("inf")), "queues[0].weight", "must be a finite number"),
    "weight not a number": (_weight("heavy"), "queues[0].weight", "not a number"),
    "weight boolean": (_weight(True), "queues[0].weight", "expected a number, got boolean"),
    "weight null": (_weight(None), "queues[0].weight", "expected a number"),
    "weight 1e9": (_weight(1e9), "queues[0].weight", "out of range"),
    "guarantee too short": (lambda d: d["queues"][0].__setitem__("guarantee", [1]), "queues[0].guarantee",
                            "expected 2 numbers (one per resource)"),
    "guarantee negative": (lambda d: d["queues"][0].__setitem__("guarantee", [1, -1]), "queues[0].guarantee[1]",
                           "must be >= 0"),
    "guarantee NaN": (lambda d: d["queues"][0].__setitem__("guarantee", [1, float("nan")]), "queues[0].guarantee[1]",
                      "must be a finite number"),
    "user in an unknown queue": (lambda d: d["users"][0].__setitem__("queue", "eng/qa"), "users[0].queue",
                                 "unknown queue 'eng/qa'"),
    "user queue not a string": (lambda d: d["users"][1].__setitem__("queue", 1), "users[1].queue", "unknown queue 1"),
    "user queue without a tree": (lambda d: d.pop("queues"), "users[0].queue", "no queues are declared"),
    "depth 33": (lambda d: d.update(queues=[{"name": "/".join(["a"] * (i + 1))} for i in range(33)],
                                    users=[{"demand": [1, 1], "queue": "a"}]),
                 "queues[32].name", "queue path too deep (33 levels, limit 32)"),
    "10001 queues": (lambda d: d.__setitem__("queues", [{"name": f"q{i}"} for i in range(MAX_QUEUES + 1)]),
                     "queues", "too many queues (10001, limit 10000)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_tree_is_one_line_naming_the_field(case):
    mutate, field, words = BAD[case]
    with pytest.raises(InstanceError) as e:
        parse_environment_text(_with(mutate), "inst.json")
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 400, msg
    assert msg.startswith(field + ":") and words in msg, msg


@pytest.mark.parametrize("case", ["parent missing", "duplicate", "self-reference (an empty segment)", "weight NaN",
                                  "user in an unknown queue", "depth 33"])
def test_cli_bad_tree_one_line_exit_2(case, capsys, tmp_path):
    mutate, field, words = BAD[case]
    path = tmp_path / "bad.json"
    path.write_text(_with(mutate), encoding="utf-8")
    code = main(["allocate", "drf", str(path)])
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 2 and out == "", err
    assert len(lines) == 1 and lines[0].startswith("error: ") and field in lines[0] and words in lines[0], err


@pytest.mark.wallclock
def test_hundred_thousand_queues_rejected_quickly_in_a_real_process(tmp_path):
    d = tree()
    d["queues"] = [{"name": f"q{i}", "weight": 1} for i in range(10 ** 5)]
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    t0 = time.monotonic()
    with pytest.raises(InstanceError, match=r"queues: too many queues \(100000, limit 10000\)"):
        parse_environment_text(path.read_text(encoding="utf-8"), str(path))
    assert time.monotonic() - t0 < 5
    out = subprocess.run([sys.executable, "-m", "verifier", "allocate", "drf", str(path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    lines = out.stderr.splitlines()
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr, out.stderr
    assert len(lines) == 1 and "queues: too many queues (100000, limit 10000)" in lines[0], out.stderr


def test_flat_mechanism_given_a_tree_is_a_setting_error_line(capsys, tmp_path):
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(tree()), encoding="utf-8")
    code = main(["allocate", "drf", str(path)])
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 2 and out == "", err
    assert len(lines) == 1 and lines[0].startswith("error: queues: drf is defined without a queue tree"), err


# ---------------------------------------------------------------------- the JSON Schema
@pytest.fixture(scope="module")
def validator():
    return Draft202012Validator(instance_schema())


def test_schema_accepts_a_tree(validator):
    assert [e.message for e in validator.iter_errors(tree())] == []
    assert [e.message for e in validator.iter_errors(parse(tree()).to_dict())] == []


@pytest.mark.parametrize("case", ["self-reference (an empty segment)", "leading slash", "trailing slash",
                                  "blank segment", "weight 0", "weight negative", "unknown field", "missing name",
                                  "control character", "user queue not a string", "depth 33", "10001 queues"])
def test_schema_rejects_what_it_can_express(validator, case):
    mutate = BAD[case][0]
    d = tree()
    mutate(d)
    assert not validator.is_valid(d)
