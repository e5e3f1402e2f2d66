"""Renderers of ``rates`` (``verifier.rates.RatesReport``): text, Markdown, JSON and HTML (the page of the
html report's style, ``report.html._page``, with the plots of ``report.plots`` embedded as SVG), and
:func:`write_rates` (``--out``: rates.json, rates.md, rates.html, the plots as PNG and SVG; every file
written atomically through ``verifier.files``)."""
from __future__ import annotations

import os
from typing import Any, Optional

from ..files import atomic_write_json, atomic_write_text
from ..properties import get_property
from .html import _page, esc

__all__ = ["rates_to_json", "render_rates_text", "render_rates_markdown", "render_rates_html", "write_rates",
           "cell_label", "point_label", "bound_text"]

SCHEMA = "mechverify.rates/1"


def point_label(point: dict) -> str:
    """``rho=0.7, users=10`` (``-`` for the workload's defaults)."""
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in point.items()) or "-"


def cell_label(c) -> str:
    return f"{c.property}/{c.variant}"


def bound_text(c) -> str:
    """What the count is: exact per instance, or a lower bound for a deviation property."""
    if c.deviations is not None:
        return (f"LOWER bound: violations found with {c.deviations} deviation{'s' if c.deviations != 1 else ''} "
                f"per instance (the property's own structured deviations)")
    return "every instance evaluated in full; each counted violation re-checked exactly"


def _f(v: Optional[float], nd: int = 4) -> str:
    if v is None:
        return "-"
    return f"{v:.{nd}g}"


def cell_to_json(c) -> dict:
    prop = get_property(c.property)
    lo, hi = c.ci95
    return {"mechanism": c.mechanism, "property": c.property, "variant": c.variant, "params": dict(c.point),
            "samples": c.samples, "evaluated": c.evaluated, "violations": c.violations, "rate": c.rate,
            "ci95": [lo, hi], "rechecked": c.rechecked, "confirmed": c.violations,
            "unconfirmed": dict(c.unconfirmed), **dict(not_applicable=dict(c.not_applicable)), "errors": dict(c.errors),
            "deviations_per_sample": c.deviations, "bound": "lower" if c.deviations is not None else "count",
            "bound_text": bound_text(c), "first_violation_sample": c.first_violation,
            "measure": {"meaning": prop.measure.meaning, "violated_when": prop.measure.violated_when,
                        **c.distribution()},
            **({"property_failures": dict(c.property_failures), "first_property_failure_sample":
                c.first_property_failure} if c.property_failures else {})}


def rates_to_json(rep) -> dict:
    """The JSON of ``rates --format json`` and rates.json."""
    return {"schema": SCHEMA, "workload": {"name": rep.workload, "title": rep.title, "provenance": rep.provenance},
            "mechanisms": rep.mechanisms, "properties": rep.properties, "points": rep.points,
            "samples_per_point": rep.samples, "samples_done": rep.samples_done, "seed": rep.seed,
            "deviations_per_sample": rep.deviations, "budget": rep.budget, "stopped": rep.stopped,
            "interrupted": rep.interrupted, "seconds": round(rep.seconds, 3),
            "samples_per_second": round(rep.samples_done / rep.seconds, 1) if rep.seconds > 0 else None,
            "executor": rep.executor,
            "skipped": [{"mechanism": m, "property": p, "variant": v, "why": why} for m, p, v, why in rep.skipped],
            "cells": [cell_to_json(c) for c in rep.cells]}


def _by_point(rep):
    from ..rate_records import point_key

    groups: dict = {}
    for c in rep.cells:
        groups.setdefault(point_key(c.point), (c.point, []))[1].append(c)
    return list(groups.values())


def _na_text(c) -> str:
    n = sum(c.not_applicable.values())
    return str(n) if n else "0"


def _rows(cells) -> list[list[str]]:
    rows = []
    for c in cells:
        d = c.distribution()
        lo, hi = c.ci95
        rate = "-" if c.rate is None else f"{c.rate:.4f} [{lo:.4f}, {hi:.4f}]"
        q = d.get("quantiles", {})
        rows.append([c.mechanism, cell_label(c) + (" (>=)" if c.deviations is not None else ""), rate,
                     f"{c.violations}/{c.evaluated}", _na_text(c), str(sum(c.errors.values())),
                     _f(d.get("mean")), _f(d.get("clipped_mean")), _f(q.get("0.5")),
                     f"{c.violations}/{c.rechecked}" + (f" (+{sum(c.unconfirmed.values())} not confirmed)"
                                                         if c.unconfirmed else "")])
    return rows


HEAD = ["mechanism", "property", "rate [95% CI]", "violations", "n/a", "errors", "mean", "clipped mean", "median",
        "exact re-checks (confirmed/run)"]


