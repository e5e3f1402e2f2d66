"""The report of a simulation (``simulation.simulate``): text, JSON, Markdown and an HTML page with matplotlib
figures (utilisation and tasks waiting over time, each queue's or job's dominant share over time, the CDF of
JCT and of the JCT factor).  Figures are deterministic (fixed size, fixed SVG ids, no date)."""
from __future__ import annotations

import html
import io
import json
import os
from typing import Any, Optional

__all__ = ["render_simulation_text", "render_simulation_markdown", "render_simulation_html", "simulation_to_json",
           "write_simulation", "figures"]


def _n(v: Any, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def _property_rows(sim) -> list[list[str]]:
    rows = []
    for tr in sim.properties.values():
        rc = tr.rechecks
        confirmed = sum(1 for r in rc if r[3] == "confirmed")
        what = f"judged at {tr.cadence}"
        if tr.flagged_steps == 0:
            verdict = f"no violation found in {tr.judged_steps} steps ({what})"
        else:
            others = "".join(f", {sum(1 for r in rc if r[3] == w)} {w}" for w in sorted({r[3] for r in rc})
                             if w != "confirmed")
            screen = (f"flagged in floats {_n(100 * tr.time_ratio, 3)}% of the time ({tr.flagged_steps} of "
                      f"{tr.judged_steps} steps); the first {len(rc)} re-checked exactly: {confirmed} confirmed{others}")
            # a violation is said only where the exact re-check confirmed one; the float screen alone is a flag
            verdict = f"violated (confirmed exactly); {screen}" if confirmed else f"no violation confirmed; {screen}"
        rows.append([tr.title, verdict, _n(tr.worst), _n(tr.mean)])
    return rows


def _summary_lines(sim) -> list[str]:
    s = sim.jct_summary()
    who = f"{sim.jobs} jobs" if sim.jobs == sim.users else \
        f"{sim.users} users, {sim.jobs} of them jobs (with work to do: the ones with a JCT)"
    lines = [f"simulation of {sim.mechanism} on {sim.trace}: {who}, {sim.steps} steps, simulated time "
             f"{_n(sim.end_time, 6)}, {sim.seconds:.2f} s",
             f"jobs: {s['finished']} finished, {s['unfinished']} unfinished"
             + (f" ({s['tasks_done']} of {s['tasks']} tasks done by the end: "
                f"{_n(100 * s['tasks_done'] / s['tasks'], 3)}%)" if s["unfinished"] and s["tasks"] else "")
             + ("" if not s["finished"] else f"; JCT mean {_n(s['jct_mean'])}, median {_n(s['jct_median'])}, "
                f"p95 {_n(s['jct_p95'])}; JCT factor (standalone/actual) mean {_n(s['jct_factor_mean'])}, "
                f"median {_n(s['jct_factor_median'])}")]
    util = ", ".join(f"{r} {_n(100 * m, 3)}%" for r, sr in sim.utilisation.items() if (m := sr.mean()) is not None)
    if util:
        lines.append(f"utilisation (time mean, present cluster): {util}")
    if sim.waiting is not None and sim.waiting.mean() is not None:
        lines.append(f"tasks waiting (time mean): {_n(sim.waiting.mean())}")
    tc = sim.task_counts
    if tc:
        lines.append(f"whole tasks: {tc.get('started', 0):,} started (a resumed one again), {tc.get('completed', 0):,} "
                     f"completed, {tc.get('suspended', 0):,} suspended, {tc.get('reallocations', 0):,} reallocations")
    if sim.stopped:
        lines.append(f"{sim.stopped} (everything above is up to there)")
    return lines


def render_simulation_text(sim) -> str:
    lines = _summary_lines(sim)
    if sim.properties:
        lines.append("properties over time (exact verdict; the float screen; worst; time mean):")
        for title, verdict, worst, mean in _property_rows(sim):
            lines.append(f"  {title}: {verdict}; worst {worst}; mean {mean}")
        lines.append("  a step is flagged when its float measure is past 1 by more than 1e-9 (relative; the "
                     "domination factor, an LP's: 1e-7); only re-checked steps are certain")
    return "\n".join(lines)


def simulation_to_json(sim) -> dict[str, Any]:
    return {"format": "mechverify-simulation-3", **sim.to_dict()}


def render_simulation_markdown(sim) -> str:
    out = [f"# Simulation: {sim.mechanism} on {sim.trace}", ""]
    out += [f"- {line}" for line in _summary_lines(sim)]
    if sim.properties:
        out += ["", "| property | over time | worst | time mean |", "|---|---|---|---|"]
        out += ["| " + " | ".join(r) + " |" for r in _property_rows(sim)]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------- figures
def _save(fig, plt, png: Optional[dict] = None, key: str = "") -> str:
    """The figure as SVG text (inline in the HTML); with ``png``, also its PNG bytes under ``key``."""
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    if png is not None:
        raw = io.BytesIO()
        fig.savefig(raw, format="png", dpi=110)
        png[key] = raw.getvalue()
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def figures(sim, png: Optional[dict] = None) -> dict[str, str]:
    """SVG texts: ``utilisation``, ``shares``, ``jct_cdf`` (those with data); ``png``: a dict also given each
    figure's PNG bytes."""
    from .plots import _plt

    plt = _plt()
    out: dict[str, str] = {}
    fig, ax = plt.subplots(figsize=(7.6, 3.2))
    drawn = False
    for r, s in sim.utilisation.items():
        pts = s.points_list()
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=f"{r} utilisation", drawstyle="steps-mid")
            drawn = True
    if sim.waiting is not None and sim.waiting.points_list():
        ax2 = ax.twinx()
        pts = sim.waiting.points_list()
        ax2.plot([p[0] for p in pts], [p[1] for p in pts], color="#888888", linestyle=":", label="tasks waiting")
        ax2.set_ylabel("tasks waiting")
        ax2.legend(loc="upper right", fontsize=7)
    if drawn:
        ax.set_xlabel("time")
        ax.set_ylabel("share of the present cluster")
        ax.set_ylim(0, 1.05)
        ax.legend(loc="upper left", fontsize=7)
        out["utilisation"] = _save(fig, plt, png, "utilisation")
    else:
        plt.close(fig)
    if sim.shares:
        fig, ax = plt.subplots(figsize=(7.6, 3.2))
        for k, s in sim.shares.items():
            pts = s.points_list()
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=k, drawstyle="steps-mid")
        ax.set_xlabel("time")
        ax.set_ylabel(f"dominant share ({sim.shares_by})")
        ax.set_ylim(0, 1.05)
        ax.legend(loc="upper right", fontsize=7)
        out["shares"] = _save(fig, plt, png, "shares")
    if sim.jct:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.6, 3.0))
        js = sorted(r[3] for r in sim.jct)
        fs = sorted(r[4] for r in sim.jct)
        n = len(js)
        a1.plot(js, [(i + 1) / n for i in range(n)], drawstyle="steps-post")
        a1.set_xlabel("JCT")
        a1.set_ylabel("fraction of jobs")
        a2.plot(fs, [(i + 1) / n for i in range(n)], drawstyle="steps-post")
        a2.set_xlabel("JCT factor (standalone / actual)")
        fig.tight_layout()
        out["jct_cdf"] = _save(fig, plt, png, "jct_cdf")
    return out


