"""Command line: ``python -m verifier <command> ...`` (``main``); one module per command group:
``catalog`` (list, allocate), ``check`` (check, replay), ``search`` (run, audit), and the z3 commands."""
from .common import CliError, command  # noqa: F401
from .main import main  # noqa: F401

__all__ = ["main", "CliError", "command"]
