"""THE result record and verdict vocabulary of ``check``, ``run``, ``audit``, ``certify`` and ``query``, and
the one result of replaying an artifact file.

One :class:`Result` per (mechanism, property, variant) question.  Its ``verdict`` is one of
:data:`VERDICTS`; :func:`verdict_text` says in words what was established -- never a bare "holds".
Renderers (``verifier/report/``) turn results into text, Markdown, JSON and HTML.

One :class:`ArtifactResult` per replayed artifact file -- a stored counterexample, an SMT export, an exact LP
certificate (``verifier.artifacts``) --: its status is one of :data:`ARTIFACT_STATUSES`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional, TypedDict, Union

from mechverify.model import describe_shape
from mechverify.numbers import fmt

from .claims import REFUTED

__all__ = ["Verdict", "VERDICTS", "Result", "Details", "SmtDetails", "CheckDetails", "SearchDetails", "AuditDetails", "DETAIL_KINDS",
           "verdict_text", "is_noise", "describe_size", "ARTIFACT_STATUSES",
           "ACCEPTED", "REJECTED", "MALFORMED", "ArtifactResult"]


class Verdict(str, Enum):
    """What a question established: THE verdict vocabulary (its values are what files and JSON say).  A
    ``str`` subclass, so a verdict read from a file compares equal to its member; inside the verifier the
    members are used, never the strings."""

    VIOLATED = "violated"
    CERTIFIED = "certified"
    SATISFIED = "satisfied"
    NOT_REFUTED = "not_refuted"
    NOT_APPLICABLE = "not_applicable"
    VACUOUS = "vacuous"
    UNKNOWN = "unknown"

    __str__ = str.__str__  # "violated", in text and f-strings alike
    __format__ = str.__format__

    def __repr__(self) -> str:
        """``'violated'``: the Python API printed verdicts as strings before they were members, and a user's
        ``print(results)`` keeps showing the same (``Verdict.VIOLATED == 'violated'`` as well)."""
        return repr(self.value)

    @property
    def decided(self) -> bool:
        """Did the question get an answer?  ``unknown`` did not; every other verdict did (``not applicable``
        answers that the property does not apply)."""
        return self is not Verdict.UNKNOWN

    @property
    def passing(self) -> bool:
        """A verdict a test or a CI job may pass on (no violation established, nothing left undecided)."""
        return self in (Verdict.NOT_REFUTED, Verdict.CERTIFIED, Verdict.SATISFIED, Verdict.NOT_APPLICABLE)


#: verdict -> what it means
VERDICTS = {
    Verdict.VIOLATED: "an exact counterexample (re-checked in rational arithmetic)",
    Verdict.CERTIFIED: "proved on a stated domain (z3)",
    Verdict.SATISFIED: "an instance property checked exactly on this instance",
    Verdict.NOT_REFUTED: "no violation found in N trials / T s (not a proof)",
    Verdict.NOT_APPLICABLE: "the property's premise fails",
    Verdict.VACUOUS: "the certification's vacuity control is UNSAT: nothing was proved",
    Verdict.UNKNOWN: "nothing could be established (the note says why)",
}


class SmtDetails(TypedDict, total=False):
    """What ``certify`` and ``query`` (``verifier.engines.smt``) add to a result."""

    cases: int  # the support/dominance cases of the shape, after pruning
    cases_pruned: int  # cases dropped as unsatisfiable before any query
    case_log: list  # how the cases were enumerated, one line each
    case: str  # the case a counterexample or an undecided query belongs to
    control: str  # the vacuity control's outcome ('' until it ran)
    method: str  # 'full encoding' or the reduction's method
    queries: int  # SMT queries asked
    encoding: str  # the mechanism's encoding family and description
    crosscheck: str  # how the encoding was checked against the implementation
    crosscheck_env: dict  # the instance on which the encoding and the implementation disagreed
    reduction: str  # the scale/symmetry reduction's status and note
    space: str  # query: what the symbolic part of the instance ranges over
    shape: list  # certify's shape (users, resources, ...) in a sweep
    provenance: dict  # what the store records with a violation (solver versions included)
    ledger: Any  # second.Ledger: the queries a verdict rests on (what --export writes)
    title: str  # the question, as the exported files name it
    solvers: list  # [{"name": ..., "version": ...}] of z3 and cvc5
    second_solver_seconds: float  # cvc5's time
    answers: list  # per obligation: stage, role, key, logic and each solver's answer
    incomplete: list  # obligations cvc5 could not decide
    agreement: str  # 'z3 and cvc5 agree', or z3 alone and why
    proofs: str  # the Alethe proofs asked and checked


class CheckDetails(TypedDict, total=False):
    """What ``check`` (and ``check --certificates``) adds to a result."""

    outside: list  # per claim: why the instance breaks its assumptions (None: it does not)
    lp_certificate: str  # the exact LP certificate written for the verdict


class SearchDetails(TypedDict, total=False):
    """What a search (``run``, ``audit``) adds to a result."""

    failed_instance: dict  # the instance on which the property's own code failed (``Result.property_failure``)


class AuditDetails(TypedDict, total=False):
    """What ``audit`` adds to a result: where its evidence comes from."""

    covered_by_claim: bool  # a claim covers the cell (or the cell has no claim at all)
    source: str  # 'search', or a stored counterexample replayed exactly, ...
    stored_outside: str  # a stored counterexample outside the claims' assumptions (its path)
    stored_outcomes: list  # the claims' outcomes on it
    searched: bool  # the cell was searched as well
    search_text: str  # the search's verdict, when a stored counterexample decided the cell
    replays: bool  # the stored counterexample of a violation replays exactly


#: a result's ``details``: the keys one engine or command adds (``tests/verifier/test_results.py`` fails on a
#: key written anywhere that none of these declares)
Details = Union[SmtDetails, CheckDetails, SearchDetails, AuditDetails]
DETAIL_KINDS = (SmtDetails, CheckDetails, SearchDetails, AuditDetails)


@dataclass
class Result:
    """What one question about one mechanism established (see :data:`VERDICTS`).

    ``claims`` are the registered claims covering the cell (``verifier.claims.claims_for``) and
    ``outcomes`` what the verdict means for each (``verifier.claims.outcomes``).  ``details`` holds what
    only one engine or command produces, with the keys its :data:`Details` type declares (SMT: cases,
    control, space, the solvers' agreement; check: per-claim instance notes; audit: the evidence's source)."""

    mechanism: str
    property: str
    variant: str
    verdict: Verdict = Verdict.UNKNOWN
    claims: list = field(default_factory=list)
    outcomes: list = field(default_factory=list)
    certificate: Any = None
    counterexample: Optional[str] = None  # path of the stored counterexample
    stored_new: bool = False
    measure: Any = None
    trials: int = 0
    seconds: float = 0.0
    wall_seconds: float = 0.0
    time_to_first: Optional[float] = None
    wall_to_first: Optional[float] = None
    engine: str = ""
    note: str = ""
    domain: dict = field(default_factory=dict)
    size: Optional[dict] = None
    minimality: Optional[dict] = None
    certified: Optional[dict] = None
    details: Details = field(default_factory=dict)  # type: ignore[assignment]
    # the property's own code failed (``properties.base.PropertyFailure``): the one-line failure; the verdict
    # is then ``unknown`` and the finding is about the property, not the mechanism
    property_failure: str = ""
    # solver trouble (an LP/MIP solver failed): why; the verdict is then ``unknown`` (exit 3)
    solver_trouble: str = ""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "verdict":  # a name read from a file or a campaign: resolved once, here
            value = Verdict(value)
        object.__setattr__(self, name, value)

    @property
    def prop(self):
        """The property object (``verifier.properties``; resolved from the name once per result)."""
        got = self.__dict__.get("_prop")
        if got is None or got.name != self.property:
            from .properties import get_property

            got = get_property(self.property)
            object.__setattr__(self, "_prop", got)
        return got

    def __getstate__(self) -> dict:  # the property object is resolved again where the result is read
        return {k: v for k, v in self.__dict__.items() if k != "_prop"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    @property
    def mechanism_failed(self) -> bool:
        """A certified failure of the mechanism itself (``Property.mechanism_failure``)."""
        return self.verdict is Verdict.VIOLATED and self.prop.mechanism_failure

    @property
    def property_failed(self) -> bool:
        """The property's own code failed on an instance (a finding about the property)."""
        return bool(self.property_failure)

    def __repr__(self) -> str:
        return f"<Result {self.mechanism} {self.property}/{self.variant}: {verdict_text(self)}>"

    @property
    def claimed(self) -> Optional[str]:
        """The first covering claim's status ('holds' | 'fails'); None without a claim."""
        return self.claims[0].status if self.claims else None

    @property
    def claim_source(self) -> Optional[str]:
        """The first covering claim's source."""
        return self.claims[0].source if self.claims else None

    @property
    def refuted(self) -> bool:
        """Some paper says it holds, and an exact counterexample inside that claim's domain shows it does not."""
        return any(o == REFUTED for o in self.outcomes)

    def refuted_sources(self) -> list[str]:
        """Sources of the claims this result refutes."""
        return [c.source for c, o in zip(self.claims, self.outcomes) if o == REFUTED]

    def claim_status(self) -> str:
        """How the verdict relates to the papers' claims, in words."""
        if not self.claims:
            return "no claim"
        if len(self.claims) == 1:
            return self.outcomes[0]
        return "; ".join(f"{c.source.split()[0]} '{c.status}': {o}" for c, o in zip(self.claims, self.outcomes))

    def claims_text(self) -> str:
        """``holds [source]; fails [source]`` or ``no claim``."""
        return "; ".join(f"{c.status} [{c.source}]" for c in self.claims) if self.claims else "no claim"


