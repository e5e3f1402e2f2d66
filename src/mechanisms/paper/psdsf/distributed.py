"""Distributed PS-DSF (002 Sec. III-D, 000 Sec. III-D): servers run their procedure from the users' totals.

A *schedule* says which servers act in round ``t`` (:func:`round_servers`); :func:`apply_round` runs
them one after the other or simultaneously.  Simultaneous updates can oscillate for ever (on the
paper's own Fig. 5 cluster), so ``psdsf-distributed`` is where the asynchronous schedule (one
uniformly random server per round, seed 0) settles from Algorithm I's initial allocation, checked by
Theorem 1 (:func:`distributed_fixed_point`).  Whole trajectories: ``simulation.psdsf_distributed``.
"""
from __future__ import annotations

import random as _random
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from mechverify.allocation import Allocation
from mechverify.model import Environment

from ...core.registry import Setting, register
from .algorithm import per_server_drf_start, server_response
from .claims import PSDSF_RDM_CLAIMS, SETTING_NOTE
from .fast import exact_iteration, fast_fixed_point
from .iteration import EXACT_ROUNDS, MAX_ROUNDS, as_allocation, iterate
from .shares import Matrix, PSDSFError, check_env, totals
from .theorems import theorem1_violations
from ...core.z3spec import Z3Spec

__all__ = ["Schedule", "SCHEDULES", "round_servers", "apply_round", "schedule_step", "distributed_fixed_point",
           "psdsf_distributed"]

#: the named schedules (a schedule may also be a function ``t -> servers`` or a list of server lists)
SCHEDULES = ("sync", "sequential", "round-robin", "async", "random")


Schedule = Union[str, Callable[[int], Iterable[int]], Sequence[Iterable[int]]]


def round_servers(schedule: Schedule, t: int, S: int, rng: _random.Random) -> tuple[list[int], bool]:
    """Servers that run their procedure in round ``t`` (1-based) and whether they run one after the
    other (True) or simultaneously from the start-of-round state (False)."""
    if callable(schedule):
        return list(schedule(t)), False
    if isinstance(schedule, str):
        if schedule == "sync":
            return list(range(S)), False
        if schedule == "sequential":
            return list(range(S)), True
        if schedule == "round-robin":
            return [(t - 1) % S], False
        if schedule == "async":
            return [rng.randrange(S)], False
        if schedule == "random":
            return [s for s in range(S) if rng.random() < 0.5], False
        raise ValueError(f"schedule: expected 'sync', 'sequential', 'round-robin', 'async', 'random', a function "
                         f"or a list of server lists, got {schedule!r}")
    seq = list(schedule)
    if not seq:
        raise ValueError("schedule: empty list")
    return list(seq[(t - 1) % len(seq)]), False


def apply_round(env: Environment, mode: str, cur: Matrix, servers: list[int], in_order: bool,
                 users: Optional[list[int]] = None, tot: Optional[list] = None) -> tuple[Matrix, list]:
    """The servers of one round run their procedure: one after the other, or all from ``cur``.
    ``tot``: the row sums of ``cur`` if known.  Returns the new matrix and its row sums."""
    S, J = env.n_servers, env.n_users
    for s in servers:
        if not (isinstance(s, int) and 0 <= s < S):
            raise ValueError(f"schedule: unknown server index {s!r}")
    nxt = [r[:] for r in cur]
    tot = totals(cur) if tot is None else list(tot)
    if in_order:
        for s in servers:
            col = server_response(env, nxt, s, mode, users, tot)
            for j in range(J):
                tot[j] += col[j] - nxt[j][s]
                nxt[j][s] = col[j]
    else:
        cols = {s: server_response(env, cur, s, mode, users, tot) for s in servers}
        for s, col in cols.items():
            for j in range(J):
                tot[j] += col[j] - nxt[j][s]
                nxt[j][s] = col[j]
    return nxt, tot


