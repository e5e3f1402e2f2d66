"""The HTML pages of ``execute`` and ``audit``: one self-contained page each, built from the pieces of
``report.html`` (its page wrapper, tables, timelines and counterexample sections)."""
from __future__ import annotations

import os
from typing import Any

from mechverify.trace_deviations import TraceMisreport

from ..results import Verdict
from .citations import codes_in
from .common import ClaimWords, property_label, verdict_words
from .html import (_n, _page, counterexample_section, esc, link_name, measures_section, sources_section, step_table,
                   timeline_figure, view_from_file)

__all__ = ["render_execution_html", "render_audit_html"]


def render_execution_html(rep, source: str = "") -> str:
    """An ``execute`` report (``verifier.execute.ExecutionReport``) as one HTML page: the timeline of the run
    (one figure per failing step, with the properties failing there; one per trace misreport that gains), the
    step table with each property's status per step, and every property's result."""
    from .execution import step_rows
    from .timeline import timeline, trace_steps

    ex, steps = rep.execution, rep.steps
    rows = step_rows(rep)
    status = {k: [r["status"][k] for r in rows] for k in rep.per_step}
    failing: dict = {}  # step -> [property/variant failing there]
    misreports = []
    for r in rep.violated:
        w = r.certificate.witness
        if isinstance(w.deviation, TraceMisreport):
            misreports.append((r, w.deviation))
        else:
            failing.setdefault(w.step, []).append(f"{r.property}/{r.variant}")
    figures = []
    if steps:
        for k, names in sorted(failing.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
            at = (f"Step {k}, [{_n(steps[k].t)}, {_n(steps[k].until)}), shaded: " if k is not None and k < len(steps)
                  else "Over the whole run: ")
            figures.append(timeline_figure(timeline(ex, steps, k), at + esc(", ".join(names)) + " violated."))
        for r, dev in misreports:
            try:
                deviated = trace_steps(rep.mechanism, ex, dev)
            except Exception as exc:  # noqa: BLE001 - the page says why the dashed line is missing
                figures.append(f"<p>(the deviated run could not be replayed: {esc(exc)})</p>")
                continue
            figures.append(timeline_figure(timeline(ex, steps, r.certificate.witness.step, dev, deviated),
                                           f"{esc(r.property)}/{esc(r.variant)}: dashed, {esc(dev.user)}'s share when "
                                           f"it misreports ({esc(dev.describe())})."))
        if not figures:
            figures.append(timeline_figure(timeline(ex, steps), "No property is violated on this execution."))
    failing_steps = [k for k in failing if k is not None] + [
        k for k, r in enumerate(rows) if any(v == "FAIL" for v in r["status"].values())]
    res_rows = []
    for r in rep.results:
        cls = r.verdict
        text = r.certificate.summary if r.certificate is not None else (r.note or "")
        res_rows.append(f"<tr class='{cls}'><td>{esc(r.property)}/{esc(r.variant)}</td><td>{esc(r.claims_text())}</td>"
                        f"<td>{esc(verdict_words(r).replace('on this instance', 'on this execution'))}</td>"
                        f"<td>{esc(text)}</td></tr>")
    skipped = ("<p class='small'>Not checked: " + "; ".join(f"{esc(p)}/{esc(v)} ({esc(w)})" for p, v, w in rep.skipped)
               + "</p>") if rep.skipped else ""
    body = (f"<h1>mechverify execute: {esc(rep.mechanism)}</h1>"
            f"<p class='meta'>{esc(rep.mechanism)} through {esc(source or 'the execution')}<br>{esc(ex.describe())}"
            f"<br>run: {len(steps)} steps, {'exact' if rep.exact else 'floats (violations re-derived exactly)'}"
            f"{'; ' + esc(rep.note) if rep.note else ''}; took {rep.seconds:.1f} s</p>"
            f"<h2>Timeline</h2>{''.join(figures) or '<p>no step was run</p>'}"
            f"<h2>Steps</h2>{step_table(steps, failing_steps, status)}"
            f"<h2>Results</h2><table><tr><th>property/variant</th><th>claims</th><th>verdict</th><th>details</th></tr>"
            f"{''.join(res_rows)}</table>{skipped}"
            + measures_section([r.property for r in rep.results])
            + (sources_section([r.claims_text() for r in rep.results])
               if codes_in([r.claims_text() for r in rep.results]) else ""))
    return _page(f"mechverify execute {rep.mechanism}", body)


# ---------------------------------------------------------------------- audit
def render_audit_html(result: dict[str, Any]) -> str:
    """An ``audit`` as one HTML page: each seed table (paper's mark -> verdict, counterexamples as numbered
    notes linking to their sections), the evidence, refuted claims, measures, sources, counterexamples."""
    from .markdown import _evidence_text

    cells = result["cells"]
    notes: dict[str, int] = {}  # counterexample path -> number
    views: list[tuple[str, Any]] = []

    def note(path: str) -> int:
        if path not in notes:
            notes[path] = len(notes) + 1
            views.append((path, view_from_file(path)))
        return notes[path]

    parts = [f"<h1>mechverify audit</h1><p class='meta'>seed {result['seed']}, budget "
             f"{result['budget']:g} s (wall clock), took {result['seconds']:.1f} s wall; evidence store "
             f"<code>{esc(result['store'])}</code>{' (ignored: --fresh)' if result.get('fresh') else ''}</p>"
             "<p class='small'>Each cell: the paper's mark (✓ claimed to hold, ✗ claimed to fail, – no claim "
             "registered) → our verdict. <b>REFUTED</b>: the paper says it holds and an exact, stored, replayable "
             "counterexample shows it does not. <i>not refuted</i> / <i>not reproduced</i>: no counterexample "
             "found within the budget (not a proof). Numbers in brackets link to the counterexamples; a starred one "
             "([5*]) violates a reading of the property the paper's claim does not cover.</p>"]
    props_seen: list[str] = []
    for tid, title, cols, props in result["tables"]:
        props_seen += props
        head = "<tr><th>property</th>" + "".join(f"<th>{esc(lab)}</th>" for lab, _ in cols) + "</tr>"
        body = []
        for p in props:
            row = [f"<td><b>{esc(property_label(p))}</b></td>"]
            for label, name in cols:
                c = next(c for c in cells if c.table == tid and c.column == label and c.property == p)
                refs = [(note(e.counterexample), e) for e in c.evidence if e.verdict is Verdict.VIOLATED and e.counterexample]
                sup = "".join(f" <a href='#ace-{n}'>[{n}]</a>" if e.details.get("covered_by_claim", True) else
                              f" <a href='#ace-{n}' title='{esc(p)}/{esc(e.variant)}: a reading the paper&#39;s "
                              f"claim does not cover'>[{n}*]</a>" for n, e in refs)
                cls = "cell-refuted" if c.refuted else f"cell-{c.verdict}"
                row.append(f"<td class='{cls}'>{esc(c.short().replace('**', ''))}{sup}</td>")
            body.append("<tr>" + "".join(row) + "</tr>")
        ev = []
        for label, name in cols:
            for p in props:
                c = next(c for c in cells if c.table == tid and c.column == label and c.property == p)
                if c.verdict == "not_registered":
                    continue
                claim = (f"{ClaimWords(c.table.startswith('user-')).label}: " + c.claims_text()) if c.claims \
                    else "no claim registered"
                text = "; ".join(_evidence_text(e) for e in c.evidence) or c.verdict
                for path, n in notes.items():
                    text = text.replace(path, f"[{n}]")
                ev.append(f"<li><code>{esc(name)}</code> {esc(p)} ({esc(claim)}): {esc(text)}</li>")
        parts.append(f"<h2 id='{esc(tid)}'>{esc(title)}</h2><table>{head}{''.join(body)}</table>"
                     f"<details><summary>Evidence per cell</summary><ul class='small'>{''.join(ev)}</ul></details>")
    refuted = [c for c in cells if c.refuted]
    if refuted:
        items = []
        for c in refuted:
            refs = [note(e.counterexample) for e in c.evidence if e.verdict is Verdict.VIOLATED and e.counterexample]
            src = "; ".join(s for st, s in c.claims if st == "holds")
            items.append(f"<li><code>{esc(c.mechanism)}</code> {esc(c.property)}: "
                         f"{esc(ClaimWords(c.table.startswith('user-')).says(src))}; "
                         "counterexample(s) " + ", ".join(f"<a href='#ace-{n}'>[{n}]</a>" for n in refs) + "</li>")
        parts.append("<h2>Refuted claims</h2><ul>" + "".join(items) + "</ul>")
    else:
        parts.append("<h2>Refuted claims</h2><p>none</p>")
    parts.append(measures_section(props_seen))
    parts.append(sources_section([t[1] for t in result["tables"]] + [s for c in cells for _, s in c.claims]))
    secs = []
    for path, v in views:
        n = notes[path]
        if v is None:
            secs.append(f"<section class='ce' id='ace-{n}'><h3>[{n}] <a href='{esc(link_name(path))}'>"
                        f"{esc(os.path.basename(path))}</a></h3><p>(file could not be read)</p></section>")
        else:
            secs.append(counterexample_section(v, f"ace-{n}", f"[{n}] {esc(v.mechanism)}: {esc(v.property)}/"
                                                              f"{esc(v.variant)}"))
    parts.append("<h2>Counterexamples</h2>" + ("".join(secs) or "<p>none</p>"))
    return _page("mechverify audit", "".join(parts))


