"""One way to declare a production port: its upstream pin, its mechanism and order facet, its historic variants.

A :class:`Port` is a declarative record from which the registrations are generated (:meth:`Port.register`):

* the pinned version's registration: ``name``, ``title``, ``source`` (the citation ``list`` prints),
  ``setting``, ``notes``, ``z3``, ``claims``;
* ``pins``: the upstream files read, each at its commit (:class:`Pin`), checked against ``source``;
* the port's two functions, both taking the version's SWITCHES as keywords (the pinned version: their
  defaults): ``allocate(env, exact, *, name, **switches) -> Allocation`` and ``order(**switches) ->
  OrderSpec`` (built with :func:`mechanisms.core.order.order_facet`; ``None``: the policy exposes no order);
  a stateful policy adds ``time(**switches) -> TimeSpec`` (``mechanisms.core.time``: how it steps through
  executions; ``None``: it is one-shot);
* ``variants``: the historic versions (:class:`Variant`), each registered as ``<name>@<issue>`` -- its name
  written once, as its ``issue`` -- with the switch values that reproduce it and what upstream records of it:
  the issue, the pull requests (and commits) that fixed it (:class:`Fix`), the commit its code was read at.

Everything a record names is checked when it is made (``__post_init__``): every switch is a keyword both
functions take, every pin's repository, commit and file are cited in ``source``, every variant's issue, fixes and commit in
its own ``source``; variant names are distinct.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Mapping, Optional

from mechverify.allocation import Allocation

from ..core.registry import Claim, Mechanism, OrderSpec, Setting, builtin, register
from ..core.z3spec import Z3Spec

__all__ = ["Pin", "Fix", "Variant", "Port"]


@dataclass(frozen=True)
class Pin:
    """An upstream file as read: ``repo`` (``owner/name``), ``commit`` (40 hex digits) and ``path`` in it (a
    leading ``.../`` abbreviates directories, as the citations do)."""

    repo: str
    commit: str
    path: str

    def __post_init__(self) -> None:
        if len(self.commit) != 40 or any(c not in "0123456789abcdef" for c in self.commit):
            raise ValueError(f"Pin {self.path}: commit {self.commit!r} is not 40 hex digits")

    @property
    def file(self) -> str:
        return self.path.rpartition("/")[2]


@dataclass(frozen=True)
class Fix:
    """A pull request that fixed a historic version upstream, with its merge commit when pinned ("": not)."""

    pr: str
    commit: str = ""


@dataclass(frozen=True)
class Variant:
    """A historic version of a port, registered as ``<port>@<issue>``.

    ``issue``: the upstream issue the version reproduces (``"6577"``, ``"YARN-11482"``) -- the variant's name;
    ``switches``: the keyword values of the port's functions that reproduce it; ``fixed_by``: the pull requests
    that fixed it; ``read_at``: the commit whose code it reproduces (the parent of the fix, or a pin that still
    had the bug); ``title``, ``source`` and ``notes`` as ``list`` prints them."""

    issue: str
    switches: Mapping[str, Any]
    fixed_by: tuple[Fix, ...]
    read_at: str
    title: str
    source: str
    notes: str

    def __post_init__(self) -> None:
        cited = [self.issue, self.read_at] + [f.pr for f in self.fixed_by] + [f.commit for f in self.fixed_by if f.commit]
        missing = [c for c in cited if c not in self.source]
        if missing:
            raise ValueError(f"variant {self.issue}: its source does not cite {', '.join(missing)}")
        if not self.switches:
            raise ValueError(f"variant {self.issue}: no switch selects it")


def _keywords(fn: Callable) -> Optional[set[str]]:
    """The keyword parameters ``fn`` takes (``None``: any, it has ``**kwargs``)."""
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind in (inspect.Parameter.KEYWORD_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)}


@dataclass(frozen=True)
class Port:
    """A production port (module docstring): registered by :meth:`register`, the pinned version first, then its
    variants in order."""

    name: str
    title: str
    pins: tuple[Pin, ...]
    source: str
    setting: Setting
    notes: str
    z3: Z3Spec
    allocate: Callable[..., Allocation]
    order: Optional[Callable[..., OrderSpec]] = None
    variants: tuple[Variant, ...] = ()
    claims: tuple[Claim, ...] = field(default=())
    time: Optional[Callable[..., Any]] = None

    def __post_init__(self) -> None:
        if not self.pins:
            raise ValueError(f"port {self.name}: no upstream pin")
        for pin in self.pins:
            for what in (pin.repo, pin.commit, pin.file):
                if what not in self.source:
                    raise ValueError(f"port {self.name}: its source does not cite {pin.path} @ {pin.commit}")
        names = [self.variant_name(v) for v in self.variants]
        if len(set(names)) != len(names):
            raise ValueError(f"port {self.name}: two variants share a name")
        for v in self.variants:
            for fn in (self.allocate, self.order, self.time):
                known = None if fn is None else _keywords(fn)
                if known is not None and not set(v.switches) <= known:
                    raise ValueError(f"port {self.name}: variant {v.issue}'s switches "
                                     f"{sorted(set(v.switches) - known)} are not keywords of {fn.__name__}")

    def variant_name(self, v: Variant) -> str:
        return f"{self.name}@{v.issue}"

    @property
    def names(self) -> tuple[str, ...]:
        """The names :meth:`register` registers, in order: the pinned version, then every variant."""
        return (self.name,) + tuple(self.variant_name(v) for v in self.variants)

    def switches(self, name: str) -> dict[str, Any]:
        """The switch values of the version registered as ``name`` (``{}``: the pinned version)."""
        if name == self.name:
            return {}
        for v in self.variants:
            if self.variant_name(v) == name:
                return dict(v.switches)
        raise KeyError(f"{name!r} is not a version of {self.name} (versions: {', '.join(self.names)})")

    def mechanism(self, name: str, title: str, source: str, notes: str, **switches: Any) -> Mechanism:
        """The :class:`Mechanism` of one version of the port, not registered (:meth:`register` registers
        these): its allocation and its order facet with ``switches`` bound."""
        order = self.order(**switches) if self.order is not None else None
        time = self.time(**switches) if self.time is not None else None
        return builtin(name, title, partial(self.allocate, name=name, **switches), self.setting, self.claims,
                       source, notes, z3=self.z3, order=order, time=time)

    def versions(self) -> list[Mechanism]:
        """Every version's :class:`Mechanism`, in registration order."""
        out = [self.mechanism(self.name, self.title, self.source, self.notes)]
        for v in self.variants:
            out.append(self.mechanism(self.variant_name(v), v.title, v.source, v.notes, **v.switches))
        return out

    def register(self) -> None:
        """Register every version (:meth:`versions`), the pinned one first."""
        for m in self.versions():
            register(m.name, m.title, self.setting, m.claims, m.source, m.notes, z3=m.z3, order=m.order,
                     time=m.time)(m.func)
