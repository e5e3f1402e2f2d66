"""A bounded search for preemption LOOPS in Kueue's fair sharing on cohort trees (kubernetes-sigs/kueue @
ff69552e79ad21652c36caa97038382e55625cf7, ``site/content/en/docs/concepts/fair_sharing.md``, "Limitations":
"A proof that a chain of preemptions won't cause a cycle is needed for the Hierarchical case").

The dynamics are :mod:`mechanisms.ports.kueue.scheduling`'s (Kueue's queue manager and scheduling cycle: heaps,
inadmissible workloads, the sticky preemptor head, requeue reasons, the admission tournament, evictions).  A LOOP
is a repeated STATE of the whole scheduler (admitted workloads in admission order, every pending workload's place,
the preemptor workloads, the bulk-moved equivalence classes) with something done in between; the dynamics are
deterministic, so a repeated state repeats forever.  Loops are classified (:func:`mechanisms.ports.kueue.scheduling.
classify`): a CHAIN (every preemptor of the loop is admitted in it: preemptions answer preemptions, the case of
upstream's proof) or STARVED (some preemptor never is).  Every configuration is run from the empty cluster twice:
all workloads created at once, and created one at a time (each after the previous has settled).

The space (``space``):

* cohort trees with 1..``max_queues`` nodes below the root (Cohorts and ClusterQueues; leaves are
  ClusterQueues), up to isomorphism (children are an unordered multiset: one canonical order per shape);
* 1 or 2 resources; every node's own quota (the root's too) in {0, 1, 2} per resource; every non-root node's
  weight in {0, 1/2, 1, 2};
* 1..``max_workloads`` workloads, each in one ClusterQueue, request in {1, 2, 3} per resource (with 2
  resources: {0, 1, 2, 3}, not all 0), priority in {0, 1}; their index is their creation order;
* the policies: reclaimWithinCohort in {Any, LowerPriority}, withinClusterQueue in {Never, LowerPriority,
  LowerOrNewerEqualPriority}, the three valid strategy lists, FairSharingPreemptWithinNominal on/off
  (``--policies default``: upstream's defaults with reclaimWithinCohort Any); BestEffortFIFO
  (``--queueing StrictFIFO`` for the other); the version (``--version``): the pin, the pin without PR 7157's
  sticky head (``no-sticky``), or before PR 6925 (``pre-6925``).

A LAYER is (tree shape, number of resources, number of workloads).  Layers run smallest first; a layer whose
size is at most ``per_layer`` is enumerated EXHAUSTIVELY, a larger one is SAMPLED (``per_layer``
configurations, uniformly, seeded by the layer: deterministic).  The decision is the generic layered
enumeration's (``mechverify.enumeration.layered``, shared with the search over executions); the SAMPLED draws
stay this module's own (:meth:`Layer.sample`: coordinates with replacement, a generator seeded by the layer's
``repr``), since ``layered``'s default draws (distinct items, seeded by text) would run other configurations
than the ones every reported sampled layer ran.  Loops are found by the generic repeated-state detector
(``mechverify.cycles``) in :func:`mechanisms.ports.kueue.scheduling.run`.  Exhaustive enumeration skips a configuration
whose sibling ClusterQueues' (quota, weight) pairs are not sorted: permuting sibling ClusterQueues with their
workloads is a symmetry of the model (target candidates, the tournament and its ties are ordered by workload,
never by a ClusterQueue's position; only Cohorts' positions break ties, and Cohorts are never permuted).  The
budget stops the search between two configurations; the report lists every layer as EXHAUSTIVE or SAMPLED (n),
with its loops by kind, and says where the budget cut.  "No chain" is a claim about exhaustive layers only.

Each kind's smallest loop is then minimised (:func:`minimise`): coordinates are lowered one at a time (smaller
quotas, weights, requests and priorities, policies towards the defaults) while the loop keeps its kind.

Run: ``python -m verifier.preemption_cycles --max-queues 4 --max-workloads 6 --budget 600``.
"""
from __future__ import annotations

import argparse
import itertools
import json
import random
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterator, Optional, Sequence

