"""Terminal renderings: the ``run`` table, ``check`` result lines and allocation summaries.

Width: :func:`terminal_width` (``COLUMNS`` first, then the terminal; :data:`PIPE_WIDTH` (100) when writing
to a pipe or a file without ``COLUMNS``).  Every line is wrapped to the width (``width=None``: one line per
cell, for callers that want no limit).  Colour: :func:`use_color` (a TTY, and ``NO_COLOR`` unset) -- never in pipes or files.
"""
from __future__ import annotations

import os
import shutil
import sys
import textwrap
from typing import Any, Optional, Sequence

from mechverify.numbers import fmt, from_exact_text, plural

from ..results import Result, Verdict
from .citations import codes_in, seed_legend
from .common import (claim_words, closing_line, detail, domain_text, measure_text, num_text, property_failure_lines,
                     property_failures, runs_findings, verdict_words)

__all__ = ["render_table", "check_line", "CHECK_VERDICT_TEXT", "terminal_width", "use_color", "PIPE_WIDTH",
           "summarise_allocation", "legend_lines", "wrap_line", "z3_verdict_text"]

_ANSI = {"red": "\033[1;31m", "yellow": "\033[33m", "green": "\033[32m", "dim": "\033[2m", "bold": "\033[1m"}
_RESET = "\033[0m"
MIN_WIDTH = 40
#: the width of output to a pipe or a file (no terminal to ask), unless ``COLUMNS`` says otherwise
PIPE_WIDTH = 100


def terminal_width(stream: Any = None) -> Optional[int]:
    """``COLUMNS`` if set (a positive integer), else the terminal's width when ``stream`` (default stdout)
    is a TTY, else :data:`PIPE_WIDTH` (a pipe or a file)."""
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return max(MIN_WIDTH, int(cols))
    stream = stream if stream is not None else sys.stdout
    try:
        if stream.isatty():
            return max(MIN_WIDTH, shutil.get_terminal_size((100, 24)).columns)
    except (AttributeError, ValueError, OSError):
        pass
    return PIPE_WIDTH


