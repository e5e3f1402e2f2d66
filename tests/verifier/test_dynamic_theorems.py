"""The dynamic-fairness papers' statements as regression tests (docs/findings.md, "Dynamic fairness").

Each claim a mechanism registers from its paper is NOT refuted by the search over traces inside the paper's
model (the claim's standing assumptions: arrivals only, or rounds), with a fixed seed and trial count; under
the same seed and trial count a planted-bug MUTANT of the same mechanism IS refuted -- so the search effort
is one that finds such a bug.  Each stated impossibility is exhibited by a minimal trace.
"""
from dataclasses import replace
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.core.time import one_shot
from mechverify.allocation import Allocation
from mechanisms.paper.dynamic import dynamic_drf, karma, round_maxmin
from verifier import claims as claims_mod
from verifier.engines.traces import TraceSpec, minimise, search_traces
from verifier.properties import get_property
from verifier.results import Verdict

SEED, TRIALS = 0, 250


def _search(mech, prop, variant, trials=TRIALS):
    claim = next(c for c in mechanisms.get(_base(mech)).claims if c.property == prop and
                 (c.variant is None or c.variant == variant))
    accept = lambda ex, c=claim: c.covers(ex) is None  # noqa: E731 - the claim's model, as run searches it
    return search_traces(mech, get_property(prop), variant,
                         TraceSpec(seed=SEED, budget=120, max_trials=trials, accept=accept))


def _base(mech):
    return mech.name.split("~")[0]


def _mutant(base: str, begin, what: str):
    """``base`` with its stepper replaced by ``begin`` (a planted bug), under the name ``base~mutant``."""
    m = mechanisms.get(base)
    return replace(m, name=f"{base}~mutant", title=f"{base} with a planted bug: {what}",
                   func=one_shot(begin, f"{base}~mutant"), time=replace(m.time, begin=begin))


# ---------------------------------------------------------------------- Dynamic DRF (Kash, Procaccia, Shah)
class _NoReserve(dynamic_drf.DynamicDRF):
    """Planted bug: water-fills within ALL of every resource at once (no k/n reserve for those yet to come):
    n is taken to be the users seen so far."""

    @property
    def n(self):
        return max(len(self.seen), 1)

    @n.setter
    def n(self, value):
        pass


class _OnlyNewcomer(dynamic_drf.DynamicDRF):
    """Planted bug: at an arrival only the newcomer rises to the level; the users already there keep what they
    had (so an earlier user may envy a later one)."""

    def step(self, ctx):
        before, demand = dict(self.x), dict(self.demand)
        alloc = super().step(ctx)
        env = ctx.env
        num = F if ctx.exact else float
        C = [num(c) for c in env.capacity[0]]
        x = [list(row) for row in alloc.x]
        for j, u in enumerate(env.users):
            if u in before and demand.get(u) == env.demand[j] and self.x[u] != before[u] and any(env.demand[j]):
                self.x[u] = before[u]
                x[j][0] = before[u] / self.share_per_task([num(v) for v in env.demand[j]], C)
        return Allocation(env, tuple(tuple(r) for r in x), alloc.mechanism, alloc.exact)


class _HalfReserve(dynamic_drf.DynamicDRF):
    """Planted bug: fills within k/(2n) instead of k/n (half the resources it may use stay idle)."""

    def __init__(self, mech, ex, exact):
        super().__init__(mech, ex, exact)
        self.n *= 2


class _EqualTasks(dynamic_drf.DynamicDRF):
    """Planted bug: equalises TASKS instead of dominant shares (a larger reported demand buys a larger bundle)."""

    def share_per_task(self, d, C):
        return F(1) if isinstance(d[0], F) else 1.0


class _Refill(dynamic_drf.DynamicDRF):
    """Planted bug: every step water-fills from zero (what users hold may be taken back)."""

    def step(self, ctx):
        for u in self.x:
            self.x[u] = 0 * self.x[u]
        return super().step(ctx)


KASH = [("dsi", "kash", _NoReserve, "no k/n reserve"), ("def", "kash", _OnlyNewcomer, "only the newcomer rises"),
        ("dpo", "kash", _HalfReserve, "k/(2n) instead of k/n"),
        ("online-sp", "demand", _EqualTasks, "equal tasks instead of equal dominant shares"),
        ("irrevocable", "tasks", _Refill, "refilled from zero at every step")]


