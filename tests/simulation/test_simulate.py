"""``simulation.simulate`` (a mechanism through a job trace on the execution model's stepping) and the job-trace
format (``mechverify.job_trace``): hand-derived JCTs, utilisation, the bounded series, the exact re-check."""
from __future__ import annotations

import json
import os
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.core.time import lift
from mechverify.job_trace import load_job_trace, loads_job_trace, parse_job_trace
from mechverify.numbers import InstanceError
from simulation.simulate import Series, simulate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOBS = os.path.join(ROOT, "examples", "jobs")


def drf():
    return lift(mechanisms.get("drf"), "recompute")


# DRF on one server (9 cpu, 18 mem), divisible tasks, reallocated at every event (the fluid model):
#  j1: 6 tasks of (1, 4), 10 each (work 60), at 0;  j2: 6 x (3, 1), 5 each (work 30), at 2;  j3: 2 x (1, 1), 3 each
#  (work 6), at 4.
#  [0, 2)   j1 alone: min(6, 9/1, 18/4) = 4.5 tasks (mem);                    j1 done 9
#  [2, 4)   dominant shares 2/9 (j1, mem) and 1/3 (j2, cpu) per task: equal share s, cpu 4.5s + 9s <= 9 -> s = 2/3:
#           x1 = 3, x2 = 2 (cpu full);                                          j1 15, j2 4
#  [4, 7)   j3 (1/9 per task) is capped at 2 tasks at s = 2/9; then 13.5 s + 2 <= 9 -> s = 14/27: x1 = 7/3, x2 = 14/9,
#           x3 = 2; j3 finishes its 6 at t = 7 (j1 would need 45/(7/3), j2 26/(14/9): later).  JCT j3 = 3, alone 3.
#                                                                              j1 22, j2 26/3
#  [7, 53/3) x1 = 3, x2 = 2 again: j2 needs (30 - 26/3)/2 = 32/3 -> finishes at 53/3; JCT 47/3, alone 30/3 = 10.
#  [53/3, 19) j1 alone, 4.5 tasks: 60 - 22 - 32 = 6 left -> 4/3 -> finishes at 19; JCT 19, alone 60/4.5 = 40/3.
JCT = {"j1": F(19), "j2": F(47, 3), "j3": F(3)}
FACTOR = {"j1": F(40, 3) / 19, "j2": F(10) / F(47, 3), "j3": F(1)}
# cpu in use: 4.5 of 9 on [0, 2) and [53/3, 19), all 9 otherwise: (2 x 1/2 + (53/3 - 2) + 4/3 x 1/2) / 19 = 52/57
CPU_MEAN = F(52, 57)


def test_hand_derived_jcts_factors_and_utilisation():
    ex = load_job_trace(os.path.join(JOBS, "drf-three-jobs.json"))
    sim = simulate(drf(), ex, properties=("si", "ef", "po"), po_every=1)
    got = {name: (jct, f) for name, _, _, jct, f in sim.jct}
    assert set(got) == set(JCT)
    for name in JCT:
        assert got[name][0] == pytest.approx(float(JCT[name]), rel=1e-12)
        assert got[name][1] == pytest.approx(float(FACTOR[name]), rel=1e-12)
    assert sim.end_time == pytest.approx(19)
    assert sim.utilisation["cpu"].mean() == pytest.approx(float(CPU_MEAN), rel=1e-12)
    assert sim.unfinished == [] and sim.finished == 3 and sim.jobs == 3
    # DRF is SI, EF and PO at every step of this run: nothing flagged
    for tr in sim.properties.values():
        assert tr.flagged_steps == 0 and tr.time_ratio == 0


def test_csv_trace_with_a_cluster_file_is_the_same_run():
    a = load_job_trace(os.path.join(JOBS, "jobs.csv"), os.path.join(JOBS, "cluster.json"))
    sim = simulate(drf(), a, properties=())
    assert sorted((n, round(j, 9)) for n, _, _, j, _ in sim.jct) == sorted((n, round(float(v), 9)) for n, v in JCT.items())
    assert set(sim.shares) == {"j1", "j2", "j3"}  # no queues: a share series per job


