"""Symbolic environments (:class:`SymEnv`: entries are ``Fraction`` or positive z3 reals), the
constraint collector :class:`Ctx` with exact division-free ``min`` / ``max`` of ratios, and the
polytope chi(E) as rows (:func:`build_poly`).  Sign convention: docs/z3.md, "Symbolic environments".
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Iterable, Optional, Sequence, Union

import z3

from mechverify.model import Environment
from mechverify.numbers import INF, is_inf

from ...properties import budget as bud

__all__ = ["V", "is_sym", "known_zero", "Ctx", "SymEnv", "Poly", "build_poly",
           "value_of", "to_fraction_value"]

V = Union[Fraction, z3.ArithRef]


def is_sym(v: Any) -> bool:
    """``v`` is a z3 term (a parameter or an expression of parameters)."""
    return isinstance(v, z3.ExprRef)


def known_zero(v: Any) -> bool:
    """Concretely zero (a symbolic entry is positive by its domain)."""
    return (not is_sym(v)) and not is_inf(v) and v == 0


def _F(v: Any) -> Any:
    """``v`` as a ``Fraction`` unless it is symbolic or infinite."""
    if is_sym(v) or is_inf(v) or isinstance(v, Fraction):
        return v
    return Fraction(v)


def vsum(terms: Iterable[Any]) -> Any:
    """Sum of concrete/symbolic/inf terms (concrete parts folded in ``Fraction``)."""
    conc = Fraction(0)
    sym = []
    for t in terms:
        if is_inf(t):
            return INF
        if is_sym(t):
            sym.append(t)
        else:
            conc += _F(t)
    if not sym:
        return conc
    out = sym[0] if len(sym) == 1 else z3.Sum(sym)
    return out + conc if conc != 0 else out


def vmul(a: Any, b: Any) -> Any:
    """Product of concrete/symbolic terms (concrete products in ``Fraction``; ``0`` and ``1`` folded)."""
    if not is_sym(a) and not is_sym(b):
        return _F(a) * _F(b)
    if (not is_sym(a) and a == 0) or (not is_sym(b) and b == 0):
        return Fraction(0)
    if not is_sym(a) and a == 1:
        return b
    if not is_sym(b) and b == 1:
        return a
    return a * b


def to_fraction_value(v: z3.ExprRef, digits: int = 30) -> Fraction:
    """A z3 numeral (rational or algebraic) as a ``Fraction`` (algebraic: ``digits`` decimals)."""
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    if z3.is_algebraic_value(v):
        a = v.approx(digits)
        return Fraction(a.numerator_as_long(), a.denominator_as_long())
    if z3.is_int_value(v):
        return Fraction(v.as_long())
    s = z3.simplify(v)
    if s is not v and (z3.is_rational_value(s) or z3.is_algebraic_value(s)):
        return to_fraction_value(s, digits)
    raise ValueError(f"not a numeral: {v}")


def value_of(model: z3.ModelRef, v: Any, digits: int = 30) -> Any:
    """``v``'s value in ``model`` (a ``Fraction``; concrete ``v`` as it is)."""
    if not is_sym(v):
        return v
    return to_fraction_value(model.eval(v, model_completion=True), digits)


