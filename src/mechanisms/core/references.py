"""A user's mechanism, wherever it lives: ``package.module:function``, ``path/to/file.py:function``, or an
installed package's entry point in the group ``mechverify.mechanisms``.

The contract (README "Audit your own mechanism"): a mechanism is a plain function ``f(env)`` -- or
``f(env, exact=...)`` -- of the public :class:`mechverify.Environment` that returns the task matrix
``x[user][server]`` (nested sequences or a numpy array of int, ``Fraction`` or float) or an
``Allocation``.  An optional ``@mechverify.mechanism(...)`` declares its name, setting and claims
(``mechverify.declare``) -- and its ORDER (``order=``: :func:`order.user_order_facet`, the setting marked
``ordered``; a referenced file that registers its function with ``mechanisms.register(..., order=OrderSpec(...))``
gets that registration, order included); without it :data:`DEFAULT_SETTING` applies (many servers, RDM, no placement,
no bounds, equal weights, no external resources) and no claim is registered.

What the function returns is validated here (:func:`to_allocation`): a wrong shape, a negative exact, a
non-finite or a non-numeric entry raises :class:`MechanismOutputError` naming the entry (a negative float,
e.g. -1e-17 of float noise, is judged with the other constraints of chi(E) by ``registry.check_output``,
within the tolerance) -- a finding about the
mechanism (property ``runs``), never a crash of the verifier.  Floats are taken EXACTLY as written
(``Fraction(float)``, the binary value); the allocation records ``info["as_written"] = "float"`` and its
violations must then clear the mechanism's relative ``tolerance`` (``mechverify.declare.DEFAULT_TOLERANCE``
unless declared or given with ``--tolerance``).
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import math
import numbers
import os
import sys
from fractions import Fraction
from typing import Any, Callable, Optional

from mechverify.allocation import Allocation
from mechverify.deadline import BudgetExhausted
from mechverify.declare import DEFAULT_TOLERANCE, spec_of
from mechverify.isolation import Worker, in_process
from mechverify.model import Environment
from mechverify.numbers import InstanceError

from .mechanism import REGISTERED, Claim, Mechanism, MechanismOutputError, Setting, SettingError
from .order import user_order_facet

__all__ = ["resolve", "load_object", "forget_module", "installed", "source_path", "from_function", "to_allocation",
           "load_entry_points", "source_hash", "user_setting", "user_claims", "check_user_name", "worker_reply",
           "from_worker_reply", "DEFAULT_SETTING", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "mechverify.mechanisms"
#: the setting of an undecorated user function: the basic model of seed 001 (many servers, RDM)
DEFAULT_SETTING = Setting(placement=False, external=False, bounds=False, weights=False)
_STATUSES = ("holds", "fails")
_RESOLVED: dict[str, Mechanism] = {}
_ENTRY_POINTS_LOADED: list[bool] = []


def source_hash(path: str) -> str:
    """SHA-256 of a source file's bytes ("" when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return ""


def _is_file_ref(left: str) -> bool:
    return left.endswith(".py") or "/" in left or os.sep in left


def _module_name(path: str) -> str:
    """The module name a file reference is imported under (stable per absolute path)."""
    return "mechverify_user_" + hashlib.sha1(path.encode()).hexdigest()[:12]


def source_path(ref: str) -> str:
    """The source file a reference names ("" when it cannot be found without importing it)."""
    left = ref.rpartition(":")[0]
    if _is_file_ref(left):
        return os.path.abspath(left)
    try:
        spec = importlib.util.find_spec(left)
    except (ImportError, ValueError):
        return ""
    return (spec.origin or "") if spec is not None else ""