def use_color(stream: Any = None) -> bool:
    """Colour only on a TTY, and never with ``NO_COLOR`` set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream if stream is not None else sys.stdout
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _paint(text: str, style: Optional[str], color: bool) -> str:
    return f"{_ANSI[style]}{text}{_RESET}" if (color and style and text) else text


def wrap_line(text: str, width: Optional[int], indent: str = "", first: str = "") -> list[str]:
    """``first + text`` wrapped to ``width`` (continuation lines start with ``indent``); no limit -> one line."""
    if width is None:
        return [first + text]
    return textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=indent,
                         break_on_hyphens=False) or [first.rstrip()]


def legend_lines(texts: Sequence[Optional[str]], width: Optional[int] = None) -> list[str]:
    """``sources: 000 = ..., 004 = ...`` for the seed codes mentioned in ``texts`` (empty if none)."""
    codes = codes_in(texts)
    if not codes:
        return []
    body = "; ".join(f"{c} = {cite}" for c, cite in seed_legend(codes))
    return wrap_line(body, width, indent="         ", first="sources: ")


def _verdict_style(r: Result) -> Optional[str]:
    if r.refuted:
        return "red"
    return {Verdict.VIOLATED: "yellow", Verdict.CERTIFIED: "green", Verdict.NOT_REFUTED: None}.get(r.verdict)


def _table_plain(rep, color: bool) -> list[str]:
    """The one-line-per-cell layout (no width limit)."""
    lines: list[str] = []
    rows = [("property/variant", claim_words(rep).column, "verdict", "claim")]
    for r in rep.results:
        rows.append((f"{r.property}/{r.variant}", r.claims_text(), verdict_words(r), r.claim_status()))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for k, row in enumerate(rows):
        if k == 0:
            lines.append("  ".join(row[i].ljust(widths[i]) for i in range(3)) + "  " + row[3])
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 5)
            continue
        r = rep.results[k - 1]
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1]),
                 _paint(row[2].ljust(widths[2]), _verdict_style(r), color), _paint(row[3], _verdict_style(r), color)]
        lines.append("  ".join(cells))
        if r.verdict is Verdict.VIOLATED:
            lines.append(" " * (widths[0] + 2) + "  " + detail(r))
        elif r.note and r.verdict is not Verdict.UNKNOWN:
            lines.append(" " * (widths[0] + 2) + "  note: " + r.note)
    return lines


def _fit(natural: list[int], width: int, fixed: Sequence[int], minimum: int = 10,
         words: Optional[Sequence[int]] = None) -> list[int]:
    """Column widths within ``width`` (separators of 2): ``fixed`` columns keep their natural width (capped,
    but never narrower than their longest word ``words[i]`` up to half the width: a name such as
    ``single-server-drf/whole-task`` is not cut mid-word), the others share what is left in proportion to
    their natural widths."""
    total = sum(natural) + 2 * (len(natural) - 1)
    if total <= width:
        return list(natural)
    out = list(natural)
    for i in fixed:
        out[i] = min(natural[i], max(minimum, width // 4, min(words[i] if words else 0, width // 2)))
    flex = [i for i in range(len(natural)) if i not in fixed]
    room = width - sum(out[i] for i in fixed) - 2 * (len(natural) - 1)
    want = sum(natural[i] for i in flex) or 1
    for i in flex:
        out[i] = max(minimum, room * natural[i] // want)
    while sum(out) + 2 * (len(out) - 1) > width and max(out) > minimum:  # rounding / minimums
        out[out.index(max(out))] -= 1
    return out


def _table_wrapped(rep, width: int, color: bool) -> list[str]:
    """The table within ``width``: the four columns when they fit; otherwise three (property/variant,
    verdict, claim) with the paper's claims on a line of their own under each row.  Long cells wrap inside
    their column; a violated cell's counterexample path and details follow on their own indented lines."""
    rows = []
    for r in rep.results:
        v = Verdict.VIOLATED if r.verdict is Verdict.VIOLATED else verdict_words(r)
        rows.append((f"{r.property}/{r.variant}", r.claims_text(), v, r.claim_status()))
    words = claim_words(rep)
    head4 = ("property/variant", words.column, "verdict", "claim")
    natural = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head4)]
    four = sum(natural) + 6 <= width
    cols = (0, 1, 2, 3) if four else (0, 2, 3)
    head = [head4[i] for i in cols]
    longest = [max((len(w) for row in rows for w in row[i].split()), default=0) for i in range(len(head4))]
    widths = _fit([natural[i] for i in cols], width, fixed=(0, len(cols) - 1), words=[longest[i] for i in cols])
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    for r, row in zip(rep.results, rows):
        cells = [row[i] for i in cols]
        wrapped = [textwrap.wrap(c, w, break_on_hyphens=False) or [""] for c, w in zip(cells, widths)]
        style = _verdict_style(r)
        for k in range(max(len(c) for c in wrapped)):
            out = [(c[k] if k < len(c) else "").ljust(w) for c, w in zip(wrapped, widths)]
            out[-2], out[-1] = _paint(out[-2], style, color), _paint(out[-1].rstrip(), style, color)
            lines.append("  ".join(out).rstrip())
        if not four and r.claims:
            lines += wrap_line(r.claims_text(), width, "      ", f"    {words.label}: ")
        if r.verdict is Verdict.VIOLATED:
            lines += wrap_line(r.counterexample or "not stored", width, "      ", "    counterexample: ")
            lines += wrap_line(detail(r), width, "      ", "    ")
        elif r.note and r.verdict is not Verdict.UNKNOWN:
            lines += wrap_line(r.note, width, "      ", "    note: ")
    return lines


def render_table(rep, width: Optional[int] = None, color: bool = False) -> str:
    """A ``run`` report (``verifier.run.RunReport``) as a plain-text table; ``width`` wraps every line to
    that many characters (None: one line per cell), ``color`` adds ANSI colours (TTY only)."""
    lines: list[str] = []
    words = claim_words(rep)
    for first, text in (("mechanism: ", f"{rep.mechanism} -- {rep.title}"), ("setting:   ", rep.setting),
                        ("domain:    ", domain_text(rep.domain)),
                        ("", f"seed {rep.seed}, budget {rep.budget:g} s (wall clock), took {rep.seconds:.1f} s")):
        lines += wrap_line(text, width, " " * len(first), first)
    lines.append("")
    if width is None or width >= 60:
        lines += _table_plain(rep, color) if width is None else _table_wrapped(rep, width, color)
    else:  # too narrow for columns: one block per cell
        for r in rep.results:
            lines += wrap_line(f"{verdict_words(r)} [{r.claim_status()}]", width, "    ",
                               f"{r.property}/{r.variant}: ")
            lines += wrap_line(r.claims_text(), width, "      ", f"    {words.label}: ")
            if r.verdict is Verdict.VIOLATED:
                lines += wrap_line(detail(r), width, "      ", "    ")
    if rep.skipped:
        lines.append("")
        lines += wrap_line("; ".join(f"{p}/{v} ({why})" for p, v, why in rep.skipped), width, "  ",
                           "not searched: ")
    refuted = [r for r in rep.results if r.refuted]
    lines.append("")
    if refuted:
        lines += [_paint(ln, "red", color) for ln in
                  wrap_line("CLAIMS REFUTED (each backed by a stored, replayable counterexample):"
                            if all(r.counterexample for r in refuted) else
                            "CLAIMS REFUTED (each by an exactly re-checked counterexample; not stored in this run):",
                            width, "")]
        for r in refuted:
            src = "; ".join(r.refuted_sources())
            lines += wrap_line(f"{r.property}/{r.variant}: {words.says(src)}; {verdict_words(r)}",
                               width, "     ", "  !! ")
        for r in runs_findings(rep.results):
            lines += wrap_line(f"{r.property}/{r.variant}: the mechanism failed (an exception or an invalid output); "
                               f"{verdict_words(r)}", width, "     ", "  !! ")
    else:
        lines += [_paint(ln, "red" if runs_findings(rep.results) else None, color)
                  for ln in wrap_line(closing_line(rep), width, "  ")]
    for r in property_failures(rep.results):
        first, *rest = property_failure_lines(r)
        lines += [_paint(ln, "red", color) for ln in wrap_line(first, width, "     ", "  !! ")]
        for ln in rest:
            lines += wrap_line(ln, width, "     ", "     ")
    leg = legend_lines([r.claims_text() for r in rep.results] + [rep.title], width)
    if leg:
        lines += [""] + leg
    return "\n".join(lines)