from mechverify.deadline import now
from mechverify.enumeration import LayerDraw, layered

from .preemption import HISTORIC_6925, NO_STICKY, PIN, S2A, S2B, Config, Node, Tree, Workload
from .scheduling import Outcome, run

__all__ = ["shapes", "Layer", "layers", "draws", "Finding", "search", "minimise", "describe", "summary", "two_cycle_query",
           "POLICIES", "DEFAULT_POLICY", "VERSIONS", "main"]

#: ``--version``: the code paths each name selects (:mod:`mechanisms.ports.kueue.preemption`)
VERSIONS = {"pin": PIN, "no-sticky": NO_STICKY, "pre-6925": HISTORIC_6925}

QUOTAS = (0, 1, 2)
WEIGHTS = (Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2))
PRIORITIES = (0, 1)
STRATEGIES = ((S2A, S2B), (S2A,), (S2B,))
POLICIES = tuple(Config(reclaim=rc, within=wi, strategies=st, within_nominal=wn)
                 for rc in ("Any", "LowerPriority")
                 for wi in ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
                 for st in STRATEGIES for wn in (True, False))
#: ``--policies default``: reclaimWithinCohort Any (fair sharing needs a policy other than Never), the rest
#: upstream's defaults (withinClusterQueue Never, both strategies, FairSharingPreemptWithinNominal on)
DEFAULT_POLICY = (Config(),)


# ---------------------------------------------------------------------- tree shapes up to isomorphism
def _forests(n: int) -> list[tuple]:
    """Canonical forests of ``n`` nodes: sorted tuples of trees; a tree is the sorted tuple of its children."""
    if n == 0:
        return [()]
    out = set()
    for first in range(1, n + 1):  # the size of one tree
        for t in _trees(first):
            for rest in _forests(n - first):
                out.add(tuple(sorted((t,) + rest)))
    return sorted(out)


def _trees(n: int) -> list[tuple]:
    return sorted(set(_forests(n - 1)))


def shapes(max_queues: int) -> list[tuple]:
    """Every root's forest with 1..``max_queues`` nodes, up to isomorphism, smallest first."""
    return [f for n in range(1, max_queues + 1) for f in _forests(n)]


def _flatten(forest: tuple) -> list[Optional[int]]:
    """Parents of the nodes in preorder (node 0 the root)."""
    parents: list[Optional[int]] = [None]

    def walk(children: tuple, p: int) -> None:
        for c in children:
            parents.append(p)
            walk(c, len(parents) - 1)
    walk(forest, 0)
    return parents


def shape_text(forest: tuple) -> str:
    def t(c: tuple) -> str:
        return "cq" if not c else "cohort(" + ", ".join(t(x) for x in c) + ")"
    return "root(" + ", ".join(t(c) for c in forest) + ")"


