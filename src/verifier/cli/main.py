"""``python -m verifier``: builds the parser from the command modules and turns user errors into one
line on stderr (exit 2), solver trouble into exit 3, Ctrl-C into exit 130."""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from mechverify.isolation import UserCodeFailure
from mechverify.lp import LPError
from mechverify.numbers import InstanceError

from . import catalog
from .common import (COMMANDS, EXIT_FINDING, EXIT_SOLVER, EXIT_USAGE, TERMINATED, CliError, interrupted_exit,
                     sigterm_as_interrupt)

__all__ = ["build_parser", "main"]


#: command -> the module that registers it (besides ``catalog``'s, always loaded): a command's start-up
#: imports its own module only (``run`` does not import z3); tests/verifier/cli/test_help.py holds it true
COMMAND_MODULES = {"check": "check", "replay": "check", "execute": "execute", "rates": "rates", "simulate": "simulate", "simulate-sweep": "simulate", "run": "search", "audit": "search",
                   "verify-certificate": "verify_certificate", "certify": "z3", "query": "z3"}


def _load_command_modules(command: Optional[str] = None) -> None:
    """The module registering ``command`` (they register themselves), or every command module (``None``, or a
    name no module is known for: the parser then says what the commands are)."""
    import importlib

    modules = [COMMAND_MODULES[command]] if command in COMMAND_MODULES else sorted(set(COMMAND_MODULES.values()))
    for module in modules:
        importlib.import_module(f"{__package__}.{module}")


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake reported as ONE line naming the argument (exit 2)."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        """One line naming the bad argument, then exit 2 (argparse's usage dump is not printed)."""
        print(f"error: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser(load_all: bool = True, command: Optional[str] = None) -> argparse.ArgumentParser:
    """The full parser; ``load_all=False`` registers only ``catalog``'s commands (``list``, ``allocate``, ...:
    their start-up skips the audit commands' imports, e.g. hypothesis: ~0.5 s); ``command``: only that
    command's module besides (:data:`COMMAND_MODULES`)."""
    if load_all:
        _load_command_modules(command)
    parser = _Parser(
        prog="python -m verifier",
        description="mechverify: audit fair multi-resource allocation mechanisms (SP, EF, SI, PO, BF, ...).",
        epilog="Instances are JSON (see README.md). Every reported violation is re-checked in exact arithmetic.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (configure, _, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_.replace("%", "%%"), description=help_)  # help is %-formatted
        configure(p)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; returns its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(load_all=first not in catalog.NAMES, command=first)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    _, run, _ = COMMANDS[args.command]
    sigterm_as_interrupt()
    # exact results can have more digits than Python's int<->text guard (4300) allows, although every
    # number read from input is short (the instance format caps number text at 100 characters)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    try:
        return run(args)
    except (CliError, InstanceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except UserCodeFailure as exc:  # a user's mechanism failed where no property search reports it
        print(f"error: the mechanism failed on this instance: {exc.finding}", file=sys.stderr)
        return EXIT_FINDING
    except LPError as exc:
        print(f"solver error: {exc}", file=sys.stderr)
        return EXIT_SOLVER
    except KeyboardInterrupt:
        print("terminated" if TERMINATED else "interrupted", file=sys.stderr)
        return interrupted_exit()
    except BrokenPipeError:
        return 0
