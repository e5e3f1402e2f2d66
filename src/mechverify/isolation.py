"""A user's code runs in a worker process the verifier can stop.

A user's mechanism (and, later, a user's property) is untrusted code: it may loop, sleep, call
``sys.exit`` or ``os._exit``, crash the interpreter, exhaust memory or print into the verifier's output.
:class:`Worker` runs one function in a child process forked from the caller (so the function, defined in
a file, a module or a notebook, is already there; nothing is imported again) and talks to it over a pipe:

* every call has a time limit: the innermost :func:`call_limit_scope` (``run``/``check``/``audit``
  derive it from their budget, see :func:`mechverify.deadline.call_limit_for`), and never more than the
  time left before the command's deadline (:mod:`mechverify.deadline`).  A call that runs past its limit
  is killed (SIGKILL) and raises :class:`UserCodeFailure` of kind ``"timeout"`` -- "exceeds the time
  limit (T s) on this instance" --; one that runs into the command's deadline raises
  :class:`~mechverify.deadline.BudgetExhausted` (the budget ended: not a finding);
* the child's address space is limited (:data:`MEMORY_LIMIT` bytes above the verifier's own at the
  fork): a memory blow-up is a ``MemoryError`` in the child or its death, both findings;
* the child's stdout and stderr (file descriptors 1 and 2, so C code's output too) go to a file of
  their own; what a failing call printed is part of its finding, never mixed into the verifier's output;
* an exception, ``sys.exit``, ``os._exit``, a signal (a segfault) or an object that cannot be sent back
  is a :class:`UserCodeFailure` naming what happened; the child is started again for the next call;
* the child leads a process group of its own: a program it starts (:func:`spawn`: a policy in another
  language, ``mechanisms.core.exec_policy``) is killed with it -- at a time-out, at the deadline, on Ctrl-C,
  when the verifier exits or dies -- and nothing is left running.  Code in the child names a failure in its
  own words by raising :class:`Failure`.

The parent never trusts the child's word for a violation: a finding is re-checked by calling again
(``verifier.properties.runs``).  The worker path costs a pipe round trip per call (pickling the arguments
and the result): ``benchmarks/bench_isolation.py`` measures it against the in-process path.
``MECHVERIFY_IN_PROCESS=1`` runs user code in the verifier's own process (for a debugger; no limits).
"""
from __future__ import annotations

import gc
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import weakref

try:  # imported here, never in a forked child: after a fork from a process with other threads (pytest-xdist's,
    # a Dask client's) importlib's module locks may name threads the child does not have -- a KeyError on import
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]
import codecs

# what the child looks up when it opens its streams, looked up once here (the lookup caches it): a codec lookup
# that misses imports a module, and the child must import nothing (see ``resource`` above)
codecs.lookup("utf-8")
codecs.lookup_error("replace")
from typing import Any, Callable, Optional

from .deadline import BudgetExhausted, call_limit, seconds_left

__all__ = ["Worker", "UserCodeFailure", "Failure", "MEMORY_LIMIT", "in_process", "OUTPUT_CHARS", "spawn"]

#: bytes of address space a worker may add to what the verifier had mapped when it forked
MEMORY_LIMIT = int(os.environ.get("MECHVERIFY_MEMORY_LIMIT", str(2 << 30)))
#: characters of a failing call's captured output shown in its finding
OUTPUT_CHARS = 400
_KILL_WAIT = 2.0  # seconds to wait for a killed child to be reaped


def in_process() -> bool:
    """``MECHVERIFY_IN_PROCESS=1``: run user code in this process (no isolation, no time limit)."""
    return os.environ.get("MECHVERIFY_IN_PROCESS", "") not in ("", "0")


class UserCodeFailure(Exception):
    """A call of a user's function failed: ``kind`` is ``raised`` (an exception: ``text`` is ``Type:
    message``), ``timeout``, ``exit`` (``sys.exit``), ``died`` (``os._exit`` or a signal), ``memory`` or
    ``unsendable``; ``output`` is what the call printed (its last :data:`OUTPUT_CHARS` characters)."""

    def __init__(self, kind: str, text: str, output: str = "") -> None:
        self.kind, self.text, self.output = kind, text, output
        super().__init__(self.finding)

    @property
    def finding(self) -> str:
        """The one-line finding: what happened, then what the call printed (if anything)."""
        out = " ".join(self.output.split())
        if len(out) > OUTPUT_CHARS:
            out = "..." + out[-OUTPUT_CHARS:]
        return self.text + (f" [output: {out}]" if out else "")


