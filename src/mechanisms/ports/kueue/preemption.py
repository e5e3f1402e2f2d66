"""Kueue's fair-sharing PREEMPTION step on a cohort tree (``fairPreemptions``: which admitted workloads a pending
workload may evict), exactly (``Fraction``s), with the version before PR 6925 as a switch.  The scheduling loop
that calls it (queue heads, the sticky preemptor, requeues, the admission tournament, evictions) is
:mod:`mechanisms.ports.kueue.scheduling`.

Source (read, not copied; our code follows the semantics): kubernetes-sigs/kueue @
ff69552e79ad21652c36caa97038382e55625cf7 (:data:`mechanisms.ports.kueue.port.COMMIT`),

* ``pkg/scheduler/preemption/preemption.go``: ``fairPreemptions``, ``findCandidates``, ``cqIsBorrowing``,
  ``runFirstFsStrategy``, ``runSecondFsStrategy``, ``fsStrategyUnsatisfiable``, ``fillBackWorkloads``,
  ``workloadFits``, ``queueWithinNominalInResourcesNeedingPreemption``, ``parseStrategies`` (default: both
  strategies, S2-a then S2-b);
* ``pkg/scheduler/preemption/fairsharing/``: ``strategy.go`` (``LessThanOrEqualToFinalShare`` = S2-a:
  ``CompareDRS(preemptorNew, targetNew) <= 0``; ``LessThanInitialShare`` = S2-b: ``CompareDRS(preemptorNew,
  targetOld) < 0``), ``ordering.go`` (``TargetClusterQueueOrdering.nextTarget``: the pruning and the highest-DRS
  descent), ``target.go`` (``ComputeShares``, ``ComputeTargetShareAfterRemoval``), ``least_common_ancestor.go``;
* ``pkg/scheduler/preemption/common/ordering.go`` (``CandidatesOrdering``) and ``preemption_policy.go``
  (``SatisfiesPreemptionPolicy``);
* ``pkg/scheduler/flavorassigner/flavorassigner.go`` (``fitsResourceQuota``: Fit / Preempt / NoFit per
  resource; a Preempt whose oracle finds no candidate is still Preempt, ``preemptionMode.flavorAssignmentMode``);
  ``pkg/cache/scheduler/resource_node.go`` (``available``, ``potentialAvailable``); ``pkg/features/
  kube_features.go`` (defaults: ``FairSharingPreemptWithinNominal`` on).

The DRS, the tree's subtree quotas and the admission tournament are the port's (:mod:`mechanisms.ports.kueue.drs`,
:mod:`~mechanisms.ports.kueue.cohort`, :mod:`~mechanisms.ports.kueue.tournament`)
(``dominant_resource_share``, ``DRS``, ``CohortTree``, ``Policy``, its heap tournament): not a second DRS.

The model (every convention upstream leaves open is stated)
----------------------------------------------------------
* A :class:`Tree` is a cohort tree given directly (not an ``Environment``: Kueue's weights may be 0 and a Cohort
  may hold quota): node 0 is the root Cohort; a node without children is a ClusterQueue, the others Cohorts;
  each has its own nominal quota per resource and a fair-sharing weight (``Fraction``; 0 allowed, as upstream).
  One flavour per resource; no lending or borrowing limits (upstream's defaults), so every node's usage is lent
  up whole: a Cohort's usage is the sum of its children's, ``available(cq) = max(0, root subtree quota - root
  usage)`` and ``potentialAvailable(cq)`` is the root's subtree quota.  No TAS, one pod set, no partial admission.
* A :class:`Workload` has a ClusterQueue, a request per resource and a priority.  Its index is its creation
  order (its UID order too).  A preempted workload keeps its creation timestamp.
* ``admitted`` lists the admitted workloads in ADMISSION order (the quota-reservation time that
  ``CandidatesOrdering`` reads: "admitted more recently first").
* ``ChildCQs``/``ChildCohorts`` iterate in declaration order (upstream: the snapshot's order); with that order
  ``nextTarget``'s ``>=`` between Cohorts of equal DRS picks the LAST such Cohort, as upstream's loop does.
* The version before PR 6925 (``drs="pre-6925"``, :data:`PRE_6925`, issue 6774): the DRS was an ``int``
  (``pkg/cache/scheduler/fair_sharing.go`` @ the parent of efc4a1bc10eacdd8a86129ccae34eadf3dd75424):
  0 when not borrowing, ``MaxInt`` for weight 0 while borrowing, else ``max(1, floor(floor(b x 1000 / lendable)
  x 1000 / MilliValue(w)))``; the strategies and ``nextTarget`` compared those ints (pruning on ``drs == 0``)
  and so did the admission tournament (then priority, then FIFO; no non-borrowing step before PR 9484), and
  ``fsStrategyUnsatisfiable`` (PR 14490) did not exist.  Two weight-0 ClusterQueues then both have share
  ``MaxInt``: the tournament ties, FIFO admits the preempted workload back, and its preemptor preempts it again
  (the loop of upstream's integration test "should not cause an infinite preemption cycle").
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Iterator, Optional, Sequence

from .cohort import CohortTree, Policy
from .drs import DRS, MAX_INT64, dominant_resource_share, integer_drs

__all__ = ["PRE_6925", "Node", "Workload", "Config", "Tree", "Share", "node_share", "get_targets",
           "needs_preemption", "fits", "ADMISSION", "PIN", "NO_STICKY", "HISTORIC_6925"]

#: the parent of PR 6925's merge (efc4a1bc10): the int DRS of issue 6774
PRE_6925 = "efc4a1bc10eacdd8a86129ccae34eadf3dd75424^"

S2A = "LessThanOrEqualToFinalShare"
S2B = "LessThanInitialShare"
_ZERO = Fraction(0)


@dataclass(frozen=True)
class Node:
    """A Cohort or ClusterQueue: ``parent`` (None only for the root, node 0), own nominal ``quota`` per
    resource, fair-sharing ``weight``."""

    name: str
    parent: Optional[int]
    quota: tuple
    weight: Any = Fraction(1)


@dataclass(frozen=True)
class Workload:
    name: str
    cq: int
    request: tuple
    priority: int = 0


@dataclass(frozen=True)
class Config:
    """One Kueue configuration: the ClusterQueues' preemption policies (the same on every ClusterQueue), the
    Configuration's strategies, the queueing strategy and the version switches.

    * ``reclaim``: ``Never``, ``LowerPriority``, ``Any``; ``within``: ``Never``, ``LowerPriority``,
      ``LowerOrNewerEqualPriority`` (``overrides``: per ClusterQueue, :meth:`policy`); ``strategies``: one of
      upstream's three valid lists; ``within_nominal``: the feature gate ``FairSharingPreemptWithinNominal`` (on
      by default);
    * ``queueing``: the ClusterQueues' ``queueingStrategy``, ``BestEffortFIFO`` (upstream's default) or
      ``StrictFIFO`` (:mod:`mechanisms.ports.kueue.scheduling`);
    * ``drs``: ``"exact"`` (the pin) or ``"pre-6925"`` (the int DRS of issue 6774);
    * ``sticky_head``: PR 7157's preemptor workload, sticky at its ClusterQueue's head under BestEffortFIFO (on
      at the pin); ``equivalence_hashing``: ``SchedulingEquivalenceHashing`` (PR 9698; on by default at the pin);
    * ``requeue_timing``: not a Kueue setting but the model's timing convention for the requeue of inadmissible
      workloads an eviction triggers (upstream: a batch period after it, while cycles go on):
      ``"eager"`` (before the next cycle) or ``"idle"`` (only once no heap holds a workload: every cycle that can
      run before it has run) -- :mod:`mechanisms.ports.kueue.scheduling`.

    :data:`PIN`, :data:`NO_STICKY` and :data:`HISTORIC_6925` are the three versions the tests and the cycle
    search name."""

    reclaim: str = "Any"
    within: str = "Never"
    strategies: tuple = (S2A, S2B)
    within_nominal: bool = True
    queueing: str = "BestEffortFIFO"
    drs: str = "exact"
    sticky_head: bool = True
    equivalence_hashing: bool = True
    overrides: tuple = ()
    requeue_timing: str = "eager"

    def policy(self, tree: "Tree", cq: int) -> tuple[str, str]:
        """(reclaimWithinCohort, withinClusterQueue) of ClusterQueue ``cq``: ``overrides`` holds (ClusterQueue
        name, reclaim, within) triples for ClusterQueues whose policies differ from the others'."""
        for name, reclaim, within in self.overrides:
            if tree.names[cq] == name:
                return reclaim, within
        return self.reclaim, self.within

    def __post_init__(self) -> None:
        if self.strategies not in ((S2A,), (S2B,), (S2A, S2B)):
            raise ValueError(f"strategies {self.strategies}: upstream accepts only [S2-a], [S2-b], [S2-a, S2-b]")
        if self.queueing not in ("BestEffortFIFO", "StrictFIFO"):
            raise ValueError(f"queueing {self.queueing!r}: BestEffortFIFO or StrictFIFO")
        if self.drs not in ("exact", "pre-6925"):
            raise ValueError(f"drs {self.drs!r}: exact or pre-6925")
        if self.requeue_timing not in ("eager", "idle"):
            raise ValueError(f"requeue_timing {self.requeue_timing!r}: eager or idle")

    def version(self, **switches: Any) -> "Config":
        """This configuration's policies at another version (:data:`PIN`, :data:`NO_STICKY`,
        :data:`HISTORIC_6925`)."""
        return replace(self, **switches)


