"""Renderers of the one result record (``verifier.results.Result``): text, Markdown, JSON, HTML and LaTeX.
``write_reports`` writes a ``run``'s Markdown, JSON and HTML atomically; ``write_audit`` an audit's."""
from __future__ import annotations

import os

from ..files import atomic_write_json, atomic_write_text
from .citations import expand_codes, seed_legend
from .common import detail, domain_text, measure_text, verdict_words
from .html import counterexample_paths, link_name, render_html
from .pages import render_audit_html
from .json import (audit_to_json, cell_to_json, certify_json, check_result_to_json, evidence_to_json, query_json,
                   report_to_json)
from .latex import render_audit_latex
from .markdown import render_audit_markdown, render_markdown
from .text import check_line, render_table, summarise_allocation, terminal_width, use_color, z3_verdict_text

__all__ = ["render_table", "render_markdown", "render_html", "report_to_json", "cell_to_json",
           "check_result_to_json", "audit_to_json", "check_line", "render_audit_markdown", "render_audit_html",
           "render_audit_latex", "write_audit", "write_reports", "domain_text", "detail", "measure_text",
           "verdict_words", "seed_legend", "expand_codes", "summarise_allocation", "terminal_width", "use_color",
           "certify_json", "query_json", "evidence_to_json", "z3_verdict_text"]


def _copy_counterexamples(paths, out_dir: str) -> list[str]:
    """Copy the stored counterexample files the page links to beside it (``out_dir/counterexamples/``)."""
    written = []
    for p in paths:
        if not p or not os.path.isfile(p):
            continue
        dest = os.path.join(out_dir, link_name(p))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if os.path.abspath(p) != os.path.abspath(dest):
            with open(p, encoding="utf-8") as fh:
                atomic_write_text(dest, fh.read())
        written.append(dest)
    return written


def write_reports(rep, out_dir: str) -> list[str]:
    """``<out>/<mechanism>.md``, ``.json`` and ``.html`` (each written atomically), and the counterexample
    files the HTML links to under ``<out>/counterexamples/``."""
    base = os.path.join(out_dir, rep.mechanism)
    atomic_write_text(base + ".md", render_markdown(rep))
    atomic_write_json(base + ".json", report_to_json(rep))
    copied = _copy_counterexamples(counterexample_paths(rep.results), out_dir)
    atomic_write_text(base + ".html", render_html(rep))
    return [base + ".md", base + ".json", base + ".html"] + copied


def write_audit(result, out_dir: str) -> list[str]:
    """``<out>/audit.md``, ``audit.json``, ``audit.html`` and ``audit.tex`` (each written atomically), and the
    counterexample files the HTML links to under ``<out>/counterexamples/``."""
    paths = {ext: os.path.join(out_dir, f"audit.{ext}") for ext in ("md", "json", "html", "tex")}
    atomic_write_text(paths["md"], render_audit_markdown(result))
    atomic_write_json(paths["json"], audit_to_json(result))
    copied = _copy_counterexamples(counterexample_paths(result["cells"]), out_dir)
    atomic_write_text(paths["html"], render_audit_html(result))
    atomic_write_text(paths["tex"], render_audit_latex(result))
    return list(paths.values()) + copied
