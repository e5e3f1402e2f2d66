"""``slurm-classic`` and ``slurm-fairtree``: Slurm's multifactor priority reduced to its fair-share term, as
stateful policies over executions (docs/executions.md), with decayed usage per association.

Source (read, not copied; our code follows the semantics): SchedMD/slurm @
284c3b95f08a2dc2478499837b03355e1b9c5c75, ``doc/html/classic_fair_share.shtml``, ``doc/html/fair_tree.shtml``,
``doc/html/priority_multifactor.shtml`` and ``src/plugins/priority/multifactor/priority_multifactor.c``
(``_init_decay_vars``: the per-second decay factor ``1 - 0.693 / PriorityDecayHalfLife``; ``_decay_thread``:
every PriorityCalcPeriod the usage is multiplied by ``decay_factor ** run_delta``; ``_apply_new_usage``: a job
adds ``run_delta * decay_factor ** run_delta * billable_tres``, i.e. the period's usage decayed once at the tick;
``decay_hl = 0``: no decay) and ``src/plugins/priority/multifactor/fair_tree.c`` (the factors:
:mod:`mechanisms.ports.slurm.fairshare`); ``src/slurmctld/job_mgr.c`` (``calc_job_billable_tres``: without
TRESBillingWeights a job's billing is its CPU count).

Our model on it (stated in ``list``)
------------------------------------
* ACCOUNTS are the execution's queues (a queue's weight = its raw shares, its path = the account tree); a USER
  is one association (its weight = its raw shares) in its queue's account (no queue: under root); a user's
  TASKS are its jobs (whole tasks on servers).
* USAGE: billing = CPUs (Slurm's default, no TRESBillingWeights): a task's usage rate is its per-task demand
  of the resource named ``cpu`` (any case; none: the first resource) on the server it runs on; usage accrues as
  that rate x the time between steps.  Decay as upstream's code: ticks at every multiple of the calc period P
  from time 0; at a tick, usage <- (usage + what accrued since the last tick) x ``(1 - 0.693/H) ** P`` --
  exact rationals (upstream's linearised decay factor, not ``2 ** (-P/H)``: the code's, not the doc's
  "half-life", and rational).  The factors and the order are recomputed at the ticks only (the decay thread);
  between ticks the last tick's order is used.  Registered with P = 1 and H = 10 time units (upstream's
  defaults are 5 minutes and 7 days; scaled so that decay acts within the searched traces), dampening 1.
* ASSOCIATIONS persist: a user's association exists from its arrival on and keeps its usage (and its place in
  Fair Tree's user count) after it leaves, as Slurm's associations outlive their jobs.
* THE PRIORITY is the fair-share factor alone (PriorityWeightFairshare only: age, job size, partition, QOS,
  association, TRES and site factors are 0); ties (equal factors) by arrival order (Slurm: by job id).
  Classic orders by the exact ratio ``UE/S`` (F = 2**(-(UE/S)/d) is strictly decreasing in it; F itself is a
  float), Fair Tree by its exact rank.
* THE SCHEDULER: whole tasks in priority order (``progressive_filling`` with the priority as key, first-fit
  placement); a user whose next task fits nowhere is skipped and lower-priority users go on (upstream's main
  loop would stop the partition at that job; backfill would start later jobs only where they do not delay
  it -- neither is modelled).  NO PREEMPTION: a running task keeps its resources until it finishes (the
  ``irrevocable`` conventions, docs/executions.md: a user whose report changes gives back what it holds; a
  finish trims; a server that shrinks below what runs on it releases it).
* Omitted: QOS (usage factors, NoDecay, limits), partitions and their priority tiers, backfill, preemption,
  FairShare=parent, PriorityUsageResetPeriod, TRESBillingWeights, PriorityFlags (DEPTH_OBLIVIOUS, MAX_TRES,
  CALCULATE_RUNNING, INCR_ONLY), the job priority's integer rounding, limits (GrpTRES, MaxJobs...).
"""
from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from functools import partial
from typing import Any, Optional

from mechverify.allocation import Allocation
from mechverify.execution import Execution, StepContext
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import progressive_filling

from ...core.mechanism import Mechanism
from ...core.order import order_facet
from ...core.registry import OrderSpec, Setting, builtin
from ...core.mechanism import SettingError, call
from ...core.time import TimeSpec, _Irrevocable, _left, _over, _report_key, execution_of
from .fairshare import INF, Assoc, Tree, classic, classic_ratios_some, fair_tree, fair_tree_ranks_some
from .fast import FastSteps, FloatUsage

