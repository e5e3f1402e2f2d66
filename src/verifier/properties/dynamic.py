"""The properties over executions (``temporal.ExecutionProperty``; docs/executions.md has each definition with
its source):

* ``each-step``   -- a one-shot property (``si``, ``ef``, ``po``) at every step, for the users present then;
* ``dsi``, ``def``, ``dpo`` -- dynamic sharing incentives, dynamic envy-freeness and dynamic Pareto optimality
  as Kash, Procaccia and Shah (JAIR 2014) define them for users arriving one by one (``n`` = every user of
  the execution, known in advance);
* ``online-sp``   -- a user misreporting its demand at one or more places of the trace never raises its
  cumulative TRUE utility (utility x duration summed over the run);
* ``irrevocable`` -- a present user's allocation never drops while its own report is unchanged (and no
  capacity is lost, none of its tasks finish): disruptions;
* ``disparity``   -- among users with equal total demand over the run (their per-step demand x duration
  summed), the ratio of the largest to the smallest cumulative utility (Karma, OSDI 2023: max-min per quantum
  is unfair over time); violated when > 1;
* ``isolation``   -- in every step each user runs at least min(its demand, g x its fair share), ``g`` the
  fraction of its fair share the mechanism declares guaranteed (``TimeSpec.guarantee``; 1 when none);
* ``starvation``  -- a demanding user below its entitlement (``entitlement``: its weighted equal split of the
  present cluster; ``quota``: its queues' declared guarantees) waits at most the execution's ``max_wait``
  (default 0); the measure is the longest wait beyond it;
* ``usage-ignored`` -- a policy declaring that it orders tenants (the users' queues) by their past usage
  (``TimeSpec.usage_ordered``) never tries a candidate of a tenant that has been admitted something before a
  pending candidate, in the same scope, of a tenant never admitted anything (read off the policy's own record
  of the candidates it tried, in order); the measure is the number of such tries.

Every judgement is computed on the steps of a run; the exact re-check replays the run in rationals.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.execution import Execution, Step, cumulative
from mechverify.trace_deviations import TraceMisreport
from mechverify.numbers import INF, fmt_value, is_inf
from mechverify.utility import bundle_value, envy_value, equal_split_bundle, utility

from .base import Hints, Measure
from .temporal import ExecutionProperty, Judgement, _violates, fmt, judged_at

#: the measure of dsi and isolation: a ratio to a benchmark, violated below 1
_BELOW_ONE = Measure("a ratio to a benchmark", 1, "<")

__all__ = ["EachStep", "DynamicSI", "DynamicEF", "DynamicPO", "OnlineSP", "Irrevocability", "Disparity", "Isolation",
           "Starvation", "UsageIgnored"]


def _ratio(a: Any, b: Any) -> Any:
    if b == 0:
        return Fraction(1) if a == 0 else INF
    return a / b


# ---------------------------------------------------------------------- each step
class EachStep(ExecutionProperty):
    """Every one-shot property judged on one instance (no deviation, no state) at every step, for the users
    present then: one variant per such property (``verifier.properties`` builds it with them), judged in the
    reading the mechanism's setting calls for."""

    name = "each-step"
    title = "A one-shot property at every step, for the users present then"
    default_variant = "si"
    measure = Measure("how far the one-shot property's measure is past its threshold at the worst step "
                      "(its measure minus the threshold, oriented so that > 0 is a violation)", 0, ">")

    def __init__(self, inner) -> None:
        self.inner = dict(inner)
        self.variants = {n: f"{p.name} at every step ({p.title})" for n, p in self.inner.items()}

    def dynamic_variant_possible(self, setting, variant):
        prop = self.inner[variant]
        return prop.variant_possible(setting, prop.default_for(setting))

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        prop = self.inner[variant]
        v = prop.default_for(mech.setting)
        thr, up = prop.measure.threshold, prop.measure.direction == ">"
        per: list = []
        worst, at, users, raw = None, None, (), None
        for st in steps:
            if not judged_at(mech, st) or prop.applicable(mech, st.env, v):
                per.append(None)
                continue
            ev = prop.evaluate(mech, st.env, v, exact=exact, alloc=st.alloc)
            if ev.measure is None:
                per.append(None)
                continue
            m = ev.measure
            past = (INF if up else -INF) if is_inf(m) else (m - thr if up else thr - m)
            if not exact and not is_inf(past):
                past = float(past) - 1e-9 * max(1.0, abs(float(thr)))  # float noise is never past the threshold
            per.append(past)
            if worst is None or past > worst:
                worst, at, raw = past, st.index, m
                users = tuple(st.env.users[j] for j in (ev.witness.users if ev.witness else ()))
        if worst is None:
            return Judgement(None, False, per_step=per, note="no step to judge")
        return Judgement(worst, self.is_violation(worst, exact), at, users, per, {f"{prop.name} measure": raw},
                         summary=f"{prop.name}/{v} fails at step {at}: its measure {fmt(raw)} "
                                 f"({prop.measure.describe()})" + (f"; users {', '.join(users)}" if users else ""))

    def gap_of(self, m):
        return Fraction(10) ** 9 if is_inf(m) else Fraction(m)


