"""``armada-drf``: Armada's dominant-resource-fairness queue order as a whole-task mechanism.

Source (read, not copied; our code follows the semantics): armadaproject/armada @
207cc9e04ef07aaeacfb446d1517446bb702a8e6 (2026-08-21),

* ``internal/scheduler/scheduling/fairness/fairness.go``: ``DominantResourceFairness``,
  ``NewDominantResourceFairness``, ``defaultMultiplier``, ``WeightedCostFromAllocation``,
  ``UnweightedCostFromAllocation``; its tests ``fairness_test.go`` (``TestDominantResourceFairness``);
* ``internal/scheduler/internaltypes/resource_list.go`` (``DivideZeroOnError``: a zero denominator gives 0),
  ``resource_fraction_list.go`` (``Multiply``, ``Max``: -inf for an empty list), ``resource_list_factory.go``
  (``MakeResourceFractionList``: names not listed get the default, 0; names that are no resource are ignored);
* ``internal/scheduler/scheduling/queue_scheduler.go``: ``QueueScheduler.Schedule``,
  ``CostBasedCandidateGangIterator`` (``updatePQItem``, ``Clear``, ``Peek``) and
  ``QueueCandidateGangIteratorPQ.Less`` -- the queue order;
* ``internal/scheduler/jobdb/comparison.go``: ``SchedulingOrderCompare`` -- the job order in a queue.

The cost (fairness.go)
----------------------
``UnweightedCostFromAllocation(a) = max(0, max_r m_r * a_r / t_r)`` where ``t`` is the pool's total (every
node's resources summed), a term with ``t_r = 0`` is 0 (``DivideZeroOnError``), and ``m_r`` is the
resource's multiplier: 1 for each resource named in ``dominantResourceFairnessResourcesToConsider``; with
``experimentalDominantResourceFairnessResourcesToConsider`` the listed multiplier, where a multiplier that is
not > 0 reads as 1 (``defaultMultiplier``; a negative one is a config error); every other resource 0 (not
considered).  ``max(0, .)`` also makes the cost of an empty list (``Max`` = -inf) and of a negative
allocation 0.  ``WeightedCostFromAllocation(a, w) = UnweightedCostFromAllocation(a) / w``.
:func:`unweighted_cost` and :func:`weighted_cost` are these, exactly (``Fraction``; upstream: ``float64``).

The order (queue_scheduler.go, comparison.go)
---------------------------------------------
Each queue's iterator yields its queued jobs in ``SchedulingOrderCompare`` order -- for new jobs of one
priority class and one queue priority: submission time, i.e. FIFO.  The candidate iterator keeps one item
per queue that still has a job, keyed by ``proposedQueueCost`` = the weighted cost of the queue's allocation
PLUS its next job's request (``updatePQItem``); ``Less`` (with ``prioritiseLargerJobs`` off, its default)
orders items by that cost, then by queue name.  ``Schedule`` peeks the least item, tries to place its job,
and calls ``Clear``, which moves that queue on to its next job and re-keys it -- whether or not the job was
placed.  So a job that does not fit is dropped only when its queue comes up: until then its queue keeps the
key that job gives it.

Our model on it (the conventions, stated in ``list``)
-----------------------------------------------------
* ONE POOL: the instance's servers are the pool's nodes; the cost's total is their sum (pooled), a task must
  fit on one eligible node, and it goes to the first fitting one in server order (upstream's node database
  scores nodes; a convention, as in the other ports).  Placement constraints are node selectors.
* QUEUES: Armada's queues are flat.  Our top-level queues are Armada queues (a queue's weight is its weight;
  a nested queue is folded into its top-level queue, its own weight unread); a user at the root is an Armada
  queue of its own, named after the user, with the user's weight.  On a flat instance (no queues) every user
  is its own queue.  Queue guarantees are not read.  Ties go by queue name (byte order), then declaration
  order (two Armada queues cannot share a name; our root user "a" and queue "a" can).
* JOBS: a user is a run of ``n_j`` identical jobs (one task each) submitted in declaration order: the jobs
  of a queue are its users' tasks in user order, FIFO (``floor(n_j)`` jobs; unbounded: never exhausted).
  User weights inside a queue are not read (jobs have none).
* THE LOOP (upstream's, one whole task per round): take the queue with the least (proposed cost, name); its
  head is its first user in declaration order that is neither exhausted nor dropped; if that user's task fits
  on an eligible server, place one task there, else drop the user (upstream drops the job; the user's next
  job is the same request, which upstream's iterator skips as known unschedulable, or tries and drops again
  at once since its queue is still the least); re-key the queue.  Capacities only shrink, so a dropped user
  could never be placed again.  Like upstream, a queue whose head does not fit keeps that head's key until
  its turn: it can hold back a later user of its queue that would fit (the tests show a case).
* Priority classes, queue priorities, gangs, short-job penalties, fair-share budgets
  (``prioritiseLargerJobs``), preemption and rate limits are out of the model.
* Exact arithmetic (``Fraction``): upstream compares ``float64`` costs, so exact ties are decided there by
  rounding (e.g. ``0.1 + 0.2``).

The order facet (``OrderSpec``)
-------------------------------
In a state (the current allocation) nothing has been dropped yet: it is upstream's order at the start of a
scheduling round.  Every queue is keyed by (has a head, proposed cost, name): the head is its first user
that is not exhausted (task bound reached in the state); a queue without one (upstream: not in the queue
order) is keyed by its current cost and comes after all queues with one.  Users are ordered by their
queue's key, then by declaration order inside the queue.  ``share`` is the current weighted cost of the
user's Armada queue (upstream's ``currentQueueCost``; the order itself uses the PROPOSED cost), and
``queue_share`` that of the declared queue's top-level queue.  The mechanism's next task goes to the first
user of this order that is not dropped, if it fits.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Union

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import MAX_TASKS

from ..core.mechanism import Mechanism
from ..core.order import order_facet, view
from ..core.registry import OrderSpec, Setting
from ..core.z3spec import Z3Spec
from .declare import Pin, Port

__all__ = ["UPSTREAM", "Considered", "unweighted_cost", "weighted_cost", "ArmadaQueues", "armada_queues",
           "ArmadaDRF", "QueueOrder", "order", "allocate", "PORT", "armada_variant"]

_ARMADA = "armadaproject/armada"
_COMMIT = "207cc9e04ef07aaeacfb446d1517446bb702a8e6"
UPSTREAM = (f"{_ARMADA} @ {_COMMIT}, "
            "internal/scheduler/scheduling/fairness/fairness.go (+ fairness_test.go; the queue order: "
            "internal/scheduler/scheduling/queue_scheduler.go; the job order: internal/scheduler/jobdb/comparison.go)")

_ZERO = Fraction(0)
_ONE = Fraction(1)

#: which resources the cost considers: None (every resource, multiplier 1), names (multiplier 1 each:
#: ``dominantResourceFairnessResourcesToConsider``) or name -> multiplier
#: (``experimentalDominantResourceFairnessResourcesToConsider``; a multiplier that is not > 0 reads as 1)
Considered = Union[None, Sequence[str], Mapping[str, Any]]


def unweighted_cost(allocated: Sequence[Any], totals: Sequence[Any], multipliers: Sequence[Any]) -> Any:
    """``max(0, max_r multipliers[r] * allocated[r] / totals[r])``, a zero total giving 0 (upstream
    ``UnweightedCostFromAllocation``)."""
    best: Any = _ZERO
    for a, t, m in zip(allocated, totals, multipliers):
        if t != 0 and m:
            v = a / t * m
            if v > best:
                best = v
    return best


def weighted_cost(allocated: Sequence[Any], totals: Sequence[Any], multipliers: Sequence[Any], weight: Any) -> Any:
    """:func:`unweighted_cost` divided by the queue's ``weight`` (upstream ``WeightedCostFromAllocation``)."""
    return unweighted_cost(allocated, totals, multipliers) / weight


