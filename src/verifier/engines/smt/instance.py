"""Per-instance queries (:func:`instance_query`): one concrete environment, one exact question --
SP with a user's report symbolic over every support pattern (or eligible set), EF / SI / PO of the
allocation encoded exactly.  SAT models go through the property's exact re-check; UNSAT needs a SAT
vacuity control (docs/z3.md, "Per-instance queries").
"""
from __future__ import annotations

import itertools
import time
from fractions import Fraction
from typing import Callable, Optional, Sequence

import z3

from mechverify.deadline import budget_note
from mechverify.lp import LPError
from mechverify.model import Environment
from mechverify.utility import utility

from ...properties import PROPERTIES
from ...properties.base import READINGS, Deviation, Report, Witness
from ...results import Result, Verdict
from .goals import GoalQuery, Z3Goal, goal_of
from .outcome import Attempt, check_budget, evaluator, first_confirmed, rationalisations
from .domain import MAX_VARIABLES
from .pool import Job, JobResult, budget_cut, default_jobs, first_sat, run_jobs, to_smt2
from .second import settle
from .solvers import SolverStatus
from .specs import get_spec, not_covered
from .symbolic import Ctx, SymEnv
from .validate import validate_spec

__all__ = ["instance_query", "query_size", "MAX_PATTERNS", "MAX_VARIABLES"]

MAX_PATTERNS = 64

#: the ledger's stage of a per-instance question (``second.Ledger``)
STAGE = "instance"

# MAX_VARIABLES (``domain.py``): a per-instance question whose queries would have more variables (estimated
# by :func:`query_size`) is answered ``unknown`` at once instead of being built


def _patterns(env: Environment, i: int) -> tuple[list, str]:
    """Support patterns of user ``i``'s misreport: (compute support, external support) pairs."""
    dc = [r for r in range(env.n_resources) if env.demand[i][r] > 0]
    de = [k for k in range(env.n_external) if env.external_demand[i][k] > 0]
    zc = [r for r in range(env.n_resources) if r not in dc]
    ze = [k for k in range(env.n_external) if k not in de]
    free = [("r", r) for r in zc] + [("k", k) for k in ze]
    note = ""
    if 2 ** len(free) > MAX_PATTERNS:
        free = free[:6]
        note = f" (only the first 6 of the entries {i} does not demand may become positive)"
    out = []
    for bits in itertools.product([0, 1], repeat=len(free)):
        c = set(dc) | {idx for (kind, idx), b in zip(free, bits) if b and kind == "r"}
        e = set(de) | {idx for (kind, idx), b in zip(free, bits) if b and kind == "k"}
        out.append((tuple(sorted(c)), tuple(sorted(e))))
    return out, note


def _sym_report(env: Environment, i: int, pattern, normalise: bool, tag: str):
    """Symbolic report vectors for one support pattern (positive entries; the first = 1 if normalised):
    ``(demand, external demand, params, constraints)``."""
    pc, pe = pattern
    params: dict = {}
    cons: list = []
    first = [normalise]  # the first positive entry is still to be fixed to 1

    def entries(names: Sequence[str], support, label: str) -> list:
        out = []
        for r, name in enumerate(names):
            if r not in support:
                out.append(Fraction(0))
            elif first[0]:
                out.append(Fraction(1))
                first[0] = False
            else:
                v = z3.Real(f"{tag}{label}[{name}]")
                params[str(v)] = v
                cons.append(v > 0)
                out.append(v)
        return out

    dem = entries(env.resources, pc, "")
    ext = entries(env.external, pe, "_er")
    return dem, ext, params, cons


