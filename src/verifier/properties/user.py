"""A researcher's own property, audited like SP or EF (docs/properties.md, "Write your own property").

A user's property is a plain function that returns the MARGIN by which the property fails at an instance
(> 0: violated by that much; <= 0: holds), optionally declared with ``@mechverify.property``
(``mechverify.declare.property_``):

* ``deviation="none"``: ``f(env, alloc)`` -- an instance property;
* ``deviation="demand" | "eligible" | "tasks"``: ``f(env, alloc, user, reported_alloc)``, where
  ``reported_alloc`` is the mechanism's allocation after ``user`` (an index) misreports that part of its
  type; both allocations are to be valued with the TRUE ``env`` (``mechverify.utility.utility(env, alloc,
  user)``);
* ``deviation="leave"``: ``f(env, alloc, user, alloc_without_user)``; ``alloc_without_user.env`` is the
  environment without ``user`` (the remaining users keep their order).

With several variants the function also receives ``variant=``.  :class:`UserProperty` wraps it as a
:class:`~verifier.properties.base.Property`: the engines search, minimise and store it like any other.
The margin is computed in floats during the search (a candidate when it exceeds the search's float
tolerance) and again on the EXACT allocations for the re-check: a violation counts only when that exact
margin is > 0 -- and, for a mechanism that returned floats (taken exactly as written), when it exceeds the
mechanism's ``tolerance`` relative to the largest entry of the allocations involved (at least 1).  The
function (and its premise ``applicable(env)``) runs in a worker process like a user's mechanism
(``mechverify.isolation``): a loop, a crash or output never reaches the verifier.

References: ``path/file.py:function``, ``package.module:function``, or a name an installed package
declares in the entry-point group ``mechverify.properties``.  A stored counterexample records the
reference and the SHA-256 of its source; ``replay`` re-checks it and says when the source changed.
"""
from __future__ import annotations

import inspect
import math
import numbers
from fractions import Fraction
from typing import Any, Callable, Optional

from mechverify.allocation import Allocation
from mechverify.declare import PropertySpec, property_spec_of
from mechverify.deadline import BudgetExhausted
from mechverify.isolation import Worker, in_process
from mechverify.model import Environment
from mechverify.numbers import InstanceError, fmt_exact, gt

from .base import Certificate, Evaluation, Hints, Property, PropertyFailure, Witness
from .runs import failure_text

__all__ = ["UserProperty", "from_function", "resolve", "load_entry_points", "ENTRY_POINT_GROUP", "MAX_MARGIN_BITS"]

ENTRY_POINT_GROUP = "mechverify.properties"
#: a margin's numerator and denominator may have at most this many bits (as a mechanism's entries)
MAX_MARGIN_BITS = 4096
_OPTIMISED = ("demand", "eligible", "tasks")  # report deviations: the misreport optimiser applies
_RESOLVED: dict[str, "UserProperty"] = {}
_ENTRY_POINTS_LOADED: list[bool] = []