class Ctx:
    """Constraint collector with fresh-name generation (names are unique within one query)."""

    def __init__(self) -> None:
        self.cons: list = []
        self._n = 0
        self._memo: dict = {}  # identical min/max terms share one variable (e.g. both sides of an SP query)
        #: one-sided mins / maxes: only ``m <= every term`` (min) / ``m >= every term`` (max), no
        #: disjunction -- sound where the goal only needs an expression increasing in the mins and
        #: decreasing in the maxes to be LARGE (it may pick ``m`` = the true min / max)
        self.relaxed = False

    @staticmethod
    def _key(kind: str, items) -> tuple:
        return (kind,) + tuple(tuple(x.sexpr() if is_sym(x) else repr(x) for x in it) for it in items)

    def var(self, base: str) -> z3.ArithRef:
        """A fresh real variable named after ``base``."""
        self._n += 1
        return z3.Real(f"{base}!{self._n}")

    def add(self, *cs: Any) -> None:
        """Add constraints (a Python ``True`` is dropped, ``False`` becomes z3 ``False``)."""
        for c in cs:
            if isinstance(c, bool):
                if not c:
                    self.cons.append(z3.BoolVal(False))
                continue
            self.cons.append(c)

    def nonneg(self, base: str) -> z3.ArithRef:
        """A fresh variable constrained ``>= 0``."""
        v = self.var(base)
        self.add(v >= 0)
        return v

    # ------------------------------------------------------------------ exact min / max of ratios
    def min_ratio(self, pairs: Sequence[tuple[Any, Any]], base: str) -> Any:
        """``min_i num_i/den_i`` (``den_i > 0``); ``INF`` for no terms."""
        pairs = [(n, d) for n, d in pairs if not is_inf(n)]
        if not pairs:
            return INF
        return self._extreme_ratio(pairs, base, "min")

    def max_ratio(self, pairs: Sequence[tuple[Any, Any]], base: str) -> Any:
        """``max_i num_i/den_i`` (``den_i > 0``, ``num_i >= 0``); ``0`` for no terms."""
        if not pairs:
            return Fraction(0)
        return self._extreme_ratio(pairs, base, "max")

    def _extreme_ratio(self, pairs: Sequence[tuple[Any, Any]], base: str, kind: str) -> Any:
        """``min`` / ``max`` (``kind``) of a non-empty list of ratios: concrete when every term is, else
        one memoised variable ``m`` with ``m * den_i <= num_i`` (min) / ``>=`` (max) for every ``i``
        and, unless relaxed, ``OR_i m * den_i == num_i``."""
        if all(not is_sym(n) and not is_sym(d) for n, d in pairs):
            return (min if kind == "min" else max)(_F(n) / _F(d) for n, d in pairs)
        if len(pairs) == 1 and not is_sym(pairs[0][1]):
            return pairs[0][0] * (1 / _F(pairs[0][1]))
        key = self._key(kind + ("~" if self.relaxed else ""), pairs)
        if key in self._memo:
            return self._memo[key]
        m = self.var(base)
        for n, d in pairs:
            self.add(vmul(m, d) <= n if kind == "min" else vmul(m, d) >= n)
        if not self.relaxed:
            self.add(z3.Or([vmul(m, d) == n for n, d in pairs]))
        self._memo[key] = m
        return m

    def min_of(self, terms: Sequence[Any], base: str) -> Any:
        """``min`` of terms (infinite ones dropped; ``INF`` for none), exact unless relaxed."""
        terms = [t for t in terms if not is_inf(t)]
        if not terms:
            return INF
        if all(not is_sym(t) for t in terms):
            return min(_F(t) for t in terms)
        if len(terms) == 1:
            return terms[0]
        key = self._key("minof" + ("~" if self.relaxed else ""), [terms])
        if key in self._memo:
            return self._memo[key]
        m = self.var(base)
        for t in terms:
            self.add(m <= t)
        if not self.relaxed:
            self.add(z3.Or([m == t for t in terms]))
        self._memo[key] = m
        return m


