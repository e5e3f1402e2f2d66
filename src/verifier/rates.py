"""``rates``: how OFTEN, and how badly, mechanisms violate properties on a sampled workload.

Where ``run`` asks "is there ANY instance?", :func:`rates` draws ``samples`` instances from a workload
model (``mechverify.workloads``) per parameter point (e.g. each server heterogeneity ``rho``) and, per
mechanism x property x variant, counts

* ``violations`` -- instances where the property is violated, EVERY ONE confirmed by the property's exact
  ``recheck`` (a float candidate the re-check does not confirm, or a re-check that fails, is not counted:
  ``unconfirmed`` says how many and why);
* ``not_applicable`` -- instances where the property's premise fails (``Property.applicable``, an
  evaluation without a measure) or the mechanism rejects the instance (``InstanceError``), by reason;
* ``errors`` -- instances where the mechanism or the evaluation raised anything else (a user's mechanism
  that fails, a solver error), by message; neither counted nor violated;
* the distribution of the property's own measure (``Property.measure``: mean, quantiles, and the mean
  of the measure clipped at its threshold -- seed 004's "average minimum restricted task ratio" for SI).

The rate is ``violations / evaluated`` (evaluated = samples - not applicable - errors) with its 95% Wilson
score interval (:func:`wilson`).  A property about deviations (``Property.needs_deviation``: SP, GSP, PM)
tries the first ``deviations`` of its own structured deviations (``Property.deviations``, seeded per
sample) on each instance: its rate is a LOWER bound ("violations found with K deviations per instance").

**Batch path.**  Instances are sampled with numpy; a mechanism with a vectorised float allocator
(``Mechanism.batch``) allocates a whole chunk of instances at once, any other through its float path;
a property with a vectorised float evaluation (``Property.evaluate_batch``) evaluates the chunk at once,
any other instance by instance (``Property.evaluate(exact=False)``); only candidate violations are
re-checked exactly.

**Deterministic.**  Instance ``i`` of parameter point ``p`` is drawn from
a Philox generator keyed by ``(seed, key(p))`` at counter ``i`` (:func:`sample_rng`) and its deviations, per cell,
from a ``random.Random`` seeded from the same generator, so a sample's outcome does not depend on which worker draws it: the counts are the same
for any ``--jobs`` and on a Dask cluster (the chunks run on ``verifier.executors``).  ``budget`` (seconds,
wall-clock) stops the drawing, and an allocation or evaluation that would end after it (judged by the
longest of its kind so far in the chunk) is not started; with a budget every mechanism takes a chunk's
instances in turn, in blocks that start at one instance and double while they are cheap
(:data:`BUDGET_BLOCK_SHARE`), so a cut leaves the cells with about as many samples.  The
report says how many samples every cell finished (``done``; a cell's own ``samples`` may be a few more).
"""
from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Any, Optional, Sequence


from mechverify.numbers import InstanceError

from . import planning
from .config import RunConfig
from .executors import InProcess
from .properties import get_property
from .properties import budget as bud
from .properties.base import PropertyFailure
from .rate_records import QUANTILES, CellRates, RatesReport, _Stream, point_key, sample_rng, wilson

# the records are verifier.rate_records'; the public ones are re-exported here
__all__ = ["wilson", "RatesReport", "CellRates", "rates", "rate_chunk", "DEFAULT_DEVIATIONS", "CHUNK", "QUANTILES",
           "point_key", "sample_rng"]

#: deviations tried per instance for a property about deviations (SP, GSP, PM)
DEFAULT_DEVIATIONS = 8
#: samples per chunk (one unit of work handed to a worker)
CHUNK = 250
#: with a budget, a chunk's instances go through every mechanism in blocks (a budget cut then leaves every
#: cell with about as many samples): one instance first, the block doubling while a block takes less than
#: this share of the time left
BUDGET_BLOCK_SHARE = 0.05
# ------------------------------------------------------------------ one chunk (a worker's unit of work)
def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"[:200]


def _mech_of(spec: dict):
    """The mechanism a chunk names (looked up by name or reference, with the user's options)."""
    import dataclasses

    from mechanisms import get

    if spec.get("obj") is not None:
        return spec["obj"]
    mech = get(spec["ref"])
    if spec.get("tolerance") is not None:
        mech = dataclasses.replace(mech, tolerance=spec["tolerance"])
    if spec.get("call_limit") is not None:
        mech = dataclasses.replace(mech, call_limit=spec["call_limit"])
    return mech


