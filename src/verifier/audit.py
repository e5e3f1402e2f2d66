"""``audit``: every mechanism x property, laid out as the seed papers' property tables.

Tables regenerated (rows = properties, columns = mechanisms as registered):

* **000/002 Table I** -- C-DRFH, TSF, PS-DSF (heterogeneous servers with placement constraints);
* **004 Table 2** -- CRU, MNW, DRF-alpha, TSF-alpha (each registered preset is a column), DRF-ER, TSF-ER;
* **003 Table 1**, LMM-MMS's row (PE, SI, EF, GSP);
* **001** -- the DRFH propositions (and DRFH's LP (7) form, per-server DRF);
* **policies** -- naive H-DRF, H-DRF (fractional and whole tasks), Volcano's and Mesos' DRF policies on queue
  trees and whole tasks (docs/findings.md);
* every other registered claim (DRF, CDRF, ...).

Each cell shows the paper's mark (the claim registered with the mechanism), our verdict and the evidence:
a stored counterexample that REPLAYS exactly (``verifier.store.replay``), or a fresh search (Hypothesis +
optimiser, minimised and stored), or "no violation in N trials / T s".  Any refuted claim is backed by a
stored, replayable counterexample: a violation only enters the table through the store.

Budget: ``budget`` is the wall-clock limit of the whole audit (replays included); cells a replayed
counterexample settles cost nothing, the time left is shared by the others (deviation properties weigh 2);
they run as a campaign (``verifier.campaign``: in this process, on local cores or on a Dask cluster,
resumable with a campaign directory); cells the budget does not reach are ``unknown``.
"""
from __future__ import annotations

import copy
import json
import time
from importlib import resources
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from . import claims as claims_mod
from .properties import DEFAULT_PROPERTIES, USER_PROPERTIES, get_property
from .results import Result, Verdict, verdict_text
from . import planning
from .campaign import BUDGET_NOTE, Task, execute
from .config import RunConfig
from .planning import DEVIATION_WEIGHT
from .properties import budget as bud
from .store import index, load_witness, replay

__all__ = ["TABLES", "AuditCell", "run_audit", "layout", "DEFAULT_AUDIT_BUDGET"]

DEFAULT_AUDIT_BUDGET = 300.0

#: the seed papers' tables (``audit_tables.json``, data): (table id, title, [(column label, [registered names or
#: 'prefix*'])], [properties])
TABLES: list[tuple[str, str, list[tuple[str, list[str]]], list[str]]] = [
    (t["id"], t["title"], [(c["label"], c["mechanisms"]) for c in t["columns"]], t["properties"])
    for t in json.loads(resources.files(__package__).joinpath("audit_tables.json").read_text(encoding="utf-8"))]


@dataclass
class AuditCell:
    """One cell of a seed paper's table: a mechanism x a property, with one :class:`Result` of evidence
    per variant (``Result.details``: ``covered_by_claim``, ``source`` of the evidence, ``replays``)."""

    table: str
    column: str
    mechanism: Optional[str]
    property: str
    claims: list = field(default_factory=list)  # [(status, source)], papers may disagree
    verdict: str = Verdict.UNKNOWN  # violated | certified | not_refuted | unknown | not_registered | not_applicable
    refuted: bool = False
    evidence: list[Result] = field(default_factory=list)  # per variant
    also: list[str] = field(default_factory=list)  # violations of variants the claim does not cover
    outside: bool = False  # violated, but only outside the 'holds' claim's standing assumptions
    confirmed: bool = False  # a 'fails' claim confirmed inside its assumptions

    @property
    def statuses(self) -> set:
        """The claimed statuses ('holds', 'fails')."""
        return {st for st, _ in self.claims}

    @property
    def claimed(self) -> Optional[str]:
        """'holds', 'fails', 'disputed' (papers disagree) or None."""
        st = self.statuses
        return None if not st else next(iter(st)) if len(st) == 1 else "disputed"

    def short(self) -> str:
        """The table entry: the paper's mark -> our verdict."""
        mark = {"holds": "✓", "fails": "✗", None: "–", "disputed": "✓/✗"}[self.claimed]
        if self.verdict == "not_registered":
            return "not registered"
        v = {Verdict.VIOLATED: Verdict.VIOLATED, Verdict.CERTIFIED: Verdict.CERTIFIED, Verdict.NOT_REFUTED: "not refuted",
             Verdict.UNKNOWN: Verdict.UNKNOWN, Verdict.NOT_APPLICABLE: "n/a"}[self.verdict]
        if self.verdict is Verdict.UNKNOWN and any(e.property_failed for e in self.evidence):
            v = "unknown (**the property failed**: its own code)"
        elif self.claimed == "disputed" and self.verdict in (Verdict.VIOLATED, Verdict.NOT_REFUTED):
            v = ("violated (**refutes ✓**, confirms ✗)" if self.refuted else
                 "violated outside ✓'s assumptions" if self.verdict is Verdict.VIOLATED else
                 "no violation found (✓ not refuted, ✗ not reproduced)")
        elif self.refuted:
            v = "**REFUTED**"
        elif self.outside:
            v = "violated outside the paper's assumptions"
        elif self.claimed == "fails" and self.verdict is Verdict.VIOLATED:
            v = "confirmed" if self.confirmed else "violated outside the claim's assumptions"
        elif self.claimed == "fails" and self.verdict is Verdict.NOT_REFUTED:
            v = "not reproduced"
        return f"{mark} → {v}"

    def claims_text(self) -> str:
        """The papers' claims in words."""
        return "; ".join(f"{st} [{src}]" for st, src in self.claims) if self.claims else "no claim registered"


