"""A policy in any language (``exec:COMMAND ARGS``; mechanisms.core.exec_policy, mechverify.exec_protocol,
docs/exec-protocol.md): the handshake and its version, exact and float answers, every way a program can
fail named in one line, and the program killed at a time-out, at the deadline, on Ctrl-C and at exit.  The
program is tests/data/exec_policy.py run by this Python (always there); the JavaScript and Java examples
are audited from the CLI in tests/verifier/cli/test_exec_examples.py."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction as F

import pytest

import mechverify as mv
from mechanisms import get
from mechanisms.core.exec_policy import _RESOLVED
from mechverify.deadline import BudgetExhausted, call_limit_scope, scope
from mechverify.exec_protocol import command_digest, message_error, protocol_schema
from mechverify.isolation import UserCodeFailure
from mechverify.numbers import InstanceError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.path.join(ROOT, "tests", "data", "exec_policy.py")
#: one server with room for every answer of the test program (x[j][0] = 1/(j+2) <= 1/2 task of demand 1)
ENV = mv.environment({"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": ["10", "10"]}],
                      "users": [{"name": "u1", "demand": ["1", "1"]}, {"name": "u2", "demand": ["1", "2"]}]})


def ref(mode: str, pidfile: str = "") -> str:
    return f"exec:{sys.executable} {PROGRAM} {mode}" + (f" {pidfile}" if pidfile else "")


def fresh(mode: str, pidfile: str = ""):
    """The mechanism, resolved anew (its own worker and program)."""
    _RESOLVED.pop(ref(mode, pidfile), None)
    return get(ref(mode, pidfile))


def gone(pid: int, within: float = 5.0) -> bool:
    """The process ``pid`` has ended (it is no child of ours: poll for it)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie still answers kill(0): it is dead when its state says so
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def read_pid(path) -> int:
    end = time.monotonic() + 10
    while time.monotonic() < end:
        if os.path.exists(path) and open(path).read().strip():
            return int(open(path).read())
        time.sleep(0.02)
    raise AssertionError(f"no pid in {path}")


# ------------------------------------------------------------------------------------- the handshake
def test_the_handshake_makes_a_users_mechanism():
    m = fresh("exact")
    assert m.name == "test-exact" and m.origin == "reference" and m.is_users
    assert m.reference == ref("exact")
    assert [(c.property, c.status, c.source) for c in m.claims] == [("sp", "holds", "tests/data/exec_policy.py")]
    assert m.setting == get("examples/my_mechanisms.py:greedy").setting  # a user's default setting
    assert m.source_hash == command_digest([sys.executable, PROGRAM, "exact"]) != ""
    assert get(ref("exact")) is m  # cached while the files it names are unchanged


@pytest.mark.parametrize("mode, text", [
    ("version2", "it speaks protocol version 2; this mechverify speaks version 1"),
    ("chatty", "its handshake is not JSON"),
    ("silent", "the policy process exited with code 0 before writing its handshake"),
    ("bad-setting", "its handshake: setting: Additional properties are not allowed ('many_servers' was unexpected)"),
])
def test_a_bad_handshake_is_one_clear_error(mode, text):
    with pytest.raises(InstanceError) as exc:
        fresh(mode)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(f"mechanism {ref(mode)}: ") and text in msg, msg


@pytest.mark.wallclock
def test_a_program_that_never_writes_its_handshake_is_one_line_and_killed(tmp_path, monkeypatch):
    import mechanisms.core.exec_policy as ep

    monkeypatch.setattr(ep, "HANDSHAKE_SECONDS", 1.0)
    pidfile = tmp_path / "pid"
    t0 = time.monotonic()
    with pytest.raises(InstanceError) as exc:
        fresh("mute", str(pidfile))
    assert str(exc.value) == f"mechanism {ref('mute', str(pidfile))}: the policy wrote no handshake within 1 s of its start"
    assert time.monotonic() - t0 < 1 + 5
    assert gone(read_pid(pidfile))


def test_a_missing_program_is_one_clear_error():
    with pytest.raises(InstanceError, match=r"^mechanism exec:no-such-program-37 x: no command 'no-such-program-37' on PATH$"):
        get("exec:no-such-program-37 x")
    with pytest.raises(InstanceError, match="no command"):
        get("exec:")


