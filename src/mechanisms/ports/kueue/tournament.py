"""Kueue's admission cycles: the fair-sharing tournament up the cohort tree (``runTournament``,
``entryComparer.less``), popped cycle after cycle (``scheduler.schedule``) -- the mechanism of ``kueue-drs``
(:mod:`mechanisms.ports.kueue.port`), with per-Cohort heaps, and its literal recomputation.

Source (read, not copied; our code follows the semantics): kubernetes-sigs/kueue @
ff69552e79ad21652c36caa97038382e55625cf7 (``mechanisms.ports.kueue.port.COMMIT``),
``pkg/scheduler/fair_sharing_iterator.go``: ``pop``, ``runTournament``, ``entryComparer.less``, ``computeDRS``;
``pkg/scheduler/scheduler.go``: ``schedule`` (one admission cycle), ``processEntry``;
``pkg/features/kube_features.go``: defaults ``FairSharingPrioritizeNonBorrowing`` on (beta, 0.17),
``PrioritySortingWithinCohort`` on, ``PrioritizePreemptorWorkloads`` off;
``apis/kueue/v1beta2/clusterqueue_types.go``: defaults ``queueingStrategy: BestEffortFIFO``,
``reclaimWithinCohort: Never``, ``withinClusterQueue: Never`` (no preemption).

The tournament (``runTournament``, ``entryComparer.less``)
---------------------------------------------------------
Each ClusterQueue nominates its head; each Cohort, bottom-up, keeps the best of its children's nominees by
``less`` and passes it up; the root's winner is popped.  ``less(a, b, cohort)`` compares the DRS values of the
cohort's CHILDREN that contain ``a`` and ``b``, each taken after simulating the admission of its own nominee
(``computeDRS``: the nominee's ASSIGNMENT usage, which is empty for a NoFit nominee -- a request above the root's
subtree quota on some resource gets no flavour -- so such a nominee enters without its request,
:func:`nominee_requests`), by: (1) not borrowing, on a resource the nominee requests, at that child
(``FairSharingPrioritizeNonBorrowing``, on by default; PR 10149), (2) ``CompareDRS``, (3) priority (none in
our model: all equal), (4) FIFO (declaration order).  Preemptor-first is off by default and there is no
preemption here.  Open upstream (issue 13320): step (1) penalises a workload whose own ClusterQueue is within
its quota when a sibling ClusterQueue makes their Cohort borrow; that is the pinned behaviour and ours.

The mechanism (admission cycles, ``scheduler.schedule``)
-------------------------------------------------------
Repeat cycles until no ClusterQueue has a pending workload: every ClusterQueue's head (its first pending
workload) is nominated; the fair-sharing iterator pops them one by one, re-running the tournament among the
heads not yet popped with the usage as it is (``computeDRS`` at each pop); a popped workload is admitted if
it fits (the pool: ``total usage + request <= c``; with unlimited borrowing Kueue's own check is the root's
subtree quota, which is at least ``c``), else it is set aside for good (usage only grows: it would never fit
later; BestEffortFIFO lets the next workload of its ClusterQueue be the head of the next cycle).  No
preemption (Kueue's default policies are ``Never``).  Not modelled here (it is in
:mod:`mechanisms.ports.kueue.scheduling`): a head that does not fit but whose ClusterQueue's nominal quota covers it is
Preempt mode upstream, and with ``reclaimWithinCohort: Never`` ``reserveCapacityForUnreclaimablePreempt`` reserves
its request for the rest of its cycle, which can delay another head of that cycle by one cycle.  The heads are nominated afresh each cycle, so a
ClusterQueue admits at most one workload per cycle.  One server (the pool), whole workloads, no placement
constraints, no external resources, no user weights, every user bounded (``floor(n_j)`` pods).  The instance's
state (``usage``) is not read: an allocation starts from an empty cluster.  Each pop costs
``O(depth x (R + log fanout))`` (per-Cohort heaps); :func:`kueue_drs_reference` is the literal recomputation.
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from fractions import Fraction
from typing import Any, Callable, Optional

from mechverify.allocation import Allocation
from mechverify.model import Environment

from .cohort import CohortTree, Policy, nominee_requests, requests_of, tree_of
from .drs import dominant_resource_share

__all__ = ["kueue_drs_fast", "kueue_drs_reference"]

_ZERO = Fraction(0)


# ---------------------------------------------------------------------- the tournament
class _Tournament:
    """One admission cycle's fair-sharing iterator: every Cohort keeps a heap of its children's nominees keyed
    at that child (stale entries are skipped by version), so a pop and an admission re-key only one path."""

    def __init__(self, tree: CohortTree, policy: Policy, usage: list, requests: list, heads: dict[int, int]):
        self.tree, self.policy, self.usage, self.requests = tree, policy, usage, requests
        N = tree.n_nodes
        self.entry: list[Optional[int]] = [None] * N
        self.version = [0] * N
        self.heap: list[list] = [[] for _ in range(N)]
        for cq, j in heads.items():
            self.entry[cq] = j
        for n in sorted(range(N), key=lambda n: -tree.depth[n]):  # children before parents
            if tree.kind[n] == "cohort":
                h = self.heap[n]
                for c in tree.children[n]:
                    if self.entry[c] is not None:
                        h.append((self._key(c), c, self.version[c]))
                heapq.heapify(h)
                self._settle(n)

    def _key(self, c: int) -> tuple:
        return self.policy.key(self.tree, self.usage, self.requests, c, self.entry[c])  # type: ignore[arg-type]

    def _settle(self, n: int) -> None:
        h = self.heap[n]
        while h and (h[0][2] != self.version[h[0][1]] or self.entry[h[0][1]] is None):
            heapq.heappop(h)
        self.entry[n] = self.entry[h[0][1]] if h else None

    def winner(self) -> Optional[int]:
        return self.entry[0]

    def remove(self, cq: int) -> None:
        """``cq``'s nominee is gone (admitted or set aside); the usage on its path may have changed."""
        tree = self.tree
        self.entry[cq] = None
        n = cq
        while n != 0:
            p = tree.parent[n]
            self.version[n] += 1
            if self.entry[n] is not None:
                heapq.heappush(self.heap[p], (self._key(n), n, self.version[n]))  # type: ignore[index]
            self._settle(p)  # type: ignore[arg-type]
            n = p  # type: ignore[assignment]