def _resolve(patterns: Sequence[str], names: Sequence[str]) -> list[str]:
    out = []
    for p in patterns:
        if p.endswith("*"):
            out += [n for n in names if n.startswith(p[:-1]) and n not in out]
        elif p in names and p not in out:
            out.append(p)
    return out


def _file_outcomes(claims, path: str) -> list[str]:
    """Per claim: what the stored counterexample at ``path`` means for it (inside its assumptions?)."""
    return claims_mod.outcomes(claims, Verdict.VIOLATED, load_witness(path))


def layout(only: Optional[Sequence[str]] = None) -> list[tuple[str, str, list[tuple[str, Optional[str]]], list[str]]]:
    """The tables with columns resolved to registered mechanisms (None = not registered)."""
    from mechanisms import all_mechanisms

    mechs = all_mechanisms()
    names = [m.name for m in mechs if not only or m.name in only]
    used: set[str] = set()
    tables = []
    for tid, title, cols, props in TABLES:
        resolved: list[tuple[str, Optional[str]]] = []
        for label, pats in cols:
            found = _resolve(pats, names)
            used.update(found)
            if found:
                resolved += [(label if n == label.lower() else f"{label} ({n})", n) for n in found]
            elif not only:
                resolved.append((label, None))
        if resolved:
            tables.append((tid, title, resolved, props))
    others = [m for m in mechs if m.name in names and m.name not in used and m.claims]
    for m in others:
        props = []
        for c in m.claims:
            if c.property not in props:
                props.append(c.property)
        tables.append((f"other-{m.name}", f"{m.name} -- claims registered from {m.source or 'its paper'}",
                       [(m.name, m.name)], props))
    for ref in [r for r in (only or ()) if ":" in r]:  # a user's mechanism: its claims, or every property
        from mechanisms import get

        m = get(ref)
        props = [p for p in USER_PROPERTIES + DEFAULT_PROPERTIES
                 if p in USER_PROPERTIES or not m.claims or any(c.property == p for c in m.claims)]
        tables.append((f"user-{m.name}", f"{m.name} ({ref}) -- {'its claims' if m.claims else 'every property'}",
                       [(m.name, ref)], props))
    return tables


