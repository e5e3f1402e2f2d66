"""Per-Server Dominant-Share Fairness (PS-DSF), seeds 000 (short) and 002 (long version).

Notation (seed 002 Sec. III; ``j`` = the paper's ``n``, ``s`` = its ``i``, ``w_j`` = ``phi_n``)
--------------------------------------------------------------------------------------------
* ``gamma[j,s] = delta[j,s] min_r c[s,r] / d[j,s,r]`` (002 eq. (7), 000 eq. (8)): tasks ``j`` runs
  when it monopolises ``s``.  ``d[j,s]`` is the per-server demand (Sec. IV ``server_demand``), so the
  co-processor and wireless-channel extensions need no special case (see "Sec. IV" below).
  Server ``s`` is *eligible* for ``j`` when ``gamma[j,s] > 0`` (``Environment.usable``).
* virtual dominant share (VDS, 002 Def. 2 eq. (8), 000 eq. (12)): ``s[j,s] = x_j / gamma[j,s]`` with
  ``x_j = sum_s x[j,s]``; its weighted form, the *key* ``k[j,s] = x_j / (w_j gamma[j,s])``.
* PS-DSF (002 Def. 5, 000 Def. 2): ``x_j`` cannot be increased while staying feasible without
  decreasing some ``x[m,s]`` with ``k[m,s] <= k[j,s]``.

The characterisations every output is checked against
----------------------------------------------------
* RDM (002 Thm 1 / Def. 6, 000 Thm 1 / Def. 3): for every user ``j`` and every eligible ``s`` there
  is a *bottleneck* ``r``: ``d[j,s,r] > 0``, ``r`` saturated at ``s``, and ``k[j,s] >= k[m,s]`` for
  every ``m`` with ``x[m,s] d[m,s,r] > 0``  (:func:`theorem1_violations`).
* TDM (002 Thm 2): every server with an eligible user is fully time-shared (eq. (10) with
  equality) and ``k[j,s] >= k[m,s]`` for every eligible ``j`` and every ``m`` with ``x[m,s] > 0``
  (:func:`theorem2_violations`).

How the allocation is computed (and why that is the paper's Algorithm I)
-----------------------------------------------------------------------
Fix every column but server ``s``'s and call ``h_j = x_j - x[j,s]`` the *head start* of ``j``.
Theorem 1 restricted to server ``s`` says: every eligible user has a saturated demanded resource
whose users all have keys ``(h_m + x[m,s]) / (w_m gamma[m,s])`` no larger than its own.  That is
the bottleneck characterisation of max-min fairness of these keys over server ``s``'s polytope,
and a max-min fair vector on a convex set is unique (Radunovic & Le Boudec): server ``s``'s column
is a *function* ``BR_s(h)`` of the head starts.  So

    x is PS-DSF   <=>   x[., s] = BR_s(x)   for every server s          (a fixed point)

``BR_s`` is what the "server procedure" of Algorithm I (002 Table II, 000 Algorithm I: the inner
``while (N_i != {})`` loop with Update-Allocation) converges to: that loop stops exactly when every
user has a bottleneck at ``s``.  We compute ``BR_s`` directly by *water filling* with head starts
(:func:`server_response`): raise a level ``L``; user ``j`` holds ``max(0, L w_j gamma[j,s] - h_j)``
tasks; when a resource saturates, every user demanding it is frozen (the users of the resource have
keys <= L, the frozen user's key is >= L: a bottleneck).  This takes at most ``2 x users`` events,
each exact and rational, where the paper's beta-steps may need many (or, in degenerate cases,
infinitely many) small steps.  The literal Table II procedure is also here
(:func:`server_procedure_table2`) and the tests check both give the same column.

``psdsf-rdm`` / ``psdsf-tdm`` are Algorithm I: initial allocation = weighted DRF on every server
separately (``BR_s`` with zero head starts), then passes over the servers in instance order, each
server replacing its column by ``BR_s`` of the current allocation (Gauss-Seidel), until a whole
pass changes nothing ("Last-round-flag = 1").  Every step is rational, so exact mode is exact.
``info["rounds"]`` counts the passes (the last one confirms the fixed point).

Convergence is not proved in the paper (002 footnote 5: "will be studied in our future work").
Passes are bounded (``MAX_ROUNDS``).  If the exact iteration has not reached its fixed point by
then (it can approach it geometrically), the *pattern* of the last iterate (its support, the
saturated resources, each user's bottleneck at each server) turns Theorem 1/2 into linear
constraints; the point of that polytope nearest (L1) to the iterate is found by an exact LP and
accepted only if it passes the exact Theorem-1/2 check (``info["method"] = "algorithm-i/pattern-lp"``;
on 62 random small instances needing it, the result equalled the limit of Algorithm I to 1e-9 in 61
and to 1e-7 in one).
If that fails too, :class:`PSDSFError` is raised -- the mechanism never loops forever and never
returns an allocation that fails its characterisation.

Non-uniqueness and what ``psdsf-rdm`` returns
---------------------------------------------
PS-DSF allocations need not be unique: per-server splits rarely are (the 120-server cluster of Fig. 5
has a continuum), and under RDM even the totals can differ -- on two identical servers [2, 3] with
users d = [3, 2] (weight 2) and [1, 4], both (64/57, 36/57) and (52/51, 39/68) pass Theorem 1, and
the second is Pareto-dominated by the first (tests/test_psdsf.py).
``psdsf-rdm`` returns the deterministic fixed point described above (server order = instance
order, ties irrelevant because ``BR_s`` is unique).  ``info["unique_totals"]``: ``None`` for RDM
(not known), ``True`` for TDM: Theorem 2 is exactly the equilibrium of a linear Fisher market
(server ``s`` is a good with price ``1/min_j k[j,s]``, user ``j`` has budget ``w_j`` and utility
``sum_s gamma[j,s] (time share of s)``), i.e. the optimum of the Eisenberg-Gale program
``max sum_j w_j log x_j`` over the TDM polytope; its totals are unique.

Sec. IV extensions
------------------
* demands that differ per server (wireless channels, Fig. 4; co-processors): the instance field
  ``server_demand`` (``Environment.d(j, s)``).  gamma is eq. (7) with that demand.
* "gamma given per server" (co-processor scenario 2): under TDM only ``gamma`` matters, and
  :func:`server_demand_for_gamma` gives the per-server demand ``d[j] * (gamma_0 / gamma)`` whose
  eq.-(7) gamma is exactly the given one.  Under RDM a bare gamma does not say which resources a
  task consumes, so the per-server demand vector is the honest input; no separate gamma field is
  needed in the model.

Distributed version (002 Sec. III-D, 000 Sec. III-D)
----------------------------------------------------
:func:`run_distributed` lets each server run its procedure from its own capacities and the users'
totals only, in synchronous, sequential, round-robin, asynchronous (one random server per round),
random-subset or user-given schedules, with an optional set of active users per round (the Sec. V
experiment: user 4 inactive during (100, 250) s); it returns the whole trajectory.
Servers must act one at a time: when every server runs simultaneously from the same totals
("sync"), the iteration can oscillate for ever -- on the paper's own Fig. 5 cluster it alternates
between two allocations from round 2 on (tests/test_psdsf.py), and random halves of the servers
acting together did not settle there in 120 rounds (4 seeds).  ``psdsf-distributed`` is therefore the allocation reached by
the asynchronous schedule (one uniformly random server per round, seed 0) from Algorithm I's
initial allocation, checked by Theorem 1; it can differ from ``psdsf-rdm`` where PS-DSF is not
unique.
"""
from __future__ import annotations