__all__ = ["ALGORITHMS", "billing_resource", "decay_per_period", "tree_of", "priority_keys", "SlurmFairShare",
           "begin", "allocate", "order", "time_spec", "SETTING", "MAX_TICKS"]

#: the two fair-share algorithms (PriorityFlags=NO_FAIR_TREE selects the first)
ALGORITHMS = ("classic", "fair-tree")
#: calc periods a run may tick through between two steps (each tick is exact rational arithmetic)
MAX_TICKS = 100_000
_ZERO = Fraction(0)


def billing_resource(resources: tuple) -> int:
    """The resource billed: the one named ``cpu`` (any case), else the first (module docstring)."""
    for r, name in enumerate(resources):
        if str(name).lower() == "cpu":
            return r
    return 0


def decay_per_period(half_life: Any, calc_period: int) -> Fraction:
    """Upstream's decay over one calc period: ``(1 - 0.693 / H) ** P`` (exact; 1 when ``H`` is 0: no decay)."""
    if not half_life:
        return Fraction(1)
    df = 1 - Fraction(693, 1000) / Fraction(half_life)
    if df <= 0:
        raise InstanceError(f"PriorityDecayHalfLife {half_life} <= 0.693: upstream's decay factor would be <= 0")
    return df ** int(calc_period)


def _acct(path: str) -> str:
    return "a:" + path


def _user(name: str) -> str:
    return "u:" + name


def tree_of(queues: tuple, parents: list, queue_weight: tuple, users: list, usage: dict) -> Tree:
    """The association tree: the queues as accounts (``parents[q]``: the parent queue's index or ``None``), then
    ``users`` as ``(name, queue index or None, shares)``; ``usage`` by user name."""
    assocs = [Assoc(_acct(queues[q]), None if parents[q] is None else _acct(queues[parents[q]]), queue_weight[q], False)
              for q in range(len(queues))]
    assocs += [Assoc(_user(u), None if q is None else _acct(queues[q]), w, True) for u, q, w in users]
    return Tree(assocs, {_user(u): v for u, v in usage.items()})


def priority_keys(tree: Tree, algorithm: str, names: list) -> dict:
    """Each named user's key (smaller is served first): classic ``UE/S`` (exact), Fair Tree ``-rank``; with the
    share each reports (classic ``UE/S``; Fair Tree ``1 - rank/count``) and every account's queue share."""
    if algorithm == "classic":
        res = classic(tree)
        keys = {u: res.ratio(_user(u)) for u in names}
        return {"key": keys, "share": dict(keys), "queue": {a.name: res.ratio(a.name) for a in tree.assocs if not a.user}}
    res = fair_tree(tree)
    keys = {u: -res.rank[_user(u)] for u in names}
    share = {u: 1 - res.factor(_user(u)) for u in names}
    queue = {}
    for a in tree.assocs:  # U / S at its level (0 when unused): 1 / LF
        lf = res.level_fs[a.name]
        queue[a.name] = _ZERO if lf == INF else (INF if not lf else 1 / lf)
    return {"key": keys, "share": share, "queue": queue}


def _rate(env: Environment, x: Any, j: int, r: int) -> Any:
    acc: Any = _ZERO
    for s, n in enumerate(x[j]):
        if n:
            acc = acc + n * env.d(j, s)[r]
    return acc