def is_noise(measure: Any) -> bool:
    """A float measure indistinguishable from "no change" (|m| < 1e-9)."""
    return measure is not None and not isinstance(measure, str) and abs(float(measure)) < 1e-9


def verdict_text(r: Result) -> str:
    """What the verdict means, in words (never a bare 'holds')."""
    if r.verdict is Verdict.VIOLATED:
        return f"violated (counterexample {r.counterexample or 'not stored'})"
    if r.verdict is Verdict.CERTIFIED:
        dom = (r.certified or {}).get("domain")
        if isinstance(dom, dict) and isinstance(dom.get("shape"), dict):
            sh = dom["shape"]
            text = (describe_shape(sh["users"], sh["servers"], sh["resources"], sh.get("external", 0))
                    + "; positive data, equal weights, no placement, unbounded tasks (docs/z3.md)")
            how = (r.certified or {}).get("method")
            who = (r.certified or {}).get("solvers") or "z3"
            return f"certified for domain D ({who}{', ' + how if how else ''}): {text}"
        return f"certified for domain D: {dom}" if dom else "certified"
    if r.verdict is Verdict.NOT_REFUTED:
        mv = 0 if is_noise(r.measure) else r.measure
        m = "" if mv is None else f"; worst measure {fmt(mv)}"
        return f"no violation found in {r.trials} trials / {r.seconds:.1f} s{m}"
    if r.verdict is Verdict.SATISFIED:
        return "satisfied on this instance (exact check)"
    if r.verdict is Verdict.NOT_APPLICABLE:
        return f"not applicable ({r.note or 'premise fails'})"
    if r.verdict is Verdict.VACUOUS:
        return f"vacuous -- the vacuity control is UNSAT, so nothing is certified ({r.note})"
    if r.property_failure:
        return f"unknown: the property '{r.property}' failed (its own code): {r.property_failure}"
    return f"unknown: {r.note or 'no reason given'}"


