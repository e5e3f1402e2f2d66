"""Seed 004's stated violations (Table 2, Thms 3-4, Fig. 2, App. 9.1-9.2), re-derived exactly by
``verifier.seed_cases.derive``.  Where the paper states a failure without an instance, the instance
was found by a small exhaustive search (recorded in the example file's description)."""
from __future__ import annotations

from .seed_cases import SeedCase

_B_LIES = {"kind": "misreport", "reports": [{"user": "B", "demand": ["4"], "external_demand": ["7"]}]}

CASES = [
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
