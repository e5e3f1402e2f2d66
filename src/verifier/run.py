"""``run``: every applicable property of one mechanism, searched within a time budget.

Per (property, variant) cell the Hypothesis search (+ misreport optimiser) looks for a violation inside
the mechanism's setting; a violation (always an exact certificate) goes through the store gate
(``store.persist``: minimised, then stored) and the cell's :class:`~verifier.results.Result` says exactly
what was established (``results.VERDICTS``).

Budget: ``budget`` is the wall-clock limit of the whole run (``verifier.properties.budget``: one absolute
deadline, threaded through the search, shrinking, the optimiser and minimisation).  Cells run one after
another; each gets the time left divided by the weights of the cells left (deviation properties weigh 2),
so time a cell does not use goes to the next ones; a cell keeps :data:`MINIMISE_RESERVE` of its share for
minimising and storing a violation.  Cells the budget does not reach are ``unknown: budget (not
reached)``.  Deterministic for a given seed up to how far the budget lets each search go; ``max_trials``
makes a run fully reproducible.
Which claims a cell speaks about, and what its verdict means for them: ``verifier.claims``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from . import claims as claims_mod
from .engines import strategies as strat
from .engines.search import SearchResult, search
from .properties import DEFAULT_PROPERTIES, PROPERTIES, USER_PROPERTIES, get_property
from .properties import budget as bud
from .results import Result, describe_size, verdict_text
from .store import DEFAULT_DIR, persist

__all__ = ["RunReport", "run_mechanism", "run_cell", "plan", "not_reached", "DEFAULT_BUDGET", "DEFAULT_PROPERTIES",
           "DEVIATION_WEIGHT", "MINIMISE_RESERVE", "z3_certifier", "search_provenance"]

DEFAULT_BUDGET = 60.0
DEVIATION_WEIGHT = 2.0
MINIMISE_RESERVE = 0.2  # the part of a cell's share kept for minimising and storing a violation
clock = bud.now  # wall-clock seconds: every budget is a promise about when the command ends

#: fn(mech, prop, variant, budget_seconds) -> None, or {"domain": ..., "method": ..., "note": ...} when the
#: property is PROVED on that domain
Certifier = Callable[[Any, str, str, float], Optional[dict]]


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
    ``mechanisms.references``) is first searched for failures (property ``runs``), whichever properties
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
                cells.append((prop.name, v))
    return cells, skipped


def z3_certifier(mech, prop_name: str, variant: str, budget: float) -> Optional[dict]:
    """``run --certify``: certify the smallest shape (2 users, 1 server, 2 resources) when the z3 layer
    covers the cell; only a real certificate is reported."""
    from .engines.z3 import SUPPORTED, Shape, certify

    if variant not in SUPPORTED.get(prop_name, ()):
        return None
    res = certify(mech, prop_name, variant, Shape(users=2, servers=1, resources=2), timeout=budget)
    if res.verdict != "certified":
        return None
    return {"domain": res.domain, "method": res.details.get("method", "full encoding"), "note": f"z3: {res.note}"}


def _certified(cell: Result, mech, prop: str, variant: str, budget: float, certifier: Certifier) -> None:
    try:
        got = certifier(mech, prop, variant, max(0.1, budget / 2))
    except Exception as exc:  # noqa: BLE001 - a certifier failing is "not certified"
        cell.note = f"certifier error: {type(exc).__name__}: {exc}"
        got = None
    if got:
        cell.certified = got


def search_provenance(mechanism: str, engine: str, seed: int, trials: int, seconds_to_first: Optional[float],
                      command: Optional[str] = None) -> dict:
    """The provenance a search's counterexample is stored with (``store.persist``); ``verifier.campaign``'s
    workers compute it where the search ran and hand it to the one writer."""
    import hypothesis

    return {"kind": "search", "engine": engine, "seed": seed, "hypothesis": hypothesis.__version__,
            "trials_to_first": trials, "seconds_to_first": round(seconds_to_first or 0.0, 3),
            "command": command or f"run {mechanism}"}


def not_reached(mech, prop_name: str, variant: str, detail: str = "not reached") -> Result:
    """The result of a cell the budget did not let run: ``unknown`` with note ``budget: <detail>``."""
    prop = get_property(prop_name)
    claims = claims_mod.claims_for(mech, prop.name, variant)
    cell = Result(mech.name, prop.name, variant, claims=claims, verdict="unknown", note=bud.budget_note(detail))
    cell.outcomes = claims_mod.outcomes(claims, cell.verdict, None)
    return cell


def run_cell(mech, prop_name: str, variant: str, *, budget: float, seed: int = 0,
             store_dir: Optional[str] = DEFAULT_DIR, max_trials: Optional[int] = None,
             minimize_budget: Optional[float] = None, certifier: Optional[Certifier] = None,
             domain: Optional[strat.Domain] = None, command: Optional[str] = None, keep_all: bool = False,
             deadline: Optional[float] = None) -> Result:
    """Search one cell; a violation is minimised and stored through the store gate (``command`` goes into
    the stored provenance).

    ``budget`` (wall-clock seconds) and ``deadline`` (absolute, ``verifier.properties.budget``) bound the
    whole cell -- certifier, search, shrinking, minimisation and storing; :data:`MINIMISE_RESERVE` of it is
    kept for minimising a violation (one that could not be minimised in time is stored all the same, its
    ``minimality`` record saying so).  A cell whose deadline has passed is ``unknown: budget ...``.

    When a claim states standing assumptions (``Claim.domain``, e.g. positive demands), the search first
    looks INSIDE them (60% of the budget) -- only such a violation can refute or confirm the claim -- and
    then in the mechanism's whole setting; a violation found there is reported, and the claim is marked
    as not refuted by it."""
    with bud.user_calls(mech, budget):
        return _run_cell(mech, prop_name, variant, budget=budget, seed=seed, store_dir=store_dir,
                         max_trials=max_trials, minimize_budget=minimize_budget, certifier=certifier, domain=domain,
                         command=command, keep_all=keep_all, deadline=deadline)


def _run_cell(mech, prop_name: str, variant: str, *, budget: float, seed: int, store_dir: Optional[str],
              max_trials: Optional[int], minimize_budget: Optional[float], certifier: Optional[Certifier],
              domain: Optional[strat.Domain], command: Optional[str], keep_all: bool,
              deadline: Optional[float]) -> Result:
    t0 = clock()
    end = bud.earliest(t0 + budget, deadline)
    if end <= t0:
        return not_reached(mech, prop_name, variant)
    prop = get_property(prop_name)
    claims = claims_mod.claims_for(mech, prop.name, variant)
    cell = Result(mech.name, prop.name, variant, claims=claims)
    if certifier is not None:
        _certified(cell, mech, prop.name, variant, min(budget, end - clock()), certifier)
    search_end = end - MINIMISE_RESERVE * (end - t0)
    base = domain if domain is not None else strat.domain_for(mech.setting)
    scoped = claims_mod.scoped_claim(claims)
    phases: list[tuple[str, strat.Domain, Any]] = []
    if scoped is not None:
        phases.append(("claim", claims_mod.search_domain(scoped, base), lambda e, c=scoped: c.covers(e) is None))
    phases.append(("setting", base, None))
    res: Optional[SearchResult] = None
    trials, dom_used, accept_used = 0, base, None
    for k, (label, dom, accept) in enumerate(phases):
        left = search_end - clock()
        if k > 0 and left <= 0:
            break  # the claim's phase used the time: its result stands
        share = left * 0.6 if (k == 0 and len(phases) > 1) else left
        mt = None if max_trials is None else max(1, max_trials - trials)
        res = search(mech, prop.name, variant, seed=seed, budget=max(0.0, share), max_trials=mt, domain=dom,
                     shrink_budget=min(5.0, max(1.0, budget)), accept=accept, deadline=search_end)
        trials += res.trials
        if k == 0:
            cell.domain = dict(res.domain)
            if scoped is not None:
                cell.domain["claim_assumptions"] = list(scoped.domain)
        if res.verdict == "violated":
            dom_used, accept_used = dom, accept
            if label == "setting" and scoped is not None:
                cell.domain["violation_found_in"] = "the mechanism's whole setting (outside the claim's assumptions)"
            break
        if max_trials is not None and trials >= max_trials:
            break
    assert res is not None
    cell.trials, cell.engine = trials, res.engine
    if res.verdict == "violated" and res.certificate is not None:
        cell.time_to_first = (clock() - t0) - (res.seconds - (res.time_to_first or 0)) if len(phases) > 1 \
            else res.time_to_first
        prov = search_provenance(mech.name, res.engine, seed, trials, cell.time_to_first, command)
        mb = minimize_budget if minimize_budget is not None else min(15.0, max(3.0, budget))
        done = persist(res.certificate, mech, provenance=prov, root=store_dir, claims=claims,
                       minimize_budget=mb, domain=dom_used, accept=accept_used, keep_all=keep_all, deadline=end)
        cell.certificate, cell.minimality = done.certificate, done.minimality
        cell.counterexample, cell.stored_new = done.path, done.new
        cell.verdict, cell.measure = "violated", done.certificate.measure
        cell.size = done.minimality["size"]
        if res.note:
            cell.note = res.note
    else:
        cell.measure = res.worst
        if cell.certified:
            cell.verdict = "certified"
            cell.note = "; ".join(x for x in (cell.certified.get("note", ""),
                                              f"search: no violation in {trials} trials") if x)
        elif trials and res.verdict == "unknown":  # the claim's phase evaluated candidates, the last did not
            cell.verdict, cell.note = "not_refuted", ""
        else:
            cell.verdict = res.verdict
            cell.note = res.note
    witness = cell.certificate.witness if cell.certificate is not None else None
    cell.outcomes = claims_mod.outcomes(claims, cell.verdict, witness)
    cell.seconds = clock() - t0
    cell.wall_seconds = cell.seconds
    cell.wall_to_first = res.wall_to_first
    return cell


def run_mechanism(mech, properties: Optional[Sequence[str]] = None, *, budget: float = DEFAULT_BUDGET,
                  seed: int = 0, store_dir: Optional[str] = DEFAULT_DIR, max_trials: Optional[int] = None,
                  certify: bool = False, certifier: Optional[Certifier] = None,
                  progress: Optional[Callable[[str], None]] = None,
                  domain: Optional[strat.Domain] = None, keep_all: bool = False,
                  deadline: Optional[float] = None, variants: Optional[dict[str, Sequence[str]]] = None) -> RunReport:
    """Search every planned cell of ``mech`` within ``budget`` wall-clock seconds (and before ``deadline``,
    a ``time.monotonic()`` value: the command's, when it started earlier); see the module docstring.
    ``certify=True`` first asks ``certifier`` (default: the z3 layer, :func:`z3_certifier`).  ``variants``
    (``{property: [variant, ...]}``, ``verifier.properties.parse_cells``) keeps only those variants of the
    properties it names; the budget is shared by the cells kept."""
    t0 = clock()
    end = bud.earliest(t0 + budget, deadline)
    if certify and certifier is None:
        certifier = z3_certifier
    cells, skipped = plan(mech, properties)
    if variants:
        cells = [(p, v) for p, v in cells if p not in variants or v in variants[p]]
        skipped = [(p, v, why) for p, v, why in skipped if p not in variants or v in variants[p]]
    weights = [DEVIATION_WEIGHT if PROPERTIES[p].needs_deviation else 1.0 for p, _ in cells]
    base_dom = domain if domain is not None else strat.domain_for(mech.setting)
    report = RunReport(mech.name, mech.title, mech.setting.describe(), seed, budget, base_dom.describe(), [],
                       skipped, user=mech.is_users)
    try:
        with bud.user_calls(mech, budget):
            _run_cells(mech, cells, weights, report, end, seed=seed, store_dir=store_dir, max_trials=max_trials,
                       certify=certify, certifier=certifier, progress=progress, domain=domain, keep_all=keep_all)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: keep what finished (stored files are complete)
        report.interrupted = True
        done = {(r.property, r.variant) for r in report.results}
        report.skipped += [(p, v, "interrupted") for p, v in cells if (p, v) not in done]
    report.seconds = clock() - t0
    report.wall_seconds = report.seconds
    return report


def _run_cells(mech, cells, weights, report: RunReport, end: float, *, seed, store_dir, max_trials, certify,
               certifier, progress, domain, keep_all) -> None:
    """The cells one after another, each with its share of the time left (the module docstring)."""
    for i, ((p, v), w) in enumerate(zip(cells, weights)):
        left = end - clock()
        if left <= 0:
            r = not_reached(mech, p, v)
            if progress:
                progress(f"[{i + 1:2d}/{len(cells)}] {mech.name} {p}/{v}: {verdict_text(r)}")
            report.results.append(r)
            continue
        share = left * w / sum(weights[i:])
        if progress:
            progress(f"[{i + 1:2d}/{len(cells)}] {mech.name} {p}/{v} (up to {share:.1f} s) ...")
        r = run_cell(mech, p, v, budget=share, seed=seed, store_dir=store_dir, max_trials=max_trials,
                     certifier=certifier if certify else None, domain=domain, keep_all=keep_all, deadline=end)
        report.results.append(r)
        if progress:
            extra = ""
            if r.verdict == "violated":
                extra = f" first exact counterexample after {r.time_to_first:.2f} s; minimal: " \
                        f"{describe_size(r.size)}"
            progress(f"        -> {verdict_text(r)}{extra}  [{r.claim_status()}]")
