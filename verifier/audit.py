"""``audit``: every mechanism x property, laid out as the seed papers' property tables.

Tables regenerated (rows = properties, columns = mechanisms as registered):

* **000/002 Table I** -- C-DRFH, TSF, PS-DSF (heterogeneous servers with placement constraints);
* **004 Table 2** -- CRU, MNW, DRF-alpha, TSF-alpha (each registered preset is a column), DRF-ER, TSF-ER;
* **003 Table 1**, LMM-MMS's row (PE, SI, EF, GSP);
* **001** -- the DRFH propositions (and DRFH's LP (7) form, per-server DRF);
* every other registered claim (DRF, CDRF, ...).

Each cell shows the paper's mark (the claim registered with the mechanism), our verdict and the evidence:
a stored counterexample that REPLAYS exactly (``verifier.store.replay``), or a fresh search (Hypothesis +
optimiser, minimised and stored), or "no violation in N trials / T s".  Any refuted claim is backed by a
stored, replayable counterexample: a violation only enters the table through the store.

Budget: cells a replayed counterexample settles cost nothing; the search budget is shared by the others
(deviation properties weigh 2).
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from .engines import strategies as strat
from .minimize import describe_size
from .properties import PROPERTIES, get_property
from .engines.search import clock
from .run import DEVIATION_WEIGHT, MIN_SHARE, CellResult, claims_for, run_cell, verdict_text
from .store import DEFAULT_DIR, atomic_write_json, find_files, replay

__all__ = ["TABLES", "run_audit", "render_audit_markdown", "audit_to_json", "write_audit", "DEFAULT_AUDIT_BUDGET"]

DEFAULT_AUDIT_BUDGET = 300.0

# (table id, title, [(column label, [registered names or 'prefix*'])], [properties])
TABLES: list[tuple[str, str, list[tuple[str, list[str]]], list[str]]] = [
    ("002-table-1", "000/002 Table I -- heterogeneous servers with placement constraints",
     [("C-DRFH", ["c-drfh"]), ("TSF", ["tsf"]), ("PS-DSF", ["psdsf*", "ps-dsf*"])], ["si", "ef", "sp", "po", "bf"]),
    ("004-table-2", "004 Table 2 -- CRU, MNW, DRF-alpha, TSF-alpha, DRF-ER, TSF-ER",
     [("CRU", ["cru"]), ("MNW", ["mnw"]), ("DRF-alpha", ["drf-alpha", "drf-eq", "drf-cpu", "drf-mem"]),
      ("TSF-alpha", ["tsf-alpha", "tsf-eq", "tsf-cpu", "tsf-mem"]), ("DRF-ER", ["drf-er"]),
      ("TSF-ER", ["tsf-er", "tsf-er-maxmin"])], ["ef", "po", "sp", "si"]),
    ("003-table-1", "003 Table 1 -- LMM-MMS's row", [("LMM-MMS", ["lmm-mms*"])], ["po", "si", "ef", "gsp"]),
    ("001-claims", "001 -- DRFH's propositions (and its LP (7) form, per-server DRF)",
     [("DRFH", ["drfh"]), ("DRFH LP (7)", ["drfh-lp7"]), ("per-server DRF", ["per-server-drf"])],
     ["ef", "po", "sp", "single-server-drf", "srf", "bf", "pm", "si"]),
]


@dataclass
class AuditCell:
    table: str
    column: str
    mechanism: Optional[str]
    property: str
    claims: list = field(default_factory=list)  # [(status, source)], papers may disagree
    verdict: str = "unknown"  # violated | certified | not_refuted | unknown | not_registered | not_applicable
    refuted: bool = False
    evidence: list[dict] = field(default_factory=list)  # per variant
    also: list[str] = field(default_factory=list)  # violations of variants the claim does not cover
    outside: bool = False  # violated, but only outside the 'holds' claim's standing assumptions
    confirmed: bool = False  # a 'fails' claim confirmed inside its assumptions

    @property
    def statuses(self) -> set:
        return {st for st, _ in self.claims}

    @property
    def claimed(self) -> Optional[str]:
        st = self.statuses
        return None if not st else next(iter(st)) if len(st) == 1 else "disputed"

    def short(self) -> str:
        mark = {"holds": "✓", "fails": "✗", None: "–", "disputed": "✓/✗"}[self.claimed]
        if self.verdict == "not_registered":
            return "not registered"
        v = {"violated": "violated", "certified": "certified", "not_refuted": "not refuted",
             "unknown": "unknown", "not_applicable": "n/a"}[self.verdict]
        if self.claimed == "disputed" and self.verdict in ("violated", "not_refuted"):
            v = ("violated (**refutes ✓**, confirms ✗)" if self.refuted else
                 "violated outside ✓'s assumptions" if self.verdict == "violated" else
                 "no violation found (✓ not refuted, ✗ not reproduced)")
        elif self.refuted:
            v = "**REFUTED**"
        elif self.outside:
            v = "violated outside the paper's assumptions"
        elif self.claimed == "fails" and self.verdict == "violated":
            v = "confirmed" if self.confirmed else "violated outside the claim's assumptions"
        elif self.claimed == "fails" and self.verdict == "not_refuted":
            v = "not reproduced"
        return f"{mark} → {v}"

    def claims_text(self) -> str:
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
    """Per claim: does the stored counterexample at ``path`` lie inside the claim's assumptions?"""
    from mechverify.model import parse_environment

    from .properties import Deviation

    with open(path, encoding="utf-8") as fh:
        d = json.load(fh)
    env = parse_environment(d["environment"])
    dev = Deviation.from_dict(d.get("deviation"), env)
    envs = [env] + ([dev.apply(env)] if dev is not None and dev.kind == "misreport" else [])
    out = []
    for c in claims:
        why = next((w for w in (c.covers(e) for e in envs) if w), None) if hasattr(c, "covers") else None
        if c.status == "holds":
            out.append("REFUTED" if why is None else f"not refuted (the violation is outside the claim's domain: {why})")
        else:
            out.append("confirmed" if why is None else f"not reproduced inside the claim's domain ({why})")
    return out


