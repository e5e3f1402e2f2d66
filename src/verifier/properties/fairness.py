"""Bottleneck fairness (BF) and single-resource fairness (SRF), and the whole-task shortfall they share with
the single-server reduction to DRF (:mod:`.single_server`).

BF and SRF share one check, *max-min fairness on one resource* ``r*``: with
``a_j = x_j d[j,r*]`` the amount of ``r*`` user ``j`` holds, the allocation must be the weighted
max-min fair (leximin) allocation of ``a_j / w_j`` over the mechanism's feasible set chi(E).  The
leximin score vector is unique, so the check compares each user's level with the leximin level
computed by the shared solver; the allocation fails iff some user is below its level (if all
were at or above, the mechanism's vector would beat the leximin optimum).  Measure: the largest
relative shortfall ``(fair_j - a_j/w_j) / fair_j``; violated iff > 0.  When several resources
satisfy the premise, a violation is reported only if the check fails for every one of them.

* BF ``global`` (seed 001 Sec. III-C): premise -- all users have the same global dominant resource
  ``r* in argmax_r d[j,r] / C_r`` (pooled capacities ``C_r``).
* BF ``per-server`` (seeds 000/002 Sec. II/III, Thm. 3 proof): premise -- one resource ``r*`` is
  dominant for every user at every server it can use: ``r* in argmax_r d[j,r] / c[s,r]``.
* SRF (001 Sec. III-C; 000 Sec. II-A): premise -- a single resource, no external resources, one demand
  per user (no per-server demand overrides).

Readings on queue trees and whole tasks (docs/properties.md, "Readings of the seeds": BF, SRF).  Each is a
variant of its own, searched for the settings that call for it (``variant_possible``): a mechanism with
indivisible tasks only in the ``whole-task`` reading, a divisible one defined on queue trees in the
``tree`` reading (BF, SRF), a flat divisible one in the seeds' variants above.

* ``tree`` (BF with the ``global`` premise, SRF with its own): on ONE server with a queue tree, where
  ``r*`` is dominant for every user, the benchmark is HIERARCHICAL weighted max-min fairness on ``r*``
  (:func:`hierarchical_fair_amounts`): from the root down, a node's amount of ``r*`` is split among its
  children -- child queues weighted by ``w_q``, the users directly in it by ``w_j`` -- by weighted
  water-filling, each child capped by the most ``r*`` its subtree can use (a user: ``n_j d[j,r*]``,
  unbounded: no cap; a user that cannot run on the server: 0); queue guarantees take no part (hsi reads
  them).  A user below its amount is a violation (measure: relative shortfall, as above).  On a flat
  instance this is the weighted max-min benchmark itself (one server: the same water-filling; several
  servers: the leximin LP above).  A tree on several servers is not read (not applicable): the
  hierarchical benchmark is defined here for one pool.
* ``whole-task`` (BF premise as ``global``; SRF; single-server DRF), ONE server only: whole tasks never
  meet the fractional benchmark exactly (``fair_j``: the max-min fair amount of ``r*``, hierarchical when
  the instance has queues; DRF's total for single-server DRF), so a user ``j`` violates it iff it runs at
  least one WHOLE task fewer than its benchmark allows (``a_j + d[j,r*] <= fair_j``; ``x_j <= DRF_j - 1``)
  AND the policy could have given it that task fairly: the task fits in the idle capacity, or it fits once
  one task is taken back from a user that holds at least one of its own tasks above its benchmark
  (:func:`whole_task_shortfalls`).  Measure: the most whole tasks such a user is short; violated iff > 0.
  Why this is a defect of the policy and not of whole tasks: the move raises ``j`` (still within its
  benchmark) and leaves every other user at or above its own, so on the flat benchmark (where an
  unsaturated user's fair amount is the common weighted level) the smallest level rises -- a whole-task
  allocation more max-min fair than the policy's exists.  Without such a move the shortfall is rounding:
  one server of 4, tasks ``<1>`` and ``<3>``, fair amounts 2 each; the policy's (1, 1) leaves the first
  user a task short, but only (2, 0) serves it better and leaves the second nothing.  On one server with
  ``r*`` dominant for every user and no external resources ``r*`` is the only binding resource (``d[j,r] /
  c_r <= d[j,r*] / c_r*``, so ``sum_j x_j d[j,r*] <= c_r*`` fits every resource), which is what makes the
  benchmark and the move checks one-resource computations.  On several servers packing decides what
  fits: not applicable.  A queue tree is read by BF and SRF; single-server DRF has no hierarchical form
  (DRF is flat): not applicable on an instance with queues (a hierarchical mechanism is still checked on
  flat instances).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

from mechverify.allocation import Allocation
from mechverify.lexmaxmin import lex_max_min
from mechverify.numbers import FLOAT_REL, fmt_exact, plural
from mechverify.polytope import TaskPolytope

from ..exact import exact_run
from .base import Certificate, Evaluation, Hints, Measure, Property, Witness, reading_possible

__all__ = ["BottleneckFairness", "SingleResourceFairness", "whole_task_shortfalls",
           "common_dominant_resources", "fair_levels", "mech_levels", "water_fill", "hierarchical_fair_amounts",
           "TREE", "WHOLE_TASK"]

_BF_NOTE = "each user's demand of r1 raised so that r1 is dominant (the BF premise); instances where the premise " \
           "still fails are skipped"
_SRF_NOTE = "one resource, no external resources, no per-server demands"
_ONE_SERVER_NOTE = "; one server"

#: the readings on queue trees and on whole tasks (module docstring)
TREE, WHOLE_TASK = "tree", "whole-task"


def water_fill(amount: Fraction, items) -> list[Fraction]:
    """Weighted water-filling of ``amount`` over ``items`` = ``[(weight > 0, cap)]`` (``cap`` ``None``: no
    cap): every item gets ``min(cap_i, w_i t)`` with the level ``t`` such that the shares sum to ``amount``,
    or its cap when the caps sum to less.  The weighted max-min fair split (exact)."""
    out = [Fraction(0)] * len(items)
    left, wsum = Fraction(amount), sum((Fraction(w) for w, _ in items), Fraction(0))
    order = sorted(range(len(items)), key=lambda i: (items[i][1] is None,
                                                     Fraction(items[i][1]) / items[i][0] if items[i][1] is not None
                                                     else 0))
    for n, i in enumerate(order):
        w, cap = items[i]
        level = left / wsum if wsum > 0 else Fraction(0)
        if cap is not None and cap <= w * level:
            out[i] = Fraction(cap)
            left -= out[i]
            wsum -= w
            continue
        for k in order[n:]:  # nobody else is capped below the level: all share it
            out[k] = items[k][0] * level
        break
    return out


def _user_cap(env, j: int, rstar: int) -> Optional[Fraction]:
    """The most ``r*`` user ``j`` can use on the one server (``None``: no cap): 0 when it cannot run there or
    does not demand ``r*``, else ``n_j d[j,r*]`` (unbounded: no cap)."""
    d = env.d(j, 0)[rstar]
    if not d or not env.usable(j, 0):
        return Fraction(0)
    return None if env.tasks[j] is None else env.tasks[j] * d


def hierarchical_fair_amounts(env, rstar: int) -> list[Fraction]:
    """Each user's amount of ``r*`` under hierarchical weighted max-min fairness on one server (module
    docstring, ``tree``): from the root down, a node's amount is water-filled over its child queues (weight
    ``w_q``) and the users directly in it (weight ``w_j``), each capped by the most ``r*`` its subtree can
    use.  On a flat instance: weighted max-min fairness of ``a_j / w_j`` on ``r*``.  Exact."""
    if env.n_servers != 1:
        raise ValueError("hierarchical_fair_amounts: one server only")
    J, Q = env.n_users, env.n_queues
    ucap = [_user_cap(env, j, rstar) for j in range(J)]
    qcap: list[Optional[Fraction]] = [Fraction(0)] * Q

    def subtree_cap(q: Optional[int]) -> Optional[Fraction]:
        tot: Optional[Fraction] = Fraction(0)
        for c in env.queue_children(q):
            qcap[c] = subtree_cap(c)
            tot = None if tot is None or qcap[c] is None else tot + qcap[c]
        for j in env.queue_users(q):
            tot = None if tot is None or ucap[j] is None else tot + ucap[j]
        return tot

    subtree_cap(None)
    fair = [Fraction(0)] * J

    def split(q: Optional[int], amount: Fraction) -> None:
        kids, users = env.queue_children(q), env.queue_users(q)
        items = [(env.queue_weight[c], qcap[c]) for c in kids] + [(env.weight[j], ucap[j]) for j in users]
        shares = water_fill(amount, items)
        for c, a in zip(kids, shares):
            split(c, a)
        for j, a in zip(users, shares[len(kids):]):
            fair[j] = a

    split(None, env.capacity[0][rstar])
    return fair


def _amounts(env, alloc, rstar: int) -> list:
    """Each user's holding ``a_j = sum_s x[j,s] d[j,s,r*]`` of ``r*`` under ``alloc``."""
    return [sum((alloc.x[j][s] * env.d(j, s)[rstar] for s in range(env.n_servers)), 0) for j in range(env.n_users)]