#: the pin's code paths
PIN: dict = {"drs": "exact", "sticky_head": True, "equivalence_hashing": True}
#: the pin with PR 7157's sticky preemptor head taken out (a counterfactual at the pin, not a historic release:
#: everything else, later PRs included, is the pin's) -- the loop PR 7157 removed (kueue 6929, 7101, 6947)
NO_STICKY: dict = {"drs": "exact", "sticky_head": False, "equivalence_hashing": True}
#: before PR 6925 (September 2025): the int DRS, and neither PR 7157's sticky head (October 2025) nor PR 9698's
#: equivalence hashing (March 2026) existed yet
HISTORIC_6925: dict = {"drs": "pre-6925", "sticky_head": False, "equivalence_hashing": False}


class Tree(CohortTree):
    """A cohort tree given node by node, with the attributes the port's ``CohortTree`` has (so its DRS, policy
    keys and tournament run on it), plus the workloads."""

    def __init__(self, nodes: Sequence[Node], resources: Sequence[str], workloads: Sequence[Workload]) -> None:
        N, R = len(nodes), len(resources)
        if nodes[0].parent is not None or any(n.parent is None or not 0 <= n.parent < i
                                              for i, n in enumerate(nodes) if i):
            raise ValueError("node 0 is the root; every other node's parent comes before it")
        self.nodes = tuple(nodes)
        self.names = [n.name for n in nodes]
        self.parent = [n.parent for n in nodes]
        self.children: list[list[int]] = [[] for _ in range(N)]
        for i in range(1, N):
            self.children[nodes[i].parent].append(i)  # type: ignore[index]
        self.kind = ["cohort" if (self.children[i] or i == 0) else "cq" for i in range(N)]
        self.quota = [tuple(Fraction(v) for v in n.quota) for n in nodes]
        self.weight = [Fraction(n.weight) for n in nodes]
        self.depth = [0] * N
        for i in range(1, N):
            self.depth[i] = self.depth[self.parent[i]] + 1  # type: ignore[index]
        sub = [list(q) for q in self.quota]
        for i in range(N - 1, 0, -1):
            p = self.parent[i]
            sub[p] = [a + b for a, b in zip(sub[p], sub[i])]  # type: ignore[index]
        self.subtree = [tuple(s) for s in sub]
        self.lendable = self.subtree[0]
        self.resources = tuple(resources)
        self.n_nodes = N
        self.queue = [None] * N
        self.workloads = tuple(workloads)
        for w in workloads:
            if self.kind[w.cq] != "cq" or len(w.request) != R:
                raise ValueError(f"workload {w.name}: not in a ClusterQueue or wrong request size")
        self.user_cq = [w.cq for w in workloads]
        self.members = {n: [j for j in range(len(workloads)) if workloads[j].cq == n]
                        for n in range(N) if self.kind[n] == "cq"}
        self.cqs = [n for n in range(N) if self.kind[n] == "cq"]
        self.requests = [tuple(Fraction(v) for v in w.request) for w in workloads]
        self.priority = [w.priority for w in workloads]
        #: ``GetQueueOrderTimestamp`` per workload where it is not the creation order (``None``: creation order
        #: everywhere, upstream's with ``PrioritySortingWithinCohort`` on); a counterfactual ordering sets it
        self.queue_order: Optional[Sequence[Any]] = None

    def queue_ts(self, j: int) -> Any:
        """Workload ``j``'s queue-order timestamp (``GetQueueOrderTimestamp``): its creation order unless
        :attr:`queue_order` says otherwise."""
        return j if self.queue_order is None else self.queue_order[j]

    def ancestors(self, n: int) -> list[int]:
        """``PathParentToRoot``: the Cohorts above ``n``, nearest first."""
        out = []
        p = self.parent[n]
        while p is not None:
            out.append(p)
            p = self.parent[p]
        return out

    def usage(self, admitted: Sequence[int]) -> list[list[Fraction]]:
        R = len(self.resources)
        u = [[_ZERO] * R for _ in range(self.n_nodes)]
        for j in admitted:
            self.add(u, j, 1)
        return u

    def add(self, usage: list, j: int, sign: int) -> None:
        """Add (``sign`` 1) or remove (-1) workload ``j``'s usage on its path up to the root."""
        n: Optional[int] = self.workloads[j].cq
        req = self.requests[j]
        while n is not None:
            row = usage[n]
            for r in range(len(req)):
                row[r] += sign * req[r]
            n = self.parent[n]