def describe_size(size: dict) -> str:
    """A counterexample's size (``engines.minimize.size_of``; a trace's: ``engines.traces.minimise``) in words:
    ``3 users x 1 server x 2 resources``, ``2 events, 2 users x 1 server x 1 resource``."""
    shape = describe_shape(size["users"], size["servers"], size["resources"], size.get("external", 0))
    if "events" in size:
        return f"{size['events']} event{'' if size['events'] == 1 else 's'}, {shape}"
    return shape


ACCEPTED, REJECTED, MALFORMED = "accepted", "rejected", "malformed"
#: an artifact file's replay status -> what it means, and the exit code of ``python -m verifier replay``
ARTIFACT_STATUSES = {
    ACCEPTED: ("it still shows what it claims, checked against the current code", 0),
    REJECTED: ("it no longer does: a counterexample that no longer holds (or cannot be read back), an SMT query "
               "edited or built differently now, LP certificate numbers that fail", 1),
    MALFORMED: ("not an artifact of its kind (an SMT export or LP certificate file missing a field, not JSON, "
                "...): the replay stops there", 2),
}


@dataclass(frozen=True)
class ArtifactResult:
    """What replaying one artifact file established (``verifier.artifacts``: every kind's ``replay`` returns
    one).  ``kind``: ``counterexample``, ``smt-export`` or ``lp-certificate``; ``status``: one of
    :data:`ARTIFACT_STATUSES`; ``lines``: what it shows, or why not, one line per finding (without the
    path); ``where``: the failing part when the kind names one (an LP certificate's row or column);
    ``report``: the lines ``python -m verifier replay`` prints for it (a malformed file: its one line on
    stderr)."""

    kind: str
    path: str
    status: str
    lines: tuple = ()
    report: tuple = ()
    where: str = ""

    @property
    def ok(self) -> bool:
        """Accepted: the file still shows what it claims."""
        return self.status == ACCEPTED

    @property
    def message(self) -> str:
        """Its lines as one line."""
        return "; ".join(self.lines)

    @property
    def exit_code(self) -> int:
        """The exit code it means (:data:`ARTIFACT_STATUSES`): 0 accepted, 1 rejected, 2 malformed."""
        return ARTIFACT_STATUSES[self.status][1]

    def __repr__(self) -> str:
        return f"<ArtifactResult {self.kind} {self.status} {self.path}: {self.message[:120]}>"
