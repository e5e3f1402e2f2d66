"""``kueue-afs``: Kueue's Admission Fair Sharing (KEP 4136) as a stateful admission policy over executions
(docs/executions.md): LocalQueues ordered inside their ClusterQueue by their decayed consumed usage.

Source (read, not copied; our code follows the semantics): kubernetes-sigs/kueue @
ff69552e79ad21652c36caa97038382e55625cf7,

* ``keps/4136-admission-fair-sharing/README.md`` (the design; "Entry penalty": the 0.1 vs 0.05 CPU burst);
* ``pkg/util/admissionfairsharing/admission_fair_sharing.go``: ``calculateAlphaRate`` (``A = 1 - 0.5 **
  (sampling / halfLife)``, 0 when the half-life is 0), ``CalculateEntryPenalty`` (``A x`` the workload's total
  requests, ``A`` over ONE sampling interval), ``CalculateUsage`` (the sum over resources, in sorted order, of
  ``resourceWeights[r]`` (default 1) x (consumed + pending penalty), divided by the LocalQueue's weight; +inf
  for a weight <= 0), ``CalculateDecayedConsumed`` (``(1 - A(elapsed)) x old + A(elapsed) x new``),
  ``LQWeightAsFloat64`` (``fairSharing.weight``, default 1);
* ``pkg/cache/queue/cluster_queue.go``: ``queueOrderingFunc`` -- the ClusterQueue heap compares two workloads
  by their LocalQueues' ``CalculateUsage`` first, then by ``baseCompareFunc`` (priority, then timestamp, then
  UID); ``Pop`` rebuilds the heap when a LocalQueue has a pending penalty;
* ``pkg/controller/core/localqueue_controller.go``: ``Reconcile`` (the sampling interval is enforced from the
  entry's ``LastUpdate``: a reconcile sooner than ``usageSamplingInterval`` after it is requeued for the
  rest), ``reconcileConsumedUsage`` (decays the consumed usage towards the LocalQueue's CURRENT admitted usage
  with ``A(now - LastUpdate)``; a half-life of 0 resets it to empty);
* ``pkg/scheduler/scheduler.go``: ``updateEntryPenalty`` / ``shouldApplyEntryPenalty`` (the penalty is
  pushed when the workload is assumed); ``pkg/controller/core/workload_controller.go``:
  ``updateAfsConsumedUsage`` (on the transition to Admitted: decay with ``A(now - LastUpdate)`` towards the
  admitted usage, fold the workload's penalty into the consumed usage, ``LastUpdate = now``);
  ``pkg/cache/queue/afs/usage_ledger.go`` and ``entry_penalties.go`` (the ledger);
* ``apis/config/v1beta2/defaults.go``: ``usageSamplingInterval`` defaults to 5 minutes; ``usageHalfLifeTime``
  has NO default (issue 11134: unset means 0s); ``apis/config/v1beta2/configuration_types.go``.

Our model on it (stated in ``list``)
------------------------------------
* TIME: one execution time unit = one ``usageSamplingInterval`` (upstream's default: 5 minutes).  Registered
  with ``usageHalfLifeTime`` = 1 unit (so ``A`` over one interval is exactly 1/2; upstream has no default, PR
  15228 proposes 1 h = 12 units; scaled so that decay acts within the searched traces).  ``A(e)`` is exact
  when ``e / halfLife`` is an integer, else the float ``1 - 0.5 ** (e / halfLife)`` as a rational (upstream
  computes it in float64 too); the rest is exact rationals (upstream: ``resource.Quantity`` milli-units).
* QUEUES: a queue that is a child of the root is a ClusterQueue (``AdmissionScope:
  UsageBasedAdmissionFairSharing``); its descendants are its LocalQueues (tenants), their weight the queue's
  weight (``fairSharing.weight``); a workload placed directly in a ClusterQueue is in an implicit LocalQueue of
  that queue (weight 1), one outside every queue in an implicit ClusterQueue ``.`` with an implicit
  LocalQueue.  Deeper levels are flattened (a workload's LocalQueue is its own queue).
* WORKLOADS are the users: a workload requests ``floor(tasks)`` x its per-task demand and is admitted whole or
  not (``whole_requests``); equal priorities, the timestamp is its arrival (first step present), the UID its
  declaration order.  All ClusterQueues draw on the one pool (one cohort, no nominal quotas, no borrowing or
  lending limits: the queues' declared guarantees and maxes are not read).
* USAGE per LocalQueue, from time 0 (every LocalQueue is created then): consumed vector ``C``, ``LastUpdate``
  ``L``.  At every time ``L + 1`` (the reconciler's sampling, enforced from ``L``): ``C <- (1 - A(1)) C + A(1)
  x (what the LocalQueue's workloads hold then)``, ``L <- L + 1``; half-life 0: ``C <- 0``.  At an admission
  at time ``t`` (pinned version: entry penalty on): ``C <- (1 - A(t - L)) C + A(t - L) x held + A(1) x
  request``, ``L <- t`` (the push at assume and the settlement at Admitted are the same instant here: no
  admission checks).
* ADMISSION at every event: a workload admitted holds its request until it leaves or its report changes (then
  it gives it back and is pending again); if the pool shrinks below what is held, everything is released (the
  ``irrevocable`` conventions).  Then scheduling cycles (``BestEffortFIFO``, the default queueing strategy):
  each ClusterQueue's head is its pending workload of least (LocalQueue usage, timestamp, UID); the heads are
  tried in (timestamp, UID) order; a head that fits the pool is admitted (its LocalQueue's usage updated before
  the next cycle: upstream's ``Pop`` rebuilds the heap), one that does not is set aside until the next event;
  cycles repeat until no head is left.  Every head tried is recorded in the allocation's ``info["decisions"]``
  (user, LocalQueue, ClusterQueue, admitted) with the LocalQueues' usage keys (``info["usage"]``).
* Omitted: priorities and ``PrioritySortingWithinCohort``, ``StrictFIFO``, nominal quotas, cohorts' borrowing
  and lending limits, preemption (fair-sharing or AFS-ordered), admission checks and the second scheduling
  pass, ``resetInactivityPeriod``-style resets and restarts (the ledger's warm start), AdmissionScope at
  Cohort level (not implemented upstream), the non-AFS ClusterQueues' ordering, ``resource.Quantity``
  rounding, the inadmissible-requeue triggers (all set-aside workloads are retried at every event).
"""
from __future__ import annotations

