"""Where a campaign's cells run: in this process, in a local process pool, or on a Dask cluster.

Every executor has the same four operations, used by ``verifier.campaign``'s one coordinator loop:
``slots`` (how many cells may run at once), ``submit(fn, arg)`` (returns a handle), ``wait_any()`` (the
handles that finished: ``(handle, value, error)``, blocking until at least one did) and ``close(cancel)``.
``fn`` and ``arg`` must be picklable (a top-level function and plain data): workers look mechanisms up by
name -- except in :class:`InProcess` (``in_process``), which runs them in the coordinator's process, objects
and all (a plain function given to the Python API, a test's certifier).  An ``error`` is trouble OUTSIDE the cell (a worker process died, the cluster lost the task); the
coordinator retries such a cell once and then reports it as failed -- a cell's own exception is caught
in the worker and comes back as a failed result (``verifier.campaign.run_task``).
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Any, Callable, Optional

__all__ = ["Executor", "InProcess", "LocalPool", "DaskCluster", "make_executor", "default_jobs", "ExecutorError"]


class ExecutorError(Exception):
    """The executor cannot be set up (e.g. no scheduler at the given address): a one-line user error."""


def default_jobs() -> int:
    """Local worker processes by default: one per core."""
    return max(1, os.cpu_count() or 1)


class Executor:
    """The interface (see the module docstring)."""

    name = "executor"
    slots = 1
    asynchronous = True  # submit returns at once (False: it runs the cell)
    in_process = False  # True: cells run in this process (no pickling: a task may carry objects)

    def submit(self, fn: Callable[[Any], Any], arg: Any) -> Any:
        """Start ``fn(arg)``; returns a handle."""
        raise NotImplementedError

    def wait_any(self, timeout: Optional[float] = None) -> list[tuple[Any, Any, Optional[BaseException]]]:
        """Block until at least one submitted call finished, or ``timeout`` seconds passed (``None``: no
        limit; then the list may be empty); ``(handle, value, error)`` of those that did."""
        raise NotImplementedError

    def close(self, cancel: bool = False) -> None:
        """Release the workers; ``cancel``: stop the calls still running (Ctrl-C, SIGTERM)."""

    def describe(self) -> str:
        """One line for the progress output."""
        return f"{self.name}, {self.slots} at a time"


class InProcess(Executor):
    """``--jobs 1``: each cell runs in this process when submitted (no pickling, no extra processes)."""

    name = "in-process"
    asynchronous = False
    in_process = True

    def __init__(self) -> None:
        self._done: list[tuple[Any, Any, Optional[BaseException]]] = []
        self._n = 0

    def submit(self, fn, arg):
        """Run ``fn(arg)`` now; its value is handed out by the next :meth:`wait_any`."""
        self._n += 1
        self._done.append((self._n, fn(arg), None))
        return self._n

    def wait_any(self, timeout=None):
        """What :meth:`submit` ran."""
        out, self._done = self._done, []
        return out


def _worker_init() -> None:
    """In a local worker: Ctrl-C is the coordinator's business (it stops the workers); SIGTERM, which the
    coordinator sends to stop a worker (``close(cancel=True)``), ends it silently -- the command's own
    handler (SIGTERM as ``KeyboardInterrupt``) is inherited through fork and would print a traceback from
    every worker; the worker dies with the coordinator (Linux), so a kill -9 of the command leaves no
    orphan searching on."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - best effort
            pass


