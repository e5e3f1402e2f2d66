"""HTML reports of ``run`` and ``audit``: one self-contained page each (inline CSS and SVG).

Per counterexample the page shows the instance as tables (capacities per server x resource, the users'
demands, weights, eligible servers, task bounds, external demands; what a deviator reported), the
allocations involved with exact numbers (``p/q``), and one figure in the style of the seed papers: per
server, one bar per resource, stacked with each user's share of that resource's capacity -- every bar of
the figure on the same 0-100% scale -- and each user's TRUE tasks (its true demands applied to the bundle
it received) under each allocation, on one common scale.  Numbers are exact; a float (a mechanism without
an exact allocation) is rounded and marked ``~``.

Stored counterexample files are linked relatively (``write_reports``/``write_audit`` copy them beside the
page, under ``counterexamples/``) and embedded in the page as well, so it stays readable on its own.
"""
from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from mechverify.trace_deviations import TraceMisreport, TraceResubmission
from mechverify.model import Environment
from mechverify.numbers import to_fraction
from mechverify.utility import true_tasks

from ..results import Result, Verdict
from ..store import read as read_stored
from .citations import SEEDS, codes_in
from .common import (TOLERANCE_TEXT, claim_words, closing_line, detail, domain_text, measure_of, measure_text, num_text,
                     property_failure_lines, property_failures, runs_findings, verdict_words)

__all__ = ["render_html", "CounterexampleView", "view_from_certificate", "view_from_file",
           "link_name"]

_USER_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                "#9c755f", "#bab0ac"]
MAX_FIG_SERVERS = 12  # a figure shows at most this many servers (minimal counterexamples are far smaller)
MAX_TABLE_ROWS = 40
EMBED_LIMIT = 40_000  # embed stored JSON up to this many characters


def esc(s: Any) -> str:
    """HTML-escaped text of ``s`` (quotes too)."""
    return html.escape(str(s), quote=True)


def link_name(path: str) -> str:
    """Where ``write_reports``/``write_audit`` copy a stored counterexample, relative to the page."""
    return "counterexamples/" + os.path.basename(path)


# ---------------------------------------------------------------------- what a counterexample shows
@dataclass
class CounterexampleView:
    """Everything the page shows of one counterexample (from a certificate or a stored file)."""

    id: str
    mechanism: str
    property: str
    variant: str
    env: Environment  # the TRUE environment
    deviation: Any = None  # verifier.properties.Deviation or None
    users: tuple = ()
    summary: str = ""
    gap: Any = None
    measure: Any = None
    utilities: dict = field(default_factory=dict)  # name -> number or text
    allocations: dict = field(default_factory=dict)  # name -> Allocation
    path: Optional[str] = None
    raw_json: Optional[str] = None
    method: str = "exact"
    #: a property over executions: the execution (``env`` is then the present users' at the failing ``step``)
    execution: Any = None
    step: Optional[int] = None


def view_from_certificate(cert, path: Optional[str] = None, mechanism: str = "") -> CounterexampleView:
    """The view of a :class:`verifier.properties.Certificate` (and its stored file, if any)."""
    w = cert.witness
    stored = _read(path)
    cid = stored.data.get("id", "") if stored else ""
    return CounterexampleView(cid or f"{w.property}-{w.variant}", w.mechanism or mechanism, w.property, w.variant,
                              w.env, w.deviation, tuple(w.users), cert.summary, cert.gap, cert.measure,
                              dict(cert.utilities), dict(cert.allocations), path, stored.text if stored else None,
                              cert.method, getattr(w, "execution", None), getattr(w, "step", None))


def view_from_file(path: str) -> Optional[CounterexampleView]:
    """The view of a stored counterexample file (read through the store: ``verifier.store.read``); None if
    it cannot be read."""
    stored = _read(path)
    if stored is None:
        return None
    try:
        d, w = stored.data, stored.witness()
        return CounterexampleView(d.get("id", os.path.basename(path)), d["mechanism"], d["property"], d["variant"],
                                  w.env, w.deviation, tuple(w.users), d.get("summary", ""), d.get("gap"),
                                  d.get("measure"), d.get("utilities") or {}, stored.allocations(), path, stored.text,
                                  d.get("method", "exact"))
    except Exception:  # noqa: BLE001 - an unreadable file is shown as a plain link
        return None