def _given(considered: Considered) -> Optional[dict[str, Fraction]]:
    """Resource name -> multiplier as upstream's constructor reads the config (``None``: every resource, 1);
    ``ValueError`` where upstream reports a config error (nothing considered, a negative multiplier)."""
    if considered is None:
        return None
    if isinstance(considered, Mapping):
        given = {}
        for name, m in considered.items():
            m = Fraction(m)
            if m < 0:
                raise ValueError(f"considered[{name!r}]: negative multiplier {m} (upstream: a config error)")
            given[name] = m if m > 0 else _ONE  # defaultMultiplier
    else:
        given = {name: _ONE for name in considered}
    if not given:
        raise ValueError("considered: no resource to consider (upstream: a config error)")
    return given


def _multipliers(env: Environment, given: Optional[dict[str, Fraction]]) -> tuple[Fraction, ...]:
    """The multiplier of each resource of ``env``: not considered 0, names that are no resource ignored
    (``MakeResourceFractionList``)."""
    if given is None:
        return tuple(_ONE for _ in env.resources)
    return tuple(given.get(r, _ZERO) for r in env.resources)


# ---------------------------------------------------------------------------------------- queues
@dataclass(frozen=True)
class ArmadaQueues:
    """Armada's flat queues on an instance (module docstring, "Our model"): ``names[a]``, ``weights[a]``,
    ``members[a]`` (users in declaration order: the queue's jobs, FIFO), ``of_user[j]`` (user ``j``'s Armada
    queue) and ``of_queue[q]`` (declared queue ``q``'s Armada queue: its top-level queue's)."""

    names: tuple[str, ...]
    weights: tuple[Fraction, ...]
    members: tuple[tuple[int, ...], ...]
    of_user: tuple[int, ...]
    of_queue: tuple[int, ...]


