"""Bounded certification: a property over a whole symbolic domain of one shape.

``certify(mech, "sp", shape=Shape(2, 1, 2))`` asks z3 whether ANY environment of the domain (see
``domain.py``) and any misreport violates the property.  The query is split into cases (``domain.py``,
``encoders.py``), solved in parallel worker processes with hard time limits (``pool.py``):

* every case UNSAT, and the vacuity control (the same query with ``>=`` in place of ``>``) SAT in
  some case  ->  ``certified`` on the stated domain;
* every case UNSAT but the control UNSAT in every case  ->  ``vacuous`` (the encoding or the
  domain is empty: nothing was proved);
* some case SAT  ->  a candidate: its parameters are rounded to rationals, the property's exact
  re-check (``prop.recheck``) must confirm it, and the certificate goes to the store  ->
  ``violated``; a candidate the re-check rejects is NOT a violation (the result stays ``unknown``
  unless another case decides);
* anything else (timeouts, z3 ``unknown``, an encoding that disagrees with the implementation on a
  sample) -> ``unknown`` with the reason.  Never ``certified``.
"""
from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

import z3

from mechverify.lp import LPError
from mechverify.numbers import InstanceError, fmt_exact

from ...properties import get_property
from ...properties.base import Deviation, Report, Witness
from .domain import Domain, Shape, build_domain, case_key, dominant_cases, map_side
from .goals import ef_goal, po_goal, si_goal, sp_goal
from .pool import Job, default_jobs, run_jobs, split_jobs, to_smt2
from .specs import NOT_COVERED, Spec, get_spec
from .symbolic import SymEnv, is_sym, to_fraction_value
from .validate import random_env, validate_spec

__all__ = ["CertifyResult", "certify", "SUPPORTED", "rationalisations", "substitute_env"]

#: property -> variants certify handles
SUPPORTED = {"sp": ("demand",), "ef": ("placement-aware", "literal"), "si": ("per-server-split", "external"),
             "po": ("fractional",)}


@dataclass
class CertifyResult:
    status: str  # 'certified' | 'violated' | 'vacuous' | 'unknown'
    domain: dict
    seconds: float
    reason: str = ""
    counterexample_path: Optional[str] = None
    mechanism: str = ""
    property: str = ""
    variant: str = ""
    certificate: Any = None
    cases: int = 0
    cases_pruned: int = 0
    control: str = ""
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"mechanism": self.mechanism, "property": self.property, "variant": self.variant,
                "status": self.status, "domain": self.domain, "seconds": round(self.seconds, 3),
                "reason": self.reason, "counterexample": self.counterexample_path, "cases": self.cases,
                "cases_pruned": self.cases_pruned, "control": self.control,
                "details": {k: v for k, v in self.details.items() if k != "case_log"}}


# ---------------------------------------------------------------------- values -> concrete data
def substitute_env(senv: SymEnv, values: dict, params: dict):
    """The concrete ``Environment`` for parameter values (entries may be expressions of parameters)."""
    subs = [(params[n], z3.RealVal(v)) for n, v in values.items() if n in params]

    def ev(v):
        if not is_sym(v):
            return v
        return to_fraction_value(z3.simplify(z3.substitute(v, *subs)) if subs else z3.simplify(v))

    from mechverify.model import Environment
    return Environment(
        resources=senv.resources, servers=senv.servers,
        capacity=tuple(tuple(ev(v) for v in row) for row in senv.capacity), users=senv.users,
        demand=tuple(tuple(ev(v) for v in row) for row in senv.demand), external=senv.external,
        external_capacity=tuple(ev(v) for v in senv.external_capacity),
        external_demand=tuple(tuple(ev(v) for v in row) for row in senv.external_demand),
        weight=tuple(senv.weight), eligible=tuple(senv.eligible), tasks=tuple(senv.tasks)), ev


def rationalisations(values: dict, algebraic: Sequence[str]) -> list[dict]:
    """Candidate rational parameter vectors, simplest first, the model's own values last."""
    out, seen = [], set()
    for den in (1, 2, 4, 10, 100, 10 ** 3, 10 ** 4, 10 ** 6, 10 ** 9, 10 ** 12):
        cand = {}
        for n, v in values.items():
            r = v.limit_denominator(den)
            if v > 0 and r <= 0:
                r = Fraction(1, den) if Fraction(1, den) < v * 2 else v
            cand[n] = r
        key = tuple(sorted(cand.items()))
        if key not in seen:
            seen.add(key)
            out.append(cand)
    key = tuple(sorted(values.items()))
    if key not in seen:
        out.append(dict(values))
    return out