def _float_measure(m: Any) -> float:
    try:
        return float(m)
    except (TypeError, ValueError, OverflowError):
        return math.nan


def _count(d: dict, key: str) -> None:
    d[key] = d.get(key, 0) + 1


def _confirm(prop, mech, cell: CellRates, witness, i: int) -> bool:
    """The exact re-check of a float candidate; counts it, or records why it is not counted."""
    cell.rechecked += 1
    try:
        witness.env.validate()  # drawn unchecked for screening (rate_chunk): checked before any verdict
    except InstanceError as exc:
        _count(cell.unconfirmed, f"the sampled instance is not valid: {exc}")
        return False
    try:
        cert = prop.recheck(mech, witness)
    except (bud.BudgetExhausted, PropertyFailure):
        raise
    except Exception as exc:  # noqa: BLE001 - a re-check that fails claims nothing
        _count(cell.unconfirmed, f"exact re-check failed: {_short(exc)}")
        return False
    if cert is None:
        _count(cell.unconfirmed, "float candidate not confirmed by the exact re-check (float noise, or within "
                                 "the mechanism's tolerance)")
        return False
    return True


def _evaluate_one(prop, mech, variant: str, env, alloc, cell: CellRates, i: int, rng_dev, k_dev: int) -> None:
    """One instance of one cell, instance by instance (``Property.evaluate`` in floats)."""
    why = prop.applicable(mech, env, variant)
    if why:
        _count(cell.not_applicable, f"premise: {why}")
        return
    if not prop.needs_deviation:
        ev = prop.evaluate(mech, env, variant, exact=False, alloc=alloc)
        if ev.measure is None:
            _count(cell.not_applicable, f"no measure: {ev.note or 'not applicable'}")
            return
        cell.measures.append(_float_measure(ev.measure))
        if ev.violated and ev.witness is not None and _confirm(prop, mech, cell, ev.witness, i):
            cell.violations += 1
            cell.first_violation = i if cell.first_violation is None else cell.first_violation
        return
    import itertools

    worst, violated, tried = None, False, 0
    for dev in itertools.islice(prop.deviations(mech, env, variant, random.Random(rng_dev)), k_dev):
        ev = prop.evaluate(mech, env, variant, deviation=dev, exact=False, alloc=alloc)
        if ev.measure is None:
            continue  # not a valid report for this mechanism
        tried += 1
        if prop.worse(ev.measure, worst):
            worst = ev.measure
        if ev.violated and ev.witness is not None and _confirm(prop, mech, cell, ev.witness, i):
            violated = True
            worst = ev.measure
            break
    if not tried:
        _count(cell.not_applicable, "no valid deviation among those tried")
        return
    cell.measures.append(_float_measure(worst))
    if violated:
        cell.violations += 1
        cell.first_violation = i if cell.first_violation is None else cell.first_violation


