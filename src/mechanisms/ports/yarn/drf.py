"""``yarn-drf``: YARN FairScheduler's ``DominantResourceFairnessPolicy`` -- its comparator as the ORDER facet,
and one container per round down the queue tree as a whole-task mechanism -- plus the historic buggy
version ``yarn-drf@YARN-11482``.

Source (read, not copied; our code follows the semantics), apache/hadoop, in
``hadoop-yarn-project/hadoop-yarn/hadoop-yarn-server/hadoop-yarn-server-resourcemanager/src/main/java/org/
apache/hadoop/yarn/server/resourcemanager/scheduler/fair/``:

* ``policies/DominantResourceFairnessPolicy.java`` @ ee91492f16528292c4ad173dd018807a63fe6106: the comparator,
  :mod:`mechanisms.ports.yarn.drf_policy` (its semantics, NaN included, and the YARN-11482 bug).  This
  revision still has the YARN-11482 bug in ``Comparator2``; the fixed comparator is this file with that one
  line corrected (apache/hadoop pull request 5607, "YARN-11482. Fix bug of DRF comparision
  DominantResourceFairnessComparator2 in fair scheduler", merged to trunk 2023-04-29; its description quotes
  the two lines).
* ``FSParentQueue.java`` @ 4994beff3fff0b08736dd7ff87b67e1ba7826193 (``assignContainer``: the child queues
  put into a ``TreeSet`` ordered by the policy's comparator, tried in that order until one assigns);
  ``FSLeafQueue.java`` @ 6e953eb6a3dfcb8da19470e98ffcf1d43bf1887c (``assignContainer`` /
  ``fetchAppsWithDemand``: the runnable apps with pending demand in a ``TreeSet`` by the comparator, tried
  in order); ``FSQueue.java`` @ 4c4f28c9e7f76762346d990b043c6b77d3ac627a (``getStartTime`` is 0 for every
  queue; ``getMinShare`` is the configured ``minResources``).
* Upstream's tests: ``src/test/.../fair/policies/TestDominantResourceFairnessPolicy.java`` @
  9193ed22dd9eb00f82573a9ba763db72ee65aad0 (tests/mechanisms/test_yarn_drf.py replays every comparison).

The port and its historic version ``yarn-drf@YARN-11482`` are declared once, in :data:`PORT` (its pins, and the
variant's switch ``s2_needy_from_s1`` with its issue, fix and commit).

Our model on it (the conventions, stated in ``list``)
-----------------------------------------------------
* SCHEDULABLES: a queue is an ``FSQueue`` -- usage the sum of the allocations of the users below it, min
  share its ``guarantee`` (absent: 0, upstream's default ``minResources``), weight its queue weight, start
  time 0 (``FSQueue.getStartTime``), name ``"root." + path`` with ``/`` read as ``.`` (upstream's full queue
  name; siblings share the prefix, so the last segment decides).  A user is an APP (``FSAppAttempt``) --
  usage its own allocation, min share 0, weight its user weight (upstream's app weight: 1 times its
  priority by default), start time ``1 + user index`` (apps start after the queues exist, in declaration
  order = submission order), name the user's name (never reached: start times differ).
* THE ORDER OF TWO USERS (``OrderSpec.compare``): the comparator applied to the two children of their
  lowest common ancestor -- the two apps, an app and a queue, or two queues -- which is where FairScheduler's
  descent from the root decides between them.  Upstream keeps apps in leaf queues only; our model lets a
  queue hold users and child queues, and then they are siblings in one ``TreeSet``.
* ``share(state, j)``: the user's weighted dominant share ``max_r (u_r / c_r) / w`` over the ratios that are
  not NaN (0 if none; ``inf`` if it holds a resource the cluster lacks) -- the first position of the
  non-needy comparison when no NaN is involved; the comparator, not this number, is the policy.
  ``queue_share(state, q)`` likewise for a queue.

The mechanism: one container per round
--------------------------------------
Repeat: descend from the root; at a node, its child queues (declaration order) and then its apps WITH
PENDING DEMAND (task bound not reached, a nonzero per-task demand: ``fetchAppsWithDemand``) are added, in
that order, to a ``TreeSet`` with the comparator, computed on the current allocation; they are tried in the
set's order: a queue by descending into it, an app by giving it ONE task if the task fits in what the pool
has left.  The first success ends the round; a node none of whose children takes a task returns nothing
and its parent tries the next child.  We reproduce ``java.util.TreeMap``'s red-black insertion exactly
(an element comparing 0 to one already in is dropped, as ``TreeSet.add`` does; distinct schedulables never
tie after the start-time and name tie-breaks), so where the comparator is not a strict weak order the set's
order is upstream's, not a sort's.  Conventions where upstream leaves a choice open:

* One resource pool (one server: one node heartbeat at a time, each assigning at most one container,
  ``assignmultiple`` off); whole tasks; task bounds allowed (``floor(n_j)``); users not eligible for the pool
  take nothing; no external resources, no per-server demands.
* No reservations: upstream may RESERVE the node for an app whose container does not fit (and stop the
  heartbeat); we skip that app and try the next, as with reservations disabled.
* No max shares, max running apps, AM shares, preemption, locality delay or node labels (none is in the
  model).
* Exact arithmetic (upstream: ``float``/``double``).
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import partial
from typing import Any, NamedTuple, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import MAX_TASKS

from ...core.order import order_facet
from ...core.registry import OrderSpec, Setting
from ...core.z3spec import Z3Spec
from ..declare import Fix, Pin, Port, Variant
from ..java_go import isnan, treeset_order
from .drf_policy import Schedulable, cluster_ratios, compare_prepared, compare_schedulables, prepare

__all__ = ["UPSTREAM", "queue_name", "Usages", "usages", "schedulables", "user_compare", "user_share", "queue_share", "order",
           "allocate", "place", "app_schedulable", "PORT"]

_HADOOP = "apache/hadoop"
_POLICY = "DominantResourceFairnessPolicy.java"
UPSTREAM = (f"{_HADOOP} @ ee91492f16528292c4ad173dd018807a63fe6106, hadoop-yarn-server-resourcemanager .../scheduler/"
            f"fair/policies/{_POLICY} (ComparatorN / Comparator2) with the YARN-11482 fix (PR 5607); the descent: "
            f"FSParentQueue.java @ 4994beff3fff0b08736dd7ff87b67e1ba7826193, FSLeafQueue.java @ "
            f"6e953eb6a3dfcb8da19470e98ffcf1d43bf1887c, FSQueue.java @ 4c4f28c9e7f76762346d990b043c6b77d3ac627a")
_ZERO = Fraction(0)


# ---------------------------------------------------------------------- our model as schedulables
def queue_name(env: Environment, q: int) -> str:
    """Upstream's full name of queue ``q``: ``"root."`` + its path with ``/`` read as ``.``."""
    return "root." + env.queues[q].replace("/", ".")


