"""The second solver behind every ``certified`` verdict (docs/z3.md, "Second solver and export").

A certified verdict rests on queries with known answers: every query of the cases UNSAT, the single-side
pre-checks that pruned a case UNSAT, and one vacuity control SAT.  :class:`Ledger` records them as z3 answered
them (``Obligation``: the query's assertions, its role, what z3 said) and every query that was BUILT (the
``plan``: what ``replay`` compares an exported query with).  :func:`second_opinion` then gives each
obligation, as the SMT-LIB2 file ``certify --export`` writes (``solvers.smt2_file``), to cvc5 -- in worker
processes with hard time limits, before the same deadline: coverings first, then cvc5's default procedure,
then a longer coverings retry (:func:`ask_cvc5`), the first pass running ahead while the engine works on its
vacuity control (:class:`Ahead`) -- and keeps ``certified`` only if cvc5 answers every one as z3 did.  A disagreement, a cvc5 error or time-out is ``unknown`` with a line saying
which solver said what; a query cvc5 cannot read (``unsupported``) or cannot decide (``incomplete``: its
nonlinear procedure gave up before its limit, and so did the coverings-only retry, ``solvers.COVERINGS``)
leaves the verdict certified by z3, and the verdict says so, with the count and the logic
(``details["agreement"]``: ``z3; cvc5 agrees on 44 of 55 queries, incomplete on 11: QF_NRA``).
"""
from __future__ import annotations

import multiprocessing as mp
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from mechverify.deadline import BudgetExhausted, budget_note

from ...results import Verdict
from .pool import BUDGET_REASON, Job, budget_cut, release, run_jobs, run_on, start_workers
from .solvers import COVERINGS, logic_of, proof_holes, smt2_file, version

__all__ = ["Obligation", "Ledger", "second_opinion", "settle", "SECOND", "agreement_phrase"]

#: the second solver
SECOND = "cvc5"

#: roles of a query in a certificate, and the answer the verdict needs
EXPECTED = {"query": "unsat", "pruned": "unsat", "control": "sat"}

#: seconds the coverings-only retry of an ``incomplete`` answer gets per query (at most the time left)
RETRY_SECONDS = 20.0


@dataclass
class Obligation:
    """One query a certified verdict rests on: its assertions (``body``), where it comes from (``stage``:
    which lemma or encoding; ``role``: query | pruned | control; ``key``: the case and split), the answer the
    verdict needs, and each solver's answer."""

    stage: str
    role: str
    key: str
    body: str
    answers: dict = field(default_factory=dict)  # solver -> status
    seconds: dict = field(default_factory=dict)  # solver -> seconds
    reasons: dict = field(default_factory=dict)  # solver -> why unknown / unsupported
    proof: str = ""
    _logic: Optional[str] = None

    @property
    def expected(self) -> str:
        return EXPECTED[self.role]

    @property
    def logic(self) -> str:
        if self._logic is None:
            self._logic = logic_of(self.body)
        return self._logic

    def comment(self, title: str) -> list:
        """The file's comment lines: what the query is and the answer the verdict needs."""
        return [title, f"stage {self.stage}, {self.role} {self.key}", f"expected: {self.expected}"]

    def text(self, title: str) -> str:
        """The SMT-LIB2 file of this query (``solvers.smt2_file``)."""
        return smt2_file(self.body, self.logic, self.comment(title))


