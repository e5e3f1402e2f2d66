"""Properties, each ONE object used by every engine (see ``base.py`` for the interface).

``PROPERTIES`` maps a name to the object (the registry); ``DEFAULT_PROPERTIES`` are the names ``run``
and ``check`` audit when none are given; ``get_property(name)`` raises a one-line error for an unknown
name; ``names_help()`` is the ``--properties`` help text.  Adding a property: one module here and one
line below (docs/properties.md, "Adding a property").
"""
from mechverify.numbers import InstanceError

from .base import Certificate, Deviation, Evaluation, Hints, Property, Report, Witness  # noqa: F401
from .ef_si import EnvyFreeness, SharingIncentive
from .fairness import (BottleneckFairness, PopulationMonotonicity, SingleResourceFairness,  # noqa: F401
                       SingleServerDRF)
from .po import ParetoOptimality
from .runs import Runs
from .sp import GroupStrategyProofness, StrategyProofness

__all__ = ["PROPERTIES", "DEFAULT_PROPERTIES", "USER_PROPERTIES", "get_property", "names_help", "parse_cells", "Certificate", "Deviation",
           "Evaluation", "Hints", "Property", "Report", "Witness"]

PROPERTIES: dict[str, Property] = {p.name: p for p in (
    StrategyProofness(), GroupStrategyProofness(), EnvyFreeness(), SharingIncentive(), ParetoOptimality(),
    BottleneckFairness(), SingleResourceFairness(), PopulationMonotonicity(), SingleServerDRF(), Runs(),
)}

#: The properties audited when none are named (every registered one, in registry order), except ``runs``,
#: which ``run`` searches first for a user's mechanism only (``USER_PROPERTIES``).
DEFAULT_PROPERTIES: list[str] = [p for p in PROPERTIES if p != "runs"]
USER_PROPERTIES: list[str] = ["runs"]


def get_property(name: str) -> Property:
    """The registered property ``name`` (``InstanceError`` naming the known ones otherwise)."""
    try:
        return PROPERTIES[name]
    except (KeyError, TypeError):  # TypeError: not a name at all (a damaged file's list or object)
        raise InstanceError(f"properties: unknown property {name!r} (known: {', '.join(PROPERTIES)})") from None


def names_help() -> str:
    """Help text of a ``--properties`` option, from the registry."""
    return (f"comma-separated: {','.join(PROPERTIES)} (default: all but runs; a user's mechanism: all, "
            f"runs first)")


def parse_cells(names) -> tuple[list[str], dict[str, list[str]]]:
    """Property names as the API and the reports write them -- ``"sp"``, ``"sp/demand"`` (property/variant),
    a comma-separated string of them, or a sequence of such strings -- as ``(property names in order, {property:
    [variants]})``; the dict has an entry only for a property named with variants only (``"sp"`` beside
    ``"sp/demand"`` means every variant).  One-line ``InstanceError`` for an unknown property or variant, or
    for no name at all."""
    items = names.split(",") if isinstance(names, str) else list(names)
    props: list[str] = []
    chosen: dict[str, list[str]] = {}
    whole: set[str] = set()
    for item in items:
        if not isinstance(item, str):
            raise InstanceError(f"properties: expected names like 'sp' or 'sp/demand', got {item!r}")
        item = item.strip()
        if not item:
            continue
        name, _, variant = item.partition("/")
        prop = get_property(name.strip())
        if prop.name not in props:
            props.append(prop.name)
        if variant.strip():
            v = prop.variant_of(variant.strip())
            if v not in chosen.setdefault(prop.name, []):
                chosen[prop.name].append(v)
        else:
            whole.add(prop.name)
    if not props:
        raise InstanceError(f"properties: no property named (got {names!r}; known: {', '.join(PROPERTIES)})")
    return props, {p: vs for p, vs in chosen.items() if p not in whole}
