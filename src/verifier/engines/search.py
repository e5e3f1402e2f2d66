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
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from hypothesis import HealthCheck, Phase, given, seed as hseed, settings, target, Verbosity
from hypothesis.errors import Unsatisfiable

from mechanisms.core.registry import SettingError
from mechverify.model import Environment

from ..properties import budget as bud
from ..properties.base import Certificate, Property
from ..properties.runs import failure_text
from . import strategies as strat
from .strategies.domain import property_of

__all__ = ["SearchResult", "search", "env_key", "measure_float", "BATCH", "PER_USER"]

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


@old_objects_frozen()  # a generator context manager is a decorator too (one fresh block per call)
def search(mech, prop_name, variant: str, *, seed: int = 0, budget: float = 10.0,
           max_trials: Optional[int] = None, domain: Optional[strat.Domain] = None,
           shrink_budget: Optional[float] = None, optimizer: bool = True, optimizer_share: float = 0.5,
           accept: Optional[Callable[[Environment], bool]] = None,
           progress: Optional[Callable[[SearchResult], None]] = None,
           deadline: Optional[float] = None) -> SearchResult:
    """Search for a certified violation of ``prop_name``/``variant`` by ``mech``.

    ``budget`` (seconds) bounds the search phases; shrinking a found violation gets ``shrink_budget``
    more (default: ``min(15, budget)``); ``deadline`` (``properties.budget``, a ``time.monotonic()`` value)
    ends everything, shrinking included: a search that could not evaluate a candidate before it is
    ``unknown`` with note ``budget ...``.  ``max_trials`` bounds the evaluated candidates (Hypothesis and
    optimiser together).  ``accept(env)`` restricts the search further (e.g. to a claim's standing
    assumptions): a candidate whose true or deviated environment is not accepted is skipped.
    ``prop_name``: a registered property's name (or a ``Property`` object)."""
    prop = property_of(prop_name)
    variant = prop.variant_of(variant, mech.setting)
    hints = prop.hints_for(variant)
    dom = domain if domain is not None else strat.domain_for(mech.setting)
    dom_n, _ = strat.narrow(dom, prop, variant)
    res = SearchResult(mech.name, prop.name, variant, "unknown", domain=_domain_dict(dom_n, hints.premise_note))
    t0, w0 = clock(), time.perf_counter()
    use_opt = optimizer and hints.optimizer
    hyp_budget = budget * (1 - optimizer_share) if use_opt else budget
    end = bud.earliest(t0 + budget, deadline)
    hyp_deadline = min(t0 + hyp_budget, end)
    shrink_budget = min(15.0, budget) if shrink_budget is None else shrink_budget
    state: dict[str, Any] = {"shrinking": False, "shrink_deadline": None, "seq": 0, "last": None}
    seen: dict[str, bool] = {}
    failing: dict[str, Certificate] = {}

    kind = hints.deviation

    def trial(case) -> None:
        # one example = one environment and a batch of deviations of it (``strategies.batches``); a trial
        # is one (environment, deviation) candidate.  The truthful allocation is computed once per example.
        env, devs = case
        ekey = env_key(env)
        shared: dict[str, Any] = {}  # what every candidate of this environment shares (computed lazily)
        best: Optional[float] = None  # the example's worst float measure (one ``target`` per example)
        for dev in devs:
            key = ekey if dev is None else ekey + "|" + repr(dev)
            if key in failing:
                _fail(failing[key])
            if key in seen:
                continue
            now = clock()
            if state["shrinking"]:
                if now > state["shrink_deadline"]:
                    raise _Abort()  # keep the smallest failure found so far (state["last"])
            elif now > hyp_deadline or (max_trials is not None and res.trials >= max_trials):
                raise _Abort()
            seen[key] = True
            res.generated += 1
            if "skip" not in shared:
                shared["skip"], shared["alloc"] = _environment_skip(env)
            skip = shared["skip"]
            if skip:
                if skip == "inapplicable":
                    res.inapplicable += 1
                elif skip == "outside":
                    res.outside += 1
                else:
                    res.errors += 1
                continue
            if accept is not None and not _deviated_accepted(accept, env, dev):
                res.inapplicable += 1
                continue
            try:
                ev = prop.evaluate(mech, env, variant, deviation=dev, exact=False, alloc=shared["alloc"])
            except SettingError as exc:  # the mechanism itself rejects the instance: outside its domain
                res.outside += 1
                res.first_outside = res.first_outside or str(exc)
                continue
            except bud.BudgetExhausted:  # the command's deadline came during the call: stop, not an error
                raise _Abort() from None
            except Exception as exc:  # noqa: BLE001 - a candidate never crashes the search
                res.errors += 1
                res.first_error = res.first_error or failure_text(exc)
                continue
            if ev.measure is None:
                if dev is not None:
                    res.invalid += 1  # the deviation is not a valid report (or leaves the setting)
                else:
                    res.errors += 1
                    res.first_error = res.first_error or (ev.note or "evaluation gave no measure")
                continue
            if not state["shrinking"]:
                res.trials += 1
            mf = measure_float(prop, ev.measure)
            if mf is not None:
                best = mf if best is None else max(best, mf)
                if prop.worse(ev.measure, res.worst):
                    res.worst = ev.measure
            if ev.violated and ev.witness is not None:
                try:
                    cert = prop.recheck(mech, ev.witness)
                except Exception as exc:  # noqa: BLE001
                    res.errors += 1
                    res.first_error = res.first_error or f"exact re-check: {type(exc).__name__}: {exc}"
                    continue
                if cert is None:
                    res.rejected += 1
                    continue
                failing[key] = cert
                state["last"] = cert  # the shrinker only accepts smaller failures: the last one is the smallest
                if not state["shrinking"]:
                    res.time_to_first = clock() - t0
                    res.wall_to_first = time.perf_counter() - w0
                    state["shrinking"] = True
                    state["shrink_deadline"] = bud.earliest(clock() + shrink_budget, deadline)
                _fail(cert)
        if best is not None:
            target(best, label="measure")
            _pool_add(res, best, state, env)

    def _environment_skip(env: Environment) -> tuple[str, Any]:
        """Why no candidate of ``env`` is evaluated ('' if they are), and the truthful float allocation
        (deviation kinds only: every deviation of the batch is compared with it)."""
        try:
            if accept is not None and not accept(env):
                return "inapplicable", None
            if prop.applicable(mech, env, variant):
                return "inapplicable", None
            return "", (mech(env, exact=False) if kind != "none" else None)
        except SettingError as exc:
            res.first_outside = res.first_outside or str(exc)
            return "outside", None
        except bud.BudgetExhausted:  # the command's deadline came during the call: stop, not an error
            raise _Abort() from None
        except Exception as exc:  # noqa: BLE001 - a candidate never crashes the search
            res.first_error = res.first_error or failure_text(exc)
            return "error", None

    strategy = strat.batches(mech.setting, prop, variant, dom, k=1 if kind == "none" else BATCH,
                             per_user=PER_USER)
    found: Optional[Certificate] = None
    chunk = 0
    res.engine = "hypothesis"
    while found is None and clock() < hyp_deadline and (max_trials is None or res.trials < max_trials):
        before = res.generated
        try:
            _run_chunk(strategy, seed * 7919 + chunk, CHUNKS[min(chunk, len(CHUNKS) - 1)], trial)
        except _Found as f:
            found = f.cert
        except _Abort:
            found = state["last"]
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
        if progress:
            progress(res)
        if res.generated == before and found is None:
            break  # Hypothesis exhausted the space (tiny domains)
    if found is not None:
        res.shrink_seconds = clock() - t0 - (res.time_to_first or 0)
    elif use_opt and (max_trials is None or res.trials < max_trials) and clock() < end:
        from .optimize import optimize_misreports

        left = None if max_trials is None else max_trials - res.trials
        cert, ot = optimize_misreports(mech, prop, variant, [e for _, _, e in res.pool], seed=seed,
                                       deadline=end, max_trials=left, result=res, clock=clock,
                                       accept=None if accept is None else (lambda e, d: _accepted(accept, e, d)))
        res.optimizer_trials = ot
        res.trials += ot
        if cert is not None:
            found = cert
            res.engine = "optimizer"
            res.time_to_first = clock() - t0
            res.wall_to_first = time.perf_counter() - w0
    res.seconds = clock() - t0
    res.wall_seconds = time.perf_counter() - w0
    if found is not None:
        res.verdict, res.certificate = "violated", found
    elif res.trials == 0 and res.errors:  # the mechanism (or the property) failed on every candidate
        res.verdict = "unknown"
        res.note = (f"every call failed ({res.errors} candidates; first: {res.first_error})"
                    + ("; see runs" if mech.is_users else ""))
    elif res.trials == 0 and clock() >= end:
        res.verdict = "unknown"
        res.note = bud.budget_note(f"no candidate evaluated within {max(0.0, end - t0):.2g} s")
    elif res.trials == 0:
        res.verdict = "unknown"
        why = res.note or ("the premise never held" if res.inapplicable else "no valid candidate")
        if res.errors:
            why += f"; {res.errors} candidates raised errors (first: {res.first_error})"
        res.note = f"no candidate could be evaluated ({why})"
    else:
        res.verdict = "not_refuted"
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


def _pool_add(res: SearchResult, score: float, state: dict, env: Environment) -> None:
    state["seq"] += 1
    for _, _, e in res.pool:
        if e == env:
            return
    res.pool.append((score, state["seq"], env))
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
