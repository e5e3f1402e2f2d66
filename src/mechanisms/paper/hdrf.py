"""Hierarchical DRF on a queue tree: ``naive-hdrf`` (whole tasks) and ``naive-hdrf-fractional``, ``hdrf`` (H-DRF,
fractional) and ``hdrf-tasks`` (whole tasks).

Source: A. A. Bhattacharya, D. Culler, E. Friedman, A. Ghodsi, S. Shenker, I. Stoica, "Hierarchical Scheduling
for Diverse Datacenter Workloads", ACM SoCC 2013 (https://people.eecs.berkeley.edu/~alig/papers/h-drf.pdf),
as retold by Volcano's design doc (volcano-sh/volcano @ ed72c7c815a9fd547a787134676f73d42e9d049c,
``docs/design/hdrf.md``) and read against Volcano's hierarchy mode of its ``drf`` plugin at the same commit
(``pkg/scheduler/plugins/drf/drf.go``, ``updateHierarchicalShare``, ``compareQueues``).  Section names are the
paper's ("Hierarchical Share Guarantee" in its background; "Static H-DRF", "Collapsed Hierarchies", "Naive
H-DRF" and "Dynamic H-DRF" -- rescaling to the minimum node, ignoring blocked nodes -- in its H-DRF section).

The tree
--------
The root's children are the top-level queues and the users at the root; a queue's children are its child
queues and the users directly in it (a user in an inner queue is a LEAF among that queue's children, with its
user weight ``env.weight[j]``); a queue's weight is ``env.queue_weight[q]``.  A queue without users below it
is a blocked node with nothing allocated.  One resource pool (``Setting.single_server``): shares are
``amount / capacity`` per resource; resources of capacity 0 take no part in any share (a user demanding one
runs nothing, as in ``drf``).

Shares
------
* a leaf's vector is its allocation in shares, ``x_j d_jr / c_r``; its share is the max over resources
  (its dominant share);
* ``naive-hdrf`` (the paper's "Naive H-DRF"): an internal node's vector is the plain sum of its children's
  vectors, its share the max of that sum over every resource;
* ``hdrf`` (the paper's H-DRF, "Dynamic H-DRF"): the children that are NOT blocked are rescaled to the
  minimum node -- with ``m`` the smallest ``share / weight`` among them, a child with vector ``v``, share
  ``s > 0`` and weight ``w`` counts as ``v w m / s`` (its vector at the least-served sibling's level; a child
  with share 0 counts 0) -- and blocked children count unscaled; the node's share is the max of that sum
  over the resources that are NOT saturated (the design doc: "HDRF ignores saturated resources when
  computing the dominant share of any internal node"; a resource is saturated when nothing of it is left).
  ``m`` is taken over every non-blocked child, empty ones included (Volcano skips children with share 0; in
  the fractional mechanism this makes no difference, in whole tasks an empty non-blocked child makes
  ``m = 0``: its parent looks unserved, so the empty child is served next).

WEIGHTS in the rescaling (a convention; the design doc speaks of equal-weight examples).  With equal sibling
weights, ``w m`` is the minimum share among the non-blocked siblings: the rescaling of the design doc and of
Volcano's code.  Volcano's code rescales every child to that UNWEIGHTED minimum share also when the weights
differ; we rescale each child to its own weight times the minimum ``share / weight`` instead, because the
unweighted reading undercounts a heavy child and lets its subtree outgrow the guarantee of its parent's
siblings -- a user at the root with demand <1, 1> next to a queue (equal weights) holding v (weight 3) <1, 0>
and z (weight 1) <0, 1> gets 1/4 of the cluster instead of its guarantee 1/2 -- and makes the fractional run
non-linear between events (irrational event times).  It is available as ``mode="hdrf-unweighted"`` of
:func:`fluid` and :func:`whole_tasks` (not registered; :func:`fluid` raises ``SettingError`` where it is not
piecewise linear).

A leaf is BLOCKED when it cannot grow: its task bound is reached, or a resource it demands is exhausted
(``hdrf-tasks``: it cannot take one more whole task); an internal node is blocked when all its children are.
Weights are used when comparing: among the non-blocked children of a node the least is the one with the
smallest ``share / weight``.  Ties (the paper leaves them open): child queues before users; queues by path,
users by name (lexicographic).

The mechanisms
--------------
* ``naive-hdrf`` -- the paper's Naive H-DRF as the same whole-task loop with naive shares (the paper's
  algorithms launch tasks one at a time: this is its literal form).
* ``hdrf-tasks`` -- the paper's Dynamic H-DRF as a whole-task loop: one whole task at a time to the leaf
  reached by descending from the root to the least non-blocked child, recomputing every share after every
  task (``mechverify.policies.progressive_filling`` with ``local=False``: the key of a user is the tuple of
  ``(share / weight, tie)`` along its path, whose lexicographic minimum is exactly that descent).
* ``hdrf`` and ``naive-hdrf-fractional`` -- the same descent with infinitesimal tasks (the fractional limit; the paper's
  Static H-DRF water-filling), computed exactly (``Fraction``) EVENT BY EVENT.  Between two events every
  leaf's allocation grows linearly: flow enters the root, and every node passes it to its least non-blocked
  children -- all of them rising together at equal ``share / weight`` rates, or, when one of them takes flow
  without its share rising (its share is flat, e.g. a subtree whose rescaled vector does not grow), to that
  one alone (the first in tie order).  An event is whatever changes that linear regime: a leaf blocked (a
  resource it demands exhausted, or its task bound reached), a resource taking over as some node's dominant
  one, another child becoming the minimum of a node, the rising children of a node reaching a waiting
  sibling's ``share / weight``; each event time is a ratio of exact numbers, and no epsilon step is taken.
  On a flat instance (no queues) both are DRF (``drf``), exactly.

What the paper's examples show here (``tests/mechanisms/test_hdrf.py``)
-------------------------------------------------------------------------
* Starvation ("Naive H-DRF"): n1 (weight 1/2) demands <0, 1>; n2 (weight 1/2) has n2,1 <1, 0> and n2,2
  <0, 1>.  The paper's starvation is DYNAMIC: n2,1 already holds the CPUs, so n2's naive share is 1 and every
  GPU freed goes to n1.  From an empty cluster the fractional naive and H-DRF runs agree (n1 and n2,2 split
  the GPUs), so the static example does not separate them; in whole tasks it does when n2,1's one task takes
  every CPU -- ``naive-hdrf`` gives n2,2 nothing, ``hdrf-tasks`` half the GPUs (the saturated CPU is ignored
  in n2's share): ``examples/hdrf-starvation.json``, where ``check naive-hdrf`` reports ``hsi`` violated.
* Blocking ("Dynamic H-DRF", ignoring blocked nodes): leaves n1 <1, 0>, n2 <1, 0>, n4 <0, 1> and n3 with
  children <1, 0> and <0, 1>, equal weights.  The "n3,2 ends with 2/3 of the GPUs, n4 with 1/3" outcome is
  that of rescaling to the minimum over ALL children, blocked ones included (the step before "ignoring
  blocked nodes"; :func:`fluid` with ``mode="rescale-all"`` reproduces it).  Naive H-DRF and ``hdrf`` both
  end with 1/3 of the CPUs for each CPU leaf and 1/2 of the GPUs for n3,2 and n4 (Volcano's ``hdrf_test.go``
  expects the same for its H-DRF: 10, 10, 10 CPUs of 30 and 15, 15 GPUs).

Claims
------
``hdrf``: the hierarchical share guarantee holds (property ``hsi``) -- the property the paper builds H-DRF to
keep (its background section "Hierarchical Share Guarantee"; the design doc: "the parent n2 group will have a
share of 50% which is our desired state").  No other claim is registered: the paper's section and theorem
numbers, and what it proves about strategy-proofness or efficiency, could not be checked against its text
here, and a claim is registered only with a source that can be cited.  Naive H-DRF registers no "fails"
claim: the paper's starvation is a dynamic story, not a stated theorem (the whole-task form shows it on the
static example above).  ``hdrf-tasks``: none (whole tasks can miss
a divisible guarantee by the size of a task, as whole-task DRF misses SI).
"""
from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Any, Optional

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError
from mechverify.policies import FillState, progressive_filling

