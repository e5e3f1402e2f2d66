"""The violations the seed papers themselves state, as instances + deviations (no numbers copied).

Each case names the mechanism, property/variant, the instance (an ``examples/`` file or inline), the
deviation if any, and the seed section.  ``derive(case)`` re-derives the violation from scratch:
it evaluates the property and runs its exact re-check, so a stored counterexample is always a
fresh exact computation.  ``python -m verifier.seed_cases [DIR]`` (re)writes them into the store.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Optional

from mechverify.model import parse_environment

from .properties import Deviation, Witness, get_property
from .properties.base import Certificate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class SeedCase:
    mechanism: str
    property: str
    variant: str
    source: str
    instance: Any  # path under examples/ or an inline instance dict
    deviation: Optional[dict] = None
    users: tuple[str, ...] = ()  # for properties whose witness names users (EF pair, SI user...)
    note: str = ""


def _inline(d: dict) -> dict:
    return d


# seed 001 Sec. IV-D says DRFH is not SI but prints no instance; this one was found by exhaustive
# small search (examples/001-drfh-not-si.json) and is re-derived by hand in tests/test_seed_cases.py.
CASES: list[SeedCase] = [
    SeedCase("c-drfh", "bf", "per-server", "000 Sec. II-B, Fig. 1 (C-DRFH gives 5.45/6.54, not 6/6)",
             "examples/000-fig1.json"),
    SeedCase("tsf", "bf", "per-server", "000 Sec. II-B, Fig. 1 (TSF gives 4/8, not 6/6)", "examples/000-fig1.json"),
    SeedCase("per-server-drf", "po", "fractional", "001 Sec. III-D, Figs. 1-3 (6+6 tasks vs 10+10)",
             "examples/001-fig1.json"),
    SeedCase("drfh", "si", "per-server-split", "001 Sec. IV-D (DRFH is not SI; instance found by search)",
             "examples/001-drfh-not-si.json"),
]


def optional_cases() -> list[SeedCase]:
    """Cases whose example files are added by other modules (seed 002 weighted Fig. 1, seed 004)."""
    out = []
    if os.path.exists(os.path.join(ROOT, "examples/002-fig1-weighted.json")):
        out += [SeedCase("c-drfh", "bf", "per-server", "002 Sec. II-B, Fig. 1 (weights 1,1,2)",
                         "examples/002-fig1-weighted.json"),
                SeedCase("tsf", "bf", "per-server", "002 Sec. II-B, Fig. 1 (weights 1,1,2)",
                         "examples/002-fig1-weighted.json")]
    return out


def all_cases() -> list[SeedCase]:
    try:
        from .seed_cases_004 import CASES as cases_004  # seed-004 mechanisms' stated violations
    except ImportError:
        cases_004 = []
    return CASES + optional_cases() + list(cases_004)


def load_instance(case: SeedCase):
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
