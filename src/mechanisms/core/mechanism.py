"""What a mechanism is: ``Setting`` (the part of the one model it is defined for), ``Claim`` (what a paper, or a
user, says about a property), ``Mechanism`` (function, setting, claims, origin) and :func:`call` (setting
check, the call, the output check).  The table of registered mechanisms lives here too; ``registry``
fills it (``@register``, entry points) and looks names up, ``references`` makes a user's function a
``Mechanism`` -- both import this module, neither imports the other's caller.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from mechverify.allocation import Allocation, feasibility_violations
from mechverify.deadline import call_limit_scope
from mechverify.model import Environment
from mechverify.numbers import InstanceError, fmt_exact

from .z3spec import Z3Spec

__all__ = ["Claim", "Setting", "Mechanism", "SettingError", "MechanismOutputError", "DOMAIN_CONDITIONS",
           "EXECUTION_CONDITIONS", "everyone", "ORIGINS",
           "call", "check_output", "REGISTERED"]

#: where a mechanism comes from (``Mechanism.origin``)
ORIGINS = ("builtin", "reference", "entry-point", "function")


class SettingError(InstanceError):
    """The environment uses a part of the model the mechanism is not defined for."""


class MechanismOutputError(InstanceError):
    """A mechanism returned an allocation outside chi(E) of its own setting (a bug, never a verdict)."""


@dataclass(frozen=True)
class Claim:
    """What a paper says about a property of a mechanism.

    ``variant=None`` covers the property's *claim variants* (``Property.claim_variants``: e.g. EF
    placement-aware, SP over demands and -- with placement -- eligible sets).  ``domain`` names the
    paper's standing assumptions that the mechanism's ``Setting`` is wider than (see
    :data:`DOMAIN_CONDITIONS`); a violation outside them does not refute the claim.
    """

    property: str  # 'sp', 'gsp', 'ef', 'si', 'po', 'bf', 'srf', 'pm', 'single-server-drf'
    status: str  # 'holds' | 'fails'
    source: str  # e.g. "001 Sec. IV-C Thm 3"
    variant: Optional[str] = None
    note: str = ""
    domain: tuple[str, ...] = ()

    def covers(self, env: Any) -> Optional[str]:
        """``None`` if the claim speaks about ``env`` (an environment, or an execution:
        ``mechverify.execution.Execution``); else the assumption it breaks.  On an execution, a condition on
        environments is read on every user it ever has (``everyone``) and the initial servers."""
        every = None
        for cond in self.domain:
            if cond in EXECUTION_CONDITIONS:
                test, text = EXECUTION_CONDITIONS[cond]
                if not hasattr(env, "events"):
                    continue  # a condition on executions says nothing about one instance
                if not test(env):
                    return text
                continue
            test, text = DOMAIN_CONDITIONS[cond]
            if hasattr(env, "events"):
                if every is None:
                    every = everyone(env)
                if every is not None and not test(every):
                    return text
            elif not test(env):
                return text
        return None


def _positive_demands(env: Environment) -> bool:
    # every resource: computational, per-server and external (the search's positive-demand domain,
    # ``zero_demands=False``, draws no zero external demand either)
    return all(v > 0 for row in env.demand for v in row) and all(
        v > 0 for vec in env.server_demand.values() for v in vec) and all(
        v > 0 for row in env.external_demand for v in row)


DOMAIN_CONDITIONS = {
    "positive_demands": (_positive_demands, "the paper assumes every user demands every resource (d > 0)"),
    "positive_capacities": (lambda env: all(v > 0 for row in env.capacity for v in row),
                            "the paper assumes every server has every resource (c > 0)"),
    "no_placement": (lambda env: not env.has_placement, "the paper assumes no placement constraints"),
    "uniform_demands": (lambda env: not env.has_server_demand,
                        "the paper's theorem assumes one demand vector per user (per-server demands are 002 Sec. IV, "
                        "future work there)"),
    "unbounded": (lambda env: not env.has_bounds, "the paper assumes unbounded task counts"),
    "unweighted": (lambda env: not env.has_weights, "the paper assumes equal weights"),
}


def everyone(ex: Any) -> Optional[Environment]:
    """One environment holding every user an execution ever has (its initial servers): what a claim's
    conditions on environments read on an execution (``None``: it has no users)."""
    from mechverify.execution import _State

    state = _State(ex, None)
    for e in ex.events:
        if e.kind == "arrive":
            state.apply(e)
    envs = state.environment()
    return None if envs is None else envs[0]


def _arrivals_only(ex: Any) -> bool:
    return all(e.kind == "arrive" for e in ex.events) and all(u.work is None for u in ex.users) and all(
        e.spec.work is None for e in ex.events if e.kind == "arrive")


def _rounds_only(ex: Any) -> bool:
    """Demands change only AT round boundaries: a task count (the per-round demand) changes through a
    ``demand`` event followed by a ``round`` at the same time; no arrivals or departures after time 0, one
    resource, one server, no capacity change, no work (users stay)."""
    events = ex.events
    for i, e in enumerate(events):
        if e.kind in ("capacity", "finish", "arrive", "leave"):
            return False
        if e.kind == "demand":
            if e.demand is not None or e.external_demand is not None:
                return False
            nxt = next((f for f in events[i + 1:] if f.kind != "demand"), None)
            if nxt is None or nxt.kind != "round" or nxt.t != e.t:
                return False
    return len(ex.resources) == 1 and len(ex.servers) == 1 and all(u.work is None for u in ex.users)


#: conditions on an execution (a claim's ``domain`` may name them beside :data:`DOMAIN_CONDITIONS`)
EXECUTION_CONDITIONS = {
    "arrivals_only": (_arrivals_only, "the paper's model has users arriving one by one and never leaving (no "
                                      "departures, demand changes, finishes or capacity changes)"),
    "rounds_only": (_rounds_only, "the paper's model is one resource shared in rounds, every user present "
                                  "throughout and reporting a demand per round (a demand changes only at a round; "
                                  "no arrivals, departures or capacity changes)"),
}


@dataclass(frozen=True)
class Setting:
    """The domain a mechanism is defined on (what its paper allows)."""

    single_server: bool = False  # True: exactly one server (a single resource pool)
    placement: bool = True  # placement constraints (eligible sets) allowed
    external: bool = False  # external resources allowed
    bounds: bool = True  # finite task bounds allowed
    weights: bool = True  # weights != 1 allowed
    server_demand: bool = False  # per-server demand overrides (seed 002 Sec. IV)
    feasibility: str = "rdm"  # 'rdm' or 'tdm'
    divisible: bool = True  # False: indivisible tasks (integer x)
    exact: bool = True  # the allocation is rational and computed exactly with --exact
    requires_bounds: bool = False  # every user must have a finite task bound n_j > 0 (seed 003)
    min_resources: int = 1  # e.g. a memory-proportional split needs a second resource
    max_resources: Optional[int] = None  # e.g. a mechanism of one divisible resource (round mechanisms): 1
    positive_data: bool = False  # every demand and capacity must be > 0 (seed 003 Sec. 2.1)
    hierarchy: bool = False  # a queue tree (``queues``, users' ``queue``) allowed (hierarchical sharing)
    ordered: bool = False  # the policy exposes its ORDER in a state (``Mechanism.order``; set by ``register``)
    quota_first: bool = False  # its order promises within-quota before borrowing (``OrderSpec.request``; ``register``)
    #: it LENDS idle capacity: a queue may borrow what others leave idle, up to its declared max (Kueue's
    #: cohorts, YARN's queues); the ``lend`` property is searched for such settings only
    lends: bool = False
    #: a user's tasks are admitted together or not at all (Kueue admits a workload's pods as one): what a
    #: user is refused is then its whole request, not one task (the ``lend`` property reads it)
    whole_requests: bool = False
    #: what the mechanism reads beyond the basic model (``mechverify.declare.READS``: queues' declared
    #: ``"guarantee"`` / ``"max"``): the search draws them for every property searched on it (docs/model.md)
    reads: tuple[str, ...] = ()
    #: it steps through executions (``Mechanism.time``: a stateful mechanism, or a one-shot one lifted; set by
    #: ``register`` and ``mechanisms.core.time.lift``): the properties over executions are searched for it
    dynamic: bool = False

    def __post_init__(self) -> None:
        from mechverify.declare import check_reads

        try:
            object.__setattr__(self, "reads", check_reads(self.reads, "Setting.reads"))
        except ValueError as exc:
            raise SettingError(str(exc)) from None

    def describe(self) -> str:
        """One line naming the setting's parts (as ``list`` prints it)."""
        parts = ["1 server" if self.single_server else "many servers", self.feasibility.upper()]
        for flag, label in ((self.placement, "placement"), (self.external, "external"), (self.bounds, "bounds"),
                            (self.weights, "weights"), (self.server_demand, "per-server demands"),
                            (self.hierarchy, "queue tree"), (self.ordered, "ordered"),
                            (self.quota_first, "quota first"), (self.lends, "lends idle capacity"),
                            (self.whole_requests, "whole requests"), (self.dynamic, "steps through executions")):
            if flag:
                parts.append(label)
        if self.reads:
            parts.append("reads " + "/".join(self.reads))
        if not self.divisible:
            parts.append("indivisible tasks")
        if self.requires_bounds:
            parts.append("every user bounded (n_j > 0)")
        if self.positive_data:
            parts.append("positive demands and capacities")
        return ", ".join(parts)

    def missing_flags(self, env: Environment, name: str) -> list[tuple[str, tuple[str, str]]]:
        """The declarable setting flags ``env`` needs and this setting lacks, in field order: ``[(flag, (field,
        why))]`` -- all of them, so one message can name the whole fix."""
        out: list[tuple[str, tuple[str, str]]] = []
        if not self.placement and env.has_placement:
            j = next(j for j in range(env.n_users) if env.eligible[j] != frozenset(range(env.n_servers)))
            out.append(("placement", (f"users[{j}].eligible", f"{name} is defined without placement constraints")))
        if not self.external and env.n_external:
            out.append(("external", ("external", f"{name} is defined without external resources (got "
                                                 f"{env.n_external})")))
        if not self.bounds and env.has_bounds:
            j = next(j for j in range(env.n_users) if env.tasks[j] is not None)
            out.append(("bounds", (f"users[{j}].tasks", f"{name} is defined for unbounded task counts")))
        if not self.weights and env.has_weights:
            j = next(j for j in range(env.n_users) if env.weight[j] != 1)
            out.append(("weights", (f"users[{j}].weight", f"{name} is defined for equal weights")))
        if not self.server_demand and env.has_server_demand:
            j, s = next(iter(env.server_demand))
            out.append(("server_demand", (f"users[{j}].server_demand", f"{name} does not take per-server demands")))
        if not self.hierarchy and env.has_queues:
            placed = sum(q is not None for q in env.user_queue)
            out.append(("hierarchy", ("queues", f"{name} is defined without a queue tree (got {env.n_queues} "
                                                f"queue{'' if env.n_queues == 1 else 's'}, {placed} "
                                                f"user{'' if placed == 1 else 's'} in queues)")))
        if not self.ordered and env.has_usage:
            j = next(j for j in range(env.n_users) if any(env.usage[j]))
            out.append(("ordered", (f"users[{j}].usage", f"{name} reads no state (a usage is the current allocation "
                                                          f"a production policy's order is read in; allocations "
                                                          f"start from an empty cluster)")))
        return out

    def check(self, env: Environment, name: str) -> None:
        """Raise :class:`SettingError` naming the field if ``env`` lies outside this setting."""
        if env.n_resources < self.min_resources:
            raise SettingError(f"resources: {name} needs at least {self.min_resources} resources, "
                               f"got {env.n_resources}")
        if self.single_server and env.n_servers != 1:
            raise SettingError(f"servers: {name} is defined for one server (a single resource pool); "
                               f"got {env.n_servers} servers")
        missing = self.missing_flags(env, name)
        if missing:
            field_, text = missing[0][1]
            flags = ", ".join(f"{flag}=True" for flag, _ in missing)
            raise SettingError(f"{field_}: {text} (a mechanism taking this instance declares {flags} in its "
                               f"setting: @mechverify.mechanism(..., {flags}))")
        if self.max_resources is not None and env.n_resources > self.max_resources:
            raise SettingError(f"resources: {name} is defined for at most {self.max_resources} "
                               f"resource{'' if self.max_resources == 1 else 's'}, got {env.n_resources}")
        if self.positive_data:
            for s, row in enumerate(env.capacity):
                for r, c in enumerate(row):
                    if c <= 0:
                        raise SettingError(f"servers[{s}].capacity[{r}]: {name} needs every capacity > 0, "
                                           f"got {fmt_exact(c)}")
            for j in range(env.n_users):
                for r, d in enumerate(env.demand[j]):
                    if d <= 0:
                        raise SettingError(f"users[{j}].demand[{r}]: {name} needs every per-task demand > 0, "
                                           f"got {fmt_exact(d)}")
        if self.requires_bounds:
            for j in range(env.n_users):
                b = env.tasks[j]
                if b is None or b <= 0:
                    got = "null (unbounded)" if b is None else fmt_exact(b)
                    raise SettingError(f"users[{j}].tasks: {name} needs a task bound n_j > 0 for every user, got {got}")


