"""The report of ``execute`` (``verifier.execute.ExecutionReport``): the step table -- time, event, each present
user's tasks, each property's status at that step -- then one line per property (as ``check`` prints them);
and its JSON (schema ``mechverify.execution/1``)."""
from __future__ import annotations

from typing import Any, Optional

from mechverify.numbers import fmt_exact, fmt_value, is_inf, json_number

from ..results import Verdict

__all__ = ["render_execution", "execution_to_json", "step_rows"]


def _num(v: Any) -> str:
    if v is None:
        return "-"
    if is_inf(v):
        return "inf"
    return fmt_exact(v) if not isinstance(v, float) else fmt_value(v)


def _status(prop_measure, m: Any) -> str:
    """A step's status for a property with ``Measure`` ``prop_measure``: ``ok``, ``FAIL`` or ``-`` (not judged)."""
    if m is None:
        return "-"
    thr, up = prop_measure.threshold, prop_measure.direction == ">"
    bad = (m > thr) if up else (m < thr)
    if isinstance(m, float):
        bad = (m > thr + 1e-7 * max(1, abs(thr))) if up else (m < thr - 1e-7 * max(1, abs(thr)))
    return "FAIL" if bad else "ok"


def step_rows(rep) -> list[dict[str, Any]]:
    """One dict per step: index, t, until, event, tasks per present user, status per property cell."""
    from ..properties import get_property

    rows = []
    for st in rep.steps:
        row = {"step": st.index, "t": st.t, "until": st.until,
               "event": "start" if st.event is None else st.event.describe(),
               "tasks": {} if st.alloc is None else dict(zip(st.users, st.alloc.totals())),
               "note": st.note, "status": {}}
        for key, per in rep.per_step.items():
            prop = get_property(key.split("/")[0])
            row["status"][key] = _status(prop.measure, per[st.index] if st.index < len(per) else None)
        rows.append(row)
    return rows


def render_execution(rep, source: str = "", max_rows: int = 40, width: Optional[int] = None) -> str:
    """The text report (module docstring).  At most ``max_rows`` steps are printed: the first ones and every
    failing one, the rest elided with a count."""
    from .text import check_line, legend_lines

    ex = rep.execution
    lines = [f"{rep.mechanism} through {source or 'the execution'} ({ex.describe()})",
             f"run: {len(rep.steps)} steps, {'exact' if rep.exact else 'floats (violations re-derived exactly)'}"
             + (f"; {rep.note}" if rep.note else "")]
    keys = list(rep.per_step)
    codes = {k: f"P{i + 1}" for i, k in enumerate(keys)}
    rows = step_rows(rep)
    failing = {r["step"] for r in rows if any(v == "FAIL" for v in r["status"].values())}
    failing |= {r.certificate.witness.step for r in rep.results
                if r.certificate is not None and r.certificate.witness.step is not None}
    show = set(range(min(max_rows, len(rows)))) | failing
    head = f"{'step':>4}  {'t':>8}  {'event':28s}  " + "  ".join(f"{codes[k]:>4}" for k in keys) + "  tasks"
    lines += ["", head]
    hidden = 0
    for r in rows:
        if r["step"] not in show:
            hidden += 1
            continue
        if hidden:
            lines.append(f"{'':>4}  ... {hidden} step(s) not shown (--steps)")
            hidden = 0
        mark = ">" if r["step"] in failing else " "
        tasks = ", ".join(f"{u} {_num(v)}" for u, v in r["tasks"].items()) or "(nobody present)"
        ev = r["event"] if len(r["event"]) <= 28 else r["event"][:27] + "~"
        lines.append(f"{mark}{r['step']:>3}  {_num(r['t']):>8}  {ev:28s}  "
                     + "  ".join(f"{r['status'][k]:>4}" for k in keys) + f"  {tasks}"
                     + (f"  ({r['note']})" if r["note"] else ""))
    if hidden:
        lines.append(f"{'':>4}  ... {hidden} step(s) not shown (--steps)")
    if keys:
        lines.append("  " + "; ".join(f"{codes[k]} = {k}" for k in keys) + " (ok / FAIL at that step; - not judged)")
    lines.append("")
    for r in rep.results:
        lines.append(check_line(r, width).replace("on this instance", "on this execution"))
    if rep.skipped:
        lines.append("not checked: " + "; ".join(f"{p}/{v} ({why})" for p, v, why in rep.skipped))
    lines += legend_lines([c.source for r in rep.results for c in r.claims], width)
    return "\n".join(lines)


def execution_to_json(rep, source: str = "") -> dict[str, Any]:
    """Schema ``mechverify.execution/1``: the steps, the per-step statuses and every property's result."""
    from .json import check_result_to_json

    rows = step_rows(rep)
    steps = [{"step": r["step"], "t": json_number(r["t"]), "until": json_number(r["until"]), "event": r["event"],
              "tasks": {u: json_number(v, floats="keep") for u, v in r["tasks"].items()}, "status": r["status"],
              **({"note": r["note"]} if r["note"] else {})} for r in rows]
    results = []
    for r in rep.results:
        d = check_result_to_json(r)
        if r.certificate is not None:
            d["witness"]["step"] = r.certificate.witness.step
        results.append(d)
    return {"schema": "mechverify.execution/1", "mechanism": rep.mechanism, "execution": source,
            "exact": rep.exact, "seconds": round(rep.seconds, 3), "note": rep.note or None, "steps": steps,
            "results": results,
            "violations": [f"{r.property}/{r.variant}" for r in rep.results if r.verdict is Verdict.VIOLATED],
            "skipped": [{"property": p, "variant": v, "reason": why} for p, v, why in rep.skipped]}