class Ledger:
    """The queries of one certification: every one built (``plan``: (stage, role, key) -> assertions) and the
    ones its verdict rests on (``obligations``, in a deterministic order).

    ``ahead = (n_workers, deadline, title)``: cvc5 will be asked.  Its worker processes are forked at once
    and import cvc5 while the engine cross-checks and encodes; :meth:`start_ahead` puts them to work
    (:class:`Ahead`); :meth:`take` hands them, with what they found, to :func:`second_opinion`;
    :meth:`cancel_ahead` stops them when no verdict needs them."""

    def __init__(self, ahead: Optional[tuple] = None) -> None:
        self.plan: dict = {}
        self.obligations: list[Obligation] = []
        self._ahead_args = ahead
        self._procs: list = start_workers(ahead[0], preload=("cvc5",)) if ahead is not None else []
        self.ahead: Optional[Ahead] = None

    def start_ahead(self) -> None:
        """Start cvc5's first pass (:class:`Ahead`) on the obligations so far, while the engine goes on (its
        vacuity control): called once the main queries are all UNSAT.  Nothing without ``ahead``."""
        if self._ahead_args is None or self.ahead is not None or not self._procs:
            return
        _, deadline, title = self._ahead_args
        procs, self._procs = self._procs, []
        self.ahead = Ahead([_ask(i, ob, title, False) for i, ob in enumerate(self.obligations)], procs, deadline)

    def take(self) -> tuple:
        """What cvc5's first pass found (key -> ``JobResult``) and the live workers (the caller releases them)."""
        if self.ahead is not None:
            done, procs = self.ahead.collect()
            self.ahead = None
            return done, procs
        procs, self._procs = self._procs, []
        return {}, procs

    def cancel_ahead(self) -> None:
        """Stop the first pass and the workers if nobody took them (the verdict was not certified, or the
        command stopped)."""
        if self.ahead is not None:
            self.ahead.cancel()
            self.ahead = None
        release(self._procs)

    def planned(self, stage: str, role: str, jobs) -> None:
        """Record the built ``jobs`` of ``stage`` in ``role``."""
        for j in jobs:
            self.plan[(stage, role, repr(j.key))] = j.smt2

    def proved(self, stage: str, role: str, pairs) -> None:
        """Record ``(job, result)`` pairs the verdict rests on, sorted by key (results come in any order)."""
        for job, r in sorted(pairs, key=lambda p: repr(p[0].key)):
            self.obligations.append(Obligation(stage, role, repr(job.key), job.smt2, {"z3": r.status},
                                               {"z3": round(r.seconds, 3)}))

    def extend(self, other: "Ledger") -> None:
        """Add ``other``'s plan and obligations (a lemma's queries the verdict rests on)."""
        self.plan.update(other.plan)
        self.obligations.extend(other.obligations)


def agreement_phrase(details: dict) -> str:
    """``z3 and cvc5 agree`` / ``z3; cvc5 agrees on k of N queries, incomplete on m: QF_NRA`` / ``z3; cvc5:
    unsupported fragment (...)`` / ``z3`` (no second solver asked)."""
    return details.get("agreement") or "z3"


#: the first try of a nonlinear query (with worker processes): cylindrical algebraic coverings alone
#: (``solvers.COVERINGS``), 3-8x faster than cvc5's default on the encodings' QF_NRA queries but deaf to
#: cvc5's time limit, so a worker is killed after ``max(FIRST_SECONDS, FIRST_FACTOR x z3's seconds)``
FIRST_SECONDS = 0.5
FIRST_FACTOR = 4.0


@dataclass
class Ask:
    """One query for cvc5: its SMT-LIB2 file, its logic, whether an UNSAT answer should come with a proof,
    and z3's seconds on it (how long coverings may try first)."""

    key: Any
    text: str
    logic: str
    proof: bool = False
    hint: float = 0.0


@dataclass
class Reply:
    """cvc5's answer to an :class:`Ask`: the status, the seconds of every try, why (the history of an
    undecided answer) and the proof."""

    status: str
    seconds: float = 0.0
    reason: str = ""
    proof: str = ""


def _nonlinear(logic: str) -> bool:
    return logic in ("", "ALL") or "N" in logic.replace("QF_", "")


def _ask(i: int, ob: Obligation, title: str, proofs: bool) -> Ask:
    return Ask(i, ob.text(title), ob.logic, proofs and ob.expected == "unsat" and ob.logic == "QF_LRA",
               ob.seconds.get("z3", 0.0))


