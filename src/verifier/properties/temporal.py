"""Properties over EXECUTIONS (docs/executions.md): the part of the property contract they share.

A property over executions is judged on a mechanism's whole run through an execution
(``mechanisms.core.time.execute``), not on one instance: ``over = "execution"`` is the facet the planner,
the engines and the reports read.  It offers, beside the ``Property`` interface,

* ``judge(mech, ex, variant, steps, exact, deviation=None, deviated=None)`` -> :class:`Judgement`: the
  measure over the run (and, under a deviation, over the deviated run), the failing step, the users, and a
  per-step status (``execute`` prints it);
* ``evaluate_execution(mech, ex, variant, deviation=None, exact=False)`` -> ``Evaluation`` whose candidate
  ``Witness`` carries the execution (``witness.execution``) and the failing step (``witness.step``);
* ``recheck(mech, witness)``: an EXACT replay of the execution (every allocation recomputed in rationals,
  with a fresh stepper) judged again -- the only way a candidate becomes a violation;
* ``trace_deviations(mech, ex, variant, rng)``: for a property whose deviation kind is ``"trace"`` (online
  SP; burst gaming), the misreports (resubmissions) over the trace the engines try.

It is searched only for mechanisms that step through executions (``Setting.dynamic``: a stateful mechanism,
or a one-shot one lifted as ``NAME+recompute`` / ``NAME+irrevocable``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Optional, Sequence

from mechverify.execution import Execution, Step
from mechverify.trace_deviations import Statement, TraceMisreport, TraceResubmission
from mechverify.numbers import FLOAT_REL, fmt_exact, fmt_value, is_inf

from .base import Certificate, Evaluation, Hints, Measure, Property, Witness

__all__ = ["ExecutionProperty", "Judgement", "ONE_SHOT_ONLY", "judged_at"]

#: why a property over executions is not searched for a one-shot mechanism
ONE_SHOT_ONLY = ("a one-shot mechanism: judged over executions when it steps through them (a stateful mechanism, "
                 "or lifted: NAME+recompute, NAME+irrevocable)")


@dataclass
class Judgement:
    """What a property over executions found on one run: ``measure`` (its worst value; ``None``: it does not
    apply to this execution), ``violated``, the failing ``step`` and ``users`` (names), ``per_step`` (a
    status per step: ``None`` when not judged at that step, else the step's measure), exact numbers worth
    printing (``utilities``), and one line (``summary``)."""

    measure: Any
    violated: bool
    step: Optional[int] = None
    users: tuple[str, ...] = ()
    per_step: list = field(default_factory=list)
    utilities: dict = field(default_factory=dict)
    summary: str = ""
    note: str = ""
    #: the exact margin when the measure is infinite (a ratio over a zero): the finite quantity that makes it so
    gap: Any = None




def _violates(measure: Measure, m: Any, exact: bool) -> bool:
    if m is None:
        return False
    thr = measure.threshold
    if exact:
        return m > thr if measure.direction == ">" else m < thr
    slack = FLOAT_REL * max(1.0, abs(float(thr)))  # float noise is never a candidate
    return float(m) > thr + slack if measure.direction == ">" else float(m) < thr - slack


class ExecutionProperty(Property):
    """Base class of the properties over executions (module docstring)."""

    over = "execution"
    hints = Hints(deviation="none")
    #: the goal of a bounded certificate over traces (``verifier.engines.smt.traces.GOALS``; docs/z3.md,
    #: "Bounded certificates over traces"); ``None``: z3 does not certify the property over traces
    z3_trace: Optional[str] = None

    # ------------------------------------------------------------------ planning
    def variant_possible(self, setting, variant: str) -> Optional[str]:
        if not getattr(setting, "dynamic", False):
            return ONE_SHOT_ONLY
        return self.dynamic_variant_possible(setting, variant)

    def dynamic_variant_possible(self, setting, variant: str) -> Optional[str]:
        """``None`` if ``variant`` is judged for a mechanism with this (dynamic) setting, else why not."""
        return None

    def applicable(self, mech, env, variant):
        return "judged over executions, not one instance (execute, run on a mechanism that steps through them)"

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None) -> Evaluation:
        return Evaluation(None, False, note=f"not applicable: {self.applicable(mech, env, variant)}")

    def applies_to(self, mech, ex: Execution, variant: str) -> Optional[str]:
        """``None`` if the property says something about ``ex``, else why not (e.g. no bounded user)."""
        return None

    # ------------------------------------------------------------------ the judgement
    def judge(self, mech, ex: Execution, variant: str, steps: Sequence[Step], exact: bool,
              deviation: Optional[TraceMisreport] = None, deviated: Optional[Sequence[Step]] = None) -> Judgement:
        raise NotImplementedError


    def is_violation(self, m: Any, exact: bool) -> bool:
        return _violates(self.measure, m, exact)

    def gap_of(self, m: Any) -> Fraction:
        """The exact margin of measure ``m`` past the threshold (> 0 for a violation); an infinite measure has
        none (its property gives ``Judgement.gap``)."""
        if is_inf(m):
            raise ValueError(f"{self.name}: an infinite measure needs the judgement's finite gap")
        thr = Fraction(self.measure.threshold)
        return Fraction(m) - thr if self.measure.direction == ">" else thr - Fraction(m)

    def run(self, mech, ex: Execution, exact: bool, deviation: Optional[TraceMisreport] = None) -> list[Step]:
        from mechanisms.core.time import execute

        return execute(mech, ex, exact, deviation)

    def evaluate_execution(self, mech, ex: Execution, variant: str, deviation: Optional[TraceMisreport] = None,
                           exact: bool = False, steps: Optional[Sequence[Step]] = None) -> Evaluation:
        """The measure over ``mech``'s run through ``ex`` (and a deviated run) and a candidate witness."""
        why = self.applies_to(mech, ex, variant)
        if why:
            return Evaluation(None, False, note=f"not applicable: {why}")
        steps = list(steps) if steps is not None else self.run(mech, ex, exact)
        deviated = self.run(mech, ex, exact, deviation) if deviation is not None else None
        j = self.judge(mech, ex, variant, steps, exact, deviation, deviated)
        if j.measure is None:
            return Evaluation(None, False, note=j.note or "not applicable to this execution")
        w = None
        if j.violated:
            st = steps[j.step] if j.step is not None and j.step < len(steps) else None
            env = st.env if st is not None and st.env is not None else _first_env(steps)
            users = tuple(env.users.index(u) for u in j.users if env is not None and u in env.users)
            w = Witness(self.name, variant, mech.name, env, deviation, j.measure, users, execution=ex, step=j.step)
        return Evaluation(j.measure, j.violated, w, note=j.summary)

    def recheck(self, mech, witness: Witness) -> Optional[Certificate]:
        """Replay the execution exactly (a fresh stepper, every number rational) and judge it again."""
        ex = witness.execution
        if ex is None:
            return None
        dev = witness.deviation if isinstance(witness.deviation, (TraceMisreport, TraceResubmission)) else None
        if self.hints_for(witness.variant).deviation == "trace" and dev is None:
            return None
        if self.applies_to(mech, ex, witness.variant):
            return None
        steps = self.run(mech, ex, True)
        deviated = self.run(mech, ex, True, dev) if dev is not None else None
        if any(st.alloc is not None and not st.alloc.exact for st in steps + (deviated or [])):
            if not mech.is_users:
                return None  # no exact allocation: never a violation from floats
        j = self.judge(mech, ex, witness.variant, steps, True, dev, deviated)
        if not j.violated or j.measure is None:
            return None
        st = steps[j.step] if j.step is not None and j.step < len(steps) else None
        env = st.env if st is not None and st.env is not None else _first_env(steps)
        users = tuple(env.users.index(u) for u in j.users if env is not None and u in env.users)
        w = Witness(self.name, witness.variant, mech.name, env, dev, j.measure, users, execution=ex, step=j.step)
        allocations = {}
        if st is not None and st.alloc is not None:
            allocations[f"step {st.index}"] = st.alloc
        where = f"step {j.step} (t = {fmt_value(st.t) if st is not None else '?'})" if j.step is not None else "the run"
        of = f"{ex.n_events} event{'' if ex.n_events == 1 else 's'}"
        gap = j.gap if j.gap is not None else self.gap_of(j.measure)
        return Certificate(w, gap, j.measure, allocations, dict(j.utilities),
                           summary=f"{j.summary} [{where} of {of}]" if j.summary else where)

    # ------------------------------------------------------------------ deviations over a trace
    def trace_deviations(self, mech, ex: Execution, variant: str, rng) -> Iterable[TraceMisreport]:
        """Misreports to try (online SP): none unless the variant's deviation kind is ``"trace"``."""
        if self.hints_for(variant).deviation != "trace":
            return []
        return misreports(ex, rng, counts=getattr(mech.time, "rounds", False))


def judged_at(mech, st: Step) -> bool:
    """Is step ``st`` one a per-step property judges?  Every step with users present -- for a mechanism that
    allocates per round (``TimeSpec.rounds``), step 0 and its rounds only: between rounds it holds its
    allocation by design, and its papers' per-round properties are about the rounds."""
    if st.alloc is None:
        return False
    if getattr(getattr(mech, "time", None), "rounds", False):
        return st.event is None or st.event.kind == "round"
    return True


def _first_env(steps: Sequence[Step]):
    return next((st.env for st in steps if st.env is not None), None)


def misreports(ex: Execution, rng, counts: bool = False, per_user: int = 6) -> list[TraceMisreport]:
    """Structured misreports over a trace, for every user: at ONE place it states a demand, or at ALL of them --
    one resource's demand doubled or halved, a zero demand made positive; with ``counts`` (a mechanism reading the
    per-round demand in the task count) the task count raised or lowered instead.  ``rng`` samples ``per_user`` of them."""
    out: list[TraceMisreport] = []
    specs: dict[str, dict[str, Any]] = {}
    for k, u in enumerate(ex.users):
        specs.setdefault(u.name, {})[f"users[{k}]"] = (u.demand, u.tasks)
    current: dict[str, Any] = {u.name: (u.demand, u.tasks) for u in ex.users}
    for i, e in enumerate(ex.events):
        if e.kind == "arrive":
            current[e.spec.name] = (e.spec.demand, e.spec.tasks)
            specs.setdefault(e.spec.name, {})[f"events[{i}]"] = current[e.spec.name]
        elif e.kind == "demand":
            d, t = current.get(e.user, (None, None))
            d = e.demand if e.demand is not None else d
            t = e.tasks if e.tasks != "keep" else t
            current[e.user] = (d, t)
            specs.setdefault(e.user, {})[f"events[{i}]"] = (d, t)
    for user, places in specs.items():
        cands: list[TraceMisreport] = []
        for where, (d, t) in places.items():
            stmts: list[Statement] = []
            for r in range(0 if counts else len(d)):  # a round mechanism reads the per-round demand in the count
                for f in (Fraction(2), Fraction(1, 2)):
                    if d[r] > 0:
                        stmts.append(Statement(where, tuple(v * f if q == r else v for q, v in enumerate(d))))
                if d[r] == 0:
                    stmts.append(Statement(where, tuple(max(d) or Fraction(1) if q == r else v for q, v in enumerate(d))))
            if counts and t is not None:
                stmts += [Statement(where, None, t + 1), Statement(where, None, t * 2 if t else Fraction(1))]
                if t >= 1:
                    stmts.append(Statement(where, None, t - 1))
            cands += [TraceMisreport(user, (s,)) for s in stmts]
        if len(places) > 1:  # the same lie everywhere it states a demand
            for scale in (() if counts else (Fraction(2), Fraction(1, 2))):
                for r in range(len(ex.resources)):
                    stmts = []
                    for where, (d, t) in places.items():
                        if d[r] > 0:
                            stmts.append(Statement(where, tuple(v * scale if q == r else v for q, v in enumerate(d))))
                    if stmts:
                        cands.append(TraceMisreport(user, tuple(stmts)))
            if counts:
                stmts = [Statement(where, None, t + 1) for where, (d, t) in places.items() if t is not None]
                if stmts:
                    cands.append(TraceMisreport(user, tuple(stmts)))
        rng.shuffle(cands)
        out += cands[:per_user]
    return out




def fmt(v: Any) -> str:
    return fmt_exact(v) if isinstance(v, Fraction) else fmt_value(v)
