"""Interruptions lose nothing: Ctrl-C / SIGTERM during ``run`` print and write the cells that finished
(exit 130 / 143); kill -9 leaves no partial or temporary file, and what was stored replays."""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from verifier.store import find_files, replay

from tests.helpers import ROOT


def _terminal_like_signals() -> None:
    """In the child: SIGINT as a terminal's Ctrl-C delivers it.  A job started in the background by a
    non-interactive shell (as CI may run the suite) inherits SIGINT *ignored*, and Python then installs no
    KeyboardInterrupt handler -- by convention, so that Ctrl-C does not reach background jobs."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(*args):
    proc = subprocess.Popen([sys.executable, "-m", "verifier", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_terminal_like_signals)
    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True).start()
    return proc, lines


def _wait_for(lines, needle: str, timeout: float = 120) -> list[str]:
    """stderr lines up to the first containing ``needle``."""
    seen, end = [], time.time() + timeout
    while time.time() < end:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        seen.append(line)
        if needle in line:
            return seen
    pytest.fail(f"no {needle!r} on stderr within {timeout} s: {seen[-5:]}")


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_keeps_finished_cells(tmp_path, sig, code):
    out_dir, store = tmp_path / "out", tmp_path / "store"
    proc, lines = _start("run", "c-drfh", "--properties", "si,bf,ef", "--budget", "60", "--store", str(store),
                         "--out", str(out_dir))
    _wait_for(lines, "-> ")  # the first cell finished
    proc.send_signal(sig)
    stdout, _ = proc.communicate(timeout=120)
    assert proc.returncode == code
    rows = [line for line in stdout.splitlines() if line.startswith(("sp/", "gsp/", "ef/", "si/", "po/", "bf/"))]
    assert rows, stdout  # the finished cells are printed...
    for ext in ("md", "json", "html"):  # ...and written
        assert (out_dir / f"c-drfh.{ext}").exists()
    assert "interrupted" in (out_dir / "c-drfh.md").read_text()  # the cells not searched say why
    for path in find_files([str(store)]) if store.exists() else []:
        assert replay(path).ok


def test_kill_9_leaves_no_partial_file(tmp_path):
    store = tmp_path / "store"
    proc, lines = _start("run", "c-drfh", "--properties", "si,bf", "--budget", "60", "--store", str(store))
    _wait_for(lines, "violated")  # a counterexample is being (or has been) stored
    time.sleep(0.5)
    proc.kill()
    proc.wait(timeout=60)
    for dirpath, _, files in os.walk(store):
        assert not [f for f in files if f.startswith(".tmp")], files
    stored = find_files([str(store)])
    assert stored  # the violation announced on stderr had been stored before it was announced
    for path in stored:
        assert replay(path).ok