# ---------------------------------------------------------------------- shares
@dataclass(frozen=True)
class Share:
    """A node's share as the preemption code compares it: ``key`` orders like ``CompareDRS`` (exact: the port's
    ``DRS.key``; pre-6925: the int), ``borrowing`` is ``IsBorrowing`` (pre-6925: ``drs != 0``), ``inf`` is a
    weight-0 borrower (``PreciseWeightedShare`` = +Inf)."""

    key: Any
    borrowing: bool
    inf: bool = False
    drs: Optional[DRS] = None

    def cmp(self, other: "Share") -> int:
        return -1 if self.key < other.key else (1 if self.key > other.key else 0)


def _pre6925_value(tree: Tree, n: int, usage: Sequence[Any], request: Optional[Sequence[Any]]) -> int:
    """The int DRS between PR 6617 and PR 6925 (module docstring)."""
    v, _ = integer_drs(tree.resources, usage, tree.subtree[n], tree.lendable, tree.weight[n], request, n != 0)
    if v == 0 and not any((usage[r] + (request[r] if request else 0)) > tree.subtree[n][r]
                          for r in range(len(usage))):
        return 0  # not borrowing (integer_drs returns 0 here too)
    if n == 0:
        return 0
    if tree.weight[n] == 0:
        return MAX_INT64
    return max(1, v)


