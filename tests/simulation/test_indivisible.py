"""The indivisible task model on the execution stepping (``NAME+indivisible``, ``mechanisms.core.indivisible``):
whole tasks completed by the stepper's own timer, reallocation slots, the suspend-resume overhead -- held equal to
the separate online TSF-ER simulator (``simulation.tsf_er_online``), and on hand-derived instances."""
from __future__ import annotations

from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.core.time import lift, split_lift, stepper_for
from mechverify.execution import parse_execution, run
from mechverify.instances import parse_environment
from mechverify.job_trace import parse_job_trace
from mechverify.numbers import InstanceError
from simulation import tsf_er_online as online
from simulation.simulate import simulate


def one_pool(cap, users):
    return parse_environment({"resources": ["r"], "servers": [{"name": "s", "capacity": [cap]}], "users": users})


def execution_of_jobs(env, arrival, duration):
    """The simulator's input as an execution: user j arrives at arrival[j] with its tasks of duration[j] each,
    in order of (arrival, index) -- the simulator's own order of arrivals."""
    events = []
    for j in sorted(range(env.n_users), key=lambda j: (F(arrival[j]), j)):
        u = {"name": env.users[j], "demand": [str(v) for v in env.demand[j]], "tasks": str(env.tasks[j]),
             "duration": str(duration[j])}
        if env.n_external:
            u["external_demand"] = [str(v) for v in env.external_demand[j]]
        if env.weight[j] != 1:
            u["weight"] = str(env.weight[j])
        events.append({"t": str(arrival[j]), "kind": "arrive", "user": u})
    data = {"resources": list(env.resources), "users": [], "events": events,
            "servers": [{"name": s, "capacity": [str(v) for v in c]} for s, c in zip(env.servers, env.capacity)]}
    if env.n_external:
        data["external"] = [{"name": k, "capacity": str(c)} for k, c in zip(env.external, env.external_capacity)]
    return parse_execution(data)


def completions(mech, ex, exact=True):
    """Each user's completion time: the derived finish by which it leaves."""
    out = {}
    for st in run(ex, stepper_for(mech, ex, exact), exact):
        ev = st.event
        if ev is not None and ev.kind == "finish" and ev.derived and ev.user not in st.users:
            out[ev.user] = st.t
    return out


def _slot_name(slot, overhead):
    return f"tsf-er-online+indivisible(slot={'none' if slot is None else slot},overhead={overhead})"


# the instances of tests/simulation/test_tsf_er_online.py, then seeded synthetic workloads (seed 004 Sec. 6.2 shape)
def _two_jobs():
    return one_pool(2, [{"name": "A", "demand": [1], "tasks": 2}, {"name": "B", "demand": [1], "tasks": 2}])


def _three_jobs():
    return one_pool(2, [{"name": "A", "demand": [1], "tasks": 2}, {"name": "B", "demand": [1], "tasks": 1},
                        {"name": "C", "demand": [1], "tasks": 1}])


def _instances():
    yield "two-jobs", _two_jobs(), [0, 5], [10, 4], None, 0
    yield "two-jobs-slot", _two_jobs(), [0, 5], [10, 4], 4, 1
    yield "simultaneous", _three_jobs(), [0, 5, 10], [10, 4, 3], None, 0
    env, _arrival, duration = online.synthetic_workload(seed=3, total_tasks=60, n_users=6)
    yield "all-at-zero", env, [0] * env.n_users, duration, 256, "1/4"
    for seed in (7, 8, 11, 19):
        env, arrival, duration = online.synthetic_workload(seed=seed, total_tasks=150, n_users=10, mean_interarrival=30)
        for slot, overhead in ((None, 0), (256, "1/4"), (60, "1/4"), (32, 3)):
            yield f"synthetic-{seed}-{slot}-{overhead}", env, arrival, duration, slot, overhead


@pytest.mark.parametrize("label,env,arrival,duration,slot,overhead", list(_instances()),
                         ids=[i[0] for i in _instances()])
