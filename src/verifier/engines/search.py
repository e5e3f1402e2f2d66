"""The search engine: Hypothesis over (environment, deviation) inside a mechanism's setting.

A Hypothesis example is one environment with a batch of deviations of it, one per user (at most
``BATCH``; ``strategies.batches``; one example = one candidate for instance properties): the mechanism runs once
on the truthful environment and once per distinct deviation, and a *trial* is one evaluated
(environment, deviation) candidate.  Candidates are keyed one by one (a repeated one is skipped, a
certified one fails again on replay), so shrinking works on the example as before.

Per (mechanism, property, variant):

1. **Hypothesis** (``@given`` run programmatically, ``database=None``, a fixed ``@seed`` per chunk,
   ``deadline=None``, phases generate + target + shrink).  Every candidate is evaluated in floats
   (``prop.evaluate``); ``hypothesis.target`` steers toward the worst measure; a float violation is sent
   to ``prop.recheck`` (exact) and ONLY a certificate counts as a failure, so Hypothesis shrinks toward a
   small *certified* counterexample.  Chunks of growing size run with seeds derived from ``seed`` until
   the time budget or the trial limit is reached.
2. **Misreport optimiser** (variants whose ``Hints.optimizer`` is set: SP, GSP; ``optimize.py``), seeded with the environments Hypothesis found
   closest to a violation, for the rest of the budget.

Determinism: for a given ``seed`` the sequence of candidates is fixed; the time budget only decides how
far along it the search gets.  Budgets are wall-clock seconds (``properties.budget``): ``budget`` bounds
the search phases, and an absolute ``deadline`` (the command's) bounds everything, shrinking included.
With ``max_trials`` (and a generous budget) a search is reproducible
exactly (the regression tests use that).  A candidate that raises (solver trouble, a mechanism bug) is
counted in ``errors`` and never becomes a verdict.
"""
from __future__ import annotations

import contextlib
import gc
import json
import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from hypothesis import HealthCheck, Phase, given, seed as hseed, settings, target, Verbosity
from hypothesis.errors import Unsatisfiable

from mechanisms.core.registry import SettingError
from mechverify.model import Environment

from ..properties import budget as bud
from ..properties.base import Certificate, Property, PropertyFailure
from ..properties.runs import failure_text
from . import strategies as strat
from .strategies.domain import property_of
from ..results import Verdict

__all__ = ["SearchResult", "SearchSpec", "search", "env_key", "measure_float", "BATCH", "PER_USER"]

CHUNKS = (100, 200, 400, 800, 1600, 3200)
POOL_SIZE = 12
# Deviations per drawn environment (deviation properties; see ``trial``): PER_USER per user, at most BATCH.
# One per user measured best: time to the first known violation is no worse than with one deviation per
# environment (better on PS-DSF SP), while trials per second rise; 8 per environment gave ~2x more trials
# per second but found the known SP violations up to 2x later (the rare part is the environment).
BATCH = 8
PER_USER = 1

# Budgets are wall-clock seconds (a budget is a promise about when the command ends); see properties.budget.
clock = bud.now


class _Abort(BaseException):
    """Stops a Hypothesis run at once (a BaseException is not a test failure: no shrinking, no replay)."""


@dataclass
class SearchResult:
    """What one search established: the verdict, the certificate if any, and the counts behind it."""

    mechanism: str
    property: str
    variant: str
    verdict: str  # 'violated' | 'not_refuted' | 'unknown'
    certificate: Optional[Certificate] = None
    trials: int = 0  # candidates on which the property was evaluated
    generated: int = 0  # candidates drawn (incl. premise failures and invalid deviations)
    inapplicable: int = 0
    invalid: int = 0
    errors: int = 0
    first_error: str = ""
    outside: int = 0  # instances the mechanism rejected with SettingError (narrower domain than its Setting)
    first_outside: str = ""
    rejected: int = 0  # float candidates that failed the exact re-check
    seconds: float = 0.0
    time_to_first: Optional[float] = None  # seconds (the budget's clock) to the first exact certificate
    wall_to_first: Optional[float] = None  # the same in wall-clock seconds
    wall_seconds: float = 0.0
    shrink_seconds: float = 0.0
    worst: Any = None  # worst measure seen (float evaluation)
    engine: str = ""  # 'hypothesis' | 'optimizer'
    note: str = ""
    domain: dict = field(default_factory=dict)
    pool: list = field(default_factory=list)  # [(score, order, env)] seeds for the optimiser
    optimizer_trials: int = 0
    property_failure: str = ""  # the property's own code failed (PropertyFailure): the search stopped there
    failed_env: Optional[Environment] = None  # the instance it failed on