class Failure(Exception):
    """Raised by the code a :class:`Worker` runs to name a failure in its own words: the call fails with
    :class:`UserCodeFailure` of this ``kind`` and ``text`` (e.g. ``mechanisms.core.exec_policy``: "died",
    "the policy process exited with code 3 before answering"; "protocol", "its answer is not JSON: ...").
    A kind in :data:`RESTART_KINDS` ends the child: the next call starts afresh."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(text)
        self.kind, self.text = kind, text


#: failure kinds after which the child is not reused (its state is unknown: the code meant to end, ran out of
#: memory, lost the program it talks to, or that program's stream is out of step)
RESTART_KINDS = ("exit", "memory", "died", "protocol")


def _describe(exc: BaseException) -> tuple[str, str]:
    """(kind, text) of an exception raised by the user's code in the child."""
    if isinstance(exc, Failure):
        return exc.kind, " ".join(str(exc.text).split())[:1000]
    if isinstance(exc, SystemExit):
        return "exit", f"called sys.exit({exc.code!r})"
    if isinstance(exc, MemoryError):
        return "memory", f"exceeds the memory limit ({MEMORY_LIMIT / 2**30:.3g} GiB) on this instance (MemoryError)"
    try:
        msg = " ".join(str(exc).split())
    except BaseException:  # noqa: BLE001 - an exception whose str() itself fails
        msg = "<message could not be shown>"
    return "raised", f"{type(exc).__name__}: {msg}"[:500]


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


# ------------------------------------------------------------------------------------------ the child
def spawn(argv: list[str], limits: bool = True) -> "subprocess.Popen":
    """Start a program from code a :class:`Worker` runs (a policy in another language): its standard input
    and output are pipes to the caller (binary), its standard error is the worker's output (shown in a failing
    call's finding), and it belongs to the worker's process group, so it dies with the worker -- at a time-out,
    at the deadline, on Ctrl-C, when the verifier exits or dies.  Its memory is limited to :data:`MEMORY_LIMIT`
    bytes of data (``RLIMIT_DATA``: heap and anonymous memory) instead of the worker's address-space limit:
    runtimes reserve far more address space than they use (a JVM reserves 1 GiB for class metadata alone).
    ``OSError`` when it cannot be started.  ``limits=False`` (user code run in the verifier's own process,
    :func:`in_process`): no limit, the verifier's own limits untouched."""
    rlim = resource if limits else None  # imported at module level (module docstring of the import)
    saved = []
    if rlim is not None:  # the limits are inherited at the fork: set them here, and restore ours after
        for which, soft in ((rlim.RLIMIT_AS, None), (rlim.RLIMIT_DATA, MEMORY_LIMIT)):
            try:
                old = rlim.getrlimit(which)
                hard = old[1]
                want = hard if soft is None else (soft if hard == rlim.RLIM_INFINITY else min(soft, hard))
                rlim.setrlimit(which, (want, hard))
                saved.append((which, old))
            except (ValueError, OSError):
                pass
    try:
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)
    finally:
        for which, old in saved:
            try:
                rlim.setrlimit(which, old)
            except (ValueError, OSError):
                pass