def rate_chunk(job: dict) -> dict:
    """THE worker function: samples ``job["start"]..job["stop"]`` of one parameter point, every cell of the
    job; returns ``{"point", "start", "done", "cells": [CellRates]}``.  Plain data in and out (picklable)."""
    import sys

    from mechverify.workloads import get as get_workload

    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    t_end = None
    if job.get("deadline") is not None:  # the coordinator's deadline (wall clock: a worker may start late)
        t_end = time.monotonic() + max(0.0, job["deadline"] - time.time())
    elif job.get("seconds") is not None:
        t_end = time.monotonic() + job["seconds"]
    point = job["point"]
    # the workload builds valid instances by construction (its tests validate thousands of draws): screening
    # skips the model's checks, and every candidate is validated before its exact re-check (_confirm)
    draw = get_workload(job["workload"]).sampler(validated=False, **point)
    start, stop = job["start"], job["stop"]
    envs, rngs = [], []
    stream = _Stream(job["seed"], point)
    for i in range(start, stop):
        if t_end is not None and time.monotonic() >= t_end:
            break
        rng = stream.at(i)
        envs.append(draw(rng))
        rngs.append(int(rng.integers(2 ** 62)))  # the seed of the instance's deviations (one Random per cell)
    done = len(envs)
    cells_out: list[CellRates] = []
    work = []
    for spec in job["mechanisms"]:
        mech = _mech_of(spec)
        cells = [(get_property(p), v, CellRates(mech.name, get_property(p).name, v, dict(point),
                                                deviations=job["deviations"] if get_property(p).needs_deviation
                                                else None))
                 for p, v in spec["cells"]]
        cells_out.extend(c for _, _, c in cells)
        work.append((mech, [(p, v, c, {}) for p, v, c in cells], {}))
    # without a budget the whole chunk at once (the batch path's vectors are longest); with one,
    # blocks of instances in turn for every mechanism, so that a budget cut leaves every cell with about
    # as many samples (not the first mechanism with all of them and the others with none)
    block = max(1, done) if t_end is None else 1
    b0 = 0
    while b0 < done:
        b1 = min(done, b0 + block)
        t_block = time.monotonic()
        for mech, cells, est in work:
            with bud.user_calls(mech, job.get("budget")), bud.scope(t_end):
                try:
                    allocs = _allocate_all(mech, envs[b0:b1], t_end, est)
                    for prop, variant, cell, cell_est in cells:
                        _evaluate_cell(prop, mech, variant, envs[b0:b1], allocs, cell, start + b0, rngs[b0:b1],
                                       job["deviations"], t_end, cell_est)
                except bud.BudgetExhausted:
                    pass  # every cell keeps the samples it finished (below: ``done`` is the fewest)
        if any(c.samples < b1 for c in cells_out):
            break  # the budget cut this block short
        b0 = b1
        if t_end is not None and time.monotonic() - t_block < BUDGET_BLOCK_SHARE * (t_end - time.monotonic()):
            block *= 2  # cheap so far: longer blocks (longer vectors for the batch path)
    if cells_out:  # the budget may cut a cell short: the chunk reports the samples EVERY cell finished
        done = min(done, min(c.samples for c in cells_out))
    return {"point": point, "start": start, "done": done, "cells": cells_out}


class _NotAllocated:
    """An instance the budget left unallocated (the evaluation stops there)."""


_CUT = _NotAllocated()


def _would_overrun(t_end: Optional[float], longest: float) -> bool:
    """The deadline has passed, or a step as long as the longest so far would end after it (not started)."""
    return t_end is not None and time.monotonic() + longest >= t_end


def _allocate_all(mech, envs: list, t_end: Optional[float] = None, longest: Optional[dict] = None) -> list:
    """Float allocations of every instance: the mechanism's vectorised allocator (``Mechanism.batch``) for
    the instances inside its setting, its float path for the others it leaves (``None``) and for a
    mechanism without one.  An instance the mechanism rejects is its ``InstanceError``, a failure any
    other exception (kept in the list, counted per instance).  The budget (``t_end``): an allocation that
    would end after it, judged by the longest so far (``longest["alloc"]``, kept across a chunk's blocks), is
    not started; it and every later instance are ``_CUT``."""
    longest = {} if longest is None else longest
    out: list = [None] * len(envs)
    batch = getattr(mech, "batch", None)
    if batch is not None and envs:
        inside = []
        for n, env in enumerate(envs):
            try:
                mech.setting.check(env, mech.name)
                inside.append(n)
            except InstanceError as exc:
                out[n] = exc
        if inside:
            for n, a in zip(inside, batch([envs[n] for n in inside])):
                out[n] = a
    for n, env in enumerate(envs):
        if out[n] is not None:
            continue
        if _would_overrun(t_end, longest.get("alloc", 0.0)):
            out[n:] = [a if a is not None else _CUT for a in out[n:]]
            break
        t = time.monotonic()
        try:
            out[n] = mech(env, exact=False)
        except bud.BudgetExhausted:
            out[n:] = [a if a is not None else _CUT for a in out[n:]]
            break
        except Exception as exc:  # noqa: BLE001 - reported per instance, never lost
            out[n] = exc
        longest["alloc"] = max(longest.get("alloc", 0.0), time.monotonic() - t)
    return out


