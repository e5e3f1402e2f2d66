"""Running z3 queries: in worker processes with HARD wall-clock limits, in parallel.

A query travels as SMT-LIB text (``z3.Solver.sexpr()``) plus the names whose model values are wanted,
so a worker needs nothing but z3.  z3's own ``timeout`` is set to the job's limit; a worker that
overruns it by more than a grace period is killed and the job reported ``unknown`` ("hard timeout"),
so a stuck nonlinear query can never hang a certification.  Every status other than ``sat`` /
``unsat`` is ``unknown`` with z3's reason.
"""
from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import time
from dataclasses import dataclass, field
from multiprocessing.connection import wait as mp_wait
from typing import Any, Iterable, Iterator, Optional, Sequence

import z3

from .solvers import SolverStatus, solve

__all__ = ["Job", "JobResult", "solve_text", "run_jobs", "first_sat", "start_workers", "run_on", "release", "to_smt2", "default_jobs", "split_disjunctions", "split_jobs",
           "BUDGET_REASON", "budget_cut"]

GRACE = 2.0  # seconds a worker may overrun its job's own limit before it is killed
DEADLINE_GRACE = 0.05  # ... and the command's deadline: its answer would come too late to be used

#: the reason of a job the deadline stopped (not started, or z3 stopped at the deadline)
BUDGET_REASON = "time budget exhausted"


def budget_cut(reasons: Iterable[str], deadline: Optional[float]) -> bool:
    """Were undecided queries (their ``reasons``) left undecided by the time budget -- a job the deadline
    stopped, or any undecided job once the deadline has passed (more time might decide it)?"""
    return any(str(r).startswith(BUDGET_REASON) for r in reasons) or \
        (deadline is not None and time.monotonic() >= deadline)


def default_jobs() -> int:
    """Worker processes by default: one per core."""
    return max(1, os.cpu_count() or 1)


@dataclass
class Job:
    """One query: SMT-LIB text, the names whose values a model should return, a time limit; the solver that
    answers it (``solvers.SOLVERS``: z3 reads the assertions, cvc5 a whole SMT-LIB2 file) and whether an
    UNSAT answer should come with a proof (cvc5)."""

    key: Any
    smt2: str
    names: Sequence[str] = ()  # constants whose model values are returned (as Fractions / approximations)
    timeout: float = 60.0  # seconds
    logic: str = "QF_NRA"
    solver: str = "z3"
    proof: bool = False
    grace: float = GRACE  # seconds the worker may overrun ``timeout`` before it is killed


@dataclass
class JobResult:
    """A query's outcome: ``sat`` (with values) | ``unsat`` | ``unknown`` (with the solver's reason) |
    ``unsupported`` (cvc5 cannot read it)."""

    key: Any
    status: str  # 'sat' | 'unsat' | 'unknown' | 'incomplete' | 'unsupported'
    seconds: float
    values: dict = field(default_factory=dict)  # name -> Fraction (algebraic numbers: 40-digit approximations)
    algebraic: list = field(default_factory=list)  # names whose value was irrational (approximated)
    reason: str = ""
    proof: str = ""  # cvc5's proof of an UNSAT answer (``Job.proof``)


def to_smt2(constraints: Iterable[Any]) -> str:
    """Constraints as SMT-LIB text (what a worker process receives)."""
    s = z3.Solver()
    for c in constraints:
        s.add(c)
    return s.sexpr()


def solve_text(smt2: str, names: Sequence[str], timeout: float, logic: str = "QF_NRA", solver: str = "z3",
               proof: bool = False) -> tuple:
    """Solve in this process with ``solver`` (``solvers.SOLVERS``); returns ``(status, seconds, values,
    algebraic, reason, proof)``."""
    return tuple(solve(solver, smt2, names, timeout, logic, proof))


def _quiet_child() -> None:  # pragma: no cover - runs in a child process
    """A z3 worker is its parent's business: Ctrl-C (sent to the whole process group) and SIGTERM are
    left to the parent, which stops the worker (a worker never prints a ``KeyboardInterrupt`` traceback;
    the handler the command installed for SIGTERM is not inherited); on Linux the worker dies with its
    parent (a sweep's cell process that is stopped leaves no z3 process behind)."""
    import signal
    import sys

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _worker(conn, preload: Sequence[str] = ()) -> None:  # pragma: no cover - runs in a child process
    _quiet_child()
    for module in preload:  # a solver's module imported while the parent goes on (cvc5: ~0.05 s)
        try:
            __import__(module)
        except ImportError:
            pass
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        key, smt2, names, timeout, logic, solver, proof = msg
        try:
            out = solve_text(smt2, names, timeout, logic, solver, proof)
        except Exception as exc:  # never let a worker die silently
            out = (SolverStatus.UNKNOWN, 0.0, {}, [], f"worker error: {type(exc).__name__}: {exc}", "")
        conn.send((key,) + out)