def _store_index(store_dir: str) -> dict[tuple[str, str, str], list[str]]:
    idx: dict[tuple[str, str, str], list[str]] = {}
    if not store_dir or not os.path.isdir(store_dir):
        return idx
    for path in find_files([store_dir]):
        try:
            with open(path, encoding="utf-8") as fh:
                d = json.load(fh)
            idx.setdefault((d["mechanism"], d["property"], d["variant"]), []).append(path)
        except (OSError, ValueError, KeyError):
            continue
    return idx


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
    return tables


def run_audit(budget: float = DEFAULT_AUDIT_BUDGET, seed: int = 0, store_dir: str = DEFAULT_DIR,
              fresh: bool = False, only: Optional[Sequence[str]] = None,
              progress: Optional[Callable[[str], None]] = None) -> dict[str, Any]:
    from mechanisms import get

    t0 = time.perf_counter()
    tables = layout(only)
    idx = {} if fresh else _store_index(store_dir)
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
                variants = [v for v in prop.variants if not strat.variant_possible(mech.setting, p, v)]
                if not variants:
                    cell.verdict = "not_applicable"
                    continue
                claims = [(v, claims_for(mech, p, v)) for v in variants]
                for _, cs in claims:
                    for c in cs:
                        if (c.status, c.source) not in cell.claims:
                            cell.claims.append((c.status, c.source))
                for v, cs in claims:
                    ev: dict[str, Any] = {"variant": v, "covered_by_claim": bool(cs) or not cell.claims,
                                          "claims": [{"status": c.status, "source": c.source} for c in cs]}
                    hit, partial = None, None
                    for path in idx.get((name, p, v), []):
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
                        ev.update({"verdict": "violated", "counterexample": hit[0], "outcomes": hit[1],
                                   "source": "stored counterexample, replayed exactly", "seconds": 0.0, "trials": 0})
                    else:
                        if partial:  # violated, but outside a claim's assumptions: search inside them too
                            ev.update({"stored_outside": partial[0], "stored_outcomes": partial[1]})
                        todo.append((cell, v, DEVIATION_WEIGHT if PROPERTIES[p].needs_deviation else 1.0))
                    cell.evidence.append(ev)
    if progress:
        progress(f"audit: {len(cells)} cells, {sum(1 for c in cells for e in c.evidence if 'verdict' in e)} "
                 f"variant checks settled by replayed counterexamples, {len(todo)} to search")
    search_t0 = clock()
    for i, (cell, v, w) in enumerate(todo):
        left = budget - (clock() - search_t0)
        share = max(MIN_SHARE, left * w / sum(ww for _, _, ww in todo[i:]))
        mech = get(cell.mechanism)
        if progress:
            progress(f"[{i + 1}/{len(todo)}] {cell.mechanism} {cell.property}/{v} ({share:.1f} s)")
        r: CellResult = run_cell(mech, cell.property, v, budget=share, seed=seed, store_dir=store_dir,
                                 command="audit")
        ev = next(e for e in cell.evidence if e["variant"] == v)
        ev.update({"verdict": r.verdict, "counterexample": r.counterexample, "trials": r.trials,
                   "seconds": round(r.seconds, 3), "text": verdict_text(r), "note": r.note or None,
                   "source": "search" if r.verdict != "certified" else "certifier", "outcomes": r.outcomes})
        if r.verdict != "violated" and ev.get("stored_outside"):
            # the search found nothing inside the claims' assumptions; the stored violation outside stands
            ev.update({"verdict": "violated", "counterexample": ev["stored_outside"],
                       "outcomes": ev["stored_outcomes"],
                       "source": f"stored counterexample, replayed exactly (outside a claim's assumptions); "
                                 f"search inside them: {verdict_text(r)}"})
        if r.verdict == "violated":
            if r.counterexample:
                ok = replay(r.counterexample).ok  # a refutation must be backed by a replayable file
                ev["replays"] = ok
                if not ok:
                    ev["verdict"], ev["note"] = "unknown", "the stored counterexample did not replay"
            ev.update({"time_to_first": round(r.time_to_first or 0, 3), "size": describe_size(r.size),
                       "minimality": (r.minimality or {}).get("status"),
                       "summary": r.certificate.summary if r.certificate is not None else None})
        if progress:
            progress(f"        -> {verdict_text(r)}")
    for cell in cells:
        if cell.verdict in ("not_registered", "not_applicable"):
            continue
        covered = [e for e in cell.evidence if e["covered_by_claim"]] or cell.evidence
        vs = [e.get("verdict", "unknown") for e in covered]
        if "violated" in vs:
            cell.verdict = "violated"
        elif vs and all(v == "certified" for v in vs):
            cell.verdict = "certified"
        elif "not_refuted" in vs or "certified" in vs:
            cell.verdict = "not_refuted"
        else:
            cell.verdict = "unknown"
        cell.refuted = any(o == "REFUTED" for e in covered for o in (e.get("outcomes") or ()))
        cell.outside = (cell.verdict == "violated" and not cell.refuted and "holds" in cell.statuses)
        cell.confirmed = any(o == "confirmed" for e in covered for o in (e.get("outcomes") or ()))
        cell.also = [f"{cell.property}/{e['variant']} violated ({e.get('counterexample')}), not covered by the claim"
                     for e in cell.evidence if not e["covered_by_claim"] and e.get("verdict") == "violated"]
    return {"tables": tables, "cells": cells, "seed": seed, "budget": budget, "store": store_dir,
            "seconds": round(time.perf_counter() - t0, 3), "fresh": fresh}


