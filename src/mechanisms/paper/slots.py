"""The Slots scheduler: seed 001's baseline (Sec. VI, Table II; Sec. I and II describe it).

Seed 001 compares DRFH with "the traditional Slots schedulers that schedules tasks onto slots of servers (e.g.,
Hadoop Fair Scheduler [23])", which "partition a node into slots with fixed fractions of resources, and allocate
resources jointly at the slot granularity" (Sec. II), "to users at the granularity of these slots" (Sec. I).
Table II sweeps the slot size as "Number of Slots ... per maximum server" (10, 12, 14, 16, 20), and "dividing the
maximum server (1 CPU and 1 memory in Table I) into 14 slots leads to the highest overall utilization" (Sec. VI),
so ``slots`` is registered with k = 14; :func:`make_slots_mechanism` builds any other k.

How the text is read (what it does not say is marked as our convention):

* **Slot size.**  One slot is 1/k of the maximum server in every resource: ``slot_r = M_r / k`` with
  ``M_r = max_l c[l, r]``.  In seed 001's Table I one server is the largest in both resources (normalised to
  (1, 1)), so this is the paper's "maximum server"; on instances where no server is largest in every resource
  we take the per-resource maximum (our convention).
* **Slots per server.**  A slot holds ``slot_r`` of EVERY resource, so server ``l`` has
  ``min_r floor(c[l, r] / slot_r) = min_r floor(k c[l, r] / M_r)`` slots (resources with ``M_r = 0`` are held by
  no server and bound nothing).  A server has at most k slots, the maximum server exactly k.
* **A task and its slot.**  The text is silent; we take Hadoop's convention: a task runs in ONE slot and must fit
  in it (``d[j, r] <= slot_r`` for every r).  A user whose task exceeds the slot in some resource gets no task:
  the slot abstraction cannot run it (seed 001: the single-resource abstraction "ignores the heterogeneity of
  both server specifications and demand profiles").  This is also what makes Table II's utilisation fall again
  beyond 16 slots: smaller slots turn more tasks away.
* **Fairness.**  Hadoop Fair Scheduler shares slots: max-min fairness over the NUMBER of slots held, weighted
  (pool weights; weight 1 when unweighted), filled progressively one slot at a time
  (``mechanisms.paper.filling``): the user with the fewest slots per weight ``x_j / w_j`` among those that can
  still use a slot (its task fits a slot, its bound ``floor(n_j)`` is not reached, one of its eligible servers
  has a free slot) gets one slot.  Ties: the lowest user index.
* **Which slot.**  The first eligible server, in instance order, with a free slot (our convention; Hadoop hands
  out the slots of whichever TaskTracker reports free slots).

Whole tasks, one per slot; the allocation is in chi(E) since a server's slots fit in its capacity.  Everything
is counted in integers and compared in ``Fraction``s, so the allocation is exact in both modes (``exact`` is
accepted and changes nothing), as for First-/Best-Fit DRFH.  ``info``: ``k``, ``slot`` (the slot's size),
``slots`` (slots per server) and ``steps``.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

from mechverify.allocation import Allocation
from mechverify.model import Environment

from .filling import fill_whole_tasks
from ..core.registry import Claim, Setting, register
from ..core.z3spec import Z3Spec

__all__ = ["DEFAULT_K", "TABLE_II_K", "make_slots_mechanism", "slot_size", "slots_per_server"]

#: seed 001 Sec. VI: 14 slots per maximum server gave the highest overall utilisation (Table II)
DEFAULT_K = 14
#: the slot counts Table II sweeps
TABLE_II_K = (10, 12, 14, 16, 20)

MAX_STEPS = 2_000_000


def slot_size(env: Environment, k: int) -> tuple[Fraction, ...]:
    """One slot: ``M_r / k`` of every resource, ``M_r`` the largest capacity of resource r over the servers."""
    return tuple(Fraction(max((env.capacity[s][r] for s in range(env.n_servers)), default=0)) / k
                 for r in range(env.n_resources))


def slots_per_server(env: Environment, slot: tuple[Fraction, ...]) -> tuple[int, ...]:
    """``min_r floor(c[l, r] / slot_r)`` over the resources the slot holds some of; 0 if it holds none."""
    held = [r for r, v in enumerate(slot) if v > 0]
    if not held:
        return tuple(0 for _ in range(env.n_servers))
    return tuple(min(math.floor(Fraction(env.capacity[s][r]) / slot[r]) for r in held) for s in range(env.n_servers))


def _allocate(env: Environment, k: int, name: str) -> Allocation:
    J, S, R = env.n_users, env.n_servers, env.n_resources
    slot = slot_size(env, k)
    free = list(slots_per_server(env, slot))
    x = [[0] * S for _ in range(J)]
    total = [0] * J
    limit = [math.floor(env.tasks[j]) if env.tasks[j] is not None else None for j in range(J)]

    def user_open(j: int, _last: int = -1) -> bool:
        return limit[j] is None or total[j] < limit[j]

    def place(j: int, s: int) -> None:
        free[s] -= 1
        x[j][s] += 1
        total[j] += 1

    fits: dict[int, set[int]] = {}
    for j in range(J):
        if not user_open(j) or any(env.demand[j][r] > slot[r] for r in range(R)):
            continue  # bound 0, or its task does not fit one slot
        fs = {s for s in env.eligible[j] if free[s] > 0}
        if fs:
            fits[j] = fs
    steps = fill_whole_tasks(fits, lambda u: (Fraction(total[u]) / env.weight[u], u), lambda j, s: s, place,
                             lambda u, s: free[s] > 0, user_open, MAX_STEPS,
                             f"instance: {name} would hand out more than {MAX_STEPS} slots; lower k")
    return Allocation(env, tuple(tuple(Fraction(v) for v in row) for row in x), name, True,
                      {"k": k, "slot": slot, "slots": tuple(slots_per_server(env, slot)), "steps": steps})


def make_slots_mechanism(k: int, name: str | None = None) -> Callable[..., Allocation]:
    """The Slots scheduler with ``k`` slots per maximum server (``name`` defaults to ``slots-<k>``), unregistered;
    ``slots`` is ``make_slots_mechanism(14, "slots")`` registered."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k: a whole number of slots per maximum server >= 1 (got {k!r})")
    label = name or f"slots-{k}"

    def mechanism(env: Environment, exact: bool = False) -> Allocation:
        return _allocate(env, k, label)

    mechanism.__name__ = label.replace("-", "_")
    mechanism.__doc__ = (f"The Slots scheduler (seed 001 Sec. VI) with {k} slots per maximum server: one whole "
                         f"task per slot, slots max-min fair by count.")
    return mechanism


