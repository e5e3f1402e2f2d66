"""``yarn-drf``: YARN FairScheduler's ``DominantResourceFairnessPolicy`` -- its comparator as the ORDER facet,
and one container per round down the queue tree as a whole-task mechanism -- plus the historic buggy
version ``yarn-drf@YARN-11482``.

Source (read, not copied; our code follows the semantics), apache/hadoop, in
``hadoop-yarn-project/hadoop-yarn/hadoop-yarn-server/hadoop-yarn-server-resourcemanager/src/main/java/org/
apache/hadoop/yarn/server/resourcemanager/scheduler/fair/``:

* ``policies/DominantResourceFairnessPolicy.java`` @ ee91492f16528292c4ad173dd018807a63fe6106:
  ``getComparator`` (``COMPARATOR2`` when exactly two resource types are configured, else ``COMPARATORN``),
  ``DominantResourceFairnessComparatorN`` (``compare``, ``calculateClusterAndFairRatios``, ``sortRatios``,
  ``calculateMinShareRatios``, ``compareRatios``), ``DominantResourceFairnessComparator2`` and
  ``compareAttribrutes`` (start time, then name).  This revision still has the YARN-11482 bug in
  ``Comparator2`` (below); the fixed comparator is this file with that one line corrected (apache/hadoop
  pull request 5607, "YARN-11482. Fix bug of DRF comparision DominantResourceFairnessComparator2 in fair
  scheduler", merged to trunk 2023-04-29; its description quotes the two lines).
* ``FSParentQueue.java`` @ 4994beff3fff0b08736dd7ff87b67e1ba7826193 (``assignContainer``: the child queues
  put into a ``TreeSet`` ordered by the policy's comparator, tried in that order until one assigns);
  ``FSLeafQueue.java`` @ 6e953eb6a3dfcb8da19470e98ffcf1d43bf1887c (``assignContainer`` /
  ``fetchAppsWithDemand``: the runnable apps with pending demand in a ``TreeSet`` by the comparator, tried
  in order); ``FSQueue.java`` @ 4c4f28c9e7f76762346d990b043c6b77d3ac627a (``getStartTime`` is 0 for every
  queue; ``getMinShare`` is the configured ``minResources``).
* Upstream's tests: ``src/test/.../fair/policies/TestDominantResourceFairnessPolicy.java`` @
  9193ed22dd9eb00f82573a9ba763db72ee65aad0 (tests/mechanisms/test_yarn_drf.py replays every comparison).

The comparator (``compare(s1, s2)``: < 0 means ``s1`` gets a container first)
-----------------------------------------------------------------------------
For a schedulable with usage ``u``, min share ``m`` and weight ``w``, on a cluster of capacity ``c``:

* usage ratios ``u_r / c_r`` and fair ratios ``(u_r / c_r) / w`` for every resource type;
* its DOMINANT resource: the first index with the largest usage ratio (a later one replaces it only when
  strictly larger; ``Comparator2``: vcores when its ratio is strictly larger than memory's, else memory --
  the same rule for two resources);
* NEEDY: its usage of the dominant resource is below its min share of that resource (an exact comparison of
  amounts, no division);
* a needy one goes before a non-needy one;
* neither needy: both ratio vectors are sorted by usage ratio, DESCENDING (``Arrays.sort``, stable), and the
  fair ratios are compared position by position; the first difference decides;
* both needy: the same with the min-share ratios ``u_r / m_r`` (sorted by usage ratio);
* a tie: start time, then name (``String.compareTo``).

``Comparator2`` (two resource types) and ``ComparatorN`` agree in exact arithmetic, NaN included: both pick
the same dominant resource and compare the dominant position first, then the other.  We compute
``ComparatorN`` for any number of resources (one resource, which upstream cannot configure, is its
one-row case).

Division by zero: upstream divides in ``float`` (``ComparatorN``) or ``double`` (``Comparator2``) and we
reproduce what IEEE arithmetic gives, on exact numbers: ``x / 0`` is ``+inf`` for ``x > 0`` (``-inf`` for
``x < 0``) and ``0 / 0`` is NaN; ``inf / w`` stays ``inf``.  A comparison step is ``(int) Math.signum(a -
b)``: 0 when either side is NaN, 0 for ``inf`` against ``inf`` (``inf - inf`` is NaN), else the sign.  The
dominant-resource scan uses ``>``, false with NaN (so a NaN ratio at index 0 stays dominant).  The sort of
the ratio rows is Java's ``TimSort`` below its merge threshold (32 rows): the longest initial run (reversed
if strictly descending), then binary insertion; we run exactly that, with the comparator ``signum(o2[0] -
o1[0])``, so rows with a NaN usage ratio (a resource the cluster has none of) land where upstream's sort
puts them.  These semantics are :mod:`mechanisms.ports.java_go`'s (``ieee_div``, ``signum_diff``, ``gt``,
``java_sort``, ``treeset_order``, ``string_key``), shared with ``yarn-capacity``.  Where each case arises:

* weight 0: ``x / 0`` -- upstream's comment: "this Schedulable will lose out to any other Schedulable with
  non-zero weight" (our instance format forbids weight 0; the pure functions take it);
* min share 0 on a resource: its min-share ratio is ``+inf`` with usage > 0 and NaN with usage 0 (only read
  when both are needy, i.e. below a positive min share of their dominant resource);
* cluster capacity 0 of a resource: its usage ratio is NaN (usage 0) -- a resource type configured that
  no node has.

A NaN in a compared position makes that position a tie.  So upstream's comparator is NOT a strict weak
order when it meets one: two needy queues tied on their dominant min-share ratio that differ on another
resource, and a third queue tied with both except for a NaN there (usage 0 of a resource its min share
gives 0 of), are ordered by the ratio between the first two and by NAME against the third -- a cycle when
the names disagree with the ratios (tests/mechanisms/test_yarn_drf.py, e.g. three GPU-cluster queues, one
without GPUs and without a GPU min share).  That is upstream's behaviour today, reproduced, not repaired.

Exact arithmetic otherwise: upstream rounds to ``float``/``double``; two ratios equal exactly tie here and go
to the tie-breaks even where rounding would order them.

The historic bug: ``yarn-drf@YARN-11482``
-----------------------------------------
Before the fix, ``Comparator2`` decided whether ``s2`` is needy from ``s1``'s usage::

    s2Needy = usage1[dominant2] < minShare2[dominant2]      (fixed: usage2[dominant2])

(DominantResourceFairnessPolicy.java @ ee91492f, ``DominantResourceFairnessComparator2.compare``; PR 5607
quotes the same lines.)  Only ``Comparator2`` had it: ``ComparatorN`` at the same revision reads ``usage2``.
So the variant differs from the fixed policy only with exactly two resources, where upstream uses
``Comparator2``; ``compare(a, b)`` and ``compare(b, a)`` then need not be opposite (a needy queue looks
non-needy next to a heavier sibling, but needy when it is the first argument).

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
from typing import Any, NamedTuple, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import MAX_TASKS

from ...core.registry import OrderSpec, Setting, register
from ...core.z3spec import Z3Spec
from ..java_go import gt, ieee_div, isnan, java_sort, signum_diff, string_key, treeset_order

__all__ = ["UPSTREAM", "UPSTREAM_11482", "Schedulable", "cluster_ratios", "min_share_ratios",
           "sort_ratios", "compare_ratios", "Prepared", "prepare", "compare_prepared", "compare_schedulables",
           "queue_name", "schedulables", "user_compare", "user_share", "queue_share", "YARN_DRF",
           "YARN_DRF_11482", "yarn_drf", "yarn_drf_11482"]

_HADOOP = "apache/hadoop"
_POLICY = "DominantResourceFairnessPolicy.java"
UPSTREAM = (f"{_HADOOP} @ ee91492f16528292c4ad173dd018807a63fe6106, hadoop-yarn-server-resourcemanager .../scheduler/"
            f"fair/policies/{_POLICY} (ComparatorN / Comparator2) with the YARN-11482 fix (PR 5607); the descent: "
            f"FSParentQueue.java @ 4994beff3fff0b08736dd7ff87b67e1ba7826193, FSLeafQueue.java @ "
            f"6e953eb6a3dfcb8da19470e98ffcf1d43bf1887c, FSQueue.java @ 4c4f28c9e7f76762346d990b043c6b77d3ac627a")
UPSTREAM_11482 = (f"YARN-11482 (https://issues.apache.org/jira/browse/YARN-11482), fixed by {_HADOOP} pull request "
                  f"5607 (merged to trunk 2023-04-29; the fixing commit's hash is not pinned here): the comparator "
                  f"BEFORE the fix, {_HADOOP} @ ee91492f16528292c4ad173dd018807a63fe6106 .../fair/policies/{_POLICY}, "
                  f"DominantResourceFairnessComparator2.compare: s2Needy = resourceInfo1[dominant2] < "
                  f"minShareInfo2[dominant2]")

_ZERO = Fraction(0)


# ---------------------------------------------------------------------- the comparator's parts
class Schedulable(NamedTuple):
    """What the comparator reads of a schedulable (``Schedulable`` upstream)."""

    usage: tuple  # getResourceUsage(), per resource
    min_share: tuple  # getMinShare(), per resource (0 for apps and for queues without a guarantee)
    weight: Any  # getWeight()
    start: int  # getStartTime()
    name: str  # getName()


def cluster_ratios(usage: Sequence[Any], cluster: Sequence[Any], weight: Any) -> tuple[int, list, list]:
    """``calculateClusterAndFairRatios``: ``(dominant, usage ratios u_r / c_r, fair ratios (u_r / c_r) / w)``;
    the dominant index is the first with the largest usage ratio (replaced only by a strictly larger one)."""
    usage_r, fair = [], []
    dominant = 0
    for i, (u, c) in enumerate(zip(usage, cluster)):
        q = ieee_div(u, c)
        usage_r.append(q)
        if gt(q, usage_r[dominant]):
            dominant = i
        fair.append(ieee_div(q, weight))
    return dominant, usage_r, fair


def min_share_ratios(usage: Sequence[Any], min_share: Sequence[Any]) -> list:
    """``calculateMinShareRatios``: ``u_r / m_r`` (``+inf`` for ``m_r = 0 < u_r``, NaN for ``0 / 0``)."""
    return [ieee_div(u, m) for u, m in zip(usage, min_share)]


def sort_ratios(usage_ratios: Sequence[Any]) -> list[int]:
    """``sortRatios``: the row indices in the order ``Arrays.sort`` leaves them with the comparator
    ``signum(o2[0] - o1[0])`` (descending usage ratio; a NaN compares equal to everything): the JDK's TimSort
    (:func:`mechanisms.ports.java_go.java_sort`; exact below 32 rows -- upstream clusters have a handful of
    resource types)."""
    return java_sort(range(len(usage_ratios)), lambda i, j: signum_diff(usage_ratios[j], usage_ratios[i]))


def compare_ratios(ratios1: Sequence[Any], ratios2: Sequence[Any]) -> int:
    """``compareRatios``: position by position, ``signum(r1 - r2)``; the first nonzero decides (0 if none)."""
    for x, y in zip(ratios1, ratios2):
        ret = signum_diff(x, y)
        if ret:
            return ret
    return 0


def _attributes(p1: "Prepared", p2: "Prepared") -> int:
    """``compareAttribrutes``: start time, then name."""
    a, b = p1.s.start, p2.s.start
    if a != b:
        return (a > b) - (a < b)
    x, y = p1.name_key, p2.name_key
    return (x > y) - (x < y)


class Prepared(NamedTuple):
    """What the comparator computes of ONE schedulable on a cluster (each side's part of ``compare``, done once
    when the same schedulable is compared many times, e.g. while a ``TreeSet`` is filled)."""

    s: Schedulable
    dominant: int
    order: list  # sortRatios: the resource indices by descending usage ratio
    fair: list  # the fair ratios in that order
    needy: bool  # its own usage of the dominant resource below its min share of it
    name_key: bytes  # its name as UTF-16 code units (``String.compareTo``'s order)


def prepare(s: Schedulable, cluster: Sequence[Any]) -> Prepared:
    """One schedulable's part of the comparator (:class:`Prepared`)."""
    dominant, usage_r, fair = cluster_ratios(s.usage, cluster, s.weight)
    order = sort_ratios(usage_r)
    return Prepared(s, dominant, order, [fair[i] for i in order], gt(s.min_share[dominant], s.usage[dominant]),
                    string_key(s.name))


