"""Seed 001 Figs. 5-7, scaled: whole-task Best-Fit DRFH, First-Fit DRFH and Slots through one ``google2011`` job
trace over a common window -- ``python tools/reproduce.py seed001-figs5-8`` (docs/reproductions.md, "Seed 001
Figs. 5-7").

The window is [0, the last arrival], cut where a run's wall-clock ``budget`` stopped it (to the millisecond, as a
trace spells times).  Every run ends at the window known when it starts: the first (Best-Fit DRFH, the slow one)
at the last arrival or its budget; each later one is given the window's end as its trace's ``end`` (the jobs
arriving after it left out: they change nothing before it), so every run's unfinished jobs have their tasks done
counted at the same time (``simulate``'s ``unfinished_jobs[].tasks_done``).  Fig. 7's task completion ratio
("the number of tasks completed over the number of tasks submitted") is that, per user (a job: DRFH's unit of
fairness) arrived by the window's end; a job finished in the window: 1.
"""
from __future__ import annotations

import bisect
import json
import os
import sys
import time
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (os.path.join(ROOT, "src"), os.path.dirname(os.path.abspath(__file__))):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from reproduce_fig8 import ratio_scatter, tasks_done  # tools/: one reading of tasks done, one ratio plot

SEED001_TIME_MECHS = ("drfh-best-fit", "drfh-first-fit", "slots")
#: Fig. 6b's job-size classes (task counts; ours: the paper's five classes are not in its text)
TIMELINE_POINTS = 20_000
SIZE_CLASSES = ((1, 1), (2, 10), (11, 100), (101, 1000), (1001, 10**9))


def _at(timeline: list, t: float) -> Optional[float]:
    """The value of a bucketed timeline (``[(bucket midpoint, mean), ...]``, equal buckets, uncovered ones left
    out) at time ``t`` (None in an uncovered bucket or past the end)."""
    if not timeline:
        return None
    mids = [p[0] for p in timeline]
    width = min((b - a for a, b in zip(mids, mids[1:])), default=2 * mids[0])
    pos = bisect.bisect_left(mids, t)  # the nearest midpoint is one of the two around t (the lower on a tie)
    i = min((k for k in (pos - 1, pos) if 0 <= k < len(mids)), key=lambda k: abs(mids[k] - t))
    # (+ 1e-3: the stored midpoints are rounded to the millisecond; an instant on a bucket's edge is in either)
    return timeline[i][1] if abs(mids[i] - t) <= width / 2 + 1e-3 + 1e-9 * max(1.0, t) else None


