"""Bounded certification: a property over a whole symbolic domain of one shape (:func:`certify`).
Cases are split (``domain.py``, ``encoders.py``) and solved in worker processes with hard time limits
(``pool.py``).  ``certified`` needs every case UNSAT and a SAT vacuity control; a SAT model is
``violated`` only once the property's exact re-check confirms it; otherwise ``vacuous`` or
``unknown`` with the reason, never ``certified`` (docs/z3.md, "Verdicts").
"""
from __future__ import annotations

import itertools
import math
import random
import time
from fractions import Fraction
from typing import Callable, Optional

from mechverify.lp import LPError
from mechverify.numbers import InstanceError, fmt_exact

from ...properties import PROPERTIES, get_property
from ...properties import budget as bud
from ...results import Result, Verdict
from .domain import MAX_VARIABLES, Domain, Shape, build_domain, case_key, dominant_cases, map_side
from .goals import GoalQuery, Z3Goal, goal_of
from .outcome import Attempt, check_budget, confirm
from .pool import Job, budget_cut, default_jobs, first_sat, run_jobs, split_jobs, to_smt2
from .solvers import SolverStatus
from .second import Ledger, settle
from .specs import Spec, encoded, get_spec, not_covered
from .validate import random_env, validate_spec

__all__ = ["certify", "SUPPORTED", "build_query", "enumerate_cases", "goal"]

#: property -> variants certify handles (each property's z3 goal says: ``Z3Goal.certify_variants``)
SUPPORTED = {p.name: g.certify_variants for p in PROPERTIES.values()
             if (g := goal_of(p)) is not None and g.certify_variants}


# ---------------------------------------------------------------------- query assembly
def goal(prop) -> Z3Goal:
    """The z3 goal of ``prop`` (a :class:`Z3Goal`, a property or its name); ``ValueError`` if it has none."""
    if isinstance(prop, Z3Goal):
        return prop
    p = get_property(prop)
    g = goal_of(p)
    if g is None:
        raise ValueError(f"{p.name}: no z3 goal")
    return g


def build_query(spec: Spec, prop, variant: str, shape: Shape, case, strict: bool,
                assume: Optional[Callable] = None, margin: Fraction = Fraction(0), sides: str = "both"):
    """Constraints of one case (``case = (dom, side cases...)``) of ``prop``'s goal; ``sides`` = 'both' |
    'T' | 'D' (the single-side pre-check used to prune impossible cases)."""
    g = goal(prop)
    dom_case, *side_cases = case
    dom = build_domain(shape, spec.normalisation, dom_case, misreport=g.misreport)
    ctx = dom.ctx
    if assume is not None:
        for c in assume(dom):
            ctx.add(c)
    users = tuple(g.targets(shape.users))
    if g.misreport:
        cT, cD = side_cases
        # the goal grows with the deviated total and shrinks with the truthful one (Lemma L5)
        aT = spec.encode(ctx, dom.truth, cT, "T", need=g.need) if sides in ("both", "T") else None
        aD = spec.encode(ctx, dom.deviated, cD, "D", need="upper") if sides in ("both", "D") else None
        if sides == "both":
            g.formula(ctx, GoalQuery(dom.truth, aT, users, variant, strict, dom.deviated, aD, aT.X[users[0]],
                                     margin))
    else:
        (cT,) = side_cases
        aT = spec.encode(ctx, dom.truth, cT, "T", need=g.need)
        if sides == "both":
            g.formula(ctx, GoalQuery(dom.truth, aT, users, variant, strict))
    return dom, ctx


def enumerate_cases(spec: Spec, prop, shape: Shape, deadline: Optional[float] = None) -> list:
    """``(dom, side cases...)`` representatives, likely-feasible ones first.  Every loop checks
    ``deadline`` (``BudgetExhausted``, note ``budget: ...``): the symmetry reduction alone is
    ``(users - 1)!`` permutations per case, which no time budget covers beyond a dozen users."""
    g = goal(prop)
    J = shape.users
    probe = build_domain(shape, spec.normalisation, None, misreport=g.misreport)
    targets = g.targets(J)
    sides = [probe.truth] + ([probe.deviated] if g.misreport else [])
    side_lists = [spec.cases(s, targets) for s in sides]
    doms = [None]
    if spec.normalisation == "dominant" and all(len(sl) == 1 for sl in side_lists):
        doms = dominant_cases(shape, misreport=g.misreport)
    fixed = g.fixed_users
    total = len(doms) * math.prod(len(sl) for sl in side_lists)
    out, seen = [], set()
    k = 0
    for d in doms:
        for combo in itertools.product(*side_lists):
            check_budget(deadline, f"enumerating the cases ({k} of {total} done)")
            k += 1
            if J - fixed > 1 and any(_permutable(c) for c in combo):
                combo = _least_image(combo, fixed, J, spec.family, deadline, f"{k} of {total}")
            key = case_key((d,) + tuple(combo))
            if key not in seen:
                seen.add(key)
                out.append((d,) + tuple(combo))
    return out


