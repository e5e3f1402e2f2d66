"""``run``: every applicable property of one mechanism, searched within a time budget -- THE orchestrator of
the CLI's ``run`` and the Python API's ``mechverify.run`` (and ``assert_property``) alike.

:func:`plan` lists the (property, variant) cells; :func:`run_mechanism` hands them to a campaign
(``verifier.campaign.execute``: in this process by default, ``executors.InProcess``, or on local processes
or a Dask cluster), which searches each cell (``verifier.cell.run_cell``: the Hypothesis search + misreport
optimiser inside the mechanism's setting), minimises a violation (always an exact certificate) and records
it once (``verifier.record``: the store gate, the claims' outcomes).  The cell's
:class:`~verifier.results.Result` says exactly what was established (``results.VERDICTS``).

Budget: ``budget`` is the wall-clock limit of the whole run (``verifier.properties.budget``: one absolute
deadline, threaded through the search, shrinking, the optimiser and minimisation).  A cell gets, when it is
handed out, its weight's part of the time left (deviation properties weigh 2; with N slots about N times
that: docs/campaigns.md), so time a cell does not use goes to the next ones; a cell keeps
``cell.MINIMISE_RESERVE`` of its share for minimising and storing a violation.  Cells the budget does not
reach are ``unknown: budget: not reached ...``.  Deterministic for a given seed up to how far the budget lets
each search go; ``max_trials`` makes a run fully reproducible, whatever the executor.
Which claims a cell speaks about, and what its verdict means for them: ``verifier.claims``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from .campaign import Campaign, Task, execute
from .cell import MINIMISE_RESERVE, Certifier, not_reached, run_cell, search_provenance, z3_certifier  # noqa: F401
from .engines import strategies as strat
from .executors import Executor, InProcess
from .properties import DEFAULT_PROPERTIES, USER_PROPERTIES, get_property
from .results import Result
from .store import DEFAULT_DIR

__all__ = ["RunReport", "run_mechanism", "run_cell", "plan", "not_reached", "DEFAULT_BUDGET", "DEFAULT_PROPERTIES",
           "DEVIATION_WEIGHT", "MINIMISE_RESERVE", "z3_certifier", "search_provenance"]

DEFAULT_BUDGET = 60.0
DEVIATION_WEIGHT = 2.0


@dataclass
class RunReport:
    """One ``run``: the mechanism, the searched domain, one :class:`Result` per cell, the skipped cells."""

    mechanism: str
    title: str
    setting: str
    seed: int
    budget: float
    domain: dict
    results: list[Result]
    skipped: list[tuple[str, str, str]]  # (property, variant, reason)
    seconds: float = 0.0  # wall-clock seconds (the budget's clock)
    wall_seconds: float = 0.0
    interrupted: bool = False  # Ctrl-C / SIGTERM: ``results`` holds the cells that finished
    user: bool = False  # a user's mechanism: its claims are the user's ("claimed"), not a paper's

    def __str__(self) -> str:
        """The text table of ``python -m verifier run`` (``verifier.report.text.render_table``), 100 columns."""
        from .report.text import PIPE_WIDTH, render_table

        return render_table(self, width=PIPE_WIDTH)

    def _repr_html_(self) -> str:
        """The HTML report of ``run --out`` (``verifier.report.html.render_html``), shown by notebooks."""
        from .report.html import render_html

        return render_html(self)

    def __repr__(self) -> str:
        violated = [f"{r.property}/{r.variant}" for r in self.results if r.verdict == "violated"]
        refuted = sum(1 for r in self.results if r.refuted)
        return (f"<RunReport {self.mechanism}: {len(self.results)} cells, {len(violated)} violated"
                f"{' (' + ', '.join(violated) + ')' if violated else ''}, {refuted} claims REFUTED"
                f"{', interrupted' if self.interrupted else ''}>")


def plan(mech, properties: Optional[Sequence[str]] = None) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """Cells to search and the ones skipped (with the reason).  A user's mechanism (``mech.is_users``:
    ``mechanisms.core.references``) is first searched for failures (property ``runs``), whichever properties
    were asked for: a mechanism that crashes, loops or returns garbage is a finding under ``--properties ef``
    too."""
    cells, skipped = [], []
    names = list(properties or DEFAULT_PROPERTIES)
    if mech.is_users:  # a user's mechanism failing is a finding whatever was asked: ``runs`` is always searched, first
        names = USER_PROPERTIES + [n for n in names if get_property(n).name not in USER_PROPERTIES]
    for name in names:
        prop = get_property(name)
        for v in prop.variants:
            why = prop.variant_possible(mech.setting, v)
            if why:
                skipped.append((prop.name, v, why))
            else:
                cells.append((prop.ref, v))  # a user's property: its reference
    return cells, skipped


def run_mechanism(mech, properties: Optional[Sequence[str]] = None, *, budget: float = DEFAULT_BUDGET,
                  seed: int = 0, store_dir: Optional[str] = DEFAULT_DIR, max_trials: Optional[int] = None,
                  certify: bool = False, certifier: Optional[Certifier] = None,
                  progress: Optional[Callable[[str], None]] = None,
                  domain: Optional[strat.Domain] = None, keep_all: bool = False,
                  deadline: Optional[float] = None, variants: Optional[dict[str, Sequence[str]]] = None,
                  executor: Optional[Executor] = None, campaign: Optional[Campaign] = None,
                  command: Optional[str] = None) -> RunReport:
    """Search every planned cell of ``mech`` within ``budget`` wall-clock seconds (and before ``deadline``,
    a ``time.monotonic()`` value: the command's, when it started earlier) as a campaign on ``executor``
    (default: this process) -- see the module docstring.  ``certify=True`` first asks ``certifier``
    (default: the z3 layer, :func:`z3_certifier`; another certifier runs in-process only).  ``variants``
    (``{property: [variant, ...]}``, ``verifier.properties.parse_cells``) keeps only those variants of the
    properties it names; the budget is shared by the cells kept.  ``campaign``: a resumable campaign
    directory (``run --campaign``)."""
    w0 = time.perf_counter()
    ex = executor or InProcess()
    if not ex.in_process and certifier is not None:
        raise ValueError("certifier: another certifier than the z3 layer's runs in-process only")
    if not ex.in_process and not mech.reference and mech.origin == "function":
        raise ValueError(f"mechanism {mech.name}: a function that cannot be imported by name runs in-process only")
    cells, skipped = plan(mech, properties)
    if variants:
        cells = [(p, v) for p, v in cells if p not in variants or v in variants[p]]
        skipped = [(p, v, why) for p, v, why in skipped if p not in variants or v in variants[p]]
    base_dom = domain if domain is not None else strat.domain_for(mech.setting)
    report = RunReport(mech.name, mech.title, mech.setting.describe(), seed, budget, base_dom.describe(), [],
                       list(skipped), user=mech.is_users)
    tasks = [Task(mech.ref, p, v, seed=seed, max_trials=max_trials, certify=certify, domain=domain, command=command,
                  tolerance=mech.tolerance, call_limit=mech.call_limit, mech=mech, certifier=certifier,
                  weight=DEVIATION_WEIGHT if get_property(p).needs_deviation else 1.0) for p, v in cells]
    got, report.interrupted = execute(tasks, executor=ex, budget=budget, store_dir=store_dir, keep_all=keep_all,
                                      campaign=campaign, progress=progress, deadline=deadline)
    report.results = [got[t.key] for t in tasks if t.key in got]
    if report.interrupted:
        report.skipped += [(t.property, t.variant, "interrupted") for t in tasks if t.key not in got]
    report.wall_seconds = time.perf_counter() - w0
    report.seconds = report.wall_seconds  # the budget's clock (the cells' own seconds may overlap on workers)
    return report
