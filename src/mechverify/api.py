"""The Python API for notebooks and scripts: ``from mechverify import load, allocate, check, run, replay``.

It is the top of the layers (docs/architecture.md): a facade over the mechanism layer and the verifier,
returning the same objects the CLI prints (``Allocation``, ``verifier.results.Result``,
``verifier.run.RunReport``, ``verifier.store.ReplayResult``), each with a short ``repr``.

    >>> import mechverify as mv
    >>> env = mv.load("examples/001-fig1.json")
    >>> mv.allocate("drf", env)                      # a registered name ...
    >>> mv.check("examples/my_mechanisms.py:greedy", env)          # ... a reference, or a function
    >>> report = mv.run(my_function, properties=["sp", "ef"], budget=20, store=None)
    >>> report.results[0].certificate                 # the exact numbers of a violation

A mechanism argument is a registered name, a reference (``package.module:function``,
``path/to/file.py:function``), a ``mechanisms.Mechanism``, or a plain function ``f(env)`` (with or without
``@mechverify.mechanism``).  ``store=None`` keeps counterexamples in memory only.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

from mechanisms.registry import Mechanism, get
from mechanisms.references import from_function

from .allocation import Allocation
from .instances import load_environment, parse_environment
from .model import Environment

__all__ = ["load", "environment", "mechanism_of", "allocate", "check", "run", "replay"]

MechanismLike = Union[str, Mechanism, Callable]


def load(path: str) -> Environment:
    """Read an instance file (the JSON format of ``python -m verifier schema``)."""
    return load_environment(path)


def environment(data: dict) -> Environment:
    """An environment from a dict in the instance format (one-line ``InstanceError`` naming a bad field)."""
    return parse_environment(data)


def mechanism_of(mech: MechanismLike, tolerance: Optional[float] = None) -> Mechanism:
    """The :class:`mechanisms.Mechanism` for a name, a reference, a ``Mechanism`` or a plain function
    (``tolerance`` overrides a user's float tolerance)."""
    import dataclasses

    if isinstance(mech, Mechanism):
        m = mech
    elif isinstance(mech, str):
        m = get(mech)
    elif callable(mech):
        m = from_function(mech, reference=_reference_of(mech))
    else:
        raise TypeError(f"mechanism: expected a name, a reference, a Mechanism or a function, got {type(mech).__name__}")
    if tolerance is not None:
        if m.tolerance is None:
            raise ValueError(f"tolerance: applies to a user's mechanism; {m.name} is registered and exact")
        m = dataclasses.replace(m, tolerance=float(tolerance))
    return m


def _reference_of(func: Callable) -> str:
    """``module:function`` when ``func`` can be imported again by that name (stored files replay), else ""."""
    import sys

    mod, name = getattr(func, "__module__", None), getattr(func, "__qualname__", "")
    if not mod or "." in name or "<" in name or mod == "__main__":
        return ""
    module = sys.modules.get(mod)
    if module is None or getattr(module, name, None) is not func:
        return ""
    file = getattr(module, "__file__", None)
    if mod.startswith("mechverify_user_") and file:  # loaded from a file by a reference
        return f"{file}:{name}"
    return f"{mod}:{name}"


def allocate(mech: MechanismLike, env: Environment, exact: bool = True) -> Allocation:
    """The mechanism's allocation of ``env`` (checked against its setting and chi(E))."""
    return mechanism_of(mech)(env, exact=exact)


def check(mech: MechanismLike, env: Environment, properties: Optional[Sequence[str]] = None, *,
          budget: float = 10.0, seed: int = 0, tolerance: Optional[float] = None) -> list:
    """Every property's verdict on one instance (``verifier.check.check_instance``): a list of ``Result``."""
    from verifier.check import check_instance

    return check_instance(mechanism_of(mech, tolerance), env, properties, budget=budget, seed=seed)


def run(mech: MechanismLike, properties: Optional[Sequence[str]] = None, *, budget: float = 60.0, seed: int = 0,
        trials: Optional[int] = None, store: Optional[str] = None, tolerance: Optional[float] = None,
        progress: Optional[Callable[[str], None]] = None) -> Any:
    """Search every property of the mechanism (``verifier.run.run_mechanism``): a ``RunReport`` whose
    ``results`` hold one ``Result`` per cell; violations are minimised, and stored under ``store`` (a
    directory; ``None``: not stored)."""
    from verifier.run import run_mechanism

    return run_mechanism(mechanism_of(mech, tolerance), properties, budget=budget, seed=seed, store_dir=store,
                         max_trials=trials, progress=progress)


def replay(path: str) -> Any:
    """Re-verify a stored counterexample exactly (``verifier.store.replay``): ``.ok`` and ``.message``."""
    from verifier.store import replay as _replay

    return _replay(path)