def seed001_figs5_8(seed: int, out: str, jobs: int = 300, servers: int = 50, budget: float = 900.0,
                    rate: Optional[str] = None, recompute: bool = True) -> str:
    """Seed 001 Figs. 5-7, scaled: one ``google2011`` job trace (``jobs`` jobs on ``servers`` servers of the Google
    2011 mix, seed ``seed``), simulated by whole-task Best-Fit DRFH, First-Fit DRFH and the Slots scheduler
    (k = 14), each reallocating at every event (``NAME+recompute``; a job progresses at the tasks it runs), within
    ``budget`` seconds each, over one window (module docstring).  Each run's ``simulation.json`` is kept in
    ``out/<mechanism>/`` (read back when ``recompute`` is False).  Writes ``figs5-7.md``/``.json`` and
    ``fig5.png``/``fig6.png``/``fig7.png`` (utilisation over time; JCT CDFs and the mean JCT reduction over Slots
    by job size; task completion ratios, Best-Fit DRFH vs Slots)."""
    import numpy as np

    from mechanisms import get
    from mechanisms.core.time import lift
    from mechverify.job_trace import parse_job_trace
    from mechverify.workloads import get as get_workload
    from verifier.files import atomic_write_json, atomic_write_text
    from verifier.report.plots import _plt
    from verifier.report.simulation import simulation_to_json

    params = {"jobs": jobs, "servers": servers, **({"rate": rate} if rate else {})}
    trace = get_workload("google2011").jobs(np.random.default_rng(seed), **params)
    horizon = float(parse_job_trace(trace).horizon)  # the last arrival: the window every job has arrived in
    runs = {}
    cut = horizon  # the window's end so far (module docstring): each run ends there
    for m in SEED001_TIME_MECHS:
        path = os.path.join(out, m, "simulation.json")
        if recompute or not os.path.exists(path):
            ex = parse_job_trace({**trace, "end": cut, "jobs": [j for j in trace["jobs"] if j["arrival"] <= cut]})
            sim = simulate_run(lift(get(m), "recompute"), ex, budget, points=TIMELINE_POINTS)
            d = simulation_to_json(sim)
            for series in [*d["utilisation"].values(), d["waiting"]]:
                if series:  # 6 significant digits: the files stay small
                    series["timeline"] = [[round(t, 3), float("%.6g" % v)] for t, v in series["timeline"]]
            d["shares"] = {}  # not used by these figures (the first jobs' shares)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            atomic_write_text(path, json.dumps(d, separators=(",", ":")))
            print(f"{m}: {sim.steps} steps, {sim.seconds:.0f} s{', stopped: ' + sim.stopped if sim.stopped else ''}",
                  file=sys.stderr, flush=True)
        with open(path) as f:
            runs[m] = json.load(f)
        if runs[m]["stopped"]:
            cut = min(cut, round(runs[m]["end_time"], 3))
    # the common window [0, cut]: every comparison is over it, with the jobs complete by then
    res = {"seed": seed, "jobs": jobs, "servers": servers, "rate": rate, "horizon": horizon, "window": cut, "runs": {}}
    lines = [f"Seed 001 Figs. 5-7, scaled: one google2011 job trace ({jobs} jobs on {servers} servers of the Google "
             f"2011 mix, seed {seed}; arrivals over the first {horizon / 3600:.2f} h), whole tasks reallocated at "
             f"every event; the paper: 24 h of Google jobs on 2,000 servers.  Compared over the window [0, {cut:.0f} s] "
             f"({cut / 3600:.2f} h: the arrivals, cut where the first budget-stopped run stopped; each run after that one is "
             f"given the window's end as its end); 'finished' = complete by its end.", "",
             "| mechanism | steps | wall s | simulated to (s) | jobs finished in the window | utilisation cpu / mem, time "
             "mean over the window | JCT median / mean of those jobs (s) |",
             "|---|---|---|---|---|---|---|"]
    jrows = {}
    for m, d in runs.items():
        grid = [cut * (i + 0.5) / 200 for i in range(200)]
        win = {r: [v for v in (_at(d["utilisation"][r]["timeline"], t) for t in grid) if v is not None]
               for r in d["utilisation"]}
        wmean = {r: (sum(v) / len(v) if v else None) for r, v in win.items()}
        jrows[m] = {row["name"]: row for row in d["jobs_table"] if row["arrival"] + row["jct"] <= cut}
        js = sorted(row["jct"] for row in jrows[m].values())
        res["runs"][m] = {"steps": d["steps"], "seconds": d["seconds"], "stopped": d["stopped"],
                          "end_time": d["end_time"], "finished": len(js), "utilisation_window": wmean,
                          "jct_median": js[len(js) // 2] if js else None,
                          "jct_mean": sum(js) / len(js) if js else None}
        u = res["runs"][m]
        lines.append(f"| {m} | {d['steps']} | {d['seconds']:.0f} | {d['end_time']:.0f}"
                     f"{' (budget)' if d['stopped'] else ''} | {u['finished']} of "
                     f"{jobs} | {' / '.join('-' if v is None else f'{100 * v:.1f}%' for v in (wmean['cpu'], wmean['mem']))} | "
                     + (f"{u['jct_median']:.0f} / {u['jct_mean']:.0f} |" if js else "- |"))
    # Fig. 5: Best-Fit above First-Fit "at all times" (over the window, on a common grid of 200 instants)
    grid = [cut * (i + 0.5) / 200 for i in range(200)]
    above = {}
    for r in ("cpu", "mem"):
        pairs = [(_at(runs["drfh-best-fit"]["utilisation"][r]["timeline"], t),
                  _at(runs["drfh-first-fit"]["utilisation"][r]["timeline"], t),
                  _at(runs["slots"]["utilisation"][r]["timeline"], t)) for t in grid]
        pairs = [p for p in pairs if None not in p]
        above[r] = {"instants": len(pairs),
                    "best_ge_first": sum(b >= f - 1e-9 for b, f, _ in pairs),
                    "best_gt_slots": sum(b > s for b, _, s in pairs),
                    "first_gt_slots": sum(f > s for _, f, s in pairs)}
    res["fig5"] = above
    lines += ["", "Fig. 5 (utilisation over the window, 200 instants): "
              + "; ".join(f"{r}: Best-Fit >= First-Fit at {a['best_ge_first']} of {a['instants']}, Best-Fit > Slots at "
                          f"{a['best_gt_slots']}, First-Fit > Slots at {a['first_gt_slots']}" for r, a in above.items())]
    # Fig. 6: jobs finished under both Best-Fit and Slots; the mean JCT reduction by job size
    both = [n for n in jrows["drfh-best-fit"] if n in jrows["slots"]]
    lines += ["", f"Fig. 6b (jobs finished under both Best-Fit DRFH and Slots: {len(both)}): mean completion time "
              "reduction (Slots JCT - Best-Fit JCT) / Slots JCT by job size", "",
              "| tasks | jobs | mean reduction | median reduction | jobs faster under Best-Fit / slower |",
              "|---|---|---|---|---|"]
    res["fig6b"] = []
    for lo, hi in SIZE_CLASSES:
        red = [(jrows["slots"][n]["jct"] - jrows["drfh-best-fit"][n]["jct"]) / jrows["slots"][n]["jct"]
               for n in both if lo <= jrows["slots"][n]["tasks"] <= hi]
        label = f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi < 10**9 else f">= {lo}")
        if red:
            srt = sorted(red)
            row = {"tasks": label, "jobs": len(red), "mean": sum(red) / len(red), "median": srt[len(srt) // 2],
                   "faster": sum(x > 1e-9 for x in red), "slower": sum(x < -1e-9 for x in red)}
            lines.append(f"| {label} | {row['jobs']} | {100 * row['mean']:.1f}% | {100 * row['median']:.1f}% | "
                         f"{row['faster']} / {row['slower']} |")
        else:
            row = {"tasks": label, "jobs": 0}
            lines.append(f"| {label} | 0 | - | - | - |")
        res["fig6b"].append(row)
    # Fig. 7: each user's task completion ratio at the window's end (every run ends there: module docstring)
    late = {m: runs[m]["end_time"] for m in ("drfh-best-fit", "slots") if abs(runs[m]["end_time"] - cut) > 1e-3}
    if late:  # a later run stopped before an earlier one's end: tasks done not at one time (a larger --budget)
        res["fig7"] = None
        lines += ["", f"Fig. 7: not computed: runs ending past the window's end ({cut:.3f} s): {late}"]
    else:
        res["fig7"] = f7 = completion_ratios(runs["drfh-best-fit"], runs["slots"],
                                             [j for j in trace["jobs"] if j["arrival"] <= cut])
        lines += ["", f"Fig. 7 (task completion ratio: tasks done by the window's end, {cut:.0f} s, over tasks; the "
                  f"{f7['users']} users arrived by then): higher under Best-Fit DRFH than under Slots "
                  f"{f7['higher']}, equal {f7['equal']} ({f7['equal_complete']} complete under both, "
                  f"{f7['equal_none']} with no task done under either), lower {f7['lower']}; all tasks done under "
                  f"Best-Fit but not Slots {f7['best_fit_only_complete']} "
                  f"({100 * f7['best_fit_only_complete'] / max(f7['users'], 1):.1f}%), under Slots but not "
                  f"Best-Fit {f7['slots_only_complete']}; mean ratio Best-Fit {f7['mean_best_fit']:.3f}, Slots "
                  f"{f7['mean_slots']:.3f}."]
    # the figures
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for ax, r in zip(axes, ("cpu", "mem")):
        for m, d in runs.items():
            tl = [(t, v) for t, v in d["utilisation"][r]["timeline"] if t <= cut]
            ax.plot([t / 3600 for t, _ in tl], [100 * v for _, v in tl], label=m, lw=1)
        ax.set_xlabel("time (h)")
        ax.set_ylabel(f"{r} utilisation (%)")
        ax.set_ylim(0, 100)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Seed 001 Fig. 5, scaled ({jobs} google2011 jobs, {servers} servers)", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig5.png"), dpi=110)
    plt.close(fig)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for m in runs:
        js = sorted(row["jct"] for row in jrows[m].values())
        if js:
            axes[0].step(js, [(i + 1) / jobs for i in range(len(js))], where="post", label=m, lw=1)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("job completion time (s)")
    axes[0].set_ylabel("fraction of the jobs")
    axes[0].legend(fontsize=7)
    rows6 = [r for r in res["fig6b"] if r["jobs"]]
    axes[1].bar(range(len(rows6)), [100 * r["mean"] for r in rows6])
    axes[1].set_xticks(range(len(rows6)), [r["tasks"] for r in rows6])
    axes[1].set_xlabel("tasks per job")
    axes[1].set_ylabel("mean JCT reduction over Slots (%)")
    fig.suptitle("Seed 001 Fig. 6, scaled: JCT CDF (jobs finished in the window); Best-Fit DRFH's reduction by job "
                 "size", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig6.png"), dpi=110)
    plt.close(fig)
    if res["fig7"]:  # the paper's Fig. 7: a circle per user, its radius logarithmic in its tasks
        fig, ax = plt.subplots(figsize=(4.2, 4.2))
        users = res["fig7"]["per_user"]
        groups = []
        for key, colour, label in (("higher", "#1f77b4", "higher under Best-Fit"), ("equal", "#7f7f7f", "equal"),
                                   ("lower", "#d62728", "lower")):
            us = [u for u in users if u["vs_slots"] == key]
            groups.append(([u["slots"] for u in us], [u["best_fit"] for u in us], [u["tasks"] for u in us], colour,
                           label))
        ratio_scatter(ax, groups, "Task completion ratio, Slots", "Task completion ratio, Best-Fit DRFH",
                      f"Seed 001 Fig. 7, scaled ({jobs} jobs, {servers} servers, at {cut / 3600:.2f} h)")
        fig.tight_layout()
        fig.savefig(os.path.join(out, "fig7.png"), dpi=110)
        plt.close(fig)
    text = "\n".join(lines) + "\n"
    atomic_write_text(os.path.join(out, "figs5-7.md"), text)
    atomic_write_json(os.path.join(out, "figs5-7.json"), res)
    return text


def completion_ratios(best_fit: dict, slots: dict, jobs: list) -> dict:
    """Seed 001 Fig. 7: the task completion ratio (tasks done over tasks) of each of ``jobs`` (trace jobs, a job
    being a user) under two runs ending at the same time (their ``simulation.json`` documents; a job finished: all
    its tasks; one the run never reached: none), and the counts the paper reads it by."""
    done = {"best_fit": tasks_done(best_fit), "slots": tasks_done(slots)}
    per_user = []
    for j in jobs:
        u = {"name": j["name"], "tasks": j["tasks"],
             **{k: d.get(j["name"], (0, j["tasks"]))[0] / j["tasks"] for k, d in done.items()}}
        u["vs_slots"] = ("higher" if u["best_fit"] > u["slots"] else "lower" if u["best_fit"] < u["slots"]
                         else "equal")
        per_user.append(u)
    count = lambda f: sum(1 for u in per_user if f(u))
    n = len(per_user)
    return {"users": n, **{k: count(lambda u, k=k: u["vs_slots"] == k) for k in ("higher", "equal", "lower")},
            "equal_complete": count(lambda u: u["best_fit"] == u["slots"] == 1),
            "equal_none": count(lambda u: u["best_fit"] == u["slots"] == 0),
            "best_fit_only_complete": count(lambda u: u["best_fit"] == 1 > u["slots"]),
            "slots_only_complete": count(lambda u: u["slots"] == 1 > u["best_fit"]),
            "mean_best_fit": sum(u["best_fit"] for u in per_user) / n if n else 0.0,
            "mean_slots": sum(u["slots"] for u in per_user) / n if n else 0.0, "per_user": per_user}


def simulate_run(mech, ex, budget: float, points: int = 400):
    """One simulation without property checks, stopped after ``budget`` wall-clock seconds."""
    from simulation.simulate import simulate

    return simulate(mech, ex, trace="google2011", properties=(), deadline=time.monotonic() + budget, points=points)


