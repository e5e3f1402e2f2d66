"""Algorithm I (002 Table II, 000 Algorithm I): per-server DRF, then Gauss-Seidel passes of ``BR_s``.

Every step is rational, so the fixed point is exact.  Convergence is not proved in the paper (002
footnote 5), so passes are bounded; an iteration that only approaches its fixed point geometrically
is finished by the *pattern LP* (the last iterate's support, saturated resources and bottlenecks turn
Theorem 1/2 into linear constraints; the nearest point is accepted only if it passes the exact
check).  Otherwise :class:`PSDSFError` -- never an endless loop, never an output that fails its
characterisation.  :func:`psdsf` first tries the fast path (``fast.py``: float iteration, one exact
solve of the fixed point's pattern; then the exact phase on int pairs), which gives the same output.
Details: docs/psdsf.md, "How Algorithm I is computed" and "The fast path".
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.lp import LinearProgram, solve
from mechverify.model import Environment

from .algorithm import per_server_drf_start, server_response
from .fast import exact_iteration, fast_fixed_point, fixed_point_check
from .shares import ZERO, Matrix, PSDSFError, check_env, gamma_matrix, totals
from .theorems import characterisation_violations

__all__ = ["algorithm_i", "psdsf", "iterate", "gauss_seidel_pass", "pattern_lp", "round_down", "as_allocation",
           "MAX_ROUNDS", "EXACT_ROUNDS", "DENOMINATOR_LIMIT", "APPROX_BITS", "CHECKPOINTS"]

MAX_ROUNDS = 300  # rounds (passes) before giving up
EXACT_ROUNDS = 40  # exact rounds before switching to rounded iterates and the pattern LP
DENOMINATOR_LIMIT = 1 << 256  # exact iterates with larger denominators switch earlier
APPROX_BITS = 80
CHECKPOINTS = (40, 60, 90, 130, 200)


def max_denominator(x: Matrix) -> int:
    """Largest denominator in ``x``."""
    return max((v.denominator for row in x for v in row), default=1)


def round_down(x: Matrix, bits: int = APPROX_BITS) -> Matrix:
    """Every entry rounded down to a multiple of ``2**-bits`` (stays feasible: demands are >= 0)."""
    q = 1 << bits
    return [[Fraction((v.numerator * q) // v.denominator, q) for v in row] for row in x]


def gauss_seidel_pass(env: Environment, x: Matrix, mode: str, users=None) -> int:
    """One pass of Algorithm I's main loop over the servers in order; returns the number of updates."""
    updates = 0
    tot = totals(x)
    for s in range(env.n_servers):
        col = server_response(env, x, s, mode, users, tot)
        if any(col[j] != x[j][s] for j in range(env.n_users)):
            updates += 1
            for j in range(env.n_users):
                tot[j] += col[j] - x[j][s]
                x[j][s] = col[j]
    return updates


