"""The Python API for notebooks and scripts: ``from mechverify import load, allocate, check, run, replay``.

It is the top of the layers (docs/architecture.md): a facade over the mechanism layer and the verifier,
returning the same objects the CLI prints (``Allocation``, ``verifier.results.Result``,
``verifier.run.RunReport``, ``verifier.results.ArtifactResult``, ``verifier.artifacts.Replay``), each with a
short ``repr``.

    >>> import mechverify as mv
    >>> env = mv.load("examples/001-fig1.json")
    >>> mv.allocate("drf", env)                      # a registered name ...
    >>> print(mv.order("examples/my_policy.py:fewest_tasks", env))  # a policy's order and the ties it leaves open
    >>> mv.check("examples/my_mechanisms.py:greedy", env)          # ... a reference, or a function
    >>> report = mv.run(my_function, ["sp/demand", "ef"], budget=20, store=None)
    >>> mv.execute("drf", "examples/traces/drf-arrivals.json", lift="irrevocable").steps  # through an execution
    >>> print(report)                                 # the CLI's text table (a notebook shows the HTML report)
    >>> report.results[0].certificate                 # the exact numbers of a violation
    >>> mv.replay("counterexamples")                  # every stored file under the folder, as the CLI's replay
    >>> mv.replay("certificates/tsf-000-fig1-po.json")  # an LP certificate (or an export's certificate.json)

A mechanism argument is a registered name, a reference (``package.module:function``,
``path/to/file.py:function``), a ``mechanisms.Mechanism``, or a plain function ``f(env)`` (with or without
``@mechverify.mechanism``).  An instance argument is a path, a dict in the instance format or an
``Environment``.  Properties are one name or a list, each a property (``"sp"``: every variant) or a
property/variant (``"sp/demand"``), as the reports write them.  ``budget`` is the wall-clock limit of the
whole call, as the CLI's ``--budget`` (cells share it).  ``store=None`` keeps counterexamples in memory only.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Optional, Sequence, Union

from mechanisms.core.registry import Mechanism, get
from mechanisms.core.references import from_function

from .allocation import Allocation
from .instances import load_environment, parse_environment
from .model import Environment

__all__ = ["load", "environment", "instance", "mechanism_of", "allocate", "order", "check", "execution", "execute",
           "run", "replay"]

MechanismLike = Union[str, Mechanism, Callable]
#: an instance: a path to an instance file, a dict in the instance format, or an ``Environment``
InstanceLike = Union[str, "os.PathLike[str]", dict, Environment]


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
        m = from_function(mech, reference=_reference_of(mech), origin="function")
    else:
        raise TypeError(f"mechanism: expected a name, a reference, a Mechanism or a function, got {type(mech).__name__}")
    if tolerance is not None:
        if not m.is_users:
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


def _cells(properties: Union[None, str, Sequence[str]]) -> tuple[Optional[list], Optional[dict]]:
    """``properties`` as the API takes them: ``None`` (every property), one name (``"ef"``, ``"sp/demand"``,
    ``"sp,ef"``) or a list of names; ``(property names, {property: [variants]})``."""
    if properties is None:
        return None, None
    from verifier.properties import parse_cells

    return parse_cells(properties)


def instance(env: InstanceLike) -> Environment:
    """An environment from an instance file's path, a dict in the instance format, or an ``Environment``."""
    if isinstance(env, Environment):
        return env
    if isinstance(env, dict):
        return parse_environment(env)
    if isinstance(env, (str, os.PathLike)):
        return load_environment(os.fspath(env))
    raise TypeError(f"instance: expected a path, a dict in the instance format or an Environment, got "
                    f"{type(env).__name__}")


def allocate(mech: MechanismLike, env: InstanceLike, exact: bool = True) -> Allocation:
    """The mechanism's allocation of ``env`` (a path, a dict or an ``Environment``; checked against the
    mechanism's setting and chi(E))."""
    return mechanism_of(mech)(instance(env), exact=exact)


def order(mech: MechanismLike, env: InstanceLike, state: Any = None) -> Any:
    """The policy's order of its users in a state and the ties it leaves open, as ``python -m verifier order``
    prints it (``mechanisms.core.order.Ordering``: ``users``, ``ties``, ``tie_break``, ``shares``, ``keys``; ``str``
    of it is the command's table).  The state is ``env``'s ``usage`` (none: the empty cluster), or ``state``: an
    ``Allocation`` of ``env`` or a task matrix ``x[user][server]``.  A policy exposes its order with
    ``@mechverify.mechanism(order=...)`` (docs/orders-and-placement.md) or, a port, ``register(..., order=...)``."""
    import dataclasses
    from fractions import Fraction

    from mechanisms.core.order import ordering, require_order

    m = mechanism_of(mech)
    require_order(m)
    e = instance(env)
    if state is not None:
        x = state.x if isinstance(state, Allocation) else state
        rows = tuple(tuple(Fraction(v) for v in row) for row in x)
        if len(rows) != e.n_users or any(len(r) != e.n_servers or min(r, default=0) < 0 for r in rows):
            raise ValueError(f"state: expected {e.n_users} rows of {e.n_servers} task counts >= 0 (x[user][server])")
        e = dataclasses.replace(e, usage=rows)
    return ordering(m, e)


