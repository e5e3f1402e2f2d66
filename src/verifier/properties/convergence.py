"""convergence -- long-run shares converge to the entitlements (docs/executions.md).

A **stretch** is a maximal run of consecutive steps over which the reported environment does not change (the
same present users, the same reports, the same servers and capacities) and the same two or more users are
**backlogged** (each runs fewer tasks than it asks for: below its task bound and its external limit).  Over a
stretch each backlogged user's cumulative service since the stretch began is its utility x duration summed
(``execution.cumulative``'s sum), and its **share** is that over the backlogged users' total.  Its
**benchmark** is ``e_j / sum_k e_k`` over the backlogged users, ``e_j`` what its weighted entitlement of the
present cluster runs (``starvation``'s ``entitlement`` reading: its weighted equal split -- the static split
of the tree on one -- of every server and external resource, in tasks at its demand, capped by its task bound),
constant over the stretch.  Among users that are all backlogged this is the weighted dominant-share benchmark:
a mechanism equalising weighted dominant shares on one pooled server gives them exactly these proportions.  It
is not rounded to whole tasks: over time a whole-task policy can reach a fractional average (by alternating),
and only then; ``epsilon`` (:data:`EPSILON`, 1/20 of the total) makes "approach" honest for policies that only
approximate shares.

The time to converge is the time from the stretch's start until every share enters and stays within
``epsilon`` of its benchmark up to the stretch's end (the shares move monotonically within a step, so the time
is solved exactly, one linear equation per user and side); a stretch whose shares are outside at its end never
converged: its whole length.  The measure is the longest such time beyond the execution's ``max_wait`` (default
0: the shares must be within ``epsilon`` all along); violated when > 0.  Executions without a stretch (never two
users backlogged for a positive time, or none of them served over it: no shares) are not judged; nor is a
policy admitting whole requests (``Setting.whole_requests``), which serves a user all of its request or none.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.execution import Step, cumulative
from mechverify.numbers import FLOAT_REL, INF
from mechverify.utility import bundle_value, equal_split_bundle, utility

from .base import Measure
from .temporal import ExecutionProperty, Judgement, fmt

__all__ = ["Convergence", "EPSILON"]

#: how close (in shares of the backlogged users' total) the cumulative shares must come to the benchmark
EPSILON = Fraction(1, 20)


def _backlogged(st: Step, integral: bool) -> tuple[str, ...]:
    """The present users running fewer tasks than they ask for (below the task bound and the external limit)."""
    env = st.true_env
    out = []
    for j, u in enumerate(st.users):
        if not env.demands(j, integral):
            continue
        cap = env.external_limit(j)
        if env.tasks[j] is not None:
            cap = min(cap, env.tasks[j])
        got = utility(env, st.alloc, j, integral)
        if cap == INF or (got < cap if isinstance(got, Fraction) else float(got) < float(cap) * (1 - FLOAT_REL)):
            out.append(u)
    return tuple(out)


def _key(st: Step, backlogged: tuple[str, ...]) -> tuple:
    env = st.env
    return (st.users, env.servers, env.capacity, env.external_capacity, env.demand, env.external_demand, env.tasks,
            env.weight, env.eligible, env.server_demand, env.user_queue, backlogged)


def _stretches(steps: Sequence[Step], integral: bool) -> list[tuple[tuple[str, ...], list[Step]]]:
    """The stretches (module docstring) with their backlogged users, in time order."""
    out: list[tuple[tuple[str, ...], list[Step]]] = []
    last = None
    for st in steps:
        b = _backlogged(st, integral) if st.alloc is not None else ()
        if len(b) < 2:
            last = None
            continue
        k = _key(st, b)
        if k == last:
            out[-1][1].append(st)
        else:
            out.append((b, [st]))
            last = k
    return out


def _converged_at(stretch: list[Step], users: tuple[str, ...], bench: dict[str, Any], eps: Any,
                  exact: bool) -> tuple[Any, dict[str, Any]]:
    """The time from which every share stays within ``eps`` of its benchmark to the stretch's end (its end when
    the shares are outside there; ``None`` when nobody is served over the stretch), scanned back from the end
    step by step (module docstring); and the users' cumulative service over the stretch."""
    rows = []  # (start, duration, cumulative service at the start, utilities)
    acc: dict[str, Any] = {u: 0 for u in users}
    for st in stretch:
        if not st.until > st.t:
            continue
        rate = st.utilities()
        rows.append((st.t, st.until - st.t, dict(acc), rate))
        done = cumulative([st])
        acc = {u: acc[u] + done[u] for u in users}
    slack = 0 if exact else FLOAT_REL
    total = sum(acc.values())
    if not total > 0:
        return None, acc  # nobody served over the stretch: no shares (work-conserving judges idle capacity)
    if any(abs(acc[u] / total - bench[u]) > eps + slack for u in users):
        return stretch[-1].until, acc
    for t0, dt, A, rate in reversed(rows):
        a, r = sum(A.values()), sum(rate[u] for u in users)
        if not a > 0 and not r > 0:
            return t0 + dt, acc  # nobody served yet: no share to speak of
        lo: Any = 0
        for u in users:
            for c, side in ((bench[u] - eps, 1), (bench[u] + eps, -1)):
                alpha, beta = side * (A[u] - c * a), side * (rate[u] - c * r)  # within iff alpha + beta tau >= 0
                if alpha < -slack and beta > 0:
                    lo = max(lo, -alpha / beta)
        if lo > slack * max(1, abs(dt)):
            return t0 + lo, acc
    return stretch[0].t, acc