def armada_queues(env: Environment) -> ArmadaQueues:
    """Top-level queues first (declaration order), then one queue per user at the root."""
    names: list[str] = []
    weights: list[Fraction] = []
    top: dict[int, int] = {}
    for q in range(env.n_queues):
        if env.queue_parent(q) is None:
            top[q] = len(names)
            names.append(env.queues[q])
            weights.append(env.queue_weight[q])
    of_queue = tuple(top[env.queue_path(q)[0]] for q in range(env.n_queues))
    of_user = []
    for j in range(env.n_users):
        q = env.user_queue[j]
        if q is None:
            of_user.append(len(names))
            names.append(env.users[j])
            weights.append(env.weight[j])
        else:
            of_user.append(of_queue[q])
    members: list[list[int]] = [[] for _ in names]
    for j, a in enumerate(of_user):
        members[a].append(j)
    return ArmadaQueues(tuple(names), tuple(weights), tuple(tuple(m) for m in members), tuple(of_user), of_queue)


def _limit(env: Environment, j: int) -> Optional[int]:
    b = env.tasks[j]
    return None if b is None else math.floor(b)


# ---------------------------------------------------------------------------------------- the policy
class QueueOrder(NamedTuple):
    """What the order facet reads of a state: the Armada queues, every user's key (its queue's key, then its
    index) and every Armada queue's current cost."""

    queues: ArmadaQueues
    user_key: list
    cost: list