def test_queues_get_a_share_series_each():
    trace = {"resources": ["cpu"], "servers": [{"name": "s", "capacity": [4]}],
             "queues": [{"name": "a"}, {"name": "b"}],
             "jobs": [{"arrival": 0, "tasks": 4, "duration": 1, "demand": [1], "queue": "a"},
                      {"arrival": 0, "tasks": 4, "duration": 1, "demand": [1], "queue": "b"}]}
    sim = simulate(lift(mechanisms.get("hdrf"), "recompute"), parse_job_trace(trace), properties=())
    # H-DRF splits the 4 cpus 2/2 between the two queues until both finish (4 work each at rate 2: t = 2)
    assert set(sim.shares) == {"a", "b"}
    assert sim.shares["a"].mean() == pytest.approx(0.5) and sim.end_time == pytest.approx(2)


def test_violation_time_ratio_and_exact_recheck():
    # DRFH is not SI on examples/001-drfh-not-si.json (tests/test_seed_cases.py derives it); as two jobs of 4 tasks
    # present from 0, the step with both present is flagged and the exact re-check confirms it
    trace = {"resources": ["cpu", "mem"],
             "servers": [{"name": "s1", "capacity": [1, 1]}, {"name": "s2", "capacity": [1, 2]}],
             "jobs": [{"arrival": 0, "tasks": 4, "duration": 10, "demand": [1, 2], "name": "u1"},
                      {"arrival": 0, "tasks": 4, "duration": 10, "demand": [2, 3], "name": "u2"}]}
    sim = simulate(lift(mechanisms.get("drfh"), "recompute"), parse_job_trace(trace), properties=("si",))
    si = sim.properties["si"]
    assert si.flagged_steps >= 1 and 0 < si.time_ratio < 1
    assert [r[3] for r in si.rechecks] == ["confirmed"] * len(si.rechecks)
    assert all(r[4] < 1 for r in si.rechecks)  # the exact SI-SAT
    # the irrevocable lift has memory: its re-check replays the run exactly
    sim2 = simulate(lift(mechanisms.get("drfh"), "irrevocable"), parse_job_trace(trace), properties=("si",))
    assert all(r[3] in ("confirmed", "not confirmed (holds exactly)") for r in sim2.properties["si"].rechecks)


# Tasks done by the end of a window (seed 001's task completion ratio, Fig. 8): one server (2 cpu, 2 mem), the run
# cut at end = 12; every task demands (1, 1), so the server runs two tasks at a time.
#  j1: 3 tasks of 10 (work 30) at 0;  j2: 1 task of 4 at 5;  j3: 2 tasks of 4 (work 8) at 11.
# Fluid model, whole-task First-Fit DRFH reallocated at every event (drfh-first-fit+recompute):
#  [0, 5)   j1 alone: 2 tasks (the server) -> rate 2;                       j1 done 10
#  [5, 9)   j1 and j2 at equal shares, a task each; j2's 4 done at 9 (JCT 4); j1 14
#  [9, 11)  j1 alone, 2 tasks;                                              j1 18
#  [11, 12) j1 and j3 a task each;                                          j1 19, j3 1
#  at 12: j1 floor(3 x 19 / 30) = floor(1.9) = 1 task, j2 finished (1), j3 floor(2 x 1 / 8) = 0: 2 of 6 tasks.
# Indivisible model without reallocation or overhead (drfh-first-fit+indivisible(slot=none,overhead=0)):
#  j1's first two tasks run on [0, 10) (j2 waits: no free room), complete at 10; then j1's last task and j2's run
#  from 10 (to 20 and 14); j3 waits from 11.  At 12: j1 2 tasks done, j2 0, j3 0: 2 of 6 tasks.
WINDOW_TRACE = {"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [2, 2]}], "end": 12,
                "jobs": [{"arrival": 0, "tasks": 3, "duration": 10, "demand": [1, 1], "name": "j1"},
                         {"arrival": 5, "tasks": 1, "duration": 4, "demand": [1, 1], "name": "j2"},
                         {"arrival": 11, "tasks": 2, "duration": 4, "demand": [1, 1], "name": "j3"}]}


@pytest.mark.parametrize("mech, finished, unfinished", [
    ("drfh-first-fit+recompute", {"j2": 4.0}, [("j1", 3, 0.0, 1), ("j3", 2, 11.0, 0)]),
    ("drfh-first-fit+indivisible(slot=none,overhead=0)", {}, [("j1", 3, 0.0, 2), ("j2", 1, 5.0, 0),
                                                              ("j3", 2, 11.0, 0)]),
])
def test_tasks_done_by_the_end_of_the_window(mech, finished, unfinished):
    from verifier.report.simulation import render_simulation_markdown, simulation_to_json

    sim = simulate(mechanisms.get(mech), parse_job_trace(WINDOW_TRACE), properties=())
    assert sim.end_time == 12
    assert {n: pytest.approx(j) for n, _, _, j, _ in sim.jct} == finished
    assert sim.unfinished == unfinished
    s = sim.jct_summary()
    assert (s["tasks"], s["tasks_done"]) == (6, 2)
    doc = simulation_to_json(sim)
    assert doc["unfinished_jobs"][0] == {"name": "j1", "tasks": 3, "arrival": 0.0, "tasks_done": unfinished[0][3]}
    assert "(2 of 6 tasks done by the end: 33.3%)" in render_simulation_markdown(sim)