def _watch_parent(parent: int) -> None:
    """In the child: exit when the parent is gone (an orphan must not keep looping), with every program it
    started (its process group)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            try:
                os.killpg(0, signal.SIGKILL)  # the group this child leads: the programs it started, and itself
            except OSError:
                pass
            os._exit(0)


def _child(fn: Callable, conn, keep: tuple[int, ...], out: int, parent: int) -> None:  # pragma: no cover
    """The child's whole life (covered through the parent's tests: coverage does not follow a fork)."""
    try:
        try:
            os.setpgid(0, 0)  # a group of its own: killing it kills what the user's code started (spawn)
        except OSError:
            pass
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        fd = out  # an unnamed file, opened for appending by the parent
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        # Python-level streams on the new descriptors (the parent's may be a capture object, e.g. pytest's)
        sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", errors="replace", closefd=False)
        sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", errors="replace", closefd=False)
        sys.stdin = sys.__stdin__ = open(0, "r", closefd=False)
        # close every inherited descriptor but the pipe: a lock (flock) or socket of the parent's must not
        # live on in the child
        for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else ():
            n = int(name)
            if n > 2 and n not in keep:
                try:
                    os.close(n)
                except OSError:
                    pass
        try:
            if resource is None:
                raise ImportError("resource")
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            mapped = _mapped_bytes()
            if mapped:
                want = mapped + MEMORY_LIMIT
                if hard == resource.RLIM_INFINITY or want < hard:
                    resource.setrlimit(resource.RLIMIT_AS, (want, hard))
        except (ImportError, ValueError, OSError):
            pass
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
        # the answer to a memory blow-up, made while there is memory: building any other answer may fail then
        out_of_memory = pickle.dumps(("fail",) + _describe(MemoryError()), protocol=pickle.HIGHEST_PROTOCOL)
        while True:
            try:
                args = conn.recv()
            except (EOFError, OSError):
                break
            payload = out_of_memory
            try:
                try:
                    reply = ("ok", fn(*args))
                except BaseException as exc:  # noqa: BLE001 - whatever the user's code does is the answer
                    exc.__traceback__ = None  # the failed call's frames -- and what they hold -- go now
                    if isinstance(exc, MemoryError):
                        gc.collect()
                    reply = ("fail",) + _describe(exc)
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except BaseException:  # noqa: BLE001
                        pass
                try:
                    payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
                except MemoryError:
                    raise
                except BaseException as exc:  # noqa: BLE001
                    payload = pickle.dumps(("fail", "unsendable", f"returned an object that cannot be sent back "
                                            f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"))
            except MemoryError:  # no memory left to describe the failure: the answer made beforehand
                reply = None
                payload = out_of_memory
            if payload is out_of_memory:
                gc.collect()  # what the failed call held (a cycle through its frames) is freed before sending
            try:
                conn.send_bytes(payload)
            except MemoryError:
                gc.collect()
                conn.send_bytes(out_of_memory)
    except BaseException as exc:  # noqa: BLE001 - the child's own machinery failed: say so rather than vanish
        try:
            gc.collect()
            where = "; ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}"
                              for f in traceback.extract_tb(exc.__traceback__)[-4:])
            text = (f"the worker process failed before answering: {type(exc).__name__}: "
                    f"{' '.join(str(exc).split())[:200]} (at {where})")
            conn.send_bytes(pickle.dumps(("fail",) + (_describe(exc) if isinstance(exc, MemoryError) else ("died", text))))
        except BaseException:  # noqa: BLE001 - nothing more to be done: the parent sees the exit
            pass
    finally:
        os._exit(0)


def _mapped_bytes() -> int:
    """This process's virtual size in bytes (0 when unknown)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


