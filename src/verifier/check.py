"""``check``: every property's verdict for one mechanism on one instance.

Instance properties (EF, SI, PO, BF, SRF, single-server DRF) are evaluated exactly when the
mechanism's allocation is exact, so their verdict on the instance is definite.  Deviation
properties (SP, GSP, PM) try structured deviations (``verifier.properties.moves``) within the time
budget: candidates are found in floats and every candidate goes through the property's exact re-check;
only a certificate makes a "violated" verdict.  Their verdict note says how the misreports were
sampled (all structured moves, or those of some users before the budget ended).

Budget (``verifier.properties.budget``): ``budget`` seconds of wall clock for the WHOLE check (and
``deadline``, absolute, when the caller's command started earlier).  The allocations come first (the
exact one only when the float one suggests it fits -- ``EXACT_FACTOR`` float allocations' time, plus
one allocation for every deviation cell, so that each of them can try a deviation), then the instance properties, then the deviation
properties; each cell gets the time left divided by the weights of the cells left (instance properties
weigh 3, deviation properties 1, but at least ``DEVIATION_ROOM`` allocations' time while there is
that much left; time a cell does not use goes to the next ones, and what the last ones leave goes back
to the deviation cells the budget stopped, which go on with their next deviation).  A deviation is tried
only while one more fits in the time left, estimated by the last one measured (at first by the truthful
allocation; when that estimate leaves no room, one deviation is measured with all the time left -- its
LPs start from the truthful allocation's basis and often take a fraction of it); the LP layer stops at
the deadline, and what the budget cut short is ``unknown: budget ...``.

Verdicts (``Result.verdict``, ``verifier.results``):
* ``violated``        -- exact certificate (``certificate``; ``path`` once stored);
* ``satisfied``       -- instance property checked exactly on this instance;
* ``not_refuted``     -- no violation among ``trials`` deviations in ``seconds``;
* ``not_applicable``  -- the property's premise fails here (``note`` says why);
* ``unknown``         -- solver trouble, the budget, or a candidate that could not be certified (``note``).
"""
from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from mechanisms.core.registry import SettingError
from mechverify.lp import LPError
from mechverify.model import Environment

from . import claims as claims_mod
from .exact import known_allocation
from . import planning
from .config import RunConfig
from .planning import Cell
from .properties import Property
from .properties.base import PropertyFailure
from .properties import budget as bud
from .properties.runs import failure_text
from .record import OUTCOMES_ONLY, record
from .results import Result, Verdict

__all__ = ["check_property", "check_instance", "refuted_claims", "Allocations", "EXACT_FACTOR", "DEFAULT_CHECK_BUDGET"]

#: seconds for a whole ``check`` when no budget is given (the CLI's default ``--budget``)
DEFAULT_CHECK_BUDGET = 10.0

#: the exact allocation is attempted only while more than this many float allocations' time is left
EXACT_FACTOR = 4.0
#: shares of the time left: an instance property's exact verdict is definite, a deviation search samples
INSTANCE_WEIGHT, DEVIATION_WEIGHT = 3.0, 1.0
#: a deviation cell's share is at least this many allocations' time (while the budget has it), so that
#: a budget of a few allocations gives the first deviation cells one sampled deviation each
DEVIATION_ROOM = 1.25


@dataclass(frozen=True)
class Allocations:
    """The mechanism's allocations of the instance a check judges: ``exact`` (``None`` when not computed:
    ``exact_note`` says why) and ``float``, and ``seconds`` one allocation took (deviations are tried only while
    one more fits)."""

    exact: Any = None
    float: Any = None
    seconds: Optional[float] = None
    exact_note: str = ""


def check_property(mech, env: Environment, cell: Cell, config: RunConfig, allocs: Allocations = Allocations(),
                   sampler: Optional["DeviationSampler"] = None) -> Result:
    """One planned cell (``verifier.planning.Cell``) on ``env`` within ``config.budget`` wall-clock seconds (and
    before ``config.deadline``), at most ``config.trials`` deviations; ``allocs``: the mechanism's allocations
    of ``env``; ``sampler``: a deviation property's :class:`DeviationSampler` from an earlier call, to go on
    where that one stopped (the result then covers both)."""
    end = bud.earliest(bud.now() + (config.budget if config.budget is not None else bud.left(config.deadline)),
                       config.deadline)
    res = _check_property(mech, env, cell.prop, cell.variant, end, config.seed, allocs, sampler, config.trials)
    return record(res, mech, OUTCOMES_ONLY)  # the claims' outcomes: check keeps the instance it was given


def refuted_claims(res: Result) -> list:
    """The claims of 'holds' this result refutes (a certified violation inside the claim's domain)."""
    return [c for c, o in zip(res.claims, res.outcomes) if o == claims_mod.REFUTED]