from ..core.registry import Claim, Setting, SettingError, register
from ..core.z3spec import Z3Spec

__all__ = ["MODES", "build_tree", "fluid", "whole_tasks", "naive_hdrf", "hdrf", "hdrf_tasks", "PAPER", "VOLCANO"]

PAPER = ("Bhattacharya, Culler, Friedman, Ghodsi, Shenker, Stoica, \"Hierarchical Scheduling for Diverse "
         "Datacenter Workloads\", SoCC 2013")
VOLCANO = "volcano-sh/volcano @ ed72c7c815a9fd547a787134676f73d42e9d049c, docs/design/hdrf.md (+ plugins/drf/drf.go)"

#: how an internal node's vector is formed: ``naive`` (plain sum), ``hdrf`` (non-blocked children rescaled to
#: their weight times their minimum share / weight, blocked ones unscaled), ``hdrf-unweighted`` (Volcano's code:
#: rescaled to the minimum share itself), ``rescale-all`` (every child that is not blocked-and-empty rescaled to
#: the minimum share over them all -- the paper's step before ignoring blocked nodes)
MODES = ("naive", "hdrf", "hdrf-unweighted", "rescale-all")

#: a safety net on the number of linear phases of the fractional run
MAX_PHASES = 100_000

_ZERO = Fraction(0)
_ONE = Fraction(1)


