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


def test_each_command_is_registered_by_the_module_main_loads_for_it():
    """``main`` imports only the module of the command it runs (``COMMAND_MODULES``); the map must name, for
    every command, the module whose function runs it."""
    from verifier.cli import catalog
    from verifier.cli.main import COMMAND_MODULES

    for name in NAMES:
        module = COMMANDS[name][1].__module__.rsplit(".", 1)[1]
        assert module == ("catalog" if name in catalog.NAMES else COMMAND_MODULES[name]), name
    assert set(COMMAND_MODULES) | set(catalog.NAMES) == set(NAMES)


def test_run_starts_without_importing_z3():
    """The start-up of ``run`` (and of every command but certify / query) does not pay for z3 (~0.2 s)."""
    import subprocess
    import sys

    from tests.helpers import ROOT

    probe = ("import sys\nfrom verifier.cli import main\ntry:\n    main(['run', '--help'])\nexcept SystemExit:\n"
             "    pass\nprint('z3' in sys.modules, 'verifier.cli.z3' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "False False", out.stdout + out.stderr