def _evidence_text(e: dict) -> str:
    v = e.get("verdict", "unknown")
    if v == "violated":
        src = e.get("source", "")
        extra = ""
        if e.get("time_to_first") is not None and src == "search":
            extra = f"; found from scratch in {e['time_to_first']} s, minimal {e.get('size')} ({e.get('minimality')})"
        outs = "; ".join(o for o in (e.get("outcomes") or ()) if o not in ("REFUTED", "confirmed"))
        return f"{e['variant']}: violated -- {e.get('counterexample')} ({src}{extra})" + (f" [{outs}]" if outs else "")
    if v == "not_refuted":
        return f"{e['variant']}: no violation found in {e.get('trials')} trials / {e.get('seconds')} s"
    if v == "certified":
        return f"{e['variant']}: certified ({e.get('text')})"
    return f"{e['variant']}: unknown -- {e.get('note') or e.get('text') or 'not searched'}"


def render_audit_markdown(result: dict[str, Any]) -> str:
    out = ["# mechverify audit", "",
           f"seed {result['seed']}, search budget {result['budget']:g} CPU s, took {result['seconds']:.1f} s wall; "
           f"evidence store `{result['store']}`" + (" (ignored: --fresh)" if result["fresh"] else ""), "",
           "Legend: paper's mark (✓ claimed to hold, ✗ claimed to fail, – no claim registered) → our verdict. "
           "**REFUTED**: the paper says it holds and an exact, stored, replayable counterexample shows it does "
           "not. *not refuted* / *not reproduced*: no counterexample found within the budget (not a proof).", ""]
    cells = result["cells"]
    for tid, title, cols, props in result["tables"]:
        out += [f"## {title}", ""]
        out.append("| property | " + " | ".join(label for label, _ in cols) + " |")
        out.append("|---|" + "---|" * len(cols))
        for p in props:
            row = []
            for label, name in cols:
                c = next(c for c in cells if c.table == tid and c.column == label and c.property == p)
                row.append(c.short())
            out.append(f"| {p} | " + " | ".join(row) + " |")
        out += ["", "Evidence:", ""]
        for label, name in cols:
            for p in props:
                c = next(c for c in cells if c.table == tid and c.column == label and c.property == p)
                if c.verdict in ("not_registered",):
                    continue
                claim = "paper: " + c.claims_text() if c.claims else "no claim registered"
                ev = "; ".join(_evidence_text(e) for e in c.evidence) or c.verdict
                also = (" Also: " + "; ".join(c.also)) if c.also else ""
                out.append(f"- `{name}` {p} ({claim}): {ev}.{also}")
        out.append("")
    refuted = [c for c in cells if c.refuted]
    out.append("## Refuted claims")
    out.append("")
    if refuted:
        for c in refuted:
            paths = [e.get("counterexample") for e in c.evidence if e.get("verdict") == "violated"]
            src = "; ".join(src for st, src in c.claims if st == "holds")
            out.append(f"- `{c.mechanism}` {c.property}: paper [{src}] says it holds; "
                       f"counterexample(s): {', '.join(p for p in paths if p)}")
    else:
        out.append("none")
    return "\n".join(out) + "\n"


