"""Public Hypothesis strategies for your own tests: environments inside a mechanism's setting, misreports,
coalitions, users leaving, and (instance, deviation) cases of a property.

    from hypothesis import given
    from mechverify.strategies import environments, demand_misreports

    @given(environments("examples/my_mechanisms.py:greedy", max_users=3))
    def test_greedy_gives_every_user_something(env): ...

``where`` (the first argument of :func:`environments` and :func:`cases`) is a mechanism -- a registered
name, a reference, a ``Mechanism`` or a plain function -- or a ``mechanisms.Setting``, or ``None`` for the
whole model.  Numbers are exact ``Fraction``s that shrink toward small integers; every generated
environment is valid.  The engines draw from the same strategies (``verifier.engines.strategies``).
"""
from __future__ import annotations

from typing import Any, Optional

from verifier.engines import strategies as _s
from verifier.engines.strategies import Domain

__all__ = ["Domain", "environments", "cases", "simple_rationals", "demand_misreports", "eligible_misreports",
           "task_misreports", "coalition_misreports", "leaves", "deviations"]


def _setting(where: Any):
    """The ``Setting`` of a mechanism-like argument (a ``Setting`` or ``None`` passes through)."""
    from mechanisms.core.registry import Setting

    if where is None or isinstance(where, Setting):
        return where
    from .api import mechanism_of

    return mechanism_of(where).setting


def environments(where: Any = None, domain: Optional[Domain] = None, **shape: Any):
    """Valid environments inside ``where``'s setting (see the module docstring); ``shape`` keywords bound
    the size (``max_users``, ``max_servers``, ``max_resources``, ...; see ``Domain``)."""
    return _s.environments(_setting(where), domain, **shape)


def cases(where: Any, prop: str, variant: Optional[str] = None, domain: Optional[Domain] = None, **shape: Any):
    """``(environment, deviation-or-None)`` pairs to check ``prop``/``variant`` of ``where`` (a deviation
    for SP/GSP/PM, ``None`` for instance properties)."""
    from verifier.properties import get_property

    p = get_property(prop)
    setting = _setting(where)
    return _s.cases(setting, p, p.variant_of(variant, setting), domain, **shape)


def simple_rationals(min_value: Any = 0, max_value: Any = 10, denominators=(1, 2, 3, 4), zeros: bool = False):
    """Exact numbers in ``[min_value, max_value]``: integers and ``p/q`` with ``q`` in ``denominators``."""
    return _s.simple_rationals(min_value, max_value, denominators, zeros)


def demand_misreports(env, domain: Optional[Domain] = None, user: Optional[int] = None):
    """One user's demand misreports in ``env`` (``user``: that user, else any)."""
    return _s.demand_misreports(env, domain, user)


def eligible_misreports(env, user: Optional[int] = None):
    """One user's eligible-set misreports in ``env``."""
    return _s.eligible_misreports(env, user)


def task_misreports(env, domain: Optional[Domain] = None, user: Optional[int] = None):
    """One user's task-bound misreports in ``env``."""
    return _s.task_misreports(env, domain, user)


def coalition_misreports(env, domain: Optional[Domain] = None, max_size: int = 3):
    """A coalition of 2..``max_size`` users misreporting demands together in ``env``."""
    return _s.coalition_misreports(env, domain, max_size)


def leaves(env):
    """One user leaving ``env`` (population monotonicity)."""
    return _s.leaves(env)


def deviations(prop: str, variant: Optional[str], env, domain: Optional[Domain] = None):
    """The deviations ``prop``/``variant`` is checked against in ``env``."""
    from verifier.properties import get_property

    p = get_property(prop)
    return _s.deviations(p, p.variant_of(variant), env, domain)
