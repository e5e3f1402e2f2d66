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
from .sp import GroupStrategyProofness, StrategyProofness

__all__ = ["PROPERTIES", "DEFAULT_PROPERTIES", "get_property", "names_help", "Certificate", "Deviation",
           "Evaluation", "Hints", "Property", "Report", "Witness"]

PROPERTIES: dict[str, Property] = {p.name: p for p in (
    StrategyProofness(), GroupStrategyProofness(), EnvyFreeness(), SharingIncentive(), ParetoOptimality(),
    BottleneckFairness(), SingleResourceFairness(), PopulationMonotonicity(), SingleServerDRF(),
)}

#: The properties audited when none are named (every registered one, in registry order).
DEFAULT_PROPERTIES: list[str] = list(PROPERTIES)


def get_property(name: str) -> Property:
    """The registered property ``name`` (``InstanceError`` naming the known ones otherwise)."""
    try:
        return PROPERTIES[name]
    except (KeyError, TypeError):  # TypeError: not a name at all (a damaged file's list or object)
        raise InstanceError(f"properties: unknown property {name!r} (known: {', '.join(PROPERTIES)})") from None


def names_help() -> str:
    """Help text of a ``--properties`` option, from the registry."""
    default = "all" if DEFAULT_PROPERTIES == list(PROPERTIES) else ",".join(DEFAULT_PROPERTIES)
    return f"comma-separated: {','.join(PROPERTIES)} (default: {default})"
