"""The one environment model shared by every seed paper.

Notation (used in every docstring of the project)
-------------------------------------------------
* resources ``R`` (computational, inside servers), servers ``S``, users ``J``;
* capacities ``c[s,r] >= 0``; a single resource pool (DRF) is one server;
* external resources ``K`` (seed 004: a link shared by all servers) with capacities ``c_er[k] >= 0``;
* per-task demands ``d[j,r] >= 0`` and external per-task demands ``d_er[j,k] >= 0``;
  seed 002 Sec. IV (co-processors, wireless channels) lets the demand differ per server:
  ``d[j,s,r]`` overrides ``d[j,r]`` for the servers listed in ``server_demand``;
* weights ``w_j > 0`` (seed 002 ``phi_n``), eligible servers ``E_j`` (placement constraints,
  seed 002 ``delta_{n,i}``; default all), task bounds ``n_j`` (seed 004 ``n_j``, seed 003 ``B_i``;
  ``None`` = unbounded);
* an optional queue tree (hierarchical sharing): queues ``q`` named by paths ``"eng/dev"`` (every prefix
  is itself a queue; the root is unnamed), weights ``w_q > 0``, optional declared guarantees ``g[q,r] >= 0``
  and maxes ``m[q,r] >= 0`` (``mechverify.declared``), and each user's queue (``None``: the root).

Derived quantities
------------------
* ``gamma[j,s] = [s in E_j] * min_{r: d[j,s,r] > 0} c[s,r] / d[j,s,r]`` -- tasks user ``j`` runs
  when it monopolises server ``s`` (seed 002 eq. (7)).  ``gamma_free[j,s]`` is the same without
  the eligibility factor (TSF's monopoly count "as if there were no placement constraints").

Zero demands and users that can run nothing (decisions, also in docs/model.md)
---------------------------------------------------------------------------
* A zero entry ``d[j,r] = 0`` means the task does not use ``r``: ``r`` is skipped in every
  ``min_r`` (Leontief utility, gamma, dominant shares).  A server lacking a resource (``c[s,r] = 0``)
  that ``j`` demands gives ``gamma[j,s] = 0``: ``j`` can run nothing there.
* If a user's demand vector at some server is zero on every resource (so the server alone would
  run infinitely many of its tasks), the user must be bounded by an external demand > 0 or a
  finite task bound; otherwise the instance is rejected (its utility would be infinite).
* A user that can run no task anywhere (no eligible server, or every eligible server lacks a
  demanded resource, or an exhausted external resource) is legal input.  Every mechanism gives it
  zero tasks, and it takes no part in the max-min rounds (its score is frozen at 0).
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import chain
from typing import Any, Iterable, Mapping, Optional, Sequence

from .numbers import INF, InstanceError, as_float, as_floats, fmt_exact, fraction_sum, to_fraction
from .validation import MAX_QUEUE_DEPTH, MAX_QUEUES, queue_parents, validate

__all__ = ["Environment", "FloatArrays", "InstanceError", "describe_shape", "leontief_tasks", "MAX_QUEUES", "MAX_QUEUE_DEPTH"]


Num = Fraction


def leontief_tasks(amounts: Sequence[Any], demand: Sequence[Any]) -> Any:
    """``min_{k: demand[k] > 0} amounts[k] / demand[k]`` (``inf`` if nothing is demanded): the Leontief
    number of tasks that ``amounts`` (a server's capacities, the external capacities, a bundle's part)
    allow a per-task ``demand``.  Zero demands are skipped (docs/model.md)."""
    bn = bd = 0  # the best ratio so far as an integer pair bn/bd (bd = 0: none yet)
    for a, dk in zip(amounts, demand):
        if a.__class__ is not Fraction or dk.__class__ is not Fraction:
            break  # floats or ints somewhere: the generic loop below
        dn = dk._numerator
        if dn > 0:
            qn, qd = a._numerator * dk._denominator, a._denominator * dn  # a / dk, qd > 0
            if not bd or qn * bd < bn * qd:
                bn, bd = qn, qd
    else:  # all Fractions: exact integer comparisons, one Fraction built (about 8x cheaper)
        return Fraction(bn, bd) if bd else INF
    best: Any = INF
    for a, dk in zip(amounts, demand):
        if a.__class__ is float and dk.__class__ is Fraction:  # a float bundle, an exact demand: what ``a / dk``
            if dk._numerator > 0:                               # computes, float(a) / float(dk), without the calls
                q = a / (dk._numerator / dk._denominator)
                if q < best:
                    best = q
            continue
        if dk > 0:
            q = a / dk
            if q < best:
                best = q
    return best


#: set while :func:`deferred_validation` is active (one flag: the package runs one thread per process)
_DEFERRED = [False]

#: ``Environment.cluster_memo``: clusters of at least this many servers share one memo (and ``cluster_key`` is
#: its token; a smaller cluster's key is its capacities, which hash fast); the memos of this many clusters used
#: last are kept
CLUSTER_MIN_SERVERS = 64
CLUSTER_MEMOS = 16
_CLUSTERS: dict = {}  # (id of each server's capacity tuple, ...) -> (that capacity, its memo), oldest first


class _ClusterToken:
    """``Environment.cluster_key`` of a large cluster: equal only to itself."""

    __slots__ = ()


@contextmanager
def deferred_validation():
    """Environments built inside skip :meth:`Environment.validate` -- for a generator that builds valid
    instances by construction and screens many of them in floats (``rates`` with a workload's draws; the
    workloads' tests validate their samples).  Whoever turns a result on such an environment into a verdict
    calls ``validate()`` first (``rates`` does, before every exact re-check).  ``replace()`` validates again."""
    old = _DEFERRED[0]
    _DEFERRED[0] = True
    try:
        yield
    finally:
        _DEFERRED[0] = old


@dataclass(frozen=True)
class FloatArrays:
    """An environment's numbers in floats (:meth:`Environment.floats`): ``demand`` ``J x R`` (the base demand
    ``d[j]``; per-server overrides are not in it), ``external_demand`` ``J x K`` (``J x 0`` when no user has
    one), ``weight`` and ``tasks`` (``inf``: no bound) ``J``, ``capacity`` ``S x R``, ``external_capacity``
    ``K``.  Shared read-only: never write into them."""

    demand: Any
    external_demand: Any
    weight: Any
    tasks: Any
    capacity: Any
    external_capacity: Any


@dataclass(frozen=True)
class Environment:
    """An immutable environment (the *reported* one when given to a mechanism).

    All numbers are ``Fraction``.  Indices: users ``j``, servers ``s``, resources ``r``,
    external resources ``k``.  Build from JSON with :func:`parse_environment`.  Sizes: ``n_users``,
    ``n_servers``, ``n_resources``, ``n_external`` and ``n_queues`` (0: a flat instance, every user at the root).
    """

    resources: tuple[str, ...]
    servers: tuple[str, ...]
    capacity: tuple[tuple[Fraction, ...], ...]  # [s][r]
    users: tuple[str, ...]
    demand: tuple[tuple[Fraction, ...], ...]  # [j][r]
    external: tuple[str, ...] = ()
    external_capacity: tuple[Fraction, ...] = ()  # [k]
    external_demand: tuple[tuple[Fraction, ...], ...] = ()  # [j][k] (empty tuples when no external)
    weight: tuple[Fraction, ...] = ()  # [j]
    eligible: tuple[frozenset[int], ...] = ()  # [j] -> set of server indices
    tasks: tuple[Optional[Fraction], ...] = ()  # [j] -> bound n_j or None
    server_demand: Mapping[tuple[int, int], tuple[Fraction, ...]] = field(default_factory=dict)  # (j,s) -> [r]
    # the queue tree (docs/model.md "Queue trees"): paths in declaration order, every prefix declared
    queues: tuple[str, ...] = ()  # [q] -> path "eng/dev"
    queue_weight: tuple[Fraction, ...] = ()  # [q] -> w_q > 0 (default 1)
    queue_guarantee: tuple[Optional[tuple[Fraction, ...]], ...] = ()  # [q] -> [r] or None (not given)
    queue_max: tuple[Optional[tuple[Fraction, ...]], ...] = ()  # [q] -> [r] or None (not given): a declared limit
    user_queue: tuple[Optional[int], ...] = ()  # [j] -> queue index, None = the root
    # a STATE (docs/model.md "States"): the current allocation, whole or fractional tasks per user and server,
    # that a production policy's ORDER is read in; () = the empty cluster.  Allocation functions ignore it.
    usage: tuple[tuple[Fraction, ...], ...] = ()  # [j][s]

    # ------------------------------------------------------------------ construction
    def __post_init__(self) -> None:
        nj, ns = len(self.users), len(self.servers)
        if not self.weight:
            object.__setattr__(self, "weight", tuple(Fraction(1) for _ in range(nj)))
        if not self.eligible:
            object.__setattr__(self, "eligible", tuple(frozenset(range(ns)) for _ in range(nj)))
        if not self.tasks:
            object.__setattr__(self, "tasks", tuple(None for _ in range(nj)))
        if not self.external_demand:
            object.__setattr__(self, "external_demand", tuple(() for _ in range(nj)))
        nq = len(self.queues)
        if not self.queue_weight and nq:
            object.__setattr__(self, "queue_weight", tuple(Fraction(1) for _ in range(nq)))
        if not self.queue_guarantee and nq:
            object.__setattr__(self, "queue_guarantee", tuple(None for _ in range(nq)))
        if len(self.queue_max) != nq and not any(m is not None for m in self.queue_max):
            # absent (or left over from a tree replaced by code that predates maxes): no max anywhere
            object.__setattr__(self, "queue_max", tuple(None for _ in range(nq)))
        if not self.user_queue:
            object.__setattr__(self, "user_queue", tuple(None for _ in range(nj)))
        object.__setattr__(self, "server_demand", dict(self.server_demand))
        # memo of derived quantities (the environment is immutable); not a dataclass field, so it
        # takes no part in ==, repr or replace()
        object.__setattr__(self, "_memo", {})
        # the sizes (attributes, not fields: no part in ==, repr or replace()); n_queues 0: a flat instance
        for attr, of in (("n_users", self.users), ("n_servers", self.servers), ("n_resources", self.resources),
                         ("n_external", self.external), ("n_queues", self.queues)):
            object.__setattr__(self, attr, len(of))
        if not _DEFERRED[0]:
            self.validate()

    def validate(self) -> None:
        """Check shapes and signs; raise ``InstanceError`` with one line naming the field
        (:func:`mechverify.validation.validate`)."""
        validate(self)

    def _queue_parents(self) -> tuple[Optional[int], ...]:
        """``[q] -> parent queue index`` (``None``: a top-level queue), checking the paths (memoised)."""
        return queue_parents(self)

    # ------------------------------------------------------------------ sizes
    # n_users, n_servers, n_resources, n_external and n_queues are plain attributes set once by __post_init__
    # (read in every inner loop; an attribute costs a third of a property)

    @property
    def has_placement(self) -> bool:
        """Some user is not eligible everywhere."""
        full = frozenset(range(self.n_servers))
        return any(e != full for e in self.eligible)

    @property
    def has_bounds(self) -> bool:
        """Some user has a finite task bound."""
        return any(t is not None for t in self.tasks)

    @property
    def has_weights(self) -> bool:
        """Some weight differs from 1."""
        return any(w != 1 for w in self.weight)

    @property
    def has_server_demand(self) -> bool:
        """Some user has a per-server demand override (seed 002 Sec. IV)."""
        return bool(self.server_demand)

    # ------------------------------------------------------------------ the queue tree
    @property
    def has_usage(self) -> bool:
        """The instance carries a state (``usage``): some user holds tasks in it."""
        return any(v for row in self.usage for v in row)

    @property
    def has_queues(self) -> bool:
        """A queue tree is declared (then some users may sit in queues; with none declared every user is at
        the root)."""
        return bool(self.queues)

    @property
    def has_guarantees(self) -> bool:
        """Some queue declares a guarantee (``queue_guarantee``)."""
        return any(g is not None for g in self.queue_guarantee)

    @property
    def has_maxes(self) -> bool:
        """Some queue declares a max (``queue_max``)."""
        return any(m is not None for m in self.queue_max)

    def queue_index(self, path: str) -> int:
        """The index of the queue named ``path`` (``KeyError`` if none)."""
        idx = self._memo.get("qindex")
        if idx is None:
            idx = {p: q for q, p in enumerate(self.queues)}
            self._memo["qindex"] = idx
        return idx[path]

    def queue_parent(self, q: int) -> Optional[int]:
        """The parent of queue ``q`` (``None``: the root)."""
        return self._queue_parents()[q]

    def queue_children(self, q: Optional[int] = None) -> tuple[int, ...]:
        """The child queues of ``q`` (``None``: the root's), in declaration order."""
        kids = self._memo.get("qchildren")
        if kids is None:
            acc: dict[Optional[int], list[int]] = {}
            for c, p in enumerate(self._queue_parents() if self.queues else ()):
                acc.setdefault(p, []).append(c)
            kids = {p: tuple(v) for p, v in acc.items()}
            self._memo["qchildren"] = kids
        return kids.get(q, ())

    def queue_depth(self, q: Optional[int]) -> int:
        """Levels below the root: 0 for the root (``None``), 1 for a top-level queue, ``"a/b"`` is 2."""
        return 0 if q is None else self.queues[q].count("/") + 1

    def queue_leaves(self) -> tuple[int, ...]:
        """The queues without child queues, in declaration order."""
        return tuple(q for q in range(self.n_queues) if not self.queue_children(q))

    def queue_path(self, q: Optional[int]) -> tuple[int, ...]:
        """The queues from the top level down to ``q`` (``()`` for the root)."""
        out: list[int] = []
        while q is not None:
            out.append(q)
            q = self.queue_parent(q)
        return tuple(reversed(out))

    def user_path(self, j: int) -> tuple[int, ...]:
        """The queues from the top level down to user ``j``'s queue, as INDICES into ``queues`` (``queues[q]``
        is the path name, ``queue_weight[q]`` its weight, ...): with ``queues`` ``("eng", "ops", "eng/dev")``
        a user in ``eng/dev`` has path ``(0, 2)``; ``()``: ``j`` is at the root."""
        return self.queue_path(self.user_queue[j])

    def queue_users(self, q: Optional[int] = None) -> tuple[int, ...]:
        """The users directly in queue ``q`` (``None``: at the root), in user order."""
        return tuple(j for j, uq in enumerate(self.user_queue) if uq == q)

    def demands(self, j: int, whole: bool = False) -> bool:
        """User ``j`` asks for something it can run: its task bound is not 0, some server it is eligible for
        has every resource it demands there, and the external resources allow it tasks (a node of the tree
        *demands* when some user below it does; docs/model.md "Entitlements").  ``whole``: it can run one
        WHOLE task -- a bound of at least 1, one task fitting on an eligible server and in the external
        resources (the reading for whole-task mechanisms)."""
        if not whole:
            if self.tasks[j] is not None and not self.tasks[j] > 0:
                return False
            if not any(self.usable(j, s) for s in range(self.n_servers)):
                return False
            return self.external_limit(j) > 0
        if self.tasks[j] is not None and self.tasks[j] < 1:
            return False
        if not any(self.monopoly_tasks(j, s) >= 1 for s in self.eligible[j]):
            return False
        return self.external_limit(j) >= 1

    def entitlement(self, j: int, demanding: bool = False, whole: bool = False) -> Fraction:
        """User ``j``'s fraction of the cluster under the STATIC split of the tree: the product, from the
        root down to ``j``, of a node's weight over the summed weights of its siblings (a queue's children
        are its child queues, by queue weight, and the users directly in it, by user weight).  Flat: ``w_j /
        sum_i w_i``.  ``demanding=True``: only nodes that demand (:meth:`demands`) are siblings, and a node
        that does not demand is entitled to 0 -- the hierarchical share guarantee of H-DRF (docs/model.md,
        "Entitlements"); ``whole``: demanding in whole tasks (:meth:`demands`).  Exact; memoised."""
        return self._entitled(demanding, whole)[0][j]

    def queue_entitlement(self, q: int, demanding: bool = False, whole: bool = False) -> Fraction:
        """Queue ``q``'s fraction of the cluster under the static split (as :meth:`entitlement`; 0 for a queue
        nobody below demands when ``demanding``)."""
        return self._entitled(demanding, whole)[1][q]

    def _entitled(self, demanding: bool, whole: bool) -> tuple[tuple[Fraction, ...], tuple[Fraction, ...]]:
        key = ("entitlement", demanding, demanding and whole)
        ent = self._memo.get(key)
        if ent is None:
            ent = self._memo[key] = self._entitlements(demanding, whole)
        return ent

    def entitlement_ratio(self, j: int, k: int, whole: bool = False) -> Fraction:
        """``entitlement(j, True) / entitlement(k, True)``: the factor weighted envy-freeness scales ``k``'s
        bundle by -- the ratio of the two users' share guarantees, so a queue nobody uses takes no part;
        ``w_j / w_k`` on a flat instance; 0 when either demands nothing (its bundle or its envy is empty)."""
        if not self.queues:
            return self.weight[j] / self.weight[k]
        fj, fk = self.entitlement(j, True, whole), self.entitlement(k, True, whole)
        return fj / fk if fj and fk else Fraction(0)

    def _entitlements(self, demanding: bool, whole: bool = False) -> tuple[tuple[Fraction, ...], tuple[Fraction, ...]]:
        J, Q = self.n_users, self.n_queues
        parent = self._queue_parents() if Q else ()
        user_on = [not demanding or self.demands(j, whole) for j in range(J)]
        queue_on = [not demanding] * Q
        if demanding:
            for j in range(J):
                if user_on[j]:
                    q = self.user_queue[j]
                    while q is not None and not queue_on[q]:
                        queue_on[q] = True
                        q = parent[q]
        total: dict[Optional[int], Fraction] = {}
        for q in range(Q):
            if queue_on[q]:
                total[parent[q]] = total.get(parent[q], Fraction(0)) + self.queue_weight[q]
        for j in range(J):
            if user_on[j]:
                uq = self.user_queue[j]
                total[uq] = total.get(uq, Fraction(0)) + self.weight[j]
        frac: list[Fraction] = [Fraction(0)] * Q
        for q in sorted(range(Q), key=lambda q: self.queues[q].count("/")):  # parents before children
            if queue_on[q]:
                p = parent[q]
                frac[q] = (Fraction(1) if p is None else frac[p]) * self.queue_weight[q] / total[p]
        out = []
        for j in range(J):
            uq = self.user_queue[j]
            out.append((Fraction(1) if uq is None else frac[uq]) * self.weight[j] / total[uq] if user_on[j]
                       else Fraction(0))
        return tuple(out), tuple(frac)

    # ------------------------------------------------------------------ derived quantities
    def d(self, j: int, s: int) -> tuple[Fraction, ...]:
        """Per-task demand vector of user ``j`` at server ``s`` (seed 002 Sec. IV override or ``d[j]``)."""
        return self.server_demand.get((j, s), self.demand[j])

    def monopoly_tasks(self, j: int, s: int) -> Fraction | float:
        """``min_{r: d[j,s,r]>0} c[s,r]/d[j,s,r]`` ignoring eligibility (``inf`` if ``d[j,s]`` is all zero)."""
        key = ("mono", j, s)
        best = self._memo.get(key)
        if best is None:
            best = leontief_tasks(self.capacity[s], self.d(j, s))
            self._memo[key] = best
        return best

    def external_limit(self, j: int) -> Fraction | float:
        """``min_{k: d_er[j,k] > 0} c_er[k] / d_er[j,k]``: tasks the external resources alone allow
        user ``j`` (``inf`` when it demands no external resource).  THE one definition of the limit."""
        key = ("ext", j)
        best = self._memo.get(key)
        if best is None:
            best = leontief_tasks(self.external_capacity, self.external_demand[j])
            self._memo[key] = best
        return best

    def gamma(self, j: int, s: int) -> Fraction | float:
        """Seed 002 eq. (7): ``gamma[j,s] = delta[j,s] * min_r c[s,r]/d[j,s,r]``."""
        return self.monopoly_tasks(j, s) if s in self.eligible[j] else Fraction(0)

    def usable(self, j: int, s: int) -> bool:
        """``j`` is eligible at ``s`` and can run a positive amount of tasks there (``gamma[j,s] > 0``)."""
        return s in self.eligible[j] and self.runs_on(j, s)

    def runs_on(self, j: int, s: int) -> bool:
        """``monopoly_tasks(j, s) > 0`` (ignoring eligibility) without dividing: server ``s`` has every
        resource user ``j`` demands there (an all-zero demand runs anywhere)."""
        for c, dv in zip(self.capacity[s], self.d(j, s)):
            if dv and not c:
                return False
        return True

    def floats(self) -> "FloatArrays":
        """The environment's numbers as numpy float arrays (:class:`FloatArrays`, memoised): what float paths
        read instead of converting ``Fraction``s one at a time.  Each value is ``as_float`` of the exact number
        (correctly rounded), so a float path reading them computes what it computed from the Fractions."""
        got = self._memo.get("floats")
        if got is None:
            import numpy as np

            J, R = self.n_users, self.n_resources
            K = len(self.external_demand[0]) if J else 0
            seeded = self._memo.get("float_rows")
            if seeded is not None:  # one row per user (seed_floats): one conversion for the whole matrix
                M = np.fromiter(chain.from_iterable(seeded), float, J * (R + K + 2)).reshape(J, R + K + 2)
                demand, external_demand, weight, tasks = M[:, :R], M[:, R:R + K], M[:, R + K], M[:, R + K + 1]
            else:
                demand = np.array([as_floats(v) for v in self.demand], dtype=float).reshape(J, R)
                external_demand = np.array([as_floats(v) for v in self.external_demand], dtype=float
                                           ).reshape(J, K) if K else np.zeros((J, 0))
                weight = np.array([as_float(w) for w in self.weight], dtype=float)
                tasks = np.array([INF if t is None else as_float(t) for t in self.tasks], dtype=float)
            got = self._memo["floats"] = FloatArrays(
                demand=demand, external_demand=external_demand, weight=weight, tasks=tasks,
                capacity=self._float_capacity(),
                external_capacity=np.array(as_floats(self.external_capacity), dtype=float))
        return got

    def cluster_key(self) -> Any:
        """A hashable standing for the servers' capacities: equal keys mean equal ``capacity`` (the tuple itself
        for a small cluster; for a large one the token of its shared :meth:`cluster_memo`, so that a cache keyed by
        it does not hash every server's numbers at every look-up)."""
        if self.n_servers < CLUSTER_MIN_SERVERS:
            return self.capacity
        return self.cluster_memo().setdefault("token", _ClusterToken())

    def _float_capacity(self) -> Any:
        memo = self.cluster_memo()
        got = memo.get("float_capacity")
        if got is None:
            import numpy as np

            got = memo["float_capacity"] = np.array([as_floats(c) for c in self.capacity], dtype=float).reshape(
                self.n_servers, self.n_resources)
            got.flags.writeable = False  # shared by the cluster's environments
        return got

    def seed_floats(self, rows: Sequence[tuple]) -> None:
        """Hand :meth:`floats` each user's numbers as floats, one tuple per user: its demand, external demand,
        weight and task bound (``inf``: none), each ``as_float`` of the exact number -- for a builder that keeps
        them per user across many environments (``execution``: one per step)."""
        self._memo["float_rows"] = rows

    @staticmethod
    def float_row(demand: tuple, external_demand: tuple, weight: Any, tasks: Any) -> tuple:
        """One user's row for :meth:`seed_floats`."""
        return (*as_floats(demand), *as_floats(external_demand), as_float(weight), INF if tasks is None else as_float(tasks))

    def total_capacity(self) -> tuple[Fraction, ...]:
        """Pooled capacity ``sum_s c[s,r]`` per resource."""
        memo = self.cluster_memo()
        tot = memo.get("pooled")
        if tot is None:
            cols = [[row[r] for row in self.capacity] for r in range(self.n_resources)]
            tot = tuple(fraction_sum(col) for col in cols)
            memo["pooled"] = tot
        return tot

    def cluster_memo(self) -> dict:
        """A memo of what depends on the servers' capacities alone (the pooled capacity, the capacities as floats,
        a mechanism's scaled capacities), shared by every environment whose ``capacity`` holds the very same
        per-server tuples -- an execution's steps, a simulation's runs alone on its cluster: those are built once
        per cluster (``mechverify.execution``), so a step does not redo O(servers) work.  Kept for the
        :data:`CLUSTER_MEMOS` clusters used last (each entry holds its capacity, so the identities it is keyed by
        stay those of live objects); an environment of fewer than :data:`CLUSTER_MIN_SERVERS` servers keeps its own
        (the many small environments of a search: computing their few numbers again costs less than finding them)."""
        got = self._memo.get("cluster")
        if got is None:
            if self.n_servers < CLUSTER_MIN_SERVERS:
                got = {}
            else:
                key = tuple(map(id, self.capacity))
                hit = _CLUSTERS.pop(key, None)
                if hit is None:
                    hit = (self.capacity, {})
                    while len(_CLUSTERS) >= CLUSTER_MEMOS:
                        _CLUSTERS.pop(next(iter(_CLUSTERS)))
                _CLUSTERS[key] = hit  # the newest
                got = hit[1]
            self._memo["cluster"] = got
        return got

    # ------------------------------------------------------------------ editing (used for misreports and minimisation)
    def with_user(self, j: int, *, demand: Optional[Sequence[Any]] = None,
                  external_demand: Optional[Sequence[Any]] = None,
                  eligible: Optional[Iterable[int]] = None, tasks: Any = "keep",
                  weight: Any = None, server_demand: Optional[Mapping[int, Sequence[Any]]] = None) -> "Environment":
        """A copy where user ``j`` reports something else (the SP deviation)."""
        def upd(seq, value):
            lst = list(seq)
            lst[j] = value
            return tuple(lst)

        kw: dict[str, Any] = {}
        if demand is not None:
            kw["demand"] = upd(self.demand, tuple(to_fraction(v, f"deviation.demand[{i}]") for i, v in enumerate(demand)))
        if external_demand is not None:
            kw["external_demand"] = upd(self.external_demand, tuple(
                to_fraction(v, f"deviation.external_demand[{i}]") for i, v in enumerate(external_demand)))
        if eligible is not None:
            kw["eligible"] = upd(self.eligible, frozenset(eligible))
        if tasks != "keep":
            kw["tasks"] = upd(self.tasks, None if tasks is None else to_fraction(tasks, "deviation.tasks"))
        if weight is not None:
            kw["weight"] = upd(self.weight, to_fraction(weight, "deviation.weight"))
        if server_demand is not None:
            sd = {k: v for k, v in self.server_demand.items() if k[0] != j}
            for s, vec in server_demand.items():
                sd[(j, s)] = tuple(to_fraction(v, f"deviation.server_demand[{s}][{i}]") for i, v in enumerate(vec))
            kw["server_demand"] = sd
        elif demand is not None:
            kw["server_demand"] = {k: v for k, v in self.server_demand.items() if k[0] != j}
        return replace(self, **kw)

    def restrict(self, users: Optional[Sequence[int]] = None, servers: Optional[Sequence[int]] = None,
                 resources: Optional[Sequence[int]] = None, external: Optional[Sequence[int]] = None) -> "Environment":
        """Sub-environment keeping the given indices (in the given order)."""
        U = list(range(self.n_users)) if users is None else list(users)
        Sv = list(range(self.n_servers)) if servers is None else list(servers)
        Rv = list(range(self.n_resources)) if resources is None else list(resources)
        Kv = list(range(self.n_external)) if external is None else list(external)
        smap = {s: i for i, s in enumerate(Sv)}
        sd = {}
        for (j, s), vec in self.server_demand.items():
            if j in U and s in smap:
                sd[(U.index(j), smap[s])] = tuple(vec[r] for r in Rv)
        return Environment(
            resources=tuple(self.resources[r] for r in Rv),
            servers=tuple(self.servers[s] for s in Sv),
            capacity=tuple(tuple(self.capacity[s][r] for r in Rv) for s in Sv),
            users=tuple(self.users[j] for j in U),
            demand=tuple(tuple(self.demand[j][r] for r in Rv) for j in U),
            external=tuple(self.external[k] for k in Kv),
            external_capacity=tuple(self.external_capacity[k] for k in Kv),
            external_demand=tuple(tuple(self.external_demand[j][k] for k in Kv) for j in U),
            weight=tuple(self.weight[j] for j in U),
            eligible=tuple(frozenset(smap[s] for s in self.eligible[j] if s in smap) for j in U),
            tasks=tuple(self.tasks[j] for j in U),
            server_demand=sd,
            # the tree is kept whole (a queue left without users stays declared); guarantees and maxes follow
            # the kept resources
            queues=self.queues,
            queue_weight=self.queue_weight,
            queue_guarantee=tuple(None if g is None else tuple(g[r] for r in Rv) for g in self.queue_guarantee),
            queue_max=tuple(None if m is None else tuple(m[r] for r in Rv) for m in self.queue_max),
            user_queue=tuple(self.user_queue[j] for j in U),
            usage=tuple(tuple(self.usage[j][s] for s in Sv) for j in U) if self.usage else (),
        )

    def without_queue(self, q: int) -> "Environment":
        """The tree without queue ``q``: its users and child queues move to its parent (a leaf queue is
        removed, an inner one merged into its parent: ``"a/b/c"`` becomes ``"a/c"``).  ``InstanceError`` if
        a moved child would clash with a sibling of the same name."""
        parent = self.queue_parent(q)
        old = self.queues[q]
        keep = [i for i in range(self.n_queues) if i != q]
        qmap = {o: n for n, o in enumerate(keep)}
        prefix = old + "/"
        cut = len(old.rsplit("/", 1)[-1]) + 1  # "a/b/" -> "a/": drop b's segment

        def moved(path: str) -> str:
            return path[:len(prefix) - cut] + path[len(prefix):] if path.startswith(prefix) else path

        new_parent = None if parent is None else qmap[parent]
        return replace(
            self,
            queues=tuple(moved(self.queues[i]) for i in keep),
            queue_weight=tuple(self.queue_weight[i] for i in keep),
            queue_guarantee=tuple(self.queue_guarantee[i] for i in keep),
            queue_max=tuple(self.queue_max[i] for i in keep),
            user_queue=tuple(new_parent if uq == q else (None if uq is None else qmap[uq]) for uq in self.user_queue),
        )

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        """The instance format, with every number an exact ``"p/q"`` string (round-trips exactly)."""
        out: dict[str, Any] = {
            "resources": list(self.resources),
            "servers": [{"name": n, "capacity": [fmt_exact(v) for v in self.capacity[s]]}
                        for s, n in enumerate(self.servers)],
        }
        if self.external:
            out["external"] = [{"name": n, "capacity": fmt_exact(self.external_capacity[k])}
                               for k, n in enumerate(self.external)]
        if self.queues:  # a flat instance has no queue fields (its stored JSON, ids and hashes are unchanged)
            queues = []
            for q, path in enumerate(self.queues):
                qd: dict[str, Any] = {"name": path}
                if self.queue_weight[q] != 1:
                    qd["weight"] = fmt_exact(self.queue_weight[q])
                if self.queue_guarantee[q] is not None:
                    qd["guarantee"] = [fmt_exact(v) for v in self.queue_guarantee[q]]
                if self.queue_max[q] is not None:  # absent: the instance serialises as before
                    qd["max"] = [fmt_exact(v) for v in self.queue_max[q]]
                queues.append(qd)
            out["queues"] = queues
        users = []
        for j, n in enumerate(self.users):
            u: dict[str, Any] = {"name": n, "demand": [fmt_exact(v) for v in self.demand[j]]}
            if self.external:
                u["external_demand"] = [fmt_exact(v) for v in self.external_demand[j]]
            if self.weight[j] != 1:
                u["weight"] = fmt_exact(self.weight[j])
            if self.eligible[j] != frozenset(range(self.n_servers)):
                u["eligible"] = [self.servers[s] for s in sorted(self.eligible[j])]
            if self.tasks[j] is not None:
                u["tasks"] = fmt_exact(self.tasks[j])
            sd = {self.servers[s]: [fmt_exact(v) for v in vec]
                  for (jj, s), vec in sorted(self.server_demand.items()) if jj == j}
            if sd:
                u["server_demand"] = sd
            if self.user_queue[j] is not None:
                u["queue"] = self.queues[self.user_queue[j]]
            if self.has_usage:  # an instance without a state serialises as before (stored ids unchanged)
                u["usage"] = [fmt_exact(v) for v in self.usage[j]]
            users.append(u)
        out["users"] = users
        return out

    def to_json(self) -> str:
        """The instance as JSON text (:meth:`to_dict`)."""
        return json.dumps(self.to_dict(), sort_keys=False)

    def __repr__(self) -> str:
        return f"<Environment {self.describe()}: users {', '.join(self.users)}>"

    def describe(self) -> str:
        """The shape, e.g. ``2 users x 1 server x 2 resources`` (:func:`describe_shape`)."""
        shape = describe_shape(self.n_users, self.n_servers, self.n_resources, self.n_external)
        return shape + (f" in {self.n_queues} queue{'' if self.n_queues == 1 else 's'}" if self.queues else "")


def describe_shape(users: int, servers: int, resources: int, external: int = 0) -> str:
    """The one spelling of a shape: ``2 users x 1 server x 2 resources + 1 external``."""
    def n(k: int, noun: str) -> str:
        return f"{k} {noun}{'' if k == 1 else 's'}"
    out = f"{n(users, 'user')} x {n(servers, 'server')} x {n(resources, 'resource')}"
    return out + (f" + {external} external" if external else "")
