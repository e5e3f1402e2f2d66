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

How we run it: the literal descent above (``place(..., literal=True)``, :func:`yarn_drf_reference`) costs a
``TreeSet`` of every child per visited parent per round -- hours for 10^4 flat queues.  :func:`allocate` runs the
same rounds incrementally (``_Incremental``): each parent keeps its children in a heap by the comparator's key,
a round re-keys only the served app and its queues, and a child that fails once is dropped (it fails for the
rest of the run).  That is exact while no child of the parent has a NaN among the ratios it is compared on (the
comparator is then a total order on the siblings: ``_keyed``); a parent with such a child fills its ``TreeSet``
literally for that round.  ``yarn-drf@YARN-11482`` with two resources runs literally throughout.
tests/mechanisms/test_yarn_drf_incremental.py holds the two equal; benchmarks/bench_yarn_drf.py times them.
"""
from __future__ import annotations

import heapq
import math
from fractions import Fraction
from functools import cmp_to_key, partial
from typing import Any, NamedTuple, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import INF, InstanceError
from mechverify.policies import MAX_TASKS

from ...core.order import order_facet
from ...core.registry import OrderSpec, Setting
from ...core.z3spec import Z3Spec
from ..declare import Fix, Pin, Port, Variant
from ..java_go import isnan, string_key, treeset_order
from .drf_policy import (Prepared, Schedulable, cluster_ratios, compare_prepared, compare_schedulables,
                         min_share_ratios, prepare)

__all__ = ["UPSTREAM", "queue_name", "Usages", "usages", "schedulables", "user_compare", "user_share", "queue_share", "order",
           "allocate", "yarn_drf_reference", "place", "app_schedulable", "PORT"]

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
    return _allocation(env, name, *place(env, [0] * env.n_users, name=name, s2_needy_from_s1=s2_needy_from_s1))


def yarn_drf_reference(env: Environment, *, name: str = "yarn-drf", s2_needy_from_s1: bool = False) -> Allocation:
    """:func:`allocate` the literal way (every visited parent's ``TreeSet`` filled afresh every round): the test
    and the benchmark of the incremental descent."""
    return _allocation(env, name, *place(env, [0] * env.n_users, name=name, s2_needy_from_s1=s2_needy_from_s1,
                                         literal=True))


def _allocation(env: Environment, name: str, tasks: Sequence[int], steps: int) -> Allocation:
    x = tuple((Fraction(tasks[j]),) * env.n_servers for j in range(env.n_users))
    return Allocation(env, x, name, True, {"steps": steps})


_WHOLE: dict[int, Fraction] = {}


def whole(n: int) -> Fraction:
    """``Fraction(n)`` for an integer ``n``, one shared object per value (a ``Fraction`` is immutable; the tasks
    and amounts of a run repeat a few values)."""
    f = _WHOLE.get(n)
    if f is None:
        if len(_WHOLE) >= 1 << 16:
            _WHOLE.clear()
        f = _WHOLE[n] = Fraction(n)
    return f


def app_schedulable(env: Environment, usage: Sequence[Any], j: int) -> Schedulable:
    """User ``j`` as upstream's app (``FSAppAttempt``) with ``usage``: min share 0, its weight, start time ``1 + j``."""
    return _app(env, usage, j)


def place(env: Environment, held: Sequence[int], *, name: str = "yarn-drf",
          s2_needy_from_s1: bool = False, literal: bool = False,
          rounds: Optional[int] = None) -> tuple[list[int], int]:
    """The descent of :func:`allocate` (module docstring) starting from ``held`` whole tasks per user already
    running on the one pool (their usage counts in the order and is taken off the pool): ``(tasks, rounds)``, the
    tasks per user after every round that places one, and how many rounds placed one.  ``held`` must fit.

    ``literal=True``: every round fills every visited parent's ``TreeSet`` afresh (upstream's code path, the
    reference).  Otherwise the same allocation incrementally (:class:`_Incremental`); the version before
    YARN-11482's fix with two resources always runs literally (its comparator is not antisymmetric).
    ``rounds``: stop after that many rounds (a prefix of the run: the benchmark's literal side)."""
    st = _Pool(env, held, name)
    if literal or (s2_needy_from_s1 and env.n_resources == 2):
        pick = partial(_descend_literal, st, s2_needy_from_s1)
        served: Any = None
    else:
        inc = _Incremental(st)
        pick, served = inc.descend, inc.served
    while (rounds is None or st.steps < rounds) and (j := pick(None)) is not None:
        st.give(j)
        if served is not None:
            served(j)
    return st.tasks, st.steps


class _Pool:
    """The state of one run of :func:`place`: the pool left, every user's demand, bound and tasks, every user's and
    queue's usage.  Resources only shrink and usages and tasks only grow, so a user that cannot take a task now
    never can again in this run."""

    def __init__(self, env: Environment, held: Sequence[int], name: str) -> None:
        J, R, Q = env.n_users, env.n_resources, env.n_queues
        self.env, self.name = env, name
        self.cluster = env.total_capacity()
        self.left = list(env.capacity[0]) if env.n_servers else [_ZERO] * R
        self.tasks = [int(h) for h in held]
        self.user_use = [[_ZERO] * R for _ in range(J)]
        self.queue_use = [[_ZERO] * R for _ in range(Q)]
        self.limit = [None if b is None else math.floor(b) for b in env.tasks]
        self.demand = [env.d(j, 0) for j in range(J)] if env.n_servers else [env.demand[j] for j in range(J)]
        self.eligible = [0 in env.eligible[j] for j in range(J)]
        at: dict = {}  # a queue -> its path, found once per queue
        self.paths = [at[q] if q in at else at.setdefault(q, env.queue_path(q)) for q in env.user_queue]
        if not self._whole_usages():
            for j in range(J):
                if self.tasks[j]:
                    for r, dv in enumerate(self.demand[j]):
                        if dv:
                            amount = self.tasks[j] * dv
                            self.left[r] -= amount
                            self.user_use[j][r] += amount
                            for q in self.paths[j]:
                                self.queue_use[q][r] += amount
        self.pending_ok = [any(v for v in self.demand[j]) for j in range(J)]  # a zero request is no pending demand
        self.users_at: dict[Optional[int], list[int]] = {}
        for j in range(J):
            self.users_at.setdefault(env.user_queue[j], []).append(j)
        self.caps = [(q, env.queue_max[q]) for q in range(Q) if env.queue_max[q] is not None]  # maxResources
        self.steps = 0

    def _whole_usages(self) -> bool:
        """The held tasks' usage taken off the pool and added to the users and queues (as ``__init__``'s loop
        does), summed in integers where the pool and the held per-task demands are whole: the same exact
        values, one ``Fraction`` per sum.  ``False`` (nothing done) otherwise."""
        R = len(self.left)
        if not all(v.__class__ is Fraction and v.denominator == 1 for v in self.left):
            return False
        held = [j for j, n in enumerate(self.tasks) if n]
        if not all(dv.__class__ is Fraction and dv.denominator == 1 for j in held for dv in self.demand[j]):
            return False
        left = [v.numerator for v in self.left]
        queue_use: dict = {}
        for j in held:
            n = self.tasks[j]
            amounts = [n * dv.numerator for dv in self.demand[j]]
            self.user_use[j] = [whole(a) for a in amounts]
            for r in range(R):
                left[r] -= amounts[r]
            for q in self.paths[j]:
                acc = queue_use.get(q)
                if acc is None:
                    queue_use[q] = list(amounts)
                else:
                    for r in range(R):
                        acc[r] += amounts[r]
        self.left = [whole(v) for v in left]
        for q, acc in queue_use.items():
            self.queue_use[q] = [whole(a) for a in acc]
        return True

    def pending(self, j: int) -> bool:
        return self.pending_ok[j] and (self.limit[j] is None or self.tasks[j] < self.limit[j])

    def fits(self, j: int) -> bool:
        # the pool has room, and FSQueue.fitsInMaxShare: usage + the container within maxResources of the app's
        # queue and every ancestor (a queue without maxResources: unbounded)
        if not (self.eligible[j] and all(not dv or lv >= dv for lv, dv in zip(self.left, self.demand[j]))):
            return False
        return all(self.queue_use[q][r] + dv <= m[r] for q, m in self.caps if q in self.paths[j]
                   for r, dv in enumerate(self.demand[j]) if dv)

    def sched(self, node: tuple[str, int]) -> Schedulable:
        kind, i = node
        return _queue(self.env, self.queue_use[i], i) if kind == "q" else _app(self.env, self.user_use[i], i)

    def children(self, q: Optional[int]) -> list[tuple[str, int]]:
        """What the ``TreeSet`` at ``q`` is filled with, in order: the child queues, then the apps with demand."""
        return [("q", c) for c in self.env.queue_children(q)] + [("u", j) for j in self.users_at.get(q, ())
                                                                  if self.pending(j)]

    def give(self, j: int) -> None:
        self.steps += 1
        if self.steps > MAX_TASKS:
            raise InstanceError(f"instance: {self.name} would place more than {MAX_TASKS} whole tasks; "
                                f"scale capacities/demands down")
        self.tasks[j] += 1
        for r, dv in enumerate(self.demand[j]):
            if dv:
                self.left[r] -= dv
                self.user_use[j][r] += dv
                for q in self.paths[j]:
                    self.queue_use[q][r] += dv


def _treeset(st: _Pool, children: Sequence[tuple[str, int]], s2_needy_from_s1: bool) -> list:
    """The children in the order of a ``TreeSet`` with the comparator, filled in the given order now."""
    keyed = {c: prepare(st.sched(c), st.cluster) for c in children}
    return treeset_order(children, lambda a, b: compare_prepared(keyed[a], keyed[b], s2_needy_from_s1=s2_needy_from_s1))


def _descend_literal(st: _Pool, s2_needy_from_s1: bool, q: Optional[int]) -> Optional[int]:
    """One round's descent from ``q``, upstream's way: the children into a fresh ``TreeSet``, tried in its order."""
    children = st.children(q)
    if not children:
        return None
    for kind, i in _treeset(st, children, s2_needy_from_s1):
        if kind == "q":
            got = _descend_literal(st, s2_needy_from_s1, i)
            if got is not None:
                return got
        elif st.fits(i):
            return i
    return None


class _Keyed:
    """A child in its parent's heap: the fixed comparator as a sort key, with the version of the child's usage it
    was computed on.  ``rank`` 0 for a needy schedulable, 1 otherwise; ``ratios`` its min-share ratios (needy) or
    fair ratios, in its ``sortRatios`` order, each as a pair of integers ``(n, d)`` -- ``n / d`` in lowest terms,
    ``+inf`` as ``(1, 0)`` -- compared by ``n1 * d2`` against ``n2 * d1`` (exact, and ``+inf`` equals ``+inf``
    and exceeds every number); then start time, then the name's UTF-16 code units."""

    __slots__ = ("rank", "ratios", "start", "name", "version", "node")

    def __init__(self, rank: int, ratios: tuple, start: int, name: bytes, version: int, node: tuple[str, int]):
        self.rank, self.ratios, self.start, self.name = rank, ratios, start, name
        self.version, self.node = version, node

    def __lt__(self, other: "_Keyed") -> bool:
        if self.rank != other.rank:
            return self.rank < other.rank
        r1, r2 = self.ratios, other.ratios
        for i in range(0, len(r1), 2):
            x, y = r1[i] * r2[i + 1], r2[i] * r1[i + 1]
            if x != y:
                return x < y
        if self.start != other.start:
            return self.start < other.start
        if self.name != other.name:
            return self.name < other.name
        return self.version < other.version


def _keyed(p: Prepared, version: int, node: tuple[str, int]) -> Optional[_Keyed]:
    """The child's heap entry, or ``None`` when a compared ratio is NaN (or, never seen, anything but an exact
    number or ``+inf``).  Exactness: where no child of a parent is ``None`` here, ``compare_prepared`` (fixed) on
    two of them IS the order of their entries: needy first; ``signum(x - y)`` on exact numbers and ``+inf``
    (usage, min share and capacities are >= 0, weights > 0) is their order with ``inf - inf`` a tie, i.e.
    ``inf == inf``; the first nonzero position decides, else start time, else ``String.compareTo`` of the names
    -- and distinct siblings differ in start time (apps: ``1 + j``; queues: 0) or name (queues' full names), so
    this is a total order and a ``TreeSet`` filled with them iterates in it (no add is dropped)."""
    s = p.s
    if p.needy:
        m = min_share_ratios(s.usage, s.min_share)
        vec = [m[i] for i in p.order]
    else:
        vec = p.fair
    flat: list[int] = []
    for v in vec:
        if v.__class__ is Fraction:
            flat += (v.numerator, v.denominator)
        elif v == INF:
            flat += (1, 0)
        else:
            return None
    return _Keyed(0 if p.needy else 1, tuple(flat), s.start, p.name_key, version, node)


class _Incremental:
    """:func:`place`'s descent without refilling a ``TreeSet`` per parent per round, for the fixed comparator.

    Every parent keeps its children in a heap of :class:`_Keyed` entries (lazy: an entry older than its child's
    current one is skipped).  A round re-keys only the served app and the queues on its path, the only
    schedulables whose usage changed; the child that took the round is on top of its parent's heap, so that is
    one ``heapreplace`` per level.  A child that fails (an app without pending demand or whose task does not fit,
    a queue none of whose descendants takes a task) fails in every later round of the run -- the pool only
    shrinks, usages and tasks only grow -- so it leaves its parent's heap for good: at a parent, the least live
    child takes the round or leaves.  Removing children does not reorder the others under a total order.

    Exactness: while every child of a parent has an entry (:func:`_keyed`: no NaN among the ratios it would be
    compared on), the ``TreeSet`` at that parent iterates in entry order, so both ways try the same children in
    the same order and the same child takes the round (by induction up the tree).  A parent with a child
    without one (a resource the cluster has none of, or a needy queue with a zero min share of a resource it
    does not use: the comparator may then be intransitive) fills its ``TreeSet`` the literal way that round,
    from every child as upstream does; its heap is rebuilt when it is read again without a NaN."""

    def __init__(self, st: _Pool) -> None:
        self.st = st
        env = st.env
        self.parent: dict[tuple[str, int], Optional[int]] = {("q", q): env.queue_parent(q) for q in range(env.n_queues)}
        self.parent.update({("u", j): env.user_queue[j] for j in range(env.n_users)})
        self.kids: dict[Optional[int], list[tuple[str, int]]] = {}
        self.entry: dict[tuple[str, int], Optional[_Keyed]] = {}  # node -> its current entry (None: a NaN)
        self.version: dict[tuple[str, int], int] = {}
        self.nans: dict[Optional[int], int] = {}  # parent -> how many children have no entry now
        self.dead: set[tuple[str, int]] = set()
        self.heap: dict[Optional[int], list[_Keyed]] = {}
        self.stale: set[Optional[int]] = set()  # parents whose heap is rebuilt before it is read
        cluster = st.cluster
        weights = list(env.weight) + list(env.queue_weight)
        # exact numbers throughout, every capacity positive: :meth:`_fast_entry` (no division by zero can arise)
        self.fast = all(c.__class__ is Fraction and c > 0 for c in cluster) and all(
            w.__class__ is Fraction and w > 0 for w in weights)
        self.cn = [c.numerator for c in cluster] if self.fast else []
        self.cd = [c.denominator for c in cluster] if self.fast else []
        self.info: dict[tuple[str, int], tuple] = {}  # node -> (its usage list, min share or None, weight, start, name)
        # an app that cannot take a task now never can in this run (the class docstring): dead from the start, no
        # entry computed -- where entries are fast, an app (min share 0, never needy) has one, so no NaN is missed
        born_dead = {("u", j) for j in range(env.n_users) if not (st.pending(j) and st.fits(j))} if self.fast else set()
        for node in self.parent:
            if node in born_dead:
                continue
            sch = st.sched(node)
            kind, i = node
            use = st.queue_use[i] if kind == "q" else st.user_use[i]
            ms = sch.min_share if any(sch.min_share) else None  # all 0: never needy (0 > usage is false)
            if ms is not None and not all(m.__class__ is Fraction for m in ms):
                self.fast = False
            self.info[node] = (use, ms, (sch.weight.numerator, sch.weight.denominator) if self.fast else None,
                               sch.start, string_key(sch.name))
        self.dead.update(born_dead)
        for node, par in self.parent.items():
            self.version[node] = 0
            if node in born_dead:
                self.entry[node] = None
                self.kids.setdefault(par, []).append(node)
                continue
            e = self.entry[node] = self._entry(node, 0)
            self.nans[par] = self.nans.get(par, 0) + (e is None)
            self.kids.setdefault(par, []).append(node)
        self.stale.update(self.kids)

    def _entry(self, node: tuple[str, int], version: int) -> Optional[_Keyed]:
        if self.fast:
            return self._fast_entry(node, version)
        return _keyed(prepare(self.st.sched(node), self.st.cluster), version, node)

    def _fast_entry(self, node: tuple[str, int], version: int) -> Optional[_Keyed]:
        """:func:`_keyed` of ``prepare(node)``, in integers, where every capacity is a positive exact number and
        every weight a positive exact number: the usage ratios ``u_r / c_r`` are exact numbers (no NaN), so the
        dominant resource is the first largest ratio, ``sortRatios`` (Java's stable sort, a consistent
        comparator) is a stable sort by descending ratio, and the only NaN left is a needy schedulable's ``0 /
        0`` min-share ratio (``None``).  Ratios as unreduced pairs ``(n, d)``, ``d > 0`` (``+inf``: ``(1, 0)``):
        :class:`_Keyed` compares them by cross-multiplication, which does not need lowest terms."""
        use, ms, (wn, wd), start, name = self.info[node]
        cn, cd = self.cn, self.cd
        R = len(cn)
        q = [(use[r].numerator * cd[r], use[r].denominator * cn[r]) for r in range(R)]
        dom = 0
        for r in range(1, R):
            if q[r][0] * q[dom][1] > q[dom][0] * q[r][1]:
                dom = r
        if R == 2:
            order: Sequence[int] = (1, 0) if q[1][0] * q[0][1] > q[0][0] * q[1][1] else (0, 1)
        else:
            order = sorted(range(R), key=cmp_to_key(lambda a, b: (q[a][0] * q[b][1] < q[b][0] * q[a][1])
                                                    - (q[a][0] * q[b][1] > q[b][0] * q[a][1])))
        flat: list[int] = []
        if ms is not None and ms[dom] > use[dom]:  # needy: the min-share ratios u_r / m_r
            for r in order:
                m, u = ms[r], use[r]
                if m:
                    flat += (u.numerator * m.denominator, u.denominator * m.numerator)
                elif u:
                    flat += (1, 0)
                else:
                    return None
            return _Keyed(0, tuple(flat), start, name, version, node)
        for r in order:
            flat += (q[r][0] * wd, q[r][1] * wn)
        return _Keyed(1, tuple(flat), start, name, version, node)

    def descend(self, q: Optional[int]) -> Optional[int]:
        st = self.st
        if self.nans.get(q):
            children = st.children(q)
            if not children:
                return None
            for node in _treeset(st, children, False):
                got = self._try(node)
                if got is not None:
                    return got
            return None
        if q in self.stale:
            self.stale.discard(q)
            rows = self.heap[q] = [self.entry[n] for n in self.kids.get(q, ()) if n not in self.dead]  # type: ignore
            heapq.heapify(rows)
        rows = self.heap.get(q)
        while rows:
            top = rows[0]
            node = top.node
            if top.version == self.version[node] and node not in self.dead:
                got = self._try(node)
                if got is not None:
                    return got
            heapq.heappop(rows)
        return None

    def _try(self, node: tuple[str, int]) -> Optional[int]:
        """The child ``node`` takes the round (the user it serves) or is marked dead (``None``)."""
        if node in self.dead:
            return None
        kind, i = node
        if kind == "q":
            got = self.descend(i)
        else:
            got = i if self.st.pending(i) and self.st.fits(i) else None
        if got is None:
            self.dead.add(node)
        return got

    def served(self, j: int) -> None:
        """Re-key the app ``j`` and the queues above it (their usage grew)."""
        st = self.st
        for node in [("q", q) for q in st.paths[j]] + [("u", j)]:
            par = self.parent[node]
            ver = self.version[node] = self.version[node] + 1
            old, e = self.entry[node], self._entry(node, ver)
            self.entry[node] = e
            self.nans[par] += (e is None) - (old is None)
            if self.nans[par]:  # read the literal way while a child has no entry; rebuilt after
                self.stale.add(par)
            elif par not in self.stale:
                rows = self.heap[par]
                if rows and rows[0].node == node:  # the usual case: the child that took the round is on top
                    heapq.heapreplace(rows, e)  # type: ignore[arg-type]
                else:
                    heapq.heappush(rows, e)  # type: ignore[arg-type]


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