def _first_jobs(asks: list, deadline: Optional[float], timeout: float) -> list:
    """The coverings-first jobs: every nonlinear query without a proof asked for, killed after
    ``max(FIRST_SECONDS, FIRST_FACTOR x z3's seconds)`` (no grace: coverings do not stop by themselves)."""
    left = timeout if deadline is None else min(timeout, deadline - time.monotonic())
    return [Job(a.key, a.text, (), timeout=max(0.1, min(left, max(FIRST_SECONDS, FIRST_FACTOR * a.hint))),
                logic=a.logic, solver=COVERINGS, grace=0.0)
            for a in asks if _nonlinear(a.logic) and not a.proof]


class Ahead:
    """cvc5's first pass (coverings alone, :func:`ask_cvc5` step 1) on the queries already answered, run by a
    thread over the ledger's worker processes (forked in the main thread), while the engine builds and solves
    its vacuity control; on an idle core that hides most of cvc5's time (docs/performance.md, "Second
    solver").  :meth:`collect` waits for it; :meth:`cancel` kills its workers."""

    def __init__(self, asks: list, workers: list, deadline: Optional[float]) -> None:
        self.results: dict = {}
        self._workers = workers
        self._thread: Optional[threading.Thread] = None
        jobs = _first_jobs(asks, deadline, 600.0)
        self.keys = {j.key for j in jobs}
        if jobs and workers:
            self._thread = threading.Thread(target=self._run, args=(jobs, deadline), name="cvc5-ahead",
                                            daemon=True)
            self._thread.start()

    def _run(self, jobs: list, deadline: Optional[float]) -> None:
        try:
            for r in run_on(self._workers, jobs, deadline):
                self.results[r.key] = r
        except Exception:  # noqa: BLE001 - a key without a result is asked again, in the main thread
            release(self._workers)

    def collect(self) -> tuple:
        """The first pass's results (key -> ``JobResult``) and its live workers (cvc5 imported: the caller
        runs the next passes on them and releases them), once its thread is done."""
        if self._thread is not None:
            self._thread.join()
        workers, self._workers = self._workers, []
        return dict(self.results), workers

    def cancel(self) -> None:
        """Kill the workers (the thread sees them die and ends), wait for the thread, release what is left."""
        if self._thread is not None and self._thread.is_alive():
            for w in list(self._workers):
                try:
                    w.proc.kill()
                except (OSError, ValueError, AttributeError):
                    pass
            self._thread.join(timeout=10)
        release(self._workers)