def compare_prepared(p1: Prepared, p2: Prepared, *, yarn_11482: bool = False) -> int:
    """:func:`compare_schedulables` on prepared schedulables."""
    s1, s2 = p1.s, p2.s
    s1_needy = p1.needy
    if yarn_11482 and len(s1.usage) == 2:  # Comparator2 before the fix: s2's neediness off s1's usage
        s2_needy = gt(s2.min_share[p2.dominant], s1.usage[p2.dominant])
    else:
        s2_needy = p2.needy
    if not s1_needy and not s2_needy:
        res = compare_ratios(p1.fair, p2.fair)
    elif s1_needy and not s2_needy:
        res = -1
    elif s2_needy and not s1_needy:
        res = 1
    else:
        m1, m2 = min_share_ratios(s1.usage, s1.min_share), min_share_ratios(s2.usage, s2.min_share)
        res = compare_ratios([m1[i] for i in p1.order], [m2[i] for i in p2.order])
    return res or _attributes(p1, p2)


def compare_schedulables(s1: Schedulable, s2: Schedulable, cluster: Sequence[Any], *,
                         yarn_11482: bool = False) -> int:
    """The policy's comparator (module docstring): < 0 when ``s1`` gets a container before ``s2``.
    ``yarn_11482=True``: the comparator before YARN-11482's fix -- with exactly two resources (upstream's
    ``Comparator2``) ``s2``'s neediness is read off ``s1``'s usage."""
    return compare_prepared(prepare(s1, cluster), prepare(s2, cluster), yarn_11482=yarn_11482)


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