from dataclasses import replace as dc_replace

import random as _random
import weakref
from fractions import Fraction
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from mechverify.allocation import Allocation, feasibility_violations
from mechverify.lp import LinearProgram, solve
from mechverify.model import Environment
from mechverify.numbers import InstanceError

from .registry import Claim, Setting, register

__all__ = [
    "PSDSFError", "gamma_matrix", "vds", "keys", "theorem1_violations", "theorem2_violations",
    "characterisation_violations", "server_response", "server_procedure_table2", "per_server_drf_start",
    "algorithm_i", "psdsf", "run_distributed", "server_demand_for_gamma", "MAX_ROUNDS",
]

MAX_ROUNDS = 300  # rounds (passes) before giving up
EXACT_ROUNDS = 40  # exact rounds before switching to rounded iterates and the pattern LP
DENOMINATOR_LIMIT = 1 << 256  # exact iterates with larger denominators switch earlier
APPROX_BITS = 80
CHECKPOINTS = (40, 60, 90, 130, 200)
ZERO = Fraction(0)


class PSDSFError(RuntimeError):
    """The PS-DSF computation did not reach an allocation satisfying Theorem 1/2."""


Matrix = list  # list[list[Fraction]]


# ---------------------------------------------------------------------- basics
def _check_env(env: Environment) -> None:
    for j in range(env.n_users):
        for s in range(env.n_servers):
            if s in env.eligible[j] and all(v == 0 for v in env.d(j, s)):
                raise InstanceError(f"users[{j}].demand: zero on every resource at server {env.servers[s]!r}; "
                                    f"PS-DSF needs gamma[j,s] finite (002 eq. (7))")
    if env.n_external:
        raise InstanceError("external: PS-DSF is defined without external resources")
    if env.has_bounds:
        j = next(j for j in range(env.n_users) if env.tasks[j] is not None)
        raise InstanceError(f"users[{j}].tasks: PS-DSF is defined for unbounded task counts")


_GAMMA_CACHE: dict[int, tuple[Any, list]] = {}


def gamma_matrix(env: Environment) -> list[list[Fraction]]:
    """``gamma[j][s]`` (002 eq. (7)); 0 where ``j`` may not or cannot run.  Cached per environment
    (environments are immutable); do not modify the returned lists."""
    hit = _GAMMA_CACHE.get(id(env))
    if hit is not None and hit[0]() is env:
        return hit[1]
    g = [[env.gamma(j, s) if env.usable(j, s) else ZERO for s in range(env.n_servers)]
         for j in range(env.n_users)]
    if len(_GAMMA_CACHE) > 256:
        _GAMMA_CACHE.clear()
    _GAMMA_CACHE[id(env)] = (weakref.ref(env), g)
    return g


def _totals(x: Matrix) -> list:
    return [sum(row, ZERO) for row in x]