#: how :meth:`OrderSpec.order` (and ``mechverify.policies.progressive_filling``) breaks the ties an order leaves open
TIE_BREAK = "by user index (instance order)"


@dataclass(frozen=True)
class OrderSpec:
    """A policy's ORDER of its clients in a state -- the ``order`` facet (a production port's: ``register(...,
    order=OrderSpec(...))``, built by ``mechanisms.core.order.order_facet``; a user's policy:
    ``@mechverify.mechanism(order=...)``, built by ``order.user_order_facet``); the ``order`` command and the
    order properties read it (docs/orders-and-placement.md).

    ``state`` is an :class:`Allocation` of the environment: the current allocation (an instance's
    ``usage``, or ``order --allocation``), not necessarily one the policy would produce.

    * ``compare(state, i, j) -> int`` -- < 0: user ``i`` is served before ``j``; > 0: after; 0: the policy
      leaves them tied.  Exactly the policy's comparator (for a tree: the comparison of the two nodes under
      their lowest common ancestor), NOT repaired: whether it is a strict weak order is what the order
      properties check.
    * ``share(state, j)`` -- user ``j``'s share as the policy computes it (exact; ``INF`` allowed).
    * ``queue_share(state, q)`` -- queue ``q``'s share (``None``: the policy has none).
    * ``request(state, j)`` -- for a policy that serves a client WITHIN its quota before one that would BORROW
      (Kueue's ``FairSharingPrioritizeNonBorrowing``), the amount per resource it weighs user ``j``'s next
      admission with (Kueue: the whole workload); ``None``: the policy makes no such promise, and the
      ``order/quota-first`` check does not apply to it.
    * ``key(state, j)`` -- the value the policy sorts user ``j`` by, as text (a policy declared with a key; the
      ``order`` command shows it); ``None``: a comparator, or a port.
    """

    compare: Callable[[Allocation, int, int], int]
    share: Callable[[Allocation, int], Any]
    queue_share: Optional[Callable[[Allocation, int], Any]] = None
    request: Optional[Callable[[Allocation, int], tuple]] = None
    key: Optional[Callable[[Allocation, int], str]] = None

    def order(self, state: Allocation) -> list[int]:
        """The users in the order served (Python's sort with :attr:`compare`, ties by user index -- the
        convention :data:`TIE_BREAK` names): for a comparator that is not a strict weak order, what a sort
        happens to return."""
        from functools import cmp_to_key

        return sorted(range(state.env.n_users), key=cmp_to_key(lambda a, b: self.compare(state, a, b) or (a > b) - (a < b)))