def test_series_is_bounded_and_keeps_the_time_mean():
    s = Series(points=4, width=1.0)
    s.add(0, 1, 2.0)
    s.add(1, 3, 4.0)
    s.add(3, 100, 1.0)  # forces the buckets to merge: width 1 -> 32 (4 x 32 >= 100)
    assert len(s.area) == 4 and s.width == 32
    # (2 x 1 + 4 x 2 + 1 x 97) / 100
    assert s.mean() == pytest.approx(107 / 100)


def test_job_trace_errors_name_the_job():
    base = {"resources": ["cpu"], "servers": [{"name": "s", "capacity": [4]}], "queues": [{"name": "a"}]}

    def err(jobs, **kw):
        with pytest.raises(InstanceError) as e:
            parse_job_trace({**base, "jobs": jobs}, **kw)
        return str(e.value)

    job = {"arrival": 1, "tasks": 1, "duration": 1, "demand": [1]}
    assert err([job, {**job, "arrival": 0}]).startswith("jobs[1].arrival: 0 is before the previous job's arrival 1")
    assert err([{**job, "duration": 0}]).startswith("jobs[0].duration: must be > 0")
    assert err([{**job, "duration": -2}]).startswith("jobs[0].duration")
    assert err([{**job, "tasks": 1.5}]).startswith("jobs[0].tasks: expected a whole number")
    assert err([{**job, "queue": "zz"}]).startswith("jobs[0].queue: unknown queue 'zz'")
    assert err([job, job], max_jobs=1).startswith("jobs: too many jobs (2, limit 1")
    assert err([{**job, "demand": [1, 2]}]).startswith("jobs[0].demand")
    assert err([{**job, "colour": 1}]).startswith("jobs[0]: unknown field 'colour'")


def test_csv_errors_name_the_line(tmp_path):
    cluster = os.path.join(JOBS, "cluster.json")
    bad = tmp_path / "bad.csv"
    bad.write_text("arrival,tasks,duration,cpu,mem\n0,1,1,1,1\n0,1,-1,1,1\n")
    with pytest.raises(InstanceError, match=r"bad.csv: line 3, duration"):
        load_job_trace(str(bad), cluster)
    bad.write_text("arrival,tasks,duration,cpu\n0,1,1,1\n")
    with pytest.raises(InstanceError, match="line 1: missing column 'mem'"):
        load_job_trace(str(bad), cluster)
    with pytest.raises(InstanceError, match="needs a cluster"):
        load_job_trace(str(bad))


def test_loads_job_trace_round_trip():
    text = json.dumps({"resources": ["r"], "servers": [{"name": "s", "capacity": [2]}],
                       "jobs": [{"arrival": "1/3", "tasks": 2, "duration": "5/2", "demand": [1]}]})
    ex = loads_job_trace(text)
    (ev,) = ex.events
    assert ev.t == F(1, 3) and ev.spec.name == "j1" and ev.spec.work == 5 and ev.spec.tasks == 2


def test_po_screen_ignores_the_lp_solvers_noise():
    # TSF-ER is PO (seed 004 Table 2), but the float domination LP returns factors of 1 + 1e-9 .. 3e-9 for it: on
    # this seed004 trace (100 users, rho 0.5, seed 7) a 1e-9 screen flagged 153 of 199 steps (about 10% of the
    # time), none confirmed by the exact re-check.  The screen is the project's float tolerance (FLOAT_REL).
    import numpy as np

    from mechverify.workloads import get as get_workload
    from simulation.simulate import PROPERTIES

    assert not PROPERTIES["po"].violated(1 + 5e-9, exact=False) and PROPERTIES["po"].violated(1 + 1e-6, exact=False)
    assert PROPERTIES["po"].violated(F(1) + F(1, 10**12), exact=True)
    ex = parse_job_trace(get_workload("seed004").jobs(np.random.default_rng(7), users="100", rho="0.5"))
    sim = simulate(lift(mechanisms.get("tsf-er"), "recompute"), ex, properties=("po",), po_every=1)
    po = sim.properties["po"]
    assert po.judged_steps > 150 and po.flagged_steps == 0 and po.time_ratio == 0
    # a mechanism that is not PO there is still caught, and confirmed
    sim = simulate(lift(mechanisms.get("drf-mem"), "recompute"), ex, properties=("po",), po_every=5)
    po = sim.properties["po"]
    assert po.flagged_steps > 0 and po.time_ratio > 0.1
    assert "confirmed" in [r[3] for r in po.rechecks]


