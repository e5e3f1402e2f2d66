"""Deviations: what one user reports instead of the truth (SP), what a coalition reports (GSP), users
leaving (PM).  Plain data, applied to an environment; part of the property contract (``base``)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from mechverify.model import Environment
from mechverify.numbers import InstanceError, fmt_exact

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
    def from_dict(d: Any, env: Environment, where: str = "deviation.reports[0]") -> "Report":
        """Inverse of ``to_dict`` for ``env``.  The dict comes from a file (possibly damaged or hostile):
        anything wrong is one ``InstanceError`` line naming the field (``where``)."""
        if not isinstance(d, dict):
            raise InstanceError(f"{where}: expected an object {{user, demand, ...}}, got {_show(d)}")
        user = d.get("user")
        if not isinstance(user, str) or user not in env.users:
            raise InstanceError(f"{where}.user: unknown user {_show(user)}")
        j = env.users.index(user)
        demand = _numbers(d["demand"], f"{where}.demand") if "demand" in d else None
        ext = _numbers(d["external_demand"], f"{where}.external_demand") if "external_demand" in d else None
        el = None
        if "eligible" in d:
            names = d["eligible"]
            if not isinstance(names, list) or not all(isinstance(s, str) and s in env.servers for s in names):
                raise InstanceError(f"{where}.eligible: expected a list of server names, got {_show(names)}")
            el = frozenset(env.servers.index(s) for s in names)
        tasks: Any = "keep"
        if "tasks" in d:
            tasks = None if d["tasks"] is None else _number(d["tasks"], f"{where}.tasks")
        return Report(j, demand, ext, el, tasks)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:60]}...({len(text)} characters)"


def _number(value: Any, field: str) -> Fraction:
    """A number of a stored deviation: exact, >= 0, and cheap to convert (no '1e999999')."""
    from mechverify.instances import instance_number

    f = instance_number(value, field, limits=False)
    if f < 0:
        raise InstanceError(f"{field}: must be >= 0 (got {_show(value)})")
    return f


def _numbers(values: Any, field: str) -> tuple[Fraction, ...]:
    if not isinstance(values, list):
        raise InstanceError(f"{field}: expected a list of numbers, got {_show(values)}")
    return tuple(_number(v, f"{field}[{i}]") for i, v in enumerate(values))


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
        if not isinstance(d, dict):
            raise InstanceError(f"deviation: expected an object {{kind, ...}} or null, got {_show(d)}")
        if d.get("kind") == "leave":
            users = d.get("users")
            if not isinstance(users, list) or not all(isinstance(u, str) and u in env.users for u in users):
                raise InstanceError(f"deviation.users: expected a list of user names, got {_show(users)}")
            return Deviation("leave", leave=tuple(env.users.index(u) for u in users))
        reports = d.get("reports")
        if not isinstance(reports, list):
            raise InstanceError(f"deviation.reports: expected a list of reports, got {_show(reports)}")
        return Deviation("misreport", reports=tuple(Report.from_dict(r, env, f"deviation.reports[{i}]")
                                                    for i, r in enumerate(reports)))

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
