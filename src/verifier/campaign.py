"""Campaigns: ``run`` and ``audit`` as sets of independent cells (mechanism x property x variant) run by an
executor (``verifier.executors``: in-process, local processes, a Dask cluster).

* **One writer.**  A worker runs :func:`run_task`: the search and the minimiser (``cell.run_cell`` with no
  store: ``store.persist(root=None)`` only minimises) and returns the :class:`~verifier.results.Result`
  with its exact certificate.  Only this coordinator writes the counterexample store (``record.record``
  with ``minimise=False``), the campaign directory and the reports.  ``run`` (``verifier.run.run_mechanism``:
  the CLI and the Python API alike) and ``audit`` hand their cells to :func:`execute`.
* **Deterministic.**  A cell's search is fixed by the command's seed and the cell itself (the search
  draws its candidates from the mechanism's setting, the property and the variant with that seed), not
  by where or when it runs: with ``--trials`` the verdicts are the same whatever the executor and the
  number of workers.  Budgets are shares of the wall-clock ``--budget`` (below); minimality records
  may differ when a minimiser's budget runs out.
* **Budget.**  ``--budget`` is wall-clock seconds for the whole command.  A cell gets, when it is handed
  out, ``left x slots x weight / (weight of the cells not yet handed out)`` (deviation properties weigh
  2), at most what is left (a cell keeps part of its share for minimising: ``cell.MINIMISE_RESERVE``); when
  the time is up no cell is handed out any more, and the cells left are "unknown" (:data:`BUDGET_NOTE`).
  With one slot (``executors.InProcess``) that is the time left x weight / (weight of the cells left).
* **Resumable.**  ``--campaign DIR`` keeps ``manifest.json`` (the configuration) and one JSON file per
  finished cell under ``DIR/cells/``, each written atomically after its counterexample was stored; the
  same command again skips finished cells (a stored violation is re-checked exactly when it is read
  back), so kill -9 loses at most the cells in flight.  A different configuration is refused
  (:class:`CampaignError`, naming what differs).
* **Failures.**  A cell that raises in a worker is a failed cell ("unknown", note ``worker error: ...``);
  a worker that dies has its cell retried once (on another worker), then reported failed.
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from . import claims as claims_mod
from .cell import run_cell, search_provenance, z3_certifier
from .config import RunConfig
from .executors import InProcess
from .files import atomic_write_json
from .properties import get_property
from .properties import budget as bud
from .record import OUTCOMES_ONLY, Storing, record
from .results import Result, Verdict, describe_size, verdict_text
from .store import load_witness

__all__ = ["Task", "Outcome", "run_task", "Campaign", "CampaignError", "execute", "result_to_dict",
           "result_from_dict", "BUDGET_NOTE"]

SCHEMA = "mechverify.campaign/1"
BUDGET_NOTE = bud.budget_note("not reached (the budget ran out before this cell's turn)")
WORKER_ERROR = "worker error: "
STORE_ERROR = "could not store the counterexample: "
UNFINISHED = (BUDGET_NOTE, WORKER_ERROR, STORE_ERROR)  # notes of cells a resumed campaign runs again


@dataclass(frozen=True)
class Task:
    """One cell, as a worker receives it (plain data: the mechanism is looked up by name, or by the
    reference of a user's mechanism, with its ``tolerance``).  ``mech`` and ``certifier`` are objects of
    this process: the coordinator's own (a plain function given to the Python API has no name another
    process could look up), handed to an in-process executor only (:func:`execute`)."""

    mechanism: str
    property: str
    variant: str
    seed: int = 0
    max_trials: Optional[int] = None
    weight: float = 1.0
    budget: float = 0.0  # seconds, set when the cell is handed out: the cell's share (its loops stop there)
    deadline_left: Optional[float] = None  # seconds left to the COMMAND's deadline at hand-out (every solve and
    # call of the cell stops there: a worker makes its own deadline of it, two machines' clocks being unrelated)
    certify: bool = False
    command: Optional[str] = None
    domain: Any = None  # ``run``'s search domain (None: the mechanism's setting)
    max_wait: Any = None  # the starvation bound of the searched executions (``run --max-wait``)
    tolerance: Optional[float] = None  # a user's mechanism: its float tolerance (``--tolerance``)
    call_limit: Optional[float] = None  # a user's mechanism: seconds per call (set from the command's budget)
    mech: Any = field(default=None, compare=False, repr=False)  # the Mechanism itself (None: look it up)
    certifier: Any = field(default=None, compare=False, repr=False)  # with ``certify``: instead of the z3 layer

    @property
    def key(self) -> str:
        """``mechanism/property/variant``."""
        return f"{self.mechanism}/{self.property}/{self.variant}"

    @classmethod
    def of(cls, cell, config) -> "Task":
        """The task of a planned cell (``verifier.planning.Cell``) under a run configuration
        (``verifier.config.RunConfig``)."""
        m = cell.mechanism
        return cls(m.ref, cell.prop.ref, cell.variant, seed=config.seed, max_trials=config.trials,
                   weight=cell.weight, certify=config.certify, command=config.command, domain=config.domain,
                   max_wait=config.max_wait,
                   tolerance=m.tolerance, call_limit=m.call_limit, mech=m, certifier=config.certifier)


@dataclass
class Outcome:
    """What a worker returns: the result (certificate minimised, not stored) and the provenance to store
    it with."""

    result: Result
    provenance: Optional[dict] = None


def task_mechanism(task: Task):
    """The mechanism a task carries or names (a registered name or a user's reference), with the task's
    tolerance and per-call limit."""
    import dataclasses

    from mechanisms import get

    mech = task.mech if task.mech is not None else get(task.mechanism)
    if task.tolerance is not None and mech.tolerance != task.tolerance:
        mech = dataclasses.replace(mech, tolerance=task.tolerance)
    if task.call_limit is not None and mech.call_limit != task.call_limit:
        mech = dataclasses.replace(mech, call_limit=task.call_limit)
    return mech


def run_task(task: Task) -> Outcome:
    """THE worker function: search (and minimise) one cell; an exception becomes a failed cell."""
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    try:
        mech = task_mechanism(task)
        config = RunConfig(budget=task.budget, deadline=bud.deadline_after(task.deadline_left), seed=task.seed,
                           trials=task.max_trials, store=None, certify=task.certify,
                           certifier=(task.certifier or z3_certifier) if task.certify else None, domain=task.domain,
                           command=task.command, max_wait=task.max_wait)
        r = run_cell(mech, task.property, task.variant, config)
    except Exception as exc:  # noqa: BLE001 - reported as a failed cell, never lost
        return Outcome(failed(task, f"{WORKER_ERROR}{type(exc).__name__}: {exc}"))
    prov = None
    if r.verdict is Verdict.VIOLATED:
        prov = search_provenance(mech.name, r.engine, task.seed, r.trials, r.time_to_first, task.command)
    return Outcome(r, prov)


def failed(task: Task, note: str) -> Result:
    """An "unknown" result for a cell that could not be searched (the note says why)."""
    try:
        mech = task_mechanism(task)
        cs, name = claims_mod.claims_for(mech, task.property, task.variant), mech.name
    except Exception:  # noqa: BLE001 - the cell's own names may be what failed
        cs, name = [], task.mechanism
    return record(Result(name, task.property, task.variant, verdict=Verdict.UNKNOWN, note=note), None, OUTCOMES_ONLY,
                  claims=cs)


# ------------------------------------------------------------------ results as JSON (the campaign files)
_FIELDS = ("verdict", "outcomes", "counterexample", "stored_new", "trials", "seconds", "wall_seconds",
           "time_to_first", "wall_to_first", "engine", "note", "domain", "size", "minimality", Verdict.CERTIFIED,
           "details")


def _measure_out(m: Any) -> Any:
    if isinstance(m, Fraction):
        return {"fraction": str(m)}
    if isinstance(m, float) and not math.isfinite(m):
        return {"float": repr(m)}  # inf / nan: JSON has no such number
    if m is None or isinstance(m, (int, float, str)):
        return m
    return {"text": str(m)}


def _measure_in(m: Any) -> Any:
    if isinstance(m, dict):
        if "fraction" in m:
            return Fraction(m["fraction"])
        return float(m["float"]) if "float" in m else m["text"]
    return m


def result_to_dict(r: Result) -> dict:
    """A result's JSON (its certificate is the stored counterexample file it names)."""
    d = {"mechanism": r.mechanism, "property": r.property, "variant": r.variant, "measure": _measure_out(r.measure)}
    d.update({k: getattr(r, k) for k in _FIELDS})
    return d


def result_from_dict(d: dict, mech) -> Optional[Result]:
    """The result a campaign file records; a violation's certificate is re-derived EXACTLY from its stored
    counterexample (None when that no longer works: the cell is searched again)."""
    r = Result(d["mechanism"], d["property"], d["variant"], measure=_measure_in(d.get("measure")))
    for k in _FIELDS:
        if k in d:
            setattr(r, k, d[k])
    r.claims = claims_mod.claims_for(mech, r.property, r.variant)
    if r.verdict is Verdict.VIOLATED:
        try:
            cert = get_property(r.property).recheck(mech, load_witness(r.counterexample))
        except Exception:  # noqa: BLE001 - a file that is gone or does not re-check
            cert = None
        if cert is None:
            return None
        r.certificate = cert
    r.stored_new = False
    return r


class CampaignError(Exception):
    """A campaign directory that cannot be used (another configuration, unreadable manifest)."""


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


class Campaign:
    """A campaign directory: ``manifest.json`` (schema, configuration) and ``cells/<cell>.json``."""

    def __init__(self, path: str, config: dict) -> None:
        self.path, self.config = path, config
        self.manifest = os.path.join(path, "manifest.json")
        if os.path.exists(self.manifest):
            try:
                with open(self.manifest, encoding="utf-8") as fh:
                    old = json.load(fh)
                old_config = old["config"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise CampaignError(f"--campaign: {self.manifest} is not a campaign manifest ({exc})") from exc
            diff = [k for k in sorted(set(old_config) | set(config)) if old_config.get(k) != config.get(k)]
            if diff:
                said = ", ".join(f"{k} ({old_config.get(k)!r} -> {config.get(k)!r})" for k in diff)
                raise CampaignError(f"--campaign: {path!r} holds a campaign with another configuration: {said}; "
                                    f"use another directory (or delete this one) to start a new campaign")

    def start(self) -> None:
        """Write the manifest (once)."""
        if not os.path.exists(self.manifest):
            atomic_write_json(self.manifest, {"schema": SCHEMA, "config": self.config,
                                              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})

    def _file(self, task: Task) -> str:
        return self.cell_file(f"{_safe(task.mechanism)}__{_safe(task.property)}__{_safe(task.variant)}")

    def cell_file(self, name: str) -> str:
        """The file of the cell named ``name`` (``cells/<name>.json``; characters a file name should not hold
        become ``_``)."""
        return os.path.join(self.path, "cells", f"{_safe(name)}.json")

    def read_cell(self, name: str) -> Optional[dict]:
        """The JSON a finished cell recorded (:meth:`write_cell`), or None (not finished, unreadable)."""
        try:
            with open(self.cell_file(name), encoding="utf-8") as fh:
                d = json.load(fh)
        except (OSError, ValueError):
            return None
        return d if isinstance(d, dict) else None

    def write_cell(self, name: str, record: dict) -> None:
        """Record a finished cell (atomically): a kill loses at most the cells in flight."""
        atomic_write_json(self.cell_file(name), record)

    def finished(self, task: Task, mech) -> Optional[Result]:
        """The recorded result of ``task``'s cell, or None (not finished, unreadable, or its stored
        counterexample no longer re-checks)."""
        d = self.read_cell(os.path.basename(self._file(task))[:-len(".json")])
        if d is None:
            return None
        try:
            return result_from_dict(d, mech)
        except (KeyError, TypeError, ValueError):
            return None

    def save(self, task: Task, r: Result) -> None:
        """Record a finished cell (atomically)."""
        atomic_write_json(self._file(task), result_to_dict(r))


def config_of(**kw: Any) -> dict:
    """A campaign's configuration: what the command was asked (plus the code version)."""
    from mechverify.version import __version__

    kw["version"] = __version__
    return kw


# ------------------------------------------------------------------ the coordinator
def _bar(done: int, total: int, width: int = 20) -> str:
    """A progress bar for a terminal (plain lines otherwise: logs, pipes, CI)."""
    if not sys.stderr.isatty() or not total:
        return ""
    k = round(width * done / total)
    return "[" + "#" * k + "." * (width - k) + "] "


def _eta(t0: float, done: int, total: int, deadline: Optional[float] = None) -> str:
    """``, ETA n s``: the pace so far extrapolated to the cells left -- never beyond the time left in the
    budget (``deadline``), which ends the campaign whatever the pace."""
    if not done or done >= total:
        return ""
    now = time.monotonic()
    eta = (now - t0) / done * (total - done)
    if deadline is not None:
        eta = min(eta, max(0.0, deadline - now))
    return f", ETA {int(eta)} s"  # whole seconds, rounded down: never more than is left


def execute(tasks: Sequence[Task], config: RunConfig, on_result: Optional[Callable[[Task, Result], None]] = None,
            fn: Callable[[Task], Outcome] = run_task) -> tuple[dict[str, Result], bool]:
    """Run ``tasks`` within ``config``'s budget and deadline (``verifier.config.RunConfig``: its executor --
    default: this process --, store, campaign directory and progress printer); see the module docstring.
    Returns ``({task.key: result}, interrupted)``.  Ctrl-C / SIGTERM stop it: the workers are stopped and the
    cells that finished are returned.  A task's ``mech`` and ``certifier`` objects go to an in-process executor
    only; another executor's workers look the mechanism up by ``task.mechanism``."""
    budget, store_dir, keep_all, campaign, progress = (config.budget, config.store, config.keep_all,
                                                         config.campaign, config.progress)
    executor = config.executor
    ex = executor or InProcess()
    t0 = time.monotonic()
    deadline = config.start().deadline
    results: dict[str, Result] = {}
    if campaign is not None:
        campaign.start()
    pending: list[Task] = []
    for t in tasks:
        old = campaign.finished(t, task_mechanism(t)) if campaign is not None else None
        if old is not None:
            results[t.key] = old
            if on_result:
                on_result(t, old)
        else:
            pending.append(t)
    total, resumed = len(tasks), len(results)
    if progress:
        progress(f"campaign: {total} cells, {resumed} finished earlier, {len(pending)} to run "
                 f"({ex.describe()}; --budget {budget:g} s wall-clock)" if budget is not None else
                 f"campaign: {total} cells, {resumed} finished earlier, {len(pending)} to run ({ex.describe()})")
    running: dict[Any, tuple[Task, int]] = {}
    interrupted = False

    def finish(t: Task, r: Result) -> None:
        results[t.key] = r
        if campaign is not None and not r.note.startswith(UNFINISHED):  # those are run again next time
            campaign.save(t, r)
        if on_result:
            on_result(t, r)

    try:
        def dispatch() -> None:
            while pending and len(running) < ex.slots:
                left = bud.left(deadline)
                if left <= 0:
                    return
                t = pending.pop(0)
                w_left = t.weight + sum(p.weight for p in pending)
                share = min(left, left * min(ex.slots, len(pending) + 1) * t.weight / w_left)
                t = replace(t, budget=share, deadline_left=None if deadline is None else left,
                            call_limit=t.call_limit if t.call_limit is not None else bud.call_limit_for(budget))
                if progress:
                    progress(f"[start] {t.mechanism} {t.property}/{t.variant} (up to {share:.1f} s)")
                running[ex.submit(fn, t if ex.in_process else replace(t, mech=None, certifier=None))] = (t, 1)

        while pending or running:
            dispatch()
            if not running:
                break
            finished = []
            for h, value, err in ex.wait_any():
                t, attempt = running.pop(h)
                if err is not None and attempt < 2 and not isinstance(err, KeyboardInterrupt):
                    if progress:
                        progress(f"[retry] {t.key}: {type(err).__name__}: {err}")
                    running[ex.submit(fn, t if ex.in_process else replace(t, mech=None, certifier=None))] = \
                        (t, attempt + 1)
                else:
                    finished.append((t, value, err))
            if ex.asynchronous:  # keep the workers busy while this process stores and reports
                dispatch()
            for t, value, err in finished:
                if err is not None:
                    r = failed(t, f"{WORKER_ERROR}{type(err).__name__}: {err}")
                else:
                    r = value.result
                    try:  # THE one writer: the worker's minimised certificate through the store gate
                        record(r, task_mechanism(t), Storing(root=store_dir, provenance=value.provenance, minimise=False,
                                                             minimality=r.minimality, keep_all=keep_all))
                    except Exception as exc:  # noqa: BLE001 - a cell never takes the campaign down
                        r = failed(t, f"{STORE_ERROR}{type(exc).__name__}: {exc}")
                finish(t, r)
                if progress:
                    extra = ""
                    if r.verdict is Verdict.VIOLATED and r.size:
                        extra = f"; minimal: {describe_size(r.size)}"
                    done = len(results)
                    progress(f"{_bar(done, total)}[{done}/{total}] {t.mechanism} {t.property}/{t.variant} -> "
                             f"{verdict_text(r)}{extra}  (running {len(running)}"
                             f"{_eta(t0, done - resumed, total - resumed, deadline)})")
        for t in pending:  # the budget ran out before their turn
            finish(t, failed(t, BUDGET_NOTE))
        if pending and progress:
            progress(f"budget: {len(pending)} cells not searched (unknown)")
    except KeyboardInterrupt:
        interrupted = True
    finally:  # stop what still runs (Ctrl-C, SIGTERM, an error here): no worker outlives the command
        ex.close(cancel=bool(running) or interrupted)
    return results, interrupted
