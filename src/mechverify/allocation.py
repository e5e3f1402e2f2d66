"""Allocations (task matrices), bundles and feasibility.

An allocation is the task matrix ``x[j,s] >= 0`` computed from the *reported* environment.
Allocations are non-wasteful (seed 001 Def. 1 / Lemma 1, seed 004 eqs. (3)-(4)): user ``j``
receives exactly the bundle

    A[j,s,r] = x[j,s] * d_rep[j,s,r]          (computational, per server)
    A_er[j,k] = sum_s x[j,s] * d_er_rep[j,k]  (external)

Feasibility (``x`` in chi(E), seed 004 eq. (2); seed 002 Defs. 3-4):

* placement:  ``x[j,s] = 0`` unless ``s in E_j``
* RDM:        ``sum_j x[j,s] d[j,s,r] <= c[s,r]``            for all s, r   (seed 002 eq. (9))
* TDM:        ``sum_j x[j,s] / gamma[j,s] <= 1``             for all s      (seed 002 eq. (10))
* external:   ``sum_j sum_s x[j,s] d_er[j,k] <= c_er[k]``   for all k      (seed 004 eq. (2))
* bounds:     ``sum_s x[j,s] <= n_j``                                      (seed 004 eq. (5))
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from fractions import Fraction
from math import isfinite
from typing import Any, Optional, Sequence

from .model import Environment
from .numbers import FLOAT_REL, as_float, as_floats, fmt_exact, fmt_value, fraction_sum, is_inf

__all__ = ["Allocation", "Bundle", "dominant_shares", "usage", "resource_totals", "seed_matrix", "float_totals",
           "RowReuse",
           "feasibility_violations", "is_feasible", "state_of",
           "float_matrix", "memo"]


@dataclass(frozen=True)
class Bundle:
    """What one user holds: ``amounts[s][r]`` per server and ``external[k]``."""

    amounts: tuple[tuple[Any, ...], ...]
    external: tuple[Any, ...]


@dataclass(frozen=True)
class Allocation:
    """Task matrix ``x[j][s]`` for the environment ``env`` (the environment the mechanism saw).

    ``exact`` says whether ``x`` holds exact ``Fraction``s that *are* the mechanism's allocation;
    float allocations are approximations.  ``info`` carries mechanism diagnostics (rounds,
    levels, the interval bounds of a non-exact mechanism, notes).
    """

    env: Environment
    x: tuple[tuple[Any, ...], ...]
    mechanism: str = ""
    exact: bool = False
    info: dict = field(default_factory=dict, compare=False)

    def __repr__(self) -> str:
        fmt = fmt_exact if self.exact else (lambda v: f"{float(v):.6g}")
        tot = ", ".join(f"{u} {fmt(t)}" for u, t in zip(self.env.users, self.totals()))
        return f"<Allocation {self.mechanism or '?'} ({'exact' if self.exact else 'float'}): tasks {tot}>"

    def total(self, j: int) -> Any:
        """``x_j = sum_s x[j,s]`` (the number of tasks the mechanism assigns to ``j``)."""
        row = self.x[j]
        return sum(row[1:], row[0]) if row else 0

    def totals(self) -> tuple[Any, ...]:
        """Every user's total ``x_j``."""
        T = float_totals(self)
        if T is not None:  # the same sums, left to right, over the whole matrix at once
            return tuple(T.tolist())
        return tuple(self.total(j) for j in range(self.env.n_users))

    def bundle(self, j: int) -> Bundle:
        """The non-wasteful bundle user ``j`` receives (computed with *reported* demands)."""
        env = self.env
        amounts = tuple(tuple(self.x[j][s] * v for v in env.d(j, s)) for s in range(env.n_servers))
        tot = self.total(j)
        ext = tuple(tot * v for v in env.external_demand[j])
        return Bundle(amounts=amounts, external=ext)

    def to_dict(self, exact: Optional[bool] = None) -> dict[str, Any]:
        """JSON result: ``{"mechanism", "users", "servers", "tasks", "totals"}`` (+ ``exact``)."""
        exact = self.exact if exact is None else exact
        conv = fmt_exact if exact else float
        return {
            "mechanism": self.mechanism,
            "users": list(self.env.users),
            "servers": list(self.env.servers),
            "tasks": [[conv(v) for v in row] for row in self.x],
            "totals": [conv(v) for v in self.totals()],
            "exact": bool(exact),
        }


