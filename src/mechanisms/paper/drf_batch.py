"""DRF on one pool and per-server DRF, vectorised over many instances (the ``batch`` facet of ``drf`` and
``per-server-drf``: ``rates``'s batch path, docs/architecture.md).

The same water filling as ``mechanisms.paper.drf_pool`` (read its docstring), in numpy floats for ``n``
instances of one shape at once: every participating user holds ``x_j = a_j t`` with ``a_j = w_j N_j``
(``N_j`` = tasks per unit of dominant share), resource ``r`` limits the common level ``t`` to
``(1 - used_r) / slope_r``, a bound to ``n_j / a_j``; each round raises ``t`` to the smallest limit and
freezes the users it binds (a float limit within ``1e-12`` relative of ``t*`` binds).  The allocations are
float SCREENING results: a violation found on one is counted only after the property's exact re-check,
which runs the mechanism itself exactly.

An instance outside the closed form's common case -- a participating user that demands nothing (its
normaliser falls back to the task bound), per-server demands, queues, more than one server for ``drf`` --
is left to the mechanism's own float path (``None`` in the returned list).
"""
from __future__ import annotations

import operator
from itertools import repeat
from typing import Optional, Sequence

import numpy as np

from mechverify.allocation import Allocation, seed_matrix
from mechverify.model import Environment

__all__ = ["water_fill", "drf_one_pool_batch", "per_server_drf_batch"]

_REL = 1e-12


def water_fill(C: np.ndarray, D: np.ndarray, W: np.ndarray, B: np.ndarray, M: np.ndarray) -> np.ndarray:
    """Task counts ``x`` (``n x J``) of DRF's water filling on ``n`` pools at once.

    ``C``: capacities ``n x R``; ``D``: demands ``n x J x R``; ``W``: weights ``n x J``; ``B``: task bounds
    ``n x J`` (``inf``: none); ``M``: participating users ``n x J`` (bool).  A participating user must
    demand something; one that demands a resource of capacity 0 gets 0 (as in ``drf_pool``).

    A round costs a dozen numpy calls whatever the size (a step of a simulation is one instance of ~100 users,
    most of it this fixed cost), so nothing is computed twice: the masks that do not change are taken once, the
    last round does not update what is used (nothing is left to fill), and the non-participants' zeros come from
    ``a = 0`` (``level`` stays 0 for them: ``0 x 0``)."""
    n, J, R = D.shape
    # the reductions as ufunc calls (what the array methods call, without their Python wrapper)
    add, least, most, anyof = np.add.reduce, np.minimum.reduce, np.maximum.reduce, np.logical_or.reduce
    where, inf = np.where, np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        pos = D > 0
        Cu = C[:, None, :]
        share = where(pos, D / Cu, 0.0)  # dominant-share units per task
        # a user demanding a resource of capacity 0 is dead (none when every capacity is positive)
        part = M if least(C, axis=None) > 0 else M & ~anyof(pos & (Cu <= 0), axis=2)
        dom = most(share, axis=2)
        a = where(part, W / where(dom > 0, dom, 1.0), 0.0)
        e = where(part[:, :, None], share * a[:, :, None], 0.0)  # share of r per unit of level
        uses = e > 0
        blim_all = where(part & np.isfinite(B), B / where(a > 0, a, 1.0), inf)
        level = np.zeros((n, J))
        active = part
        used = np.zeros((n, R))
        for _ in range(J):
            if not anyof(active, axis=None):
                break
            slope = add(e * active[:, :, None], axis=1)
            up = slope > 0
            lim = where(up, (1.0 - used) / where(up, slope, 1.0), inf)
            blim = where(active, blim_all, inf)
            tt = np.minimum(least(lim, axis=1), least(blim, axis=1))[:, None]  # t*, n x 1
            cut = tt + _REL * np.maximum(1.0, np.abs(tt))  # a float limit within 1e-12 relative of t* binds
            hit_r = np.isfinite(tt) & (lim <= cut)  # n x R: the resources that fill up at t*
            frozen = active & ((blim <= cut) | anyof(uses & hit_r[:, None, :], axis=2))
            level = where(frozen, tt, level)
            active = active & ~frozen
            if not anyof(active, axis=None):
                break
            used = used + add(e * (frozen * level)[:, :, None], axis=1)
    return level * a