def _user_usage(env: Environment, x: Sequence[Sequence[Any]], j: int) -> list:
    acc = [_ZERO] * env.n_resources
    for s, n in enumerate(x[j]):
        if n:
            for r, dv in enumerate(env.d(j, s)):
                if dv:
                    acc[r] = acc[r] + n * dv
    return acc


class Usages(NamedTuple):
    """What the order reads of a state: the environment, the pooled cluster, every user's and every queue's usage."""

    env: Environment
    cluster: tuple
    users: list  # [j] -> usage vector
    queues: list  # [q] -> usage vector (the users below it)


def usages(state: Allocation) -> Usages:
    """Every user's and every queue's usage in ``state`` (the order facet's derived data)."""
    env = state.env
    users = [_user_usage(env, state.x, j) for j in range(env.n_users)]
    queues = [[_ZERO] * env.n_resources for _ in range(env.n_queues)]
    for j in range(env.n_users):
        for q in env.user_path(j):
            queues[q] = [a + b for a, b in zip(queues[q], users[j])]
    return Usages(env, tuple(env.total_capacity()), users, queues)


def _app(env: Environment, usage: Sequence[Any], j: int) -> Schedulable:
    return Schedulable(tuple(usage), (_ZERO,) * env.n_resources, env.weight[j], 1 + j, env.users[j])


def _queue(env: Environment, usage: Sequence[Any], q: int) -> Schedulable:
    g = env.queue_guarantee[q]
    return Schedulable(tuple(usage), tuple(g) if g is not None else (_ZERO,) * env.n_resources, env.queue_weight[q],
                       0, queue_name(env, q))


def schedulables(u: Usages, i: int, j: int) -> tuple[Schedulable, Schedulable]:
    """The two children of the lowest common ancestor of users ``i`` and ``j`` (apps or queues) with the usages
    ``u``."""
    env = u.env
    pi, pj = env.user_path(i), env.user_path(j)
    k = 0
    while k < len(pi) and k < len(pj) and pi[k] == pj[k]:
        k += 1
    a = _queue(env, u.queues[pi[k]], pi[k]) if k < len(pi) else _app(env, u.users[i], i)
    b = _queue(env, u.queues[pj[k]], pj[k]) if k < len(pj) else _app(env, u.users[j], j)
    return a, b


