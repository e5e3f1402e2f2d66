"""The independent checker of exact LP certificates: plain ``fractions.Fraction`` arithmetic, no solver.

A certificate (docs/certificates.md) states a claim about an instance that rests on a linear program --
"this allocation is Pareto optimal", "this allocation is dominated by that one", "this is the maximal
common level of the scores", "no allocation gives every user these tasks" -- together with the numbers
that prove it: a primal point, dual multipliers, or a Farkas ray.  This module re-derives the LP from the
INSTANCE with its own code (it never reads ``polytope.py``, ``domination.py``, ``lexmaxmin.py`` or
``utility.py``, and imports no solver and no numpy), then checks the numbers.  What it trusts: Python's
``Fraction``, the one instance parser (``mechverify.instances``, which defines the format) and the
~300 lines below.  The LP rows a certificate carries (``lp.rows``, for a reader with another tool) are
compared with the re-derived ones, never used.

The LP form (every LP here is a maximisation over non-negative columns)::

    max  c^T y   s.t.   a_i^T y <= b_i   (rows of sense "<=")
                        a_i^T y >= b_i   (rows of sense ">=")
                        y >= 0

Written as ``A' y <= b'`` with ``s_i = +1`` for "<=" and ``s_i = -1`` for ">=" rows (``a'_i = s_i a_i``,
``b'_i = s_i b_i``), a DUAL certificate is multipliers ``lambda_i >= 0`` (missing rows: 0) with

    dual feasibility    sum_i lambda_i a'_ic >= c_c   for every column c,
    weak duality        c^T y = sum_c c_c y_c <= sum_i lambda_i a'_i y <= sum_i lambda_i b'_i  for feasible y,

so ``b'^T lambda`` bounds the optimum; a feasible primal ``y`` with ``c^T y == b'^T lambda`` is optimal and
the optimum is exactly that number (strong duality, checked as an equality of Fractions).  A FARKAS ray is
``lambda >= 0`` with ``sum_i lambda_i a'_ic >= 0`` for every column and ``b'^T lambda < 0``: then
``0 <= lambda^T A' y <= b'^T lambda < 0`` for any ``y >= 0`` satisfying the rows -- there is none.

The feasible set chi(E) (docs/model.md; one column ``y[u,s]`` per user ``u`` and server ``s`` where ``u`` is
eligible and ``s`` has every resource ``u`` demands there):

* mode ``rdm``: ``cap[s,r]``: ``sum_u d[u,s,r] y[u,s] <= c[s,r]`` (rows without a coefficient omitted);
* mode ``tdm``: ``tdm[s]``: ``sum_u y[u,s] / g[u,s] <= 1``, ``g[u,s] = min_{r: d>0} c[s,r] / d[u,s,r]``;
* ``ext[k]``: ``sum_u d_er[u,k] sum_s y[u,s] <= c_er[k]``;  ``bound[u]``: ``sum_s y[u,s] <= n_u``.

Claims (``claim.kind``):

* ``pareto-optimal``: with ``u_j`` the tasks the stored allocation gives user ``j`` (its utility, computed
  here), the domination LP ``max sum y  s.t. y in chi(E), target[u]: sum_s y[u,s] >= u_j (u_j > 0)`` has
  optimum ``sum_j u_j``: a primal point and a dual certificate with equal objectives.  Then no allocation
  gives every user at least as much and someone more.
* ``dominated``: the stored primal ``y`` is in chi(E) and gives every user at least ``u_j`` and someone
  more (no dual needed; a dual, if given, proves ``sum y`` is the largest total a dominating allocation
  reaches).
* ``level``: the stored allocation and ``t = level`` are feasible for ``max t  s.t. y in chi(E),
  level[u]: sum_s y[u,s] / (w_u N_u) - t >= 0`` (participating users: ``N_u`` finite and > 0, a column),
  and a dual certificate has objective ``level``.  ``N_u`` are re-derived from the normaliser's name.
* ``unreachable``: a Farkas ray proves that no ``y`` in chi(E) gives every user ``u`` at least
  ``targets[u]`` tasks (rows ``target[u]``).

Errors: :class:`Malformed` (the file is not a certificate: wrong JSON, a missing field, an inexact
number, an unknown claim) and :class:`Rejected` (a well-formed certificate whose numbers do not prove the
claim; ``where`` names the row or column that fails).
"""
from __future__ import annotations