def _share_judgement(mech, steps: Sequence[Step], exact: bool, share, whole_benchmark: bool, what: str,
                     nothing: str) -> Judgement:
    """The smallest ratio, over the judged steps and present users, of a user's tasks to what ``share(st, j)``
    of every server and external resource gives it (``whole_benchmark``: in whole tasks, for a whole-task
    mechanism) -- dsi's and isolation's judgement, ``what`` naming the benchmark in the summary."""
    integral = not getattr(mech.setting, "divisible", True)
    per, worst, at, who, got_w, bench_w = [], None, None, (), None, None
    for st in steps:
        if not judged_at(mech, st):
            per.append(None)  # a round mechanism is judged at its rounds
            continue
        m = None
        for j, u in enumerate(st.users):
            bench = bundle_value(st.true_env, j, equal_split_bundle(st.true_env, share(st, j)), None, False)
            if integral and whole_benchmark and not is_inf(bench):
                bench = Fraction(int(bench)) if exact else float(int(bench))
            if not bench:
                continue
            got = utility(st.true_env, st.alloc, j, integral)
            r = _ratio(got, bench)
            if m is None or r < m:
                m = r
            if worst is None or r < worst:
                worst, at, who, got_w, bench_w = r, st.index, (u,), got, bench
        per.append(m)
    if worst is None:
        return Judgement(None, False, per_step=per, note=nothing)
    u = who[0]
    return Judgement(worst, _violates(_BELOW_ONE, worst, exact), at, who, per, {f"u({u})": got_w, f"{what} ({u})": bench_w},
                     summary=f"{u} runs {fmt(got_w)} tasks at step {at}, below the {fmt(bench_w)} {what} gives it")



# ---------------------------------------------------------------------- Kash, Procaccia, Shah
def _share(ex: Execution, env, j: int) -> Fraction:
    """``w_j / sum of the weights of every user of the execution`` (Kash et al.: 1/n, n known in advance)."""
    total = sum((u.weight for u in ex.users), Fraction(0)) + sum(
        (e.spec.weight for e in ex.events if e.kind == "arrive"), Fraction(0))
    return env.weight[j] / total


def _arrived_fraction(ex: Execution, steps: Sequence[Step], k: int) -> Fraction:
    """How many users have arrived by step ``k`` over every user of the execution (Kash et al.'s k/n)."""
    seen = set()
    for st in steps[:k + 1]:
        seen.update(st.users)
    return Fraction(len(seen), ex.n_users_total)


class DynamicSI(ExecutionProperty):
    name = "dsi"
    title = "Dynamic sharing incentives (Kash, Procaccia, Shah 2014)"
    variants = {"kash": "every present user runs at least what 1/n of every resource gives it (n: all users of the "
                        "execution, weighted: w_j / sum of all weights)"}
    default_variant = "kash"
    measure = Measure("the smallest ratio of a present user's tasks to those of its 1/n share of the cluster", 1, "<")

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        return _share_judgement(mech, steps, exact, lambda st, j: _share(ex, st.true_env, j), False,
                                "its 1/n share of the cluster", "no user demands anything")