class _Found(Exception):
    def __init__(self, cert: Certificate) -> None:
        super().__init__("certified violation")
        self.cert = cert


def _fail(cert: Certificate) -> None:
    # ONE raise site: Hypothesis identifies a failure by where it is raised, and a replayed failure must
    # look identical to the first one or shrinking stops
    raise _Found(cert)


def env_key(env: Environment) -> str:
    """A canonical text of one environment (the search's per-example part of a candidate's key)."""
    return json.dumps(env.to_dict(), sort_keys=True, separators=(",", ":"))


def measure_float(prop: Property, m: Any) -> Optional[float]:
    """A measure as a float oriented so that bigger is worse (for ``hypothesis.target``)."""
    if m is None:
        return None
    v = float(m)
    if math.isinf(v):
        v = 1e6 if v > 0 else -1e6
    v = max(-1e6, min(1e6, v))
    return v if prop.higher_is_worse else -v


@contextlib.contextmanager
def old_objects_frozen():
    """Within the block, the objects that exist when it starts are left out of garbage collection
    (``gc.freeze``).  A search allocates many short-lived objects, and every full collection would
    otherwise walk the whole heap as well (Hypothesis's, the caller's: ~45k objects after a few
    searches in one process), which cost 10-20% of a 300-trial search.  The newer objects are collected
    as usual.  A nested block, or a process that froze objects itself or disabled the collector, leaves
    the state alone; the objects are unfrozen when the block ends."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@dataclass(frozen=True)
class SearchSpec:
    """How one search runs: the seed and its limits, the instances it draws from, what it may skip.

    ``budget`` (seconds) bounds the search phases; shrinking a found violation gets ``shrink_budget``
    more (default: ``min(15, budget)``); ``deadline`` (``properties.budget``, a ``time.monotonic()`` value)
    ends everything, shrinking included: a search that could not evaluate a candidate before it is
    ``unknown`` with note ``budget ...``.  ``max_trials`` bounds the evaluated candidates (Hypothesis and
    optimiser together).  ``domain``: the instances drawn (default: the mechanism's setting's).
    ``optimizer``: let the misreport optimiser take ``optimizer_share`` of the budget where the property's
    hints call for it.  ``accept(env)`` restricts the search further (e.g. to a claim's standing
    assumptions): a candidate whose true or deviated environment is not accepted is skipped.
    ``progress(result)`` is called after every Hypothesis chunk."""

    seed: int = 0
    budget: float = 10.0
    max_trials: Optional[int] = None
    domain: Optional[strat.Domain] = None
    shrink_budget: Optional[float] = None
    optimizer: bool = True
    optimizer_share: float = 0.5
    accept: Optional[Callable[[Environment], bool]] = None
    progress: Optional[Callable[[SearchResult], None]] = None
    deadline: Optional[float] = None


@old_objects_frozen()  # a generator context manager is a decorator too (one fresh block per call)
def search(mech, prop_name, variant: str, spec: Optional[SearchSpec] = None, **options) -> SearchResult:
    """Search for a certified violation of ``prop_name``/``variant`` by ``mech`` (``prop_name``: a registered
    property's name or a ``Property`` object), as ``spec`` says (:class:`SearchSpec`; keyword ``options``
    are its fields).  Three phases: Hypothesis, the misreport optimiser (if the property calls for it and
    Hypothesis found nothing), and the verdict."""
    if spec is None:
        spec = SearchSpec(**options)
    elif options:
        spec = replace(spec, **options)
    run = _Search(mech, property_of(prop_name), variant, spec)
    found = run.hypothesis()
    if found is None:
        found = run.optimise()
    return run.conclude(found)


class _Search:
    """One search's state, shared by its phases (module docstring)."""

    def __init__(self, mech, prop: Property, variant: str, spec: SearchSpec) -> None:
        self.mech, self.prop, self.spec = mech, prop, spec
        self.variant = variant = prop.variant_of(variant, mech.setting)
        hints = prop.hints_for(variant)
        self.kind = hints.deviation
        self.dom = spec.domain if spec.domain is not None else strat.domain_for(mech.setting)
        dom_n, _ = strat.narrow(self.dom, prop, variant)
        self.res = SearchResult(mech.name, prop.name, variant, Verdict.UNKNOWN,
                                domain=_domain_dict(dom_n, hints.premise_note))
        self.t0, self.w0 = clock(), time.perf_counter()
        self.use_opt = spec.optimizer and hints.optimizer
        hyp_budget = spec.budget * (1 - spec.optimizer_share) if self.use_opt else spec.budget
        self.end = bud.earliest(self.t0 + spec.budget, spec.deadline)
        self.hyp_deadline = min(self.t0 + hyp_budget, self.end)
        self.shrink_budget = min(15.0, spec.budget) if spec.shrink_budget is None else spec.shrink_budget
        self.shrinking, self.shrink_deadline = False, None
        self.seq = 0  # the pool's insertion counter (ties keep their order)
        self.last: Optional[Certificate] = None  # the smallest failure so far (the shrinker only accepts smaller)
        self.seen: dict[str, bool] = {}
        self.failing: dict[str, Certificate] = {}

    def _trials_left(self) -> bool:
        return self.spec.max_trials is None or self.res.trials < self.spec.max_trials

    # ------------------------------------------------------------------ phase 1: Hypothesis
    def hypothesis(self) -> Optional[Certificate]:
        """Chunks of growing size with seeds derived from the spec's, until a certified violation, the
        budget, the trial limit, or an exhausted space."""
        res = self.res
        strategy = strat.batches(self.mech.setting, self.prop, self.variant, self.dom,
                                 k=1 if self.kind == "none" else BATCH, per_user=PER_USER)
        found: Optional[Certificate] = None
        chunk = 0
        res.engine = "hypothesis"
        while found is None and clock() < self.hyp_deadline and self._trials_left():
            before = res.generated
            try:
                _run_chunk(strategy, self.spec.seed * 7919 + chunk, CHUNKS[min(chunk, len(CHUNKS) - 1)], self.trial)
            except _Found as f:
                found = f.cert
            except _Abort:
                found = self.last
                break
            except Unsatisfiable:
                res.note = "could not generate instances satisfying the premise"
                break
            except BaseException as exc:  # ExceptionGroup from Hypothesis, or an engine bug
                inner = _unwrap_found(exc)
                if inner is None:
                    raise
                found = inner
            chunk += 1
            if self.spec.progress:
                self.spec.progress(res)
            if res.generated == before and found is None:
                break  # Hypothesis exhausted the space (tiny domains)
        if found is not None:
            res.shrink_seconds = clock() - self.t0 - (res.time_to_first or 0)
        return found

    def trial(self, case) -> None:
        """One example = one environment and a batch of deviations of it (``strategies.batches``); a trial
        is one (environment, deviation) candidate.  The truthful allocation is computed once per example."""
        env, devs = case
        ekey = env_key(env)
        shared: dict[str, Any] = {}  # what every candidate of this environment shares (computed lazily)
        best: Optional[float] = None  # the example's worst float measure (one ``target`` per example)
        for dev in devs:
            key = ekey if dev is None else ekey + "|" + repr(dev)
            if key in self.failing:
                _fail(self.failing[key])
            if key in self.seen:
                continue
            self._check_time()
            self.seen[key] = True
            self.res.generated += 1
            if "skip" not in shared:
                shared["skip"], shared["alloc"] = self._environment_skip(env)
            mf = self._candidate(env, dev, key, shared)
            if mf is not None:
                best = mf if best is None else max(best, mf)
        if best is not None:
            target(best, label="measure")
            self.seq += 1
            _pool_add(self.res, best, self.seq, env)

    def _check_time(self) -> None:
        now = clock()
        if self.shrinking:
            if now > self.shrink_deadline:
                raise _Abort()  # keep the smallest failure found so far (self.last)
        elif now > self.hyp_deadline or not self._trials_left():
            raise _Abort()

    def _candidate(self, env: Environment, dev, key: str, shared: dict) -> Optional[float]:
        """Evaluate one candidate in floats and re-check a float violation exactly (a certificate fails the
        example); its measure, oriented for ``target`` (None: not evaluated)."""
        res, prop = self.res, self.prop
        skip = shared["skip"]
        if skip:
            if skip == "inapplicable":
                res.inapplicable += 1
            elif skip == "outside":
                res.outside += 1
            else:
                res.errors += 1
            return None
        if self.spec.accept is not None and not _deviated_accepted(self.spec.accept, env, dev):
            res.inapplicable += 1
            return None
        try:
            ev = prop.evaluate(self.mech, env, self.variant, deviation=dev, exact=False, alloc=shared["alloc"])
        except SettingError as exc:  # the mechanism itself rejects the instance: outside its domain
            res.outside += 1
            res.first_outside = res.first_outside or str(exc)
            return None
        except bud.BudgetExhausted:  # the command's deadline came during the call: stop, not an error
            raise _Abort() from None
        except PropertyFailure as exc:
            self._property_failed(exc, env)
        except Exception as exc:  # noqa: BLE001 - a candidate never crashes the search
            res.errors += 1
            res.first_error = res.first_error or failure_text(exc)
            return None
        if ev.measure is None:
            if dev is not None:
                res.invalid += 1  # the deviation is not a valid report (or leaves the setting)
            else:
                res.errors += 1
                res.first_error = res.first_error or (ev.note or "evaluation gave no measure")
            return None
        if not self.shrinking:
            res.trials += 1
        mf = measure_float(prop, ev.measure)
        if mf is not None and prop.worse(ev.measure, res.worst):
            res.worst = ev.measure
        if ev.violated and ev.witness is not None:
            self._recheck(ev.witness, key)
        return mf

    def _recheck(self, witness, key: str) -> None:
        """The exact re-check of a float violation: a certificate fails the example (Hypothesis shrinks it)."""
        res = self.res
        try:
            cert = self.prop.recheck(self.mech, witness)
        except PropertyFailure as exc:
            self._property_failed(exc, witness.env)
        except Exception as exc:  # noqa: BLE001
            res.errors += 1
            res.first_error = res.first_error or f"exact re-check: {type(exc).__name__}: {exc}"
            return
        if cert is None:
            res.rejected += 1
            return
        self.failing[key] = cert
        self.last = cert  # the shrinker only accepts smaller failures: the last one is the smallest
        if not self.shrinking:
            res.time_to_first = clock() - self.t0
            res.wall_to_first = time.perf_counter() - self.w0
            self.shrinking = True
            self.shrink_deadline = bud.earliest(clock() + self.shrink_budget, self.spec.deadline)
        _fail(cert)

    def _environment_skip(self, env: Environment) -> tuple[str, Any]:
        """Why no candidate of ``env`` is evaluated ('' if they are), and the truthful float allocation
        (deviation kinds only: every deviation of the batch is compared with it)."""
        accept, res = self.spec.accept, self.res
        try:
            if accept is not None and not accept(env):
                return "inapplicable", None
            if self.prop.applicable(self.mech, env, self.variant):
                return "inapplicable", None
            return "", (self.mech(env, exact=False) if self.kind != "none" else None)
        except SettingError as exc:
            res.first_outside = res.first_outside or str(exc)
            return "outside", None
        except bud.BudgetExhausted:  # the command's deadline came during the call: stop, not an error
            raise _Abort() from None
        except PropertyFailure as exc:
            self._property_failed(exc, env)
        except Exception as exc:  # noqa: BLE001 - a candidate never crashes the search
            res.first_error = res.first_error or failure_text(exc)
            return "error", None

    def _property_failed(self, exc: PropertyFailure, env: Environment) -> None:
        """The property's own code failed on ``env``: a finding about the property, which ends the search (its
        other candidates would only meet the same code)."""
        if not self.res.property_failure:
            self.res.property_failure, self.res.failed_env = exc.text, env
        raise _Abort()

    # ------------------------------------------------------------------ phase 2: the misreport optimiser
    def optimise(self) -> Optional[Certificate]:
        """The optimiser (``optimize.py``) seeded with the environments Hypothesis found closest to a
        violation, for the rest of the budget (properties whose hints call for it)."""
        res, spec = self.res, self.spec
        if res.property_failure or not (self.use_opt and self._trials_left() and clock() < self.end):
            return None
        from .optimize import optimize_misreports

        left = None if spec.max_trials is None else spec.max_trials - res.trials
        accept = spec.accept
        try:
            cert, ot = optimize_misreports(self.mech, self.prop, self.variant, [e for _, _, e in res.pool],
                                           seed=spec.seed, deadline=self.end, max_trials=left, result=res,
                                           clock=clock,
                                           accept=None if accept is None else (lambda e, d: _accepted(accept, e, d)))
        except PropertyFailure as exc:  # the failing instance is the optimiser's: not known here
            res.property_failure = exc.text
            return None
        res.optimizer_trials = ot
        res.trials += ot
        if cert is not None:
            res.engine = "optimizer"
            res.time_to_first = clock() - self.t0
            res.wall_to_first = time.perf_counter() - self.w0
        return cert

    # ------------------------------------------------------------------ phase 3: the verdict
    def conclude(self, found: Optional[Certificate]) -> SearchResult:
        """The verdict and its note from what the phases found and counted."""
        res = self.res
        res.seconds = clock() - self.t0
        res.wall_seconds = time.perf_counter() - self.w0
        if found is not None:
            res.verdict, res.certificate = Verdict.VIOLATED, found
        elif res.property_failure:
            res.verdict = Verdict.UNKNOWN
            res.note = f"the property failed on a generated instance: {res.property_failure}"
        elif res.trials == 0 and res.errors:  # the mechanism (or the property) failed on every candidate
            res.verdict = Verdict.UNKNOWN
            res.note = (f"every call failed ({res.errors} candidates; first: {res.first_error})"
                        + ("; see runs" if self.mech.is_users else ""))
        elif res.trials == 0 and clock() >= self.end:
            res.verdict = Verdict.UNKNOWN
            res.note = bud.budget_note(f"no candidate evaluated within {max(0.0, self.end - self.t0):.2g} s")
        elif res.trials == 0:
            res.verdict = Verdict.UNKNOWN
            why = res.note or ("the premise never held" if res.inapplicable else "no valid candidate")
            if res.errors:
                why += f"; {res.errors} candidates raised errors (first: {res.first_error})"
            res.note = f"no candidate could be evaluated ({why})"
        else:
            res.verdict = Verdict.NOT_REFUTED
            notes = []
            if res.outside:
                notes.append(f"{res.outside} generated instances were outside the mechanism's domain "
                             f"(first: {res.first_outside})")
            if res.rejected:
                notes.append(f"{res.rejected} float candidates failed the exact re-check")
            if res.errors:
                notes.append(f"{res.errors} candidates raised errors (first: {res.first_error})")
            if res.note:
                notes.insert(0, res.note)
            res.note = "; ".join(notes)
        return res