def _room_for(env, alloc, j: int, exact: bool, freed: Optional[int] = None) -> bool:
    """One more task of ``j`` fits in what the one server has left (every resource) -- after one task of user
    ``freed`` is taken back, when given."""
    for r, c in enumerate(env.capacity[0]):
        d = env.d(j, 0)[r]
        if not d:
            continue
        used = sum((alloc.x[k][0] * env.d(k, 0)[r] for k in range(env.n_users)), 0)
        back = env.d(freed, 0)[r] if freed is not None else 0
        if exact:
            if Fraction(c) - Fraction(used) + back < d:
                return False
        elif float(c) - float(used) + float(back) < float(d) * (1 - FLOAT_REL):
            return False
    return True


def _over_by_a_task(over) -> set:
    """The users ``k`` whose ``over[k]`` (own tasks held above the benchmark) is at least one."""
    return {k for k, o in enumerate(over) if o is not None and o >= 1}


def whole_task_shortfalls(env, alloc, short, over, exact: bool, users=None):
    """The whole-task reading's test, shared by BF/SRF and single-server DRF (module docstring): ``short[j]``
    and ``over[j]`` are user ``j``'s distance below / above its benchmark in its OWN tasks (``None``: not
    measured).  User ``j`` counts iff it is at least one task short AND the policy could have served it
    fairly: one more task of ``j`` fits in the idle capacity, or it fits once one task is taken back from a
    user ``k`` that holds at least one of its own tasks above its benchmark.  Either move raises ``j`` (still
    within its benchmark) and leaves ``k`` at or above its own: a whole-task allocation more max-min fair
    than the policy's, so the shortfall is the policy's, not the rounding's.  (A user a task short while the
    others hold less than a task each above theirs, with no room, is what whole tasks force: one server of
    4, tasks <1> and <3>, gives (1, 1) -- the max-min fair amounts are 2 each -- and no whole-task allocation
    serves the first user better without leaving the second nothing.)  Returns ``(floor(short_j), j)`` for the worst such user (among ``users``, default
    all), ``(0, None)`` if none."""
    above = _over_by_a_task(over)
    worst, who = Fraction(0), None
    for j, sh in enumerate(short):
        if sh is None or (users is not None and j not in users):
            continue
        k = math.floor(sh if exact else sh + FLOAT_REL)
        if k < 1 or k <= worst:
            continue
        if _room_for(env, alloc, j, exact) or any(_room_for(env, alloc, j, exact, freed=k) for k in above - {j}):
            worst, who = Fraction(k), j
    return worst, who


