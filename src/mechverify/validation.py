"""What makes an :class:`~mechverify.model.Environment` well-formed: shapes, signs, names, the queue tree's
paths and the infinite-utility guard.  Every check raises ``InstanceError`` with one line naming the field;
``Environment`` runs :func:`validate` when it is built (unless validation is deferred).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Sequence

from .numbers import InstanceError, fmt_exact

__all__ = ["validate", "queue_parents", "check_vec", "MAX_QUEUES", "MAX_QUEUE_DEPTH"]

#: Most queues a queue tree may declare (limits of the instance format, docs/model.md "Queue trees").
MAX_QUEUES = 10_000
#: Deepest queue path (segments of ``"a/b/c"``: 3).
MAX_QUEUE_DEPTH = 32


#: the capacity rows last found valid (an execution's steps share one tuple until a server changes: checking
#: 2,000 servers at every step of a long trace is most of the time of building its environments)
_LAST_CAPACITY: list = [None, 0]
_LAST_ELIGIBLE: list = [None, 0]  # likewise the eligible set last found valid (every server: one object per cluster)


def validate(env) -> None:
    """Check shapes and signs; raise ``InstanceError`` with one line naming the field."""
    R, S, J, K = len(env.resources), len(env.servers), len(env.users), len(env.external)
    if R == 0:
        raise InstanceError("resources: must not be empty")
    if S == 0:
        raise InstanceError("servers: must not be empty")
    if J == 0:
        raise InstanceError("users: must not be empty")
    for label, names in (("resources", env.resources), ("servers", env.servers),
                         ("users", env.users), ("external", env.external)):
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise InstanceError(f"{label}: duplicate name {dup!r}")
    clash = set(env.resources) & set(env.external)
    if clash:
        raise InstanceError(f"external: name {sorted(clash)[0]!r} is also a resource name")
    if len(env.capacity) != S:
        raise InstanceError(f"capacity: expected {S} rows (one per server), got {len(env.capacity)}")
    if _LAST_CAPACITY[0] is not env.capacity or _LAST_CAPACITY[1] != R:  # (the same tuple: checked already)
        for s, row in enumerate(env.capacity):
            check_vec(row, R, f"servers[{s}].capacity")
        _LAST_CAPACITY[:] = [env.capacity, R]
    if len(env.external_capacity) != K:
        raise InstanceError(f"external: expected {K} capacities, got {len(env.external_capacity)}")
    check_vec(env.external_capacity, K, "external[].capacity")
    for label, vec in (("demand", env.demand), ("weight", env.weight), ("eligible", env.eligible),
                       ("tasks", env.tasks), ("external_demand", env.external_demand),
                       ("queue", env.user_queue)):
        if len(vec) != J:
            raise InstanceError(f"users[].{label}: expected {J} entries (one per user), got {len(vec)}")
    for j in range(J):
        check_vec(env.demand[j], R, f"users[{j}].demand")
        check_vec(env.external_demand[j], K, f"users[{j}].external_demand")
        w = env.weight[j]
        if not isinstance(w, Fraction) or w <= 0:
            raise InstanceError(f"users[{j}].weight: must be > 0 (got {fmt_exact(w) if isinstance(w, Fraction) else w!r})")
        t = env.tasks[j]
        if t is not None and (not isinstance(t, Fraction) or t < 0):
            raise InstanceError(f"users[{j}].tasks: must be >= 0 or null (got {t!r})")
        e = env.eligible[j]
        if e is _LAST_ELIGIBLE[0] and _LAST_ELIGIBLE[1] == S:  # the same set object, already checked for S servers
            continue
        bad = [s for s in e if not (isinstance(s, int) and 0 <= s < S)]
        if not bad:
            _LAST_ELIGIBLE[:] = [e, S]
        if bad:
            raise InstanceError(f"users[{j}].eligible: unknown server index {bad[0]!r}")
    for (j, s), vec in env.server_demand.items():
        if not (0 <= j < J and 0 <= s < S):
            raise InstanceError(f"users[].server_demand: bad (user, server) index ({j}, {s})")
        check_vec(vec, R, f"users[{j}].server_demand[{env.servers[s]!r}]")
    _validate_queues(env)
    if env.usage:
        if len(env.usage) != J:
            raise InstanceError(f"users[].usage: expected {J} entries (one per user), got {len(env.usage)}")
        for j in range(J):
            check_vec(env.usage[j], S, f"users[{j}].usage")
    # infinite utility guard
    for j in range(J):  # (every number is a checked Fraction here: its sign is its numerator's)
        if env.tasks[j] is not None or any(v._numerator for v in env.external_demand[j]):
            continue
        for s in range(S):
            if not any(v._numerator for v in env.d(j, s)):
                where = "" if (j, s) not in env.server_demand else f" at server {env.servers[s]!r}"
                raise InstanceError(
                    f"users[{j}].demand: zero on every resource{where} with no external demand and "
                    f"unbounded tasks, so user {env.users[j]!r} could run infinitely many tasks; "
                    f"give it a finite 'tasks' bound")

def _validate_queues(env) -> None:
    """The queue tree: at most :data:`MAX_QUEUES` queues (counted before anything else), well-formed
    unique paths of at most :data:`MAX_QUEUE_DEPTH` segments whose every prefix is declared, weights
    > 0, guarantees and maxes one number >= 0 per resource, users in declared queues.  (Declarations that do
    not add up -- a guarantee above a max, over-committed siblings -- are warnings: ``mechverify.declared``.)"""
    Q, R = len(env.queues), len(env.resources)
    if Q > MAX_QUEUES:
        raise InstanceError(f"queues: too many queues ({Q}, limit {MAX_QUEUES})")
    for label, vec in (("weight", env.queue_weight), ("guarantee", env.queue_guarantee), ("max", env.queue_max)):
        if len(vec) != Q:
            raise InstanceError(f"queues[].{label}: expected {Q} entries (one per queue), got {len(vec)}")
    if Q:
        queue_parents(env)  # paths, duplicates, missing parents, depth
    for q in range(Q):
        w = env.queue_weight[q]
        if not isinstance(w, Fraction) or w <= 0:
            raise InstanceError(f"queues[{q}].weight: must be > 0 "
                                f"(got {fmt_exact(w) if isinstance(w, Fraction) else w!r})")
        for label, vec in (("guarantee", env.queue_guarantee[q]), ("max", env.queue_max[q])):
            if vec is not None:
                check_vec(vec, R, f"queues[{q}].{label}")
    for j, q in enumerate(env.user_queue):
        if q is not None and not (q.__class__ is int and 0 <= q < Q):
            raise InstanceError(f"users[{j}].queue: unknown queue index {q!r} ({Q} queues declared)")

def queue_parents(env) -> tuple[Optional[int], ...]:
    """``[q] -> parent queue index`` (``None``: a top-level queue), checking the paths (memoised)."""
    parents = env._memo.get("qparent")
    if parents is not None:
        return parents
    index: dict[str, int] = {}
    for q, path in enumerate(env.queues):
        if not isinstance(path, str) or not path.strip():
            raise InstanceError(f"queues[{q}].name: expected a non-empty queue path, got {path!r}")
        if path in index:
            raise InstanceError(f"queues[{q}].name: duplicate queue {path!r} (also queues[{index[path]}])")
        index[path] = q
    out: list[Optional[int]] = []
    for q, path in enumerate(env.queues):
        segments = path.split("/")
        if len(segments) > MAX_QUEUE_DEPTH:
            raise InstanceError(f"queues[{q}].name: queue path too deep ({len(segments)} levels, limit "
                                f"{MAX_QUEUE_DEPTH}): {path[:60]!r}{'...' if len(path) > 60 else ''}")
        if any(not seg.strip() for seg in segments):
            raise InstanceError(f"queues[{q}].name: empty segment in queue path {path!r} "
                                f"(paths are names joined by '/', e.g. 'eng/dev')")
        if len(segments) == 1:
            out.append(None)
            continue
        parent = path.rsplit("/", 1)[0]
        p = index.get(parent)
        if p is None:
            raise InstanceError(f"queues[{q}].name: parent queue {parent!r} of {path!r} is not declared "
                                f"(every prefix of a path must be a queue)")
        out.append(p)
    parents = tuple(out)
    env._memo["qparent"] = parents
    return parents

def check_vec(vec: Sequence[Any], length: int, name: str) -> None:
    if len(vec) != length:
        raise InstanceError(f"{name}: expected {length} numbers, got {len(vec)}")
    for i, v in enumerate(vec):
        if v.__class__ is not Fraction and not isinstance(v, Fraction):
            raise InstanceError(f"{name}[{i}]: expected an exact number, got {type(v).__name__} {v!r}")
        if v._numerator < 0:  # the sign of a Fraction (its denominator is > 0), without Fraction's comparison
            raise InstanceError(f"{name}[{i}]: must be >= 0 (got {fmt_exact(v)})")