import json
from fractions import Fraction
from typing import Any, Optional

from .instances import parse_environment
from .numbers import InstanceError

__all__ = ["FORMAT", "LPCertificateError", "Malformed", "Rejected", "LP", "derive_lp", "check_certificate",
           "check_file", "load_file", "lp_of", "check_primal", "check_optimal", "check_farkas", "col_name", "row_name", "utilities", "normalisers",
           "KINDS", "NORMALISERS"]

FORMAT = "mechverify-lp-certificate/1"
KINDS = ("pareto-optimal", "dominated", "level", "unreachable")
#: the normalisers N_u a level claim may name (mechanisms/paper/normalisers.py states the same formulas)
NORMALISERS = {
    "dominant-share": "min over demanded resources of c[first server,r] / d[u,r], external resources pooled (DRF)",
    "pooled-dominant-share": "min over demanded resources of (sum_s c[s,r]) / d[u,r] (DRFH)",
    "monopoly-sum": "sum over every server s of min_{r: d>0} c[s,r] / d[u,s,r], placement ignored (TSF)",
}
ZERO = Fraction(0)


class LPCertificateError(Exception):
    """An LP certificate that does not stand (see the subclasses)."""


class Malformed(LPCertificateError):
    """Not a certificate this checker reads: the message names the field."""