# ---------------------------------------------------------------------- layers
@dataclass(frozen=True)
class Layer:
    shape: tuple
    n_resources: int
    n_workloads: int
    policies: tuple = POLICIES
    priorities: tuple = PRIORITIES
    weights: tuple = WEIGHTS

    @property
    def parents(self) -> list[Optional[int]]:
        return _flatten(self.shape)

    def cqs(self) -> list[int]:
        ps = self.parents
        return [i for i in range(1, len(ps)) if i not in ps]

    def requests(self) -> list[tuple]:
        vals = (1, 2, 3) if self.n_resources == 1 else (0, 1, 2, 3)
        return [r for r in itertools.product(vals, repeat=self.n_resources) if any(r)]

    def dims(self) -> list[int]:
        """The size of every coordinate of a configuration."""
        N, R, J = len(self.parents), self.n_resources, self.n_workloads
        return ([len(QUOTAS)] * (N * R) + [len(self.weights)] * (N - 1)
                + [len(self.cqs()) * len(self.requests()) * len(self.priorities)] * J + [len(self.policies)])

    def size(self) -> int:
        s = 1
        for d in self.dims():
            s *= d
        return s

    def build(self, coords: Sequence[int]) -> tuple[Tree, Config]:
        ps, R, J = self.parents, self.n_resources, self.n_workloads
        N = len(ps)
        it = iter(coords)
        quotas = [tuple(QUOTAS[next(it)] for _ in range(R)) for _ in range(N)]
        weights = [Fraction(1)] + [self.weights[next(it)] for _ in range(N - 1)]
        cqs, reqs = self.cqs(), self.requests()
        wls = []
        for j in range(J):
            c = next(it)
            c, pr = divmod(c, len(self.priorities))
            c, rq = divmod(c, len(reqs))
            wls.append(Workload(f"w{j}", cqs[c], reqs[rq], self.priorities[pr]))
        cfg = self.policies[next(it)]
        nodes = [Node("root" if i == 0 else f"n{i}", ps[i], quotas[i], weights[i]) for i in range(N)]
        return Tree(nodes, [f"r{r}" for r in range(R)], wls), cfg

    def canonical(self, coords: Sequence[int]) -> bool:
        """Keep one configuration per permutation of sibling ClusterQueues (module docstring): the one whose
        sibling ClusterQueues' (quota, weight) coordinates are sorted."""
        ps, R = self.parents, self.n_resources
        N = len(ps)
        leaf_sig = {}
        for i in range(1, N):
            if i in ps:
                continue
            q = tuple(coords[i * R:(i + 1) * R])
            w = coords[N * R + i - 1]
            leaf_sig[i] = (q, w)
        for p in set(ps[1:]):
            sib = [i for i in range(1, N) if ps[i] == p and i in leaf_sig]
            sigs = [leaf_sig[i] for i in sib]
            if sigs != sorted(sigs):
                return False
        return True

    def exhaustive(self) -> Iterator[Sequence[int]]:
        """Every canonical configuration (:meth:`canonical`), in the order of the coordinates."""
        return (c for c in itertools.product(*(range(d) for d in self.dims())) if self.canonical(c))

    def sample(self, per_layer: int) -> list[Sequence[int]]:
        """``per_layer`` configurations drawn with replacement by a generator seeded by the layer (the draws
        every reported sampled layer was run with)."""
        dims = self.dims()
        rng = random.Random(repr((self.shape, self.n_resources, self.n_workloads, dims)))
        return [tuple(rng.randrange(d) for d in dims) for _ in range(per_layer)]

    def configurations(self, per_layer: int) -> tuple[bool, Iterator[Sequence[int]]]:
        """(exhaustive?, the coordinates to run): :func:`draws`' decision for this one layer."""
        d = next(draws([self], per_layer))
        return d.exhaustive, iter(d.items)


def draws(layers: Sequence[Layer], per_layer: int) -> Iterator[LayerDraw]:
    """The layers as ``mechverify.enumeration.layered`` draws them (the engine the trace search shares): a layer
    of at most ``per_layer`` configurations EXHAUSTIVE (the canonical ones, walked lazily), a larger one
    SAMPLED by :meth:`Layer.sample` (Kueue's own draws, kept: see the module docstring)."""
    return layered(((L, L.exhaustive(), L.size()) for L in layers), per_layer,
                   sample=lambda L, items, size, k: L.sample(k))


def layers(max_queues: int, max_workloads: int, resources: Sequence[int] = (1, 2), policies: tuple = POLICIES,
           priorities: tuple = PRIORITIES, weights: tuple = WEIGHTS) -> list[Layer]:
    out = [Layer(s, r, j, policies, priorities, weights) for s in shapes(max_queues) for r in resources
           for j in range(1, max_workloads + 1)]
    return sorted(out, key=lambda L: (L.n_workloads + len(L.parents), L.n_resources, L.n_workloads, L.shape))


# ---------------------------------------------------------------------- the search
@dataclass(frozen=True)
class Variant:
    """What every configuration of a search shares: the version (:data:`VERSIONS`) and the queueing strategy."""

    version: str = "pin"
    queueing: str = "BestEffortFIFO"

    def apply(self, cfg: Config) -> Config:
        return cfg.version(queueing=self.queueing, **VERSIONS[self.version])