def render_simulation_html(sim, figs: Optional[dict[str, str]] = None) -> str:
    figs = figures(sim) if figs is None else figs
    e = html.escape
    from .html import _page

    parts = [f"<h1>Simulation: {e(sim.mechanism)} on {e(sim.trace)}</h1><ul>"]
    parts += [f"<li>{e(line)}</li>" for line in _summary_lines(sim)]
    parts.append("</ul>")
    captions = {"utilisation": "Utilisation of each resource of the present cluster and tasks waiting, over time "
                               "(time-weighted means per bucket)",
                "shares": f"Dominant share of each {sim.shares_by} over time",
                "jct_cdf": "CDF of job completion times and of JCT factors"}
    for key, svg in figs.items():
        parts.append(f"<figure>{svg}<figcaption>{e(captions[key])}</figcaption></figure>")
    if sim.properties:
        parts.append("<h2>Properties over time</h2><table><tr><th>property</th><th>over time</th><th>worst</th>"
                     "<th>time mean</th></tr>")
        parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in _property_rows(sim)]
        parts.append("</table><p>A step is flagged when its float measure is past 1 by more than 1e-9 (relative; "
                     "the domination factor, an LP's: 1e-7); the first flagged steps are re-checked in exact "
                     "arithmetic.</p>")
    if sim.jct:
        parts.append("<h2>Jobs</h2><table><tr><th>job</th><th>tasks</th><th>arrival</th><th>JCT</th>"
                     "<th>JCT factor</th></tr>")
        for name, k, a, j, f in sim.jct[:200]:
            parts.append(f"<tr><td>{e(name)}</td><td>{k}</td><td>{_n(a, 6)}</td><td>{_n(j, 6)}</td><td>{_n(f)}</td></tr>")
        parts.append("</table>" + (f"<p>The first 200 of {len(sim.jct)} finished jobs (all in simulation.json).</p>"
                                   if len(sim.jct) > 200 else ""))
    return _page(f"Simulation: {sim.mechanism}", "\n".join(parts))