class Rejected(LPCertificateError):
    """Well formed, but the numbers do not prove the claim; ``where`` names the failing row or column."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where}: {why}")
        self.where, self.why = where, why


def col_name(user: str, server: str) -> str:
    """The column of user ``user`` on server ``server``."""
    return f"y[{user},{server}]"


def row_name(kind: str, *names: str) -> str:
    """A row: ``cap[s,r]``, ``tdm[s]``, ``ext[k]``, ``bound[u]``, ``target[u]``, ``level[u]``."""
    return f"{kind}[{','.join(names)}]"


class LP:
    """``max cost^T y`` over named columns ``y >= 0`` and named rows ``(coefficients, sense, rhs)``."""

    def __init__(self) -> None:
        self.cols: list[str] = []
        self.rows: dict[str, tuple[dict[str, Fraction], str, Fraction]] = {}
        self.cost: dict[str, Fraction] = {}

    def add_col(self, name: str) -> None:
        """A new column (names must be unique: instance names that make two alike are refused)."""
        if name in self.cost:
            raise Malformed(f"instance: two columns are both named {name!r} (names with ',' or brackets?)")
        self.cols.append(name)
        self.cost[name] = ZERO

    def add_row(self, name: str, coeffs: dict[str, Fraction], sense: str, rhs: Fraction) -> None:
        """A new row ``coeffs . y  sense  rhs``."""
        if name in self.rows:
            raise Malformed(f"instance: two rows are both named {name!r} (names with ',' or brackets?)")
        self.rows[name] = ({c: v for c, v in coeffs.items() if v}, sense, rhs)

    def to_json(self) -> dict:
        """The rows and objective as JSON (exact ``"p/q"`` strings), for a reader with another tool."""
        return {"sense": "max", "columns": list(self.cols),
                "objective": {c: _txt(v) for c, v in self.cost.items() if v},
                "rows": [{"name": n, "coeffs": {c: _txt(v) for c, v in co.items()}, "sense": s, "rhs": _txt(b)}
                         for n, (co, s, b) in self.rows.items()]}


# ---------------------------------------------------------------------- the LPs, re-derived from the instance
def _demand(env: Any, j: int, s: int) -> tuple:
    return env.server_demand.get((j, s), env.demand[j])


def _runs(env: Any, j: int, s: int) -> bool:
    """``j`` is eligible at ``s`` and ``s`` has every resource ``j`` demands there."""
    if s not in env.eligible[j]:
        return False
    return all(c > 0 for c, d in zip(env.capacity[s], _demand(env, j, s)) if d > 0)


def _monopoly(env: Any, j: int, s: int) -> Optional[Fraction]:
    """``min_{r: d>0} c[s,r] / d[j,s,r]`` (None: nothing demanded, infinitely many)."""
    vals = [c / d for c, d in zip(env.capacity[s], _demand(env, j, s)) if d > 0]
    return min(vals) if vals else None


def derive_lp(env: Any, mode: str) -> LP:
    """chi(E) (module docstring) for ``mode`` ``"rdm"`` or ``"tdm"``, with its columns and no objective."""
    lp = LP()
    cols: dict[tuple[int, int], str] = {}
    for j, u in enumerate(env.users):
        for s, srv in enumerate(env.servers):
            if _runs(env, j, s):
                cols[(j, s)] = col_name(u, srv)
                lp.add_col(cols[(j, s)])
    if mode == "rdm":
        for s, srv in enumerate(env.servers):
            for r, res in enumerate(env.resources):
                co = {cols[(j, s)]: _demand(env, j, s)[r] for j in range(len(env.users)) if (j, s) in cols}
                if any(co.values()):
                    lp.add_row(row_name("cap", srv, res), co, "<=", env.capacity[s][r])
    elif mode == "tdm":
        for s, srv in enumerate(env.servers):
            co = {}
            for j in range(len(env.users)):
                g = _monopoly(env, j, s) if (j, s) in cols else None
                if g is not None:
                    co[cols[(j, s)]] = 1 / g
            if co:
                lp.add_row(row_name("tdm", srv), co, "<=", Fraction(1))
    else:
        raise Malformed(f"feasible_set.mode: 'rdm' or 'tdm' (got {mode!r})")
    for k, ext in enumerate(env.external):
        co = {}
        for j in range(len(env.users)):
            dk = env.external_demand[j][k]
            if dk:
                co.update({cols[(j, s)]: dk for s in range(len(env.servers)) if (j, s) in cols})
        if co:
            lp.add_row(row_name("ext", ext), co, "<=", env.external_capacity[k])
    for j, u in enumerate(env.users):
        mine = [c for (jj, _), c in cols.items() if jj == j]
        if env.tasks[j] is not None and mine:
            lp.add_row(row_name("bound", u), {c: Fraction(1) for c in mine}, "<=", env.tasks[j])
    return lp


def _user_cols(env: Any, lp: LP, j: int) -> list[str]:
    return [c for s, srv in enumerate(env.servers) if (c := col_name(env.users[j], srv)) in lp.cost]


def utilities(env: Any, x: list) -> list[Fraction]:
    """The tasks ``u_j`` the task matrix ``x`` gives each user, by the model's utility (seed 004 eq. (1))
    for a bundle received with the true demands: ``min(sum over eligible s of x[j][s] (a server where j
    demands nothing: unbounded), the total if j demands an external resource, n_j)``."""
    out = []
    for j, u in enumerate(env.users):
        own: Optional[Fraction] = ZERO
        for s in sorted(env.eligible[j]):
            if not any(d > 0 for d in _demand(env, j, s)):
                own = None  # infinitely many tasks from this server: capped below
                break
            own += x[j][s]
        caps = [own] if own is not None else []
        if any(d > 0 for d in env.external_demand[j]):
            caps.append(sum(x[j], ZERO))
        if env.tasks[j] is not None:
            caps.append(env.tasks[j])
        if not caps:
            raise Malformed(f"instance: user {u} would run infinitely many tasks")
        out.append(min(caps))
    return out


def normalisers(env: Any, kind: str) -> list[Optional[Fraction]]:
    """``N_u`` of the normaliser ``kind`` (:data:`NORMALISERS`); None where it is infinite (the user's
    tasks use nothing it measures) -- a level claim with such a user is not checked here."""
    out: list[Optional[Fraction]] = []
    for j in range(len(env.users)):
        if kind == "dominant-share":
            pairs = list(zip(env.capacity[0], env.demand[j])) + list(zip(env.external_capacity,
                                                                         env.external_demand[j]))
        elif kind == "pooled-dominant-share":
            pooled = [sum((row[r] for row in env.capacity), ZERO) for r in range(len(env.resources))]
            pairs = list(zip(pooled, env.demand[j]))
        elif kind == "monopoly-sum":
            per = [_monopoly(env, j, s) for s in range(len(env.servers))]
            out.append(None if any(v is None for v in per) else sum(per, ZERO))
            continue
        else:
            raise Malformed(f"claim.normaliser: one of {', '.join(NORMALISERS)} (got {kind!r})")
        vals = [c / d for c, d in pairs if d > 0]
        out.append(min(vals) if vals else None)
    return out


# ---------------------------------------------------------------------- the checks
def _dual_columns(lp: LP, lam: dict[str, Fraction]) -> dict[str, Fraction]:
    """``sum_i lambda_i a'_ic`` for every column, after checking every multiplier names a row and is >= 0."""
    z = {c: ZERO for c in lp.cols}
    for name, v in lam.items():
        if name not in lp.rows:
            raise Rejected(name, "the dual names a row the instance does not define")
        if v < 0:
            raise Rejected(name, f"multiplier {_txt(v)} < 0")
        co, sense, _ = lp.rows[name]
        sign = 1 if sense == "<=" else -1
        for c, a in co.items():
            z[c] += sign * v * a
    return z