class DynamicEF(ExecutionProperty):
    name = "def"
    title = "Dynamic envy-freeness (Kash, Procaccia, Shah 2014)"
    variants = {"kash": "a user envies another only if the other arrived before it and has received nothing since "
                        "it arrived"}
    default_variant = "kash"
    measure = Measure("the largest envy ratio among pairs the definition does not excuse", 1, ">")

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        order = {u: i for i, u in enumerate(ex.user_names)}
        arrival: dict[str, int] = {}
        history: dict[str, list] = {}
        integral = not getattr(mech.setting, "divisible", True)
        per, worst, at, who, utils, inf_gap = [], None, None, (), {}, None
        for st in steps:
            for u in st.users:
                arrival.setdefault(u, st.index)
            if st.alloc is None:
                per.append(None)
                continue
            rows = {u: st.alloc.x[j] for j, u in enumerate(st.users)}
            for u, row in rows.items():
                history.setdefault(u, []).append((st.index, row))
            if not judged_at(mech, st):
                per.append(None)
                continue
            m = None
            for i, ui in enumerate(st.users):
                own = utility(st.true_env, st.alloc, i, integral)
                for k, uk in enumerate(st.users):
                    if k == i:
                        continue
                    if order[uk] < order[ui]:  # excused when uk got nothing since ui arrived
                        before = [row for idx, row in history[uk] if idx < arrival[ui]]
                        if before and tuple(before[-1]) == tuple(rows[uk]):
                            continue
                    val = envy_value(st.true_env, st.alloc, i, k, integral=integral)
                    r = _ratio(val, own)
                    if m is None or r > m:
                        m = r
                    if worst is None or r > worst:
                        worst, at, who = r, st.index, (ui, uk)
                        utils = {f"u({ui})": own, f"u({ui}) with {uk}'s bundle": val}
                        inf_gap = val - own if is_inf(r) else None  # own 0: the envy itself is the margin
            per.append(m)
        if worst is None:
            return Judgement(None, False, per_step=per, note="fewer than two users at every step")
        return Judgement(worst, self.is_violation(worst, exact), at, who, per, utils,
                         summary=f"{who[0]} envies {who[1]} at step {at} (ratio {fmt(worst)}), and {who[1]} did not "
                                 f"arrive before {who[0]} or received resources since", gap=inf_gap)


class DynamicPO(ExecutionProperty):
    name = "dpo"
    title = "Dynamic Pareto optimality (Kash, Procaccia, Shah 2014)"
    variants = {"kash": "no allocation of at most k/n of every resource (k users arrived of n) makes every present "
                        "user at least as well off and one better"}
    default_variant = "kash"
    measure = Measure("the domination factor at the worst step: most total tasks a k/n-of-the-cluster allocation "
                      "gives while nobody loses, over the tasks now", 1, ">")

    def dynamic_variant_possible(self, setting, variant):
        return None if getattr(setting, "divisible", True) else "whole tasks: Kash et al.'s model is divisible"

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        from dataclasses import replace

        from mechverify.domination import dominating_allocation

        per, worst, at, utils = [], None, None, {}
        for st in steps:
            if not judged_at(mech, st):
                per.append(None)
                continue
            f = _arrived_fraction(ex, steps, st.index)
            env = st.true_env
            scaled = replace(env, capacity=tuple(tuple(v * f for v in row) for row in env.capacity),
                             external_capacity=tuple(v * f for v in env.external_capacity))
            u = [utility(env, st.alloc, j) for j in range(env.n_users)]
            total = sum(u)
            if not exact:
                u = [max(0.0, float(v) * (1 - 1e-9)) for v in u]
            D, _ = dominating_allocation(scaled, u, mech.setting.feasibility, exact)
            if D is None or not total:
                per.append(None)
                continue
            m = _ratio(D, total)
            per.append(m)
            if worst is None or m > worst:
                worst, at, utils = m, st.index, {"sum of tasks": total, "dominating sum (k/n of the cluster)": D}
        if worst is None:
            return Judgement(None, False, per_step=per, note="no step to judge")
        return Judgement(worst, self.is_violation(worst, exact), at, (), per, utils,
                         summary=f"at step {at} an allocation of {fmt(_arrived_fraction(ex, steps, at))} of the "
                                 f"cluster gives {fmt(utils['dominating sum (k/n of the cluster)'])} tasks in all, "
                                 f"nobody fewer, against {fmt(utils['sum of tasks'])}")