def ask_cvc5(asks: list, n_workers: int, deadline: Optional[float], timeout: float = 600.0,
             ledger: Optional[Ledger] = None) -> dict:
    """cvc5's answers (key -> :class:`Reply`) to ``asks``, every try cut at ``deadline``.  With worker
    processes: (1) a nonlinear query without a proof asked for goes to coverings alone first, its worker
    killed after a short limit (:data:`FIRST_SECONDS`, :data:`FIRST_FACTOR`); (2) every query not decided
    so goes to cvc5 with its default procedure (``solvers.CVC5_OPTIONS``: incremental linearisation, then
    coverings), limited by ``tlimit-per``; (3) an ``incomplete`` answer of (2) whose coverings try was cut
    short (not itself ``incomplete``) gets coverings alone again, at most :data:`RETRY_SECONDS`.  In this
    process (``n_workers = 0``, or a daemonic process) only (2) runs: nothing could stop coverings.
    ``ledger``: its workers (cvc5 imported) are used, and step (1) is not repeated on the keys its first
    pass ran ahead (:meth:`Ledger.take`)."""
    def left() -> float:
        return timeout if deadline is None else min(timeout, deadline - time.monotonic())

    workers = n_workers > 0 and not mp.current_process().daemon
    out: dict = {}
    first: dict = {}  # key -> the coverings try's status
    done, procs = ledger.take() if ledger is not None else ({}, [])
    try:
        def run(jobs: list):
            return run_on(procs, jobs, deadline, n_workers) if workers else run_jobs(jobs, 0, deadline)
        if workers:
            jobs = [j for j in _first_jobs(asks, deadline, timeout) if j.key not in done]
            for r in list(done.values()) + list(run(jobs)):
                first[r.key] = r.status
                out[r.key] = Reply(r.status, r.seconds, r.reason)
        todo = [a for a in asks if out.get(a.key, Reply("")).status not in ("sat", "unsat", "unsupported")]
        jobs = [Job(a.key, a.text, (), timeout=max(0.1, left()), logic=a.logic, solver=SECOND, proof=a.proof)
                for a in todo]
        for r in run(jobs):
            before = out.get(r.key)
            out[r.key] = Reply(r.status, r.seconds + (before.seconds if before else 0.0), r.reason, r.proof)
        retry = [a for a in asks if out[a.key].status == "incomplete" and first.get(a.key) != "incomplete"]
        if retry and not workers:
            for a in retry:
                out[a.key].reason = "cvc5: incomplete; no coverings retry (no worker process to bound it)"
            return out
        jobs = [Job(a.key, a.text, (), timeout=max(0.1, min(RETRY_SECONDS, left())), logic=a.logic,
                    solver=COVERINGS) for a in retry]
        for r in run(jobs):
            rep = out[r.key]
            rep.seconds += r.seconds
            if r.status in ("sat", "unsat"):
                rep.status = r.status
                rep.reason = f"cvc5: incomplete, then {r.status} by coverings alone ({r.seconds:.2f} s)"
            else:
                rep.reason = f"cvc5: incomplete; coverings alone: {r.status} ({r.reason or 'no reason'})"
        for k, rep in out.items():  # incomplete both ways: the verdict names the gap with both answers
            if rep.status == "incomplete" and first.get(k) == "incomplete":
                rep.reason = "cvc5: incomplete; coverings alone: incomplete"
        return out
    finally:
        release(procs)


def settle(a, compute, n_workers: int, title: str, second: bool, proofs: bool = False, keep: bool = False,
           cut: str = "") -> Any:
    """The envelope of ``certify`` and ``query``: ``a.ledger`` made (with cvc5's workers starting when
    ``second``), ``compute()`` run under the attempt's deadline, the ledger kept (``keep``), a certified result
    given to :func:`second_opinion`; the workers stopped whatever happens.  The deadline coming first is an
    ``unknown`` result saying so (followed by ``cut``)."""
    from ...properties import budget as bud

    a.ledger = Ledger(ahead=(n_workers, a.deadline, title) if second else None)
    try:
        with bud.scope(a.deadline):  # every enumeration and LP solve stops at the deadline
            res = compute()
            if keep:
                res.details["ledger"] = a.ledger
            if res.verdict is Verdict.CERTIFIED and second:
                return second_opinion(a, a.ledger, n_workers, title, proofs, keep)
            return res
    except BudgetExhausted as exc:
        return a.done(Verdict.UNKNOWN, f"{exc}{cut}")
    finally:
        a.ledger.cancel_ahead()