def _flat(env: Environment) -> bool:
    return not env.has_queues and not env.has_server_demand


def _groups(envs: Sequence[Environment], key):
    groups: dict = {}
    for n, env in enumerate(envs):
        groups.setdefault(key(env), []).append(n)
    return groups.values()


def _arrays(envs: Sequence[Environment], with_external: bool):
    # each environment's float arrays (Environment.floats: float(Fraction) as the correctly rounded n / d, each
    # demand vector converted once per run)
    fl = [env.floats() for env in envs]
    if len(fl) == 1:  # one instance (a step of a run): views of its arrays, not copies
        f = fl[0]
        D = np.concatenate((f.demand, f.external_demand), axis=1) if with_external and f.external_demand.shape[1] \
            else f.demand
        return D[None], f.weight[None], f.tasks[None]
    if with_external:
        D = np.array([np.concatenate((f.demand, f.external_demand), axis=1) for f in fl])
    else:
        D = np.array([f.demand for f in fl])
    W = np.array([f.weight for f in fl])
    B = np.array([f.tasks for f in fl])
    return D, W, B


def drf_one_pool_batch(envs: Sequence[Environment], name: str = "drf") -> list[Optional[Allocation]]:
    """``drf``'s float allocations of ``envs`` (one server, external resources pooled); ``None`` for an
    instance outside the vectorised case (module docstring)."""
    out: list[Optional[Allocation]] = [None] * len(envs)
    ok = [n for n, env in enumerate(envs) if env.n_servers == 1 and _flat(env)]
    for idx in _groups([envs[n] for n in ok], lambda e: (e.n_users, e.n_resources, e.n_external)):
        group = [envs[ok[k]] for k in idx]
        D, W, B = _arrays(group, True)
        C = np.array([np.concatenate((env.floats().capacity[0], env.floats().external_capacity)) for env in group]) \
            if group[0].n_external else np.array([env.floats().capacity[0] for env in group])
        # who may use the pool (eligible at server 0), one map over each environment's sets
        M = np.array([np.fromiter(map(operator.contains, env.eligible, repeat(0)), bool, env.n_users)
                      for env in group]).reshape(len(group), -1)
        X = water_fill(C, D, W, B, M)
        nothing = np.logical_or.reduce(M & ~np.logical_or.reduce(D > 0, axis=2), axis=1).tolist()
        for k, env in enumerate(group):
            if nothing[k]:  # a user demanding nothing: the bound fallback, left to the float path
                continue
            a = out[ok[idx[k]]] = Allocation(env, tuple(zip(X[k].tolist())), name, False, {"batch": True})
            seed_matrix(a, X[k][:, None])
    return out


def per_server_drf_batch(envs: Sequence[Environment], name: str = "per-server-drf") -> list[Optional[Allocation]]:
    """``per-server-drf``'s float allocations: DRF's water filling on every server among the users that
    can use it (``Environment.usable``); ``None`` outside the vectorised case."""
    out: list[Optional[Allocation]] = [None] * len(envs)
    ok = [n for n, env in enumerate(envs) if _flat(env) and not env.n_external]
    for idx in _groups([envs[n] for n in ok], lambda e: (e.n_users, e.n_servers, e.n_resources)):
        group = [envs[ok[k]] for k in idx]
        D, W, B = _arrays(group, False)
        if not (D > 0).any(axis=2).all():
            # a user demanding nothing: the whole group by the float path would be slow; split it
            keep = [k for k, env in enumerate(group) if (D[k] > 0).any(axis=1).all()]
            if not keep:
                continue
            sub = per_server_drf_batch([group[k] for k in keep], name)
            for k, a in zip(keep, sub):
                out[ok[idx[k]]] = a
            continue
        S = group[0].n_servers
        X = np.zeros((len(group), group[0].n_users, S))
        for s in range(S):
            C = np.array([env.floats().capacity[s] for env in group])
            M = np.array([[env.usable(j, s) for j in range(env.n_users)] for env in group])
            X[:, :, s] = water_fill(C, D, W, B, M)
        for k, env in enumerate(group):
            a = out[ok[idx[k]]] = Allocation(env, tuple(map(tuple, X[k].tolist())), name, False, {"batch": True})
            seed_matrix(a, X[k])
    return out