def state_of(env: Environment) -> Allocation:
    """The state an instance carries (``Environment.usage``; none: the empty cluster) as an exact
    :class:`Allocation` -- what a production policy's order is read in (``mechanisms.OrderSpec``)."""
    from fractions import Fraction

    x = env.usage or tuple(tuple(Fraction(0) for _ in range(env.n_servers)) for _ in range(env.n_users))
    return Allocation(env, tuple(tuple(row) for row in x), "state", True)


def _le_tol(a: Any, b: Any, rel_tol: Optional[Fraction] = None) -> bool:
    if isinstance(a, (int, Fraction)) and isinstance(b, (int, Fraction)):
        return a <= b if rel_tol is None else a <= b + rel_tol * max(Fraction(1), abs(b))
    return float(a) <= float(b) + FLOAT_REL * max(1.0, abs(float(b)))


def _float_rdm_feasible(env: Environment, x: Sequence[Sequence[float]], check_placement: bool,
                        check_external: bool, check_bounds: bool) -> bool:
    """All-float RDM matrices: ``True`` when every check of :func:`feasibility_violations` passes, in plain
    float arithmetic (the general code's Fraction-float mixing costs ten times more).  ``False`` means
    "let the general code decide and word the violations" (it never overrules a violation)."""
    rel = FLOAT_REL
    for j, row in enumerate(x):
        el = env.eligible[j]
        for s, v in enumerate(row):
            if not isfinite(v) or (v < 0.0 and not 0.0 <= v + rel * max(1.0, -v)):
                return False
            if check_placement and v and s not in el and not v <= rel:
                return False
    tot = [sum(row) for row in x]
    for s in range(env.n_servers):
        held = [(x[j][s], env.d(j, s)) for j in range(env.n_users) if x[j][s]]
        if not held:
            continue
        for r, c in enumerate(env.capacity[s]):
            used = 0.0
            for v, d in held:
                dr = d[r]
                if dr:
                    used += v * as_float(dr)
            cf = as_float(c)
            if not used <= cf + rel * max(1.0, abs(cf)):
                return False
    if check_external:
        for k, c in enumerate(env.external_capacity):
            used = 0.0
            for j in range(env.n_users):
                dk = env.external_demand[j][k]
                if dk:
                    used += tot[j] * as_float(dk)
            cf = as_float(c)
            if not used <= cf + rel * max(1.0, abs(cf)):
                return False
    if check_bounds:
        for j, b in enumerate(env.tasks):
            if b is not None:
                bf = as_float(b)
                if not tot[j] <= bf + rel * max(1.0, abs(bf)):
                    return False
    return True


def _sum_le(terms: list, bound: Fraction) -> bool:
    """``sum(p * q for p, q in terms) <= bound`` for ``Fraction`` pairs, exactly, in integers: the sum
    ``n/d`` is accumulated without reducing (a few products per term instead of a gcd per operation)."""
    n, d = 0, 1
    for p, q in terms:
        pd = p._denominator * q._denominator
        n = n * pd + p._numerator * q._numerator * d
        d *= pd
    return n * bound._denominator <= bound._numerator * d


def _exact_rdm_feasible(env: Environment, x: Sequence[Sequence[Fraction]], check_placement: bool,
                        check_external: bool, check_bounds: bool) -> bool:
    """All-``Fraction`` RDM matrices without a tolerance: ``True`` when every check of
    :func:`feasibility_violations` passes, exactly, in integer arithmetic (:func:`_sum_le`); ``False``
    means "let the general code decide and word the violations"."""
    for j, row in enumerate(x):
        el = env.eligible[j]
        for s, v in enumerate(row):
            if v._numerator < 0 or (check_placement and v._numerator and s not in el):
                return False
    for s in range(env.n_servers):
        held = [(x[j][s], env.d(j, s)) for j in range(env.n_users) if x[j][s]._numerator]
        if not held:
            continue
        for r, c in enumerate(env.capacity[s]):
            if not _sum_le([(v, d[r]) for v, d in held if d[r]], c):
                return False
    if check_external and env.n_external:
        tot = [fraction_sum(row) if len(row) != 1 else row[0] for row in x]
        for k, c in enumerate(env.external_capacity):
            if not _sum_le([(tot[j], env.external_demand[j][k]) for j in range(env.n_users)
                            if tot[j] and env.external_demand[j][k]], c):
                return False
    if check_bounds:
        for j, b in enumerate(env.tasks):
            if b is not None and (fraction_sum(x[j]) if len(x[j]) != 1 else x[j][0]) > b:
                return False
    return True