def iterate(env: Environment, mode: str, step: Callable[[Matrix, int], Matrix], x: Matrix, max_passes: int,
             label: str, pass_len: int = 1, full: bool = True,
             resume: Optional[tuple[int, Matrix]] = None) -> tuple[Matrix, int, str]:
    """Drive ``step`` (one round: old matrix, round number -> new matrix) to an exact PS-DSF allocation.

    ``full``: every server runs in every round (then a round that changes nothing is Algorithm I's
    "Last-round-flag = 1": a fixed point, which satisfies Theorem 1/2).  Otherwise ``pass_len``
    rounds make one *pass* and the iterate is checked against Theorem 1/2 after every pass.  Either
    way the method is ``"fixed-point"``.  Exact rounds while denominators stay moderate
    (``EXACT_ROUNDS`` passes); after that the iterate is rounded down to ``2**-APPROX_BITS`` every
    round (cheap, still feasible) and, at the ``CHECKPOINTS``, the pattern LP is tried (method
    ``"pattern-lp"``).  An exact period-2 cycle of a full schedule raises at once.  Returns
    ``(x, rounds, method)``; raises :class:`PSDSFError` after ``max_passes`` passes.

    ``resume = (rnd, prev)``: rounds ``1..rnd`` were done elsewhere with the same arithmetic (the exact
    phase, ``fast.exact_iteration``), which ended after round ``rnd`` with ``x``; ``prev`` is the
    iterate before that round.  The loop continues exactly where it would be."""
    prev: Optional[Matrix] = None
    exact_phase = True
    max_rounds = max_passes * pass_len
    first = 1
    if resume is not None:
        rnd, prev = resume
        exact_phase, first = False, rnd + 1
        if ((rnd % pass_len == 0 and rnd // pass_len in CHECKPOINTS) or rnd == max_rounds):
            polished = pattern_lp(env, x, mode)
            if polished is not None and not characterisation_violations(env, polished, mode):
                return polished, rnd, "pattern-lp"
    for rnd in range(first, max_rounds + 1):
        new = step(x, rnd)
        end_of_pass = rnd % pass_len == 0
        if exact_phase:
            if full and new == x:
                return new, rnd, "fixed-point"
            if full and fixed_point_check(env, new, mode):  # the next round would change nothing
                return new, rnd + 1, "fixed-point"
            if not full and end_of_pass and fixed_point_check(env, new, mode):
                return new, rnd, "fixed-point"
            if full and prev is not None and new == prev:
                raise PSDSFError(f"{label}: the iteration cycles with period 2 (rounds {rnd - 1}, {rnd}) and "
                                 f"never reaches a PS-DSF allocation")
            if rnd >= EXACT_ROUNDS * pass_len or max_denominator(new) > DENOMINATOR_LIMIT:
                exact_phase = False
        else:
            new = round_down(new)
        prev, x = x, new
        passes = rnd // pass_len
        if (not exact_phase and end_of_pass and passes in CHECKPOINTS) or rnd == max_rounds:
            polished = pattern_lp(env, x, mode)
            if polished is not None and not characterisation_violations(env, polished, mode):
                return polished, rnd, "pattern-lp"
    raise PSDSFError(f"{label}: no PS-DSF allocation reached in {max_rounds} rounds (convergence of the "
                     f"server procedures is not proved, 002 footnote 5)")


def algorithm_i(env: Environment, mode: str = "rdm", max_rounds: int = MAX_ROUNDS,
                initial: Optional[Sequence[Sequence[Any]]] = None,
                resume: Optional[tuple[int, Matrix, Matrix]] = None) -> tuple[Matrix, int, str]:
    """Algorithm I: per-server DRF, then Gauss-Seidel passes.  Returns ``(x, rounds, method)``.
    ``resume = (rnd, x, prev)``: continue after the exact phase's round ``rnd`` (see :func:`iterate`)."""
    if resume is not None:
        return _algorithm_i_loop(env, mode, max_rounds, resume[1], (resume[0], resume[2]))
    x = per_server_drf_start(env, mode) if initial is None else [[Fraction(v) for v in row] for row in initial]
    return _algorithm_i_loop(env, mode, max_rounds, x, None)


def _algorithm_i_loop(env: Environment, mode: str, max_rounds: int, x: Matrix, resume) -> tuple[Matrix, int, str]:

    def step(cur: Matrix, rnd: int) -> Matrix:
        nxt = [r[:] for r in cur]
        gauss_seidel_pass(env, nxt, mode)
        return nxt

    return iterate(env, mode, step, x, max_rounds, f"psdsf-{mode} (Algorithm I)", resume=resume)


def pattern_lp(env: Environment, approx: Matrix, mode: str, tol: float = 1e-9) -> Optional[Matrix]:
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
          name: Optional[str] = None, fast: bool = True) -> tuple[Matrix, dict]:
    """Exact PS-DSF allocation (``x``, ``info``) by Algorithm I, verified by Theorem 1 (RDM) / 2 (TDM).

    ``fast``: first the float iteration and one exact pattern solve (``fast.py``; its output passed
    the same theorem check, in integers); the exact iteration only if that gives up."""
    if mode not in ("rdm", "tdm"):
        raise ValueError(f"mode: expected 'rdm' or 'tdm', got {mode!r}")
    check_env(env)
    got = fast_fixed_point(env, mode, "sequential", max_passes=max_rounds) if fast else None
    if got is not None:
        x, rounds = got
        method = "pattern-solve"
    else:
        # the exact phase on int pairs (the same iterates), then the rest of the iteration if needed
        got = exact_iteration(env, mode, "sequential", exact_passes=min(EXACT_ROUNDS, max_rounds),
                              max_denominator=DENOMINATOR_LIMIT) if fast else None
        if got is not None and got[0] == "done":
            x, rounds, method = got[1], got[2], "fixed-point"
        else:
            resume = got[1:4] if got is not None else None
            x, rounds, method = algorithm_i(env, mode, max_rounds, resume=resume)
        if not fixed_point_check(env, x, mode):  # the theorem's conditions in integers; the message below
            bad = characterisation_violations(env, x, mode) or ["(integer check)"]
            raise PSDSFError(f"{name or 'psdsf-' + mode}: output fails Theorem {1 if mode == 'rdm' else 2}: "
                             f"{bad[0]}")
    info = {"rounds": rounds, "method": "algorithm-i/" + method, "mode": mode, "theorem": 1 if mode == "rdm" else 2,
            "unique_totals": True if mode == "tdm" else None}
    return x, info


def as_allocation(env: Environment, x: Matrix, name: str, exact: bool, info: dict) -> Allocation:
    """The exact matrix ``x`` as an ``Allocation`` (floats unless ``exact``)."""
    rows = tuple(tuple(v if exact else float(v) for v in row) for row in x)
    return Allocation(env, rows, name, exact, info)