class ArmadaDRF:
    """Armada's DRF queue order with one choice of considered resources (:data:`Considered`): the cost, the
    mechanism (:meth:`allocate`) and what the order facet reads (:meth:`queue_order`), from one set of
    functions."""

    def __init__(self, considered: Considered = None, name: str = "armada-drf") -> None:
        self.given = _given(considered)  # checked once, as upstream's constructor does
        self.name = name

    def multipliers(self, env: Environment) -> tuple[Fraction, ...]:
        """Each resource's multiplier on ``env`` (0: not considered)."""
        return _multipliers(env, self.given)

    # -- keys (one implementation: the facet and the loop) ----------------------------------------------
    @staticmethod
    def _queue_key(cost_of, aq: ArmadaQueues, a: int, alloc: Sequence[Any], head_demand) -> tuple:
        """The order of Armada queue ``a``: (no head, cost, name, index); the cost is the PROPOSED cost
        (allocation + the head's request) when it has a head, else its current cost."""
        w = aq.weights[a]
        if head_demand is None:
            return (1, cost_of(alloc, w), aq.names[a], a)
        return (0, cost_of([x + d for x, d in zip(alloc, head_demand)], w), aq.names[a], a)

    # -- the order facet -----------------------------------------------------------------------------
    def queue_order(self, state: Allocation) -> "QueueOrder":
        """What the order facet reads of ``state`` (module docstring, "The order facet")."""
        env = state.env
        v = view(state)
        aq = armada_queues(env)
        mult = self.multipliers(env)
        totals = v.totals

        def cost_of(alloc, w):
            return weighted_cost(alloc, totals, mult, w)

        zero = [_ZERO] * env.n_resources
        qalloc = [list(zero) for _ in aq.names]
        for j in range(env.n_users):
            acc = qalloc[aq.of_user[j]]
            for r, x in enumerate(v.allocated[j]):
                acc[r] += x
        qkey, qcost = [], []
        for a, members in enumerate(aq.members):
            head = next((j for j in members if _limit(env, j) is None or v.tasks[j] < _limit(env, j)), None)
            qkey.append(self._queue_key(cost_of, aq, a, qalloc[a], None if head is None else env.demand[head]))
            qcost.append(cost_of(qalloc[a], aq.weights[a]))
        return QueueOrder(aq, [(qkey[aq.of_user[j]], j) for j in range(env.n_users)], qcost)

    # -- the mechanism ---------------------------------------------------------------------------------
    def allocate(self, env: Environment, exact: bool = False, *, max_tasks: int = MAX_TASKS,
                 trace: Optional[list] = None) -> Allocation:
        """Upstream's loop (module docstring, "THE LOOP"): a heap of the queues that still have a head keyed
        as :meth:`_queue_key`; pop the least, place its head's task on the first fitting eligible server or
        drop the head, re-key.  ``info``: ``steps`` (tasks placed), ``dropped`` (users dropped, by name).
        ``trace``: a list that receives every attempt, ``("place", user, server)`` or ``("drop", user)``."""
        J, S, R = env.n_users, env.n_servers, env.n_resources
        aq = armada_queues(env)
        mult = self.multipliers(env)
        totals = env.total_capacity()

        def cost_of(alloc, w):
            return weighted_cost(alloc, totals, mult, w)

        limit = [_limit(env, j) for j in range(J)]
        tasks = [0] * J
        x = [[0] * S for _ in range(J)]
        remaining = [list(row) for row in env.capacity]
        qalloc = [[_ZERO] * R for _ in aq.names]
        ptr = [0] * len(aq.names)  # members before ptr[a] are exhausted or dropped (for good)
        first = [0] * J  # first server that may still fit user j (servers never regain capacity)
        dropped: list[int] = []

        def head(a: int) -> Optional[int]:
            members = aq.members[a]
            while ptr[a] < len(members):
                j = members[ptr[a]]
                if limit[j] is None or tasks[j] < limit[j]:
                    return j
                ptr[a] += 1
            return None

        def fit(j: int) -> Optional[int]:
            s = first[j]
            while s < S:
                if s in env.eligible[j] and all(not d or left >= d for left, d in zip(remaining[s], env.d(j, s))):
                    break
                s += 1
            first[j] = s
            return s if s < S else None

        def push(a: int) -> None:
            h = head(a)
            if h is not None:
                heapq.heappush(heap, self._queue_key(cost_of, aq, a, qalloc[a], env.demand[h]))

        heap: list[tuple] = []
        for a in range(len(aq.names)):
            push(a)
        steps = 0
        while heap:
            a = heapq.heappop(heap)[3]
            j = head(a)  # unchanged since the push: only this queue's turns change its members
            s = fit(j)
            if s is None:
                dropped.append(j)
                ptr[a] += 1
                if trace is not None:
                    trace.append(("drop", j))
            else:
                steps += 1
                if steps > max_tasks:
                    raise InstanceError(f"instance: {self.name} would place more than {max_tasks} whole tasks; "
                                        f"scale capacities/demands down")
                for r, d in enumerate(env.d(j, s)):
                    if d:
                        remaining[s][r] -= d
                        qalloc[a][r] += d
                x[j][s] += 1
                tasks[j] += 1
                if trace is not None:
                    trace.append(("place", j, s))
            push(a)
        xs = tuple(tuple(Fraction(v) for v in row) for row in x)
        return Allocation(env, xs, self.name, True, {"steps": steps, "dropped": [env.users[j] for j in dropped]})