def feasibility_violations(env: Environment, x: Sequence[Sequence[Any]], mode: str = "rdm",
                           check_placement: bool = True, check_external: bool = True,
                           check_bounds: bool = True, rel_tol: Optional[Any] = None) -> list[str]:
    """Every violated constraint of chi(E) as a readable line (empty list = feasible).

    Exact for ``Fraction`` entries (``rel_tol``: exactly within that relative tolerance, for a float
    implementation's numbers taken as written); floats get the relative tolerance ``FLOAT_REL``.
    ``mode`` is ``"rdm"`` (per-resource capacities) or ``"tdm"`` (time shares, seed 002 eq. (10)).
    """
    if mode not in ("rdm", "tdm"):
        raise ValueError(f"mode: expected 'rdm' or 'tdm', got {mode!r}")
    J, S, R = env.n_users, env.n_servers, env.n_resources
    tol = None if rel_tol is None else Fraction(rel_tol)

    def _le(a: Any, b: Any) -> bool:
        return _le_tol(a, b, tol)

    if len(x) != J or any(len(row) != S for row in x):
        return [f"shape: expected {J}x{S} task matrix"]
    if mode == "rdm" and all(v.__class__ is float for row in x for v in row):
        fast = _float_rdm_feasible(env, x, check_placement, check_external, check_bounds)
        if fast:
            return []
    elif mode == "rdm" and tol is None and all(v.__class__ is Fraction for row in x for v in row):
        if _exact_rdm_feasible(env, x, check_placement, check_external, check_bounds):
            return []
    out: list[str] = []
    for j in range(J):
        for s in range(S):
            v = x[j][s]
            if not _le(0, v):
                out.append(f"x[{env.users[j]},{env.servers[s]}] = {fmt_value(v)} < 0")
            elif check_placement and s not in env.eligible[j] and not _le(v, 0):
                out.append(f"placement: {env.users[j]} is not eligible at {env.servers[s]} but gets {fmt_value(v)}")
    if mode == "rdm":
        for s in range(S):
            held = [(x[j][s], env.d(j, s)) for j in range(J) if x[j][s]]  # zero entries use nothing
            if not held:
                continue  # capacities are >= 0
            cap = env.capacity[s]
            for r in range(R):
                used = sum((v * d[r] for v, d in held), 0)
                if not _le(used, cap[r]):
                    out.append(f"RDM: {env.servers[s]}.{env.resources[r]} uses {fmt_value(used)} > {fmt_value(cap[r])}")
    else:
        for s in range(S):
            share: Any = 0
            for j in range(J):
                if _le(x[j][s], 0):
                    continue
                g = env.monopoly_tasks(j, s)
                if g == 0:
                    out.append(f"TDM: {env.users[j]} gets tasks at {env.servers[s]} where gamma = 0")
                elif not is_inf(g):
                    share = share + x[j][s] / g
            if not _le(share, 1):
                out.append(f"TDM: time shares at {env.servers[s]} sum to {fmt_value(share)} > 1")
    if check_external and env.n_external:
        tot = [sum(x[j], 0) for j in range(J)]
        for k in range(env.n_external):
            used = sum((tot[j] * env.external_demand[j][k] for j in range(J)), 0)
            if not _le(used, env.external_capacity[k]):
                out.append(f"external: {env.external[k]} uses {fmt_value(used)} > {fmt_value(env.external_capacity[k])}")
    if check_bounds:
        for j in range(J):
            if env.tasks[j] is not None and not _le(sum(x[j], 0), env.tasks[j]):
                out.append(f"bound: {env.users[j]} gets {fmt_value(sum(x[j], 0))} > n_j = {fmt_value(env.tasks[j])}")
    return out