def user_compare(u: Usages, i: int, j: int, *, s2_needy_from_s1: bool = False) -> int:
    """The order of users ``i`` and ``j``: the comparator on the two children of their lowest common ancestor
    (< 0: ``i`` is served first)."""
    a, b = schedulables(u, i, j)
    return compare_schedulables(a, b, u.cluster, s2_needy_from_s1=s2_needy_from_s1)


def _weighted_dominant(usage: Sequence[Any], cluster: Sequence[Any], weight: Any) -> Any:
    best: Any = _ZERO
    for v in cluster_ratios(usage, cluster, weight)[2]:
        if not isnan(v) and v > best:
            best = v
    return best


def user_share(u: Usages, j: int) -> Any:
    """User ``j``'s weighted dominant share ``max_r (u_r / c_r) / w_j`` over the ratios that are not NaN (0 if
    none; ``inf`` when it holds a resource the cluster has none of)."""
    return _weighted_dominant(u.users[j], u.cluster, u.env.weight[j])


def queue_share(u: Usages, q: int) -> Any:
    """Queue ``q``'s weighted dominant share (as :func:`user_share`, with the usage below it and its weight)."""
    return _weighted_dominant(u.queues[q], u.cluster, u.env.queue_weight[q])


def order(*, s2_needy_from_s1: bool = False) -> OrderSpec:
    """The order facet of a version (``s2_needy_from_s1``: the comparator before YARN-11482's fix)."""
    return order_facet(usages, partial(user_compare, s2_needy_from_s1=s2_needy_from_s1), user_share, queue_share)


# ---------------------------------------------------------------------- the mechanism
def allocate(env: Environment, exact: bool = False, *, name: str = "yarn-drf",
             s2_needy_from_s1: bool = False) -> Allocation:
    """One container per round down the tree (module docstring), on the one pool."""
    tasks, steps = place(env, [0] * env.n_users, name=name, s2_needy_from_s1=s2_needy_from_s1)
    x = tuple((Fraction(tasks[j]),) * env.n_servers for j in range(env.n_users))
    return Allocation(env, x, name, True, {"steps": steps})


def app_schedulable(env: Environment, usage: Sequence[Any], j: int) -> Schedulable:
    """User ``j`` as upstream's app (``FSAppAttempt``) with ``usage``: min share 0, its weight, start time ``1 + j``."""
    return _app(env, usage, j)


def place(env: Environment, held: Sequence[int], *, name: str = "yarn-drf",
          s2_needy_from_s1: bool = False) -> tuple[list[int], int]:
    """The descent of :func:`allocate` (module docstring) starting from ``held`` whole tasks per user already
    running on the one pool (their usage counts in the order and is taken off the pool): ``(tasks, rounds)``, the
    tasks per user after every round that places one, and how many rounds placed one.  ``held`` must fit."""
    J, R, Q = env.n_users, env.n_resources, env.n_queues
    cluster = env.total_capacity()
    left = list(env.capacity[0]) if env.n_servers else [_ZERO] * R
    tasks = [int(h) for h in held]
    user_use = [[_ZERO] * R for _ in range(J)]
    queue_use = [[_ZERO] * R for _ in range(Q)]
    limit = [None if b is None else math.floor(b) for b in env.tasks]
    demand = [env.d(j, 0) for j in range(J)] if env.n_servers else [env.demand[j] for j in range(J)]
    eligible = [0 in env.eligible[j] for j in range(J)]
    for j in range(J):
        if tasks[j]:
            for r, dv in enumerate(demand[j]):
                if dv:
                    left[r] -= tasks[j] * dv
                    user_use[j][r] += tasks[j] * dv
                    for q in env.user_path(j):
                        queue_use[q][r] += tasks[j] * dv
    pending_ok = [any(v for v in demand[j]) for j in range(J)]  # a zero request is no pending demand
    paths = [env.user_path(j) for j in range(J)]
    users_at: dict[Optional[int], list[int]] = {}
    for j in range(J):
        users_at.setdefault(env.user_queue[j], []).append(j)

    def pending(j: int) -> bool:
        return pending_ok[j] and (limit[j] is None or tasks[j] < limit[j])

    caps = [(q, env.queue_max[q]) for q in range(Q) if env.queue_max[q] is not None]  # maxResources

    def fits(j: int) -> bool:
        # the pool has room, and FSQueue.fitsInMaxShare: usage + the container within maxResources of the app's
        # queue and every ancestor (a queue without maxResources: unbounded)
        if not (eligible[j] and all(not dv or lv >= dv for lv, dv in zip(left, demand[j]))):
            return False
        return all(queue_use[q][r] + dv <= m[r] for q, m in caps if q in paths[j]
                   for r, dv in enumerate(demand[j]) if dv)

    def sched(node: tuple[str, int]) -> Schedulable:
        kind, i = node
        return _queue(env, queue_use[i], i) if kind == "q" else _app(env, user_use[i], i)

    def descend(q: Optional[int]) -> Optional[int]:
        children = [("q", c) for c in env.queue_children(q)] + [("u", j) for j in users_at.get(q, ()) if pending(j)]
        if not children:
            return None
        keyed = {c: prepare(sched(c), cluster) for c in children}
        order = treeset_order(children, lambda a, b: compare_prepared(keyed[a], keyed[b], s2_needy_from_s1=s2_needy_from_s1))
        for kind, i in order:
            if kind == "q":
                got = descend(i)
                if got is not None:
                    return got
            elif fits(i):
                return i
        return None

    steps = 0
    while True:
        j = descend(None)
        if j is None:
            break
        steps += 1
        if steps > MAX_TASKS:
            raise InstanceError(f"instance: {name} would place more than {MAX_TASKS} whole tasks; "
                                f"scale capacities/demands down")
        tasks[j] += 1
        for r, dv in enumerate(demand[j]):
            if dv:
                left[r] -= dv
                user_use[j][r] += dv
                for q in paths[j]:
                    queue_use[q][r] += dv
    return tasks, steps