def node_share(tree: Tree, cfg: Config, usage: Sequence[Sequence[Any]], n: int,
               request: Optional[Sequence[Any]] = None) -> Share:
    """The share of node ``n`` when the nodes hold ``usage`` (plus ``request`` on ``n``)."""
    if cfg.drs == "pre-6925":
        v = _pre6925_value(tree, n, usage[n], request)
        return Share(v, v != 0)
    d = dominant_resource_share(tree.resources, usage[n], tree.subtree[n], tree.lendable, tree.weight[n],
                                request, n != 0)
    return Share(d.key(), d.borrowing, d.zero_weight_borrows, d)


class _Pre6925Policy(Policy):
    """The admission tournament before PR 6925: the int DRS, no non-borrowing step; ties -> priority -> FIFO."""

    def drs(self, tree, n, usage, request=None):  # type: ignore[override]
        return _pre6925_value(tree, n, usage, request)


class _PriorityKey(Policy):
    """The port's comparison with upstream's step (3), priority (higher first), before FIFO."""

    def key(self, tree, usage, requests, n, j):  # type: ignore[override]
        k = super().key(tree, usage, requests, n, j)
        return k[:-1] + (-tree.priority[j], j)


class _Pre6925PriorityKey(_Pre6925Policy, _PriorityKey):
    pass


ADMISSION = {"exact": _PriorityKey(), "pre-6925": _Pre6925PriorityKey(integer=True, borrow_check=None)}


# ---------------------------------------------------------------------- target selection
def _satisfies(policy: str, tree: Tree, preemptor: int, cand: int) -> bool:
    """``SatisfiesPreemptionPolicy``; the queue-order timestamp is the creation order."""
    pp, cp = tree.priority[preemptor], tree.priority[cand]
    if policy == "LowerPriority":
        return pp > cp
    if policy == "LowerOrNewerEqualPriority":
        return pp > cp or (pp == cp and tree.queue_ts(preemptor) < tree.queue_ts(cand))
    return policy == "Any"