def test_indivisible_stepping_holds_the_tsf_er_online_simulator_equal(label, env, arrival, duration, slot, overhead):
    """HELD EQUAL: ``tsf-er-online`` lifted ``indivisible`` and stepped by ``mechverify.execution.run`` completes
    every user at exactly the time (a rational) the separate simulator ``simulation.tsf_er_online.simulate``
    does, so every JCT is equal; the float run gives the same numbers.  (Both order ties by the users' arrival:
    the simulator by index, the stepping by position among the present users; these instances arrive in index
    order.)"""
    res = online.simulate(env, arrival, duration, slot=slot, overhead=overhead)
    mech = mechanisms.get(_slot_name(slot, overhead))
    ex = execution_of_jobs(env, arrival, duration)
    got = completions(mech, ex)
    assert [got[u] for u in env.users] == res.completion
    assert [got[u] - F(a) for u, a in zip(env.users, arrival)] == res.jct
    assert all(isinstance(t, F) for t in got.values())
    floats = completions(mech, ex, exact=False)
    assert [floats[u] for u in env.users] == [float(t) for t in res.completion]


@pytest.mark.parametrize("slot,overhead", [(None, 0), (4, 1)])
def test_simulate_whole_task_model_gives_the_simulators_jcts_and_jct_factors(slot, overhead):
    # the job trace of the two-jobs instance through simulation.simulate: JCTs and JCT factors (standalone: the
    # same model, the job alone from its arrival) as simulation.tsf_er_online's jct_factors
    trace = parse_job_trace({"resources": ["r"], "servers": [{"name": "s", "capacity": [2]}],
                             "jobs": [{"arrival": 0, "tasks": 2, "duration": 10, "demand": [1], "name": "A"},
                                      {"arrival": 5, "tasks": 2, "duration": 4, "demand": [1], "name": "B"}]})
    res = online.simulate(_two_jobs(), [0, 5], [10, 4], slot=slot, overhead=overhead)
    factors = online.jct_factors(res, slot=slot, overhead=overhead)
    sim = simulate(mechanisms.get(_slot_name(slot, overhead)), trace, properties=())
    rows = {name: (jct, f) for name, _n, _a, jct, f in sim.jct}
    assert [rows[u][0] for u in ("A", "B")] == [float(v) for v in res.jct]
    assert [rows[u][1] for u in ("A", "B")] == pytest.approx([float(v) for v in factors], rel=1e-12)


def test_synthetic_workload_jct_factors_equal():
    env, arrival, duration = online.synthetic_workload(seed=5, total_tasks=80, n_users=6, mean_interarrival=20)
    res = online.simulate(env, arrival, duration, slot=64, overhead="1/4")
    factors = online.jct_factors(res, slot=64, overhead="1/4")
    sim = simulate(mechanisms.get(_slot_name(64, "1/4")), execution_of_jobs(env, arrival, duration), properties=())
    rows = {name: (jct, f) for name, _n, _a, jct, f in sim.jct}
    assert [rows[u][0] for u in env.users] == [float(v) for v in res.jct]
    assert [rows[u][1] for u in env.users] == pytest.approx([float(v) for v in factors], rel=1e-12)


# ---------------------------------------------------------------------- hand-derived, a generic mechanism
HAND = {"resources": ["r"], "servers": [{"name": "s", "capacity": [2]}], "users": [],
        "events": [{"t": 0, "kind": "arrive", "user": {"name": "A", "demand": [1], "tasks": 2, "duration": 10}},
                   {"t": 3, "kind": "arrive", "user": {"name": "B", "demand": [1], "tasks": 1, "duration": 4}}]}


def test_drf_whole_tasks_slot_boundaries_and_overhead_by_hand():
    """DRF lifted indivisible, slot 5, overhead 1; one server with 2 of one resource.  DRF has no task rule of its
    own: it allocates the residual capacity to the residual task bounds, rounded down.
    t=0   A arrives; a boundary with activity: reallocation, DRF gives A both units: tasks a0, a1 finish at 10.
    t=3   B arrives; no boundary: free capacity only -- none.  Timer: min(10, next boundary 5) = 5.
    t=5   boundary, activity (B's arrival): a0 and a1 suspended, 5 left + 1 overhead = 6 each; DRF from scratch
          gives A 1 and B 1: a0 resumes (finish 11), B's task starts (finish 9).
    t=9   B's task completes: B leaves, JCT 9 - 3 = 6.  Free capacity: a1 resumes (6 left): finish 15.
    t=10  boundary, activity: a0 (1 left + 1 = 2) and a1 (5 left + 1 = 6) suspended and resumed: finish 12, 16.
    t=12  a0 completes (A's bound 2 -> 1).  Nothing waits.  Timer: min(16, boundary 15) = 15.
    t=15  boundary, activity: a1 suspended (1 left + 1 = 2), resumed: finish 17.
    t=17  A's last task completes: A leaves, JCT 17."""
    ex = parse_execution(HAND)
    mech = mechanisms.get("drf+indivisible(slot=5,overhead=1)")
    steps = list(run(ex, stepper_for(mech, ex, True), True))
    timeline = [(st.t, st.event.describe() if st.event else "start", tuple(sum(r) for r in st.alloc.x))
                for st in steps if st.alloc is not None]
    assert timeline == [
        (0, "arrive A (1)", (2,)), (3, "arrive B (1)", (2, 0)), (5, "wake", (1, 1)),
        (9, "finish B (1 tasks done)", (2,)), (10, "wake", (2,)), (12, "finish A (1 tasks done)", (1,)),
        (15, "wake", (1,)),
    ]
    assert completions(mech, ex) == {"B": 9, "A": 17}
    assert steps[-1].t == 17 and steps[-1].alloc is None and steps[-1].event.describe() == "finish A (1 tasks done)"


