"""Envy-freeness (EF) and sharing incentive (SI) -- instance properties (no deviation).

EF (weighted; seed 002 Sec. II-A; seed 004 Def. 3; seed 003 Sec. 2.2 with bounds): for all users
``j != k``

    u_j( (w_j / w_k) * A_k ) <= u_j(A_j)

with ``u_j`` THE utility (TRUE demand, Leontief per server, external and ``n_j`` caps).  The ``n_j``
cap makes seed 003's "either x_i = B_i or ..." automatic.  Variants:
* ``placement-aware`` -- only ``k``'s bundles on servers ``j`` may use count (``j``'s eligible set);
* ``literal``         -- every server counts (004 Def. 3 has no placement; with placement this is
  the stricter reading).
Measure: max envy ratio ``u_j(scaled A_k) / u_j(A_j)`` over pairs; violated iff > 1.
With many users (>= ``SCREEN_USERS``, divisible tasks, no per-server demands) the ``J^2`` pairs are first
screened in floats by one vectorised formula (``u_j(scaled A_k) = min(w_j/w_k rho_jk sum_{s in M_j} x_ks,
external, n_j)`` with ``rho_jk = min_r d_kr / d_jr``; relative error below 1e-12), and only the pairs within
1e-9 of the largest ratio are evaluated one by one (exactly in exact mode, by the same closed form in
rational arithmetic; the worst pair once more by ``envy_utility`` itself): the worst pair, hence the
measure and the verdict, is the same as evaluating every pair.

SI: user ``j`` must get at least what the weighted equal split gives it,

    u_j(A_j) >= u_j( (w_j / sum_i w_i) * (c, c_er) )      -- a share of every server and external resource.

The three seed definitions (002 Sec. III-B, 004 Def. 6, 003 Sec. 2.2) are this one formula on our model
(docs/properties.md, "Readings of the seeds").  The variants name which seed's premise is exercised:
``per-server-split`` (always applicable), ``external`` (needs external resources), ``bounded``
(needs task bounds).  Measure: min over users of ``u_j(A_j) / benchmark_j``; violated iff < 1.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

import numpy as np

from mechverify.numbers import gt, plural, ratio
from mechverify.utility import envy_value_up_to_one, utility
from mechverify.utility import si_benchmark as utility_si_benchmark

from ..exact import certified_excess, envy_utility, exact_run, integral_of, own_utility, utility_interval
from . import budget as bud
from .base import READINGS, Certificate, Evaluation, Hints, Measure, Property, Witness, reading, reading_possible

__all__ = ["EnvyFreeness", "SharingIncentive", "si_benchmark", "SCREEN_USERS"]

#: from this many users on, EF screens the pairs in floats first (module docstring)
SCREEN_USERS = 16
_SCREEN_MARGIN = 1e-9


def _envy_ratios(mech, env, alloc, own, aware: bool) -> Optional[np.ndarray]:
    """Float matrix of ``u_j(scaled A_k) / u_j(A_j)`` (diagonal ``-inf``), or ``None`` when the closed form
    does not apply (few users, indivisible tasks, per-server demands, a user demanding nothing)."""
    J = env.n_users
    if J < SCREEN_USERS or integral_of(mech) or env.has_server_demand or alloc.env != env:
        return None
    D = np.array([[float(v) for v in row] for row in env.demand])
    if not (D > 0).any(axis=1).all():
        return None
    X = np.array([[float(v) for v in row] for row in alloc.x])
    W = np.array([float(w) for w in env.weight])
    scale = W[:, None] / W[None, :]

    def rho(A):  # rho[j, k] = min over r with A[j, r] > 0 of A[k, r] / A[j, r] (inf if A[j] is all zero)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(A[:, None, :] > 0, A[None, :, :] / np.where(A > 0, A, 1.0)[:, None, :], np.inf)
        return q.min(axis=2) if A.shape[1] else np.full((A.shape[0], A.shape[0]), np.inf)

    S = env.n_servers
    M = np.zeros((J, S))
    for j in range(J):
        M[j, list(env.eligible[j]) if aware else slice(None)] = 1.0
    with np.errstate(invalid="ignore"):
        V = scale * rho(D) * (M @ X.T)
        if env.n_external:
            E = np.array([[float(v) for v in row] for row in env.external_demand])
            ext = scale * rho(E) * X.sum(axis=1)[None, :]
            V = np.minimum(V, np.where(np.isnan(ext), np.inf, ext))
    caps = np.array([np.inf if t is None else float(t) for t in env.tasks])
    V = np.minimum(V, caps[:, None])
    u = np.array([float(v) for v in own])
    with np.errstate(divide="ignore", invalid="ignore"):
        R = np.where(u[:, None] > 0, V / np.where(u > 0, u, 1.0)[:, None], np.where(V > 0, np.inf, 1.0))
    np.fill_diagonal(R, -np.inf)
    return R


class _ClosedForm:
    """``u_j(scaled A_k)`` by the closed form of the module docstring, in the allocation's arithmetic, with
    the per-pair parts cached (valid where :func:`_envy_ratios` is)."""

    def __init__(self, env, alloc, aware: bool) -> None:
        self.env, self.x, self.aware = env, alloc.x, aware
        self.tot = [sum(row, Fraction(0)) if alloc.exact else sum(row) for row in alloc.x]
        self._mask: dict = {}

    @staticmethod
    def _min_ratio(a, b):
        best = None
        for ak, bk in zip(a, b):
            if bk > 0:
                q = Fraction(ak) / bk
                if best is None or q < best:
                    best = q
        return best  # None: nothing demanded (no constraint)

    def value(self, j: int, k: int):
        """What ``j`` gets from ``k``'s bundle scaled by ``w_j / w_k``."""
        env = self.env
        rho = self._min_ratio(env.demand[k], env.demand[j])
        mask = env.eligible[j] if self.aware else None
        if mask is None or len(mask) == env.n_servers:
            held = self.tot[k]
        else:
            mk = (j, k)
            held = self._mask.get(mk)
            if held is None:
                held = self._mask[mk] = sum((self.x[k][s] for s in mask), Fraction(0))
        v = rho * held
        if env.weight[j] != env.weight[k]:
            v = v * env.weight[j] / env.weight[k]
        if env.n_external:
            rho_e = self._min_ratio(env.external_demand[k], env.external_demand[j])
            if rho_e is not None:
                v = min(v, env.weight[j] / env.weight[k] * rho_e * self.tot[k])
        if env.tasks[j] is not None:
            v = min(v, env.tasks[j])
        return v


