"""The seed papers behind the codes 000-004 that claims cite (``"004 Table 2 / Thm 7"``), and what each
property's measure means.

Every report expands the codes in a legend (tables stay compact); :func:`expand_codes` expands them
inline for one-off text, :func:`seed_legend` lists them.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional

__all__ = ["SEEDS", "SEED_SHORT", "seed_legend", "expand_codes", "codes_in", "MEASURES", "measure_meaning"]

#: code -> full citation
SEEDS: dict[str, str] = {
    "000": ("J. Khamse-Ashari et al., \"Per-Server Dominant-Share Fairness (PS-DSF): A Multi-Resource Fair "
            "Allocation Mechanism for Heterogeneous Servers\" (short version)"),
    "001": ("Wang, Liang, Li, \"Multi-Resource Fair Allocation in Heterogeneous Cloud Computing "
            "Systems\" (DRFH)"),
    "002": ("J. Khamse-Ashari, I. Lambadaris, G. Kesidis, B. Urgaonkar, Y. Zhao, \"Per-Server Dominant-Share "
            "Fairness (PS-DSF): A Multi-Resource Fair Allocation Mechanism for Heterogeneous Servers\", long "
            "version (arXiv)"),
    "003": ("Li et al., \"Max-Min Share-Based Mechanism for Multi-Resource Fair Allocation with Bounded Number "
            "of Tasks in Cloud Computing System\" (LMM-MMS), Mathematics, 2025"),
    "004": ("Meskar, Liang, \"Fair Multi-Resource Allocation in Heterogeneous Servers with an External "
            "Resource Type\" (TSF-ER)"),
}

#: code -> short form (authors, topic)
SEED_SHORT: dict[str, str] = {
    "000": "Khamse-Ashari et al., PS-DSF (short version)",
    "001": "Wang, Liang & Li, DRFH",
    "002": "Khamse-Ashari et al., PS-DSF (long version, arXiv)",
    "003": "Li et al., LMM-MMS (Mathematics 2025)",
    "004": "Meskar & Liang, TSF-ER (external resource type)",
}

_CODE = re.compile(r"(?<![\w/.-])(00[0-4])(?![\w.-])")


def codes_in(texts: Iterable[Optional[str]]) -> list[str]:
    """The seed codes mentioned in ``texts``, sorted."""
    found: set[str] = set()
    for t in texts:
        if t:
            found.update(_CODE.findall(t))
    return sorted(found)


def seed_legend(codes: Optional[Iterable[str]] = None, full: bool = False) -> list[tuple[str, str]]:
    """``[(code, citation)]`` for ``codes`` (default: all five), short or ``full`` citations."""
    table = SEEDS if full else SEED_SHORT
    wanted = sorted(set(codes)) if codes is not None else sorted(table)
    return [(c, table[c]) for c in wanted if c in table]


def expand_codes(text: str) -> str:
    """``"004 Table 2"`` -> ``"004 (Meskar & Liang, TSF-ER (external resource type)) Table 2"``: each code
    expanded once, at its first mention."""
    seen: set[str] = set()

    def sub(m: "re.Match[str]") -> str:
        c = m.group(1)
        if c in seen:
            return c
        seen.add(c)
        return f"{c} ({SEED_SHORT[c]})"

    return _CODE.sub(sub, text)


#: property -> (what the measure is, threshold, direction) -- the violation is ``measure > threshold``
#: for direction ">" and ``measure < threshold`` for "<" (``verifier/properties``)
MEASURES: dict[str, tuple[str, int, str]] = {
    "sp": ("the deviator's regret (u' - u)/u: relative gain in TRUE tasks from misreporting", 0, ">"),
    "gsp": ("the coalition's gain: relative change in TRUE tasks of its members after a joint misreport "
            "(violated when no member loses and one gains)", 0, ">"),
    "ef": ("the largest envy ratio: tasks a user runs with another's (weight-scaled) bundle over its own", 1, ">"),
    "si": ("the smallest ratio of a user's tasks to those of its equal-split benchmark", 1, "<"),
    "po": ("the domination factor: by how much another feasible allocation can scale up everyone's tasks", 1, ">"),
    "bf": ("the largest relative shortfall on the common bottleneck resource from its weighted max-min fair "
           "allocation", 0, ">"),
    "srf": ("the largest relative shortfall on the single resource from its weighted max-min fair "
            "allocation", 0, ">"),
    "pm": ("the smallest ratio of a remaining user's tasks after a departure to its tasks before", 1, "<"),
    "single-server-drf": ("the largest relative difference from DRF's allocation on a single server", 0, ">"),
    "runs": ("1 when the mechanism raises or returns no valid allocation on the instance (a crash), else 0", 0, ">"),
}


def measure_meaning(prop: str) -> str:
    """``"<what it is>; violated when > 0"``."""
    what, thr, d = MEASURES.get(prop, ("the property's measure", 0, ">"))
    return f"{what}; violated when {d} {thr}"
