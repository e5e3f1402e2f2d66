"""Renderers of the one result record (``verifier.results.Result``): text, Markdown, JSON and HTML.
``write_reports`` writes a ``run``'s Markdown, JSON and HTML atomically."""
from __future__ import annotations

import os

from ..store import atomic_write_json, atomic_write_text
from .common import detail, domain_text
from .html import render_html
from .json import (audit_to_json, cell_to_json, certify_json, check_result_to_json, evidence_to_json, query_json,
                   report_to_json)
from .markdown import render_audit_markdown, render_markdown
from .text import check_line, render_table, z3_verdict_text

__all__ = ["render_table", "render_markdown", "render_html", "report_to_json", "cell_to_json",
           "check_result_to_json", "audit_to_json", "check_line", "render_audit_markdown", "write_audit",
           "certify_json", "query_json", "evidence_to_json", "z3_verdict_text", "write_reports", "domain_text", "detail"]


def write_reports(rep, out_dir: str) -> list[str]:
    """``<out>/<mechanism>.md``, ``.json`` and ``.html``, each written atomically."""
    base = os.path.join(out_dir, rep.mechanism)
    atomic_write_text(base + ".md", render_markdown(rep))
    atomic_write_json(base + ".json", report_to_json(rep))
    atomic_write_text(base + ".html", render_html(rep))
    return [base + ".md", base + ".json", base + ".html"]


def write_audit(result, out_dir: str) -> list[str]:
    """``<out>/audit.md`` and ``audit.json``, each written atomically."""
    md, js = os.path.join(out_dir, "audit.md"), os.path.join(out_dir, "audit.json")
    atomic_write_text(md, render_audit_markdown(result))
    atomic_write_json(js, audit_to_json(result))
    return [md, js]