def _evaluate_cell(prop, mech, variant, envs, allocs, cell: CellRates, start: int, rngs, k_dev: int,
                   t_end: Optional[float], longest: Optional[dict] = None) -> None:
    """Every instance of one cell: the property's vectorised evaluation where it has one, else one by
    one."""
    batch = None
    premise: dict = {}
    ok = []
    cut = next((n for n, a in enumerate(allocs) if a is _CUT), len(allocs))
    envs, allocs = envs[:cut], allocs[:cut]  # the budget left the rest unallocated
    for n, a in enumerate(allocs):
        if not isinstance(a, BaseException):
            premise[n] = prop.applicable(mech, envs[n], variant)
            if not premise[n]:
                ok.append(n)
    if not prop.needs_deviation and ok:
        batch = prop.evaluate_batch(mech, [envs[n] for n in ok], [allocs[n] for n in ok], variant)
    evs = dict(zip(ok, batch)) if batch is not None else {}
    longest = {} if longest is None else longest  # the longest evaluation so far (kept across blocks)
    for n, env in enumerate(envs):
        if _would_overrun(t_end, 0.0 if n in evs else longest.get("eval", 0.0)):
            return  # the budget: this cell has the samples done so far
        t = time.monotonic()
        snap = (len(cell.measures), cell.violations, cell.rechecked, dict(cell.unconfirmed), cell.first_violation)
        i = start + n
        a = allocs[n]
        cell.samples += 1
        if isinstance(a, InstanceError):
            _count(cell.not_applicable, f"the mechanism rejects the instance: {str(a).splitlines()[0][:160]}")
            continue
        if isinstance(a, BaseException):
            _count(cell.errors, f"the mechanism failed: {_short(a)}")
            continue
        if premise.get(n):
            _count(cell.not_applicable, f"premise: {premise[n]}")
            continue
        try:
            if n in evs:
                ev = evs[n]
                if ev is None:  # outside the vectorised case (premise, no measure): one by one
                    _evaluate_one(prop, mech, variant, env, a, cell, i, rngs[n], k_dev)
                    continue
                cell.measures.append(_float_measure(ev.measure))
                if ev.violated and ev.witness is not None and _confirm(prop, mech, cell, ev.witness, i):
                    cell.violations += 1
                    cell.first_violation = i if cell.first_violation is None else cell.first_violation
            else:
                _evaluate_one(prop, mech, variant, env, a, cell, i, rngs[n], k_dev)
        except bud.BudgetExhausted:  # cut short: this sample is not counted at all
            cell.samples -= 1
            del cell.measures[snap[0]:]
            cell.violations, cell.rechecked, cell.unconfirmed, cell.first_violation = snap[1:]
            return
        except PropertyFailure as exc:  # the property's own code: a finding about it (the report names it)
            _count(cell.property_failures, exc.text[:300])
            if cell.first_property_failure is None:
                cell.first_property_failure = i
        except InstanceError as exc:
            _count(cell.not_applicable, f"the mechanism rejects the instance: {str(exc).splitlines()[0][:160]}")
        except Exception as exc:  # noqa: BLE001 - counted as an error, never a verdict
            _count(cell.errors, f"evaluation failed: {_short(exc)}")
        longest["eval"] = max(longest.get("eval", 0.0), time.monotonic() - t)


# ------------------------------------------------------------------ the coordinator
def plan(mechs: Sequence, props: Sequence[str], variants: Optional[dict] = None):
    """Per mechanism, the (property ref, variant) cells to sample, and the skipped ones with the reason
    (``verifier.planning.plan``: the variants the mechanism's setting allows; the properties asked only)."""
    p = planning.plan(mechs, props, variants, failures_first=False)
    out = [(m, [(c.prop.ref, c.variant) for c in p.of(m).cells]) for m in mechs]
    return out, [(s.mechanism.name, s.prop.name, s.variant, s.reason) for s in p.skipped]


@dataclass(frozen=True)
class Sampling:
    """What ``rates`` draws: ``samples`` instances of the workload model ``workload`` at each of ``points``
    (keyword arguments of its ``sample``, e.g. ``{"rho": 0.7}``), ``deviations`` per deviation property and
    sample, in chunks of ``chunk`` samples (one chunk is one job of the executor)."""

    workload: str
    samples: int
    points: Sequence[dict] = ({},)
    deviations: int = DEFAULT_DEVIATIONS
    chunk: int = CHUNK


