"""Turn a scheduler's ORDERING into a mechanism: progressive filling driven by "who is least served".

Most production fair-share schedulers (Mesos' DRF sorter, Volcano's ``drf`` plugin, YARN's fair scheduler)
are an ordering of their clients plus a loop that serves the least client.  This module is that loop, so
that porting a policy is the ordering alone (README, "Audit your scheduler's policy")::

    from mechverify.policies import FillState, progressive_filling

    def my_policy(env, exact=False):
        def key(st: FillState, j: int):          # smaller = served first
            return st.dominant_share(j) / env.weight[j]
        return progressive_filling(env, key, name="my-policy")

Whole tasks (:func:`progressive_filling`)
-----------------------------------------
Repeat: among the users that can still take ONE whole task, the least one (by ``key`` or ``cmp``) gets one
task.  A user can still take one when

* its task bound is not reached (``floor(n_j)`` whole tasks; unbounded: never), and
* the task fits on some server it is eligible for: every resource of that server has at least the task's
  demand there (``env.d(j, s)``) left, and every external resource has the task's external demand left.

WHERE the task goes is the ``placement`` rule's choice among the fitting servers (``mechverify.placement``;
docs/orders-and-placement.md): ``"first-fit"`` (the default) the first fitting server in server (instance)
order, ``"best-fit"`` the one minimising seed 001's eq. (9) (Best-Fit DRFH's), ``"spread"`` the least loaded
one (the most remaining dominant capacity), or a function ``score(state, j, s)`` -- the fitting server with the
smallest score.  Ties go to the lower server index.  No ordering implies a placement: a real scheduler picks
the server by its own logic (a random agent order in Mesos, node scoring in Kubernetes schedulers), and a
counterexample may come from the placement rather than the order (run it with another placement to tell).
Ties of the ordering go to the lower user index (instance order); a key that ends with the user's name
breaks them by name instead.  The loop stops when no
user can take a task.  Remaining capacities only shrink and task counts only grow, so a user that cannot
take a task never can again; it is dropped for good.

The state (:class:`FillState`) the ordering reads is exact: task counts are ``int``, amounts ``Fraction``.
The allocation is integral, so it is exact (``Allocation.exact``) whatever mode the caller asks for.

Speed: with ``local=True`` (the default) the ordering must depend only on the environment and the user's
OWN state (its tasks, per-server placements and allocated amounts): then serving a user changes only its own
key, and the loop keeps a heap -- O(log J) per task plus the fit checks, which are amortised: each user
keeps a pointer to its first server that may fit (servers never regain capacity).  An ordering that reads
other users' state or the remaining capacities (e.g. a share of what is left) needs ``local=False``: every
key is re-evaluated at every step (O(J) per task).  ``benchmarks/bench_policies.py`` measures it.  Best-fit
keeps eq. (9) per user in a heap updated at the server just used (``placement.BestFitHeaps``: O(J log S) per
task); ``spread`` and a score function scan the user's fitting servers (O(S) scores per task).

Fractional form (:func:`fractional_filling`)
--------------------------------------------
An arbitrary ordering does not define a divisible allocation; a LINEAR one does: when user ``j``'s key is
``x_j * rate_j`` (e.g. its dominant share ``x_j max_r d_jr / c_r`` over its weight), serving the least user
infinitesimally is water-filling, exactly: a common level ``t`` rises, every active user runs ``t /
rate_j`` tasks, and a user freezes when a resource it demands (computational or external) is exhausted or
its bound is reached.  It is defined for ONE server (a single resource pool): with several servers an
ordering says who is served, not where fractions go (that is a placement LP, e.g. DRFH's), so it is left
out there.  A user with ``rate_j = 0`` (its key never rises) is served first, in user order, as much as fits.

This module is core: it imports nothing above ``mechverify`` (docs/architecture.md).
"""
from __future__ import annotations