def _permutable(case) -> bool:
    """Can a user permutation change this side case (``map_side`` leaves ``None``, names and the empty
    saturation sequence alone)?"""
    return case is not None and not isinstance(case, str) and case != ()


#: permutations between two looks at the deadline (about a millisecond of work)
_PERMS_PER_CHECK = 256


def _least_image(combo: tuple, fixed: int, J: int, family: str, deadline: Optional[float], which: str) -> tuple:
    """The least image (``case_key``) of ``combo`` under the permutations of users ``fixed..J-1``, the
    permutations generated lazily (never held in memory: 98! for 100 users) and the deadline checked
    every :data:`_PERMS_PER_CHECK` of them."""
    best, best_key = None, None
    n = math.factorial(J - fixed)
    for i, p in enumerate(itertools.permutations(range(fixed, J))):
        if i % _PERMS_PER_CHECK == 0:
            check_budget(deadline, f"reducing case {which} by symmetry (permutation {i} of {n})")
        perm = tuple(range(fixed)) + p
        img = tuple(map_side(c, perm, family) for c in combo)
        key = case_key(img)
        if best_key is None or key < best_key:
            best, best_key = img, key
    return best


# ---------------------------------------------------------------------- certify
def certify(mech, prop_name: str, variant: Optional[str] = None, shape: Shape = Shape(),
            timeout: float = 600.0, jobs: Optional[int] = None, assume: Optional[Callable[[Domain], list]] = None,
            crosscheck: int = 2, seed: int = 0, prune: bool = True, split: int = 256,
            method: str = "auto", second: bool = True, proofs: bool = False, keep_queries: bool = False) -> Result:
    """Certify ``prop_name`` for ``mech`` on the whole domain of ``shape`` (see the module docstring).

    ``timeout`` is the wall-clock budget for everything (seconds); ``jobs`` worker processes
    (default: CPU count); ``assume(domain) -> constraints`` narrows the domain (stated in ``domain``);
    ``split`` caps the number of sub-queries each case is split into on its disjunctions
    (``pool.split_disjunctions``).  ``method``: ``"encoding"`` (the mechanism's full encoding),
    ``"reduction"`` (SP / EF of a common-level mechanism via Lemma L7 / L8, ``reduction.py``; no
    verdict when L7's premise fails) or ``"auto"`` (the reduction first, the full encoding when it
    does not decide).  ``second``: a certified verdict is re-checked by cvc5 on the same queries
    (``second.py``; ``False`` only to measure what that costs); ``proofs``: cvc5 also returns a proof of each
    UNSAT query in linear real arithmetic; ``keep_queries``: ``details["ledger"]`` keeps the queries
    (``verifier.artifacts.smt_export.export`` writes them).

    The result's ``verdict`` is certified | violated | vacuous | unknown, ``note`` the reason,
    ``domain`` the certified domain; a violation carries its ``certificate`` and, in
    ``details["provenance"]``, what the store should record (nothing is stored here).  ``details`` also
    holds ``cases``, ``cases_pruned``, ``control`` (the vacuity control's outcome), ``method``,
    ``queries`` and the ``case_log``."""
    a = Attempt(mech, prop_name, variant, timeout)
    a.result.details.update(cases=0, cases_pruned=0, control="")
    n_workers = default_jobs() if jobs is None else jobs
    title = f"mechverify certify {a.mech.name} --property {a.prop.name} --variant {a.variant}: {shape.describe()}"
    return settle(a, lambda: _certify(a, shape, timeout, jobs, assume, crosscheck, seed, prune, split, method),
                  n_workers, title, second, proofs, keep_queries, cut="; not certified")