class _Worker:
    def __init__(self, ctx, preload: Sequence[str] = ()) -> None:
        self.parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, tuple(preload)), daemon=True)
        self.proc.start()
        child.close()
        self.job: Optional[Job] = None
        self.started = 0.0

    def kill(self) -> None:
        """Kill the worker process (a job overran its limit)."""
        try:
            self.proc.kill()
        finally:
            self.proc.join(timeout=5)
            self.parent.close()

    def ask_exit(self) -> None:
        """Ask the idle worker to exit (:meth:`stop` waits for it)."""
        try:
            self.parent.send(None)
        except (OSError, BrokenPipeError):
            pass

    def stop(self, asked: bool = False) -> None:
        """Ask the idle worker to exit (unless ``asked`` already); kill it if it does not."""
        if not asked:
            self.ask_exit()
        self.proc.join(timeout=2)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(timeout=5)
        self.parent.close()


def _mp_context():
    methods = mp.get_all_start_methods()
    return mp.get_context("fork" if "fork" in methods else "spawn")


def run_jobs(jobs: Sequence[Job], n_workers: int = 0, deadline: Optional[float] = None) -> Iterator[JobResult]:
    """Yield results as jobs finish (any order).  ``n_workers = 0`` solves in this process (z3's own
    timeout only; also inside a daemonic process, which cannot start workers).  ``deadline`` (``time.monotonic()`` value) cuts every job's limit; jobs that cannot
    start before it are reported ``unknown`` ("budget exhausted").  Closing the generator early
    kills the workers (used to stop at the first counterexample)."""
    pending = list(jobs)
    if n_workers > 0 and mp.current_process().daemon:
        n_workers = 0  # a daemonic process (a Dask or pool worker running a sweep's cell) may not have children
    if n_workers <= 0:
        for job in pending:
            left = job.timeout if deadline is None else min(job.timeout, deadline - time.monotonic())
            if left <= 0.05:
                yield JobResult(job.key, SolverStatus.UNKNOWN, 0.0, reason=BUDGET_REASON)
                continue
            st, dt, vals, alg, why, pf = solve_text(job.smt2, job.names, left, job.logic, job.solver, job.proof)
            yield JobResult(job.key, st, dt, vals, alg, _reason(st, why, left < job.timeout), pf)
        return
    ctx = _mp_context()
    workers: list[_Worker] = []
    try:
        yield from _drive(pending, workers, n_workers, deadline, lambda: _Worker(ctx))
    finally:
        release(workers)


def first_sat(jobs: Sequence[Job], n_workers: int = 0,
              deadline: Optional[float] = None) -> tuple[Optional[JobResult], list[str]]:
    """Run ``jobs`` (:func:`run_jobs`) until one is ``sat`` (the rest are stopped): that result (None if none
    is) and the reasons of the jobs left ``unknown`` before it (a vacuity control: one witness is enough)."""
    unknown: list[str] = []
    gen = run_jobs(jobs, n_workers, deadline)
    try:
        for r in gen:
            if r.status == SolverStatus.SAT:
                return r, unknown
            if r.status == SolverStatus.UNKNOWN:
                unknown.append(r.reason)
    finally:
        gen.close()
    return None, unknown


def start_workers(n_workers: int, preload: Sequence[str] = ()) -> list:
    """``n_workers`` worker processes, forked now (in the calling thread), for :func:`run_on`; each imports the
    modules ``preload`` first; ``[]`` in a daemonic process."""
    if n_workers <= 0 or mp.current_process().daemon:
        return []
    ctx = _mp_context()
    return [_Worker(ctx, preload) for _ in range(n_workers)]


def run_on(workers: list, jobs: Sequence[Job], deadline: Optional[float] = None,
           n_workers: int = 0) -> Iterator[JobResult]:
    """:func:`run_jobs` on ``workers`` (:func:`start_workers`), which stay alive for the next call (the
    caller releases them: :func:`release`).  ``n_workers = 0``: no process is forked (a thread may drive
    them), a killed worker is not replaced, and the jobs left when none is are ``unknown`` ("no worker
    left"); otherwise workers are forked while fewer than ``n_workers`` run.  Closing the generator early
    kills the busy workers."""
    ctx = _mp_context() if n_workers > 0 else None
    finished = False
    try:
        yield from _drive(list(jobs), workers, n_workers or len(workers), deadline,
                          (lambda: _Worker(ctx)) if ctx is not None else None)
        finished = True
    finally:
        if not finished:
            for w in [w for w in workers if w.job is not None]:
                w.kill()
                workers.remove(w)


def release(workers: list) -> None:
    """Stop the workers: a busy one is killed; the idle ones are asked to exit all at once, then joined."""
    idle = []
    for w in workers:
        if w.job is not None:
            w.kill()
        else:
            w.ask_exit()
            idle.append(w)
    for w in idle:
        w.stop(asked=True)
    workers.clear()


