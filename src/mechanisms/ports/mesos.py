"""``mesos-drf``: Mesos' DRF sorter as a whole-task mechanism, flat or on a queue tree (hierarchical roles).

Source (read, not copied; our code follows the semantics): apache/mesos @
c1b42f79d157aa900be5cbb0c1023f1479962aa7, ``src/master/allocator/mesos/sorter/drf/sorter.cpp``
(``DRFSorter::add``, ``allocated``, ``updateWeight``, ``sort``, ``calculateShare``, ``getWeight``) and
``sorter.hpp`` (``Node``, ``Node::Allocation::add``, ``Node::compareDRF``); how the allocator uses the
sorters: ``src/master/allocator/mesos/hierarchical.cpp`` (same commit).

What the sorter does
--------------------
* The total is the sum of every agent's scalar resources (``addSlave`` adds to ``total_.totals``): shares
  are taken on the POOLED cluster, while each allocation lands on one agent.
* A node's share is ``max`` over the resources with total > 0 of ``allocated_r / total_r``, divided by
  its weight (``calculateShare``, sorter.cpp:567-594).
* Clients are PATHS (``"b/c"``): the sorter keeps a tree whose leaves are its clients and whose inner nodes
  are their proper prefixes (``add``, sorter.cpp:73-169).  ``allocated()`` adds the resources to the
  client's leaf AND to every ancestor, and counts one allocation at each of them (sorter.cpp:328-366;
  ``Allocation::add``, sorter.hpp:316-333): an inner node's allocation is its subtree's sum and its count is
  the number of ``allocated()`` calls below it.  ``unallocated()`` and ``remove()`` subtract resources from
  the ancestors but never decrease a count (sorter.cpp:172-248, 392-409).
* ``sort()`` sorts the children of every inner node by ``compareDRF`` -- share, then allocation count, then
  the node's PATH (sorter.hpp:421-432) -- and returns the active leaves in pre-order (sorter.cpp:481-552).
* A client that also has child clients (``"b"`` and ``"b/z"``) is a VIRTUAL LEAF named ``"."`` below the
  inner node ``b`` (``add``, cases (a) and (b), sorter.cpp:103-128): the leaf ``b/.`` holds ``b``'s own
  allocation and count and competes with ``b/z`` inside ``b``; the inner node ``b`` holds the sum and
  competes with ``b``'s siblings.  Weights are keyed by path (``getWeight``, sorter.cpp:597-604): the weight
  of ``b`` applies to the inner node (``updateWeight`` moves from a ``"."`` leaf to its parent,
  sorter.cpp:308-311), and the virtual leaf, whose path is ``"b/."``, has the default weight 1
  (``DEFAULT_WEIGHT``, src/master/constants.hpp:180).  Its path also breaks its ties: ``"b/."`` sorts
  before ``"b/z"`` (byte order).  Upstream's test ``AddChildToLeaf`` checks both.

:func:`sort_clients` (flat) and :func:`sort_tree` (hierarchical) are that ``sort()`` as pure functions.

The allocator (hierarchical.cpp): roles and frameworks
-----------------------------------------------------
Mesos runs TWO levels of sorters: one hierarchical ROLE sorter whose clients are roles (``roleSorter``),
and, per role, a flat FRAMEWORK sorter whose clients are the frameworks subscribed to that role
(``trackFrameworkUnderRole``, hierarchical.cpp:2956-2990).  An allocation is recorded in both
(``trackAllocatedResources``, hierarchical.cpp:3180-3182), and offers go role by role in the role
sorter's order and, inside a role, framework by framework in its framework sorter's order
(hierarchical.cpp:2398-2410).  Both sorters see the same agents' total.  Weights are ROLE weights only
(``updateWeights`` calls ``roleSorter->updateWeight``, hierarchical.cpp:1854-1862).

Our model on it (the conventions, stated in ``list``)
-----------------------------------------------------
* A QUEUE IS A ROLE (its path is the role's path, its weight the role's weight) and A USER IS A FRAMEWORK
  subscribed to its queue's role.  The role sorter's clients are the queues that have users directly in
  them; their ancestors are its inner nodes.  So the users directly in an inner queue ``b`` that also has
  child queues ``b/z`` form ONE client, the virtual leaf ``b/.`` (weight 1, path ``"b/."``), which competes
  as a whole with ``b/z``, exactly as a Mesos role with its own frameworks and child roles does.  A role's
  count is the number of tasks of its users, an inner node's the number of tasks below it.
* A USER AT THE ROOT is a framework of Mesos' default role ``"*"`` (every framework has a role; the root
  is none): the root's users form the top-level client ``"*"`` (weight 1, or the weight of a queue named
  ``"*"``, which is the same role).  ``"*"`` sorts before letters and digits in ties.
* Inside a role, users are ordered by the framework sorter: (dominant share / the USER's weight, tasks,
  name).  Upstream never weights frameworks (weights are role weights), so with user weights 1 this is
  upstream exactly; a user weight != 1 is our extension (the sorter class supports weights, the allocator
  passes none).
* A FLAT instance (no queues) is the special case "every user is a framework of ``"*"``": the order is then
  (dominant share / weight, tasks, name), which is also the role sorter's order when each user is read as
  its own role with its weight as the role weight (the reading of the flat port).  Either way the same
  order, computed by the same code as before: flat instances allocate exactly as they did.
* Queue guarantees are not read: they are Mesos QUOTA, enforced by the allocator's first stage and its
  headroom (hierarchical.cpp:2113-2369), not by the sorter.  Queues without users anywhere below them are
  no clients (their shares are 0 and they hold no user: they change nobody's order).

The mechanism (our whole-task reading)
--------------------------------------
One whole task per round goes to the FIRST user, in the order above (pre-order of the role tree, each role
expanded into its framework order), among those that can still take one (task bound not reached, the
task fits on an eligible server): ``mechverify.policies.progressive_filling``.  Each task is one
``allocated()`` call in both sorters, so a user's count is its task count.  Conventions where upstream
leaves a choice open:

* MANY servers (agents): the share is defined on the pooled total exactly as upstream sums its agents, and a
  task must fit on one agent; the task goes to the first fitting server in server order (upstream's
  allocator visits agents in a random order and offers each agent's free resources; a framework that
  accepts one task per offer gives our loop).
* Placement constraints are allowed: the sorter ignores them, a framework declines offers of agents it
  cannot use (our "fits on an eligible server").  Task bounds are a framework's pending tasks.  No
  external resources, no per-server demands (a Mesos task has one resource vector).
* Exact arithmetic: upstream computes shares in ``double``; we compare exact rationals, so two shares that
  are equal in exact arithmetic tie (and go to the count, then the path) even where upstream's rounding
  orders them.  This happens in upstream's own test ``ChangeWeightOnSubtree``: ``b`` at 15% with weight 3
  and ``a`` at 10% with weight 2 tie at 1/20 exactly, while ``0.15 / 3 < 0.1 / 2`` in ``double``; the pure
  functions take floats too and then reproduce upstream's order (tests/mechanisms/test_mesos_drf.py).

The order facet (``OrderSpec``)
-------------------------------
In a state (the current allocation: per user its tasks, which are its ``allocated()`` counts, and its pooled
amounts) ``compare`` is the order :func:`user_order` returns -- the one the mechanism serves by, computed by
the same code; ``share`` is a user's share in its framework sorter (pooled dominant share / user weight) and
``queue_share`` a queue's (role's) share: its subtree's summed allocation over the pooled total, divided by
its weight (``calculateShare`` of the inner node).
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Collection, Iterable, Mapping, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.policies import FillState, progressive_filling

from ..core.order import order_facet, view
from ..core.registry import OrderSpec, Setting
from ..core.z3spec import Z3Spec
from .declare import Pin, Port

__all__ = ["UPSTREAM", "DEFAULT_ROLE", "VIRTUAL", "drf_share", "drf_key", "sort_clients", "sort_tree",
           "user_order", "SorterState", "order", "allocate", "PORT"]

_MESOS = "apache/mesos"
_COMMIT = "c1b42f79d157aa900be5cbb0c1023f1479962aa7"
UPSTREAM = (f"{_MESOS} @ {_COMMIT}, "
            "src/master/allocator/mesos/sorter/drf/sorter.cpp (+ sorter.hpp; role and framework sorters: "
            "src/master/allocator/mesos/hierarchical.cpp)")

#: the role of the users at the root (Mesos' default role)
DEFAULT_ROLE = "*"
#: the name of a virtual leaf: a client that also has child clients (sorter.cpp ``add``)
VIRTUAL = "."


def drf_share(allocated: Sequence[Any], totals: Sequence[Any], weight: Any = 1) -> Any:
    """``max`` over resources with ``totals[r] > 0`` of ``allocated[r] / totals[r]`` (0 if none), divided by
    ``weight`` (upstream ``DRFSorter::calculateShare``)."""
    share: Any = 0
    for a, t in zip(allocated, totals):
        if t > 0:
            q = a / t
            if q > share:
                share = q
    return share / weight


def drf_key(share: Any, count: int, name: str) -> tuple:
    """The sort key of upstream ``compareDRF``: share, then allocation count, then name (path)."""
    return (share, count, name)


def sort_clients(clients: Iterable[tuple[str, Sequence[Any], int, Any]], totals: Sequence[Any]) -> list[str]:
    """The order ``DRFSorter::sort`` returns for flat clients ``(name, allocated, count, weight)``."""
    return [c[0] for c in sorted(clients, key=lambda c: drf_key(drf_share(c[1], totals, c[3]), c[2], c[0]))]


# ---------------------------------------------------------------------- the hierarchical sorter
class _Node:
    __slots__ = ("path", "children", "client", "index", "parent", "alloc", "count", "key")

    def __init__(self, path: str, index: int, parent: Optional["_Node"]) -> None:
        self.path = path  # "" for the root; "b/." for the virtual leaf of client "b"
        self.children: list[_Node] = []
        self.client: Optional[str] = None  # the client path of a leaf (a virtual leaf: its parent's path)
        self.index = index  # creation order: only breaks ties of equal paths (never among valid roles)
        self.parent = parent
        # the incremental state of the mechanism (:class:`_Order`): allocation, count, sort key
        self.alloc: list[Any] = []
        self.count = 0
        self.key: tuple = ()


class _Tree:
    """The shape of upstream's sorter tree for a set of client paths (module docstring): built once, then
    :meth:`order` sorts it for any allocations."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.root = _Node("", 0, None)
        nodes = {"": self.root}
        made = [self.root]

        def node(path: str, parent: _Node) -> _Node:
            n = nodes.get(path)
            if n is None:
                n = nodes[path] = _Node(path, len(made), parent)
                made.append(n)
                parent.children.append(n)
            return n

        seen: set[str] = set()
        for path in paths:
            if not isinstance(path, str) or not path or any(not seg for seg in path.split("/")):
                raise ValueError(f"client path: expected names joined by '/', got {path!r}")
            if path in seen:
                raise ValueError(f"client path: {path!r} given twice")
            seen.add(path)
            cur = self.root
            segments = path.split("/")
            for i in range(1, len(segments) + 1):
                cur = node("/".join(segments[:i]), cur)
            cur.client = path
        for n in made[1:]:  # a client with child clients becomes an inner node with a virtual leaf "."
            if n.client is not None and n.children:
                virt = _Node(f"{n.path}/{VIRTUAL}", len(made), n)
                made.append(virt)
                virt.client, n.client = n.client, None
                n.children.append(virt)
        self.nodes = made
        self.leaf = {n.client: n for n in made if n.client is not None}  # client path -> its leaf

    def order(self, value: Mapping[str, tuple[Sequence[Any], int]], totals: Sequence[Any],
              weights: Mapping[str, Any], inactive: Collection[str] = (),
              counts: Optional[Mapping[str, int]] = None) -> list[str]:
        """The active clients in upstream's ``sort()`` order; ``value[client] = (allocated, count)``."""

        def visit(n: _Node) -> tuple[list[Any], int, list[str]]:
            """(allocation, count, the sorted active clients) of the subtree of ``n``."""
            if n.client is not None:
                alloc, count = value[n.client]
                alloc = list(alloc)
                listed = [] if n.client in inactive else [n.client]
            else:
                alloc, count, keyed = [0 * t for t in totals], 0, []
                for c in n.children:
                    a, k, sub = visit(c)
                    alloc = [x + y for x, y in zip(alloc, a)]
                    count += k
                    share = drf_share(a, totals, weights.get(c.path, 1))  # by path: "b/." has weight 1
                    keyed.append(((share, k, c.path, c.index), sub))
                keyed.sort(key=lambda e: e[0])
                listed = [p for _, sub in keyed for p in sub]
            if counts is not None:
                count = counts.get(n.path, count)
            return alloc, count, listed

        return visit(self.root)[2]