_SETTING = Setting(single_server=True, placement=True, external=False, bounds=True, weights=True, divisible=False,
                   hierarchy=True, lends=True)

_NOTES = ("port of the comparator's semantics (our code): queues are FSQueues (usage = the users below, min share "
          "= guarantee, absent 0; weight = queue weight; start time 0, name root.<path>), users are apps (own "
          "usage, min share 0, user weight, start time 1 + user index = declaration order); ComparatorN, which "
          "equals Comparator2 for two resources; IEEE semantics of upstream's divisions reproduced on exact "
          "numbers (x/0 = inf, 0/0 = NaN, a NaN position is a tie: upstream's comparator is then not a strict "
          "weak order); two users compare as the two children of their lowest common ancestor; one container per "
          "round: child queues then apps with pending demand in a TreeSet (red-black insertion reproduced), tried "
          "in order, an app takes a task when it fits in the pool and within the maxResources (a queue's max) of its "
          "queue and every ancestor (FSQueue.fitsInMaxShare); one pool, no reservations or preemption; "
          "exact shares (upstream: float/double); no claims (upstream states none)")


#: the port (``mechanisms.ports.declare``): the pinned policy with the YARN-11482 fix, and the version before it
PORT = Port(
    name="yarn-drf",
    title="YARN FairScheduler DRF (DominantResourceFairnessPolicy): needy below min share first, then per-resource "
          "usage ratios sorted descending over the weight, then start time and name; one container per round down "
          "the queue tree",
    pins=(Pin(_HADOOP, "ee91492f16528292c4ad173dd018807a63fe6106", f".../scheduler/fair/policies/{_POLICY}"),
          Pin(_HADOOP, "4994beff3fff0b08736dd7ff87b67e1ba7826193", ".../scheduler/fair/FSParentQueue.java"),
          Pin(_HADOOP, "6e953eb6a3dfcb8da19470e98ffcf1d43bf1887c", ".../scheduler/fair/FSLeafQueue.java"),
          Pin(_HADOOP, "4c4f28c9e7f76762346d990b043c6b77d3ac627a", ".../scheduler/fair/FSQueue.java")),
    source=UPSTREAM, setting=_SETTING, notes=_NOTES,
    z3=Z3Spec.none("indivisible tasks on a queue tree (integer allocations): not encoded"),
    allocate=allocate, order=order,
    variants=(Variant(
        issue="YARN-11482", switches={"s2_needy_from_s1": True}, fixed_by=(Fix("5607"),),
        read_at="ee91492f16528292c4ad173dd018807a63fe6106",
        title="YARN FairScheduler DRF before the YARN-11482 fix: with two resources, Comparator2 reads the second "
              "schedulable's neediness off the FIRST one's usage",
        source=(f"YARN-11482 (https://issues.apache.org/jira/browse/YARN-11482), fixed by {_HADOOP} pull request "
                f"5607 (merged to trunk 2023-04-29; the fixing commit's hash is not pinned here): the comparator "
                f"BEFORE the fix, {_HADOOP} @ ee91492f16528292c4ad173dd018807a63fe6106 .../fair/policies/{_POLICY}, "
                f"DominantResourceFairnessComparator2.compare: s2Needy = resourceInfo1[dominant2] < "
                f"minShareInfo2[dominant2]"),
        notes="the historic comparator, reproduced exactly (in exact arithmetic): s2Needy = usage1[dominant2] < "
              "minShare2[dominant2], in Comparator2 only (two resources; with any other number upstream uses "
              "ComparatorN, which was right, so the variant equals yarn-drf there); everything else as yarn-drf"),))
PORT.register()
