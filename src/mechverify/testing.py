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

__all__ = ["assert_property", "DEFAULT_BUDGET", "counterexample_text", "PASSING"]

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


#: verdicts that let a test pass ("unknown" too with ``allow_unknown=True``)
PASSING = ("not_refuted", "certified", "satisfied", "not_applicable")


def assert_property(mechanism: Any, prop: Union[str, Sequence[str]], *, budget: Optional[float] = None, seed: int = 0,
                    variant: Optional[str] = None, trials: Optional[int] = None, store: Optional[str] = None,
                    tolerance: Optional[float] = None, allow_unknown: bool = False) -> list:
    """Search ``prop`` for ``mechanism`` (a registered name, a reference, a ``Mechanism`` or a function) and
    return the ``Result``s when every verdict is "no violation found", "certified" or "not applicable";
    otherwise fail (``AssertionError``) with the minimal exact counterexample, or with what was not decided.

    ``prop``: a property (``"sp"``: every variant the mechanism's setting allows), a property/variant
    (``"sp/demand"``), or a list of them; ``variant`` picks one variant of a single property.  A user's
    mechanism (a reference or a function) is first searched for failures (property ``runs``: an exception or
    an invalid output), which fail the test too.  An ``unknown`` verdict (e.g. the budget ran out before a
    variant was searched) fails unless ``allow_unknown=True``.

    ``budget``: wall-clock seconds for the whole call -- every variant (and ``runs``) together, as the CLI's
    ``--budget`` (default :data:`DEFAULT_BUDGET`); ``trials`` bounds the candidates per variant
    (reproducible); ``store`` a directory to keep the counterexample in."""
    from verifier.properties import get_property, parse_cells
    from verifier.run import run_mechanism

    from .api import mechanism_of

    mech = mechanism_of(mechanism, tolerance)
    names, variants = parse_cells(prop)
    if variant is not None:
        if len(names) != 1:
            raise ValueError(f"variant: applies to one property, got {', '.join(names)}")
        p = get_property(names[0])
        v = p.variant_of(variant)
        why = p.variant_possible(mech.setting, v)
        if why:
            raise ValueError(f"variant: {p.name}/{v} cannot be checked for {mech.name}: {why}")
        variants = {p.name: [v]}
    for name, vs in variants.items():
        p = get_property(name)
        for v in vs:
            why = p.variant_possible(mech.setting, v)
            if why:
                raise ValueError(f"variant: {p.name}/{v} cannot be checked for {mech.name}: {why}")
    if mech.is_users and "runs" not in names:
        names = ["runs"] + names
    seconds = DEFAULT_BUDGET if budget is None else float(budget)
    rep = run_mechanism(mech, names, budget=seconds, seed=seed, store_dir=store, max_trials=trials,
                        variants=variants or None)
    results = list(rep.results)
    for r in results:  # a failure of the mechanism first: the other verdicts mean little after it
        if r.property == "runs" and r.verdict == "violated" and r.certificate is not None:
            raise AssertionError(f"{mech.name} fails (an exception or an invalid output) before "
                                 f"{', '.join(n for n in names if n != 'runs')} could be judged:\n"
                                 + counterexample_text(r))
    for r in results:
        if r.verdict == "violated" and r.certificate is not None:
            raise AssertionError(counterexample_text(r))
    bad = [r for r in results if r.verdict not in PASSING and not (allow_unknown and r.verdict == "unknown")]
    if bad:
        from verifier.results import verdict_text

        raise AssertionError(f"{mech.name}: not established within the budget ({seconds:g} s for the whole call) -- "
                             + "; ".join(f"{r.property}/{r.variant}: {verdict_text(r)}" for r in bad)
                             + " (a larger budget, or allow_unknown=True to accept it)")
    if not results:
        raise AssertionError(f"{mech.name}: no variant of {', '.join(names)} can be checked in its setting: "
                             + "; ".join(f"{p}/{v} ({why})" for p, v, why in rep.skipped))
    return results