def _accepted(accept: Callable[[Environment], bool], env: Environment, dev) -> bool:
    if not accept(env):
        return False
    return _deviated_accepted(accept, env, dev)


def _deviated_accepted(accept: Callable[[Environment], bool], env: Environment, dev) -> bool:
    """The deviated environment of a misreport is accepted too (``env`` itself was checked)."""
    if dev is not None and dev.kind == "misreport":
        try:
            return bool(accept(dev.apply(env)))
        except Exception:  # noqa: BLE001 - an invalid deviation is rejected later anyway
            return True
    return True


def _pool_add(res: SearchResult, score: float, seq: int, env: Environment) -> None:
    for _, _, e in res.pool:
        if e == env:
            return
    res.pool.append((score, seq, env))
    res.pool.sort(key=lambda t: (-t[0], t[1]))
    del res.pool[POOL_SIZE:]


def _unwrap_found(exc: BaseException) -> Optional[Certificate]:
    if isinstance(exc, _Found):
        return exc.cert
    for sub in getattr(exc, "exceptions", ()) or ():
        c = _unwrap_found(sub)
        if c is not None:
            return c
    return None


def _run_chunk(strategy, chunk_seed: int, n: int, fn: Callable) -> None:
    @settings(database=None, max_examples=n, deadline=None, derandomize=False,
              phases=(Phase.generate, Phase.target, Phase.shrink), suppress_health_check=list(HealthCheck),
              verbosity=Verbosity.quiet, report_multiple_bugs=False, print_blob=False)
    @hseed(chunk_seed)
    @given(strategy)
    def _search(case):
        fn(case)

    _search()


def _domain_dict(dom: strat.Domain, premise_note: str) -> dict:
    d = dom.describe()
    if premise_note:
        d["bias"] = premise_note
    return d