def _load_module(left: str, what: str = "mechanism"):
    """Import ``left``: a file path (``*.py`` or containing a path separator) or a dotted module name."""
    if _is_file_ref(left):
        path = os.path.abspath(left)
        if not os.path.isfile(path):
            raise InstanceError(f"{what}: no file {left!r}")
        modname = _module_name(path)
        if modname in sys.modules:
            return sys.modules[modname], path
        spec = importlib.util.spec_from_file_location(modname, path)
        if spec is None or spec.loader is None:
            raise InstanceError(f"{what}: cannot load {left!r} as a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module  # functions defined there pickle by this name (process pools)
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:  # noqa: BLE001 - the user's file failing to import is one line
            del sys.modules[modname]
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise InstanceError(f"{what}: importing {left} failed: {type(exc).__name__}: {exc}") from None
        return module, path
    try:
        module = importlib.import_module(left)
    except BaseException as exc:  # noqa: BLE001
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise InstanceError(f"{what}: importing module {left!r} failed: {type(exc).__name__}: {exc}") from None
    return module, getattr(module, "__file__", "") or ""


def forget_module(ref: str) -> None:
    """Drop the module a file reference was imported as, and what it registered (its file changed: the next load
    imports it again)."""
    left = ref.rpartition(":")[0]
    if _is_file_ref(left):
        modname = _module_name(os.path.abspath(left))
        sys.modules.pop(modname, None)
        for name in [k for k, m in REGISTERED.items() if getattr(m.func, "__module__", None) == modname]:
            del REGISTERED[name]  # what the file registered (``register``) is registered again by the new import


def load_object(ref: str, what: str = "mechanism") -> tuple[Any, str]:
    """The object ``left:attr`` names and its source file: ``left`` a file path or a dotted module (one-line
    ``InstanceError`` starting with ``what:`` otherwise).  Mechanisms and properties load through it."""
    left, _, attr = ref.rpartition(":")
    if not left or not attr.isidentifier():
        raise InstanceError(f"{what}: expected package.module:function or path/to/file.py:function, got {ref!r}")
    module, path = _load_module(left, what)
    obj = getattr(module, attr, None)
    if obj is None:
        here = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_")
                      and getattr(v, "__module__", None) == module.__name__)
        raise InstanceError(f"{what}: {left} has no attribute {attr!r}"
                            + (f" (functions there: {', '.join(here)})" if here else ""))
    return obj, path


def resolve(ref: str) -> Mechanism:
    """The mechanism a reference ``left:function`` names (cached; one-line ``InstanceError`` otherwise)."""
    left, _, attr = ref.rpartition(":")
    if ref in _RESOLVED:
        cached = _RESOLVED[ref]
        now = source_hash(source_path(ref))
        if now and now == cached.source_hash:
            return cached
        del _RESOLVED[ref]  # the file changed (or went away) since it was loaded: load it again
        forget_module(ref)
    obj, path = load_object(ref)
    digest = source_hash(path) if path else ""
    registered = obj if isinstance(obj, Mechanism) else _registered_as(obj)
    if registered is not None:  # a Mechanism, or a function the file registers (``register``: setting, order, ...)
        mech = dataclasses.replace(registered, reference=ref, source_hash=digest, origin="reference")
    elif callable(obj):
        mech = from_function(obj, reference=ref, source_hash=digest, origin="reference")
    else:
        raise InstanceError(f"mechanism: {ref} is a {type(obj).__name__}, not a function")
    _RESOLVED[ref] = mech
    return mech


def _registered_as(func: Any) -> Optional[Mechanism]:
    """The mechanism ``mechanisms.register`` registered ``func`` as (when the referenced file registers it, with
    its setting, claims and ``order=OrderSpec(...)``), or ``None``."""
    return next((m for m in REGISTERED.values() if m.func is func), None)


def user_setting(who: str, fields: dict[str, Any]) -> Setting:
    """The setting a user declares (``fields``: keywords of :class:`Setting`) over :data:`DEFAULT_SETTING`;
    one-line ``InstanceError`` naming ``who`` for an unknown keyword."""
    known = {f.name for f in dataclasses.fields(Setting)}
    for key in fields:
        if key not in known:
            raise InstanceError(f"mechanism: {who}: unknown setting keyword {key!r} "
                                f"(known: {', '.join(sorted(known))})")
    return dataclasses.replace(DEFAULT_SETTING, **fields) if fields else DEFAULT_SETTING


def user_claims(who: str, given: Any, source: str) -> tuple[Claim, ...]:
    """The claims a user declares: a mapping ``{"sp": "holds", "ef/placement-aware": "fails"}`` or ``Claim``
    objects (one-line ``InstanceError`` naming ``who`` otherwise)."""
    out = []
    if isinstance(given, dict):
        for key, status in given.items():
            prop, _, variant = str(key).partition("/")
            if status not in _STATUSES:
                raise InstanceError(f"mechanism: {who}: claims[{key!r}]: expected 'holds' or 'fails', "
                                    f"got {status!r}")
            out.append(Claim(prop, status, source or f"declared by {who}", variant or None))
    else:
        for c in given or ():
            if not isinstance(c, Claim):
                raise InstanceError(f"mechanism: {who}: claims: expected a mapping or Claim objects, "
                                    f"got {type(c).__name__}")
            out.append(c)
    return tuple(out)


def check_user_name(name: str, reference: str) -> None:
    """A user's mechanism may not take a registered mechanism's name (one-line ``InstanceError``)."""
    if name in REGISTERED:
        raise InstanceError(f"mechanism: {reference or name}: the name {name!r} is a registered mechanism; "
                            f"give yours another one (@mechverify.mechanism(name=...))")


