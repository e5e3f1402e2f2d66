"""What a workload model is: named parameters with defaults and ranges, and a seeded sampler of instances.

A workload turns a ``numpy.random.Generator`` and its parameters into ONE :class:`~mechverify.model.Environment`
(``draw``), built directly (the model validates it; building it through the parser costs 5-10x more) from
numbers that lie inside the instance format's limits by construction: the tests check, for every
workload, that :func:`mechverify.instances.parse_environment` -- the one parser -- accepts each sample's
``to_dict()`` and gives back the same environment.  The same Generator state gives the same Environment.

Parameters are checked before any work (:meth:`Workload.check_params`): a bad value is ONE
``InstanceError`` line naming the flag (``--rho 1.5: must be in [0, 1)``).

A workload with time (``job_params`` not empty) also draws a JOB TRACE (:meth:`Workload.jobs`): jobs with
arrivals, task counts and per-task durations on a cluster, the JSON-ready dict a simulator reads (the
job-trace format, docs/workloads.md "Workloads with time"), its parameters checked the same way
(:meth:`Workload.check_job_params`).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from decimal import Decimal
from typing import Any, Callable, Mapping, Optional

from ..model import Environment, deferred_validation
from ..numbers import InstanceError, fmt_exact, to_fraction

__all__ = ["Param", "Workload", "flag", "trace_number"]


def flag(name: str) -> str:
    """The command-line spelling of a parameter (``"users"`` -> ``"--users"``)."""
    return "--" + name.replace("_", "-")


def trace_number(value: Fraction) -> Any:
    """An exact number as a job trace spells it: an ``int`` when whole, else its ``"p/q"`` text."""
    return int(value) if value.denominator == 1 else fmt_exact(value)


def _show(value: Any) -> str:
    if isinstance(value, Fraction):
        d = value.denominator
        while d % 2 == 0:
            d //= 2
        while d % 5 == 0:
            d //= 5
        if d == 1 and value.denominator != 1:  # a finite decimal: 0.7, not 7/10
            return format(Decimal(value.numerator) / Decimal(value.denominator), "f")
        return fmt_exact(value)
    return str(value) if isinstance(value, (int, float, str, bool)) else repr(value)


@dataclass(frozen=True)
class Param:
    """One parameter of a workload: ``kind`` ``"int"`` (an integer), ``"number"`` (an exact ``Fraction``)
    or ``"bool"``; values in ``[lo, hi]`` (``hi_open``: ``[lo, hi)``); ``note``: why the range is what it is."""

    name: str
    kind: str
    default: Any
    help: str
    lo: Any = None
    hi: Any = None
    hi_open: bool = False
    note: str = ""
    check: Optional[Callable[[Any], str]] = None  # a further condition: the message ("" = fine)

    def range_text(self) -> str:
        """``"[0, 1)"``, ``"[1, 1000]"``, ``"true or false"``."""
        if self.kind == "bool":
            return "true or false"
        return f"[{_show(self.lo)}, {_show(self.hi)}{')' if self.hi_open else ']'}"

    def describe(self) -> dict[str, Any]:
        """JSON-ready: kind, default, range, help."""
        return {"kind": self.kind, "default": _show(self.default) if self.kind == "number" else self.default,
                "range": self.range_text(), "help": self.help, **({"note": self.note} if self.note else {})}

    def convert(self, value: Any) -> Any:
        """``value`` (a number, or its text as a command line gives it) as this parameter's type, checked
        against the range; else ``InstanceError`` naming the flag."""
        where = f"{flag(self.name)} {_show(value)}"
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise InstanceError(f"{where}: must be true or false")
        try:
            v = to_fraction(value, flag(self.name))
        except InstanceError:
            raise InstanceError(f"{where}: not a number") from None
        if self.kind == "int":
            if v.denominator != 1:
                raise InstanceError(f"{where}: must be an integer in {self.range_text()}")
            v = int(v)
        too_high = v >= self.hi if self.hi_open else v > self.hi
        if v < self.lo or too_high:
            note = f" ({self.note})" if self.note else ""
            raise InstanceError(f"{where}: must be in {self.range_text()}{note}")
        more = self.check(v) if self.check is not None else ""
        if more:
            raise InstanceError(f"{where}: {more}")
        return v


class Workload:
    """A named workload model.  Subclasses set ``name``, ``title``, ``provenance`` (citation: paper and
    table, trace, licence), ``params`` and ``mechanisms`` (the registered mechanisms it is meant for: what
    its tests run it through), and implement :meth:`draw`."""

    name: str = ""
    title: str = ""
    provenance: str = ""
    params: Mapping[str, Param] = {}
    mechanisms: tuple[str, ...] = ()

    #: the parameters of :meth:`jobs` (empty: the workload draws no job traces)
    job_params: Mapping[str, Param] = {}

    def check_params(self, **kw: Any) -> dict[str, Any]:
        """Every parameter's value (``None`` or absent: its default), converted and range-checked, BEFORE any
        work; a parameter the workload does not take (given a value) or a bad value is one
        ``InstanceError`` line naming the flag."""
        return _checked(self.params, kw, f"workload {self.name!r} takes", "it takes")

    def check_job_params(self, **kw: Any) -> dict[str, Any]:
        """As :meth:`check_params`, for the parameters of :meth:`jobs` (``job_params``); a workload without
        them: one ``InstanceError`` line saying which workloads draw job traces."""
        if not self.job_params:
            timed = ", ".join(c.name for c in Workload.__subclasses__() if c.job_params)  # in definition order
            raise InstanceError(f"--workload {self.name}: draws no job traces (the workloads with time: {timed})")
        return _checked(self.job_params, kw, f"the job traces of workload {self.name!r} take", "they take")

    def jobs(self, rng, **kw: Any) -> dict[str, Any]:
        """One job trace drawn with ``rng`` (a ``numpy.random.Generator``; the same state gives the same
        dict); the parameters are checked first (:meth:`check_job_params`)."""
        values = self.check_job_params(**kw)
        return self.draw_jobs(_generator(rng), values)

    def draw_jobs(self, rng, values: Mapping[str, Any]) -> dict[str, Any]:
        """One job trace for checked ``values``: ``{"resources", "servers", "capacity", "unit": "s", "jobs":
        [{"arrival", "tasks", "duration", "demand", "name"}, ...]}``, jobs in non-decreasing arrival order,
        numbers as ``int`` or exact ``"p/q"`` text (:func:`trace_number`) or floats with a short decimal
        text."""
        raise NotImplementedError

    def draw(self, rng, values: Mapping[str, Any]) -> Environment:
        """One environment for checked ``values`` (every random number from ``rng``, in a fixed order)."""
        raise NotImplementedError

    def sample(self, rng, users: Optional[int] = None, servers: Optional[int] = None, rho: Any = None,
               **kw: Any) -> Environment:
        """One :class:`Environment` drawn with ``rng`` (a ``numpy.random.Generator``; the same state gives
        the same environment); the parameters are checked first (:meth:`check_params`)."""
        values = self.check_params(users=users, servers=servers, rho=rho, **kw)
        return self.draw(_generator(rng), values)

    def sampler(self, *, validated: bool = True, **kw: Any) -> Callable[[Any], Environment]:
        """``rng -> Environment`` with the parameters checked once (for loops over many samples).
        ``validated=False``: the draws skip the model's checks (``mechverify.model.deferred_validation``: a
        screening loop that validates what it turns into a verdict)."""
        values = self.check_params(**kw)
        if validated:
            return lambda rng: self.draw(_generator(rng), values)

        def draw(rng) -> Environment:
            with deferred_validation():
                return self.draw(_generator(rng), values)
        return draw

    def describe(self, **kw: Any) -> dict[str, Any]:
        """JSON-ready: name, title, provenance, the parameters (with their values for ``kw``, defaults
        otherwise), the mechanisms it is meant for."""
        values = self.check_params(**kw)
        out = {"name": self.name, "title": self.title, "provenance": self.provenance,
               "params": {k: {**p.describe(), "value": _show(values[k]) if p.kind == "number" else values[k]}
                          for k, p in self.params.items()},
               "mechanisms": list(self.mechanisms)}
        if self.job_params:
            out["job_params"] = {k: p.describe() for k, p in self.job_params.items()}
        return out

    def __repr__(self) -> str:
        return f"<workload {self.name}: {self.title}>"


def _checked(params: Mapping[str, Param], kw: Mapping[str, Any], who: str, they: str) -> dict[str, Any]:
    """``kw`` converted and range-checked against ``params`` (absent or ``None``: the default); an unknown
    name: ``--NAME VALUE: <who> no NAME (<they> --a, --b)``."""
    out: dict[str, Any] = {}
    for key, value in kw.items():
        if value is None:
            continue
        p = params.get(key)
        if p is None:
            takes = ", ".join(flag(k) for k in params) or "no parameters"
            raise InstanceError(f"{flag(key)} {_show(value)}: {who} no {key} ({they} {takes})")
        out[key] = p.convert(value)
    for key, p in params.items():
        if key not in out:
            out[key] = p.default
    return out


def _generator(rng):
    import numpy as np

    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(f"rng: expected a numpy.random.Generator (numpy.random.default_rng(seed)), "
                    f"got {type(rng).__name__}")