class _Node:
    """A node of the tree (root, queue or user leaf) and its per-phase state."""

    __slots__ = ("label", "tie", "weight", "children", "user", "path",
                 "R", "s", "blocked",  # values: vector (in shares, live resources), share, blocked
                 "G", "gam", "T", "scale", "rho", "lvl", "M", "mu", "factor")  # fractional phase: slopes

    def __init__(self, label: str, tie: tuple, weight: Fraction, user: Optional[int] = None) -> None:
        self.label, self.tie, self.weight, self.user = label, tie, weight, user
        self.children: list[_Node] = []
        self.path: tuple[_Node, ...] = ()


def build_tree(env: Environment) -> tuple[_Node, list[_Node], list[_Node]]:
    """``(root, leaves by user index, internal nodes in post-order)``; children in tie order (queues by path,
    then users by name)."""
    root = _Node("(root)", (0, ""), _ONE)
    qnodes = [_Node(path, (0, path), env.queue_weight[q]) for q, path in enumerate(env.queues)]
    for q in range(env.n_queues):
        p = env.queue_parent(q)
        (root if p is None else qnodes[p]).children.append(qnodes[q])
    leaves = []
    for j in range(env.n_users):
        leaf = _Node(env.users[j], (1, env.users[j]), env.weight[j], user=j)
        q = env.user_queue[j]
        (root if q is None else qnodes[q]).children.append(leaf)
        leaves.append(leaf)
    internal: list[_Node] = []
    stack: list[tuple[_Node, tuple[_Node, ...], bool]] = [(root, (), False)]
    while stack:  # iterative post-order (trees may be 32 levels deep), recording each node's path
        n, path, done = stack.pop()
        if done:
            internal.append(n)
            continue
        n.path = path
        if n.user is not None:
            continue
        n.children.sort(key=lambda c: c.tie)
        stack.append((n, path, True))
        for c in n.children:
            stack.append((c, path + (c,), False))
    return root, leaves, internal


def _share(R: list, idx: list[int]) -> Fraction:
    best = _ZERO
    for r in idx:
        if R[r] > best:
            best = R[r]
    return best


