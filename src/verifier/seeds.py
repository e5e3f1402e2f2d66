"""The violations the seed papers themselves state, as instances + deviations (no numbers copied).

Each case names the mechanism, property/variant, the instance (an ``examples/`` file or inline), the
deviation if any, and the seed section.  ``derive(case)`` re-derives the violation from scratch:
it evaluates the property and runs its exact re-check, so a stored counterexample is always a
fresh exact computation.  ``python -m verifier.seeds [DIR]`` (re)writes them into the store.
Where a paper states a failure without an instance, the instance was found by a small exhaustive
search (recorded in the example file's description).
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Optional

from mechverify.instances import parse_environment

from .properties import Deviation, Witness, get_property
from .properties.base import Certificate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout (src/verifier/..)


@dataclass(frozen=True)
class SeedCase:
    """One violation a seed paper states: the mechanism, property/variant, instance, deviation, source."""

    mechanism: str
    property: str
    variant: str
    source: str
    instance: Any  # path under examples/ or an inline instance dict
    deviation: Optional[dict] = None
    users: tuple[str, ...] = ()  # for properties whose witness names users (EF pair, SI user...)
    note: str = ""


#: the cases, as data (instances are files under examples/)
CASES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds.json")


def _load_cases() -> list[SeedCase]:
    with open(CASES_FILE, encoding="utf-8") as fh:
        rows = json.load(fh)["cases"]
    return [SeedCase(r["mechanism"], r["property"], r["variant"], r["source"], r["instance"], r.get("deviation"))
            for r in rows]


CASES: list[SeedCase] = _load_cases()


def all_cases() -> list[SeedCase]:
    """Every stated violation."""
    return list(CASES)


def load_instance(case: SeedCase):
    """The case's instance as an ``Environment``."""
    if isinstance(case.instance, str):
        with open(os.path.join(ROOT, case.instance), encoding="utf-8") as fh:
            return parse_environment(json.load(fh))
    return parse_environment(case.instance)


def derive(case: SeedCase) -> Optional[Certificate]:
    """Re-derive the stated violation exactly (None if it does not hold)."""
    from mechanisms import get

    mech = get(case.mechanism)
    prop = get_property(case.property)
    env = load_instance(case)
    dev = Deviation.from_dict(case.deviation, env)
    ev = prop.evaluate(mech, env, case.variant, deviation=dev, exact=mech.setting.exact)
    if ev.violated and ev.witness is not None:
        return prop.recheck(mech, ev.witness)
    users = tuple(env.users.index(u) for u in case.users)
    return prop.recheck(mech, Witness(case.property, case.variant, case.mechanism, env, dev, None, users))


def regenerate(root: str = "counterexamples") -> list[str]:
    """Re-derive every case and store it (as printed in the paper: not minimised); returns the paths."""
    from mechanisms import get

    from .claims import claims_for
    from .store import persist

    paths = []
    for case in all_cases():
        cert = derive(case)
        if cert is None:
            raise RuntimeError(f"seed case {case.mechanism}/{case.property}: the stated violation does not hold")
        mech = get(case.mechanism)
        paths.append(persist(cert, mech, provenance={"kind": "seed", "source": case.source}, root=root,
                             minimise=False, minimality={"status": "seed instance (as printed in the paper)"},
                             claims=claims_for(mech, case.property, case.variant)).path)
    return paths


if __name__ == "__main__":  # pragma: no cover
    for p in regenerate(sys.argv[1] if len(sys.argv) > 1 else "counterexamples"):
        print(p)