class _Usages(NamedTuple):
    users: list  # [j] -> usage vector
    queues: list  # [q] -> usage vector (the users below it)


_LAST: list = [None, None]  # one-entry identity cache: (state, _Usages)


def _usages(state: Allocation) -> _Usages:
    if _LAST[0] is state:
        return _LAST[1]
    env = state.env
    users = [_user_usage(env, state.x, j) for j in range(env.n_users)]
    queues = [[_ZERO] * env.n_resources for _ in range(env.n_queues)]
    for j in range(env.n_users):
        for q in env.user_path(j):
            queues[q] = [a + b for a, b in zip(queues[q], users[j])]
    out = _Usages(users, queues)
    _LAST[0], _LAST[1] = state, out
    return out


def _app(env: Environment, usage: Sequence[Any], j: int) -> Schedulable:
    return Schedulable(tuple(usage), (_ZERO,) * env.n_resources, env.weight[j], 1 + j, env.users[j])


def _queue(env: Environment, usage: Sequence[Any], q: int) -> Schedulable:
    g = env.queue_guarantee[q]
    return Schedulable(tuple(usage), tuple(g) if g is not None else (_ZERO,) * env.n_resources, env.queue_weight[q],
                       0, queue_name(env, q))


def schedulables(state: Allocation, i: int, j: int) -> tuple[Schedulable, Schedulable]:
    """The two children of the lowest common ancestor of users ``i`` and ``j`` (apps or queues) in ``state``."""
    env = state.env
    pi, pj = env.user_path(i), env.user_path(j)
    k = 0
    while k < len(pi) and k < len(pj) and pi[k] == pj[k]:
        k += 1
    u = _usages(state)
    a = _queue(env, u.queues[pi[k]], pi[k]) if k < len(pi) else _app(env, u.users[i], i)
    b = _queue(env, u.queues[pj[k]], pj[k]) if k < len(pj) else _app(env, u.users[j], j)
    return a, b


