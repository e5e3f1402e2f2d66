"""What every property shares: deviations, witnesses, evaluations, search hints and the ``Property``
interface.

A property is ONE object used by every engine (``check``, the Hypothesis search, the misreport
optimiser, the minimiser, z3).  It offers

* ``applicable(mech, env, variant)``   -> ``None`` or the reason it does not apply (premise fails);
* ``evaluate(mech, env, variant, deviation=None, exact=False)`` -> ``Evaluation``: the measure of how
  far the property fails at this instance (and deviation), and a *candidate* ``Witness`` if it fails.
  Float evaluations are only candidates;
* ``recheck(mech, witness)`` -> ``Certificate`` or ``None``: the ONLY way a candidate becomes a
  violation.  It recomputes every allocation involved in exact rational arithmetic (or, for a
  mechanism without an exact allocation, with certified intervals) and returns the exact gap;
* ``hints_for(variant)`` -> ``Hints``: what the engines need to know to search it (which deviations,
  which part of the domain), declared as data so that no engine branches on a property's name;
* ``deviations(mech, env, variant, rng)`` -> the structured candidate deviations of its deviation kind
  (``check``'s deviation search; ``verifier.properties.moves``).

Facets every layer reads instead of switching on the name: ``measure`` (a :class:`Measure`: what the
measure means, its threshold and direction -- the reports print it), ``hints`` (the search engines),
``reads`` (what the search must draw: declared guarantees, maxes, a state), ``needs_quiet_rounds`` (a
property over executions judged on stretches where only ``round`` events happen: the search over traces
ends every drawn trace with a few such rounds; ``cycles``, docs/cycles.md) and,
optionally, ``z3`` (the module of its z3 goal, ``verifier/engines/smt/goals/``; docs/z3.md, "Goals").
Measures, their orientation and violation thresholds are listed in docs/properties.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError

from .deviation import Deviation, Report
from . import moves

__all__ = ["READINGS", "reading", "reading_possible", "Deviation", "Report", "Witness", "Certificate", "Evaluation",
           "Hints", "Measure", "Property", "PropertyFailure", "DEVIATION_KINDS"]

#: What a property's deviation is (``Hints.deviation``): nothing (an instance property), one user's
#: demand report, eligible-set report or task-count report, a coalition's demand reports, a user leaving.
#: ``trace``: a user's reports over an execution (``mechverify.trace_deviations.TraceMisreport``: online SP), or a
#: tenant's resubmission of one of its users (``TraceResubmission``: burst gaming).
DEVIATION_KINDS = ("none", "demand", "eligible", "tasks", "coalition", "leave", "trace")


@dataclass(frozen=True)
class Hints:
    """How the engines search one variant of a property (declarative; see docs/properties.md).

    ``deviation``: one of ``DEVIATION_KINDS``.  Domain narrowing: ``min_users`` (at least this many
    users), ``one_resource``, ``one_server``, ``no_external``, ``no_server_demand``, ``min_external``
    (at least this many external resources), ``require_bounds`` (at least one finite task bound),
    ``no_queues`` (flat instances only, also where the setting takes queue trees), ``min_queue_depth`` and
    ``min_leaves`` (queue trees whose leaves sit at least that deep, with at least that many leaves: nested
    quotas), ``max_task_bound`` (task bounds of 1 or more folded into 1..this: small whole workloads),
    ``dominant`` (bias toward the bottleneck-fairness premise: ``"global"`` or ``"per-server"``).
    ``premise_note``: one line a verdict shows about that bias.  ``uses_users``: ``recheck`` reads
    ``witness.users`` (the minimiser keeps them; others recompute who is hurt).  ``optimizer``: the
    misreport optimiser applies (deviations that are reports)."""

    deviation: str = "none"
    min_users: int = 1
    one_resource: bool = False
    one_server: bool = False
    no_external: bool = False
    no_server_demand: bool = False
    min_external: int = 0
    require_bounds: bool = False
    no_queues: bool = False
    min_queue_depth: int = 1
    min_leaves: int = 2
    max_task_bound: int = 0
    dominant: Optional[str] = None
    premise_note: str = ""
    uses_users: bool = False
    optimizer: bool = False

    def __post_init__(self) -> None:
        if self.deviation not in DEVIATION_KINDS:
            raise ValueError(f"Hints.deviation: unknown kind {self.deviation!r} (known: {', '.join(DEVIATION_KINDS)})")


@dataclass(frozen=True)
class Measure:
    """What a property's measure is (``meaning``, one line for people) and when it is a violation:
    ``measure > threshold`` for ``direction`` ">" (higher is worse), ``measure < threshold`` for "<"."""

    meaning: str
    threshold: int = 0
    direction: str = ">"

    def __post_init__(self) -> None:
        if self.direction not in (">", "<"):
            raise ValueError(f"Measure.direction: '>' or '<' (got {self.direction!r})")

    @property
    def violated_when(self) -> str:
        """``"> 0"``, ``"< 1"``."""
        return f"{self.direction} {self.threshold}"

    def describe(self) -> str:
        """``"<meaning>; violated when > 0"``."""
        return f"{self.meaning}; violated when {self.violated_when}"


#: the measure of a property that declares none (a user's property: the margin its function returns)
MARGIN = Measure("the property's margin at the instance (> 0: violated by that much)", 0, ">")


# ---------------------------------------------------------------------- results
@dataclass
class Witness:
    """A candidate violation: enough to recompute everything exactly."""

    property: str
    variant: str
    mechanism: str
    env: Environment  # the TRUE environment
    deviation: Optional[Deviation] = None
    measure: Any = None
    users: tuple[int, ...] = ()  # the users the violation is about (deviator, envious user, ...)
    #: a property over executions: the execution (``mechverify.execution.Execution``; ``env`` is then the
    #: present users' environment at the failing ``step``)
    execution: Any = None
    step: Optional[int] = None

    def deviation_of(self, kind: str, users: Optional[int] = None) -> Deviation:
        """The deviation a deviation property's re-check needs: of ``kind`` ('misreport' or 'leave'), by
        ``users`` users (None: at least one).  A witness read from a damaged file may carry none or
        another kind: one ``InstanceError`` line naming the field, never an ``AttributeError``."""
        dev = self.deviation
        if dev is None or dev.kind != kind or not dev.users or (users is not None and len(dev.users) != users):
            got = "null" if dev is None else f"a {dev.kind} by {len(dev.users)} user(s)"
            want = f"a {kind} by {users} user(s)" if users is not None else f"a {kind}"
            raise InstanceError(f"deviation: {self.property} needs {want}, got {got}")
        return dev


@dataclass
class Certificate:
    """An exactly re-checked violation.  ``gap > 0`` always (the exact margin of the violation)."""

    witness: Witness
    gap: Fraction  # exact margin (e.g. u' - u for SP, envy - own for EF)
    measure: Any  # exact measure (Fraction) or inf
    allocations: dict[str, Allocation]  # name -> exact allocation(s) involved
    utilities: dict[str, Any]  # name -> exact numbers involved
    robust: Optional[bool] = None  # holds for every allocation the mechanism's definition allows?
    robust_note: str = ""
    method: str = "exact"  # 'exact' | 'interval'
    summary: str = ""
    #: a user's float implementation (numbers taken exactly as written): {"tolerance", "relative_margin"}
    as_written: Optional[dict] = None
    #: property ``runs``: the mechanism's failure on the instance (the finding is of kind "crash")
    exception: Optional[str] = None
    #: False when re-checking smaller instances costs too much to minimise this one (a call that exceeds
    #: the per-call time limit): the store keeps it as found
    minimise: bool = True

    def margin_text(self) -> str:
        """How the margin is to be read: "for the implementation as written, margin m (...)" for a float
        implementation, else "exact margin m"."""
        from mechverify.numbers import fmt_exact

        if self.as_written:
            return (f"for the implementation as written, margin {fmt_exact(self.gap)} (relative "
                    f"{float(self.as_written['relative_margin']):.3g} > tolerance {self.as_written['tolerance']:g})")
        return f"exact margin {fmt_exact(self.gap)}"


def _scale(cert: Certificate) -> Fraction:
    """The largest finite magnitude among the certificate's numbers (the tolerance is relative to it)."""
    best = Fraction(0)
    for v in cert.utilities.values():
        try:
            q = abs(Fraction(v))
        except (TypeError, ValueError, OverflowError):
            continue
        best = max(best, q)
    return best if best > 0 else Fraction(1)