class LocalPool(Executor):
    """``--executor local --jobs N``: a ``concurrent.futures.ProcessPoolExecutor`` of N processes.  A pool
    whose worker died (``BrokenProcessPool``) is replaced before the next submit."""

    name = "local processes"

    def __init__(self, jobs: int) -> None:
        self.slots = max(1, jobs)
        self._pool = None
        self._futures: set = set()

    def _ensure(self):
        import concurrent.futures as cf

        if self._pool is None or getattr(self._pool, "_broken", False):
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = cf.ProcessPoolExecutor(max_workers=self.slots, initializer=_worker_init)
        return self._pool

    def submit(self, fn, arg):
        """Queue ``fn(arg)`` in the pool."""
        fut = self._ensure().submit(fn, arg)
        self._futures.add(fut)
        return fut

    def wait_any(self, timeout=None):
        """The futures that finished (a dead worker's: the error)."""
        import concurrent.futures as cf

        done, _ = cf.wait(self._futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        out = []
        for fut in done:
            self._futures.discard(fut)
            err = fut.exception()
            out.append((fut, None if err else fut.result(), err))
        return out

    def close(self, cancel: bool = False) -> None:
        """Shut the pool down; ``cancel`` also terminates the workers still searching."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if cancel:
            procs = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for p in procs:
                try:
                    p.terminate()
                except Exception:  # noqa: BLE001 - already gone
                    pass
            for p in procs:
                p.join(timeout=5)
        else:
            pool.shutdown(wait=True)


def _refused(scheduler: Any, timeout: float) -> None:
    """A ``tcp://HOST:PORT`` nobody listens on is an error at once (Dask's client retries a refused
    connection until its timeout, 10 s); anything else (a cluster object, another protocol, a slow network)
    is left to the client."""
    import socket
    from urllib.parse import urlsplit

    if not isinstance(scheduler, str) or not scheduler.startswith("tcp://"):
        return
    try:
        url = urlsplit(scheduler)
        host, port = url.hostname, url.port
    except ValueError:
        return
    if not host or not port:
        return
    try:
        socket.create_connection((host, port), timeout=min(timeout, 5.0)).close()
    except ConnectionRefusedError as exc:
        raise ExecutorError(f"--scheduler: cannot connect to {scheduler!r} (connection refused: "
                            f"no scheduler listens there)") from exc
    except OSError:
        return  # unreachable, a time-out, a name that does not resolve: the client says what it finds


class DaskCluster(Executor):
    """``--executor dask --scheduler tcp://HOST:PORT``: cells are Dask tasks (``retries=1``; a worker that
    dies has its task rescheduled on another by the scheduler).  ``slots`` = the cluster's worker threads
    when connecting; cells are handed out that many at a time, so the budget shares stay meaningful."""

    name = "dask"

    def __init__(self, scheduler: Any, timeout: float = 10.0) -> None:
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover - a dependency
            raise ExecutorError(f"--executor dask: the 'distributed' package is not installed ({exc})") from exc
        _refused(scheduler, timeout)
        try:
            self.client = Client(scheduler, timeout=f"{timeout}s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ExecutorError(f"--scheduler: cannot connect to {scheduler!r} ({exc})") from exc
        self.scheduler = scheduler
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            self.client.close()
            raise ExecutorError(f"--scheduler: no worker connected to {scheduler!r} within {timeout:g} s") from exc
        self.slots = max(1, sum(self.client.nthreads().values()))
        self._futures: set = set()

    def submit(self, fn, arg):
        """A Dask task (not cached: ``pure=False``), retried once on another worker."""
        fut = self.client.submit(fn, arg, pure=False, retries=1)
        self._futures.add(fut)
        return fut

    def wait_any(self, timeout=None):
        """The tasks that finished or failed."""
        from distributed import wait

        with self.client.as_current():  # not the process's default client: this one
            try:
                done = wait(list(self._futures), timeout=timeout, return_when="FIRST_COMPLETED").done
            except TimeoutError:  # distributed's own (a subclass on Python >= 3.11) or the builtin
                return []
        out = []
        for fut in done:
            self._futures.discard(fut)
            if fut.status == "finished":
                out.append((fut, fut.result(), None))
            else:
                try:
                    err = fut.exception() or RuntimeError(f"task {fut.status}")
                except BaseException as exc:  # noqa: BLE001 - cancelled / lost
                    err = exc
                out.append((fut, None, err))
        return out

    def close(self, cancel: bool = False) -> None:
        """Cancel what is left (``cancel``) and disconnect (the cluster keeps running)."""
        try:
            if cancel and self._futures:
                self.client.cancel(list(self._futures))
        finally:
            self._futures.clear()
            self.client.close()

    def describe(self) -> str:
        """The scheduler and its worker threads."""
        return f"dask at {self.scheduler}, {self.slots} worker threads"


def make_executor(kind: str = "local", jobs: Optional[int] = None, scheduler: Any = None,
                  cells: Optional[int] = None) -> Executor:
    """The executor a command asked for: ``local`` (``jobs`` processes, default one per core, never more
    than ``cells``; one runs in-process) or ``dask`` (``scheduler``: an address or a ``LocalCluster``)."""
    if kind == "dask":
        if scheduler is None:
            raise ExecutorError("--scheduler: required with --executor dask (e.g. tcp://127.0.0.1:8786)")
        return DaskCluster(scheduler)
    if kind != "local":
        raise ExecutorError(f"--executor: unknown executor {kind!r} (local, dask)")
    n = default_jobs() if jobs is None else jobs
    if cells is not None:
        n = min(n, max(1, cells))
    return InProcess() if n <= 1 else LocalPool(n)
