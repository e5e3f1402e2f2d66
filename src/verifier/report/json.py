"""JSON renderings of results (stable schemas documented in ``docs/run-json.md``): ``run`` reports,
``check`` results and ``audit`` tables."""
from __future__ import annotations

from typing import Any

from mechverify.numbers import fmt_exact, json_number

from ..results import Result, Verdict, describe_size, verdict_text
from .common import verdict_words

__all__ = ["measure_json", "cell_to_json", "report_to_json", "check_result_to_json", "audit_to_json",
           "evidence_to_json", "certify_json", "query_json"]


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
        **dict(certified=r.certified),  # the certification's record: a JSON field, not the verdict
        "domain": r.domain,
        **_failure_json(r),
    }


def _failure_json(r: Result) -> dict[str, Any]:
    """A property's own failure, when there was one (the key is absent otherwise)."""
    if not r.property_failure:
        return {}
    return {"property_failure": {"text": r.property_failure, "instance": r.details.get("failed_instance")}}


def report_to_json(rep) -> dict[str, Any]:
    """A whole ``run`` report (a ``verifier.run.RunReport``)."""
    return {
        "schema": "mechverify.run/1",
        "mechanism": rep.mechanism, "seed": rep.seed, "budget": rep.budget, "domain": rep.domain,
        "results": [cell_to_json(r) for r in rep.results],
        "title": rep.title, "setting": rep.setting, "seconds": round(rep.seconds, 3),
        "wall_seconds": round(rep.wall_seconds, 3), "clock": "wall-clock seconds (time.monotonic)",
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
    if r.details.get("lp_certificate"):
        out["lp_certificate"] = r.details["lp_certificate"]
    out.update(_failure_json(r))
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
                         "counterexamples": [e.counterexample for e in c.evidence if e.verdict is Verdict.VIOLATED]}
                        for c in result["cells"] if c.refuted]}


def evidence_to_json(e: Result) -> dict[str, Any]:
    """One variant's evidence of an audit cell (``AuditCell.evidence``), schema ``mechverify.audit/1``."""
    d = e.details
    out: dict[str, Any] = {"variant": e.variant, "covered_by_claim": d["covered_by_claim"],
                           "claims": [{"status": c.status, "source": c.source} for c in e.claims]}
    if not d.get("searched"):  # settled by a stored counterexample
        out.update({"verdict": e.verdict, "counterexample": e.counterexample, "outcomes": list(e.outcomes),
                    "source": d.get("source"), "seconds": 0.0, "trials": 0})
        return out
    for k in ("stored_outside", "stored_outcomes"):
        if k in d:
            out[k] = d[k]
    if "source" not in d:
        return out  # not searched
    out.update({"verdict": e.verdict, "counterexample": e.counterexample, "trials": e.trials,
                "seconds": round(e.seconds, 3), "text": d.get("search_text") or verdict_text(e),
                "note": e.note or None, "source": d.get("source"), "outcomes": list(e.outcomes)})
    if "replays" in d:
        out["replays"] = d["replays"]
    if e.certificate is not None:
        out.update({"time_to_first": round(e.time_to_first or 0, 3), "size": describe_size(e.size),
                    "minimality": (e.minimality or {}).get("status"), "summary": e.certificate.summary})
    return out


#: ``Result.details`` entries of ``certify`` that its JSON shows at the top level (or not at all)
_CERTIFY_TOP = ("cases", "cases_pruned", "control", "case_log", "provenance", "ledger", "solvers", "answers",
                "agreement")


def _solvers_json(d: dict) -> dict:
    """The solvers behind a certified verdict: their names and versions, whether they agree, and each
    one's answer per query (``verifier.engines.smt.second``)."""
    return {"solvers": d.get("solvers", [{"name": "z3"}]), "agreement": d.get("agreement"),
            "answers": d.get("answers", [])}


def certify_json(res: Result) -> dict:
    """``certify --format json``: one object (mechanism, property, variant, status, domain, seconds,
    reason, counterexample, cases, cases_pruned, control, solvers, agreement, answers, details)."""
    d = res.details
    return {"mechanism": res.mechanism, "property": res.property, "variant": res.variant,
            "status": res.verdict, "domain": res.domain, "seconds": round(res.seconds, 3),
            "reason": res.note, "counterexample": res.counterexample, "cases": d.get("cases", 0),
            "cases_pruned": d.get("cases_pruned", 0), "control": d.get("control", ""), **_solvers_json(d),
            "details": {k: v for k, v in d.items() if k not in _CERTIFY_TOP}}


def query_json(res: Result, instance: str) -> dict:
    """``query --format json``: one object (mechanism, property, variant, status, space, seconds, reason,
    counterexample, queries, instance, solvers, agreement, answers)."""
    return {"mechanism": res.mechanism, "property": res.property, "variant": res.variant,
            "status": res.verdict, "space": res.details.get("space", ""), "seconds": round(res.seconds, 3),
            "reason": res.note, "counterexample": res.counterexample, "queries": res.details.get("queries", 0),
            "instance": instance, **_solvers_json(res.details)}