@dataclass(frozen=True)
class Mechanism:
    """A mechanism, registered or a user's (:attr:`origin`): its allocation function, setting, claims and notes."""
    name: str
    title: str
    func: Callable[[Environment, bool], Allocation]
    setting: Setting
    claims: tuple[Claim, ...] = ()
    source: str = ""
    notes: str = ""
    #: constraints of chi(E) the mechanism may violate BY DESIGN (e.g. ``("bounds",)`` for an algorithm
    #: reproduced as printed that overshoots task bounds); :func:`call` does not check them
    may_violate: tuple[str, ...] = ()
    #: how to load a user's mechanism again (``pkg.mod:func`` / ``path/file.py:func``; "" when registered
    #: here) and the SHA-256 of its source file (replay says when it changed)
    reference: str = ""
    source_hash: str = ""
    #: a user's implementation: the relative tolerance a violation margin must exceed when the function
    #: returned floats (taken exactly as written); ``None`` for the registered mechanisms
    tolerance: Optional[float] = None
    #: a user's implementation: seconds one call may take in its worker process (``--call-limit``;
    #: ``None``: derived from the command's budget, ``mechverify.deadline.call_limit_for``)
    call_limit: Optional[float] = None
    #: where it comes from (:data:`ORIGINS`): ``builtin`` (``@register``), ``reference`` (``pkg.mod:func`` /
    #: ``path/file.py:func``), ``entry-point`` (an installed package's), ``function`` (a plain function given
    #: to the Python API); every origin but ``builtin`` is a user's mechanism (:attr:`is_users`)
    origin: str = "builtin"
    #: how the z3 engine encodes it (``mechanisms.core.z3spec.Z3Spec``, declared with ``register(..., z3=...)``;
    #: ``None``: no symbolic encoding)
    z3: Optional[Z3Spec] = None
    #: the policy's order in a state (:class:`OrderSpec`, ``register(..., order=...)`` or a user's
    #: ``@mechverify.mechanism(order=...)``; ``None``: no order facet)
    order: Optional[OrderSpec] = None
    #: a vectorised FLOAT allocator ``batch(envs) -> [Allocation or None]`` (``register(..., batch=...)``): ``rates``
    #: screens many instances at once with it (``None`` entries: the float path); only exact re-checks count
    batch: Optional[Callable[[Any], list]] = None
    #: how it steps through an execution (``mechanisms.core.time.TimeSpec``: ``register(..., time=...)``, or a lift
    #: ``NAME+recompute`` / ``NAME+irrevocable``); ``None``: a one-shot mechanism
    time: Any = None
    #: a whole-task policy's own rule for handing out free capacity, ``task_rule(env, held) -> [(user, server),
    #: ...]``: the tasks to start, one pair each, in order, given the whole tasks ``held`` (``J x S`` counts)
    #: already running and ``env.tasks`` the unfinished ones (``register(..., task_rule=...)``; seed 004's
    #: AllocateFromQueues).  The indivisible lift (``mechanisms.core.indivisible``) applies it at every batch of
    #: events where a task waits (none waiting: no rule may start one), and from nothing held at a reallocation; a
    #: function of its arguments alone (a run may reuse what it decided: ``Held.memo``, a job alone's waves);
    #: ``None``: the one-shot function on the residual
    task_rule: Optional[Callable[[Environment, tuple], list]] = None

    def __post_init__(self) -> None:
        if self.origin not in ORIGINS:
            raise ValueError(f"origin: expected one of {', '.join(ORIGINS)}, got {self.origin!r}")

    @property
    def is_users(self) -> bool:
        """A user's mechanism (a reference, an entry point or a function given to the Python API), not one
        registered here: it runs in a worker process, its claims are the user's own ("claimed", with their
        ``source``), ``runs`` is searched first, and its float outputs are judged within ``tolerance``."""
        return self.origin != "builtin"

    @property
    def ref(self) -> str:
        """What :func:`get` needs to find this mechanism again (in another process too)."""
        return self.reference or self.name

    def __call__(self, env: Environment, exact: bool = False) -> Allocation:
        return call(self, env, exact)


