"""Karma: Vuppalapati, Fikioris, Agarwal, Cidon, Khandelwal, Tardos, "Karma: resource allocation for dynamic
demands", 17th USENIX OSDI (2023) 645-662 (arXiv:2305.17222).

What was read.  The paper's ABSTRACTS (OSDI and arXiv) only: Karma generalises max-min fairness to dynamic
demands with credits ("memory"); users donate what they do not use and gain credits when others borrow it;
allocation is prioritised by credits; it guarantees Pareto efficiency, online strategy-proofness and optimal
fairness (OSDI wording).  The paper's body (algorithm box, definitions, theorems and their hypotheses) was NOT
reachable: no section or theorem number is cited.  The SEMANTICS below are the authors' code,
``resource-disaggregation/karma`` @ 510cdd94e73166252da813e9e65ad5a71b8ee7e2:

* ``jiffy-implementation/libjiffy/src/jiffy/directory/block/karma_block_allocator.cpp``
  (``karma_algorithm_fast``, ``borrow_from_poorest_fast``, ``give_to_richest_fast``, ``register_tenant``), tested by
  ``jiffy-implementation/libjiffy/test/karma_test.cpp`` (re-encoded in tests/mechanisms/test_dynamic.py);
* ``algorithm/src/karma_allocator.cpp`` (the library: ``allocate``, ``add_user``);
* ``simulator/allocator/allocator.py`` (a third credit top-up variant, not encoded).

One quantum (integers throughout; ``g`` the guaranteed share, ``P`` the shared slices, ``c_i`` credits):

1. credit top-up (the variant, below);
2. donors ``d_i < g`` donate ``x_i = g - d_i``; borrowers ``d_i > g`` ask ``r_i = min(d_i - g, c_i)`` (a borrower
   borrows at most its credits); everyone first gets ``min(d_i, g)``;
3. supply ``S = sum x_i + P`` >= requests ``R = sum r_i``: every borrower gets ``r_i`` (pays ``r_i`` credits); the ``R``
   slices are taken from the donors POOREST first (water-filling donor credit levels from the bottom, one credit
   per slice lent), the shared slices last (a donor of infinite credit);
4. ``S < R``: every donated and shared slice is lent (donors gain their whole donation); the ``S`` slices go to
   the borrowers RICHEST first (water-filling borrower credit levels from the top, one credit per slice).

Ties.  When the last level of a water-fill cannot be split evenly, the code gives the leftover single slices to
the users at that level with the least remaining donation (request) and leaves equal ones to its heap
(implementation-defined).  Here: least remaining first, then by user order (the present users' order) --
deterministic, and inside every set of outcomes the authors' tests accept.

Credit top-up variants (``variant``):

* ``jiffy`` (the registered default, ``karma``): no free credits; credits earned by lending SHARED slices go to a
  pot, and at the start of a quantum, if the pot holds at least ``n`` credits, every user gets ``pot // n`` and the pot
  keeps ``pot mod n``.  Chosen because it is the variant the authors' end-to-end test pins down quantum by quantum,
  and because it conserves credits (the users' credits plus the pot are constant between arrivals and departures).
* ``library`` (``karma@library``): every user gets ``P // n`` free credits at the start of every quantum; the
  shared slices' credits are kept in a pot never redistributed.  Not reproduced: the library then treats that pot
  (``$public$``) as a credit-map entry that also receives the top-up and enters the mean a new user starts with.
* ``simulator`` (``redistribution_freq``, ``redistribution_thresh``, ``inflation``): not encoded.

Model mapping and conventions (mechverify's):

* one resource on one server; every user's per-task demand is the same ``delta > 0`` (the paper: 1); a slice is one
  task's worth (``delta``); the pool has ``floor(C / delta)`` slices; a user's demand in a quantum is its task count
  ``floor(tasks)`` (``demand`` events with ``tasks`` change it before the next round), as for ``round-maxmin``.  Other
  per-task demands, weights (the paper's users are symmetric) and more resources or servers are refused;
* ``alpha`` is the paper's alpha, the GUARANTEED fraction: ``g = floor(alpha * slices / n)`` with ``n`` the users
  present at the quantum, and the shared slices ``P = slices - n g`` (the rounding remainder joins them, so that no
  slice is outside both).  The code's ``alpha`` is the SHARED fraction (``public = floor(code_alpha * total)``):
  code_alpha = 1 - alpha.  Registered default ``alpha = 1/2`` (the README example's, where both readings coincide);
* initial credits: ``init_credits`` (default 10**12 - 1, the library's default: large, so that borrowers are not
  credit-limited); a user arriving after step 0 starts with the floor of the mean of the present users' credits
  (the library's ``add_user``; without anybody present: ``init_credits``);
* quanta: step 0 and every ``round`` event.  Between rounds the allocation is held: a user who leaves frees its
  slices and its credits leave with it; an arrival gets 0 until the next round; a user whose task count drops keeps
  only its tasks; a capacity change under what is held releases everything until the next round.

Claims (domain ``rounds_only``; recalled from the abstract, no theorem reachable): per-quantum Pareto efficiency
(given enough credits: a borrower limited by its credits may leave slices idle -- the defaults make that need
some 10**12 borrowed slices) and isolation (``alloc >= min(demand, g)``).  The abstract's "online
strategy-proofness" is NOT registered as a claim about ``online-sp``: the paper's notion is about a user that
does not know future demands, and its exact definition could not be read; ``online-sp`` here is the hindsight
reading (the misreporting user knows the whole trace), and under it Karma fails -- a user that under-reports
now donates, earns credits and is served more later (counterexamples/karma/, docs/findings.md "Dynamic
fairness").  Registering the abstract's words against the hindsight reading would report a refutation of a
definition nobody here has read.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

from mechverify.allocation import Allocation
from mechverify.execution import StepContext

from ...core.mechanism import Mechanism, SettingError
from ...core.registry import Claim, Setting, builtin, register
from ...core.time import TimeSpec, one_shot
from .common import check_pool, one_server

VARIANTS = ("jiffy", "library")
DEFAULT_ALPHA = Fraction(1, 2)
DEFAULT_CREDITS = 10 ** 12 - 1
_REPO = "resource-disaggregation/karma @ 510cdd94e73166252da813e9e65ad5a71b8ee7e2"
_SRC = ("Vuppalapati et al., OSDI 2023, abstract (\"Pareto efficiency, online strategy-proofness, and optimal "
        "fairness\"; theorem numbers not reachable)")
_DOM = ("rounds_only",)
CLAIMS = (
    Claim("each-step", "holds", _SRC, variant="po", domain=_DOM,
          note="given enough credits: a borrower limited by its credits may leave slices idle"),
    Claim("isolation", "holds", _SRC + "; the guaranteed share g = alpha f in the authors' code", domain=_DOM),
)


# ---------------------------------------------------------------------- one quantum
def _clamp(v: int, hi: int) -> int:
    return 0 if v < 0 else (hi if v > hi else v)


def borrow_from_poorest(demand: int, donors: Sequence[tuple[int, int]], shared: int) -> tuple[list[int], int]:
    """``demand`` slices taken from ``donors`` (``(credits, donation)`` each) poorest first, then from the ``shared``
    slices: the slices each donor lends, and the shared slices lent.  Water-filling of the donors' credit levels
    ``c_i + lent_i`` from the bottom; the leftover of the last level goes to the donors at that level with the
    least remaining donation, then by order (module docstring)."""
    total = sum(x for _, x in donors)
    if demand >= total:
        return [x for _, x in donors], min(demand - total, shared)

    def lent_at(level: int) -> int:
        return sum(_clamp(level - c, x) for c, x in donors)

    lo, hi = min(c for c, _ in donors), max(c + x for c, x in donors)  # lent_at(lo) = 0 <= demand < lent_at(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if lent_at(mid) <= demand:
            lo = mid
        else:
            hi = mid
    lent = [_clamp(lo - c, x) for c, x in donors]
    left = demand - sum(lent)
    at_level = sorted((i for i, (c, x) in enumerate(donors) if c + lent[i] == lo and lent[i] < x),
                      key=lambda i: (donors[i][1] - lent[i], i))
    for i in at_level[:left]:
        lent[i] += 1
    return lent, 0


def give_to_richest(supply: int, borrowers: Sequence[tuple[int, int]]) -> list[int]:
    """``supply`` slices given to ``borrowers`` (``(credits, request)`` each, request <= credits) richest first:
    water-filling of the credit levels ``c_i - got_i`` from the top; the leftover of the last level goes to the
    borrowers at that level with the least remaining request, then by order (module docstring)."""
    total = sum(r for _, r in borrowers)
    if supply >= total:
        return [r for _, r in borrowers]

    def got_at(level: int) -> int:
        return sum(_clamp(c - level, r) for c, r in borrowers)

    lo, hi = min(c - r for c, r in borrowers), max(c for c, _ in borrowers)  # got_at(lo) > supply >= got_at(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if got_at(mid) <= supply:
            hi = mid
        else:
            lo = mid
    got = [_clamp(c - hi, r) for c, r in borrowers]
    left = supply - sum(got)
    at_level = sorted((i for i, (c, r) in enumerate(borrowers) if c - got[i] == hi and got[i] < r),
                      key=lambda i: (borrowers[i][1] - got[i], i))
    for i in at_level[:left]:
        got[i] += 1
    return got


@dataclass(frozen=True)
class Quantum:
    """One quantum's outcome: slices per user, credit change per user (``rate``: + lent, - borrowed) and the shared
    slices lent."""

    alloc: tuple[int, ...]
    rate: tuple[int, ...]
    shared_lent: int


def quantum(demands: Sequence[int], credits: Sequence[int], g: int, shared: int) -> Quantum:
    """Steps 2-4 of the module docstring (no top-up; credits are not changed here: add ``rate``)."""
    n = len(demands)
    alloc = [min(d, g) for d in demands]
    rate = [0] * n
    donors = [i for i in range(n) if demands[i] < g]
    borrowers = [i for i in range(n) if demands[i] > g]
    x = {i: g - demands[i] for i in donors}
    r = {i: min(demands[i] - g, credits[i]) for i in borrowers}
    supply, requests = sum(x.values()) + shared, sum(r.values())
    if supply >= requests:
        for i in borrowers:
            alloc[i] += r[i]
            rate[i] -= r[i]
        lent, shared_lent = borrow_from_poorest(requests, [(credits[i], x[i]) for i in donors], shared)
        for i, v in zip(donors, lent):
            rate[i] += v
    else:
        for i in donors:
            rate[i] += x[i]
        shared_lent = shared
        got = give_to_richest(supply, [(credits[i], r[i]) for i in borrowers])
        for i, v in zip(borrowers, got):
            alloc[i] += v
            rate[i] -= v
    return Quantum(tuple(alloc), tuple(rate), shared_lent)


def shares(slices: int, n: int, alpha: Fraction) -> tuple[int, int]:
    """``(g, P)``: the guaranteed share ``floor(alpha slices / n)`` and the shared slices ``slices - n g``."""
    g = int(Fraction(alpha) * slices // n) if n else 0
    return g, slices - n * g


# ---------------------------------------------------------------------- stepping
class Karma:
    """One run (module docstring): credits per present user, the shared slices' credit pot, the slices held."""

    def __init__(self, name: str, alpha: Fraction, init_credits: int, variant: str) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"variant: expected one of {', '.join(VARIANTS)}, got {variant!r}")
        self.name, self.alpha, self.init, self.variant = name, Fraction(alpha), int(init_credits), variant
        self.credits: dict[str, int] = {}
        self.pot = 0
        self.held: dict[str, int] = {}
        self.log: list[dict[str, Any]] = []  # per quantum (also in the step's ``Allocation.info``)

    def state_key(self) -> Any:
        return (tuple(sorted(self.credits.items())), self.pot, tuple(sorted(self.held.items())))

    def _check(self, env) -> Fraction:
        check_pool(env, self.name, one_resource=True, weights=False, bounds="required")
        deltas = {env.demand[j][0] for j in range(env.n_users)}
        if len(deltas) != 1 or min(deltas) <= 0:
            j = next((j for j in range(env.n_users) if env.demand[j][0] != env.demand[0][0] or env.demand[j][0] <= 0),
                     0)
            raise SettingError(f"users[{j}].demand: {self.name} needs every user's per-task demand to be the same "
                               f"positive size (one slice per task); got {sorted(str(v) for v in deltas)}")
        return Fraction(min(deltas))

    def step(self, ctx: StepContext) -> Allocation:
        env = ctx.env
        delta = self._check(env)
        users = env.users
        for u in list(self.credits):  # departures: slices freed, credits gone
            if u not in users:
                del self.credits[u]
                self.held.pop(u, None)
        for u in users:  # arrivals: init credits at step 0, later the floor of the present users' mean
            if u not in self.credits:
                others = list(self.credits.values())
                self.credits[u] = self.init if ctx.index == 0 or not others else sum(others) // len(others)
        tasks = [int(Fraction(t) // 1) for t in env.tasks]
        slices = int(Fraction(env.capacity[0][0]) / delta // 1)
        info: dict[str, Any] = {}
        if ctx.index == 0 or (ctx.event is not None and ctx.event.kind == "round"):
            alloc = self._quantum(users, tasks, slices)
            info = dict(self.log[-1])
        else:
            alloc = [min(self.held.get(u, 0), tasks[j]) for j, u in enumerate(users)]
            if sum(alloc) > slices:  # capacity lost under what is held: released until the next round
                alloc = [0] * len(users)
        self.held = dict(zip(users, alloc))
        info.update(credits=dict(self.credits), pot=self.pot)
        return one_server(env, alloc, self.name, ctx.exact, info)

    def _quantum(self, users: Sequence[str], demands: Sequence[int], slices: int) -> list[int]:
        n = len(users)
        g, P = shares(slices, n, self.alpha)
        if self.variant == "jiffy":  # the shared slices' credits, redistributed once there are n of them
            if self.pot >= n:
                for u in users:
                    self.credits[u] += self.pot // n
                self.pot %= n
        else:  # library: free credits P // n per user per quantum
            for u in users:
                self.credits[u] += P // n
        before = [self.credits[u] for u in users]
        q = quantum(demands, before, g, P)
        for u, v in zip(users, q.rate):
            self.credits[u] += v
        self.pot += q.shared_lent
        self.log.append({"g": g, "P": P, "demands": tuple(demands), "alloc": q.alloc, "rate": q.rate,
                         "before": tuple(before), "credits": tuple(self.credits[u] for u in users), "pot": self.pot,
                         "shared_lent": q.shared_lent})
        return list(q.alloc)


# ---------------------------------------------------------------------- registration
SETTING = Setting(single_server=True, placement=False, external=False, bounds=True, requires_bounds=True,
                  weights=False, divisible=False, min_resources=1, max_resources=1)


def time_spec(name: str, alpha: Fraction, init_credits: int, variant: str) -> TimeSpec:
    return TimeSpec(begin=lambda m, ex, exact: Karma(name, alpha, init_credits, variant), kind="stateful", rounds=True,
                    revocable=True, guarantee=Fraction(alpha),
                    model=f"at every round event, whole slices by credits ({variant} top-up): a guaranteed share "
                          f"alpha={alpha} of the fair share, donors lend poorest first, borrowers served richest first")


def karma_mechanism(alpha: Fraction = DEFAULT_ALPHA, init_credits: int = DEFAULT_CREDITS, variant: str = "jiffy",
                    name: str = "karma") -> Mechanism:
    """An unregistered Karma with other parameters (the tests' end-to-end run uses ``alpha = 10/11``, 10 credits)."""
    spec = time_spec(name, alpha, init_credits, variant)
    return builtin(name, f"Karma ({variant})", one_shot(spec.begin, name), SETTING, CLAIMS, source=_REPO, time=spec)


_NOTES = ("not verified: the paper's body (algorithm box, theorems, their hypotheses) was not reachable; semantics "
          "from the authors' code. alpha = the paper's guaranteed fraction (the code's alpha is the shared fraction). "
          "The abstract's online strategy-proofness (users without knowledge of future demands) is not registered "
          "against online-sp, the hindsight reading, under which Karma fails (docs/findings.md).")
for _variant, _name in (("jiffy", "karma"), ("library", "karma@library")):
    _spec = time_spec(_name, DEFAULT_ALPHA, DEFAULT_CREDITS, _variant)
    register(_name, f"Karma: credits, guaranteed share alpha=1/2, borrow from the poorest, give to the richest "
                    f"({_variant} credit top-up; Vuppalapati et al.)",
             SETTING, CLAIMS, source=f"Vuppalapati et al., OSDI 2023 (abstract); code {_REPO}",
             notes=_NOTES + (" Credit top-up: jiffy's redistribution of the shared slices' credits."
                             if _variant == "jiffy" else
                             " Credit top-up: the library's P // n free credits per quantum ($public$ quirk not "
                             "reproduced)."),
             time=_spec)(one_shot(_spec.begin, _name))
