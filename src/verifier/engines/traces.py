"""The search over EXECUTIONS (properties with ``over = "execution"``; docs/executions.md, "Searching traces").

It draws small executions inside the mechanism's setting, runs the mechanism through each in floats (the
fast screen), and re-checks a candidate violation by an exact replay (``ExecutionProperty.recheck``): only a
certificate counts.  Two phases, both deterministic for a seed:

1. **exhaustive layers** -- the tiny traces first, layer by layer (users, then events): every trace of a layer
   over a small alphabet (demands, capacities, event kinds) when the layer has at most ``per_layer`` of them,
   else ``per_layer`` sampled by a generator seeded by the layer (``mechverify.enumeration.layered``, shared with
   the Kueue port's loop search);
2. **random traces** -- up to ``max_users`` users and ``max_events`` events, numbers from small integers; a
   tree policy's users in the leaves of a drawn queue tree.

A violation is then minimised by :func:`minimise` (fewest events, then users, then the smallest numbers), each
candidate re-checked exactly, and its 1-minimality (no single event or user can be removed) is recorded.
Mechanisms that allocate per round (``TimeSpec.rounds``) get round-shaped traces: one resource, every user
present from the start with a per-round demand (its task count), ``demand`` events between ``round`` events.
A property that judges what happens while only rounds do (``Property.needs_quiet_rounds``: a repeated state
with preemptions between, ``cycles``) gets every drawn trace followed by :data:`QUIET_ROUNDS` ``round`` events
and nothing else (:func:`with_quiet_rounds`; kept off a trace the claim's condition would then refuse).
"""
from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable, Iterator, Optional

from mechverify.execution import Event, Execution, UserSpec, parse_execution
from mechverify.trace_deviations import TraceMisreport, TraceResubmission, statement_places
from mechverify.enumeration import layered
from mechverify.numbers import InstanceError, fmt_exact

from mechanisms.core.mechanism import SettingError

from ..properties import budget as bud
from ..properties.base import Certificate, PropertyFailure
from ..results import Verdict
from .search import SearchResult

__all__ = ["TraceSpec", "search_traces", "describe_domain", "draw_execution", "minimise", "size_of_execution",
           "one_minimal", "with_quiet_rounds", "QUIET_ROUNDS"]

clock = bud.now

#: the quiet rounds a drawn trace ends with for a property that needs them (``Property.needs_quiet_rounds``):
#: room for a loop of period up to 4 from the last change, or of period 2 after a 2-round transient
QUIET_ROUNDS = 4


@dataclass(frozen=True)
class TraceSpec:
    """How one search over executions runs (see the module docstring)."""

    seed: int = 0
    budget: float = 10.0
    max_trials: Optional[int] = None
    max_users: int = 3
    max_events: int = 8
    per_layer: int = 200
    exhaustive: bool = True
    accept: Optional[Callable[[Execution], bool]] = None
    deadline: Optional[float] = None
    progress: Optional[Callable[[SearchResult], None]] = None
    #: the starvation bound every searched execution declares (``None``: the drawn ones declare none, i.e. 0)
    max_wait: Optional[Fraction] = None


# ---------------------------------------------------------------------- drawing traces
def _shape(mech) -> dict[str, Any]:
    st, tm = mech.setting, mech.time
    rounds = bool(getattr(tm, "rounds", False))
    return {
        "rounds": rounds,
        "resources": (1,) if rounds else tuple(r for r in (1, 2) if r >= st.min_resources) or (st.min_resources,),
        "servers": (1,) if (st.single_server or rounds) else (1, 2),
        "bounds": st.bounds or st.requires_bounds or rounds,
        "requires_bounds": st.requires_bounds or rounds,
        "weights": st.weights,
        "positive": st.positive_data,
        "whole": not st.divisible,
        "tree": st.hierarchy and not rounds,
        "whole_requests": bool(getattr(st, "whole_requests", False)),
    }


#: the queue trees a trace of a tree policy is drawn on (children of the root; one with two leaves below)
_TREES = (("a", "b"), ("a", "a/x", "a/y", "b"))