def test_without_slots_nothing_is_taken_back_by_hand():
    # slot none: A keeps both units until 10 (no reallocation); B starts at 10 and finishes at 14 (JCT 11)
    ex = parse_execution(HAND)
    assert completions(mechanisms.get("drf+indivisible(slot=none,overhead=1)"), ex) == {"A": 10, "B": 14}


def test_tsf_er_online_rule_by_hand():
    """tsf-er-online (its own rule: AllocateFromQueues) on the same trace, slot 5, overhead 1.  eta_A = eta_B = 2.
    t=0  reallocation: A twice (a0, a1: finish 10).  t=3: B waits.
    t=5  boundary: both suspended (6 left each); A (tie at share 0, A first: it arrived first), B (0 < 1/2):
         a0 finishes 11, B finishes 9.
    t=9  B done (JCT 6); A (share 1/2, alone waiting) resumes a1: finish 15.
    t=10 boundary: a0 (2 left) -> 12, a1 (6 left) -> 16.  t=12 a0 done.  t=15: a1 (2 left) -> 17."""
    ex = parse_execution(HAND)
    assert completions(mechanisms.get("tsf-er-online+indivisible(slot=5,overhead=1)"), ex) == {"B": 9, "A": 17}


def test_a_capacity_drop_suspends_and_a_lowered_bound_drops_waiting_tasks_first():
    # A: 3 tasks of 10 on 2 units.  t=4: the server shrinks to 1 unit -> both running tasks suspended (6 left +
    # overhead 1 = 7); no slots, so free capacity: a0 resumes, finish 11.  t=5: A's bound drops to 2 -- the
    # never-started a2 goes first, then the suspended a1: A runs a0 only, completes at 11 with its last task.
    ex = parse_execution({
        "resources": ["r"], "servers": [{"name": "s", "capacity": [2]}],
        "users": [{"name": "A", "demand": [1], "tasks": 3, "duration": 10}],
        "events": [{"t": 4, "kind": "capacity", "server": "s", "capacity": [1]},
                   {"t": 5, "kind": "finish", "user": "A", "tasks": 2}]})
    mech = mechanisms.get("drf+indivisible(slot=none,overhead=1)")
    steps = list(run(ex, stepper_for(mech, ex, True), True))
    assert [(st.t, tuple(sum(r) for r in st.alloc.x)) for st in steps if st.alloc is not None] == \
        [(0, (2,)), (4, (1,)), (5, (1,))]
    assert completions(mech, ex) == {"A": 11}


def test_zero_task_user_leaves_at_once_and_a_user_without_duration_runs_on():
    ex = parse_execution({
        "resources": ["r"], "servers": [{"name": "s", "capacity": [2]}], "end": 20, "events": [],
        "users": [{"name": "Z", "demand": [1], "tasks": 0, "duration": 3}, {"name": "S", "demand": [1], "tasks": 1}]})
    steps = list(run(ex, stepper_for(mechanisms.get("drf+indivisible"), ex, True), True))
    assert steps[1].event.describe() == "finish Z (work done)" and steps[1].t == 0
    assert steps[-1].users == ("S",) and steps[-1].until == 20  # its task never completes on its own