def _screened_pairs(R: np.ndarray, exact: bool) -> list[tuple[int, int]]:
    """The pairs within the screening margin of the largest float ratio, largest first (float mode: the
    largest only)."""
    top = R.max()
    cut = top if np.isinf(top) else top - _SCREEN_MARGIN * max(1.0, abs(top))
    js, ks = np.nonzero(R >= cut)
    order = np.argsort(-R[js, ks], kind="stable")
    pairs = [(int(js[i]), int(ks[i])) for i in order]
    return pairs if exact else pairs[:1]


class EnvyFreeness(Property):
    """EF (weighted): nobody prefers another user's bundle scaled by the weight ratio (module docstring)."""

    name = "ef"
    title = "envy-freeness (weighted)"
    measure = Measure("the largest envy ratio: tasks a user runs with another's (weight-scaled) bundle over its own", 1,
                      ">")
    variants = {
        "placement-aware": "only bundles on servers the envious user may use count (002 II-A with placement)",
        "literal": "every server counts (004 Def. 3)",
        "tree": "on a queue tree: the other's bundle scaled by the ratio of the two users' share guarantees "
                "(Environment.entitlement_ratio), placement-aware",
        "whole-task": "whole tasks: envy-free up to one task (the other's bundle less one of its tasks), "
                      "scaled by the entitlement ratio (w_j / w_k when flat), placement-aware",
    }
    default_variant = "placement-aware"
    hints = Hints(min_users=2, uses_users=True)
    z3 = "verifier.engines.smt.goals.ef"  # its z3 goal (docs/z3.md, "Goals")

    def claim_variants(self, mech):
        """The seeds' EF compares bundles a user could use: ``placement-aware`` ("literal" coincides with it
        without placement); a hierarchical or whole-task mechanism's claim speaks of its own reading."""
        return (reading(mech.setting) or "placement-aware",)

    def variant_possible(self, setting, variant):
        """The reading follows the setting (:func:`reading`): whole tasks -> ``whole-task``; a queue tree ->
        ``tree``; else ``placement-aware`` and, with placement constraints, ``literal``."""
        why = reading_possible(setting, variant, "ef")
        if why is not None or variant in READINGS:
            return why
        if variant == "literal" and not setting.placement:
            return "without placement constraints 'literal' is the same check as 'placement-aware'"
        return None

    def canonical_variant(self, setting, variant):
        """Without placement constraints ``literal`` is ``placement-aware``."""
        return "placement-aware" if variant == "literal" and not setting.placement else variant

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The max envy ratio over ordered pairs; the worst pair is the candidate."""
        alloc = alloc or mech(env, exact=exact)
        aware = variant != "literal"
        one = variant == "whole-task"
        worst, pair = None, None
        own = []
        for j in range(env.n_users):
            bud.tick(f"EF: {j} of {env.n_users} users' own utilities")
            own.append(own_utility(mech, env, alloc, j))
        R = None if one or env.has_queues else _envy_ratios(mech, env, alloc, own, aware)
        if R is not None:
            pairs = _screened_pairs(R, exact)
            closed = _ClosedForm(env, alloc, aware) if alloc.exact and len(pairs) > 1 else None
        else:
            pairs = [(j, k) for j in range(env.n_users) for k in range(env.n_users) if j != k]
            closed = None
        for n, (j, k) in enumerate(pairs):
            if n % 256 == 0:
                bud.tick(f"EF: {n} of {len(pairs)} pairs")
            v = closed.value(j, k) if closed is not None else \
                envy_value_up_to_one(env, alloc, j, k) if one else \
                envy_utility(mech, env, alloc, j, k, placement_aware=aware)
            r = ratio(v, own[j])
            if worst is None or r > worst:
                worst, pair = r, (j, k, v)
        if worst is None:
            return Evaluation(Fraction(1), False)
        j, k, v = pair
        if closed is not None:  # the worst pair by the one definition
            v = envy_utility(mech, env, alloc, j, k, placement_aware=aware)
            worst = ratio(v, own[j])
        violated = gt(v, own[j], exact)
        w = Witness(self.name, variant, mech.name, env, None, worst, (j, k)) if violated else None
        return Evaluation(worst, violated, w)

    def recheck(self, mech, witness):
        """Certified iff the envied bundle's lower utility exceeds the own bundle's upper one."""
        env = witness.env
        j, k = witness.users
        run = exact_run(mech, env)
        if witness.variant == "whole-task":
            return self._recheck_up_to_one(mech, witness, run)
        mask = range(env.n_servers) if witness.variant == "literal" else env.eligible[j]
        scale = env.entitlement_ratio(j, k)
        ex = certified_excess(lambda o: utility_interval(env, run, j, k, mask=mask, scale=scale, over_range=o),
                              lambda o: utility_interval(env, run, j, over_range=o))
        if ex is None:
            return None
        own, envied, gap, robust = ex.below, ex.above, ex.gap, ex.robust
        u, v = env.users[j], env.users[k]
        summary = (f"{u} runs {own[1]} {plural(own[1], 'task')} with its own bundle but {envied[0]} with "
                   f"{'' if scale == 1 else str(scale) + ' x '}{v}'s bundle")
        return Certificate(witness, Fraction(gap), ratio(envied[0], own[1]), {"allocation": run.alloc},
                           {f"u[{u}] own": own[1], f"u[{u}] of {v}'s bundle": envied[0]}, robust,
                           "", "exact" if run.exact else "interval", summary)

    def _recheck_up_to_one(self, mech, witness, run):
        """EF up to one task, on the exact (integral) allocation: ``j``'s whole tasks with ``k``'s bundle
        less the task whose removal leaves ``j`` the least exceed ``j``'s own."""
        if not run.exact:
            return None
        env = witness.env
        j, k = witness.users
        own = utility(env, run.alloc, j, True)
        envied = envy_value_up_to_one(env, run.alloc, j, k)
        gap = envied - own
        if not gap > 0:
            return None
        u, v = env.users[j], env.users[k]
        scale = env.entitlement_ratio(j, k, whole=True)
        summary = (f"{u} runs {own} {plural(own, 'task')} with its own bundle but {envied} with "
                   f"{'' if scale == 1 else str(scale) + ' x '}{v}'s bundle less one of {v}'s tasks (whole tasks)")
        return Certificate(witness, Fraction(gap), ratio(envied, own), {"allocation": run.alloc},
                           {f"u[{u}] own": own, f"u[{u}] of {v}'s bundle less one task": envied}, None,
                           "whole tasks: the split over servers decides", "exact", summary)