@dataclass
class Finding:
    layer: Layer
    coords: tuple
    arrivals: bool
    outcome: Outcome
    variant: Variant = Variant()

    @property
    def length(self) -> int:
        return len(self.outcome.loop)

    @property
    def kind(self) -> str:
        return self.outcome.loop_kind or "none"

    def build(self) -> tuple[Tree, Config]:
        tree, cfg = self.layer.build(self.coords)
        return tree, self.variant.apply(cfg)


@dataclass
class LayerReport:
    layer: Layer
    exhaustive: bool
    configurations: int
    loops: dict = field(default_factory=dict)  # kind -> count
    finished: bool = True


@dataclass
class Report:
    configurations: int = 0
    runs: int = 0
    seconds: float = 0.0
    layers: list = field(default_factory=list)  # LayerReport, in the order run
    findings: list = field(default_factory=list)
    limits: int = 0

    @property
    def layer_cut(self) -> Optional[LayerReport]:
        return next((lr for lr in self.layers if not lr.finished), None)


def _run_both(tree: Tree, cfg: Config, max_steps: int) -> Iterator[tuple[bool, Outcome]]:
    for arrivals in (False, True):
        yield arrivals, run(tree, cfg, arrivals=arrivals, max_steps=max_steps)


def search(max_queues: int = 4, max_workloads: int = 6, budget: Optional[float] = 60.0, per_layer: int = 2000,
           variant: Variant = Variant(), resources: Sequence[int] = (1, 2), stop_at_first: bool = False,
           max_steps: int = 500, space: Optional[dict] = None) -> Report:
    """Run every layer (module docstring) within ``budget`` seconds; the findings are kept smallest first.
    ``space`` narrows the value sets: ``policies``, ``priorities``, ``weights``."""
    space = space or {}
    deadline = None if budget is None else now() + budget
    rep = Report()
    t0 = time.monotonic()
    for draw in draws(layers(max_queues, max_workloads, resources, space.get("policies", POLICIES),
                             space.get("priorities", PRIORITIES), space.get("weights", WEIGHTS)), per_layer):
        L = draw.label
        lr = LayerReport(L, draw.exhaustive, 0)
        rep.layers.append(lr)
        for coords in draw.items:
            if deadline is not None and now() >= deadline:
                lr.finished = False
                break
            tree, cfg = L.build(coords)
            cfg = variant.apply(cfg)
            lr.configurations += 1
            rep.configurations += 1
            for arrivals, out in _run_both(tree, cfg, max_steps):
                rep.runs += 1
                rep.limits += out.kind == "limit"
                if out.kind == "loop":
                    f = Finding(L, tuple(coords), arrivals, out, variant)
                    rep.findings.append(f)
                    lr.loops[f.kind] = lr.loops.get(f.kind, 0) + 1
                    if stop_at_first:
                        lr.finished = False
                        rep.seconds = time.monotonic() - t0
                        return rep
        if not lr.finished:
            break
    rep.seconds = time.monotonic() - t0
    rep.findings.sort(key=_smallest)
    return rep


def _smallest(f: Finding) -> tuple:
    return (len(f.layer.parents) + f.layer.n_workloads, f.layer.n_resources, f.length, f.coords)


def minimise(f: Finding, max_steps: int = 500) -> Finding:
    """Lower the coordinates of ``f`` one at a time (each to its smallest value that keeps a loop of the same
    kind, for the same creation mode), until no coordinate can be lowered: smaller quotas, weights (0 first),
    requests, priorities and ClusterQueues, and policies towards :data:`POLICIES`' first (the defaults)."""
    kind, coords = f.kind, list(f.coords)
    changed = True
    while changed:
        changed = False
        for i in range(len(coords)):
            for v in range(coords[i]):
                trial = coords[:i] + [v] + coords[i + 1:]
                tree, cfg = f.layer.build(trial)
                out = run(tree, f.variant.apply(cfg), arrivals=f.arrivals, max_steps=max_steps)
                if out.kind == "loop" and out.loop_kind == kind:
                    coords, changed = trial, True
                    f = Finding(f.layer, tuple(coords), f.arrivals, out, f.variant)
                    break
    return f