def sort_tree(clients: Iterable[tuple[str, Sequence[Any], int]], totals: Sequence[Any],
              weights: Optional[Mapping[str, Any]] = None, *, inactive: Collection[str] = (),
              counts: Optional[Mapping[str, int]] = None) -> list[str]:
    """The order upstream's hierarchical ``DRFSorter::sort`` returns (module docstring).

    ``clients``: every client ``(path, allocated, count)`` -- ``count`` its own ``allocated()`` calls;
    ``totals``: the pooled total per resource; ``weights``: role weights by path (``updateWeight``; default
    1).  An inner node's allocation and count are the sums over its subtree; ``counts`` (by node path, e.g.
    ``"b"``) overrides a node's count where upstream's differs from that sum (a removed client's allocations
    stay counted in its ancestors; a leaf that lost its last child keeps the inner node's count).
    ``inactive``: clients that are not listed (their allocations still count in their ancestors).
    Numbers may be exact (``Fraction``) or ``float`` (upstream's ``double``)."""
    clients = list(clients)
    tree = _Tree(c[0] for c in clients)
    return tree.order({c[0]: (c[1], c[2]) for c in clients}, totals, weights or {}, inactive, counts)


# ---------------------------------------------------------------------- our model on the two sorters
def _roles(env: Environment) -> dict[str, list[int]]:
    """role path -> its users (frameworks), in user order: a user's queue's path, or ``"*"`` at the root."""
    roles: dict[str, list[int]] = {}
    for j, q in enumerate(env.user_queue):
        roles.setdefault(DEFAULT_ROLE if q is None else env.queues[q], []).append(j)
    return roles


