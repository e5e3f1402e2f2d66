"""Kueue's ORDER in a state: the order facet of ``kueue-drs`` and its historic versions (built with
:func:`mechanisms.core.order.order_facet`), and the order its admission cycles serve.

The ORDER in a state (``OrderSpec``; the facet the ``order`` command and the order properties read)
-------------------------------------------------------------------------------------------------
A state (an :class:`Allocation`, the current allocation) gives every node its usage (``x_j d_j`` summed).
Every user is read as a NOMINEE whose request is its whole workload ``floor(n_j) d_j`` (whether or not it
already holds tasks: the question answered is "whose workload is admitted next"), or nothing when that workload
is NoFit (:func:`mechanisms.ports.kueue.cohort.nominee_requests`).

* ``compare(state, i, j)``: the same ClusterQueue: FIFO (only the head competes); otherwise ``less`` at the
  lowest common ancestor Cohort of their ClusterQueues, as the tournament compares them there.  Never 0 for
  two users (FIFO decides).  This pairwise relation is NOT transitive in general: the key of a user depends on
  the level it is compared at (its ClusterQueue's DRS inside its Cohort, its Cohort's DRS higher up), so
  ``a`` may beat ``b`` in their Cohort while ``c`` beats ``a`` and loses to ``b`` above it -- the tournament is
  a knockout, not a sort (see the tests).  :func:`served_order` is the order the cycles actually serve.
* ``share(state, j)``: the weighted DRS of ``j``'s ClusterQueue after admitting ``j``'s workload (the value
  ``j`` enters the tournament with); ``queue_share(state, q)``: the weighted DRS of queue ``q``'s node in the
  state (an inner queue: its Cohort).  Exact; ``INF`` for weight 0 while borrowing (not reachable: our
  weights are > 0).  :func:`queue_borrows` says whether a queue's node borrows (usage above its SUBTREE quota
  on some resource -- for an inner queue, its own guarantee plus its children's).
* A queue that borrows has a positive share in every state within the pool: borrowing on ``r`` means
  ``usage_r > 0``, so ``c_r > 0`` and ``lendable_r >= c_r > 0``.  The one exception is a state that uses a
  resource of capacity 0 for which no queue has a guarantee (``lendable_r = 0``: skipped, as upstream): such
  a state is outside the pool and unreachable in Kueue.
"""
from __future__ import annotations

from fractions import Fraction
from functools import partial
from typing import Any, NamedTuple, Optional

from mechverify.allocation import Allocation

from ...core.order import order_facet, per_state
from ...core.registry import OrderSpec
from .cohort import Policy, nominee_requests, requests_of, tree_of
from .tournament import _cycles, _Tournament

__all__ = ["StateOnTree", "state_on_tree", "Nominees", "compare_users", "user_share", "queue_share", "request",
           "queue_borrows", "served_order", "order"]

_ZERO = Fraction(0)


class StateOnTree:
    """A state on the tree: every node's usage and every user's request as a nominee."""

    def __init__(self, state: Allocation) -> None:
        env = state.env
        self.tree = tree = tree_of(env)
        R = env.n_resources
        self.usage: list[list[Any]] = [[_ZERO] * R for _ in range(tree.n_nodes)]
        for j in range(env.n_users):
            row = state.x[j]
            amounts = [_ZERO] * R
            held = False
            for s in range(len(row)):
                t = row[s]
                if t:
                    held = True
                    dv = env.d(j, s)
                    for r in range(R):
                        amounts[r] = amounts[r] + t * dv[r]
            if not held:
                continue
            n: Optional[int] = tree.user_cq[j]
            while n is not None:
                u = self.usage[n]
                for r in range(R):
                    u[r] = u[r] + amounts[r]
                n = tree.parent[n]
        self.request = nominee_requests(tree, requests_of(env))
        self.keys: dict = {}  # (policy, node, user) -> tournament key (a sort asks for each many times)

    def key(self, policy: Policy, n: int, j: int) -> tuple:
        k = self.keys.get((policy, n, j))
        if k is None:
            k = self.keys[(policy, n, j)] = policy.key(self.tree, self.usage, self.request, n, j)
        return k


#: a state on its tree, once per state object (a sort asks for the same keys many times)
state_on_tree = per_state(StateOnTree)


class Nominees(NamedTuple):
    """What one version's order reads of a state: the state on the tree, and the version's comparison."""

    on_tree: StateOnTree
    policy: Policy


def compare_users(v: Nominees, i: int, j: int) -> int:
    """< 0: user ``i``'s workload goes before ``j``'s (module docstring)."""
    if i == j:
        return 0
    tree = v.on_tree.tree
    ci, cj = tree.user_cq[i], tree.user_cq[j]
    if ci == cj:
        return -1 if i < j else 1
    a, b = tree.below_lca(ci, cj)
    ka, kb = v.on_tree.key(v.policy, a, i), v.on_tree.key(v.policy, b, j)
    return -1 if ka < kb else (1 if ka > kb else 0)


def user_share(v: Nominees, j: int) -> Any:
    """The weighted DRS of user ``j``'s ClusterQueue after admitting ``j``'s workload."""
    t, pol = v.on_tree, v.policy
    cq = t.tree.user_cq[j]
    return pol.value(pol.drs(t.tree, cq, t.usage[cq], t.request[j]))


def queue_share(v: Nominees, q: int) -> Any:
    """The weighted DRS of queue ``q``'s node in the state (no request)."""
    t, pol = v.on_tree, v.policy
    n = t.tree.queue_node[q]
    return pol.value(pol.drs(t.tree, n, t.usage[n]))


def request(v: Nominees, j: int) -> tuple:
    """What user ``j``'s next admission weighs (its whole workload as a nominee)."""
    return tuple(v.on_tree.request[j])


def queue_borrows(state: Allocation, q: int) -> bool:
    """Queue ``q``'s node uses more than its subtree quota on some resource (Kueue's "borrowing")."""
    t = state_on_tree(state)
    n = t.tree.queue_node[q]
    return any(u > g for u, g in zip(t.usage[n], t.tree.subtree[n]))


def served_order(policy: Policy, state: Allocation) -> list[int]:
    """The users in the order the fair-sharing iterator pops them, cycle after cycle, when nothing is admitted
    (the state's usage stays): the heads of one cycle in tournament order, then the next heads, ..."""
    usage = [list(u) for u in state_on_tree(state).usage]
    return _cycles(state.env, policy, usage, False, _Tournament)[0]


def _nominees(policy: Policy, state: Allocation) -> Nominees:
    return Nominees(state_on_tree(state), policy)


def order(*, integer: bool = False, borrow_check: Optional[str] = "level") -> OrderSpec:
    """The order facet of a version (:class:`Policy`'s switches); the non-borrowing step promises quota first
    (PR 9484 on: a ``request`` part; before it, no such step and none)."""
    policy = Policy(integer=integer, borrow_check=borrow_check)
    return order_facet(partial(_nominees, policy), compare_users, user_share, queue_share,
                       request if policy.borrow_check else None)
