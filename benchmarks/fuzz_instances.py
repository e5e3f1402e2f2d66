"""Fuzz the instance format through the commands that read instances (not a test; run on demand).

Every case is an instance drawn from the structure of ``mechverify/instance.schema.json`` (names,
numbers and vectors as the schema spells them, sizes kept small), then, most of the time, damaged by
one to three MUTATIONS:

* ``type-swap``     a value becomes a number / string / list / object / null / boolean;
* ``delete``        a key (required ones preferred) or a list entry is removed;
* ``dup-key``       an object repeats a key (raw JSON text);
* ``dup-entry``     a list entry is repeated;
* ``number``        a number becomes an extreme, tiny or odd one (1e308, 1e-308, 10**400, "1e999999",
                    "3/0", -0.0, NaN / Infinity literals, 1e400 literals, 5000-digit literals, ...);
* ``long``          users / servers / resources or one vector grow long (bounded: a case stays cheap);
* ``deep``          a value is wrapped in deep nesting (10 to 100000 levels);
* ``unicode``       a name gets control characters, RTL marks, emoji, lone surrogates, ...;
* ``unknown-key``   an object gets a key the format does not know;
* ``text``          the file itself: BOM, truncation, empty, invalid UTF-8, UTF-16, trailing garbage,
                    byte flips;
* ``digits``        every number becomes a legal one with ~30-digit numerator and denominator (exact
                    arithmetic's worst case);
* ``corner``        legal corners of the model: zero capacities, users eligible nowhere or bounded to 0
                    tasks, zero external capacity, identical users, 1e4 / 1e-4 magnitudes, extreme weights,
                    all-zero demands.

Each case runs through the real command line, in-process (``verifier.cli.main``):
``allocate MECH FILE``, ``check MECH FILE --budget 0.2 --properties ...`` and ``replay`` of a stored
counterexample whose ``environment`` is the case's instance (id and file name recomputed, so the
environment is really parsed) or whose text is corrupted; every third case also ``allocate MECH -``
(the bytes on stdin), every third ``allocate MECH --batch FILE.jsonl`` (the instance as one line, then a
good line).  The mechanism rotates over cheap ones.

A case PASSES when no exception escapes ``main`` (a traceback), every exit code means something
(allocate 0/2/3; --batch 0/1, every line a result or one error line naming the line;
check 0/1/2/3/4; replay 0/1), an exit 2 prints EXACTLY one line on stderr starting with
``error:`` and naming a field or flag (``error: <where>: ...``), an exit 3 one ``solver error:`` line,
an exit 4 (check decided nothing, e.g. every property not applicable) one ``nothing decided:`` line,
replay prints one line per file and never hides a crash (a ``TypeError`` etc. in its message), and
each command ends within the time limit in bounded memory (``RLIMIT_AS`` in the worker processes).

    python benchmarks/fuzz_instances.py --cases 10000 --seed 0 --jobs 2
    python benchmarks/fuzz_instances.py --case 1234 --seed 0      # re-run one case, print its outcome

Measured (2-core box, 2026-11-23, ``--cases 10000 --seed 0 --jobs 2``): 0 failures in 140 s wall
(205 s in commands), peak RSS 190 MB; ``--seed 1``: 0 failures in 137 s.  allocate exit 0: 3347, 2: 6651, 3: 2 (PS-DSF not converging);
check 0: 3146, 1: 201, 2: 6651, 3: 2; replay 0: 880, 1: 9120; stdin and --batch in turns.  29 cases are
counted as "known": replay's FAIL line names a TypeError from ``verifier/store.py`` ``witness_from`` when a
damaged file's ``users`` is not a list.  Found and fixed on the way: names with a lone surrogate crashed
printing (UnicodeEncodeError), PS-DSF's non-convergence escaped as a traceback (and ended --batch), a
damaged stored deviation / mechanism / property crashed replay's re-check, a 1000-character duplicate
key made a 1067-character error line.

Cases are deterministic for (seed, index).  Failures are saved as reproducers under ``--out``
(default ``fuzz-failures/``): the instance file, the counterexample file and the commands.
Exit status: 0 when every case passed, 1 otherwise.  The test suite runs a few hundred cases
(``tests/verifier/cli/test_fuzz.py``).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

MECHANISMS = ("drf", "c-drfh", "tsf", "tsf-er", "cru", "psdsf-rdm")
PROPERTY_SETS = ("ef,si,po", "ef,si,po", "bf,srf", "single-server-drf,ef")
#: seconds one command may take in a case (a hang otherwise)
TIME_LIMIT = 20.0
MUTATIONS = ("type-swap", "delete", "dup-key", "dup-entry", "number", "long", "deep", "unicode", "unknown-key",
             "text", "digits", "corner")


# ---------------------------------------------------------------------- JSON text with hostile tokens
class Raw:
    """A JSON token written verbatim (``1e400``, ``NaN``, a 5000-digit integer, ``-0``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text[:40]!r})"


class Pairs(list):
    """A JSON object as a list of (key, value): it may repeat a key."""


def dumps(v: Any) -> str:
    """JSON text of ``v``; :class:`Raw` and :class:`Pairs` as they are, NaN/Infinity as literals."""
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {dumps(x)}" for k, x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {dumps(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(dumps(x) for x in v) + "]"
    return json.dumps(v)