def run_audit(config: RunConfig = RunConfig(budget=DEFAULT_AUDIT_BUDGET), only: Optional[Sequence[str]] = None,
              properties: Optional[Sequence[str]] = None, fresh: bool = False) -> dict[str, Any]:
    """Fill every table cell: replay stored evidence, search the rest; all within ``config``'s budget and
    deadline (``verifier.config.RunConfig``: its store -- replayed and written --, seed, trials, executor,
    campaign directory and progress printer).  ``only``: these mechanisms (names or references); ``properties``:
    only these rows; ``fresh``: ignore the stored counterexamples."""
    from mechanisms import get

    t0 = time.perf_counter()
    cfg = config.start()
    seed, store_dir, progress = cfg.seed, cfg.store, cfg.progress
    end = cfg.deadline
    tables = layout(only)
    if properties:
        # a user's property (a reference) is a row of every table; the built-in ones only where the table has it
        own = [p for p in properties if get_property(p).ref != get_property(p).name]
        tables = [(tid, title, cols, [p for p in props if p in properties] + own) for tid, title, cols, props in tables]
        tables = [t for t in tables if t[3]]
    idx = {} if fresh else index(store_dir)
    cells: list[AuditCell] = []
    todo: list[tuple[AuditCell, str, float]] = []  # (cell, variant, weight)
    replayed: dict[str, bool] = {}
    for tid, title, cols, props in tables:
        for label, name in cols:
            for p in props:
                cell = AuditCell(tid, label, name, p)
                cells.append(cell)
                if name is None:
                    cell.verdict = "not_registered"
                    continue
                mech = get(name)
                prop = get_property(p)
                variants = [c.variant for c in planning.plan([mech], [prop]).of(mech).cells if c.prop is prop]
                if not variants:
                    cell.verdict = Verdict.NOT_APPLICABLE
                    continue
                claims = [(v, claims_mod.claims_for(mech, p, v)) for v in variants]
                for _, cs in claims:
                    for c in cs:
                        if (c.status, c.source) not in cell.claims:
                            cell.claims.append((c.status, c.source))
                for v, cs in claims:
                    ev = Result(name, p, v, claims=cs, details={"covered_by_claim": bool(cs) or not cell.claims})
                    hit, partial = None, None
                    for path in idx.get((mech.name, p, v), []):
                        if path not in replayed:
                            replayed[path] = replay(path).ok
                        if not replayed[path]:
                            continue
                        outs = _file_outcomes(cs, path)
                        if all(o in ("REFUTED", "confirmed") for o in outs):
                            hit = (path, outs)
                            break
                        partial = partial or (path, outs)
                    if hit:
                        ev.verdict, ev.counterexample, ev.outcomes = Verdict.VIOLATED, hit[0], hit[1]
                        ev.details["source"] = "stored counterexample, replayed exactly"
                    else:
                        if partial:  # violated, but outside a claim's assumptions: search inside them too
                            ev.details.update({"stored_outside": partial[0], "stored_outcomes": partial[1]})
                        ev.details["searched"] = True
                        todo.append((cell, v, DEVIATION_WEIGHT if prop.needs_deviation else 1.0))
                    cell.evidence.append(ev)
    if progress:
        settled = sum(1 for c in cells for e in c.evidence if not e.details.get("searched"))
        progress(f"audit: {len(cells)} cells, {settled} variant checks settled by replayed counterexamples, "
                 f"{len(todo)} to search")
    tasks: list[Task] = []
    by_key: dict[str, list[AuditCell]] = {}  # a mechanism in two tables: one search, both cells
    for cell, v, w in todo:
        t = Task(cell.mechanism, cell.property, v, seed=seed, max_trials=cfg.trials, weight=w, command="audit")
        if t.key not in by_key:
            tasks.append(t)
        by_key.setdefault(t.key, []).append(cell)

    def settle(task: Task, result: Result) -> None:
        for i, cell in enumerate(by_key[task.key]):
            _settle(cell, task.variant, result if i == 0 else copy.copy(result))

    def _settle(cell: AuditCell, variant: str, r: Result) -> None:
        k = next(k for k, e in enumerate(cell.evidence) if e.variant == variant)
        source = "certifier" if r.verdict is Verdict.CERTIFIED else "search" if r.note != BUDGET_NOTE else "not searched"
        r.details = dict(cell.evidence[k].details, source=source)
        cell.evidence[k] = r
        stored_outside = r.details.get("stored_outside")
        if r.verdict is not Verdict.VIOLATED and stored_outside:
            # the search found nothing inside the claims' assumptions; the stored violation outside stands
            r.details["search_text"] = verdict_text(r)
            r.details["source"] = (f"stored counterexample, replayed exactly (outside a claim's assumptions); "
                                   f"search inside them: {verdict_text(r)}")
            r.verdict, r.counterexample = Verdict.VIOLATED, stored_outside
            r.outcomes = r.details["stored_outcomes"]
        elif r.verdict is Verdict.VIOLATED and r.counterexample:
            ok = replay(r.counterexample).ok  # a refutation must be backed by a replayable file
            r.details["replays"] = ok
            if not ok:
                r.verdict, r.note = Verdict.UNKNOWN, "the stored counterexample did not replay"

    _, interrupted = execute(tasks, cfg.but(budget=max(0.0, bud.left(end))), settle)
    for cell in cells:
        if cell.verdict in ("not_registered", Verdict.NOT_APPLICABLE):
            continue
        covered = [e for e in cell.evidence if e.details["covered_by_claim"]] or cell.evidence
        vs = [e.verdict for e in covered]
        if Verdict.VIOLATED in vs:
            cell.verdict = Verdict.VIOLATED
        elif vs and all(v is Verdict.CERTIFIED for v in vs):
            cell.verdict = Verdict.CERTIFIED
        elif Verdict.NOT_REFUTED in vs or Verdict.CERTIFIED in vs:
            cell.verdict = Verdict.NOT_REFUTED
        else:
            cell.verdict = Verdict.UNKNOWN
        cell.refuted = any(e.refuted for e in covered)
        cell.outside = (cell.verdict is Verdict.VIOLATED and not cell.refuted and "holds" in cell.statuses)
        cell.confirmed = any(o == "confirmed" for e in covered for o in e.outcomes)
        cell.also = [f"{cell.property}/{e.variant} violated ({e.counterexample}), not covered by the claim"
                     for e in cell.evidence if not e.details["covered_by_claim"] and e.verdict is Verdict.VIOLATED]
    return {"tables": tables, "cells": cells, "seed": seed, "budget": cfg.budget, "store": store_dir,
            "seconds": round(time.perf_counter() - t0, 3), "fresh": fresh, "interrupted": interrupted}