def _cycles(env: Environment, policy: Policy, usage: list, admit: bool,
            tournament: Callable[..., Any]) -> tuple[list[int], list[int], int]:
    """Run admission cycles (module docstring) on node ``usage`` (changed in place when ``admit``): returns the
    users in the order popped, the admitted users, the number of cycles."""
    tree = tree_of(env)
    R = env.n_resources
    cap = env.capacity[0]
    requests = requests_of(env)
    nominees = nominee_requests(tree, requests)
    total = list(usage[0])
    queues = {cq: deque(js) for cq, js in tree.members.items()}
    popped: list[int] = []
    admitted: list[int] = []
    cycles = 0
    while True:
        heads = {cq: dq.popleft() for cq, dq in queues.items() if dq}
        if not heads:
            break
        cycles += 1
        t = tournament(tree, policy, usage, nominees, heads)
        while True:
            j = t.winner()
            if j is None:
                break
            popped.append(j)
            cq = tree.user_cq[j]
            req = requests[j]
            if admit and all(total[r] + req[r] <= cap[r] for r in range(R)) and within_limits(tree, usage, cq, req):
                admitted.append(j)
                for r in range(R):
                    total[r] += req[r]
                n: Optional[int] = cq
                while n is not None:
                    for r in range(R):
                        usage[n][r] += req[r]
                    n = tree.parent[n]
            t.remove(cq)
    return popped, admitted, cycles


def within_limits(tree, usage: list, cq: int, req) -> bool:
    """The workload fits under the borrowing limit of its ClusterQueue and of every Cohort above it: no node
    with a declared max (``CohortTree.limit``: nominalQuota + borrowingLimit) would hold more than it
    (``fitsResourceQuota``; a workload that does not fit is set aside, like one the pool cannot take)."""
    n: Optional[int] = cq
    while n is not None:
        lim = tree.limit[n]
        if lim is not None and any(usage[n][r] + v > lim[r] for r, v in enumerate(req) if v > 0):
            return False
        n = tree.parent[n]
    return True


