"""Rendering of ``run`` reports: terminal table, Markdown, JSON (``run.report_to_json``) and HTML (with a
small SVG plot of each counterexample's allocations, like the papers' bar figures).

Verdict texts come from ``run.verdict_text`` -- they say what was established, never a bare "holds".
"""
from __future__ import annotations

import html
import json
import os
from fractions import Fraction

from mechverify.numbers import fmt

from .minimize import describe_size
from .run import CellResult, RunReport, report_to_json, verdict_text
from .store import atomic_write_json, atomic_write_text

__all__ = ["render_table", "render_markdown", "render_html", "write_reports", "domain_text", "atomic_write_text"]


def domain_text(d: dict) -> str:
    f = d.get("features", {})
    feats = [k.replace("_", " ") for k, v in f.items() if v]
    return (f"users {d['users'][0]}-{d['users'][1]}, servers {d['servers'][0]}-{d['servers'][1]}, "
            f"resources {d['resources'][0]}-{d['resources'][1]}, external {d['external'][0]}-{d['external'][1]}; "
            f"numbers {d['numbers']}; features: {', '.join(feats) or 'none'}")


def _claim(r: CellResult) -> str:
    return r.claims_text()


def _detail(r: CellResult) -> str:
    if r.verdict != "violated":
        return ""
    bits = []
    if r.size:
        bits.append(describe_size(r.size))
    if r.minimality:
        bits.append(r.minimality.get("status", ""))
    if r.time_to_first is not None:
        bits.append(f"first exact counterexample after {r.time_to_first:.2f} s ({r.engine})")
    if r.certificate is not None:
        bits.append(r.certificate.summary)
    return "; ".join(b for b in bits if b)


def render_table(rep: RunReport) -> str:
    lines = [f"mechanism: {rep.mechanism} -- {rep.title}",
             f"setting:   {rep.setting}",
             f"domain:    {domain_text(rep.domain)}",
             f"seed {rep.seed}, budget {rep.budget:g} CPU s, took {rep.seconds:.1f} CPU s "
             f"({rep.wall_seconds:.1f} s wall)", ""]
    rows = [("property/variant", "paper claims", "verdict", "claim")]
    for r in rep.results:
        rows.append((f"{r.property}/{r.variant}", _claim(r), verdict_text(r), r.claim_status()))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for k, row in enumerate(rows):
        lines.append("  ".join(row[i].ljust(widths[i]) for i in range(3)) + "  " + row[3])
        if k == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 5)
        elif rep.results[k - 1].verdict == "violated":
            lines.append(" " * (widths[0] + 2) + "  " + _detail(rep.results[k - 1]))
        elif rep.results[k - 1].note and rep.results[k - 1].verdict != "unknown":
            lines.append(" " * (widths[0] + 2) + "  note: " + rep.results[k - 1].note)
    if rep.skipped:
        lines.append("")
        lines.append("not searched: " + "; ".join(f"{p}/{v} ({why})" for p, v, why in rep.skipped))
    refuted = [r for r in rep.results if r.refuted]
    lines.append("")
    if refuted:
        lines.append("CLAIMS REFUTED (each backed by a stored, replayable counterexample):")
        for r in refuted:
            src = "; ".join(r.refuted_sources())
            lines.append(f"  !! {r.property}/{r.variant}: paper [{src}] says it holds; {verdict_text(r)}")
    else:
        lines.append("no claim of the paper was refuted in this run")
    return "\n".join(lines)


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def render_markdown(rep: RunReport) -> str:
    out = [f"# mechverify run: `{rep.mechanism}`", "",
           f"*{rep.title}*", "",
           f"- setting: {rep.setting}",
           f"- domain searched: {domain_text(rep.domain)}",
           f"- seed {rep.seed}, budget {rep.budget:g} CPU s, took {rep.seconds:.1f} CPU s "
           f"({rep.wall_seconds:.1f} s wall)", "",
           "| property/variant | paper claims | verdict | claim | details |",
           "|---|---|---|---|---|"]
    for r in rep.results:
        status = f"**{r.claim_status()}**" if r.refuted else r.claim_status()
        det = _detail(r) or (r.note or "")
        out.append(f"| {r.property}/{r.variant} | {_md_escape(_claim(r))} | {_md_escape(verdict_text(r))} | "
                   f"{status} | {_md_escape(det)} |")
    if rep.skipped:
        out += ["", "Not searched: " + "; ".join(f"{p}/{v} ({why})" for p, v, why in rep.skipped)]
    refuted = [r for r in rep.results if r.refuted]
    out.append("")
    if refuted:
        out.append("## Claims refuted")
        out += [f"- **{r.property}/{r.variant}**: the paper ("
                f"{'; '.join(r.refuted_sources())}) says it holds; {verdict_text(r)}"
                for r in refuted]
    else:
        out.append("No claim of the paper was refuted in this run.")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------- HTML