_SETTING = Setting(placement=True, external=False, bounds=True, weights=True, divisible=False)

_CLAIMS = (
    Claim("po", "fails", "001 Sec. I ('inevitably leading to a fairly inefficient allocation [6]'); Sec. VI, Table II "
                         "and Fig. 5 ('much higher resource utilization' of both DRFH implementations)",
          note="the paper's word is 'inefficient' (measured as utilisation), read as: not Pareto optimal"),
)

register("slots", f"Slots scheduler (seed 001's baseline, e.g. Hadoop Fair Scheduler): {DEFAULT_K} slots of "
                  f"1/{DEFAULT_K} of the maximum server, one whole task per slot, slots max-min fair by count",
         _SETTING, _CLAIMS, source="001 Sec. VI, Table II (14 slots per maximum server); Sec. I-II",
         notes="Slot = max capacity of each resource / k; a server holds min_r floor(c_r / slot_r) slots; a task takes "
               "one slot and must fit in it (the paper is silent: Hadoop's convention), else its user gets none; "
               "slots go one at a time to the user with the fewest per weight (ties: lowest index), on its first "
               "eligible server with a free slot (our convention).  Table II sweeps k = 10, 12, 14, 16, 20: build "
               "other k with mechanisms.paper.slots.make_slots_mechanism(k).",
         z3=Z3Spec.none("indivisible tasks (integer allocations): not encoded"))(
    make_slots_mechanism(DEFAULT_K, "slots"))
