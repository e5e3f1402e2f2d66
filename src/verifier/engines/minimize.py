"""Greedy minimiser of certified violations (delta debugging on the exact certificate).

An engine: it proposes smaller instances, the property's exact ``recheck`` decides, and it returns a
certificate (it never stores).

From a certificate, repeatedly try ONE simplification and keep it iff ``prop.recheck`` still certifies
the violation EXACTLY on the result:

1. remove a user (not one the witness is about when the property's ``Hints.uses_users`` says its re-check
   reads them -- the envious pair, the SI user, the leaver -- nor a deviator or coalition member), a server,
   a resource, an external resource; with a queue tree also a queue: a leaf queue is removed (its users move
   to its parent), an inner one merged into its parent (its users and child queues move up;
   ``Environment.without_queue``);
2. drop a feature: weight -> 1 (of a user or a queue), a queue's guarantee or max, task bound -> unbounded,
   eligible set -> all servers, a per-server demand override, a part of a misreport -> truthful, a
   coalition member (coalitions of 3+);
3. simplify a number (capacities, demands, external demands, weights, queue weights, guarantees and maxes,
   bounds, misreported numbers) to a simpler one: 0, small integers, floor/ceil, fewer-digit fractions --
   "simpler" means a smaller ``(denominator, |numerator|)``, so the process terminates.

Candidates outside the mechanism's setting, invalid environments (docs/model.md) and instances where the
property's premise fails are skipped.  Passes repeat until a whole pass changes nothing: the result is then
**1-minimal** (no single move of the list above keeps the violation); if the time budget (``budget``
wall-clock seconds, and the command's absolute ``deadline``, ``verifier.properties.budget``) ends first, the
result is smaller (or the input itself) but its minimality is not established.  The result is recorded in the store's
``minimality`` field.
"""
from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Any, Callable, Iterator, Optional

from mechverify.model import Environment
from mechverify.numbers import InstanceError

from ..properties import budget as bud
from ..properties import get_property
from ..properties.base import Certificate, Deviation, Report, Witness

__all__ = ["minimize", "size_of", "simpler_numbers", "complexity"]


def complexity(v: Fraction) -> tuple[int, int]:
    """How complex a number is: ``(denominator, |numerator|)`` (smaller is simpler)."""
    v = Fraction(v)
    return v.denominator, abs(v.numerator)


