"""What seeds 000 and 002 claim about PS-DSF (they disagree on PO and SP under RDM)."""
from __future__ import annotations

from dataclasses import replace as dc_replace

from ...core.registry import Claim

__all__ = ["PSDSF_RDM_CLAIMS", "PSDSF_TDM_CLAIMS", "SETTING_NOTE", "basic_model"]


_T2 = "000 Sec. III-B Thm 2 (short version: no RDM/TDM distinction; feasibility is RDM eq. (9))"
_T3 = "002 Sec. III-B Thm 3"
_T3_PO = ("002 Sec. III-B after Thm 3: 'PS-DSF does not satisfy Pareto optimality in case of RDM. This is "
          "the reason why strategy proofness is not generally satisfied in case of RDM'")
_L1 = ("002 Lemma 1 (RDM, all d[n,r] > 0): a user cannot decrease the others' utilization by lying "
       "without decreasing its own -- weaker than SP")

PSDSF_RDM_CLAIMS = (
    # seed 000 (short version) -- all six properties, in general
    Claim("po", "holds", _T2), Claim("sp", "holds", _T2), Claim("ef", "holds", _T2),
    Claim("si", "holds", _T2, variant="per-server-split"), Claim("bf", "holds", _T2, variant="per-server"),
    Claim("srf", "holds", _T2),
    # seed 002 (long version) -- conflicts with 000 on PO and SP under RDM
    Claim("po", "fails", _T3_PO), Claim("sp", "fails", _T3_PO, note=_L1),
    Claim("ef", "holds", _T3), Claim("si", "holds", _T3, variant="per-server-split"),
    Claim("bf", "holds", _T3, variant="per-server"), Claim("srf", "holds", _T3),
)
PSDSF_TDM_CLAIMS = (
    Claim("po", "holds", _T3 + " (TDM)"), Claim("sp", "holds", _T3 + " (TDM)"), Claim("ef", "holds", _T3),
    Claim("si", "holds", _T3, variant="per-server-split"), Claim("bf", "holds", _T3, variant="per-server"),
    Claim("srf", "holds", _T3),
)


def basic_model(claims: tuple) -> tuple:
    """The theorems are proved for one demand vector per user; Sec. IV (per-server demands,
    co-processors) is an extension the papers leave to future work, so 'holds' claims do not cover it."""
    return tuple(dc_replace(c, domain=c.domain + ("uniform_demands",)) if c.status == "holds" else c for c in claims)


PSDSF_RDM_CLAIMS = basic_model(PSDSF_RDM_CLAIMS)
PSDSF_TDM_CLAIMS = basic_model(PSDSF_TDM_CLAIMS)
SETTING_NOTE = ("no external resources, no task bounds (the papers have neither); per-server demands "
                 "(Sec. IV) allowed")