def test_names_parameters_and_refusals():
    m = mechanisms.get("drf+indivisible")
    assert m.time.kind == "indivisible" and m.setting.dynamic and m.name == "drf+indivisible"
    assert split_lift("drf+indivisible(slot=64,overhead=0)") == ("drf", "indivisible(slot=64,overhead=0)")
    m2 = mechanisms.get("drf+indivisible(overhead=1/4,slot=256)")  # the defaults: the canonical short name
    assert m2.name == "drf+indivisible"
    m3 = lift(mechanisms.get("drf"), "indivisible(slot=none)")
    assert m3.name == "drf+indivisible(slot=none,overhead=1/4)" and mechanisms.get(m3.name).name == m3.name
    for bad, msg in (("drf+indivisible(slot=0)", "^slot: must be > 0"), ("drf+indivisible(slot=x)", "^slot:"),
                     ("drf+indivisible(overhead=-1)", "^overhead:"), ("drf+indivisible(speed=2)", "^lift:")):
        with pytest.raises(InstanceError, match=msg):
            mechanisms.get(bad)
    ex = parse_execution({"resources": ["r"], "servers": [{"name": "s", "capacity": [2]}],
                          "users": [{"name": "W", "demand": [1], "work": 5}], "events": []})
    with pytest.raises(InstanceError, match=r"^users\[0\]\.work: the whole-task model needs a per-task duration"):
        stepper_for(m, ex, True)


def test_a_mechanism_that_cannot_allocate_a_residual_with_room_fails_loudly():
    # cru computes EF under task bounds by enumeration, for at most 10 users whose bound can bind: with 12
    # one-task jobs beside a 1000-task one on a server with room for 100 tasks it raises SettingError.  The residual rule used to read
    # every SettingError as "an exhausted server" and start nothing: all 13 jobs starved silently (the run ended
    # with 13 unfinished jobs and an idle cluster).  Now the refusal surfaces.
    from mechanisms.core.mechanism import SettingError

    trace = {"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [1, 1]}],
             "jobs": [{"arrival": 0, "tasks": 1, "duration": 10, "demand": ["1/100", "1/100"], "name": f"j{i}"}
                      for i in range(12)]
             + [{"arrival": 0, "tasks": 1000, "duration": 10, "demand": ["1/100", "1/100"], "name": "big"}]}
    with pytest.raises(SettingError, match="at most 10 users"):
        simulate(lift(mechanisms.get("cru"), "indivisible"), parse_job_trace(trace), properties=())
    # without the 1000-task job every bound fits at once: cru allocates and all 12 finish
    trace["jobs"] = trace["jobs"][:12]
    sim = simulate(lift(mechanisms.get("cru"), "indivisible"), parse_job_trace(trace), properties=())
    assert sim.finished == 12 and not sim.unfinished


def test_a_refusal_counts_as_loud_only_where_the_user_may_run():
    # a rule refusing every residual: on a residual where u's task fits only on server b, where u is not eligible,
    # the refusal is an exhausted residual for u (nothing starts); once u may run on b, the refusal raises
    from dataclasses import replace

    from mechanisms.core.indivisible import residual_rule
    from mechanisms.core.mechanism import SettingError
    from mechanisms.core.registry import builtin

    def refuse(env, exact=False):
        raise SettingError("refuses every residual")

    mech = builtin("refuser", "refuses", refuse, mechanisms.get("drfh-first-fit").setting)
    env = parse_environment({"resources": ["cpu"], "servers": [{"name": "a", "capacity": [1]},
                                                               {"name": "b", "capacity": [1]}],
                             "users": [{"name": "u", "demand": [1], "eligible": ["a"]}]})
    rule = residual_rule(mech)
    assert rule(env, ((1, 0),)) == []  # a is full; b has room but u may not run there
    with pytest.raises(SettingError, match="refuses every residual"):
        rule(replace(env, eligible=(frozenset({0, 1}),)), ((1, 0),))


@pytest.mark.parametrize("name", ["drfh-first-fit", "drfh-best-fit"])
def test_a_group_over_several_servers_loses_only_the_tasks_on_a_shrunk_server(name):
    # A: 2 tasks of 10 on servers s1 and s2 of 1 unit each.  t=0: the rule starts a0 on s1 and a1 on s2 -- one
    # group (started together, one finish at 10).  t=4: s2 shrinks to 0: only a1 is suspended (6 left + overhead
    # 1 = 7), a0 runs on and completes at 10; then a1 resumes on s1: finish 10 + 7 = 17.  (Suspending the whole
    # group would resume a0 at 4 -> 11, then a1 -> 18.)
    ex = parse_execution({
        "resources": ["r"], "servers": [{"name": "s1", "capacity": [1]}, {"name": "s2", "capacity": [1]}],
        "users": [{"name": "A", "demand": [1], "tasks": 2, "duration": 10}],
        "events": [{"t": 4, "kind": "capacity", "server": "s2", "capacity": [0]}]})
    mech = mechanisms.get(f"{name}+indivisible(slot=none,overhead=1)")
    steps = list(run(ex, stepper_for(mech, ex, True), True))
    assert [(st.t, st.alloc.x[0]) for st in steps if st.alloc is not None][:3] == \
        [(0, (1, 1)), (4, (1, 0)), (10, (1, 0))]
    assert completions(mech, ex) == {"A": 17}


