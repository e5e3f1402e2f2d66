"""The public Hypothesis strategies: numbers, environments, deviations and (environment, deviation) cases.

Everything here is re-exported by ``verifier.engines.strategies`` (see its docstring for usage).
Deviation strategies are chosen by the property's deviation kind (``Hints.deviation``).
"""
from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Any, Optional, Sequence

from hypothesis import assume
from hypothesis import strategies as st

from mechverify.model import Environment

from ...properties.base import Deviation
from .decode import (Decoder, decode_deviation, decode_environment, deviation_bytes, eligible_flip, env_bytes,
                     number_table, report_at, shape_at, shape_count, task_report)
from .domain import Domain, domain_for, narrow, property_of

__all__ = ["simple_rationals", "environments", "environments_for", "demand_misreports", "eligible_misreports",
           "task_misreports", "coalition_misreports", "leaves", "deviations", "cases", "batches"]


def simple_rationals(min_value: Fraction | int = 0, max_value: Fraction | int = 10,
                     denominators: Sequence[int] = (1, 2, 3, 4), zeros: bool = False) -> st.SearchStrategy[Fraction]:
    """Simple numbers in ``[min_value, max_value]``: integers (half the time), then ``p/q`` with ``q`` in
    ``denominators``, exact 0 when ``zeros``.  Shrinks toward small integers (1 first)."""
    lo, hi = Fraction(min_value), Fraction(max_value)
    table = [v for v in number_table(max(1, math.ceil(hi)), tuple(denominators), 16 if zeros else 0)
             if lo <= v <= hi or (zeros and v == 0)]
    if not table:
        return st.just(lo)
    return st.integers(0, len(table) - 1).map(lambda i: table[i])


def _inside(setting, env: Environment) -> None:
    """Never generate outside the mechanism's domain: constraints ``domain_for`` encodes are met by
    construction; any other constraint of the ``Setting`` rejects the draw (Hypothesis ``assume``)."""
    from mechanisms.core.registry import SettingError

    try:
        setting.check(env, "strategy")
    except SettingError:
        assume(False)


@st.composite
def _environments(draw, setting, dom: Domain, dominant: Optional[str]) -> Environment:
    J, S, R, K = shape_at(draw(st.integers(0, shape_count(dom)[1] - 1)), dom)
    n = env_bytes(dom)
    data = draw(st.binary(min_size=n, max_size=n))
    env = decode_environment(dom, J, S, R, K, data, dominant)
    _inside(setting, env)
    return env


def environments(setting=None, domain: Optional[Domain] = None, *, dominant: Optional[str] = None,
                 **shape: Any) -> st.SearchStrategy[Environment]:
    """Valid environments inside ``setting`` (a ``mechanisms.Setting``; ``None`` = the whole model).

    ``domain`` (or keyword overrides such as ``max_users=3``) bounds shapes and numbers.  ``dominant``
    biases toward the bottleneck-fairness premise: ``"global"`` (resource 1 is every user's global
    dominant resource) or ``"per-server"`` (resource 1 is dominant for every user at every server)."""
    if setting is None:
        from mechanisms.core.registry import Setting

        setting = Setting(placement=True, external=True, bounds=True, weights=True, server_demand=True)
    if domain is None:
        dom = domain_for(setting, **shape)
    else:
        dom = replace(domain, **shape) if shape else domain
    return _environments(setting, dom, dominant)



def environments_for(setting, prop, variant: str, domain: Optional[Domain] = None, **shape: Any):
    """Environments biased toward the premise of ``prop``/``variant`` (its ``Hints``)."""
    dom = domain if domain is not None else domain_for(setting, **shape)
    dom, dominant = narrow(dom, prop, variant)
    return _environments(setting, dom, dominant)


# ---------------------------------------------------------------------- deviations
@st.composite
def _demand_dev(draw, env: Environment, dom: Domain, user: Optional[int]):
    j = user if user is not None else draw(st.integers(0, env.n_users - 1))
    data = draw(st.binary(min_size=env.n_resources + env.n_external, max_size=env.n_resources + env.n_external))
    return Deviation("misreport", (report_at(Decoder(data, dom), env, j, 0, env.n_resources),))


def demand_misreports(env: Environment, domain: Optional[Domain] = None, user: Optional[int] = None):
    """SP ``demand`` deviations of one user: each demand entry (computational and external) kept, scaled
    by a simple factor, or replaced (0 allowed); shrinks toward changing one entry."""
    return _demand_dev(env, domain or Domain(), user)


@st.composite
def _eligible_dev(draw, env: Environment, user: Optional[int]):
    j = user if user is not None else draw(st.integers(0, env.n_users - 1))
    data = draw(st.binary(min_size=env.n_servers, max_size=env.n_servers))
    return Deviation("misreport", (eligible_flip(env, j, [b >= 128 for b in data]),))


def eligible_misreports(env: Environment, user: Optional[int] = None):
    """SP ``eligible`` deviations: a different set of eligible servers (shrinks toward flipping server 1)."""
    return _eligible_dev(env, user)