def user_compare(state: Allocation, i: int, j: int, *, yarn_11482: bool = False) -> int:
    """The order of users ``i`` and ``j`` in ``state``: the comparator on the two children of their lowest
    common ancestor (< 0: ``i`` is served first)."""
    a, b = schedulables(state, i, j)
    return compare_schedulables(a, b, state.env.total_capacity(), yarn_11482=yarn_11482)


def _weighted_dominant(usage: Sequence[Any], cluster: Sequence[Any], weight: Any) -> Any:
    best: Any = _ZERO
    for v in cluster_ratios(usage, cluster, weight)[2]:
        if not isnan(v) and v > best:
            best = v
    return best


def user_share(state: Allocation, j: int) -> Any:
    """User ``j``'s weighted dominant share ``max_r (u_r / c_r) / w_j`` over the ratios that are not NaN (0 if
    none; ``inf`` when it holds a resource the cluster has none of)."""
    env = state.env
    return _weighted_dominant(_usages(state).users[j], env.total_capacity(), env.weight[j])


def queue_share(state: Allocation, q: int) -> Any:
    """Queue ``q``'s weighted dominant share (as :func:`user_share`, with the usage below it and its weight)."""
    env = state.env
    return _weighted_dominant(_usages(state).queues[q], env.total_capacity(), env.queue_weight[q])


#: the order facets: the fixed policy, and the comparator before YARN-11482's fix
YARN_DRF = OrderSpec(user_compare, user_share, queue_share)
YARN_DRF_11482 = OrderSpec(lambda state, i, j: user_compare(state, i, j, yarn_11482=True), user_share, queue_share)


