"""THE last step of every verdict: a violation goes through the store gate (``store.persist``: minimised,
then written; no directory: minimised only) and the result records what its verdict means for each claim
covering its cell (``claims.outcomes``).  ``run`` cells, campaigns, ``check`` and ``not reached`` cells
all end here, so a result's certificate, stored file and claim outcomes always agree.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from . import claims as claims_mod
from .results import Result, Verdict
from .store import persist

__all__ = ["record", "Storing", "OUTCOMES_ONLY"]


@dataclass(frozen=True)
class Storing:
    """How :func:`record` stores a violation (``store.persist``'s arguments): ``root`` the store
    (``None``: written nowhere), ``provenance`` recorded with it, ``minimise`` it first (``False``: keep the
    certificate as found, e.g. already minimised by a worker, with its ``minimality`` record) within
    ``minimize_budget`` seconds and before ``deadline``, inside ``domain`` and what ``accept`` accepts;
    ``keep_all``: store it even when not smaller than the stored one."""

    root: Optional[str] = None
    provenance: Optional[dict] = None
    minimise: bool = True
    minimality: Optional[dict] = None
    minimize_budget: float = 15.0
    domain: Any = None
    accept: Optional[Callable] = None
    keep_all: bool = False
    deadline: Optional[float] = None


#: no store and no minimising: only the claims' outcomes are recorded
OUTCOMES_ONLY = Storing(minimise=False)


def record(r: Result, mech, storing: Storing = Storing(), claims: Optional[Sequence] = None) -> Result:
    """Record ``r`` (in place, and returned): ``claims`` (default: ``r.claims`` as they are) covering its cell;
    a violation's certificate through ``store.persist`` as ``storing`` says (with neither a directory nor
    minimising, the certificate is left as it is); then ``r.outcomes`` for the verdict.  Afterwards
    ``certificate``, ``minimality``, ``counterexample``, ``measure`` and ``size`` describe the stored
    (minimised) counterexample."""
    if claims is not None:
        r.claims = list(claims)
    st = storing
    if r.verdict is Verdict.VIOLATED and r.certificate is not None and (st.root or st.minimise):
        done = persist(r.certificate, mech, provenance=st.provenance or {"kind": "search"}, root=st.root,
                       claims=r.claims, minimise=st.minimise, minimize_budget=st.minimize_budget, domain=st.domain,
                       accept=st.accept, minimality=st.minimality, keep_all=st.keep_all, deadline=st.deadline)
        r.certificate, r.minimality = done.certificate, done.minimality
        r.counterexample, r.stored_new = done.path, done.new
        r.measure, r.size = done.certificate.measure, (done.minimality or {}).get("size", r.size)
    r.outcomes = claims_mod.outcomes(r.claims, r.verdict, r.certificate.witness if r.certificate is not None else None)
    return r