CHECK_VERDICT_TEXT = {
    Verdict.VIOLATED: "VIOLATED",
    Verdict.SATISFIED: "satisfied on this instance (exact check)",
    Verdict.NOT_REFUTED: "no violation found",
    Verdict.NOT_APPLICABLE: "not applicable",
    Verdict.UNKNOWN: Verdict.UNKNOWN,
}


def check_line(r: Result, width: Optional[int] = None) -> str:
    """One ``check`` result as one line: verdict, evidence, the papers' claims, a refutation flag;
    with ``width``, wrapped to it (continuation lines indented)."""
    head = f"{r.property}/{r.variant}"
    text = CHECK_VERDICT_TEXT[r.verdict]
    if r.verdict is Verdict.VIOLATED:
        text += f": {r.certificate.summary}"
        if r.counterexample:
            text += f" [{r.counterexample}]"
        if r.certificate.robust is False:
            text += " (not for every allocation the definition allows)"
    elif r.verdict is Verdict.NOT_REFUTED:
        text += f" in {r.trials} deviations / {r.seconds:.1f} s"
        if r.measure is not None:
            text += f" (worst measure {measure_text(r.property, r.measure)})"
    elif r.verdict is Verdict.SATISFIED and r.measure is not None:
        text += f" (measure {measure_text(r.property, r.measure)})"
    if r.details.get("lp_certificate"):
        text += f" [dual certificate: {r.details['lp_certificate']}]"
    if r.note and r.verdict in (Verdict.NOT_APPLICABLE, Verdict.UNKNOWN, Verdict.NOT_REFUTED):
        text += f" -- {r.note}"
    outside = r.details.get("outside", [None] * len(r.claims))
    claim = "; ".join(f"claimed {c.status} [{c.source}]" + (f" (not about this instance: {o})" if o else "")
                      for c, o in zip(r.claims, outside)) if r.claims else "no claim"
    wrong = r.refuted_sources()
    refuted = ""
    if wrong:
        refuted = "  << CLAIM REFUTED" + (f" ({'; '.join(wrong)})" if len(r.claims) > 1 else "")
    if r.property_failed:
        refuted += "  << THE PROPERTY FAILED (its own code, not the mechanism)"
    line = f"{head:28s} {text}   ({claim}){refuted}"
    return line if width is None else "\n".join(wrap_line(line, width, " " * 6))


# ---------------------------------------------------------------------- allocations
def _alloc_parts(alloc: Any) -> tuple[list[str], list[str], list[list[Any]], list[Any], str, bool]:
    """(users, servers, tasks, totals, mechanism, exact) of an ``Allocation`` or an ``allocate`` JSON dict."""
    if isinstance(alloc, dict):
        return (list(alloc["users"]), list(alloc["servers"]), [list(r) for r in alloc["tasks"]],
                list(alloc["totals"]), alloc.get("mechanism", ""), bool(alloc.get("exact")))
    env = alloc.env
    return (list(env.users), list(env.servers), [list(r) for r in alloc.x], list(alloc.totals()),
            alloc.mechanism, bool(alloc.exact))


def _val(v: Any) -> Any:
    if isinstance(v, str):
        try:
            return from_exact_text(v)
        except ValueError:
            return float(v)
    return v


def _show(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, float):
        return fmt(v)
    return num_text(v)