def _dual_objective(lp: LP, lam: dict[str, Fraction]) -> Fraction:
    return sum(((1 if lp.rows[n][1] == "<=" else -1) * v * lp.rows[n][2] for n, v in lam.items()), ZERO)


def check_primal(lp: LP, y: dict[str, Fraction]) -> Fraction:
    """``y >= 0`` satisfies every row; returns ``c^T y``.  Raises :class:`Rejected` naming the row."""
    for c, v in y.items():
        if c not in lp.cost:
            raise Rejected(c, "the primal names a column the instance does not define (not usable there)")
        if v < 0:
            raise Rejected(c, f"primal value {_txt(v)} < 0")
    for name, (co, sense, rhs) in lp.rows.items():
        act = sum((a * y.get(c, ZERO) for c, a in co.items()), ZERO)
        if (sense == "<=" and act > rhs) or (sense == ">=" and act < rhs):
            raise Rejected(name, f"primal infeasible: {_txt(act)} {'>' if sense == '<=' else '<'} {_txt(rhs)}")
    return sum((lp.cost[c] * v for c, v in y.items()), ZERO)


def check_optimal(lp: LP, y: dict[str, Fraction], lam: dict[str, Fraction]) -> Fraction:
    """Primal feasibility, dual feasibility and equal objectives: returns the optimum ``c^T y``."""
    primal = check_primal(lp, y)
    z = _dual_columns(lp, lam)
    for c in lp.cols:
        if z[c] < lp.cost[c]:
            raise Rejected(c, f"dual infeasible: sum of multipliers x coefficients {_txt(z[c])} < cost {_txt(lp.cost[c])}")
    dual = _dual_objective(lp, lam)
    if dual != primal:
        raise Rejected("objective", f"primal {_txt(primal)} != dual {_txt(dual)}")
    return primal


def check_farkas(lp: LP, ray: dict[str, Fraction]) -> Fraction:
    """``ray >= 0``, ``ray^T A' >= 0`` column by column, ``ray^T b' < 0``: the rows have no solution
    ``y >= 0``.  Returns ``ray^T b'``."""
    z = _dual_columns(lp, ray)
    for c in lp.cols:
        if z[c] < 0:
            raise Rejected(c, f"not a Farkas ray: its combination of the rows has {_txt(z[c])} < 0 here")
    rhs = _dual_objective(lp, ray)
    if rhs >= 0:
        raise Rejected("rhs", f"not a Farkas ray: the combined right-hand side {_txt(rhs)} is not < 0")
    return rhs


