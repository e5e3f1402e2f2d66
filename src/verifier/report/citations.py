"""The seed papers behind the codes 000-004 that claims cite (``"004 Table 2 / Thm 7"``).  (What a
property's measure means is the property's own ``measure``, ``verifier.properties.base.Measure``.)

Every report expands the codes in a legend (tables stay compact); :func:`expand_codes` expands them
inline for one-off text, :func:`seed_legend` lists them.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional

__all__ = ["SEEDS", "SEED_SHORT", "seed_legend", "expand_codes", "codes_in"]

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
