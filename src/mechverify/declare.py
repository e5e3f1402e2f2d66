"""``@mechverify.mechanism(...)``: declare a user's allocation function with its setting and claims.

The decorator only attaches a :class:`MechanismSpec` to the function (``func.__mechverify__``); the
function is returned unchanged and stays callable as before.  The mechanism layer reads the spec when the
function is referenced (``mechanisms.core.references``), so the core imports nothing above it.

    @mechverify.mechanism(name="greedy", claims={"sp": "holds", "ef": "holds"},
                          single_server=True, bounds=False)
    def greedy(env):
        ...  # return x[user][server] (int, Fraction or float) or an Allocation

``claims`` maps a property (``"sp"``, ``"ef"``, ``"si"``, ``"po"``, ``"bf"``, ...) or ``"property/variant"``
to ``"holds"`` or ``"fails"``, or is a sequence of ``mechanisms.Claim`` objects (with a source).  The
keywords other than ``name``, ``title``, ``claims``, ``source`` and ``tolerance`` are fields of
``mechanisms.Setting`` (checked when the function is referenced: an unknown one is named in one line).
Fields not given take the basic model of a user's mechanism (``mechanisms.core.references.DEFAULT_SETTING``):
``placement=False, bounds=False, weights=False, external=False`` -- the first three differ from
``Setting``'s own defaults (README, "Audit your own mechanism", says why); every other field keeps
``Setting``'s default.  ``divisible=False`` declares whole tasks (utilities count whole tasks; README).
Reports label the claims "claimed" with ``source``, never as a paper's.

``order`` exposes a policy's ORDER (who is served next in a state; docs/orders-and-placement.md): a key
function ``key(state, j)`` (smaller is served first) or ``mechverify.comparator(cmp)`` around ``cmp(state, i,
j)`` (negative: ``i`` first; 0: a tie), with ``state`` a ``mechverify.policies.FillState`` -- the same the
ordering reads in ``progressive_filling``.  The ``order`` command and the ``order``/``share`` properties read
it.  ``ordered`` and ``quota_first`` are not keywords of a user's mechanism: ``order=`` sets ``ordered``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, Union

__all__ = ["MechanismSpec", "mechanism", "Comparator", "comparator", "spec_of", "DEFAULT_TOLERANCE", "PropertySpec",
           "property_", "property_spec_of", "PROPERTY_DEVIATIONS", "READS", "check_reads"]

#: relative tolerance a float implementation's violation margin must exceed (``--tolerance``)
DEFAULT_TOLERANCE = 1e-9


@dataclass(frozen=True)
class MechanismSpec:
    """What the decorator records: the name, claims, setting keywords and float tolerance."""

    name: Optional[str] = None
    title: str = ""
    claims: Union[Mapping[str, str], Sequence[Any]] = ()
    setting: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""
    tolerance: Optional[float] = None
    #: the policy's order: a key ``key(state, j)`` or a :class:`Comparator` (``None``: it exposes none)
    order: Any = None


@dataclass(frozen=True)
class Comparator:
    """A comparator ``cmp(state, i, j) -> int`` given as a policy's order (:func:`comparator`): negative when
    user ``i`` is served before ``j``, positive after, 0 a tie.  Wrapped so that a key and a comparator are
    told apart by what was written, never guessed."""

    cmp: Callable[[Any, int, int], Any]


def comparator(cmp: Callable[[Any, int, int], Any]) -> Comparator:
    """``order=mechverify.comparator(cmp)``: the policy's order is the comparator ``cmp(state, i, j)`` (module
    docstring); a bare function given as ``order`` is a key ``key(state, j)``."""
    if not callable(cmp):
        raise ValueError(f"comparator: expected a function cmp(state, i, j) -> int, got {type(cmp).__name__}")
    return Comparator(cmp)


def _positional(func: Callable) -> Optional[int]:
    """How many positional parameters ``func`` requires (``None``: unknown, or it takes ``*args``)."""
    import inspect

    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)


def _order(order: Any) -> Any:
    """``order`` checked: ``None``, a :class:`Comparator`, or a key of two arguments (one line otherwise)."""
    if order is None or isinstance(order, Comparator):
        return order
    if not callable(order):
        raise ValueError(f"order: expected a key function key(state, j) or mechverify.comparator(cmp), "
                         f"got {type(order).__name__}")
    n = _positional(order)
    if n == 3:
        raise ValueError("order: a function of three arguments (state, i, j) is a comparator: give it as "
                         "order=mechverify.comparator(cmp); a key takes (state, j)")
    if n is not None and n != 2:
        raise ValueError(f"order: a key takes two arguments (state, j), got a function of {n}")
    return order


def mechanism(name: Optional[str] = None, *, title: str = "", claims: Union[Mapping[str, str], Sequence[Any]] = (),
              source: str = "", tolerance: Optional[float] = None, order: Any = None, **setting: Any) -> Callable:
    """Decorator: attach a :class:`MechanismSpec` to an allocation function ``f(env)`` /
    ``f(env, exact=...)`` (see the module docstring); the function itself is unchanged."""
    if name is not None and (not isinstance(name, str) or not name.strip() or ":" in name):
        raise ValueError(f"name: expected a non-empty name without ':', got {name!r}")
    if tolerance is not None and not (isinstance(tolerance, (int, float)) and 0 <= tolerance < 1):
        raise ValueError(f"tolerance: expected a number in [0, 1), got {tolerance!r}")
    for derived in ("ordered", "quota_first"):
        if derived in setting:
            raise ValueError(f"{derived}: not declared by hand -- a policy exposes its order with order=key or "
                             f"order=mechverify.comparator(cmp), which marks it ordered "
                             f"(docs/orders-and-placement.md)")
    return _attaching(MechanismSpec(name, title, claims, dict(setting), source, tolerance, _order(order)))


def _attaching(spec: Any) -> Callable:
    """The decorator that attaches ``spec`` to a function (``__mechverify__``) and returns it unchanged."""
    def deco(func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(f"@{type(spec).__name__[:-4].lower()} decorates a function, got {type(func).__name__}")
        func.__mechverify__ = spec
        return func

    return deco


def spec_of(obj: Any, kind: type = None) -> Optional[Any]:  # type: ignore[assignment]
    """The spec the decorators attached (``kind``: :class:`MechanismSpec` by default, or
    :class:`PropertySpec`); ``None`` for an undecorated function or another kind's spec."""
    spec = getattr(obj, "__mechverify__", None)
    return spec if isinstance(spec, kind or MechanismSpec) else None