def _tasks_short(env, alloc, fair, have, rstar: int, exact: bool):
    """The most whole tasks a user is short of its benchmark, ``max_j floor((fair_j - a_j) / d[j,r*])`` over
    users demanding ``r*`` that the policy could have served fairly (:func:`whole_task_shortfalls`), and that
    user (float: up to the float tolerance)."""
    short, over = [], []
    for j in range(env.n_users):
        d = env.d(j, 0)[rstar]
        if not d:
            short.append(None)  # holds no r*: cannot be short of it
            over.append(None)
        elif exact:
            short.append((Fraction(fair[j]) - Fraction(have[j])) / d)
            over.append((Fraction(have[j]) - Fraction(fair[j])) / d)
        else:
            short.append((float(fair[j]) - float(have[j])) / float(d))
            over.append((float(have[j]) - float(fair[j])) / float(d) + FLOAT_REL)
    return whole_task_shortfalls(env, alloc, short, over, exact)


def common_dominant_resources(env, variant: str) -> list[int]:
    """Resources satisfying the BF premise of ``variant`` (empty list: premise fails)."""
    R = env.n_resources
    if env.n_external:
        return []
    cand = set(range(R))
    if variant == "global":
        pooled = env.total_capacity()
        for j in range(env.n_users):
            if env.has_server_demand:
                return []
            shares = [env.demand[j][r] / pooled[r] if pooled[r] else None for r in range(R)]
            if any(s is None and env.demand[j][r] > 0 for r, s in enumerate(shares)):
                return []
            vals = [s if s is not None else Fraction(0) for s in shares]
            top = max(vals)
            if top == 0:
                return []
            cand &= {r for r in range(R) if vals[r] == top}
    else:
        any_usable = False
        for j in range(env.n_users):
            for s in env.eligible[j]:
                if not env.usable(j, s):
                    continue
                any_usable = True
                d, c = env.d(j, s), env.capacity[s]
                vals = [d[r] / c[r] if c[r] else (None if d[r] else Fraction(0)) for r in range(R)]
                top = max(v for v in vals if v is not None)
                cand &= {r for r in range(R) if vals[r] == top and top > 0}
        if not any_usable:
            return []
    return sorted(cand)


