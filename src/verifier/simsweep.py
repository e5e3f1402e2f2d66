"""A simulation sweep: ``simulate`` over mechanisms x parameter points x seeds, one campaign cell each, run
through an executor (``verifier.executors``: in this process, local processes, a Dask cluster) by the sweep
coordinator (``verifier.sweep.sweep``), resumable through a campaign directory (``verifier.campaign.Campaign``:
``manifest.json`` and one JSON file per finished cell).  docs/simulation.md, "Sweeps".

* **A cell** (:class:`SimCell`, plain data): a registered mechanism's name and how it steps (its lift: the
  fluid ``recompute``/``irrevocable`` lifts or the whole-task ``indivisible(slot=S,overhead=O)``), a workload
  with time, its job-trace parameters (the point) and a seed.  The worker (:func:`simulate_cell`) draws the
  trace with ``numpy.random.default_rng(seed)`` -- the trace ``simulate MECH WORKLOAD --seed SEED --param ...``
  draws -- runs ``simulation.simulate`` and returns the run's summary (:func:`summary`): a cell's numbers are
  those of that one command, whatever the executor (only ``seconds`` differs).
* **The coordinator** writes the campaign (the one writer): a cell that ran to its end is recorded; a cell the
  budget stopped, cut or did not reach, and a cell whose worker failed, are not (the same command runs them
  again).  A cell's file name is its key (mechanism, point, seed), and the manifest holds only what changes a
  cell's numbers besides its key (the workload, the task model, the properties measured, the code version): a
  resumed sweep may add seeds, points or mechanisms and reuses every cell it already has.
* **Budget** (wall-clock seconds for the whole sweep): a cell may use all that is left when it is handed out
  (a simulation stopped early has measured only part of its trace, so cells are not given shares); when the
  budget ends, a running cell stops at its own deadline (``simulate``'s: it reports where) and a cell not
  handed out yet is "not reached".
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

__all__ = ["SimCell", "SweepReport", "simulate_cell", "summary", "run_sweep", "sweep_points", "LIFT_KEYS",
           "SCHEMA"]

SCHEMA = "mechverify-simulation-sweep-1"
#: sweep keys that are the whole-task lift's parameters, not the workload's
LIFT_KEYS = ("slot", "overhead")
STOPPED = "stopped"  # a cell the budget stopped (partial numbers)
NOT_REACHED = "not reached"
CUT = "cut"
FAILED = "failed"
DONE = "done"


@dataclass(frozen=True)
class SimCell:
    """One simulation of a sweep, as a worker receives it: mechanism ``mechanism`` (registered name) stepped
    as ``how`` (``None``: it steps itself; else a lift of ``mechanisms.core.time``) through the job trace
    workload ``workload`` draws with ``point`` (``((key, value text), ...)``, sorted; the lift's ``slot`` and
    ``overhead`` included when swept) and ``seed``."""

    mechanism: str
    how: Optional[str]
    workload: str
    point: tuple
    seed: int
    properties: tuple = ("si", "ef")
    po_every: int = 10
    check_first: int = 5
    timeout: float = math.inf  # seconds, set when the cell is handed out

    @property
    def key(self) -> str:
        """``mechanism|k=v,...|seed=S``: the cell's campaign file name (with the lift, as named)."""
        return f"{self.mechanism}|{','.join(f'{k}={v}' for k, v in self.point)}|seed={self.seed}"

    def workload_params(self) -> dict[str, str]:
        return {k: v for k, v in self.point if k not in LIFT_KEYS}


def lifted(mechanism: str, how: Optional[str]):
    """The mechanism a cell runs: looked up by name, lifted ``how`` (``None``: it has its own time facet)."""
    from mechanisms import get
    from mechanisms.core.time import lift

    mech = get(mechanism)
    return mech if how is None else lift(mech, how)


def _finite(v: Any) -> Any:
    """JSON has no infinity: a non-finite float is written as its text."""
    return repr(v) if isinstance(v, float) and not math.isfinite(v) else v