def _margin(value: Any, where: str) -> Any:
    """A margin as a number the verifier can use: int/Fraction exactly, a finite float as it is."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InstanceError(f"{where} returned {type(value).__name__} {value!r:.80}, not a number (the margin)")
    if isinstance(value, numbers.Rational):
        num, den = int(value.numerator), int(value.denominator)
        if num.bit_length() > MAX_MARGIN_BITS or den.bit_length() > MAX_MARGIN_BITS:
            raise InstanceError(f"{where} returned a margin with more than {MAX_MARGIN_BITS} bits")
        return Fraction(num, den)
    try:
        f = float(value)
    except (OverflowError, ValueError, TypeError) as exc:
        raise InstanceError(f"{where} returned a margin that is not a float ({type(exc).__name__})") from None
    if math.isnan(f):
        raise InstanceError(f"{where} returned NaN as the margin")
    return f


class UserProperty(Property):
    """A user's margin function as a property (see the module docstring)."""

    def __init__(self, func: Callable, spec: Optional[PropertySpec] = None, *, reference: str = "",
                 source_hash: str = "", name: Optional[str] = None) -> None:
        spec = spec or property_spec_of(func) or PropertySpec()
        self.func, self.spec = func, spec
        self.name = name or spec.name or getattr(func, "__name__", "user-property")
        doc = (inspect.getdoc(func) or "").strip().splitlines()
        self.title = spec.title or (doc[0] if doc else f"user property {self.name}")
        self.variants = dict(spec.variants) or {"default": self.title}
        self.default_variant = next(iter(self.variants))
        self.reference, self.source_hash = reference, source_hash
        self.entry_point = False  # declared by an installed package (found again by its name)
        self.source = spec.source or reference or self.name
        self.deviation = spec.deviation
        fields = dict(spec.hints)
        if "state" in fields:  # what a property reads is declared, not hinted
            raise InstanceError(f"property: {self.name}: hints: 'state' is declared as reads=(\"state\",) on "
                                "@mechverify.property")
        self.reads = tuple(getattr(spec, "reads", ()))
        fields.setdefault("min_users", 2 if spec.deviation == "leave" else 1)
        fields.setdefault("uses_users", spec.deviation != "none")
        try:
            self.hints = Hints(deviation=spec.deviation, optimizer=spec.deviation in _OPTIMISED, **fields)
        except TypeError as exc:
            raise InstanceError(f"property: {self.name}: hints: {exc}") from None
        self.variant_hints = {}
        self._takes_variant = len(self.variants) > 1 or _accepts(func, "variant")
        self._worker = Worker(self._in_worker, label=f"the property {self.name}")

    @property
    def ref(self) -> str:
        """What :func:`verifier.properties.get_property` needs to find this property again (another process):
        its reference, or the name an installed package declares it under."""
        return self.name if self.entry_point else (self.reference or self.name)

    # ---------------------------------------------------------------------------------- user code
    def _in_worker(self, op: str, args: tuple, variant: str) -> Any:
        """Runs in the worker: the premise's reason, or the margin (validated there)."""
        if op == "applicable":
            why = self.spec.applicable(*args)  # type: ignore[misc]
            return None if why is None else str(why)[:500]
        kwargs = {"variant": variant} if self._takes_variant else {}
        return _margin(self.func(*args, **kwargs), f"property {self.name}")

    def _call(self, op: str, args: tuple, variant: str) -> Any:
        """The user's function (or premise) on ``args``; its failure -- an exception, a time-out, a margin
        that is not a number -- is a :class:`PropertyFailure` naming this property (never the mechanism's)."""
        try:
            if in_process():
                return self._in_worker(op, args, variant)
            return self._worker(op, args, variant)
        except BudgetExhausted:  # the command's deadline: not the property's failure
            raise
        except Exception as exc:  # noqa: BLE001 - the worker's failure, or (in process) the function's own
            raise PropertyFailure(self.name, failure_text(exc)) from None

    # --------------------------------------------------------------------------------- the contract
    def applicable(self, mech, env: Environment, variant: str) -> Optional[str]:
        """The declared premise ``applicable(env)`` (``None``: it applies), after the deviation's own
        (someone must remain when a user leaves)."""
        if self.deviation == "leave" and env.n_users < 2:
            return "needs at least 2 users"
        if self.spec.applicable is None:
            return None
        return self._call("applicable", (env,), variant)

    def variant_possible(self, setting, variant: str) -> Optional[str]:
        """A misreport of eligible sets / task counts needs them in the mechanism's setting."""
        if self.deviation == "eligible" and not setting.placement:
            return "the setting has no placement constraints (no eligible sets to misreport)"
        if self.deviation == "tasks" and not setting.bounds:
            return "the setting has no task bounds"
        return None

    def _allocations(self, mech, env: Environment, deviation, exact: bool,
                     alloc: Optional[Allocation]) -> tuple[Optional[tuple], str, dict[str, Allocation]]:
        """The function's arguments (``None`` with the reason when the deviation is not valid) and the
        allocations involved, by name."""
        alloc = alloc or mech(env, exact=exact)
        if self.deviation == "none":
            return (env, alloc), "", {"allocation": alloc}
        if deviation is None:
            raise ValueError(f"{self.name}.evaluate needs a deviation (use deviations() or an engine)")
        j = deviation.users[0]
        try:
            env_d = deviation.apply(env)
            alloc_d = mech(env_d, exact=exact)
        except InstanceError as exc:  # an invalid report, or one outside the mechanism's setting
            return None, f"invalid deviation: {exc}", {}
        other = "without " + env.users[j] if self.deviation == "leave" else "after the misreport"
        return (env, alloc, j, alloc_d), "", {"allocation": alloc, other: alloc_d}

    def evaluate(self, mech, env: Environment, variant: str, deviation=None, exact: bool = False,
                 alloc: Optional[Allocation] = None) -> Evaluation:
        """The function's margin at ``env`` (and ``deviation``); a candidate when it is > 0 (in floats:
        beyond the search's float tolerance)."""
        args, why, _ = self._allocations(mech, env, deviation, exact, alloc)
        if args is None:
            return Evaluation(None, False, note=why)
        m = self._call("margin", args, variant)
        violated = gt(m, 0, exact)
        users = () if self.deviation == "none" else (args[2],)
        w = Witness(self.name, variant, mech.name, env, deviation, m, users) if violated else None
        return Evaluation(m, violated, w)

    def recheck(self, mech, witness: Witness) -> Optional[Certificate]:
        """Certified iff the margin on the EXACT allocations is > 0 (and beyond a float implementation's
        tolerance, see the module docstring)."""
        env, dev = witness.env, witness.deviation
        if self.deviation != "none":
            dev = witness.deviation_of("leave" if self.deviation == "leave" else "misreport", users=1)
        args, _, allocs = self._allocations(mech, env, dev, True, None)
        if args is None or not all(a.exact for a in allocs.values()):
            return None  # no exact allocation: nothing to certify
        m = self._call("margin", args, witness.variant)
        if isinstance(m, float):
            if math.isinf(m):
                return None  # an infinite margin is no number to check by hand
            m = Fraction(m)  # the function's float taken exactly as written
        if not m > 0:
            return None
        tol = mech.tolerance if mech.is_users else None
        floats = any((a.info or {}).get("as_written") == "float" for a in allocs.values())
        if floats and tol is not None:
            scale = max([Fraction(1)] + [abs(Fraction(v)) for a in allocs.values() for row in a.x for v in row])
            if not m > Fraction(tol) * scale:
                return None  # within the implementation's float tolerance
        who = "" if self.deviation == "none" else f" ({env.users[args[2]]} {self._what()})"
        summary = f"{self.name}{who}: margin {fmt_exact(m)} > 0 on the exact allocation(s)"
        return Certificate(witness, m, m, allocs, {"margin": m}, None, "", "exact", summary)

    def _what(self) -> str:
        return {"leave": "leaves", "demand": "misreports its demands", "eligible": "misreports its eligible servers",
                "tasks": "misreports its task count"}.get(self.deviation, "")


