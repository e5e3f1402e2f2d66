"""Executions (mechverify.execution): the format, its one-line rejections, stepping, utility over time,
and the two lifts of a one-shot mechanism (mechanisms.core.time)."""
import json
from fractions import Fraction as F

import pytest

from mechverify.execution import MAX_EVENTS, cumulative, load_execution, parse_execution, loads_execution, run
from mechverify.trace_deviations import Statement, TraceMisreport
from mechverify.numbers import InstanceError
from mechanisms.core.registry import get
from mechanisms.core.time import execute, lift

EXAMPLE = "examples/traces/drf-arrivals.json"


def base(**kw):
    d = {"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [9, 18]}],
         "users": [{"name": "A", "demand": [1, 4]}], "events": []}
    d.update(kw)
    return d


def totals(steps):
    return [tuple(st.alloc.totals()) if st.alloc is not None else () for st in steps]


def test_example_recompute_by_hand():
    """DRF recomputed at every event on 9 CPU / 18 GB (hand derivation):
    A alone (1, 4): memory binds, 18/4 = 9/2 tasks.  A + B (3, 1): equal dominant shares 4a/18 = 3b/9 with
    a + 3b = 9 (cpu) -> a = 3, b = 2.  A + B + C (1, 1): 2a/9 = b/3 = c/9 with cpu a + 3b + c = 9 ->
    a = 9/5, b = 6/5, c = 18/5.  B + C: b/3 = c/9, 3b + c = 9 -> b = 3/2, c = 9/2."""
    ex = load_execution(EXAMPLE)
    steps = execute(get("drf+recompute"), ex)
    assert totals(steps) == [(F(9, 2),), (3, 2), (F(9, 5), F(6, 5), F(18, 5)), (F(3, 2), F(9, 2))]
    assert [st.t for st in steps] == [0, 10, 20, 30] and steps[-1].until == 40
    # cumulative utility: A 10*(9/2 + 3 + 9/5) = 93; B 10*(2 + 6/5 + 3/2) = 47; C 10*(18/5 + 9/2) = 81
    assert cumulative(steps) == {"A": 93, "B": 47, "C": 81}


def test_irrevocable_never_takes_back():
    """The irrevocable lift: A took all memory at time 0, so B and C get nothing while A stays; when A leaves the
    residual is the whole cluster (as recompute's last step)."""
    steps = execute(get("drf+irrevocable"), load_execution(EXAMPLE))
    assert totals(steps) == [(F(9, 2),), (F(9, 2), 0), (F(9, 2), 0, 0), (F(3, 2), F(9, 2))]
    for a, b in zip(steps, steps[1:]):
        for u in set(a.users) & set(b.users):
            if b.event.kind != "demand":
                assert b.alloc.total(b.users.index(u)) >= a.alloc.total(a.users.index(u))


def test_work_finishes_and_leaves():
    """A user with work 9 (task-seconds) alone runs 9/2 tasks: it finishes at t = 2 and leaves (derived)."""
    ex = parse_execution(base(users=[{"name": "A", "demand": [1, 4], "work": 9}], end=5))
    steps = execute(get("drf+recompute"), ex)
    assert steps[1].event.kind == "finish" and steps[1].event.derived and steps[1].t == 2
    assert steps[1].alloc is None and cumulative(steps) == {"A": 9}


def test_duration_is_tasks_times_duration():
    ex = parse_execution(base(users=[{"name": "A", "demand": [1, 4], "tasks": 2, "duration": 3}]))
    assert ex.users[0].work == 6


def test_round_trip_and_misreport():
    ex = load_execution(EXAMPLE)
    assert parse_execution(json.loads(json.dumps(ex.to_dict()))) == ex
    dev = TraceMisreport("B", (Statement("events[0]", (F(3), F(2))),))
    assert TraceMisreport.from_dict(dev.to_dict(), ex) == dev
    steps = execute(get("drf+recompute"), ex, deviation=dev)
    # B reports (3, 2): the mechanism sees it, B's utility is measured in its true demand (3, 1)
    assert steps[1].env.demand[1] == (3, 2) and steps[1].true_env.demand[1] == (3, 1)