class _Order:
    """The users' order during the filling: the role sorter's pre-order, each role expanded into its framework
    sorter's order.  Incremental like upstream's ``allocated()`` (sorter.cpp:319-367): a task changes the
    shares on one path, so only that path's nodes are recomputed and their sibling lists re-sorted."""

    def __init__(self, env: Environment, totals: Sequence[Any]) -> None:
        self.env, self.totals = env, totals
        self.roles = _roles(env)
        self.tree = _Tree(self.roles)
        self.weights = dict(zip(env.queues, env.queue_weight))
        for n in self.tree.nodes:
            n.alloc, n.count = [0 * t for t in totals], 0
            n.key = (0, 0, n.path, n.index)
        for n in self.tree.nodes:
            n.children.sort(key=_node_key)
        self.role_of = {j: role for role, js in self.roles.items() for j in js}
        self.members = {role: list(js) for role, js in self.roles.items()}  # kept in framework order
        self.user_key = [drf_key(0, 0, u) for u in env.users]
        for js in self.members.values():
            js.sort(key=self.user_key.__getitem__)
        self.tasks = [0] * env.n_users
        self.alloc = [[0 * t for t in totals] for _ in range(env.n_users)]
        self.total_tasks = 0
        self.ranks: Optional[list[int]] = None

    def sync(self, tasks: Sequence[int], allocated: Sequence[Sequence[Any]]) -> None:
        """Bring the state to per-user ``tasks`` and pooled ``allocated`` amounts (only users whose task count
        changed are touched)."""
        env, totals = self.env, self.totals
        for j in range(env.n_users):
            k = tasks[j] - self.tasks[j]
            if not k:
                continue
            delta = [a - b for a, b in zip(allocated[j], self.alloc[j])]
            self.tasks[j], self.alloc[j] = tasks[j], list(allocated[j])
            self.user_key[j] = drf_key(drf_share(self.alloc[j], totals, env.weight[j]), tasks[j], env.users[j])
            role = self.role_of[j]
            self.members[role].sort(key=self.user_key.__getitem__)
            n = self.tree.leaf[role]
            while n.parent is not None:
                n.alloc = [x + y for x, y in zip(n.alloc, delta)]
                n.count += k
                n.key = (drf_share(n.alloc, totals, self.weights.get(n.path, 1)), n.count, n.path, n.index)
                n.parent.children.sort(key=_node_key)
                n = n.parent
            self.total_tasks += k
        self.ranks = None

    def users(self) -> list[int]:
        """User indices in the current order (pre-order of the role tree, each role's frameworks)."""
        out: list[int] = []

        def visit(n: _Node) -> None:
            for c in n.children:
                if c.client is not None:
                    out.extend(self.members[c.client])
                else:
                    visit(c)

        visit(self.tree.root)
        return out

    def rank(self, st: FillState, j: int) -> int:
        """``progressive_filling``'s key: user ``j``'s position in the order of the state ``st``."""
        if self.ranks is None or sum(st.tasks) != self.total_tasks:  # one more task since the last call
            self.sync(st.tasks, st.allocated)
            self.ranks = [0] * self.env.n_users
            for i, u in enumerate(self.users()):
                self.ranks[u] = i
        return self.ranks[j]