def summary(sim, cell: Optional[SimCell] = None) -> dict[str, Any]:
    """A run's numbers for the sweep's table (``simulation.simulate.Simulation``): JCT and JCT factor, time-mean
    utilisation per resource and tasks waiting, per property its time ratio, time mean, worst value and how many
    of its flagged steps the exact re-check confirmed."""
    j = sim.jct_summary()
    props = {}
    for name, tr in sim.properties.items():
        verdicts = [w for (_i, _t, _v, w, _e) in tr.rechecks]
        props[name] = {"time_ratio": tr.time_ratio, "time_mean": _finite(tr.mean), "worst": _finite(tr.worst),
                       "flagged_steps": tr.flagged_steps, "judged_steps": tr.judged_steps,
                       "rechecked": len(verdicts), "confirmed": sum(1 for w in verdicts if w == "confirmed")}
    out = {"mechanism": sim.mechanism, "jobs": sim.jobs, "steps": sim.steps, "end_time": sim.end_time,
           "finished": j["finished"], "unfinished": j["unfinished"], "jct_mean": j["jct_mean"],
           "jct_factor_mean": j["jct_factor_mean"], "jct_factor_median": j["jct_factor_median"],
           "utilisation": {r: s.mean() for r, s in sim.utilisation.items()},
           "waiting_mean": None if sim.waiting is None else sim.waiting.mean(), "properties": props,
           "status": STOPPED if sim.stopped else DONE, "note": sim.stopped or "", "seconds": round(sim.seconds, 3)}
    if cell is not None:
        out.update(cell=cell.key, point=dict(cell.point), seed=cell.seed, name=cell.mechanism)
    return out


def _unfinished(cell: SimCell, status: str, note: str) -> dict[str, Any]:
    return {"cell": cell.key, "name": cell.mechanism, "point": dict(cell.point), "seed": cell.seed,
            "status": status, "note": note}


def simulate_cell(cell: SimCell) -> dict[str, Any]:
    """THE worker function: draw the cell's trace, simulate it, return :func:`summary`; an exception is a
    failed cell (``status`` "failed", the error in ``note``), never lost."""
    import numpy as np

    from mechverify.job_trace import parse_job_trace
    from mechverify.workloads import get as get_workload
    from simulation.simulate import simulate

    try:
        mech = lifted(cell.mechanism, cell.how)
        ex = parse_job_trace(get_workload(cell.workload).jobs(np.random.default_rng(cell.seed),
                                                               **cell.workload_params()))
        deadline = None if math.isinf(cell.timeout) else time.monotonic() + max(0.0, cell.timeout)
        sim = simulate(mech, ex, trace=cell.workload, properties=cell.properties, check_first=cell.check_first,
                       po_every=cell.po_every, deadline=deadline)
    except Exception as exc:  # noqa: BLE001 - a failed cell is reported, never lost
        return _unfinished(cell, FAILED, f"{type(exc).__name__}: {exc}")
    return summary(sim, cell)


def sweep_points(fixed: dict[str, str], swept: Sequence[tuple[str, Sequence[str]]]) -> list[tuple]:
    """Every parameter point of the sweep: ``fixed`` values and the Cartesian product of the ``swept`` keys'
    values (in the order given), each as a sorted ``((key, value), ...)``."""
    points: list[dict[str, str]] = [dict(fixed)]
    for key, values in swept:
        points = [{**p, key: v} for p in points for v in values]
    return [tuple(sorted(p.items())) for p in points]


