"""What the mechanisms of ``mechanisms.paper.dynamic`` share: the checks a stepper makes at every step (a step
is not passed through ``Setting.check``: an execution's environment changes under it) and an allocation on the
one server."""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment

from ...core.mechanism import SettingError


def check_pool(env: Environment, name: str, one_resource: bool = False, weights: bool = True,
               bounds: str = "forbidden") -> None:
    """Raise :class:`SettingError` naming the field when ``env`` (one step of an execution) leaves the setting:
    one server, no placement, no external resources; ``one_resource``: exactly one resource; ``weights``: weights
    allowed; ``bounds``: ``"forbidden"`` (no task bound), ``"required"`` (every user has one, >= 0)."""
    if env.n_servers != 1:
        raise SettingError(f"servers: {name} is defined for one server (a single resource pool); got {env.n_servers} "
                           f"servers")
    if one_resource and env.n_resources != 1:
        raise SettingError(f"resources: {name} is defined for one resource; got {env.n_resources} resources")
    if env.n_external:
        raise SettingError(f"external: {name} is defined without external resources (got {env.n_external})")
    if env.has_placement:
        j = next(j for j in range(env.n_users) if env.eligible[j] != frozenset(range(env.n_servers)))
        raise SettingError(f"users[{j}].eligible: {name} is defined without placement constraints")
    if not weights and env.has_weights:
        j = next(j for j in range(env.n_users) if env.weight[j] != 1)
        raise SettingError(f"users[{j}].weight: {name} is defined for equal weights")
    for j in range(env.n_users):
        b = env.tasks[j]
        if bounds == "forbidden" and b is not None:
            raise SettingError(f"users[{j}].tasks: {name} is defined for unbounded task counts")
        if bounds == "required" and b is None:
            raise SettingError(f"users[{j}].tasks: {name} reads a user's demand per round from its task bound; "
                               f"got null (unbounded)")


def one_server(env: Environment, tasks: Sequence[Any], name: str, exact: bool, info: dict) -> Allocation:
    """The allocation running ``tasks[j]`` tasks of user ``j`` on the one server (floats unless ``exact``)."""
    conv = (lambda v: Fraction(v)) if exact else (lambda v: float(v))
    return Allocation(env, tuple((conv(t),) for t in tasks), name, exact, info)