# ---------------------------------------------------------------------- online strategy-proofness
class OnlineSP(ExecutionProperty):
    name = "online-sp"
    title = "Online strategy-proofness: misreporting over a trace never raises a user's cumulative true utility"
    variants = {"demand": "one user misreports its demand (per-task demand, or its task count: the per-round demand "
                          "of a round mechanism) at one or more places of the trace"}
    default_variant = "demand"
    hints = Hints(deviation="trace")
    z3_trace = "cumulative-gain"  # z3's bounded certificate over traces (docs/z3.md)
    measure = Measure("the deviator's gain in cumulative true utility (tasks x time) over the run", 0, ">")

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        if deviation is None or deviated is None:
            return Judgement(None, False, note="no misreport")
        u = deviation.user
        horizon = ex.horizon if exact else float(ex.horizon)
        truth = cumulative(steps, horizon).get(u, 0)
        lie = cumulative(deviated, horizon).get(u, 0)
        gain = lie - truth
        last = max((st.index for st in deviated if u in st.users), default=None)
        return Judgement(gain, self.is_violation(gain, exact), last, (u,), [],
                         {f"U({u}) truthful": truth, f"U({u}) misreporting": lie},
                         summary=f"{deviation.describe()}: its cumulative true utility rises from {fmt(truth)} to "
                                 f"{fmt(lie)}")

    def recheck(self, mech, witness):
        cert = super().recheck(mech, witness)
        if cert is not None:  # the step of the deviated run is not a step of the truthful one: name none
            cert.witness.step = None
        return cert


# ---------------------------------------------------------------------- disruptions
class Irrevocability(ExecutionProperty):
    name = "irrevocable"
    title = "Irrevocability: a present user's allocation never drops while its own report is unchanged"
    variants = {"tasks": "its tasks, at every step but one where its report changes, its tasks finish or capacity is "
                         "lost"}
    default_variant = "tasks"
    measure = Measure("the largest drop of a present user's tasks between two steps (a disruption)", 0, ">")

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        per, worst, at, who, utils = [], None, None, (), {}
        prev = None
        for st in steps:
            if st.alloc is None or prev is None or prev.alloc is None:
                per.append(None if st.alloc is None else 0)
                prev = st
                continue
            excused_all = st.event is not None and st.event.kind == "capacity" and (
                st.event.capacity is None or any(a < b for a, b in zip(
                    st.event.capacity, prev.env.capacity[prev.env.servers.index(st.event.server)]))
                if st.event.server in prev.env.servers else False)
            m = 0 if exact else 0.0
            for j, u in enumerate(st.users):
                if u not in prev.users or excused_all:
                    continue
                i = prev.users.index(u)
                if st.event is not None and st.event.user == u and st.event.kind in ("demand", "finish"):
                    continue
                if prev.env.demand[i] != st.env.demand[j] or prev.env.tasks[i] != st.env.tasks[j]:
                    continue
                before, after = prev.alloc.total(i), st.alloc.total(j)
                drop = before - after
                if drop > m:
                    m = drop
                if drop > 0 and (worst is None or drop > worst):
                    worst, at, who, utils = drop, st.index, (u,), {f"tasks of {u} before": before,
                                                                    f"tasks of {u} after": after}
            per.append(m)
            prev = st
        if worst is None:
            return Judgement(0 if exact else 0.0, False, per_step=per, summary="no allocation dropped")
        return Judgement(worst, self.is_violation(worst, exact), at, who, per, utils,
                         summary=f"{who[0]}'s tasks drop from {fmt(utils[f'tasks of {who[0]} before'])} to "
                                 f"{fmt(utils[f'tasks of {who[0]} after'])} at step {at} "
                                 f"({steps[at].event.describe() if steps[at].event else 'start'}), its report unchanged")


# ---------------------------------------------------------------------- Karma
def _demand_integral(steps: Sequence[Step], exact: bool) -> Optional[dict[str, Any]]:
    """Each user's total demand over the run: its task count (the per-round demand) x duration, summed;
    ``None`` when some present user is unbounded."""
    out: dict[str, Any] = {}
    for st in steps:
        if st.env is None:
            continue
        dt = st.until - st.t
        for j, u in enumerate(st.users):
            n = st.true_env.tasks[j]
            if n is None:
                return None
            out[u] = out.get(u, 0) + (n if exact else float(n)) * dt
    return out