class Convergence(ExecutionProperty):
    name = "convergence"
    title = "Convergence: over a stretch with backlogged users their cumulative shares approach their entitlements"
    variants = {"entitlement": "each backlogged user's share of the backlogged users' cumulative service since the "
                               "stretch began comes within 1/20 of its weighted entitlement's share (its weighted "
                               "equal split of the present cluster, in tasks), within max_wait"}
    default_variant = "entitlement"
    measure = Measure("the longest time a stretch's cumulative shares took to come and stay within 1/20 of the "
                      "entitlement shares, beyond max_wait (time)", 0, ">")

    def dynamic_variant_possible(self, setting, variant):
        if getattr(setting, "whole_requests", False):
            return ("a policy admitting whole requests serves a user all of its request or none of it: no user is "
                    "backlogged and served at once, so there are no shares among backlogged users")
        return None

    def judge(self, mech, ex, variant, steps, exact, deviation=None, deviated=None):
        integral = not getattr(mech.setting, "divisible", True)
        bound: Any = ex.max_wait if ex.max_wait is not None else Fraction(0)
        eps: Any = EPSILON
        if not exact:
            bound, eps = float(bound), float(eps)
        worst: Optional[Any] = None
        at, who, utils = None, (), {}
        for users, stretch in _stretches(steps, integral):
            env = stretch[0].true_env
            e = {u: bundle_value(env, env.users.index(u), equal_split_bundle(env, env.entitlement(env.users.index(u))),
                                 None, False) for u in users}
            total = sum(e.values())
            if not total > 0 or not stretch[-1].until > stretch[0].t:
                continue
            bench = {u: e[u] / total for u in users}
            if not exact:
                bench = {u: float(v) for u, v in bench.items()}
            t, got = _converged_at(stretch, users, bench, eps, exact)
            if t is None:
                continue
            m = t - stretch[0].t - bound
            if worst is None or m > worst:
                worst, at, who = m, stretch[-1].index, users
                total = sum(got.values())
                utils = {"stretch from": stretch[0].t, "to": stretch[-1].until, "within 1/20 from": t,
                         **{f"share of {u}": got[u] / total if total else got[u] for u in users},
                         **{f"entitlement share of {u}": bench[u] for u in users}}
        if worst is None:
            return Judgement(None, False, note="no stretch with two or more backlogged users")
        names = ", ".join(who)
        came = ("never" if utils["within 1/20 from"] == utils["to"] else
                f"from t = {fmt(utils['within 1/20 from'])} on")
        shares = ", ".join(fmt(utils[f"share of {u}"]) for u in who)
        benches = ", ".join(fmt(utils[f"entitlement share of {u}"]) for u in who)
        return Judgement(worst, self.is_violation(worst, exact), at, who, [], utils,
                         summary=f"{names} backlogged from t = {fmt(utils['stretch from'])} to {fmt(utils['to'])}: "
                                 f"their cumulative shares ({shares} at the end) are within 1/20 of the entitlement "
                                 f"shares ({benches}) {came}; max_wait {fmt(bound)}")