@pytest.mark.parametrize("events,fragment", [
    ([{"t": 1, "kind": "leave", "user": "A"}, {"t": 2, "kind": "leave", "user": "A"}],
     "events[1].user: leave for 'A', who is not present (it left before)"),
    ([{"t": 1, "kind": "demand", "user": "Z", "demand": [1, 1]}],
     "events[0].user: demand for 'Z', who is not present (no such user has arrived)"),
    ([{"t": 2, "kind": "round"}, {"t": 1, "kind": "round"}], "events[1].t: 1 is before the previous event's time 2"),
    ([{"t": float("nan"), "kind": "round"}], "events[0].t: must be a finite number"),
    ([{"t": -1, "kind": "round"}], "events[0].t: must be >= 0"),
    ([{"t": 2e9, "kind": "round"}], "events[0].t: 2000000000.0 is out of range"),
    ([{"t": 1, "kind": "explode"}], "events[0].kind: expected one of arrive"),
    ([{"t": 1, "kind": "arrive", "user": {"name": "A", "demand": [1, 1]}}], "'A' is already a user"),
    ([{"t": 1, "kind": "capacity", "server": "s1", "capacity": None}], "'s1' is the last server"),
    ([{"t": 1, "kind": "finish", "user": "A", "tasks": 2}], "events[0] (finish at t=1): finish: 2 tasks of 'A' complete"),
    ([{"t": 1, "kind": "leave", "user": "A", "demand": [1, 1]}], "events[0]: unknown field 'demand'"),
])
def test_hostile_traces_one_line(events, fragment):
    with pytest.raises(InstanceError) as exc:
        parse_execution(base(events=events))
    assert fragment in str(exc.value) and "\n" not in str(exc.value)


def test_too_many_events_before_reading_them():
    with pytest.raises(InstanceError, match="too many events"):
        parse_execution(base(events=[None] * (MAX_EVENTS + 1)))


def test_nan_literal_in_text():
    with pytest.raises(InstanceError, match="t"):
        loads_execution(json.dumps(base(events=[{"t": 1, "kind": "round"}])).replace('"t": 1', '"t": NaN'))


def test_lift_names_and_refusals():
    m = get("drf+irrevocable")
    assert m.name == "drf+irrevocable" and m.setting.dynamic and m.time.kind == "irrevocable" and not m.time.revocable
    with pytest.raises(InstanceError, match="itself"):
        lift(m, "recompute")


def test_servers_come_and_go():
    """DRFH (multi-server) as servers come and go: a second server (9, 18) appears at t=1 -- A alone then runs 9
    tasks (memory 36/4) --, and disappears at t=2."""
    ex = parse_execution(base(events=[{"t": 1, "kind": "capacity", "server": "s2", "capacity": [9, 18]},
                                      {"t": 2, "kind": "capacity", "server": "s2", "capacity": None}]))
    assert totals(execute(get("drfh+recompute"), ex)) == [(F(9, 2),), (9,), (F(9, 2),)]


def test_schema_shares_the_instance_definitions_and_accepts_the_examples():
    from jsonschema import Draft202012Validator

    from mechverify.execution import execution_schema
    from mechverify.instances import instance_schema

    ex, inst = execution_schema(), instance_schema()
    Draft202012Validator.check_schema(ex)
    for name, definition in inst["$defs"].items():  # one definition of an instance's parts
        assert ex["$defs"][name] == definition, name
    v = Draft202012Validator(ex)
    assert not list(v.iter_errors(json.load(open(EXAMPLE))))
    bad = json.load(open(EXAMPLE))
    bad["events"][0]["kind"] = "explode"
    assert list(v.iter_errors(bad))


def test_a_float_run_stopped_early_leaves_validation_on():
    # a float run defers the validation of the environments it builds; a caller that stops iterating (a budget)
    # must not leave every later environment of the process unvalidated (the deferral was held across yields)
    import mechanisms
    from mechanisms.core.time import lift, stepper_for
    from mechverify.job_trace import parse_job_trace
    from mechverify.model import Environment
    from mechverify.numbers import InstanceError

    ex = parse_job_trace({"resources": ["r"], "servers": [{"name": "s", "capacity": [2]}],
                          "jobs": [{"arrival": k, "tasks": 1, "duration": 5, "demand": [1]} for k in range(5)]})
    steps = run(ex, stepper_for(lift(mechanisms.get("drf"), "recompute"), ex, False), exact=False)
    next(steps), next(steps)  # suspended mid-run
    with pytest.raises(InstanceError, match="must be >= 0"):
        Environment(resources=("r",), servers=("s",), capacity=((F(-1),),), users=("u",), demand=((F(1),),))
