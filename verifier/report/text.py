"""Terminal renderings: the ``run`` table and ``check`` result lines."""
from __future__ import annotations

from mechverify.numbers import fmt

from ..results import Result, verdict_text
from .common import detail, domain_text

__all__ = ["render_table", "check_line", "CHECK_VERDICT_TEXT", "z3_verdict_text"]


def render_table(rep) -> str:
    """A ``run`` report (``verifier.run.RunReport``) as a plain-text table."""
    lines = [f"mechanism: {rep.mechanism} -- {rep.title}",
             f"setting:   {rep.setting}",
             f"domain:    {domain_text(rep.domain)}",
             f"seed {rep.seed}, budget {rep.budget:g} CPU s, took {rep.seconds:.1f} CPU s "
             f"({rep.wall_seconds:.1f} s wall)", ""]
    rows = [("property/variant", "paper claims", "verdict", "claim")]
    for r in rep.results:
        rows.append((f"{r.property}/{r.variant}", r.claims_text(), verdict_text(r), r.claim_status()))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for k, row in enumerate(rows):
        lines.append("  ".join(row[i].ljust(widths[i]) for i in range(3)) + "  " + row[3])
        if k == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 5)
        elif rep.results[k - 1].verdict == "violated":
            lines.append(" " * (widths[0] + 2) + "  " + detail(rep.results[k - 1]))
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


CHECK_VERDICT_TEXT = {
    "violated": "VIOLATED",
    "satisfied": "satisfied on this instance (exact check)",
    "not_refuted": "no violation found",
    "not_applicable": "not applicable",
    "unknown": "unknown",
}


def check_line(r: Result) -> str:
    """One ``check`` result as one line: verdict, evidence, the papers' claims, a refutation flag."""
    head = f"{r.property}/{r.variant}"
    text = CHECK_VERDICT_TEXT[r.verdict]
    if r.verdict == "violated":
        text += f": {r.certificate.summary}"
        if r.counterexample:
            text += f" [{r.counterexample}]"
        if r.certificate.robust is False:
            text += " (not for every allocation the definition allows)"
    elif r.verdict == "not_refuted":
        text += f" in {r.trials} deviations / {r.seconds:.1f} s"
        if r.measure is not None:
            text += f" (worst measure {fmt(r.measure)})"
    elif r.verdict == "satisfied" and r.measure is not None:
        text += f" (measure {fmt(r.measure)})"
    if r.note and r.verdict in ("not_applicable", "unknown", "not_refuted"):
        text += f" -- {r.note}"
    outside = r.details.get("outside", [None] * len(r.claims))
    claim = "; ".join(f"claimed {c.status} [{c.source}]" + (f" (not about this instance: {o})" if o else "")
                      for c, o in zip(r.claims, outside)) if r.claims else "no claim"
    wrong = r.refuted_sources()
    refuted = ""
    if wrong:
        refuted = "  << CLAIM REFUTED" + (f" ({'; '.join(wrong)})" if len(r.claims) > 1 else "")
    return f"{head:28s} {text}   ({claim}){refuted}"


def z3_verdict_text(head: str, res: Result, certified: str, lines: list) -> str:
    """``certify`` / ``query``: one verdict line, plus the certified domain or space when certified."""
    if res.verdict == "certified":
        return "\n".join([f"{head}: {certified} in {res.seconds:.2f} s"] + [f"  {line}" for line in lines + [res.note]])
    if res.verdict == "violated":
        return f"{head}: violated ({res.counterexample or 'not stored'}) -- {res.note}"
    if res.verdict == "vacuous":
        return f"{head}: vacuous -- the vacuity control is UNSAT, so nothing is certified ({res.note})"
    return f"{head}: not certified: unknown ({res.note})"
