"""Allocation mechanisms, registered by name, in three folders:

* ``core/`` -- the plumbing: what a mechanism is (``mechanism.py``), the registry (``registry.py``), a user's
  mechanism by reference or entry point (``references.py``), the z3 facet (``z3spec.py``) and what order
  facets read of a state (``order.py``);
* ``paper/`` -- the mechanisms of the seed papers and their shared building blocks;
* ``ports/`` -- production schedulers' policies, ported (each declared once with its upstream pin and its
  historic variants, ``ports/declare.py``; Java/Go semantics they reproduce in ``ports/java_go.py``).

Importing this package registers every mechanism (in the order below); use :func:`mechanisms.get` /
:func:`mechanisms.allocate` / :func:`mechanisms.all_mechanisms`.
"""
from .core.registry import Claim, Mechanism, OrderSpec, Setting, SettingError, all_mechanisms, allocate, get, register  # noqa: F401

# the registering modules, in registration order (the order ``REGISTERED`` keeps); the names are not kept here
from .paper import drf_family, drfh_indivisible, external_resources, lmm_mms, psdsf  # noqa: E402
from .ports import mesos  # noqa: E402
from .paper import hdrf  # noqa: E402
from .ports.volcano import port as volcano  # noqa: E402
from .ports.kueue import port as kueue  # noqa: E402
from .ports.yarn import drf, capacity  # noqa: E402
from .ports import armada  # noqa: E402
from .paper import dynamic  # noqa: E402
from .ports.slurm import port as slurm  # noqa: E402
from .ports.yarn import preempt  # noqa: E402  (stateful, on top of yarn-drf)
from .ports.kueue import afs_port  # noqa: E402  (stateful: Kueue's admission fair sharing)
from .ports.kueue import timeshare_port  # noqa: E402  (stateful: Kueue's preemption over time, the booster)
from .paper import slots  # noqa: E402  (seed 001's Slots baseline)

del drf_family, drfh_indivisible, external_resources, lmm_mms, psdsf, mesos, hdrf, volcano, kueue, drf, capacity, armada, dynamic, slurm
del preempt, afs_port, timeshare_port, slots

__all__ = ["Claim", "Mechanism", "Setting", "SettingError", "all_mechanisms", "allocate", "get", "register"]