def check(mech: MechanismLike, env: InstanceLike, properties: Union[None, str, Sequence[str]] = None, *,
          tolerance: Optional[float] = None, **options: Any) -> list:
    """Every property's verdict on one instance (``verifier.check.check_instance``, as ``python -m verifier
    check``): a list of ``Result``.  ``env``: a path, a dict in the instance format or an ``Environment``;
    ``properties``: ``None`` (all; a user's mechanism: ``runs`` first), a name (``"si"``, ``"sp/demand"``) or a
    list of names.  ``options`` are the run configuration's (``verifier.config.RunConfig``): ``budget``
    (wall-clock seconds for the whole call, as the CLI's ``--budget``; default 10), ``seed``, ..."""
    from verifier.check import DEFAULT_CHECK_BUDGET, check_instance
    from verifier.config import RunConfig

    config = RunConfig.of(**dict({"budget": DEFAULT_CHECK_BUDGET}, **options))
    names, variants = _cells(properties)
    return check_instance(mechanism_of(mech, tolerance), instance(env), names, config, variants or None)


def execution(trace: Any) -> Any:
    """An execution (``mechverify.execution.Execution``) from a path, a dict with ``events``, or itself."""
    from .execution import Execution, load_execution, parse_execution

    if isinstance(trace, Execution):
        return trace
    if isinstance(trace, dict):
        return parse_execution(trace)
    return load_execution(os.fspath(trace))


def execute(mech: MechanismLike, trace: Any, properties: Union[None, str, Sequence[str]] = None, *,
            lift: Optional[str] = None, exact: bool = True, tolerance: Optional[float] = None,
            **options: Any) -> Any:
    """``mech`` through one execution (``verifier.execute.execute_trace``, as ``python -m verifier execute``): an
    ``ExecutionReport`` with the ``steps`` (each with its time, event, present users' environment and
    allocation) and one ``Result`` per property over executions (``properties``: ``None`` for all of them).
    ``trace``: a path, a dict with ``events`` or an ``Execution``; a one-shot mechanism is lifted (``lift``:
    ``"recompute"``, the default, ``"irrevocable"``, or ``"indivisible"`` / ``"indivisible(slot=S,overhead=O)"``:
    whole tasks, ``mechanisms.core.indivisible``); ``exact=False`` runs in floats (violations are
    re-derived exactly).  ``options``: the run configuration's (``budget``, default 30; ``seed``; ``store``)."""
    from mechanisms.core.time import lift as lift_mechanism
    from verifier.config import RunConfig
    from verifier.execute import DEFAULT_EXECUTE_BUDGET, execute_trace

    m = mechanism_of(mech, tolerance)
    if m.time is None:
        m = lift_mechanism(m, lift or "recompute")
    elif lift is not None:
        from .numbers import InstanceError

        raise InstanceError(f"lift: {m.name} steps through executions itself ({m.time.kind}); it is not lifted")
    store = options.pop("store", None)
    config = RunConfig.of(**dict({"budget": DEFAULT_EXECUTE_BUDGET}, **options))
    names, variants = _cells(properties)
    return execute_trace(m, execution(trace), names, config, exact=exact, store=store, variants=variants)


def run(mech: MechanismLike, properties: Union[None, str, Sequence[str]] = None, *,
        tolerance: Optional[float] = None, **options: Any) -> Any:
    """Search the properties of the mechanism (``verifier.run.run_mechanism``, as ``python -m verifier run``:
    the same planner, orchestrator and budget split; its cells run in this process unless ``executor`` says
    otherwise): a ``RunReport`` whose ``results`` hold one ``Result`` per cell (``print(report)``: the text
    table; a notebook shows the HTML report).  ``properties``: ``None`` (all; a user's mechanism: ``runs``
    first), a name (``"ef"``, ``"sp/demand"``) or a list of names.  ``options`` are the run configuration's
    (``verifier.config.RunConfig``): ``budget`` (wall-clock seconds for the whole call, every cell together, as
    the CLI's ``--budget``; default 60), ``seed``, ``trials`` (candidates per cell), ``store`` (a directory
    violations are minimised and stored in; default ``None``: not stored), ``progress`` (a line printer), ..."""
    from verifier.config import RunConfig
    from verifier.run import DEFAULT_BUDGET, run_mechanism

    config = RunConfig.of(**dict({"budget": DEFAULT_BUDGET, "store": None}, **options))
    names, variants = _cells(properties)
    return run_mechanism(mechanism_of(mech, tolerance), names, config, variants or None)


def replay(path: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]] = "counterexamples", *,
           jobs: Optional[int] = None) -> Any:
    """Replay artifact files against the current code (``verifier.artifacts.replay``), exactly as
    ``python -m verifier replay``: stored counterexamples (files, or every one under a directory), an SMT
    export (``DIR/certificate.json`` of ``certify``/``query --export``; ``jobs``: its solver processes) or
    exact LP certificate files -- one kind per call.  One file gives its ``ArtifactResult`` (``.ok``,
    ``.status`` accepted / rejected / malformed, ``.message``, ``.report``: the lines the CLI prints,
    ``.exit_code``); a directory or a list of paths gives the ``Replay`` of them (a sequence of
    ``ArtifactResult``, with the CLI's ``.exit_code``, ``.summary`` and ``.lines()``).
    ``FileNotFoundError`` for a path that does not exist; ``verifier.artifacts.ReplayError`` (a ``ValueError``)
    for paths that mix kinds."""
    from verifier.artifacts import replay as _replay

    paths = [os.fspath(path)] if isinstance(path, (str, os.PathLike)) else [os.fspath(p) for p in path]
    done = _replay(paths, jobs=jobs)
    if isinstance(path, (str, os.PathLike)) and not os.path.isdir(paths[0]):
        return done.results[0]
    return done