def from_function(func: Callable, *, reference: str = "", source_hash: str = "", name: Optional[str] = None,
                  tolerance: Optional[float] = None, origin: str = "function") -> Mechanism:
    """A :class:`Mechanism` for a plain user function (its ``@mechverify.mechanism`` spec, if any, gives the
    name, setting, claims and tolerance; see the module docstring); ``origin`` says how it was given
    (``Mechanism.origin``: ``function``, ``reference`` or ``entry-point``)."""
    spec = spec_of(func)
    mname = name or (spec.name if spec and spec.name else getattr(func, "__name__", "user-mechanism"))
    if not (mname in REGISTERED and REGISTERED[mname].func is func):
        check_user_name(mname, reference)
    who = getattr(func, "__name__", mname)
    setting = user_setting(who, dict(spec.setting) if spec else {})
    order = user_order_facet(spec.order, mname) if spec and spec.order is not None else None
    if order is not None:  # as ``register`` marks a port with an order facet
        setting = dataclasses.replace(setting, ordered=True)
    claims = user_claims(who, spec.claims if spec else (), spec.source if spec else "")
    tol = tolerance if tolerance is not None else (spec.tolerance if spec and spec.tolerance is not None
                                                   else DEFAULT_TOLERANCE)
    doc = (inspect.getdoc(func) or "").strip().splitlines()
    title = (spec.title if spec and spec.title else (doc[0] if doc else f"user mechanism {mname}"))
    source = (spec.source if spec and spec.source else reference or mname)
    return Mechanism(mname, title, _adapt(func, mname), setting, claims, source, "", (), reference, source_hash,
                     float(tol), origin=origin, order=order)


def _takes_exact(func: Callable) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return "exact" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _adapt(func: Callable, name: str) -> Callable[[Environment, bool], Allocation]:
    """The allocation function of a user's ``func``: it runs in a worker process the verifier can stop
    (``mechverify.isolation``: a per-call time limit, a memory limit, output captured), unless
    ``MECHVERIFY_IN_PROCESS=1``; what it returned is validated in the worker (:func:`to_allocation`) and
    comes back as plain rows."""
    takes_exact = _takes_exact(func)

    def direct(env: Environment, exact: bool = False) -> Allocation:
        out = func(env, exact=exact) if takes_exact else func(env)
        return to_allocation(env, out, name, exact)

    def in_worker(env: Environment, exact: bool) -> tuple:
        """Runs in the worker: the allocation's rows and info, or the one-line reason it is none."""
        return worker_reply(direct, env, exact)

    worker = Worker(in_worker, label=f"the mechanism {name}")

    def allocate(env: Environment, exact: bool = False) -> Allocation:
        if in_process():
            return direct(env, exact)
        # UserCodeFailure: the function raised, looped, exited, died
        return from_worker_reply(worker(env, exact), env, name, exact)

    allocate.__wrapped__ = func  # type: ignore[attr-defined]
    allocate.__doc__ = func.__doc__
    allocate.worker = worker  # type: ignore[attr-defined]
    return allocate


def worker_reply(direct: Callable[[Environment, bool], Allocation], env: Environment, exact: bool) -> tuple:
    """In a worker's child: ``direct(env, exact)`` (the user's allocation, validated) as a plain reply -- its
    rows and info, or the one-line reason it is none (:func:`from_worker_reply` reads it back)."""
    try:
        alloc = direct(env, exact)
    except SettingError as exc:  # the user's code itself rejects the instance: outside its domain
        return ("setting", str(exc))
    except MechanismOutputError as exc:
        return ("output", str(exc))
    except BudgetExhausted as exc:
        return ("budget", exc.what)
    return ("alloc", alloc.x, alloc.info)


def from_worker_reply(got: tuple, env: Environment, name: str, exact: bool) -> Allocation:
    """The :class:`Allocation` a :func:`worker_reply` carries, or its reason raised as the exception it was."""
    if got[0] == "alloc":
        return Allocation(env, got[1], name, exact, got[2])
    raise {"setting": SettingError, "output": MechanismOutputError, "budget": BudgetExhausted}[got[0]](got[1])


#: the largest entry (in absolute value) and the largest numerator/denominator size a mechanism may return:
#: far beyond any allocation of a valid instance (numbers in [1e-4, 1e4], at most 1e30 in their
#: numerators and denominators), small enough that no conversion overflows or exact arithmetic crawls
MAX_ENTRY = 10 ** 300
MAX_BITS = 4096