def _tree(rng: random.Random, R: int, cap: tuple) -> dict[str, Any]:
    """A small queue tree with weights, and (each at random) declared guarantees and maxes on its leaves."""
    paths = rng.choice(_TREES)
    leaves = [q for q in paths if not any(o.startswith(q + "/") for o in paths)]
    pool = [sum(row[r] for row in cap) for r in range(R)]
    def vec(scale):
        return tuple(Fraction(rng.randint(0, max(1, int(p * scale)))) for p in pool)
    return {"queues": paths,
            "queue_weight": tuple(Fraction(rng.choice((1, 1, 2))) for _ in paths),
            "queue_guarantee": tuple(vec(Fraction(1, 2)) if q in leaves and rng.random() < 0.6 else None for q in paths),
            "queue_max": tuple(vec(Fraction(3, 4)) if q in leaves and rng.random() < 0.3 else None for q in paths),
            "leaves": leaves}


def _demand(rng: random.Random, R: int, positive: bool) -> tuple[Fraction, ...]:
    while True:
        d = tuple(Fraction(rng.randint(1 if positive else 0, 4)) for _ in range(R))
        if any(d):
            return d


def _user(rng: random.Random, name: str, R: int, sh: dict) -> UserSpec:
    tasks = None
    if sh["requires_bounds"] or (sh["bounds"] and rng.random() < 0.3):
        tasks = Fraction(rng.randint(1, 6))
    weight = Fraction(rng.choice((1, 1, 2))) if sh["weights"] and not sh["rounds"] and rng.random() < 0.3 else Fraction(1)
    demand = (Fraction(1),) if sh["rounds"] else _demand(rng, R, sh["positive"])
    return UserSpec(name, demand, weight=weight, tasks=tasks)


def describe_domain(mech, max_users: int = 3, max_events: int = 8) -> str:
    """The traces the search draws for ``mech``, in one line (the reports' "domain")."""
    sh = _shape(mech)
    if sh["rounds"]:
        return (f"executions in rounds: 2-{max(2, max_users)} users present from the start, one resource, one server, "
                f"task counts 0-8 per round, up to {max(1, max_events // 2)} rounds; first every trace of 2 users over "
                f"1-2 rounds with task counts 0-3")
    srv = "one server" if sh["servers"] == (1,) else "1-2 servers"
    return (f"executions: 1-{max_users} users, {srv}, {'-'.join(str(r) for r in sh['resources'])} resource(s), "
            f"up to {max_events} events (arrive, leave, demand, capacity) at integer times, demands 0-4, "
            f"capacities 1-10; first every trace of 2 users with 1-2 events over a small alphabet")


