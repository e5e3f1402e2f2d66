"""THE last step of every verdict: a violation goes through the store gate (``store.persist``: minimised,
then written; no directory: minimised only) and the result records what its verdict means for each claim
covering its cell (``claims.outcomes``).  ``run`` cells, campaigns, ``check`` and ``not reached`` cells
all end here, so a result's certificate, stored file and claim outcomes always agree.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from . import claims as claims_mod
from .results import Result
from .store import persist

__all__ = ["record"]


def record(r: Result, mech, *, claims: Optional[Sequence] = None, root: Optional[str] = None,
           provenance: Optional[dict[str, Any]] = None, minimise: bool = True, minimality: Optional[dict] = None,
           minimize_budget: float = 15.0, domain=None, accept: Optional[Callable] = None, keep_all: bool = False,
           deadline: Optional[float] = None) -> Result:
    """Record ``r`` (in place, and returned): ``claims`` (default: ``r.claims`` as they are) covering its cell;
    a violation's certificate through ``store.persist`` (the arguments are persist's: ``root=None`` writes
    nothing; ``minimise=False`` keeps the certificate as found, e.g. already minimised by a worker, with its
    ``minimality`` record; with neither a directory nor minimising, the certificate is left as it is); then
    ``r.outcomes`` for the verdict.  Afterwards ``certificate``, ``minimality``,
    ``counterexample``, ``measure`` and ``size`` describe the stored (minimised) counterexample."""
    if claims is not None:
        r.claims = list(claims)
    if r.verdict == "violated" and r.certificate is not None and (root or minimise):
        done = persist(r.certificate, mech, provenance=provenance or {"kind": "search"}, root=root, claims=r.claims,
                       minimise=minimise, minimize_budget=minimize_budget, domain=domain, accept=accept,
                       minimality=minimality, keep_all=keep_all, deadline=deadline)
        r.certificate, r.minimality = done.certificate, done.minimality
        r.counterexample, r.stored_new = done.path, done.new
        r.measure, r.size = done.certificate.measure, (done.minimality or {}).get("size", r.size)
    r.outcomes = claims_mod.outcomes(r.claims, r.verdict, r.certificate.witness if r.certificate is not None else None)
    return r