import heapq
import math
from fractions import Fraction
from functools import cmp_to_key
from typing import Any, Callable, Optional, Union

from .allocation import Allocation
from .model import Environment
from .numbers import InstanceError, is_inf
from .placement import BEST_FIT, FIRST_FIT, PLACEMENTS, SPREAD, BestFitHeaps, spread_score

__all__ = ["FillState", "progressive_filling", "fractional_filling", "MAX_TASKS"]

#: a safety net: more whole tasks than this is an ``InstanceError`` (scale the instance down)
MAX_TASKS = 2_000_000

_ZERO = Fraction(0)


class FillState:
    """What an ordering may read during :func:`progressive_filling` (read it, never write it).

    * ``env`` -- the (reported) environment; ``totals`` -- pooled capacity per resource (``env.total_capacity()``);
    * ``tasks[j]`` -- whole tasks user ``j`` holds (= the number of times it was served, Mesos' allocation count);
    * ``x[j][s]`` -- its tasks on server ``s``;
    * ``allocated[j][r]`` -- the amount of resource ``r`` it holds, pooled over servers (``Fraction``);
    * ``remaining[s][r]`` -- what server ``s`` has left; ``external_left[k]`` -- what external resource ``k`` has left.

    :meth:`of` builds the same view of a given allocation (a STATE: an instance's ``usage``), which is what a
    policy's declared order is read in (``@mechverify.mechanism(order=...)``, docs/orders-and-placement.md).
    """

    __slots__ = ("env", "totals", "tasks", "x", "allocated", "remaining", "external_left")

    def __init__(self, env: Environment) -> None:
        J, S, R = env.n_users, env.n_servers, env.n_resources
        self.env = env
        self.totals = env.total_capacity()
        self.tasks = [0] * J
        self.x = [[0] * S for _ in range(J)]
        self.allocated = [[_ZERO] * R for _ in range(J)]
        self.remaining = [list(row) for row in env.capacity]
        self.external_left = list(env.external_capacity)

    @classmethod
    def of(cls, state: Allocation) -> "FillState":
        """The fill state of an allocation ``state.x`` of ``state.env`` (exact entries): ``tasks[j]`` its row sum,
        ``allocated`` and ``remaining`` from ``x[j][s] * env.d(j, s)``, ``external_left`` from the tasks times their
        external demands.  A state that overfills a server leaves a negative ``remaining``; a fractional one
        (a divisible mechanism's allocation) gives fractional ``tasks``."""
        env = state.env
        st = cls(env)
        ext = st.external_left
        for j, row in enumerate(state.x):
            alloc = st.allocated[j]
            for s, n in enumerate(row):
                if not n:
                    continue
                st.x[j][s] = n
                st.tasks[j] += n
                rem = st.remaining[s]
                for r, dv in enumerate(env.d(j, s)):
                    if dv:
                        rem[r] -= n * dv
                        alloc[r] += n * dv
            for k, dv in enumerate(env.external_demand[j]):
                if dv:
                    ext[k] -= st.tasks[j] * dv
        return st

    def share(self, j: int, r: int) -> Fraction:
        """``allocated[j][r] / totals[r]`` (0 when the pool has none of ``r``)."""
        t = self.totals[r]
        return self.allocated[j][r] / t if t else _ZERO

    def dominant_share(self, j: int) -> Fraction:
        """``max`` over resources with a pooled capacity > 0 of ``allocated[j][r] / totals[r]`` (0 if none)."""
        best = _ZERO
        for a, t in zip(self.allocated[j], self.totals):
            if t and a:
                q = a / t
                if q > best:
                    best = q
        return best


def _fits(st: FillState, j: int, s: int) -> bool:
    env = st.env
    if s not in env.eligible[j]:
        return False
    for left, dv in zip(st.remaining[s], env.d(j, s)):
        if dv and left < dv:
            return False
    return True


