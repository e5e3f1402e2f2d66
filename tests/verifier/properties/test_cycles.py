"""The property ``cycles`` (src/verifier/properties/cycles.py): a repeated state with preemptions between while
only rounds happen, found by the search over traces (quiet rounds at the end of every trace) and re-checked by
an exact replay."""
from __future__ import annotations

from fractions import Fraction as F

from mechverify.allocation import Allocation
from mechverify.execution import Event, Execution, UserSpec
from mechanisms.core.mechanism import Setting
from mechanisms.core.registry import builtin, get
from mechanisms.core.time import TimeSpec, execute, one_shot
from verifier.engines.traces import TraceSpec, minimise, search_traces, with_quiet_rounds
from verifier.properties import PROPERTIES
from verifier.results import Verdict

CYCLES = PROPERTIES["cycles"]


class _Turns:
    """At every round the one resource changes hands between the first two users (``steady``: it stays with the
    first); its memory is whose turn it is."""

    def __init__(self, steady: bool) -> None:
        self.turn, self.steady = 0, steady

    def step(self, ctx) -> Allocation:
        env, exact = ctx.env, ctx.exact
        if not self.steady and (ctx.event is None or ctx.event.kind == "round"):
            self.turn = 1 - self.turn
        holder = min(self.turn, env.n_users - 1)
        x = []
        for j in range(env.n_users):
            n = F(0)
            if j == holder:
                fits = [c / d for c, d in zip(env.capacity[0], env.demand[j]) if d > 0]
                n = min(fits + ([env.tasks[j]] if env.tasks[j] is not None else []))
            x.append((n if exact else float(n),) + (F(0) if exact else 0.0,) * (env.n_servers - 1))
        return Allocation(env, tuple(x), "turns", exact)

    def state_key(self):
        return self.turn


def _turns(steady: bool = False):
    begin = lambda mech, ex, exact: _Turns(steady)  # noqa: E731
    name = "steady-turns" if steady else "turns"
    return builtin(name, "the resource changes hands every round", one_shot(begin, name),
                   Setting(single_server=True, placement=False, weights=False),
                   time=TimeSpec(begin=begin, rounds=True, model="alternates the holder at every round"))


SPEC = TraceSpec(seed=3, budget=10.0, max_trials=40)


def test_the_planted_loop_is_found_rechecked_and_minimised():
    mech = _turns()
    res = search_traces(mech, CYCLES, "preemptions", SPEC)
    assert res.verdict is Verdict.VIOLATED and "quiet rounds" in res.domain
    cert = res.certificate
    assert cert.measure > 0 and cert.witness.execution is not None
    again = CYCLES.recheck(mech, cert.witness)  # the certificate is the exact replay's
    assert again is not None and again.measure == cert.measure
    small, record = minimise(mech, cert, budget=5.0)
    ex = small.witness.execution
    assert record["one_minimal"] and [e.kind for e in ex.events] == ["round", "round"]
    # the smallest numbers keep one preemption per turn: u1 has no task, u2 one and loses it every other round
    assert [u.tasks for u in ex.users] == [0, 1] and ex.capacity == ((1,),) and small.measure == 1
    steps = execute(mech, ex)
    assert [st.alloc.x for st in steps] == [((0,), (1,)), ((0,), (0,)), ((0,), (1,))]
    j = CYCLES.judge(mech, ex, "preemptions", steps, True)
    assert j.violated and (j.step, j.users, j.per_step) == (2, ("u2",), [1, 1, 1])


def test_a_recomputing_mechanism_does_not_cycle():
    ex = with_quiet_rounds(Execution(
        ("r1", "r2"), ("s1",), ((F(6), F(6)),), (UserSpec("u1", (F(1), F(2))), UserSpec("u2", (F(2), F(1)))),
        (Event(F(1), "arrive", "u3", spec=UserSpec("u3", (F(1), F(1)))), Event(F(2), "leave", "u1"))))
    mech = get("drf+recompute")
    steps = execute(mech, ex)
    j = CYCLES.judge(mech, ex, "preemptions", steps, True)
    assert j.measure == 0 and not j.violated
    # from the leave on only rounds happen: the state of that step repeats at once, nothing taken from anyone
    assert j.per_step == [None, None] + [0] * 5


def test_the_steady_mutant_is_not_refuted():
    res = search_traces(_turns(steady=True), CYCLES, "preemptions", SPEC)
    assert res.verdict is Verdict.NOT_REFUTED and res.trials > 0
