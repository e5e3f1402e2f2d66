"""A clone in a folder named ``mechverify``, used from its parent folder, never shadows the installed
package (the issue "A user's code is untrusted", item 7): the importable packages live under ``src/``, so
the editable install is a plain path entry and a regular package wins over the namespace portion that
the clone's folder is from its parent."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests.helpers import ROOT

SRC = os.path.join(ROOT, "src")


def test_a_folder_named_mechverify_in_the_working_directory_does_not_shadow_the_package(tmp_path):
    clone = tmp_path / "mechverify"  # as `git clone ... mechverify` leaves it: no __init__.py at its root
    clone.mkdir()
    shutil.copy(os.path.join(ROOT, "README.md"), clone / "README.md")
    (clone / "verifier").mkdir()  # even a stray folder named like the CLI package
    code = "import mechverify, verifier, mechanisms; print(mechverify.__file__); print(verifier.__file__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    files = out.stdout.split()
    assert files == [os.path.join(SRC, "mechverify", "__init__.py"), os.path.join(SRC, "verifier", "__init__.py")]
    cli = subprocess.run([sys.executable, "-m", "verifier", "allocate", "drfh",
                          os.path.join(ROOT, "examples", "001-fig1.json")], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert cli.returncode == 0 and cli.stdout.startswith("mechanism: drfh"), cli.stderr


def test_the_importable_packages_are_exactly_those_under_src():
    import mechanisms
    import mechverify
    import simulation
    import verifier

    for mod in (mechverify, mechanisms, simulation, verifier):
        assert os.path.dirname(os.path.dirname(mod.__file__)) == SRC
    assert not any(os.path.isdir(os.path.join(ROOT, p)) for p in ("mechverify", "mechanisms", "verifier", "simulation"))