def _new_result(mech, env, prop, variant) -> Result:
    claims = claims_mod.claims_for(mech, prop.name, variant)
    return Result(mech.name, prop.name, variant, claims=claims,
                  details={"outside": [claims_mod.assumption_broken(c, env) for c in claims]})


def _check_property(mech, env, prop, variant, end, seed, allocs: Allocations, sampler=None, max_trials=None) -> Result:
    t0 = bud.now()
    res = _new_result(mech, env, prop, variant)
    try:
        reason = prop.applicable(mech, env, variant)
        if reason:
            res.verdict, res.note = Verdict.NOT_APPLICABLE, reason
            return res
        with bud.scope(end):
            if not prop.needs_deviation:
                _instance(mech, env, prop, variant, res, allocs.exact, allocs.float, allocs.exact_note)
            else:
                sampler = sampler or DeviationSampler(mech, env, prop, variant, seed)
                _deviations(mech, env, prop, variant, res, end, allocs.float, allocs.seconds, sampler, max_trials)
    except bud.BudgetExhausted as exc:
        res.verdict, res.note = Verdict.UNKNOWN, str(exc)
    except PropertyFailure as exc:  # the property's own code: a finding about it, the other cells go on
        res.verdict, res.property_failure = Verdict.UNKNOWN, exc.text
        res.note = f"the property failed on this instance: {exc.text}"
        res.details["failed_instance"] = env.to_dict()
    except (LPError, ArithmeticError) as exc:
        res.verdict, res.note, res.solver_trouble = Verdict.UNKNOWN, f"solver trouble: {exc}", str(exc)
    res.seconds = bud.now() - t0
    if sampler is not None:
        sampler.seconds += res.seconds
        res.seconds = sampler.seconds
    return res


def _instance(mech, env, prop, variant, res: Result, alloc_exact, alloc_float, exact_note: str) -> None:
    use_exact = alloc_exact is not None
    ev = prop.evaluate(mech, env, variant, exact=use_exact, alloc=alloc_exact if use_exact else alloc_float)
    res.trials = 1
    res.measure = ev.measure
    if ev.measure is None and not ev.violated:
        res.verdict, res.note = Verdict.NOT_APPLICABLE if "applicable" in ev.note else Verdict.UNKNOWN, ev.note
    elif ev.violated:
        cert = prop.recheck(mech, ev.witness)
        if cert is not None:
            res.verdict, res.certificate, res.measure = Verdict.VIOLATED, cert, cert.measure
        else:
            res.verdict = Verdict.UNKNOWN
            res.note = "a float candidate did not survive the exact re-check" if not use_exact else \
                "candidate could not be certified (interval too wide)"
    else:
        res.verdict = Verdict.SATISFIED if use_exact else Verdict.NOT_REFUTED
        if not use_exact:
            res.note = "allocation not exact: float evaluation only" + (f" ({exact_note})" if exact_note else "")


class DeviationSampler:
    """Where a deviation property's sampling stands: the deviations not yet tried (one generator for the
    seed), how many were, by which users, the worst measure, the float candidates the exact re-check
    rejected -- so that a later call goes on with the next deviation instead of starting again."""

    def __init__(self, mech, env: Environment, prop: Property, variant: str, seed: int) -> None:
        self._make = lambda: iter(prop.deviations(mech, env, variant, random.Random(seed)))
        self.it = None  # made at the first deviation asked for
        self.pending = None  # a deviation drawn but not tried (the budget ended first)
        self.trials, self.rejected, self.seconds = 0, 0, 0.0
        self.users: set = set()
        self.worst = None
        self.listed = False  # every deviation of the list was tried

    def next(self):
        """The next deviation to try (``None``: the list is done)."""
        if self.pending is not None:
            dev, self.pending = self.pending, None
            return dev
        if self.it is None:
            self.it = self._make()
        dev = next(self.it, None)
        self.listed = dev is None
        return dev