# ---------------------------------------------------------------------- symbolic environments
@dataclass
class SymEnv:
    """An environment whose entries are ``Fraction`` or positive z3 reals (see the module docstring).

    ``params`` lists the parameters (name -> z3 variable) a model must assign to turn this into a
    concrete :class:`Environment` (:meth:`concrete`)."""

    resources: tuple[str, ...]
    servers: tuple[str, ...]
    users: tuple[str, ...]
    external: tuple[str, ...]
    capacity: list  # [s][r]
    external_capacity: list  # [k]
    demand: list  # [j][r]
    external_demand: list  # [j][k]
    weight: list  # [j] Fraction
    eligible: list  # [j] frozenset
    tasks: list  # [j] Optional[Fraction]
    params: dict = field(default_factory=dict)
    #: per user: the domain normalised this demand vector so that its largest share of the pooled
    #: capacity (external resources included) is exactly 1 (pooled capacities are 1 then)
    unit_dominant: Optional[list] = None

    # sizes (``Environment.n_users`` ...), in the short names the encodings' formulas use
    J = property(lambda self: len(self.users), doc="number of users")
    S = property(lambda self: len(self.servers), doc="number of servers")
    R = property(lambda self: len(self.resources), doc="number of resources")
    K = property(lambda self: len(self.external), doc="number of external resources")

    @staticmethod
    def from_env(env: Environment) -> "SymEnv":
        """The (all-concrete) symbolic twin of ``env`` (per-server demands are not encoded)."""
        if env.server_demand:
            raise ValueError("per-server demands are not encoded symbolically")
        return SymEnv(env.resources, env.servers, env.users, env.external,
                      [list(r) for r in env.capacity], list(env.external_capacity),
                      [list(d) for d in env.demand], [list(e) for e in env.external_demand],
                      list(env.weight), list(env.eligible), list(env.tasks), {})

    def with_user(self, j: int, demand: Optional[Sequence[Any]] = None,
                  external_demand: Optional[Sequence[Any]] = None,
                  eligible: Optional[frozenset] = None, params: Optional[dict] = None) -> "SymEnv":
        """A copy with user ``j``'s report replaced (and ``params`` added to the parameters)."""
        dem = [list(r) for r in self.demand]
        ext = [list(r) for r in self.external_demand]
        el = list(self.eligible)
        if demand is not None:
            dem[j] = list(demand)
        if external_demand is not None:
            ext[j] = list(external_demand)
        if eligible is not None:
            el[j] = frozenset(eligible)
        p = dict(self.params)
        p.update(params or {})
        return replace(self, demand=dem, external_demand=ext, eligible=el, params=p)

    # ------------------------------------------------------------------ structure
    def demands(self, j: int) -> list[int]:
        """Resources user ``j`` demands (support of its computational demand)."""
        return [r for r in range(self.R) if not known_zero(self.demand[j][r])]

    def ext_demands(self, j: int) -> list[int]:
        """External resources user ``j`` demands."""
        return [k for k in range(self.K) if not known_zero(self.external_demand[j][k])]

    def usable(self, j: int, s: int, placement: bool = True) -> bool:
        """``j`` may run tasks at ``s``: eligible (if placement counts) and no demanded resource
        has (concretely) zero capacity there."""
        if placement and s not in self.eligible[j]:
            return False
        return all(not known_zero(self.capacity[s][r]) for r in self.demands(j))

    def monopoly(self, ctx: Ctx, j: int, s: int, tag: str) -> Any:
        """``min_{r demanded} c[s,r]/d[j,r]`` (``INF`` if ``j`` demands nothing; 0 if a demanded
        resource has zero capacity) -- placement ignored, as ``Environment.monopoly_tasks``."""
        pairs = [(self.capacity[s][r], self.demand[j][r]) for r in self.demands(j)]
        if any(known_zero(n) for n, _ in pairs):
            return Fraction(0)
        return ctx.min_ratio(pairs, f"mono_{tag}_{j}_{s}")

    def total_capacity(self, r: int) -> Any:
        """Pooled capacity of resource ``r`` (sum over servers)."""
        return vsum(self.capacity[s][r] for s in range(self.S))

    # ------------------------------------------------------------------ models
    def concrete(self, model: z3.ModelRef, digits: int = 30, rounder=None) -> Environment:
        """The concrete environment a model describes (algebraic numbers approximated; ``rounder``
        maps every evaluated ``Fraction`` to the number actually used, e.g. a simpler rational)."""
        def ev(v):
            f = value_of(model, v, digits)
            if is_sym(v) and rounder is not None:
                f = rounder(f)
            return f
        return self.concrete_with(ev)

    def concrete_with(self, ev) -> Environment:
        """The concrete environment whose every entry is ``ev(entry)`` (``ev`` maps a symbolic entry to
        a ``Fraction`` and leaves a concrete one as it is)."""
        return Environment(
            resources=self.resources, servers=self.servers,
            capacity=tuple(tuple(ev(v) for v in row) for row in self.capacity), users=self.users,
            demand=tuple(tuple(ev(v) for v in row) for row in self.demand), external=self.external,
            external_capacity=tuple(ev(v) for v in self.external_capacity),
            external_demand=tuple(tuple(ev(v) for v in row) for row in self.external_demand),
            weight=tuple(self.weight), eligible=tuple(self.eligible), tasks=tuple(self.tasks))