def _node_key(n: _Node) -> tuple:
    return n.key


def user_order(env: Environment, tasks: Sequence[int], allocated: Sequence[Sequence[Any]]) -> list[str]:
    """The users' names in the order the mechanism serves them when user ``j`` holds ``tasks[j]`` tasks and
    ``allocated[j][r]`` of each resource (pooled): on a tree the role sorter's pre-order with each role's
    framework order (module docstring); flat, ``sort_clients``."""
    if not env.has_queues:
        return sort_clients([(env.users[j], allocated[j], tasks[j], env.weight[j]) for j in range(env.n_users)],
                            env.total_capacity())
    order = _Order(env, env.total_capacity())
    order.sync(tasks, allocated)
    return [env.users[j] for j in order.users()]


def _key(st: FillState, j: int) -> tuple:
    env = st.env
    return drf_key(drf_share(st.allocated[j], st.totals, env.weight[j]), st.tasks[j], env.users[j])


class SorterState:
    """What the order reads of a state: the environment, its view (each user's tasks and pooled allocation), each
    user's position in :func:`user_order`, and (when asked) each queue's subtree sum of the users' pooled
    allocations (an inner node's ``allocated``)."""

    def __init__(self, state: Allocation) -> None:
        env = self.env = state.env
        v = self.view = view(state)
        index = {u: j for j, u in enumerate(env.users)}
        self.position = [0] * env.n_users
        for i, u in enumerate(user_order(env, v.tasks, v.allocated)):
            self.position[index[u]] = i

    @cached_property
    def queue_allocations(self) -> list[list[Any]]:
        env, v = self.env, self.view
        sums = [[0 * t for t in v.totals] for _ in range(env.n_queues)]
        for j in range(env.n_users):
            for q in env.user_path(j):
                sums[q] = [a + b for a, b in zip(sums[q], v.allocated[j])]
        return sums


