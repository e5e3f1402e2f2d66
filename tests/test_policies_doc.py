"""docs/policies.md, "Audit your scheduler's policy", works as printed: its files are written into an empty
directory, every ``$`` command of its ``console`` blocks runs there (the verifier under test), each shown
line appears in what it prints (whitespace collapsed, wrapping ignored; ``...`` stands for varying text),
the exit code is the one shown, and its pytest example fails with the counterexample the search stored."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

import mechverify
from tests.helpers import ROOT

DOC = os.path.join(ROOT, "docs", "policies.md")
SRC = os.path.dirname(os.path.dirname(os.path.abspath(mechverify.__file__)))  # the code under test


def _doc() -> str:
    with open(DOC, encoding="utf-8") as fh:
        return fh.read()


def _files(text: str) -> dict[str, str]:
    return dict(re.findall(r"```\w+ file=(\S+)\n(.*?)```", text, re.S))


def _commands(text: str) -> list[tuple[str, list[str], int]]:
    """``(command, expected lines, exit code)`` of every ``$`` line of the console blocks, in order."""
    out = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            cmd, *lines = chunk.rstrip("\n").split("\n")
            code = re.fullmatch(r"\(exit (\d+)\)", lines[-1])
            assert code, f"{cmd}: the block must end with '(exit N)'"
            out.append((cmd, lines[:-1], int(code.group(1))))
    return out


def _squash(s: str) -> str:
    return " ".join(s.split())


def _pattern(line: str) -> re.Pattern:
    return re.compile(".*?".join(re.escape(part) for part in _squash(line).split("...")))


def test_the_page_has_its_files_and_commands():
    text = _doc()
    assert set(_files(text)) == {"team_scheduler.py", "team-pool.json"}
    cmds = [c for c, _, _ in _commands(text)]
    assert any(c.startswith("python -m verifier run ") and "--store store" in c for c in cmds)
    assert cmds[-1] == "python -m verifier replay store"  # ends with the stored counterexample re-checked


def test_from_a_blank_file_to_a_stored_counterexample(tmp_path, monkeypatch):
    text = _doc()
    for name, body in _files(text).items():
        (tmp_path / name).write_text(body)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, str(tmp_path)]))
    for cmd, expected, code in _commands(text):
        argv = shlex.split(cmd)
        assert argv[:3] == ["python", "-m", "verifier"], cmd
        p = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
        said = _squash(p.stdout + "\n" + p.stderr)
        assert p.returncode == code, (cmd, p.returncode, p.stdout[-3000:], p.stderr[-3000:])
        for line in expected:
            assert _pattern(line).search(said), (cmd, line, p.stdout[-3000:])
    stored = os.listdir(tmp_path / "store" / "largest-gap")
    assert len(stored) == 1 and stored[0].startswith("quota-")

    # the pytest example, as printed, in the same directory
    (test_src,) = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "assert_property" in b]
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "policies_doc"}
    exec(compile(test_src, "docs/policies.md", "exec"), ns)
    with pytest.raises(AssertionError, match=r"largest-gap violates quota/whole-task \(exact margin 1\)"):
        ns["test_largest_gap_honours_declared_guarantees"]()