def _certify(a: Attempt, shape, timeout, jobs, assume, crosscheck, seed, prune, split, method) -> Result:
    mech, prop, variant, res = a.mech, a.prop, a.variant, a.result
    spec = get_spec(mech)
    if spec is None:
        return a.done(Verdict.UNKNOWN, not_covered(mech))
    g = goal_of(prop)
    if g is None or variant not in g.certify_variants:
        return a.done(Verdict.UNKNOWN, f"certify handles "
                                 f"{', '.join(f'{p}/{v}' for p, vs in SUPPORTED.items() for v in vs)}; "
                                 f"not {prop.name}/{variant}")
    st = mech.setting
    if st.single_server and shape.servers != 1:
        raise InstanceError(f"--servers: {mech.name} is defined for one server (got {shape.servers})")
    if shape.external and not st.external:
        raise InstanceError(f"--external: {mech.name} is defined without external resources")
    hints = prop.hints_for(variant)  # the property's own premises on the shape
    if shape.external < hints.min_external:
        return a.done(Verdict.UNKNOWN, f"{prop.name}/{variant} needs --external >= {hints.min_external}")
    if shape.users < hints.min_users:
        return a.done(Verdict.UNKNOWN, f"{prop.name} needs {hints.min_users} users")
    if method not in ("auto", "encoding", "reduction"):
        raise ValueError(f"method: 'auto', 'encoding' or 'reduction' (got {method!r})")
    size = shape.variables()
    if size > MAX_VARIABLES:
        return a.done(Verdict.UNKNOWN, f"too large: {shape.describe()} needs at least {size:,} z3 variables (at most "
                                 f"{MAX_VARIABLES:,} per question)")
    probe = build_domain(shape, spec.normalisation, None, misreport=g.misreport)
    res.domain = dict(probe.description)
    if assume is not None:
        res.domain["assumptions"] = "extra constraints given by the caller"
    if spec.requires_unbounded:
        res.domain["users"] += " (the encoding needs it)"
    res.details["encoding"] = f"{spec.family}: {spec.description}"
    n_workers = default_jobs() if jobs is None else jobs
    # 1. the encoding must reproduce the implementation on sample points of the domain
    why = _crosscheck(a, spec, shape, crosscheck, seed)
    if why:
        return a.done(Verdict.UNKNOWN, f"encoding cross-check failed (not certified): {why}")
    # 2. SP / EF of a common-level mechanism: Lemmas L7 / L8 reduce the question to one inequality
    if method != "encoding":
        decided = _by_reduction(a, g, spec, shape, n_workers, timeout, split, method)
        if decided is not None:
            return decided
    res.details["method"] = "full encoding"
    return _full_encoding(a, g, spec, shape, n_workers, timeout, assume, prune, split)


def _crosscheck(a: Attempt, spec: Spec, shape: Shape, crosscheck: int, seed: int) -> str:
    """Why the encoding does not reproduce the implementation on ``crosscheck`` random points of the
    domain ("" if it does)."""
    rng = random.Random(seed)
    for _ in range(crosscheck):
        env = random_env(shape, rng)
        try:
            why = validate_spec(a.mech, env, spec, timeout=max(1.0, min(30.0, a.deadline - time.monotonic())),
                                deadline=a.deadline)
        except (InstanceError, LPError) as exc:
            why = f"implementation error: {exc}"
        if why:
            a.result.details["crosscheck_env"] = env.to_dict()
            return why
    a.result.details["crosscheck"] = f"encoding reproduces the implementation on {crosscheck} random instance(s)"
    return ""


def _reductions() -> str:
    """``Lemmas L7/L8 cover SP and EF of the common-level mechanisms (...)``: from the facets."""
    from .reduction import reducible

    props = [(p, g) for p in PROPERTIES.values() if (g := goal_of(p)) is not None and g.reduction is not None]
    mechs = [name for name, spec in encoded().items() if reducible(spec)]
    return (f"Lemmas {'/'.join(g.reduction.lemma for _, g in props)} cover "
            f"{' and '.join(p.name.upper() for p, _ in props)} of the common-level mechanisms ({', '.join(mechs)})")