@st.composite
def _task_dev(draw, env: Environment, dom: Domain, user: Optional[int]):
    j = user if user is not None else draw(st.integers(0, env.n_users - 1))
    return Deviation("misreport", (task_report(env, j, draw(st.integers(0, 255)), dom),))


def task_misreports(env: Environment, domain: Optional[Domain] = None, user: Optional[int] = None):
    """SP ``tasks`` deviations: another task bound (or unbounded)."""
    return _task_dev(env, domain or Domain(), user)


@st.composite
def _coalition_dev(draw, env: Environment, dom: Domain, max_size: int):
    size = draw(st.integers(2, max(2, min(max_size, env.n_users))))
    members = draw(st.lists(st.integers(0, env.n_users - 1), min_size=size, max_size=size, unique=True))
    w = env.n_resources + env.n_external
    dec = Decoder(draw(st.binary(min_size=size * w, max_size=size * w)), dom)
    return Deviation("misreport", tuple(report_at(dec, env, j, i * w, env.n_resources)
                                        for i, j in enumerate(sorted(members))))


def coalition_misreports(env: Environment, domain: Optional[Domain] = None, max_size: int = 3):
    """GSP deviations: 2..max_size distinct users each misreport demands."""
    return _coalition_dev(env, domain or Domain(), max_size)


def _leave(j: int) -> Deviation:
    return Deviation("leave", leave=(j,))


def leaves(env: Environment):
    """PM deviations: one user leaves."""
    return st.integers(0, env.n_users - 1).map(_leave)


def deviations(prop, variant: str, env: Environment, domain: Optional[Domain] = None):
    """The deviation strategy of a property/variant (by its ``Hints.deviation``; ``st.none()`` for
    instance properties)."""
    kind = property_of(prop).hints_for(variant).deviation
    if kind == "demand":
        return demand_misreports(env, domain)
    if kind == "eligible":
        return eligible_misreports(env)
    if kind == "tasks":
        return task_misreports(env, domain)
    if kind == "coalition":
        return coalition_misreports(env, domain) if env.n_users >= 2 else st.nothing()
    if kind == "leave":
        return leaves(env)
    return st.none()


# ---------------------------------------------------------------------- cases
def cases(setting, prop, variant: str, domain: Optional[Domain] = None, **shape: Any):
    """``(environment, deviation-or-None)`` pairs for one property/variant inside ``setting`` (``prop``:
    a registered name or a ``Property``)."""
    return batches(setting, prop, variant, domain, k=1, **shape).map(_single)


def _single(batch):
    env, (dev,) = batch
    return env, dev


#: deviation kinds with one deviating user (or leaver) named by a block's byte 0
ONE_USER_KINDS = ("demand", "eligible", "tasks", "leave")


@st.composite
def _batches(draw, setting, dom: Domain, dominant: Optional[str], kind: str, k: int, per_user: int):
    # one integer (the shape) and one byte string (the environment, then ``k`` deviation blocks): few
    # primitive draws keep Hypothesis' per-example overhead low (see ``decode``).  Shrinking turns the
    # blocks that do not matter into zero bytes, the simplest deviation of each user
    J, S, R, K = shape_at(draw(st.integers(0, shape_count(dom)[1] - 1)), dom)
    n_env = env_bytes(dom)
    n_dev = deviation_bytes(kind, dom)
    data = draw(st.binary(min_size=n_env + k * n_dev, max_size=n_env + k * n_dev))
    env = decode_environment(dom, J, S, R, K, data[:n_env], dominant)
    _inside(setting, env)
    if kind == "none":
        return env, (None,)
    n = min(k, per_user * env.n_users)
    blocks = [data[n_env + i * n_dev:n_env + (i + 1) * n_dev] for i in range(n)]
    if kind in ONE_USER_KINDS:
        # every block names its deviator from the FIRST block's user byte, shifted by the block's index:
        # the deviators of a batch are users b, b+1, ... (mod users): every user deviates once
        blocks = [blocks[0][:1] + b[1:] for b in blocks]
    return env, tuple(decode_deviation(kind, env, b, dom, shift=i) for i, b in enumerate(blocks))


def batches(setting, prop, variant: str, domain: Optional[Domain] = None, k: int = 8, per_user: int = 1,
            **shape: Any):
    """``(environment, deviations)``: one environment and ``min(k, per_user * users)`` deviations of it
    (``(None,)`` for instance properties) -- the search evaluates several deviations per drawn environment
    and runs the mechanism on the truthful environment once.  Same number space, premise bias and
    shrinking as :func:`cases` (the first deviation is decoded exactly like ``cases``' deviation).  For
    one-user kinds (and leaving) the ``i``-th deviator is user ``b + i`` (mod users), ``b`` drawn: with
    ``per_user = 1`` every user deviates once.  The byte layout holds ``k`` deviation blocks whatever
    the shape, so a block keeps its bytes when the shape shrinks."""
    if k < 1 or per_user < 1:
        raise ValueError(f"k, per_user: a batch holds at least one deviation, got k={k}, per_user={per_user}")
    p = property_of(prop)
    dom = domain if domain is not None else domain_for(setting, **shape)
    dom_n, dominant = narrow(dom, p, variant)
    return _batches(setting, dom_n, dominant, p.hints_for(variant).deviation, k, per_user)
