"""The ORDER facets of the production ports (``mechanisms.OrderSpec``): the one way to build one
(:func:`order_facet`) and what they read from a state (:func:`view`, :func:`per_state`).

A state is an :class:`~mechverify.allocation.Allocation` of the environment: the current allocation
``x[j][s]`` (task counts per server), not necessarily one the policy would produce.  A facet answers many
questions about one state (a sort calls ``compare`` O(J log J) times), so a port's facet is built by
:func:`order_facet` from ``derive(state)`` -- everything the policy reads of the state, computed once per state
-- and readers that answer from it.  :func:`view` is what most ports derive first: the state's
``mechverify.policies.FillState`` (``FillState.of``: per user its tasks and its POOLED amounts, per server what
is left -- the same view a user's ordering reads in ``progressive_filling``).  The memos (:func:`per_state`) are
keyed by the state objects' identity and keep the objects alive, so they can never answer for another state;
states are immutable, so the facets stay pure functions of the state.

A user's policy declares its order with ``@mechverify.mechanism(order=...)``: :func:`user_order_facet` builds its
facet with :func:`order_facet`, running the user's code in a worker process.  :func:`ordering` is the order in one
state with the ties it leaves open, as the ``order`` command and ``mechverify.order`` show it.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import wraps
from typing import Any, Callable, Optional, TypeVar

from mechverify.allocation import Allocation, state_of
from mechverify.declare import Comparator
from mechverify.isolation import Worker, in_process
from mechverify.numbers import InstanceError, fmt_exact
from mechverify.policies import FillState

from .mechanism import TIE_BREAK, OrderSpec

__all__ = ["view", "per_state", "order_facet", "user_order_facet", "Ordering", "ordering", "require_order",
           "STATES_KEPT"]

#: how many recent states a memo keeps (a property may alternate between a state and its variations)
STATES_KEPT = 4

T = TypeVar("T")


def per_state(fn: Callable[[Allocation], T]) -> Callable[[Allocation], T]:
    """``fn(state)`` computed once per state object, for the last :data:`STATES_KEPT` states it was called with
    (module docstring)."""
    kept: list[tuple[Any, Any]] = []  # (state, value), the most recent first

    @wraps(fn)
    def memo(state: Allocation) -> T:
        for i, (seen, value) in enumerate(kept):
            if seen is state:
                if i:
                    kept.insert(0, kept.pop(i))
                return value
        value = fn(state)
        kept.insert(0, (state, value))
        del kept[STATES_KEPT:]
        return value

    return memo


#: the state's ``FillState`` (tasks, pooled ``allocated``, ``remaining``, ``totals``), once per state
view = per_state(FillState.of)


def order_facet(derive: Callable[[Allocation], T], compare: Callable[[T, int, int], int],
                share: Callable[[T, int], Any], queue_share: Optional[Callable[[T, int], Any]] = None,
                request: Optional[Callable[[T, int], tuple]] = None,
                key: Optional[Callable[[T, int], str]] = None) -> OrderSpec:
    """THE way an order facet is built (:class:`OrderSpec`; a port's, and a user's through
    :func:`user_order_facet`): ``derive(state)`` computes what the policy reads of a state, once per state
    (:func:`per_state`, one memo per facet: a version's switches are bound in ``derive``); ``compare(derived, i,
    j)``, ``share(derived, j)``, ``queue_share(derived, q)``, ``request(derived, j)`` and ``key(derived, j)`` answer
    from it (``None``: the policy has no such part)."""
    read = per_state(derive)

    def by_user(reader: Optional[Callable[[T, int], Any]]) -> Optional[Callable[[Allocation, int], Any]]:
        return None if reader is None else (lambda state, k: reader(read(state), k))

    return OrderSpec(lambda state, i, j: compare(read(state), i, j), by_user(share), by_user(queue_share),
                     by_user(request), by_user(key))


# ------------------------------------------------------------------------------------ a user's policy
def _shown(v: Any) -> str:
    """A key's value as text: exact numbers as ``fmt_exact``, tuples element-wise, anything else its ``repr``."""
    if isinstance(v, tuple):
        return "(" + ", ".join(_shown(e) for e in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, str):
        return v
    if isinstance(v, (int, Fraction)) and not isinstance(v, bool):
        return fmt_exact(Fraction(v))
    return repr(v)


