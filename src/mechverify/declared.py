"""Declared amounts of a queue tree: guarantees and maxes (docs/model.md, "Declared amounts").

A queue may declare a ``guarantee`` and a ``max``, one number per resource (``Environment.queue_guarantee``,
``Environment.queue_max``).  The model reads both as amounts of the queue's SUBTREE (YARN's minResources /
maxResources, YuniKorn's guaranteed / max): what every user below the queue holds together, pooled over the
servers.  Declarations that do not add up under that reading are WARNINGS, not errors, because real clusters
over-commit them (:func:`declaration_warnings`):

* a guarantee above the queue's own max, or above an ancestor's max;
* a guarantee above its nearest guaranteed ancestor's guarantee (a child above its parent), a max above its
  nearest ancestor's max (never reachable);
* guarantees of siblings that add up to more than their parent's guarantee, or -- at the top -- to more than
  the pooled capacity.

:func:`guarantees_nest` is the premise of the ``quota`` property: no warning about guarantees, so every
declared guarantee can be honoured at once.  :func:`held` is what a queue's subtree holds in an allocation.
Malformed declarations (negative, wrong length, not numbers) are errors of the parser and of
``mechverify.validation``.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, NamedTuple, Optional, Sequence

from .numbers import fmt_exact

__all__ = ["DeclarationWarning", "declaration_warnings", "guarantees_nest", "held", "users_below", "free_capacity",
           "nearest_declared"]


class DeclarationWarning(NamedTuple):
    """One declaration that does not add up: the ``field`` it names (``queues[2].guarantee``), the line people
    read, and whether it is about guarantees (then ``quota``'s premise fails)."""

    field: str
    message: str
    guarantees: bool

    def __str__(self) -> str:
        return f"warning: {self.field}: {self.message}"


def nearest_declared(env, q: int, amounts: Sequence[Optional[tuple]]) -> Optional[int]:
    """The nearest proper ancestor of queue ``q`` that declares an amount in ``amounts`` (``queue_guarantee``
    or ``queue_max``), or ``None``."""
    p = env.queue_parent(q)
    while p is not None:
        if amounts[p] is not None:
            return p
        p = env.queue_parent(p)
    return None


def _above(a: Sequence[Fraction], b: Sequence[Fraction]) -> list[int]:
    return [r for r in range(len(a)) if a[r] > b[r]]


def declaration_warnings(env) -> tuple[DeclarationWarning, ...]:
    """Every declaration of ``env``'s tree that does not add up under the subtree reading (module docstring),
    in queue order, each naming its field.  ``()`` for a flat instance or consistent declarations."""
    if not env.n_queues:
        return ()
    memo = env._memo.get("declaration_warnings")
    if memo is not None:
        return memo
    out: list[DeclarationWarning] = []
    g_, m_, R = env.queue_guarantee, env.queue_max, env.resources

    def amounts(vec, rs) -> str:
        return ", ".join(f"{R[r]} {fmt_exact(vec[r])}" for r in rs)

    for q, path in enumerate(env.queues):
        g, m = g_[q], m_[q]
        if g is not None and m is not None and _above(g, m):
            rs = _above(g, m)
            out.append(DeclarationWarning(f"queues[{q}].guarantee", f"{path}'s guarantee ({amounts(g, rs)}) is above "
                                          f"its own max ({amounts(m, rs)})", True))
        if g is not None:
            a = nearest_declared(env, q, m_)
            if a is not None and _above(g, m_[a]):
                rs = _above(g, m_[a])
                out.append(DeclarationWarning(f"queues[{q}].guarantee", f"{path}'s guarantee ({amounts(g, rs)}) is "
                                              f"above the max of its ancestor {env.queues[a]} ({amounts(m_[a], rs)})",
                                              True))
            a = nearest_declared(env, q, g_)
            if a is not None and _above(g, g_[a]):
                rs = _above(g, g_[a])
                out.append(DeclarationWarning(f"queues[{q}].guarantee", f"{path}'s guarantee ({amounts(g, rs)}) is "
                                              f"above its ancestor {env.queues[a]}'s ({amounts(g_[a], rs)})", True))
        if m is not None:
            a = nearest_declared(env, q, m_)
            if a is not None and _above(m, m_[a]):
                rs = _above(m, m_[a])
                out.append(DeclarationWarning(f"queues[{q}].max", f"{path}'s max ({amounts(m, rs)}) is above its "
                                              f"ancestor {env.queues[a]}'s ({amounts(m_[a], rs)}): never reachable",
                                              False))
    # siblings: the guaranteed queues whose nearest guaranteed ancestor is p (None: the root, against the pool)
    groups: dict[Optional[int], list[int]] = {}
    for q in range(env.n_queues):
        if g_[q] is not None:
            groups.setdefault(nearest_declared(env, q, g_), []).append(q)
    for p, members in groups.items():
        total = [sum((g_[q][r] for q in members), Fraction(0)) for r in range(len(R))]
        limit = env.total_capacity() if p is None else g_[p]
        rs = _above(total, limit)
        if not rs:
            continue
        names = ", ".join(env.queues[q] for q in members)
        if p is None:
            out.append(DeclarationWarning("queues", f"the guarantees of {names} add up to {amounts(total, rs)}, above "
                                          f"the pooled capacity ({amounts(limit, rs)})", True))
        elif len(members) > 1:  # one child above its parent is said above
            out.append(DeclarationWarning(f"queues[{p}].guarantee", f"the guarantees below {env.queues[p]} ({names}) "
                                          f"add up to {amounts(total, rs)}, above its own ({amounts(limit, rs)})",
                                          True))
    res = tuple(out)
    env._memo["declaration_warnings"] = res
    return res


def guarantees_nest(env) -> Optional[str]:
    """``None`` when every declared guarantee can be honoured at once (no warning about guarantees: siblings fit
    their parent, the top ones the pooled capacity, none is above a max); else the first such warning."""
    bad = next((w for w in declaration_warnings(env) if w.guarantees), None)
    return None if bad is None else f"{bad.field}: {bad.message}"


def held(env, x: Sequence[Sequence[Any]], users: Sequence[int], exact: bool = True) -> tuple[Any, ...]:
    """What ``users`` hold together in the allocation ``x`` (tasks per user and server), per resource, pooled
    over the servers: ``sum_j sum_s x[j][s] d[j,s,r]`` (Fractions when ``exact``, else floats)."""
    zero: Any = Fraction(0) if exact else 0.0
    out = [zero] * env.n_resources
    for j in users:
        for s, v in enumerate(x[j]):
            if v:
                d = env.d(j, s)
                for r in range(env.n_resources):
                    if d[r]:
                        out[r] += v * d[r] if exact else float(v) * float(d[r])
    return tuple(out)


def users_below(env, q: int) -> list[int]:
    """The users in queue ``q``'s subtree (its own and every descendant's), in user order."""
    return [j for j in range(env.n_users) if q in env.user_path(j)]


def free_capacity(env, x: Sequence[Sequence[Any]], exact: bool = True) -> list[list[Any]]:
    """What each server has left in the allocation ``x``: its capacity minus what every task placed there uses
    (``free[s][r]``; Fractions when ``exact``, else floats; negative where ``x`` overfills)."""
    free = [[c if exact else float(c) for c in row] for row in env.capacity]
    for j in range(env.n_users):
        for s, v in enumerate(x[j]):
            if v:
                d = env.d(j, s)
                for r in range(env.n_resources):
                    if d[r]:
                        free[s][r] -= v * d[r] if exact else float(v) * float(d[r])
    return free