class _Held(_Irrevocable):
    """:class:`mechanisms.core.time._Irrevocable` (the tasks held, the idle capacity to the scheduler) with the held
    tasks counted in integers in floats: where every held amount is a whole number (whole tasks) and no bound
    falls below what is held (no trim), the same residual and the same allocation as the lift's ``Fraction``
    arithmetic, its numbers equal; otherwise, and in exact arithmetic, the lift itself."""

    def step(self, ctx: StepContext) -> Allocation:
        env, prev = ctx.env, ctx.previous
        if ctx.exact or prev is None or env.n_external:
            return super().step(ctx)
        held = []
        for row in prev.x:
            ints = []
            for v in row:
                if v.__class__ is not float or not v.is_integer():
                    return super().step(ctx)
                ints.append(int(v))
            held.append(ints)
        keys = {u: _report_key(env, j) for j, u in enumerate(env.users)}
        for j, u in enumerate(env.users):  # a changed report gives back what it holds
            if self.reports.get(u) != keys[u]:
                held[j] = [0] * env.n_servers
        for j in range(env.n_users):
            n = env.tasks[j]
            if n is not None and sum(held[j]) > n:  # a trim: the lift's own arithmetic
                return super().step(ctx)
        self.reports = keys
        J, S, R = env.n_users, env.n_servers, env.n_resources
        zero = Fraction(0)
        cap = []
        for s in range(S):
            used = []
            for r in range(R):
                whole, parts = 0, []
                for j in range(J):
                    h = held[j][s]
                    if h:
                        dv = env.d(j, s)[r]
                        if dv.denominator == 1:
                            whole += h * dv.numerator
                        else:
                            parts.append(h * dv)
                used.append(sum(parts, Fraction(whole)))
            if any(_over(u, c, False) for u, c in zip(used, env.capacity[s])):
                for j in range(J):  # capacity lost: release the server
                    held[j][s] = 0
                used = [zero] * R
            cap.append(tuple(_left(c, u, False) for c, u in zip(env.capacity[s], used)))
        tasks = tuple(None if env.tasks[j] is None else max(env.tasks[j] - sum(held[j]), zero) for j in range(J))
        residual = replace(env, capacity=tuple(cap), tasks=tasks)
        try:
            add = call(self.mech, residual, False).x
        except SettingError:
            add = tuple((zero,) * S for _ in range(J))
        x = tuple(tuple(float(h + (a if isinstance(a, Fraction) else Fraction(a))) if (h or a) else 0.0
                        for h, a in zip(held[j], add[j])) for j in range(J))
        return Allocation(env, x, self.mech.name, False, info={"lift": "irrevocable"})


