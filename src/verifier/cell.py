"""One ``run`` cell (mechanism x property x variant): the search (+ misreport optimiser) inside the mechanism's
setting, then a violation -- always an exact certificate -- minimised and recorded (``verifier.record``:
the store gate, the claims' outcomes).  ``verifier.campaign``'s workers run :func:`run_cell` (with no store:
they only minimise); ``verifier.run`` plans the cells and hands them to a campaign.

``budget`` bounds the whole cell (``verifier.properties.budget``: one absolute deadline, threaded through
the certifier, the search, shrinking, the optimiser and minimisation); a cell keeps :data:`MINIMISE_RESERVE`
of it for minimising and storing a violation.  Which claims a cell speaks about, and what its verdict means
for them: ``verifier.claims``.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from . import claims as claims_mod
from .engines import strategies as strat
from .engines.search import SearchResult, SearchSpec, search
from .engines.traces import TraceSpec, search_traces
from .properties import get_property
from .properties import budget as bud
from .config import RunConfig
from .record import OUTCOMES_ONLY, Storing, record
from .results import Result, Verdict

__all__ = ["run_cell", "not_reached", "search_provenance", "z3_certifier", "Certifier", "MINIMISE_RESERVE"]

MINIMISE_RESERVE = 0.2  # the part of a cell's share kept for minimising and storing a violation
clock = bud.now  # wall-clock seconds: every budget is a promise about when the command ends

#: fn(mech, prop, variant, budget_seconds) -> None, or {"domain": ..., "method": ..., "note": ...} when the
#: property is PROVED on that domain
Certifier = Callable[[Any, str, str, float], Optional[dict]]


def z3_certifier(mech, prop_name: str, variant: str, budget: float) -> Optional[dict]:
    """``run --certify``: certify the smallest shape (2 users, 1 server, 2 resources) when the z3 layer
    covers the cell; only a real certificate is reported."""
    from .engines.smt import SUPPORTED, Shape, certify

    if variant not in SUPPORTED.get(prop_name, ()):
        return None
    res = certify(mech, prop_name, variant, Shape(users=2, servers=1, resources=2), timeout=budget)
    if res.verdict is not Verdict.CERTIFIED:
        return None
    return {"domain": res.domain, "method": res.details.get("method", "full encoding"),
            "solvers": res.details.get("agreement", "z3"), "note": f"z3: {res.note}"}


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
    return record(Result(mech.name, prop.name, variant, verdict=Verdict.UNKNOWN, note=bud.budget_note(detail)), mech,
                  OUTCOMES_ONLY, claims=claims_mod.claims_for(mech, prop.name, variant))


def run_cell(mech, prop_name: str, variant: str, config: RunConfig) -> Result:
    """Search one cell; a violation is minimised and stored through the store gate (``config.command`` goes
    into the stored provenance).

    ``config.budget`` (the cell's share, wall-clock seconds) bounds the cell's loops -- certifier, search,
    shrinking, minimisation and storing; ``config.deadline`` (absolute, ``verifier.properties.budget``: the
    command's) bounds every solve and every call of user code in them too (the cell runs inside a deadline
    scope: one step cannot take the command past its budget, whatever it is).  :data:`MINIMISE_RESERVE` of the
    share is kept for minimising a violation (one that could not be minimised in time is stored all the same,
    its ``minimality`` record saying so).  A cell whose deadline has passed is ``unknown: budget ...``.

    When a claim states standing assumptions (``Claim.domain``, e.g. positive demands), the search first
    looks INSIDE them (60% of the budget) -- only such a violation can refute or confirm the claim -- and
    then in the mechanism's whole setting; a violation found there is reported, and the claim is marked
    as not refuted by it."""
    budget = config.budget if config.budget is not None else bud.left(config.deadline)
    end = bud.earliest(clock() + budget, config.deadline)
    with bud.user_calls(mech, budget), bud.scope(config.deadline):
        return _run_cell(mech, prop_name, variant, config, budget, end)


def _run_cell(mech, prop_name: str, variant: str, config: RunConfig, budget: float, end: float) -> Result:
    seed, max_trials, certifier, domain = config.seed, config.trials, config.certifier, config.domain
    t0 = clock()
    if end <= t0:
        return not_reached(mech, prop_name, variant)
    prop = get_property(prop_name)
    claims = claims_mod.claims_for(mech, prop.name, variant)
    cell = Result(mech.name, prop.name, variant, claims=claims)
    store: dict[str, Any] = {}  # how record() stores a violation (``record.Storing``)
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
        if prop.over == "execution":  # the search over executions (verifier.engines.traces)
            res = search_traces(mech, prop, variant, TraceSpec(seed=seed, budget=max(0.0, share), max_trials=mt,
                                                               accept=accept, deadline=search_end,
                                                               max_wait=config.max_wait))
        else:
            res = search(mech, prop, variant, SearchSpec(seed=seed, budget=max(0.0, share), max_trials=mt,
                                                         domain=dom, shrink_budget=min(5.0, max(1.0, budget)),
                                                         accept=accept, deadline=search_end))
        trials += res.trials
        if k == 0:
            cell.domain = dict(res.domain)
            if scoped is not None:
                cell.domain["claim_assumptions"] = list(scoped.domain)
        if res.property_failure:  # the property's own code failed: a finding about it, nothing more to search
            break
        if res.verdict is Verdict.VIOLATED:
            dom_used, accept_used = dom, accept
            if label == "setting" and scoped is not None:
                cell.domain["violation_found_in"] = "the mechanism's whole setting (outside the claim's assumptions)"
            break
        if max_trials is not None and trials >= max_trials:
            break
    assert res is not None
    cell.trials, cell.engine = trials, res.engine
    if res.verdict is Verdict.VIOLATED and res.certificate is not None:
        cell.time_to_first = (clock() - t0) - (res.seconds - (res.time_to_first or 0)) if len(phases) > 1 \
            else res.time_to_first
        store = {"provenance": search_provenance(mech.name, res.engine, seed, trials, cell.time_to_first,
                                                 config.command),
                 "minimize_budget": min(15.0, max(3.0, budget)), "domain": dom_used, "accept": accept_used}
        cell.verdict, cell.certificate = Verdict.VIOLATED, res.certificate
        if res.note:
            cell.note = res.note
    elif res.property_failure:
        cell.verdict, cell.note, cell.property_failure = Verdict.UNKNOWN, res.note, res.property_failure
        if res.failed_env is not None:
            cell.details["failed_instance"] = res.failed_env.to_dict()
    else:
        cell.measure = res.worst
        if cell.certified:
            cell.verdict = Verdict.CERTIFIED
            cell.note = "; ".join(x for x in (cell.certified.get("note", ""),
                                              f"search: no violation in {trials} trials") if x)
        elif trials and res.verdict is Verdict.UNKNOWN:  # the claim's phase evaluated candidates, the last did not
            cell.verdict, cell.note = Verdict.NOT_REFUTED, ""
        else:
            cell.verdict = res.verdict
            cell.note = res.note
    record(cell, mech, Storing(root=config.store, keep_all=config.keep_all, deadline=end, **store))
    cell.seconds = clock() - t0
    cell.wall_seconds = cell.seconds
    cell.wall_to_first = res.wall_to_first
    return cell
