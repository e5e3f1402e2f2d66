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

from mechverify.model import parse_environment

from .properties import Deviation, Witness, get_property
from .properties.base import Certificate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    SeedCase("c-drfh", "bf", "per-server", "002 Sec. II-B, Fig. 1 (weights 1,1,2)", "examples/002-fig1-weighted.json"),
    SeedCase("tsf", "bf", "per-server", "002 Sec. II-B, Fig. 1 (weights 1,1,2)", "examples/002-fig1-weighted.json"),
]

# seed 004 (Table 2, Thms 3-4, Fig. 2, App. 9.1-9.2)
_B_LIES = {"kind": "misreport", "reports": [{"user": "B", "demand": ["4"], "external_demand": ["7"]}]}

CASES += [
    SeedCase("cru", "sp", "demand", "004 App. 9.1 (B reports (4 CPU, 7 BW); paper: 0.832/0.647 tasks, exact 1 and 7/9)",
             "examples/004-app91-truthful.json", deviation=_B_LIES),
    SeedCase("mnw", "sp", "demand", "004 App. 9.2 (B reports (4 CPU, 7 BW): 1 task, true utility 7/9 > 5/8)",
             "examples/004-app91-truthful.json", deviation=_B_LIES),
    SeedCase("drf-eq", "po", "fractional", "004 Thm 3, Fig. 2 (DRF-eq leaves both users worse off than 5/5)",
             "examples/004-fig2.json"),
    SeedCase("tsf-cpu", "po", "fractional", "004 Thm 4, Fig. 2 (TSF-cpu is Pareto dominated)", "examples/004-fig2.json"),
    SeedCase("tsf-mem", "si", "external", "004 Thm 4, Table 2 (TSF-alpha not SI; Fig. 2 instance)",
             "examples/004-fig2.json"),
    SeedCase("drf-eq", "si", "external", "004 Thm 3, Table 2 (DRF-alpha not SI; instance by search)",
             "examples/004-drf-eq-not-si.json"),
    SeedCase("tsf-eq", "si", "external", "004 Thm 4, Table 2 (TSF-alpha not SI; instance by search)",
             "examples/004-tsf-eq-not-si.json"),
    SeedCase("drf-er", "si", "external", "004 Table 2 (DRF-ER not SI; instance by search)",
             "examples/004-drf-er-not-si.json"),
]


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
