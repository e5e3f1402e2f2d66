"""Properties, each ONE object used by every engine (see ``base.py`` for the interface).

``PROPERTIES`` maps a name to the object (the registry); ``DEFAULT_PROPERTIES`` are the names ``run``
and ``check`` audit when none are given; ``get_property(name)`` raises a one-line error for an unknown
name; ``names_help()`` is the ``--properties`` help text.  Adding a property: one module here and one
line below (docs/properties.md, "Adding a property").
"""
from mechverify.numbers import InstanceError

from .base import Certificate, Deviation, Evaluation, Hints, Property, Report, Witness  # noqa: F401
from .ef_si import EnvyFreeness, SharingIncentive
from .hsi import HierarchicalShareGuarantee
from .lend import Lend
from .limit import Limit
from .quota import Quota
from .fairness import BottleneckFairness, SingleResourceFairness  # noqa: F401
from .population import PopulationMonotonicity  # noqa: F401
from .single_server import SingleServerDRF  # noqa: F401
from .order import OrderIsStrictWeak, ShareFaithful
from .po import ParetoOptimality
from .runs import Runs
from .cycles import Cycles
from .dynamic import (Disparity, DynamicEF, DynamicPO, DynamicSI, EachStep, Irrevocability, Isolation, OnlineSP,
                      Starvation, UsageIgnored)
from .sp import GroupStrategyProofness, StrategyProofness
from .convergence import Convergence
from .work_conserving import WorkConserving
from .burst import BurstGaming

__all__ = ["PROPERTIES", "DEFAULT_PROPERTIES", "EXECUTION_PROPERTIES", "USER_PROPERTIES", "get_property", "all_names", "split_name", "names_help", "parse_cells", "Certificate", "Deviation",
           "Evaluation", "Hints", "Property", "Report", "Witness"]

PROPERTIES: dict[str, Property] = {p.name: p for p in (
    StrategyProofness(), GroupStrategyProofness(), EnvyFreeness(), SharingIncentive(), HierarchicalShareGuarantee(),
    Quota(), Limit(), Lend(), ParetoOptimality(),
    BottleneckFairness(), SingleResourceFairness(), PopulationMonotonicity(), SingleServerDRF(), OrderIsStrictWeak(),
    ShareFaithful(), Runs(),
)}
#: ``each-step`` judges every one-shot property of one instance that has no deviation and reads no state
PROPERTIES["each-step"] = EachStep({n: p for n, p in PROPERTIES.items() if not p.needs_deviation
                                    and not p.mechanism_failure and "state" not in p.reads})
PROPERTIES.update({p.name: p for p in (
    DynamicSI(), DynamicEF(), DynamicPO(), OnlineSP(), Irrevocability(), Disparity(), Isolation(),
    Starvation(), Cycles(), UsageIgnored(),
)})
PROPERTIES.update({p.name: p for p in (Convergence(), WorkConserving(), BurstGaming())})

#: The properties audited when none are named (every registered one, in registry order), except ``runs``,
#: which ``run`` searches first for a user's mechanism only (``USER_PROPERTIES``).
DEFAULT_PROPERTIES: list[str] = [p for p in PROPERTIES if p != "runs" and PROPERTIES[p].over == "instance"]
#: The properties over executions (``Property.over``): the defaults for a mechanism that steps through them.
EXECUTION_PROPERTIES: list[str] = [p for p in PROPERTIES if PROPERTIES[p].over == "execution"]
USER_PROPERTIES: list[str] = ["runs"]


#: users' properties this process has loaded (by reference or entry point), by name: a result or a stored
#: file names a property by its name
_LOADED: dict[str, Property] = {}


def get_property(name) -> Property:
    """The property ``name``: a built-in one, a user's property by reference (``path/file.py:function``,
    ``package.module:function``; ``verifier.properties.user``), one an installed package declares in the
    entry-point group ``mechverify.properties``, or one loaded earlier in this process; a ``Property``
    object is returned as it is.  ``InstanceError`` naming the known ones otherwise."""
    if isinstance(name, Property):
        return name
    try:
        return PROPERTIES[name]
    except (KeyError, TypeError):  # TypeError: not a name at all (a damaged file's list or object)
        pass
    if isinstance(name, str) and ":" in name:
        from .user import resolve

        prop = resolve(name.strip())
        _LOADED[prop.name] = prop
        return prop
    if isinstance(name, str):
        _entry_points()
        if name in _LOADED:
            return _LOADED[name]
    raise InstanceError(f"properties: unknown property {name!r} (known: {', '.join(all_names())}; or a reference "
                        f"path/file.py:function or package.module:function)")


#: the properties installed packages declare (entry-point group ``mechverify.properties``), by name
_INSTALLED: dict[str, Property] = {}


def _entry_points() -> None:
    from .user import load_entry_points

    load_entry_points(_INSTALLED)
    for name, prop in _INSTALLED.items():
        _LOADED.setdefault(name, prop)


def all_names() -> list[str]:
    """Every property's name: the built-in ones, then those installed packages declare (not the ones
    loaded by reference: a reference names them)."""
    _entry_points()
    return list(PROPERTIES) + [n for n in _INSTALLED if n not in PROPERTIES]


def names_help() -> str:
    """Help text of a ``--properties`` option, from the registry."""
    return (f"comma-separated: {','.join(all_names())} (default: all but runs -- over executions for a mechanism "
            f"that steps through them, on instances otherwise; a user's mechanism: all, runs first), or your own: "
            f"path/file.py:function, package.module:function")


def split_name(item: str) -> tuple[str, str]:
    """``"sp/demand"`` -> ``("sp", "demand")``; a reference keeps its path: ``"dir/f.py:prop/v"`` ->
    ``("dir/f.py:prop", "v")``."""
    item = item.strip()
    if ":" in item:
        left, _, rest = item.rpartition(":")
        func, _, variant = rest.partition("/")
        return f"{left}:{func.strip()}", variant.strip()
    name, _, variant = item.partition("/")
    return name.strip(), variant.strip()


def parse_cells(names) -> tuple[list[str], dict[str, list[str]]]:
    """Property names as the API and the reports write them -- ``"sp"``, ``"sp/demand"`` (property/variant),
    a comma-separated string of them, or a sequence of such strings -- as ``(property names in order, {property:
    [variants]})``; the dict has an entry only for a property named with variants only (``"sp"`` beside
    ``"sp/demand"`` means every variant).  One-line ``InstanceError`` for an unknown property or variant, or
    for no name at all."""
    items = names.split(",") if isinstance(names, str) else list(names)
    props: list[str] = []
    chosen: dict[str, list[str]] = {}
    whole: set[str] = set()
    for item in items:
        if not isinstance(item, str):
            raise InstanceError(f"properties: expected names like 'sp' or 'sp/demand', got {item!r}")
        item = item.strip()
        if not item:
            continue
        name, variant = split_name(item)
        prop = get_property(name)
        key = prop.ref  # a user's property: its reference (found again in a worker process)
        if key not in props:
            props.append(key)
        if variant:
            v = prop.variant_of(variant)
            if v not in chosen.setdefault(key, []):
                chosen[key].append(v)
        else:
            whole.add(key)
    if not props:
        raise InstanceError(f"properties: no property named (got {names!r}; known: {', '.join(PROPERTIES)})")
    return props, {p: vs for p, vs in chosen.items() if p not in whole}