# ---------------------------------------------------------------------- valid instances from the schema
ODD_NAMES = ["\u202eevil", "cpu\u200d", "\U0001F680", "\u00e9t\u00e9", "\u0645\u0631\u0643\u0632", "a b", "\u00a0x",
             "\ufeffbom", "x\u0301", "\U0001F468\u200d\U0001F469\u200d\U0001F467", "\u4e2d\u6587", "'\"quote\\"]


def _name(rng: random.Random, prefix: str, i: int) -> str:
    if rng.random() < 0.1:
        return rng.choice(ODD_NAMES) + str(i)
    return f"{prefix}{i + 1}"


def _number(rng: random.Random, lo_zero: float = 0.15) -> Any:
    """A legal number in one of the spellings the schema allows."""
    if rng.random() < lo_zero:
        return rng.choice([0, 0.0, "0", "0/5"])
    k = rng.randrange(6)
    if k == 0:
        return rng.randint(1, 20)
    if k == 1:
        return round(rng.uniform(0.0001, 50), rng.randint(1, 4)) or 1
    if k == 2:
        return f"{rng.randint(1, 40)}/{rng.randint(1, 12)}"
    if k == 3:
        return rng.choice(["0.25", "1.5", "1e-3", "2E+1", " 3 ", "+7", ".5", "5.", " 1 / 3 "])
    if k == 4:
        return rng.choice([1e-4, 1e4, "1/10000", "10000", 9999.9999])
    return rng.randint(1, 5)


def _positive(rng: random.Random) -> Any:
    v = _number(rng, lo_zero=0)
    return v


def fit_setting(inst: dict, mech: str) -> dict:
    """Drop what ``mech``'s setting does not take (more cases then reach the mechanism itself)."""
    from mechanisms import get

    st = get(mech).setting
    if st.single_server:
        inst["servers"] = inst["servers"][:1]
    keep = [srv.get("name", f"s{s + 1}") for s, srv in enumerate(inst["servers"])]
    if not st.external:
        inst.pop("external", None)
    for u in inst["users"]:
        if not st.external:
            u.pop("external_demand", None)
        if not st.placement or st.single_server:
            u.pop("eligible", None)
        if not st.bounds:
            u.pop("tasks", None)
        if not st.weights:
            u.pop("weight", None)
        if not st.server_demand:
            u.pop("server_demand", None)
        elif isinstance(u.get("server_demand"), dict):
            u["server_demand"] = {k: v for k, v in u["server_demand"].items() if k in keep}
    return inst


def schema_instance(rng: random.Random, schema: dict) -> dict:
    """A legal-looking instance following the schema's properties: every optional field of the
    top level, servers, external resources and users (read from the schema, so a new field is drawn
    too) appears at random; sizes: 1-3 resources, 1-3 servers, 0-2 external, 1-4 users."""
    defs = schema["$defs"]
    R, S, K, J = rng.randint(1, 3), rng.randint(1, 3), rng.choice([0, 0, 0, 1, 2]), rng.randint(1, 4)
    res = [_name(rng, "r", r) for r in range(R)]
    if len(set(res)) < R:
        res = [f"r{r + 1}" for r in range(R)]
    inst: dict[str, Any] = {}
    for key in schema["properties"]:
        if key in ("name", "description", "source") and rng.random() < 0.2:
            inst[key] = rng.choice(["fuzz", "", "\u202e\U0001F680", "x" * 300])
    inst["resources"] = res
    servers = []
    for s in range(S):
        srv: dict[str, Any] = {}
        if "name" in defs["server"]["properties"] and rng.random() < 0.8:
            srv["name"] = f"s{s + 1}"
        srv["capacity"] = [_number(rng, 0.1) for _ in range(R)]
        servers.append(srv)
    inst["servers"] = servers
    if K:
        inst["external"] = [dict({"capacity": _positive(rng)}, **({"name": f"e{k + 1}"} if rng.random() < 0.7 else {}))
                            for k in range(K)]
    elif rng.random() < 0.1:
        inst["external"] = rng.choice([[], None])
    users = []
    snames = [srv.get("name", f"s{s + 1}") for s, srv in enumerate(servers)]
    for j in range(J):
        u: dict[str, Any] = {}
        for key in defs["user"]["properties"]:
            if key == "name" and rng.random() < 0.8:
                u["name"] = _name(rng, "u", j)
            elif key == "demand":
                u["demand"] = [_number(rng, 0.2) for _ in range(R)]
                if all(v in (0, 0.0, "0", "0/5") for v in u["demand"]):
                    u["demand"][0] = 1
            elif key == "external_demand":
                if K:
                    u[key] = [_positive(rng) for _ in range(K)]
                elif rng.random() < 0.1:
                    u[key] = rng.choice([[], None])
            elif key == "weight" and rng.random() < 0.3:
                u[key] = _positive(rng)
            elif key == "eligible" and rng.random() < 0.2:
                u[key] = rng.sample(snames, rng.randint(0, len(snames))) if rng.random() < 0.9 else None
            elif key == "tasks" and rng.random() < 0.3:
                u[key] = rng.choice([None, _number(rng, 0.1)])
            elif key == "server_demand" and rng.random() < 0.15:
                u[key] = {n: [_number(rng, 0.2) for _ in range(R)] for n in rng.sample(snames, 1)}
        users.append(u)
    if len({u.get("name", f"u{j + 1}") for j, u in enumerate(users)}) < J:
        for j, u in enumerate(users):
            u["name"] = f"u{j + 1}"
    inst["users"] = users
    return inst


