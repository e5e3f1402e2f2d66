"""A policy in any language: the mechanism a reference ``exec:COMMAND ARGS`` names (docs/exec-protocol.md).

The command starts a long-lived program that speaks the exec protocol (``mechverify.exec_protocol``: JSON
lines on its standard input and output, a versioned handshake first).  :func:`resolve_exec` starts it once
to read its handshake -- its name, setting, claims, tolerance, whether it provides an order -- and makes it
a :class:`Mechanism` of origin ``reference`` (a user's mechanism: ``runs`` is searched first, its claims are
"claimed", its float answers are judged within its tolerance, exactly as a Python user's function's).

The program lives in a worker process (``mechverify.isolation.Worker``): the worker's child starts it
(``isolation.spawn``) and relays each call; the per-call time limit, the command's deadline, the memory
limit and the kill on a time-out, on Ctrl-C, at exit and when the verifier dies are the worker's.  Starting
the program (a JVM's start-up) has its own limit, :data:`~mechverify.exec_protocol.HANDSHAKE_SECONDS`, so a
slow start is not taken for a slow answer, and a program that never writes its handshake is one line.  A program that crashes, writes
garbage or answers out of step fails the call in one line (``UserCodeFailure``: a ``runs`` finding) and is
started again for the next call.  What it answers is validated as a Python function's return value
(``references.to_allocation``: integers and ``"p/q"`` strings exact, floats taken exactly as written and
judged within the tolerance).
"""
from __future__ import annotations

import atexit
import functools
import os
from typing import Any, Optional

from mechverify.allocation import Allocation
from mechverify.deadline import call_limit_scope
from mechverify.declare import DEFAULT_TOLERANCE
from mechverify.exec_protocol import HANDSHAKE_SECONDS, PolicyProcess, command_argv, command_digest
from mechverify.isolation import UserCodeFailure, Worker, in_process
from mechverify.model import Environment
from mechverify.numbers import InstanceError

from .mechanism import Mechanism
from .order import order_facet
from .references import check_user_name, from_worker_reply, to_allocation, user_claims, user_setting, worker_reply

__all__ = ["PREFIX", "is_exec", "resolve_exec"]

#: the prefix of a reference to a program that speaks the exec protocol
PREFIX = "exec:"
_RESOLVED: dict[str, Mechanism] = {}
#: the programs this process talks to, by (process id, command line): a worker's child (or, with
#: ``MECHVERIFY_IN_PROCESS=1``, the verifier itself); keyed by the process too, so a forked child never
#: talks to its parent's program
_PROCS: dict[tuple[int, tuple[str, ...]], PolicyProcess] = {}


def is_exec(ref: Any) -> bool:
    """``ref`` names a program that speaks the exec protocol (``exec:COMMAND ARGS``)."""
    return isinstance(ref, str) and ref.startswith(PREFIX)


# ------------------------------------------------------------------------------ in the program's caller
def _process(argv: tuple[str, ...]) -> PolicyProcess:
    key = (os.getpid(), argv)
    proc = _PROCS.get(key)
    if proc is None:
        proc = _PROCS[key] = PolicyProcess(list(argv))
    return proc


def _serve(argv: tuple[str, ...], op: str, *args: Any) -> Any:
    """One call, where the program runs (a worker's child): ``start`` (start it again, its handshake),
    ``allocate`` (env, exact, name: a ``references.worker_reply``) or ``order`` (env, state: an
    ``exec_protocol.OrderAnswer``).  Failures are ``isolation.Failure`` (one line)."""
    proc = _process(argv)
    if op == "start":
        return proc.start()
    if op == "allocate":
        env, exact, name = args
        return worker_reply(lambda e, x: to_allocation(e, proc.allocate(e, x), name, x), env, exact)
    if op == "order":
        env, state = args
        return proc.order(env, state)
    raise ValueError(f"exec policy: unknown operation {op!r}")


@atexit.register
def _close_all() -> None:
    """At exit: end the programs this process started itself (in-process mode; a worker's die with it)."""
    for key, proc in list(_PROCS.items()):
        if key[0] == os.getpid():
            proc.close()


