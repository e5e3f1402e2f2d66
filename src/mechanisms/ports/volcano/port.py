"""``volcano-hdrf``: Volcano's hierarchical DRF (the ``drf`` plugin with ``enableHierarchy``) as a whole-task
mechanism on a queue tree -- its configuration, its allocate loop, its order facet and its declaration
(:data:`PORT`).  The tree, the shares and ``compareQueues``: :mod:`mechanisms.ports.volcano.tree`; the
incremental allocation: :mod:`mechanisms.ports.volcano.fast`.

Source (read, not copied; our code follows the semantics): volcano-sh/volcano @
ed72c7c815a9fd547a787134676f73d42e9d049c,

* ``pkg/scheduler/plugins/drf/drf.go``: ``buildHierarchy``, ``updateHierarchicalShare``,
  ``UpdateHierarchicalShare``, ``resourceSaturated``, ``compareQueues``, ``calculateShare``, the queue order
  (lines 266-278), the job order (lines 370-388) and the ``AllocateFunc`` event handler;
* ``pkg/scheduler/framework/session_plugins.go``: ``QueueOrderFn`` (lines 775-798), ``JobOrderCompareFn`` and
  ``JobOrderFn`` (lines 717-749): the plugins' orders tier by tier, then creation time, then UID;
* ``pkg/scheduler/util.go``: ``DefaultSchedulerConf`` (lines 38-50) and ``UnmarshalSchedulerConf`` (lines
  52-93); ``pkg/scheduler/plugins/defaults.go`` (every ``enabled...`` option defaults to true);
* ``pkg/scheduler/actions/allocate/allocate.go``: ``buildAllocateContext``, ``allocateResources``,
  ``allocateResourcesForTasks``; ``pkg/scheduler/util/priority_queue.go`` (``container/heap``);
* ``pkg/scheduler/api/helpers/helpers.go``: ``Share`` (``l / r``; ``r = 0``: 1 if ``l > 0`` else 0);
  ``pkg/scheduler/api/queue_info.go`` (a queue's UID is its name, line 56);
* ``docs/design/hdrf.md`` (the design; where it and the code differ we follow the code, see below).

The configuration
-----------------
The default configuration (``DefaultSchedulerConf``, util.go lines 38-50; the Helm chart's
``installer/helm/chart/volcano/config/volcano-scheduler.conf`` adds only ``binpack``, a node order) has the tiers
``priority, gang, conformance`` and ``overcommit, drf, predicates, proportion, nodeorder``.  Hierarchy mode is
that configuration with ``enableHierarchy: true`` on ``drf`` and WITHOUT ``proportion``:
``UnmarshalSchedulerConf`` rejects a tier holding both ("proportion and drf with hierarchy enabled conflicts",
util.go lines 62-80) and the design doc says to disable it (hdrf.md, "Limitations" 1).  (Upstream's own
``hdrf_test.go`` builds its tiers directly, lines 185-202, with ``proportion`` beside ``drf``: a configuration
the loader would refuse.)  In that configuration:

* the only queue order is ``drf``'s (``proportion`` and ``capacity`` are the only other plugins that register
  one), so a tie of ``compareQueues`` goes to ``QueueOrderFn``'s fallback: the earlier creation timestamp, then
  the smaller UID, which for a queue is its name;
* the job order is ``priority``'s (tier 1), ``gang``'s (tier 1), ``drf``'s (the job's flat DRF share), then
  ``JobOrderFn``'s fallback: the earlier creation timestamp, then the smaller UID (``namespace/name``).  Our jobs
  have equal priorities and ``minAvailable = 0`` (as the PodGroups of ``hdrf_test.go``), so every job is ready
  and the first two tie;
* no plugin registers ``Overused`` or ``Allocatable`` (``proportion`` did), so no queue is skipped.

The allocate loop and upstream's order
--------------------------------------
Upstream (allocate.go lines 283-368): pop the least queue of a heap ordered by ``QueueOrderFn``, pop its least
job (``JobOrderFn``), place ONE whole task of it (``allocateResourcesForTasks`` stops as soon as the job is
ready; with ``minAvailable = 0`` that is after one task), push the job back and the queue back.  A job whose
next task fits nowhere loses its remaining tasks one by one and is not pushed back.

``compareQueues`` and its cycle: :mod:`mechanisms.ports.volcano.tree`.

What the mechanism does (its rule; exact, deterministic):

* Candidates: the users that can take a task (task bound not reached, the task fits in what is left).
* The queue served: among the candidates' queues, those that NO other candidate queue precedes in
  ``compareQueues`` (-1), the earliest created.  Whenever upstream's ``QueueOrderFn`` (``compareQueues``, then
  creation, then UID) has a least element on the candidates' queues, this is it; only where it has none (a
  cycle as above) is this a choice of ours: a queue that loses no comparison by shares, and among those the
  first created, as the fallback would have it.  (Upstream's heap pops whatever its layout gives there: in the
  tests' cycle it pops ``z/p`` where we serve ``m``.)
* The job served: the candidate in that queue with the least flat DRF share, then the earliest created.

What is not emulated, and why:

* The heap.  Upstream's queues sit in a binary heap (``util.PriorityQueue`` over ``container/heap``) whose
  keys change under it: placing a task changes the shares of the job's ancestors, hence the keys of every
  queue below them, but only the popped queue is pushed back; and where the order is cyclic the heap's pop
  is whatever its layout gives.  That layout is not a function of the instance: ``buildAllocateContext``
  pushes the queues in the order it meets their jobs while ranging over ``ssn.Jobs``, a Go map (allocate.go
  lines 152-194; framework/session.go line 87), whose iteration order is randomised.  We take the least queue
  at the moment of the pop -- the order the push-back is there for ("To ensure that the priority of the queue
  is calculated based on the latest resource allocation situation", allocate.go lines 364-366).
  ``benchmarks/bench_volcano_hdrf.py --ties`` measures how much the heap changes (it emulates it).
* A job that cannot take a task leaves the candidates at once; upstream pops it, fails its tasks and drops it
  then.  Popping it changes no share, so wherever the order is transitive on the queues that still hold jobs
  the outcome is the same.
* ``float64``: we compute exactly (``Fraction``).  Upstream compares ``float64`` shares with ``==``
  (drf.go lines 174, 375), so values that are equal exactly may differ there by rounding (e.g. after the
  ``M / share`` rescaling) and be ordered by the rounding instead of the fallback.

Conventions where upstream leaves a choice to the environment (stated in ``list``):

* Creation order: queues were created in declaration order (the ``queues`` list), jobs in user order (the
  ``users`` list), each at least one second after the one before (Kubernetes timestamps have one-second
  resolution), so a timestamp never ties and the UID never decides.  (Upstream's unit tests leave every
  timestamp zero: there the queue NAME decides; ``hdrf_test.go``'s names order ``root-eng-dev`` <
  ``root-eng-prod`` < ``root-sci``.)
* A user at our root is a job of a queue with no hierarchy annotation (its path is just the root: Volcano's
  ``default`` queue, which the scheduler creates at start-up, pkg/scheduler/cache/cache.go lines 465-520),
  taken as created before every declared queue.  It ties with every queue, so it is served first while it
  can take a task.  A queue holding both jobs and sub-queues (``docs/design/hdrf.md`` forbids it; our model
  allows it) ties with its sub-queues, and the creation order decides between them.
* One server (one resource pool), whole tasks, no placement constraints, no external resources, users of
  weight 1 (upstream's jobs are weight-1 leaves), task bounds allowed (``floor(n_j)`` tasks), equal job
  priorities, ``minAvailable = 0``.

The order facet (``OrderSpec``)
-------------------------------
In a state (the current allocation: each job's task count) the tree is recomputed literally
(:func:`~mechanisms.ports.volcano.tree.hdrf_tree`) and ``compare`` is :func:`~mechanisms.ports.volcano.tree.compare_users`: upstream's comparator itself, not repaired --
``QueueOrderFn`` for users in different queues (``compareQueues``, then creation), ``JobOrderFn`` for users of
one queue (flat share, then creation).  It is not a strict weak order wherever the cycle above arises;
where it has a least element among the users that can take a task, that user is the one the mechanism
serves next.  ``share`` is a job's flat DRF share (what the job order compares) and ``queue_share`` a queue's
rescaled hierarchical share divided by its weight as upstream reads it (what ``compareQueues`` compares; 0 for
a queue with no job below it, which is not in the tree).  Saturation is part of the order, not of a share.
"""
from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple, Optional

