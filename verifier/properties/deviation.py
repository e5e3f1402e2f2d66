"""Deviations: what one user reports instead of the truth (SP), what a coalition reports (GSP), users
leaving (PM).  Plain data, applied to an environment; part of the property contract (``base``)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from mechverify.model import Environment
from mechverify.numbers import fmt_exact, to_fraction

__all__ = ["Report", "Deviation"]


@dataclass(frozen=True)
class Report:
    """What one user reports instead of the truth (``None`` fields = truthful)."""

    user: int
    demand: Optional[tuple[Fraction, ...]] = None
    external_demand: Optional[tuple[Fraction, ...]] = None
    eligible: Optional[frozenset[int]] = None
    tasks: Any = "keep"  # "keep" | None (unbounded) | Fraction

    def apply(self, env: Environment) -> Environment:
        """The environment in which this user reports this instead of the truth."""
        return env.with_user(self.user, demand=self.demand, external_demand=self.external_demand,
                             eligible=self.eligible, tasks=self.tasks)

    def to_dict(self, env: Environment) -> dict[str, Any]:
        """JSON form (user and server names, exact numbers)."""
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
        """Inverse of ``to_dict`` for ``env`` (``ValueError`` for an unknown user)."""
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
        """The deviated environment (misreports applied, or the leavers removed)."""
        if self.kind == "leave":
            keep = [j for j in range(env.n_users) if j not in self.leave]
            return env.restrict(users=keep)
        for r in self.reports:
            env = r.apply(env)
        return env

    @property
    def users(self) -> tuple[int, ...]:
        """The deviating users (reporters or leavers)."""
        return self.leave if self.kind == "leave" else tuple(r.user for r in self.reports)

    def to_dict(self, env: Environment) -> dict[str, Any]:
        """JSON form (names, exact numbers)."""
        if self.kind == "leave":
            return {"kind": "leave", "users": [env.users[j] for j in self.leave]}
        return {"kind": "misreport", "reports": [r.to_dict(env) for r in self.reports]}

    @staticmethod
    def from_dict(d: Optional[dict[str, Any]], env: Environment) -> Optional["Deviation"]:
        """Inverse of ``to_dict`` for ``env`` (``None`` stays ``None``)."""
        if d is None:
            return None
        if d.get("kind") == "leave":
            return Deviation("leave", leave=tuple(env.users.index(u) for u in d["users"]))
        return Deviation("misreport", reports=tuple(Report.from_dict(r, env) for r in d["reports"]))

    def describe(self, env: Environment) -> str:
        """One line for humans: ``u1 reports demand (2, 1)``, ``users leave: u2``."""
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
