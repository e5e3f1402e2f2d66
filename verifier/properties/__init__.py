"""Properties, each ONE object used by every engine (see ``base.py`` for the interface).

``PROPERTIES`` maps a name to the object; ``get_property(name)`` raises a one-line error for an
unknown name.
"""
from mechverify.numbers import InstanceError

from .base import Certificate, Deviation, Evaluation, Property, Report, Witness  # noqa: F401
from .ef_si import EnvyFreeness, SharingIncentive
from .fairness import (BottleneckFairness, PopulationMonotonicity, SingleResourceFairness,  # noqa: F401
                       SingleServerDRF)
from .po import ParetoOptimality
from .sp import GroupStrategyProofness, StrategyProofness

PROPERTIES: dict[str, Property] = {p.name: p for p in (
    StrategyProofness(), GroupStrategyProofness(), EnvyFreeness(), SharingIncentive(), ParetoOptimality(),
    BottleneckFairness(), SingleResourceFairness(), PopulationMonotonicity(), SingleServerDRF(),
)}


def get_property(name: str) -> Property:
    try:
        return PROPERTIES[name]
    except KeyError:
        raise InstanceError(f"properties: unknown property {name!r} (known: {', '.join(PROPERTIES)})") from None