def tolerance_gate(recheck):
    """Wrap a property's ``recheck``: when the mechanism is a user's implementation that returned floats
    (``Allocation.info["as_written"] == "float"``, numbers taken exactly), the exact margin must exceed the
    mechanism's relative ``tolerance`` -- float noise is never a violation.  Every ``Property`` subclass's
    ``recheck`` is wrapped (``Property.__init_subclass__``), so no engine can bypass it."""
    if getattr(recheck, "_tolerance_gated", False):
        return recheck

    def gated(self, mech, witness):
        cert = recheck(self, mech, witness)
        tol = mech.tolerance if mech.is_users else None
        if cert is None or tol is None:
            return cert
        if not any((a.info or {}).get("as_written") == "float" for a in cert.allocations.values()
                   if isinstance(a, Allocation)):
            return cert
        rel = Fraction(cert.gap) / _scale(cert)
        if not rel > Fraction(tol):
            return None  # within the tolerance: float noise, not a violation
        cert.as_written = {"tolerance": float(tol), "relative_margin": rel}
        cert.summary = f"{cert.summary} ({cert.margin_text()})"  # every report says how to read it
        return cert

    gated._tolerance_gated = True  # type: ignore[attr-defined]
    gated.__doc__ = recheck.__doc__
    gated.__name__ = getattr(recheck, "__name__", "recheck")
    gated.__wrapped__ = recheck  # type: ignore[attr-defined]
    return gated