def vds(env: Environment, x: Sequence[Sequence[Any]]) -> list[list[Optional[Fraction]]]:
    """Virtual dominant shares ``s[j][s] = x_j / gamma[j,s]`` (002 eq. (8)); ``None`` where not eligible."""
    g = gamma_matrix(env)
    tot = _totals([list(r) for r in x])
    return [[(tot[j] / g[j][s]) if g[j][s] else None for s in range(env.n_servers)] for j in range(env.n_users)]


def keys(env: Environment, x: Sequence[Sequence[Any]]) -> list[list[Optional[Fraction]]]:
    """Weighted VDS ``k[j][s] = x_j / (w_j gamma[j,s])``; ``None`` where not eligible."""
    v = vds(env, x)
    return [[None if v[j][s] is None else v[j][s] / env.weight[j] for s in range(env.n_servers)]
            for j in range(env.n_users)]


def _server_demands(env: Environment, s: int, mode: str, users: Sequence[int], g) -> tuple[list, list]:
    """Demand vectors and capacities of server ``s`` as water-filling input.  TDM is one resource,
    time, of capacity 1 of which a task of ``j`` uses ``1/gamma[j,s]`` (002 eq. (10))."""
    if mode == "tdm":
        return [(1 / g[j][s],) for j in users], [Fraction(1)]
    return [tuple(env.d(j, s)) for j in users], list(env.capacity[s])


# ---------------------------------------------------------------------- characterisations
def theorem1_violations(env: Environment, x: Sequence[Sequence[Any]]) -> list[str]:
    """002 Thm 1 (RDM): users without a bottleneck resource at an eligible server, plus feasibility."""
    out = list(feasibility_violations(env, x, "rdm"))
    if out:
        return out
    k = keys(env, x)
    J, S, R = env.n_users, env.n_servers, env.n_resources
    for s in range(S):
        used = [sum((x[m][s] * env.d(m, s)[r] for m in range(J)), ZERO) for r in range(R)]
        for j in range(J):
            if k[j][s] is None:
                continue
            ok = False
            for r in range(R):
                if env.d(j, s)[r] <= 0 or used[r] != env.capacity[s][r]:
                    continue
                if all(k[m][s] <= k[j][s] for m in range(J) if x[m][s] * env.d(m, s)[r] > 0):
                    ok = True
                    break
            if not ok:
                out.append(f"Thm 1: {env.users[j]} has no bottleneck resource at {env.servers[s]} "
                           f"(key x_j/(w_j gamma) = {k[j][s]})")
    return out


def theorem2_violations(env: Environment, x: Sequence[Sequence[Any]]) -> list[str]:
    """002 Thm 2 (TDM): eq. (10) with equality at every server with an eligible user, and (13)."""
    out = list(feasibility_violations(env, x, "tdm"))
    if out:
        return out
    k = keys(env, x)
    g = gamma_matrix(env)
    J, S = env.n_users, env.n_servers
    for s in range(S):
        elig = [j for j in range(J) if g[j][s]]
        if not elig:
            continue
        share = sum((x[j][s] / g[j][s] for j in elig), ZERO)
        if share != 1:
            out.append(f"Thm 2: time shares at {env.servers[s]} sum to {share} != 1")
        kmin = min(k[j][s] for j in elig)
        for m in elig:
            if x[m][s] > 0 and k[m][s] > kmin:
                out.append(f"Thm 2: {env.users[m]} holds tasks at {env.servers[s]} with key {k[m][s]} > "
                           f"min key {kmin}")
    return out


def characterisation_violations(env: Environment, x, mode: str) -> list[str]:
    return theorem1_violations(env, x) if mode == "rdm" else theorem2_violations(env, x)


# ---------------------------------------------------------------------- one server's procedure
def _waterfill(heads: Sequence[Fraction], weights: Sequence[Fraction], demands: Sequence[Sequence[Fraction]],
               cap: Sequence[Fraction]) -> list[Fraction]:
    """Max-min fair column of one server for keys ``(h_u + y_u) / w_u`` (see module docstring).

    Exact; at most ``2 U`` events.  Every user must demand some resource of positive capacity and
    no resource of zero capacity (gamma > 0)."""
    U, R = len(heads), len(cap)
    start = [heads[u] / weights[u] for u in range(U)]
    frozen = [False] * U
    y = [ZERO] * U
    used_frozen = [ZERO] * R
    if U == 0:
        return y
    L = min(start)
    for _ in range(2 * U + 2):
        live = [u for u in range(U) if not frozen[u]]
        if not live:
            return y
        active = [u for u in live if start[u] <= L]
        waiting = [start[u] for u in live if start[u] > L]
        next_start = min(waiting) if waiting else None
        sat_level = None
        for r in range(R):
            rate = sum((weights[u] * demands[u][r] for u in active), ZERO)
            if rate <= 0:
                continue
            base = used_frozen[r] - sum((heads[u] * demands[u][r] for u in active), ZERO)
            lev = (cap[r] - base) / rate
            if sat_level is None or lev < sat_level:
                sat_level = lev
        if sat_level is None or (next_start is not None and next_start < sat_level):
            if next_start is None:
                raise PSDSFError("water filling: no resource limits the active users (gamma = inf?)")
            L = next_start
            continue
        L = max(L, sat_level)
        usage = [used_frozen[r] + sum(((L * weights[u] - heads[u]) * demands[u][r] for u in active), ZERO)
                 for r in range(R)]
        saturated = [r for r in range(R) if usage[r] >= cap[r] and any(demands[u][r] > 0 for u in live)]
        to_freeze = [u for u in live if any(demands[u][r] > 0 for r in saturated)]
        if not to_freeze:  # cannot happen: the saturating resource is demanded by an active user
            raise PSDSFError("water filling: a resource saturated without freezing anyone")
        for u in to_freeze:
            frozen[u] = True
            if start[u] <= L:
                y[u] = L * weights[u] - heads[u]
                for r in range(R):
                    used_frozen[r] += y[u] * demands[u][r]
    raise PSDSFError("water filling did not finish")  # pragma: no cover


