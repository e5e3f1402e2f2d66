"""pytest support: ``assert_property(mechanism, "sp")`` fails a test with the minimal exact counterexample.

    from mechverify.testing import assert_property

    def test_greedy_is_strategy_proof():
        assert_property("examples/my_mechanisms.py:greedy", "sp", budget=5, seed=0)

It searches the property (every variant the mechanism's setting allows, or ``variant``) with the same
engines as ``python -m verifier run``: a violation is re-checked exactly and minimised, and the
``AssertionError`` message shows the instance, the deviation and the exact numbers.  Otherwise the test
passes -- which means "no violation found" within the budget, not a proof (``python -m verifier certify``
proves registered mechanisms on whole domains).  The default budget is ``DEFAULT_BUDGET`` seconds per
variant; the pytest plugin's option ``--mechverify-budget S`` changes it for a whole session.
"""
from __future__ import annotations

import json
from typing import Any, Optional, Sequence, Union

__all__ = ["assert_property", "DEFAULT_BUDGET", "counterexample_text"]

#: seconds for a whole ``assert_property`` call when ``budget`` is not given (every variant together;
#: ``--mechverify-budget`` sets it for a session)
DEFAULT_BUDGET = 5.0


def counterexample_text(result) -> str:
    """A violated ``Result`` as text: what fails, the minimal instance (instance-file JSON), the deviation
    and every exact number involved."""
    from .numbers import fmt_exact

    cert = result.certificate
    w = cert.witness
    env = w.env
    lines = [f"{result.mechanism} violates {result.property}/{result.variant} ({cert.margin_text()}):",
             f"  {cert.summary}",
             f"  instance ({env.describe()}): {json.dumps(env.to_dict(), separators=(',', ':'))}"]
    if w.deviation is not None:
        lines.append(f"  deviation: {w.deviation.describe(env)}")
    if cert.exception:
        lines.append(f"  failure: {cert.exception}")
    for k, v in cert.utilities.items():
        lines.append(f"  {k} = {fmt_exact(v)}")
    for name, alloc in cert.allocations.items():
        rows = "; ".join(f"{u} {[fmt_exact(v) for v in row]}" for u, row in zip(alloc.env.users, alloc.x))
        lines.append(f"  allocation {name}: {rows}")
    if result.counterexample:
        lines.append(f"  stored: {result.counterexample}")
    return "\n".join(lines)


def assert_property(mechanism: Any, prop: Union[str, Sequence[str]], *, variant: Optional[str] = None,
                    allow_unknown: bool = False, tolerance: Optional[float] = None, **options: Any) -> list:
    """Search ``prop`` for ``mechanism`` (a registered name, a reference, a ``Mechanism`` or a function) and
    return the ``Result``s when every verdict is "no violation found", "certified" or "not applicable";
    otherwise fail (``AssertionError``) with the minimal exact counterexample, or with what was not decided.

    ``prop``: a property (``"sp"``: every variant the mechanism's setting allows), a property/variant
    (``"sp/demand"``), or a list of them; ``variant`` picks one variant of a single property.  A user's
    mechanism (a reference or a function) is first searched for its own failures (``Property.mechanism_failure``:
    property ``runs``, an exception or an invalid output), which fail the test too.  An ``unknown`` verdict
    (e.g. the budget ran out before a variant was searched) fails unless ``allow_unknown=True``.

    ``options`` are the run configuration's (``verifier.config.RunConfig``): ``budget`` (wall-clock seconds for
    the whole call -- every variant, and ``runs``, together -- as the CLI's ``--budget``; default
    :data:`DEFAULT_BUDGET`), ``seed``, ``trials`` (candidates per variant: reproducible), ``store`` (a directory
    to keep the counterexample in; default: not stored).  A failure shows the finding, not this function's
    source (``__tracebackhide__``: pytest leaves the frame out)."""
    __tracebackhide__ = True  # pytest: the user's test line and the finding, not ~50 lines of this library
    from verifier.config import RunConfig
    from verifier.planning import plan
    from verifier.properties import get_property, parse_cells
    from verifier.results import Verdict, verdict_text
    from verifier.run import run_mechanism

    from .api import mechanism_of

    mech = mechanism_of(mechanism, tolerance)
    names, variants = parse_cells(prop)
    if variant is not None:
        if len(names) != 1:
            raise ValueError(f"variant: applies to one property, got {', '.join(names)}")
        p = get_property(names[0])
        variants = {p.ref: [p.variant_of(variant)]}
    planned = plan([mech], names, variants)
    asked = {get_property(n).name for n in names}
    for s in planned.skipped:
        if s.prop.name in asked and s.variant in variants.get(s.prop.ref, ()):
            raise ValueError(f"variant: {s.prop.name}/{s.variant} cannot be checked for {mech.name}: {s.reason}")
    config = RunConfig.of(**dict({"budget": DEFAULT_BUDGET, "store": None}, **options))
    if config.budget is None:
        config = config.but(budget=DEFAULT_BUDGET)
    seconds = config.budget
    rep = run_mechanism(mech, names, config, variants or None)
    results = list(rep.results)
    for r in results:  # a failure of the mechanism first: the other verdicts mean little after it
        if r.mechanism_failed and r.certificate is not None:
            raise AssertionError(f"{mech.name} fails (an exception or an invalid output) before "
                                 f"{', '.join(n for n in names if not get_property(n).mechanism_failure)}"
                                 f" could be judged:\n" + counterexample_text(r))
    for r in results:
        if r.verdict is Verdict.VIOLATED and r.certificate is not None:
            raise AssertionError(counterexample_text(r))
    for r in results:  # the property's own code failed: a finding about the property, not the mechanism
        if r.property_failed:
            inst = r.details.get("failed_instance")
            raise AssertionError(f"the property {r.property} failed (its own code, not {mech.name}): "
                                 f"{r.property_failure}" + (f"\non the instance {json.dumps(inst)}" if inst else ""))
    bad = [r for r in results if not r.verdict.passing and not (allow_unknown and not r.verdict.decided)]
    if bad:
        raise AssertionError(f"{mech.name}: not established within the budget ({seconds:g} s for the whole call) -- "
                             + "; ".join(f"{r.property}/{r.variant}: {verdict_text(r)}" for r in bad)
                             + " (a larger budget, or allow_unknown=True to accept it)")
    if not results:
        raise AssertionError(f"{mech.name}: no variant of {', '.join(names)} can be checked in its setting: "
                             + "; ".join(f"{p}/{v} ({why})" for p, v, why in rep.skipped))
    return results
