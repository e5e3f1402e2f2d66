"""The instance file format: its JSON Schema, and the parser's limits on hostile input.

Every rejection is one ``InstanceError`` line naming the field (or the file) and the value, through
the API and through the CLI (exit 2, one ``error:`` line on stderr, no traceback).
"""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import time
from fractions import Fraction as F

import pytest
from jsonschema import Draft202012Validator

import mechanisms
from mechverify.lp import LPError
from mechverify.model import InstanceError
from mechverify.instances import (MAX_INSTANCE_BYTES, MAX_NESTING, check_nesting, instance_number, instance_schema,
                                  load_environment, loads_instance, parse_environment, parse_environment_text)
from verifier.cli import main
from tests.helpers import ROOT

EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.json")))


def base() -> dict:
    return {"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [9, 12]}],
            "users": [{"name": "u1", "demand": [1, 2]}, {"name": "u2", "demand": [1, "1/2"]}]}


def with_(mutate) -> str:
    d = base()
    mutate(d)
    return json.dumps(d)


def with_external(name: str, capacity) -> str:
    """The base instance with one external resource (every user demanding 1 of it)."""
    def add(d):
        d["external"] = [{"name": name, "capacity": capacity}]
        for u in d["users"]:
            u["external_demand"] = [1]
    return with_(add)


def deep_users(n: int) -> str:
    return '{"resources": ["cpu"], "servers": [{"capacity": [1]}], "users": ' + "[" * n + "]" * n + "}"


