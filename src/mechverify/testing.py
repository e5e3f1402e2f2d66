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
from typing import Any, Optional

__all__ = ["assert_property", "DEFAULT_BUDGET", "counterexample_text"]

#: seconds per variant when ``budget`` is not given (``--mechverify-budget`` sets it for a session)
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


def assert_property(mechanism: Any, prop: str, *, budget: Optional[float] = None, seed: int = 0,
                    variant: Optional[str] = None, trials: Optional[int] = None, store: Optional[str] = None,
                    tolerance: Optional[float] = None) -> list:
    """Fail (``AssertionError``) with the minimal exact counterexample if a search finds ``prop`` violated
    by ``mechanism`` (a registered name, a reference, a ``Mechanism`` or a function); return the
    ``Result``s otherwise.  ``budget`` seconds per variant, ``trials`` bounds the candidates (reproducible),
    ``store`` a directory to keep the counterexample in."""
    from verifier.properties import get_property
    from verifier.run import run_cell

    from .api import mechanism_of

    mech = mechanism_of(mechanism, tolerance)
    p = get_property(prop)
    if variant is not None:
        variants = [p.variant_of(variant)]
        why = p.variant_possible(mech.setting, variants[0])
        if why:
            raise ValueError(f"variant: {p.name}/{variants[0]} cannot be checked for {mech.name}: {why}")
    else:
        variants = [v for v in p.variants if not p.variant_possible(mech.setting, v)]
    seconds = DEFAULT_BUDGET if budget is None else float(budget)
    results = []
    for v in variants:
        r = run_cell(mech, p.name, v, budget=seconds, seed=seed, store_dir=store, max_trials=trials,
                     command="assert_property")
        results.append(r)
        if r.verdict == "violated" and r.certificate is not None:
            raise AssertionError(counterexample_text(r))
    return results
