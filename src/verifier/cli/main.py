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


def _load_command_modules() -> None:
    """The audit commands' modules (check, replay, run, audit, certify, query); they register themselves."""
    from . import check, rates, search, verify_certificate, z3  # noqa: F401


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake reported as ONE line naming the argument (exit 2)."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        """One line naming the bad argument, then exit 2 (argparse's usage dump is not printed)."""
        print(f"error: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser(load_all: bool = True) -> argparse.ArgumentParser:
    """The full parser; ``load_all=False`` registers only ``list`` and ``allocate`` (their start-up then
    skips the audit commands' imports, e.g. hypothesis: ~0.5 s)."""
    if load_all:
        _load_command_modules()
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
    parser = build_parser(load_all=first not in catalog.NAMES)
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
