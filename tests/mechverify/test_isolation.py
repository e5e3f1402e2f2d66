"""mechverify.isolation: a user's function in a worker process with a time limit, captured output and every
failure named (the hostile mechanisms of tests/data/hostile.py, called through the Worker directly)."""
from __future__ import annotations

import os
import time

import pytest

from mechverify.deadline import BudgetExhausted, call_limit, call_limit_for, call_limit_scope, scope
from mechverify.isolation import UserCodeFailure, Worker
from tests.data import hostile


class _Env:  # what the hostile functions read: the users and servers
    users = ("u1", "u2")
    n_users, n_servers = 2, 1
    demand = ((1,), (2,))


def _fails(fn, limit=1.0):
    w = Worker(fn)
    with call_limit_scope(limit):
        with pytest.raises(UserCodeFailure) as exc:
            w(_Env())
    return w, exc.value


def test_a_good_call_returns_its_value_and_the_worker_is_reused():
    w = Worker(lambda env, k: (env.n_users, k, os.getpid()))
    a, b = w(_Env(), 1), w(_Env(), 2)
    assert a[:2] == (2, 1) and b[:2] == (2, 2)
    assert a[2] == b[2] != os.getpid() and w.forks == 1 and w.calls == 2


@pytest.mark.wallclock
@pytest.mark.parametrize("fn", [hostile.loops, hostile.sleeps])
def test_a_call_past_its_limit_is_killed_and_named(fn):
    t0 = time.monotonic()
    w, f = _fails(fn, limit=0.5)
    took = time.monotonic() - t0
    assert f.kind == "timeout" and f.text == "exceeds the time limit (0.5 s) on this instance"
    assert took < 0.5 + 1.5  # the limit plus forking and reaping a killed child
    # the next call starts a new child
    w.fn = lambda env: "fine"
    assert w(_Env()) == "fine" and w.forks == 2


@pytest.mark.wallclock
def test_the_commands_deadline_is_not_a_finding():
    w = Worker(hostile.sleeps)
    t0 = time.monotonic()
    with call_limit_scope(30), scope(time.monotonic() + 0.4):
        with pytest.raises(BudgetExhausted):
            w(_Env())
    assert time.monotonic() - t0 < 0.4 + 1.5
    with scope(time.monotonic() - 1):  # a deadline already passed: no call is made at all
        with pytest.raises(BudgetExhausted):
            w(_Env())
    assert w.calls == 1


@pytest.mark.parametrize("fn, kind, text", [
    (hostile.exits, "exit", "called sys.exit(3)"),
    (hostile.hard_exit, "died", "the process exited with code 7 (os._exit or a crash of the interpreter)"),
    (hostile.segfault, "died", "the process was killed by SIGSEGV"),
    (hostile.prints_then_raises, "raised", "RuntimeError: boom"),
])
def test_exits_signals_and_exceptions_are_findings(fn, kind, text):
    _, f = _fails(fn)
    assert (f.kind, f.text) == (kind, text)


def test_what_a_failing_call_printed_is_part_of_its_finding_and_never_ours(capfd):
    _, f = _fails(hostile.prints_then_raises)
    assert f.output.strip() == "about to fail"
    assert f.finding == "RuntimeError: boom [output: about to fail]"
    w = Worker(hostile.prints)
    assert w(_Env()) == [[0], [0]]
    out, err = capfd.readouterr()
    assert "hello" not in out + err and "stderr" not in out + err


@pytest.mark.wallclock  # a 2 GiB blow-up: alone, so that no other test competes with it
def test_a_memory_blow_up_is_stopped_by_the_limit():
    """In a process of its own, as the CLI runs it: a worker forked from a process with other threads (a
    pytest-xdist worker's) is a different case -- docs/architecture.md, "A user's mechanism"."""
    import json
    import subprocess
    import sys

    from tests.helpers import ROOT

    code = ("import json; from tests.mechverify.test_isolation import _fails; from tests.data import hostile; "
            "_, f = _fails(hostile.memory_hog, limit=20); print(json.dumps([f.kind, f.text]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.path.join(ROOT, "src"), ROOT,
                                                                                      os.environ.get("PYTHONPATH", ""))
                                                                      if p)))
    assert out.returncode == 0, out.stderr[-2000:]
    kind, text = json.loads(out.stdout.strip().splitlines()[-1])
    assert kind in ("memory", "died") and ("memory" in text or "killed" in text)


def test_an_object_that_cannot_be_sent_back_is_named():
    _, f = _fails(hostile.unsendable)
    assert f.kind == "unsendable" and f.text.startswith("returned an object that cannot be sent back")


def test_call_limit_scopes():
    assert call_limit_for(None) == 60 and call_limit_for(5) == 1 and call_limit_for(100) == 10
    assert call_limit_for(10 ** 4) == 60
    with call_limit_scope(3):
        assert call_limit() == 3
        with call_limit_scope(7):  # an enclosing command's limit stands ...
            assert call_limit() == 3
        with call_limit_scope(7, override=True):  # ... unless given explicitly (--call-limit)
            assert call_limit() == 7
    assert call_limit() == 60