@pytest.mark.parametrize("prop,variant,bug,what", KASH, ids=[k[0] for k in KASH])
def test_dynamic_drf_claims_not_refuted_where_a_mutant_is(prop, variant, bug, what):
    ddrf = mechanisms.get("dynamic-drf")
    assert claims_mod.claims_for(ddrf, prop, variant)[0].status == "holds"
    ok = _search(ddrf, prop, variant)
    assert ok.verdict is Verdict.NOT_REFUTED and ok.trials == TRIALS, ok.note
    bad = _search(_mutant("dynamic-drf", lambda m, ex, exact, b=bug: b(m, ex, exact), what), prop, variant)
    assert bad.verdict is Verdict.VIOLATED and bad.trials <= TRIALS


def test_dynamic_drf_impossibility_exhibited():
    """Plain EF does not hold for Dynamic DRF -- the paper's impossibility (EF with dynamic Pareto optimality and
    sharing incentives) exhibited by a 1-minimal trace of arrivals."""
    ddrf = mechanisms.get("dynamic-drf")
    ef = _search(ddrf, "each-step", "ef")
    assert ef.verdict is Verdict.VIOLATED
    claim = claims_mod.claims_for(ddrf, "each-step", "ef")[0]
    cert, minimality = minimise(ddrf, ef.certificate, budget=30, accept=lambda ex: claim.covers(ex) is None)
    assert minimality["one_minimal"] and claim.covers(cert.witness.execution) is None
    assert all(e.kind == "arrive" for e in cert.witness.execution.events)


# ---------------------------------------------------------------------- per-round max-min (Freeman et al.; Karma's baseline)
def _proportional(demands, weights, capacity):
    """Planted bug: the pool split in proportion to the reported demands (what a user asks for, it is weighted by)."""
    total = sum(demands)
    if total <= capacity:
        return list(demands)
    return [capacity * d / total for d in demands]


def _fair_share_only(demands, weights, capacity):
    """Planted bug: each user gets at most its fair share; what others leave idle is not redistributed."""
    W = sum(weights)
    return [min(d, capacity * w / W) for d, w in zip(demands, weights)]


ROUNDS = [("each-step", "si", _proportional), ("each-step", "po", _fair_share_only),
          ("online-sp", "demand", _proportional)]


@pytest.mark.parametrize("prop,variant,bug", ROUNDS, ids=[f"{p}-{v}" for p, v, _ in ROUNDS])
def test_round_maxmin_claims_not_refuted_where_a_mutant_is(prop, variant, bug, monkeypatch):
    rmm = mechanisms.get("round-maxmin")
    ok = _search(rmm, prop, variant)
    assert ok.verdict is Verdict.NOT_REFUTED and ok.trials == TRIALS, ok.note
    monkeypatch.setattr(round_maxmin, "maxmin", bug)
    bad = _search(_mutant("round-maxmin", round_maxmin._begin, bug.__doc__), prop, variant)
    assert bad.verdict is Verdict.VIOLATED and bad.trials <= TRIALS


def test_round_maxmin_disparity_exhibited():
    """Karma's motivation: per-round max-min gives users with equal total demand unequal totals (a stated
    'fails' claim, confirmed by a minimal trace in rounds)."""
    rmm = mechanisms.get("round-maxmin")
    res = _search(rmm, "disparity", "equal-demand")
    assert res.verdict is Verdict.VIOLATED and res.certificate.gap > 0
    assert claims_mod.outcome(claims_mod.claims_for(rmm, "disparity", "equal-demand")[0], "violated",
                              res.certificate.witness) == "confirmed"


# ---------------------------------------------------------------------- Karma
def _no_borrowing(demands, credits, g, shared):
    """Planted bug: nobody borrows -- each user gets min(demand, g), donated and shared slices stay idle."""
    q = _QUANTUM(demands, credits, g, 0)
    alloc = tuple(min(d, g) for d in demands)
    return replace(q, alloc=alloc, rate=tuple(0 for _ in demands), shared_lent=0)


def _no_guarantee(slices, n, alpha):
    """Planted bug: the guaranteed share is 0 -- everything is shared, served richest first."""
    g, shared = _SHARES(slices, n, alpha)
    return 0, slices


_QUANTUM, _SHARES = karma.quantum, karma.shares
KARMA = [("each-step", "po", "quantum", _no_borrowing), ("isolation", "guaranteed", "shares", _no_guarantee)]


@pytest.mark.parametrize("prop,variant,where,bug", KARMA, ids=[k[0] for k in KARMA])
def test_karma_claims_not_refuted_where_a_mutant_is(prop, variant, where, bug, monkeypatch):
    km = mechanisms.get("karma")
    ok = _search(km, prop, variant)
    assert ok.verdict is Verdict.NOT_REFUTED and ok.trials == TRIALS, ok.note
    monkeypatch.setattr(karma, where, bug)
    bad = _search(_mutant("karma", km.time.begin, bug.__doc__), prop, variant)
    assert bad.verdict is Verdict.VIOLATED and bad.trials <= TRIALS