def _evaluate(internal: list[_Node], mode: str, idx: list[int], m: int) -> None:
    """Vectors, shares and blocked flags of the internal nodes (post-order), from the leaves' (already set)."""
    for n in internal:
        kids = n.children
        R = [_ZERO] * m
        if mode == "naive":
            for k in kids:
                for r in range(m):
                    R[r] += k.R[r]
        else:
            if mode in ("hdrf", "hdrf-unweighted"):
                pool = [k for k in kids if not k.blocked]
                for k in kids:
                    if k.blocked:
                        for r in range(m):
                            R[r] += k.R[r]
            else:  # rescale-all
                pool = [k for k in kids if not k.blocked or k.s > 0]
            if pool:
                wmin = mode == "hdrf"  # rescaled to the minimum share / weight, times its own weight
                M = min(k.s / k.weight for k in pool) if wmin else min(k.s for k in pool)
                for k in pool:
                    if k.s > 0:
                        f = (M * k.weight if wmin else M) / k.s
                        for r in range(m):
                            R[r] += k.R[r] * f
        n.R = R
        n.s = _share(R, idx)
        n.blocked = all(k.blocked for k in kids)


def _max_slope(R: list, G: list, idx: list[int]) -> Fraction:
    """Right derivative of ``max_{r in idx} R[r] + t G[r]`` at ``t = 0``."""
    if not idx:
        return _ZERO
    top = max(R[r] for r in idx)
    return max(G[r] for r in idx if R[r] == top)


class _NonLinear(Exception):
    pass


def _pool(n: _Node, mode: str) -> list[_Node]:
    """The children rescaled to the minimum (module docstring)."""
    if mode == "rescale-all":
        return [k for k in n.children if not k.blocked or k.s > 0]
    return [k for k in n.children if not k.blocked]


def _key(k: _Node, weighted: bool) -> Fraction:
    return k.s / k.weight if weighted else k.s


def _respond(n: _Node, mode: str, idx: list[int], m: int, a: list[list[Fraction]], top: bool = False) -> None:
    """Per unit of flow into the non-blocked node ``n``: who gets it (``T``, ``scale``), the slope ``G`` of its
    vector and ``gam`` of its share (module docstring; not for the root, ``top``, whose share nobody reads).
    Recursive over the tied children."""
    if n.user is not None:
        n.G = a[n.user]
        n.gam = _max_slope(n.R, n.G, idx)
        return
    live = [k for k in n.children if not k.blocked]
    lvl = min(k.s / k.weight for k in live)
    T = [k for k in live if k.s / k.weight == lvl]
    for k in T:
        _respond(k, mode, idx, m, a)
    absorb = next((k for k in T if k.gam <= 0), None)
    if absorb is not None:  # it takes flow without its share rising: it takes it all
        scale = {absorb: _ONE}
        n.rho = absorb.gam / absorb.weight
    else:
        scale = {k: k.weight / k.gam for k in T}
        n.rho = _ONE
    n.T, n.scale, n.lvl = T, scale, lvl
    if top:
        return
    zero = [_ZERO] * m
    sig = {k: sc * k.gam for k, sc in scale.items()}  # share slopes of the children, per unit of n

    def g_of(k: _Node) -> list:
        sc = scale.get(k)
        return zero if sc is None else [v * sc for v in k.G]

    G = [_ZERO] * m
    if mode == "naive":
        for k in scale:
            for r, v in enumerate(g_of(k)):
                G[r] += v
    else:
        pool = _pool(n, mode)
        wmin = mode == "hdrf"
        M0 = min(_key(k, wmin) for k in pool)
        mu = min(sig.get(k, _ZERO) / (k.weight if wmin else 1) for k in pool if _key(k, wmin) == M0)
        n.M, n.mu = M0, mu
        for k in pool:
            sk, gk = sig.get(k, _ZERO), g_of(k)
            if wmin:  # k's own target: its weight times the minimum share / weight
                M0, mu = n.M * k.weight, n.mu * k.weight
            if k.s > 0:
                if sk == 0 and not any(gk):  # static: its direction times M
                    add = [v * (mu / k.s) for v in k.R]
                elif M0 * sk == mu * k.s:  # the factor M / s is constant
                    add = [v * (M0 / k.s) for v in gk]
                elif all(k.R[r] * sk == gk[r] * k.s for r in range(m)):  # its direction is constant
                    add = [v * (mu / k.s) for v in k.R]
                else:
                    raise _NonLinear(k.label if k.user is None else f"user {k.label}")
            elif sk > 0:  # empty, starting to grow: g M(t) / sk (M0 = 0)
                add = [v * (mu / sk) for v in gk]
            else:
                continue
            for r in range(m):
                G[r] += add[r]
    n.G = G
    n.gam = _max_slope(n.R, G, idx)


