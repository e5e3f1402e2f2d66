"""LaTeX rendering of an ``audit``: each seed table as a ``table``/``tabular`` ready to paste into a paper.

Rows are properties, columns mechanisms; a cell is the paper's mark (``\\checkmark`` claimed to hold,
``$\\times$`` claimed to fail, ``--`` no claim) ``$\\to$`` our verdict, with the stored counterexamples as
numbered notes under the table.  Needs ``\\usepackage{amssymb}`` (for ``\\checkmark``); the output is ASCII.
"""
from __future__ import annotations

import os
import re
from typing import Any

from .citations import SEED_SHORT, codes_in
from .common import property_label
from ..results import Verdict

__all__ = ["render_audit_latex", "latex_escape"]

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            "<": r"\textless{}", ">": r"\textgreater{}"}
_UNICODE = {"✓": r"\checkmark{}", "✗": r"$\times$", "–": "--", "—": "---", "→": r"$\to$", "’": "'",
            "α": r"$\alpha$", "…": r"\ldots{}", "≤": r"$\le$", "≥": r"$\ge$", "×": r"$\times$"}


def latex_escape(text: str) -> str:
    """``text`` safe inside a LaTeX paragraph or table cell (special characters escaped, the few non-ASCII
    characters the reports use turned into commands; anything else non-ASCII becomes ``?``)."""
    out = []
    for ch in str(text):
        if ch in _SPECIAL:
            out.append(_SPECIAL[ch])
        elif ch in _UNICODE:
            out.append(_UNICODE[ch])
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append("?")
    return "".join(out)


def _cell(c, notes: dict[str, tuple[int, str]]) -> str:
    text = latex_escape(c.short().replace("**", ""))
    refs = []
    for e in c.evidence:
        if e.verdict is Verdict.VIOLATED and e.counterexample:
            if e.counterexample not in notes:
                outside = "" if e.details.get("covered_by_claim", True) else \
                    f"{c.property}/{e.variant}, a reading the paper's claim does not cover"
                notes[e.counterexample] = (len(notes) + 1, outside)
            refs.append(str(notes[e.counterexample][0]) + ("*" if notes[e.counterexample][1] else ""))
    if c.refuted:
        text = r"\textbf{" + text + "}"
    return text + (r"\textsuperscript{" + ",".join(refs) + "}" if refs else "")


def _label(tid: str) -> str:
    return "tab:mechverify-" + re.sub(r"[^A-Za-z0-9-]", "-", tid)


def render_audit_latex(result: dict[str, Any]) -> str:
    """Every audit table as LaTeX (one ``table`` environment each)."""
    cells = result["cells"]
    out = ["% mechverify audit: the seed papers' property tables, paper's mark -> verdict",
           f"% seed {result['seed']}, budget {result['budget']:g} s (wall clock); evidence store {result['store']}",
           "% needs \\usepackage{amssymb} (\\checkmark); superscripts are stored counterexamples",
           "% (replay them with: python -m verifier replay FILE)", ""]
    for tid, title, cols, props in result["tables"]:
        notes: dict[str, tuple[int, str]] = {}
        rows = []
        for p in props:
            row = [latex_escape(property_label(p))]
            for label, name in cols:
                c = next(c for c in cells if c.table == tid and c.column == label and c.property == p)
                row.append(_cell(c, notes))
            rows.append(" & ".join(row) + r" \\")
        codes = codes_in([title] + [s for c in cells if c.table == tid for _, s in c.claims])
        out += [r"\begin{table}[htbp]", r"\centering", r"\small",
                r"\caption{" + latex_escape(title) + r": paper's mark $\to$ verdict}",
                r"\label{" + _label(tid) + "}",
                r"\begin{tabular}{l|" + "c" * len(cols) + "}", r"\hline",
                "Property & " + " & ".join(latex_escape(lab) for lab, _ in cols) + r" \\", r"\hline"]
        out += rows
        out += [r"\hline", r"\end{tabular}"]
        foot = []
        for path, (n, outside) in notes.items():
            cid = os.path.splitext(os.path.basename(path))[0]
            mech = os.path.basename(os.path.dirname(path))
            foot.append(r"\textsuperscript{" + str(n) + r"}\,\texttt{" + latex_escape(f"{mech}/{cid}") + "}"
                        + (f" ({latex_escape(outside)})" if outside else ""))
        legend = (r"\checkmark{}: claimed to hold; $\times$: claimed to fail; --: no claim registered; "
                  r"a starred note is a violation of a reading the claim does not cover.")
        if codes:
            legend += " Sources: " + "; ".join(f"{c} = {latex_escape(SEED_SHORT[c])}" for c in codes) + "."
        out += ["", r"\par\smallskip{\footnotesize " + legend
                + (" Counterexamples: " + "; ".join(foot) + "." if foot else "") + r"\par}", r"\end{table}", ""]
    return "\n".join(out) + "\n"