# ---------------------------------------------------------------------- mutations
EXTREME = [1e308, 1e-308, -0.0, 5e-324, 10 ** 400, -(10 ** 400), "1e999999", "1e-999999", "3/0", "0/0", "-1/2",
           "1e60", "1e61", "1e-61", "10001", "1/10001", "0.00009999", Raw("NaN"), Raw("Infinity"), Raw("-Infinity"),
           Raw("1e400"), Raw("-1e400"), Raw("1e-400"), Raw("-0"), Raw("1" + "0" * 5000), Raw("1" + "0" * 4000),
           Raw("0." + "0" * 3000 + "1"), Raw("1E+0000000000000000000000001"), "NaN", "inf", "-inf", "Infinity",
           "nan", "1_000", "0x10", "\u0661\u0662", "\u00bd", "1/\u0662", " ", "", "1/2/3", "--1", "+-1", "1e",
           "9" * 99, "9" * 101, "1/" + "9" * 40, "1." + "0" * 98, "1e+60", "1 e 3", "\x001", "1\u2028", -1, -1e-4,
           2 ** 63, 2 ** 64 + 1, 1e16, 123456789.123456789, 1.7976931348623157e308, True, False,
           "1e-4", "1e4", "0.0001", 10000.000000000002, 9.999999999999999e-05]

ODD_STRINGS = ["\x00", "a\x00b", "\x1b[31mred", "\u202eu1", "\u2028", "\u2029", "\x7f", "\x85", "\ud800",
               "\udfff", "\ud83d", "\U0001F600" * 3, "\u200b", " ", "\t", "\u00a0", "\u3000", "", "x" * 201,
               "y" * 100000, "\ufeff", "\u0000" * 3, "u1", "s1", "cpu", "\\u0000", "\U0010FFFF", "\ufffe",
               "e\u0301" * 50, "\u0645" * 200, "名前", "null", "[]"]