@dataclass
class SweepReport:
    """What :func:`run_sweep` did: one record per cell (:func:`summary` or an unfinished cell's status), in the
    cells' order, how many came from the campaign directory, and whether Ctrl-C stopped it."""

    workload: str
    cells: list = field(default_factory=list)
    resumed: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    budget: Optional[float] = None
    executor: str = ""

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.cells:
            out[c["status"]] = out.get(c["status"], 0) + 1
        return out

    def groups(self) -> list[dict[str, Any]]:
        """Per (mechanism, point), over the seeds that ran to their end: the means of each cell's JCT factor
        mean, utilisation, tasks waiting and property time ratios / time means; and how many seeds that was."""
        order: list = []
        by: dict = {}
        for c in self.cells:
            k = (c["name"], tuple(sorted(c["point"].items())))
            if k not in by:
                by[k] = []
                order.append(k)
            by[k].append(c)

        def mean(xs: list) -> Optional[float]:
            xs = [x for x in xs if isinstance(x, (int, float)) and math.isfinite(x)]
            return statistics.fmean(xs) if xs else None

        out = []
        for k in order:
            done = [c for c in by[k] if c["status"] == DONE]
            g: dict[str, Any] = {"name": k[0], "mechanism": done[0]["mechanism"] if done else k[0],
                                 "point": dict(k[1]), "seeds": len(by[k]), "done": len(done),
                                 "jct_factor_mean": mean([c["jct_factor_mean"] for c in done]),
                                 "finished": sum(c["finished"] for c in done),
                                 "unfinished": sum(c["unfinished"] for c in done),
                                 "waiting_mean": mean([c["waiting_mean"] for c in done])}
            resources = [r for c in done for r in c["utilisation"]]
            g["utilisation"] = {r: mean([c["utilisation"].get(r) for c in done]) for r in dict.fromkeys(resources)}
            names = [p for c in done for p in c["properties"]]
            g["properties"] = {p: {"time_ratio": mean([c["properties"][p]["time_ratio"] for c in done]),
                                   "time_mean": mean([c["properties"][p]["time_mean"] for c in done]),
                                   "confirmed": sum(c["properties"][p]["confirmed"] for c in done),
                                   "rechecked": sum(c["properties"][p]["rechecked"] for c in done)}
                               for p in dict.fromkeys(names)}
            out.append(g)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"format": SCHEMA, "workload": self.workload, "executor": self.executor, "budget": self.budget,
                "seconds": round(self.seconds, 3), "resumed": self.resumed, "interrupted": self.interrupted,
                "counts": self.counts(), "groups": self.groups(), "cells": self.cells}


def run_sweep(cells: Sequence[SimCell], *, budget: Optional[float] = None, executor=None, campaign=None,
              progress: Optional[Callable[[str], None]] = None) -> SweepReport:
    """Every cell (module docstring): those ``campaign`` (a ``verifier.campaign.Campaign``, or None) already has
    are read back, the others run through ``executor`` (default: this process) within ``budget`` seconds."""
    from .sweep import CUT as SWEEP_CUT, sweep

    t0 = time.monotonic()
    ex_desc = executor.describe() if executor is not None else "in-process, 1 at a time"
    rep = SweepReport(cells[0].workload if cells else "", budget=budget, executor=ex_desc)
    got: dict[str, dict] = {}
    todo = []
    if campaign is not None:
        campaign.start()
    for c in cells:
        old = campaign.read_cell(c.key) if campaign is not None else None
        if old is not None and old.get("status") == DONE and old.get("cell") == c.key:
            got[c.key] = old
        else:
            todo.append(c)
    rep.resumed = len(got)
    if progress:
        progress(f"sweep: {len(cells)} cells, {rep.resumed} finished earlier, {len(todo)} to run ({ex_desc}"
                 + (f"; --budget {budget:g} s wall-clock)" if budget is not None else ")"))

    def on_result(cell: SimCell, rec: dict) -> None:
        got[cell.key] = rec
        if campaign is not None and rec.get("status") == DONE:
            campaign.write_cell(cell.key, rec)

    def unfinished(cell: SimCell, note: str) -> dict:
        if note == SWEEP_CUT:
            return _unfinished(cell, CUT, "budget: still running when --budget ran out (stopped)")
        if note.startswith("worker error"):
            return _unfinished(cell, FAILED, note)
        return _unfinished(cell, NOT_REACHED, "budget: not reached (--budget ran out before its turn)")

    def describe(cell: SimCell, rec: dict) -> str:
        said = f"{cell.key}: {rec['status']}"
        if rec["status"] in (DONE, STOPPED) and rec.get("jct_factor_mean") is not None:
            said += f", JCT factor mean {rec['jct_factor_mean']:.4g}"
        return said + (f" ({rec['note']})" if rec.get("note") else "")

    if todo:
        _, rep.interrupted = sweep(todo, timeout=budget, executor=executor, on_result=on_result, progress=progress,
                                   fn=simulate_cell, order=lambda c: 0, share=lambda left, slots, n: left,
                                   unfinished=unfinished, describe=describe)
    rep.cells = [got[c.key] for c in cells if c.key in got]
    rep.seconds = time.monotonic() - t0
    return rep