#: the registered mechanisms by name (``registry.register``; entry points: ``references.load_entry_points``)
REGISTERED: dict[str, Mechanism] = {}


def call(m: Mechanism, env: Environment, exact: bool = False) -> Allocation:
    """Check the setting, run the mechanism (a user's within its per-call limit), and check its output is in
    chi(E) (:func:`check_output`)."""
    m.setting.check(env, m.name)
    if m.call_limit is not None:  # a user's mechanism with its own per-call limit (``--call-limit``, a stored one)
        with call_limit_scope(m.call_limit, override=True):
            alloc = m.func(env, exact)
    else:
        alloc = m.func(env, exact)
    check_output(m, env, alloc)
    return alloc


def check_output(m: Mechanism, env: Environment, alloc: Allocation) -> None:
    """Raise :class:`MechanismOutputError` naming the first constraint of chi(E) (the setting's
    feasibility, placement, external resources and bounds) that ``alloc`` violates.  Exact entries are
    checked exactly, floats within ``mechverify.numbers.FLOAT_REL``; a user's float implementation
    (its numbers taken exactly as written) within its ``tolerance``."""
    st, skip = m.setting, m.may_violate
    as_floats = (alloc.info or {}).get("as_written") == "float" and m.is_users and m.tolerance is not None
    bad = feasibility_violations(env, alloc.x, st.feasibility, check_placement="placement" not in skip,
                                 check_external=st.external and "external" not in skip,
                                 check_bounds=st.bounds and "bounds" not in skip,
                                 rel_tol=m.tolerance if as_floats else None)
    if bad:
        raise MechanismOutputError(f"{m.name}: output is not feasible: {bad[0]}")
