"""What every command module shares: the command registry, the one-line user error, exit codes, and
parsing of the arguments several commands take."""
from __future__ import annotations

import argparse
import sys
from typing import Callable, Optional

__all__ = ["COMMANDS", "command", "CliError", "EXIT_USAGE", "EXIT_SOLVER", "parse_properties", "progress_printer"]

EXIT_USAGE = 2
EXIT_SOLVER = 3

#: name -> (configure(parser), run(args) -> exit code, help)
COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int], str]] = {}


def command(name: str, help: str):
    """Register ``(configure(parser), run(args) -> exit code)`` under ``name``:
    ``@command(name, help)(configure)`` decorates the run function."""
    def deco(configure):
        def wrap(run):
            COMMANDS[name] = (configure, run, help)
            return run
        return wrap
    return deco


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


def parse_properties(text: Optional[str]) -> Optional[list[str]]:
    """``--properties a,b``: the names, each checked (one-line error for an unknown name); None = all."""
    from ..properties import get_property

    if not text:
        return None
    names = [s.strip() for s in text.split(",") if s.strip()]
    for n in names:
        get_property(n)
    return names


def progress_printer(quiet: bool) -> Optional[Callable[[str], None]]:
    """Progress lines on stderr (stdout carries only the report), or None with ``--quiet``."""
    if quiet:
        return None

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    return say