import heapq
from fractions import Fraction
from functools import partial
from typing import Any, Optional

from mechverify.allocation import Allocation
from mechverify.execution import Execution, StepContext
from mechverify.model import Environment

from ...core.mechanism import Mechanism
from ...core.registry import Setting
from ...core.time import TimeSpec, execution_of

__all__ = ["alpha", "AdmissionFairSharing", "begin", "allocate", "time_spec", "SETTING", "SAMPLING", "HALF_LIFE"]

#: the sampling interval in execution time units (1 unit = upstream's default 5 minutes)
SAMPLING = Fraction(1)
#: the registered half-life (upstream: no default -- issue 11134)
HALF_LIFE = Fraction(1)
_ZERO = Fraction(0)
_ONE = Fraction(1)


def alpha(elapsed: Any, half_life: Any, exact: bool = True) -> Any:
    """Upstream's ``calculateAlphaRate``: ``1 - 0.5 ** (elapsed / halfLife)``, 0 when the half-life is 0
    (exact when ``elapsed / halfLife`` is a whole number, else the float as a rational)."""
    if not half_life:
        return _ZERO if exact else 0.0
    r = Fraction(elapsed) / Fraction(half_life)
    if r.denominator == 1 and r >= 0:
        a = 1 - Fraction(1, 2 ** int(r))
    else:
        a = Fraction(1 - 0.5 ** float(r))
    return a if exact else float(a)