# ---------------------------------------------------------------------- readings
#: The readings of a property for mechanisms outside flat divisible sharing, each a variant of its own
#: (docs/properties.md, "Readings on trees and whole tasks"): ``whole-task`` for a mechanism with
#: indivisible tasks (on a queue tree too), ``tree`` for a divisible mechanism on queue trees.
READINGS = ("tree", "whole-task")


def reading(setting, has: tuple[str, ...] = READINGS) -> Optional[str]:
    """The reading a mechanism's setting calls for among the readings ``has`` a property has: ``"whole-task"``
    (indivisible tasks), ``"tree"`` (a divisible mechanism defined on queue trees) or ``None`` (the
    property's own variants: flat divisible sharing, or a reading the property does not need -- PO is
    the same on a tree)."""
    if not getattr(setting, "divisible", True):
        return "whole-task" if "whole-task" in has else None
    if getattr(setting, "hierarchy", False):
        return "tree" if "tree" in has else None
    return None


def reading_possible(setting, variant: str, prop: str, has: tuple[str, ...] = READINGS) -> Optional[str]:
    """``None`` if ``variant`` is searched for ``setting``, else why not: a reading variant (of those the
    property ``has``) only for the setting that calls for it, the property's other variants only when the
    setting calls for none.  The one rule every property with readings follows."""
    r = reading(setting, has)
    if variant in has:
        if variant == r:
            return None
        if variant == "whole-task":
            return "divisible tasks"
        if not getattr(setting, "hierarchy", False):
            return "no queue tree in this setting"
        return f"whole tasks: {prop}/whole-task reads the tree"
    if r is not None:
        return f"{'whole tasks' if r == 'whole-task' else 'a queue tree'}: see {prop}/{r}"
    return None


class PropertyFailure(Exception):
    """A property's own code failed (a user's property raised, timed out, or returned no number): a finding
    about THAT property, never about the mechanism, and never a verdict.  ``prop`` names it; ``text`` is the
    one-line failure (what it raised, what it printed)."""

    def __init__(self, prop: str, text: str) -> None:
        self.prop, self.text = prop, text
        super().__init__(f"the property {prop} failed: {text}")


@dataclass
class Evaluation:
    """Result of one property evaluation on one instance (and deviation)."""

    measure: Any  # None when not applicable
    violated: bool
    witness: Optional[Witness] = None
    note: str = ""


