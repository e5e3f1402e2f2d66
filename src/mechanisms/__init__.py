"""Allocation mechanisms of the seed papers, registered by name (see ``registry.py``).

Importing this package registers every mechanism; use :func:`mechanisms.get` /
:func:`mechanisms.allocate` / :func:`mechanisms.all_mechanisms`.
"""
from .registry import Claim, Mechanism, OrderSpec, Setting, SettingError, all_mechanisms, allocate, get, register  # noqa: F401

from . import drf_family  # noqa: F401,E402
from . import drfh_indivisible  # noqa: E402,F401
from . import seed004  # noqa: E402,F401
from . import lmm_mms  # noqa: E402,F401
from . import psdsf  # noqa: E402,F401
from . import mesos_drf  # noqa: E402,F401
from . import hdrf  # noqa: E402,F401
from . import volcano_hdrf  # noqa: E402,F401
from . import kueue_drs  # noqa: E402,F401
from . import yarn_drf  # noqa: E402,F401
from . import yarn_capacity  # noqa: E402,F401
from . import armada_drf  # noqa: E402,F401

__all__ = ["Claim", "Mechanism", "Setting", "SettingError", "all_mechanisms", "allocate", "get", "register"]