def _push(n: _Node, f: Fraction) -> None:
    n.factor = f
    if n.user is None and f:
        for k, sc in n.scale.items():
            _push(k, f * sc)


def _events(root: _Node, internal: list[_Node], leaves: list[_Node], mode: str, idx: list[int],
            left: list[Fraction], dem: list[list[Fraction]], bound: list, x: list[Fraction]) -> Any:
    """The length (in units of flow into the root) of the current linear phase."""
    t: Any = math.inf
    R_ = len(left)
    speed = [_ZERO] * R_
    for leaf in leaves:
        f = leaf.factor
        if not f:
            continue
        j = leaf.user
        if bound[j] is not None:
            t = min(t, (bound[j] - x[j]) / f)
        for r, dv in enumerate(dem[j]):
            if dv:
                speed[r] += f * dv
    for r in range(R_):
        if speed[r]:
            t = min(t, left[r] / speed[r])
    for n in internal:
        f = n.factor
        if not f:
            continue
        if n is not root:  # a resource taking over as n's dominant one
            gs = n.gam * f
            for r in idx:
                sl = n.G[r] * f
                if sl > gs:
                    t = min(t, (n.s - n.R[r]) / (sl - gs))
            if mode != "naive":  # another child becoming the minimum M
                mu = n.mu * f
                wmin = mode == "hdrf"
                for k in _pool(n, mode):
                    sk = k.factor * k.gam if k.factor else _ZERO
                    if wmin:
                        sk /= k.weight
                    if sk < mu:
                        t = min(t, (_key(k, wmin) - n.M) / (mu - sk))
        if n.rho > 0:  # the rising children reaching a waiting sibling
            rise = f * n.rho
            for k in n.children:
                if not k.blocked and k not in n.T:
                    t = min(t, (k.s / k.weight - n.lvl) / rise)
    return t


def fluid(env: Environment, mode: str = "hdrf", ignore_saturated: Optional[bool] = None,
          name: str = "hdrf") -> tuple[list[Fraction], int]:
    """The fractional descent (module docstring), exactly: ``(tasks per user, number of linear phases)``.
    ``ignore_saturated`` (default: for ``hdrf`` and ``hdrf-unweighted``): internal shares skip exhausted
    resources.  ``SettingError`` where ``hdrf-unweighted`` is not piecewise linear (module docstring)."""
    if mode not in MODES:
        raise ValueError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
    if env.n_servers != 1:
        raise SettingError(f"servers: {name} is defined for one server (a single resource pool); "
                           f"got {env.n_servers} servers")
    if ignore_saturated is None:
        ignore_saturated = mode in ("hdrf", "hdrf-unweighted")
    root, leaves, internal = build_tree(env)
    cap = env.capacity[0]
    live = [r for r, c in enumerate(cap) if c > 0]
    m = len(live)
    J = env.n_users
    a = [[env.demand[j][r] / cap[r] for r in live] for j in range(J)]
    dem = [list(env.demand[j]) for j in range(J)]
    bound = list(env.tasks)
    x = [_ZERO] * J
    left = list(cap)
    phases = 0
    while True:
        all_idx = list(range(m))
        idx = [i for i, r in enumerate(live) if left[r] > 0] if ignore_saturated else all_idx
        for leaf in leaves:
            j = leaf.user
            leaf.R = [x[j] * v for v in a[j]]
            leaf.s = _share(leaf.R, all_idx)
            leaf.blocked = (bound[j] is not None and x[j] >= bound[j]) or \
                any(dv and not left[r] for r, dv in enumerate(dem[j]))
        _evaluate(internal, mode, idx, m)
        if root.blocked:
            break
        phases += 1
        if phases > MAX_PHASES:
            raise InstanceError(f"instance: {name} took more than {MAX_PHASES} linear phases; scale it down")
        for n in internal:
            n.factor = _ZERO
            n.scale = {}
            n.T = []
            n.rho = _ZERO
        for leaf in leaves:
            leaf.factor = _ZERO
        try:
            _respond(root, mode, idx, m, a, top=True)
        except _NonLinear as exc:
            raise SettingError(f"queues: {name} is not piecewise linear here (at {exc.args[0]}: with unequal sibling "
                               f"weights a child's rescaling factor and its direction both vary), so its event "
                               f"times are not exact rationals; not computed") from None
        _push(root, _ONE)
        t = _events(root, internal, leaves, mode, idx, left, dem, bound, x)
        if t == math.inf:
            stuck = ", ".join(env.users[leaf.user] for leaf in leaves if leaf.factor)
            raise InstanceError(f"instance: {name}: nothing limits the tasks of {stuck}")
        for leaf in leaves:
            f = leaf.factor
            if f:
                j = leaf.user
                dx = t * f
                x[j] += dx
                for r, dv in enumerate(dem[j]):
                    if dv:
                        left[r] -= dx * dv
    return x, phases