def second_opinion(a, ledger: Ledger, n_workers: int, title: str, proofs: bool = False,
                   keep: bool = False) -> Any:
    """Ask cvc5 every obligation of a ``certified`` attempt ``a`` (an ``outcome.Attempt``) and close the
    result: still certified (``details["agreement"]``: ``z3 and cvc5 agree``, or z3 alone with the fragment
    cvc5 could not read), or ``unknown`` naming the query and what each solver said.  ``proofs``: ask cvc5
    for an Alethe proof of each UNSAT query in linear real arithmetic.  ``keep``: the result keeps the
    ledger (``details["ledger"]``: what ``--export`` writes)."""
    res = a.result
    note = res.note
    res.details["title"] = title
    obs = ledger.obligations
    t0 = time.monotonic()
    asks = [_ask(i, ob, title, proofs) for i, ob in enumerate(obs)]
    for i, rep in ask_cvc5(asks, n_workers, a.deadline, ledger=ledger).items():
        ob = obs[i]
        ob.answers[SECOND], ob.seconds[SECOND] = rep.status, round(rep.seconds, 3)
        if rep.reason:
            ob.reasons[SECOND] = rep.reason
        ob.proof = rep.proof
    dt = time.monotonic() - t0
    solvers = [{"name": "z3", "version": version("z3")}, {"name": SECOND, "version": version(SECOND)}]
    res.details["solvers"] = solvers
    res.details["second_solver_seconds"] = round(dt, 3)
    res.details["answers"] = [{"stage": ob.stage, "role": ob.role, "key": ob.key, "logic": ob.logic,
                               "expected": ob.expected, "answers": dict(ob.answers), "seconds": dict(ob.seconds)}
                              for ob in obs]
    if keep:
        res.details["ledger"] = ledger
    wrong = [ob for ob in obs if ob.answers.get(SECOND) in ("sat", "unsat") and ob.answers[SECOND] != ob.expected]
    failed = [ob for ob in obs if ob.answers.get(SECOND) not in ("sat", "unsat", "unsupported", "incomplete")]
    unsupported = [ob for ob in obs if ob.answers.get(SECOND) == "unsupported"]
    incomplete = [ob for ob in obs if ob.answers.get(SECOND) == "incomplete"]
    if wrong:
        ob = wrong[0]
        return a.done(Verdict.UNKNOWN, f"the solvers disagree: z3 says {ob.answers['z3']}, {SECOND} says "
                                 f"{ob.answers[SECOND]} on {ob.stage} {ob.role} {ob.key} ({len(wrong)} of {len(obs)} "
                                 f"queries disagree); not certified")
    if failed:
        ob = failed[0]
        why = ob.reasons.get(SECOND, "")
        line = (f"{SECOND} did not confirm z3: z3 says {ob.answers['z3']}, {SECOND} says {ob.answers.get(SECOND)} "
                f"({why}) on {ob.stage} {ob.role} {ob.key} ({len(failed)} of {len(obs)} queries); not certified")
        reasons = [f.reasons.get(SECOND, "") for f in failed]
        cut = any(str(w).startswith(BUDGET_REASON) for w in reasons) or budget_cut(reasons, a.deadline)
        return a.done(Verdict.UNKNOWN, budget_note(line) if cut else line)
    if unsupported or incomplete:
        gaps = []
        if incomplete:
            logics = ", ".join(sorted({ob.logic for ob in incomplete}))
            gaps.append(f"{SECOND} agrees on {len(obs) - len(unsupported) - len(incomplete)} of {len(obs)} queries, "
                        f"incomplete on {len(incomplete)}: {logics}")
            res.details["incomplete"] = [f"{ob.stage} {ob.role} {ob.key}: {ob.reasons.get(SECOND, '')}"
                                         for ob in incomplete]
        if unsupported:
            ob = unsupported[0]
            frag = f"unsupported fragment {ob.logic}: {ob.reasons.get(SECOND, '')}"
            gaps.append(f"{SECOND}: {frag} ({len(unsupported)} of {len(obs)} queries)")
        res.details["agreement"] = "z3; " + "; ".join(gaps)
    else:
        res.details["agreement"] = f"z3 and {SECOND} agree"
        if proofs:
            asked = [ob for ob in obs if ob.proof]
            res.details["proofs"] = (f"{len(asked)} Alethe proof(s) of {len(obs)} queries "
                                     f"({sum(proof_holes(ob.proof) for ob in asked)} hole steps)")
    if not obs:
        res.details["agreement"] = "z3; no query to re-check"
    tail = f" on all {len(obs)} queries" if res.details["agreement"] == f"z3 and {SECOND} agree" else ""
    return a.done(Verdict.CERTIFIED, f"{note}; {res.details['agreement']}{tail}")