def fair_levels(env, rstar: int, mode: str, exact: bool):
    """Leximin levels of ``a_j / w_j`` with ``a_j = sum_s x[j,s] d[j,s,r*]`` over chi(E)."""
    poly = TaskPolytope(env, mode=mode, placement=True, external=True, bounds=True)
    scores = []
    for j in range(env.n_users):
        form = {c: env.d(j, s)[rstar] / env.weight[j] for s, c in poly.user_vars[j] if env.d(j, s)[rstar]}
        scores.append(form)
    res = lex_max_min(poly.lp, scores, exact=exact)
    return [lv if lv is not None else (Fraction(0) if exact else 0.0) for lv in res.levels], poly.matrix(res.x, exact)


def mech_levels(env, alloc, rstar: int):
    """Each user's ``a_j / w_j`` (its holding of ``r*`` per unit weight) under ``alloc``."""
    return [sum((alloc.x[j][s] * env.d(j, s)[rstar] for s in range(env.n_servers)), 0) / env.weight[j]
            for j in range(env.n_users)]


def _shortfall(fair, have):
    worst, who = Fraction(0), None
    for j, (f, h) in enumerate(zip(fair, have)):
        if f > 0:
            r = (f - h) / f
            if r > worst:
                worst, who = r, j
    return worst, who