def is_feasible(env: Environment, x: Sequence[Sequence[Any]], mode: str = "rdm") -> bool:
    """``x`` is in chi(E) (no :func:`feasibility_violations`)."""
    return not feasibility_violations(env, x, mode)


def memo(a: Allocation) -> dict:
    """A per-allocation memo of derived values (an allocation is immutable; the memo is no field: it takes no
    part in ==, repr or replace())."""
    got = a.__dict__.get("_memo")
    if got is None:
        got = {}
        object.__setattr__(a, "_memo", got)
    return got


#: the vectorised float paths run from this many entries of the task matrix on (below, numpy's fixed cost per
#: call outweighs the loops; both give the same bits, tests/mechverify/test_execution_fast.py sets it to 0)
VECTOR_MIN = 32


def float_matrix(a: Allocation) -> Any:
    """``x`` as a ``J x S`` numpy float array when ``a`` is a float allocation whose every entry is a finite
    Python ``float`` and it has at least :data:`VECTOR_MIN` entries (memoised); ``None`` otherwise.  The vectorised
    float paths (:func:`usage`, :func:`dominant_shares`, ``Allocation.totals``, ``utility.utilities``) run only on
    it: they compute the same IEEE operations in the same order as the loops they replace
    (tests/mechverify/test_allocation_fast.py), which the ``Fraction``, ``int``, NaN and infinite entries would not
    all allow."""
    m = memo(a)
    got = m.get("X", False)
    if got is False and "X_build" in m:  # a matrix handed over lazily (seed_matrix)
        seed_matrix(a, m.pop("X_build")())
        got = m.get("X", False)
    if got is False:
        got = None
        x, S = a.x, a.env.n_servers
        if not a.exact and x and S and len(x) * S >= VECTOR_MIN and len(x) == a.env.n_users and set(map(len, x)) == {S} \
                and set(map(type, chain.from_iterable(x))) == {float}:
            import numpy as np

            X = np.array(x, dtype=float)
            if np.isfinite(X).all():
                got = X
        m["X"] = got
    return got


def seed_matrix(a: Allocation, X: Any) -> None:
    """Hand :func:`float_matrix` the ``J x S`` numpy matrix a float allocation's ``x`` was built from (``x`` =
    ``X.tolist()`` row by row: the same floats), so the vectorised paths skip converting it back; only where
    :func:`float_matrix` would take it (finite, at least :data:`VECTOR_MIN` entries, the shape of ``x``).  ``X``
    may be a function returning it: called when the matrix is first asked for (never, if nobody asks)."""
    if callable(X):
        memo(a)["X_build"] = X
        return
    x = a.x
    if not a.exact and X.ndim == 2 and X.shape == (len(x), a.env.n_servers) == (a.env.n_users, a.env.n_servers) \
            and X.size >= VECTOR_MIN:
        import numpy as np

        if np.isfinite(X).all():
            memo(a)["X"] = X


def _row_sums(X: Any, first: bool) -> Any:
    """Each row of ``X`` summed left to right: ``sum(row[1:], row[0])`` (``first``) or ``sum(row, 0.0)`` --
    ``np.add.accumulate`` adds in order (a ``sum`` reduction may pair terms up)."""
    import numpy as np

    if not first:
        if X.shape[1] == 1:  # 0.0 + x: the one addition
            return 0.0 + X[:, 0]
        X = np.concatenate((np.zeros((X.shape[0], 1)), X), axis=1)
    if X.shape[1] == 0:
        return np.zeros(X.shape[0])
    return np.add.accumulate(X, axis=1)[:, -1] if X.shape[1] > 1 else X[:, 0].copy()


def float_totals(a: Allocation) -> Any:
    """``Allocation.totals`` of an allocation with a :func:`float_matrix` as a numpy array (each row summed left to
    right, ``sum(row[1:], row[0])``), memoised; ``None`` without one.  Shared read-only."""
    m = memo(a)
    got = m.get("T", False)
    if got is False:
        X = float_matrix(a)
        got = m["T"] = None if X is None else _row_sums(X, first=True)
    return got