_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"]


def _svg_allocation(name: str, alloc) -> str:
    """Horizontal stacked bars: one bar per user, one segment per server (tasks)."""
    env = alloc.env
    totals = [float(sum(row, Fraction(0))) if alloc.exact else float(sum(row)) for row in alloc.x]
    top = max(totals + [1e-9])
    bar_h, gap, left, width = 18, 6, 60, 360
    h = len(env.users) * (bar_h + gap) + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 80}" height="{h}">',
             f'<text x="0" y="12" font-size="12" font-weight="bold">{html.escape(name)}</text>']
    for j, u in enumerate(env.users):
        y = 20 + j * (bar_h + gap)
        parts.append(f'<text x="0" y="{y + 13}" font-size="11">{html.escape(u)}</text>')
        x = left
        for s, v in enumerate(alloc.x[j]):
            wpx = float(v) / top * width
            if wpx > 0:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{wpx:.1f}" height="{bar_h}" '
                             f'fill="{_COLORS[s % len(_COLORS)]}"><title>{html.escape(env.servers[s])}: '
                             f'{html.escape(str(v))} tasks</title></rect>')
                x += wpx
        parts.append(f'<text x="{x + 4:.1f}" y="{y + 13}" font-size="11">{fmt(totals[j], 4)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(rep: RunReport) -> str:
    rows = []
    for r in rep.results:
        cls = "refuted" if r.refuted else r.verdict
        rows.append(f"<tr class='{cls}'><td>{html.escape(r.property)}/{html.escape(r.variant)}</td>"
                    f"<td>{html.escape(_claim(r))}</td><td>{html.escape(verdict_text(r))}</td>"
                    f"<td>{html.escape(r.claim_status())}</td><td>{html.escape(_detail(r) or r.note or '')}</td></tr>")
    plots = []
    for r in rep.results:
        if r.certificate is None:
            continue
        servers = r.certificate.witness.env.servers
        legend = " ".join(f"<span style='color:{_COLORS[s % len(_COLORS)]}'>&#9632; {html.escape(n)}</span>"
                          for s, n in enumerate(servers))
        svgs = "".join(f"<div class='plot'>{_svg_allocation(k, a)}</div>" for k, a in r.certificate.allocations.items())
        plots.append(f"<h3>{html.escape(r.property)}/{html.escape(r.variant)}: "
                     f"{html.escape(r.counterexample or '')}</h3><p>{html.escape(r.certificate.summary)}</p>"
                     f"<p>servers: {legend}</p>{svgs}")
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>mechverify run {html.escape(rep.mechanism)}</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;font-size:13px;vertical-align:top}}
tr.refuted{{background:#fdd}} tr.violated{{background:#fee8d0}} tr.certified{{background:#dfd}}
.plot{{display:inline-block;margin:6px}}</style></head><body>
<h1>mechverify run: {html.escape(rep.mechanism)}</h1>
<p>{html.escape(rep.title)}<br>setting: {html.escape(rep.setting)}<br>
domain searched: {html.escape(domain_text(rep.domain))}<br>seed {rep.seed}, budget {rep.budget:g} CPU s,
took {rep.seconds:.1f} CPU s ({rep.wall_seconds:.1f} s wall)</p>
<table><tr><th>property/variant</th><th>paper claims</th><th>verdict</th><th>claim</th><th>details</th></tr>
{''.join(rows)}</table>
<h2>Counterexamples</h2>{''.join(plots) or '<p>none</p>'}
</body></html>
"""


def write_reports(rep: RunReport, out_dir: str) -> list[str]:
    """``<out>/<mechanism>.md``, ``.json`` and ``.html``, each written atomically."""
    base = os.path.join(out_dir, rep.mechanism)
    atomic_write_text(base + ".md", render_markdown(rep))
    atomic_write_json(base + ".json", report_to_json(rep))
    atomic_write_text(base + ".html", render_html(rep))
    return [base + ".md", base + ".json", base + ".html"]


def dumps(rep: RunReport) -> str:
    return json.dumps(report_to_json(rep), indent=1)