def confirm(mech, prop, variant: str, dom: Domain, values: dict, algebraic: Sequence[str], users: tuple,
            store_dir: Optional[str], provenance: dict):
    """Round a SAT model to rationals and run the property's exact re-check; store what survives.
    Returns ``(certificate, path, tried)``."""
    tried = 0
    for cand in rationalisations(values, algebraic):
        tried += 1
        try:
            env, ev = substitute_env(dom.truth, cand, dom.params)
            dev = None
            if prop.name == "sp":
                md, me = dom.misreport
                dev = Deviation("misreport", (Report(users[0], demand=tuple(ev(v) for v in md),
                                                     external_demand=tuple(ev(v) for v in me) if me else None),))
            w = Witness(prop.name, variant, mech.name, env, dev, None, users)
            cert = prop.recheck(mech, w)
        except (InstanceError, LPError, ZeroDivisionError, ValueError, ArithmeticError):
            continue
        if cert is not None:
            path = None
            if store_dir:
                from ...claims import claims_for
                from ...store import persist
                path = persist(cert, mech, provenance=provenance, root=store_dir, minimise=False,
                               claims=claims_for(mech, prop.name, variant)).path
            return cert, path, tried
    return None, None, tried


# ---------------------------------------------------------------------- query assembly
def _targets(prop: str, J: int) -> list[int]:
    return {"sp": [0], "ef": [0, 1], "si": [0], "po": list(range(J))}[prop]


def _fixed_users(prop: str) -> int:
    return 2 if prop == "ef" else 1


def build_query(spec: Spec, prop: str, variant: str, shape: Shape, case, strict: bool,
                assume: Optional[Callable] = None, margin: Fraction = Fraction(0), sides: str = "both"):
    """Constraints of one case (``case = (dom, side cases...)``); ``sides`` = 'both' | 'T' | 'D'
    (the single-side pre-check used to prune impossible cases)."""
    dom_case, *side_cases = case
    dom = build_domain(shape, spec.normalisation, dom_case, misreport=(prop == "sp"))
    ctx = dom.ctx
    if assume is not None:
        for c in assume(dom):
            ctx.add(c)
    if prop == "sp":
        cT, cD = side_cases
        # the goal grows with the deviated total and shrinks with the truthful one (Lemma L5)
        aT = spec.encode(ctx, dom.truth, cT, "T", need="lower") if sides in ("both", "T") else None
        aD = spec.encode(ctx, dom.deviated, cD, "D", need="upper") if sides in ("both", "D") else None
        if sides == "both":
            sp_goal(ctx, dom.truth, dom.deviated, aD, 0, aT.X[0], strict, margin)
    else:
        (cT,) = side_cases
        aT = spec.encode(ctx, dom.truth, cT, "T", need="exact" if prop == "ef" else "lower")
        if sides == "both":
            if prop == "ef":
                ef_goal(ctx, dom.truth, aT, 0, 1, variant, strict)
            elif prop == "si":
                si_goal(ctx, dom.truth, aT, 0, strict)
            elif prop == "po":
                po_goal(ctx, dom.truth, aT, strict)
    return dom, ctx


def enumerate_cases(spec: Spec, prop: str, shape: Shape, deadline: Optional[float] = None) -> list:
    """``(dom, side cases...)`` representatives, likely-feasible ones first."""
    J = shape.users
    probe = build_domain(shape, spec.normalisation, None, misreport=(prop == "sp"))
    targets = _targets(prop, J)
    sides = [probe.truth] + ([probe.deviated] if prop == "sp" else [])
    side_lists = [spec.cases(s, targets) for s in sides]
    doms = [None]
    if spec.normalisation == "dominant" and all(len(sl) == 1 for sl in side_lists):
        doms = dominant_cases(shape, misreport=(prop == "sp"))
    fixed = _fixed_users(prop)
    perms = [tuple(range(fixed)) + p for p in itertools.permutations(range(fixed, J))]
    out, seen = [], set()
    for d in doms:
        if deadline is not None:
            _check_budget(deadline, "enumerating the cases")
        for combo in itertools.product(*side_lists):
            if len(perms) > 1 and any(c is not None for c in combo):
                imgs = [tuple(map_side(c, p, spec.family) for c in combo) for p in perms]
                combo = min(imgs, key=case_key)
            key = case_key((d,) + tuple(combo))
            if key not in seen:
                seen.add(key)
                out.append((d,) + tuple(combo))
    return out