def _available(tree: Tree, usage: Sequence[Sequence[Any]], r: int) -> Any:
    return max(_ZERO, tree.lendable[r] - usage[0][r])


def fits(tree: Tree, usage: Sequence[Sequence[Any]], j: int) -> bool:
    """``workloadFits`` / ``ClusterQueueSnapshot.Fits`` without limits: every requested amount is available."""
    return all(v <= _available(tree, usage, r) for r, v in enumerate(tree.requests[j]) if v > 0)


class _Ordering:
    """``TargetClusterQueueOrdering``: the candidates per ClusterQueue (in ``CandidatesOrdering`` order) and the
    pruned nodes; :meth:`targets` is ``Iter`` (the caller pops or drops between two yields)."""

    def __init__(self, tree: Tree, cfg: Config, usage: list, preemptor: int, cands: list[int], order: dict):
        self.tree, self.cfg, self.usage, self.order = tree, cfg, usage, order
        self.pcq = tree.workloads[preemptor].cq
        self.p_anc = set(tree.ancestors(self.pcq))
        self.lists: dict[int, list[int]] = {}
        for c in cands:
            self.lists.setdefault(tree.workloads[c].cq, []).append(c)
        self.pruned: set[int] = set()

    def has(self, cq: int) -> bool:
        return bool(self.lists.get(cq))

    def pop(self, cq: int) -> int:
        return self.lists[cq].pop(0)

    def drop(self, cq: int) -> None:
        self.pruned.add(cq)

    def targets(self) -> Iterator[int]:
        while 0 not in self.pruned:
            t = self._next(0)
            if t is not None:
                yield t

    def _next(self, cohort: int) -> Optional[int]:
        tree, cfg, usage = self.tree, self.cfg, self.usage
        best_cq, best_cq_s = None, None
        best_co, best_co_s = None, None
        for c in tree.children[cohort]:
            if c in self.pruned:
                continue
            s = node_share(tree, cfg, usage, c)
            if tree.kind[c] == "cq":
                if (not s.borrowing and c != self.pcq) or not self.has(c):
                    self.pruned.add(c)
                elif best_cq is not None and s.cmp(best_cq_s) == 0:
                    if self.order[self.lists[c][0]] < self.order[self.lists[best_cq][0]]:
                        best_cq = c
                elif best_cq is None or s.cmp(best_cq_s) > 0:
                    best_cq, best_cq_s = c, s
            else:
                if not s.borrowing and c not in self.p_anc:
                    self.pruned.add(c)
                elif best_co is None or s.cmp(best_co_s) >= 0:
                    best_co, best_co_s = c, s
        if best_co is None and best_cq is None:
            self.pruned.add(cohort)
            return None
        if best_co is not None and (best_cq is None or best_co_s.cmp(best_cq_s) >= 0):
            return self._next(best_co)
        return best_cq

    def almost_lcas(self, tcq: int) -> tuple[int, int]:
        """(preemptor's, target's) almost-LCA: the children of their lowest common Cohort on their paths."""
        tree = self.tree
        lca = next(a for a in tree.ancestors(tcq) if a in self.p_anc)

        def below(cq: int) -> int:
            n = cq
            while tree.parent[n] != lca:
                n = tree.parent[n]  # type: ignore[assignment]
            return n
        return below(self.pcq), below(tcq)


def _candidates_order(tree: Tree, preemptor: int, cands: list[int], admitted: Sequence[int]) -> list[int]:
    """``CandidatesOrdering``: other ClusterQueues first, lower priority, admitted more recently, UID."""
    pcq = tree.workloads[preemptor].cq
    when = {j: t for t, j in enumerate(admitted)}
    return sorted(cands, key=lambda c: (tree.workloads[c].cq == pcq, tree.priority[c], -when[c], c))


def needs_preemption(tree: Tree, usage: Sequence[Sequence[Any]], j: int) -> Optional[set]:
    """The resources in Preempt mode for workload ``j`` (``fitsResourceQuota``): requested more than available;
    ``None`` if some request exceeds the root's subtree quota (NoFit); an empty set: it fits."""
    need = set()
    for r, v in enumerate(tree.requests[j]):
        if v > tree.lendable[r]:
            return None
        if v > 0 and v > _available(tree, usage, r):
            need.add(r)
    return need


