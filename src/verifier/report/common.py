"""Pieces every renderer shares: the searched domain, a violated cell's details in words, measures in
words (float noise shown as the threshold it is indistinguishable from), exact numbers."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

from mechverify.numbers import FLOAT_REL, InstanceError, fmt, fmt_exact

from ..properties import get_property
from ..properties.base import MARGIN, Measure
from ..results import Result, Verdict, describe_size, verdict_text

__all__ = ["domain_text", "detail", "measure_of", "measure_text", "verdict_words", "num_text", "is_within_tolerance",
           "TOLERANCE_TEXT", "ClaimWords", "claim_words", "runs_findings", "closing_line"]

def _sci(v: float) -> str:
    """``1e-07`` -> ``1e-7``."""
    mant, _, exp = f"{v:.0e}".partition("e")
    return f"{mant}e{int(exp)}"


#: a float worst measure that differs from the threshold by float noise only: the search's own float
#: tolerance (``mechverify.numbers.FLOAT_REL``), NOT the ``--tolerance`` a user's float mechanism's
#: violations must clear (``mechverify.declare.DEFAULT_TOLERANCE``, 1e-9; README, "Audit your own mechanism")
TOLERANCE_TEXT = f"float noise within the search's tolerance {_sci(FLOAT_REL)}"


class ClaimWords:
    """How a report names a mechanism's claims: a registered mechanism's come from its paper ("paper"), a
    user's mechanism's are the user's own ("claimed", with the ``source`` it declared)."""

    def __init__(self, user: bool):
        self.user = user
        self.column = "claims" if user else "paper claims"  # the table's column heading
        self.label = "claimed" if user else "paper"  # before a claims text: "claimed: holds [source]"
        self.nothing_refuted = "no claim was refuted in this run" if user else "no claim of the paper was refuted in this run"

    def says(self, sources: str) -> str:
        """``paper [004 Thm 8] says it holds`` / ``claimed to hold [my source]``."""
        return f"claimed to hold [{sources}]" if self.user else f"paper [{sources}] says it holds"


def claim_words(rep: Any) -> ClaimWords:
    """The :class:`ClaimWords` of a ``RunReport`` (``rep.user``: a user's mechanism)."""
    return ClaimWords(bool(getattr(rep, "user", False)))


def runs_findings(results: Any) -> list:
    """The cells where a user's mechanism failed (property ``runs`` violated: an exception or an invalid
    output) -- ``run`` exits 1 for them."""
    return [r for r in results if r.mechanism_failed]


def property_failures(results: Any) -> list:
    """The cells where the property's own code failed (a user's property raised, timed out or returned no
    number): findings about the property -- the command exits 1 for them, like for a failing mechanism."""
    return [r for r in results if r.property_failed]


def property_failure_lines(r: Any) -> list[str]:
    """What a report says of a property that failed: which, how, and the instance it failed on."""
    import json

    out = [f"{r.property}/{r.variant}: THE PROPERTY FAILED (its own code, not the mechanism): {r.property_failure}"]
    inst = r.details.get("failed_instance")
    if inst is not None:
        out.append("on the instance " + json.dumps(inst, separators=(",", ":")))
    return out


def closing_line(rep: Any) -> str:
    """The report's last word when no claim was refuted: that, or -- when the mechanism failed (``runs``) --
    the failure, which makes ``run`` exit 1."""
    words = claim_words(rep)
    failed = runs_findings(rep.results)
    if not failed:
        return words.nothing_refuted
    where = "; ".join(f"{r.property}/{r.variant} violated (counterexample {r.counterexample or 'not stored'})"
                      for r in failed)
    return f"THE MECHANISM FAILED (an exception or an invalid output): {where}; {words.nothing_refuted}"


def domain_text(d: dict) -> str:
    """A searched domain (``Domain.describe()``; executions: ``engines.traces.describe_domain``) in one line."""
    if "executions" in d:
        return d["executions"]
    f = d.get("features", {})
    feats = [k.replace("_", " ") for k, v in f.items() if v]
    return (f"users {d['users'][0]}-{d['users'][1]}, servers {d['servers'][0]}-{d['servers'][1]}, "
            f"resources {d['resources'][0]}-{d['resources'][1]}, external {d['external'][0]}-{d['external'][1]}; "
            f"numbers {d['numbers']}; features: {', '.join(feats) or 'none'}")


def detail(r: Result) -> str:
    """The details line of a violated cell: size, minimality, time to first, summary."""
    if r.verdict is not Verdict.VIOLATED:
        return ""
    bits = []
    if r.size:
        bits.append(describe_size(r.size))
    if r.minimality:
        bits.append(r.minimality.get("status", ""))
    if r.time_to_first is not None:
        bits.append(f"first exact counterexample after {r.time_to_first:.2f} s ({r.engine})")
    if r.certificate is not None:
        bits.append(r.certificate.summary)
    return "; ".join(b for b in bits if b)


def property_label(prop: str) -> str:
    """How a report names a property: its name (a user's property is keyed by its reference in an audit's
    cells, ``verifier.audit``; the row shows the name it declares)."""
    try:
        return get_property(prop).name
    except InstanceError:
        return prop


def measure_of(prop: str, default: Optional[Measure] = MARGIN) -> Optional[Measure]:
    """The :class:`~verifier.properties.base.Measure` the property ``prop`` declares (what its measure means,
    threshold, direction); ``default`` for a name no property answers to (a damaged file, a user's property
    not loaded in this process)."""
    try:
        return get_property(prop).measure
    except InstanceError:
        return default


def is_within_tolerance(prop: str, m: Any) -> bool:
    """A FLOAT measure that differs from the property's threshold by no more than the project's float
    tolerance (``FLOAT_REL`` relative to ``max(1, |threshold|)``) without being equal to it: float noise,
    not a finding."""
    if not isinstance(m, float) or math.isinf(m) or math.isnan(m):
        return False
    thr = measure_of(prop).threshold
    return m != thr and abs(m - thr) <= FLOAT_REL * max(1.0, abs(thr))


def num_text(v: Any, digits: int = 4) -> str:
    """A number for people: exact ``p/q`` for exact numbers (integers as integers), floats rounded to
    ``digits`` significant digits and marked ``~``; ``inf``; ``-`` for None."""
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, (int, Fraction)):
        return fmt_exact(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return "~" + fmt(v, digits)
    if isinstance(v, (tuple, list)) and len(v) == 2:  # an interval
        return f"[{num_text(v[0], digits)}, {num_text(v[1], digits)}]"
    return str(v)


def measure_text(prop: str, m: Any) -> str:
    """A measure in words-ready form: float noise prints as the threshold with the tolerance stated
    (``0 (within the float tolerance 1e-07)``), exact numbers as ``p/q``, other floats short."""
    if m is None:
        return "-"
    if is_within_tolerance(prop, m):
        return f"{measure_of(prop).threshold} ({TOLERANCE_TEXT})"
    if isinstance(m, float):
        return fmt(m)
    return num_text(m)


def verdict_words(r: Result) -> str:
    """:func:`verdict_text`, with a float-noise worst measure printed as the threshold (tolerance stated)."""
    if r.verdict is Verdict.NOT_REFUTED and is_within_tolerance(r.property, r.measure):
        return f"no violation found in {r.trials} trials / {r.seconds:.1f} s; " \
               f"worst measure {measure_text(r.property, r.measure)}"
    return verdict_text(r)