# ---------------------------------------------------------------------- the fast measures (issue 40)
def _fluid_trace(n_jobs: int, rate: float, seed: int) -> dict:
    """A fluid job trace of ``benchmarks/bench_simulate.py``'s kind: 1-20 tasks of <1-4, 0-8> % of one pool
    (some jobs demand no memory), 50-150 s per task, Poisson arrivals."""
    import random

    rng = random.Random(seed)
    jobs, t = [], 0.0
    for k in range(n_jobs):
        t += rng.expovariate(rate)
        jobs.append({"arrival": round(t, 3), "tasks": rng.randint(1, 20), "duration": rng.randint(50, 150),
                     "demand": [rng.randint(1, 4) / 100, rng.randint(0, 8) / 100], "name": f"j{k + 1}"})
    return {"resources": ["cpu", "mem"], "servers": [{"name": "pool", "capacity": [1, 1]}], "jobs": jobs}


def test_fast_measures_are_the_loops(monkeypatch):
    """``simulate``'s float shortcuts -- the utilisation from the usage array memoised on the allocation
    (``allocation.resource_totals``), the tasks waiting from the memoised row sums (``float_totals``), the work
    done accrued over numpy arrays (``_accrue``), and the stepping's own (``drf``'s batch allocator, the
    utilities in one pass, the work bookkeeping) -- give the run of every loop, to the bit: the whole
    ``Simulation.to_dict()`` but the seconds, on a trace where 0 to ~60 jobs are present."""
    import importlib

    A, U, S = (importlib.import_module(m) for m in ("mechverify.allocation", "mechverify.utility",
                                                    "simulation.simulate"))
    ex = parse_job_trace(_fluid_trace(240, 0.02, 3))

    def run_dict() -> dict:
        d = simulate(drf(), ex, properties=("si", "ef")).to_dict()
        d.pop("seconds")
        return d

    monkeypatch.setattr(A, "VECTOR_MIN", 0)  # every shortcut from one user on
    fast = run_dict()
    monkeypatch.setattr(A, "VECTOR_MIN", 10 ** 9)
    for mod in (A, U, S):
        monkeypatch.setattr(mod, "float_matrix", lambda a: None)
    slow = run_dict()
    assert repr(fast) == repr(slow)
    assert fast["steps"] > 400 and fast["jct"]["finished"] > 100
    assert max(p for _, p in fast["waiting"]["timeline"]) > 100  # many tasks waiting: a crowded pool


def test_share_series_are_every_steps_dominant_shares():
    """The job share series (the first ``users_shown`` jobs) are the time-weighted dominant shares of every step
    (``allocation.dominant_shares`` of each step's allocation, added as ``simulate`` adds them) -- also once every
    job shown has left, when ``simulate`` no longer computes them."""
    from mechanisms.core.time import stepper_for
    from mechverify.allocation import dominant_shares
    from mechverify.execution import run

    ex = parse_job_trace(_fluid_trace(120, 0.02, 4))
    sim = simulate(drf(), ex, properties=(), users_shown=6, points=50)
    width = float(ex.horizon) / 50
    ref: dict = {}
    after = 0  # steps where no job shown is present
    for st in run(ex, stepper_for(drf(), ex, False), exact=False):
        t0, t1 = float(st.t), float(st.until)
        if st.alloc is None or t1 <= t0:
            continue
        for k, v in dominant_shares(st.alloc).items():
            if k in ref or len(ref) < 6:
                ref.setdefault(k, Series(50, width)).add(t0, t1, float(v))
        after += len(ref) == 6 and not set(ref) & set(st.users)
    got = sim.to_dict()["shares"]
    assert list(got) == list(ref) and after > 100
    for k, s in ref.items():
        assert repr(got[k]["timeline"]) == repr(s.points_list()) and repr(got[k]["time_mean"]) == repr(s.mean())