def _deviations(mech, env, prop, variant, res: Result, end, alloc_float, alloc_seconds,
                smp: DeviationSampler, max_trials: Optional[int] = None) -> None:
    step = alloc_seconds or 0.0  # one more deviation costs about one allocation
    cut = None
    first = smp.trials
    while True:
        if max_trials is not None and smp.trials - first >= max_trials:
            break
        dev = smp.next()
        if dev is None:
            break
        if bud.left(end) <= step:
            smp.pending = dev
            break
        t = bud.now()
        try:
            ev = prop.evaluate(mech, env, variant, deviation=dev, exact=False, alloc=alloc_float)
        except bud.BudgetExhausted:  # this deviation's allocation ran into the deadline: keep the others
            smp.pending, cut = dev, bud.now() - t
            break
        smp.trials += 1
        smp.users.update(dev.users)
        step = bud.now() - t  # the next deviation is estimated by the last one (warm starts make
        # misreports cheaper than the first allocation; one that runs into the deadline is tried again later)
        if ev.measure is not None and prop.worse(ev.measure, smp.worst):
            smp.worst = ev.measure
        if ev.violated:
            if bud.left(end) < 2 * step:  # the exact re-check runs the mechanism twice more, exactly
                res.trials = smp.trials
                res.verdict = Verdict.UNKNOWN
                res.note = bud.budget_note(f"a float candidate ({dev.describe(env)}) could not be re-checked "
                                           f"exactly in the {max(0.0, bud.left(end)):.1f} s left")
                smp.listed = True  # nothing to go on with: this candidate decides the cell
                return
            cert = prop.recheck(mech, ev.witness)
            if cert is not None:
                res.trials = smp.trials
                res.verdict, res.certificate, res.measure = Verdict.VIOLATED, cert, cert.measure
                smp.listed = True
                return
            smp.rejected += 1
    res.trials = smp.trials
    if smp.trials == 0 and cut is not None:
        res.verdict = Verdict.UNKNOWN
        res.note = bud.budget_note(f"the first deviation's allocation did not finish in the {cut:.1f} s left for "
                                   f"{prop.name}/{variant}")
        return
    if smp.trials == 0 and not smp.listed:
        res.verdict = Verdict.UNKNOWN
        res.note = bud.budget_note(f"one allocation took {step:.1f} s, more than the {max(0.0, bud.left(end)):.1f} s "
                                   f"left for {prop.name}/{variant}" if alloc_seconds else "no deviation tried")
        return
    res.verdict = Verdict.NOT_REFUTED
    res.measure = smp.worst
    kind = "misreports" if prop.hints_for(variant).deviation != "leave" else "departures"
    notes = [f"sampled {kind}: {smp.trials} structured deviations by {len(smp.users)} of {env.n_users} users, "
             + ("all that were listed" if smp.listed else "then the budget ended")]
    if smp.rejected:
        notes.append(f"{smp.rejected} float candidates failed the exact re-check")
    res.note = "; ".join(notes)


def check_instance(mech, env: Environment, properties: Optional[Sequence[str]] = None,
                   config: RunConfig = RunConfig(budget=DEFAULT_CHECK_BUDGET),
                   variants: Optional[dict[str, Sequence[str]]] = None) -> list[Result]:
    """Check every planned cell (``verifier.planning.plan``: default every property; a user's mechanism: ``runs``
    first; the variants ``run`` would search -- the others are the plan's ``skipped``) on ``env`` within
    ``config.budget`` wall-clock seconds in total (and before
    ``config.deadline``); see the module docstring.  When a user's mechanism fails on ``env`` (raises, or
    returns no valid allocation), ``runs`` reports it and the other properties are "unknown" -- there is no
    allocation to judge."""
    cfg = config.start()
    budget = cfg.budget if cfg.budget is not None else bud.left(cfg.deadline)
    with bud.user_calls(mech, budget):
        return _check_instance(mech, env, planning.plan([mech], properties, variants).cells, cfg, budget)