def instance_query(mech, env: Environment, prop_name: str, variant: Optional[str] = None,
                   users: Optional[Sequence[int]] = None, timeout: float = 60.0, jobs: Optional[int] = None,
                   joint: bool = False, validate: bool = True, second: bool = True, proofs: bool = False,
                   keep_queries: bool = False) -> Result:
    """One exact question about ``env`` (see the module docstring).  ``users``: deviators (SP) / envious
    users (EF) / users (SI); default all.

    The result's ``verdict`` is certified (this instance, the stated space) | violated | vacuous |
    unknown, ``note`` the reason; ``details`` holds ``space`` (what was quantified over) and
    ``queries``; a violation carries its ``certificate`` and, in ``details["provenance"]``, what the
    store should record (nothing is stored here).  ``second``, ``proofs``, ``keep_queries``: as for
    :func:`~verifier.engines.smt.certify.certify` (a certified answer is re-checked by cvc5)."""
    a = Attempt(mech, prop_name, variant, timeout)
    a.result.details.update(space="", queries=0)
    mech, prop = a.mech, a.prop
    spec = get_spec(mech)
    if spec is None:
        return a.done(Verdict.UNKNOWN, not_covered(mech))
    why = prop.variant_possible(mech.setting, a.variant) if a.variant in READINGS else None
    if why:  # e.g. po/whole-task of a divisible mechanism: that reading is not this mechanism's
        return a.done(Verdict.UNKNOWN, f"not applicable: {why}")
    mech.setting.check(env, mech.name)
    senv = SymEnv.from_env(env)
    why = spec.covers(senv)
    if why:
        return a.done(Verdict.UNKNOWN, f"not covered: {why}")
    users = list(range(env.n_users)) if users is None else list(users)
    goal = goal_of(prop)
    if goal is None:
        handled = ", ".join(p.name for p in PROPERTIES.values() if goal_of(p) is not None)
        return a.done(Verdict.UNKNOWN, f"per-instance z3 queries handle {handled}; not {prop.name}")
    kind = prop.hints_for(a.variant).deviation  # a misreport goal: which part of the report is symbolic
    size = query_size(spec, env, senv, goal, kind, users, joint)
    if size > MAX_VARIABLES:
        return a.done(Verdict.UNKNOWN, f"too large for an exact query ({size if size < 10 ** 9 else f'{size:.1e}'} "
                                 f"variables)")
    n_workers = default_jobs() if jobs is None else jobs
    title = f"mechverify query {mech.name} --property {prop.name} --variant {a.variant}: {env.describe()}"
    return settle(a, lambda: _answer(a, goal, spec, env, senv, users, n_workers, joint, validate, timeout),
                  n_workers, title, second, proofs, keep_queries)


def _answer(a: Attempt, goal: Z3Goal, spec, env: Environment, senv: SymEnv, users: list, n_workers: int,
            joint: bool, validate: bool, timeout: float) -> Result:
    """:func:`instance_query` once the question is known to be small enough: cross-check, then ask."""
    mech = a.mech
    if validate:
        why = validate_spec(mech, env, spec, timeout=max(1.0, min(30.0, timeout / 4)), deadline=a.deadline)
        if why:
            return a.done(Verdict.UNKNOWN, f"the encoding does not reproduce the implementation here: {why}")
    if goal.misreport:
        return _misreport(a, goal, spec, env, senv, users, n_workers, joint)
    return _instance_prop(a, goal, spec, env, senv, users, n_workers)


def _items(goal: Z3Goal, env: Environment, users: Sequence[int]) -> list[tuple]:
    """One query per item: the users the goal names, in order (a pair: every ordered pair with the first in
    ``users``; one user: each of ``users``; every user: one query)."""
    if goal.users is None:
        return [()]
    if len(goal.users) == 1:
        return [(j,) for j in users]
    return [(j, k) for j in users for k in range(env.n_users) if k != j]


def query_size(spec, env: Environment, senv: SymEnv, goal: Z3Goal, kind: str, users: Sequence[int],
               joint: bool = False) -> int:
    """Estimated number of variables of a per-instance question, without building anything: the
    number of queries (and of the cross-check's encodings) times the columns and rows of chi(E).
    ``kind``: the deviation of a misreport goal (``Hints.deviation``)."""
    J, S = env.n_users, env.n_servers
    per_query = sum(1 for j in range(J) for s in range(S) if senv.usable(j, s, spec.placement)) \
        + S * env.n_resources + env.n_external + sum(1 for t in env.tasks if t is not None)
    n = spec.case_count(senv, range(J))  # the cross-check (validate_spec)
    if goal.misreport:
        for i in users:
            reports = len(_patterns(env, i)[0])
            if kind == "eligible":
                reports = (2 ** S - 2) * (reports if joint else 1)
            elif kind != "demand":
                reports = 0  # not encoded
            n += reports * spec.case_count(senv, [i])
    else:
        for it in _items(goal, env, users):
            n += 2 * spec.case_count(senv, list(it) if it else range(J))
    return n * per_query


