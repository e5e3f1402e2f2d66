"""``--help`` works for the tool and for every command (a help text is %-formatted by argparse: a literal
``%`` in one, e.g. "95% intervals", broke ``python -m verifier --help``)."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

from verifier.cli import main
from verifier.cli.common import COMMANDS
from verifier.cli.main import build_parser

build_parser()  # every command module registers its command
NAMES = sorted(COMMANDS)


def _help(*argv) -> str:
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    return out.getvalue()


def test_the_tools_help_lists_every_command():
    text = _help()
    assert len(NAMES) > 10 and all(name in text for name in NAMES)
    assert "95% intervals" in text  # rates: the literal percent sign, printed once


@pytest.mark.parametrize("name", NAMES)
def test_every_commands_help(name):
    assert f"usage: python -m verifier {name}" in " ".join(_help(name).split())
