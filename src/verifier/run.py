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
from typing import Optional, Sequence

from . import planning
from .campaign import Task, execute
from .cell import MINIMISE_RESERVE, not_reached, run_cell, search_provenance, z3_certifier  # noqa: F401
from .config import RunConfig
from .engines import strategies as strat
from .executors import InProcess
from .planning import DEVIATION_WEIGHT
from .properties import DEFAULT_PROPERTIES
from .results import Result, Verdict

__all__ = ["RunReport", "run_mechanism", "run_cell", "plan", "not_reached", "DEFAULT_BUDGET", "DEFAULT_PROPERTIES",
           "DEVIATION_WEIGHT", "MINIMISE_RESERVE", "z3_certifier", "search_provenance"]

DEFAULT_BUDGET = 60.0


@dataclass
class RunReport:
    """One ``run``: the mechanism, the searched domain, one :class:`Result` per cell, the skipped cells."""

    mechanism: str
    title: str
    setting: str
    seed: int
    budget: Optional[float]
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
        violated = [f"{r.property}/{r.variant}" for r in self.results if r.verdict is Verdict.VIOLATED]
        refuted = sum(1 for r in self.results if r.refuted)
        return (f"<RunReport {self.mechanism}: {len(self.results)} cells, {len(violated)} violated"
                f"{' (' + ', '.join(violated) + ')' if violated else ''}, {refuted} claims REFUTED"
                f"{', interrupted' if self.interrupted else ''}>")


def plan(mech, properties: Optional[Sequence[str]] = None) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """``(cells, skipped)`` of :func:`verifier.planning.plan` for one mechanism, as ``(property ref, variant)``
    pairs and ``(property, variant, reason)`` rows."""
    p = planning.plan([mech], properties)
    return [(c.prop.ref, c.variant) for c in p.cells], [s.row() for s in p.skipped]


def run_mechanism(mech, properties: Optional[Sequence[str]] = None, config: RunConfig = RunConfig(budget=DEFAULT_BUDGET),
                  variants: Optional[dict[str, Sequence[str]]] = None) -> RunReport:
    """Search every planned cell of ``mech`` (:func:`verifier.planning.plan`; ``variants``, ``{property:
    [variant, ...]}`` as ``verifier.properties.parse_cells`` gives it, keeps only those variants of the
    properties it names) as a campaign within ``config`` (``verifier.config.RunConfig``: its budget and
    deadline, executor -- default: this process --, store, seed, trials, ...) -- see the module docstring.
    ``config.certify`` first asks ``config.certifier`` (default: the SMT layer, :func:`z3_certifier`; another
    certifier runs in-process only)."""
    w0 = time.perf_counter()
    cfg = config.start()
    ex = cfg.executor or InProcess()
    if not ex.in_process and cfg.certifier is not None:
        raise ValueError("certifier: another certifier than the z3 layer's runs in-process only")
    if not ex.in_process and not mech.reference and mech.origin == "function":
        raise ValueError(f"mechanism {mech.name}: a function that cannot be imported by name runs in-process only")
    p = planning.plan([mech], properties, variants)
    base_dom = cfg.domain if cfg.domain is not None else strat.domain_for(mech.setting)
    dom = base_dom.describe()
    if p.cells and all(c.prop.over == "execution" for c in p.cells):  # the traces the search draws
        from .engines.traces import describe_domain

        dom = {"executions": describe_domain(mech)}
    report = RunReport(mech.name, mech.title, mech.setting.describe(), cfg.seed, cfg.budget, dom, [],
                       [s.row() for s in p.skipped], user=mech.is_users)
    tasks = [Task.of(c, cfg) for c in p.cells]
    got, report.interrupted = execute(tasks, cfg.but(executor=ex))
    report.results = [got[t.key] for t in tasks if t.key in got]
    if report.interrupted:
        report.skipped += [(t.property, t.variant, "interrupted") for t in tasks if t.key not in got]
    report.wall_seconds = time.perf_counter() - w0
    report.seconds = report.wall_seconds  # the budget's clock (the cells' own seconds may overlap on workers)
    return report