def test_a_lowered_bound_keeps_a_groups_lowest_tasks_where_they_run():
    # A: 3 tasks of 10, one on each of s1, s2, s3 -- one group.  t=5: A's bound drops by 2 (to 1): its highest
    # indices go (a2 on s3, a1 on s2), a0 runs on on s1 and completes at 10.
    ex = parse_execution({
        "resources": ["r"], "servers": [{"name": f"s{k}", "capacity": [1]} for k in (1, 2, 3)],
        "users": [{"name": "A", "demand": [1], "tasks": 3, "duration": 10}],
        "events": [{"t": 5, "kind": "finish", "user": "A", "tasks": 2}]})
    mech = mechanisms.get("drfh-first-fit+indivisible(slot=none,overhead=1)")
    steps = list(run(ex, stepper_for(mech, ex, True), True))
    assert [(st.t, st.alloc.x[0]) for st in steps if st.alloc is not None][:2] == [(0, (1, 1, 1)), (5, (1, 0, 0))]
    assert completions(mech, ex) == {"A": 10}


@pytest.mark.parametrize("name", ["drfh-best-fit", "cdrf"])
def test_a_job_alone_in_waves_reuses_the_waves_of_a_job_alike(name):
    # without reallocation a job alone runs in waves (Stepper.waves_alone): 5 tasks of 1 cpu on 2 servers of 2 cpu
    # run 4, then 1 -- 2 waves whatever the arrival and the per-task duration, so it finishes at arrival + 2 x
    # duration.  Jobs alike but for those reuse the waves (DRFH's own rule; cdrf: the generic residual rule); the
    # JCTs are those of each job's own run, bit for bit (arrivals in thirds: float(at + 2d) - float(at) is not 2d)
    from simulation.simulate import _Standalone

    trace = {"resources": ["cpu"], "servers": [{"name": "a", "capacity": [2]}, {"name": "b", "capacity": [2]}],
             "jobs": [{"arrival": "1/3", "tasks": 5, "duration": 10, "demand": [1], "name": "j0"},
                      {"arrival": "7/3", "tasks": 5, "duration": "1/7", "demand": [1], "name": "j1"},
                      {"arrival": "10/3", "tasks": 4, "duration": 3, "demand": [1], "name": "j2"},
                      {"arrival": "1000001/3", "tasks": 5, "duration": "13/11", "demand": [1], "name": "j3"}]}
    ex = parse_job_trace(trace)
    mech = lift(mechanisms.get(name), "indivisible(slot=none,overhead=0)")
    arrivals = [(e.t, e.spec) for e in ex.events if e.kind == "arrive"]
    env = next(st for st in run(ex, stepper_for(mech, ex, False), exact=False) if st.env is not None).env
    reused, alone = _Standalone(mech), _Standalone(mech)
    alone.waves = False  # (every job run alone)
    got = [reused.jct(ex, spec, env, at) for at, spec in arrivals]
    assert got == [alone.jct(ex, spec, env, at) for at, spec in arrivals]
    third = [F(1, 3), F(7, 3), F(10, 3), F(1000001, 3)]
    assert got == [float(at + k * d) - float(at) for at, k, d in zip(third, (2, 2, 1, 2), (10, F(1, 7), 3, F(13, 11)))]
    assert got[1] != 2 / 7  # (the subtraction's rounding kept)
    assert reused.waves is True and reused.runs == 2 and alone.runs == 4  # j1 and j3 reused j0's waves
    # with reallocation slots a job alone is suspended at the boundaries: no waves, every job run
    slotted = _Standalone(lift(mechanisms.get(name), "indivisible(slot=4,overhead=1)"))
    for at, spec in arrivals:
        slotted.jct(ex, spec, env, at)
    assert slotted.waves is False and slotted.runs == 4