def _nodes(v: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    """Every (path, node) of the tree (the root included)."""
    out = [(path, v)]
    stack = [(path, v)]
    while stack:
        p, x = stack.pop()
        if isinstance(x, dict):
            items = list(x.items())
        elif isinstance(x, list) and not isinstance(x, Pairs):
            items = list(enumerate(x))
        else:
            continue
        for k, c in items:
            out.append((p + (k,), c))
            stack.append((p + (k,), c))
    return out


def _get(root: Any, path: tuple) -> Any:
    for k in path:
        root = root[k]
    return root


def _set(root: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


def _other_type(rng: random.Random, v: Any) -> Any:
    choices = [lambda: rng.choice([0, 1, 2.5, -3, 10 ** 6]), lambda: rng.choice(["", "x", "1/2", "cpu", "s1"]),
               lambda: rng.choice([[], [1], ["a"], [[1]], [None]]),
               lambda: rng.choice([{}, {"name": "x"}, {"capacity": [1]}, {"demand": [1]}]),
               lambda: None, lambda: rng.choice([True, False])]
    kinds = [isinstance(v, (int, float)) and not isinstance(v, bool), isinstance(v, str), isinstance(v, list),
             isinstance(v, dict), v is None, isinstance(v, bool)]
    options = [c for c, k in zip(choices, kinds) if not k]
    return rng.choice(options)()


def _list(v: Any) -> list:
    return v if type(v) is list else []


def _long(rng: random.Random, inst: Any) -> Any:
    """Many users / servers / resources, or a long vector (bounded: one case stays well under a second
    for the cheap mechanisms; the parser's own cost is what is exercised by the long vectors)."""
    if not isinstance(inst, dict):
        return inst
    k = rng.randrange(5)
    if k == 0:  # many users, default names
        n = rng.choice([15, 30, 45])
        R = len(inst["resources"]) if isinstance(inst.get("resources"), list) else 1
        inst["users"] = [{"demand": [rng.randint(0, 3) or 1 for _ in range(R)]} for _ in range(n)]
    elif k == 1:  # many servers
        n = rng.choice([20, 60])
        R = len(inst["resources"]) if isinstance(inst.get("resources"), list) else 1
        inst["servers"] = [{"capacity": [rng.randint(1, 9) for _ in range(R)]} for _ in range(n)]
        for u in _list(inst.get("users")):
            if isinstance(u, dict):
                u.pop("eligible", None)
                u.pop("server_demand", None)
    elif k == 2:  # many resources
        n = rng.choice([20, 50])
        inst["resources"] = [f"r{r}" for r in range(n)]
        for s in _list(inst.get("servers")):
            if isinstance(s, dict):
                s["capacity"] = [rng.randint(0, 9) for _ in range(n)]
        for u in _list(inst.get("users")):
            if isinstance(u, dict):
                u["demand"] = [rng.randint(0, 2) for _ in range(n - 1)] + [1]
                u.pop("server_demand", None)
    elif k == 3:  # one huge vector (rejected by length; cheap to parse)
        target = rng.choice(["resources", "servers", "users"])
        inst[target] = list(range(rng.choice([10 ** 4, 10 ** 5])))
    else:  # a long name list with duplicates far apart
        inst["resources"] = [f"r{r}" for r in range(5000)] + ["r0"]
    return inst


def _digits(rng: random.Random) -> str:
    """A legal number with the most digits the format allows (numerator and denominator near 1e30)."""
    q = rng.randrange(10 ** 28, 10 ** 30)
    return f"{rng.randrange(max(1, q // 10 ** rng.randint(1, 4)), q)}/{q}"


def _corner(rng: random.Random, inst: Any) -> Any:
    """A legal instance at a corner of the model: zero capacities, users that can run nothing, task
    bounds 0, zero external capacity, identical users, extreme but legal magnitudes."""
    if not isinstance(inst, dict):
        return inst
    servers = [s for s in _list(inst.get("servers")) if isinstance(s, dict) and type(s.get("capacity")) is list]
    users = [u for u in _list(inst.get("users")) if isinstance(u, dict)]
    k = rng.randrange(8)
    if k == 0 and servers:  # a resource nobody has
        r = rng.randrange(max(1, min(len(s["capacity"]) for s in servers)))
        for s in servers:
            if r < len(s["capacity"]):
                s["capacity"][r] = 0
    elif k == 1 and users:  # a user eligible nowhere, or bounded to 0 tasks
        u = rng.choice(users)
        if rng.random() < 0.5:
            u["eligible"] = []
        else:
            u["tasks"] = 0
    elif k == 2:  # every capacity zero
        for s in servers:
            s["capacity"] = [0] * len(s["capacity"])
    elif k == 3:
        for e in _list(inst.get("external")):
            if isinstance(e, dict):
                e["capacity"] = 0
    elif k == 4 and users:  # identical users
        inst["users"] = [json.loads(json.dumps({k: v for k, v in users[0].items() if k != "name"}, default=str))
                         for _ in range(rng.randint(2, 6))]
    elif k == 5:  # huge task counts: capacity 1e4, demand 1e-4
        for s in servers:
            s["capacity"] = [10000] * len(s["capacity"])
        for u in users:
            if type(u.get("demand")) is list:
                u["demand"] = ["1/10000" if v not in (0, "0") else 0 for v in u["demand"]]
    elif k == 6:  # extreme weights
        for u in users:
            u["weight"] = rng.choice(["1/10000", 10000, 1, "9999/10000"])
    elif users:  # demand zero everywhere, with a bound (legal) or without (rejected)
        u = rng.choice(users)
        if type(u.get("demand")) is list:
            u["demand"] = [0] * len(u["demand"])
            u.pop("server_demand", None)
            if rng.random() < 0.7:
                u["tasks"] = rng.choice([0, 1, "1/3", 10000])
    return inst


def mutate(rng: random.Random, inst: Any, kind: str) -> Any:
    """Apply one mutation of ``kind`` to the decoded tree (``text`` is applied to the text instead)."""
    nodes = _nodes(inst)
    if kind == "type-swap":
        path, v = rng.choice(nodes[1:] or nodes)
        return _set(inst, path, _other_type(rng, v))
    if kind == "delete":
        objs = [(p, v) for p, v in nodes if isinstance(v, (dict, list)) and v and not isinstance(v, Pairs)]
        if not objs:
            return inst
        path, v = rng.choice(objs)
        if isinstance(v, dict):
            required = [k for k in ("resources", "servers", "users", "capacity", "demand", "external_demand") if k in v]
            key = rng.choice(required) if required and rng.random() < 0.7 else rng.choice(list(v))
            del v[key]
        else:
            del v[rng.randrange(len(v))]
        return inst
    if kind == "dup-key":
        objs = [(p, v) for p, v in nodes if isinstance(v, dict) and v]
        if not objs:
            return inst
        path, v = rng.choice(objs)
        pairs = Pairs(v.items())
        k, x = rng.choice(pairs)
        pairs.insert(rng.randint(0, len(pairs)), (k, rng.choice([x, _other_type(rng, x)])))
        return _set(inst, path, pairs)
    if kind == "dup-entry":
        lists = [(p, v) for p, v in nodes if isinstance(v, list) and v and not isinstance(v, Pairs)]
        if not lists:
            return inst
        path, v = rng.choice(lists)
        v.insert(rng.randint(0, len(v)), json.loads(json.dumps(rng.choice(v), default=str)) if rng.random() < 0.5
                 else rng.choice(v))
        return inst
    if kind == "number":
        leaves = [(p, v) for p, v in nodes if isinstance(v, (int, float, str)) and p]
        path, _ = rng.choice(leaves) if leaves else rng.choice(nodes)
        return _set(inst, path, rng.choice(EXTREME))
    if kind == "long":
        return _long(rng, inst)
    if kind == "digits":  # every number of the instance (these stay legal)
        for path, v in nodes:
            if path and isinstance(v, (int, float, str)) and not isinstance(v, bool) and path[-1] != "name" \
                    and isinstance(path[-1], int) or (path and path[-1] in ("weight", "tasks", "capacity")
                                                      and isinstance(v, (int, float))):
                if isinstance(v, str) and not re.fullmatch(r"[\d./ +eE-]+", v):
                    continue
                inst = _set(inst, path, _digits(rng) if v not in (0, "0", 0.0) else v)
        return inst
    if kind == "corner":
        return _corner(rng, inst)
    if kind == "deep":
        path, v = rng.choice(nodes)
        depth = rng.choice([10, 31, 32, 33, 100, 1000, 100000])
        if depth <= 100 and rng.random() < 0.5:  # as data (the text writer recurses), else as raw text
            deep: Any = v
            for _ in range(depth):
                deep = [deep]
            return _set(inst, path, deep)
        return _set(inst, path, Raw("[" * depth + dumps(v) + "]" * depth) if rng.random() < 0.5
                    else Raw('{"a": ' * depth + dumps(v) + "}" * depth))
    if kind == "unicode":
        strings = [(p, v) for p, v in nodes if isinstance(v, str) and p]
        odd = rng.choice(ODD_STRINGS)
        if strings and rng.random() < 0.8:
            path, v = rng.choice(strings)
            new = rng.choice([odd, v + odd, odd + v, v[:1] + odd + v[1:]])
            return _set(inst, path, new)
        objs = [(p, v) for p, v in nodes if isinstance(v, dict)]
        if objs:  # an odd key
            _, v = rng.choice(objs)
            v[odd] = 1
        return inst
    if kind == "unknown-key":
        objs = [(p, v) for p, v in nodes if isinstance(v, dict)]
        if objs:
            _, v = rng.choice(objs)
            v[rng.choice(["colour", "Demand", "users ", "__proto__", "capacity", "name", "tasks", "x" * 1000])] = \
                rng.choice([1, "x", None, [], {}])
        return inst
    raise ValueError(kind)


def mutate_text(rng: random.Random, data: bytes) -> bytes:
    """Damage the file itself."""
    k = rng.randrange(10)
    if k == 0:
        return b"\xef\xbb\xbf" + data
    if k == 1:
        return data[: rng.randrange(len(data) + 1)]
    if k == 2:
        return rng.choice([b"", b" ", b"\n", b"null", b"[]", b"{}", b"0", b'"x"', b"\x00", b"{" * 10])
    if k == 3:
        i = rng.randrange(len(data) + 1)
        return data[:i] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xf4\x90\x80\x80"]) + data[i:]
    if k == 4:
        return data.decode("utf-8", "replace").encode(rng.choice(["utf-16", "utf-32", "latin-1"]), "replace")
    if k == 5:
        return data + rng.choice([b" garbage", b"{}", b"\n{}\n", b"\x00", b" // comment"])
    if k == 6:
        b = bytearray(data)
        for _ in range(rng.randint(1, 5)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if k == 7:
        return b"// comment\n" + data
    if k == 8:
        return data.replace(b",", b",,", 1) if b"," in data else data + b","
    return data.replace(b'"', b"'")


# ---------------------------------------------------------------------- a case
_SCHEMA: Optional[dict] = None


def _schema() -> dict:
    global _SCHEMA
    if _SCHEMA is None:
        from mechverify.instances import instance_schema

        _SCHEMA = instance_schema()
    return _SCHEMA


def make_case(seed: int, i: int) -> dict[str, Any]:
    """Case ``i`` of the run ``seed``: instance bytes, mutation kinds, mechanism, properties, the
    counterexample file to replay (bytes and file name)."""
    rng = random.Random(f"fuzz:{seed}:{i}")
    mech = MECHANISMS[i % len(MECHANISMS)]
    inst: Any = schema_instance(rng, _schema())
    if rng.random() < 0.75:
        inst = fit_setting(inst, mech)
    n = rng.choice([0, 1, 1, 1, 2, 3]) if i % 10 else 0  # every tenth case stays as drawn
    kinds = [rng.choice(MUTATIONS) for _ in range(n)]
    for kind in kinds:
        if kind != "text":
            inst = mutate(rng, inst, kind)
    data = dumps(inst).encode("utf-8", "surrogatepass") if rng.random() < 0.8 else \
        json.dumps(inst, indent=rng.choice([None, 1]), default=lambda o: o.text if isinstance(o, Raw) else list(o)
                   ).encode("utf-8", "surrogatepass")
    if not all(type(x) in (dict, list, str, int, float, bool, type(None)) for _, x in _nodes(inst)):
        data = dumps(inst).encode("utf-8", "surrogatepass")
    for kind in kinds:
        if kind == "text":
            data = mutate_text(rng, data)
    props = PROPERTY_SETS[(i // len(MECHANISMS)) % len(PROPERTY_SETS)]
    cx_name, cx_data = replay_file(rng, mech, data)
    return {"seed": seed, "index": i, "kinds": kinds or ["none"], "mechanism": mech, "properties": props,
            "instance": data, "cx_name": cx_name, "cx": cx_data, "exact": rng.random() < 0.2}


_STORED: dict[str, list[dict]] = {}


def _stored(mech: str) -> list[dict]:
    if mech not in _STORED:
        d = os.path.join(ROOT, "counterexamples", mech)
        files = sorted(os.listdir(d), key=lambda f: os.path.getsize(os.path.join(d, f)))[:3]
        _STORED[mech] = []
        for f in files:
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                _STORED[mech].append(json.load(fh))
    return _STORED[mech]


def replay_file(rng: random.Random, mech: str, instance: bytes) -> tuple[str, bytes]:
    """A stored counterexample of ``mech`` whose environment is the case's instance.  When the instance
    decodes as plain JSON the id and the file name are recomputed (so replay really parses the
    environment); otherwise the instance text is spliced in raw (a corrupted file)."""
    from verifier.store import identity_hash

    base = json.loads(json.dumps(rng.choice(_stored(mech))))
    try:
        env = json.loads(instance.decode("utf-8"))
    except (ValueError, RecursionError):
        marker = "\"environment\": \"@@ENV@@\""
        base["environment"] = "@@ENV@@"
        text = json.dumps(base).replace("\"environment\": \"@@ENV@@\"", "\"environment\": ", 1).encode()
        cut = text.index(b"\"environment\": ") + len(b"\"environment\": ")
        return f"{base['id']}.json", text[:cut] + instance + text[cut:]
    if rng.random() < 0.1:  # the stored file as it is (replay confirms it: exit 0)
        return f"{base['id']}.json", json.dumps(base).encode()
    base["environment"] = env
    if rng.random() < 0.2:  # the file itself damaged too (a field dropped or swapped, a misreport mutated)
        key = rng.choice(["deviation", "deviation", "users", "property", "mechanism", "gap", "allocations", "schema"])
        if key == "deviation" and base.get("deviation") and rng.random() < 0.7:
            base["deviation"] = mutate(rng, base["deviation"], rng.choice(["number", "type-swap", "delete",
                                                                           "unknown-key"]))
        elif rng.random() < 0.5:
            base.pop(key, None)
        else:
            base[key] = _other_type(rng, base.get(key))
    try:
        base["id"] = f"{base['property']}-{identity_hash(base)}"
    except (KeyError, TypeError, ValueError):
        pass
    name = str(base.get("id", "cx"))
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,80}", name):
        name = "cx"
    return f"{name}.json", dumps(base).encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------------- running a case
class Hang(BaseException):
    """A command ran past the time limit (raised by SIGALRM inside the command)."""


def _on_alarm(signum, frame):
    raise Hang()


_REPLAY_LINE = re.compile(r"^(ok   |FAIL )\S.*|^\d+ passed, \d+ failed$")
#: exception types a replay message may name for a damaged file; any other is a crash replay hid
_REPLAY_EXPECTED = ("InstanceError", "SettingError", "KeyError", "ValueError", "LPError", "MechanismOutputError",
                    "PSDSFError", "AlgorithmStall")


def run_command(argv: list[str], time_limit: float, stdin: bytes = b"") -> dict[str, Any]:
    """``main(argv)`` in-process: exit code, stdout, stderr, seconds, and the traceback if one escaped.
    ``stdin`` is read as a real process reads it in a UTF-8 locale (undecodable bytes: surrogateescape)."""
    import traceback

    from verifier.cli import main

    # like a real process: stdout encodes strictly as UTF-8 (a lone surrogate in a printed name is a
    # crash there, a StringIO would hide it); stderr with backslashreplace
    out_b, err_b = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_b, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(err_b, encoding="utf-8", errors="backslashreplace", write_through=True)
    real_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="surrogateescape")
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit)
    t0 = time.perf_counter()
    code: Any = None
    tb = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse
                code = exc.code
    except Hang:
        tb = "hang:\n" + traceback.format_exc()
    except BaseException:  # noqa: BLE001 - the point: nothing may escape main
        tb = traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        sys.stdin = real_stdin
    out.flush()
    err.flush()
    return {"argv": argv, "code": code, "stdout": out_b.getvalue().decode("utf-8", "replace"),
            "stderr": err_b.getvalue().decode("utf-8", "replace"),
            "seconds": time.perf_counter() - t0, "traceback": tb}


def judge(cmd: str, r: dict[str, Any]) -> Optional[str]:
    """Why the command's outcome is a failure, or None."""
    if r["traceback"]:
        return ("hang" if r["traceback"].startswith("hang") else "traceback") + ": " + \
            r["traceback"].strip().splitlines()[-1][:300]
    code, err = r["code"], r["stderr"]
    allowed = {"allocate": {0, 2, 3}, "stdin": {0, 2, 3}, "batch": {0, 1}, "check": {0, 1, 2, 3, 4},
               "replay": {0, 1}}[cmd]
    if code not in allowed:
        return f"exit code {code!r} (allowed {sorted(allowed)})"
    if "Traceback" in err or "Traceback" in r["stdout"]:
        return "traceback text in the output"
    if code == 2:
        lines = err.split("\n")
        if err.count("\n") != 1 or not err.endswith("\n") or not lines[0].startswith("error: "):
            return f"exit 2 without exactly one 'error:' line: {err[:300]!r}"
        if not re.match(r"error: [^\s:][^:]*: ", lines[0]):
            return f"exit 2 line names no field or flag: {lines[0][:300]!r}"
        if len(lines[0]) > 1000:
            return f"exit 2 line of {len(lines[0])} characters"
        if r["stdout"]:
            return f"exit 2 after printing on stdout: {r['stdout'][:300]!r}"
    elif code == 3:
        if err.count("\n") != 1 or not err.startswith("solver error: "):
            return f"exit 3 without exactly one 'solver error:' line: {err[:300]!r}"
    elif code == 4:
        if err.count("\n") != 1 or not err.startswith("nothing decided: "):
            return f"exit 4 without exactly one 'nothing decided:' line: {err[:300]!r}"
    elif err.strip():
        return f"exit {code} with stderr: {err[:300]!r}"
    if cmd == "batch":
        for n, line in enumerate(r["stdout"].split("\n")[:-1], 1):
            try:
                res = json.loads(line)
            except ValueError:
                return f"batch printed a line that is not JSON: {line[:300]!r}"
            if not isinstance(res, dict) or not ("error" in res or "tasks" in res):
                return f"batch printed neither a result nor an error: {line[:300]!r}"
            if "error" in res and not (isinstance(res["error"], str) and "\n" not in res["error"]
                                       and re.match(r"line \d+: \S", res["error"])):
                return f"batch error is not one line naming the line: {line[:300]!r}"
    if cmd == "replay":
        for line in r["stdout"].splitlines():
            if not _REPLAY_LINE.match(line):
                return f"replay printed a line that is not one result: {line[:300]!r}"
            m = re.search(r"error while re-checking: (\w+):", line)
            if m and m.group(1) not in _REPLAY_EXPECTED:
                return f"replay hid a crash: {line[line.index('error while'):][:300]!r}"
    return None


def crash_site(cx_path: str) -> str:
    """``file:line`` of the innermost frame of the crash replay reported (re-run in-process)."""
    import traceback

    from mechanisms import get
    from verifier.properties import get_property
    from verifier.store import load, witness_from

    try:
        d = load(cx_path)
        get(d["mechanism"])
        get_property(d["property"])
        witness_from(d)
    except Exception as exc:  # noqa: BLE001
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return f"{os.path.relpath(frame.filename, ROOT)}:{frame.lineno}"
    return "?"


#: crashes replay hides (it reports them as FAIL lines) at places this harness's owner may not change;
#: counted apart and printed, not failures.  ``verifier/store.py`` ``witness_from`` indexes the file's
#: ``users`` field without checking it is a list of user names.
KNOWN_ELSEWHERE = ("src/verifier/store.py",)


GOOD_LINE = b'{"resources": ["cpu", "mem"], "servers": [{"capacity": [4, 4]}], "users": [{"demand": [1, 2]}, ' \
    b'{"demand": [2, 1]}]}'


def run_case(case: dict[str, Any], workdir: str, time_limit: float = TIME_LIMIT) -> dict[str, Any]:
    """The three commands on one case; ``failures`` lists what went wrong (empty: the case passed)."""
    inst = os.path.join(workdir, "instance.json")
    with open(inst, "wb") as fh:
        fh.write(case["instance"])
    cxdir = os.path.join(workdir, "cx")
    os.makedirs(cxdir, exist_ok=True)
    for f in os.listdir(cxdir):
        os.unlink(os.path.join(cxdir, f))
    cx = os.path.join(cxdir, case["cx_name"])
    with open(cx, "wb") as fh:
        fh.write(case["cx"])
    mech = case["mechanism"]
    batch = os.path.join(workdir, "batch.jsonl")
    with open(batch, "wb") as fh:  # the instance as one line (its line breaks made spaces), then a good one
        fh.write(case["instance"].replace(b"\r", b" ").replace(b"\n", b" ") + b"\n" + GOOD_LINE + b"\n")
    commands = {
        "allocate": ["allocate", mech, inst] + (["--exact"] if case["exact"] else []),
        "stdin": ["allocate", mech, "-", "--format", "json"] + (["--exact"] if not case["exact"] else []),
        "batch": ["allocate", mech, "--batch", batch] + (["--exact"] if case["exact"] else []),
        "check": ["check", mech, inst, "--budget", "0.2", "--properties", case["properties"]],
        "replay": ["replay", cx],
    }
    out: dict[str, Any] = {"index": case["index"], "kinds": case["kinds"], "mechanism": mech, "codes": {},
                           "failures": [], "seconds": 0.0}
    which = case["index"] % 3  # stdin and --batch take turns with nothing (cost)
    for cmd, argv in commands.items():
        if (cmd == "stdin" and which != 1) or (cmd == "batch" and which != 2):
            continue
        r = run_command(argv, time_limit, case["instance"] if cmd == "stdin" else b"")
        out["codes"][cmd] = r["code"]
        out["seconds"] += r["seconds"]
        why = judge(cmd, r)
        if why and why.startswith("replay hid a crash"):
            site = crash_site(cx)
            if site.startswith(KNOWN_ELSEWHERE):
                out.setdefault("known", []).append(f"{site}: {why}")
                why = None
        if why:
            out["failures"].append({"command": cmd, "argv": argv, "why": why, "stderr": r["stderr"][-3000:],
                                    "stdout": r["stdout"][-2000:], "traceback": r["traceback"]})
        if cmd == "allocate" and r["code"] == 2:
            out["reject"] = r["stderr"].split(":", 2)[1].strip() if ":" in r["stderr"] else ""
    return out


def save_reproducer(case: dict[str, Any], result: dict[str, Any], root: str) -> str:
    d = os.path.join(root, f"seed{case['seed']}-case{case['index']}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "instance.json"), "wb") as fh:
        fh.write(case["instance"])
    os.makedirs(os.path.join(d, "cx"), exist_ok=True)
    with open(os.path.join(d, "cx", case["cx_name"]), "wb") as fh:
        fh.write(case["cx"])
    with open(os.path.join(d, "failure.json"), "w", encoding="utf-8") as fh:
        json.dump({"case": {k: v for k, v in case.items() if k not in ("instance", "cx")}, "result": result}, fh,
                  indent=1, default=str)
    return d


# ---------------------------------------------------------------------- worker processes
def worker(seed: int, memory_mb: int, time_limit: float) -> None:
    """Read case indices on stdin, answer one JSON result line each (bounded memory)."""
    import resource

    if memory_mb:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import verifier.cli.check  # noqa: F401  (imports outside the timed commands)
    import verifier.cli.search  # noqa: F401

    real_stdout = sys.stdout
    with tempfile.TemporaryDirectory(prefix="fuzz-") as wd:
        for line in sys.stdin:
            i = int(line)
            try:
                case = make_case(seed, i)
                res = run_case(case, wd, time_limit)
            except MemoryError:
                res = {"index": i, "kinds": [], "codes": {}, "seconds": 0,
                       "failures": [{"command": "?", "why": "out of memory (MemoryError)"}]}
            real_stdout.write(json.dumps(res, default=str) + "\n")
            real_stdout.flush()


class _Worker:
    def __init__(self, args) -> None:
        self.args = args
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", "--seed", str(args.seed), "--memory-mb",
             str(args.memory_mb), "--time-limit", str(args.time_limit)],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.case: Optional[int] = None
        self.started = 0.0

    def send(self, i: int) -> None:
        self.case, self.started = i, time.monotonic()
        self.proc.stdin.write(f"{i}\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


def run_all(args) -> int:
    todo = list(range(args.start, args.start + args.cases))
    todo.reverse()
    results: list[dict] = []
    workers = [_Worker(args) for _ in range(max(1, args.jobs))]
    backstop = 3 * args.time_limit + 30  # a hang that SIGALRM could not interrupt (inside C code)
    t0 = time.monotonic()
    for w in workers:
        if todo:
            w.send(todo.pop())
    while any(w.case is not None for w in workers):
        busy = [w for w in workers if w.case is not None]
        ready, _, _ = select.select([w.proc.stdout for w in busy], [], [], 1.0)
        for w in busy:
            res = None
            if w.proc.stdout in ready:
                line = w.proc.stdout.readline()
                if line:
                    res = json.loads(line)
                else:  # the worker died (e.g. killed for memory)
                    code = w.proc.wait()
                    res = {"index": w.case, "kinds": [], "codes": {}, "seconds": time.monotonic() - w.started,
                           "failures": [{"command": "?", "why": f"worker died (exit {code}: out of memory?)"}]}
            elif time.monotonic() - w.started > backstop:
                w.kill()
                res = {"index": w.case, "kinds": [], "codes": {}, "seconds": backstop,
                       "failures": [{"command": "?", "why": f"hang: no answer within {backstop:.0f} s"}]}
            if res is None:
                continue
            results.append(res)
            if res.get("failures") and w.proc.poll() is not None:
                workers[workers.index(w)] = w = _Worker(args)
            elif w.proc.poll() is not None:
                workers[workers.index(w)] = w = _Worker(args)
            w.case = None
            if todo:
                w.send(todo.pop())
            if args.progress and len(results) % args.progress == 0:
                print(f"  {len(results)}/{args.cases} cases, {time.monotonic() - t0:.0f} s, "
                      f"{sum(1 for r in results if r['failures'])} failing", file=sys.stderr, flush=True)
    for w in workers:
        w.proc.stdin.close()
        w.proc.wait()
    return summarise(args, results, time.monotonic() - t0)


def summarise(args, results: list[dict], seconds: float) -> int:
    from collections import Counter

    failing = [r for r in results if r["failures"]]
    print(f"fuzz: {len(results)} cases (seed {args.seed}, indices {args.start}..{args.start + args.cases - 1}), "
          f"{seconds:.0f} s wall, {sum(r['seconds'] for r in results):.0f} s in commands, jobs {args.jobs}")
    kinds = Counter(k for r in results for k in r["kinds"])
    print("mutations: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    for cmd in ("allocate", "stdin", "batch", "check", "replay"):
        codes = Counter(r["codes"].get(cmd) for r in results if cmd in r["codes"])
        print(f"{cmd:9s} exit codes: " + ", ".join(f"{c}: {n}" for c, n in sorted(codes.items(), key=str)))
    slow = max(results, key=lambda r: r["seconds"]) if results else None
    if slow:
        print(f"slowest case: {slow['index']} ({slow['seconds']:.1f} s, {slow.get('mechanism')}, {slow['kinds']})")
    known = Counter(k.split(": replay")[0] + ": " + k.rsplit(": ", 1)[-1][:60] for r in results for k in r.get("known", ()))
    if known:
        print(f"known, fixed elsewhere (replay reports them as FAIL lines, exit 1): {sum(known.values())} cases")
        for k, n in known.most_common():
            print(f"  {n:5d}  {k}")
    outcome = Counter(f['why'].split(":")[0] for r in failing for f in r["failures"])
    print(f"failures: {len(failing)} cases" + (" (" + ", ".join(f"{k} {n}" for k, n in outcome.items()) + ")"
                                               if outcome else ""))
    for r in failing[:50]:
        case = make_case(args.seed, r["index"])
        where = save_reproducer(case, r, args.out)
        for f in r["failures"]:
            print(f"  case {r['index']} {f['command']}: {f['why']}  [{where}]")
    return 1 if failing else 0


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0, help="first case index (default 0)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds per command (default 20)")
    p.add_argument("--memory-mb", type=int, default=2048, help="address-space limit per worker (default 2048 MB)")
    p.add_argument("--out", default="fuzz-failures", help="where reproducers of failing cases go")
    p.add_argument("--progress", type=int, default=500, help="a progress line every N cases (0: none)")
    p.add_argument("--case", type=int, default=None, help="run one case in-process and print its result")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.seed, args.memory_mb, args.time_limit)
        return 0
    if args.case is not None:
        case = make_case(args.seed, args.case)
        print(f"kinds {case['kinds']}, mechanism {case['mechanism']}, instance {case['instance'][:300]!r}")
        with tempfile.TemporaryDirectory(prefix="fuzz-") as wd:
            res = run_case(case, wd, args.time_limit)
        print(json.dumps(res, indent=1, default=str))
        return 1 if res["failures"] else 0
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
