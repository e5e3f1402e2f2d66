"""The time facet: how a mechanism steps through an execution (``mechverify.execution``; docs/executions.md).

A mechanism with memory declares ``register(..., time=TimeSpec(begin=...))``: ``begin(mech, execution, exact)``
returns a fresh stepper (``mechverify.execution.Stepper``) holding the mechanism's state for one run.  Every
one-shot mechanism lifts in three documented ways (:func:`lift`, and the names ``MECH+recompute`` /
``MECH+irrevocable`` / ``MECH+indivisible`` anywhere a mechanism is named):

* ``recompute``   -- at every step, the one-shot mechanism allocates the present users from scratch; what a
  user held may be taken back;
* ``irrevocable`` -- a present user's allocation never decreases while its own report is unchanged: the
  one-shot mechanism allocates the RESIDUAL capacity (what the present users hold is taken off every server
  and external resource) to the present users' residual demands (their task bounds less what they hold),
  and that is added to what they hold (Kash, Procaccia and Shah 2014's construction for arrivals).
  Conventions beyond arrivals (stated, docs/executions.md): a user whose report changes gives back what it
  holds and is allocated afresh; a finish beyond what a user holds trims its tasks pro rata over servers (a
  whole-task mechanism: whole tasks, the last server's first, down to the bound's whole part); a server
  whose capacity drops below what is held on it (or disappears) releases everything held there;
* ``indivisible`` -- whole tasks of the users' declared durations, completed by the stepper itself, reallocated
  from scratch at slot boundaries (suspended tasks pay an overhead), else free capacity only
  (``mechanisms.core.indivisible``; ``NAME+indivisible(slot=S,overhead=O)``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Callable, Optional

from mechverify.allocation import Allocation
from mechverify.execution import Execution, Step, StepContext, Stepper, run
from mechverify.trace_deviations import TraceMisreport, TraceResubmission
from mechverify.model import Environment
from mechverify.numbers import InstanceError, fmt_exact

from .indivisible import Indivisible, indivisible_name, parse_indivisible
from .mechanism import Mechanism, SettingError, call

__all__ = ["TimeSpec", "LIFTS", "lift", "stepper_for", "execute", "split_lift", "one_shot"]

#: the ways a one-shot mechanism lifts to executions (module docstring); ``indivisible`` takes parameters,
#: ``indivisible(slot=S,overhead=O)`` (``mechanisms.core.indivisible``)
LIFTS = ("recompute", "irrevocable", "indivisible")


@dataclass(frozen=True)
class TimeSpec:
    """A mechanism's time facet.  ``begin(mech, execution, exact) -> Stepper``; ``kind``: ``"recompute"``,
    ``"irrevocable"`` (the lifts) or ``"stateful"`` (a mechanism with its own memory); ``rounds``: it allocates
    at ``round`` events only (the allocation is held within a quantum); ``revocable``: it may take back what a
    present user holds; ``model``: one line on its time model (``list`` prints it); ``guarantee``: the fraction
    of its fair share a user is guaranteed in every round (a per-round mechanism's isolation guarantee, e.g.
    Karma's alpha, per-round max-min's 1; ``None``: none declared) -- what a property over rounds may read;
    ``round_z3``: the round rule the z3 engine encodes one round of a round mechanism with (a name of
    ``verifier.engines.smt.traces.ROUND_RULES``; ``""``: none) -- bounded certificates over traces (docs/z3.md);
    ``usage_ordered``: it orders TENANTS (the users' queues) within a scope by their past usage and records, per
    step, the candidates it tried in order as ``alloc.info["decisions"]`` -- tuples ``(user, tenant, scope,
    admitted)`` -- what ``usage-ignored`` reads."""

    begin: Callable[[Mechanism, Execution, bool], Stepper]
    kind: str = "stateful"
    rounds: bool = False
    revocable: bool = True
    model: str = ""
    guarantee: Optional[Fraction] = None
    round_z3: str = ""
    usage_ordered: bool = False


# ---------------------------------------------------------------------- the two lifts
class _Recompute:
    reads_previous = False  # from scratch: the run need not carry the last allocation over

    def __init__(self, mech: Mechanism, ex: Execution, exact: bool) -> None:
        self.mech = mech

    def step(self, ctx: StepContext) -> Allocation:
        if not ctx.exact and self.mech.batch is not None:  # the vectorised float allocator (a screen only)
            self.mech.setting.check(ctx.env, self.mech.name)
            got = self.mech.batch([ctx.env])[0]
            if got is not None:
                return got
        return call(self.mech, ctx.env, ctx.exact)


def _report_key(env: Environment, j: int) -> tuple:
    return (env.demand[j], env.external_demand[j] if env.external_demand else (), env.eligible[j],
            tuple(sorted((s, v) for (u, s), v in env.server_demand.items() if u == j)))


#: a float run's tolerance on what a server holds: its held amounts are the previous step's floats
_DUST_REL, _DUST_ABS = Fraction(1, 10**9), Fraction(1, 10**12)


def _over(used: Fraction, c: Fraction, exact: bool) -> bool:
    """``used`` exceeds capacity ``c`` (in a float run: by more than the tolerance) -- the server's capacity was
    lost, what it holds is released."""
    return used > c if exact else used - c > c * _DUST_REL + _DUST_ABS


def _left(c: Fraction, used: Fraction, exact: bool) -> Fraction:
    """What is left of capacity ``c`` with ``used`` held (never negative).  In a float run a server the previous
    step's floats fill leaves a rounding residue (~1e-16): within the same tolerance it is none (a mechanism
    normalising by a residue of 1e-16 builds an LP with 1e16 coefficients, which HiGHS rejects)."""
    left = c - used
    if left <= 0 or (not exact and left <= c * _DUST_REL + _DUST_ABS):
        return Fraction(0)
    return left


class _Irrevocable:
    def __init__(self, mech: Mechanism, ex: Execution, exact: bool) -> None:
        self.mech = mech
        self.reports: dict[str, tuple] = {}

    def step(self, ctx: StepContext) -> Allocation:
        env, prev, exact = ctx.env, ctx.previous, ctx.exact
        keys = {u: _report_key(env, j) for j, u in enumerate(env.users)}
        if prev is None:
            self.reports = keys
            return call(self.mech, env, exact)
        J, S, R = env.n_users, env.n_servers, env.n_resources
        held = [[Fraction(v) for v in row] for row in prev.x]
        for j, u in enumerate(env.users):  # a changed report gives back what it holds
            if self.reports.get(u) != keys[u]:
                held[j] = [Fraction(0)] * S
        self.reports = keys
        whole = not self.mech.setting.divisible
        for j in range(J):  # a task bound below what is held (a finish): trim
            n, tot = env.tasks[j], sum(held[j])
            if n is not None and tot > n:
                if whole and all(v.denominator == 1 for v in held[j]):  # whole tasks end, the last server's first
                    drop, row = tot - Fraction(int(n)), list(held[j])
                    for s in reversed(range(S)):
                        take = min(row[s], drop)
                        row[s], drop = row[s] - take, drop - take
                    held[j] = row
                else:
                    held[j] = [v * n / tot for v in held[j]]
        cap = []
        for s in range(S):
            used = [sum((held[j][s] * env.d(j, s)[r] for j in range(J)), Fraction(0)) for r in range(R)]
            if any(_over(u, c, exact) for u, c in zip(used, env.capacity[s])):  # capacity lost: release the server
                for j in range(J):
                    held[j][s] = Fraction(0)
                used = [Fraction(0)] * R
            cap.append(tuple(_left(c, u, exact) for c, u in zip(env.capacity[s], used)))
        ext = env.external_capacity
        if env.n_external:
            ext = tuple(_left(c, sum((sum(held[j]) * env.external_demand[j][k] for j in range(J)), Fraction(0)), exact)
                        for k, c in enumerate(env.external_capacity))
        tasks = tuple(None if env.tasks[j] is None else max(env.tasks[j] - sum(held[j]), Fraction(0)) for j in range(J))
        residual = replace(env, capacity=tuple(cap), external_capacity=ext, tasks=tasks)
        try:
            extra = call(self.mech, residual, exact)
            add, add_exact = extra.x, extra.exact
        except SettingError:  # e.g. a mechanism needing positive capacities on an exhausted server: nothing more
            add, add_exact = tuple((Fraction(0),) * S for _ in range(J)), True
        zero = Fraction(0)
        x = tuple(tuple((h + (a if isinstance(a, Fraction) else Fraction(a))) if (h or a) else zero
                        for h, a in zip(held[j], add[j])) for j in range(J))
        if not exact:
            x = tuple(tuple(float(v) for v in row) for row in x)
        return Allocation(env, x, self.mech.name, exact and add_exact and prev.exact,
                          info={"lift": "irrevocable"})


_LIFT_STEPPERS = {"recompute": _Recompute, "irrevocable": _Irrevocable}
_LIFT_MODELS = {
    "recompute": "recomputed from scratch for the present users at every event (what a user held may be taken back)",
    "irrevocable": "the one-shot mechanism on the residual capacity at every event; a present user's allocation "
                   "never decreases while its report is unchanged",
}


def split_lift(name: str) -> tuple[str, Optional[str]]:
    """``"drf+irrevocable"`` -> ``("drf", "irrevocable")``, ``"drf+indivisible(slot=64)"`` -> ``("drf",
    "indivisible(slot=64)")``; a name without a lift -> ``(name, None)``."""
    if isinstance(name, str) and "+" in name:
        base, _, how = name.rpartition("+")
        if base and (how in LIFTS or how.startswith("indivisible(")):
            return base, how
    return name, None


def lift(mech: Mechanism, how: str) -> Mechanism:
    """``mech`` lifted to executions (module docstring): named ``NAME+how``, the same one-shot function, its
    setting marked ``dynamic``.  Its claims are the one-shot mechanism's (about each step); a mechanism that
    has a time facet of its own is not lifted.  ``how``: a name of :data:`LIFTS`, or
    ``indivisible(slot=S,overhead=O)`` (its name is then the canonical one: ``indivisible`` for the defaults)."""
    params = parse_indivisible(how)
    if how not in LIFTS and params is None:
        raise InstanceError(f"lift: expected one of {', '.join(LIFTS)}, got {how!r}")
    if mech.time is not None:
        raise InstanceError(f"lift: {mech.name} steps through executions itself ({mech.time.kind}); it is not lifted")
    if params is not None:
        slot, overhead = params
        how = indivisible_name(slot, overhead)
        spec = TimeSpec(begin=lambda m, ex, exact, _b=mech, _p=params: Indivisible(_b, ex, exact, *_p),
                        kind="indivisible", revocable=slot is not None,
                        model=f"whole tasks of their declared durations; reallocated from scratch every "
                              f"{'(never)' if slot is None else fmt_exact(slot)} time units when something happened "
                              f"(suspended tasks resume paying {fmt_exact(overhead)}), else free capacity only")
    else:
        stepper = _LIFT_STEPPERS[how]
        spec = TimeSpec(begin=lambda m, ex, exact, _s=stepper, _base=mech: _s(_base, ex, exact), kind=how,
                        revocable=how == "recompute", model=_LIFT_MODELS[how])
    return replace(mech, name=f"{mech.name}+{how}", setting=replace(mech.setting, dynamic=True), time=spec,
                   reference=f"{mech.reference}+{how}" if mech.reference else "")


def stepper_for(mech: Mechanism, ex: Execution, exact: bool) -> Stepper:
    """A fresh stepper of ``mech`` for one run of ``ex`` (a mechanism without a time facet: ``recompute``).  A
    stateful mechanism whose setting requires task bounds refuses an execution stating an unbounded user (its
    stepper is not asked: it would read an unbounded request as none)."""
    if mech.time is None:
        return _Recompute(mech, ex, exact)
    if mech.setting.requires_bounds:
        stated = [(f"users[{k}]", u.name, u.tasks) for k, u in enumerate(ex.users)]
        stated += [(f"events[{i}]", e.spec.name if e.kind == "arrive" else e.user,
                    e.spec.tasks if e.kind == "arrive" else e.tasks)
                   for i, e in enumerate(ex.events) if e.kind == "arrive" or (e.kind == "demand" and e.tasks != "keep")]
        for where, who, tasks in stated:
            if tasks is None:
                raise SettingError(f"{where}: {mech.name} needs a task bound for every user, {who}'s is null "
                                   f"(unbounded)")
    return mech.time.begin(mech, ex, exact)


def execute(mech: Mechanism, ex: Execution, exact: bool = True, deviation: Optional[TraceMisreport] = None,
            on_step: Optional[Callable[[Step], None]] = None) -> list[Step]:
    """Every step of ``mech`` through ``ex`` (``mechverify.execution.run`` with a fresh stepper); under a
    resubmission (``TraceResubmission``) the run of the execution as the tenant submits it."""
    if isinstance(deviation, TraceResubmission):
        ex, deviation = deviation.apply_to(ex), None
    return list(run(ex, stepper_for(mech, ex, exact), exact, deviation, on_step))


def one_shot(begin: Callable[[Mechanism, Execution, bool], Stepper], name: str) -> Callable[[Environment, bool], Allocation]:
    """The one-shot function of a stateful mechanism: its allocation at step 0 of an execution whose users are
    present from the start and nothing happens (what ``allocate`` and the one-instance properties judge)."""
    def allocate(env: Environment, exact: bool = False) -> Allocation:
        ex = execution_of(env)
        return begin(None, ex, exact).step(StepContext(0, Fraction(0), None, env, None, ex, exact))

    allocate.__name__ = f"{name}_first_step"
    return allocate


def execution_of(env: Environment) -> Execution:
    """The execution with ``env``'s users present at time 0 and no events."""
    from mechverify.execution import UserSpec

    users = []
    for j, u in enumerate(env.users):
        users.append(UserSpec(
            u, env.demand[j], env.external_demand[j] if env.external_demand else (), env.weight[j],
            None if env.eligible[j] == frozenset(range(env.n_servers)) else tuple(env.servers[s] for s in sorted(env.eligible[j])),
            env.tasks[j], {env.servers[s]: v for (k, s), v in env.server_demand.items() if k == j},
            None if env.user_queue[j] is None else env.queues[env.user_queue[j]]))
    return Execution(env.resources, env.servers, env.capacity, tuple(users), (), env.external, env.external_capacity,
                     env.queues, env.queue_weight, env.queue_guarantee, env.queue_max)