# (instance text, field the message starts with after the source, words the message contains)
HOSTILE = {
    "capacity 1 + 400 zeros": (with_(lambda d: d["servers"][0]["capacity"].__setitem__(0, 10 ** 400)),
                               "servers[0].capacity[0]", "out of range"),
    "demand 1e300": (with_(lambda d: d["users"][0]["demand"].__setitem__(0, 1e300)),
                     "users[0].demand[0]", "1e+300 is out of range"),
    "weight 1e-300": (with_(lambda d: d["users"][0].__setitem__("weight", 1e-300)),
                      "users[0].weight", "1e-300 is out of range"),
    "demand '1e999999'": (with_(lambda d: d["users"][1]["demand"].__setitem__(1, "1e999999")),
                          "users[1].demand[1]", "'1e999999' is out of range"),
    "demand '1e-999999'": (with_(lambda d: d["users"][1]["demand"].__setitem__(1, "1e-999999")),
                           "users[1].demand[1]", "out of range"),
    "capacity just above 1e4": (with_(lambda d: d["servers"][0]["capacity"].__setitem__(1, "10001")),
                                "servers[0].capacity[1]", "'10001' is out of range"),
    "tasks just below 1e-4": (with_(lambda d: d["users"][0].__setitem__("tasks", "1/10001")),
                              "users[0].tasks", "'1/10001' is out of range"),
    "external capacity 1e5": (with_external("bw", 1e5), "external[0].capacity", "out of range"),
    "JSON literal 1e400 (a float would be inf)":
        ('{"resources": ["cpu"], "servers": [{"capacity": [1e400]}], "users": [{"demand": [1]}]}',
         "servers[0].capacity[0]", "1e400 is out of range"),
    "JSON literal 1e-400 (a float would be 0)":
        ('{"resources": ["cpu"], "servers": [{"capacity": [1]}], "users": [{"demand": [1e-400]}]}',
         "users[0].demand[0]", "1e-400 is out of range"),
    "too many digits": (with_(lambda d: d["users"][0]["demand"].__setitem__(
        0, "1000000000000000000000000000001/1000000000000000000000000000000")),
        "users[0].demand[0]", "too many digits"),
    "control character inside 'p/q'": (with_(lambda d: d["users"][0]["demand"].__setitem__(0, "1/\x1f2")),
                                       "users[0].demand[0]", "not a number: '1/\\x1f2'"),
    "number text too long": (with_(lambda d: d["users"][0]["demand"].__setitem__(0, "1." + "0" * 200)),
                             "users[0].demand[0]", "number text too long (202 characters, limit 100)"),
    "duplicate key in a user": ('{"resources": ["cpu"], "servers": [{"capacity": [1]}], '
                                '"users": [{"demand": [1], "demand": [2]}]}', "users[0]", "duplicate key 'demand'"),
    "duplicate key at top level": ('{"resources": ["cpu"], "servers": [{"capacity": [1]}], '
                                   '"users": [{"demand": [1]}], "resources": ["mem"]}',
                                   "instance", "duplicate key 'resources'"),
    "duplicate key in server_demand": ('{"resources": ["cpu"], "servers": [{"name": "s1", "capacity": [1]}], '
                                       '"users": [{"demand": [1], "server_demand": {"s1": [1], "s1": [2]}}]}',
                                       "users[0].server_demand", "duplicate key 's1'"),
    "duplicate key of 1000 characters (cut in the message)": (
        '{"resources": ["cpu"], "servers": [{"capacity": [1]}], "users": [{"demand": [1]}], ' + '"%s": 1, "%s": 2}'
        % ("x" * 1000, "x" * 1000), "instance", "duplicate key 'xxxxxxxxxx"),
    "deep nesting under a key with a line break (escaped in the path)": (
        '{"resources": ["cpu"], "servers": [{"name": "s1", "capacity": [1]}], '
        '"users": [{"demand": [1], "server_demand": {"s\\n1": ' + "[" * 40 + "]" * 40 + '}}]}',
        "users[0].server_demand['s\\n1']" + "[0]" * (MAX_NESTING - 4), "nesting too deep"),
    "NUL in a user name": (with_(lambda d: d["users"][0].__setitem__("name", "a\x00b")),
                           "users[0].name", "control character '\\x00' at position 1: 'a\\x00b'"),
    "newline in a resource name": (with_(lambda d: d["resources"].__setitem__(1, "mem\nerror: fake")),
                                   "resources[1]", "control character '\\n'"),
    "escape sequence in a server name": (with_(lambda d: d["servers"][0].__setitem__("name", "\x1b[31mred")),
                                         "servers[0].name", "control character '\\x1b'"),
    "U+2028 in an external name": (with_external("a\u2028b", 1), "external[0].name", "control character '\\u2028'"),
    "lone surrogate in a user name (not writable as UTF-8)": (
        with_(lambda d: d["users"][0].__setitem__("name", "a\ud800")), "users[0].name",
        "lone surrogate '\\ud800' at position 1"),
    "name too long": (with_(lambda d: d["users"][1].__setitem__("name", "x" * 201)),
                      "users[1].name", "name too long (201 characters, limit 200)"),
    "nesting 40 deep inside users": (deep_users(40), f"users{'[0]' * (MAX_NESTING - 1)}",
                                     f"nesting too deep (limit {MAX_NESTING} levels)"),
}
# these two are beyond what json.loads can recurse into: the message names the file and the position
DEEP = {
    "[ x 5000 inside users": (deep_users(5000), "line 1 column",  # the 32nd '[' of users is the 33rd level
                              f"nesting too deep at line 1 column {deep_users(1).index('[]') + MAX_NESTING} "
                              f"(limit {MAX_NESTING} levels)"),
    "[ x 100000 at top level": ("[" * 100000 + "]" * 100000, "line 1 column",
                                f"nesting too deep at line 1 column 33 (limit {MAX_NESTING} levels)"),
    "integer literal of 5000 digits": ('{"resources": ["cpu"], "servers": [{"capacity": [1' + "0" * 5000 + ']}], '
                                       '"users": [{"demand": [1]}]}', "a number has too many digits", "5001 digits"),
}


def _one_line(msg: str) -> None:
    assert "\n" not in msg and len(msg) < 400, msg


def _rejection(parse, text: str) -> str:
    """The one-line ``InstanceError`` message ``parse(text, "inst.json")`` raises."""
    with pytest.raises(InstanceError) as e:
        parse(text, "inst.json")
    msg = str(e.value)
    _one_line(msg)
    return msg


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_instance_rejected_naming_the_field(case):
    text, field, words = HOSTILE[case]
    msg = _rejection(parse_environment_text, text)
    assert msg.startswith(f"{field}:") or msg.startswith(f"inst.json: {field}:"), msg
    assert words in msg, msg


@pytest.mark.parametrize("case", sorted(DEEP))
def test_hostile_text_rejected_naming_the_source(case):
    text, start, words = DEEP[case]
    msg = _rejection(loads_instance, text)
    assert msg.startswith("inst.json: ") and start in msg and words in msg, msg