def _notes(rep) -> list[str]:
    out = []
    devs = sorted({c.property for c in rep.cells if c.deviations is not None})
    if devs:
        out.append(f"(>=) {', '.join(devs)}: LOWER bounds -- violations found with {rep.deviations} deviations per "
                   f"instance (the property's own structured deviations); more deviations can only find more.")
    out.append("rate = violations / evaluated instances (not applicable and errors excluded); every counted "
               "violation is confirmed by the property's exact (Fraction) re-check.")
    seen: list[str] = []
    for c in rep.cells:
        if c.property not in seen:
            seen.append(c.property)
            m = get_property(c.property).measure
            out.append(f"{c.property} measure: {m.meaning}; violated when {m.violated_when}; clipped mean: the "
                       f"measure clipped at {m.threshold}")
    reasons: dict = {}
    for c in rep.cells:
        for table in (c.not_applicable, c.errors, c.unconfirmed):
            for k, v in table.items():
                reasons.setdefault((c.mechanism, cell_label(c), k), 0)
                reasons[(c.mechanism, cell_label(c), k)] += v
    for (m, cl, k), v in list(reasons.items())[:30]:
        out.append(f"{m} {cl}: {v} x {k}")
    for m, p, v, why in rep.skipped:
        out.append(f"{m} {p}/{v}: not sampled ({why})")
    for c in rep.cells:
        for k, v in c.property_failures.items():
            out.append(f"!! {c.mechanism} {cell_label(c)}: THE PROPERTY FAILED (its own code, not the mechanism) "
                       f"on {v} instance(s), first sample {c.first_property_failure} (seed {rep.seed}): {k}")
    return out


def _header(rep) -> list[str]:
    done = rep.samples_done
    total = rep.samples * len(rep.points)
    speed = f", {done / rep.seconds:.0f} samples/s" if rep.seconds > 0 else ""
    lines = [f"rates on workload {rep.workload} ({rep.title}): {done} of {total} samples, seed {rep.seed}, "
             f"{rep.seconds:.1f} s{speed} ({rep.executor})",
             f"provenance: {rep.provenance}"]
    if rep.stopped:
        lines.append(f"STOPPED by the budget ({rep.budget:g} s) after {done} samples")
    return lines


def render_rates_text(rep) -> str:
    """The text tables of ``rates`` (one per parameter point)."""
    out = _header(rep)
    for point, cells in _by_point(rep):
        out.append("")
        out.append(f"== {point_label(point)}")
        rows = [HEAD] + _rows(cells)
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD))]
        for n, r in enumerate(rows):
            out.append("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
            if n == 0:
                out.append("  ".join("-" * w for w in widths))
    out.append("")
    out += _notes(rep)
    return "\n".join(out) + "\n"


def render_rates_markdown(rep) -> str:
    """Markdown: the header, one table per parameter point, the notes."""
    out = [f"# Violation rates on `{rep.workload}`", ""] + [f"{line}  " for line in _header(rep)]
    for point, cells in _by_point(rep):
        out += ["", f"## {point_label(point)}", "", "| " + " | ".join(HEAD) + " |",
                "|" + "---|" * len(HEAD)]
        out += ["| " + " | ".join(v.replace("|", "\\|") for v in r) + " |" for r in _rows(cells)]
    out += ["", "Notes:", ""] + [f"- {n}" for n in _notes(rep)]
    return "\n".join(out) + "\n"


def render_rates_html(rep, figures: Optional[dict] = None) -> str:
    """One self-contained page: the tables, the figures (``{caption: svg text}``) inline, the notes."""
    body = [f"<h1>Violation rates on {esc(rep.workload)}</h1>"]
    body += [f"<p class='meta'>{esc(line)}</p>" for line in _header(rep)]
    if figures:  # side by side where the window is wide enough
        body.append("<style>figure.plot svg{max-width:100%;height:auto}</style><div class='tables'>" + "".join(
            f"<figure class='plot' style='max-width:560px;margin-right:1.5em'>{svg}<figcaption>{esc(caption)}</figcaption></figure>"
            for caption, svg in figures.items()) + "</div>")
    for point, cells in _by_point(rep):
        body.append(f"<h2>{esc(point_label(point))}</h2><table><tr>" +
                    "".join(f"<th>{esc(h)}</th>" for h in HEAD) + "</tr>")
        for r in _rows(cells):
            body.append("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in r) + "</tr>")
        body.append("</table>")
    body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in _notes(rep)) + "</ul>")
    return _page(f"rates: {rep.workload}", "\n".join(body))


def write_rates(rep, out_dir: str) -> list[str]:
    """``out_dir``/rates.json, rates.md, rates.html and the plots (``report.plots``); returns the paths."""
    from .plots import rate_figures

    os.makedirs(out_dir, exist_ok=True)
    written = rate_figures(rep, out_dir)  # [(caption, png path, svg path)]
    figures: dict[str, Any] = {}
    for caption, png, svg in written:
        with open(svg, encoding="utf-8") as fh:
            text = fh.read()
        figures[caption] = text[text.find("<svg"):]
    paths = {ext: os.path.join(out_dir, f"rates.{ext}") for ext in ("json", "md", "html")}
    atomic_write_json(paths["json"], rates_to_json(rep))
    atomic_write_text(paths["md"], render_rates_markdown(rep) + "".join(
        f"\n![{caption}]({os.path.basename(png)})\n" for caption, png, _ in written))
    atomic_write_text(paths["html"], render_rates_html(rep, figures))
    return list(paths.values()) + [p for _, png, svg in written for p in (png, svg)]