def _decide(a: Attempt, jobs_list: list, control: list, n_workers: int,
            recheck: Callable[[JobResult], object], rejected_note: Callable[[int], str], vacuous_note: str,
            certified_note: str) -> Result:
    """Run the queries: the first SAT model that ``recheck`` turns into an exact certificate is the
    violation; SAT models it rejects, or undecided queries, leave ``unknown``; all UNSAT needs a SAT
    vacuity ``control`` for ``certified`` (else ``vacuous``)."""
    a.result.details["queries"] = len(jobs_list)
    unknown, rejected = [], 0
    a.ledger.planned(STAGE, "query", jobs_list)
    by_key, done = {j.key: j for j in jobs_list}, []
    gen = run_jobs(jobs_list, n_workers, a.deadline)
    try:
        for r in gen:
            done.append((by_key[r.key], r))
            if r.status == SolverStatus.UNKNOWN:
                unknown.append(r.reason)
            elif r.status == "sat":
                cert = recheck(r)
                if cert is not None:
                    return a.violated(cert, {"kind": "z3-instance"})
                rejected += 1
    finally:
        gen.close()
    if rejected:
        return a.done(Verdict.UNKNOWN, rejected_note(rejected))
    if unknown:
        note = f"{len(unknown)} of {len(jobs_list)} queries undecided ({'; '.join(sorted(set(unknown)))})"
        return a.done(Verdict.UNKNOWN, budget_note(note) if budget_cut(unknown, a.deadline) else note)
    a.ledger.proved(STAGE, "query", done)
    a.ledger.start_ahead()  # cvc5 starts on the queries while the vacuity control runs
    a.ledger.planned(STAGE, "control", control)
    r, ctl_unknown = first_sat(control, n_workers, a.deadline)
    ok = r is not None
    if ok:
        a.ledger.proved(STAGE, "control", [(next(j for j in control if j.key == r.key), r)])
        return a.done(Verdict.CERTIFIED, certified_note)
    if ctl_unknown:  # an undecided control proves nothing either way: not "vacuous"
        note = (f"every query unsat, but the vacuity control is undecided in {len(ctl_unknown)} of {len(control)} "
                f"queries ({'; '.join(sorted(set(ctl_unknown)))}) and unsat elsewhere: not certified")
        return a.done(Verdict.UNKNOWN, budget_note(note) if budget_cut(ctl_unknown, a.deadline) else note)
    return a.done(Verdict.VACUOUS, vacuous_note)


def _misreport(a: Attempt, goal: Z3Goal, spec, env, senv, users, n_workers, joint) -> Result:
    """A misreport goal (SP): one query per deviator, support pattern (or eligible set) and case of the
    deviated side; the variant's deviation kind (``Hints.deviation``) says which report is symbolic."""
    mech, prop, variant, deadline = a.mech, a.prop, a.variant, a.deadline
    kind = prop.hints_for(variant).deviation
    if kind == "tasks":
        return a.done(Verdict.UNKNOWN, f"{prop.name}/{variant}: not encoded (task bounds break scale invariance; use check)")
    if kind not in ("demand", "eligible"):
        return a.done(Verdict.UNKNOWN, f"{prop.name}/{variant}: not encoded (a {kind} deviation)")
    try:
        truth_run = mech(env, exact=True)
    except LPError as exc:
        return a.done(Verdict.UNKNOWN, f"truthful allocation failed: {exc}")
    exact_truth = truth_run.exact
    if not exact_truth and any(len(spec.cases(senv, [i])) != 1 for i in users):
        return a.done(Verdict.UNKNOWN, "the truthful allocation is not exact and its encoding needs a case split")
    jobs_list, control, meta, spaces = [], [], {}, []

    def add_query(i, dem, ext, params, cons, E, pat, strict, bucket):
        dev = senv.with_user(i, dem, ext, eligible=E, params=params)
        if spec.covers(dev):
            return
        for case in spec.cases(dev, [i]):
            check_budget(deadline, f"building the queries ({len(jobs_list) + len(control)} built)")
            ctx = Ctx()
            ctx.add(*cons)
            if exact_truth:
                uT = utility(env, truth_run, i)
            else:
                uT = spec.encode(ctx, senv, spec.cases(senv, [i])[0], "T", need=goal.need).X[i]
            aD = spec.encode(ctx, dev, case, "D", need="upper")
            goal.formula(ctx, GoalQuery(senv, None, (i,), variant, strict, dev, aD, uT))
            key = (i, E, pat, repr(case), strict)
            meta[key] = (dem, ext, params, E, pat)
            bucket.append(Job(key, to_smt2(ctx.cons), list(params), timeout=max(0.1, deadline - time.monotonic())))

    for i in users:
        normalise = spec.scale_invariant and env.tasks[i] is None
        pats, note = _patterns(env, i)
        truth_pat = (tuple(r for r in range(env.n_resources) if env.demand[i][r] > 0),
                     tuple(k for k in range(env.n_external) if env.external_demand[i][k] > 0))
        if kind == "demand":
            for pat in pats:
                dem, ext, params, cons = _sym_report(env, i, pat, normalise, f"mis{i}")
                add_query(i, dem, ext, params, cons, env.eligible[i], pat, True, jobs_list)
                if pat == truth_pat:  # the same query with >=: satisfied by the truthful report
                    add_query(i, dem, ext, params, cons, env.eligible[i], pat, False, control)
            spaces.append(f"{env.users[i]}: any demand report d' >= 0 (every support pattern{note}; d' > 0 "
                          f"where the true demand is > 0" + (", normalised by Lemma L1" if normalise else "") + ")")
        else:
            S = env.n_servers
            eligibles = [frozenset(c) for n in range(1, S + 1) for c in itertools.combinations(range(S), n)
                         if frozenset(c) != env.eligible[i]]
            for E in eligibles:
                for pat in (pats if joint else [None]):
                    if pat is None:
                        add_query(i, list(env.demand[i]), list(env.external_demand[i]), {}, [], E, None, True,
                                  jobs_list)
                    else:
                        dem, ext, params, cons = _sym_report(env, i, pat, normalise, f"mis{i}")
                        add_query(i, dem, ext, params, cons, E, pat, True, jobs_list)
            # control: the truthful report (outside this space) meets >=
            add_query(i, list(env.demand[i]), list(env.external_demand[i]), {}, [], env.eligible[i], None, False,
                      control)
            spaces.append(f"{env.users[i]}: any eligible set E' != E (nonempty)" +
                          (" with any demand report" if joint else ", demands truthful"))
    a.result.details["space"] = "; ".join(spaces)

    def recheck(r: JobResult):
        i = r.key[0]
        dem, ext, params, E, pat = meta[r.key]

        def one(cand):
            ev = evaluator(cand, params)
            nd, ne = tuple(ev(v) for v in dem), tuple(ev(v) for v in ext)
            rep = Report(i, demand=nd if pat is not None else None,
                         external_demand=(ne if env.n_external else None) if pat is not None else None,
                         eligible=E if E != env.eligible[i] else None)
            return prop.recheck(mech, Witness(prop.name, variant, mech.name, env, Deviation("misreport", (rep,)),
                                              None, (i,)))
        return first_confirmed(rationalisations(r.values, r.algebraic), one)

    return _decide(a, jobs_list, control, n_workers, recheck,
                   lambda n: f"{n} z3 candidate(s) did not survive the exact re-check: no verdict",
                   "the vacuity control (the truthful report meets >=) is not satisfiable: "
                   "the encoding is inconsistent here, nothing was proved",
                   "no misreport in the stated space gives more than the truthful utility on this instance "
                   f"({len(jobs_list)} queries unsat; vacuity control sat)")