def server_response(env: Environment, x: Sequence[Sequence[Any]], s: int, mode: str = "rdm",
                    users: Optional[Iterable[int]] = None, totals: Optional[Sequence[Fraction]] = None
                    ) -> list[Fraction]:
    """Server ``s``'s procedure: the column ``BR_s`` (exact) given every other column of ``x``.

    Uses only server ``s``'s capacities, the users' demands there, their weights and their totals
    elsewhere -- the information of 002 Sec. III-D.  ``users`` restricts the participants (active
    users); others get 0 at ``s``."""
    g = gamma_matrix(env)
    part = [j for j in (range(env.n_users) if users is None else users) if g[j][s]]
    col = [ZERO] * env.n_users
    if not part:
        return col
    heads = [sum((x[j][t] for t in range(env.n_servers) if t != s), ZERO) for j in part]
    weights = [env.weight[j] * g[j][s] for j in part]
    dem, cap = _server_demands(env, s, mode, part, g)
    y = _waterfill(heads, weights, dem, cap)
    for u, j in enumerate(part):
        col[j] = y[u]
    return col


def server_procedure_table2(env: Environment, x: Sequence[Sequence[Any]], s: int, mode: str = "rdm",
                            max_steps: int = 10000) -> tuple[list[Fraction], int]:
    """The literal server procedure of 002 Table II / 000 Algorithm I for server ``s`` (exact).

    Returns ``(column, number of Update-Allocation calls)``.  Reading of the printed steps:
    ``S* = min key`` over ``N_s`` (eq. (16)), ``N*`` its minimisers, ``R*`` the saturated resources
    demanded by some user of ``N*``.  A resource ``r`` of ``R*`` passes the Corollary-1 test when no
    user holding ``r`` at ``s`` has a key above ``S*`` (the printed test takes the max over ``N_s``;
    users already removed from ``N_s`` that hold ``r`` have keys <= S*, so this is the same test and
    is well defined when no user of ``N_s`` holds ``r``); then every user demanding ``r`` leaves
    ``N_s`` (eq. (17)).  Otherwise Update-Allocation: ``n_r`` = holder of ``r`` with the largest key
    (ties: lowest index), free resources ``f`` plus the release of every ``n_r``,
    ``D* = sum_{N*} w gamma d``, ``z* = min_r f_r / D*_r``, and beta the LARGEST value in (0, 1] with
    ``S* + beta z* <= (x_{n_r} - beta x[n_r,s]) / (w gamma)`` for every ``r``."""
    J = env.n_users
    g = gamma_matrix(env)
    col = [x[j][s] for j in range(J)]
    other = [sum((x[j][t] for t in range(env.n_servers) if t != s), ZERO) for j in range(J)]
    N = [j for j in range(J) if g[j][s]]
    dem_list, cap = _server_demands(env, s, mode, N, g)
    dem = {j: dem_list[u] for u, j in enumerate(N)}
    R = len(cap)

    def key(j):
        return (other[j] + col[j]) / (env.weight[j] * g[j][s])

    steps = 0
    while N:
        kk = {j: key(j) for j in N}
        Sstar = min(kk.values())
        Nstar = [j for j in N if kk[j] == Sstar]
        used = [sum((col[j] * dem[j][r] for j in dem), ZERO) for r in range(R)]
        Rstar = [r for r in range(R) if used[r] >= cap[r] and any(dem[j][r] > 0 for j in Nstar)]
        passed = None
        for r in Rstar:
            holders = [m for m in dem if col[m] * dem[m][r] > 0]
            if all(key(m) <= Sstar for m in holders):
                passed = r
                break
        if passed is not None:
            N = [j for j in N if dem[j][passed] <= 0]
            continue
        steps += 1
        if steps > max_steps:
            raise PSDSFError(f"Table II server procedure at {env.servers[s]}: more than {max_steps} "
                             f"Update-Allocation steps")
        f = [cap[r] - used[r] for r in range(R)]
        released = []
        for r in Rstar:
            cands = [j for j in N if col[j] * dem[j][r] > 0]
            nr = max(cands, key=lambda j: (kk[j], -j))
            if nr not in released:
                released.append(nr)
        for nr in released:
            for r in range(R):
                f[r] += col[nr] * dem[nr][r]
        Dstar = [sum((env.weight[j] * g[j][s] * dem[j][r] for j in Nstar), ZERO) for r in range(R)]
        zstar = min(f[r] / Dstar[r] for r in range(R) if Dstar[r] > 0)
        beta = Fraction(1)
        for nr in released:
            wg = env.weight[nr] * g[nr][s]
            b = (kk[nr] - Sstar) / (zstar + col[nr] / wg)
            if b < beta:
                beta = b
        if beta <= 0:
            raise PSDSFError("Table II server procedure: beta = 0 (no progress)")
        for j in Nstar:
            col[j] += beta * env.weight[j] * g[j][s] * zstar
        for nr in released:
            col[nr] = (1 - beta) * col[nr]
    return col, steps