from mechverify.allocation import Allocation
from mechverify.model import Environment

from ...core.order import order_facet, view
from ...core.registry import OrderSpec
from ...core.z3spec import Z3Spec
from ..declare import Pin, Port
from .fast import volcano_hdrf_fast
from .tree import SETTING, HdrfNode, compare_users, hdrf_tree

__all__ = ["UPSTREAM", "TIE_BREAK", "StateTree", "state_tree", "order", "allocate", "PORT"]

_VOLCANO = "volcano-sh/volcano"
_COMMIT = "ed72c7c815a9fd547a787134676f73d42e9d049c"
UPSTREAM = (f"{_VOLCANO} @ {_COMMIT}, pkg/scheduler/plugins/drf/drf.go "
            "(+ pkg/scheduler/framework/session_plugins.go, pkg/scheduler/actions/allocate/allocate.go, "
            "pkg/scheduler/api/helpers/helpers.go)")

#: the rule for what ``compareQueues`` and the job order leave open (module docstring, "The allocate loop")
TIE_BREAK = ("ties of compareQueues and of the job order: upstream's fallback in its default hierarchy "
             "configuration (drf the only queue order): the earlier created (queues in declaration order, a user "
             "at the root in a queue created first; jobs in user order); where that order is cyclic, the earliest "
             "created of the queues no other queue precedes in compareQueues")