def _by_reduction(a: Attempt, g: Z3Goal, spec: Spec, shape: Shape, n_workers: int, timeout: float, split: int,
                  method: str) -> Optional[Result]:
    """The goal's lemma (``reduction.py``: L7 / L8): the verdict, or ``None`` to go on with the full encoding."""
    from .reduction import reduced, reducible

    mech, prop, res = a.mech, a.prop, a.result
    if not (g.reduction is not None and reducible(spec)):
        if method == "reduction":
            return a.done(Verdict.UNKNOWN, f"{_reductions()}, not {mech.name} {prop.name}")
        return None
    lemma = g.reduction.lemma
    red = reduced(spec, g, shape, n_workers, a.deadline, timeout, split)
    res.details["reduction"] = f"{red.status}: {red.note}"
    if red.status is Verdict.CERTIFIED:
        a.ledger.extend(red.ledger)  # the lemma's queries (nothing was recorded before them)
        res.details["control"] = "sat (equal reports meet the reduced query with equality)"
        res.details["method"] = red.method
        res.details["queries"] = red.queries
        return a.done(Verdict.CERTIFIED, red.note)
    if red.status == "sat" and g.reduction.equivalence:  # e.g. L8: a SAT model is a candidate violation
        dom, values, algebraic = red.model
        cert = confirm(mech, prop, a.variant, dom, values, algebraic, g.named)
        if cert is not None:
            res.details["method"] = red.method
            return a.violated(cert, {"kind": "z3-certify", "shape": shape.as_dict(), "method": f"Lemma {lemma}"})
    if method == "reduction":
        note = f"Lemma {lemma} reduction: {red.note}; not certified"
        if red.status is Verdict.UNKNOWN and bud.expired(a.deadline):
            note = bud.budget_note(note)
        return a.done(Verdict.UNKNOWN if red.status is not Verdict.VACUOUS else Verdict.VACUOUS, note)
    return None


#: the ledger's stage of the full encoding's queries
STAGE = "full encoding"


def _prune(spec: Spec, g: Z3Goal, variant: str, shape: Shape, cases: list, assume, timeout: float,
           n_workers: int, deadline: float, ledger: Optional[Ledger] = None) -> list:
    """The cases whose every side is feasible on its own (single-side pre-checks); the pre-checks that
    pruned a case go to ``ledger`` (the verdict rests on them)."""
    dead: set = set()
    side_names = ["T", "D"] if g.misreport else ["T"]
    pre = {}
    for case in cases:
        check_budget(deadline, "building the pruning queries")
        for si, name in enumerate(side_names):
            k = (case[0], si, case_key(case[1 + si]))
            if k in pre:
                continue
            dom, ctx = build_query(spec, g, variant, shape, tuple(case), True, assume, sides=name)
            pre[k] = Job(k, to_smt2(ctx.cons), (), timeout=min(60.0, max(1.0, timeout / 20)))
    proved = []
    for r in run_jobs(list(pre.values()), n_workers, deadline):
        if r.status == "unsat":
            dead.add(r.key)
            proved.append((pre[r.key], r))
    if ledger is not None:
        ledger.planned(STAGE, "pruned", pre.values())
        ledger.proved(STAGE, "pruned", proved)
    return [c for c in cases if not any((c[0], si, case_key(c[1 + si])) in dead for si in range(len(side_names)))]


def _full_encoding(a: Attempt, g: Z3Goal, spec: Spec, shape: Shape, n_workers: int, timeout: float, assume,
                   prune: bool, split: int) -> Result:
    """Steps 3-5: the cases (pruned), the main queries (a confirmed SAT model is the violation), the
    robust retry of rejected candidates, and the vacuity control."""
    mech, prop, variant, res, deadline = a.mech, a.prop, a.variant, a.result, a.deadline
    details = res.details
    cases = enumerate_cases(spec, g, shape, deadline)
    details["cases"] = len(cases)
    log: list = []
    details["case_log"] = log
    if prune and len(cases) > 1 and any(c is not None for case in cases for c in case[1:]):
        before = len(cases)
        cases = _prune(spec, g, variant, shape, cases, assume, timeout, n_workers, deadline, a.ledger)
        details["cases_pruned"] = before - len(cases)
        if not cases:
            return a.done(Verdict.VACUOUS, "every case is infeasible on its own (the encoding admits no allocation)")
    users = g.named
    names_of = {}
    jobs_list = []
    for idx, case in enumerate(cases):
        check_budget(deadline, f"building the queries ({idx} of {len(cases)} cases built)")
        dom, ctx = build_query(spec, g, variant, shape, case, True, assume)
        names_of[idx] = dom
        jobs_list.extend(split_jobs(idx, ctx.cons, list(dom.params), timeout, split))
    details["queries"] = len(jobs_list)
    unknown, rejected = [], []
    a.ledger.planned(STAGE, "query", jobs_list)
    by_key, done = {j.key: j for j in jobs_list}, []
    gen = run_jobs(jobs_list, n_workers, deadline)
    try:
        for r in gen:
            done.append((by_key[r.key], r))
            idx = r.key[0]
            log.append((repr(cases[idx]), r.key[1], r.status, round(r.seconds, 3), r.reason))
            if r.status == SolverStatus.UNKNOWN:
                unknown.append((idx, r.reason))
            elif r.status == "sat":
                cert = confirm(mech, prop, variant, names_of[idx], r.values, r.algebraic, users)
                if cert is not None:
                    details["case"] = repr(cases[idx])
                    return a.violated(cert, {"kind": "z3-certify", "shape": shape.as_dict(), "case": repr(cases[idx])})
                if idx not in rejected:
                    rejected.append(idx)
    finally:
        gen.close()
    if rejected:
        return _retry_rejected(a, g, spec, shape, cases, rejected, n_workers, timeout, assume, split, users)
    if unknown:
        reasons = sorted({why for _, why in unknown})
        note = (f"{len(unknown)} of {len(jobs_list)} queries ({len({k for k, _ in unknown})} of "
                f"{len(cases)} case(s)) undecided ({'; '.join(reasons)}); not certified")
        return a.done(Verdict.UNKNOWN, bud.budget_note(note) if budget_cut(reasons, deadline) else note)
    a.ledger.proved(STAGE, "query", done)
    a.ledger.start_ahead()  # cvc5 starts on the queries while the vacuity control is built
    return _control(a, g, spec, shape, cases, len(jobs_list), n_workers, timeout, assume, split)