def _result(env: Environment, name: str, admitted: list[int], cycles: int) -> Allocation:
    ok = set(admitted)
    x = tuple((Fraction(math.floor(env.tasks[j])) if j in ok and env.tasks[j] is not None else _ZERO,)
              for j in range(env.n_users))
    return Allocation(env, x, name, True, info={"admitted": [env.users[j] for j in admitted],
                                                       "cycles": cycles})


def _admit(env: Environment, policy: Policy, name: str, tournament: type) -> Allocation:
    """The admission cycles from an empty cluster with ``tournament`` choosing each cycle's workload."""
    usage = [[_ZERO] * env.n_resources for _ in range(tree_of(env).n_nodes)]
    _, admitted, cycles = _cycles(env, policy, usage, True, tournament)
    return _result(env, name, admitted, cycles)


def kueue_drs_fast(env: Environment, policy: Policy = Policy(), name: str = "kueue-drs") -> Allocation:
    """The admission cycles with per-Cohort heaps (module docstring); the allocation is ``name``'s."""
    return _admit(env, policy, name, _Tournament)


class _LiteralTournament:
    """The same cycle as upstream writes it: at every pop, ``computeDRS`` for every remaining head (its
    ClusterQueue's and every ancestor's DRS after simulating its admission, keyed by the parent), then the
    recursive ``runTournament`` with ``less``.  The ClusterQueue-level step of the version before PR 10149 is
    taken from the nomination at the start of the cycle (``assignment.RequiresBorrowing``)."""

    def __init__(self, tree: CohortTree, policy: Policy, usage: list, requests: list, heads: dict[int, int]):
        self.tree, self.policy, self.usage, self.requests = tree, policy, usage, requests
        self.heads = dict(heads)
        self.nominated = {}
        for cq, j in heads.items():  # the nomination's RequiresBorrowing (ClusterQueue quota only)
            req = requests[j]
            self.nominated[j] = any(req[r] > 0 and usage[cq][r] + req[r] > tree.subtree[cq][r]
                                    for r in range(len(req)))

    def _compute(self) -> dict:
        tree, pol = self.tree, self.policy
        values: dict = {}
        for cq, j in self.heads.items():
            req = self.requests[j]
            sim = {n: [u + q for u, q in zip(self.usage[n], req)] for n in tree.path(cq)}
            for n in tree.path(cq):
                d = pol.drs(tree, n, sim[n])
                if pol.borrow_check == "level":
                    full = dominant_resource_share(tree.resources, sim[n], tree.subtree[n], tree.lendable, 1)
                    bit = full.borrowing_on(req)
                elif pol.borrow_check == "clusterqueue":
                    bit = self.nominated[j]
                else:
                    bit = False
                values[(tree.parent[n], j)] = (bit, d if pol.integer else d.key())
        return values

    def _less(self, values: dict, a: int, b: int, cohort: int) -> bool:
        ka, kb = values[(cohort, a)], values[(cohort, b)]
        if ka[0] != kb[0]:
            return not ka[0]
        if ka[1] != kb[1]:
            return ka[1] < kb[1]
        return a < b  # priority: all equal; FIFO: declaration order

    def _run(self, values: dict, cohort: int) -> Optional[int]:
        cands = []
        for c in self.tree.children[cohort]:
            if self.tree.kind[c] == "cohort":
                w = self._run(values, c)
                if w is not None:
                    cands.append(w)
            elif c in self.heads:
                cands.append(self.heads[c])
        if not cands:
            return None
        best = cands[0]
        for cur in cands[1:]:
            if self._less(values, cur, best, cohort):
                best = cur
        return best

    def winner(self) -> Optional[int]:
        if not self.heads:
            return None
        return self._run(self._compute(), 0)

    def remove(self, cq: int) -> None:
        del self.heads[cq]


def kueue_drs_reference(env: Environment, policy: Policy = Policy(), name: str = "kueue-drs") -> Allocation:
    """The admission cycles recomputed literally at every pop (:class:`_LiteralTournament`); slow, for tests."""
    return _admit(env, policy, name, _LiteralTournament)