def get_targets(tree: Tree, cfg: Config, admitted: Sequence[int], preemptor: int,
                usage: Optional[list] = None) -> list[int]:
    """``fairPreemptions`` for ``preemptor`` (pending) in the state ``admitted`` (admission order), on ``usage``
    (default: the state's): the targets (in upstream's order, after ``fillBackWorkloads``) or ``[]`` (nil)."""
    usage = [list(row) for row in (usage if usage is not None else tree.usage(admitted))]
    need = needs_preemption(tree, usage, preemptor)
    if not need:
        return []
    pcq = tree.workloads[preemptor].cq
    reclaim, within = cfg.policy(tree, pcq)  # findCandidates reads the preemptor's ClusterQueue's policies
    uses = lambda c: any(tree.requests[c][r] > 0 for r in need)  # noqa: E731  WorkloadUsesResources
    cands: list[int] = []
    if within != "Never":
        cands += [c for c in admitted if tree.workloads[c].cq == pcq and _satisfies(within, tree, preemptor, c)
                  and uses(c)]
    if reclaim != "Never":
        for cq in tree.cqs:
            if cq == pcq or not any(usage[cq][r] > tree.quota[cq][r] for r in need):  # cqIsBorrowing
                continue
            cands += [c for c in admitted if tree.workloads[c].cq == cq
                      and _satisfies(reclaim, tree, preemptor, c) and uses(c)]
    if not cands:
        return []
    cands = _candidates_order(tree, preemptor, cands, admitted)
    order = {c: i for i, c in enumerate(cands)}
    tree.add(usage, preemptor, 1)  # SimulateUsageAddition: the DRS values include the incoming workload

    def take(c: int) -> bool:
        """``c`` becomes a target (its usage removed); whether the preemptor now fits
        (workloadFitsForFairSharing)."""
        tree.add(usage, c, -1)
        targets.append(c)
        tree.add(usage, preemptor, -1)
        ok = fits(tree, usage, preemptor)
        tree.add(usage, preemptor, 1)
        return ok

    within_nominal = cfg.within_nominal and not any(usage[pcq][r] > tree.quota[pcq][r] for r in need)
    targets: list[int] = []
    retry: list[int] = []
    found = False
    ordering = _Ordering(tree, cfg, usage, preemptor, cands, order)
    for tcq in ordering.targets():  # runFirstFsStrategy
        if tcq == pcq or within_nominal:
            if take(ordering.pop(tcq)):
                found = True
                break
            continue
        a_p, a_t = ordering.almost_lcas(tcq)
        p_new, t_old = node_share(tree, cfg, usage, a_p), node_share(tree, cfg, usage, a_t)
        if cfg.drs == "exact" and p_new.inf and not t_old.inf:  # fsStrategyUnsatisfiable (PR 14490)
            while ordering.has(tcq):
                retry.append(ordering.pop(tcq))
            continue
        while ordering.has(tcq):
            c = ordering.pop(tcq)
            tree.add(usage, c, -1)
            t_new = node_share(tree, cfg, usage, a_t)
            tree.add(usage, c, 1)
            passed = p_new.cmp(t_new) <= 0 if cfg.strategies[0] == S2A else p_new.cmp(t_old) < 0
            if passed:
                found = take(c)
                break
            retry.append(c)
        if found:
            break
    if not found and len(cfg.strategies) > 1:  # runSecondFsStrategy: S2-b, one candidate per ClusterQueue
        ordering = _Ordering(tree, cfg, usage, preemptor, retry, order)
        for tcq in ordering.targets():
            a_p, a_t = ordering.almost_lcas(tcq)
            p_new, t_old = node_share(tree, cfg, usage, a_p), node_share(tree, cfg, usage, a_t)
            c = ordering.pop(tcq)
            if p_new.cmp(t_old) < 0 and take(c):
                found = True
                break
            ordering.drop(tcq)
    tree.add(usage, preemptor, -1)
    if not found:
        return []
    for i in range(len(targets) - 2, -1, -1):  # fillBackWorkloads (allowBorrowing: true)
        tree.add(usage, targets[i], 1)
        if fits(tree, usage, preemptor):
            targets[i] = targets[-1]
            targets.pop()
        else:
            tree.add(usage, targets[i], -1)
    return targets