# ---------------------------------------------------------------------- the mechanism
def _run(env: Environment, name: str, yarn_11482: bool) -> Allocation:
    """One container per round down the tree (module docstring), on the one pool."""
    J, R, Q = env.n_users, env.n_resources, env.n_queues
    cluster = env.total_capacity()
    left = list(env.capacity[0]) if env.n_servers else [_ZERO] * R
    tasks = [0] * J
    user_use = [[_ZERO] * R for _ in range(J)]
    queue_use = [[_ZERO] * R for _ in range(Q)]
    limit = [None if b is None else math.floor(b) for b in env.tasks]
    demand = [env.d(j, 0) for j in range(J)] if env.n_servers else [env.demand[j] for j in range(J)]
    eligible = [0 in env.eligible[j] for j in range(J)]
    pending_ok = [any(v for v in demand[j]) for j in range(J)]  # a zero request is no pending demand
    paths = [env.user_path(j) for j in range(J)]
    users_at: dict[Optional[int], list[int]] = {}
    for j in range(J):
        users_at.setdefault(env.user_queue[j], []).append(j)

    def pending(j: int) -> bool:
        return pending_ok[j] and (limit[j] is None or tasks[j] < limit[j])

    def fits(j: int) -> bool:
        return eligible[j] and all(not dv or lv >= dv for lv, dv in zip(left, demand[j]))

    def sched(node: tuple[str, int]) -> Schedulable:
        kind, i = node
        return _queue(env, queue_use[i], i) if kind == "q" else _app(env, user_use[i], i)

    def descend(q: Optional[int]) -> Optional[int]:
        children = [("q", c) for c in env.queue_children(q)] + [("u", j) for j in users_at.get(q, ()) if pending(j)]
        if not children:
            return None
        keyed = {c: prepare(sched(c), cluster) for c in children}
        order = treeset_order(children, lambda a, b: compare_prepared(keyed[a], keyed[b], yarn_11482=yarn_11482))
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
    x = tuple((Fraction(tasks[j]),) * env.n_servers for j in range(J))
    return Allocation(env, x, name, True, {"steps": steps})


_SETTING = Setting(single_server=True, placement=True, external=False, bounds=True, weights=True, divisible=False,
                   hierarchy=True)

_NOTES = ("port of the comparator's semantics (our code): queues are FSQueues (usage = the users below, min share "
          "= guarantee, absent 0; weight = queue weight; start time 0, name root.<path>), users are apps (own "
          "usage, min share 0, user weight, start time 1 + user index = declaration order); ComparatorN, which "
          "equals Comparator2 for two resources; IEEE semantics of upstream's divisions reproduced on exact "
          "numbers (x/0 = inf, 0/0 = NaN, a NaN position is a tie: upstream's comparator is then not a strict "
          "weak order); two users compare as the two children of their lowest common ancestor; one container per "
          "round: child queues then apps with pending demand in a TreeSet (red-black insertion reproduced), tried "
          "in order, an app takes a task when it fits; one pool, no reservations, max shares or preemption; "
          "exact shares (upstream: float/double); no claims (upstream states none)")


@register("yarn-drf", "YARN FairScheduler DRF (DominantResourceFairnessPolicy): needy below min share first, then "
          "per-resource usage ratios sorted descending over the weight, then start time and name; one container "
          "per round down the queue tree", _SETTING, (),
          source=UPSTREAM, notes=_NOTES,
          z3=Z3Spec.none("indivisible tasks on a queue tree (integer allocations): not encoded"),
          order=YARN_DRF)
def yarn_drf(env: Environment, exact: bool = False) -> Allocation:
    """FairScheduler's DRF policy, one container per round (module docstring)."""
    return _run(env, "yarn-drf", False)


@register("yarn-drf@YARN-11482", "YARN FairScheduler DRF before the YARN-11482 fix: with two resources, "
          "Comparator2 reads the second schedulable's neediness off the FIRST one's usage", _SETTING, (),
          source=UPSTREAM_11482,
          notes="the historic comparator, reproduced exactly (in exact arithmetic): s2Needy = usage1[dominant2] < "
                "minShare2[dominant2], in Comparator2 only (two resources; with any other number upstream uses "
                "ComparatorN, which was right, so the variant equals yarn-drf there); everything else as yarn-drf",
          z3=Z3Spec.none("indivisible tasks on a queue tree (integer allocations): not encoded"),
          order=YARN_DRF_11482)
def yarn_drf_11482(env: Environment, exact: bool = False) -> Allocation:
    """``yarn-drf`` with the comparator before YARN-11482's fix."""
    return _run(env, "yarn-drf@YARN-11482", True)