def write_simulation(sim, out_dir: str) -> list[str]:
    """DIR/simulation.json, simulation.md, simulation.html (figures inline, also as SVG and PNG files)."""
    from ..files import atomic_write_bytes, atomic_write_text

    os.makedirs(out_dir, exist_ok=True)
    pngs: dict = {}
    figs = figures(sim, pngs)
    written = []
    for name, text in (("simulation.json", json.dumps(simulation_to_json(sim), indent=1)),
                       ("simulation.md", render_simulation_markdown(sim)),
                       ("simulation.html", render_simulation_html(sim, figs)),
                       *((f"{k}.svg", v) for k, v in figs.items())):
        path = os.path.join(out_dir, name)
        atomic_write_text(path, text)
        written.append(path)
    for key, raw in pngs.items():
        path = os.path.join(out_dir, f"{key}.png")
        atomic_write_bytes(path, raw)
        written.append(path)
    return written


# ---------------------------------------------------------------------- a sweep of simulations
def _point_text(point: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items()) or "(defaults)"


def _sweep_table(d: dict) -> list[str]:
    props = list(dict.fromkeys(p for g in d["groups"] for p in g["properties"]))
    resources = list(dict.fromkeys(r for g in d["groups"] for r in g["utilisation"]))
    head = (["mechanism", "point", "seeds done", "JCT factor mean", "jobs unfinished"]
            + [f"utilisation {r}" for r in resources] + ["tasks waiting"]
            + [f"{p.upper()} time ratio" for p in props] + [f"{p.upper()} time mean" for p in props])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g in d["groups"]:
        row = ([g["mechanism"], _point_text(g["point"]), f"{g['done']}/{g['seeds']}", _n(g["jct_factor_mean"]),
                str(g["unfinished"])]
               + [_n(None if g["utilisation"].get(r) is None else 100 * g["utilisation"][r], 3) + "%"
                  if g["utilisation"].get(r) is not None else "-" for r in resources]
               + [_n(g["waiting_mean"])]
               + [_n(g["properties"].get(p, {}).get("time_ratio")) for p in props]
               + [_n(g["properties"].get(p, {}).get("time_mean")) for p in props])
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _sweep_head(d: dict) -> str:
    counts = ", ".join(f"{v} {k}" for k, v in sorted(d["counts"].items()))
    return (f"simulation sweep on {d['workload']}: {len(d['cells'])} cells ({counts}; {d['resumed']} read back from "
            f"the campaign), {d['executor']}, {d['seconds']:.1f} s"
            + (f" (--budget {d['budget']:g} s)" if d.get("budget") is not None else ""))


def render_sweep_markdown(d: dict) -> str:
    """A sweep's table (``verifier.simsweep.SweepReport.to_dict``): per mechanism and point, the means over the
    seeds that ran to their end; then every cell that did not."""
    lines = [f"# {_sweep_head(d)}", "", "Means over the seeds that ran to their end (per seed: the run's mean JCT "
             "factor, time-mean utilisation and tasks waiting, the time ratio of each property's violation).", ""]
    lines += _sweep_table(d)
    left = [c for c in d["cells"] if c["status"] != "done"]
    if left:
        lines += ["", "Cells not finished:", ""] + [f"- {c['cell']}: {c['status']} ({c.get('note', '')})" for c in left]
    return "\n".join(lines) + "\n"


def render_sweep_text(d: dict) -> str:
    """The Markdown table, for a terminal."""
    return render_sweep_markdown(d)[2:].rstrip("\n")


def write_sweep(d: dict, out_dir: str) -> list[str]:
    """``out_dir/sweep.json`` (every cell's record) and ``out_dir/sweep.md``; the paths written."""
    from ..files import atomic_write_json, atomic_write_text

    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, "sweep.json"), os.path.join(out_dir, "sweep.md")]
    atomic_write_json(paths[0], d)
    atomic_write_text(paths[1], render_sweep_markdown(d))
    return paths