def tenant_of(env: Environment, j: int) -> tuple[str, str, Any]:
    """The workload's (LocalQueue, ClusterQueue, LocalQueue weight) in our model (module docstring)."""
    q = env.user_queue[j]
    if q is None:
        return ".", ".", Fraction(1)
    top = q
    while env.queue_parent(top) is not None:
        top = env.queue_parent(top)
    if top == q:  # directly in a ClusterQueue: its implicit LocalQueue
        return env.queues[q] + "/.", env.queues[q], Fraction(1)
    return env.queues[q], env.queues[top], env.queue_weight[q]


class AdmissionFairSharing:
    """One run: each LocalQueue's consumed usage and LastUpdate, the workloads admitted (with their reports) and
    when each workload first appeared."""

    def __init__(self, mech: Optional[Mechanism], ex: Execution, exact: bool, *, half_life: Any = HALF_LIFE,
                 sampling: Any = SAMPLING, entry_penalty: bool = True, resource_weights: Optional[tuple] = None,
                 initial_usage: Optional[dict] = None, name: str = "kueue-afs", literal: bool = False) -> None:
        self.exact, self.name, self.literal = exact, name, literal
        self.num = Fraction if exact else float
        self.half_life, self.sampling = Fraction(half_life), Fraction(sampling)
        self._sampling_f = float(self.sampling)
        self.entry_penalty = entry_penalty
        R = len(ex.resources)
        self.rw = tuple(self.num(w) for w in (resource_weights or (1,) * R))
        self.consumed: dict[str, list] = {}
        self.last: dict[str, Any] = {}
        for lq, vec in (initial_usage or {}).items():  # a seeded history (tests; upstream: the persisted status)
            self.consumed[lq] = [self.num(v) for v in vec]
            self.last[lq] = _ZERO
        self.weights: dict[str, Any] = {}  # LocalQueue -> its weight (as last seen)
        self.held: dict[str, tuple] = {}  # user -> (report key, request vector, LocalQueue)
        self.seen: dict[str, Any] = {}  # user -> first time present
        self.order: dict[str, int] = {u.name: k for k, u in enumerate(ex.users)}
        for e in ex.events:
            if e.kind == "arrive" and e.user not in self.order:
                self.order[e.user] = len(self.order)
        self.a1 = alpha(self.sampling, self.half_life, exact)
        self._users: dict[str, tuple] = {}  # user -> (demand, tasks, queue index, key, request, tenant): its report
        self._tenants: dict[Any, tuple] = {}  # queue index -> tenant_of, for the queue tree of ``_tree``
        self._tree: Any = None
        self._memo: dict[str, tuple] = {}  # LocalQueue -> (consumed vector, weight, usage)
        # the least ``last[lq] + sampling`` (None: not known): no LocalQueue samples before it (a settlement only
        # moves a ``last`` later, so a value kept across one is never too late)
        self._due: Any = None

    def state_key(self) -> Any:
        return None  # decayed usage does not recur: no state digest

    def _lq(self, lq: str, R: int, t: Any) -> list:
        if lq not in self.consumed:
            self.consumed[lq] = [self.num(0)] * R
            self.last[lq] = _ZERO  # every LocalQueue exists from time 0
            self._due = None
        return self.consumed[lq]

    def _holding(self, lq: str, R: int) -> list:
        acc = [self.num(0)] * R
        for _, req, q in self.held.values():
            if q == lq:
                acc = [a + b for a, b in zip(acc, req)]
        return acc

    def _holdings(self, R: int) -> dict:
        """:meth:`_holding` of every LocalQueue holding something, in one pass (the same sums, in the same order)."""
        out: dict = {}
        for _, req, q in self.held.values():
            acc = out.get(q)
            out[q] = [a + b for a, b in zip(acc, req)] if acc is not None else [self.num(0) + b for b in req]
        return out

    def _sample(self, t: Any, R: int) -> None:
        """The reconciler's samples up to time ``t`` (module docstring), with what is held since the last step."""
        if not self.literal and self._due is not None and not self._due <= t:
            return  # no LocalQueue samples yet
        holdings = None
        plus = self._plus
        for lq in list(self.consumed):
            while plus(self.last[lq]) <= t:
                if not self.half_life:
                    self.consumed[lq] = [self.num(0)] * R
                else:
                    if self.literal:
                        held = self._holding(lq, R)
                    else:
                        if holdings is None:
                            holdings = self._holdings(R)
                        held = holdings.get(lq) or [self.num(0)] * R
                    self.consumed[lq] = [(1 - self.a1) * c + self.a1 * h for c, h in zip(self.consumed[lq], held)]
                self.last[lq] = plus(self.last[lq])
        self._due = min(map(plus, self.last.values()), default=None)

    def _plus(self, v: Any) -> Any:
        """``v + sampling``: a float ``v`` (a settlement's time in a float run) plus the float of the sampling
        interval -- what ``float + Fraction`` computes, without ``Fraction``'s generic fallback."""
        return v + self._sampling_f if v.__class__ is float else v + self.sampling

    def _settle(self, lq: str, t: Any, req: list, R: int) -> None:
        """The admission's settlement (entry penalty on): decay to now towards the admitted usage, fold the
        penalty ``A(sampling) x request``."""
        c = self._lq(lq, R, t)
        a = alpha(Fraction(t) - Fraction(self.last[lq]), self.half_life, self.exact)
        held = self._holding(lq, R)
        self.consumed[lq] = [(1 - a) * ci + a * h + self.a1 * r for ci, h, r in zip(c, held, req)]
        self.last[lq] = max(self.last[lq], t)

    def usage(self, lq: str, weight: Any, R: int) -> Any:
        """Upstream's ``CalculateUsage`` of the LocalQueue (no pending penalty: settled at once here); kept while
        its consumed vector (a new list at every change) and the weight are the same."""
        if self.literal:
            return self._usage(lq, weight, R)
        c = self.consumed.get(lq)
        memo = self._memo.get(lq)
        if memo is not None and memo[0] is c and c is not None and (memo[1] is weight or memo[1] == weight):
            return memo[2]
        got = self._usage(lq, weight, R)
        self._memo[lq] = (c, weight, got)
        return got

    def _usage(self, lq: str, weight: Any, R: int) -> Any:
        c = self.consumed.get(lq) or [self.num(0)] * R
        tot = sum((w * v for w, v in zip(self.rw, c)), self.num(0))
        if weight <= 0:
            return float("inf")
        return tot / (weight if not self.exact else Fraction(weight))

    def step(self, ctx: StepContext) -> Allocation:
        return self._step_literal(ctx) if self.literal else self._step(ctx)

    def _give_back(self, env: Environment, keys: dict, R: int) -> tuple[list, list, Any]:
        """A workload that left or changed its report gives back what it holds; if the pool shrank below what is
        held, everything is released.  Returns the pool, what is held of it, and the fit test (floats: noise
        is never a misfit)."""
        num = self.num
        for u in list(self.held):
            if u not in keys or self.held[u][0] != keys[u]:
                del self.held[u]
        cap = [num(c) for c in env.capacity[0]]
        used = [num(0)] * R
        for _, req, _ in self.held.values():
            used = [a + b for a, b in zip(used, req)]
        slack = (lambda a, b: a <= b) if self.exact else (lambda a, b: a <= b * (1 + 1e-9) + 1e-12)
        if not all(slack(a, b) for a, b in zip(used, cap)):
            self.held.clear()
            used = [num(0)] * R
        return cap, used, slack

    def _user(self, env: Environment, j: int) -> tuple:
        """``(key, request, tenant, its row when admitted)`` of workload ``j``, kept while its report (demand, tasks,
        queue) is unchanged."""
        u, d, n, q = env.users[j], env.demand[j], env.tasks[j], env.user_queue[j]
        got = self._users.get(u)
        if got is not None and (got[0] is d or got[0] == d) and (got[1] is n or got[1] == n) and got[2] == q:
            return got[3]
        tenant = self._tenants.get(q)
        if tenant is None:
            tenant = self._tenants[q] = tenant_of(env, j)
        whole = Fraction(int(n)) if n is not None else Fraction(0)
        out = ((d, whole, q), [self.num(whole * v) for v in d], tenant, (self.num(whole),))
        self._users[u] = (d, n, q, out)
        return out

    def _step(self, ctx: StepContext) -> Allocation:
        """:meth:`_step_literal`, the same decisions and numbers (tests/mechanisms/test_kueue_afs_fast.py), without
        rescanning every pending workload per cycle: per LocalQueue its candidates in (timestamp, UID) order, per
        ClusterQueue a heap of its LocalQueues by (usage, first candidate's timestamp and UID) -- the head of a
        ClusterQueue is the least workload by (its LocalQueue's usage, timestamp, UID), i.e. the first candidate of
        the least LocalQueue; each workload's request and tenant computed once per report."""
        env, t = ctx.env, ctx.t
        R = env.n_resources
        num = self.num
        tree = (env.queues, env.queue_weight)
        if tree != self._tree:
            self._tree, self._tenants, self._users = tree, {}, {}
        users = env.users
        info = [self._user(env, j) for j in range(env.n_users)]
        for _, _, (lq, _, w), _ in info:
            self._lq(lq, R, t)
            self.weights[lq] = w
        self._sample(t, R)
        seen = self.seen
        for u in users:
            if u not in seen:
                seen[u] = t
        keys = {u: i[0] for u, i in zip(users, info)}
        cap, used, slack = self._give_back(env, keys, R)
        order = self.order
        # the candidates of each LocalQueue in (timestamp, UID) order, and each ClusterQueue's LocalQueues
        lqs: dict[str, list] = {}
        of_cq: dict[str, list] = {}
        info_of: dict[str, tuple] = {}
        for u, i in zip(users, info):
            if u in self.held or not any(i[1]):
                continue
            info_of[u] = i
            lq, cq, _ = i[2]
            got = lqs.get(lq)
            if got is None:
                got = lqs[lq] = []
                of_cq.setdefault(cq, []).append(lq)
            got.append((seen[u], order.get(u, 0), u))
        for got in lqs.values():
            got.sort()
        nxt = dict.fromkeys(lqs, 0)  # each LocalQueue's first candidate not yet tried
        heaps: dict[str, list] = {}
        for cq, members in of_cq.items():
            h = []
            for lq in members:
                first = lqs[lq][0]
                h.append((self.usage(lq, info_of[first[2]][2][2], R), first[0], first[1], lq))
            heapq.heapify(h)
            heaps[cq] = h
        decisions = []
        while True:
            heads = []
            for cq, h in heaps.items():
                if h:
                    k = heapq.heappop(h)
                    heads.append((k[1], k[2], cq, k[3]))
            if not heads:
                break
            heads.sort()
            for _, _, cq, lq in heads:
                u = lqs[lq][nxt[lq]][2]
                req = info_of[u][1]
                fits = all(slack(a + r, c) for a, r, c in zip(used, req, cap))
                decisions.append((u, lq, cq, fits))
                if fits:
                    used = [a + r for a, r in zip(used, req)]
                    self.held[u] = (keys[u], req, lq)
                    if self.entry_penalty:
                        self._settle(lq, t, req, R)
                nxt[lq] += 1
                if nxt[lq] < len(lqs[lq]):
                    first = lqs[lq][nxt[lq]]
                    heapq.heappush(heaps[cq], (self.usage(lq, info_of[first[2]][2][2], R), first[0], first[1], lq))
        held, none = self.held, (num(0),)
        x = tuple([i[3] if u in held else none for u, i in zip(users, info)])
        usage = {lq: self.usage(lq, self.weights.get(lq, _ONE), R) for lq in self.consumed}
        return Allocation(env, x, self.name, self.exact, info={"decisions": tuple(decisions), "usage": usage})

    def _step_literal(self, ctx: StepContext) -> Allocation:
        """The step as the module docstring says it, every pending workload rescanned per cycle (the reference
        :meth:`_step` is held equal to)."""
        env, t = ctx.env, ctx.t
        R = env.n_resources
        num = self.num
        for j in range(env.n_users):
            lq, _, w = tenant_of(env, j)
            self._lq(lq, R, t)
            self.weights[lq] = w
        self._sample(t, R)
        keys, reqs, tenants = {}, {}, {}
        for j, u in enumerate(env.users):
            self.seen.setdefault(u, t)
            n = env.tasks[j]
            n = Fraction(int(n)) if n is not None else Fraction(0)
            reqs[u] = [num(n * d) for d in env.demand[j]]
            keys[u] = (env.demand[j], n, env.user_queue[j])
            tenants[u] = tenant_of(env, j)
        cap, used, slack = self._give_back(env, keys, R)
        pending = [u for u in env.users if u not in self.held and any(reqs[u])]
        aside: set = set()
        decisions = []
        while True:
            heads: dict[str, str] = {}
            for u in pending:
                if u in aside or u in self.held:
                    continue
                lq, cq, w = tenants[u]
                k = (self.usage(lq, w, R), self.seen[u], self.order.get(u, 0))
                if cq not in heads or k < heads[cq][0]:
                    heads[cq] = (k, u)
            if not heads:
                break
            for cq in sorted(heads, key=lambda c: (self.seen[heads[c][1]], self.order.get(heads[c][1], 0))):
                u = heads[cq][1]
                lq = tenants[u][0]
                fits = all(slack(a + r, c) for a, r, c in zip(used, reqs[u], cap))
                decisions.append((u, lq, cq, fits))
                if fits:
                    used = [a + r for a, r in zip(used, reqs[u])]
                    self.held[u] = (keys[u], reqs[u], lq)
                    if self.entry_penalty:
                        self._settle(lq, t, reqs[u], R)
                else:
                    aside.add(u)
        x = tuple((num(int(env.tasks[j])) if u in self.held else num(0),) for j, u in enumerate(env.users))
        usage = {lq: self.usage(lq, self.weights.get(lq, Fraction(1)), R) for lq in self.consumed}
        return Allocation(env, x, self.name, self.exact, info={"decisions": tuple(decisions), "usage": usage})