class Property:
    """Base class; see the module docstring."""

    name: str = ""
    title: str = ""
    variants: dict[str, str] = {}
    default_variant: str = ""
    measure: Measure = MARGIN  # what the measure means, its threshold and direction (the reports print it)
    hints: Hints = Hints()  # for every variant ...
    variant_hints: dict[str, Hints] = {}  # ... except these
    #: what the property reads beyond the basic model (``mechverify.declare.READS``: queues' declared
    #: ``"guarantee"`` and ``"max"``, a ``"state"``): the search draws them where the setting allows (queue trees,
    #: ordered policies); docs/properties.md, "What a property reads"
    reads: tuple[str, ...] = ()
    #: the module of the property's z3 goal (``verifier.engines.smt.goals.<module>``, which defines ``GOAL``:
    #: the users it names, what the encoding must give, the goal formula; docs/z3.md, "Goals"); ``None``: the
    #: z3 engine does not handle the property
    z3: Optional[str] = None
    #: what it is judged on: ``"instance"`` (one environment), or ``"execution"`` (a mechanism's run through an
    #: execution: ``verifier.properties.temporal``); engines, the planner and the reports read it
    over: str = "instance"
    #: (``over = "execution"``) what it judges happens while nothing but ``round`` events do -- the input
    #: unchanged, a deterministic mechanism stepping on alone (a repeated state repeats forever): the search over
    #: traces (``verifier.engines.traces``) then ends every trace it draws with a few quiet rounds
    needs_quiet_rounds: bool = False
    #: a violation is the MECHANISM failing (an exception, a time-out, an invalid output: property ``runs``),
    #: not a property of its allocations.  The policy every entry point follows for such a property lives here,
    #: once: a user's mechanism is searched for it FIRST, whatever was asked (``verifier.planning``); its
    #: violation fails the command under ``--fail-on refuted`` too, and a test (``assert_property``) reports it
    #: before anything else, since the other verdicts of the call mean little after it
    mechanism_failure: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("recheck")
        if own is not None:
            cls.recheck = tolerance_gate(own)  # see tolerance_gate

    @property
    def ref(self) -> str:
        """What ``get_property`` needs to find this property again, in another process too (its name for a
        built-in one; a user's property: its reference)."""
        return self.name

    @property
    def higher_is_worse(self) -> bool:
        """A larger measure is a worse one (``measure.direction`` is ">")."""
        return self.measure.direction == ">"

    def hints_for(self, variant: str) -> Hints:
        """The engines' search hints for ``variant``."""
        return self.variant_hints.get(variant, self.hints)

    @property
    def needs_deviation(self) -> bool:
        """Some variant is about a deviation (SP, GSP, PM): its search draws (instance, deviation) pairs."""
        return any(self.hints_for(v).deviation != "none" for v in self.variants)

    def applicable(self, mech, env: Environment, variant: str) -> Optional[str]:
        """``None`` if the property applies to ``env``; otherwise why not (its premise fails)."""
        return None

    def lp_certificate(self, mech, env: Environment, variant: str, alloc: Allocation) -> tuple[Optional[dict], str]:
        """The exact LP certificate (``mechverify.lp_certificate_checker``'s form, docs/certificates.md) of the verdict on
        ``alloc``, the mechanism's exact allocation on ``env``: ``(certificate, "")``, or ``(None, why not)``.
        Default: the verdict rests on no LP (``(None, "")``)."""
        return None, ""

    def evaluate(self, mech, env: Environment, variant: str, deviation: Optional[Deviation] = None,
                 exact: bool = False, alloc: Optional[Allocation] = None) -> Evaluation:
        """The measure at ``env`` (and ``deviation``) and a candidate witness if it is violated."""
        raise NotImplementedError

    def recheck(self, mech, witness: Witness) -> Optional[Certificate]:
        """The exact certificate of ``witness``'s violation, or ``None`` if it cannot be certified."""
        raise NotImplementedError

    def evaluate_batch(self, mech, envs: Sequence[Environment], allocs: Sequence[Allocation],
                       variant: str) -> Optional[list[Optional[Evaluation]]]:
        """Float evaluations of many instances at once, each with its float allocation (``rates``'s batch
        path), or ``None``: evaluate them one by one.  An entry ``None``: that instance one by one.  The
        same measure and candidate as ``evaluate(exact=False)``; only ``recheck`` makes a violation."""
        return None

    def deviations(self, mech, env: Environment, variant: str, rng) -> Iterable[Deviation]:
        """Structured candidate deviations of the variant's deviation kind (none for instance properties);
        ``rng`` is a ``random.Random`` for the sampled ones."""

        return moves.deviations(self.hints_for(variant).deviation, env, rng)

    def claim_variants(self, mech) -> tuple[str, ...]:
        """The variants a paper's variant-less claim about this property speaks about."""
        return tuple(self.variants)

    def variant_possible(self, setting, variant: str) -> Optional[str]:
        """``None`` if ``setting`` has instances where ``variant`` is a distinct check; else why not."""
        return None

    def mechanism_possible(self, mech, variant: str) -> Optional[str]:
        """``None`` if the property says something about ``mech`` beyond its setting (e.g. a facet it declares);
        else why not.  The planner skips the cell when it says why not."""
        return None

    def canonical_variant(self, setting, variant: str) -> str:
        """The variant that performs the same check as ``variant`` in ``setting`` (itself by default)."""
        return variant

    def default_for(self, setting=None) -> str:
        """The variant a question without one means: ``default_variant``, or -- when it is not possible in
        ``setting`` (``variant_possible``) -- the first variant that is."""
        if setting is None or not self.variant_possible(setting, self.default_variant):
            return self.default_variant
        return next((v for v in self.variants if not self.variant_possible(setting, v)), self.default_variant)

    def variant_of(self, variant: Optional[str], setting=None) -> str:
        """``variant`` (for ``None``: the default one, :meth:`default_for` ``setting``), checked against
        ``variants``."""
        v = variant or self.default_for(setting)
        if v not in self.variants:
            raise InstanceError(f"variant: {self.name} has no variant {v!r} (known: {', '.join(self.variants)})")
        return v

    def worse(self, a: Any, b: Any) -> bool:
        """Is measure ``a`` worse than ``b``?"""
        if b is None:
            return a is not None
        if a is None:
            return False
        return a > b if self.higher_is_worse else a < b
