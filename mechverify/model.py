"""The one environment model shared by every seed paper.

Notation (used in every docstring of the project)
-------------------------------------------------
* resources ``R`` (computational, inside servers), servers ``S``, users ``J``;
* capacities ``c[s,r] >= 0``; a single resource pool (DRF) is one server;
* external resources ``K`` (seed 004: a link shared by all servers) with capacities ``c_er[k] >= 0``;
* per-task demands ``d[j,r] >= 0`` and external per-task demands ``d_er[j,k] >= 0``;
  seed 002 Sec. IV (co-processors, wireless channels) lets the demand differ per server:
  ``d[j,s,r]`` overrides ``d[j,r]`` for the servers listed in ``server_demand``;
* weights ``w_j > 0`` (seed 002 ``phi_n``), eligible servers ``E_j`` (placement constraints,
  seed 002 ``delta_{n,i}``; default all), task bounds ``n_j`` (seed 004 ``n_j``, seed 003 ``B_i``;
  ``None`` = unbounded).

Derived quantities
------------------
* ``gamma[j,s] = [s in E_j] * min_{r: d[j,s,r] > 0} c[s,r] / d[j,s,r]`` -- tasks user ``j`` runs
  when it monopolises server ``s`` (seed 002 eq. (7)).  ``gamma_free[j,s]`` is the same without
  the eligibility factor (TSF's monopoly count "as if there were no placement constraints").

Zero demands and users that can run nothing (decisions, also in docs/model.md)
---------------------------------------------------------------------------
* A zero entry ``d[j,r] = 0`` means the task does not use ``r``: ``r`` is skipped in every
  ``min_r`` (Leontief utility, gamma, dominant shares).  A server lacking a resource (``c[s,r] = 0``)
  that ``j`` demands gives ``gamma[j,s] = 0``: ``j`` can run nothing there.
* If a user's demand vector at some server is zero on every resource (so the server alone would
  run infinitely many of its tasks), the user must be bounded by an external demand > 0 or a
  finite task bound; otherwise the instance is rejected (its utility would be infinite).
* A user that can run no task anywhere (no eligible server, or every eligible server lacks a
  demanded resource, or an exhausted external resource) is legal input.  Every mechanism gives it
  zero tasks, and it takes no part in the max-min rounds (its score is frozen at 0).
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Iterable, Mapping, Optional, Sequence

from .numbers import INF, InstanceError, fmt_exact, to_fraction

__all__ = ["Environment", "InstanceError", "describe_shape", "instance_schema", "leontief_tasks", "load_environment",
           "loads_instance", "parse_environment", "parse_environment_text"]

Num = Fraction


def leontief_tasks(amounts: Sequence[Any], demand: Sequence[Any]) -> Any:
    """``min_{k: demand[k] > 0} amounts[k] / demand[k]`` (``inf`` if nothing is demanded): the Leontief
    number of tasks that ``amounts`` (a server's capacities, the external capacities, a bundle's part)
    allow a per-task ``demand``.  Zero demands are skipped (docs/model.md)."""
    best: Any = INF
    for a, dk in zip(amounts, demand):
        if dk > 0:
            q = a / dk
            if q < best:
                best = q
    return best


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
        f = _number(v, f"{field_name}[{i}]")
        if f < 0 and not allow_negative:
            raise InstanceError(f"{field_name}[{i}]: must be >= 0 (got {_show(v)})")
        out.append(f)
    return tuple(out)


@dataclass(frozen=True)
class Environment:
    """An immutable environment (the *reported* one when given to a mechanism).

    All numbers are ``Fraction``.  Indices: users ``j``, servers ``s``, resources ``r``,
    external resources ``k``.  Build from JSON with :func:`parse_environment`.
    """

    resources: tuple[str, ...]
    servers: tuple[str, ...]
    capacity: tuple[tuple[Fraction, ...], ...]  # [s][r]
    users: tuple[str, ...]
    demand: tuple[tuple[Fraction, ...], ...]  # [j][r]
    external: tuple[str, ...] = ()
    external_capacity: tuple[Fraction, ...] = ()  # [k]
    external_demand: tuple[tuple[Fraction, ...], ...] = ()  # [j][k] (empty tuples when no external)
    weight: tuple[Fraction, ...] = ()  # [j]
    eligible: tuple[frozenset[int], ...] = ()  # [j] -> set of server indices
    tasks: tuple[Optional[Fraction], ...] = ()  # [j] -> bound n_j or None
    server_demand: Mapping[tuple[int, int], tuple[Fraction, ...]] = field(default_factory=dict)  # (j,s) -> [r]

    # ------------------------------------------------------------------ construction
    def __post_init__(self) -> None:
        nj, ns = len(self.users), len(self.servers)
        if not self.weight:
            object.__setattr__(self, "weight", tuple(Fraction(1) for _ in range(nj)))
        if not self.eligible:
            object.__setattr__(self, "eligible", tuple(frozenset(range(ns)) for _ in range(nj)))
        if not self.tasks:
            object.__setattr__(self, "tasks", tuple(None for _ in range(nj)))
        if not self.external_demand:
            object.__setattr__(self, "external_demand", tuple(() for _ in range(nj)))
        object.__setattr__(self, "server_demand", dict(self.server_demand))
        # memo of derived quantities (the environment is immutable); not a dataclass field, so it
        # takes no part in ==, repr or replace()
        object.__setattr__(self, "_memo", {})
        self.validate()

    def validate(self) -> None:
        """Check shapes and signs; raise ``InstanceError`` with one line naming the field."""
        R, S, J, K = len(self.resources), len(self.servers), len(self.users), len(self.external)
        if R == 0:
            raise InstanceError("resources: must not be empty")
        if S == 0:
            raise InstanceError("servers: must not be empty")
        if J == 0:
            raise InstanceError("users: must not be empty")
        for label, names in (("resources", self.resources), ("servers", self.servers),
                             ("users", self.users), ("external", self.external)):
            if len(set(names)) != len(names):
                dup = next(n for n in names if names.count(n) > 1)
                raise InstanceError(f"{label}: duplicate name {dup!r}")
        clash = set(self.resources) & set(self.external)
        if clash:
            raise InstanceError(f"external: name {sorted(clash)[0]!r} is also a resource name")
        if len(self.capacity) != S:
            raise InstanceError(f"capacity: expected {S} rows (one per server), got {len(self.capacity)}")
        for s, row in enumerate(self.capacity):
            self._check_vec(row, R, f"servers[{s}].capacity")
        if len(self.external_capacity) != K:
            raise InstanceError(f"external: expected {K} capacities, got {len(self.external_capacity)}")
        self._check_vec(self.external_capacity, K, "external[].capacity")
        for label, vec in (("demand", self.demand), ("weight", self.weight), ("eligible", self.eligible),
                           ("tasks", self.tasks), ("external_demand", self.external_demand)):
            if len(vec) != J:
                raise InstanceError(f"users[].{label}: expected {J} entries (one per user), got {len(vec)}")
        for j in range(J):
            self._check_vec(self.demand[j], R, f"users[{j}].demand")
            self._check_vec(self.external_demand[j], K, f"users[{j}].external_demand")
            w = self.weight[j]
            if not isinstance(w, Fraction) or w <= 0:
                raise InstanceError(f"users[{j}].weight: must be > 0 (got {fmt_exact(w) if isinstance(w, Fraction) else w!r})")
            t = self.tasks[j]
            if t is not None and (not isinstance(t, Fraction) or t < 0):
                raise InstanceError(f"users[{j}].tasks: must be >= 0 or null (got {t!r})")
            bad = [s for s in self.eligible[j] if not (isinstance(s, int) and 0 <= s < S)]
            if bad:
                raise InstanceError(f"users[{j}].eligible: unknown server index {bad[0]!r}")
        for (j, s), vec in self.server_demand.items():
            if not (0 <= j < J and 0 <= s < S):
                raise InstanceError(f"users[].server_demand: bad (user, server) index ({j}, {s})")
            self._check_vec(vec, R, f"users[{j}].server_demand[{self.servers[s]!r}]")
        # infinite utility guard
        for j in range(J):
            if self.tasks[j] is not None or any(v > 0 for v in self.external_demand[j]):
                continue
            for s in range(S):
                if all(v == 0 for v in self.d(j, s)):
                    where = "" if (j, s) not in self.server_demand else f" at server {self.servers[s]!r}"
                    raise InstanceError(
                        f"users[{j}].demand: zero on every resource{where} with no external demand and "
                        f"unbounded tasks, so user {self.users[j]!r} could run infinitely many tasks; "
                        f"give it a finite 'tasks' bound")

    @staticmethod
    def _check_vec(vec: Sequence[Any], length: int, name: str) -> None:
        if len(vec) != length:
            raise InstanceError(f"{name}: expected {length} numbers, got {len(vec)}")
        for i, v in enumerate(vec):
            if not isinstance(v, Fraction):
                raise InstanceError(f"{name}[{i}]: expected an exact number, got {type(v).__name__} {v!r}")
            if v < 0:
                raise InstanceError(f"{name}[{i}]: must be >= 0 (got {fmt_exact(v)})")

    # ------------------------------------------------------------------ sizes
    @property
    def n_users(self) -> int:
        """Number of users."""
        return len(self.users)

    @property
    def n_servers(self) -> int:
        """Number of servers."""
        return len(self.servers)

    @property
    def n_resources(self) -> int:
        """Number of computational resources."""
        return len(self.resources)

    @property
    def n_external(self) -> int:
        """Number of external resources."""
        return len(self.external)

    @property
    def has_placement(self) -> bool:
        """Some user is not eligible everywhere."""
        full = frozenset(range(self.n_servers))
        return any(e != full for e in self.eligible)

    @property
    def has_bounds(self) -> bool:
        """Some user has a finite task bound."""
        return any(t is not None for t in self.tasks)

    @property
    def has_weights(self) -> bool:
        """Some weight differs from 1."""
        return any(w != 1 for w in self.weight)

    @property
    def has_server_demand(self) -> bool:
        """Some user has a per-server demand override (seed 002 Sec. IV)."""
        return bool(self.server_demand)

    # ------------------------------------------------------------------ derived quantities
    def d(self, j: int, s: int) -> tuple[Fraction, ...]:
        """Per-task demand vector of user ``j`` at server ``s`` (seed 002 Sec. IV override or ``d[j]``)."""
        return self.server_demand.get((j, s), self.demand[j])

    def monopoly_tasks(self, j: int, s: int) -> Fraction | float:
        """``min_{r: d[j,s,r]>0} c[s,r]/d[j,s,r]`` ignoring eligibility (``inf`` if ``d[j,s]`` is all zero)."""
        key = ("mono", j, s)
        best = self._memo.get(key)
        if best is None:
            best = leontief_tasks(self.capacity[s], self.d(j, s))
            self._memo[key] = best
        return best

    def external_limit(self, j: int) -> Fraction | float:
        """``min_{k: d_er[j,k] > 0} c_er[k] / d_er[j,k]``: tasks the external resources alone allow
        user ``j`` (``inf`` when it demands no external resource).  THE one definition of the limit."""
        key = ("ext", j)
        best = self._memo.get(key)
        if best is None:
            best = leontief_tasks(self.external_capacity, self.external_demand[j])
            self._memo[key] = best
        return best

    def gamma(self, j: int, s: int) -> Fraction | float:
        """Seed 002 eq. (7): ``gamma[j,s] = delta[j,s] * min_r c[s,r]/d[j,s,r]``."""
        return self.monopoly_tasks(j, s) if s in self.eligible[j] else Fraction(0)

    def usable(self, j: int, s: int) -> bool:
        """``j`` is eligible at ``s`` and can run a positive amount of tasks there (``gamma[j,s] > 0``)."""
        return s in self.eligible[j] and self.monopoly_tasks(j, s) > 0

    def total_capacity(self) -> tuple[Fraction, ...]:
        """Pooled capacity ``sum_s c[s,r]`` per resource."""
        tot = self._memo.get("pooled")
        if tot is None:
            tot = tuple(sum((self.capacity[s][r] for s in range(self.n_servers)), Fraction(0))
                        for r in range(self.n_resources))
            self._memo["pooled"] = tot
        return tot

    # ------------------------------------------------------------------ editing (used for misreports and minimisation)
    def with_user(self, j: int, *, demand: Optional[Sequence[Any]] = None,
                  external_demand: Optional[Sequence[Any]] = None,
                  eligible: Optional[Iterable[int]] = None, tasks: Any = "keep",
                  weight: Any = None, server_demand: Optional[Mapping[int, Sequence[Any]]] = None) -> "Environment":
        """A copy where user ``j`` reports something else (the SP deviation)."""
        def upd(seq, value):
            lst = list(seq)
            lst[j] = value
            return tuple(lst)

        kw: dict[str, Any] = {}
        if demand is not None:
            kw["demand"] = upd(self.demand, tuple(to_fraction(v, f"deviation.demand[{i}]") for i, v in enumerate(demand)))
        if external_demand is not None:
            kw["external_demand"] = upd(self.external_demand, tuple(
                to_fraction(v, f"deviation.external_demand[{i}]") for i, v in enumerate(external_demand)))
        if eligible is not None:
            kw["eligible"] = upd(self.eligible, frozenset(eligible))
        if tasks != "keep":
            kw["tasks"] = upd(self.tasks, None if tasks is None else to_fraction(tasks, "deviation.tasks"))
        if weight is not None:
            kw["weight"] = upd(self.weight, to_fraction(weight, "deviation.weight"))
        if server_demand is not None:
            sd = {k: v for k, v in self.server_demand.items() if k[0] != j}
            for s, vec in server_demand.items():
                sd[(j, s)] = tuple(to_fraction(v, f"deviation.server_demand[{s}][{i}]") for i, v in enumerate(vec))
            kw["server_demand"] = sd
        elif demand is not None:
            kw["server_demand"] = {k: v for k, v in self.server_demand.items() if k[0] != j}
        return replace(self, **kw)

    def restrict(self, users: Optional[Sequence[int]] = None, servers: Optional[Sequence[int]] = None,
                 resources: Optional[Sequence[int]] = None, external: Optional[Sequence[int]] = None) -> "Environment":
        """Sub-environment keeping the given indices (in the given order)."""
        U = list(range(self.n_users)) if users is None else list(users)
        Sv = list(range(self.n_servers)) if servers is None else list(servers)
        Rv = list(range(self.n_resources)) if resources is None else list(resources)
        Kv = list(range(self.n_external)) if external is None else list(external)
        smap = {s: i for i, s in enumerate(Sv)}
        sd = {}
        for (j, s), vec in self.server_demand.items():
            if j in U and s in smap:
                sd[(U.index(j), smap[s])] = tuple(vec[r] for r in Rv)
        return Environment(
            resources=tuple(self.resources[r] for r in Rv),
            servers=tuple(self.servers[s] for s in Sv),
            capacity=tuple(tuple(self.capacity[s][r] for r in Rv) for s in Sv),
            users=tuple(self.users[j] for j in U),
            demand=tuple(tuple(self.demand[j][r] for r in Rv) for j in U),
            external=tuple(self.external[k] for k in Kv),
            external_capacity=tuple(self.external_capacity[k] for k in Kv),
            external_demand=tuple(tuple(self.external_demand[j][k] for k in Kv) for j in U),
            weight=tuple(self.weight[j] for j in U),
            eligible=tuple(frozenset(smap[s] for s in self.eligible[j] if s in smap) for j in U),
            tasks=tuple(self.tasks[j] for j in U),
            server_demand=sd,
        )

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        """The instance format, with every number an exact ``"p/q"`` string (round-trips exactly)."""
        out: dict[str, Any] = {
            "resources": list(self.resources),
            "servers": [{"name": n, "capacity": [fmt_exact(v) for v in self.capacity[s]]}
                        for s, n in enumerate(self.servers)],
        }
        if self.external:
            out["external"] = [{"name": n, "capacity": fmt_exact(self.external_capacity[k])}
                               for k, n in enumerate(self.external)]
        users = []
        for j, n in enumerate(self.users):
            u: dict[str, Any] = {"name": n, "demand": [fmt_exact(v) for v in self.demand[j]]}
            if self.external:
                u["external_demand"] = [fmt_exact(v) for v in self.external_demand[j]]
            if self.weight[j] != 1:
                u["weight"] = fmt_exact(self.weight[j])
            if self.eligible[j] != frozenset(range(self.n_servers)):
                u["eligible"] = [self.servers[s] for s in sorted(self.eligible[j])]
            if self.tasks[j] is not None:
                u["tasks"] = fmt_exact(self.tasks[j])
            sd = {self.servers[s]: [fmt_exact(v) for v in vec]
                  for (jj, s), vec in sorted(self.server_demand.items()) if jj == j}
            if sd:
                u["server_demand"] = sd
            users.append(u)
        out["users"] = users
        return out

    def to_json(self) -> str:
        """The instance as JSON text (:meth:`to_dict`)."""
        return json.dumps(self.to_dict(), sort_keys=False)

    def describe(self) -> str:
        """The shape, e.g. ``2 users x 1 server x 2 resources`` (:func:`describe_shape`)."""
        return describe_shape(self.n_users, self.n_servers, self.n_resources, self.n_external)


def describe_shape(users: int, servers: int, resources: int, external: int = 0) -> str:
    """The one spelling of a shape: ``2 users x 1 server x 2 resources + 1 external``."""
    def n(k: int, noun: str) -> str:
        return f"{k} {noun}{'' if k == 1 else 's'}"
    out = f"{n(users, 'user')} x {n(servers, 'server')} x {n(resources, 'resource')}"
    return out + (f" + {external} external" if external else "")


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
#: Longest name (resources, servers, external resources, users).
MAX_NAME_LENGTH = 200

_NUM_HI = Fraction(10) ** NUMBER_EXPONENT
_NUM_LO = 1 / _NUM_HI
_NUM_MAX_PART = 10 ** NUMBER_DIGITS
_EXPONENT_TAIL = re.compile(r"[eE]\s*([+-]?\d+)\s*$")
# C0/C1 control characters and the Unicode line/paragraph separators: they would break one-line
# messages and tables.  The JSON Schema's name pattern excludes exactly these.
_BAD_NAME_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
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


def _parse_float(text: str) -> Any:
    f = float(text)
    if math.isinf(f) or (f == 0 and any(c in "123456789" for c in text.split("e")[0].split("E")[0])):
        return _OutOfRangeFloat(text)
    return f


def _out_of_range(value: Any, field: str) -> InstanceError:
    return InstanceError(f"{field}: {_show(value)} is out of range ({_RANGE_TEXT})")


def _number(value: Any, field: str) -> Fraction:
    """One number of an instance file: exact (``to_fraction``) and within the numeric limits."""
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
    if f != 0:
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
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    text = "".join(reversed(parts)).lstrip(".")
    return text or "instance"


def _check_tree(data: Any) -> None:
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
            raise InstanceError(f"{_path_text(path)}: duplicate key {obj.duplicate!r}")
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
        data = json.loads(text, object_pairs_hook=_object_pairs, parse_float=_parse_float)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{source}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InstanceError(f"{source}: nesting too deep at {_nesting_position(text)} "
                            f"(limit {MAX_NESTING} levels)") from None
    except ValueError as exc:
        # an integer literal beyond Python's int/str conversion limit (sys.get_int_max_str_digits)
        raise InstanceError(f"{source}: a number has too many digits ({_RANGE_TEXT}): "
                            f"{str(exc).split(';')[0]}") from None
    try:
        _check_tree(data)
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
_TOP_KEYS = {"resources", "servers", "external", "users", "name", "description", "source"}
_SERVER_KEYS = {"name", "capacity"}
_EXTERNAL_KEYS = {"name", "capacity"}
_USER_KEYS = {"name", "demand", "external_demand", "weight", "eligible", "tasks", "server_demand"}


def _check_keys(obj: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted((k for k in obj if k not in allowed), key=str)
    if unknown:
        raise InstanceError(f"{where}: unknown field {_show(unknown[0])} (allowed: {', '.join(sorted(allowed))})")


def parse_environment(data: Any) -> Environment:
    """Build an :class:`Environment` from the JSON instance format (see README / docs/model.md).

    ``data`` is the decoded JSON; nesting depth and the numeric and name limits above are checked here
    too, so callers that decode JSON themselves get the same policy (use :func:`loads_instance` to
    decode, it also catches duplicate keys and deep nesting before they cost anything)."""
    if not isinstance(data, Mapping):
        raise InstanceError(f"instance: expected a JSON object, got {type(data).__name__}")
    _check_tree(data)
    _check_keys(data, _TOP_KEYS, "instance")
    for key in ("name", "description", "source"):
        if key in data and not isinstance(data[key], str):
            raise InstanceError(f"{key}: expected a string, got {_show(data[key])}")
    for key in ("resources", "servers", "users"):
        if key not in data:
            raise InstanceError(f"{key}: missing (an instance needs resources, servers and users)")
    resources = _name_list(data["resources"], "resources")
    R = len(resources)

    raw_servers = data["servers"]
    if not isinstance(raw_servers, list) or not raw_servers:
        raise InstanceError(f"servers: expected a non-empty list of {{name, capacity}}, got {_show(raw_servers)}")
    servers, capacity = [], []
    for s, srv in enumerate(raw_servers):
        if not isinstance(srv, Mapping):
            raise InstanceError(f"servers[{s}]: expected an object {{name, capacity}}, got {_show(srv)}")
        _check_keys(srv, _SERVER_KEYS, f"servers[{s}]")
        name = _check_name(srv.get("name", f"s{s + 1}"), f"servers[{s}].name")
        if "capacity" not in srv:
            raise InstanceError(f"servers[{s}].capacity: missing")
        servers.append(name)
        capacity.append(_vector(srv["capacity"], R, f"servers[{s}].capacity", "resource"))
    servers_t = _name_list(servers, "servers")
    sindex = {n: i for i, n in enumerate(servers_t)}

    raw_ext = data.get("external", []) or []
    if not isinstance(raw_ext, list):
        raise InstanceError(f"external: expected a list of {{name, capacity}}, got {_show(raw_ext)}")
    ext_names, ext_cap = [], []
    for k, e in enumerate(raw_ext):
        if not isinstance(e, Mapping):
            raise InstanceError(f"external[{k}]: expected an object {{name, capacity}}, got {_show(e)}")
        _check_keys(e, _EXTERNAL_KEYS, f"external[{k}]")
        ext_names.append(_check_name(e.get("name", f"ext{k + 1}"), f"external[{k}].name"))
        if "capacity" not in e:
            raise InstanceError(f"external[{k}].capacity: missing")
        c = _number(e["capacity"], f"external[{k}].capacity")
        if c < 0:
            raise InstanceError(f"external[{k}].capacity: must be >= 0 (got {_show(e['capacity'])})")
        ext_cap.append(c)
    ext_t = _name_list(ext_names, "external", allow_empty=True)
    K = len(ext_t)

    raw_users = data["users"]
    if not isinstance(raw_users, list) or not raw_users:
        raise InstanceError(f"users: expected a non-empty list of users, got {_show(raw_users)}")
    names, demand, edemand, weight, eligible, tasks = [], [], [], [], [], []
    server_demand: dict[tuple[int, int], tuple[Fraction, ...]] = {}
    for j, u in enumerate(raw_users):
        where = f"users[{j}]"
        if not isinstance(u, Mapping):
            raise InstanceError(f"{where}: expected an object, got {_show(u)}")
        _check_keys(u, _USER_KEYS, where)
        names.append(_check_name(u.get("name", f"u{j + 1}"), f"{where}.name"))
        if "demand" not in u:
            raise InstanceError(f"{where}.demand: missing")
        demand.append(_vector(u["demand"], R, f"{where}.demand", "resource"))
        if K:
            if "external_demand" not in u:
                raise InstanceError(f"{where}.external_demand: missing (the instance has {K} external resource(s))")
            edemand.append(_vector(u["external_demand"], K, f"{where}.external_demand", "external resource"))
        else:
            if u.get("external_demand") not in (None, []):
                raise InstanceError(f"{where}.external_demand: given {_show(u['external_demand'])} but the instance "
                                    f"has no 'external' resources")
            edemand.append(())
        w = _number(u.get("weight", 1), f"{where}.weight")
        if w <= 0:
            raise InstanceError(f"{where}.weight: must be > 0 (got {_show(u.get('weight'))})")
        weight.append(w)
        el = u.get("eligible")
        if el is None:
            eligible.append(frozenset(range(len(servers_t))))
        else:
            if not isinstance(el, list):
                raise InstanceError(f"{where}.eligible: expected a list of server names, got {_show(el)}")
            idx = []
            for e in el:
                if not isinstance(e, str) or e not in sindex:
                    raise InstanceError(f"{where}.eligible: unknown server {_show(e)} "
                                        f"(servers: {_show(', '.join(servers_t), 200)[1:-1]})")
                if sindex[e] in idx:
                    raise InstanceError(f"{where}.eligible: duplicate server {e!r}")
                idx.append(sindex[e])
            eligible.append(frozenset(idx))
        t = u.get("tasks")
        if t is None:
            tasks.append(None)
        else:
            tf = _number(t, f"{where}.tasks")
            if tf < 0:
                raise InstanceError(f"{where}.tasks: must be >= 0 or null (got {_show(t)})")
            tasks.append(tf)
        sd = u.get("server_demand")
        if sd is not None:
            if not isinstance(sd, Mapping):
                raise InstanceError(f"{where}.server_demand: expected an object {{server: [demand...]}}, got {_show(sd)}")
            for sname, vec in sd.items():
                if sname not in sindex:
                    raise InstanceError(f"{where}.server_demand: unknown server {_show(sname)}")
                server_demand[(j, sindex[sname])] = _vector(vec, R, f"{where}.server_demand[{sname!r}]", "resource")
    users_t = _name_list(names, "users")
    return Environment(
        resources=resources, servers=servers_t, capacity=tuple(capacity), users=users_t,
        demand=tuple(demand), external=ext_t, external_capacity=tuple(ext_cap),
        external_demand=tuple(edemand), weight=tuple(weight), eligible=tuple(eligible),
        tasks=tuple(tasks), server_demand=server_demand,
    )


def load_environment(path: str) -> Environment:
    """Read an instance JSON file; errors name the file and the field.  The size cap is checked
    before reading (also for pipes and devices: at most one byte more than the cap is read)."""
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
    return parse_environment(loads_instance(text, path))