class _MaxMinOnResource(Property):
    """BF and SRF: weighted max-min fairness on a premise resource ``r*`` (module docstring), read on trees
    (``tree``) and on whole tasks (``whole-task``)."""

    #: the seeds' variants (flat divisible settings only)

    def premise(self, env, variant) -> list[int]:
        """The resources satisfying the premise of ``variant`` at ``env`` (empty: it fails)."""
        raise NotImplementedError

    def variant_possible(self, setting, variant):
        """Indivisible tasks: ``whole-task`` only; divisible on queue trees: ``tree`` only; flat divisible:
        the seeds' variants."""
        return reading_possible(setting, variant, self.name)

    def applicable(self, mech, env, variant):
        """Applies iff some resource satisfies the premise; ``whole-task`` on one server only, ``tree`` with
        a queue tree on one server only."""
        if variant == WHOLE_TASK and env.n_servers != 1:
            return ("whole tasks on more than one server: the floors of the fractional benchmark need not pack "
                    "together, so a shortfall could be a packing artefact")
        if variant == TREE and env.has_queues and env.n_servers != 1:
            return "a queue tree on more than one server: the hierarchical benchmark is read on one server only"
        if not self.premise(env, variant):
            return self.premise_text(variant)
        return None

    def premise_text(self, variant) -> str:
        """Why the premise of ``variant`` fails (the ``not applicable`` reason)."""
        return "premise fails"

    @staticmethod
    def _pooled(env, variant) -> bool:
        """The variant's benchmark is the one-server water-filling (``tree``/``whole-task`` on one server),
        not the leximin LP."""
        return variant in (TREE, WHOLE_TASK) and env.n_servers == 1

    def _benchmark_name(self, env, variant) -> str:
        return "hierarchical max-min fairness" if variant in (TREE, WHOLE_TASK) and env.has_queues \
            else "max-min fairness"

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The largest relative shortfall from the (hierarchical) max-min fair amounts (``whole-task``: the
        most whole tasks short of them), on the best premise resource."""
        why = self.applicable(mech, env, variant)
        if why:
            return Evaluation(None, False, note=why)
        alloc = alloc or mech(env, exact=exact)
        best = None
        for r in self.premise(env, variant):
            if self._pooled(env, variant):
                fair = hierarchical_fair_amounts(env, r)  # exact, cheap: also in float mode
                have = _amounts(env, alloc, r)
                if variant == WHOLE_TASK:
                    m, who = _tasks_short(env, alloc, fair, have, r, exact)
                else:
                    m, who = _shortfall(fair, [Fraction(h) if exact else h for h in have])
            else:
                fair, _ = fair_levels(env, r, mech.setting.feasibility, exact)
                m, who = _shortfall(fair, mech_levels(env, alloc, r))
            if best is None or m < best[0]:
                best = (m, who)
        m, who = best
        violated = (m > 0) if exact or variant == WHOLE_TASK else float(m) > FLOAT_REL
        w = Witness(self.name, variant, mech.name, env, None, m, (who,) if who is not None else ()) \
            if violated else None
        return Evaluation(m, violated, w)

    def recheck(self, mech, witness):
        """Certified iff the exact check fails on every premise resource."""
        env, variant = witness.env, witness.variant
        if self.applicable(mech, env, variant):
            return None
        run = exact_run(mech, env)
        if not run.exact:
            return None  # levels need the split over servers; no interval form implemented
        if self._pooled(env, variant):
            return self._recheck_pool(mech, witness, run)
        best = None
        for r in self.premise(env, variant):
            fair, fair_x = fair_levels(env, r, mech.setting.feasibility, exact=True)
            have = mech_levels(env, run.alloc, r)
            m, who = _shortfall(fair, have)
            if not m > 0:
                return None  # fair on some premise resource: no violation
            if best is None or m < best[0]:
                best = (m, who, r, fair, have, fair_x)
        if best is None:
            return None
        m, who, r, fair, have, fair_x = best
        name, res = env.users[who], env.resources[r]
        gap = fair[who] - have[who]
        w = env.weight[who]
        return Certificate(witness, Fraction(gap), m,
                           {"allocation": run.alloc, "max-min fair": Allocation(env, fair_x, "max-min fair", True)},
                           {f"{res}[{name}]/w mechanism": have[who], f"{res}[{name}]/w max-min fair": fair[who]},
                           True if run.unique_totals else None, "",
                           "exact", f"{name} holds {have[who] * w} of {res}; max-min fairness on {res} gives it {fair[who] * w}")

    def _recheck_pool(self, mech, witness, run):
        """``tree`` / ``whole-task`` on one server: the exact (hierarchical) water-filling benchmark."""
        env, variant = witness.env, witness.variant
        whole = variant == WHOLE_TASK
        best = None
        for r in self.premise(env, variant):
            fair = hierarchical_fair_amounts(env, r)
            have = [Fraction(a) for a in _amounts(env, run.alloc, r)]
            m, who = _tasks_short(env, run.alloc, fair, have, r, True) if whole else _shortfall(fair, have)
            if not m > 0:
                return None  # within the benchmark on some premise resource: no violation
            if best is None or m < best[0]:
                best = (m, who, r, fair, have)
        if best is None:
            return None
        m, who, r, fair, have = best
        name, res, d = env.users[who], env.resources[r], env.d(who, 0)[r]
        bench = self._benchmark_name(env, variant)
        label = bench.replace("fairness", "fair")
        fair_x = tuple((fair[j] / env.d(j, 0)[r] if env.d(j, 0)[r] else Fraction(0),) for j in range(env.n_users))
        tasks = run.alloc.total(who)
        summary = (f"{name} holds {fmt_exact(have[who])} of {res} ({fmt_exact(tasks)} {plural(tasks, 'task')}); "
                   f"{bench} on {res} gives it {fmt_exact(fair[who])}")
        utilities = {f"{res}[{name}] mechanism": have[who], f"{res}[{name}] {label}": fair[who]}
        if whole:
            summary += f" (whole tasks: {m} more {plural(m, 'task')} of {fmt_exact(d)} {res} would fit within it)"
            utilities[f"{res}[{name}] per task"] = d
        return Certificate(witness, fair[who] - have[who], m,
                           {"allocation": run.alloc, label: Allocation(env, fair_x, label, True)}, utilities,
                           True if run.unique_totals else None, "", "exact", summary)


class BottleneckFairness(_MaxMinOnResource):
    """BF: with a common dominant resource, the allocation is weighted max-min fair on it."""

    name = "bf"
    title = "bottleneck fairness"
    measure = Measure("the largest relative shortfall on the common bottleneck resource from its weighted (on a "
                      "queue tree: hierarchical) max-min fair amount; whole-task reading: the most whole tasks a "
                      "user is short of it", 0, ">")
    variants = {
        "global": "all users share one global dominant resource -> weighted max-min fair on it (001 III-C)",
        "per-server": "one resource dominant for every user at every usable server (000/002)",
        TREE: "queue trees, one server: no user below its hierarchical weighted max-min fair amount of the common "
              "dominant resource",
        WHOLE_TASK: "whole tasks, one server: no user a whole task short of its (hierarchical on a tree) max-min "
                    "fair amount of the common dominant resource",
    }
    default_variant = "per-server"
    variant_hints = {**{v: Hints(no_external=True, no_server_demand=True, dominant=v, premise_note=_BF_NOTE)
                        for v in ("global", "per-server")},
                     **{v: Hints(no_external=True, no_server_demand=True, one_server=True, dominant="global",
                                 premise_note=_BF_NOTE + _ONE_SERVER_NOTE) for v in (TREE, WHOLE_TASK)}}

    def premise(self, env, variant):
        """The common dominant resources of ``variant`` (``common_dominant_resources``; ``tree`` and
        ``whole-task`` take the ``global`` premise)."""
        return common_dominant_resources(env, "per-server" if variant == "per-server" else "global")

    def premise_text(self, variant):
        """Why the premise of ``variant`` fails."""
        return ("no resource is dominant for every user at every usable server" if variant == "per-server"
                else "users do not share one global dominant resource")


class SingleResourceFairness(_MaxMinOnResource):
    """SRF: with one resource type, the allocation is weighted max-min fair on it."""

    name = "srf"
    title = "single-resource fairness"
    measure = Measure("the largest relative shortfall on the single resource from its weighted (on a queue tree: "
                      "hierarchical) max-min fair amount; whole-task reading: the most whole tasks a user is short "
                      "of it", 0, ">")
    variants = {"max-min": "one resource type -> weighted max-min fair allocation of it (001 III-C)",
                TREE: "one resource type, queue trees, one server: no user below its hierarchical weighted max-min "
                      "fair amount",
                WHOLE_TASK: "one resource type, whole tasks, one server: no user a whole task short of its "
                            "(hierarchical on a tree) max-min fair amount"}
    default_variant = "max-min"
    hints = Hints(one_resource=True, no_external=True, no_server_demand=True, premise_note=_SRF_NOTE)
    variant_hints = {v: Hints(one_resource=True, no_external=True, no_server_demand=True, one_server=True,
                              premise_note=_SRF_NOTE + _ONE_SERVER_NOTE) for v in (TREE, WHOLE_TASK)}

    def premise(self, env, variant):
        # one resource type, and one demand per user: with per-server demand overrides (002 Sec. IV,
        # co-processors -- "future work" there) "max-min fair on the resource" no longer says anything
        # about tasks, and no seed defines or claims SRF for it
        """Resource 0 when there is one resource type and nothing else; else none."""
        return [0] if env.n_resources == 1 and not env.n_external and not env.has_server_demand else []

    def premise_text(self, variant):
        """Why the premise fails."""
        return "more than one resource type (or external resources, or per-server demands)"