def audit_to_json(result: dict[str, Any]) -> dict[str, Any]:
    tables = []
    for tid, title, cols, props in result["tables"]:
        tcells = [c for c in result["cells"] if c.table == tid]
        tables.append({"id": tid, "title": title, "columns": [{"label": l, "mechanism": n} for l, n in cols],
                       "properties": props,
                       "cells": [{"column": c.column, "mechanism": c.mechanism, "property": c.property,
                                  "claimed": c.claimed,
                                  "claims": [{"status": st, "source": src} for st, src in c.claims],
                                  "verdict": c.verdict, "confirmed": c.confirmed, "outside_assumptions": c.outside,
                                  "refuted": c.refuted, "evidence": c.evidence, "also": c.also} for c in tcells]})
    return {"schema": "mechverify.audit/1", "seed": result["seed"], "budget": result["budget"],
            "store": result["store"], "seconds": result["seconds"], "tables": tables,
            "refuted": [{"mechanism": c.mechanism, "property": c.property,
                         "claim_source": "; ".join(src for st, src in c.claims if st == "holds"),
                         "counterexamples": [e.get("counterexample") for e in c.evidence
                                             if e.get("verdict") == "violated"]}
                        for c in result["cells"] if c.refuted]}


def write_audit(result: dict[str, Any], out_dir: str) -> list[str]:
    from .store import atomic_write_text

    md, js = os.path.join(out_dir, "audit.md"), os.path.join(out_dir, "audit.json")
    atomic_write_text(md, render_audit_markdown(result))
    atomic_write_json(js, audit_to_json(result))
    return [md, js]
