"""The searched space (``Domain``) and how a property narrows it (read from its ``Hints``).

A verdict always states the domain that was searched (``Domain.describe``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Union

__all__ = ["Domain", "domain_for", "narrow", "variant_possible", "premise_strategy_notes", "property_of"]


@dataclass(frozen=True)
class Domain:
    """The searched space: shapes, numbers, and which model features may appear.

    Feature flags can only *narrow* a mechanism's ``Setting`` (``domain_for`` intersects them)."""

    min_users: int = 1
    max_users: int = 3
    min_servers: int = 1
    max_servers: int = 3
    min_resources: int = 1
    max_resources: int = 3
    min_external: int = 0
    max_external: int = 1
    max_value: int = 10  # numbers in [0, max_value]
    denominators: tuple[int, ...] = (1, 2, 3, 4)
    placement: bool = True
    external: bool = True
    bounds: bool = True
    weights: bool = True
    server_demand: bool = True
    zero_demands: bool = True
    zero_capacities: bool = True
    require_bounds: bool = False  # at least one finite task bound (SI "bounded")
    all_bounded: bool = False  # every user has a task bound n_j > 0 (settings with requires_bounds, seed 003)
    max_task_bound: int = 0  # > 0: task bounds of 1 or more folded into 1..this (``Hints.max_task_bound``)
    # queue trees: drawn only when the setting accepts them (``Setting.hierarchy``; flat domains draw exactly
    # as before, byte for byte); leaves, depth and weights of the drawn trees
    hierarchy: bool = False
    min_leaves: int = 2
    max_leaves: int = 6
    max_queue_depth: int = 3
    min_queue_depth: int = 1  # every leaf at least this deep (``Hints.min_queue_depth``: nested quota trees)
    max_queue_weight: int = 4
    # states (docs/model.md "States"): a policy that exposes its order (``Setting.ordered``) may be searched on
    # instances carrying a state -- a ``usage`` and queue guarantees -- drawn only for properties that read it
    # (``Property.reads``); every other domain draws byte for byte what it drew before
    ordered: bool = False
    state: bool = False
    # declared amounts (docs/model.md "Declared amounts"): queues' guarantees and maxes on drawn trees, drawn when
    # the property or the mechanism's setting reads them (``Property.reads``, ``Setting.reads``)
    guarantees: bool = False
    maxes: bool = False

    def describe(self) -> dict[str, Any]:
        """The dict a verdict carries (JSON-ready)."""
        return {
            "users": [self.min_users, self.max_users],
            "servers": [self.min_servers, self.max_servers],
            "resources": [self.min_resources, self.max_resources],
            "external": [self.min_external, self.max_external] if self.external else [0, 0],
            "numbers": f"p/q in [0, {self.max_value}], q in {{{', '.join(map(str, self.denominators))}}}",
            "features": {"placement": self.placement, "external": self.external, "bounds": self.bounds,
                         "weights": self.weights, "per_server_demand": self.server_demand,
                         "zero_demands": self.zero_demands, "zero_capacities": self.zero_capacities,
                         **({"at_least_one_bound": True} if self.require_bounds else {}),
                         **({"every_user_bounded": True} if self.all_bounded else {}),
                         **({"queue_tree": True} if self.hierarchy else {}),
                         **({"state": True} if self.state else {}),
                         # a state draws the queues' guarantees with it (docs/model.md "States")
                         **({"guarantees": True} if self.guarantees and self.hierarchy and not self.state else {}),
                         **({"maxes": True} if self.maxes and self.hierarchy else {})},
            **({"queues": f"{self.min_leaves}-{self.max_leaves} leaf queues, depth "
                          f"{str(self.min_queue_depth) + '-' if self.min_queue_depth > 1 else '<= '}{self.max_queue_depth}, "
                          f"weights 1-{self.max_queue_weight}, users in leaves"} if self.hierarchy else {}),
        }


#: the largest number drawn for a state's instance (``Property.reads`` names ``"state"``)
STATE_MAX_VALUE = 1000


