"""What every property shares: deviations, witnesses, evaluations, and the ``Property`` interface.

A property is ONE object used by every engine (``check``, the Hypothesis search, the misreport
optimiser, z3).  It offers

* ``applicable(mech, env, variant)``   -> ``None`` or the reason it does not apply (premise fails);
* ``evaluate(mech, env, variant, deviation=None, exact=False)`` -> ``Evaluation``: the measure of how
  far the property fails at this instance (and deviation), and a *candidate* ``Witness`` if it fails.
  Float evaluations are only candidates;
* ``recheck(mech, witness)`` -> ``Certificate`` or ``None``: the ONLY way a candidate becomes a
  violation.  It recomputes every allocation involved in exact rational arithmetic (or, for a
  mechanism without an exact allocation, with certified intervals) and returns the exact gap.
* ``deviations(env, variant, rng)``    -> candidate deviations for SP/GSP/PM-like properties.

Measures (all "bigger is worse" except where noted, and with the violation threshold stated):
SP regret ``(u' - u)/u`` (> 0), EF max envy ratio (> 1), SI min ratio to benchmark (< 1), PO domination
factor (> 1), BF/SRF max relative shortfall from the max-min fair allocation (> 0), PM min ratio after
a departure (< 1).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Optional

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import fmt_exact, to_fraction

__all__ = ["Deviation", "Witness", "Certificate", "Evaluation", "Property", "ratio", "rel_change", "exact_or_none"]

INF = math.inf


def ratio(num: Any, den: Any) -> Any:
    """``num/den`` with ``x/0 = inf`` for ``x > 0`` and ``0/0 = 1`` (no change)."""
    if den == 0:
        return Fraction(1) if num == 0 else INF
    return num / den


def rel_change(new: Any, old: Any) -> Any:
    """Relative change ``(new - old) / old``: ``0`` when nothing changes (also ``0 -> 0``, where
    ``ratio`` would say 1), ``inf`` for ``0 -> positive``."""
    if new == old:
        return 0.0 if isinstance(new, float) or isinstance(old, float) else Fraction(0)
    return ratio(new - old, old)


def exact_or_none(v: Any) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    return fmt_exact(v)


# ---------------------------------------------------------------------- deviations
@dataclass(frozen=True)
class Report:
    """What one user reports instead of the truth (``None`` fields = truthful)."""

    user: int
    demand: Optional[tuple[Fraction, ...]] = None
    external_demand: Optional[tuple[Fraction, ...]] = None
    eligible: Optional[frozenset[int]] = None
    tasks: Any = "keep"  # "keep" | None (unbounded) | Fraction

    def apply(self, env: Environment) -> Environment:
        return env.with_user(self.user, demand=self.demand, external_demand=self.external_demand,
                             eligible=self.eligible, tasks=self.tasks)

    def to_dict(self, env: Environment) -> dict[str, Any]:
        out: dict[str, Any] = {"user": env.users[self.user]}
        if self.demand is not None:
            out["demand"] = [fmt_exact(v) for v in self.demand]
        if self.external_demand is not None:
            out["external_demand"] = [fmt_exact(v) for v in self.external_demand]
        if self.eligible is not None:
            out["eligible"] = [env.servers[s] for s in sorted(self.eligible)]
        if self.tasks != "keep":
            out["tasks"] = None if self.tasks is None else fmt_exact(self.tasks)
        return out

    @staticmethod
    def from_dict(d: dict[str, Any], env: Environment) -> "Report":
        if d.get("user") not in env.users:
            raise ValueError(f"deviation.user: unknown user {d.get('user')!r}")
        j = env.users.index(d["user"])
        demand = tuple(to_fraction(v, "deviation.demand") for v in d["demand"]) if "demand" in d else None
        ext = tuple(to_fraction(v, "deviation.external_demand") for v in d["external_demand"]) \
            if "external_demand" in d else None
        el = frozenset(env.servers.index(s) for s in d["eligible"]) if "eligible" in d else None
        tasks: Any = "keep"
        if "tasks" in d:
            tasks = None if d["tasks"] is None else to_fraction(d["tasks"], "deviation.tasks")
        return Report(j, demand, ext, el, tasks)


@dataclass(frozen=True)
class Deviation:
    """A change of the environment: misreports of one user (SP) or a coalition (GSP), or users
    leaving (PM, ``leave``)."""

    kind: str  # 'misreport' | 'leave'
    reports: tuple[Report, ...] = ()
    leave: tuple[int, ...] = ()

    def apply(self, env: Environment) -> Environment:
        if self.kind == "leave":
            keep = [j for j in range(env.n_users) if j not in self.leave]
            return env.restrict(users=keep)
        for r in self.reports:
            env = r.apply(env)
        return env

    @property
    def users(self) -> tuple[int, ...]:
        return self.leave if self.kind == "leave" else tuple(r.user for r in self.reports)

    def to_dict(self, env: Environment) -> dict[str, Any]:
        if self.kind == "leave":
            return {"kind": "leave", "users": [env.users[j] for j in self.leave]}
        return {"kind": "misreport", "reports": [r.to_dict(env) for r in self.reports]}

    @staticmethod
    def from_dict(d: Optional[dict[str, Any]], env: Environment) -> Optional["Deviation"]:
        if d is None:
            return None
        if d.get("kind") == "leave":
            return Deviation("leave", leave=tuple(env.users.index(u) for u in d["users"]))
        return Deviation("misreport", reports=tuple(Report.from_dict(r, env) for r in d["reports"]))

    def describe(self, env: Environment) -> str:
        if self.kind == "leave":
            return "users leave: " + ", ".join(env.users[j] for j in self.leave)
        parts = []
        for r in self.reports:
            bits = []
            if r.demand is not None:
                bits.append("demand " + "(" + ", ".join(fmt_exact(v) for v in r.demand) + ")")
            if r.external_demand is not None:
                bits.append("external " + "(" + ", ".join(fmt_exact(v) for v in r.external_demand) + ")")
            if r.eligible is not None:
                bits.append("eligible {" + ", ".join(env.servers[s] for s in sorted(r.eligible)) + "}")
            if r.tasks != "keep":
                bits.append("tasks " + ("unbounded" if r.tasks is None else fmt_exact(r.tasks)))
            parts.append(f"{env.users[r.user]} reports " + ", ".join(bits))
        return "; ".join(parts)


# ---------------------------------------------------------------------- results
@dataclass
class Witness:
    """A candidate violation: enough to recompute everything exactly."""

    property: str
    variant: str
    mechanism: str
    env: Environment  # the TRUE environment
    deviation: Optional[Deviation] = None
    measure: Any = None
    users: tuple[int, ...] = ()  # the users the violation is about (deviator, envious user, ...)
    detail: dict = field(default_factory=dict)


@dataclass
class Certificate:
    """An exactly re-checked violation.  ``gap > 0`` always (the exact margin of the violation)."""

    witness: Witness
    gap: Fraction  # exact margin (e.g. u' - u for SP, envy - own for EF)
    measure: Any  # exact measure (Fraction) or inf
    allocations: dict[str, Allocation]  # name -> exact allocation(s) involved
    utilities: dict[str, Any]  # name -> exact numbers involved
    robust: Optional[bool] = None  # holds for every allocation the mechanism's definition allows?
    robust_note: str = ""
    method: str = "exact"  # 'exact' | 'interval'
    summary: str = ""


@dataclass
class Evaluation:
    """Result of one property evaluation on one instance (and deviation)."""

    measure: Any  # None when not applicable
    violated: bool
    witness: Optional[Witness] = None
    note: str = ""


class Property:
    """Base class; see the module docstring."""

    name: str = ""
    title: str = ""
    variants: dict[str, str] = {}
    default_variant: str = ""
    needs_deviation: bool = False
    higher_is_worse: bool = True
    threshold: Any = 0  # violation iff measure > threshold (or < threshold when not higher_is_worse)

    def applicable(self, mech, env: Environment, variant: str) -> Optional[str]:
        return None

    def evaluate(self, mech, env: Environment, variant: str, deviation: Optional[Deviation] = None,
                 exact: bool = False, alloc: Optional[Allocation] = None) -> Evaluation:
        raise NotImplementedError

    def recheck(self, mech, witness: Witness) -> Optional[Certificate]:
        raise NotImplementedError

    def deviations(self, mech, env: Environment, variant: str, rng) -> Iterable[Deviation]:
        return ()

    def claim_variants(self, mech) -> tuple[str, ...]:
        """The variants a paper's variant-less claim about this property speaks about."""
        return tuple(self.variants)

    def variant_possible(self, setting, variant: str) -> Optional[str]:
        """``None`` if ``setting`` has instances where ``variant`` is a distinct check; else why not."""
        return None

    def canonical_variant(self, setting, variant: str) -> str:
        """The variant that performs the same check as ``variant`` in ``setting`` (itself by default)."""
        return variant

    def variant_of(self, variant: Optional[str]) -> str:
        v = variant or self.default_variant
        if v not in self.variants:
            raise ValueError(f"property {self.name}: unknown variant {v!r} (known: {', '.join(self.variants)})")
        return v

    def worse(self, a: Any, b: Any) -> bool:
        """Is measure ``a`` worse than ``b``?"""
        if b is None:
            return a is not None
        if a is None:
            return False
        return a > b if self.higher_is_worse else a < b

    def is_violation(self, measure: Any) -> bool:
        if measure is None:
            return False
        return measure > self.threshold if self.higher_is_worse else measure < self.threshold