def whole_tasks(env: Environment, mode: str = "hdrf", ignore_saturated: Optional[bool] = None,
                name: str = "hdrf-tasks") -> Allocation:
    """The whole-task descent (module docstring) by ``progressive_filling``; ``mode`` as in :func:`fluid`."""
    if mode not in MODES:
        raise ValueError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
    if ignore_saturated is None:
        ignore_saturated = mode in ("hdrf", "hdrf-unweighted")
    root, leaves, internal = build_tree(env)
    totals = env.total_capacity()
    live = [r for r, c in enumerate(totals) if c > 0]
    m = len(live)
    limit = [None if b is None else math.floor(b) for b in env.tasks]
    state: dict[str, Any] = {"tasks": None, "keys": {}}

    def refresh(st: FillState) -> None:
        rem = st.remaining[0]
        all_idx = list(range(m))
        idx = [i for i, r in enumerate(live) if rem[r] > 0] if ignore_saturated else all_idx
        for leaf in leaves:
            j = leaf.user
            leaf.R = [st.allocated[j][r] / totals[r] for r in live]
            leaf.s = _share(leaf.R, all_idx)
            leaf.blocked = (limit[j] is not None and st.tasks[j] >= limit[j]) or \
                any(dv and rem[r] < dv for r, dv in enumerate(env.d(j, 0)))
        _evaluate(internal, mode, idx, m)
        state["keys"] = {leaf.user: tuple((nd.s / nd.weight, nd.tie) for nd in leaf.path) for leaf in leaves}

    def key(st: FillState, j: int) -> tuple:
        now = tuple(st.tasks)
        if now != state["tasks"]:
            refresh(st)
            state["tasks"] = now
        return state["keys"][j]

    return progressive_filling(env, key, local=False, name=name)


def _fractional(env: Environment, exact: bool, mode: str, name: str) -> Allocation:
    x, phases = fluid(env, mode, name=name)
    info = {"phases": phases}
    if exact:
        return Allocation(env, tuple((v,) for v in x), name, True, info)
    return Allocation(env, tuple((float(v),) for v in x), name, False, info)


_SRC = f"{PAPER}; retold in {VOLCANO}"
_NOTES_TIES = ("ties: child queues before users, queues by path, users by name; one resource pool only")