def _float_usage(a: Allocation) -> Any:
    """:func:`usage` of a float allocation as a ``J x (R + K)`` numpy array, the same sums in the same order
    (``None`` outside the vectorised case: per-server demands, or no :func:`float_matrix`); memoised on the
    allocation (a simulation's utilisation and dominant shares read the same one).  Shared read-only."""
    m = memo(a)
    got = m.get("U", False)
    if got is False:
        got = m["U"] = _float_usage_of(a)
    return got


def _float_usage_of(a: Allocation) -> Any:
    X = float_matrix(a)
    env = a.env
    if X is None or env.server_demand:
        return None
    return _usage_rows(env, X, slice(None))


def _usage_rows(env: Environment, X: Any, rows: Any) -> Any:
    """:func:`usage` of the users ``rows`` (a slice or indices) whose rows of the task matrix are ``X``."""
    import numpy as np

    fl = env.floats()
    J = X.shape[0]
    # per user and resource: 0.0 + x[j,0] d[j,r] + x[j,1] d[j,r] + ... in server order (a zero x adds +-0.0,
    # which leaves a sum that starts at +0.0 unchanged: the loop's skipping of zeros changes nothing)
    if X.shape[1] == 1:  # one server: 0.0 + x d, the one addition
        U = 0.0 + X[:, :1] * fl.demand[rows]
    else:
        P = np.concatenate((np.zeros((J, 1, env.n_resources)), X[:, :, None] * fl.demand[rows][:, None, :]), axis=1)
        U = np.add.accumulate(P, axis=1)[:, -1, :]
    if env.n_external:
        U = np.concatenate((U, 0.0 + _row_sums(X, first=False)[:, None] * fl.external_demand[rows]), axis=1)
    return U


