"""Registry of mechanisms: name -> allocation function + setting + the paper's claims.

A mechanism is a plain function ``allocate(env: Environment, exact: bool) -> Allocation``, registered with
``@register``.  ``Setting`` states which parts of the one model (``mechverify.model``) the mechanism is
defined for; :func:`allocate` rejects an environment outside it with one clear line (engines generate
environments inside it).  ``Claim`` records what the mechanism's paper says about a property, with the
seed file and section.  These types live in ``mechanisms.core.mechanism`` (re-exported here); :func:`get` also
finds a user's mechanism by its reference (``mechanisms.core.references``) or entry point.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError

from .mechanism import (DOMAIN_CONDITIONS, ORIGINS, REGISTERED, Claim, Mechanism, MechanismOutputError,  # noqa: F401
                        OrderSpec, Setting, SettingError, call, check_output)
from .exec_policy import is_exec, resolve_exec
from .references import load_entry_points, resolve
from .time import lift, split_lift
from .z3spec import Z3Spec

__all__ = ["Claim", "Setting", "Mechanism", "OrderSpec", "register", "builtin", "get", "all_mechanisms", "allocate", "SettingError",
           "MechanismOutputError", "check_output"]


def builtin(name: str, title: str, func: Callable[[Environment, bool], Allocation], setting: Setting,
            claims: tuple[Claim, ...] = (), source: str = "", notes: str = "", may_violate: tuple[str, ...] = (),
            z3: Optional[Z3Spec] = None, order: Optional[OrderSpec] = None,
            batch: Optional[Callable] = None, time: Any = None, task_rule: Optional[Callable] = None) -> Mechanism:
    """The :class:`Mechanism` ``register`` would register (arguments as there), not registered: its setting is
    marked ``ordered`` with an ``order`` facet, and ``quota_first`` with a ``request``."""
    unknown = set(may_violate) - {"placement", "external", "bounds"}
    if unknown:
        raise ValueError(f"may_violate: unknown constraint kinds {sorted(unknown)}")
    st = replace(setting, ordered=order is not None, quota_first=order is not None and order.request is not None,
                 dynamic=time is not None)
    return Mechanism(name, title, func, st, tuple(claims), source, notes, tuple(may_violate), z3=z3, order=order,
                     batch=batch, time=time, task_rule=task_rule)


def register(name: str, title: str, setting: Setting, claims: tuple[Claim, ...] = (), source: str = "",
             notes: str = "", may_violate: tuple[str, ...] = (), z3: Optional[Z3Spec] = None,
             order: Optional[OrderSpec] = None, batch: Optional[Callable] = None, time: Any = None,
             task_rule: Optional[Callable] = None) -> Callable:
    """Decorator: register ``func(env, exact) -> Allocation`` under ``name`` (see :class:`Mechanism`); ``z3``:
    its symbolic encoding (``mechanisms.core.z3spec``); ``order``: a production policy's order in a state
    (:class:`OrderSpec`; the setting is marked ``ordered``, and ``quota_first`` with a ``request``); ``batch``: a vectorised float allocator
    (``Mechanism.batch``); ``time``: how it steps through executions (``mechanisms.core.time.TimeSpec``); ``task_rule``: a
    whole-task policy's own rule for free capacity (``Mechanism.task_rule``).  A production port registers through its declaration (``mechanisms.ports.declare``)."""
    unknown = set(may_violate) - {"placement", "external", "bounds"}
    if unknown:
        raise ValueError(f"may_violate: unknown constraint kinds {sorted(unknown)}")

    def deco(func: Callable[[Environment, bool], Allocation]):
        if name in REGISTERED:
            raise ValueError(f"mechanism {name!r} registered twice")
        REGISTERED[name] = builtin(name, title, func, setting, claims, source, notes, may_violate, z3, order, batch, time,
                                   task_rule)
        return func

    return deco


def get(name: str) -> Mechanism:
    """The mechanism registered under ``name``, or loaded from a reference ``package.module:function`` /
    ``path/to/file.py:function`` (``mechanisms.core.references``), or a program ``exec:COMMAND ARGS``
    (``mechanisms.core.exec_policy``), each possibly lifted to executions (``NAME+recompute``,
    ``NAME+irrevocable``: ``mechanisms.core.time``); ``InstanceError`` in one line otherwise."""
    _ensure_loaded()
    try:
        return REGISTERED[name]
    except (KeyError, TypeError):  # TypeError: not a name at all (a damaged file's list or object)
        pass
    base, how = split_lift(name)
    if how is not None:  # NAME+recompute / NAME+irrevocable: a one-shot mechanism lifted to executions
        return lift(get(base), how)
    if is_exec(name):  # a program in any language (docs/exec-protocol.md)
        return resolve_exec(name)
    if isinstance(name, str) and ":" in name:
        return resolve(name)
    raise InstanceError(f"mechanism: unknown name {name!r} (known: {', '.join(sorted(REGISTERED))}; "
                        f"or a reference package.module:function, path/to/file.py:function or exec:COMMAND ARGS)")


def all_mechanisms() -> list[Mechanism]:
    """Every registered mechanism, sorted by name."""
    _ensure_loaded()
    return [REGISTERED[k] for k in sorted(REGISTERED)]


def allocate(mech: Mechanism | str, env: Environment, exact: bool = False) -> Allocation:
    """Check the setting, run the mechanism, and check its output is in chi(E) (:func:`mechanism.call`)."""
    return call(get(mech) if isinstance(mech, str) else mech, env, exact)


def _ensure_loaded() -> None:
    # the built-in mechanisms are registered by the package's __init__, which Python has run before this
    # submodule could be imported; the installed plugins' entry points are read here, once
    load_entry_points()
