"""Seed 004's domain and the claim labels its mechanisms share."""
from __future__ import annotations

from ...core.registry import Claim, Setting

__all__ = ["SEED004_SETTING", "T2", "UNBOUNDED_NOTE", "welfare_claims"]

#: Seed 004's domain: many heterogeneous servers, RDM, external resources, task bounds n_j, weights
#: (Sec. 8); no placement constraints and no per-server demands (neither appears in the paper).
SEED004_SETTING = Setting(placement=False, external=True, bounds=True, weights=True, server_demand=False)

T2 = "004 Table 2"
UNBOUNDED_NOTE = "the theorem assumes n_j = inf for every user"


def welfare_claims(thm: str, appendix: str) -> tuple[Claim, ...]:
    """Seed 004's claims for a welfare mechanism (CRU: Thm 1, MNW: Thm 2): EF, PO and SI hold for
    unbounded users, SP fails (shown in the appendix)."""
    src = f"{T2} / {thm}"
    return (
        Claim("ef", "holds", src, variant="literal", note=UNBOUNDED_NOTE, domain=("unbounded",)),
        Claim("po", "holds", src, variant="fractional", note=UNBOUNDED_NOTE, domain=("unbounded",)),
        Claim("sp", "fails", f"{src}, {appendix}", variant="demand"),
        Claim("si", "holds", src, variant="external", note=UNBOUNDED_NOTE, domain=("unbounded",)),
    )