def simpler_numbers(v: Fraction, allow_zero: bool = True, limit: int = 6) -> list[Fraction]:
    """Candidates strictly simpler than ``v`` (smaller ``(denominator, |numerator|)``), simplest first."""
    v = Fraction(v)
    cands: set[Fraction] = set()
    if allow_zero:
        cands.add(Fraction(0))
    for i in range(1, min(int(abs(v)) + 2, 11)):
        cands.add(Fraction(i))
    cands.add(Fraction(math.floor(v)))
    cands.add(Fraction(math.ceil(v)))
    for q in (2, 3, 4, 5, 6, 8, 10, 12):
        if q < v.denominator:
            cands.add(v.limit_denominator(q))
            cands.add(Fraction(round(v * q), q))
    cv = complexity(v)
    out = sorted((c for c in cands if c >= 0 and complexity(c) < cv and (allow_zero or c > 0)),
                 key=lambda c: (complexity(c), abs(c - v)))
    # keep the simplest few and the few closest to v (closest ones keep a tight violation alive)
    close = sorted(out, key=lambda c: (abs(c - v), complexity(c)))
    pick: list[Fraction] = []
    for c in out[: limit // 2] + close[: limit - limit // 2]:
        if c not in pick:
            pick.append(c)
    return sorted(pick, key=complexity)


def size_of(env: Environment) -> dict[str, int]:
    """The shape and number sizes of ``env`` (the minimality record's ``size``)."""
    return {"users": env.n_users, "servers": env.n_servers, "resources": env.n_resources,
            "external": env.n_external,
            "max_denominator": max([v.denominator for row in env.capacity for v in row]
                                   + [v.denominator for row in env.demand for v in row] + [1]),
            "max_number": int(max([abs(v) for row in env.capacity for v in row]
                                  + [abs(v) for row in env.demand for v in row] + [Fraction(0)])),
            **({"queues": env.n_queues} if env.n_queues else {})}


# ---------------------------------------------------------------------- moves
def _remap_report(rep: Report, user_map: dict[int, int], server_map: Optional[dict[int, int]] = None,
                  keep_r: Optional[list[int]] = None, keep_k: Optional[list[int]] = None) -> Report:
    kw: dict[str, Any] = {"user": user_map[rep.user]}
    if rep.eligible is not None and server_map is not None:
        kw["eligible"] = frozenset(server_map[s] for s in rep.eligible if s in server_map)
    if rep.demand is not None and keep_r is not None:
        kw["demand"] = tuple(rep.demand[r] for r in keep_r)
    if rep.external_demand is not None and keep_k is not None:
        # no external resource left: the report has no external part (None, not an empty vector)
        kw["external_demand"] = tuple(rep.external_demand[k] for k in keep_k) if keep_k else None
    return replace(rep, **kw)


def _remap_dev(dev: Optional[Deviation], user_map: dict[int, int], **kw: Any) -> Optional[Deviation]:
    if dev is None:
        return None
    if dev.kind == "leave":
        return Deviation("leave", leave=tuple(user_map[j] for j in dev.leave))
    return Deviation("misreport", tuple(_remap_report(r, user_map, **kw) for r in dev.reports))


Candidate = tuple[str, Environment, Optional[Deviation], tuple[int, ...]]


def _try(build: Callable[[], Any]) -> Any:
    """Build a candidate; ``None`` if it is invalid input (``InstanceError``)."""
    try:
        return build()
    except InstanceError:
        return None


def _safe(gen: Iterator[tuple]) -> Iterator[Candidate]:
    for desc, env2, dev2, users2 in gen:
        if env2 is not None:
            yield desc, env2, dev2, users2


def _structural(w: Witness, protected: set[int]) -> Iterator[Candidate]:
    env, dev = w.env, w.deviation
    J, S, R, K = env.n_users, env.n_servers, env.n_resources, env.n_external
    ident = {j: j for j in range(J)}
    for j in reversed(range(J)):
        if j in protected or J == 1:
            continue
        keep = [i for i in range(J) if i != j]
        um = {old: new for new, old in enumerate(keep)}
        users = tuple(um[u] for u in w.users if u in um)
        yield f"remove user {env.users[j]}", _try(lambda: env.restrict(users=keep)), _remap_dev(dev, um), users
    for s in reversed(range(S)):
        if S == 1:
            break
        keep = [i for i in range(S) if i != s]
        sm = {old: new for new, old in enumerate(keep)}
        yield (f"remove server {env.servers[s]}", _try(lambda: env.restrict(servers=keep)),
               _remap_dev(dev, ident, server_map=sm), w.users)
    for r in reversed(range(R)):
        if R == 1:
            break
        keep = [i for i in range(R) if i != r]
        yield (f"remove resource {env.resources[r]}", _try(lambda: env.restrict(resources=keep)),
               _remap_dev(dev, ident, keep_r=keep), w.users)
    for k in reversed(range(K)):
        keep = [i for i in range(K) if i != k]
        yield (f"remove external {env.external[k]}", _try(lambda: env.restrict(external=keep)),
               _remap_dev(dev, ident, keep_k=keep), w.users)
    for q in reversed(range(env.n_queues)):  # leaves first (declared after their parents), then inner queues
        parent = env.queue_parent(q)
        to = "the root" if parent is None else env.queues[parent]
        desc = (f"merge queue {env.queues[q]} into {to}" if env.queue_children(q)
                else f"remove queue {env.queues[q]} (its users move to {to})")
        yield desc, _try(lambda: env.without_queue(q)), dev, w.users


def _features(w: Witness) -> Iterator[Candidate]:
    env, dev = w.env, w.deviation
    full = frozenset(range(env.n_servers))
    for j in range(env.n_users):
        name = env.users[j]
        if env.weight[j] != 1:
            yield f"weight of {name} -> 1", _try(lambda: env.with_user(j, weight=1)), dev, w.users
        if env.tasks[j] is not None:
            yield f"task bound of {name} -> unbounded", _try(lambda: env.with_user(j, tasks=None)), dev, w.users
        if env.eligible[j] != full:
            yield f"{name} eligible everywhere", _try(lambda: env.with_user(j, eligible=full)), dev, w.users
    for q in range(env.n_queues):
        if env.queue_weight[q] != 1:
            qw = env.queue_weight[:q] + (Fraction(1),) + env.queue_weight[q + 1:]
            yield f"weight of queue {env.queues[q]} -> 1", _try(lambda: replace(env, queue_weight=qw)), dev, w.users
        if env.queue_guarantee[q] is not None:
            qg = env.queue_guarantee[:q] + (None,) + env.queue_guarantee[q + 1:]
            yield (f"drop the guarantee of queue {env.queues[q]}", _try(lambda: replace(env, queue_guarantee=qg)),
                   dev, w.users)
        if env.queue_max[q] is not None:
            qm = env.queue_max[:q] + (None,) + env.queue_max[q + 1:]
            yield f"drop the max of queue {env.queues[q]}", _try(lambda: replace(env, queue_max=qm)), dev, w.users
    for j in range(env.n_users):
        if env.usage and any(env.usage[j]):
            us = env.usage[:j] + (tuple(Fraction(0) for _ in range(env.n_servers)),) + env.usage[j + 1:]
            yield f"{env.users[j]} holds nothing in the state", _try(lambda: replace(env, usage=us)), dev, w.users
    for (j, s) in sorted(env.server_demand):
        sd = {k: v for k, v in env.server_demand.items() if k != (j, s)}
        yield (f"drop per-server demand of {env.users[j]} at {env.servers[s]}", _try(lambda: replace(env, server_demand=sd)),
               dev, w.users)
    if dev is not None and dev.kind == "misreport":
        for i, rep in enumerate(dev.reports):
            for fld in ("external_demand", "eligible"):
                if getattr(rep, fld) is not None:
                    truth = env.external_demand[rep.user] if fld == "external_demand" else env.eligible[rep.user]
                    if getattr(rep, fld) != truth:
                        new = list(dev.reports)
                        new[i] = replace(rep, **{fld: None})
                        yield f"{env.users[rep.user]} reports its true {fld}", env, Deviation("misreport", tuple(new)), w.users
            if rep.demand is not None:
                for r, v in enumerate(rep.demand):
                    t = env.demand[rep.user][r]
                    if v != t:
                        nd = list(rep.demand)
                        nd[r] = t
                        new = list(dev.reports)
                        new[i] = replace(rep, demand=tuple(nd))
                        yield (f"{env.users[rep.user]} reports its true {env.resources[r]} demand", env,
                               Deviation("misreport", tuple(new)), w.users)
        if len(dev.reports) > 2:
            for i in range(len(dev.reports)):
                new = tuple(r for k, r in enumerate(dev.reports) if k != i)
                yield (f"{env.users[dev.reports[i].user]} leaves the coalition", env, Deviation("misreport", new),
                       tuple(u for u in w.users if u != dev.reports[i].user))


def _numbers(w: Witness, zero_demands: bool = True, zero_capacities: bool = True) -> Iterator[Candidate]:
    env, dev = w.env, w.deviation

    def setcap(s, r, v):
        cap = [list(row) for row in env.capacity]
        cap[s][r] = v
        return replace(env, capacity=tuple(tuple(row) for row in cap))

    for s in range(env.n_servers):
        for r in range(env.n_resources):
            for c in simpler_numbers(env.capacity[s][r], allow_zero=zero_capacities):
                yield f"capacity {env.servers[s]}.{env.resources[r]} -> {c}", _try(lambda: setcap(s, r, c)), dev, w.users
    for k in range(env.n_external):
        for c in simpler_numbers(env.external_capacity[k]):
            ec = list(env.external_capacity)
            ec[k] = c
            yield f"capacity {env.external[k]} -> {c}", _try(lambda: replace(env, external_capacity=tuple(ec))), dev, w.users
    for j in range(env.n_users):
        for r in range(env.n_resources):
            for c in simpler_numbers(env.demand[j][r], allow_zero=zero_demands):
                d = list(env.demand[j])
                d[r] = c
                dem = list(env.demand)
                dem[j] = tuple(d)
                yield f"demand {env.users[j]}.{env.resources[r]} -> {c}", _try(lambda: replace(env, demand=tuple(dem))), dev, w.users
        for k in range(env.n_external):
            for c in simpler_numbers(env.external_demand[j][k]):
                e = list(env.external_demand[j])
                e[k] = c
                ed = list(env.external_demand)
                ed[j] = tuple(e)
                yield (f"external demand {env.users[j]}.{env.external[k]} -> {c}",
                       _try(lambda: replace(env, external_demand=tuple(ed))), dev, w.users)
        if env.weight[j] != 1:
            for c in simpler_numbers(env.weight[j], allow_zero=False):
                yield f"weight {env.users[j]} -> {c}", _try(lambda: env.with_user(j, weight=c)), dev, w.users
        if env.tasks[j] is not None:
            for c in simpler_numbers(env.tasks[j]):
                yield f"task bound {env.users[j]} -> {c}", _try(lambda: env.with_user(j, tasks=c)), dev, w.users
    for j in range(env.n_users):
        for s_, v in enumerate(env.usage[j] if env.usage else ()):
            for c in simpler_numbers(v) if v else ():
                row = env.usage[j][:s_] + (c,) + env.usage[j][s_ + 1:]
                us = env.usage[:j] + (row,) + env.usage[j + 1:]
                yield (f"usage {env.users[j]}.{env.servers[s_]} -> {c}", _try(lambda: replace(env, usage=us)), dev,
                       w.users)
    for q in range(env.n_queues):
        if env.queue_weight[q] != 1:
            for c in simpler_numbers(env.queue_weight[q], allow_zero=False):
                qw = env.queue_weight[:q] + (c,) + env.queue_weight[q + 1:]
                yield f"weight of queue {env.queues[q]} -> {c}", _try(lambda: replace(env, queue_weight=qw)), dev, w.users
        g = env.queue_guarantee[q]
        for r, v in enumerate(g or ()):
            for c in simpler_numbers(v):
                qg = env.queue_guarantee[:q] + (g[:r] + (c,) + g[r + 1:],) + env.queue_guarantee[q + 1:]
                yield (f"guarantee of queue {env.queues[q]}.{env.resources[r]} -> {c}",
                       _try(lambda: replace(env, queue_guarantee=qg)), dev, w.users)
        m = env.queue_max[q]
        for r, v in enumerate(m or ()):
            for c in simpler_numbers(v):
                qm = env.queue_max[:q] + (m[:r] + (c,) + m[r + 1:],) + env.queue_max[q + 1:]
                yield (f"max of queue {env.queues[q]}.{env.resources[r]} -> {c}",
                       _try(lambda: replace(env, queue_max=qm)), dev, w.users)
    for (j, s), vec in sorted(env.server_demand.items()):
        for r, v in enumerate(vec):
            for c in simpler_numbers(v, allow_zero=zero_demands):
                sd = dict(env.server_demand)
                nv = list(vec)
                nv[r] = c
                sd[(j, s)] = tuple(nv)
                yield f"per-server demand {env.users[j]}@{env.servers[s]}.{env.resources[r]} -> {c}", \
                    _try(lambda: replace(env, server_demand=sd)), dev, w.users
    if dev is not None and dev.kind == "misreport":
        for i, rep in enumerate(dev.reports):
            for fld in ("demand", "external_demand"):
                vec = getattr(rep, fld)
                if vec is None:
                    continue
                for r, v in enumerate(vec):
                    for c in simpler_numbers(v, allow_zero=zero_demands):
                        nv = list(vec)
                        nv[r] = c
                        new = list(dev.reports)
                        new[i] = replace(rep, **{fld: tuple(nv)})
                        yield f"misreported {fld} {env.users[rep.user]}[{r}] -> {c}", env, \
                            Deviation("misreport", tuple(new)), w.users
            if rep.tasks not in ("keep", None):
                for c in simpler_numbers(rep.tasks):
                    new = list(dev.reports)
                    new[i] = replace(rep, tasks=c)
                    yield f"misreported tasks {env.users[rep.user]} -> {c}", env, Deviation("misreport", tuple(new)), w.users


# ---------------------------------------------------------------------- the loop
def _protected(uses_users: bool, w: Witness) -> set[int]:
    out: set[int] = set()
    if uses_users:
        out |= set(w.users)
    if w.deviation is not None:
        out |= set(w.deviation.users)
    return out


def _valid_env(env: Environment) -> bool:
    try:
        env.validate()
        return True
    except InstanceError:
        return False


def minimize(mech, cert: Certificate, *, budget: float = 20.0, domain=None,
             accept: Optional[Callable[[Environment], bool]] = None,
             on_step: Optional[Callable[[str], None]] = None,
             deadline: Optional[float] = None) -> tuple[Certificate, dict[str, Any]]:
    """Greedily simplify ``cert``'s instance while the EXACT violation persists.

    Returns ``(certificate of the result, minimality record)``; the record has ``status``
    (``"1-minimal"`` or ``"reduced; budget exhausted"`` or ``"already 1-minimal"``), ``one_minimal``,
    the sizes before and after, the accepted moves, the number of exact re-checks and the seconds.
    ``domain`` (a ``verifier.engines.strategies.Domain``): stay inside it -- no zero demands / capacities
    when the searched domain excludes them); ``accept(env)``: every candidate's true and deviated
    environments must be accepted (a claim's standing assumptions).  ``budget`` (wall-clock seconds) and
    ``deadline`` (a ``time.monotonic()`` value) stop it between two re-checks; past the deadline it
    returns ``cert`` as it is (status ``not minimised (budget)``)."""
    if cert.witness.execution is not None:  # a trace: fewest events, then users, then the smallest numbers
        from .traces import minimise as minimise_trace

        return minimise_trace(mech, cert, budget=budget, deadline=deadline, accept=accept)
    zd = True if domain is None else domain.zero_demands
    zc = True if domain is None else domain.zero_capacities
    t0 = bud.now()  # wall-clock seconds, like every budget
    end = bud.earliest(t0 + budget, deadline)
    w0 = cert.witness
    prop = get_property(w0.property)
    current = cert
    before = size_of(w0.env)
    moves: list[str] = []
    checks = 0
    one_minimal = False
    try:
        while True:
            changed = False
            w = current.witness
            uses_users = prop.hints_for(w.variant).uses_users
            protected = _protected(uses_users, w)
            for gen in (_safe(_structural(w, protected)), _safe(_features(w)), _safe(_numbers(w, zd, zc))):
                for desc, env2, dev2, users2 in gen:
                    if bud.now() > end:
                        raise TimeoutError
                    if not _valid_env(env2):
                        continue
                    try:
                        mech.setting.check(env2, mech.name)
                        env2d = dev2.apply(env2) if dev2 is not None else None
                        if accept is not None and not (accept(env2) and (
                                env2d is None or dev2.kind != "misreport" or accept(env2d))):
                            continue
                        if prop.applicable(mech, env2, w.variant):
                            continue
                    except InstanceError:
                        continue
                    wit = Witness(w.property, w.variant, w.mechanism, env2, dev2, None,
                                  users2 if uses_users or dev2 is not None else ())
                    checks += 1
                    try:
                        c2 = prop.recheck(mech, wit)
                    except Exception:  # noqa: BLE001 - solver trouble: not a simplification
                        c2 = None
                    if c2 is not None:
                        current = c2
                        moves.append(desc)
                        if on_step:
                            on_step(desc)
                        changed = True
                        break
                if changed:
                    break
            if not changed:
                one_minimal = True
                break
    except TimeoutError:
        pass
    if not moves and not one_minimal:  # nothing was tried in time: the certificate as found
        after = size_of(current.witness.env)
        return current, {"status": f"not minimised ({bud.budget_note()})", "one_minimal": False, "size": after,
                         "original_size": before, "moves": [], "exact_rechecks": checks,
                         "seconds": round(bud.now() - t0, 3)}
    current = _finalise(mech, prop, current)
    current, renamed = _canonical_names(mech, prop, current)
    after = size_of(current.witness.env)
    status = ("already 1-minimal" if one_minimal and not moves else "1-minimal" if one_minimal
              else "reduced; budget exhausted before 1-minimality was established")
    record = {"status": status, "one_minimal": one_minimal, "size": after, "original_size": before,
              "moves": moves, "exact_rechecks": checks, "seconds": round(bud.now() - t0, 3),
              "definition": f"no single removal (user, server, resource, external resource"
                            f"{', queue' if w0.env.n_queues else ''}), feature drop or "
                            "number simplification keeps the exact violation"}
    if renamed:
        record["renamed"] = renamed
    return current, record


def _canonical_names(mech, prop, cert: Certificate) -> tuple[Certificate, dict]:
    """What is left after minimisation, renamed u1..un, s1..sm, r1..rk, e1.. (external), so that the
    summary's names match the size ("2 users": u1 and u2); returns the re-checked certificate and the map
    ``{kind: {new: original}}`` of the names that changed.  Names a mechanism reads (e.g. DRF-cpu finds the
    resource called ``cpu``) can matter: if the renamed instance does not re-check exactly, users and
    servers alone are renamed; if even that fails, the original names are kept (and the summary, computed on
    the instance, uses them)."""
    w = cert.witness
    env = w.env
    new = {"users": tuple(f"u{j + 1}" for j in range(env.n_users)),
           "servers": tuple(f"s{s + 1}" for s in range(env.n_servers)),
           "resources": tuple(f"r{r + 1}" for r in range(env.n_resources)),
           "external": tuple(f"e{k + 1}" for k in range(env.n_external))}
    old = {"users": env.users, "servers": env.servers, "resources": env.resources, "external": env.external}
    # every name first; a mechanism may read resource names (DRF-cpu), so then users and servers only
    for kinds in (("users", "servers", "resources", "external"), ("users", "servers")):
        renamed = {kind: {n: o for n, o in zip(new[kind], old[kind]) if n != o} for kind in kinds}
        renamed = {kind: m for kind, m in renamed.items() if m}
        if not renamed:
            return cert, {}
        try:
            env2 = replace(env, **{kind: new[kind] for kind in kinds})
            c2 = prop.recheck(mech, Witness(w.property, w.variant, w.mechanism, env2, w.deviation, None, w.users))
        except Exception:  # noqa: BLE001 - keep the certified original
            c2 = None
        if c2 is not None and c2.gap == cert.gap:
            return c2, renamed
    return cert, {}


def _finalise(mech, prop, cert: Certificate) -> Certificate:
    """Give properties that recompute who is hurt (PO, BF, SRF) a witness naming the users again."""
    w = cert.witness
    if prop.hints_for(w.variant).uses_users or w.deviation is not None or w.users:
        return cert
    try:
        ev = prop.evaluate(mech, w.env, w.variant, exact=True)
        if ev.violated and ev.witness is not None:
            c2 = prop.recheck(mech, ev.witness)
            if c2 is not None:
                return c2
    except Exception:  # noqa: BLE001
        pass
    return cert