def begin(mech: Optional[Mechanism], ex: Execution, exact: bool, *, name: str = "kueue-afs", half_life: Any = HALF_LIFE,
          entry_penalty: bool = True) -> AdmissionFairSharing:
    return AdmissionFairSharing(mech, ex, exact, half_life=half_life, entry_penalty=entry_penalty, name=name)


def allocate(env: Environment, exact: bool = False, *, name: str = "kueue-afs", half_life: Any = HALF_LIFE,
             entry_penalty: bool = True) -> Allocation:
    """The first step (every workload present at time 0, no usage yet): what the one-instance properties judge."""
    ex = execution_of(env)
    st = begin(None, ex, exact, name=name, half_life=half_life, entry_penalty=entry_penalty)
    return st.step(StepContext(0, Fraction(0), None, env, None, ex, exact))


def time_spec(*, name: str = "kueue-afs", half_life: Any = HALF_LIFE, entry_penalty: bool = True) -> TimeSpec:
    return TimeSpec(begin=partial(begin, name=name, half_life=half_life, entry_penalty=entry_penalty), kind="stateful",
                    rounds=False, revocable=False, usage_ordered=True,
                    model=f"Kueue admission fair sharing: LocalQueues ordered in their ClusterQueue by decayed consumed "
                          f"usage / weight (sampling every time unit = 5 min, half-life {half_life} unit(s), "
                          f"A = 1 - 0.5^(sampling/half-life)), entry penalty "
                          f"{'A x request at admission' if entry_penalty else 'off'}; whole workloads, "
                          f"BestEffortFIFO cycles on one pool; no preemption")


SETTING = Setting(single_server=True, placement=False, external=False, bounds=True, weights=False, divisible=False,
                  requires_bounds=True, hierarchy=True, whole_requests=True)