# ------------------------------------------------------------------------------- a user's property
#: the deviation kinds a user's property may declare (``verifier.properties.user``): an instance property,
#: one user's misreport of its demands, eligible set or task count, or one user leaving
PROPERTY_DEVIATIONS = ("none", "demand", "eligible", "tasks", "leave")

#: what a property (``reads=``) or a mechanism's setting (``Setting.reads``) may declare it reads beyond the
#: basic model, so that the search draws it: queues' declared ``guarantee`` and ``max`` (on queue trees) and a
#: ``state`` (a current usage, for policies that expose their order); docs/properties.md, "What a property reads"
READS = ("guarantee", "max", "state")


def check_reads(reads: Any, where: str = "reads") -> tuple[str, ...]:
    """``reads`` as a tuple of :data:`READS` entries (a ``ValueError`` naming ``where`` otherwise)."""
    if isinstance(reads, str):
        reads = (reads,)
    try:
        out = tuple(reads)
    except TypeError:
        raise ValueError(f"{where}: expected a sequence of {', '.join(READS)}, got {reads!r}") from None
    for r in out:
        if r not in READS:
            raise ValueError(f"{where}: unknown {r!r} (known: {', '.join(READS)})")
    return out


@dataclass(frozen=True)
class PropertySpec:
    """What ``@mechverify.property`` records: name, deviation kind, source, variants, premise, hints and what it
    reads (:data:`READS`)."""

    name: Optional[str] = None
    deviation: str = "none"
    source: str = ""
    title: str = ""
    variants: Mapping[str, str] = field(default_factory=dict)
    applicable: Optional[Callable] = None
    hints: Mapping[str, Any] = field(default_factory=dict)
    reads: tuple[str, ...] = ()


def property_(name: Optional[str] = None, *, deviation: str = "none", source: str = "", title: str = "",
              variants: Union[Mapping[str, str], Sequence[str], None] = None, applicable: Optional[Callable] = None,
              hints: Optional[Mapping[str, Any]] = None, reads: Sequence[str] = ()) -> Callable:
    """Decorator (``@mechverify.property``): declare a function that returns the MARGIN by which a property
    fails at an instance (> 0: violated by that much; <= 0: holds).  ``deviation="none"``: ``f(env, alloc)``;
    ``"demand"``/``"eligible"``/``"tasks"``: ``f(env, alloc, user, reported_alloc)`` (the allocation after
    ``user`` misreports); ``"leave"``: ``f(env, alloc, user, alloc_without_user)``.  With several
    ``variants`` the function also receives ``variant=``.  ``applicable(env)`` returns ``None`` or why the
    premise fails; ``hints`` are ``verifier.properties.Hints`` fields that narrow the search (e.g.
    ``{"min_users": 2}``); ``reads`` names what the function reads beyond the basic model (:data:`READS`:
    ``"guarantee"``, ``"max"``, ``"state"``), so that the search draws it.  The function itself is unchanged (docs/properties.md, "Write your own property")."""
    if name is not None and (not isinstance(name, str) or not name.strip() or ":" in name or "/" in name
                             or "," in name):
        raise ValueError(f"name: expected a non-empty name without ':', '/' or ',', got {name!r}")
    if deviation not in PROPERTY_DEVIATIONS:
        raise ValueError(f"deviation: expected one of {', '.join(PROPERTY_DEVIATIONS)}, got {deviation!r}")
    if variants is None:
        vs: dict[str, str] = {}
    elif isinstance(variants, Mapping):
        vs = {str(k): str(v) for k, v in variants.items()}
    else:
        vs = {str(k): "" for k in variants}
    for v in vs:
        if not v or "/" in v or "," in v or ":" in v:
            raise ValueError(f"variants: expected names without '/', ',' or ':', got {v!r}")
    if applicable is not None and not callable(applicable):
        raise ValueError(f"applicable: expected a function env -> None | reason, got {type(applicable).__name__}")
    return _attaching(PropertySpec(name, deviation, source, title, vs, applicable, dict(hints or {}),
                                   check_reads(reads)))


def property_spec_of(obj: Any) -> Optional[PropertySpec]:
    """The spec attached by :func:`property_` (``None`` for an undecorated function)."""
    return spec_of(obj, PropertySpec)