# ---------------------------------------------------------------------- Algorithm I
def per_server_drf_start(env: Environment, mode: str = "rdm", users: Optional[Iterable[int]] = None) -> Matrix:
    """Algorithm I's initialisation: weighted DRF on every server separately (zero head starts)."""
    zero = [[ZERO] * env.n_servers for _ in range(env.n_users)]
    x = [row[:] for row in zero]
    ulist = None if users is None else list(users)
    for s in range(env.n_servers):
        col = server_response(env, zero, s, mode, ulist)
        for j in range(env.n_users):
            x[j][s] = col[j]
    return x


def _max_denominator(x: Matrix) -> int:
    return max((v.denominator for row in x for v in row), default=1)


def _round_down(x: Matrix, bits: int = APPROX_BITS) -> Matrix:
    """Every entry rounded down to a multiple of ``2**-bits`` (stays feasible: demands are >= 0)."""
    q = 1 << bits
    return [[Fraction((v.numerator * q) // v.denominator, q) for v in row] for row in x]


def _gauss_seidel_pass(env: Environment, x: Matrix, mode: str, users=None) -> int:
    """One pass of Algorithm I's main loop over the servers in order; returns the number of updates."""
    updates = 0
    tot = _totals(x)
    for s in range(env.n_servers):
        col = server_response(env, x, s, mode, users, tot)
        if any(col[j] != x[j][s] for j in range(env.n_users)):
            updates += 1
            for j in range(env.n_users):
                tot[j] += col[j] - x[j][s]
                x[j][s] = col[j]
    return updates


def _iterate(env: Environment, mode: str, step: Callable[[Matrix, int], Matrix], x: Matrix, max_passes: int,
             label: str, pass_len: int = 1, full: bool = True) -> tuple[Matrix, int, str]:
    """Drive ``step`` (one round: old matrix, round number -> new matrix) to an exact PS-DSF allocation.

    ``full``: every server runs in every round (then a round that changes nothing is Algorithm I's
    "Last-round-flag = 1": a fixed point, which satisfies Theorem 1/2).  Otherwise ``pass_len``
    rounds make one *pass* and the iterate is checked against Theorem 1/2 after every pass.  Either
    way the method is ``"fixed-point"``.  Exact rounds while denominators stay moderate
    (``EXACT_ROUNDS`` passes); after that the iterate is rounded down to ``2**-APPROX_BITS`` every
    round (cheap, still feasible) and, at the ``CHECKPOINTS``, the pattern LP is tried (method
    ``"pattern-lp"``).  An exact period-2 cycle of a full schedule raises at once.  Returns
    ``(x, rounds, method)``; raises :class:`PSDSFError` after ``max_passes`` passes."""
    prev: Optional[Matrix] = None
    exact_phase = True
    max_rounds = max_passes * pass_len
    for rnd in range(1, max_rounds + 1):
        new = step(x, rnd)
        end_of_pass = rnd % pass_len == 0
        if exact_phase:
            if full and new == x:
                return new, rnd, "fixed-point"
            if not full and end_of_pass and not characterisation_violations(env, new, mode):
                return new, rnd, "fixed-point"
            if full and prev is not None and new == prev:
                raise PSDSFError(f"{label}: the iteration cycles with period 2 (rounds {rnd - 1}, {rnd}) and "
                                 f"never reaches a PS-DSF allocation")
            if rnd >= EXACT_ROUNDS * pass_len or _max_denominator(new) > DENOMINATOR_LIMIT:
                exact_phase = False
        else:
            new = _round_down(new)
        prev, x = x, new
        passes = rnd // pass_len
        if (not exact_phase and end_of_pass and passes in CHECKPOINTS) or rnd == max_rounds:
            polished = _pattern_lp(env, x, mode)
            if polished is not None and not characterisation_violations(env, polished, mode):
                return polished, rnd, "pattern-lp"
    raise PSDSFError(f"{label}: no PS-DSF allocation reached in {max_rounds} rounds (convergence of the "
                     f"server procedures is not proved, 002 footnote 5)")


def algorithm_i(env: Environment, mode: str = "rdm", max_rounds: int = MAX_ROUNDS,
                initial: Optional[Sequence[Sequence[Any]]] = None) -> tuple[Matrix, int, str]:
    """Algorithm I: per-server DRF, then Gauss-Seidel passes.  Returns ``(x, rounds, method)``."""
    x = per_server_drf_start(env, mode) if initial is None else [[Fraction(v) for v in row] for row in initial]

    def step(cur: Matrix, rnd: int) -> Matrix:
        nxt = [r[:] for r in cur]
        _gauss_seidel_pass(env, nxt, mode)
        return nxt

    return _iterate(env, mode, step, x, max_rounds, f"psdsf-{mode} (Algorithm I)")


def _pattern_lp(env: Environment, approx: Matrix, mode: str, tol: float = 1e-9) -> Optional[Matrix]:
    """Exact PS-DSF allocation with the combinatorial pattern of ``approx`` (see module docstring).

    Variables ``x[j,s] >= 0`` on the support of ``approx`` (others 0) and ``e[j,s] >= |x - approx|``.
    Rows: RDM (TDM) feasibility; saturation of the resources ``approx`` saturates (every server with
    an eligible user under TDM); for each eligible (j, s) with chosen bottleneck ``b`` and each
    holder ``m`` of ``b``: ``x_m/(w_m gamma[m,s]) <= x_j/(w_j gamma[j,s])``.  Minimise ``sum e``."""
    g = gamma_matrix(env)
    J, S, R = env.n_users, env.n_servers, env.n_resources
    fx = [[float(v) for v in row] for row in approx]
    ftot = [sum(r) for r in fx]
    scale = max([1.0] + [abs(v) for row in fx for v in row])
    lp = LinearProgram(maximize=False)
    var: dict[tuple[int, int], int] = {}
    for j in range(J):
        for s in range(S):
            if g[j][s] and fx[j][s] > tol * scale:
                var[(j, s)] = lp.add_var(0, None, 0, name=f"x[{j},{s}]")
    cost = {}
    for (j, s), c in var.items():
        a = Fraction(approx[j][s])
        e = lp.add_var(0, None, 0, name=f"e[{j},{s}]")
        cost[e] = 1
        lp.add_row({e: 1, c: -1}, -a, None)
        lp.add_row({e: 1, c: 1}, a, None)
    lp.set_cost(cost)

    def total_form(j, coef):
        return {var[(j, t)]: coef for t in range(S) if (j, t) in var}

    def add_leq(m, s, j):  # key[m,s] <= key[j,s]
        row: dict[int, Fraction] = {}
        for c, v in total_form(m, 1 / (env.weight[m] * g[m][s])).items():
            row[c] = row.get(c, ZERO) + v
        for c, v in total_form(j, -1 / (env.weight[j] * g[j][s])).items():
            row[c] = row.get(c, ZERO) + v
        if row:
            lp.add_row(row, None, 0)

    fk = [[(ftot[j] / (float(env.weight[j]) * float(g[j][s]))) if g[j][s] else None for s in range(S)]
          for j in range(J)]
    for s in range(S):
        elig = [j for j in range(J) if g[j][s]]
        if not elig:
            continue
        if mode == "tdm":
            row = {var[(j, s)]: 1 / g[j][s] for j in elig if (j, s) in var}
            if not row:
                return None
            lp.add_row(row, 1, 1)
            holders = [m for m in elig if (m, s) in var]
            for j in elig:
                for m in holders:
                    if m != j:
                        add_leq(m, s, j)
            continue
        dem = {j: env.d(j, s) for j in range(J)}
        sat = []
        for r in range(R):
            coeffs = {var[(j, s)]: dem[j][r] for j in range(J) if (j, s) in var and dem[j][r]}
            use = sum(fx[j][s] * float(dem[j][r]) for j in range(J))
            cap = env.capacity[s][r]
            is_sat = use >= float(cap) - tol * max(1.0, float(cap))
            if coeffs:
                lp.add_row(coeffs, cap if is_sat else None, cap)
            if is_sat:
                sat.append(r)
        for j in elig:
            best, best_key = None, None
            for r in sat:
                if dem[j][r] <= 0:
                    continue
                hk = max([fk[m][s] for m in range(J) if (m, s) in var and dem[m][r] > 0], default=0.0)
                if best is None or hk < best_key:
                    best, best_key = r, hk
            if best is None:
                return None
            for m in range(J):
                if m != j and (m, s) in var and dem[m][best] > 0:
                    add_leq(m, s, j)
    res = solve(lp, exact=True)
    if not res.ok:
        return None
    x = [[ZERO] * S for _ in range(J)]
    for (j, s), c in var.items():
        x[j][s] = Fraction(res.x[c])
    return x


def psdsf(env: Environment, mode: str = "rdm", max_rounds: int = MAX_ROUNDS,
          name: Optional[str] = None) -> tuple[Matrix, dict]:
    """Exact PS-DSF allocation (``x``, ``info``) by Algorithm I, verified by Theorem 1 (RDM) / 2 (TDM)."""
    if mode not in ("rdm", "tdm"):
        raise ValueError(f"mode: expected 'rdm' or 'tdm', got {mode!r}")
    _check_env(env)
    x, rounds, method = algorithm_i(env, mode, max_rounds)
    bad = characterisation_violations(env, x, mode)
    if bad:
        raise PSDSFError(f"{name or 'psdsf-' + mode}: output fails Theorem {1 if mode == 'rdm' else 2}: {bad[0]}")
    info = {"rounds": rounds, "method": "algorithm-i/" + method, "mode": mode, "theorem": 1 if mode == "rdm" else 2,
            "unique_totals": True if mode == "tdm" else None}
    return x, info


def _as_allocation(env: Environment, x: Matrix, name: str, exact: bool, info: dict) -> Allocation:
    rows = tuple(tuple(v if exact else float(v) for v in row) for row in x)
    return Allocation(env, rows, name, exact, info)


# ---------------------------------------------------------------------- distributed (Sec. III-D)
Schedule = Union[str, Callable[[int], Iterable[int]], Sequence[Iterable[int]]]


def _round_servers(schedule: Schedule, t: int, S: int, rng: _random.Random) -> tuple[list[int], bool]:
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


def _apply_round(env: Environment, mode: str, cur: Matrix, servers: list[int], in_order: bool,
                 users: Optional[list[int]] = None, tot: Optional[list] = None) -> tuple[Matrix, list]:
    """The servers of one round run their procedure: one after the other, or all from ``cur``.
    ``tot``: the row sums of ``cur`` if known.  Returns the new matrix and its row sums."""
    S, J = env.n_servers, env.n_users
    for s in servers:
        if not (isinstance(s, int) and 0 <= s < S):
            raise ValueError(f"schedule: unknown server index {s!r}")
    nxt = [r[:] for r in cur]
    tot = _totals(cur) if tot is None else list(tot)
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


def _schedule_step(env: Environment, mode: str, schedule: Schedule, rng: _random.Random,
                   users: Optional[list[int]] = None) -> Callable[[Matrix, int], Matrix]:
    last: dict[str, Any] = {"x": None, "tot": None}  # row sums of the matrix returned last time

    def step(cur: Matrix, t: int) -> Matrix:
        servers, in_order = _round_servers(schedule, t, env.n_servers, rng)
        tot = last["tot"] if cur is last["x"] else None
        nxt, tot = _apply_round(env, mode, cur, servers, in_order, users, tot)
        last["x"], last["tot"] = nxt, tot
        return nxt

    return step


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

    Schedules where several servers act at once can oscillate (see the module docstring).
    ``initial``: the starting allocation (default: Algorithm I's per-server DRF over the users active
    in round 1).  ``active``: a function ``t -> user indices`` (or a list indexed by ``t - 1``, its
    last entry repeating) of the users active in round ``t``; an inactive user's tasks are released at the start of the round and
    it takes no part (002 Sec. V: user 4 inactive during (100, 250) s).  ``x(0)`` is the initial
    allocation; entries of inactive users are 0 in every later allocation.  Exact arithmetic
    throughout (long runs that converge only geometrically grow denominators; keep ``rounds``
    moderate or use :func:`distributed_fixed_point`)."""
    if mode not in ("rdm", "tdm"):
        raise ValueError(f"mode: expected 'rdm' or 'tdm', got {mode!r}")
    if not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"rounds: expected a non-negative integer, got {rounds!r}")
    _check_env(env)
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
    traj = [_as_allocation(env, [r[:] for r in x], name, True, {"round": 0})]
    for t in range(1, rounds + 1):
        act = active_at(t)
        aset = set(act)
        for j in range(J):
            if j not in aset:
                x[j] = [ZERO] * S
        servers, in_order = _round_servers(schedule, t, S, rng)
        x, _ = _apply_round(env, mode, x, servers, in_order, act)
        traj.append(_as_allocation(env, [r[:] for r in x], name, True,
                                   {"round": t, "active": act, "servers": servers}))
    return traj


def distributed_fixed_point(env: Environment, mode: str = "rdm", schedule: str = "async",
                            max_passes: int = MAX_ROUNDS, seed: int = 0) -> tuple[Matrix, int, str]:
    """Where the distributed algorithm settles from Algorithm I's initial allocation: ``(x, rounds,
    method)``; stops at the first iterate satisfying Theorem 1/2.  Raises :class:`PSDSFError` if the
    schedule cycles (the synchronous schedule oscillates with period 2 on the Fig. 5 cluster, see
    tests/test_psdsf.py) or does not settle within ``max_passes`` passes."""
    _check_env(env)
    if schedule not in ("sync", "sequential", "round-robin", "async", "random"):
        raise ValueError(f"schedule: expected 'sync', 'sequential', 'round-robin', 'async' or 'random', "
                         f"got {schedule!r}")
    x = per_server_drf_start(env, mode)
    step = _schedule_step(env, mode, schedule, _random.Random(seed))
    full = schedule in ("sync", "sequential")
    pass_len = env.n_servers if schedule in ("round-robin", "async") else (1 if full else 2)
    return _iterate(env, mode, step, x, max_passes, f"psdsf-distributed ({schedule})", pass_len, full)


# ---------------------------------------------------------------------- Sec. IV helper
def server_demand_for_gamma(env: Environment, j: int, s: int, gamma: Any) -> tuple[Fraction, ...]:
    """Per-server demand of ``j`` at ``s`` whose eq.-(7) gamma equals ``gamma`` (002 Sec. IV scenario 2).

    ``d[j,s] * gamma_0 / gamma`` where ``gamma_0`` is the monopoly count of ``j``'s base demand ``d[j]``
    at ``s``: a co-processor that speeds every resource of the task up by ``gamma / gamma_0``.  Under
    TDM this is exact (only gamma matters); under RDM it is that modelling choice."""
    from mechverify.numbers import to_fraction

    gf = to_fraction(gamma, f"gamma[{j},{s}]")
    if gf <= 0:
        raise InstanceError(f"gamma[{j},{s}]: must be > 0 (got {gamma!r})")
    base = env.demand[j]
    g0 = None
    for r, dr in enumerate(base):
        if dr > 0:
            q = env.capacity[s][r] / dr
            g0 = q if g0 is None or q < g0 else g0
    if g0 is None or g0 == 0:
        raise InstanceError(f"gamma[{j},{s}]: user {env.users[j]!r} cannot run at {env.servers[s]!r} "
                            f"with its base demand (gamma_0 = {g0})")
    return tuple(dr * g0 / gf for dr in base)


# ---------------------------------------------------------------------- claims and registration
_T2 = "000 Sec. III-B Thm 2 (short version: no RDM/TDM distinction; feasibility is RDM eq. (9))"
_T3 = "002 Sec. III-B Thm 3"
_T3_PO = ("002 Sec. III-B after Thm 3: 'PS-DSF does not satisfy Pareto optimality in case of RDM. This is "
          "the reason why strategy proofness is not generally satisfied in case of RDM'")
_L1 = ("002 Lemma 1 (RDM, all d[n,r] > 0): a user cannot decrease the others' utilization by lying "
       "without decreasing its own -- weaker than SP")

PSDSF_RDM_CLAIMS = (
    # seed 000 (short version) -- all six properties, in general
    Claim("po", "holds", _T2), Claim("sp", "holds", _T2), Claim("ef", "holds", _T2),
    Claim("si", "holds", _T2, variant="per-server-split"), Claim("bf", "holds", _T2, variant="per-server"),
    Claim("srf", "holds", _T2),
    # seed 002 (long version) -- conflicts with 000 on PO and SP under RDM
    Claim("po", "fails", _T3_PO), Claim("sp", "fails", _T3_PO, note=_L1),
    Claim("ef", "holds", _T3), Claim("si", "holds", _T3, variant="per-server-split"),
    Claim("bf", "holds", _T3, variant="per-server"), Claim("srf", "holds", _T3),
)
PSDSF_TDM_CLAIMS = (
    Claim("po", "holds", _T3 + " (TDM)"), Claim("sp", "holds", _T3 + " (TDM)"), Claim("ef", "holds", _T3),
    Claim("si", "holds", _T3, variant="per-server-split"), Claim("bf", "holds", _T3, variant="per-server"),
    Claim("srf", "holds", _T3),
)


def _basic_model(claims: tuple) -> tuple:
    """The theorems are proved for one demand vector per user; Sec. IV (per-server demands,
    co-processors) is an extension the papers leave to future work, so 'holds' claims do not cover it."""
    return tuple(dc_replace(c, domain=c.domain + ("uniform_demands",)) if c.status == "holds" else c for c in claims)


PSDSF_RDM_CLAIMS = _basic_model(PSDSF_RDM_CLAIMS)
PSDSF_TDM_CLAIMS = _basic_model(PSDSF_TDM_CLAIMS)
_SETTING_NOTE = ("no external resources, no task bounds (the papers have neither); per-server demands "
                 "(Sec. IV) allowed")


def _mech(env: Environment, exact: bool, mode: str, name: str) -> Allocation:
    x, info = psdsf(env, mode, name=name)
    return _as_allocation(env, x, name, exact, info)


@register("psdsf-rdm", "PS-DSF under resource division (RDM): Algorithm I fixed point, checked by Thm 1",
          Setting(placement=True, external=False, bounds=False, weights=True, server_demand=True, feasibility="rdm"),
          PSDSF_RDM_CLAIMS, source="000 Sec. III; 002 Sec. III (Def. 5, Thm 1, Table II)",
          notes="Deterministic: per-server weighted DRF, then Gauss-Seidel server procedures in server order "
                "until a pass changes nothing. PS-DSF allocations need not be unique. " + _SETTING_NOTE)
def psdsf_rdm(env: Environment, exact: bool = False) -> Allocation:
    return _mech(env, exact, "rdm", "psdsf-rdm")


@register("psdsf-tdm", "PS-DSF under time division (TDM): Algorithm I fixed point, checked by Thm 2",
          Setting(placement=True, external=False, bounds=False, weights=True, server_demand=True, feasibility="tdm"),
          PSDSF_TDM_CLAIMS, source="002 Sec. III (Def. 4, Def. 5, Thm 2)",
          notes="Totals are unique (Thm 2 = linear Fisher-market equilibrium). " + _SETTING_NOTE)
def psdsf_tdm(env: Environment, exact: bool = False) -> Allocation:
    return _mech(env, exact, "tdm", "psdsf-tdm")


@register("psdsf-distributed", "PS-DSF, distributed (Sec. III-D): asynchronous server procedures until Thm 1 holds",
          Setting(placement=True, external=False, bounds=False, weights=True, server_demand=True, feasibility="rdm"),
          PSDSF_RDM_CLAIMS, source="000 Sec. III-D; 002 Sec. III-D",
          notes="One uniformly random server (seed 0) runs its procedure per round, from Algorithm I's "
                "initial allocation, until Thm 1 holds (RDM). Simultaneous updates can oscillate for ever. "
                "Trajectories: mechanisms.psdsf.run_distributed. " + _SETTING_NOTE)
def psdsf_distributed(env: Environment, exact: bool = False) -> Allocation:
    x, rounds, method = distributed_fixed_point(env, "rdm", "async")
    bad = theorem1_violations(env, x)
    if bad:
        raise PSDSFError(f"psdsf-distributed: output fails Theorem 1: {bad[0]}")
    info = {"rounds": rounds, "passes": -(-rounds // env.n_servers), "method": "distributed-async/" + method, "mode": "rdm", "theorem": 1,
            "unique_totals": None}
    return _as_allocation(env, x, "psdsf-distributed", exact, info)
