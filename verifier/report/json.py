"""JSON renderings of results (stable schemas documented in ``docs/run-json.md``): ``run`` reports,
``check`` results and ``audit`` tables."""
from __future__ import annotations

from typing import Any

from mechverify.numbers import fmt_exact, json_number

from ..results import Result
from .common import verdict_words

__all__ = ["measure_json", "cell_to_json", "report_to_json", "check_result_to_json", "audit_to_json"]


def measure_json(m: Any) -> Any:
    """A measure as a JSON float (``"inf"`` for infinity, ``None`` when unknown)."""
    if m is None:
        return None
    try:
        v = float(m)
    except (TypeError, ValueError):
        return str(m)
    if v == float("inf"):
        return "inf"
    return v


def cell_to_json(r: Result) -> dict[str, Any]:
    """One ``run`` cell (schema ``mechverify.run/1``)."""
    return {
        "property": r.property, "variant": r.variant, "claimed": r.claimed, "verdict": r.verdict,
        "counterexample": r.counterexample, "measure": measure_json(r.measure), "trials": r.trials,
        "seconds": round(r.seconds, 3),
        # extensions (stable too, documented in docs/run-json.md)
        "claim_source": r.claim_source,
        "claims": [{"status": c.status, "source": c.source, "outcome": (r.outcomes[i] if i < len(r.outcomes) else None)}
                   for i, c in enumerate(r.claims)],
        "refuted": r.refuted, "claim_status": r.claim_status(),
        "text": verdict_words(r), "note": r.note or None, "engine": r.engine or None,
        "time_to_first": None if r.time_to_first is None else round(r.time_to_first, 3),
        "wall_seconds": round(r.wall_seconds, 3),
        "wall_to_first": None if r.wall_to_first is None else round(r.wall_to_first, 3),
        "size": r.size, "minimality": (r.minimality or {}).get("status"),
        "measure_exact": (fmt_exact(r.certificate.measure) if r.certificate is not None
                          and not isinstance(r.certificate.measure, float) else None),
        "summary": r.certificate.summary if r.certificate is not None else None,
        "certified": r.certified, "domain": r.domain,
    }


def report_to_json(rep) -> dict[str, Any]:
    """A whole ``run`` report (a ``verifier.run.RunReport``)."""
    return {
        "schema": "mechverify.run/1",
        "mechanism": rep.mechanism, "seed": rep.seed, "budget": rep.budget, "domain": rep.domain,
        "results": [cell_to_json(r) for r in rep.results],
        "title": rep.title, "setting": rep.setting, "seconds": round(rep.seconds, 3),
        "wall_seconds": round(rep.wall_seconds, 3), "clock": "CPU seconds of the process (process_time)",
        "skipped": [{"property": p, "variant": v, "reason": why} for p, v, why in rep.skipped],
        "refuted": [f"{r.property}/{r.variant}" for r in rep.results if r.refuted],
    }


def check_result_to_json(r: Result) -> dict[str, Any]:
    """One ``check`` result."""
    out = {"property": r.property, "variant": r.variant, "verdict": r.verdict,
           "measure": json_number(r.measure, floats="keep"),
           "claimed": r.claimed, "claim_source": r.claim_source,
           "claims": [{"status": c.status, "source": c.source, "outside": o}
                      for c, o in zip(r.claims, r.details.get("outside", [None] * len(r.claims)))],
           "trials": r.trials, "seconds": round(r.seconds, 3), "note": r.note or None,
           "counterexample": r.counterexample, "witness": None}
    if r.certificate is not None:
        c = r.certificate
        w = c.witness
        out["witness"] = {
            "summary": c.summary, "gap": fmt_exact(c.gap), "method": c.method, "robust": c.robust,
            "users": [w.env.users[j] for j in w.users],
            "deviation": w.deviation.to_dict(w.env) if w.deviation is not None else None,
            "utilities": {k: json_number(v, floats="keep") for k, v in c.utilities.items()},
        }
    return out


def audit_to_json(result: dict[str, Any]) -> dict[str, Any]:
    """An ``audit`` (``verifier.audit.run_audit``'s result), schema ``mechverify.audit/1``."""
    from ..audit import evidence_to_json

    tables = []
    for tid, title, cols, props in result["tables"]:
        tcells = [c for c in result["cells"] if c.table == tid]
        tables.append({"id": tid, "title": title, "columns": [{"label": lab, "mechanism": n} for lab, n in cols],
                       "properties": props,
                       "cells": [{"column": c.column, "mechanism": c.mechanism, "property": c.property,
                                  "claimed": c.claimed,
                                  "claims": [{"status": st, "source": src} for st, src in c.claims],
                                  "verdict": c.verdict, "confirmed": c.confirmed, "outside_assumptions": c.outside,
                                  "refuted": c.refuted, "evidence": [evidence_to_json(e) for e in c.evidence],
                                  "also": c.also} for c in tcells]})
    return {"schema": "mechverify.audit/1", "seed": result["seed"], "budget": result["budget"],
            "store": result["store"], "seconds": result["seconds"], "tables": tables,
            "refuted": [{"mechanism": c.mechanism, "property": c.property,
                         "claim_source": "; ".join(src for st, src in c.claims if st == "holds"),
                         "counterexamples": [e.counterexample for e in c.evidence if e.verdict == "violated"]}
                        for c in result["cells"] if c.refuted]}