class Disparity(ExecutionProperty):
    name = "disparity"
    title = "Disparity: users with equal total demand receive equal cumulative utility (Karma)"
    variants = {"equal-demand": "among users with equal total demand over the run (task count x duration summed), "
                                "the largest over the smallest cumulative utility"}
    default_variant = "equal-demand"
    measure = Measure("the largest ratio of cumulative utilities among users with equal total demand", 1, ">")

    def dynamic_variant_possible(self, setting, variant):
        if not (getattr(setting, "bounds", True) or getattr(setting, "requires_bounds", False)):
            return "no task bounds in this setting: every user's total demand is unbounded"
        return None

    def applies_to(self, mech, ex, variant):
        every = [u.tasks for u in ex.users] + [e.spec.tasks for e in ex.events if e.kind == "arrive"]
        return None if every and all(t is not None for t in every) else "a user with unbounded demand"

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        dem = _demand_integral(steps, exact)
        if dem is None:
            return Judgement(None, False, note="a user with unbounded demand")
        got = cumulative(steps)
        groups: dict[Any, list[str]] = {}
        for u, d in dem.items():
            if d:
                groups.setdefault(d if exact else round(d, 9), []).append(u)
        worst, who, utils = None, (), {}
        for d, us in groups.items():
            if len(us) < 2:
                continue
            hi = max(us, key=lambda u: got.get(u, 0))
            lo = min(us, key=lambda u: got.get(u, 0))
            r = _ratio(got.get(hi, 0), got.get(lo, 0))
            if worst is None or r > worst:
                worst, who = r, (hi, lo)
                utils = {f"U({hi})": got.get(hi, 0), f"U({lo})": got.get(lo, 0), "total demand of each": d}
        if worst is None:
            return Judgement(None, False, note="no two users with equal total demand")
        gap = utils[f"U({who[0]})"] if is_inf(worst) else None  # the other got nothing: its lead is the margin
        return Judgement(worst, self.is_violation(worst, exact), None, who, [], utils, gap=gap,
                         summary=f"{who[0]} and {who[1]} demand {fmt(utils['total demand of each'])} each over the run "
                                 f"and receive {fmt(utils[f'U({who[0]})'])} and {fmt(utils[f'U({who[1]})'])}")


class Isolation(ExecutionProperty):
    name = "isolation"
    title = "Isolation: in every step a user runs at least min(its demand, its guaranteed part of its fair share)"
    variants = {"guaranteed": "the guaranteed part g of the fair share the mechanism declares (TimeSpec.guarantee; "
                              "1 when it declares none)"}
    default_variant = "guaranteed"
    measure = Measure("the smallest ratio of a user's tasks to min(its demand, g x its fair share)", 1, "<")

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        g = getattr(mech.time, "guarantee", None)
        g = Fraction(1) if g is None else Fraction(g)
        return _share_judgement(mech, steps, exact, lambda st, j: st.true_env.entitlement(j) * g, True,
                                "its guaranteed part of its fair share", "nobody demands anything")


# ---------------------------------------------------------------------- starvation
class Starvation(ExecutionProperty):
    name = "starvation"
    title = "Starvation: a demanding user below its entitlement waits at most the execution's max_wait"
    variants = {"entitlement": "below its weighted equal split of the present cluster (less if it demands less)",
                "quota": "below its queues' declared guarantees (the smallest over its queue path, less if it demands "
                         "less)"}
    #: a policy admitting whole requests (``Setting.whole_requests``) owes a user nothing of a request larger than
    #: its entitlement: only users whose whole request fits their entitlement are judged
    default_variant = "entitlement"
    measure = Measure("the longest wait below the entitlement beyond max_wait (time)", 0, ">")
    reads = ()

    def dynamic_variant_possible(self, setting, variant):
        if variant == "quota" and not getattr(setting, "hierarchy", False):
            return "no queue tree in this setting (declared guarantees are queues')"
        return None

    def applies_to(self, mech, ex, variant):
        if variant == "quota" and not any(g is not None for g in ex.queue_guarantee):
            return "no queue declares a guarantee"
        return None

    def _below(self, st: Step, j: int, variant: str, integral: bool, whole: bool = False) -> Optional[tuple[Any, Any]]:
        env = st.true_env
        got = utility(env, st.alloc, j, integral)
        if variant == "entitlement":
            bench = bundle_value(env, j, equal_split_bundle(env, env.entitlement(j)), None, False)
        else:
            from mechverify.declared import held  # noqa: F401  (the declared amounts' module)

            bench = None
            for q in env.user_path(j):
                g = env.queue_guarantee[q]
                if g is None:
                    continue
                t = min((g[r] / d for r, d in enumerate(env.demand[j]) if d > 0), default=INF)
                if env.tasks[j] is not None:
                    t = min(t, env.tasks[j])
                bench = t if bench is None else min(bench, t)
            if bench is None:
                return None
        if integral and not is_inf(bench):
            bench = type(bench)(int(bench)) if isinstance(bench, Fraction) else float(int(bench))
        if whole and env.tasks[j] is not None and (is_inf(bench) or env.tasks[j] > bench):
            return None  # a whole request beyond the entitlement: no part of it is owed (whole_requests)
        if isinstance(got, float) or isinstance(bench, float):  # float noise is never a wait
            return (got, bench) if not is_inf(bench) and float(got) < float(bench) * (1 - 1e-9) - 1e-12 else None
        return (got, bench) if got < bench else None

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        integral = not getattr(mech.setting, "divisible", True)
        whole = bool(getattr(mech.setting, "whole_requests", False))
        bound = ex.max_wait if ex.max_wait is not None else Fraction(0)
        if not exact:
            bound = float(bound)
        since: dict[str, Any] = {}
        per, worst, at, who, utils = [], None, None, (), {}
        for st in steps:
            if st.alloc is None:
                since.clear()
                per.append(None)
                continue
            m = None
            for j, u in enumerate(st.users):
                b = self._below(st, j, variant, integral, whole)
                if b is None:
                    since.pop(u, None)
                    continue
                start = since.setdefault(u, st.t)
                wait = st.until - start - bound
                if m is None or wait > m:
                    m = wait
                if worst is None or wait > worst:
                    worst, at, who = wait, st.index, (u,)
                    utils = {f"u({u})": b[0], f"entitlement of {u}": b[1], "waited from": start, "until": st.until}
            for u in list(since):
                if u not in st.users:
                    del since[u]
            per.append(m)
        if worst is None:
            return Judgement(0 if exact else 0.0, False, per_step=per, summary="no demanding user below its entitlement")
        return Judgement(worst, self.is_violation(worst, exact), at, who, per, utils,
                         summary=f"{who[0]} runs {fmt(utils[f'u({who[0]})'])} below its {variant} "
                                 f"{fmt(utils[f'entitlement of {who[0]}'])} from t = {fmt(utils['waited from'])} to "
                                 f"{fmt(utils['until'])} (max_wait {fmt(bound)})")


