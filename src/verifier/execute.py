"""``execute``: one mechanism through one execution -- the step table and every property over executions judged
on it (docs/executions.md).

The run is computed exactly (``exact=True``: every allocation rational; a mechanism without an exact allocation,
e.g. a user's float implementation, is run as it is and its numbers taken as written), or in floats with
``exact=False`` (the fast screen for long traces): a property flagged in floats is then re-derived by an exact
replay, which alone makes a violation.  Verdicts (``verifier.results.Verdict``):

* ``violated``       -- an exact violation on this execution (certificate; stored with ``store``);
* ``satisfied``      -- judged exactly on this execution: no violation (properties without a deviation);
* ``not_refuted``    -- no violation among the misreports tried (online SP), or judged in floats only;
* ``not_applicable`` -- the property says nothing about this execution (the note says why);
* ``unknown``        -- the budget, or solver trouble (the note says which).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from mechanisms.core.mechanism import SettingError
from mechverify.execution import Execution, Step

from . import claims as claims_mod
from .config import RunConfig
from .planning import plan
from .properties import budget as bud
from .properties.base import PropertyFailure
from .record import OUTCOMES_ONLY, Storing, record
from .results import Result, Verdict

__all__ = ["ExecutionReport", "execute_trace", "DEFAULT_EXECUTE_BUDGET"]

DEFAULT_EXECUTE_BUDGET = 30.0


@dataclass
class ExecutionReport:
    """What ``execute`` established: the mechanism's ``steps`` (exact, or floats with ``exact=False``), one
    ``Result`` per property cell, each cell's per-step status (``per_step[key]``: a measure per step, ``None``
    where not judged) and the cells left out (``skipped``: (property, variant, reason))."""

    mechanism: str
    execution: Execution
    steps: list[Step]
    exact: bool
    results: list[Result] = field(default_factory=list)
    per_step: dict[str, list] = field(default_factory=dict)
    skipped: list = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""

    @property
    def violated(self) -> list[Result]:
        return [r for r in self.results if r.verdict is Verdict.VIOLATED]

    def __str__(self) -> str:
        from .report.execution import render_execution

        return render_execution(self)

    def __repr__(self) -> str:
        return (f"<ExecutionReport {self.mechanism}: {len(self.steps)} steps, "
                f"{len(self.violated)} of {len(self.results)} properties violated>")


class _Cut(Exception):
    pass


def execute_trace(mech, ex: Execution, properties: Optional[Sequence[Any]] = None, config: RunConfig = RunConfig(),
                  exact: bool = True, store: Optional[str] = None, source: str = "",
                  variants: Optional[dict] = None) -> ExecutionReport:
    """Run ``mech`` through ``ex`` and judge every property over executions (``properties``: names; default:
    all of them; ``variants``: ``{property: [variant, ...]}`` to keep only those) within ``config``'s budget
    (module docstring).  ``store``: write each violation there (the
    trace as given, not minimised)."""
    from mechanisms.core.time import execute

    budget = config.budget if config.budget is not None else DEFAULT_EXECUTE_BUDGET
    t0 = bud.now()
    end = bud.earliest(t0 + budget, config.deadline)
    asked = properties
    if asked is None:
        from .properties import EXECUTION_PROPERTIES

        asked = list(EXECUTION_PROPERTIES)
    p = plan([mech], asked, variants or None, failures_first=False)
    rep = ExecutionReport(mech.name, ex, [], exact, skipped=[s.row() for s in p.skipped])

    def tick(_step):
        if bud.now() > end:
            raise _Cut()

    try:
        with bud.scope(end):
            rep.steps = execute(mech, ex, exact, on_step=tick)
    except (_Cut, bud.BudgetExhausted):
        rep.note = f"budget: the run did not finish within {budget:g} s"
        for c in p.cells:
            rep.results.append(record(Result(mech.name, c.prop.name, c.variant, verdict=Verdict.UNKNOWN,
                                             note=bud.budget_note("the run did not finish")), mech, OUTCOMES_ONLY,
                                      claims=claims_mod.claims_for(mech, c.prop.name, c.variant)))
        rep.seconds = bud.now() - t0
        return rep
    run_exact = exact and all(st.alloc is None or st.alloc.exact for st in rep.steps)
    rng = random.Random(config.seed)
    for c in p.cells:
        prop, variant = c.prop, c.variant
        r = Result(mech.name, prop.name, variant, claims=claims_mod.claims_for(mech, prop.name, variant))
        r.details["outside"] = [c_.covers(ex) for c_ in r.claims]
        t1 = bud.now()
        try:
            if bud.now() > end:
                raise _Cut()
            with bud.scope(end):
                _judge(mech, ex, prop, variant, rep, r, run_exact, rng, end)
        except (_Cut, bud.BudgetExhausted):
            r.verdict, r.note = Verdict.UNKNOWN, bud.budget_note("not reached")
        except PropertyFailure as exc:
            r.verdict, r.property_failure = Verdict.UNKNOWN, exc.text
            r.note = f"the property failed on this execution: {exc.text}"
        except ArithmeticError as exc:
            r.verdict, r.note, r.solver_trouble = Verdict.UNKNOWN, f"solver trouble: {exc}", str(exc)
        r.seconds = bud.now() - t1
        storing = OUTCOMES_ONLY if not store else Storing(
            root=store, provenance={"kind": "execute", "execution": source, "seed": config.seed}, minimise=False,
            minimality={"status": "the execution given to execute (not minimised)"}, keep_all=True)
        rep.results.append(record(r, mech, storing))
    rep.seconds = bud.now() - t0
    return rep


def _judge(mech, ex: Execution, prop, variant: str, rep: ExecutionReport, r: Result, run_exact: bool, rng, end) -> None:
    why = prop.applies_to(mech, ex, variant)
    if why:
        r.verdict, r.note = Verdict.NOT_APPLICABLE, why
        return
    key = f"{prop.name}/{variant}"
    if prop.hints_for(variant).deviation == "trace":
        devs = list(prop.trace_deviations(mech, ex, variant, rng))
        worst = None
        for dev in devs:
            if bud.now() > end:
                r.note = f"budget: {r.trials} of {len(devs)} misreports tried"
                break
            try:
                ev = prop.evaluate_execution(mech, ex, variant, dev, exact=False, steps=None)
            except SettingError:  # the report leaves the mechanism's setting: not a report it takes
                continue
            if ev.measure is None:
                continue
            r.trials += 1
            if prop.worse(ev.measure, worst):
                worst = ev.measure
            if ev.violated and ev.witness is not None:
                cert = prop.recheck(mech, ev.witness)
                if cert is not None:
                    r.verdict, r.certificate, r.measure = Verdict.VIOLATED, cert, cert.measure
                    return
        r.measure = worst
        r.verdict = Verdict.NOT_REFUTED if r.trials else Verdict.NOT_APPLICABLE
        if r.trials:
            tried = getattr(prop, "tried", None)
            r.note = r.note or (f"no gain among {r.trials} {tried}" if tried else
                                f"no gain among {r.trials} misreports (structured: one resource doubled or halved, "
                                f"task counts raised or lowered, at one place or all)")
        else:
            r.note = "no misreport to try"
        return
    j = prop.judge(mech, ex, variant, rep.steps, run_exact)
    rep.per_step[key] = j.per_step
    r.trials = 1
    r.measure = j.measure
    if j.measure is None:
        r.verdict, r.note = Verdict.NOT_APPLICABLE, j.note or "nothing to judge on this execution"
    elif j.violated:
        from .properties.base import Witness

        st = rep.steps[j.step] if j.step is not None else None
        env = st.env if st is not None and st.env is not None else next(
            (s.env for s in rep.steps if s.env is not None), None)
        w = Witness(prop.name, variant, mech.name, env, None, j.measure,
                    tuple(env.users.index(u) for u in j.users if env is not None and u in env.users),
                    execution=ex, step=j.step)
        cert = prop.recheck(mech, w)
        if cert is not None:
            r.verdict, r.certificate, r.measure = Verdict.VIOLATED, cert, cert.measure
        else:
            r.verdict = Verdict.UNKNOWN
            r.note = "a float candidate did not survive the exact replay" if not run_exact else \
                "no exact allocation: not certified"
    else:
        r.verdict = Verdict.SATISFIED if run_exact else Verdict.NOT_REFUTED
        if not run_exact:
            r.note = "judged in floats (the allocations are not exact)"
