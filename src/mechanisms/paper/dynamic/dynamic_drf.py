"""Dynamic DRF: Kash, Procaccia, Shah, "No agent left behind: dynamic fair division of multiple resources",
J. Artificial Intelligence Research 51 (2014) 579-603 (conference version AAMAS 2013; doi:10.1613/jair.4405).

What was and was not read.  Only the title block, abstract and first paragraph of Sec. 1 of the paper were
reachable (stored copies; no live access).  The abstract confirms a dynamic model, axioms for dynamic
mechanisms and two mechanisms; a later paper's abstract confirms "a water-filling algorithm to find a dynamic
DRF solution" and the term "dynamic Pareto optimality".  The RULE below, the property definitions and the
claims are RECALLED, not read: no section or theorem number is cited because none could be checked.

The paper's model (recalled).  ``n`` agents, ``n`` known in advance; ``m`` divisible resources; agents arrive
one at a time and never leave; Leontief preferences with (we believe) strictly positive demands; an agent's
dominant share ``x_i`` is the largest share of a resource it holds; allocations are irrevocable (they only
grow).  Dynamic DRF, at the ``k``-th arrival: raise the dominant shares of the present agents to the largest
level ``L`` with ``sum_i max(L, x_i) d_ir <= (k/n) C_r`` for every resource ``r`` (``d_ir``: agent ``i``'s demand
per unit of dominant share), never lowering anyone.

Notation here.  One server (a single pool) with capacity ``C``; user ``j``'s per-task demand ``d_j``; its
dominant share per task ``s_j = max_r d_jr / C_r`` (resources it demands); ``x_j`` tasks of it hold dominant share
``x_j s_j``; its usage per unit of dominant share is ``a_jr = d_jr / s_j``.  ``g_r(L) = sum_j max(L, x_j) a_jr`` is
piecewise linear and increasing with breakpoints at the present dominant shares, so ``L`` is found exactly by
scanning them (Fractions when ``exact``, floats otherwise).

Model mapping and conventions (mechverify's, stated because the paper's model has only arrivals):

* ``n`` is the execution's total number of users (``Execution.n_users_total``: known in advance, as in the
  paper); ``k`` is the number of users that have arrived so far, departed ones included.  Users present at time
  0 arrive together at step 0 (one water-fill with ``k`` = their number).  The one-shot function (step 0 with
  everyone present) is therefore DRF on one pool.
* The water-fill runs at EVERY step with the current ``k`` and capacity; between arrivals it changes nothing
  unless something was freed.
* A departing user's resources are freed (the others may rise into them, within ``(k/n) C``).
* A user whose demand vector changes gives back what it holds and is filled afresh from dominant share 0 (the
  convention of the ``irrevocable`` lift, ``mechanisms.core.time``).
* A capacity change: if what is held no longer fits the new capacity, everything is released and the present
  users are filled afresh; otherwise what is held stays and the budget is ``(k/n)`` of the new capacity.
* A user that can run nothing (it demands a resource of capacity 0) or demands nothing stays at 0 tasks.
* Not in the setting: placement, external resources, task bounds, weights (none are in the paper's model).

Claims (all recalled; domain ``arrivals_only`` and ``positive_demands``): DSI, DEF, SP (``online-sp``), DPO and
irrevocability hold; standard envy-freeness at each step fails (the paper's impossibility of EF with DPO; the
worked example in tests/mechanisms/test_dynamic.py shows an envious late arrival).  The second mechanism of the
paper (a "cautious" LP) is not encoded: its formulation was not reachable.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.execution import Execution, StepContext

from ...core.mechanism import Mechanism
from ...core.registry import Claim, Setting, register
from ...core.time import TimeSpec, one_shot
from .common import check_pool, one_server

NAME = "dynamic-drf"
_SRC = ("Kash, Procaccia, Shah 2014 (JAIR 51; AAMAS 2013), Dynamic DRF (section and theorem number not verified: "
        "the text was not reachable)")
_DOM = ("arrivals_only", "positive_demands")
CLAIMS = (
    Claim("dsi", "holds", _SRC, domain=_DOM), Claim("def", "holds", _SRC, domain=_DOM),
    Claim("online-sp", "holds", _SRC, domain=_DOM), Claim("dpo", "holds", _SRC, domain=_DOM),
    Claim("irrevocable", "holds", _SRC, domain=_DOM),
    Claim("each-step", "fails", "Kash, Procaccia, Shah 2014: EF is incompatible with DPO (impossibility; section "
          "and theorem number not verified: the text was not reachable)", variant="ef", domain=_DOM),
)


def water_level(x: Sequence[Any], a: Sequence[Sequence[Any]], budget: Sequence[Any]) -> Optional[Any]:
    """The largest level ``L >= min(x)`` with ``sum_j max(L, x_j) a[j][r] <= budget[r]`` for every ``r`` (``None``:
    not even ``min(x)`` fits, or there is nobody).  Every ``a[j]`` must have a positive entry where the budget is
    finite.  Exact on Fractions; floats otherwise."""
    if not x:
        return None
    R = len(budget)
    levels = sorted(set(x))
    b = levels[0]
    g = [sum(max(b, xj) * aj[r] for xj, aj in zip(x, a)) for r in range(R)]
    if any(g[r] > budget[r] for r in range(R)):
        return None
    for i, b in enumerate(levels):
        slope = [sum(aj[r] for xj, aj in zip(x, a) if xj <= b) for r in range(R)]
        steps = [(budget[r] - g[r]) / slope[r] for r in range(R) if slope[r] > 0]
        if not steps:  # nobody below b uses anything: cannot happen for users with a dominant resource
            return None
        cand = b + min(steps)
        nxt = levels[i + 1] if i + 1 < len(levels) else None
        if nxt is None or cand <= nxt:
            return cand
        g = [g[r] + slope[r] * (nxt - b) for r in range(R)]
    return None  # pragma: no cover - the last interval always returns


class DynamicDRF:
    """One run of Dynamic DRF (module docstring): the dominant share of every present user, the demand it was
    filled for, and the users seen so far (``k``)."""

    def __init__(self, mech: Optional[Mechanism], ex: Execution, exact: bool) -> None:
        self.n = max(ex.n_users_total, 1)
        self.exact = exact
        self.x: dict[str, Any] = {}
        self.demand: dict[str, tuple] = {}
        self.seen: set[str] = set()

    def state_key(self) -> Any:
        return (len(self.seen), tuple(sorted(self.x.items())))

    def share_per_task(self, d: Sequence[Any], C: Sequence[Any]) -> Any:
        """The dominant share one task of demand ``d`` takes of capacities ``C`` (what the water-filling
        equalises, per task: DRF's dominant share)."""
        return max(d[r] / C[r] for r in range(len(C)) if d[r] > 0)

    def step(self, ctx: StepContext) -> Allocation:
        env, exact = ctx.env, ctx.exact
        check_pool(env, NAME, weights=False, bounds="forbidden")
        zero: Any = Fraction(0) if exact else 0.0
        num = (lambda v: Fraction(v)) if exact else (lambda v: float(v))
        C = [num(c) for c in env.capacity[0]]
        R = len(C)
        present = env.users
        for u in list(self.x):  # departures: freed
            if u not in present:
                del self.x[u], self.demand[u]
        for j, u in enumerate(present):
            if u not in self.seen:
                self.seen.add(u)
            if self.demand.get(u) != env.demand[j]:  # a new user, or a changed demand: filled afresh
                self.x[u] = zero
                self.demand[u] = env.demand[j]
        # per-task dominant share s_j and usage per unit of dominant share a_j (None: runs nothing)
        s: list[Any] = []
        a: list[Optional[list]] = []
        for j in range(env.n_users):
            d = [num(v) for v in env.demand[j]]
            if any(d[r] > 0 and C[r] <= 0 for r in range(R)) or not any(v > 0 for v in d):
                s.append(None)
                a.append(None)
                continue
            sj = self.share_per_task(d, C)
            s.append(sj)
            a.append([v / sj for v in d])
        part = [j for j in range(env.n_users) if a[j] is not None]
        for j in range(env.n_users):
            if a[j] is None:
                self.x[present[j]] = zero
        used = [sum((self.x[present[j]] * a[j][r] for j in part), zero) for r in range(R)]
        if any(used[r] > C[r] for r in range(R)):  # capacity lost under what is held: release, fill afresh
            for j in part:
                self.x[present[j]] = zero
        k = len(self.seen)
        frac = Fraction(k, self.n) if exact else k / self.n
        budget = [frac * c for c in C]
        L = water_level([self.x[present[j]] for j in part], [a[j] for j in part], budget)
        if L is not None:
            for j in part:
                u = present[j]
                if self.x[u] < L:
                    self.x[u] = L
        tasks = [zero if a[j] is None else self.x[present[j]] / s[j] for j in range(env.n_users)]
        return one_server(env, tasks, NAME, exact, {"k": k, "n": self.n, "level": L})


def _begin(mech: Optional[Mechanism], ex: Execution, exact: bool) -> DynamicDRF:
    return DynamicDRF(mech, ex, exact)


register(NAME, "Dynamic DRF: water-filling of dominant shares within k/n of every resource at the k-th arrival "
               "(Kash, Procaccia, Shah)",
         Setting(single_server=True, placement=False, external=False, bounds=False, weights=False),
         CLAIMS, source="Kash, Procaccia, Shah, JAIR 51 (2014) 579-603 (AAMAS 2013), Dynamic DRF",
         notes="not verified: the rule and every claim are recalled (only the abstract was reachable; no theorem "
               "numbers). Beyond arrivals (departures, demand and capacity changes) the conventions are "
               "mechverify's (module docstring).",
         time=TimeSpec(begin=_begin, kind="stateful", rounds=False, revocable=False,
                       model="at the k-th arrival the present users' dominant shares are water-filled within k/n "
                             "of every resource (n: all users of the execution); never lowered"))(
    one_shot(_begin, NAME))