def schedule_step(env: Environment, mode: str, schedule: Schedule, rng: _random.Random,
                   users: Optional[list[int]] = None) -> Callable[[Matrix, int], Matrix]:
    """One round of ``schedule`` as a function ``(matrix, t) -> matrix`` (reuses the last row sums)."""
    last: dict[str, Any] = {"x": None, "tot": None}  # row sums of the matrix returned last time

    def step(cur: Matrix, t: int) -> Matrix:
        servers, in_order = round_servers(schedule, t, env.n_servers, rng)
        tot = last["tot"] if cur is last["x"] else None
        nxt, tot = apply_round(env, mode, cur, servers, in_order, users, tot)
        last["x"], last["tot"] = nxt, tot
        return nxt

    return step


def distributed_fixed_point(env: Environment, mode: str = "rdm", schedule: str = "async",
                            max_passes: int = MAX_ROUNDS, seed: int = 0) -> tuple[Matrix, int, str]:
    """Where the distributed algorithm settles from Algorithm I's initial allocation: ``(x, rounds,
    method)``; stops at the first iterate satisfying Theorem 1/2.  Raises :class:`PSDSFError` if the
    schedule cycles (the synchronous schedule oscillates with period 2 on the Fig. 5 cluster, see
    tests/test_psdsf.py) or does not settle within ``max_passes`` passes."""
    check_env(env)
    if schedule not in ("sync", "sequential", "round-robin", "async", "random"):
        raise ValueError(f"schedule: expected 'sync', 'sequential', 'round-robin', 'async' or 'random', "
                         f"got {schedule!r}")
    x = per_server_drf_start(env, mode)
    step = schedule_step(env, mode, schedule, _random.Random(seed))
    full = schedule in ("sync", "sequential")
    pass_len = env.n_servers if schedule in ("round-robin", "async") else (1 if full else 2)
    return iterate(env, mode, step, x, max_passes, f"psdsf-distributed ({schedule})", pass_len, full)


@register("psdsf-distributed", "PS-DSF, distributed (Sec. III-D): asynchronous server procedures until Thm 1 holds",
          Setting(placement=True, external=False, bounds=False, weights=True, server_demand=True, feasibility="rdm"),
          PSDSF_RDM_CLAIMS, source="000 Sec. III-D; 002 Sec. III-D",
          notes="One uniformly random server (seed 0) runs its procedure per round, from Algorithm I's "
                "initial allocation, until Thm 1 holds (RDM). Simultaneous updates can oscillate for ever. "
                "Trajectories: simulation.psdsf_distributed.run_distributed. " + SETTING_NOTE,
          z3=Z3Spec.none("distributed PS-DSF: not encoded"))
def psdsf_distributed(env: Environment, exact: bool = False) -> Allocation:
    """Where the asynchronous schedule (seed 0) settles from Algorithm I's start, checked by Thm 1."""
    check_env(env)
    got = fast_fixed_point(env, "rdm", "async", seed=0, max_passes=MAX_ROUNDS)  # checked exactly inside
    if got is not None:
        x, rounds, method = got[0], got[1] * env.n_servers, "pattern-solve"
    elif (got := exact_iteration(env, "rdm", "async", seed=0, exact_passes=EXACT_ROUNDS))[0] == "done":
        x, rounds, method = got[1], got[2], "fixed-point"  # the same iterates as the exact phase, int pairs
    else:  # the rest of distributed_fixed_point's iteration, from where the exact phase ended
        rnd, x0, prev, rng = got[1:]
        step = schedule_step(env, "rdm", "async", rng)
        x, rounds, method = iterate(env, "rdm", step, x0, MAX_ROUNDS, "psdsf-distributed (async)", env.n_servers,
                                    False, resume=(rnd, prev))
        bad = theorem1_violations(env, x)
        if bad:
            raise PSDSFError(f"psdsf-distributed: output fails Theorem 1: {bad[0]}")
    info = {"rounds": rounds, "passes": -(-rounds // env.n_servers), "method": "distributed-async/" + method, "mode": "rdm", "theorem": 1,
            "unique_totals": None}
    return as_allocation(env, x, "psdsf-distributed", exact, info)
