"""Certification domains: a :class:`Shape`, its symbolic parameters (:func:`build_domain`; the domain D
of docs/z3.md: pooled capacities 1, positive demands normalised by Lemma L1, u1's misreport) and the
case split up to symmetry (:func:`dominant_cases`, :func:`canonical`).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Optional, Sequence

import z3

from mechverify.model import describe_shape

from .outcome import tick
from .symbolic import Ctx, SymEnv

__all__ = ["Shape", "Domain", "build_domain", "dominant_cases", "canonical", "case_key", "map_side",
           "MAX_VARIABLES"]

#: the largest z3 question the project builds, in variables: a ``certify`` shape or a per-instance
#: question (``instance.query_size``) needing more is refused (``certify``: before any work) or answered
#: ``unknown`` at once -- z3 holds every term in memory, and building alone would outlast any budget
MAX_VARIABLES = 200_000


@dataclass(frozen=True)
class Shape:
    """A certification shape: J users x S servers x R resources (+ K external); checked on creation."""

    users: int = 2
    servers: int = 1
    resources: int = 2
    external: int = 0

    def __post_init__(self):
        if self.users < 2:
            raise ValueError(f"--users: at least 2 (got {self.users})")
        for name, value, low in (("servers", self.servers, 1), ("resources", self.resources, 1),
                                 ("external", self.external, 0)):
            if value < low:
                raise ValueError(f"--{name}: must be >= {low} (got {value})")

    def variables(self) -> int:
        """A lower bound on the z3 variables of one certification question of this shape, counted without
        building anything: every user's demand vector, the capacities and u1's misreport (the domain's
        parameters), and one task count per user and server (the allocation); the encodings add more."""
        J, S, R, K = self.users, self.servers, self.resources, self.external
        return J * (R + K) + (S - 1) * R + (R + K) + J * S

    def describe(self) -> str:
        """``2 users x 1 server x 2 resources`` (the project's one spelling of a shape)."""
        return describe_shape(self.users, self.servers, self.resources, self.external)

    def as_dict(self) -> dict:
        """JSON-ready ``{"users", "servers", "resources", "external"}``."""
        return {"users": self.users, "servers": self.servers, "resources": self.resources, "external": self.external}


@dataclass
class Domain:
    """A built certification domain: its constraints, the symbolic truthful (and deviated) environment,
    user 1's misreport vectors, the parameters and the description stated with a certificate."""

    ctx: Ctx
    truth: SymEnv
    deviated: Optional[SymEnv]  # user 0's misreport substituted (SP); None otherwise
    misreport: Optional[tuple]  # (demand list, external list) of user 0
    params: dict  # name -> z3 var
    description: dict


def _names(prefix: str, n: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i + 1}" for i in range(n))


def _vector(ctx: Ctx, params: dict, base: str, R: int, K: int, res: Sequence[str], ext: Sequence[str],
            normalisation: str, dom: Optional[int]) -> tuple[list, list]:
    """One symbolic demand vector ``(d[0..R-1], d_er[0..K-1])``, normalised."""
    entries = []
    for i in range(R + K):
        label = f"{base}[{res[i]}]" if i < R else f"{base}_er[{ext[i - R]}]"
        entries.append(label)
    vals: list = []
    for i, label in enumerate(entries):
        if normalisation == "first" and i == 0:
            vals.append(Fraction(1))
            continue
        if normalisation == "dominant" and dom is not None and i == dom:
            vals.append(Fraction(1))
            continue
        v = z3.Real(label)
        params[label] = v
        ctx.add(v > 0)
        if normalisation == "dominant":
            ctx.add(v <= 1)
        vals.append(v)
    if normalisation == "dominant" and dom is None:
        ctx.add(z3.Or([v == 1 if isinstance(v, z3.ExprRef) else z3.BoolVal(v == 1) for v in vals]))
    return vals[:R], vals[R:]


def build_domain(shape: Shape, normalisation: str = "first", dom: Optional[tuple] = None,
                 misreport: bool = True) -> Domain:
    """Symbolic truthful environment (and user 0's symbolic misreport) for ``shape``.

    ``dom = ((i_0, ..., i_{J-1}), i_mis)`` fixes the dominant entries (``dominant`` normalisation);
    ``None`` states "the largest entry is 1" as a disjunction instead."""
    J, S, R, K = shape.users, shape.servers, shape.resources, shape.external
    ctx = Ctx()
    params: dict = {}
    res, srv, ext, usr = _names("r", R), _names("s", S), _names("e", K), _names("u", J)
    cap = [[None] * R for _ in range(S)]
    for r in range(R):
        tick(f"building the domain of {shape.describe()}")
        if S == 1:
            cap[0][r] = Fraction(1)
            continue
        acc = []
        for s in range(S - 1):
            v = z3.Real(f"c[{srv[s]},{res[r]}]")
            params[f"c[{srv[s]},{res[r]}]"] = v
            ctx.add(v > 0)
            cap[s][r] = v
            acc.append(v)
        last = 1 - z3.Sum(acc) if len(acc) > 1 else 1 - acc[0]
        ctx.add(last > 0)
        cap[S - 1][r] = last
    dem, edem = [], []
    for j in range(J):
        tick(f"building the domain of {shape.describe()} ({j} of {J} users)")
        d, e = _vector(ctx, params, f"d[{usr[j]}]", R, K, res, ext, normalisation,
                       None if dom is None else dom[0][j])
        dem.append(d)
        edem.append(e)
    truth = SymEnv(res, srv, usr, ext, cap, [Fraction(1)] * K, dem, edem, [Fraction(1)] * J,
                   [frozenset(range(S))] * J, [None] * J, dict(params),
                   unit_dominant=[True] * J if normalisation == "dominant" else None)
    deviated = mis = None
    if misreport:
        md, me = _vector(ctx, params, "mis", R, K, res, ext, normalisation, None if dom is None else dom[1])
        mis = (md, me)
        deviated = truth.with_user(0, md, me, params=dict(params))
    description = {
        "shape": shape.as_dict(),
        "capacities": "c[s,r] > 0 with sum_s c[s,r] = 1 per resource (L2); c_er = 1",
        "demands": "d[j,r] > 0 and d_er[j,k] > 0 for every user and resource; "
                   + ("d[j,r1] = 1 (L1)" if normalisation == "first" else "largest share = 1 (L1)"),
        "users": "equal weights, no placement constraints, unbounded task counts",
    }
    if misreport:
        description["misreport"] = "u1 reports any d' > 0, d'_er > 0 (normalised as the demands, L1)"
    return Domain(ctx, truth, deviated, mis, params, description)


# ---------------------------------------------------------------------- cases and symmetry
def dominant_cases(shape: Shape, misreport: bool = True) -> list:
    """Canonical dominant-entry assignments ``((i_0..i_{J-1}), i_mis)`` up to permutations of users
    2..J and of resources of one kind (compute / external) fixing user 1's dominant entry."""
    J, R, K = shape.users, shape.resources, shape.external
    n = R + K
    firsts = [0] + ([R] if K else [])
    out, seen = [], set()
    for i0 in firsts:
        groups = [[i for i in range(R) if i != i0], [R + k for k in range(K) if R + k != i0]]
        for rest in itertools.combinations_with_replacement(range(n), J - 1):
            tick(f"enumerating the dominant-entry cases ({len(out)} found)")
            for im in (range(n) if misreport else [None]):
                full = _canonical_dom(i0, rest, im, groups)
                if full not in seen:
                    seen.add(full)
                    out.append(full)
    return out


def _canonical_dom(i0: int, rest: Sequence[int], im: Optional[int], groups: Sequence[Sequence[int]]) -> tuple:
    """The representative of ``(rest, im)`` under permutations of each group of interchangeable
    resources (``i0`` is fixed): inside a group, resources are relabelled by decreasing number of
    users whose dominant entry they are, ties broken in favour of ``im``.  Two assignments in one orbit
    get the same representative: the sort key of a resource (its count, whether it is ``im``) is
    invariant, and resources with equal keys are indistinguishable."""
    cnt = {i: 0 for i in range(max([i0] + list(rest) + [im or 0] + [i for g in groups for i in g]) + 1)}
    for i in rest:
        cnt[i] += 1
    relabel = {i0: i0}
    for g in groups:
        order = sorted(g, key=lambda i: (-cnt[i], i != im, i))
        for new, old in zip(sorted(g), order):
            relabel[old] = new
    return ((i0,) + tuple(sorted(relabel[i] for i in rest)), None if im is None else relabel[im])


def map_side(case, perm: Sequence[int], family: str):
    """Apply a user permutation to one side's case (leximin order or Algorithm 1 saturation sequence)."""
    if case is None or isinstance(case, str):
        return case
    if family in ("leximin", "drf-closed-form"):
        groups, above = case
        return (tuple(tuple(sorted(perm[k] for k in g)) for g in groups), tuple(sorted(perm[k] for k in above)))
    if family == "algorithm1":
        return tuple(tuple(sorted(perm[k] for k in q)) for q in case)
    return case


def case_key(case) -> Any:
    """A totally ordered key for a (possibly nested) case."""
    if case is None:
        return (0,)
    if isinstance(case, tuple):
        return (1, tuple(case_key(c) for c in case))
    return (2, case)


def canonical(cases: Iterable[tuple], J: int, family: str) -> list:
    """Representatives of side-case tuples up to permutations of users 1..J-1."""
    seen, out = set(), []
    for c in cases:
        rep, best = None, None
        for i, p in enumerate(itertools.permutations(range(1, J))):  # lazily: (J-1)! of them
            if i % 256 == 0:
                tick(f"reducing the cases by symmetry ({len(out)} found)")
            img = tuple(map_side(side, (0,) + p, family) for side in c)
            k = case_key(img)
            if best is None or k < best:
                rep, best = img, k
        k = case_key(rep)
        if k not in seen:
            seen.add(k)
            out.append(rep)
    return out