def si_benchmark(env, j, mech=None) -> Any:
    """``u_j((w_j / sum w) * (c, c_er))`` (``mechverify.utility.si_benchmark``); for a mechanism with
    indivisible tasks the split is worth whole tasks, like the user's own bundle."""
    return utility_si_benchmark(env, j, integral=integral_of(mech))


def _si_screen(envs, allocs):
    """SI's float measure on flat instances of one shape (``n`` of them) with divisible tasks: per instance
    the smallest ``u_j / benchmark_j`` over demanding users, that user (-1: nobody demands) and whether
    ``benchmark > u`` beyond ``FLOAT_REL``.  The formulas of ``mechverify.utility`` (``true_tasks``: per
    eligible server the Leontief tasks of the bundle, external limit, task bound) in numpy."""
    from mechverify.numbers import FLOAT_REL

    f = float
    D = np.array([[[f(v) for v in row] for row in e.demand] for e in envs])  # n J R
    C = np.array([[[f(v) for v in row] for row in e.capacity] for e in envs])  # n S R
    J, S = D.shape[1], C.shape[1]
    EL = np.array([[[s in e.eligible[j] for s in range(S)] for j in range(J)] for e in envs])  # n J S
    K = envs[0].n_external
    DE = np.array([[[f(v) for v in row] for row in e.external_demand] for e in envs]).reshape(len(envs), J, K)
    CE = np.array([[f(v) for v in e.external_capacity] for e in envs]).reshape(len(envs), K)
    W = np.array([[f(w) for w in e.weight] for e in envs])
    B = np.array([[np.inf if t is None else f(t) for t in e.tasks] for e in envs])
    X = np.array([[[f(v) for v in row] for row in a.x] for a in allocs])  # n J S
    inf = np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        anyd = (D > 0).any(axis=2)  # n J
        per = np.where(anyd[:, :, None], X, inf)
        total = np.where(EL, per, 0.0).sum(axis=2)
        anye = (DE > 0).any(axis=2) if K else np.zeros_like(anyd)
        ext = np.where(anye, X.sum(axis=2), inf)
        u = np.minimum(np.minimum(total, ext), B)
        share = W / W.sum(axis=1, keepdims=True)  # n J
        # Leontief tasks of share * c_s for each (j, s): min over demanded r of share c_sr / d_jr
        q = np.where(D[:, :, None, :] > 0, (share[:, :, None, None] * C[:, None, :, :]) /
                     np.where(D[:, :, None, :] > 0, D[:, :, None, :], 1.0), inf).min(axis=3)  # n J S
        bench = np.where(EL, q, 0.0).sum(axis=2)
        if K:
            qe = np.where(DE > 0, share[:, :, None] * CE[:, None, :] / np.where(DE > 0, DE, 1.0), inf).min(axis=2)
            bench = np.minimum(bench, qe)
        bench = np.minimum(bench, B)
        # demanding users (Environment.demands): a bound > 0, a usable server, room in the external resources
        runs = ~((D[:, :, None, :] > 0) & (C[:, None, :, :] <= 0)).any(axis=3)  # n J S
        usable = (EL & runs).any(axis=2)
        ext_lim = np.where(DE > 0, CE[:, None, :] / np.where(DE > 0, DE, 1.0), inf).min(axis=2) if K else \
            np.full(u.shape, inf)
        demanding = (B > 0) & usable & (ext_lim > 0)
        r = np.where(bench == 0, np.where(u == 0, 1.0, inf), u / np.where(bench == 0, 1.0, bench))
        r = np.where(demanding, r, inf)
    who = np.where(demanding.any(axis=1), r.argmin(axis=1), -1)
    rows = np.arange(len(envs))
    pick = np.maximum(who, 0)
    measure = r[rows, pick]
    ub, bb = u[rows, pick], bench[rows, pick]
    violated = (who >= 0) & (bb > ub + FLOAT_REL * np.maximum(1.0, np.abs(ub)))
    return measure, who, violated