def _external_fits(st: FillState, j: int) -> bool:
    for left, dv in zip(st.external_left, st.env.external_demand[j]):
        if dv and left < dv:
            return False
    return True


def progressive_filling(env: Environment, key: Optional[Callable[[FillState, int], Any]] = None, *,
                        cmp: Optional[Callable[[FillState, int, int], int]] = None, local: bool = True,
                        name: str = "policy", max_tasks: int = MAX_TASKS,
                        placement: Union[str, Callable[[FillState, int, int], Any]] = FIRST_FIT) -> Allocation:
    """Whole-task progressive filling by an ordering (module docstring): ``key(state, j)`` (smaller is served
    first) or ``cmp(state, i, j)`` (negative: ``i`` before ``j``; 0: a tie, broken by user index).  Exactly one
    of them.  ``local=False`` when the ordering reads more than the environment and user ``j``'s own state.
    ``placement``: where each task goes among the servers it fits on -- ``"first-fit"`` (default), ``"best-fit"``,
    ``"spread"`` or ``score(state, j, s)`` (smallest first); ties by server index (``mechverify.placement``).
    Returns the exact integral :class:`Allocation` (``info``: ``steps``, the tasks placed)."""
    if (key is None) == (cmp is None):
        raise TypeError("progressive_filling: give exactly one of key= and cmp=")
    if not callable(placement) and placement not in PLACEMENTS:
        raise ValueError(f"placement: expected one of {', '.join(map(repr, PLACEMENTS))} or a function "
                         f"score(state, j, s), got {placement!r}")
    if cmp is not None:
        ck = cmp_to_key(lambda a, b: cmp(st, a, b) or (a > b) - (a < b))
        key = lambda _st, j: ck(j)  # noqa: E731  (the comparator, then the user index)
    J, S = env.n_users, env.n_servers
    st = FillState(env)
    limit = [None if b is None else math.floor(b) for b in env.tasks]
    first = [0] * J  # first server that may still fit user j (servers never regain capacity)

    def can_take(j: int) -> bool:
        if limit[j] is not None and st.tasks[j] >= limit[j]:
            return False
        if not _external_fits(st, j):
            return False
        s = first[j]
        while s < S and not _fits(st, j, s):
            s += 1
        first[j] = s
        return s < S

    choose, placed = _chooser(env, st, first, placement)

    def serve(j: int) -> None:
        s = choose(j)
        dv = env.d(j, s)
        rem, alloc = st.remaining[s], st.allocated[j]
        for r, v in enumerate(dv):
            if v:
                rem[r] -= v
                alloc[r] += v
        for k, v in enumerate(env.external_demand[j]):
            if v:
                st.external_left[k] -= v
        st.x[j][s] += 1
        st.tasks[j] += 1
        if placed is not None:
            placed(s)

    steps = 0
    if local:
        heap = [(key(st, j), j) for j in range(J)]
        heapq.heapify(heap)
        while heap:
            _, j = heapq.heappop(heap)
            if not can_take(j):
                continue  # it never can again
            steps += 1
            if steps > max_tasks:
                raise InstanceError(f"instance: {name} would place more than {max_tasks} whole tasks; "
                                    f"scale capacities/demands down")
            serve(j)
            heapq.heappush(heap, (key(st, j), j))
    else:
        active = list(range(J))
        while True:
            active = [j for j in active if can_take(j)]
            if not active:
                break
            steps += 1
            if steps > max_tasks:
                raise InstanceError(f"instance: {name} would place more than {max_tasks} whole tasks; "
                                    f"scale capacities/demands down")
            serve(min(active, key=lambda j: (key(st, j), j)))
    x = tuple(tuple(Fraction(v) for v in row) for row in st.x)
    return Allocation(env, x, name, True, {"steps": steps})


