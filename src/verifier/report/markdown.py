"""Markdown renderings: ``run`` reports (and ``audit`` tables, ``verifier.audit``)."""
from __future__ import annotations

from typing import Any

from ..results import Result, Verdict, describe_size, verdict_text
from .citations import codes_in, seed_legend
from .common import (ClaimWords, claim_words, closing_line, detail, domain_text, property_failure_lines, property_failures, property_label, runs_findings,
                     verdict_words)

__all__ = ["render_markdown", "render_audit_markdown", "markdown_legend"]


def markdown_legend(texts) -> list[str]:
    """``Sources: **000** ...; **004** ...`` for the seed codes mentioned in ``texts`` (empty if none)."""
    codes = codes_in(texts)
    if not codes:
        return []
    return ["", "Sources: " + "; ".join(f"**{c}** = {cite}" for c, cite in seed_legend(codes, full=True)) + "."]


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def render_markdown(rep) -> str:
    """A ``run`` report as Markdown (a GitHub-ready table)."""
    out = [f"# mechverify run: `{rep.mechanism}`", "",
           f"*{rep.title}*", "",
           f"- setting: {rep.setting}",
           f"- domain searched: {domain_text(rep.domain)}",
           f"- seed {rep.seed}, budget {rep.budget:g} s (wall clock), took {rep.seconds:.1f} s", "",
           f"| property/variant | {claim_words(rep).column} | verdict | claim | details |",
           "|---|---|---|---|---|"]
    for r in rep.results:
        status = f"**{r.claim_status()}**" if r.refuted else r.claim_status()
        det = detail(r) or (r.note or "")
        out.append(f"| {r.property}/{r.variant} | {_md_escape(r.claims_text())} | {_md_escape(verdict_words(r))} | "
                   f"{status} | {_md_escape(det)} |")
    if rep.skipped:
        out += ["", "Not searched: " + "; ".join(f"{p}/{v} ({why})" for p, v, why in rep.skipped)]
    refuted = [r for r in rep.results if r.refuted]
    out.append("")
    if refuted:
        out.append("## Claims refuted")
        out += [f"- **{r.property}/{r.variant}**: {claim_words(rep).says('; '.join(r.refuted_sources()))}; "
                f"{verdict_words(r)}" for r in refuted]
        out += [f"- **{r.property}/{r.variant}**: the mechanism failed (an exception or an invalid output); "
                f"{verdict_words(r)}" for r in runs_findings(rep.results)]
    else:
        line = closing_line(rep)
        out.append(line[0].upper() + line[1:] + ".")
    for r in property_failures(rep.results):
        first, *rest = property_failure_lines(r)
        out += ["", f"**{_md_escape(first)}**"] + [f"`{ln}`" for ln in rest]
    traces = [r for r in rep.results if r.certificate is not None and r.certificate.witness.execution is not None]
    if traces:
        out += ["", "## Trace counterexamples"]
        for r in traces:
            out += trace_markdown(rep.mechanism, r)
    out += markdown_legend([r.claims_text() for r in rep.results] + [rep.title])
    return "\n".join(out) + "\n"


def trace_markdown(mechanism: str, r: Result) -> list[str]:
    """A trace counterexample in Markdown: what fails, the failing step (its time span from an exact re-run),
    the misreport, the users present at 0 and every event (t, event)."""
    from mechverify.numbers import fmt_exact

    from .timeline import trace_steps

    w = r.certificate.witness
    ex = w.execution
    out = ["", f"### {r.property}/{r.variant}", "", f"*{_md_escape(r.certificate.summary)}*", ""]
    if r.counterexample:
        out.append(f"- stored: `{r.counterexample}`")
    out.append(f"- execution: {ex.describe()}")
    if w.step is None:
        out.append("- failing step: none in particular (the property judges the whole run)")
    else:
        span = ""
        try:
            st = trace_steps(mechanism, ex)[w.step]
            span = f", time [{fmt_exact(st.t)}, {fmt_exact(st.until)}) {ex.unit}"
        except Exception:  # noqa: BLE001 - the index alone still says which step
            pass
        out.append(f"- failing step: {w.step}{span}")
    if w.deviation is not None and hasattr(w.deviation, "describe"):
        what = "resubmission" if w.deviation.kind == "trace-resubmission" else "misreport"
        out.append(f"- {what}: {_md_escape(w.deviation.describe())}")
    start = ", ".join(f"{u.name} ({', '.join(fmt_exact(v) for v in u.demand)})" for u in ex.users) or "nobody"
    out += [f"- present at 0: {_md_escape(start)}", "", f"| t ({ex.unit}) | event |", "|---|---|"]
    out += [f"| {fmt_exact(e.t)} | {_md_escape(e.describe())} |" for e in ex.events]
    return out


def _evidence_text(e: Result) -> str:
    v, src = e.verdict, e.details.get("source", "")
    if v is Verdict.VIOLATED:
        extra = ""
        if e.time_to_first is not None and src == "search":
            extra = (f"; found from scratch in {round(e.time_to_first, 3)} s, minimal {describe_size(e.size)} "
                     f"({(e.minimality or {}).get('status')})")
        outs = "; ".join(o for o in e.outcomes if o not in ("REFUTED", "confirmed"))
        return f"{e.variant}: violated -- {e.counterexample} ({src}{extra})" + (f" [{outs}]" if outs else "")
    if v is Verdict.NOT_REFUTED:
        return f"{e.variant}: no violation found in {e.trials} trials / {round(e.seconds, 3)} s"
    if v is Verdict.CERTIFIED:
        return f"{e.variant}: certified ({verdict_words(e)})"
    return f"{e.variant}: unknown -- {e.note or (verdict_text(e) if src else 'not searched')}"


def render_audit_markdown(result: dict[str, Any]) -> str:
    """An audit as Markdown: each seed table (paper's mark -> verdict), evidence per cell, refuted claims."""
    out = ["# mechverify audit", "",
           f"seed {result['seed']}, budget {result['budget']:g} s (wall clock), took {result['seconds']:.1f} s wall; "
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
            out.append(f"| {property_label(p)} | " + " | ".join(row) + " |")
        out += ["", "Evidence:", ""]
        for label, name in cols:
            for p in props:
                c = next(c for c in cells if c.table == tid and c.column == label and c.property == p)
                if c.verdict in ("not_registered",):
                    continue
                claim = (f"{ClaimWords(c.table.startswith('user-')).label}: " + c.claims_text()) if c.claims \
                    else "no claim registered"
                ev = "; ".join(_evidence_text(e) for e in c.evidence) or c.verdict
                also = (" Also: " + "; ".join(c.also)) if c.also else ""
                out.append(f"- `{name}` {property_label(p)} ({claim}): {ev}.{also}")
        out.append("")
    refuted = [c for c in cells if c.refuted]
    out.append("## Refuted claims")
    out.append("")
    if refuted:
        for c in refuted:
            paths = [e.counterexample for e in c.evidence if e.verdict is Verdict.VIOLATED]
            src = "; ".join(src for st, src in c.claims if st == "holds")
            out.append(f"- `{c.mechanism}` {c.property}: {ClaimWords(c.table.startswith('user-')).says(src)}; "
                       f"counterexample(s): {', '.join(p for p in paths if p)}")
    else:
        out.append("none")
    out += markdown_legend([title for _, title, _, _ in result["tables"]]
                           + [src for c in cells for _, src in c.claims])
    return "\n".join(out) + "\n"
