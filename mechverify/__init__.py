"""mechverify core: the environment model, allocations, the true-utility function, the LP layer and
the lexicographic max-min solver.  Data flows one way:

environment -> mechanism -> allocation -> property check -> witness -> exact certificate -> store -> report
"""
from .allocation import Allocation, Bundle, feasibility_violations, is_feasible  # noqa: F401
from .instances import instance_schema, load_environment, parse_environment  # noqa: F401
from .model import Environment  # noqa: F401
from .numbers import InstanceError, fmt, fmt_exact, to_fraction  # noqa: F401
from .utility import true_tasks, utilities, utility  # noqa: F401

__version__ = "0.1.0"
