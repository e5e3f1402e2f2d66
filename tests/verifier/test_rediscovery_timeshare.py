"""Kueue 8522 (a same-priority workload monopolises its ClusterQueue) rediscovered by search from an empty store,
as ``starvation`` in its ``quota`` reading with a stated bound (``max_wait`` 2 time units = 1 h, twice the
booster's window), seed 0, 400 trials each (the style of test_rediscovery.py):

* ``kueue-timeshare@8522`` (no time-based preemption) is refuted: a workload below its queue's quota waits to
  the end while the ones admitted first run;
* the pin's time-based preemption, the priority booster (``kueue-timeshare``), is refuted TOO: its minimal
  trace has three workloads -- the two created first take turns (a preempted workload keeps its creation
  timestamp, so it heads the heap again) and the third never heads it;
* the design KEP 8522's text assumes (the preempted workload requeued behind the waiting ones) is not refuted by
  the same search (same seed, same trials)."""
from __future__ import annotations

import time
from dataclasses import replace
from fractions import Fraction

import mechanisms
from mechanisms.ports.kueue import timeshare
from verifier.config import RunConfig
from verifier.run import run_mechanism

TRIALS, SEED, MAX_WAIT = 400, 0, Fraction(2)


def _search(mech):
    rep = run_mechanism(mech, ["starvation"], RunConfig(budget=60, seed=SEED, store=None, trials=TRIALS,
                                                        max_wait=MAX_WAIT), variants={"starvation": ["quota"]})
    (r,) = rep.results
    return r


def _alternation(mech, ex):
    from mechanisms.core.time import execute
    return [tuple(int(v[0]) for v in s.alloc.x) for s in execute(mech, ex)]


def test_kueue_8522_monopolisation_is_found_and_the_booster_starves_a_third_workload():
    t0 = time.perf_counter()
    bug = _search(mechanisms.get("kueue-timeshare@8522"))
    assert bug.verdict == "violated", (bug.verdict, bug.note)
    assert bug.certificate is not None and bug.certificate.gap > 0
    booster = mechanisms.get("kueue-timeshare")
    pin = _search(booster)
    assert pin.verdict == "violated", (pin.verdict, pin.note)
    ex = pin.certificate.witness.execution
    assert pin.size["users"] == 3 and pin.size["events"] == 0, pin.size
    # the minimal trace: the starved workload is the last created; the two others alternate at every expiry
    assert pin.certificate.summary.startswith(f"{ex.users[-1].name} runs 0 below its quota"), pin.certificate.summary
    run = _alternation(booster, ex)
    assert all(a[-1] == 0 for a in run) and len({a for a in run}) == 2, run
    back = replace(booster, name="kueue-timeshare+to-back", time=timeshare.time_spec(to_back=True))
    fixed = _search(back)
    assert fixed.verdict == "not_refuted", (fixed.verdict, fixed.certificate and fixed.certificate.summary)
    assert time.perf_counter() - t0 < 30


def test_the_loop_pr_7157_removed_is_found_over_executions_and_the_pin_is_not_refuted():
    # kueue 6929 / 7101 / 6947 as the execution property ``cycles`` (quiet rounds after each trace): seed 0,
    # 1000 traces each; at the pin the same search finds no loop
    t0 = time.perf_counter()
    cfg = RunConfig(budget=60, seed=SEED, store=None, trials=1000)
    (bug,) = run_mechanism(mechanisms.get("kueue-preempt@6929"), ["cycles"], cfg).results
    assert bug.verdict == "violated", (bug.verdict, bug.note)
    assert bug.size["users"] == 3, bug.size
    (pin,) = run_mechanism(mechanisms.get("kueue-preempt"), ["cycles"], cfg).results
    assert pin.verdict == "not_refuted", (pin.verdict, pin.certificate and pin.certificate.summary)
    assert time.perf_counter() - t0 < 30
