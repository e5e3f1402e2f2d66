"""The exec protocol: a policy written in any language, as a long-lived program that speaks JSON lines on its
standard input and output (docs/exec-protocol.md; the messages' JSON Schema is ``exec-protocol-1.schema.json``,
:func:`protocol_schema`).

* The program writes its HANDSHAKE first: the protocol and its version, its name, what it provides
  (``allocate`` and/or ``order``), the setting it accepts, its claims.
* Then, one at a time, the verifier writes a REQUEST -- ``allocate`` with an instance (the instance format,
  ``Environment.to_dict``), or ``order`` with an instance and a state -- and the program writes one ANSWER
  with the request's ``id``: the task matrix, or its order of the users with their shares, or an ``error``.
* What the program writes on its standard error is its output: shown in the finding of a failing call, as a
  Python mechanism's prints are.

:class:`PolicyProcess` is the verifier's end of the pipe.  It lives in a worker's child process
(``mechverify.isolation``): the program is started there (:func:`mechverify.isolation.spawn`: in the child's
process group, killed with it, its memory limited), every call has the worker's time limit, and a program
that dies, answers garbage or answers out of step fails the call with
:class:`~mechverify.isolation.Failure` -- a finding about the policy, never a crash of the verifier.  Every
message the program writes is validated against the schema (``jsonschema``) before it is read.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import signal
from functools import lru_cache
from typing import Any, Optional

from .isolation import Failure, spawn
from .model import Environment
from .numbers import INF, InstanceError, fmt_exact, to_fraction

__all__ = ["PROTOCOL", "VERSION", "SCHEMA_FILE", "HANDSHAKE_SECONDS", "MAX_LINE", "protocol_schema", "message_error",
           "command_argv", "command_digest", "instance_message", "PolicyProcess", "OrderAnswer"]

#: the protocol's name and the version this verifier speaks (a handshake declares both)
PROTOCOL = "mechverify-exec"
VERSION = 1
#: the JSON Schema of version :data:`VERSION`'s messages, shipped with the package
SCHEMA_FILE = f"exec-protocol-{VERSION}.schema.json"
#: seconds a program may take to start and write its handshake (a JVM's start-up on a loaded machine included)
HANDSHAKE_SECONDS = 10.0
#: the longest line a program may write (bytes)
MAX_LINE = 16 << 20
_SHOWN = 80  # characters of a bad line shown in a finding


# ----------------------------------------------------------------------------------------------- schema
@lru_cache(maxsize=None)
def protocol_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the protocol's messages (``exec-protocol-1.schema.json``)."""
    from importlib import resources

    return json.loads(resources.files("mechverify").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _validator(definition: str):
    """A validator of one message kind (``$defs/<definition>`` of the schema; the instance schema it refers to
    is registered beside it)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    from .instances import instance_schema

    schema, instance = protocol_schema(), instance_schema()
    registry = Registry().with_resources([(schema["$id"], Resource.from_contents(schema)),
                                          (instance["$id"], Resource.from_contents(instance))])
    return Draft202012Validator({"$ref": f"{schema['$id']}#/$defs/{definition}"}, registry=registry)


def _where(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


@lru_cache(maxsize=None)
def _number_text():
    """The schema's pattern of a number written as a string (``$defs/number``), compiled."""
    import re

    (text,) = [alt["pattern"] for alt in protocol_schema()["$defs"]["number"]["anyOf"] if "pattern" in alt]
    return re.compile(text)


def _plainly_valid(definition: str, message: Any) -> bool:
    """A quick look that accepts only messages the schema accepts: an ``allocate_answer`` made of an integer
    id and rows of JSON numbers or number strings (the schema's own pattern).  Anything else -- and every
    other kind of message -- goes to the full validation (which also names the error).  It saves the
    schema's walk on the hot path (benchmarks/exec_protocol.py: most of a call's time without it)."""
    if definition != "allocate_answer" or type(message) is not dict or len(message) != 2:
        return False
    rid, rows = message.get("id"), message.get("tasks")
    if type(rid) is not int or type(rows) is not list:
        return False
    match = _number_text().match
    for row in rows:
        if type(row) is not list:
            return False
        for v in row:
            t = type(v)
            if t is int or t is float:
                continue
            if t is not str or len(v) > 100 or match(v) is None:
                return False
    return True


def message_error(definition: str, message: Any) -> Optional[str]:
    """``None`` if ``message`` is a valid ``$defs/<definition>`` of the protocol's schema, else the first
    error in one line, naming the field (``tasks[0][1]: 'x' is not valid ...``)."""
    if _plainly_valid(definition, message):
        return None
    from jsonschema.exceptions import best_match

    err = best_match(_validator(definition).iter_errors(message))
    if err is None:
        return None
    where = _where(err.absolute_path)
    text = " ".join(err.message.split())
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{where}: {text}" if where else text


# ---------------------------------------------------------------------------------------------- command
def command_argv(command: str, what: str = "exec") -> list[str]:
    """The program and arguments of ``exec:COMMAND ARGS`` (shell quoting, no shell), its program found: a
    path, or a name on ``PATH``.  One-line ``InstanceError`` otherwise."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InstanceError(f"{what}: cannot split the command {command!r}: {exc}") from None
    if not argv:
        raise InstanceError(f"{what}: no command (expected exec:COMMAND ARGS, e.g. 'exec:java -cp classes Policy')")
    prog = argv[0]
    if os.sep in prog:
        if not os.path.isfile(prog):
            raise InstanceError(f"{what}: no program {prog!r} (no such file)")
        if not os.access(prog, os.X_OK):
            raise InstanceError(f"{what}: {prog!r} is not executable")
    elif shutil.which(prog) is None:
        raise InstanceError(f"{what}: no command {prog!r} on PATH")
    return argv


def command_digest(argv: list[str], limit: int = 64 << 20) -> str:
    """SHA-256 of what the command line names (its "source", for ``replay``): the program when given as a
    path, and every argument that is an existing file -- or a directory (its files, not below), or a list of
    them joined by ``os.pathsep`` (a class path) --, at most ``limit`` bytes in all; "" when it names none."""
    h = hashlib.sha256()
    seen = 0
    named = [argv[0]] if os.sep in argv[0] else []
    for arg in argv[1:]:
        named += [p for p in arg.split(os.pathsep) if p] if os.pathsep in arg else [arg]
    files = []
    for p in named:
        if os.path.isfile(p):
            files.append(p)
        elif os.path.isdir(p):
            try:
                files += [os.path.join(p, f) for f in sorted(os.listdir(p)) if os.path.isfile(os.path.join(p, f))]
            except OSError:
                pass
    for f in files:
        try:
            with open(f, "rb") as fh:
                data = fh.read(max(0, limit - seen))
        except OSError:
            continue
        seen += len(data)
        h.update(os.path.basename(f).encode() + b"\0" + data)
    return h.hexdigest() if files else ""


# --------------------------------------------------------------------------------------------- messages
def instance_message(env: Environment) -> dict[str, Any]:
    """The instance as a request carries it: the instance format with every number exact (``"p/q"``) and
    without a state (``usage``: an order request carries the state beside it)."""
    d = env.to_dict()
    if env.has_usage:
        for u in d["users"]:
            u.pop("usage", None)
    return d


def _number(v: Any, where: str) -> Any:
    """An answer's number: an int or a float as JSON gave it, a string exactly (a ``Fraction``; ``inf``)."""
    if isinstance(v, str):
        if v == "inf":
            return INF
        try:
            return to_fraction(v, where)
        except InstanceError as exc:
            raise Failure("protocol", f"its answer: {exc}") from None
    return v


class OrderAnswer:
    """A policy's order in one state: ``rank[j]`` (the group of ties it is in; ``None`` when only the
    comparator was given), ``compare[i][j]`` (``None`` when only the order was given), ``shares[j]``,
    ``queue_shares[q]`` (``None``: not given)."""

    __slots__ = ("rank", "compare", "shares", "queue_shares")

    def __init__(self, rank, compare, shares, queue_shares) -> None:
        self.rank, self.compare, self.shares, self.queue_shares = rank, compare, shares, queue_shares

    def cmp(self, i: int, j: int) -> int:
        """< 0: ``i`` goes before ``j``; > 0 after; 0 tied (the comparator when given, else the order)."""
        if self.compare is not None:
            return self.compare[i][j]
        return self.rank[i] - self.rank[j]


# ------------------------------------------------------------------------------------------ the process
def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _shown(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")


class PolicyProcess:
    """The verifier's end of a policy program (module docstring), in the process that runs it (a worker's
    child).  :meth:`start` starts it and reads its handshake; :meth:`allocate` and :meth:`order` ask it.
    Every failure is a :class:`~mechverify.isolation.Failure` naming it in one line."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = list(argv)
        self.proc = None
        self.hello: Optional[dict[str, Any]] = None
        self.sent = 0  # requests written

    # ------------------------------------------------------------------------------------ lifecycle
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> dict[str, Any]:
        """Start the program and read its handshake (checked: protocol, version, schema); returns it."""
        self.close()
        try:
            self.proc = spawn(self.argv)
        except OSError as exc:
            raise Failure("died", f"cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        self.sent = 0
        raw = self._line("writing its handshake")
        try:
            hello = json.loads(raw)
        except ValueError as exc:
            raise Failure("protocol", f"its handshake is not JSON ({_json_error(exc)}): {_shown(raw)} (the first "
                                      f"line on standard output must be the handshake; log on standard error)") from None
        if not isinstance(hello, dict) or hello.get("protocol") != PROTOCOL:
            raise Failure("protocol", f"its first line is not a handshake of the {PROTOCOL} protocol: {_shown(raw)}")
        if hello.get("version") != VERSION:
            raise Failure("protocol", f"it speaks protocol version {json.dumps(hello.get('version'))}; this "
                                      f"mechverify speaks version {VERSION}")
        bad = message_error("handshake", hello)
        if bad:
            raise Failure("protocol", f"its handshake: {bad}")
        self.hello = hello
        return hello

    def close(self) -> None:
        """Kill the program (if running) and reap it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except (OSError, ValueError):
                pass
        try:
            proc.kill()
            proc.wait(timeout=2)
        except (OSError, ValueError, Exception):  # noqa: BLE001 - already gone, or not reaped in time
            pass

    # ----------------------------------------------------------------------------------------- lines
    def _ended(self, doing: str) -> Failure:
        """The program closed its output: how it ended (waiting a moment for its exit status)."""
        proc = self.proc
        try:
            code = proc.wait(timeout=1.0)
        except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: alive, with its output closed
            self.close()
            return Failure("died", f"the policy closed its standard output before {doing}")
        self.proc = None
        if code < 0:
            return Failure("died", f"the policy process was killed by {_signal_name(-code)} before {doing}")
        return Failure("died", f"the policy process exited with code {code} before {doing}")

    def _line(self, doing: str) -> bytes:
        """The next non-blank line the program writes."""
        while True:
            raw = self.proc.stdout.readline(MAX_LINE + 1)
            if not raw:
                raise self._ended(doing)
            if len(raw) > MAX_LINE:
                raise Failure("protocol", f"the policy wrote a line longer than {MAX_LINE >> 20} MiB while {doing}")
            if raw.strip():
                return raw

    def _ask(self, request: dict[str, Any], answer_kind: str) -> dict[str, Any]:
        """Write one request, read and validate its answer (``error``: the policy's own failure)."""
        if not self.running():
            self.start()
        self.sent += 1
        rid = self.sent
        line = json.dumps(dict(id=rid, **request), separators=(",", ":")).encode() + b"\n"
        doing = f"answering request {rid} ({request['op']})"
        try:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._ended(doing) from None
        raw = self._line(doing)
        try:
            answer = json.loads(raw)
        except ValueError as exc:
            raise Failure("protocol", f"its answer to request {rid} is not JSON ({_json_error(exc)}): {_shown(raw)} "
                                      f"(log on standard error, not standard output)") from None
        if not isinstance(answer, dict):
            raise Failure("protocol", f"its answer to request {rid} is not a JSON object: {_shown(raw)}")
        if answer.get("id") != rid:
            raise Failure("protocol", f"it answered request {rid} with id {json.dumps(answer.get('id'))[:40]}")
        if "error" in answer:
            bad = message_error("error_answer", answer)
            if bad is None:
                raise Failure("raised", f"the policy reported an error: {' '.join(answer['error'].split())[:500]}")
        else:
            bad = message_error(answer_kind, answer)
        if bad:
            raise Failure("protocol", f"its answer to request {rid}: {bad}")
        return answer

    # -------------------------------------------------------------------------------------- requests
    def allocate(self, env: Environment, exact: bool) -> list[list[Any]]:
        """The policy's task matrix for ``env``, numbers as given (ints and floats from JSON, strings exactly
        as ``Fraction``); its shape and values are the caller's to check (``references.to_allocation``)."""
        answer = self._ask({"op": "allocate", "exact": bool(exact), "instance": instance_message(env)},
                           "allocate_answer")
        return [[_number(v, f"tasks[{j}][{s}]") for s, v in enumerate(row)] for j, row in enumerate(answer["tasks"])]

    def order(self, env: Environment, state: Any) -> OrderAnswer:
        """The policy's order of the users of ``env`` in the state ``state`` (``x[j][s]``), checked: every user
        exactly once, one share per user (and per queue when the handshake declares ``queue_shares``), a
        square comparator."""
        J = env.n_users
        answer = self._ask({"op": "order", "instance": instance_message(env),
                            "state": [[fmt_exact(v) for v in row] for row in state]}, "order_answer")
        rank = None
        if "order" in answer:
            index = {u: j for j, u in enumerate(env.users)}
            rank = [None] * J
            for g, group in enumerate(answer["order"]):
                for u in group:
                    j = index.get(u)
                    if j is None:
                        raise Failure("protocol", f"its order names {json.dumps(u)[:40]}, not a user of the instance")
                    if rank[j] is not None:
                        raise Failure("protocol", f"its order names {u} twice")
                    rank[j] = g
            missing = [env.users[j] for j in range(J) if rank[j] is None]
            if missing:
                raise Failure("protocol", f"its order leaves out {', '.join(missing[:5])}")
        compare = answer.get("compare")
        if compare is not None and (len(compare) != J or any(len(row) != J for row in compare)):
            raise Failure("protocol", f"its comparator is not {J} x {J} (one row and column per user)")
        if compare is not None:
            compare = [[(v > 0) - (v < 0) for v in row] for row in compare]
        if len(answer["shares"]) != J:
            raise Failure("protocol", f"it gave {len(answer['shares'])} shares for {J} users")
        shares = [_number(v, f"shares[{j}]") for j, v in enumerate(answer["shares"])]
        queue_shares = None
        if (self.hello or {}).get("queue_shares") and env.n_queues:
            given = answer.get("queue_shares")
            if given is None or len(given) != env.n_queues:
                raise Failure("protocol", f"it declares queue shares but gave {0 if given is None else len(given)} "
                                          f"for {env.n_queues} queues")
            queue_shares = [_number(v, f"queue_shares[{q}]") for q, v in enumerate(given)]
        return OrderAnswer(rank, compare, shares, queue_shares)


def _json_error(exc: ValueError) -> str:
    msg = getattr(exc, "msg", None)
    col = getattr(exc, "colno", None)
    return f"{msg} at column {col}" if msg and col else " ".join(str(exc).split())[:100]