def describe(f: Finding) -> dict:
    """A finding as plain data: the tree, the workloads, the policy, every cycle from the empty cluster (heads in
    processing order with their nomination and outcome), and where the loop starts."""
    tree, cfg = f.build()
    nm = lambda j: tree.workloads[j].name  # noqa: E731
    out = f.outcome
    start = len(out.trace) - len(out.loop)
    return {
        "shape": shape_text(f.layer.shape),
        "nodes": [{"name": n.name, "parent": None if n.parent is None else tree.nodes[n.parent].name,
                   "kind": tree.kind[i], "quota": [str(q) for q in n.quota], "weight": str(n.weight)}
                  for i, n in enumerate(tree.nodes)],
        "workloads": [{"name": w.name, "cq": tree.nodes[w.cq].name, "request": [str(r) for r in w.request],
                       "priority": w.priority} for w in tree.workloads],
        "policy": {"reclaimWithinCohort": cfg.reclaim, "withinClusterQueue": cfg.within,
                   "strategies": list(cfg.strategies), "FairSharingPreemptWithinNominal": cfg.within_nominal,
                   "queueingStrategy": cfg.queueing, "version": f.variant.version},
        "created": "one at a time" if f.arrivals else "all at once",
        "kind": f.kind,
        "loop_starts_at_cycle": start + 1,
        "cycles": [{"cycle": k + 1,
                    "heads": [{"workload": nm(h.workload), "sticky": h.sticky, "mode": h.mode,
                               "outcome": h.reason, "targets": [nm(t) for t in h.targets]} for h in r.heads],
                    "admitted after": [nm(j) for j in r.state.admitted],
                    "inadmissible after": sorted(nm(j) for j in r.state.inadmissible),
                    "preemptors after": [nm(j) for _, j in r.state.preemptor]}
                   for k, r in enumerate(out.trace)],
    }


def _layer_line(lr: LayerReport) -> dict:
    L = lr.layer
    how = "EXHAUSTIVE" if lr.exhaustive and lr.finished else (
        f"SAMPLED ({lr.configurations})" if lr.finished else f"CUT ({lr.configurations} run)")
    return {"shape": shape_text(L.shape), "resources": L.n_resources, "workloads": L.n_workloads, "how": how,
            "loops": dict(lr.loops)}


