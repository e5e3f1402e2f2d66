"""mechverify: ``from mechverify import load, allocate, check, run, replay`` (``mechverify.api``), the
``@mechverify.mechanism`` and ``@mechverify.property`` decorators (``mechverify.declare``), ``mechverify.strategies`` and
``mechverify.testing.assert_property``.

The core: the environment model, allocations, the true-utility function, the LP layer and
the lexicographic max-min solver.  Data flows one way:

environment -> mechanism -> allocation -> property check -> witness -> exact certificate -> store -> report
"""
from .declare import mechanism  # noqa: F401
from .declare import comparator  # noqa: F401  (``order=mechverify.comparator(cmp)``: a policy's order)
from .declare import property_ as property  # noqa: F401  (``@mechverify.property``: a user's property)
from .allocation import Allocation, Bundle, feasibility_violations, is_feasible  # noqa: F401
from .instances import instance_schema, load_environment, parse_environment  # noqa: F401
from .model import Environment  # noqa: F401
from .numbers import InstanceError, fmt, fmt_exact, to_fraction  # noqa: F401
from .utility import true_tasks, utilities, utility  # noqa: F401

from .version import __version__  # noqa: F401

#: the Python API (``mechverify.api``), loaded on first use: it sits above the verifier, which imports this core
_API = ("load", "environment", "instance", "mechanism_of", "allocate", "order", "check", "execution", "execute", "run",
        "replay")


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'mechverify' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_API))