class SlurmFairShare(FastSteps):
    """One run: every association's decayed usage (as of the last tick), what accrued since, what each user's
    running tasks bill per unit time, and the tasks held (non-preemptive: :class:`_Irrevocable`)."""

    def __init__(self, mech: Optional[Mechanism], ex: Execution, exact: bool, *, algorithm: str,
                 half_life: Any, calc_period: int, name: str, literal: bool = False) -> None:
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm: expected one of {ALGORITHMS}, got {algorithm!r}")
        self.algorithm, self.name, self.exact, self.literal = algorithm, name, exact, literal
        num = Fraction if exact else float
        self.num = num
        self.factor = num(decay_per_period(half_life, calc_period))
        self.period = Fraction(calc_period)
        self.usage: dict[str, Any] = {}  # decayed, as of the last tick (exact or literal; else in self.book)
        self.accrued: dict[str, Any] = {}  # since the last tick
        self.rate: dict[str, Any] = {}  # billing per unit time of what each user ran in the last step
        self.assocs: dict[str, tuple] = {}  # user -> (queue index, shares), first-seen order
        self.last_t: Any = Fraction(0)
        self.next_tick = self.period
        self.keys: dict = {}
        self.ticked = True  # the order is computed at step 0
        self.billing = billing_resource(ex.resources)
        inner = builtin(name, name, self._fill, SETTING)
        self.held = (_Irrevocable if literal else _Held)(inner, ex, exact)
        self._env: Optional[Environment] = None
        # in floats (not literal): the usages in arrays, the steps in integers where the numbers are whole (_fast)
        self.book: Optional[FloatUsage] = None if (exact or literal) else FloatUsage(self.factor)
        self._tree: tuple = (None, None)  # queues, their weights -> the accounts' parents and shares
        self._known: dict = {}  # user -> (demand, task bound, the demand as ints, the bound (an int if whole), floor)

    def _fill(self, env: Environment, exact: bool) -> Allocation:
        """The scheduler on the idle capacity (``env``: the residual of :class:`_Irrevocable`).  The fast way reads
        the fair-share order only when it can matter (:meth:`_all_fit`) and computes it then (:meth:`_ordered`):
        the same tasks, since the order is a function of the state at this step either way."""
        if self.literal:
            return progressive_filling(env, key=lambda st, j: (self.keys[env.users[j]], j), name=self.name, local=False)
        if self._all_fit(env):
            return progressive_filling(env, key=lambda st, j: j, name=self.name, local=False)
        keys = self._ordered()
        return progressive_filling(env, key=lambda st, j: (keys[env.users[j]], j), name=self.name, local=False)

    @staticmethod
    def _all_fit(env: Environment) -> bool:
        """One server, every task bound finite, and every pending task fits on it at once: whole-task filling
        then places every one of them in any order (first fit on the one server), so the order is not read."""
        if env.n_servers != 1 or env.n_external or any(n is None for n in env.tasks):
            return False
        need = [Fraction(0)] * env.n_resources
        for j in range(env.n_users):
            n = math.floor(env.tasks[j])
            if n > 0:
                if 0 not in env.eligible[j]:
                    return False
                for r, dv in enumerate(env.d(j, 0)):
                    if dv:
                        need[r] += n * dv
        return all(a <= c for a, c in zip(need, env.capacity[0]))

    def _ordered(self) -> dict:
        """The keys of the last tick's order, computed now if a tick or a new association made them stale."""
        env = self._env
        if self.ticked or any(u not in self.keys for u in env.users):
            self._recompute(env)
        return self.keys

    def _recompute(self, env: Environment) -> None:
        if self.book is not None:
            self.keys = self._keys_for(env, list(env.users))
            self.ticked = False
            return
        parents = [env.queue_parent(q) for q in range(env.n_queues)]
        users = [(u, q, w) for u, (q, w) in self.assocs.items()]
        tree = tree_of(env.queues, parents, env.queue_weight, users, {u: self.usage.get(u, 0) for u in self.assocs})
        self.keys = priority_keys(tree, self.algorithm, list(self.assocs))["key"]
        self.ticked = False

    def _keys_for(self, env: Environment, names: list) -> dict:
        """The keys of the users ``names`` from the float arrays (:class:`FloatUsage`): where :class:`Tree`'s zero
        is a float (the first association has a usage), :func:`fair_tree_ranks_some` / :func:`classic_ratios_some`
        -- the same numbers as :func:`priority_keys` on the whole tree, for these users only; before that (all
        usages 0 or a mix of 0 and floats), :func:`priority_keys` itself on the tree of every association."""
        book = self.book
        if book.first in book.seen:
            usage, shares = book.arrays()
            tree = self._tree
            if tree[0] is not env.queues or tree[1] is not env.queue_weight:  # the accounts (an execution's)
                tree = self._tree = (env.queues, env.queue_weight, [env.queue_parent(q) for q in range(env.n_queues)],
                                     [float(w) for w in env.queue_weight])
            parents, weights = tree[2], tree[3]
            targets = [book.where[u] for u in names]
            if self.algorithm == "fair-tree":
                got = fair_tree_ranks_some(parents, weights, usage, shares, targets, book.levels)
                return {u: -r for u, r in zip(names, got)}
            return dict(zip(names, classic_ratios_some(parents, weights, usage, shares, targets, book.levels)))
        parents = [env.queue_parent(q) for q in range(env.n_queues)]
        users = [(u, q, w) for u, (q, w) in self.assocs.items()]
        tree = tree_of(env.queues, parents, env.queue_weight, users, {u: book.value(u) for u in self.assocs})
        return priority_keys(tree, self.algorithm, names)["key"]

    def state_key(self) -> Any:
        return None  # decayed usage does not recur: no state digest

    def _advance(self, t: Any) -> None:
        if self.book is not None and t.__class__ is float and self.period.denominator == 1 and \
                (self.last_t.__class__ is float or self.last_t.denominator == 1):
            self._advance_float(t)
            return
        ticks = 0
        while self.next_tick <= t:
            ticks += 1
            if ticks > MAX_TICKS:
                raise InstanceError(f"execution: more than {MAX_TICKS} calc periods between two steps of {self.name}")
            dt = self.num(self.next_tick - self.last_t)
            for u, r in self.rate.items():
                self.accrued[u] = self.accrued.get(u, 0) + r * dt
            if self.book is not None:
                self.book.tick(self.accrued)
            else:
                for u in set(self.usage) | set(self.accrued):
                    self.usage[u] = (self.usage.get(u, 0) + self.accrued.get(u, 0)) * self.factor
            self.accrued = {}
            self.last_t, self.next_tick = self.next_tick, self.next_tick + self.period
            self.ticked = True
        dt = self.num(Fraction(t) - Fraction(self.last_t))
        if dt:
            for u, r in self.rate.items():
                self.accrued[u] = self.accrued.get(u, 0) + r * dt
        self.last_t = t

    def _advance_float(self, t: float) -> None:
        """:meth:`_advance` where the time is a float and the ticks are whole: the times compared and subtracted as
        floats -- the same results, since a whole tick (below 2**53) is a float exactly, a float comparison is
        exact and a float subtraction is the exact difference rounded once, as ``float(Fraction - Fraction)``."""
        nt, period, accrued, rate = self.next_tick, self.period, self.accrued, self.rate
        ntf, last = float(nt), float(self.last_t)
        ticks = 0
        while ntf <= t:
            ticks += 1
            if ticks > MAX_TICKS:
                raise InstanceError(f"execution: more than {MAX_TICKS} calc periods between two steps of {self.name}")
            dt = ntf - last
            for u, r in rate.items():
                accrued[u] = accrued.get(u, 0) + r * dt
            self.book.tick(accrued)
            accrued = self.accrued = {}
            self.last_t, last = nt, ntf
            nt = self.next_tick = nt + period
            ntf = float(nt)
            self.ticked = True
        dt = t - last
        if dt:
            for u, r in rate.items():
                accrued[u] = accrued.get(u, 0) + r * dt
        self.last_t = t

    def step(self, ctx: StepContext) -> Allocation:
        env = ctx.env
        self._advance(ctx.t)
        for j, u in enumerate(env.users):
            if u not in self.assocs:  # a new association's factor is computed when it appears (classic computes
                self.assocs[u] = (env.user_queue[j], env.weight[j])  # it on demand; Fair Tree at its next tick)
                if self.book is not None:
                    self.book.add(u, env.user_queue[j], env.weight[j])
                self.ticked = True
        if self.literal and (self.ticked or any(u not in self.keys for u in env.users)):
            self._recompute(env)
        self._env = env
        if self.book is not None:
            fast = self._fast(ctx)
            if fast is not None:
                return fast
        alloc = self.held.step(ctx)
        self.rate = {u: self.num(_rate(env, alloc.x, j, self.billing)) for j, u in enumerate(env.users)}
        usage = {u: self.book.value(u) for u in env.users} if self.book is not None else \
            {u: self.usage.get(u, 0) for u in env.users}
        return replace(alloc, mechanism=self.name, info={"usage": usage})

    def _ordered_some(self, env: Environment, names_of: list) -> dict:
        """The keys of the waiting users ``names_of`` (indices), as of the last tick: kept until a tick or a new
        association makes them stale."""
        if self.ticked:
            self.keys = {}
            self.ticked = False
        want = [env.users[j] for j in names_of if env.users[j] not in self.keys]
        if want:
            self.keys.update(self._keys_for(env, want))
        return self.keys