def summary(rep: Report, args: dict, minimise_smallest: bool = True) -> dict:
    """The report as plain data; with ``minimise_smallest`` the smallest chain and the smallest starved loop
    are minimised (:func:`minimise`) and described."""
    smallest = {}
    for kind in ("chain", "starved", "stall"):
        f = next((f for f in rep.findings if f.kind == kind), None)
        if f is not None:
            smallest[kind] = describe(minimise(f) if minimise_smallest else f)
    exhaustive = [lr for lr in rep.layers if lr.exhaustive and lr.finished]
    return {
        "bounds": args,
        "configurations": rep.configurations, "runs": rep.runs, "seconds": round(rep.seconds, 1),
        "step_limit_hits": rep.limits,
        "layers": [_layer_line(lr) for lr in rep.layers],
        "layers_exhaustive": len(exhaustive),
        "layers_sampled": sum(1 for lr in rep.layers if not lr.exhaustive and lr.finished),
        "layer_cut": None if rep.layer_cut is None else _layer_line(rep.layer_cut),
        "loops": len(rep.findings),
        "loops_by_kind": {k: sum(1 for f in rep.findings if f.kind == k) for k in ("chain", "starved", "stall")},
        "chains_in_exhaustive_layers": sum(lr.loops.get("chain", 0) for lr in exhaustive),
        "smallest": smallest,
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m verifier.preemption_cycles", description=__doc__.split("\n")[0])
    ap.add_argument("--max-queues", type=int, default=4)
    ap.add_argument("--max-workloads", type=int, default=6)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds (checked between configurations)")
    ap.add_argument("--per-layer", type=int, default=2000,
                    help="a layer at most this big is enumerated, a bigger one sampled this many times")
    ap.add_argument("--resources", default="1,2")
    ap.add_argument("--version", choices=tuple(VERSIONS), default="pin")
    ap.add_argument("--queueing", choices=("BestEffortFIFO", "StrictFIFO"), default="BestEffortFIFO")
    ap.add_argument("--policies", choices=("all", "default"), default="all")
    ap.add_argument("--priorities", default="0,1", help="the workloads' priorities, e.g. 0 for all equal")
    ap.add_argument("--weights", default="0,1/2,1,2", help="the non-root nodes' fair-sharing weights")
    ap.add_argument("--stop-at-first", action="store_true")
    ap.add_argument("--no-minimise", action="store_true", help="describe the smallest loops as found")
    a = ap.parse_args(argv)
    try:
        wts = tuple(Fraction(x) for x in a.weights.split(","))
        res = tuple(int(x) for x in a.resources.split(","))
        prios = tuple(int(x) for x in a.priorities.split(","))
    except ValueError as e:
        ap.error(f"--weights/--resources/--priorities: {e}")
    if a.budget is not None and a.budget <= 0 or a.per_layer < 1 or a.max_queues < 1 or a.max_workloads < 1:
        ap.error("--budget, --per-layer, --max-queues and --max-workloads must be positive")
    if not set(res) <= {1, 2} or any(w < 0 for w in wts):
        ap.error("--resources takes 1 and/or 2; --weights must be >= 0")
    pols = POLICIES if a.policies == "all" else DEFAULT_POLICY
    rep = search(a.max_queues, a.max_workloads, a.budget, a.per_layer, Variant(a.version, a.queueing), res,
                 a.stop_at_first, space={"policies": pols, "priorities": prios, "weights": wts})
    print(json.dumps(summary(rep, {"max_queues": a.max_queues, "max_workloads": a.max_workloads,
                                   "budget": a.budget, "per_layer": a.per_layer, "resources": list(res),
                                   "version": a.version, "queueing": a.queueing, "policies": a.policies,
                                   "priorities": list(prios), "weights": [str(w) for w in wts]},
                             not a.no_minimise), indent=1))
    return 0


# ---------------------------------------------------------------------- z3: a 2-cycle of fair-sharing preemptions
def two_cycle_query(n_resources: int = 2, weights: Sequence[Fraction] = (Fraction(1, 2), Fraction(1), Fraction(2)),
                    hierarchical: bool = True, timeout_ms: int = 20_000) -> dict:
    """Is there a state in which workload A preempts workload B by a fair-sharing strategy and then B, pending
    again, preempts A by a fair-sharing strategy (upstream's "two workloads won't preempt each other")?

    Tree: ``root -> {L -> {a, b}, c}`` (``hierarchical``; A in ``a``, B in ``c``: the almost-LCAs are the Cohort
    ``L`` and ``c``) or ``root -> {a, c}``.  Unknowns (reals >= 0: Kueue's quantities are milli-units): every
    node's own quota per resource, the other admitted workloads' usage in ``a``, ``b``, ``c``, A's and B's
    requests; the almost-LCAs' weights range over ``weights`` (one query per pair).  Constraints, in state
    ``X + B`` with A pending: A needs preemption on some resource B uses, ``c`` borrows on it (``cqIsBorrowing``)
    and as a node (``nextTarget`` does not prune it), S2-a (``share_L(X+A) <= share_c(X)``) or S2-b
    (``share_L(X+A) < share_c(X+B)``), and A fits once B is gone; then in ``X + A`` the same for B against A (``a``
    borrows on a resource B needs, ``L`` borrows), and B fits once A is gone.  The shares are
    ``dominantResourceShare``'s: ``max_r max(0, usage_r - subtreeQuota_r) x 1000 / lendable_r / weight``, over
    resources with ``lendable_r > 0`` (the root's subtree quota).  The ordering of targets, the other
    candidates and the admission tournament are NOT encoded (a relaxation: unsat is a proof for the shape; a
    model is a candidate for :func:`mechanisms.ports.kueue.scheduling.run`).  Returns ``{"sat": ..., "model": ...,
    "pairs": ...}``."""
    import z3

    R = n_resources
    nodes = ["root", "L", "a", "b", "c"] if hierarchical else ["root", "a", "c"]
    parent = {"L": "root", "a": "L", "b": "L", "c": "root"} if hierarchical else {"a": "root", "c": "root"}
    q = {n: [z3.Real(f"q_{n}_{r}") for r in range(R)] for n in nodes}
    x = {n: [z3.Real(f"x_{n}_{r}") for r in range(R)] for n in nodes if n not in ("root", "L")}
    A = [z3.Real(f"A_{r}") for r in range(R)]
    B = [z3.Real(f"B_{r}") for r in range(R)]
    base = [v >= 0 for vs in list(q.values()) + list(x.values()) + [A, B] for v in vs]
    base += [z3.Or([v > 0 for v in A]), z3.Or([v > 0 for v in B])]
    leaves = [n for n in nodes if n in x]

    def subtree(n: str, r: int):
        return q[n][r] + sum((subtree(c, r) for c in nodes if parent.get(c) == n), z3.RealVal(0))

    lend = [subtree("root", r) for r in range(R)]

    def usage(n: str, r: int, extra: dict):
        if n in x:
            return x[n][r] + sum(w[r] for cq, w in extra.items() if cq == n)
        return sum((usage(c, r, extra) for c in nodes if parent.get(c) == n), z3.RealVal(0))

    def borrowing(n: str, extra: dict):
        return z3.Or([usage(n, r, extra) > subtree(n, r) for r in range(R)])

    def share(n: str, extra: dict, w: Fraction):
        """The weighted share as a z3 term (max over resources)."""
        terms = []
        for r in range(R):
            b = usage(n, r, extra) - subtree(n, r)
            terms.append(z3.If(z3.And(b > 0, lend[r] > 0), b * 1000 / z3.If(lend[r] > 0, lend[r], 1), 0))
        m = terms[0]
        for t in terms[1:]:
            m = z3.If(t > m, t, m)
        return m / z3.RealVal(str(w))

    pa = "L" if hierarchical else "a"  # A's almost-LCA

    def total(extra: dict, r: int):
        return usage("root", r, extra)

    def preempts(p: list, p_cq: str, p_node: str, t: list, t_cq: str, t_node: str, wp, wt) -> list:
        """p (pending, in p_cq) preempts t (admitted, in t_cq) in state X + t."""
        with_t = {t_cq: t}
        need = [z3.And(p[r] > 0, total(with_t, r) + p[r] > lend[r]) for r in range(R)]
        cand = z3.Or([z3.And(need[r], t[r] > 0, usage(t_cq, r, with_t) > q[t_cq][r]) for r in range(R)])
        both = {t_cq: t, p_cq: p}
        p_new = share(p_node, both, wp)
        s2a = p_new <= share(t_node, {p_cq: p}, wt)
        s2b = p_new < share(t_node, both, wt)
        fits = z3.And([total({p_cq: p}, r) <= lend[r] for r in range(R)])
        feasible = z3.And([total(with_t, r) <= lend[r] for r in range(R)])
        return [feasible, z3.Or(need), cand, borrowing(t_node, both), z3.Or(s2a, s2b), fits]

    out: dict = {"sat": False, "pairs": 0, "model": None}
    for wa in weights:
        for wc in weights:
            s = z3.Solver()
            s.set("timeout", timeout_ms)
            s.add(base)
            s.add(preempts(A, "a", pa, B, "c", "c", wa, wc))
            s.add(preempts(B, "c", "c", A, "a", pa, wc, wa))
            out["pairs"] += 1
            res = s.check()
            if res == z3.sat:
                m = s.model()
                val = lambda e: str(m.eval(e, model_completion=True))  # noqa: E731
                out.update(sat=True, weights={pa: str(wa), "c": str(wc)}, model={
                    "quota": {n: [val(v) for v in q[n]] for n in nodes},
                    "other usage": {n: [val(v) for v in x[n]] for n in leaves},
                    "A": [val(v) for v in A], "B": [val(v) for v in B]})
                return out
            if res != z3.unsat:
                out["unknown"] = out.get("unknown", 0) + 1
    return out