def _drive(pending: list, workers: list, n_workers: int, deadline: Optional[float], spawn) -> Iterator[JobResult]:
    """The pool's loop: start jobs on idle workers (``spawn()`` forks a new one while fewer than
    ``n_workers`` run; ``None``: never), yield results as they come, kill a worker whose job overran its hard
    limit."""
    clipped: dict = {}  # job key -> its limit is the time left before the deadline

    def hard_limit(w: _Worker) -> float:
        """When a busy worker is killed: its job's limit plus its grace (:data:`GRACE`), never much past the
        deadline."""
        t = w.started + w.job.timeout + w.job.grace
        return t if deadline is None else min(t, deadline + DEADLINE_GRACE)
    while pending or any(w.job is not None for w in workers):
        now = time.monotonic()
        # start jobs on idle workers
        while pending:
            idle = next((w for w in workers if w.job is None), None)
            if idle is None and len(workers) < n_workers and spawn is not None:
                idle = spawn()
                workers.append(idle)
            if idle is None:
                break
            job = pending.pop(0)
            left = job.timeout if deadline is None else min(job.timeout, deadline - now)
            if left <= 0.05:
                yield JobResult(job.key, SolverStatus.UNKNOWN, 0.0, reason=BUDGET_REASON)
                continue
            clipped[job.key] = left < job.timeout
            job = Job(job.key, job.smt2, job.names, left, job.logic, job.solver, job.proof, job.grace)
            idle.job, idle.started = job, time.monotonic()
            idle.parent.send((job.key, job.smt2, list(job.names), job.timeout, job.logic, job.solver, job.proof))
        busy = [w for w in workers if w.job is not None]
        if not busy:
            if pending and not workers:  # run_on: every worker was killed
                for job in pending:
                    yield JobResult(job.key, SolverStatus.UNKNOWN, 0.0, reason="no worker left")
                pending.clear()
            continue
        limit = min(hard_limit(w) for w in busy)
        ready = mp_wait([w.parent for w in busy], timeout=max(0.0, limit - time.monotonic()))
        for w in busy:
            if w.parent in ready:
                try:
                    key, st, dt, vals, alg, why, pf = w.parent.recv()
                except (EOFError, OSError):
                    job = w.job
                    w.kill()
                    workers.remove(w)
                    yield JobResult(job.key, SolverStatus.UNKNOWN, time.monotonic() - w.started,
                                    reason="worker died (out of memory?)")
                    continue
                w.job = None
                yield JobResult(key, st, dt, vals, alg, _reason(st, why, clipped.get(key, False)), pf)
        now = time.monotonic()
        for w in [w for w in workers if w.job is not None and now > hard_limit(w)]:
            job = w.job
            w.kill()
            workers.remove(w)
            at_deadline = deadline is not None and now >= deadline
            yield JobResult(job.key, SolverStatus.UNKNOWN, now - w.started,
                            reason=f"{BUDGET_REASON} ({job.solver} worker stopped at the deadline)" if at_deadline
                            else "hard timeout (worker killed)")


def _reason(status: str, why: str, clipped: bool) -> str:
    """z3's reason for ``unknown``; a z3 timeout whose limit was the time left before the deadline is
    the budget running out (:data:`BUDGET_REASON`)."""
    if status == SolverStatus.UNKNOWN and clipped and why in ("timeout", "canceled"):
        return f"{BUDGET_REASON} (the solver stopped at the deadline)"
    return why


def split_disjunctions(constraints: Sequence[Any], cap: int = 256) -> list:
    """Case split on the top-level disjunctions (which term attains a min, which row is tight, ...):
    the disjunctions are taken in order while the number of combinations stays <= ``cap``; every
    returned constraint list replaces each chosen ``Or`` by one of its arguments.  The union of the
    returned cases is equivalent to ``constraints`` (each ``Or`` is split exhaustively)."""
    cons = list(constraints)
    chosen, total = [], 1
    for i, c in enumerate(cons):
        if z3.is_or(c):
            n = c.num_args()
            if total * n > cap:
                continue
            chosen.append(i)
            total *= n
    if not chosen:
        return [(None, cons)]
    out = []
    for combo in itertools.product(*[range(cons[i].num_args()) for i in chosen]):
        sub = list(cons)
        for i, a in zip(chosen, combo):
            sub[i] = cons[i].arg(a)
        out.append((combo, sub))
    return out


def split_jobs(key: Any, constraints: Sequence[Any], names: Sequence[str], timeout: float, cap: int = 256) -> list:
    """Jobs ``(key, combo)``, one per sub-case of :func:`split_disjunctions` of ``constraints``."""
    from .outcome import tick

    jobs = []
    subs = split_disjunctions(constraints, cap)
    for combo, sub in subs:
        tick(f"writing the sub-queries of a case ({len(jobs)} of {len(subs)})")
        jobs.append(Job((key, combo), to_smt2(sub), names, timeout))
    return jobs