def test_huge_exponent_is_rejected_without_building_the_number():
    t0 = time.perf_counter()
    for text in ("1e999999", "1e-999999", "9" * 90 + "e99999", "0.5E+9999999"):
        with pytest.raises(InstanceError, match="out of range"):
            instance_number(text, "f")
    assert time.perf_counter() - t0 < 0.5  # building 10**999999 alone takes seconds


def test_deep_python_data_no_recursion_error():
    """``parse_environment`` on already decoded data (the ``--batch`` path) checks depth iteratively."""
    deep: list = []
    for _ in range(100000):
        deep = [deep]
    data = {"resources": ["cpu"], "servers": [{"capacity": [1]}], "users": deep}
    with pytest.raises(InstanceError) as e:
        parse_environment(data)
    assert str(e.value).startswith("users[0][0]") and f"nesting too deep (limit {MAX_NESTING} levels)" in str(e.value)


def test_nesting_limit_is_exact():
    # the deepest legal instance nests 5 levels: instance > users > user > server_demand > vector
    ok = {"resources": ["r"], "servers": [{"name": "s", "capacity": [1]}],
          "users": [{"demand": [1], "server_demand": {"s": [2]}}]}
    parse_environment_text(json.dumps(ok))
    nested = json.loads(deep_users(MAX_NESTING - 1))  # top object + MAX_NESTING - 1 lists = MAX_NESTING
    check_nesting(nested)
    with pytest.raises(InstanceError, match="nesting too deep"):
        check_nesting(json.loads(deep_users(MAX_NESTING)))


def test_boundary_numbers_are_accepted_exactly():
    d = base()
    d["servers"][0]["capacity"] = [10000, "1e4"]
    d["users"][0]["demand"] = ["1/10000", 0.0001]
    d["users"][0]["weight"] = "0.0001"
    d["users"][1]["demand"] = [1.2345678901234567e-3, "99999999/10000"]  # a 17-digit float: denominator 10**19
    d["users"][1]["tasks"] = 0
    env = parse_environment_text(json.dumps(d))
    assert env.capacity[0] == (10000, 10000) and env.demand[0] == (F(1, 10000), F(1, 10000))
    assert env.demand[1][0] == F("0.0012345678901234567") and env.weight[0] == F(1, 10000)


EXTREME = [
    {"resources": ["cpu", "mem"],
     "servers": [{"name": "s1", "capacity": [10000, "1/10000"]}, {"name": "s2", "capacity": ["1/10000", 10000]}],
     "users": [{"name": "u1", "demand": [10000, "1/10000"], "weight": "1/10000"},
               {"name": "u2", "demand": ["1/10000", 10000], "weight": 10000},
               {"name": "u3", "demand": [1, 1]}]},
    {"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [10000, "1/10000"]}],
     "external": [{"name": "bw", "capacity": 10000}],
     "users": [{"name": "u1", "demand": [10000, "1/10000"], "external_demand": ["1/10000"], "weight": "1/10000",
                "tasks": 10000},
               {"name": "u2", "demand": ["1/10000", 10000], "external_demand": [10000], "weight": 10000,
                "tasks": "1/10000"}]},
    {"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [10000, "1/10000"]}],
     "users": [{"name": "u1", "demand": [10000, "1/10000"], "tasks": 10000},
               {"name": "u2", "demand": ["1/10000", 10000], "tasks": "1/10000"},
               {"name": "u3", "demand": ["1/10000", "1/10000"], "tasks": 1}]},
]


@pytest.mark.parametrize("mech", [m.name for m in mechanisms.all_mechanisms() if m.setting.divisible])
def test_extreme_legal_instances_run_through_the_float_path(mech):
    """At the numeric limits, LP coefficients stay far below HiGHS's 1e15 (measured: at most 1e12, products of
    a few inputs): no overflow, no model rejection.  What the limits do not promise is float
    accuracy: on such badly scaled instances a float allocation may be refused by the output check
    (a one-line error, never a verdict; the exact path is unaffected).  (Indivisible mechanisms place
    tasks one by one, so 1e8 tasks are a matter of time, not of numbers: not run here.)"""
    from mechanisms.core.registry import MechanismOutputError

    m = mechanisms.get(mech)
    ran = 0
    for inst in EXTREME:
        env = parse_environment(inst)
        try:
            m.setting.check(env, m.name)
        except InstanceError:
            continue
        try:
            a = mechanisms.allocate(m, env, exact=False)
            assert all(t >= 0 for t in a.totals())
        except MechanismOutputError as exc:  # float accuracy, not a rejection
            assert "output is not feasible" in str(exc) and "\n" not in str(exc)
        except LPError as exc:
            assert "rejected" not in str(exc), exc
        ran += 1
    if not ran:
        pytest.skip(f"{mech} takes neither extreme instance's setting")