def summarise_allocation(alloc: Any, top: int = 5, full: bool = False, width: Optional[int] = None,
                         max_servers: int = 8) -> str:
    """An allocation (``mechverify.allocation.Allocation`` or ``allocate``'s JSON dict) for a terminal.

    Small allocations (at most ``2*top`` users and ``max_servers`` servers, and within ``width``) and
    ``full=True`` print the whole users x servers task table.  Larger ones print a summary: the shape, the
    total tasks, the ``top`` users by tasks (with the servers they use most) and the ``top`` servers by
    tasks; the line ``--full`` says how to see everything."""
    users, servers, tasks, totals, mech, exact = _alloc_parts(alloc)
    head = f"mechanism: {mech}" + ("  (exact)" if exact else "")
    shown = [[_show(v) for v in row] for row in tasks]
    tot_s = [_show(t) for t in totals]
    w0 = max(len("user"), *(len(u) for u in users))
    cols = [max(len(s), *(len(shown[j][i]) for j in range(len(users)))) for i, s in enumerate(servers)]
    wt = max(len("total"), *(len(t) for t in tot_s))
    line_len = w0 + sum(c + 2 for c in cols) + wt + 2
    small = len(users) <= 2 * top and len(servers) <= max_servers and (width is None or line_len <= width)
    if full or small:
        lines = [head, "  ".join(["user".ljust(w0)] + [s.rjust(c) for s, c in zip(servers, cols)]
                                 + ["total".rjust(wt)])]
        for j, u in enumerate(users):
            lines.append("  ".join([u.ljust(w0)] + [shown[j][i].rjust(c) for i, c in enumerate(cols)]
                                   + [tot_s[j].rjust(wt)]))
        return "\n".join(lines)
    vals = [[_val(v) for v in row] for row in tasks]
    tot_v = [_val(t) for t in totals]
    grand = sum(tot_v[1:], tot_v[0]) if tot_v else 0
    per_server = [sum((vals[j][s] for j in range(len(users))), 0) for s in range(len(servers))]
    used = sum(1 for v in per_server if v > 0)
    lines = [head]
    getting = sum(1 for t in tot_v if t > 0)
    lines += wrap_line(f"{len(users)} {plural(len(users), 'user')} x {len(servers)} {plural(len(servers), 'server')}; "
                       f"{_show(grand)} {plural(grand, 'task')} in total; {getting} "
                       f"{'user gets' if getting == 1 else 'users get'} tasks, {used} "
                       f"{'server is' if used == 1 else 'servers are'} used", width, "  ")
    order = sorted(range(len(users)), key=lambda j: (-float(tot_v[j]), j))[:top]
    lines.append(f"top {len(order)} users by tasks:")
    uw = max(len(users[j]) for j in order)
    tw = max(len(tot_s[j]) for j in order)
    for j in order:
        where = sorted((s for s in range(len(servers)) if vals[j][s] > 0), key=lambda s: (-float(vals[j][s]), s))
        spots = ", ".join(f"{servers[s]} {shown[j][s]}" for s in where[:3])
        more = f" (+{len(where) - 3} servers)" if len(where) > 3 else ""
        first = f"  {users[j].ljust(uw)}  {tot_s[j].rjust(tw)}  "
        lines += wrap_line(f"on {len(where)} server{'s' if len(where) != 1 else ''}: {spots}{more}"
                           if where else "no tasks", width, " " * len(first), first)
    sorder = sorted(range(len(servers)), key=lambda s: (-float(per_server[s]), s))[:top]
    lines.append(f"top {len(sorder)} servers by tasks: " + ", ".join(f"{servers[s]} {_show(per_server[s])}"
                                                                   for s in sorder))
    lines.append(f"(summary of {len(users) * len(servers)} entries; --full prints every user x server)")
    return "\n".join(ln for part in lines for ln in (wrap_line(part, width, "  ") if len(part) > (width or 10**9)
                                                     else [part]))


def z3_verdict_text(head: str, res: Result, certified: str, lines: list) -> str:
    """``certify`` / ``query``: one verdict line, plus the certified domain or space when certified."""
    if res.verdict is Verdict.CERTIFIED:
        return "\n".join([f"{head}: {certified} in {res.seconds:.2f} s"] + [f"  {line}" for line in lines + [res.note]])
    if res.verdict is Verdict.VIOLATED:
        return f"{head}: violated ({res.counterexample or 'not stored'}) -- {res.note}"
    if res.verdict is Verdict.VACUOUS:
        return f"{head}: vacuous -- the vacuity control is UNSAT, so nothing is certified ({res.note})"
    return f"{head}: not certified: unknown ({res.note})"