def rates(mechs: Sequence, sampling: Sampling, props: Sequence[str], config: RunConfig = RunConfig(),
          variants: Optional[dict] = None) -> RatesReport:
    """Draw ``sampling`` and count every mechanism x property x variant (module docstring) within ``config``
    (``verifier.config.RunConfig``: its budget -- ``None``: no limit --, seed, executor and progress)."""
    from mechverify.workloads import get as get_workload

    workload, points, samples, deviations, chunk = (sampling.workload, sampling.points, sampling.samples,
                                                    sampling.deviations, sampling.chunk)
    seed, budget, executor, progress = config.seed, config.budget, config.executor, config.progress
    if samples < 1:
        raise InstanceError(f"samples: must be >= 1 (got {samples})")
    if deviations < 1:
        raise InstanceError(f"deviations: must be >= 1 (got {deviations})")
    work = get_workload(workload)
    t0 = time.monotonic()
    ex = executor or InProcess()
    planned, skipped = plan(mechs, props, variants)
    specs = [{"ref": m.ref, "tolerance": m.tolerance if m.is_users else None,
              "call_limit": getattr(m, "call_limit", None) if m.is_users else None,
              "obj": m, "cells": cells} for m, cells in planned if cells]
    report = RatesReport(work.name, work.title, work.provenance, [m.name for m in mechs],
                         [get_property(p).name for p in props], [dict(p) for p in points], samples, seed,
                         deviations, [], skipped, budget=budget, executor=ex.describe())
    jobs = []
    for p in points:
        report.done[point_key(p)] = 0
        for a in range(0, samples, chunk):
            jobs.append({"workload": work.name, "point": dict(p), "seed": seed, "start": a,
                         "stop": min(samples, a + chunk), "mechanisms": specs, "deviations": deviations,
                         "budget": budget})
    deadline = None if budget is None else t0 + budget
    results: list[dict] = []
    pending = list(jobs)
    running: dict = {}
    if progress:
        progress(f"rates: {len(points)} point(s) x {samples} samples of {work.name}, "
                 f"{sum(len(s['cells']) for s in specs)} cell(s) per point, {len(jobs)} chunks ({ex.describe()})")
    try:
        while pending or running:
            while pending and len(running) < ex.slots:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    report.stopped = True
                    break
                job = dict(pending.pop(0), seconds=left, deadline=None if left is None else time.time() + left)
                if not ex.in_process:
                    job["mechanisms"] = [dict(s, obj=None) for s in job["mechanisms"]]
                running[ex.submit(rate_chunk, job)] = job
            if report.stopped and not running:
                break
            if not running:
                break
            for h, value, err in ex.wait_any():
                job = running.pop(h)
                if err is not None:
                    raise RuntimeError(f"worker error on samples {job['start']}..{job['stop']}: {_short(err)}")
                results.append(value)
                if value["done"] < job["stop"] - job["start"]:
                    report.stopped = True
                if progress:
                    progress(f"[{len(results)}/{len(jobs)}] {job['point'] or ''} samples {job['start']}.."
                             f"{job['start'] + value['done']}")
        if pending:
            report.stopped = True
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        ex.close(cancel=bool(running) or report.interrupted)
    merged: dict = {}
    order: list = []
    for value in sorted(results, key=lambda v: (point_key(v["point"]), v["start"])):
        report.done[point_key(value["point"])] += value["done"]
        for c in value["cells"]:
            if c.key in merged:
                merged[c.key].merge(c)
            else:
                merged[c.key] = c
                order.append(c.key)
    # cells in the order asked: point, mechanism, property, variant
    rank = {point_key(p): n for n, p in enumerate(points)}
    mrank = {m.name: n for n, m in enumerate(mechs)}
    prank = {get_property(p).name: n for n, p in enumerate(props)}
    report.cells = sorted((merged[k] for k in order),
                          key=lambda c: (rank[point_key(c.point)], mrank.get(c.mechanism, 0), prank.get(c.property, 0),
                                         list(get_property(c.property).variants).index(c.variant)
                                         if c.variant in get_property(c.property).variants else 0))
    report.seconds = time.monotonic() - t0
    return report
