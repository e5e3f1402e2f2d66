"""The README's 'Audit your own mechanism' example runs as printed (budget shortened) and refutes the PO
claim it makes: an equal split of every server leaves resources idle (2 users x 1 server x 2 resources)."""
from __future__ import annotations

import contextlib
import io
import os
import re

from tests.helpers import ROOT


def test_readme_own_mechanism_example(tmp_path, monkeypatch):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## Audit your own mechanism", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    code = code.replace("budget=20", "budget=4")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    printed = out.getvalue()
    assert "po/fractional" in printed and "REFUTED" in printed, printed
    assert os.listdir(tmp_path / "my-counterexamples" / "equal-split")
