"""Workload models: seeded samplers of instances shaped like real clusters (docs/workloads.md).

    from mechverify.workloads import WORKLOADS, get, Workload
    w = get("seed004")                       # unknown name: InstanceError listing the known names
    w.check_params(users=15, rho="0.7")      # a bad value: InstanceError naming the flag, before any work
    env = w.sample(numpy.random.default_rng(0), users=15, rho="0.7")   # an Environment
    trace = get("alibaba2018").jobs(numpy.random.default_rng(0), keep="0.1", servers=400)  # a job trace (dict)

``uniform`` (the project's random instances), ``google2011`` (Google's 2011 machine mix), ``alibaba2018``
(Alibaba 2018 task demands), ``seed004`` (seed 004 Sec. 6.2), ``tree`` (queue trees with declared guarantees).
``google2011`` and ``alibaba2018`` also draw job traces with time (``Workload.jobs``: arrivals, task counts,
per-task durations; docs/workloads.md, "Workloads with time").  Core: imports only mechverify, numpy and
the standard library; the trace data ships as a derived table (``data/``), nothing is downloaded.
"""
from __future__ import annotations

from .base import Param, Workload, flag
from .models import Alibaba2018, Google2011, Seed004, Tree, Uniform
from ..numbers import InstanceError

__all__ = ["WORKLOADS", "get", "Workload", "Param", "flag"]

#: name -> workload, in the order the docs list them
WORKLOADS: dict[str, Workload] = {w.name: w for w in (Uniform(), Google2011(), Alibaba2018(), Seed004(), Tree())}


def get(name: str) -> Workload:
    """The workload named ``name``; else ``InstanceError`` (one line listing the known names)."""
    w = WORKLOADS.get(name) if isinstance(name, str) else None
    if w is None:
        raise InstanceError(f"--workload {name!r}: unknown workload (known: {', '.join(WORKLOADS)})")
    return w