def domain_for(setting, **overrides: Any) -> Domain:
    """The default search domain of a mechanism's ``Setting`` (narrowed by ``overrides``)."""
    d = Domain(**{k: v for k, v in overrides.items() if k in Domain.__dataclass_fields__})
    kw: dict[str, Any] = {
        "placement": d.placement and setting.placement,
        "external": d.external and setting.external,
        "bounds": d.bounds and setting.bounds,
        "weights": d.weights and setting.weights,
        "server_demand": d.server_demand and setting.server_demand,
        # trees only where the setting takes them; ``hierarchy=False`` narrows a hierarchical one to flat
        "hierarchy": getattr(setting, "hierarchy", False) and overrides.get("hierarchy", True),
        "ordered": getattr(setting, "ordered", False),
    }
    reads = getattr(setting, "reads", ())  # what the mechanism reads: drawn for every property searched on it
    if kw["hierarchy"]:
        kw["guarantees"] = d.guarantees or "guarantee" in reads
        kw["maxes"] = d.maxes or "max" in reads
    if setting.single_server:
        kw["min_servers"] = kw["max_servers"] = 1
    if getattr(setting, "positive_data", False):  # demands and capacities > 0 (seed 003 Sec. 2.1)
        kw["zero_demands"] = kw["zero_capacities"] = False
    if getattr(setting, "requires_bounds", False):  # every user has n_j > 0
        kw["all_bounded"] = True
    min_r = getattr(setting, "min_resources", 1)
    if min_r > 1:
        kw["min_resources"] = max(d.min_resources, min_r)
        kw["max_resources"] = max(d.max_resources, min_r)
    max_r = getattr(setting, "max_resources", None)
    if max_r is not None:
        kw["max_resources"] = min(kw.get("max_resources", d.max_resources), max_r)
        kw["min_resources"] = min(kw.get("min_resources", d.min_resources), max_r)
    if not kw["external"]:
        kw["min_external"] = kw["max_external"] = 0
    if not setting.divisible:
        kw["max_value"] = min(d.max_value, 8)  # whole tasks are placed one by one: keep counts small
    return replace(d, **kw)



def property_of(prop: Union[str, Any]):
    """The ``Property`` object for a registered name (or the object itself)."""
    if isinstance(prop, str):
        from ...properties import get_property

        return get_property(prop)
    return prop


def narrow(dom: Domain, prop, variant: str) -> tuple[Domain, Optional[str]]:
    """The domain a property/variant is searched on, and the bottleneck-fairness premise bias (if any),
    from the property's ``Hints`` and what it ``reads`` (``prop``: a name or a ``Property``)."""
    p = property_of(prop)
    h = p.hints_for(variant)
    reads = getattr(p, "reads", ())
    if h.min_users > 1:
        dom = replace(dom, min_users=max(h.min_users, dom.min_users), max_users=max(h.min_users, dom.max_users))
    if h.one_resource:
        dom = replace(dom, min_resources=1, max_resources=1)
    if h.one_server:
        dom = replace(dom, min_servers=1, max_servers=1)
    if h.no_external:
        dom = replace(dom, min_external=0, max_external=0, external=False)
    if h.no_server_demand:
        dom = replace(dom, server_demand=False)
    if h.min_external:
        dom = replace(dom, min_external=max(h.min_external, dom.min_external),
                      max_external=max(h.min_external, dom.max_external))
    if h.require_bounds:
        dom = replace(dom, require_bounds=True)
    if h.no_queues:
        dom = replace(dom, hierarchy=False)
    if h.max_task_bound:
        dom = replace(dom, max_task_bound=h.max_task_bound)
    if h.min_queue_depth > 1 and dom.hierarchy:
        dom = replace(dom, min_queue_depth=min(h.min_queue_depth, dom.max_queue_depth),
                      min_leaves=max(dom.min_leaves, h.min_leaves), max_leaves=max(dom.max_leaves, h.min_leaves))
    if "guarantee" in reads and dom.hierarchy:
        dom = replace(dom, guarantees=True)
    if "max" in reads and dom.hierarchy:
        dom = replace(dom, maxes=True)
    if "state" in reads and dom.ordered:
        # states with magnitudes production policies meet: quotas and capacities up to 1000 next to small
        # demands (integer rounding of a ratio such as borrowed x 1000 / lendable only shows there)
        dom = replace(dom, state=True, max_value=max(dom.max_value, STATE_MAX_VALUE))
    return dom, h.dominant


def variant_possible(setting, prop, variant: str) -> Optional[str]:
    """``None`` if ``setting`` contains instances where ``prop``/``variant`` is a distinct check;
    otherwise why not (the property says: ``Property.variant_possible``)."""
    return property_of(prop).variant_possible(setting, variant)


def premise_strategy_notes() -> dict[str, str]:
    """``"property/variant" -> note`` for every registered variant whose search is biased or narrowed
    toward its premise (``Hints.premise_note``)."""
    from ...properties import PROPERTIES

    return {f"{name}/{v}": p.hints_for(v).premise_note for name, p in PROPERTIES.items() for v in p.variants
            if p.hints_for(v).premise_note}