def _instance_prop(a: Attempt, goal: Z3Goal, spec, env, senv, users, n_workers) -> Result:
    """EF / SI / PO: the allocation encoded exactly (every case), one query per item (pair / user / once)."""
    mech, prop, variant, deadline = a.mech, a.prop, a.variant, a.deadline
    J = env.n_users
    hints = prop.hints_for(variant)  # the variant's premises (e.g. si/external: an external resource)
    if env.n_external < hints.min_external:
        return a.done(Verdict.UNKNOWN, "not applicable: no external resources")
    if hints.require_bounds and not env.has_bounds:
        return a.done(Verdict.UNKNOWN, "not applicable: no task bounds")
    items = _items(goal, env, users)
    relaxed = goal.control == "relaxed"
    jobs_list, ctl = [], []
    for it in items:
        targets = list(it) if it else list(range(J))
        for case in spec.cases(senv, targets):
            for strict in (True, False):
                check_budget(deadline, f"building the queries ({len(jobs_list) + len(ctl)} built)")
                ctx = Ctx()
                alloc = spec.encode(ctx, senv, case, "T", need=goal.need)
                # the control (``Z3Goal.control``): PO with >= (y = x meets it); EF/SI: the encoding alone,
                # i.e. the goal's negation (on ONE instance EF/SI usually hold strictly, so their >= form
                # may be unsat)
                if strict or relaxed:
                    goal.formula(ctx, GoalQuery(senv, alloc, tuple(it), variant, strict))
                job = Job((it, repr(case), strict), to_smt2(ctx.cons), (), timeout=max(0.1, deadline - time.monotonic()))
                (jobs_list if strict else ctl).append(job)
    a.result.details["space"] = goal.space + " (every allocation the mechanism's definition allows)"
    control = "the same query with >= is sat" if relaxed else "the allocation's encoding alone is sat"
    return _decide(a, jobs_list, ctl, n_workers,
                   lambda r: first_confirmed([r.key[0]], lambda it: prop.recheck(
                       mech, Witness(prop.name, variant, mech.name, env, None, None, tuple(it)))),
                   lambda n: f"z3 says violated for {n} item(s) but the exact re-check does not confirm "
                             f"it (an allocation the definition allows but the implementation does not return?)",
                   "the vacuity control is unsat (" + ("the same query with >= in place of >" if relaxed
                                                      else "the allocation's encoding alone") + "): nothing was proved",
                   f"no {prop.name} violation on this instance ({len(jobs_list)} queries unsat; "
                   f"vacuity control: {control})")