def _failed(what: str, exc: Exception) -> str:
    return f"{what} raises {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"


def _order_table(order: Any, env: Any, x: Any) -> tuple[list[list[Any]], Optional[list[str]]]:
    """In the worker: the signs of every comparison of a user's order in the state ``x`` of ``env`` (an int
    -1/0/1, or the text of the failure), and its keys as text (``None`` for a comparator)."""
    st = FillState.of(Allocation(env, x, "state", True))
    J = env.n_users
    names = env.users
    if isinstance(order, Comparator):
        def sign(a: int, b: int) -> Any:
            try:
                v = order.cmp(st, a, b)
                return (v > 0) - (v < 0)
            except Exception as exc:  # noqa: BLE001 - the user's comparator failing on a valid state is a finding
                return _failed(f"the comparator on ({names[a]}, {names[b]})", exc)

        return [[sign(a, b) for b in range(J)] for a in range(J)], None
    keys: list[Any] = []
    for j in range(J):
        try:
            keys.append((True, order(st, j)))
        except Exception as exc:  # noqa: BLE001
            keys.append((False, _failed(f"the key of {names[j]}", exc)))

    def by_key(a: int, b: int) -> Any:
        (ok_a, ka), (ok_b, kb) = keys[a], keys[b]
        if not ok_a or not ok_b:
            return ka if not ok_a else kb
        try:  # with '<' alone, as progressive_filling's heap compares keys
            return int(bool(kb < ka)) - int(bool(ka < kb))
        except Exception as exc:  # noqa: BLE001 - keys that cannot be compared
            return _failed(f"comparing the keys of {names[a]} and {names[b]}", exc)

    return [[by_key(a, b) for b in range(J)] for a in range(J)], [_shown(k) if ok else k for ok, k in keys]


def user_order_facet(order: Any, name: str) -> OrderSpec:
    """The order facet of a user's policy declared with ``@mechverify.mechanism(order=...)``: ``order`` is a key
    ``key(state, j)`` or a ``mechverify.comparator(cmp)`` (``mechverify.declare``), read in the state's
    ``FillState``.  The user's code runs in a worker process (``mechverify.isolation``), once per state (when a
    comparison or a key is first asked for): it computes every comparison (and every key) there, and ``compare`` answers from that table; a comparison
    that raised raises ``ValueError`` naming it (the ``order`` property reports it: an order must be total on
    a valid state).  ``share``: the model's weighted dominant share (``FillState.dominant_share(j) / w_j``) -- a
    user's policy declares an order, not a share of its own."""
    def table(env: Any, x: Any) -> tuple:
        return _order_table(order, env, x)

    worker = Worker(table, label=f"the order of {name}")

    class Read:
        """One state's reading: the user's table, computed on first use (a share needs none of the user's code)."""

        __slots__ = ("state", "_table")

        def __init__(self, state: Allocation) -> None:
            self.state, self._table = state, None

        @property
        def table(self) -> tuple:
            if self._table is None:
                env, x = self.state.env, self.state.x
                self._table = table(env, x) if in_process() else worker(env, x)
            return self._table

    def compare(d: Read, i: int, j: int) -> int:
        v = d.table[0][i][j]
        if isinstance(v, str):
            raise ValueError(v)
        return v

    def share(d: Read, j: int) -> Any:
        return view(d.state).dominant_share(j) / d.state.env.weight[j]

    key = None if isinstance(order, Comparator) else (lambda d, j: d.table[1][j])
    return order_facet(Read, compare, share, key=key)