def _accepts(func: Callable, param: str) -> bool:
    try:
        ps = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return param in ps or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ps.values())


def from_function(func: Callable, *, reference: str = "", source_hash: str = "",
                  name: Optional[str] = None) -> UserProperty:
    """A :class:`UserProperty` for a plain function (its ``@mechverify.property`` spec, if any)."""
    if isinstance(func, UserProperty):
        return func
    if not callable(func):
        raise InstanceError(f"property: {reference or func!r} is a {type(func).__name__}, not a function")
    return UserProperty(func, reference=reference, source_hash=source_hash, name=name)


def resolve(ref: str) -> UserProperty:
    """The property a reference ``left:function`` names (cached while its source is unchanged; one-line
    ``InstanceError`` otherwise)."""
    from mechanisms.core.references import load_object, source_hash, source_path

    cached = _RESOLVED.get(ref)
    if cached is not None:
        if source_hash(source_path(ref)) == cached.source_hash:
            return cached
        del _RESOLVED[ref]
        from mechanisms.core.references import forget_module

        forget_module(ref)
    obj, path = load_object(ref, what="property")
    prop = from_function(obj, reference=ref, source_hash=source_hash(path) if path else "")
    if isinstance(obj, UserProperty) and not obj.reference:
        prop.reference, prop.source_hash = ref, source_hash(path) if path else ""
    _RESOLVED[ref] = prop
    return prop


def load_entry_points(registry: dict[str, Property]) -> None:
    """Add the properties installed packages declare in the entry-point group ``mechverify.properties``
    (``name = "package.module:function"``; ``mechanisms.core.references.installed``) to ``registry``; once per
    process."""
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED.append(True)
    from mechanisms.core.references import installed

    def make(name: str, value: str, obj: Any, digest: str) -> UserProperty:
        prop = from_function(obj, reference=value, source_hash=digest, name=name)
        prop.entry_point = True
        return prop

    installed(ENTRY_POINT_GROUP, registry, make)