# ------------------------------------------------------------------------------------------ the parent
class _Link:
    """The verifier's handle on one program: its worker, and the handshake it must keep giving."""

    def __init__(self, ref: str, argv: list[str]) -> None:
        self.ref, self.argv = ref, tuple(argv)
        self.worker = Worker(functools.partial(_serve, self.argv), label=f"the policy {ref}")
        self.hello: Optional[dict[str, Any]] = None

    def start(self) -> dict[str, Any]:
        """Start the program if its worker is not running, within :data:`HANDSHAKE_SECONDS` of its own (not
        the call's limit: a JVM's start-up is no slow answer; the command's deadline still applies);
        ``UserCodeFailure`` when it cannot start or its handshake changed since it was resolved."""
        if in_process():
            proc = _process(self.argv)
            hello = proc.hello if proc.running() else proc.start()
        elif self.worker.alive and self.hello is not None:
            return self.hello
        else:
            try:
                with call_limit_scope(HANDSHAKE_SECONDS, override=True):
                    hello = self.worker("start")
            except UserCodeFailure as exc:
                if exc.kind != "timeout":
                    raise
                raise UserCodeFailure("timeout", f"the policy wrote no handshake within {HANDSHAKE_SECONDS:g} s of "
                                                 f"its start", exc.output) from None
        if self.hello is not None and hello.get("name") != self.hello.get("name"):
            self.worker.stop()
            raise UserCodeFailure("protocol", f"the policy restarted as {hello.get('name')!r}, not "
                                              f"{self.hello.get('name')!r}")
        self.hello = hello
        return hello

    def __call__(self, op: str, *args: Any) -> Any:
        self.start()
        if in_process():
            from mechverify.isolation import Failure

            try:
                return _serve(self.argv, op, *args)
            except Failure as exc:
                raise UserCodeFailure(exc.kind, exc.text) from None
        return self.worker(op, *args)


def resolve_exec(ref: str) -> Mechanism:
    """The mechanism ``exec:COMMAND ARGS`` names (cached while what the command line names is unchanged:
    :func:`~mechverify.exec_protocol.command_digest`).  Starts the program to read its handshake; one-line
    ``InstanceError`` when the command is not found, the program cannot start, or its handshake is wrong
    (not JSON, another protocol version, a bad field)."""
    argv = command_argv(ref[len(PREFIX):].strip(), what=f"mechanism {ref}")
    digest = command_digest(argv)
    cached = _RESOLVED.get(ref)
    if cached is not None:
        if cached.source_hash == digest:
            return cached
        cached.func.link.worker.stop()  # type: ignore[attr-defined]
        del _RESOLVED[ref]
    link = _Link(ref, argv)
    try:
        hello = link.start()
    except UserCodeFailure as exc:
        raise InstanceError(f"mechanism {ref}: {exc.finding}") from None
    mech = _mechanism(ref, link, hello, digest)
    _RESOLVED[ref] = mech
    return mech


def _mechanism(ref: str, link: _Link, hello: dict[str, Any], digest: str) -> Mechanism:
    name = hello["name"]
    check_user_name(name, ref)
    setting = user_setting(name, dict(hello.get("setting") or {}))
    claims = user_claims(name, dict(hello.get("claims") or {}), hello.get("source", ""))
    order = None
    if "order" in hello["provides"]:
        import dataclasses

        setting = dataclasses.replace(setting, ordered=True)
        order = order_facet(lambda state: link("order", state.env, state.x), lambda a, i, j: a.cmp(i, j),
                            lambda a, j: a.shares[j],
                            (lambda a, q: a.queue_shares[q]) if hello.get("queue_shares") else None)

    def allocate(env: Environment, exact: bool = False) -> Allocation:
        return from_worker_reply(link("allocate", env, exact, name), env, name, exact)

    allocate.link = link  # type: ignore[attr-defined]
    allocate.worker = link.worker  # type: ignore[attr-defined]
    tol = hello.get("tolerance", DEFAULT_TOLERANCE)
    return Mechanism(name, hello.get("title") or f"policy {' '.join(link.argv)}", allocate, setting, claims,
                     hello.get("source") or ref, "", (), ref, digest, float(tol), origin="reference", order=order)
