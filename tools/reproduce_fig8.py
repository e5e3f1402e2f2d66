"""Seed 001 Fig. 8, scaled: each user's task completion ratio on a dedicated cloud (DC) against the shared cloud
(SC) under DRFH -- ``python tools/reproduce.py seed001-fig8`` (docs/reproductions.md, "Seed 001 Fig. 8").

The paper (Sec. IV-D): "An equal division would allocate to each user k/n servers drawn from the same distribution
of the system's server configurations.  For each user, the allocated k/n servers are then treated as a dedicated
cloud that is exclusive to the user"; (Sec. VI) "for each user, we run its computing tasks on a dedicated cloud
(DC) that is a proportional subset of the original shared cloud (SC).  We then compare the task completion ratio in
DC with that obtained in SC"; the task completion ratio (Fig. 7) is "the number of tasks completed over the number
of tasks submitted".

Ours, on the same model as ``seed001-figs5-8``: one ``google2011`` job trace (``jobs`` jobs on ``servers`` servers
of the Google 2011 mix, seed ``seed``), a job being a user of the execution (DRFH's unit of fairness), whole tasks
reallocated at every event (``MECH+recompute``: a job progresses at the tasks it runs; a lifted name, e.g.
``drfh-first-fit+indivisible(slot=none,overhead=0)``, is run as it is).  The window is [0, the
last arrival] (cut where the shared run's ``budget`` stopped it, if it did); a job's tasks done by the window's end
are ``simulate``'s (``unfinished_jobs[].tasks_done``: the whole tasks' worth of work done; a finished job: all).
The shared run is every job on all ``servers``; each job's dedicated run is the job alone, from its arrival to
the window's end, on its k/n servers: the servers in the trace's order (independent draws from the mix, so any
``k/n`` of them are a draw from it) cut into ``n`` consecutive groups, job ``i`` (in arrival order) getting group
``i``; when ``n`` does not divide ``k`` the first ``k mod n`` groups have one server more.  ``n > k`` (less than
one server each) is refused: the paper's dedicated cloud is whole servers.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Any, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.join(ROOT, "src") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "src"))

#: the paper's scale (Sec. VI): 24 hours of the Google trace, "over 900 users", 2,000 servers
PAPER_USERS, PAPER_SERVERS = 900, 2000
#: Sec. VI: "only 2% users see fewer tasks finished in the shared environment"
PAPER_FEWER_IN_SC = 0.02
#: job-size classes of the summary (tasks per job; those of seed001-figs5-8's Fig. 6b)
SIZE_CLASSES = ((1, 1), (2, 10), (11, 100), (101, 1000), (1001, 10**9))


def dedicated_clouds(k: int, n: int) -> list[range]:
    """The servers (indices ``0 .. k-1``) of ``n`` users' dedicated clouds: ``n`` consecutive groups of ``k // n``
    servers, the first ``k mod n`` with one more (module docstring)."""
    if not 1 <= n <= k:
        raise ValueError(f"dedicated clouds: {n} users on {k} servers (each needs at least one whole server)")
    q, r = divmod(k, n)
    out, start = [], 0
    for i in range(n):
        size = q + (1 if i < r else 0)
        out.append(range(start, start + size))
        start += size
    return out


def tasks_done(doc: dict) -> dict[str, tuple[int, int]]:
    """``{job: (tasks done by the run's end, tasks)}`` of a ``simulation.json`` document: a finished job's every
    task, an unfinished one's ``tasks_done``."""
    out = {row["name"]: (row["tasks"], row["tasks"]) for row in doc["jobs_table"]}
    out.update((row["name"], (row["tasks_done"], row["tasks"])) for row in doc["unfinished_jobs"])
    return out


def _run(mech_name: str, trace: dict, budget: Optional[float]) -> dict:
    """One run of ``mech_name+recompute`` (a lifted name: as it is) through ``trace`` without property checks: its
    ``simulation.json``."""
    import mechanisms
    from mechanisms.core.time import lift
    from mechverify.job_trace import parse_job_trace
    from simulation.simulate import simulate
    from verifier.report.simulation import simulation_to_json

    deadline = None if budget is None else time.monotonic() + budget
    mech = mechanisms.get(mech_name) if "+" in mech_name else lift(mechanisms.get(mech_name), "recompute")
    sim = simulate(mech, parse_job_trace(trace), trace="google2011",
                   properties=(), deadline=deadline)
    return simulation_to_json(sim)


def _size(n: int) -> str:
    lo, hi = next(c for c in SIZE_CLASSES if c[0] <= n <= c[1])
    return f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi < 10**9 else f">= {lo}")


def compare(trace: dict, out: str, mechanism: str = "drfh-best-fit", budget: Optional[float] = None,
            recompute: bool = True) -> dict:
    """The shared run of a job trace (kept in ``out/shared/simulation.json``; read back when ``recompute`` is False)
    and every job's dedicated run (module docstring), over [0, the last arrival] or less (the shared run's budget):
    per user its tasks done in DC and in SC, and the counts the paper's Fig. 8 is read by."""
    from verifier.files import atomic_write_text

    groups = dedicated_clouds(len(trace["servers"]), len(trace["jobs"]))
    horizon = trace["jobs"][-1]["arrival"]  # the last arrival, as the trace spells it
    path = os.path.join(out, "shared", "simulation.json")
    if recompute or not os.path.exists(path):
        shared = _run(mechanism, {**trace, "end": horizon}, budget)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write_text(path, json.dumps(shared, separators=(",", ":")))
        print(f"shared: {shared['steps']} steps, {shared['seconds']:.0f} s"
              f"{', stopped: ' + shared['stopped'] if shared['stopped'] else ''}", file=sys.stderr, flush=True)
    with open(path) as f:
        shared = json.load(f)
    # the window: the arrivals, or where the shared run's budget stopped it (to the millisecond, as a trace
    # spells times); the users are the jobs arrived by then
    window = round(shared["end_time"], 3) if shared["stopped"] else horizon
    sc = tasks_done(shared)
    t0 = time.monotonic()
    users = []
    for i, job in enumerate(trace["jobs"]):
        if job["arrival"] > window:
            continue
        dc_trace = {"resources": trace["resources"], "unit": trace.get("unit", "s"), "end": window, "jobs": [job],
                    "servers": [trace["servers"][s] for s in groups[i]]}
        dc = tasks_done(_run(mechanism, dc_trace, None))
        (sc_done, n), (dc_done, _) = sc[job["name"]], dc[job["name"]]
        users.append({"name": job["name"], "arrival": job["arrival"], "tasks": n, "duration": job["duration"],
                      "dc_servers": len(groups[i]), "dc_done": dc_done, "sc_done": sc_done,
                      "dc_ratio": dc_done / n, "sc_ratio": sc_done / n})
    dc_seconds = time.monotonic() - t0
    fewer = {u["name"] for u in users if u["sc_done"] < u["dc_done"]}
    more = {u["name"] for u in users if u["sc_done"] > u["dc_done"]}
    n_users = len(users)
    summary = {"users": n_users, "fewer_in_sc": len(fewer), "more_in_sc": len(more),
               "equal": n_users - len(fewer) - len(more),
               "equal_complete": sum(u["sc_done"] == u["dc_done"] == u["tasks"] for u in users),
               "fewer_in_sc_share": len(fewer) / n_users if n_users else None,
               "largest_drop": max((u["dc_ratio"] - u["sc_ratio"] for u in users if u["name"] in fewer), default=None),
               "mean_dc_ratio": sum(u["dc_ratio"] for u in users) / n_users if n_users else None,
               "mean_sc_ratio": sum(u["sc_ratio"] for u in users) / n_users if n_users else None,
               "tasks": sum(u["tasks"] for u in users), "dc_tasks_done": sum(u["dc_done"] for u in users),
               "sc_tasks_done": sum(u["sc_done"] for u in users)}
    by_size = []
    for lo, hi in SIZE_CLASSES:
        us = [u for u in users if lo <= u["tasks"] <= hi]
        by_size.append({"tasks": _size(lo), "users": len(us), "fewer_in_sc": sum(u["name"] in fewer for u in us),
                        "more_in_sc": sum(u["name"] in more for u in us),
                        "mean_dc_ratio": sum(u["dc_ratio"] for u in us) / len(us) if us else None,
                        "mean_sc_ratio": sum(u["sc_ratio"] for u in us) / len(us) if us else None})
    return {"mechanism": shared["mechanism"], "horizon": horizon, "window": window,
            "dc_servers": [len(g) for g in groups],
            "shared": {k: shared[k] for k in ("steps", "seconds", "stopped", "end_time")},
            "dedicated_seconds": round(dc_seconds, 3), "summary": summary, "by_size": by_size, "users": users}


def seed001_fig8(seed: int, out: str, jobs: int = 100, servers: int = 200, budget: float = 1800.0,
                 rate: Optional[str] = None, mechanism: str = "drfh-best-fit", recompute: bool = True) -> str:
    """:func:`compare` on one ``google2011`` job trace (module docstring); writes ``fig8.md``/``.json``/``.png`` into
    ``out``."""
    import numpy as np

    from mechverify.workloads import get as get_workload
    from verifier.files import atomic_write_json, atomic_write_text
    from verifier.report.plots import _plt

    dedicated_clouds(servers, jobs)  # refused before the draw: fewer servers than users
    os.makedirs(out, exist_ok=True)
    params = {"jobs": jobs, "servers": servers, **({"rate": rate} if rate else {})}
    trace = get_workload("google2011").jobs(np.random.default_rng(seed), **params)
    res = {"seed": seed, "jobs": jobs, "servers": servers, "rate": rate,
           **compare(trace, out, mechanism, budget, recompute)}
    users, shared, window, s = res["users"], res["shared"], res["window"], res["summary"]
    fewer = [u for u in users if u["sc_done"] < u["dc_done"]]
    more = [u for u in users if u["sc_done"] > u["dc_done"]]
    same = [u for u in users if u["sc_done"] == u["dc_done"]]
    q, r = divmod(servers, jobs)
    cut = f"{q} servers each" if r == 0 else f"{q + 1} servers for the first {r}, {q} for the others"
    why = "the arrivals" if not shared["stopped"] else "cut where the shared run's budget stopped it"
    drop = f", the largest drop in completion ratio {s['largest_drop']:.3f}" if fewer else ""
    how = "" if "+" in mechanism else " (whole tasks, reallocated at every event)"
    lines = [f"Seed 001 Fig. 8, scaled: one google2011 job trace ({jobs} jobs on {servers} servers of the Google 2011 "
             f"mix, seed {seed}), a job being a user; {res['mechanism']}{how}.  Window [0, {float(window):.0f} s] "
             f"({float(window) / 3600:.2f} h: {why}); the paper: 24 h, over {PAPER_USERS} users, {PAPER_SERVERS} "
             f"servers (k/n = {PAPER_SERVERS / PAPER_USERS:.2f} servers per user).",
             "",
             f"- shared cloud (SC): all {servers} servers, {shared['steps']} steps, {shared['seconds']:.0f} s"
             + (f" ({shared['stopped']})" if shared["stopped"] else ""),
             f"- dedicated clouds (DC): k/n = {servers}/{jobs} = {servers / jobs:g} ({cut}, consecutive in the trace's "
             f"server order); {s['users']} runs, {res['dedicated_seconds']:.0f} s in all",
             f"- users: {s['users']}; fewer tasks done in SC than in DC: {s['fewer_in_sc']} "
             f"({100 * (s['fewer_in_sc_share'] or 0):.1f}%; the paper: {100 * PAPER_FEWER_IN_SC:.0f}%){drop}; more in "
             f"SC: {s['more_in_sc']}; the same: {s['equal']} ({s['equal_complete']} of them complete in both)",
             f"- mean completion ratio over the users: DC {s['mean_dc_ratio']:.3f}, SC {s['mean_sc_ratio']:.3f}; "
             f"tasks done: DC {s['dc_tasks_done']}, SC {s['sc_tasks_done']} of {s['tasks']}",
             "",
             "| tasks per job | users | fewer in SC | more in SC | mean ratio DC | mean ratio SC |",
             "|---|---|---|---|---|---|"]
    for row in res["by_size"]:
        lines.append(f"| {row['tasks']} | {row['users']} | {row['fewer_in_sc']} | {row['more_in_sc']} | "
                     + (f"{row['mean_dc_ratio']:.3f} | {row['mean_sc_ratio']:.3f} |" if row["users"] else "- | - |"))
    if fewer:
        lines += ["", "The users with fewer tasks done in SC:", "",
                  "| job | tasks | arrival (s) | task duration (s) | DC servers | done in DC | done in SC |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {u['name']} | {u['tasks']} | {float(u['arrival']):.0f} | {float(u['duration']):g} | "
                  f"{u['dc_servers']} | {u['dc_done']} ({u['dc_ratio']:.3f}) | {u['sc_done']} ({u['sc_ratio']:.3f}) |"
                  for u in fewer]
    # the figure: the paper's axes, a circle per user, its radius logarithmic in its tasks
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.2, 4.2))
    ratio_scatter(ax, [([u["dc_ratio"] for u in g], [u["sc_ratio"] for u in g], [u["tasks"] for u in g], colour, label)
                       for g, colour, label in ((more, "#1f77b4", "more tasks done in SC"),
                                                (same, "#7f7f7f", "the same"), (fewer, "#d62728", "fewer in SC"))],
                  "Task completion ratio in DC", "Task completion ratio in SC",
                  f"Seed 001 Fig. 8, scaled ({jobs} jobs, {servers} servers, {res['mechanism']})")
    ax.text(0.74, 0.66, "y = x", fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig8.png"), dpi=110)
    plt.close(fig)
    text = "\n".join(lines) + "\n"
    atomic_write_text(os.path.join(out, "fig8.md"), text)
    atomic_write_json(os.path.join(out, "fig8.json"), res)
    return text


def ratio_scatter(ax: Any, groups: list, xlabel: str, ylabel: str, title: str) -> None:
    """Seed 001's task-completion-ratio plot (Figs. 7 and 8): per group ``(xs, ys, tasks, colour, label)`` a circle
    per user, its radius logarithmic in its tasks; the diagonal; both axes [0, 1]."""
    for xs, ys, tasks, colour, label in groups:
        ax.scatter(xs, ys, s=[(3 * (1 + math.log10(n))) ** 2 for n in tasks], facecolors="none",
                   edgecolors=colour, linewidths=0.8, label=f"{label} ({len(xs)})")
    ax.plot([0, 1], [0, 1], color="black", lw=0.8)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=7)


def main_args(a: Any) -> str:
    """``reproduce.py seed001-fig8``'s arguments (``--seed``, ``--out``, ``--trace-jobs``, ``--servers``, ``--budget``,
    ``--rate``, ``--mechanism``, ``--reuse``)."""
    if a.budget is not None and a.budget <= 0:
        raise SystemExit("error: --budget must be > 0")
    jobs = 100 if a.trace_jobs is None else a.trace_jobs
    servers = 200 if a.servers is None else a.servers
    if not 1 <= jobs <= servers <= 10_000:
        raise SystemExit("error: seed001-fig8 needs 1 <= --trace-jobs <= --servers <= 10000 (a dedicated cloud is at "
                         "least one whole server)")
    return seed001_fig8(a.seed, a.out, jobs, servers, a.budget or 1800.0, a.rate, a.mechanism, recompute=not a.reuse)