# ----------------------------------------------------------------------------------------- the parent
def _kill_group(pid: int) -> None:
    """SIGKILL to the process group the (not yet reaped) child ``pid`` leads: what it started dies with it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _kill(pid: int) -> None:
    _kill_group(pid)
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        return
    end = time.monotonic() + _KILL_WAIT
    while time.monotonic() < end:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            return
        time.sleep(0.001)


class _Child:
    """The process side of a :class:`Worker`: its child's pid, the file its output goes to, and the process
    that forked it.  It holds nothing of the user's function, so the finaliser that ends the child when the
    worker is collected (or at exit) never keeps the worker alive."""

    def __init__(self) -> None:
        self.pid: Optional[int] = None
        self.out: Optional[int] = None  # the descriptor of an unnamed file (unlinked at once: nothing to clean up)
        self.owner = 0

    def end(self) -> None:
        """Kill the child and remove the output file (in the process that forked it only)."""
        if self.owner != os.getpid():
            return
        if self.pid:
            _kill(self.pid)
            self.pid = None
        if self.out is not None:
            try:
                os.close(self.out)
            except OSError:
                pass
            self.out = None


class Worker:
    """``fn(*args)`` in a child process with a time limit (see the module docstring); thread-safe.

    ``fn`` must return something picklable; it runs in a process forked at the first call (and again
    after a failure that ended the child)."""

    def __init__(self, fn: Callable, label: str = "user code") -> None:
        self.fn, self.label = fn, label
        self._p = _Child()
        self._conn = None
        self._lock = threading.Lock()
        self.calls = self.forks = 0
        weakref.finalize(self, self._p.end)  # when collected, and at exit

    def __getstate__(self):  # a Mechanism holding a worker can be pickled: the copy forks its own child
        return {"fn": self.fn, "label": self.label}

    def __setstate__(self, state) -> None:
        self.__init__(state["fn"], state["label"])

    # -------------------------------------------------------------------------------------- lifecycle
    def _start(self) -> None:
        from multiprocessing import Pipe

        if self._p.out is None or self._p.owner != os.getpid():
            fd, path = tempfile.mkstemp(prefix="mechverify-output-")
            try:
                self._p.out = os.open(path, os.O_RDWR | os.O_APPEND)
            finally:
                os.close(fd)
                os.unlink(path)  # unnamed from now on: no file is left behind, whatever ends this process
        parent_conn, child_conn = Pipe(duplex=True)
        me = os.getpid()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice by the child
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                parent_conn.close()
            finally:
                _child(self.fn, child_conn, (child_conn.fileno(), self._p.out), self._p.out, me)
        child_conn.close()
        self._p.pid, self._conn, self._p.owner = pid, parent_conn, me
        self.forks += 1

    @property
    def alive(self) -> bool:
        """A child of this process is running: the next call goes to it (else it starts a new one)."""
        return self._p.pid is not None and self._p.owner == os.getpid()

    def stop(self) -> None:
        """Kill the child (the next call starts a new one)."""
        pid, conn = self._p.pid, self._conn
        self._p.pid = self._conn = None
        if conn is not None:
            try:
                conn.close()
            except OSError:
                pass
        if pid and self._p.owner == os.getpid():
            _kill(pid)

    def _output(self) -> str:
        try:
            size = os.fstat(self._p.out).st_size  # type: ignore[arg-type]
            data = os.pread(self._p.out, min(size, 4 * OUTPUT_CHARS), max(0, size - 4 * OUTPUT_CHARS))  # type: ignore[arg-type]
        except (OSError, TypeError):
            return ""
        return data[-4 * OUTPUT_CHARS:].decode("utf-8", "replace")

    def _clear_output(self) -> None:
        try:
            os.ftruncate(self._p.out, 0)  # type: ignore[arg-type]
        except (OSError, TypeError):
            pass

    def _death(self) -> str:
        """Reap the dead child: how it ended."""
        pid = self._p.pid
        self._p.pid = None
        if self._conn is not None:
            try:
                self._conn.close()
            except OSError:
                pass
            self._conn = None
        if not pid:
            return "the worker process ended"
        status = 0
        try:
            for _ in range(int(_KILL_WAIT / 0.001)):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.001)
            else:
                _kill(pid)
                return "the worker process stopped answering"
        except ChildProcessError:
            _kill_group(pid)
            return "the worker process ended"
        # what it started must not outlive it (a group outlives its reaped leader while it has members, and
        # Linux does not reuse its id until then)
        _kill_group(pid)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            extra = " (out of memory?)" if sig == signal.SIGKILL else ""
            return f"the process was killed by {_signal_name(sig)}{extra}"
        return f"the process exited with code {os.WEXITSTATUS(status)} (os._exit or a crash of the interpreter)"

    # ------------------------------------------------------------------------------------------- calls
    def __call__(self, *args: Any) -> Any:
        """``fn(*args)`` in the child, within the call limit and the deadline."""
        with self._lock:
            return self._call(args)

    def _call(self, args: tuple) -> Any:
        limit = call_limit()
        left = seconds_left()
        if left is not None and left <= 0:
            raise BudgetExhausted(f"before a call of {self.label}")
        wait = limit if left is None else min(limit, left)
        if self._p.pid is None or self._p.owner != os.getpid():
            self._start()
        self._clear_output()
        self.calls += 1
        try:
            self._conn.send(args)  # type: ignore[union-attr]
            ready = self._conn.poll(wait)  # type: ignore[union-attr]
            if ready:
                reply = pickle.loads(self._conn.recv_bytes())  # type: ignore[union-attr]
            else:
                reply = None
        except (EOFError, OSError, pickle.UnpicklingError):
            text = self._death()
            raise UserCodeFailure("died", text, self._output()) from None
        except BaseException:  # Ctrl-C / SIGTERM while waiting: the child's state is unknown
            self.stop()
            raise
        if reply is None:
            self.stop()
            if wait < limit:  # the command's deadline came first: the budget ended, not a finding
                raise BudgetExhausted(f"a call of {self.label}")
            raise UserCodeFailure("timeout", f"exceeds the time limit ({limit:g} s) on this instance",
                                  self._output())
        if reply[0] == "ok":
            return reply[1]
        _, kind, text = reply
        if kind in RESTART_KINDS:
            self.stop()  # the code meant to end, or its process may be in no state to go on: start afresh
        raise UserCodeFailure(kind, text, self._output())
