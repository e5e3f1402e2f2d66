"""The instance format (JSON) -> :class:`~mechverify.model.Environment`: the one parser, its limits
(numbers, nesting, names, size; docs/model.md "Instance files") and the JSON Schema shipped beside it.
Every rejection is one ``InstanceError`` line naming the field and the value."""
from __future__ import annotations

import json
import math
import os
import re
from fractions import Fraction
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from .model import MAX_QUEUE_DEPTH, MAX_QUEUES, Environment
from .numbers import InstanceError, to_fraction

__all__ = ["load_environment", "load_instance_data", "parse_user", "UserFields", "parse_header", "Header", "loads_instance", "parse_environment", "parse_environment_text", "instance_schema",
           "MAX_INSTANCE_BYTES", "MAX_NESTING", "NUMBER_EXPONENT", "NUMBER_DIGITS", "MAX_NUMBER_TEXT",
           "MAX_NAME_LENGTH", "MAX_QUEUES", "MAX_QUEUE_DEPTH", "instance_number", "check_nesting"]


def _name_list(raw: Any, field_name: str, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(raw, (list, tuple)):
        raise InstanceError(f"{field_name}: expected a list of names, got {type(raw).__name__} {_show(raw)}")
    if not raw and not allow_empty:
        raise InstanceError(f"{field_name}: must not be empty")
    names = [_check_name(n, f"{field_name}[{i}]") for i, n in enumerate(raw)]
    seen = set()
    for n in names:
        if n in seen:
            raise InstanceError(f"{field_name}: duplicate name {n!r}")
        seen.add(n)
    return tuple(names)


def _vector(raw: Any, length: int, field_name: str, what: str, allow_negative: bool = False) -> tuple[Fraction, ...]:
    if not isinstance(raw, (list, tuple)):
        raise InstanceError(f"{field_name}: expected a list of {length} numbers, got {_show(raw)}")
    if len(raw) != length:
        raise InstanceError(f"{field_name}: expected {length} numbers (one per {what}), got {len(raw)}: {_show(raw)}")
    out = []
    for i, v in enumerate(raw):
        f = instance_number(v, f"{field_name}[{i}]")
        if f < 0 and not allow_negative:
            raise InstanceError(f"{field_name}[{i}]: must be >= 0 (got {_show(v)})")
        out.append(f)
    return tuple(out)


# ---------------------------------------------------------------------- limits of the instance format
# Documented in README ("Instance format") and docs/model.md; every violation is one InstanceError line.

#: Largest instance accepted: a file (checked before reading) or a text, in bytes.
MAX_INSTANCE_BYTES = 64 * 1024 * 1024
#: Deepest JSON nesting accepted (objects and lists; the format itself needs 5:
#: instance > users > user > server_demand > vector).
MAX_NESTING = 32
#: Every non-zero number ``v`` satisfies ``10**-NUMBER_EXPONENT <= |v| <= 10**NUMBER_EXPONENT`` ...
NUMBER_EXPONENT = 4
#: ... and its numerator and denominator (in lowest terms) are at most ``10**NUMBER_DIGITS``.
NUMBER_DIGITS = 30
#: Longest number spelled as a string (``"p/q"`` or a decimal), checked before it is converted.
MAX_NUMBER_TEXT = 100
#: Longest name (resources, servers, external resources, users, a queue's whole path).
MAX_NAME_LENGTH = 200
# The queue tree: at most MAX_QUEUES queues (checked before anything else is built), paths of at most
# MAX_QUEUE_DEPTH segments (both defined in ``model``, which checks them for every Environment).

_NUM_HI = Fraction(10) ** NUMBER_EXPONENT
_NUM_LO = 1 / _NUM_HI
_NUM_MAX_PART = 10 ** NUMBER_DIGITS
_EXPONENT_TAIL = re.compile(r"[eE]\s*([+-]?\d+)\s*$")
# C0/C1 control characters and the Unicode line/paragraph separators: they would break one-line
# messages and tables.  The JSON Schema's name pattern excludes exactly these.
_BAD_NAME_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# A lone surrogate (JSON "\ud800", or an undecodable byte read from stdin) is no character: it cannot be
# written as UTF-8, so printing a table with that name would crash.
_SURROGATE = re.compile("[\ud800-\udfff]")
_RANGE_TEXT = f"a non-zero number must lie between 1e-{NUMBER_EXPONENT} and 1e{NUMBER_EXPONENT} in absolute value"


def _show(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to about ``limit`` characters (hostile input must not flood one-line errors)."""
    if isinstance(value, int) and not isinstance(value, bool):
        bits = abs(value).bit_length()
        if bits > 3 * limit:
            digits = int(bits * 0.30103) + 1
            if digits > 4000:
                return f"<an integer of about {digits} digits>"
            text = str(value)
            return f"{text[:20]}...({len(text.lstrip('-'))} digits)"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}...({len(text)} characters)"


class _OutOfRangeFloat:
    """A JSON number literal outside the double range (``1e400`` would read as ``inf``, ``1e-400`` as ``0.0``)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


#: Longest JSON integer literal converted at all (Python's own default int/text guard); shorter ones that
#: are still out of range are rejected by :func:`instance_number` naming their field.
MAX_INT_LITERAL = 4300


def _parse_int(text: str) -> int:
    """JSON integer literals: checked for length before conversion, so the parser does not depend on
    Python's int/text guard (which the CLI lifts to print long exact results)."""
    if len(text.lstrip("-")) > MAX_INT_LITERAL:
        raise ValueError(f"an integer literal of {len(text.lstrip('-'))} digits (limit {MAX_INT_LITERAL})")
    return int(text)


def _parse_float(text: str) -> Any:
    f = float(text)
    if math.isinf(f) or (f == 0 and any(c in "123456789" for c in text.split("e")[0].split("E")[0])):
        return _OutOfRangeFloat(text)
    return f


def _out_of_range(value: Any, field: str) -> InstanceError:
    return InstanceError(f"{field}: {_show(value)} is out of range ({_RANGE_TEXT})")


def instance_number(value: Any, field: str, limits: bool = True) -> Fraction:
    """One number of an instance file: exact (``to_fraction``) and within the numeric limits.
    ``limits=False`` (numbers a stored counterexample records besides its instance, e.g. a misreport)
    keeps only the guards that make conversion cheap: text length, exponent, integer size."""
    if isinstance(value, _OutOfRangeFloat):
        raise _out_of_range(value, field)
    if isinstance(value, str):
        if len(value) > MAX_NUMBER_TEXT:
            raise InstanceError(f"{field}: number text too long ({len(value)} characters, limit "
                                f"{MAX_NUMBER_TEXT}): {_show(value)}")
        m = _EXPONENT_TAIL.search(value)
        # decide on the exponent alone: Fraction('1e999999') would build a million-digit integer
        if m and abs(int(m.group(1))) > 2 * NUMBER_DIGITS:
            raise _out_of_range(value, field)
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > 4 * NUMBER_DIGITS:
        raise _out_of_range(value, field)
    f = to_fraction(value, field)
    if f != 0 and limits:
        a = abs(f)
        if a > _NUM_HI or a < _NUM_LO:
            raise _out_of_range(value, field)
        if a.numerator > _NUM_MAX_PART or a.denominator > _NUM_MAX_PART:
            raise InstanceError(f"{field}: {_show(value)} has too many digits (numerator and denominator in "
                                f"lowest terms must be at most 1e{NUMBER_DIGITS})")
    return f


def _check_name(name: Any, field: str) -> str:
    """A name: a non-blank string of printable characters, at most :data:`MAX_NAME_LENGTH` long."""
    if not isinstance(name, str) or not name.strip():
        raise InstanceError(f"{field}: expected a non-empty name, got {_show(name)}")
    if len(name) > MAX_NAME_LENGTH:
        raise InstanceError(f"{field}: name too long ({len(name)} characters, limit {MAX_NAME_LENGTH}): "
                            f"{_show(name)}")
    bad = _SURROGATE.search(name)
    if bad:
        raise InstanceError(f"{field}: name contains the lone surrogate {bad.group()!r} at position {bad.start()} "
                            f"(not a character; not writable as UTF-8): {_show(name)}")
    bad = _BAD_NAME_CHAR.search(name)
    if bad:
        raise InstanceError(f"{field}: name contains the control character {bad.group()!r} at position "
                            f"{bad.start()}: {name!r}")
    return name


class _DuplicateKeyObject(dict):
    """A JSON object that repeated a key (reported with its path by :func:`_check_tree`)."""

    __slots__ = ("duplicate",)


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        obj = _DuplicateKeyObject(obj)
        obj.duplicate = dup
    return obj


def _path_text(path: Optional[tuple]) -> str:
    parts: list[str] = []
    while path is not None:
        path, key = path
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif len(key) <= 40 and key.isprintable() and not _SURROGATE.search(key):
            parts.append(f".{key}")
        else:  # a hostile key: escaped and cut, the message stays one short line
            parts.append(f"[{_show(key, 40)}]")
    text = "".join(reversed(parts)).lstrip(".")
    return text or "instance"


def check_nesting(data: Any) -> None:
    """Nesting depth and duplicate keys, without recursion (the data may be hostile)."""
    stack: list[tuple[Any, int, Optional[tuple]]] = [(data, 1, None)]
    while stack:
        obj, depth, path = stack.pop()
        if isinstance(obj, Mapping):
            children: Iterable = obj.items()
        elif isinstance(obj, (list, tuple)):
            children = enumerate(obj)
        else:
            continue
        if depth > MAX_NESTING:
            raise InstanceError(f"{_path_text(path)}: nesting too deep (limit {MAX_NESTING} levels)")
        if isinstance(obj, _DuplicateKeyObject):
            raise InstanceError(f"{_path_text(path)}: duplicate key {_show(obj.duplicate)}")
        for key, child in children:
            if isinstance(child, (Mapping, list, tuple)):
                stack.append((child, depth + 1, (path, key)))


def _nesting_position(text: str) -> str:
    """``line L column C`` where the nesting first exceeds :data:`MAX_NESTING` (strings skipped)."""
    depth, line, col0 = 0, 1, 0
    in_str = esc = False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return f"line {line} column {i - col0 + 1}"
        elif ch in "]}":
            depth -= 1
        if ch == "\n":
            line, col0 = line + 1, i + 1
    return "somewhere"


def loads_instance(text: str, source: str = "instance") -> Any:
    """``json.loads`` for instance text, hardened: size cap, nesting limit (no ``RecursionError``),
    duplicate keys rejected, integer literals too long for Python, and number literals outside the
    double range reported; every failure is one ``InstanceError`` line starting with ``source``."""
    if len(text) > MAX_INSTANCE_BYTES:
        raise InstanceError(f"{source}: too large ({len(text)} characters, limit {MAX_INSTANCE_BYTES} bytes)")
    try:
        data = json.loads(text, object_pairs_hook=_object_pairs, parse_float=_parse_float, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{source}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InstanceError(f"{source}: nesting too deep at {_nesting_position(text)} "
                            f"(limit {MAX_NESTING} levels)") from None
    except ValueError as exc:  # an integer literal too long (_parse_int)
        raise InstanceError(f"{source}: a number has too many digits ({_RANGE_TEXT}): "
                            f"{str(exc).split(';')[0]}") from None
    try:
        check_nesting(data)
    except InstanceError as exc:
        raise InstanceError(f"{source}: {exc}") from None
    return data


def parse_environment_text(text: str, source: str = "instance") -> "Environment":
    """Parse instance JSON text (one file, one ``--batch`` line, stdin): :func:`loads_instance`, then
    :func:`parse_environment`.  Errors are one line; structural ones start with ``source``."""
    return parse_environment(loads_instance(text, source))


# ---------------------------------------------------------------------- schema
def instance_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the instance format, shipped as ``mechverify/instance.schema.json``.

    It checks the shape, field names, types and spellings of numbers and names; what it cannot express
    (vector lengths, server names in ``eligible``/``server_demand``, the zero-demand rule, exact numeric
    limits of ``"p/q"`` strings, duplicate keys) is checked by :func:`parse_environment`."""
    from importlib import resources

    return json.loads(resources.files("mechverify").joinpath("instance.schema.json").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------- parsing
_TOP_KEYS = {"resources", "servers", "external", "queues", "users", "name", "description", "source"}
_ENTRY_KEYS = {"name", "capacity"}  # a server or an external resource
_QUEUE_KEYS = {"name", "weight", "guarantee", "max"}
_USER_KEYS = {"name", "demand", "external_demand", "weight", "eligible", "tasks", "server_demand", "queue", "usage"}


def _check_keys(obj: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted((k for k in obj if k not in allowed), key=str)
    if unknown:
        raise InstanceError(f"{where}: unknown field {_show(unknown[0])} (allowed: {', '.join(sorted(allowed))})")


def _non_negative(raw: Any, field: str) -> Fraction:
    """One number of the instance, >= 0."""
    c = instance_number(raw, field)
    if c < 0:
        raise InstanceError(f"{field}: must be >= 0 (got {_show(raw)})")
    return c


def _named_entries(raw: Any, where: str, prefix: str, non_empty: bool, capacity) -> tuple[list, list]:
    """``servers`` / ``external``: a list of ``{name, capacity}`` objects -> (names, parsed capacities).
    A missing name defaults to ``prefix`` + position (``s1``, ``ext1``, ...)."""
    if not isinstance(raw, list) or (non_empty and not raw):
        what = "a non-empty list" if non_empty else "a list"
        raise InstanceError(f"{where}: expected {what} of {{name, capacity}}, got {_show(raw)}")
    names, caps = [], []
    for i, obj in enumerate(raw):
        if not isinstance(obj, Mapping):
            raise InstanceError(f"{where}[{i}]: expected an object {{name, capacity}}, got {_show(obj)}")
        _check_keys(obj, _ENTRY_KEYS, f"{where}[{i}]")
        names.append(_check_name(obj.get("name", f"{prefix}{i + 1}"), f"{where}[{i}].name"))
        if "capacity" not in obj:
            raise InstanceError(f"{where}[{i}].capacity: missing")
        caps.append(capacity(obj["capacity"], f"{where}[{i}].capacity"))
    return names, caps


def _queues(raw: Any, R: int) -> tuple[tuple[str, ...], tuple[Fraction, ...], tuple[Optional[tuple[Fraction, ...]], ...],
                                     tuple[Optional[tuple[Fraction, ...]], ...]]:
    """``queues``: a list of ``{name, weight, guarantee, max}`` -> (paths, weights, guarantees, maxes).  The count is
    checked first (a hostile list of 10^5 queues costs nothing more); the tree itself (segments,
    duplicates, declared parents, depth) is checked by ``Environment``, with the same field names."""
    if raw is None:
        return (), (), (), ()
    if not isinstance(raw, list):
        raise InstanceError(f"queues: expected a list of {{name, weight, guarantee, max}}, got {_show(raw)}")
    if len(raw) > MAX_QUEUES:
        raise InstanceError(f"queues: too many queues ({len(raw)}, limit {MAX_QUEUES})")
    names, weights, guarantees, maxes = [], [], [], []
    for q, obj in enumerate(raw):
        where = f"queues[{q}]"
        if not isinstance(obj, Mapping):
            raise InstanceError(f"{where}: expected an object {{name, weight, guarantee, max}}, got {_show(obj)}")
        _check_keys(obj, _QUEUE_KEYS, where)
        if "name" not in obj:
            raise InstanceError(f"{where}.name: missing (a queue path such as 'eng/dev')")
        names.append(_check_name(obj["name"], f"{where}.name"))
        w = instance_number(obj.get("weight", 1), f"{where}.weight")
        if w <= 0:
            raise InstanceError(f"{where}.weight: must be > 0 (got {_show(obj.get('weight'))})")
        weights.append(w)
        g = obj.get("guarantee")
        guarantees.append(None if g is None else _vector(g, R, f"{where}.guarantee", "resource"))
        m = obj.get("max")
        maxes.append(None if m is None else _vector(m, R, f"{where}.max", "resource"))
    return tuple(names), tuple(weights), tuple(guarantees), tuple(maxes)


@dataclass(frozen=True)
class UserFields:
    """One user object of the format, parsed (``eligible``: server indices, ``None`` = every server;
    ``server_demand``: server index -> vector; ``queue``: a queue index or ``None``; ``usage``: per server or
    ``None``) -- what :func:`parse_environment` builds its users from, and an execution's ``arrive`` events too."""

    name: str
    demand: tuple[Fraction, ...]
    external_demand: tuple[Fraction, ...]
    weight: Fraction
    eligible: Optional[frozenset]
    tasks: Optional[Fraction]
    server_demand: dict
    queue: Optional[int]
    usage: Optional[tuple[Fraction, ...]]


def parse_user(u: Any, where: str, R: int, K: int, servers: tuple[str, ...], queues: tuple[str, ...],
               qindex: Mapping[str, int], default_name: Optional[str] = None,
               keys: frozenset = frozenset()) -> UserFields:
    """One user object (``where`` names it in every message: ``users[3]``, ``events[7].user``) against the
    instance's ``R`` resources, ``K`` external resources, server names and queue paths.  ``keys``: more
    allowed fields (an execution's ``arrive`` takes ``duration`` and ``work``), left for the caller."""
    if not isinstance(u, Mapping):
        raise InstanceError(f"{where}: expected an object, got {_show(u)}")
    # server names to indices, only for a user naming servers (O(servers): not for every job of a long trace)
    sindex = {n: i for i, n in enumerate(servers)} if ("eligible" in u or "server_demand" in u) else {}
    _check_keys(u, _USER_KEYS | keys, where)
    if "name" not in u and default_name is None:
        raise InstanceError(f"{where}.name: missing")
    name = _check_name(u.get("name", default_name), f"{where}.name")
    if "demand" not in u:
        raise InstanceError(f"{where}.demand: missing")
    demand = _vector(u["demand"], R, f"{where}.demand", "resource")
    if K:
        if u.get("external_demand") is None:  # absent or null
            raise InstanceError(f"{where}.external_demand: missing (the instance has {K} external resource(s))")
        edemand = _vector(u["external_demand"], K, f"{where}.external_demand", "external resource")
    else:
        if u.get("external_demand") not in (None, []):
            raise InstanceError(f"{where}.external_demand: given {_show(u['external_demand'])} but the instance "
                                f"has no 'external' resources")
        edemand = ()
    w = instance_number(u.get("weight", 1), f"{where}.weight")
    if w <= 0:
        raise InstanceError(f"{where}.weight: must be > 0 (got {_show(u.get('weight'))})")
    el = u.get("eligible")
    eligible: Optional[frozenset] = None
    if el is not None:
        if not isinstance(el, list):
            raise InstanceError(f"{where}.eligible: expected a list of server names, got {_show(el)}")
        idx: list[int] = []
        for e in el:
            if not isinstance(e, str) or e not in sindex:
                raise InstanceError(f"{where}.eligible: unknown server {_show(e)} "
                                    f"(servers: {_show(', '.join(servers), 200)[1:-1]})")
            if sindex[e] in idx:
                raise InstanceError(f"{where}.eligible: duplicate server {e!r}")
            idx.append(sindex[e])
        eligible = frozenset(idx)
    t = u.get("tasks")
    tasks: Optional[Fraction] = None
    if t is not None:
        tasks = instance_number(t, f"{where}.tasks")
        if tasks < 0:
            raise InstanceError(f"{where}.tasks: must be >= 0 or null (got {_show(t)})")
    sd = u.get("server_demand")
    server_demand: dict[int, tuple[Fraction, ...]] = {}
    if sd is not None:
        if not isinstance(sd, Mapping):
            raise InstanceError(f"{where}.server_demand: expected an object {{server: [demand...]}}, got {_show(sd)}")
        for sname, vec in sd.items():
            if sname not in sindex:
                raise InstanceError(f"{where}.server_demand: unknown server {_show(sname)}")
            server_demand[sindex[sname]] = _vector(vec, R, f"{where}.server_demand[{sname!r}]", "resource")
    uq = u.get("queue")
    queue: Optional[int] = None
    if uq is not None:  # absent or null: the root
        if not isinstance(uq, str) or uq not in qindex:
            known = f"queues: {_show(', '.join(queues[:20]), 80)[1:-1]}" if queues else "no queues are declared"
            raise InstanceError(f"{where}.queue: unknown queue {_show(uq)} ({known})")
        queue = qindex[uq]
    us = u.get("usage")  # the state a policy's order is read in (tasks per server); absent: none held
    usage = None if us is None else _vector(us, len(servers), f"{where}.usage", "server")
    return UserFields(name, demand, edemand, w, eligible, tasks, server_demand, queue, usage)


@dataclass(frozen=True)
class Header:
    """The instance fields besides the users (:func:`parse_header`)."""

    resources: tuple[str, ...]
    servers: tuple[str, ...]
    capacity: tuple[tuple[Fraction, ...], ...]
    external: tuple[str, ...]
    external_capacity: tuple[Fraction, ...]
    queues: tuple[str, ...]
    queue_weight: tuple[Fraction, ...]
    queue_guarantee: tuple
    queue_max: tuple
    qindex: Mapping[str, int]


def parse_header(data: Any, top_keys: frozenset = frozenset(), need_users: bool = True) -> Header:
    """The checks every instance-shaped file starts with (object, queue count, nesting, fields, text fields),
    then resources, servers, external resources and queues.  ``top_keys``: more allowed top-level fields (an
    execution's ``events``, ``unit``, ...)."""
    if not isinstance(data, Mapping):
        raise InstanceError(f"instance: expected a JSON object, got {type(data).__name__}")
    raw_queues = data.get("queues")
    if isinstance(raw_queues, list) and len(raw_queues) > MAX_QUEUES:  # before walking them
        raise InstanceError(f"queues: too many queues ({len(raw_queues)}, limit {MAX_QUEUES})")
    check_nesting(data)
    _check_keys(data, _TOP_KEYS | top_keys, "instance")
    for key in ("name", "description", "source"):
        if key in data and not isinstance(data[key], str):
            raise InstanceError(f"{key}: expected a string, got {_show(data[key])}")
    for key in ("resources", "servers", "users") if need_users else ("resources", "servers"):
        if key not in data:
            raise InstanceError(f"{key}: missing (an instance needs resources, servers and users)")
    resources = _name_list(data["resources"], "resources")
    R = len(resources)

    servers, capacity = _named_entries(data["servers"], "servers", "s", True,
                                       lambda raw, f: _vector(raw, R, f, "resource"))
    servers_t = _name_list(servers, "servers")

    ext_names, ext_cap = _named_entries(data.get("external", []) or [], "external", "ext", False,
                                        lambda raw, f: _non_negative(raw, f))
    ext_t = _name_list(ext_names, "external", allow_empty=True)

    queues, qweight, qguarantee, qmax = _queues(data.get("queues"), R)
    qindex: dict[str, int] = {}
    for q, path in enumerate(queues):
        qindex.setdefault(path, q)  # a duplicate is reported by Environment (naming both entries)
    return Header(resources, servers_t, tuple(capacity), ext_t, tuple(ext_cap), queues, qweight, qguarantee, qmax,
                  qindex)


def parse_environment(data: Any) -> Environment:
    """Build an :class:`Environment` from the JSON instance format (see README / docs/model.md).

    ``data`` is the decoded JSON; nesting depth and the numeric and name limits above are checked here
    too, so callers that decode JSON themselves get the same policy (use :func:`loads_instance` to
    decode, it also catches duplicate keys and deep nesting before they cost anything)."""
    h = parse_header(data)
    resources, servers_t, capacity, ext_t, ext_cap = h.resources, h.servers, h.capacity, h.external, h.external_capacity
    queues, qweight, qguarantee, qmax, qindex = h.queues, h.queue_weight, h.queue_guarantee, h.queue_max, h.qindex
    R, K = len(resources), len(ext_t)
    raw_users = data["users"]
    if not isinstance(raw_users, list) or not raw_users:
        raise InstanceError(f"users: expected a non-empty list of users, got {_show(raw_users)}")
    names, demand, edemand, weight, eligible, tasks = [], [], [], [], [], []
    user_queue: list[Optional[int]] = []
    usage: list[tuple[Fraction, ...]] = []
    server_demand: dict[tuple[int, int], tuple[Fraction, ...]] = {}
    for j, u in enumerate(raw_users):
        f = parse_user(u, f"users[{j}]", R, K, servers_t, queues, qindex, default_name=f"u{j + 1}")
        names.append(f.name)
        demand.append(f.demand)
        edemand.append(f.external_demand)
        weight.append(f.weight)
        eligible.append(frozenset(range(len(servers_t))) if f.eligible is None else f.eligible)
        tasks.append(f.tasks)
        for s, vec in f.server_demand.items():
            server_demand[(j, s)] = vec
        user_queue.append(f.queue)
        usage.append(tuple(Fraction(0) for _ in servers_t) if f.usage is None else f.usage)
    users_t = _name_list(names, "users")
    if not any(v for row in usage for v in row):
        usage = []
    return Environment(
        resources=resources, servers=servers_t, capacity=tuple(capacity), users=users_t,
        demand=tuple(demand), external=ext_t, external_capacity=tuple(ext_cap),
        external_demand=tuple(edemand), weight=tuple(weight), eligible=tuple(eligible),
        tasks=tuple(tasks), server_demand=server_demand,
        queues=queues, queue_weight=qweight, queue_guarantee=qguarantee, queue_max=qmax, user_queue=tuple(user_queue),
        usage=tuple(usage),
    )


def load_instance_data(path: str) -> Any:
    """Read an instance-shaped JSON file (an instance, an execution) and decode it with :func:`loads_instance`;
    errors name the file.  The size cap is checked before reading (also for pipes and devices: at most one
    byte more than the cap is read)."""
    try:
        with open(path, "rb") as fh:
            try:
                size = os.fstat(fh.fileno()).st_size
            except OSError:  # pragma: no cover
                size = 0
            if size > MAX_INSTANCE_BYTES:
                raise InstanceError(f"{path}: too large ({size} bytes, limit {MAX_INSTANCE_BYTES} bytes)")
            raw = fh.read(MAX_INSTANCE_BYTES + 1)
    except OSError as exc:
        raise InstanceError(f"{path}: cannot read instance file ({exc.strerror})") from None
    if len(raw) > MAX_INSTANCE_BYTES:
        raise InstanceError(f"{path}: too large (more than {MAX_INSTANCE_BYTES} bytes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstanceError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    return loads_instance(text, path)


def load_environment(path: str) -> Environment:
    """Read an instance JSON file (:func:`load_instance_data`); errors name the file and the field."""
    return parse_environment(load_instance_data(path))