def begin(mech: Optional[Mechanism], ex: Execution, exact: bool, *, algorithm: str, half_life: Any = 10,
          calc_period: int = 1, name: str = "", literal: bool = False) -> SlurmFairShare:
    return SlurmFairShare(mech, ex, exact, algorithm=algorithm, half_life=half_life, calc_period=calc_period,
                          name=name or f"slurm-{algorithm}", literal=literal)


def allocate(env: Environment, exact: bool = False, *, name: str, algorithm: str) -> Allocation:
    """The first step (every user present at time 0, no usage yet): what ``allocate`` and the one-instance
    properties judge."""
    ex = execution_of(env)
    st = begin(None, ex, exact, algorithm=algorithm, name=name)
    return st.step(StepContext(0, Fraction(0), None, env, None, ex, exact))


# ---------------------------------------------------------------------------------------------- the order facet
def _derive(state: Allocation, algorithm: str) -> dict:
    """The state's allocation read as the associations' decayed usage (one unit of time of running it, no
    earlier history): the order the policy would give after that."""
    env = state.env
    r = billing_resource(env.resources)
    usage = {u: Fraction(_rate(env, state.x, j, r)) for j, u in enumerate(env.users)}
    parents = [env.queue_parent(q) for q in range(env.n_queues)]
    users = [(u, env.user_queue[j], env.weight[j]) for j, u in enumerate(env.users)]
    got = priority_keys(tree_of(env.queues, parents, env.queue_weight, users, usage), algorithm, list(env.users))
    got["users"] = env.users
    got["queues"] = env.queues
    return got


def _compare(d: dict, i: int, j: int) -> int:
    a, b = d["key"][d["users"][i]], d["key"][d["users"][j]]
    return (a > b) - (a < b)


def _share(d: dict, j: int) -> Any:
    return d["share"][d["users"][j]]


def _queue_share(d: dict, q: int) -> Any:
    return d["queue"][_acct(d["queues"][q])]


def order(*, algorithm: str) -> OrderSpec:
    """The order facet: the state's allocation read as the usage (:func:`_derive`)."""
    return order_facet(partial(_derive, algorithm=algorithm), _compare, _share, _queue_share)


def time_spec(*, algorithm: str, name: str) -> TimeSpec:
    return TimeSpec(begin=partial(begin, algorithm=algorithm, name=name), kind="stateful", rounds=False, revocable=False,
                    model=f"Slurm {algorithm} fair share: decayed CPU-time usage per association (ticks every "
                          f"calc period P=1, half-life H=10, upstream's factor (1-0.693/H)^P); at every event the "
                          f"idle capacity goes to pending tasks in the last tick's fair-share order, first fit; "
                          f"no preemption")


SETTING = Setting(placement=True, external=False, bounds=True, weights=True, divisible=False, hierarchy=True)
