"""HTML rendering of ``run`` reports: the table plus a small SVG plot of each counterexample's
allocations, like the papers' bar figures."""
from __future__ import annotations

import html
from fractions import Fraction

from mechverify.numbers import fmt

from ..results import verdict_text
from .common import detail, domain_text

__all__ = ["render_html"]

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


def render_html(rep) -> str:
    """A ``run`` report as one HTML page."""
    rows = []
    for r in rep.results:
        cls = "refuted" if r.refuted else r.verdict
        rows.append(f"<tr class='{cls}'><td>{html.escape(r.property)}/{html.escape(r.variant)}</td>"
                    f"<td>{html.escape(r.claims_text())}</td><td>{html.escape(verdict_text(r))}</td>"
                    f"<td>{html.escape(r.claim_status())}</td><td>{html.escape(detail(r) or r.note or '')}</td></tr>")
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