def _describe_case(case) -> str:
    return repr(case)


# ---------------------------------------------------------------------- certify
class _Budget(Exception):
    """The time budget ran out while the queries were being built (in this process)."""


def _check_budget(deadline: float, what: str) -> None:
    if time.monotonic() > deadline:
        raise _Budget(f"time budget exhausted while {what}")


def certify(mech, prop_name: str = "sp", variant: Optional[str] = None, shape: Shape = Shape(),
            timeout: float = 600.0, jobs: Optional[int] = None, store_dir: Optional[str] = None,
            assume: Optional[Callable[[Domain], list]] = None, crosscheck: int = 2, seed: int = 0,
            prune: bool = True, split: int = 256, method: str = "auto") -> CertifyResult:
    """Certify ``prop_name`` for ``mech`` on the whole domain of ``shape`` (see the module docstring).

    ``timeout`` is the wall-clock budget for everything (seconds); ``jobs`` worker processes
    (default: CPU count); ``store_dir`` receives confirmed counterexamples (``None``: not stored);
    ``assume(domain) -> constraints`` narrows the domain (stated in ``details``); ``split`` caps the
    number of sub-queries each case is split into on its disjunctions (``pool.split_disjunctions``).
    ``method``: ``"encoding"`` (the mechanism's full encoding), ``"reduction"`` (SP / EF of a
    common-level mechanism via Lemma L7 / L8, ``reduction.py``; no verdict when L7's premise fails) or
    ``"auto"`` (the reduction first, the full encoding when it does not decide)."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    if isinstance(mech, str):
        from mechanisms import get
        mech = get(mech)
    prop = get_property(prop_name)
    variant = prop.variant_of(variant)
    res = CertifyResult("unknown", {}, 0.0, mechanism=mech.name, property=prop.name, variant=variant)

    def done(status: str, reason: str = "") -> CertifyResult:
        res.status, res.reason = status, reason
        res.seconds = time.monotonic() - t0
        return res

    try:
        return _certify(mech, prop, variant, shape, timeout, jobs, store_dir, assume, crosscheck, seed, prune,
                        split, method, deadline, res, done)
    except _Budget as exc:
        return done("unknown", f"{exc}; not certified")


def _certify(mech, prop, variant, shape, timeout, jobs, store_dir, assume, crosscheck, seed, prune, split, method,
             deadline, res, done) -> CertifyResult:

    spec = get_spec(mech.name)
    if spec is None:
        return done("unknown", NOT_COVERED.get(mech.name, f"{mech.name}: no symbolic encoding"))
    if prop.name not in SUPPORTED or variant not in SUPPORTED[prop.name]:
        return done("unknown", f"certify handles {', '.join(f'{p}/{v}' for p, vs in SUPPORTED.items() for v in vs)}; "
                               f"not {prop.name}/{variant}")
    st = mech.setting
    if st.single_server and shape.servers != 1:
        raise InstanceError(f"--servers: {mech.name} is defined for one server (got {shape.servers})")
    if shape.external and not st.external:
        raise InstanceError(f"--external: {mech.name} is defined without external resources")
    if variant == "external" and not shape.external:
        return done("unknown", "si/external needs --external >= 1")
    if prop.name == "ef" and shape.users < 2:
        return done("unknown", "ef needs 2 users")
    probe = build_domain(shape, spec.normalisation, None, misreport=(prop.name == "sp"))
    res.domain = dict(probe.description)
    if assume is not None:
        res.domain["assumptions"] = "extra constraints given by the caller"
    if spec.requires_unbounded:
        res.domain["users"] += " (the encoding needs it)"
    res.details["encoding"] = f"{spec.family}: {spec.description}"
    n_workers = default_jobs() if jobs is None else jobs
    # 1. the encoding must reproduce the implementation on sample points of the domain
    rng = random.Random(seed)
    for _ in range(crosscheck):
        env = random_env(shape, rng)
        try:
            why = validate_spec(mech, env, spec, timeout=max(1.0, min(30.0, deadline - time.monotonic())))
        except (InstanceError, LPError) as exc:
            why = f"implementation error: {exc}"
        if why:
            res.details["crosscheck_env"] = env.to_dict()
            return done("unknown", f"encoding cross-check failed (not certified): {why}")
    res.details["crosscheck"] = f"encoding reproduces the implementation on {crosscheck} random instance(s)"
    # 2. SP / EF of a common-level mechanism: Lemmas L7 / L8 reduce the question to one inequality
    if method not in ("auto", "encoding", "reduction"):
        raise ValueError(f"method: 'auto', 'encoding' or 'reduction' (got {method!r})")
    if method != "encoding":
        from .reduction import reduced, reducible
        lemma = {"sp": "L7", "ef": "L8"}.get(prop.name)
        if lemma and reducible(spec):
            red = reduced(spec, prop.name, shape, n_workers, deadline, timeout, split)
            st_red, note, model = red.status, red.note, red.model
            res.details["reduction"] = f"{st_red}: {note}"
            if st_red == "certified":
                res.control = "sat (equal reports meet the reduced query with equality)"
                res.details["method"] = red.method
                res.details["queries"] = red.queries
                return done("certified", note)
            if st_red == "sat" and prop.name == "ef":  # L8 is an equivalence: a candidate violation
                dom, values, algebraic = model
                cert, path, _ = confirm(mech, prop, variant, dom, values, algebraic, (0, 1), store_dir,
                                        {"kind": "z3-certify", "shape": shape.as_dict(), "method": "Lemma L8",
                                         "z3": z3.get_version_string()})
                if cert is not None:
                    res.certificate, res.counterexample_path = cert, path
                    res.details["method"] = red.method
                    return done("violated", cert.summary)
            if method == "reduction":
                return done("unknown" if st_red != "vacuous" else "vacuous",
                            f"Lemma {lemma} reduction: {note}; not certified")
        elif method == "reduction":
            return done("unknown", f"Lemmas L7/L8 cover SP and EF of the common-level mechanisms (drf, drfh, c-drfh, "
                                   f"tsf, cdrf, tsf-er, tsf-er-maxmin, drf-er), not {mech.name} {prop.name}")
    res.details["method"] = "full encoding"
    # 3. cases, pruned by single-side feasibility
    cases = enumerate_cases(spec, prop.name, shape, deadline)
    res.cases = len(cases)
    log: list = []
    res.details["case_log"] = log
    if prune and len(cases) > 1 and any(c is not None for case in cases for c in case[1:]):
        dead: set = set()
        side_names = ["T", "D"] if prop.name == "sp" else ["T"]
        pre = {}
        for case in cases:
            _check_budget(deadline, "building the pruning queries")
            for si, name in enumerate(side_names):
                k = (case[0], si, case_key(case[1 + si]))
                if k in pre:
                    continue
                full = list(case)
                dom, ctx = build_query(spec, prop.name, variant, shape, tuple(full), True, assume, sides=name)
                pre[k] = Job(k, to_smt2(ctx.cons), (), timeout=min(60.0, max(1.0, timeout / 20)))
        for r in run_jobs(list(pre.values()), n_workers, deadline):
            if r.status == "unsat":
                dead.add(r.key)
        before = len(cases)
        cases = [c for c in cases
                 if not any((c[0], si, case_key(c[1 + si])) in dead for si in range(len(side_names)))]
        res.cases_pruned = before - len(cases)
        if not cases:
            return done("vacuous", "every case is infeasible on its own (the encoding admits no allocation)")
    # 4. the main queries
    users = (0, 1) if prop.name == "ef" else ((0,) if prop.name in ("sp", "si") else ())
    names_of = {}
    jobs_list = []
    for idx, case in enumerate(cases):
        _check_budget(deadline, f"building the queries ({idx} of {len(cases)} cases built)")
        dom, ctx = build_query(spec, prop.name, variant, shape, case, True, assume)
        names_of[idx] = dom
        jobs_list.extend(split_jobs(idx, ctx.cons, list(dom.params), timeout, split))
    res.details["queries"] = len(jobs_list)
    unknown, rejected = [], []
    violated = None
    gen = run_jobs(jobs_list, n_workers, deadline)
    try:
        for r in gen:
            idx = r.key[0]
            log.append((_describe_case(cases[idx]), r.key[1], r.status, round(r.seconds, 3), r.reason))
            if r.status == "unknown":
                unknown.append((idx, r.reason))
            elif r.status == "sat":
                prov = {"kind": "z3-certify", "shape": shape.as_dict(), "case": _describe_case(cases[idx]),
                        "z3": z3.get_version_string()}
                cert, path, tried = confirm(mech, prop, variant, names_of[idx], r.values, r.algebraic, users,
                                            store_dir, prov)
                if cert is not None:
                    violated = (cert, path, idx)
                    break
                if idx not in rejected:
                    rejected.append(idx)
    finally:
        gen.close()
    if violated is not None:
        cert, path, key = violated
        res.certificate, res.counterexample_path = cert, path
        res.details["case"] = _describe_case(cases[key])
        return done("violated", cert.summary)
    if rejected:
        # retry the rejected cases asking for a robust margin, so the rounded point keeps the violation
        for margin in (Fraction(1, 10), Fraction(1, 1000)):
            jl = []
            for key in rejected:
                dom, ctx = build_query(spec, prop.name, variant, shape, cases[key], True, assume, margin=margin) \
                    if prop.name == "sp" else build_query(spec, prop.name, variant, shape, cases[key], True, assume)
                names_of[(key, margin)] = dom
                jl.extend(split_jobs((key, margin), ctx.cons, list(dom.params), timeout, split))
            for r in run_jobs(jl, n_workers, deadline):
                if r.status == "sat":
                    key = r.key[0]
                    cert, path, _ = confirm(mech, prop, variant, names_of[key], r.values, r.algebraic, users,
                                            store_dir, {"kind": "z3-certify", "shape": shape.as_dict(),
                                                        "case": _describe_case(cases[key[0]]),
                                                        "margin": fmt_exact(margin), "z3": z3.get_version_string()})
                    if cert is not None:
                        res.certificate, res.counterexample_path = cert, path
                        res.details["case"] = _describe_case(cases[key[0]])
                        return done("violated", cert.summary)
            if prop.name != "sp":
                break
        return done("unknown", f"z3 found {len(rejected)} candidate(s) that the exact re-check of the "
                               f"implementation did not confirm (the encoding admits an allocation the "
                               f"implementation does not return, or rounding lost the violation); not certified")
    if unknown:
        reasons = sorted({why for _, why in unknown})
        return done("unknown", f"{len(unknown)} of {len(jobs_list)} queries ({len({k for k, _ in unknown})} of "
                               f"{len(cases)} case(s)) undecided ({'; '.join(reasons)}); not certified")
    # 5. vacuity control: the same query with >= must be satisfiable somewhere
    ctl = []
    for idx, case in enumerate(cases):
        _check_budget(deadline, "building the vacuity controls")
        dom, ctx = build_query(spec, prop.name, variant, shape, case, False, assume)
        ctl.extend(split_jobs(idx, ctx.cons, (), timeout, split))
    ctl_unknown = 0
    gen = run_jobs(ctl, n_workers, deadline)
    try:
        for r in gen:
            if r.status == "sat":
                res.control = f"sat (case {_describe_case(cases[r.key[0]])}, split {r.key[1]}, {r.seconds:.2f} s)"
                break
            if r.status == "unknown":
                ctl_unknown += 1
    finally:
        gen.close()
    if res.control:
        return done("certified", f"all {len(cases)} case(s) ({len(jobs_list)} queries) unsat; "
                                 f"vacuity control {res.control}")
    if ctl_unknown:
        return done("unknown", f"main query unsat, but the vacuity control is undecided in {ctl_unknown} case(s) "
                               f"and unsat elsewhere: not certified")
    res.control = "unsat in every case"
    return done("vacuous", "the query is unsat but so is its vacuity control (>= in place of >): the domain "
                           "or the encoding is empty, nothing was proved")