def _check_instance(mech, env: Environment, planned: Sequence[Cell], cfg: RunConfig, budget: float) -> list[Result]:
    end, seed = cfg.deadline, cfg.seed
    mech.setting.check(env, mech.name)
    cells = [(c.prop, c.variant) for c in planned]
    t = bud.now()
    try:
        alloc_float = mech(env, exact=False)
    except SettingError:
        raise
    except Exception as exc:  # noqa: BLE001 - a user's mechanism failing is a finding (property runs)
        if not mech.is_users:
            raise
        failed = failure_text(exc)
        return [check_property(mech, env, c, cfg.but(budget=max(0.0, bud.left(end))))
                if c.prop.mechanism_failure else _failed(mech, env, c.prop, c.variant, failed) for c in planned]
    t_alloc = bud.now() - t
    alloc_exact, exact_note = None, ""
    wants_exact = any(not p.needs_deviation and not _premise_fails(p, mech, env, v) for p, v in cells)
    # time kept for one deviation of every deviation cell: their sampled verdicts need allocations too
    reserve = t_alloc * sum(1 for p, v in cells if p.needs_deviation and not _premise_fails(p, mech, env, v))
    if wants_exact and bud.left(end) > EXACT_FACTOR * t_alloc + reserve:
        try:  # exact whenever the mechanism can give it (MNW certifies some optima exactly)
            with bud.scope(bud.earliest(end, bud.now() + max(0.0, bud.left(end) - reserve))):
                a = mech(env, exact=True)
            alloc_exact = a if a.exact else None
        except LPError:
            alloc_exact = None
        except bud.BudgetExhausted:  # its LPs ran into the time kept for the other cells
            exact_note = bud.budget_note("the exact allocation did not finish in the time left for it")
    elif wants_exact:
        exact_note = bud.budget_note(f"the exact allocation was not attempted: one float allocation took "
                                     f"{t_alloc:.1f} s of the {budget:g} s"
                                     + (" (time kept for the deviation properties)" if reserve else ""))
    out: dict[int, Result] = {}
    samplers: dict[int, DeviationSampler] = {}
    pace = t_alloc  # seconds per deviation: one allocation, until deviation cells measured it
    measured = False  # a deviation's time was measured (pace is no longer the first allocation's)
    order = sorted(range(len(cells)), key=lambda i: cells[i][0].needs_deviation)  # instance properties first
    weights = {i: (0.0 if _premise_fails(cells[i][0], mech, env, cells[i][1])
                   else DEVIATION_WEIGHT if cells[i][0].needs_deviation else INSTANCE_WEIGHT) for i in order}
    with known_allocation(mech, env, alloc_exact) if alloc_exact is not None else contextlib.nullcontext():
        for n, i in enumerate(order):
            p, v = cells[i]
            left = bud.left(end)
            rest = sum(weights[k] for k in order[n:]) or 1.0
            share = _cell_share(left, weights[i], rest, pace, p.needs_deviation)
            if left <= 0 and weights[i]:
                r = _new_result(mech, env, p, v)
                r.verdict, r.note = Verdict.UNKNOWN, bud.budget_note(
                    f"not reached (one allocation took {t_alloc:.1f} s)")
                out[i] = record(r, mech, OUTCOMES_ONLY)
                continue
            if p.needs_deviation:
                samplers[i] = DeviationSampler(mech, env, p, v, seed)
                if not measured and left < DEVIATION_ROOM * pace:
                    # the pace is still the first (cold) allocation's, and it leaves no room; but a
                    # deviation's LPs start from that allocation's basis (same layout) and may take a
                    # fraction of it: measure one, with all the time left (the deadline stops it)
                    r = check_property(mech, env, planned[i], cfg.but(budget=left, trials=1),
                                       Allocations(alloc_exact, alloc_float, 0.0, exact_note), samplers[i])
                    measured = True
                    if not r.trials or r.verdict is Verdict.VIOLATED or samplers[i].listed:
                        out[i] = r
                        continue
                    pace = r.seconds / r.trials
                    left = bud.left(end)
                    share = _cell_share(left, weights[i], rest, pace, True)
            out[i] = r = check_property(mech, env, planned[i], cfg.but(budget=share, trials=None),
                                        Allocations(alloc_exact, alloc_float, pace, exact_note), samplers.get(i))
            if p.needs_deviation and r.trials:  # the pace of deviations so far (warm-started LPs make a
                pace, measured = r.seconds / r.trials, True  # misreport cheaper than the first allocation)
        # time the later cells did not use goes back to the deviation cells the budget stopped early
        more = [i for i in order if i in samplers and samplers[i].it is not None and not samplers[i].listed]
        while more and bud.left(end) > pace:
            i = more.pop(0)
            p, v = cells[i]
            smp = samplers[i]
            share = max(DEVIATION_ROOM * pace, bud.left(end) / (len(more) + 1))
            # the sampler carries the first pass over: the new result covers both passes
            out[i] = check_property(mech, env, planned[i], cfg.but(budget=share, trials=None),
                                    Allocations(alloc_exact, alloc_float, pace, exact_note), smp)
            if smp.trials:
                pace = smp.seconds / smp.trials
    return [out[i] for i in range(len(cells))]


def _premise_fails(prop, mech, env: Environment, variant: str) -> bool:
    """For planning the budget: the property's premise fails on ``env`` (a premise that itself fails counts
    as holding here; the cell's own check reports that failure)."""
    try:
        return bool(prop.applicable(mech, env, variant))
    except PropertyFailure:
        return False


def _cell_share(left: float, weight: float, rest: float, pace: float, deviation: bool) -> float:
    """A cell's seconds: its weight's part of the time ``left`` (``rest`` = the weights of the cells not
    yet run); a deviation cell gets room for ``DEVIATION_ROOM`` deviations at ``pace`` s each, while the
    budget has it."""
    left = max(0.0, left)
    share = left * weight / rest
    if deviation and weight and pace:
        share = max(share, min(left, DEVIATION_ROOM * pace))
    return share


def _failed(mech, env, prop, variant, failure: str) -> Result:
    """A property that cannot be judged: the user's mechanism fails on the instance (property ``runs``)."""
    r = _new_result(mech, env, prop, variant)
    r.verdict, r.note = Verdict.UNKNOWN, f"the mechanism fails on this instance ({failure})"
    return record(r, mech, OUTCOMES_ONLY)