# ---------------------------------------------------------------------- reading a certificate
def _txt(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"


def _num(v: Any, where: str) -> Fraction:
    """An exact number: an int or a ``"p/q"`` / integer string (never a float, whose decimal may not be
    the number meant)."""
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise Malformed(f"{where}: expected an exact number (an integer or a 'p/q' string), got {v!r}")
    try:
        text = v.strip() if isinstance(v, str) else v
        if isinstance(text, str):
            num, _, den = text.partition("/")
            return Fraction(int(num), int(den)) if den else Fraction(int(num))
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise Malformed(f"{where}: not an exact number: {v!r}") from None


def _field(d: Any, key: str, where: str, kind: Any = dict) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise Malformed(f"{where}{key}: missing")
    if not isinstance(d[key], kind) or isinstance(d[key], bool):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise Malformed(f"{where}{key}: expected {names}, got {type(d[key]).__name__}")
    return d[key]


def _vector(d: Any, where: str) -> dict[str, Fraction]:
    if not isinstance(d, dict):
        raise Malformed(f"{where}: expected an object of name -> number")
    return {str(k): _num(v, f"{where}.{k}") for k, v in d.items()}


def _matrix(m: Any, env: Any, where: str) -> list[list[Fraction]]:
    if not isinstance(m, list) or len(m) != len(env.users) or any(
            not isinstance(row, list) or len(row) != len(env.servers) for row in m):
        raise Malformed(f"{where}: expected {len(env.users)} rows (users) of {len(env.servers)} numbers (servers)")
    x = [[_num(v, f"{where}[{j}][{s}]") for s, v in enumerate(row)] for j, row in enumerate(m)]
    for j, row in enumerate(x):
        for s, v in enumerate(row):
            if v < 0:
                raise Rejected(f"allocation[{env.users[j]},{env.servers[s]}]", f"negative tasks {_txt(v)}")
    return x


def _stored_rows_match(cert: dict, lp: LP) -> None:
    """The rows a certificate carries (optional) are the re-derived ones, row by row."""
    stored = cert.get("lp")
    if stored is None:
        return
    rows = _field(stored, "rows", "lp.", list)
    seen = set()
    for i, r in enumerate(rows):
        name = _field(r, "name", f"lp.rows[{i}].", str)
        seen.add(name)
        if name not in lp.rows:
            raise Rejected(name, "the certificate's LP has a row the instance does not define")
        co, sense, rhs = lp.rows[name]
        if (_vector(_field(r, "coeffs", f"lp.rows[{i}].", dict), f"lp.rows[{i}].coeffs") != co
                or r.get("sense") != sense or _num(r.get("rhs"), f"lp.rows[{i}].rhs") != rhs):
            raise Rejected(name, "the certificate's row differs from the one the instance defines")
    missing = [n for n in lp.rows if n not in seen]
    if missing:
        raise Rejected(missing[0], "the instance defines this row; the certificate's LP lacks it")
    if "columns" in stored and stored["columns"] != lp.cols:
        raise Rejected("lp.columns", "the certificate's columns are not the ones the instance defines")
    if "objective" in stored and _vector(stored["objective"], "lp.objective") != {c: v for c, v in lp.cost.items() if v}:
        raise Rejected("lp.objective", "the certificate's objective is not the claim's")
    if stored.get("sense", "max") != "max":
        raise Rejected("lp.sense", "every LP here is a maximisation")


def _build(cert: Any) -> dict:
    """Read a certificate and derive its claim's LP from the instance: ``{"kind", "env", "lp", "chi", ...}``
    (the allocation ``x`` and its tasks ``u``; the targets; the level and normaliser).  Raises
    :class:`Malformed` (and :class:`Rejected` for numbers that cannot be right, e.g. negative tasks)."""
    if not isinstance(cert, dict):
        raise Malformed("certificate: expected a JSON object")
    if cert.get("format") != FORMAT:
        raise Malformed(f"format: expected {FORMAT!r} (got {cert.get('format')!r})")
    claim = _field(cert, "claim", "")
    kind = _field(claim, "kind", "claim.", str)
    if kind not in KINDS:
        raise Malformed(f"claim.kind: one of {', '.join(KINDS)} (got {kind!r})")
    try:
        env = parse_environment(_field(cert, "instance", ""))
    except InstanceError as exc:
        raise Malformed(f"instance: {exc}") from None
    mode = _field(_field(cert, "feasible_set", ""), "mode", "feasible_set.", str)
    lp = derive_lp(env, mode)
    out: dict = {"kind": kind, "env": env, "lp": lp,
                 "chi": f"chi(E) ({mode}, true placement, external resources, task bounds)"}
    if kind == "unreachable":
        targets = _vector(_field(cert, "targets", ""), "targets")
        for name, tau in targets.items():
            if name not in env.users:
                raise Malformed(f"targets.{name}: no such user")
            cols = _user_cols(env, lp, env.users.index(name))
            lp.add_row(row_name("target", name), {c: Fraction(1) for c in cols}, ">=", tau)
        out["targets"] = targets
        return out
    x = out["x"] = _matrix(_field(cert, "allocation", "", list), env, "allocation")
    if kind == "level":
        nk = out["normaliser"] = _field(claim, "normaliser", "claim.", str)
        norms = normalisers(env, nk)
        stated = _field(cert, "normalisers", "", dict)
        out["level"] = _num(_field(cert, "level", "", (str, int)), "level")
        lp.add_col("t")
        lp.cost["t"] = Fraction(1)
        for j, u in enumerate(env.users):
            N = norms[j]
            if N is None:
                raise Rejected(f"normaliser[{u}]", "infinite (the user's tasks use nothing it measures): "
                                                   "the fallback conventions are not checked here")
            want = stated.get(u)
            if want is None or _num(want, f"normalisers.{u}") != N:
                raise Rejected(f"normaliser[{u}]", f"stated {want!r}, the instance gives {_txt(N)} ({nk})")
            mine = _user_cols(env, lp, j)
            if N > 0 and mine:
                co = {c: 1 / (env.weight[j] * N) for c in mine}
                co["t"] = Fraction(-1)
                lp.add_row(row_name("level", u), co, ">=", ZERO)
        return out
    u_alloc = out["u"] = utilities(env, x)
    lp.cost.update({c: Fraction(1) for c in lp.cols})
    for j, u in enumerate(env.users):
        if u_alloc[j] > 0:
            lp.add_row(row_name("target", u), {c: Fraction(1) for c in _user_cols(env, lp, j)}, ">=", u_alloc[j])
    return out


def lp_of(cert: Any) -> LP:
    """The LP a certificate's claim rests on, derived from its instance (and allocation)."""
    return _build(cert)["lp"]


def check_certificate(cert: Any) -> str:
    """Check one certificate (a decoded JSON object); returns what it proves, one line.  Raises
    :class:`Malformed` or :class:`Rejected`."""
    b = _build(cert)
    kind, env, lp, chi = b["kind"], b["env"], b["lp"], b["chi"]
    _stored_rows_match(cert, lp)
    if kind == "unreachable":
        check_farkas(lp, _vector(_field(cert, "ray", ""), "ray"))
        return (f"no allocation in {chi} gives every listed user at least its target "
                f"({', '.join(f'{u} {_txt(t)}' for u, t in b['targets'].items())} tasks): Farkas ray checked")
    x = b["x"]
    if kind == "level":
        y = {col_name(u, srv): x[j][s] for j, u in enumerate(env.users) for s, srv in enumerate(env.servers)
             if x[j][s]}
        y["t"] = b["level"]
        opt = check_optimal(lp, y, _vector(_field(cert, "dual", ""), "dual"))
        return (f"{_txt(opt)} is the maximal common level of x_u / (w_u N_u) ({b['normaliser']}) over {chi}, "
                f"and the allocation reaches it: primal = dual = {_txt(opt)}")
    u_alloc = b["u"]
    y = _vector(_field(cert, "primal", ""), "primal")
    total = sum(u_alloc, ZERO)
    if kind == "pareto-optimal":
        opt = check_optimal(lp, y, _vector(_field(cert, "dual", ""), "dual"))
        if opt != total:
            raise Rejected("objective", f"the optimum {_txt(opt)} is not the allocation's total {_txt(total)}: "
                                        "the allocation is dominated, not Pareto optimal")
        return (f"the allocation is Pareto optimal in {chi}: no allocation gives every user at least its "
                f"tasks ({', '.join(_txt(v) for v in u_alloc)}) and someone more (max total {_txt(opt)} = the "
                f"allocation's; primal = dual)")
    got = check_primal(lp, y)  # dominated
    tot = {u: sum((y.get(c, ZERO) for c in _user_cols(env, lp, j)), ZERO) for j, u in enumerate(env.users)}
    gainers = [j for j, u in enumerate(env.users) if tot[u] > u_alloc[j]]
    if not gainers:
        raise Rejected("primal", "gives no user more than the allocation: it does not dominate")
    extra = ""
    if cert.get("dual") is not None:
        check_optimal(lp, y, _vector(cert["dual"], "dual"))
        extra = f"; no dominating allocation has more than {_txt(got)} tasks in total (dual)"
    gains = ", ".join(f"{env.users[j]} {_txt(u_alloc[j])}->{_txt(tot[env.users[j]])}" for j in gainers)
    return (f"the allocation is not Pareto optimal in {chi}: the primal gives every user at least as much and "
            f"{gains}" + extra)


def load_file(path: str) -> Any:
    """A certificate file's JSON (unreadable or invalid JSON: :class:`Malformed`)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise Malformed(f"not a readable JSON file ({exc})") from None
    except RecursionError:
        raise Malformed("not a certificate: JSON nested too deep") from None


def check_file(path: str) -> str:
    """:func:`check_certificate` of a JSON file."""
    return check_certificate(load_file(path))