# ------------------------------------------------------------------------------ the order, shown
@dataclass(frozen=True)
class Ordering:
    """A policy's order in one state, as the ``order`` command and ``mechverify.order`` show it.

    ``users``: user indices, first = served next (:meth:`OrderSpec.order`); ``ties``: the groups of users the
    order leaves open -- runs of consecutive users of ``users`` that the comparator calls equal (each of 2+
    users, in the order shown), broken by :attr:`tie_break`; ``shares``, ``queue_shares`` and ``keys`` (``None``
    where the policy has none) per user / queue."""

    policy: str
    env: Any
    state_given: bool
    users: tuple[int, ...]
    ties: tuple[tuple[int, ...], ...]
    shares: tuple[Any, ...]
    queue_shares: Optional[tuple[Any, ...]]
    keys: Optional[tuple[str, ...]]
    tie_break: str = TIE_BREAK

    def as_dict(self) -> dict[str, Any]:
        """The JSON the ``order`` command prints (names, numbers as exact text)."""
        env = self.env
        out: dict[str, Any] = dict(policy=self.policy, order=[env.users[j] for j in self.users],
                                   shares={env.users[j]: _num(v) for j, v in enumerate(self.shares)})
        if self.keys is not None:
            out["keys"] = {env.users[j]: k for j, k in enumerate(self.keys)}
        if self.queue_shares is not None:
            out["queue_shares"] = {env.queues[q]: _num(v) for q, v in enumerate(self.queue_shares)}
        out["ties"] = [[env.users[j] for j in g] for g in self.ties]
        out["tie_break"] = self.tie_break
        return out

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        names = self.env.users
        ties = ", ".join("~".join(names[j] for j in g) for g in self.ties) or "none"
        return f"<Ordering {self.policy}: {' '.join(names[j] for j in self.users)}; ties: {ties}>"

    def text(self) -> str:
        """The table the ``order`` command prints: one line per user, then the ties and their convention."""
        env = self.env
        width = max((len(u) for u in env.users), default=1)
        where = "the given state" if self.state_given else "the empty cluster"
        lines = [f"{self.policy}: order in {where} (first = served next)"]
        group = {j: k for k, g in enumerate(self.ties, 1) for j in g}
        for i, j in enumerate(self.users, 1):
            key = f"  key {self.keys[j]}" if self.keys is not None else ""
            tie = f"  [tie {group[j]}]" if j in group else ""
            lines.append(f"{i:>4}. {env.users[j]:<{width}}  share {_num(self.shares[j])}{key}{tie}")
        for q, v in enumerate(self.queue_shares or ()):
            lines.append(f"      queue {env.queues[q]}: share {_num(v)}")
        if self.ties:
            lines.append(f"ties the order leaves open (broken {self.tie_break}):")
            for k, g in enumerate(self.ties, 1):
                lines.append(f"  tie {k}: {' ~ '.join(env.users[j] for j in g)}")
        else:
            lines.append("ties the order leaves open: none (every pair of consecutive users is separated)")
        return "\n".join(lines)


def _num(v: Any) -> str:
    if isinstance(v, float):
        return "inf" if v == float("inf") else repr(v)
    return fmt_exact(v)


def require_order(mech: Any) -> None:
    """One-line ``InstanceError`` when ``mech`` exposes no order (no order facet)."""
    if mech.order is None:
        raise InstanceError(f"order: {mech.name} exposes no order (a production policy's: see 'list', 'ordered'; a "
                            f"user's policy: @mechverify.mechanism(order=key) or order=mechverify.comparator(cmp))")


def ordering(mech: Any, env: Any) -> Ordering:
    """``mech``'s order (its :class:`OrderSpec`, ``mech.order``) in the state of ``env`` (its users' ``usage``;
    none: the empty cluster), checked against its setting.  ``InstanceError`` when it exposes no order or ``env``
    lies outside its setting; ``ValueError``/``ArithmeticError`` when the policy's comparator fails on the state."""
    require_order(mech)
    mech.setting.check(env, mech.name)
    spec, state = mech.order, state_of(env)
    users = spec.order(state)
    ties: list[tuple[int, ...]] = []
    run = [users[0]] if users else []
    for a, b in zip(users, users[1:]):
        if spec.compare(state, a, b) == 0:
            run.append(b)
            continue
        if len(run) > 1:
            ties.append(tuple(run))
        run = [b]
    if len(run) > 1:
        ties.append(tuple(run))
    qs = (tuple(spec.queue_share(state, q) for q in range(env.n_queues))
          if spec.queue_share is not None and env.n_queues else None)
    keys = tuple(spec.key(state, j) for j in range(env.n_users)) if spec.key is not None else None
    return Ordering(mech.name, env, env.has_usage, tuple(users), tuple(ties),
                    tuple(spec.share(state, j) for j in range(env.n_users)), qs, keys)
