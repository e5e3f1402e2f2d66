"""THE planner: which (mechanism, property, variant) cells a command judges, and which it skips and why.

``run``, ``check``, ``audit``, ``rates`` and the Python API (``mechverify.run``, ``mechverify.check``,
``assert_property``) all ask :func:`plan`.  Names (of properties, variants) are resolved here, once: a plan
holds the objects.  Two rules live here and nowhere else:

* the READING: a variant is judged only when the mechanism's setting allows it
  (``Property.variant_possible``; docs/properties.md, "Readings on trees and whole tasks"); the others are
  skipped with the reason -- by ``check`` on its one instance exactly as by ``run``;
* the MECHANISM-FAILURE policy (``Property.mechanism_failure``): a user's mechanism (``Mechanism.is_users``)
  is judged for its own failures first (property ``runs``), whatever was asked -- a mechanism that crashes,
  loops or returns garbage is a finding under ``--properties ef`` too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Union

from .properties import PROPERTIES, Property, get_property

__all__ = ["Cell", "Skip", "Plan", "plan", "properties_for", "default_properties", "DEVIATION_WEIGHT"]

#: a deviation property's cell weighs this many ordinary cells when a budget is shared (docs/campaigns.md)
DEVIATION_WEIGHT = 2.0

PropertyLike = Union[str, Property]


@dataclass(frozen=True)
class Cell:
    """One question: ``mechanism`` (a ``mechanisms.Mechanism``) x ``prop`` x ``variant``."""

    mechanism: Any
    prop: Property
    variant: str

    @property
    def key(self) -> str:
        """``mechanism/property/variant``."""
        return f"{self.mechanism.name}/{self.prop.name}/{self.variant}"

    @property
    def weight(self) -> float:
        """The cell's weight when a budget is shared (a deviation property weighs :data:`DEVIATION_WEIGHT`)."""
        return DEVIATION_WEIGHT if self.prop.needs_deviation else 1.0


@dataclass(frozen=True)
class Skip:
    """A cell the plan leaves out, and why."""

    mechanism: Any
    prop: Property
    variant: str
    reason: str

    def row(self) -> tuple[str, str, str]:
        """``(property, variant, reason)`` as the reports list skipped cells."""
        return self.prop.name, self.variant, self.reason


@dataclass(frozen=True)
class Plan:
    """The cells to judge (in order) and the skipped ones."""

    cells: tuple[Cell, ...] = ()
    skipped: tuple[Skip, ...] = ()

    def of(self, mechanism: Any) -> "Plan":
        """The part of the plan about ``mechanism``."""
        return Plan(tuple(c for c in self.cells if c.mechanism is mechanism),
                    tuple(s for s in self.skipped if s.mechanism is mechanism))


def default_properties(mechanism: Any = None) -> list[Property]:
    """The properties a command judges when none are named: every registered one but those about the
    mechanism failing (which only a user's mechanism is judged for: :func:`properties_for`) -- for a
    ``mechanism``, those judged on what it is: over executions (``Property.over``) for one that steps through
    them (``Setting.dynamic``), on instances for a one-shot one (named, the others are judged or skipped
    with the reason)."""
    out = [p for p in PROPERTIES.values() if not p.mechanism_failure]
    if mechanism is not None:
        over = "execution" if getattr(mechanism.setting, "dynamic", False) else "instance"
        out = [p for p in out if p.over == over]
    return out


def properties_for(mechanism: Any, properties: Optional[Iterable[PropertyLike]] = None) -> list[Property]:
    """The properties judged for ``mechanism``: ``properties`` (names or objects; default: every default
    one), with the mechanism-failure properties first for a user's mechanism (module docstring)."""
    asked = [get_property(p) for p in properties] if properties is not None else default_properties(mechanism)
    if getattr(mechanism, "is_users", False):
        first = [p for p in PROPERTIES.values() if p.mechanism_failure]
        asked = first + [p for p in asked if not any(p.name == f.name for f in first)]
    return asked


def plan(mechanisms: Sequence[Any], properties: Optional[Iterable[PropertyLike]] = None,
         variants: Optional[dict[str, Sequence[str]]] = None, failures_first: bool = True) -> Plan:
    """The plan for ``mechanisms`` x ``properties`` (default: every default property; names or objects) --
    module docstring.  ``variants`` (``{property name: [variant, ...]}``, as ``properties.parse_cells`` gives
    it) keeps only those variants of the properties it names.  ``failures_first=False``: the asked properties
    only, for a user's mechanism too (``rates`` counts what it was asked to count)."""
    asked = None if properties is None else list(properties)
    cells: list[Cell] = []
    skipped: list[Skip] = []
    for mech in mechanisms:
        props = properties_for(mech, asked) if failures_first else [get_property(p) for p in
                                                                    (asked if asked is not None else default_properties(mech))]
        for prop in props:
            wanted = (variants or {}).get(prop.ref)
            keep = None if wanted is None else {prop.variant_of(w) for w in wanted}
            for v in (v for v in prop.variants if keep is None or v in keep):
                why = prop.variant_possible(mech.setting, v) or prop.mechanism_possible(mech, v)
                if why:
                    skipped.append(Skip(mech, prop, v, why))
                else:
                    cells.append(Cell(mech, prop, v))
    return Plan(tuple(cells), tuple(skipped))
