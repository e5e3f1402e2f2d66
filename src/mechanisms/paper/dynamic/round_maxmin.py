"""Per-round max-min on one divisible resource ("static" / per-quantum max-min): the baseline of
Freeman, Zahedi, Conitzer, Lee, "Dynamic proportional sharing: a game-theoretic approach", POMACS 2(1) Art. 3
(SIGMETRICS 2018); of Vuppalapati et al., "Karma: resource allocation for dynamic demands", OSDI 2023; and of
Zahedi and Freeman, "Credit fairness: online fairness in shared resource pools", arXiv:2601.17944 (2026).

What was read.  Only the ABSTRACTS of these papers were reachable (no section, definition or theorem): the
credit-fairness abstract attributes to Freeman et al. that allocating every round independently by max-min
satisfies sharing incentives, strategy-proofness and Pareto efficiency (with constant marginal utility up to
demand), and to Karma that per-round max-min can give large disparities in the TOTAL resources received by users
with equal average demand.  The rule is also the authors' Karma code's baseline
(``resource-disaggregation/karma`` @ 510cdd94e73166252da813e9e65ad5a71b8ee7e2,
``jiffy-implementation/libjiffy/src/jiffy/directory/block/maxmin_block_allocator.cpp``, tested by
``jiffy-implementation/libjiffy/test/maxmin_test.cpp``; tests/mechanisms/test_dynamic.py re-encodes those tests).

Model mapping (mechverify's):

* one resource on one server: the pool, of capacity ``E``; more than one resource or server is refused
  (``SettingError`` naming ``resources`` / ``servers``);
* user ``j``'s demand in a round is its task count ``tasks`` (the papers' unit: per-task demand 1) times its per-task
  demand ``d_j``, in units of the resource; ``demand`` events with ``tasks`` change it before the next round;
* its endowment ``e_j`` is its weight: fair share ``f_j = E w_j / sum_k w_k`` over the users present;
* at step 0 and at every ``round`` event: weighted max-min (water-filling) on the reported per-round demands,
  ``a_j = min(D_j, w_j lambda)`` with ``sum_j a_j = min(sum_j D_j, E)``; ``x_j = a_j / d_j`` tasks (a user with per-task
  demand 0 runs all its tasks);
* between rounds the allocation is HELD: a user who leaves frees its share (idle until the next round); an arrival
  gets 0 until the next round; a user whose task count drops below what it holds (``demand`` with fewer ``tasks``, or
  a ``finish``) keeps only its tasks; a user whose per-task demand changes holds nothing until the next round; a
  capacity change under what is held releases everything until the next round.

Claims (domain ``rounds_only``; sources at abstract level, theorem numbers not reachable): each-step SI and PO
and online SP hold; disparity fails.
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

NAME = "round-maxmin"
_FREEMAN = ("Freeman, Zahedi, Conitzer, Lee 2018 (SIGMETRICS) as summarised in the abstract of Zahedi, Freeman "
            "2026 (arXiv:2601.17944): per-round max-min satisfies SI, SP and PE (abstract-level; theorem numbers "
            "not reachable)")
_KARMA = ("Vuppalapati et al. 2023 (OSDI), motivation, as summarised in the abstract of Zahedi, Freeman 2026: "
          "per-round max-min can give large disparities in total allocation among users with equal average demand "
          "(abstract-level; no theorem reachable)")
_DOM = ("rounds_only",)
CLAIMS = (
    Claim("each-step", "holds", _FREEMAN, variant="si", domain=_DOM),
    Claim("each-step", "holds", _FREEMAN, variant="po", domain=_DOM),
    Claim("online-sp", "holds", _FREEMAN, domain=_DOM),
    Claim("disparity", "fails", _KARMA, domain=_DOM),
)


def maxmin(demands: Sequence[Any], weights: Sequence[Any], capacity: Any) -> list[Any]:
    """Weighted max-min (water-filling) of ``capacity`` among ``demands``: ``a_j = min(D_j, w_j lambda)`` with the
    largest ``lambda`` whose total fits (``sum a = min(sum D, capacity)``).  Users are satisfied in order of
    ``D_j / w_j`` (ties by index); the rest share what remains in proportion to their weights.  Exact on
    Fractions, floats otherwise."""
    n = len(demands)
    zero = capacity * 0
    out = [zero] * n
    order = sorted(range(n), key=lambda j: (demands[j] / weights[j], j))
    left, wleft = capacity, sum(weights, zero)
    for pos, j in enumerate(order):
        if demands[j] * wleft <= left * weights[j]:
            out[j] = demands[j]
            left -= demands[j]
            wleft -= weights[j]
            continue
        for k in order[pos:]:  # everyone still unsatisfied gets the common weighted level
            out[k] = left * weights[k] / wleft
        break
    return out


class RoundMaxMin:
    """One run (module docstring): what each present user holds (tasks) and the per-task demand it was for."""

    def __init__(self, mech: Optional[Mechanism], ex: Execution, exact: bool) -> None:
        self.held: dict[str, Any] = {}
        self.demand: dict[str, tuple] = {}

    def state_key(self) -> Any:
        return tuple(sorted(self.held.items()))

    def step(self, ctx: StepContext) -> Allocation:
        env, exact = ctx.env, ctx.exact
        check_pool(env, NAME, one_resource=True, bounds="required")
        num = (lambda v: Fraction(v)) if exact else (lambda v: float(v))
        zero = num(0)
        E = num(env.capacity[0][0])
        d = [num(env.demand[j][0]) for j in range(env.n_users)]
        n = [num(env.tasks[j]) for j in range(env.n_users)]
        boundary = ctx.index == 0 or (ctx.event is not None and ctx.event.kind == "round")
        if boundary:
            D = [n[j] * d[j] for j in range(env.n_users)]
            a = maxmin(D, [num(w) for w in env.weight], E)
            x = [n[j] if d[j] == 0 else a[j] / d[j] for j in range(env.n_users)]
        else:
            x = []
            for j, u in enumerate(env.users):
                h = self.held.get(u, zero) if self.demand.get(u) == env.demand[j] else zero
                x.append(min(h, n[j]))
            if sum((x[j] * d[j] for j in range(env.n_users)), zero) > E:  # capacity lost: release until the round
                x = [zero] * env.n_users
        self.held = dict(zip(env.users, x))
        self.demand = dict(zip(env.users, env.demand))
        return one_server(env, x, NAME, exact, {"round": boundary})


def _begin(mech: Optional[Mechanism], ex: Execution, exact: bool) -> RoundMaxMin:
    return RoundMaxMin(mech, ex, exact)


register(NAME, "Per-round (static) weighted max-min on one divisible resource (Freeman et al.'s, Karma's and "
               "credit fairness's baseline)",
         Setting(single_server=True, placement=False, external=False, bounds=True, requires_bounds=True,
                 weights=True, min_resources=1, max_resources=1),
         CLAIMS, source="Freeman, Zahedi, Conitzer, Lee, POMACS 2(1) 2018; Vuppalapati et al., OSDI 2023; Zahedi, "
                        "Freeman, arXiv:2601.17944 (abstracts); karma repo maxmin_block_allocator",
         notes="not verified: the claims rest on the papers' abstracts (bodies not reachable). A user's demand per "
               "round is its task count; its weight is its endowment; allocations are held between round events.",
         time=TimeSpec(begin=_begin, kind="stateful", rounds=True, revocable=True,
                       model="at every round event the one resource is divided by weighted max-min on the reported "
                             "per-round demands (task counts); held in between",
                       guarantee=Fraction(1), round_z3="weighted-maxmin"))(
    one_shot(_begin, NAME))