def test_a_version_mismatch_from_the_cli_is_one_line_and_exit_2():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    p = subprocess.run([sys.executable, "-m", "verifier", "check", ref("version2"),
                        os.path.join(ROOT, "examples", "000-fig1.json")], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "speaks protocol version 2; this mechverify speaks version 1" in p.stderr


def test_the_schema_is_a_valid_draft_2020_12_schema_and_checks_messages():
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(protocol_schema())
    assert message_error("allocate_answer", {"id": 1, "tasks": [["3/4", 1, 0.5, "2"]]}) is None
    assert message_error("allocate_answer", {"id": 1, "tasks": [["3/x"]]}).startswith("tasks[0][0]: ")
    assert message_error("allocate_answer", {"id": 1, "tasks": [[True]]}).startswith("tasks[0][0]: ")
    assert message_error("handshake", {"protocol": "mechverify-exec", "version": 1, "name": "a",
                                       "provides": ["order"]}) is not None  # version 1: allocate is required
    assert message_error("allocate_request", {"id": 1, "op": "allocate", "exact": True,
                                              "instance": ENV.to_dict()}) is None


# ---------------------------------------------------------------------------------------- numbers
def test_exact_strings_are_read_exactly():
    alloc = fresh("exact")(ENV, exact=True)
    assert alloc.x == ((F(1, 2),), (F(1, 3),)) and "as_written" not in (alloc.info or {})


def test_json_floats_are_taken_exactly_as_written_and_judged_within_the_tolerance():
    m = fresh("floats")
    alloc = m(ENV, exact=True)
    # 1/3 as a binary double is not 1/3: taken exactly as written, as a Python user's float
    assert alloc.x == ((F(1, 2),), (F(1 / 3),)) and alloc.x[1][0] != F(1, 3)
    assert alloc.info["as_written"] == "float" and m.tolerance == 1e-9


def test_integers_are_exact():
    assert fresh("zeros")(ENV, exact=True).x == ((0,), (0,))


# ------------------------------------------------------------------------------------------- orders
#: Mesos' DRFSorterTest.DRF (apache/mesos src/tests/sorter_tests.cpp, as tests/verifier/cli/test_order_command.py):
#: total cpus 100, mem 100; a holds 5 tasks of <1, 1>, b 6, c 1, d 1 of <3, 1>: dominant shares 5/100, 6/100,
#: 1/100, 3/100 -> c, d, a, b
MESOS = {"resources": ["cpus", "mem"], "servers": [{"name": "agent", "capacity": [100, 100]}],
         "users": [{"name": "a", "demand": [1, 1], "usage": [5]}, {"name": "b", "demand": [1, 1], "usage": [6]},
                   {"name": "c", "demand": [1, 1], "usage": [1]}, {"name": "d", "demand": [3, 1], "usage": [1]}]}


def test_an_order_from_the_program_is_the_policys_order_facet(tmp_path):
    m = fresh("order")
    assert m.setting.ordered and m.order is not None and m.order.queue_share is None
    path = tmp_path / "mesos.json"
    path.write_text(json.dumps(MESOS))
    p = subprocess.run([sys.executable, "-m", "verifier", "order", ref("order"), str(path), "--format", "json"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src")),
                       timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["order"] == ["c", "d", "a", "b"]
    assert out["shares"] == {"a": "1/20", "b": "3/50", "c": "1/100", "d": "3/100"}


def test_a_comparator_that_is_not_a_strict_weak_order_is_found():
    """The program's comparator: u1 < u2 < u3 < u1 (here a < b < c < a), answered as it is, not repaired."""
    results = mv.check(ref("cycle"), mv.environment(MESOS), "order/strict-weak")
    (res,) = [r for r in results if r.property == "order"]
    assert res.verdict == "violated"
    assert res.certificate.summary == "a before b before c, but compare(a, c) = 1: not transitive"


def test_an_order_that_leaves_out_a_user_is_one_line_finding():
    from mechverify.allocation import Allocation

    env = mv.environment(MESOS)
    state = Allocation(env, tuple(tuple(F(v) for v in row) for row in env.usage), "usage", True)
    with pytest.raises(UserCodeFailure) as exc:
        fresh("order-missing").order.compare(state, 0, 1)
    assert exc.value.kind == "protocol" and exc.value.text == "its order leaves out d"


# ---------------------------------------------------------------------------------------- failures
@pytest.mark.parametrize("mode, kind, text", [
    ("crash", "died", "the policy process exited with code 3 before answering request 1 (allocate) [output: request 1]"),
    ("garbage", "protocol", "its answer to request 1 is not JSON (Expecting value at column 1): 'hello world' "
                            "(log on standard error, not standard output) [output: request 1]"),
    ("wrong-id", "protocol", "it answered request 1 with id 2 [output: request 1]"),
    ("error", "raised", "the policy reported an error: no allocation for you [output: request 1]"),
])
def test_a_failing_program_is_one_line_finding_and_starts_again(mode, kind, text):
    m = fresh(mode)
    for call in (1, 2):
        with pytest.raises(UserCodeFailure) as exc:
            m(ENV, exact=True)
        assert exc.value.kind == kind and exc.value.finding == text
        if kind == "raised":  # an error answer leaves the program in step: the next request is its second
            text = text.replace("[output: request 1]", "[output: request 2]")
    # else the second call started the program again: its first request once more


def test_an_invalid_answer_is_an_output_error():
    from mechanisms.core.registry import MechanismOutputError

    with pytest.raises(MechanismOutputError, match=r"^test-negative: output x\[u1\]\[s\] = -1 is negative$"):
        fresh("negative")(ENV, exact=True)


def test_a_crash_is_a_runs_finding_not_a_crash_of_the_verifier():
    (res,) = mv.check(ref("crash"), ENV, "runs")
    assert res.verdict == "violated" and res.certificate.exception == (
        "the policy process exited with code 3 before answering request 1 (allocate) [output: request 1]")


@pytest.mark.wallclock
def test_a_hanging_program_times_out_and_is_killed(tmp_path):
    pidfile = tmp_path / "pid"
    m = fresh("hang", str(pidfile))
    t0 = time.monotonic()
    with call_limit_scope(1.0, override=True):
        with pytest.raises(UserCodeFailure) as exc:
            m(ENV)
    assert exc.value.kind == "timeout" and exc.value.text == "exceeds the time limit (1 s) on this instance"
    assert time.monotonic() - t0 < 1 + 10  # the start-up's own limit, the call's, and the kill
    assert gone(read_pid(pidfile))


def test_the_deadline_ends_the_call_and_kills_the_program(tmp_path):
    pidfile = tmp_path / "pid"
    m = fresh("hang", str(pidfile))
    with call_limit_scope(30, override=True), scope(time.monotonic() + 1.0):
        with pytest.raises(BudgetExhausted):
            m(ENV)
    assert gone(read_pid(pidfile))


_SCRIPT = """
import sys, time
import mechverify as mv
m = mv.mechanism_of(sys.argv[1])
env = mv.load(sys.argv[2])
print("resolved", flush=True)
if sys.argv[3] == "call":
    m(env)
time.sleep(0 if sys.argv[3] == "exit" else 3600)
"""


@pytest.mark.parametrize("how", ["exit", "sigint", "sigkill"])
def test_the_program_dies_with_the_verifier(tmp_path, how):
    """At a normal exit, on Ctrl-C (SIGINT during a call) and when the verifier is killed outright (the
    worker sees its parent gone), the program is killed: nothing is left running."""
    pidfile = tmp_path / "pid"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    mode = "hang" if how == "sigint" else "exact"
    p = subprocess.Popen([sys.executable, "-c", _SCRIPT, ref(mode, str(pidfile)),
                          os.path.join(ROOT, "examples", "000-fig1.json"), "call" if how == "sigint" else "idle"
                          if how == "sigkill" else "exit"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        assert p.stdout.readline() == "resolved\n"
        pid = read_pid(pidfile)
        if how == "sigint":
            time.sleep(0.5)  # inside the call
            p.send_signal(signal.SIGINT)
        elif how == "sigkill":
            p.kill()
        p.wait(timeout=30)
        assert gone(pid, within=10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.parametrize("value", [0, 3, -2, 0.5, 1e300, "3/4", "-1/2", "2", "0.25", ".5", "1e-3", "1E+2", "7/10",
                                   "1/0", "3/x", "", " 1", "1 ", "1\n", "/2", "1/", "--1", "1e1000", "inf", "x" * 101,
                                   True, None, [1], {"a": 1}])
def test_the_quick_look_accepts_only_what_the_schema_accepts(value):
    """The allocate answer's quick look (``exec_protocol._plainly_valid``) is never more lenient than the
    schema (it takes the schema's own pattern); what it turns down goes to the schema, which decides."""
    from mechverify.exec_protocol import _plainly_valid, _validator

    msg = {"id": 1, "tasks": [[0, value]]}
    by_schema = _validator("allocate_answer").is_valid(msg)
    if _plainly_valid("allocate_answer", msg):
        assert by_schema
    assert (message_error("allocate_answer", msg) is None) == by_schema
    for other in ({"id": "1", "tasks": [[value]]}, {"id": 1, "tasks": [value]}, {"id": 1, "tasks": [[value]], "x": 0}):
        assert not _plainly_valid("allocate_answer", other) or _validator("allocate_answer").is_valid(other)


def test_in_process_mode_talks_to_the_program_from_the_verifier(monkeypatch):
    """``MECHVERIFY_IN_PROCESS=1`` (for a debugger): no worker; the answers and the failures are the same."""
    monkeypatch.setenv("MECHVERIFY_IN_PROCESS", "1")
    m = fresh("exact")
    assert m(ENV, exact=True).x == ((F(1, 2),), (F(1, 3),))
    assert m.func.worker.calls == 0  # the worker was never used
    with pytest.raises(UserCodeFailure) as exc:
        fresh("crash")(ENV)
    assert exc.value.kind == "died" and exc.value.text == (
        "the policy process exited with code 3 before answering request 1 (allocate)")