_SETTING = Setting(placement=True, external=False, bounds=True, weights=True, server_demand=False,
                   divisible=False, hierarchy=True)
_NO_Z3 = Z3Spec.none("indivisible tasks (integer allocations): not encoded")

_TITLE = ("Armada DRF queue order: one whole task per round to the next job (FIFO) of the queue with the least "
          "proposed cost (max over considered resources of multiplier x allocated / total, zero total 0, over the "
          "queue weight; the allocation includes that job), then queue name")

_NOTES = ("port of the fairness cost and the queue order (our code); one pool: servers are its nodes, the total "
          "is pooled, a task goes to the first fitting eligible server; top-level queues are Armada queues "
          "(nested queues folded into them, their weights unread), a user at the root is a queue of its own "
          "(its weight the queue's), flat: every user its own queue; a user is a run of floor(n_j) one-task jobs "
          "in declaration order (FIFO in its queue; user weights inside a queue unread); a job that does not fit "
          "is dropped when its queue comes up (upstream's Clear), its queue keeps that job's key until then; "
          "considered resources: every resource, multiplier 1 (armada_variant builds others); queue "
          "guarantees and maxes, priority classes, gangs, prioritiseLargerJobs and preemption not modelled; exact costs "
          "(upstream: float64); no claims (upstream states none)")


def _compare(o: QueueOrder, i: int, j: int) -> int:
    return (o.user_key[i] > o.user_key[j]) - (o.user_key[i] < o.user_key[j])


def _share(o: QueueOrder, j: int) -> Any:
    return o.cost[o.queues.of_user[j]]


def _queue_share(o: QueueOrder, q: int) -> Any:
    return o.cost[o.queues.of_queue[q]]


def order(*, considered: Considered = None) -> OrderSpec:
    """The order facet with ``considered`` resources (module docstring, "The order facet")."""
    return order_facet(ArmadaDRF(considered).queue_order, _compare, _share, _queue_share)


def allocate(env: Environment, exact: bool = False, *, name: str = "armada-drf",
             considered: Considered = None) -> Allocation:
    """Armada's DRF queue order as whole-task scheduling on one pool (module docstring)."""
    return ArmadaDRF(considered, name).allocate(env, exact)


#: the port (``mechanisms.ports.declare``); no historic version is registered (:func:`armada_variant` builds
#: unregistered ones with other considered resources)
PORT = Port(
    name="armada-drf", title=_TITLE,
    pins=tuple(Pin(_ARMADA, _COMMIT, path) for path in (
        "internal/scheduler/scheduling/fairness/fairness.go", "internal/scheduler/scheduling/queue_scheduler.go",
        "internal/scheduler/jobdb/comparison.go")),
    source=UPSTREAM, setting=_SETTING, notes=_NOTES, z3=_NO_Z3, allocate=allocate, order=order)


def armada_variant(considered: Considered = None, name: str = "armada-drf") -> Mechanism:
    """An (unregistered) ``armada-drf`` with other considered resources or multipliers (:data:`Considered`),
    with its order facet: e.g. ``armada_variant({"foo": 4, "bar": 1})``."""
    return PORT.mechanism(name, _TITLE, UPSTREAM, _NOTES, considered=considered)


PORT.register()