HDRF_CLAIMS = (
    Claim("hsi", "holds", "H-DRF (SoCC 2013): the hierarchical share guarantee (background, 'Hierarchical Share "
                          "Guarantee') is the property H-DRF is built to keep (sections 'Static H-DRF' and "
                          "'Dynamic H-DRF'; abstract: H-DRF 'avoids the starvation' of the naive schedulers)",
          note="the guarantee of a demanding node: its weight over its demanding siblings' weights, times its "
               "parent's guarantee; the root's is the whole cluster"),
)
_Z3 = Z3Spec.none("hierarchical descent with rescaled shares: not encoded")
#: the setting of every H-DRF variant: one server, a queue tree, task bounds and weights, in whole tasks or not
_FRACTIONAL = Setting(single_server=True, hierarchy=True, placement=False, external=False, bounds=True, weights=True,
                      divisible=True)
_WHOLE_TASKS = replace(_FRACTIONAL, divisible=False)


@register("naive-hdrf", "Naive hierarchical DRF in whole tasks (the paper's task-by-task form): one task at a time "
          "to the leaf reached by descending to the least child, a node's share the dominant share of its "
          "subtree's summed allocation",
          _WHOLE_TASKS,
          (), source=_SRC,
          notes="whole tasks, as the paper's algorithms launch tasks; the paper's starvation shows in a static "
                "instance when n2,1's first task takes every CPU (examples/hdrf-starvation.json); the fractional "
                "limit is naive-hdrf-fractional; no claim registered; " + _NOTES_TIES,
          z3=Z3Spec.none("indivisible tasks (integer allocations): not encoded"))
def naive_hdrf(env: Environment, exact: bool = False) -> Allocation:
    """Naive hierarchical DRF, whole tasks (module docstring)."""
    return whole_tasks(env, "naive", name="naive-hdrf")


@register("naive-hdrf-fractional", "Naive hierarchical DRF (fractional): an internal node's share is the dominant "
          "share of its subtree's summed allocation; descent to the least child by share / weight",
          _FRACTIONAL,
          (), source=_SRC,
          notes="fractional limit of the whole-task descent, exact event by event; no claim registered: the "
                "paper's starvation of Naive H-DRF is dynamic (n2,1 already holds every CPU when GPUs are freed) "
                "or needs whole tasks; a fluid run from an empty cluster does not show it (tests/mechanisms/"
                "test_hdrf.py); " + _NOTES_TIES,
          z3=_Z3)
def naive_hdrf_fractional(env: Environment, exact: bool = False) -> Allocation:
    """Naive hierarchical DRF, fractional (module docstring)."""
    return _fractional(env, exact, "naive", "naive-hdrf-fractional")


@register("hdrf", "H-DRF (fractional): non-blocked children rescaled to the least-served one (weighted), blocked "
          "ones unscaled, saturated resources ignored in internal shares; descent to the least child by share / weight",
          _FRACTIONAL,
          HDRF_CLAIMS, source=_SRC,
          notes="fractional limit of Dynamic H-DRF's descent, exact event by event; a child is rescaled to its "
                "weight times the least share / weight of its non-blocked siblings (Volcano: to the least share, "
                "which differs only for unequal sibling weights); " + _NOTES_TIES,
          z3=_Z3)
def hdrf(env: Environment, exact: bool = False) -> Allocation:
    """H-DRF, fractional (module docstring)."""
    return _fractional(env, exact, "hdrf", "hdrf")


@register("hdrf-tasks", "H-DRF in whole tasks: one task at a time to the leaf reached by descending to the least "
          "non-blocked child by rescaled share / weight",
          _WHOLE_TASKS,
          (), source=_SRC,
          notes="the paper's Dynamic H-DRF as a whole-task loop (blocked: cannot take one more task); no claim "
                "registered (whole tasks can miss a divisible guarantee by their size, as whole-task DRF misses "
                "SI); " + _NOTES_TIES,
          z3=Z3Spec.none("indivisible tasks (integer allocations): not encoded"))
def hdrf_tasks(env: Environment, exact: bool = False) -> Allocation:
    """H-DRF, whole tasks (module docstring)."""
    return whole_tasks(env, "hdrf", name="hdrf-tasks")