def _read(path: Optional[str]):
    """The stored file at ``path`` (``verifier.store.StoredFile``), or None when there is none to read."""
    if not path:
        return None
    try:
        return read_stored(path)
    except (OSError, ValueError, RecursionError):
        return None


# ---------------------------------------------------------------------- tables
def _n(v: Any) -> str:
    return esc(num_text(v))


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "", caption: str = "") -> str:
    """An HTML table; cells are already-escaped HTML."""
    more = ""
    if len(rows) > MAX_TABLE_ROWS:
        more = f"<tr><td colspan='{len(head)}'>... {len(rows) - MAX_TABLE_ROWS} more rows (see the JSON)</td></tr>"
        rows = rows[:MAX_TABLE_ROWS]
    cap = f"<caption>{caption}</caption>" if caption else ""
    return (f"<table class='{cls}'>{cap}<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows) + more + "</table>")


def _swatch(j: int) -> str:
    return f"<span class='sw' style='background:{_USER_COLORS[j % len(_USER_COLORS)]}'></span>"


def instance_tables(env: Environment, deviation: Any = None) -> str:
    """The instance: capacities (servers x resources, external capacities) and the users' data."""
    R, S = env.n_resources, env.n_servers
    out = [_table(["server"] + [esc(r) for r in env.resources],
                  [[esc(env.servers[s])] + [_n(env.capacity[s][r]) for r in range(R)] for s in range(S)],
                  "num", "Capacities c[s, r]")]
    if env.n_external:
        out.append(_table([esc(k) for k in env.external], [[_n(c) for c in env.external_capacity]], "num",
                          "External capacities (shared)"))
    head = ["user", "weight"] + [f"d[{esc(r)}]" for r in env.resources]
    head += [f"d<sub>er</sub>[{esc(k)}]" for k in env.external]
    head += ["eligible servers", "task bound"]
    rows = []
    for j in range(env.n_users):
        el = env.eligible[j]
        elig = "all" if len(el) == S else ", ".join(esc(env.servers[s]) for s in sorted(el)) or "none"
        row = [_swatch(j) + esc(env.users[j]), _n(env.weight[j])] + [_n(v) for v in env.demand[j]]
        row += [_n(v) for v in env.external_demand[j]]
        row += [elig, "unbounded" if env.tasks[j] is None else _n(env.tasks[j])]
        rows.append(row)
    out.append(_table(head, rows, "num", "Users (true data): per-task demands, weights, placement, task bounds"))
    if env.server_demand:
        rows = [[esc(env.users[j]), esc(env.servers[s])] + [_n(v) for v in vec]
                for (j, s), vec in sorted(env.server_demand.items())]
        out.append(_table(["user", "server"] + [f"d[{esc(r)}]" for r in env.resources], rows, "num",
                          "Server-specific demands d[j, s, r]"))
    if deviation is not None:
        out.append(_deviation_table(env, deviation))
    return "<div class='tables'>" + "".join(out) + "</div>"


def _deviation_table(env: Environment, dev: Any) -> str:
    if isinstance(dev, TraceMisreport):
        rows = [[esc(st.where), esc(st.describe().rsplit(" at ", 1)[0])] for st in dev.reports]
        return _table(["where it states its demand", "reports instead of the truth"], rows, "",
                      f"Deviation (misreport over the trace by {_swatch(env.users.index(dev.user)) if dev.user in env.users else ''}"
                      f"{esc(dev.user)})")
    if isinstance(dev, TraceResubmission):
        return f"<p class='dev'>Deviation (the tenant's submission): {esc(dev.describe())}.</p>"
    if dev.kind == "leave":
        who = [env.users[j] for j in dev.leave]
        return f"<p class='dev'>Deviation: {esc(', '.join(who))} {'leaves' if len(who) == 1 else 'leave'}.</p>"
    rows = []
    for r in dev.reports:
        bits = []
        if r.demand is not None:
            bits.append("demand (" + ", ".join(_n(v) for v in r.demand) + ")")
        if r.external_demand is not None:
            bits.append("external demand (" + ", ".join(_n(v) for v in r.external_demand) + ")")
        if r.eligible is not None:
            bits.append("eligible {" + ", ".join(esc(env.servers[s]) for s in sorted(r.eligible)) + "}")
        if r.tasks != "keep":
            bits.append("task bound " + ("unbounded" if r.tasks is None else _n(r.tasks)))
        rows.append([_swatch(r.user) + esc(env.users[r.user]), "; ".join(bits)])
    return _table(["user", "reports instead of the truth"], rows, "", "Deviation (misreport)")


def _user_index(true_env: Environment, alloc) -> list[Optional[int]]:
    """For each user of ``alloc.env``: its index in the true environment (users may have left)."""
    return [true_env.users.index(u) if u in true_env.users else None for u in alloc.env.users]


def _true_tasks(true_env: Environment, alloc, i: int, tj: int) -> Any:
    try:
        return true_tasks(true_env, tj, alloc.bundle(i))
    except Exception:  # noqa: BLE001 - shapes that cannot be compared (should not happen)
        return None


def _alloc_label(v: CounterexampleView, name: str) -> str:
    a = v.allocations[name]
    leave = v.deviation is not None and v.deviation.kind == "leave"
    if v.deviation is None and name != next(iter(v.allocations)):
        return "benchmark, not the mechanism's allocation"
    if a.env == v.env:
        return "before the departure" if leave else "truthful reports" if v.deviation is not None \
            else "the mechanism's allocation"
    if leave:
        return "after the departure"
    return "the mechanism saw the misreport"


def allocation_tables(v: CounterexampleView) -> str:
    """Per allocation: tasks per user x server as assigned (exact), their total, and the user's TRUE tasks."""
    out = []
    for name, a in v.allocations.items():
        env = a.env
        idx = _user_index(v.env, a)
        rows = []
        for i, u in enumerate(env.users):
            tj = idx[i]
            tt = _true_tasks(v.env, a, i, tj) if tj is not None else None
            row = [(_swatch(tj) if tj is not None else "") + esc(u)] + [_n(x) for x in a.x[i]]
            row += [_n(a.total(i)), "<b>" + _n(tt) + "</b>"]
            rows.append(row)
        note = "" if a.exact else " (floating point: ~ marks rounded numbers)"
        misreported = v.deviation is not None and v.deviation.kind == "misreport" and a.env != v.env
        assigned = "assigned (as reported)" if misreported else "assigned"
        out.append(_table(["user"] + [esc(s) for s in env.servers] + [assigned, "true tasks"], rows, "num",
                          f"<b>{esc(name)}</b> ({esc(_alloc_label(v, name))}): tasks per server{note}"))
    if v.utilities:
        out.append(_table(["quantity", "value"],
                          [[esc(k), _n(val if not isinstance(val, str) else val)] for k, val in v.utilities.items()],
                          "num", "Exact numbers of the violation"))
    return "<div class='tables'>" + "".join(out) + "</div>"


# ---------------------------------------------------------------------- figure
def allocation_figure(v: CounterexampleView) -> str:
    """One SVG: a panel per allocation (per server, one bar per resource stacked with each user's share of
    its capacity; every bar on the same 0-100% scale) and below, every user's TRUE tasks under each
    allocation on one common scale."""
    env = v.env
    names = list(v.allocations)
    if not names:
        return ""
    S = min(env.n_servers, MAX_FIG_SERVERS)
    R, K = env.n_resources, env.n_external
    bw, bgap, ggap, H = 18, 3, 16, 150
    group_w = R * (bw + bgap) - bgap
    panel_w = max(170, 46 + S * (group_w + ggap) + (K * (bw + bgap) + ggap if K else 0))
    top, axis_x = 34, 38
    panel_h = top + H + 44
    cols = min(len(names), max(1, 1100 // panel_w))
    prow = (len(names) + cols - 1) // cols
    lab_w, bar_max, rh = 170, 360, 16
    width = max(cols * panel_w + 10, lab_w + bar_max + 90)
    parts = []
    for p, name in enumerate(names):
        a = v.allocations[name]
        ox, oy = (p % cols) * panel_w, (p // cols) * panel_h
        idx = _user_index(env, a)
        parts.append(f"<text x='{ox + axis_x}' y='{oy + 14}' class='pt'>{esc(name)}</text>"
                     f"<text x='{ox + axis_x}' y='{oy + 27}' class='ps'>{esc(_alloc_label(v, name))}</text>")
        y0 = oy + top + H
        for t in (0, 50, 100):
            y = y0 - H * t / 100
            parts.append(f"<line x1='{ox + axis_x - 3}' x2='{ox + panel_w - 8}' y1='{y}' y2='{y}' class='grid'/>"
                         f"<text x='{ox + axis_x - 5}' y='{y + 3}' class='tick' text-anchor='end'>{t}%</text>")
        bundles = [a.bundle(i) for i in range(a.env.n_users)]

        def bar(x: float, cap: Any, shares: list[tuple[int, Any, Any]], label: str, title: str) -> None:
            parts.append(f"<rect x='{x}' y='{y0 - H}' width='{bw}' height='{H}' class='cap'/>")
            if not cap:
                parts.append(f"<text x='{x + bw / 2}' y='{y0 - 4}' class='tick' text-anchor='middle'>n/a</text>")
            y = float(y0)
            for i, amount, frac in shares:
                h = float(frac) * H
                if h <= 0:
                    continue
                tj = idx[i]
                color = _USER_COLORS[(tj if tj is not None else i) % len(_USER_COLORS)]
                y -= h
                parts.append(f"<rect x='{x}' y='{y:.2f}' width='{bw}' height='{h:.2f}' fill='{color}'>"
                             f"<title>{esc(a.env.users[i])} holds {esc(num_text(amount))} of {esc(title)} "
                             f"({esc(num_text(frac))} of its capacity {esc(num_text(cap))})</title></rect>")
            parts.append(f"<text x='{x + bw / 2}' y='{y0 + 11}' class='tick' text-anchor='middle'>"
                         f"{esc(label)}</text>")

        x = ox + axis_x + 6
        for s in range(S):
            for r in range(R):
                cap = env.capacity[s][r]
                shares = [(i, b.amounts[s][r], (b.amounts[s][r] / cap) if cap else 0) for i, b in enumerate(bundles)]
                bar(x + r * (bw + bgap), cap, shares, _short(env.resources[r]), f"{env.resources[r]} on {env.servers[s]}")
            parts.append(f"<text x='{x + group_w / 2}' y='{y0 + 24}' class='sv' text-anchor='middle'>"
                         f"{esc(env.servers[s])}</text>")
            x += group_w + ggap
        if K:
            for k in range(K):
                cap = env.external_capacity[k]
                shares = [(i, b.external[k], (b.external[k] / cap) if cap else 0) for i, b in enumerate(bundles)]
                bar(x + k * (bw + bgap), cap, shares, _short(env.external[k]), f"external {env.external[k]}")
            parts.append(f"<text x='{x + (K * (bw + bgap) - bgap) / 2}' y='{y0 + 24}' class='sv' "
                         f"text-anchor='middle'>external</text>")
    # true tasks, one common scale
    rows = []
    vmax = 0.0
    for name in names:
        a = v.allocations[name]
        idx = _user_index(env, a)
        for i in range(a.env.n_users):
            if idx[i] is None:
                continue
            t = _true_tasks(env, a, i, idx[i])
            if t is not None and t != float("inf"):
                rows.append((name, idx[i], t))
                vmax = max(vmax, float(t))
    ty = prow * panel_h + 10
    parts.append(f"<text x='8' y='{ty + 12}' class='pt'>True tasks of each user (its true demands, the "
                 f"bundle it received; common scale)</text>")
    y = ty + 22
    for j in range(env.n_users):
        for name in names:
            hit = [t for (nm, tj, t) in rows if nm == name and tj == j]
            if not hit and not any(tj == j for (_, tj, _) in rows):
                continue
            t = hit[0] if hit else None
            wpx = 0 if (t is None or vmax <= 0) else float(t) / vmax * bar_max
            col = _USER_COLORS[j % len(_USER_COLORS)]
            parts.append(f"<text x='{lab_w - 6}' y='{y + 11}' class='tick' text-anchor='end'>"
                         f"{esc(env.users[j])}, {esc(_short(name, 18))}</text>")
            if t is None:
                parts.append(f"<text x='{lab_w + 4}' y='{y + 11}' class='tick'>(left)</text>")
            else:
                parts.append(f"<rect x='{lab_w}' y='{y}' width='{wpx:.2f}' height='{rh - 3}' fill='{col}'/>"
                             f"<text x='{lab_w + wpx + 5:.2f}' y='{y + 10}' class='val'>{esc(num_text(t))}</text>")
            y += rh
        y += 4
    height = y + 8
    legend = " ".join(f"{_swatch(j)}{esc(u)}" for j, u in enumerate(env.users))
    more = (f" Only the first {MAX_FIG_SERVERS} of {env.n_servers} servers are drawn."
            if env.n_servers > MAX_FIG_SERVERS else "")
    return (f"<figure><svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"viewBox='0 0 {width} {height}' role='img'>{''.join(parts)}</svg>"
            f"<figcaption>Each bar is one resource of one server, 0-100% of its capacity (the same scale in "
            f"every panel); its segments are the users' bundles as allocated. Users: {legend}.{more}"
            f"</figcaption></figure>")


def _short(s: str, n: int = 6) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def counterexample_section(v: CounterexampleView, anchor: str, heading: str) -> str:
    """One counterexample: summary, the instance, the allocations and the figure, the stored file."""
    link = ""
    if v.path:
        link = f"<p class='file'>Stored file: <a href='{esc(link_name(v.path))}'>{esc(os.path.basename(v.path))}</a>"
        link += f" (replay: <code>python -m verifier replay {esc(v.path)}</code>)</p>"
    embedded = ""
    if v.raw_json and len(v.raw_json) <= EMBED_LIMIT:
        embedded = (f"<details><summary>counterexample JSON</summary><pre>{esc(v.raw_json)}</pre></details>")
    measure = ""
    if v.measure is not None:
        measure = (f"<p>Measure: <b>{esc(measure_text(v.property, _num(v.measure)))}</b> "
                   f"({esc(measure_of(v.property).describe())}); exact margin {esc(num_text(_num(v.gap)))}.</p>")
    trace = execution_section(v.mechanism, v.execution, v.step, v.deviation) if v.execution is not None else ""
    where = "Instance" if v.execution is None else (
        "Present users at the failing step" if v.step is not None else "Present users")
    return (f"<section class='ce' id='{esc(anchor)}'><h3>{heading}</h3>"
            f"<p class='summary'>{esc(v.summary)}</p>{measure}{trace}"
            f"<h4>{where}</h4>{instance_tables(v.env, v.deviation)}"
            + (f"<h4>Allocations</h4>{allocation_tables(v)}{allocation_figure(v)}" if v.allocations else
               "<h4>Allocations</h4><p>none: the mechanism failed on this instance (property runs)</p>")
            + f"{link}{embedded}</section>")


# ---------------------------------------------------------------------- executions
def step_table(steps: Sequence[Any], failing: Sequence[int] = (), status: Optional[dict] = None) -> str:
    """The steps of a run: index, [t, until), event, each present user's tasks (and each property's status at
    that step: ``status`` {key: per-step list of 'ok'/'FAIL'/'-'}); the ``failing`` steps' rows marked."""
    keys = list(status or {})
    rows = []
    for st in steps:
        tasks = "(nobody present)" if st.alloc is None else ", ".join(
            f"{esc(u)} {_n(v)}" for u, v in zip(st.users, st.alloc.totals()))
        ev = "start" if st.event is None else esc(st.event.describe())
        rows.append((st.index in failing, [str(st.index), f"[{_n(st.t)}, {_n(st.until)})", ev]
                     + [esc(status[k][st.index]) for k in keys] + [tasks]))
    head = ["step", "time [t, until)", "event"] + [esc(k) for k in keys] + ["tasks per present user"]
    more = ""
    if len(rows) > MAX_TABLE_ROWS:
        keep = set(range(MAX_TABLE_ROWS)) | {k for k, (bad, _) in enumerate(rows) if bad}
        more = (f"<tr><td colspan='{len(head)}'>... {len(rows) - len(keep)} more steps not shown</td></tr>")
        rows = [r for k, r in enumerate(rows) if k in keep]
    marked = " class='violated'"
    body = "".join(f"<tr{marked if bad else ''}>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
                   for bad, row in rows)
    return ("<table class='num steps'><caption>The steps of the run (exact; a marked row is a failing step)"
            "</caption><tr>" + "".join(f"<th>{h}</th>" for h in head) + f"</tr>{body}{more}</table>")


def timeline_figure(tl: Any, caption: str) -> str:
    """The timeline (``verifier.report.timeline``) as an inline SVG figure with ``caption`` (already HTML)."""
    from .timeline import DODGE, to_svg

    svg = to_svg(tl).replace("<svg ", "<svg class='timeline' role='img' ", 1)
    what = "queue's" if tl.by == "queue" else "present user's"
    return (f"<figure class='timeline'>{svg}<figcaption>{caption} Each {what} dominant share of the present "
            f"cluster over time ({esc(tl.unit)}); dotted ticks are the events; lines of equal share are drawn "
            f"{DODGE:g} pt apart so that none hides another."
            + (f" Not drawn: {esc(', '.join(tl.omitted))}." if tl.omitted else "") + "</figcaption></figure>")


def execution_section(mechanism: str, ex: Any, step: Optional[int], deviation: Any) -> str:
    """A counterexample over an execution: the mechanism re-run exactly through it -- its timeline (the failing
    step shaded; under a trace misreport, the deviator's share in the deviated run dashed) and its steps."""
    from .timeline import timeline, trace_steps

    try:
        steps = trace_steps(mechanism, ex)
        dev = deviation if isinstance(deviation, TraceMisreport) else None
        deviated = trace_steps(mechanism, ex, dev) if dev is not None else None
        tl = timeline(ex, steps, step, dev, deviated)
    except Exception as exc:  # noqa: BLE001 - a mechanism that cannot be re-run here: the page says so
        return f"<h4>Execution</h4><p>(the run could not be replayed for the timeline: {esc(exc)})</p>"
    fail = "" if step is None or step >= len(steps) else (
        f" The failing step {step}, [{_n(steps[step].t)}, {_n(steps[step].until)}), is shaded.")
    dev_text = "" if dev is None else f" Dashed: {esc(dev.user)}'s share when it misreports ({esc(dev.describe())})."
    return ("<h4>Execution</h4>" + f"<p class='small'>{esc(ex.describe())}</p>"
            + timeline_figure(tl, f"The mechanism re-run exactly through the execution.{fail}{dev_text}")
            + step_table(steps, () if step is None else (step,)))


def _num(v: Any) -> Any:
    if isinstance(v, str) and v not in ("inf", "-inf"):
        try:
            return to_fraction(v, "number")
        except ValueError:
            return v
    return v


# ---------------------------------------------------------------------- page pieces
_CSS = """
body{font-family:'DejaVu Serif',Georgia,serif;margin:2em auto;max-width:1200px;color:#222;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em} h2{border-bottom:1px solid #999;margin-top:1.6em}
h3{margin-top:1.4em} h4{margin:.8em 0 .3em}
table{border-collapse:collapse;margin:.4em 1.2em .8em 0;font-size:13px}
caption{caption-side:top;text-align:left;font-size:12px;color:#444;padding-bottom:2px;white-space:nowrap}
td,th{border:1px solid #bbb;padding:3px 7px;vertical-align:top} th{background:#f2f2f2}
table.num td{text-align:right;font-family:'DejaVu Sans Mono',monospace;font-size:12px}
table.num td:first-child{text-align:left;font-family:inherit}
.tables{display:flex;flex-wrap:wrap;align-items:flex-start}
tr.refuted td{background:#fbdada} tr.violated td{background:#fff1dc} tr.certified td{background:#dff3df}
td.cell-refuted{background:#fbdada;font-weight:bold} td.cell-violated{background:#fff1dc}
td.cell-certified{background:#dff3df}
.sw{display:inline-block;width:10px;height:10px;margin:0 4px 0 0;border:1px solid #555;vertical-align:middle}
figure{margin:.6em 0 1em} figcaption{font-size:12px;color:#444;max-width:900px}
svg .pt{font:bold 12px sans-serif} svg .ps{font:11px sans-serif;fill:#555} svg .tick{font:10px sans-serif;fill:#333}
svg .sv{font:bold 11px sans-serif} svg .val{font:11px monospace} svg .grid{stroke:#ddd;stroke-width:1}
svg .cap{fill:#fafafa;stroke:#888;stroke-width:.8}
section.ce{border-top:1px solid #ccc;padding-top:.4em}
.summary{font-style:italic} .meta{color:#444;font-size:14px} .small{font-size:12px;color:#444}
dl.legend dt{font-weight:bold;float:left;clear:left;width:4.5em} dl.legend dd{margin-left:5em;margin-bottom:.2em}
pre{background:#f7f7f7;padding:.6em;font-size:11px;max-height:300px;overflow:auto}
svg.timeline{max-width:100%;height:auto}
"""


def _page(title: str, body: str) -> str:
    return (f"<!doctype html>\n<html lang='en'><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{_CSS}</style></head><body>\n{body}\n</body></html>\n")


def measures_section(props: Sequence[str]) -> str:
    """What each property's measure means and its violation threshold."""
    seen = [(p, measure_of(p, None)) for i, p in enumerate(props) if p not in props[:i]]
    seen = [(p, m) for p, m in seen if m is not None]
    if not seen:
        return ""
    rows = [[f"<b>{esc(p)}</b>", esc(m.meaning), esc(m.violated_when)] for p, m in seen]
    return ("<h2>Measures</h2>" + _table(["property", "measure", "violated when"], rows) +
            f"<p class='small'>Verdicts come from exact rational arithmetic. A float measure within the search's "
            f"float tolerance {TOLERANCE_TEXT.split()[-1]} (mechverify.numbers) of its threshold is float noise and is "
            f"printed as the threshold; this is not the --tolerance a user's float mechanism's violations must "
            f"clear.</p>")


def sources_section(texts: Sequence[Optional[str]]) -> str:
    """The full citations of the seed codes mentioned (all five if none is)."""
    codes = codes_in(texts) or sorted(SEEDS)
    return ("<h2>Sources</h2><p class='small'>Claims cite the seed papers by code, e.g. “004 Table 2” is "
            "Table 2 of paper 004.</p><dl class='legend'>"
            + "".join(f"<dt>{c}</dt><dd>{esc(SEEDS[c])}</dd>" for c in codes) + "</dl>")


def _ce_heading(r: Result) -> str:
    return f"{esc(r.mechanism)}: {esc(r.property)}/{esc(r.variant)}"


# ---------------------------------------------------------------------- run
def render_html(rep) -> str:
    """A ``run`` report as one HTML page."""
    rows, sections = [], []
    for k, r in enumerate(rep.results):
        cls = "refuted" if r.refuted else r.verdict
        anchor = f"ce-{k + 1}"
        verdict = esc(verdict_words(r))
        if r.verdict is Verdict.VIOLATED:
            file_link = (f" [<a href='{esc(link_name(r.counterexample))}'>JSON</a>]" if r.counterexample else "")
            verdict = f"<a href='#{anchor}'>violated</a> (counterexample {len(sections) + 1}){file_link}"
        rows.append(f"<tr class='{cls}'><td>{esc(r.property)}/{esc(r.variant)}</td>"
                    f"<td>{esc(r.claims_text())}</td><td>{verdict}</td>"
                    f"<td>{'<b>' if r.refuted else ''}{esc(r.claim_status())}{'</b>' if r.refuted else ''}</td>"
                    f"<td>{esc(_detail_without_summary(r) or r.note or '')}</td></tr>")
        if r.certificate is not None:
            v = view_from_certificate(r.certificate, r.counterexample, rep.mechanism)
            sections.append(counterexample_section(
                v, anchor, f"Counterexample {len(sections) + 1}: {_ce_heading(r)}"
                + (" — <span class='bad'>refutes " + esc('; '.join(r.refuted_sources())) + "</span>"
                   if r.refuted else "")))
    refuted = [r for r in rep.results if r.refuted]
    backing = ("each backed by a stored, replayable counterexample" if all(r.counterexample for r in refuted)
               else "each by an exactly re-checked counterexample; not stored in this run")
    words = claim_words(rep)
    failed = runs_findings(rep.results)
    closing = closing_line(rep)
    bad = " class='bad'" if failed else ""
    ref = (f"<p><b>Claims refuted</b> ({backing}): "
           + "; ".join(f"{esc(r.property)}/{esc(r.variant)} ({words.label}: {esc('; '.join(r.refuted_sources()))})"
                       for r in refuted) + "</p>") if refuted else \
        f"<p{bad}>{esc(closing[0].upper() + closing[1:])}.</p>"
    if refuted and failed:
        ref += ("<p class='bad'><b>The mechanism failed</b> (an exception or an invalid output): "
                + "; ".join(esc(f"{r.property}/{r.variant}: {verdict_words(r)}") for r in failed) + "</p>")
    ref += "".join("<p class='bad'><b>" + esc(first) + "</b>" + "".join("<br><code>" + esc(ln) + "</code>" for ln in rest)
                   + "</p>" for first, *rest in map(property_failure_lines, property_failures(rep.results)))
    skipped = ("<p class='small'>Not searched: " + "; ".join(f"{esc(p)}/{esc(v)} ({esc(w)})" for p, v, w in rep.skipped)
               + "</p>") if rep.skipped else ""
    body = (f"<h1>mechverify run: {esc(rep.mechanism)}</h1>"
            f"<p class='meta'>{esc(rep.title)}<br>setting: {esc(rep.setting)}<br>"
            f"domain searched: {esc(domain_text(rep.domain))}<br>seed {rep.seed}, budget {rep.budget:g} s "
            f"(wall clock), took {rep.seconds:.1f} s</p>"
            f"<table><tr><th>property/variant</th><th>{esc(words.column)}</th><th>verdict</th><th>claim</th>"
            f"<th>details</th></tr>{''.join(rows)}</table>{skipped}{ref}"
            + measures_section([r.property for r in rep.results])
            + sources_section([r.claims_text() for r in rep.results] + [rep.title])
            + f"<h2>Counterexamples</h2>{''.join(sections) or '<p>none</p>'}")
    return _page(f"mechverify run {rep.mechanism}", body)


def _detail_without_summary(r: Result) -> str:
    """The details column: size, minimality, time to first (the summary is in the counterexample section)."""
    if r.verdict is not Verdict.VIOLATED or r.certificate is None:
        return detail(r)
    full, summary = detail(r), r.certificate.summary
    return full[: -len(summary)].rstrip("; ") if summary and full.endswith(summary) else full


def counterexample_paths(cells_or_results: Sequence[Any]) -> list[str]:
    """The stored counterexample files a report links to."""
    out: list[str] = []
    for x in cells_or_results:
        for e in getattr(x, "evidence", [x]):
            p = getattr(e, "counterexample", None)
            if e.verdict is Verdict.VIOLATED and p and p not in out:
                out.append(p)
    return out