def _retry_rejected(a: Attempt, g: Z3Goal, spec: Spec, shape: Shape, cases: list, rejected: list, n_workers: int,
                    timeout: float, assume, split: int, users: tuple) -> Result:
    """Retry the cases whose candidates the exact re-check rejected, asking for a robust margin (a goal that
    takes one, ``Z3Goal.robust``: SP) so the rounded point keeps the violation; ``unknown`` if that does not
    confirm one either."""
    mech, prop, variant = a.mech, a.prop, a.variant
    names_of = {}
    for margin in (Fraction(1, 10), Fraction(1, 1000)):
        jl = []
        for key in rejected:
            check_budget(a.deadline, "building the robust retries of rejected candidates")
            dom, ctx = build_query(spec, g, variant, shape, cases[key], True, assume,
                                   margin=margin if g.robust else Fraction(0))
            names_of[(key, margin)] = dom
            jl.extend(split_jobs((key, margin), ctx.cons, list(dom.params), timeout, split))
        for r in run_jobs(jl, n_workers, a.deadline):
            if r.status == "sat":
                key = r.key[0]
                cert = confirm(mech, prop, variant, names_of[key], r.values, r.algebraic, users)
                if cert is not None:
                    a.result.details["case"] = repr(cases[key[0]])
                    return a.violated(cert, {"kind": "z3-certify", "shape": shape.as_dict(),
                                             "case": repr(cases[key[0]]), "margin": fmt_exact(margin)})
        if not g.robust:
            break
    return a.done(Verdict.UNKNOWN, f"z3 found {len(rejected)} candidate(s) that the exact re-check of the "
                             f"implementation did not confirm (the encoding admits an allocation the "
                             f"implementation does not return, or rounding lost the violation); not certified")


def _control(a: Attempt, g: Z3Goal, spec: Spec, shape: Shape, cases: list, n_queries: int, n_workers: int,
             timeout: float, assume, split: int) -> Result:
    """Step 5, the vacuity control: the same query with ``>=`` must be satisfiable in some case."""
    details = a.result.details
    ctl = []
    for idx, case in enumerate(cases):
        check_budget(a.deadline, "building the vacuity controls")
        dom, ctx = build_query(spec, g, a.variant, shape, case, False, assume)
        ctl.extend(split_jobs(idx, ctx.cons, (), timeout, split))
    a.ledger.planned(STAGE, "control", ctl)
    r, ctl_reasons = first_sat(ctl, n_workers, a.deadline)
    ctl_unknown = len(ctl_reasons)
    if r is not None:
        a.ledger.proved(STAGE, "control", [(next(j for j in ctl if j.key == r.key), r)])
        details["control"] = f"sat (case {cases[r.key[0]]!r}, split {r.key[1]}, {r.seconds:.2f} s)"
    if details["control"]:
        return a.done(Verdict.CERTIFIED, f"all {len(cases)} case(s) ({n_queries} queries) unsat; "
                                   f"vacuity control {details['control']}")
    if ctl_unknown:
        note = (f"main query unsat, but the vacuity control is undecided in {ctl_unknown} case(s) "
                f"and unsat elsewhere: not certified")
        return a.done(Verdict.UNKNOWN, bud.budget_note(note) if budget_cut(ctl_reasons, a.deadline) else note)
    details["control"] = "unsat in every case"
    return a.done(Verdict.VACUOUS, "the query is unsat but so is its vacuity control (>= in place of >): the domain "
                             "or the encoding is empty, nothing was proved")