# ---------------------------------------------------------------------- the polytope chi(E)
@dataclass
class Row:
    """One row ``sum coeffs[j,s] * x[j,s] <= rhs`` of a polytope."""

    coeffs: dict  # (j, s) -> V
    rhs: Any
    kind: str  # 'cap' | 'ext' | 'bound' | 'extra'


@dataclass
class Poly:
    """chi(E) as rows ``sum coeff * x[j,s] <= rhs`` over the columns ``x[j,s] >= 0``."""

    senv: SymEnv
    cols: list  # [(j, s)]
    x: dict  # (j, s) -> z3 var
    rows: list  # [Row]
    user_cols: list  # [j] -> [s]

    def total(self, j: int) -> Any:
        """User ``j``'s total tasks (sum of its columns)."""
        return vsum(self.x[(j, s)] for s in self.user_cols[j])

    def can_run(self, j: int) -> bool:
        """User ``j`` has at least one column (a server it may use)."""
        return bool(self.user_cols[j])


def build_poly(ctx: Ctx, senv: SymEnv, tag: str, placement: bool = True, external: bool = True,
               bounds: bool = True, server_external_caps: Optional[list] = None, primal: bool = True) -> Poly:
    """chi(E) (seed 004 eq. (2); ``allocation.py``): RDM rows per server and resource, external rows,
    task-bound rows; ``server_external_caps[s][k]`` adds per-server external rows (alpha splits).
    ``primal=False`` only describes the rows (for a dual certificate): no constraints on ``x``."""

    cols, x, user_cols = [], {}, [[] for _ in range(senv.J)]
    for j in range(senv.J):
        bud.tick(f"time budget exhausted while building chi(E) ({j} of {senv.J} users)")
        for s in range(senv.S):
            if senv.usable(j, s, placement):
                v = ctx.var(f"x_{tag}_{j}_{s}")
                if primal:
                    ctx.add(v >= 0)
                cols.append((j, s))
                x[(j, s)] = v
                user_cols[j].append(s)
    rows: list[Row] = []
    for s in range(senv.S):
        bud.tick(f"time budget exhausted while building chi(E) ({s} of {senv.S} servers)")
        for r in range(senv.R):
            co = {(j, s): senv.demand[j][r] for j in range(senv.J)
                  if (j, s) in x and not known_zero(senv.demand[j][r])}
            if co:
                rows.append(Row(co, senv.capacity[s][r], "cap"))
    if external:
        for k in range(senv.K):
            co = {(j, s): senv.external_demand[j][k] for (j, s) in cols
                  if not known_zero(senv.external_demand[j][k])}
            if co:
                rows.append(Row(co, senv.external_capacity[k], "ext"))
    if server_external_caps is not None:
        for s in range(senv.S):
            for k in range(senv.K):
                co = {(j, s): senv.external_demand[j][k] for j in range(senv.J)
                      if (j, s) in x and not known_zero(senv.external_demand[j][k])}
                if co:
                    rows.append(Row(co, server_external_caps[s][k], "extra"))
    if bounds:
        for j in range(senv.J):
            if senv.tasks[j] is not None and user_cols[j]:
                rows.append(Row({(j, s): Fraction(1) for s in user_cols[j]}, senv.tasks[j], "bound"))
    poly = Poly(senv, cols, x, rows, user_cols)
    if primal:
        for row in rows:
            ctx.add(vsum(vmul(c, x[col]) for col, c in row.coeffs.items()) <= row.rhs)
    return poly


def column_dual(poly: Poly, mu: Sequence[Any], col: tuple[int, int]) -> Any:
    """``(A^T mu)_col`` for the rows of ``poly``."""
    return vsum(vmul(m, row.coeffs[col]) for m, row in zip(mu, poly.rows) if col in row.coeffs)


def dual_objective(poly: Poly, mu: Sequence[Any]) -> Any:
    """``b^T mu`` for the rows of ``poly``."""
    return vsum(vmul(m, row.rhs) for m, row in zip(mu, poly.rows))
