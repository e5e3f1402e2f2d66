"""``mesos-drf``: Mesos' DRF sorter as a whole-task mechanism (flat: one level of clients).

Source (read, not copied; our code follows the semantics): apache/mesos @
c1b42f79d157aa900be5cbb0c1023f1479962aa7, ``src/master/allocator/mesos/sorter/drf/sorter.cpp``
(``DRFSorter::calculateShare``, ``DRFSorter::sort``, ``DRFSorter::allocated``) and ``sorter.hpp``
(``Node::compareDRF``, ``Node::Allocation::count``).

What the sorter does
--------------------
* The total is the sum of every agent's scalar resources (``addSlave`` adds to ``total_.totals``): shares
  are taken on the POOLED cluster, while each allocation lands on one agent.
* A client's share is ``max`` over the resources with total > 0 of ``allocated_r / total_r``, divided by
  its weight (``calculateShare``; default weight 1).
* Clients are sorted by share, then by allocation count (how many times ``allocated()`` was called for it,
  never decreased by ``unallocated()``), then by name (``compareDRF``).

The mechanism (our whole-task reading)
--------------------------------------
One whole task per round goes to the least client by that order among those that can still take one
(task bound not reached, the task fits on an eligible server): ``mechverify.policies.progressive_filling``
with the key ``(share, count, name)``.  Each task is one ``allocated()`` call, so the count is the
client's task count.  Conventions where upstream leaves a choice open (stated in ``list``):

* MANY servers (agents): the share is defined on the pooled total exactly as upstream sums its agents, and a
  task must fit on one agent; the task goes to the first fitting server in server order (upstream's
  allocator visits agents in a random order and offers each agent's free resources; a framework that
  accepts one task per offer gives our loop).
* Placement constraints are allowed: the sorter ignores them, a framework declines offers of agents it
  cannot use (our "fits on an eligible server").  Task bounds are a framework's pending tasks; weights are
  role weights.  No external resources, no per-server demands (a Mesos task has one resource vector).
* Exact arithmetic: upstream computes shares in ``double``; we compare exact rationals, so two shares that
  are equal in exact arithmetic tie (and go to the count, then the name) even where upstream's rounding
  might order them.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.policies import FillState, progressive_filling

from .registry import Setting, register
from .z3spec import Z3Spec

__all__ = ["UPSTREAM", "drf_share", "drf_key", "sort_clients", "mesos_drf"]

UPSTREAM = ("apache/mesos @ c1b42f79d157aa900be5cbb0c1023f1479962aa7, "
            "src/master/allocator/mesos/sorter/drf/sorter.cpp (+ sorter.hpp)")


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
    """The sort key of upstream ``compareDRF``: share, then allocation count, then name."""
    return (share, count, name)


def sort_clients(clients: Iterable[tuple[str, Sequence[Any], int, Any]], totals: Sequence[Any]) -> list[str]:
    """The order ``DRFSorter::sort`` returns for flat clients ``(name, allocated, count, weight)``."""
    return [c[0] for c in sorted(clients, key=lambda c: drf_key(drf_share(c[1], totals, c[3]), c[2], c[0]))]


def _key(st: FillState, j: int) -> tuple:
    env = st.env
    return drf_key(drf_share(st.allocated[j], st.totals, env.weight[j]), st.tasks[j], env.users[j])


_SETTING = Setting(placement=True, external=False, bounds=True, weights=True, divisible=False)


@register("mesos-drf", "Mesos DRF sorter (flat): one whole task per round to the least client by "
          "(weighted dominant share of the pooled total, allocation count, name)", _SETTING, (),
          source=UPSTREAM,
          notes="port of the sorter's semantics (our code); whole tasks, first fitting server in server order "
                "(convention: upstream visits agents in random order); exact shares (upstream: double); the "
                "allocation count is the task count; no claims (upstream states none)",
          z3=Z3Spec.none("indivisible tasks (integer allocations): not encoded"))
def mesos_drf(env: Environment, exact: bool = False) -> Allocation:
    """Mesos' DRF sorter, flat, as whole-task progressive filling (module docstring)."""
    return progressive_filling(env, _key, name="mesos-drf")
