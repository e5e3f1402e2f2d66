"""Bounded certificates over traces (docs/z3.md, "Bounded certificates over traces"): a property over
executions proved by z3 -- and re-checked by cvc5 -- for EVERY execution of a fixed shape of trace, the numbers
symbolic.

The traces.  ``n`` users ``u0 .. u{n-1}``, all present from time 0 to the end; one divisible resource on one
server of capacity ``C``; user ``i`` has weight ``w_i`` and per-task demand 1 (the papers' unit), and its
per-round demand ``d_{i,t}`` is its task count in round ``t = 1..T``.  Round 1 is allocated at step 0 (t = 0);
round ``t >= 2`` at time ``t - 1``: every user's ``demand`` event (its task count ``d_{i,t}``), then a ``round``
event; the execution ends at ``T``.  Demands change only at rounds (``rounds_only``).  Every number is
symbolic: every rational ``C > 0``, ``w_i > 0``, ``d_{i,t} >= 0``.

The encoding of the mechanism.  A mechanism whose time facet allocates per round names its round rule
(``TimeSpec.round_z3``, one of :data:`ROUND_RULES`): the constraints that make ``a_1..a_n`` its allocation of
one round (tasks) from that round's REPORTED task counts.  Between two rounds the mechanism holds what it
allocated (``TimeSpec.rounds``): the steps between are the zero-length ``demand`` steps at the round's instant,
so user ``i``'s true utility over quantum ``t`` is ``1 x min(a_{i,t}, d_{i,t})`` and its cumulative utility the
sum over the rounds.  With demands changing at rounds only, the allocation of round ``t`` depends on round
``t``'s reports alone: the rounds are independent, and the encoding still has ``T`` rounds of variables for
each run (truthful and misreporting), because the claim is about the trace.  A round whose reports are the
same in both runs shares its allocation variables (the rule is a function of the reports: its encoding has a
unique solution, so the two copies would be equal anyway).

The goal (the property's ``z3_trace`` facet, :data:`GOALS`): ``u0`` misreports its task count ``d'`` at ONE
round ``s`` (one case per ``s``; ``misreports="all"``: at every round, each ``d'_t`` symbolic, which covers
every set of rounds) and every other report is truthful; the query asks for its cumulative true utility to
RISE.  ``certified`` needs every query UNSAT for z3 and cvc5 and the vacuity control (``>=`` for ``>``) SAT;
a SAT model is rounded to rationals, turned into an :class:`~mechverify.execution.Execution` and a
:class:`~mechverify.trace_deviations.TraceMisreport`, and only the property's EXACT replay (``recheck``) makes it a
counterexample.  The plumbing is ``certify``'s: ``outcome.Attempt``, ``second.settle`` (cvc5 on every
obligation), ``pool`` (worker processes, hard limits, the deadline), the export (``smt_export``).
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

import z3

from mechverify.numbers import fmt_exact

from ...properties import budget as bud
from ...results import Result, Verdict
from .outcome import Attempt, check_budget, first_confirmed, rationalisations
from .pool import Job, budget_cut, default_jobs, first_sat, run_jobs, split_jobs, to_smt2
from .second import settle
from .solvers import SolverStatus

__all__ = ["TraceShape", "RoundRule", "ROUND_RULES", "round_rule", "GOALS", "certify_trace", "trace_query",
           "execution_of_model", "MAX_USERS", "MAX_ROUNDS", "MISREPORTS", "STAGE"]

#: the largest trace shapes a bounded certificate is asked for (each round adds a copy of the round rule)
MAX_USERS, MAX_ROUNDS = 4, 4
#: where u0 may misreport: at ONE round (a case per round), or at every round (each report symbolic)
MISREPORTS = ("one", "all")
#: the ledger's stage of these queries (the export's ``stage``)
STAGE = "bounded trace"


@dataclass(frozen=True)
class TraceShape:
    """``users`` (2..:data:`MAX_USERS`), ``rounds`` (1..:data:`MAX_ROUNDS`) and where u0 misreports."""

    users: int = 2
    rounds: int = 1
    misreports: str = "one"

    def __post_init__(self) -> None:
        if not isinstance(self.users, int) or not 2 <= self.users <= MAX_USERS:
            raise ValueError(f"--users: a bounded trace certificate takes 2..{MAX_USERS} users (got {self.users!r})")
        if not isinstance(self.rounds, int) or not 1 <= self.rounds <= MAX_ROUNDS:
            raise ValueError(f"--rounds: a bounded trace certificate takes 1..{MAX_ROUNDS} rounds (got "
                             f"{self.rounds!r})")
        if self.misreports not in MISREPORTS:
            raise ValueError(f"--misreports: one of {', '.join(MISREPORTS)} (got {self.misreports!r})")

    def as_dict(self) -> dict:
        return {"users": self.users, "rounds": self.rounds, "misreports": self.misreports}

    def describe(self) -> str:
        where = "one misreport step" if self.misreports == "one" else "misreports at any rounds"
        return f"{self.users} users x {self.rounds} round{'s' if self.rounds > 1 else ''}, {where}"


# ---------------------------------------------------------------------- round rules
@dataclass(frozen=True)
class RoundRule:
    """How one round of a mechanism is encoded: ``encode(cons, reports, weights, capacity, tag)`` appends to
    ``cons`` the constraints that make the returned terms the tasks each user is allocated (per-task demand 1)
    from the round's reported task counts; ``description``: one line for the certificate (how the encoding is
    exact, why its solution is unique)."""

    encode: Callable[[list, Sequence[Any], Sequence[Any], Any, str], list]
    description: str


#: round rule name -> :class:`RoundRule` (a time facet names one: ``TimeSpec.round_z3``)
ROUND_RULES: dict[str, RoundRule] = {}


def round_rule(name: str, description: str):
    """Decorator: register ``encode`` as the round rule ``name`` (a test registers its planted mutant's)."""
    def add(encode):
        ROUND_RULES[name] = RoundRule(encode, description)
        return encode
    return add


def _sum(terms: Sequence[Any]):
    """``terms`` added up (one term is itself: a one-argument ``+`` is not SMT-LIB2 that cvc5 reads)."""
    terms = list(terms)
    return terms[0] if len(terms) == 1 else z3.Sum(terms)


def _min_of(cons: list, v, a, b) -> None:
    """``v = min(a, b)`` exactly: below both, equal to one."""
    cons += [v <= a, v <= b, z3.Or(v >= a, v >= b)]


@round_rule("weighted-maxmin",
            "weighted max-min (water-filling) of one round: a level L >= 0 with a_i = min(r_i, w_i L) for every "
            "user and sum_i a_i = min(C, sum_i r_i), each min written exactly as (below both, equal to one); the "
            "level is existential and the a_i are unique: f(L) = sum_i min(r_i, w_i L) is continuous and "
            "non-decreasing, so the levels where f(L) = min(C, sum r) form an interval on which every term is "
            "constant (a sum of non-decreasing terms that is constant has constant terms)")
def _weighted_maxmin(cons: list, reports, weights, capacity, tag: str) -> list:
    L = z3.Real(f"L_{tag}")
    cons.append(L >= 0)
    a = []
    for i, (r, w) in enumerate(zip(reports, weights)):
        ai = z3.Real(f"a_{tag}_{i}")
        _min_of(cons, ai, r, w * L)
        a.append(ai)
    total = _sum(a)
    _min_of(cons, total, capacity, _sum(reports))
    return a


# ---------------------------------------------------------------------- goals
def _cumulative_gain(cons: list, truthful: Any, misreporting: Any, strict: bool) -> None:
    """The deviator's cumulative true utility with the misreport exceeds (``>=`` for the control) the truthful."""
    cons.append(misreporting > truthful if strict else misreporting >= truthful)


#: a property's ``z3_trace`` facet -> (the goal's constraint, one line saying what it asks)
GOALS: dict[str, tuple[Callable, str]] = {
    "cumulative-gain": (_cumulative_gain, "u0's cumulative true utility sum_t min(a_{0,t}, d_{0,t}) with the "
                                          "misreport is <= the truthful one"),
}


# ---------------------------------------------------------------------- the query
@dataclass
class TraceQuery:
    """One case: its constraints, the parameters (name -> z3 term) and the rounds u0 misreports."""

    cons: list
    params: dict
    rounds: tuple


def _params(shape: TraceShape, lie: tuple) -> dict:
    n, T = shape.users, shape.rounds
    p = {"C": z3.Real("C")}
    for i in range(n):
        p[f"w_{i}"] = z3.Real(f"w_{i}")
    for t in range(1, T + 1):
        for i in range(n):
            p[f"d_{i}_{t}"] = z3.Real(f"d_{i}_{t}")
    for t in lie:
        p[f"dp_{t}"] = z3.Real(f"dp_{t}")
    return p


def trace_query(rule: RoundRule, goal: Callable, shape: TraceShape, lie: tuple, strict: bool = True,
                box: bool = False) -> TraceQuery:
    """The constraints of the case where u0 misreports at the rounds ``lie``: the domain, both runs (T rounds
    each, the round rule per round, the allocation held over its quantum of length 1), the cumulative true
    utilities and the goal.  ``box``: numbers within the instance format's limits (a SAT model's retry, so the
    rounded counterexample is a valid execution; never used for a certificate)."""
    n, T = shape.users, shape.rounds
    p = _params(shape, lie)
    C, w = p["C"], [p[f"w_{i}"] for i in range(n)]
    cons: list = [C > 0] + [wi > 0 for wi in w]
    for name, v in p.items():
        if name.startswith("d"):
            cons.append(v >= 0)
    if box:
        lo, hi = Fraction(1, 100), 100
        cons += [C >= lo, C <= hi] + [x for wi in w for x in (wi >= lo, wi <= hi)]
        for name, v in p.items():
            if name.startswith("d"):
                cons += [v <= hi, z3.Or(v == 0, v >= lo)]
    utility = {"T": [], "D": []}
    for t in range(1, T + 1):
        true = [p[f"d_{i}_{t}"] for i in range(n)]
        aT = rule.encode(cons, true, w, C, f"T{t}")
        if t in lie:
            aD = rule.encode(cons, [p[f"dp_{t}"]] + true[1:], w, C, f"D{t}")
        else:  # the same reports in both runs: the same (unique) allocation
            aD = aT
        for run, a in (("T", aT), ("D", aD)):
            if run == "D" and a is aT:
                utility["D"].append(utility["T"][-1])
                continue
            u = z3.Real(f"u_{run}{t}")
            _min_of(cons, u, a[0], true[0])  # its TRUE utility of the quantum (length 1): min(tasks, true tasks)
            utility[run].append(u)
    goal(cons, _sum(utility["T"]), _sum(utility["D"]), strict)
    return TraceQuery(cons, p, lie)


def _cases(shape: TraceShape) -> list:
    T = shape.rounds
    return [(s,) for s in range(1, T + 1)] if shape.misreports == "one" else [tuple(range(1, T + 1))]


# ---------------------------------------------------------------------- model -> execution
def execution_of_model(shape: TraceShape, values: dict, lie: tuple):
    """``(Execution, TraceMisreport)`` of a model's numbers (names as :func:`trace_query` declares them),
    validated by the execution format's parser (``InstanceError`` when a number is out of its limits)."""
    from mechverify.execution import parse_execution
    from mechverify.trace_deviations import Statement, TraceMisreport

    n, T = shape.users, shape.rounds
    get = lambda k: Fraction(values.get(k, 0))  # noqa: E731 - a parameter the model left free: 0
    users = [{"name": f"u{i}", "demand": ["1"], "weight": fmt_exact(get(f"w_{i}")),
              "tasks": fmt_exact(get(f"d_{i}_1"))} for i in range(n)]
    events, where = [], {1: "users[0]"}
    for t in range(2, T + 1):
        for i in range(n):
            if i == 0:
                where[t] = f"events[{len(events)}]"
            events.append({"t": t - 1, "kind": "demand", "user": f"u{i}", "tasks": fmt_exact(get(f"d_{i}_{t}"))})
        events.append({"t": t - 1, "kind": "round"})
    data = {"resources": ["r"], "servers": [{"name": "s", "capacity": [fmt_exact(get("C"))]}], "users": users,
            "unit": "round", "end": T, "events": events}
    ex = parse_execution(data)
    dev = TraceMisreport("u0", tuple(Statement(where[t], None, get(f"dp_{t}")) for t in lie))
    return ex, dev


def _confirm(a: Attempt, shape: TraceShape, q: TraceQuery, values: dict, algebraic: Sequence[str]):
    """The property's exact replay of the rounded model (simplest rationals first): a certificate or ``None``."""
    from ...properties.base import Witness

    def recheck(cand):
        ex, dev = execution_of_model(shape, cand, q.rounds)
        return a.prop.recheck(a.mech, Witness(a.prop.name, a.variant, a.mech.name, None, dev, None, (0,),
                                              execution=ex))
    return first_confirmed(rationalisations(values, algebraic), recheck)


# ---------------------------------------------------------------------- the cross-check
def _crosscheck(a: Attempt, rule: RoundRule, shape: TraceShape, samples: int, seed: int) -> str:
    """Why the round rule's encoding is not the implementation on ``samples`` random rounds ("" if it is): the
    mechanism runs a one-round execution exactly, and z3 must find the encoding satisfiable with these numbers
    and UNSAT with any allocation other than the implementation's."""
    from mechanisms.core.time import execute

    rng = random.Random(seed)
    for k in range(samples):
        check_budget(a.deadline, f"cross-checking the round rule ({k} of {samples} rounds)")
        C = Fraction(rng.randint(1, 12), rng.choice((1, 2, 3)))
        w = [Fraction(rng.randint(1, 4), rng.choice((1, 2))) for _ in range(shape.users)]
        d = [Fraction(rng.choice((0, 1, 2, 3, 5, 8)), rng.choice((1, 2))) for _ in range(shape.users)]
        vals = dict({"C": C, **{f"w_{i}": w[i] for i in range(shape.users)},
                     **{f"d_{i}_1": d[i] for i in range(shape.users)}})
        ex, _ = execution_of_model(TraceShape(shape.users, 1), vals, ())
        got = [row[0] for row in execute(a.mech, ex, True)[0].alloc.x]
        for want_sat, extra in ((True, lambda al: [al[i] == got[i] for i in range(shape.users)]),
                                (False, lambda al: [z3.Or([al[i] != got[i] for i in range(shape.users)])])):
            cons: list = []
            al = rule.encode(cons, [z3.RealVal(v) for v in d], [z3.RealVal(v) for v in w], z3.RealVal(C), "X")
            s = z3.Solver()
            s.set("timeout", 10_000)
            s.add(cons + extra(al))
            st = s.check()
            if (st == z3.sat) != want_sat or st == z3.unknown:
                a.result.details["crosscheck_env"] = ex.to_dict()
                return (f"on C = {fmt_exact(C)}, w = ({', '.join(map(fmt_exact, w))}), d = "
                        f"({', '.join(map(fmt_exact, d))}) the implementation allocates "
                        f"({', '.join(map(fmt_exact, got))}) and z3 says {st} to "
                        f"{'it' if want_sat else 'another allocation'}")
    a.result.details["crosscheck"] = (f"the round rule's encoding has exactly the implementation's allocation on "
                                      f"{samples} random round(s)")
    return ""


# ---------------------------------------------------------------------- certify
def _domain(shape: TraceShape, what: str) -> dict:
    n, T = shape.users, shape.rounds
    lie = ("any rational d' >= 0 in place of d_{0,s} at ONE round s (each s = 1.." + str(T) + " a case); every "
           "other report truthful") if shape.misreports == "one" else \
        "any rational d'_t >= 0 in place of d_{0,t} at every round t (a truthful d'_t included: any set of rounds)"
    return {
        "trace": (f"{n} users u0..u{n - 1} present throughout; {T} round(s) of length 1 allocated at t = 0.."
                  f"{T - 1} (step 0, then at each t every user's demand event and a round event); end {T}; "
                  "demands change at rounds only (rounds_only)"),
        "resource": "one divisible resource on one server: every rational capacity C > 0",
        "weights": "every rational w_i > 0",
        "demands": "every rational task count d_{i,t} >= 0 (a user's per-round demand; per-task demand 1)",
        "misreport": f"u0 reports {lie}",
        "claim": what,
        "held": "an allocation is held for its round (the steps between rounds last 0)",
    }


def certify_trace(mech, prop_name: str, variant: Optional[str] = None, shape: TraceShape = TraceShape(),
                  timeout: float = 120.0, jobs: Optional[int] = None, crosscheck: int = 4, seed: int = 0,
                  split: int = 1, second: bool = True, proofs: bool = False, keep_queries: bool = False) -> Result:
    """A bounded certificate of ``prop_name`` (a property whose ``z3_trace`` facet names a goal of
    :data:`GOALS`) for ``mech`` (whose time facet names a round rule, ``TimeSpec.round_z3``) over every trace of
    ``shape`` (module docstring).  Same verdicts, budget and second solver as ``certify.certify``: certified
    (every query UNSAT for z3 and cvc5, vacuity control SAT), violated (a SAT model the exact replay
    confirms), vacuous, or unknown with the reason."""
    a = Attempt(mech, prop_name, variant, timeout)
    a.result.details.update(cases=0, cases_pruned=0, control="")
    n_workers = default_jobs() if jobs is None else jobs
    title = (f"mechverify certify {a.mech.name} --property {a.prop.name} --variant {a.variant}: bounded trace, "
             f"{shape.describe()}")
    return settle(a, lambda: _certify(a, shape, n_workers, timeout, crosscheck, seed, split), n_workers, title,
                  second, proofs, keep_queries, cut="; not certified")


def _certify(a: Attempt, shape: TraceShape, n_workers: int, timeout: float, crosscheck: int, seed: int,
             split: int) -> Result:
    mech, prop, res = a.mech, a.prop, a.result
    facet = getattr(prop, "z3_trace", None)
    if facet not in GOALS:
        return a.done(Verdict.UNKNOWN, f"not covered: {prop.name} has no bounded trace goal (z3_trace); bounded "
                                       f"trace certificates cover {', '.join(GOALS)}")
    time_facet = getattr(mech, "time", None)
    rule_name = getattr(time_facet, "round_z3", "") if time_facet is not None else ""
    if not (time_facet is not None and time_facet.rounds and rule_name in ROUND_RULES):
        return a.done(Verdict.UNKNOWN, f"not covered: {mech.name} declares no round rule z3 encodes (its time "
                                       f"facet's round_z3; known: {', '.join(ROUND_RULES)})")
    rule = ROUND_RULES[rule_name]
    goal, what = GOALS[facet]
    res.domain = _domain(shape, what)
    res.details["encoding"] = f"{rule_name}: {rule.description}"
    res.details["method"] = "bounded trace encoding"
    why = _crosscheck(a, rule, shape, crosscheck, seed)
    if why:
        return a.done(Verdict.UNKNOWN, f"round rule cross-check failed (not certified): {why}")
    cases = _cases(shape)
    res.details["cases"] = len(cases)
    queries, jl = {}, []
    for lie in cases:
        check_budget(a.deadline, "building the trace queries")
        q = trace_query(rule, goal, shape, lie)
        queries[lie] = q
        jl.extend(split_jobs(lie, q.cons, list(q.params), timeout, split))
    res.details["queries"] = len(jl)
    a.ledger.planned(STAGE, "query", jl)
    by_key, done, unknown, rejected = {j.key: j for j in jl}, [], [], []
    log: list = []
    res.details["case_log"] = log
    gen = run_jobs(jl, n_workers, a.deadline)
    try:
        for r in gen:
            done.append((by_key[r.key], r))
            lie = r.key[0]
            log.append((f"misreport at round(s) {lie}", r.key[1], r.status, round(r.seconds, 3), r.reason))
            if r.status == SolverStatus.UNKNOWN:
                unknown.append(r.reason)
            elif r.status == SolverStatus.SAT:
                cert = _confirm(a, shape, queries[lie], r.values, r.algebraic)
                if cert is None:  # the rounded point left the format's limits or lost the gain: a boxed retry
                    cert = _boxed(a, rule, goal, shape, lie, n_workers, timeout)
                if cert is not None:
                    res.details["case"] = f"misreport at round(s) {lie}"
                    return a.violated(cert, {"kind": "z3-certify-trace", "trace": shape.as_dict(),
                                             "case": repr(lie)})
                rejected.append(lie)
    finally:
        gen.close()
    if rejected:
        return a.done(Verdict.UNKNOWN, f"z3 found candidate(s) in {len(set(rejected))} case(s) that the exact replay "
                                       f"of the trace did not confirm; not certified")
    if unknown:
        reasons = sorted(set(unknown))
        note = f"{len(unknown)} of {len(jl)} queries undecided ({'; '.join(reasons)}); not certified"
        return a.done(Verdict.UNKNOWN, bud.budget_note(note) if budget_cut(reasons, a.deadline) else note)
    a.ledger.proved(STAGE, "query", done)
    a.ledger.start_ahead()
    # the vacuity control: the same question with >= (e.g. the truthful report) must be satisfiable
    ctl = []
    for lie in cases:
        q = trace_query(rule, goal, shape, lie, strict=False)
        ctl.extend(split_jobs(lie, q.cons, (), timeout, split))
    a.ledger.planned(STAGE, "control", ctl)
    r, reasons = first_sat(ctl, n_workers, a.deadline)
    if r is not None:
        a.ledger.proved(STAGE, "control", [(next(j for j in ctl if j.key == r.key), r)])
        res.details["control"] = f"sat (misreport at round(s) {r.key[0]}, split {r.key[1]}, {r.seconds:.2f} s)"
        return a.done(Verdict.CERTIFIED, f"all {len(cases)} case(s) ({len(jl)} queries) unsat; vacuity control "
                                         f"{res.details['control']}")
    if reasons:
        note = "main queries unsat, but the vacuity control is undecided: not certified"
        return a.done(Verdict.UNKNOWN, bud.budget_note(note) if budget_cut(reasons, a.deadline) else note)
    res.details["control"] = "unsat in every case"
    return a.done(Verdict.VACUOUS, "the query is unsat but so is its vacuity control (>= in place of >): the "
                                   "encoding is empty, nothing was proved")


def _boxed(a: Attempt, rule: RoundRule, goal, shape: TraceShape, lie: tuple, n_workers: int, timeout: float):
    """A SAT case whose model did not replay: ask again inside the format's limits, for a model that does."""
    q = trace_query(rule, goal, shape, lie, box=True)
    left = max(1.0, min(timeout, a.deadline - time.monotonic()))
    for r in run_jobs([Job(("box", lie), to_smt2(q.cons), list(q.params), left)], n_workers, a.deadline):
        if r.status == SolverStatus.SAT:
            return _confirm(a, shape, q, r.values, r.algebraic)
    return None