class SharingIncentive(Property):
    """SI: every user gets at least what its weighted equal split gives it (module docstring)."""

    name = "si"
    title = "sharing incentive"
    measure = Measure("the smallest ratio of a user's tasks to those of its equal-split benchmark", 1, "<")
    variants = {
        "per-server-split": "a weighted share of every server, eligible or not (002 III-B)",
        "external": "equal split including the external resources (004 Def. 6)",
        "bounded": "equal split capped by the task bound (003 Sec. 2.2)",
        "tree": "on a queue tree: the user's share of the tree's static split (Environment.entitlement) of "
                "every server",
        "whole-task": "whole tasks: the weighted equal split (on a queue tree: the tree's static split) counted in "
                      "whole tasks, like the user's own bundle",
    }
    default_variant = "per-server-split"
    hints = Hints(uses_users=True)
    z3 = "verifier.engines.smt.goals.si"  # its z3 goal (docs/z3.md, "Goals")
    variant_hints = {
        "external": Hints(uses_users=True, min_external=1, premise_note="at least one external resource"),
        "bounded": Hints(uses_users=True, require_bounds=True, premise_note="at least one finite task bound"),
    }

    benchmark_label = "equal split"  # how a certificate's numbers name the benchmark

    def benchmark(self, env, j, mech) -> Any:
        """What user ``j`` must run at least (:func:`si_benchmark`)."""
        return si_benchmark(env, j, mech)

    def split_text(self, env, j, mech=None) -> str:
        """How the certificate names the benchmark's bundle."""
        if not env.has_queues:
            return "weighted equal split of every server"
        return f"share {env.entitlement(j)} of every server (the tree's static split)"  # (static: every node)

    def claim_variants(self, mech):
        """Every variant; a hierarchical or whole-task mechanism's claim speaks of its own reading."""
        r = reading(mech.setting)
        return (r,) if r else tuple(v for v in self.variants if v not in READINGS)

    def variant_possible(self, setting, variant):
        """The reading follows the setting (``base.reading``); ``external`` needs external resources,
        ``bounded`` task bounds in the setting."""
        why = reading_possible(setting, variant, "si")
        if why is not None or variant in READINGS:
            return why
        if variant == "external" and not setting.external:
            return "the setting has no external resources"
        if variant == "bounded" and not setting.bounds:
            return "the setting has no task bounds"
        return None

    def applicable(self, mech, env, variant):
        """``external`` / ``bounded`` need external resources / a task bound in the instance."""
        if variant == "external" and not env.n_external:
            return "no external resources in this instance"
        if variant == "bounded" and not env.has_bounds:
            return "no task bounds in this instance"
        return None

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The min ratio of a user's utility to its equal-split benchmark."""
        alloc = alloc or mech(env, exact=exact)
        worst, who = None, None
        for j in range(env.n_users):
            bud.tick(f"{self.name.upper()}: {j} of {env.n_users} users")
            if not env.demands(j, integral_of(mech)):
                continue  # (hsi: a user that demands nothing is guaranteed nothing)
            b = self.benchmark(env, j, mech)
            u = own_utility(mech, env, alloc, j)
            r = ratio(u, b)
            if worst is None or r < worst:
                worst, who = r, (j, u, b)
        if who is None:
            return Evaluation(Fraction(1), False)
        j, u, b = who
        violated = gt(b, u, exact)
        w = Witness(self.name, variant, mech.name, env, None, worst, (j,)) if violated else None
        return Evaluation(worst, violated, w)

    def evaluate_batch(self, mech, envs, allocs, variant):
        """:meth:`evaluate` in floats for many flat instances with divisible tasks at once (``rates``); the
        same formula in numpy (:func:`_si_screen`), the argmin user the candidate.  Other readings, queue
        trees and per-server demands: ``None`` (one by one)."""
        if variant in READINGS or integral_of(mech):
            return None
        out: list = [None] * len(envs)
        ok = [n for n, e in enumerate(envs) if not e.has_queues and not e.has_server_demand
              and not allocs[n].exact and allocs[n].env is e]
        groups: dict = {}
        for n in ok:
            e = envs[n]
            groups.setdefault((e.n_users, e.n_servers, e.n_resources, e.n_external), []).append(n)
        for idx in groups.values():
            measure, who, violated = _si_screen([envs[n] for n in idx], [allocs[n] for n in idx])
            for k, n in enumerate(idx):
                if who[k] < 0:
                    out[n] = Evaluation(1.0, False)
                    continue
                w = Witness(self.name, variant, mech.name, envs[n], None, float(measure[k]), (int(who[k]),)) \
                    if violated[k] else None
                out[n] = Evaluation(float(measure[k]), bool(violated[k]), w)
        return out

    def recheck(self, mech, witness):
        """Certified iff the benchmark exceeds the user's upper utility."""
        env = witness.env
        (j,) = witness.users
        run = exact_run(mech, env)
        b = self.benchmark(env, j, mech)
        ex = certified_excess(lambda o: (b, b), lambda o: utility_interval(env, run, j, over_range=o))
        if ex is None:
            return None
        own, gap, robust = ex.below, ex.gap, ex.robust
        u = env.users[j]
        split = self.split_text(env, j, mech)
        return Certificate(witness, Fraction(gap), ratio(own[1], b), {"allocation": run.alloc},
                           {f"u[{u}]": own[1], f"u[{u}] {self.benchmark_label}": b}, robust, "",
                           "exact" if run.exact else "interval",
                           f"{u} runs {own[1]} {plural(own[1], 'task')}, but {b} with its {split}"
                           f"{' (whole tasks)' if witness.variant == 'whole-task' else ''}")