def _entry(env: Environment, name: str, j: int, s: int, v: Any) -> Fraction | float:
    where = f"{name}: output x[{env.users[j]}][{env.servers[s]}]"
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        try:
            shown = repr(v)
        except Exception:  # noqa: BLE001 - a value whose repr itself fails
            shown = f"<{type(v).__name__}>"
        raise MechanismOutputError(f"{where} = {shown[:80]} is not a number")
    if isinstance(v, numbers.Rational):
        try:
            num, den = int(v.numerator), int(v.denominator)
        except Exception as exc:  # noqa: BLE001 - a broken Rational subclass
            raise MechanismOutputError(f"{where}: its numerator/denominator cannot be read "
                                       f"({type(exc).__name__})") from None
        if den <= 0:
            raise MechanismOutputError(f"{where} has denominator {den}")
        if abs(num) > MAX_ENTRY * den:
            raise MechanismOutputError(f"{where} is too large (a number of {len(str(abs(num) // den))} digits)")
        if num.bit_length() > MAX_BITS or den.bit_length() > MAX_BITS:
            raise MechanismOutputError(f"{where} has a numerator or denominator of more than {MAX_BITS} bits")
        q = Fraction(num, den)
    else:
        try:
            f = float(v)
        except (OverflowError, ValueError, TypeError) as exc:
            raise MechanismOutputError(f"{where} cannot be read as a float ({type(exc).__name__})") from None
        if not math.isfinite(f):
            raise MechanismOutputError(f"{where} = {f!r} is not finite")
        if abs(f) > MAX_ENTRY:
            raise MechanismOutputError(f"{where} = {f!r} is too large")
        return f
    if q < 0:
        raise MechanismOutputError(f"{where} = {q} is negative")
    return q


def to_allocation(env: Environment, out: Any, name: str, exact: bool = True) -> Allocation:
    """Validate what a user's function returned and make it an :class:`Allocation` (see the module
    docstring); ``exact=True`` gives exact ``Fraction`` entries (floats taken as written)."""
    info: dict[str, Any] = {}
    if isinstance(out, Allocation):
        info = dict(out.info or {})
        out = out.x
    if hasattr(out, "tolist") and not isinstance(out, (list, tuple)):
        out = out.tolist()  # a numpy array
    J, S = env.n_users, env.n_servers
    if not isinstance(out, (list, tuple)) or len(out) != J:
        got = f"{len(out)} rows" if isinstance(out, (list, tuple)) else type(out).__name__
        raise MechanismOutputError(f"{name}: output: expected a task matrix x[user][server] with {J} rows "
                                   f"(one per user), got {got}")
    rows = []
    floats = False
    for j, row in enumerate(out):
        if hasattr(row, "tolist") and not isinstance(row, (list, tuple)):
            row = row.tolist()
        if not isinstance(row, (list, tuple)) or len(row) != S:
            got = f"{len(row)} entries" if isinstance(row, (list, tuple)) else type(row).__name__
            raise MechanismOutputError(f"{name}: output x[{env.users[j]}]: expected {S} entries (one per server), "
                                       f"got {got}")
        vals = []
        for s, v in enumerate(row):
            e = _entry(env, name, j, s, v)
            if isinstance(e, float):  # a negative float is judged by check_output, within the tolerance
                floats = True
                e = Fraction(e) if exact else e
            elif not exact:
                e = float(e)
            vals.append(e)
        rows.append(tuple(vals))
    if floats:
        info["as_written"] = "float"
    return Allocation(env, tuple(rows), name, exact, info)


def installed(group: str, registry: dict, make: Callable[[str, str, Any, str], Any]) -> None:
    """Add to ``registry`` what installed packages declare in the entry-point ``group`` (``name =
    "package.module:function"``): ``make(name, value, loaded object, its source file's SHA-256)`` builds each
    one.  A broken one is skipped with a warning on stderr, so it never hides the others.  Mechanisms and
    properties (``verifier.properties.user``) are installed through it."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        if ep.name in registry:
            continue
        try:
            obj = ep.load()
            mod = sys.modules.get(getattr(obj, "__module__", ""), None)
            registry[ep.name] = make(ep.name, ep.value, obj, source_hash(getattr(mod, "__file__", "") or ""))
        except Exception as exc:  # noqa: BLE001
            print(f"warning: entry point {ep.name} = {ep.value} ({group}): {type(exc).__name__}: {exc}",
                  file=sys.stderr)


def load_entry_points() -> None:
    """Register the mechanisms installed packages declare in the entry-point group ``mechverify.mechanisms``
    (:func:`installed`); once per process."""
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED.append(True)

    def make(name: str, value: str, obj: Any, digest: str) -> Mechanism:
        if isinstance(obj, Mechanism):
            return dataclasses.replace(obj, name=name, reference=value, source_hash=digest, origin="entry-point")
        return from_function(obj, reference=value, source_hash=digest, name=name, origin="entry-point")

    installed(ENTRY_POINT_GROUP, REGISTERED, make)