# ---------------------------------------------------------------------- usage ignored
class UsageIgnored(ExecutionProperty):
    name = "usage-ignored"
    title = ("Usage-ignored: a policy that orders tenants by their past usage never tries a candidate of a tenant "
             "that has been served before a pending one of a tenant in the same scope that never was")
    variants = {"served": "a tenant has used something once it has been admitted anything in the run (the policy's "
                          "own decisions, TimeSpec.usage_ordered: alloc.info['decisions'])"}
    default_variant = "served"
    measure = Measure("the number of tries of a served tenant's candidate ahead of a pending candidate of a never-served "
                      "tenant in the same scope", 0, ">")
    reads = ()

    def dynamic_variant_possible(self, setting, variant):
        return None

    def mechanism_possible(self, mech, variant):
        if not getattr(getattr(mech, "time", None), "usage_ordered", False):
            return "the mechanism does not declare that it orders tenants by their usage (TimeSpec.usage_ordered)"
        return None

    def applies_to(self, mech, ex, variant):
        return self.mechanism_possible(mech, variant)

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        served: set = set()
        per, count, first, who, utils = [], 0, None, (), {}
        for st in steps:
            if st.alloc is None:
                per.append(None)
                continue
            dec = tuple(st.alloc.info.get("decisions", ()))
            m = 0
            for i, (u, tenant, scope, admitted) in enumerate(dec):
                if tenant in served:
                    behind = [(v, tb) for (v, tb, sb, _) in dec[i + 1:] if sb == scope and tb != tenant and tb not in served]
                    if behind:
                        m += 1
                        if first is None:
                            first, who = st.index, (u, behind[0][0])
                            utils = {"tried": u, "its tenant (served before)": tenant, "waiting": behind[0][0],
                                     "its tenant (never served)": behind[0][1], "scope": scope, "at t": st.t}
                if admitted:
                    served.add(tenant)
            count += m
            per.append(m if exact else float(m))
        measure = Fraction(count) if exact else float(count)
        if not count:
            return Judgement(measure, False, per_step=per, summary="every never-served tenant's candidate was tried "
                                                                   "before a served tenant's in its scope")
        return Judgement(measure, self.is_violation(measure, exact), first, who, per, utils,
                         summary=f"at t = {fmt(utils['at t'])} {who[0]} (tenant {utils['its tenant (served before)']}, "
                                 f"served before) is tried ahead of {who[1]} (tenant "
                                 f"{utils['its tenant (never served)']}, never served) in scope {utils['scope']}")