def test_file_size_cap_checked_before_reading(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as fh:  # sparse: costs no disk space, and must not be read
        fh.truncate(MAX_INSTANCE_BYTES + 1)
    t0 = time.perf_counter()
    with pytest.raises(InstanceError) as e:
        load_environment(str(path))
    assert time.perf_counter() - t0 < 1
    assert str(e.value) == f"{path}: too large ({MAX_INSTANCE_BYTES + 1} bytes, limit {MAX_INSTANCE_BYTES} bytes)"
    with pytest.raises(InstanceError, match="too large"):
        loads_instance(" " * (MAX_INSTANCE_BYTES + 1))


def test_long_values_are_cut_in_messages():
    with pytest.raises(InstanceError) as e:
        parse_environment_text(with_(lambda d: d["users"][0].__setitem__("demand", list(range(1, 10000)))))
    msg = str(e.value)
    assert msg.startswith("users[0].demand: expected 2 numbers (one per resource), got 9999: [1, 2, 3")
    assert len(msg) < 200 and "characters)" in msg


def test_default_names():
    """Servers without a name are s1, s2, ..., users u1, u2, ..., external resources ext1, ext2, ..."""
    env = parse_environment({"resources": ["cpu"], "servers": [{"capacity": [1]}, {"name": "big", "capacity": [2]}],
                             "external": [{"capacity": 1}],
                             "users": [{"demand": [1], "external_demand": [1]},
                                       {"demand": [1], "external_demand": [1]}]})
    assert env.servers == ("s1", "big") and env.users == ("u1", "u2") and env.external == ("ext1",)


# ---------------------------------------------------------------------- the CLI
def _write(tmp_path, text: str) -> str:
    path = tmp_path / "inst.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("case", sorted(HOSTILE) + sorted(DEEP))
def test_cli_hostile_instance_one_line_exit_2(case, capsys, tmp_path):
    text, field, words = {**HOSTILE, **DEEP}[case]
    path = _write(tmp_path, text)
    code = main(["allocate", "drf", path])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and field in lines[0] and words in lines[0], err


ISSUE_CASES = ["capacity 1 + 400 zeros", "demand 1e300", "weight 1e-300", "demand '1e999999'",
               "duplicate key in a user", "NUL in a user name", "[ x 5000 inside users", "[ x 100000 at top level"]


@pytest.mark.parametrize("case", ISSUE_CASES)
def test_cli_subprocess_no_traceback(case, tmp_path):
    """The real process (its own recursion limit and stack): exit 2, exactly one ``error:`` line."""
    text, field, words = {**HOSTILE, **DEEP}[case]
    path = _write(tmp_path, text)
    out = subprocess.run([sys.executable, "-m", "verifier", "allocate", "drf", path],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    lines = out.stderr.splitlines()
    assert out.returncode == 2 and out.stdout == "", out
    assert len(lines) == 1 and lines[0].startswith("error: ") and field in lines[0] and words in lines[0], out.stderr
    assert "Traceback" not in out.stderr


# ---------------------------------------------------------------------- the JSON Schema
@pytest.fixture(scope="module")
def validator():
    schema = instance_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_schema_is_package_data_and_documented(validator):
    schema = instance_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # every field has a description (directly or on the definition it refers to)
    defs = schema["$defs"]
    props = dict(schema["properties"])
    for obj in ("server", "external", "user", "queue"):
        props.update({f"{obj}.{k}": v for k, v in defs[obj]["properties"].items()})
    assert set(props) >= {"resources", "servers", "external", "users", "name", "description", "source",
                          "server.name", "server.capacity", "external.name", "external.capacity", "user.name",
                          "user.demand", "user.external_demand", "user.weight", "user.eligible", "user.tasks",
                          "user.server_demand", "user.queue", "queues", "queue.name", "queue.weight",
                          "queue.guarantee"}
    for k, v in props.items():
        assert v.get("description"), k
    assert defs["number"]["description"] and defs["name"]["description"]


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_examples_validate(validator, path):
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    errors = [e.message for e in validator.iter_errors(data)]
    assert errors == []
    load_environment(path)


INVALID = {
    "no users": lambda d: d.pop("users"),
    "unknown top-level field": lambda d: d.__setitem__("colour", "red"),
    "unknown user field": lambda d: d["users"][0].__setitem__("colour", "red"),
    "negative demand": lambda d: d["users"][0].__setitem__("demand", [-1, 1]),
    "negative demand string": lambda d: d["users"][0].__setitem__("demand", ["-1/2", 1]),
    "not a number": lambda d: d["users"][0].__setitem__("demand", ["abc", 1]),
    "zero weight": lambda d: d["users"][0].__setitem__("weight", "0/3"),
    "capacity above 1e4": lambda d: d["servers"][0].__setitem__("capacity", [10001, 1]),
    "huge exponent": lambda d: d["servers"][0].__setitem__("capacity", ["1e999999", 1]),
    "NUL in a name": lambda d: d["users"][0].__setitem__("name", "a\x00b"),
    "blank name": lambda d: d["users"][0].__setitem__("name", "  "),
    "lone surrogate in a name": lambda d: d["resources"].__setitem__(0, "\udcff"),
    "server without capacity": lambda d: d["servers"][0].pop("capacity"),
    "duplicate resources": lambda d: d.__setitem__("resources", ["cpu", "cpu"]),
    "boolean tasks": lambda d: d["users"][0].__setitem__("tasks", True),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_instances_fail_schema_and_parser(validator, case):
    d = base()
    INVALID[case](d)
    assert not validator.is_valid(d)
    with pytest.raises(InstanceError):
        parse_environment_text(json.dumps(d))


# What the schema cannot express; an instance the schema accepts may be rejected by the parser only
# for one of these reasons (and always with one InstanceError line, never a traceback).
SEMANTIC = re.compile("|".join([
    r"expected \d+ numbers \(one per",            # vector length vs resources / external resources
    r"unknown server",                            # eligible / server_demand name a server
    r"zero on every resource",                    # the zero-demand-unbounded rule
    r"duplicate name",                            # names unique across servers / users / external
    r"is also a resource name",                   # external names differ from resource names
    r"external_demand: (missing|given)",          # external_demand present iff there are external resources
    r"is out of range|has too many digits",       # exact magnitude of a 'p/q' or decimal string
    r"unknown queue",                             # a user's queue is a declared queue
    r"parent queue .* is not declared",           # every prefix of a queue path is declared
    r"duplicate queue",                           # queue paths are unique
]))


def _from_schema(schema: dict, node: dict, st, vector_len, depth: int = 0):
    """A hypothesis strategy for the constructs ``instance.schema.json`` uses, read from the schema itself
    (hypothesis-jsonschema 0.23 does not run with the installed hypothesis).  Vectors get the instance's
    resource count most of the time, so that many drawn instances parse."""
    def rec(n):
        return _from_schema(schema, n, st, vector_len, depth + 1)

    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[1]
        target = schema["$defs"][name]
        if name == "vector":
            right = st.lists(rec(target["items"]), min_size=vector_len, max_size=vector_len)
            wrong = st.lists(rec(target["items"]), max_size=3)
            return st.integers(0, 15).flatmap(lambda i: right if i < 15 else wrong)
        return rec(target)
    if "const" in node:
        return st.just(node["const"])
    if "anyOf" in node:
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        return st.one_of([rec({**rest, **alt}) for alt in node["anyOf"]])
    if "allOf" in node:  # the first part generates, the others filter (checked by the validator)
        return rec(node["allOf"][0])
    types = node.get("type")
    if isinstance(types, list):
        return st.one_of([rec({**node, "type": t}) for t in types])
    if types == "null":
        return st.none()
    if types == "number":
        return st.one_of(st.integers(int(node.get("minimum", 0)), int(node.get("maximum", 10 ** 4))),
                         st.floats(node.get("minimum", 0), node.get("maximum", 1e4)),
                         st.sampled_from([0, 1e-4, 1e4, 0.1, 2.5]))
    if types == "string":
        if "pattern" in node and "\\ud800" in node["pattern"]:
            # the name pattern excludes control characters and surrogates; hypothesis 6.155 cannot turn
            # that negated class into a strategy (IncompatibleWithAlphabet), so draw text and filter
            pattern = re.compile(node["pattern"])
            strat = st.text(st.characters(codec="utf-8"), max_size=20).filter(lambda t: pattern.search(t))
        elif "pattern" in node:
            strat = st.from_regex(node["pattern"], fullmatch=True)
        else:
            strat = st.text(max_size=20)
        return strat.filter(lambda t: node.get("minLength", 0) <= len(t) <= node.get("maxLength", 10 ** 9))
    if types == "array":
        items = rec(node["items"])
        lo = node.get("minItems", 0)
        strat = st.lists(items, min_size=lo, max_size=lo + 3, unique=node.get("uniqueItems", False))
        return strat
    if types == "object":
        props = node.get("properties", {})
        required = set(node.get("required", ()))
        fixed = st.fixed_dictionaries({k: rec(v) for k, v in props.items() if k in required},
                                      optional={k: rec(v) for k, v in props.items() if k not in required})
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            return st.dictionaries(rec(node.get("propertyNames", {"type": "string"})), rec(extra), max_size=3)
        return fixed
    raise AssertionError(f"schema construct not handled: {node}")


def test_schema_agrees_with_parser():
    from hypothesis import HealthCheck, given, settings, strategies as st

    schema = instance_schema()
    validator = Draft202012Validator(schema)
    seen = {"parsed": 0, "semantic": 0, "schema-invalid": 0}

    by_count = {n: _from_schema(schema, schema, st, n) for n in (1, 2, 3)}  # built once, drawn from often

    @st.composite
    def instances(draw):
        n_res = draw(st.integers(1, 3))
        inst = draw(by_count[n_res])
        if draw(st.integers(0, 3)) < 3:
            # most of the time, mend what only the parser checks, so that many instances parse
            # (the result is still validated against the schema below)
            inst["resources"] = [f"r{i}" for i in range(n_res)]
            servers = [srv.get("name", f"s{s + 1}") for s, srv in enumerate(inst["servers"])]
            k = len(inst.get("external") or [])
            for e, ext in enumerate(inst.get("external") or []):
                ext["name"] = f"ext{e + 1}"
            for j, u in enumerate(inst["users"]):
                u["name"] = f"u{j + 1}"
                if k:
                    u["external_demand"] = (u.get("external_demand") or []) + [1] * k
                    del u["external_demand"][k:]
                else:
                    u.pop("external_demand", None)
                if u.get("eligible"):
                    u["eligible"] = [e for e in u["eligible"] if e in servers]
                if u.get("server_demand"):
                    u["server_demand"] = {n: v for n, v in u["server_demand"].items() if n in servers}
                if u.get("tasks") is None:
                    u["tasks"] = 7
            # a queue tree the parser accepts: distinct top-level queues, users in them or at the root
            queues = inst.get("queues") or []
            for q, queue in enumerate(queues):
                queue["name"] = f"q{q + 1}"
                if queue.get("guarantee") is not None:
                    queue["guarantee"] = (queue["guarantee"] + [1] * n_res)[:n_res]
            for j, u in enumerate(inst["users"]):
                if u.get("queue") is not None:
                    u["queue"] = f"q{j % len(queues) + 1}" if queues else None
        return inst

    @settings(max_examples=100, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(instances())
    def check(inst):
        if not validator.is_valid(inst):  # e.g. the weight's 'not zero' part, or duplicate resources
            seen["schema-invalid"] += 1
            return
        try:
            parse_environment_text(json.dumps(inst), "inst.json")
            seen["parsed"] += 1
        except InstanceError as exc:
            msg = str(exc)
            _one_line(msg)
            assert SEMANTIC.search(msg), msg
            seen["semantic"] += 1

    check()
    # the generator must reach both outcomes, and mostly schema-valid instances
    assert seen["parsed"] >= 20 and seen["semantic"] >= 20, seen
    assert seen["schema-invalid"] < seen["parsed"] + seen["semantic"], seen


def test_null_external_demand_reads_as_missing():
    # the schema allows null for an optional field; with external resources present the parser must say
    # what is wrong in the same words as for an absent field (found by test_schema_agrees_with_parser)
    d = {"resources": ["r0"], "servers": [{"capacity": [1]}], "external": [{"name": "e1", "capacity": 1}],
         "users": [{"demand": [1], "external_demand": None}]}
    with pytest.raises(InstanceError, match=r"users\[0\]\.external_demand: missing \(the instance has 1 external"):
        parse_environment_text(json.dumps(d), "inst.json")