def _chooser(env: Environment, st: FillState, first: list,
             placement: Any) -> tuple[Callable[[int], int], Optional[Callable[[int], None]]]:
    """``(choose, placed)``: ``choose(j)`` is the server user ``j``'s next task goes to, among the servers it fits
    on (``can_take(j)`` found one: ``first[j]`` is the first of them, no server before it fits ``j``);
    ``placed(s)`` (or ``None``) is told where a task went."""
    if placement == FIRST_FIT:
        return first.__getitem__, None
    S = env.n_servers
    if placement == BEST_FIT:
        heaps = BestFitHeaps(env, st.remaining, st.totals, env.d)

        def best(j: int) -> int:
            s = heaps.pick(j, sorted(env.eligible[j]), lambda s: _fits(st, j, s))
            assert s is not None  # can_take(j) found a fitting server
            return s

        return best, heaps.changed
    if placement == SPREAD:
        def score(_st: FillState, _j: int, s: int) -> Any:
            return spread_score(st.remaining[s], env.capacity[s])
    else:
        score = placement

    def scan(j: int) -> int:
        return min((s for s in range(first[j], S) if _fits(st, j, s)), key=lambda s: (score(st, j, s), s))

    return scan, None


def fractional_filling(env: Environment, rate: Callable[[Environment, int], Any], *,
                       name: str = "policy-fractional") -> Allocation:
    """Divisible water-filling on ONE server by the linear key ``x_j * rate(env, j)`` (module docstring),
    exactly (``Fraction``), event by event.  ``rate(env, j) >= 0`` must be exact (``int``/``Fraction``).
    ``InstanceError`` for several servers."""
    if env.n_servers != 1:
        raise InstanceError(f"servers: {name} (fractional filling) is defined for one server (a single resource "
                            f"pool); got {env.n_servers} servers")
    J = env.n_users
    cap = list(env.capacity[0]) + list(env.external_capacity)
    dem = [tuple(env.d(j, 0)) + tuple(env.external_demand[j]) for j in range(J)]
    bound = [env.tasks[j] for j in range(J)]
    x = [_ZERO] * J
    rates = []
    for j in range(J):
        q = rate(env, j)
        if not isinstance(q, (int, Fraction)) or q < 0:
            raise InstanceError(f"{name}: rate of user {env.users[j]!r} must be an exact number >= 0, got {q!r}")
        rates.append(Fraction(q))
    left = list(cap)

    def room(j: int) -> Any:  # tasks of j that still fit (inf: nothing demanded, no bound)
        best: Any = math.inf if bound[j] is None else bound[j] - x[j]
        for lv, dv in zip(left, dem[j]):
            if dv:
                best = min(best, lv / dv)
        return best

    def take(j: int, n: Fraction) -> None:
        x[j] += n
        for r, dv in enumerate(dem[j]):
            if dv:
                left[r] -= n * dv

    active = []
    for j in range(J):
        if 0 not in env.eligible[j]:
            continue
        if rates[j] == 0:  # its key never rises: served first, as much as fits
            n = room(j)
            if is_inf(n):
                raise InstanceError(f"{name}: user {env.users[j]!r} has rate 0 and nothing limits its tasks")
            take(j, n)
        elif room(j) > 0:
            active.append(j)
    t = _ZERO  # the common level: x_j = t / rate_j for the active users
    while active:
        # the level increase dt until the first event: a resource or a bound
        speed = [sum((dem[j][r] / rates[j] for j in active), _ZERO) for r in range(len(cap))]
        dt: Any = math.inf
        for r, sp in enumerate(speed):
            if sp:
                dt = min(dt, left[r] / sp)
        for j in active:
            if bound[j] is not None:
                dt = min(dt, (bound[j] - x[j]) * rates[j])
        if is_inf(dt):
            raise InstanceError(f"{name}: nothing limits the tasks of {', '.join(env.users[j] for j in active)}")
        for j in active:
            take(j, dt / rates[j])
        t += dt
        active = [j for j in active if room(j) > 0]
    return Allocation(env, tuple((v,) for v in x), name, True, {"level": t})