_ZERO = Fraction(0)


# ---------------------------------------------------------------------------------------- the order facet
class StateTree(NamedTuple):
    """What the order reads of a state: :func:`~mechanisms.ports.volcano.tree.hdrf_tree` for its task counts."""

    env: Environment
    nodes: dict
    leaves: list


def state_tree(state: Allocation) -> StateTree:
    """:func:`~mechanisms.ports.volcano.tree.hdrf_tree` for the state's task counts (one server: a user's tasks are
    its row's sum)."""
    nodes, leaves = hdrf_tree(state.env, view(state).tasks)
    return StateTree(state.env, nodes, leaves)


def _compare(t: StateTree, a: int, b: int) -> int:
    return compare_users(t.env, t.nodes, t.leaves, a, b)


def _share(t: StateTree, j: int) -> Fraction:
    return t.leaves[j].share


def _queue_share(t: StateTree, q: int) -> Fraction:
    node: Optional[HdrfNode] = t.nodes.get(q)
    return _ZERO if node is None else node.share / node.weight  # a queue with no job is not in the tree


def order() -> OrderSpec:
    """The order facet (module docstring, "The order facet")."""
    return order_facet(state_tree, _compare, _share, _queue_share)


def allocate(env: Environment, exact: bool = False, *, name: str = "volcano-hdrf") -> Allocation:
    """Volcano's hierarchical DRF as whole-task progressive filling on the queue tree (module docstring)."""
    return volcano_hdrf_fast(env, name=name)


#: the port (``mechanisms.ports.declare``); no historic version is registered
PORT = Port(
    name="volcano-hdrf",
    title="Volcano hierarchical DRF (drf plugin, hierarchy mode): one whole task at a time to the least job (flat "
          "DRF share) of the least queue by the rescaled hierarchical dominant shares",
    pins=tuple(Pin(_VOLCANO, _COMMIT, path) for path in (
        "pkg/scheduler/plugins/drf/drf.go", "pkg/scheduler/framework/session_plugins.go",
        "pkg/scheduler/actions/allocate/allocate.go", "pkg/scheduler/api/helpers/helpers.go")),
    source=UPSTREAM, setting=SETTING,
    notes="port of the plugin's semantics (our code) in the default hierarchy configuration (drf with "
          "enableHierarchy, no proportion); jobs are the users (weight-1 leaves under their queue), queue "
          "weights < 1 read as 1; queue guarantees and maxes (the capacity plugin's deserved and capability) are "
          "not read; " + TIE_BREAK + "; the least queue is taken at each pop (upstream's heap "
          "keeps stale keys, and its layout follows Go's randomised map order: not emulated); exact shares "
          "(upstream: float64); no claims (upstream states none)",
    z3=Z3Spec.none("indivisible tasks on a queue tree (integer allocations): not encoded"),
    allocate=allocate, order=order)
PORT.register()