def _compare(s: SorterState, i: int, j: int) -> int:
    pos = s.position
    return (pos[i] > pos[j]) - (pos[i] < pos[j])


def _share(s: SorterState, j: int) -> Any:
    return drf_share(s.view.allocated[j], s.view.totals, s.env.weight[j])


def _queue_share(s: SorterState, q: int) -> Any:
    return drf_share(s.queue_allocations[q], s.view.totals, s.env.queue_weight[q])


def order() -> OrderSpec:
    """The order facet (module docstring, "The order facet")."""
    return order_facet(SorterState, _compare, _share, _queue_share)


_SETTING = Setting(placement=True, external=False, bounds=True, weights=True, divisible=False, hierarchy=True)


def allocate(env: Environment, exact: bool = False, *, name: str = "mesos-drf") -> Allocation:
    """Mesos' DRF sorter as whole-task progressive filling (module docstring): flat, a heap on the key
    ``(share, count, name)``; on a queue tree, the users' order re-sorted at every step."""
    if not env.has_queues:
        return progressive_filling(env, _key, name=name)
    return progressive_filling(env, _Order(env, env.total_capacity()).rank, local=False, name=name)


#: the port (``mechanisms.ports.declare``); no historic version is registered
PORT = Port(
    name="mesos-drf",
    title="Mesos DRF sorter: one whole task per round to the first user in the sorter's order (weighted dominant "
          "share of the pooled total, allocation count, path; on a queue tree the role tree in pre-order, then "
          "each role's frameworks)",
    pins=tuple(Pin(_MESOS, _COMMIT, path) for path in (
        "src/master/allocator/mesos/sorter/drf/sorter.cpp", "src/master/allocator/mesos/sorter/drf/sorter.hpp",
        "src/master/allocator/mesos/hierarchical.cpp")),
    source=UPSTREAM, setting=_SETTING,
    notes="port of the sorters' semantics (our code); queues are roles (queue weight = role weight), users are "
          "frameworks of their queue's role, users at the root frameworks of the default role '*'; a queue with "
          "users and child queues holds its users in the virtual leaf '<queue>/.' (weight 1, as upstream); inside a "
          "role users go by (share / user weight, tasks, name) (upstream weights no framework: user weights != 1 "
          "are our extension); queue guarantees (Mesos quota guarantees) and maxes (quota limits) are not read; whole tasks, first fitting server in "
          "server order (convention: upstream visits agents in random order); exact shares (upstream: double); the "
          "allocation count is the task count; no claims (upstream states none)",
    z3=Z3Spec.none("indivisible tasks (integer allocations): not encoded"),
    allocate=allocate, order=order)
PORT.register()