class RowReuse:
    """Each user's :func:`usage` and total (``Allocation.totals``) of the float allocations of one run, kept
    across its steps: a user whose row of the task matrix is the very SAME tuple object as when they were last
    computed, with the same demand and external demand objects, gets them again (each is a function of those
    alone: the row's own sums); the others are computed, on their rows only, by the operations of the whole-matrix
    path (the same bits).  A stepper that keeps a user's row while its tasks stay put (the indivisible lift) makes
    a step cost the users whose tasks moved.  Exact allocations and per-server demands: computed as usual.
    The lists handed out are shared: read them, never write them."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last: dict = {}  # user -> (row, demand, external demand, usage, total)

    def usage(self, a: Allocation) -> list:
        return self._both(a)[0]

    def totals(self, a: Allocation) -> list:
        return self._both(a)[1]

    def _both(self, a: Allocation) -> tuple:
        m = memo(a)
        got = m.get("row_reuse")
        if got is not None:
            return got
        env = a.env
        if a.exact or env.server_demand:
            got = m["row_reuse"] = (usage(a), list(a.totals()))
            return got
        names, x, dem, ext, last = env.users, a.x, env.demand, env.external_demand, self.last
        J = env.n_users
        uses: list = [None] * J
        tots: list = [None] * J
        missing = []
        for j in range(J):
            hit = last.get(names[j])
            if hit is not None and hit[0] is x[j] and hit[1] is dem[j] and hit[2] is ext[j]:
                uses[j], tots[j] = hit[3], hit[4]
            else:
                missing.append(j)
        if missing:
            sub = _float_rows(a, missing)
            if sub is None:  # an int, a Fraction, a NaN or an infinity: the general paths, nothing kept
                full_u, full_t = usage(a), a.totals()
                for j in missing:
                    uses[j], tots[j] = full_u[j], full_t[j]
                    last.pop(names[j], None)
            else:
                U = _usage_rows(env, sub, missing).tolist()
                T = _row_sums(sub, first=True).tolist() if env.n_servers else [0] * len(missing)
                for k, j in enumerate(missing):
                    uses[j], tots[j] = U[k], T[k]
                    last[names[j]] = (x[j], dem[j], ext[j], U[k], T[k])
            if len(last) > 2 * J + 64:  # users who left
                keep = set(names)
                for u in [u for u in last if u not in keep]:
                    del last[u]
        got = m["row_reuse"] = (uses, tots)
        return got


def _float_rows(a: Allocation, rows: list) -> Any:
    """The rows ``rows`` of ``a``'s task matrix as a numpy float array when every entry is a finite ``float``
    (what :func:`float_matrix` requires of the whole); ``None`` otherwise."""
    import numpy as np

    got = memo(a).get("X")
    if got is not None:
        return got[rows]
    x = a.x
    if set(map(type, chain.from_iterable(x[j] for j in rows))) - {float}:
        return None
    X = np.array([x[j] for j in rows], dtype=float).reshape(len(rows), a.env.n_servers)
    return X if np.isfinite(X).all() else None


def usage(a: "Allocation") -> list[list[Any]]:
    """What each user's allocation uses: per user, per resource summed over servers, then per external
    resource (``x[j,s] * d[j,s,r]``, the non-wasteful bundle).  Exact for an exact allocation; a float one is
    summed in floats."""
    if not a.exact:
        U = _float_usage(a)
        if U is not None:
            return U.tolist()
    env = a.env
    R, S, K = env.n_resources, env.n_servers, env.n_external
    exact = a.exact
    zero: Any = Fraction(0) if exact else 0.0
    out = []
    for j in range(env.n_users):
        use = [zero] * (R + K)
        row = a.x[j]
        for s in range(S):
            x = row[s]
            if x:
                d = env.d(j, s)
                if not exact:
                    d, x = as_floats(d), float(x)
                for r in range(R):
                    use[r] += x * d[r]
        if K:
            tasks = sum(row, zero)
            ext = env.external_demand[j] if exact else as_floats(env.external_demand[j])
            for k in range(K):
                use[R + k] += tasks * ext[k]
        out.append(use)
    return out


def resource_totals(a: "Allocation", used: Optional[list] = None) -> list[Any]:
    """What ``a`` uses in all per resource (computational, then external): the users' :func:`usage` summed in
    user order from ``0`` (``used``: :func:`usage` already computed).  A float allocation's in one pass over its
    usage array (``np.add.accumulate`` down each column from ``0.0``: the same additions in the same order)."""
    if used is None and not a.exact:
        U = _float_usage(a)
        if U is not None:
            return _row_sums(U.T, first=False).tolist()
    used = usage(a) if used is None else used
    return [sum(col) for col in zip(*used)] if used else [0] * (a.env.n_resources + a.env.n_external)


def dominant_shares(a: "Allocation", by_queue: bool = False, used: Optional[list] = None) -> dict[str, Any]:
    """Each present user's (``by_queue``: each queue's; a user outside every queue stays on its own) dominant
    share under ``a``: the largest, over the resources with positive total capacity in the present cluster
    (and the external ones), of what its allocation uses over that capacity (:func:`usage`; ``used``: already
    computed).  Exact for an exact allocation."""
    env = a.env
    zero: Any = Fraction(0) if a.exact else 0.0
    caps = list(env.total_capacity()) + list(env.external_capacity)
    if not a.exact:
        caps = [float(c) for c in caps]
        if not by_queue or not any(q is not None for q in env.user_queue):
            U = _float_usage(a) if used is None else None
            if U is not None or (used is not None and set(map(type, chain.from_iterable(used))) <= {float}):
                return _float_dominant_shares(env, caps, U if U is not None else used)
    used = usage(a) if used is None else used
    groups: dict[str, list[Any]] = {}
    for j, u in enumerate(env.users):
        name = u
        if by_queue and env.user_queue[j] is not None:
            name = env.queues[env.user_queue[j]]
        if name in groups:
            groups[name] = [x + y for x, y in zip(groups[name], used[j])]
        else:
            groups[name] = used[j]
    out = {}
    for name, use in groups.items():
        shares = [x / c for x, c in zip(use, caps) if c > 0]
        out[name] = max(shares, default=zero)
    return out


def _float_dominant_shares(env: Environment, caps: list, used: Any) -> dict[str, Any]:
    """:func:`dominant_shares` per user of a float allocation, vectorised: each user's largest ``use / c``
    over the capacities ``c > 0`` (the same divisions; a maximum is exact)."""
    import numpy as np

    U = np.asarray(used, dtype=float).reshape(env.n_users, len(caps))
    keep = [r for r, c in enumerate(caps) if c > 0]
    if not keep:
        return dict.fromkeys(env.users, 0.0)
    shares = (U[:, keep] / np.array([caps[r] for r in keep])).max(axis=1)
    return dict(zip(env.users, shares.tolist()))
