"""Distributed PS-DSF over time (002 Sec. III-D, Sec. V): the trajectory under a server schedule.

Each round the scheduled servers run their procedure (``mechanisms.paper.psdsf.server_response``) from their
own capacities and the users' current totals; users may come and go (the Sec. V experiment: user 4
inactive during (100, 250) s).  The iteration itself (schedules, one round) lives in
``mechanisms.paper.psdsf.distributed``, which the registered ``psdsf-distributed`` uses; this module only
records whole trajectories.
"""
from __future__ import annotations

import random as _random
from fractions import Fraction
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from mechanisms.paper.psdsf import (ZERO, Schedule, apply_round, as_allocation, check_env, per_server_drf_start,
                              round_servers)
from mechverify.allocation import Allocation
from mechverify.model import Environment

__all__ = ["run_distributed", "Schedule"]


def run_distributed(env: Environment, rounds: int, schedule: Schedule = "sync",
                    initial: Optional[Union[Allocation, Sequence[Sequence[Any]]]] = None, mode: str = "rdm",
                    active: Optional[Union[Callable[[int], Iterable[int]], Sequence[Iterable[int]]]] = None,
                    seed: int = 0) -> list[Allocation]:
    """Distributed PS-DSF (002 Sec. III-D): the trajectory ``[x(0), x(1), ..., x(rounds)]`` (exact).

    In each round the servers chosen by ``schedule`` run their server procedure (:func:`server_response`)
    knowing only their own capacities and the users' current totals:

    * ``"sync"``: every server, simultaneously, from the totals at the start of the round;
    * ``"sequential"``: every server in index order, each seeing the previous one's update
      (a round = one pass of Algorithm I);
    * ``"round-robin"``: one server per round (server ``(t-1) mod K``);
    * ``"async"``: one uniformly random server per round (``seed``) -- an asynchronous execution;
    * ``"random"``: each server independently with probability 1/2 (``seed``), simultaneously;
    * a function ``t -> servers`` or a list of server lists (cycled), simultaneously.

    Schedules where several servers act at once can oscillate (docs/psdsf.md).
    ``initial``: the starting allocation (default: Algorithm I's per-server DRF over the users active
    in round 1).  ``active``: a function ``t -> user indices`` (or a list indexed by ``t - 1``, its
    last entry repeating) of the users active in round ``t``; an inactive user's tasks are released at the start of the round and
    it takes no part (002 Sec. V: user 4 inactive during (100, 250) s).  ``x(0)`` is the initial
    allocation; entries of inactive users are 0 in every later allocation.  Exact arithmetic
    throughout (long runs that converge only geometrically grow denominators; keep ``rounds``
    moderate or use ``mechanisms.paper.psdsf.distributed_fixed_point``)."""
    if mode not in ("rdm", "tdm"):
        raise ValueError(f"mode: expected 'rdm' or 'tdm', got {mode!r}")
    if not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"rounds: expected a non-negative integer, got {rounds!r}")
    check_env(env)
    J, S = env.n_users, env.n_servers
    rng = _random.Random(seed)

    def active_at(t: int) -> list[int]:
        if active is None:
            return list(range(J))
        if callable(active):
            a = active(t)
        else:
            if not len(active):
                raise ValueError("active: empty list")
            a = active[min(t, len(active)) - 1]
        out = sorted(set(a))
        for j in out:
            if not (isinstance(j, int) and 0 <= j < J):
                raise ValueError(f"active: unknown user index {j!r}")
        return out

    if initial is None:
        x = per_server_drf_start(env, mode, active_at(1))
    else:
        rows = initial.x if isinstance(initial, Allocation) else initial
        if len(rows) != J or any(len(r) != S for r in rows):
            raise ValueError(f"initial: expected a {J}x{S} task matrix")
        x = [[Fraction(v) for v in row] for row in rows]
    name = f"psdsf-distributed-{mode}"
    traj = [as_allocation(env, [r[:] for r in x], name, True, {"round": 0})]
    for t in range(1, rounds + 1):
        act = active_at(t)
        aset = set(act)
        for j in range(J):
            if j not in aset:
                x[j] = [ZERO] * S
        servers, in_order = round_servers(schedule, t, S, rng)
        x, _ = apply_round(env, mode, x, servers, in_order, act)
        traj.append(as_allocation(env, [r[:] for r in x], name, True,
                                   {"round": t, "active": act, "servers": servers}))
    return traj
