"""Structured misreport moves: THE list of candidate reports per misreport space.

Used by ``Property.deviations`` (``check``'s deviation search) and by the misreport optimiser
(``verifier.engines.optimize``), so both try the same moves from the same factor table:

* ``demand``    -- scale one demand entry (computational or external) by a factor of ``FACTORS``, make a
  zero entry positive (``FRESH``), flatten the vector to its largest entry, scale every entry but one by
  2 or 1/2; with an ``rng``, then a few random rescalings;
* ``eligible``  -- drop or add one server; every other subset while there are at most
  ``EXHAUSTIVE_SERVERS`` servers; beyond that the ``k`` best truly eligible servers (most tasks alone)
  for every ``k``, then (with an ``rng``) random subsets;
* ``tasks``     -- another task bound: unbounded, the bound scaled by ``FACTORS``, the integers 0..10;
* ``coalition`` -- 2 or 3 users each pick one of their first demand moves; every coalition while there are
  few (``MAX_COALITIONS`` per size), else random ones;
* ``leave``     -- one user leaves.

:func:`deviations` lists one user's moves after another while there are at most ``EXHAUSTIVE_USERS`` users;
with more, it takes the users in a random order, round-robin (every user's first move, then every user's
second, ...), so that a budget that ends early has still sampled misreports of many users.

Every generator is lazy and its memory is bounded whatever the number of servers or users.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Iterator, Sequence

from mechverify.model import Environment

from .deviation import Deviation, Report

__all__ = ["FACTORS", "FRESH", "EXHAUSTIVE_SERVERS", "EXHAUSTIVE_USERS", "MAX_COALITIONS", "demand_reports",
           "eligible_reports", "task_reports", "reports", "coalitions", "leaves", "deviations"]

#: Factors a demand entry or a task bound is scaled by.
FACTORS = (Fraction(0), Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(2, 3), Fraction(3, 4),
           Fraction(4, 3), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(4), Fraction(10))
#: Values a zero demand entry is replaced by.
FRESH = (Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(5))
#: Eligible-set reports are enumerated exhaustively up to this many servers (2^6 = 64 subsets).
EXHAUSTIVE_SERVERS = 6
#: One user's moves after another up to this many users; beyond, round-robin over a random order of users.
EXHAUSTIVE_USERS = 8
#: Coalitions of one size enumerated exhaustively up to this many; beyond, this many random ones.
MAX_COALITIONS = 64
#: Random moves per user (with an ``rng``): demand rescalings, eligible subsets.
N_RANDOM = 8


def _demand_report(env: Environment, j: int, d: Sequence[Fraction], e: Sequence[Fraction]) -> Report:
    return Report(j, demand=tuple(d), external_demand=tuple(e) if env.n_external else None)


def _simple_fraction(rng, lo: float = 0.25, hi: float = 4.0) -> Fraction:
    return Fraction(rng.uniform(lo, hi)).limit_denominator(8) or Fraction(1, 8)


def _unique(gen: Iterator[Report]) -> Iterator[Report]:
    seen: set = set()
    for rep in gen:
        if rep not in seen:
            seen.add(rep)
            yield rep


def demand_reports(env: Environment, j: int, rng=None, n_random: int = N_RANDOM) -> Iterator[Report]:
    """Demand misreports of user ``j``: the structured moves, then ``n_random`` random rescalings when an
    ``rng`` (``random.Random``) is given.  Never the truthful report; no duplicates."""
    return _unique(_demand_moves(env, j, rng, n_random))


def _demand_moves(env: Environment, j: int, rng, n_random: int) -> Iterator[Report]:
    d, e = list(env.demand[j]), list(env.external_demand[j])
    vecs = [(d, "d", r) for r in range(len(d))] + [(e, "e", k) for k in range(len(e))]
    for vec, kind, i in vecs:
        for v in ([vec[i] * f for f in FACTORS] if vec[i] > 0 else FRESH):
            nd, ne = list(d), list(e)
            (nd if kind == "d" else ne)[i] = v
            if nd != d or ne != e:
                yield _demand_report(env, j, nd, ne)
    top = max(d)
    if top > 0 and any(v != top for v in d):
        yield _demand_report(env, j, [top] * len(d), e)  # flatten to the largest entry
    for r in range(len(d)):  # scale everything but one resource ("inflate the others")
        for f in (Fraction(2), Fraction(1, 2)):
            nd = [v * f if i != r else v for i, v in enumerate(d)]
            if nd != d:
                yield _demand_report(env, j, nd, e)
    if rng is None:
        return
    for _ in range(n_random):
        nd = [v * _simple_fraction(rng) if v else (Fraction(0) if rng.random() < 0.7 else _simple_fraction(rng))
              for v in d]
        ne = [v * _simple_fraction(rng) if v else v for v in e]
        if nd != d or ne != e:
            yield _demand_report(env, j, nd, ne)


def eligible_reports(env: Environment, j: int, rng=None, n_random: int = N_RANDOM) -> Iterator[Report]:
    """Eligible-set misreports of user ``j`` (module docstring); lazy, memory ``O(servers)``."""
    S, true = env.n_servers, env.eligible[j]

    def subsets() -> Iterator[frozenset]:
        for s in range(S):
            yield frozenset(true ^ {s})  # drop or add one server
        if S <= EXHAUSTIVE_SERVERS:
            for mask in range(1 << S):
                yield frozenset(s for s in range(S) if mask >> s & 1)
            return
        best = sorted(true, key=lambda s: (-env.gamma(j, s), s))
        for k in range(1, len(best)):
            yield frozenset(best[:k])  # keep only the k best servers
        if rng is not None:
            for _ in range(n_random):
                yield frozenset(s for s in range(S) if rng.random() < 0.5)

    seen = {true}  # at most 2^EXHAUSTIVE_SERVERS, or 2 S + n_random, sets
    for fs in subsets():
        if fs not in seen:
            seen.add(fs)
            yield Report(j, eligible=fs)


def task_reports(env: Environment, j: int, rng=None) -> Iterator[Report]:
    """Task-count misreports of user ``j``: unbounded, the bound scaled by ``FACTORS``, 0..10."""
    n = env.tasks[j]
    base = n if n is not None else Fraction(1)
    opts: list[Any] = [None] if n is not None else []
    opts += [base * f for f in FACTORS] + [Fraction(v) for v in range(0, 11)]
    return _unique(Report(j, tasks=v) for v in opts if v != n)


def reports(kind: str, env: Environment, j: int, rng=None) -> Iterator[Report]:
    """The one-user misreports of deviation kind ``kind`` (``demand``, ``eligible`` or ``tasks``)."""
    gen = {"demand": demand_reports, "eligible": eligible_reports, "tasks": task_reports}[kind]
    return gen(env, j, rng)


def coalitions(env: Environment, rng, max_size: int = 3, per_user: int = 6, draws: int = 6) -> Iterator[Deviation]:
    """Coalitions of 2..``max_size`` users, each member reporting one of its first ``per_user`` demand
    moves (``draws`` random combinations per coalition; ``rng`` is a ``random.Random``)."""
    J = env.n_users
    for size in range(2, min(J, max_size) + 1):
        if math.comb(J, size) <= MAX_COALITIONS:
            groups: Iterator[tuple[int, ...]] = itertools.combinations(range(J), size)
        else:
            groups = (tuple(sorted(rng.sample(range(J), size))) for _ in range(MAX_COALITIONS))
        for coal in groups:
            moves = {j: list(itertools.islice(demand_reports(env, j), per_user)) for j in coal}
            for _ in range(draws):
                reps = tuple(rng.choice(moves[j]) for j in coal if moves[j])
                if len(reps) == size:
                    yield Deviation("misreport", reps)


def leaves(env: Environment) -> Iterator[Deviation]:
    """One user leaves (each in turn)."""
    for k in range(env.n_users):
        yield Deviation("leave", leave=(k,))


def deviations(kind: str, env: Environment, rng) -> Iterator[Deviation]:
    """Every structured deviation of ``kind`` (``Hints.deviation``) at ``env``; none for ``"none"``."""
    if kind == "coalition":
        yield from coalitions(env, rng)
    elif kind == "leave":
        if env.n_users <= EXHAUSTIVE_USERS or rng is None:
            yield from leaves(env)
        else:
            order = list(range(env.n_users))
            rng.shuffle(order)
            yield from (Deviation("leave", leave=(k,)) for k in order)
    elif kind != "none":
        users = list(range(env.n_users))
        if len(users) <= EXHAUSTIVE_USERS or rng is None:
            for j in users:
                for rep in reports(kind, env, j, rng):
                    yield Deviation("misreport", (rep,))
            return
        rng.shuffle(users)
        gens = [reports(kind, env, j, rng) for j in users]
        while gens:
            alive = []
            for g in gens:
                rep = next(g, None)
                if rep is not None:
                    alive.append(g)
                    yield Deviation("misreport", (rep,))
            gens = alive