def draw_execution(rng: random.Random, mech, max_users: int = 3, max_events: int = 8,
                   arrivals_only: bool = False) -> Execution:
    """One random execution inside ``mech``'s setting (module docstring)."""
    sh = _shape(mech)
    R = rng.choice(sh["resources"])
    S = rng.choice(sh["servers"])
    resources = tuple(f"r{r + 1}" for r in range(R))
    servers = tuple(f"s{s + 1}" for s in range(S))
    cap = tuple(tuple(Fraction(rng.randint(1, 10)) for _ in range(R)) for _ in range(S))
    n = rng.randint(1, max_users) if not sh["rounds"] else rng.randint(2, max(2, max_users))
    names = [f"u{j + 1}" for j in range(n)]
    if sh["rounds"]:
        users = tuple(_user(rng, u, R, sh) for u in names)
        events, t = [], 0
        for _ in range(rng.randint(1, max(1, max_events // 2))):
            t += 1
            for u in names:
                if rng.random() < 0.6 and len(events) < max_events - 1:
                    events.append(Event(Fraction(t), "demand", u, tasks=Fraction(rng.randint(0, 8))))
            events.append(Event(Fraction(t), "round"))
        return Execution(resources, ("s1",), (cap[0],), users, tuple(events), end=Fraction(t + 1), unit="round")
    first = rng.randint(1, n) if not arrivals_only else 1
    users = tuple(_user(rng, u, R, sh) for u in names[:first])
    present = [u.name for u in users]
    waiting = list(names[first:])
    events: list[Event] = []
    t = 0
    gone: set = set()
    k = rng.randint(len(waiting), max(len(waiting), max_events))
    while len(events) < k:
        t += rng.choice((1, 1, 2))
        kinds = ["arrive"] if waiting else []
        if not arrivals_only:
            if present:
                kinds += ["leave", "demand", "demand"]
            kinds += ["capacity"] if rng.random() < 0.15 else []
        if not kinds:
            break
        kind = rng.choice(kinds)
        if kind == "arrive":
            u = waiting.pop(0)
            events.append(Event(Fraction(t), "arrive", u, spec=_user(rng, u, R, sh)))
            present.append(u)
        elif kind == "leave" and len(present) > 0:
            u = rng.choice(present)
            present.remove(u)
            gone.add(u)
            events.append(Event(Fraction(t), "leave", u))
        elif kind == "demand":
            u = rng.choice(present)
            if sh["bounds"] and rng.random() < 0.3:
                events.append(Event(Fraction(t), "demand", u, tasks=Fraction(rng.randint(1, 6))))
            else:
                events.append(Event(Fraction(t), "demand", u, demand=_demand(rng, R, sh["positive"])))
        else:
            s = rng.randrange(S)
            events.append(Event(Fraction(t), "capacity", server=servers[s],
                                capacity=tuple(Fraction(rng.randint(1, 10)) for _ in range(R))))
    ex = Execution(resources, servers, cap, users, tuple(events), end=Fraction(t + 1))
    if sh["tree"] and rng.random() < 0.7:  # a tree policy: its users in the leaves of a drawn queue tree
        tree = _tree(rng, R, cap)
        place = lambda u: replace(u, queue=rng.choice(tree["leaves"] + [None]))  # noqa: E731
        ex = replace(ex, users=tuple(place(u) for u in ex.users),
                     events=tuple(replace(e, spec=place(e.spec)) if e.kind == "arrive" else e for e in ex.events),
                     queues=tree["queues"], queue_weight=tree["queue_weight"],
                     queue_guarantee=tree["queue_guarantee"], queue_max=tree["queue_max"])
    return ex


def _tiny_layers(mech) -> Iterator[tuple[str, list[Callable[[], Execution]]]]:
    """The exhaustive layers: (label, thunks) smallest first -- 2 users, 1 resource, one server, the
    smallest demands and capacities, 1..2 events; for a tree policy admitting whole requests, then three users
    in one queue with a guarantee (2 or 4 of 4), task counts 1-3, no event, until t = 5."""
    sh = _shape(mech)
    if sh["rounds"]:
        for q in (1, 2):
            combos = list(itertools.product(range(0, 4), repeat=2 * q))
            def thunks(q=q, combos=combos):
                for c in combos:
                    def make(c=c):
                        users = (UserSpec("u1", (Fraction(1),), tasks=Fraction(c[0])),
                                 UserSpec("u2", (Fraction(1),), tasks=Fraction(c[1])))
                        events = []
                        for r in range(q):  # round r at time r + 1, its demands just before it
                            if r:
                                events += [Event(Fraction(r + 1), "demand", "u1", tasks=Fraction(c[2 * r])),
                                           Event(Fraction(r + 1), "demand", "u2", tasks=Fraction(c[2 * r + 1]))]
                            events.append(Event(Fraction(r + 1), "round"))
                        return Execution(("r1",), ("s1",), ((Fraction(4),),), users, tuple(events), end=Fraction(q + 1),
                                         unit="round")
                    yield make
            yield f"rounds {q}", list(thunks())
        return
    R = max(1, mech.setting.min_resources)
    alphabet = [(Fraction(1),) * R, (Fraction(2),) + (Fraction(1),) * (R - 1), (Fraction(1),) + (Fraction(2),) * (R - 1)]
    if R == 1:
        alphabet = alphabet[:2]
    cap = tuple(Fraction(4) for _ in range(R))
    for n_events in (1, 2):
        thunks = []
        for d1, d2, d3 in itertools.product(alphabet, repeat=3):
            for kinds in itertools.product(("arrive", "leave", "demand"), repeat=n_events):
                def make(d1=d1, d2=d2, d3=d3, kinds=kinds):
                    bound = Fraction(1) if sh["requires_bounds"] else None  # a policy needing bounds: one task
                    users = (UserSpec("u1", d1, tasks=bound),)
                    events, present, waiting = [], ["u1"], ["u2"]
                    for i, k in enumerate(kinds):
                        t = Fraction(i + 1)
                        if k == "arrive" and waiting:
                            u = waiting.pop()
                            events.append(Event(t, "arrive", u, spec=UserSpec(u, d2, tasks=bound)))
                            present.append(u)
                        elif k == "leave" and len(present) > 1:
                            events.append(Event(t, "leave", present.pop(0)))
                        elif k == "demand" and present:
                            events.append(Event(t, "demand", present[-1], demand=d3))
                        else:
                            return None
                    return Execution(tuple(f"r{r + 1}" for r in range(R)), ("s1",), (cap,), users, tuple(events),
                                     end=Fraction(n_events + 1))
                thunks.append(make)
        yield f"2 users, {n_events} event(s)", thunks
    if sh["tree"] and sh["whole_requests"]:  # whole requests: three workloads contending inside one queue, nothing else
        thunks = []
        for g in (2, 4):
            for spec in itertools.product(itertools.product(alphabet, (1, 2, 3)), repeat=3):
                def make(g=g, spec=spec):
                    users = tuple(UserSpec(f"u{k + 1}", d, tasks=Fraction(n), queue="a") for k, (d, n) in enumerate(spec))
                    return Execution(tuple(f"r{r + 1}" for r in range(R)), ("s1",), (cap,), users, (), end=Fraction(5),
                                     queues=("a",), queue_weight=(Fraction(1),),
                                     queue_guarantee=(tuple(Fraction(g) for _ in range(R)),), queue_max=(None,))
                thunks.append(make)
        yield "3 users in one queue", thunks


def with_quiet_rounds(ex: Execution, n: int = QUIET_ROUNDS) -> Execution:
    """``ex`` followed by ``n`` ``round`` events (one per time unit after its last event) and nothing else: the
    input stays as it is while a mechanism steps on alone; the end moves past the last round."""
    last = ex.events[-1].t if ex.events else Fraction(0)
    rounds = tuple(Event(last + k, "round") for k in range(1, n + 1))
    end = last + n + 1
    return replace(ex, events=ex.events + rounds, end=end if ex.end is None else max(ex.end, end))


# ---------------------------------------------------------------------- the search
class _Stop(Exception):
    pass


def search_traces(mech, prop, variant: str, spec: TraceSpec) -> SearchResult:
    """Search executions for a certified violation of ``prop``/``variant`` by ``mech`` (module docstring)."""
    res = SearchResult(mech.name, prop.name, variant, Verdict.UNKNOWN, engine="traces",
                       domain={"executions": f"up to {spec.max_users} users and {spec.max_events} events",
                               "shape": "rounds" if _shape(mech)["rounds"] else "events"})
    t0, w0 = clock(), time.perf_counter()
    end = bud.earliest(t0 + spec.budget, spec.deadline)
    rng = random.Random(spec.seed * 7919 + 17)
    seen: set = set()
    found: Optional[Certificate] = None
    quiet = bool(getattr(prop, "needs_quiet_rounds", False))
    if spec.max_wait is not None:
        res.domain["max_wait"] = fmt_exact(Fraction(spec.max_wait))
    if quiet:
        res.domain["quiet rounds"] = f"every trace ends with {QUIET_ROUNDS} round events, nothing else changing"

    def trial(ex: Optional[Execution]) -> Optional[Certificate]:
        if ex is None:
            return None
        if spec.max_wait is not None and ex.max_wait is None:
            ex = replace(ex, max_wait=Fraction(spec.max_wait))
        if quiet:
            tailed = with_quiet_rounds(ex)
            if spec.accept is None or spec.accept(tailed):
                ex = tailed
        if clock() > end or (spec.max_trials is not None and res.trials >= spec.max_trials):
            raise _Stop()
        key = repr(ex.to_dict())
        if key in seen:
            return None
        seen.add(key)
        res.generated += 1
        if spec.accept is not None and not spec.accept(ex):
            res.inapplicable += 1
            return None
        devs = list(prop.trace_deviations(mech, ex, variant, rng)) if prop.hints_for(variant).deviation == "trace" \
            else [None]
        if not devs:
            res.inapplicable += 1
            return None
        try:
            steps = prop.run(mech, ex, False)
        except SettingError as exc:
            res.outside += 1
            res.first_outside = res.first_outside or str(exc)
            return None
        except bud.BudgetExhausted:
            raise _Stop() from None
        except InstanceError:
            res.invalid += 1
            return None
        except Exception as exc:  # noqa: BLE001 - a candidate never crashes the search
            res.errors += 1
            res.first_error = res.first_error or f"{type(exc).__name__}: {exc}"
            return None
        for dev in devs:
            if spec.max_trials is not None and res.trials >= spec.max_trials:
                raise _Stop()
            try:
                ev = prop.evaluate_execution(mech, ex, variant, dev, exact=False, steps=steps)
            except PropertyFailure as exc:
                res.property_failure = res.property_failure or exc.text
                raise _Stop() from None
            except SettingError as exc:
                res.outside += 1
                res.first_outside = res.first_outside or str(exc)
                continue
            except bud.BudgetExhausted:
                raise _Stop() from None
            except Exception as exc:  # noqa: BLE001
                res.errors += 1
                res.first_error = res.first_error or f"{type(exc).__name__}: {exc}"
                continue
            if ev.measure is None:
                res.inapplicable += 1
                continue
            res.trials += 1
            if prop.worse(ev.measure, res.worst):
                res.worst = ev.measure
            if ev.violated and ev.witness is not None:
                try:
                    cert = prop.recheck(mech, ev.witness)
                except Exception as exc:  # noqa: BLE001
                    res.errors += 1
                    res.first_error = res.first_error or f"exact re-check: {type(exc).__name__}: {exc}"
                    continue
                if cert is None:
                    res.rejected += 1
                    continue
                res.time_to_first = clock() - t0
                res.wall_to_first = time.perf_counter() - w0
                return cert
        return None

    try:
        if spec.exhaustive:
            res.domain["layers"] = []
            for layer in layered(_tiny_layers(mech), spec.per_layer, spec.seed):
                res.domain["layers"].append(layer.describe())
                for make in layer.items:
                    found = trial(make())
                    if found is not None:
                        raise _Stop()
        k = 0
        while found is None:
            arrivals = spec.accept is not None and k % 2 == 0
            found = trial(draw_execution(rng, mech, spec.max_users, spec.max_events, arrivals_only=arrivals))
            k += 1
            if spec.progress and k % 50 == 0:
                spec.progress(res)
    except _Stop:
        pass
    res.seconds = clock() - t0
    res.wall_seconds = time.perf_counter() - w0
    if found is not None:
        res.verdict, res.certificate = Verdict.VIOLATED, found
    elif res.property_failure:
        res.verdict, res.note = Verdict.UNKNOWN, f"the property failed on a generated execution: {res.property_failure}"
    elif res.trials == 0:
        res.verdict = Verdict.UNKNOWN
        res.note = (bud.budget_note("no execution evaluated") if clock() >= end else
                    f"no execution could be evaluated ({res.errors} errors; first: {res.first_error or res.first_outside or 'none'})")
    else:
        res.verdict = Verdict.NOT_REFUTED
        notes = []
        if res.outside:
            notes.append(f"{res.outside} generated executions were outside the mechanism's domain (first: {res.first_outside})")
        if res.rejected:
            notes.append(f"{res.rejected} float candidates failed the exact replay")
        if res.errors:
            notes.append(f"{res.errors} candidates raised errors (first: {res.first_error})")
        res.note = "; ".join(notes)
    return res


# ---------------------------------------------------------------------- minimising a trace
def size_of_execution(ex: Execution) -> tuple:
    """How big a trace is: events, users, servers, resources, then the largest denominator and number."""
    nums: list[Fraction] = [v for row in ex.capacity for v in row] + ([ex.end] if ex.end is not None else [])
    specs = list(ex.users) + [e.spec for e in ex.events if e.kind == "arrive"]
    for u in specs:
        nums += list(u.demand) + ([u.tasks] if u.tasks is not None else []) + [u.weight]
    for e in ex.events:
        nums.append(e.t)
        if e.demand is not None:
            nums += list(e.demand)
        if e.capacity is not None:
            nums += list(e.capacity)
        if e.tasks not in ("keep", None):
            nums.append(e.tasks)
    return (ex.n_events, len(specs), len(ex.servers), len(ex.resources),
            max([v.denominator for v in nums] + [1]), max([abs(v) for v in nums] + [Fraction(0)]))


def _valid(ex: Execution) -> Optional[Execution]:
    try:
        return parse_execution(ex.to_dict())
    except InstanceError:
        return None


def _remap(dev: Optional[TraceMisreport], old: Execution, new: Execution) -> Any:
    """The misreport ``dev`` on ``new`` (events and users removed from ``old``): places are renamed by identity
    of what they point to; ``False`` when nothing of it is left."""
    if dev is None:
        return None
    if isinstance(dev, TraceResubmission):  # named by its user; the exact replay checks it still applies
        return dev if dev.user in new.user_names else False
    def key(ex: Execution, where: str):
        kind, _, idx = where.partition("[")
        i = int(idx.rstrip("]"))
        return ("u", ex.users[i].name) if kind == "users" else ("e", ex.events[i].t, ex.events[i].kind, ex.events[i].user)
    new_places = {key(new, w): w for w in statement_places(new, dev.user)} if dev.user in new.user_names else {}
    out = []
    for st in dev.reports:
        w = new_places.get(key(old, st.where))
        if w is not None:
            out.append(replace(st, where=w))
    return TraceMisreport(dev.user, tuple(out)) if out else False


def _candidates(ex: Execution) -> Iterator[Execution]:
    """Smaller traces: one event fewer (later ones first), one user fewer (with its events), then smaller
    numbers (times packed, demands, capacities and task counts lowered)."""
    for i in reversed(range(ex.n_events)):
        e = ex.events[i]
        if e.kind == "arrive":
            continue
        yield ex.without_events([i])
    names = ex.user_names
    for u in reversed(names):
        keep_users = tuple(s for s in ex.users if s.name != u)
        drop = [i for i, e in enumerate(ex.events) if (e.kind == "arrive" and e.spec.name == u) or e.user == u]
        if not keep_users and not any(e.kind == "arrive" for i, e in enumerate(ex.events) if i not in drop):
            continue
        yield replace(ex.without_events(drop), users=keep_users)
    # pack times: the k-th distinct time becomes k
    times = sorted({e.t for e in ex.events})
    packed = {t: Fraction(k + 1) for k, t in enumerate(times)}
    if any(packed[t] != t for t in times):
        yield replace(ex, events=tuple(replace(e, t=packed[e.t]) for e in ex.events),
                      end=None if ex.end is None else max(packed.values(), default=Fraction(0)) + 1)
    if ex.end is not None and ex.events and ex.end > ex.events[-1].t + 1:
        yield replace(ex, end=ex.events[-1].t + 1)
    def smaller(v: Fraction) -> list[Fraction]:
        out = []
        for c in (Fraction(0), Fraction(1), Fraction(int(v) // 2), Fraction(int(v)), v - 1):
            if 0 <= c < v and c not in out:
                out.append(c)
        return out
    for s in range(len(ex.servers)):
        for r in range(len(ex.resources)):
            for c in smaller(ex.capacity[s][r]):
                cap = [list(row) for row in ex.capacity]
                cap[s][r] = c
                yield replace(ex, capacity=tuple(tuple(row) for row in cap))
    for k, u in enumerate(ex.users):
        for nu in _smaller_user(u, smaller):
            users = list(ex.users)
            users[k] = nu
            yield replace(ex, users=tuple(users))
    for i, e in enumerate(ex.events):
        alts = []
        if e.kind == "arrive":
            alts = [replace(e, spec=nu) for nu in _smaller_user(e.spec, smaller)]
        elif e.demand is not None:
            for r in range(len(e.demand)):
                alts += [replace(e, demand=tuple(c if q == r else v for q, v in enumerate(e.demand)))
                         for c in smaller(e.demand[r])]
        elif e.tasks not in ("keep", None):
            alts = [replace(e, tasks=c) for c in smaller(e.tasks)]
        for a in alts:
            evs = list(ex.events)
            evs[i] = a
            yield replace(ex, events=tuple(evs))


def _smaller_user(u: UserSpec, smaller) -> Iterator[UserSpec]:
    for r in range(len(u.demand)):
        for c in smaller(u.demand[r]):
            yield replace(u, demand=tuple(c if q == r else v for q, v in enumerate(u.demand)))
    if u.tasks is not None:
        for c in smaller(u.tasks):
            yield replace(u, tasks=c, work=None if u.work is None else u.work)
    if u.weight != 1:
        yield replace(u, weight=Fraction(1))


def _try(prop, mech, cert: Certificate, ex: Execution, accept=None) -> Optional[Certificate]:
    valid = _valid(ex)
    if valid is None:
        return None
    if accept is not None and not accept(valid):  # a claim's standing assumptions stay true while minimising
        return None
    dev = _remap(cert.witness.deviation, cert.witness.execution, valid)
    if dev is False:
        return None
    w = replace(cert.witness, execution=valid, deviation=dev)
    try:
        return prop.recheck(mech, w)
    except Exception:  # noqa: BLE001 - a smaller trace the mechanism rejects is not a smaller violation
        return None


def one_minimal(prop, mech, cert: Certificate, deadline: Optional[float] = None, accept=None) -> Optional[bool]:
    """Does removing ANY single event or user remove the violation?  ``None``: not decided before ``deadline``."""
    ex = cert.witness.execution
    for i in range(ex.n_events):
        if deadline is not None and clock() > deadline:
            return None
        e = ex.events[i]
        if e.kind == "arrive":
            continue
        if _try(prop, mech, cert, ex.without_events([i]), accept) is not None:
            return False
    for u in ex.user_names:
        if deadline is not None and clock() > deadline:
            return None
        keep = tuple(s for s in ex.users if s.name != u)
        drop = [i for i, e in enumerate(ex.events) if (e.kind == "arrive" and e.spec.name == u) or e.user == u]
        if _try(prop, mech, cert, replace(ex.without_events(drop), users=keep), accept) is not None:
            return False
    return True


def minimise(mech, cert: Certificate, budget: float = 10.0, deadline: Optional[float] = None,
             accept: Optional[Callable[[Execution], bool]] = None) -> tuple[Certificate, dict]:
    """The smallest trace (``size_of_execution``) found by greedy moves that keeps an exact violation (inside
    ``accept``: a claim's standing assumptions), and its minimality record: ``{"status", "one_minimal", "size",
    "moves"}``; 1-minimality is judged among the traces ``accept`` accepts."""
    from ..properties import get_property

    prop = get_property(cert.witness.property)
    end = bud.earliest(clock() + budget, deadline)
    start = size_of_execution(cert.witness.execution)
    moves = 0
    improved = True
    while improved and clock() < end:
        improved = False
        cur = size_of_execution(cert.witness.execution)
        for cand in _candidates(cert.witness.execution):
            if clock() >= end:
                break
            if size_of_execution(cand) >= cur:
                continue
            got = _try(prop, mech, cert, cand, accept)
            if got is not None:
                cert, moves, improved = got, moves + 1, True
                break
    done = clock() < end
    om = one_minimal(prop, mech, cert, end, accept) if done else None
    size = size_of_execution(cert.witness.execution)
    status = ("minimised (no smaller move keeps the violation)" if done else
              "partly minimised (the budget ended the moves)")
    return cert, {"status": status, "one_minimal": bool(om), "size": {
        "events": size[0], "users": size[1], "servers": size[2], "resources": size[3]},
        "from": {"events": start[0], "users": start[1]}, "moves": moves}
