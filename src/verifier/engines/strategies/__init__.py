"""Public Hypothesis strategies: environments (inside a mechanism's ``Setting``) and deviations.

Everything here is importable by users::

    from hypothesis import given
    from mechanisms import get
    from verifier.engines.strategies import environments, cases

    @given(environments(get("tsf").setting, max_users=3))
    def test_my_property(env): ...

    @given(cases(get("cru").setting, "sp", "demand"))      # (environment, deviation) pairs
    def test_sp(case): env, deviation = case; ...

Numbers are exact ``Fraction``s: small integers and simple rationals ``p/q`` (``q`` from
``Domain.denominators``) that shrink toward small integers; exact zeros (zero demands, zero capacities,
zero task bounds) are drawn on purpose -- boundary cases the papers do not exclude.  Shapes shrink toward
the smallest allowed (fewest users, servers, resources, external resources).

Every generated environment is VALID (``mechverify.model`` rejects some; docs/model.md): a user whose
demand at some server is all zero and that has neither a positive external demand nor a task bound gets
demand 1 on its first resource (a deterministic repair, so shrinking stays stable).

Speed: an environment is drawn as its shape plus ONE byte string (``decode``); ``simple_rationals`` is
the same number space as a stand-alone strategy.  What a property needs searched (its deviation kind, the
narrowed domain, the premise bias) comes from its ``Hints`` (``domain.narrow``), never from its name.

``Domain`` fixes the searched space (shapes, number ranges, features) and describes itself as a dict: a
verdict always states the domain that was searched.
"""
from .decode import decode_deviation, decode_environment, repair  # noqa: F401
from .domain import Domain, domain_for, narrow, premise_strategy_notes, variant_possible  # noqa: F401
from .draw import (batches, cases, coalition_misreports, deviations, demand_misreports, eligible_misreports,  # noqa: F401
                   environments, environments_for, leaves, simple_rationals, task_misreports)

__all__ = [
    "Domain", "domain_for", "narrow", "variant_possible", "simple_rationals", "environments",
    "environments_for", "demand_misreports", "eligible_misreports", "task_misreports", "coalition_misreports",
    "leaves", "deviations", "cases", "batches", "repair", "premise_strategy_notes", "decode_environment", "decode_deviation",
]
