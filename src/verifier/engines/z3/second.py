"""The second solver behind every ``certified`` verdict (docs/z3.md, "Second solver and export").

A certified verdict rests on queries with known answers: every query of the cases UNSAT, the single-side
pre-checks that pruned a case UNSAT, and one vacuity control SAT.  :class:`Ledger` records them as z3 answered
them (``Obligation``: the query's assertions, its role, what z3 said) and every query that was BUILT (the
``plan``: what ``replay`` compares an exported query with).  :func:`second_opinion` then gives each
obligation, as the SMT-LIB2 file ``certify --export`` writes (``solvers.smt2_file``), to cvc5 -- in the
pool's worker processes with hard time limits, before the same deadline -- and keeps ``certified`` only if
cvc5 answers every one as z3 did.  A disagreement, a cvc5 error or time-out is ``unknown`` with a line saying
which solver said what; a query cvc5 cannot read (``unsupported``) or cannot decide (``incomplete``: its
nonlinear procedure gave up before its limit, and so did the coverings-only retry, ``solvers.COVERINGS``)
leaves the verdict certified by z3, and the verdict says so, with the count and the logic
(``details["agreement"]``: ``z3; cvc5 agrees on 44 of 55 queries, incomplete on 11: QF_NRA``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional

from mechverify.deadline import budget_note

import multiprocessing as mp

from .pool import BUDGET_REASON, Job, budget_cut, run_jobs
from .solvers import COVERINGS, logic_of, proof_holes, sha256, smt2_file, version

__all__ = ["Obligation", "Ledger", "second_opinion", "SECOND", "agreement_phrase"]

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
    ones its verdict rests on (``obligations``, in a deterministic order)."""

    def __init__(self) -> None:
        self.plan: dict = {}
        self.obligations: list[Obligation] = []

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


def _retry_incomplete(obs: list, n_workers: int, deadline: float, title: str) -> None:
    """Give every obligation cvc5 answered ``incomplete`` to cvc5's coverings alone (``solvers.COVERINGS``),
    at most :data:`RETRY_SECONDS` each and never past ``deadline``; a decided answer replaces the
    ``incomplete`` one (``reasons`` keeps the history).  Only in worker processes: coverings ignore cvc5's
    time limit, so only the pool's hard limit (killing the worker) bounds them; in this process
    (``n_workers = 0``, or a daemonic process) the answer stays ``incomplete`` and says why."""
    todo = [ob for ob in obs if ob.answers.get(SECOND) == "incomplete"]
    if not todo:
        return
    if n_workers <= 0 or mp.current_process().daemon:
        for ob in todo:
            ob.reasons[SECOND] = "cvc5: incomplete; no coverings retry (no worker process to bound it)"
        return
    left = deadline - time.monotonic()
    jobs = [Job(i, ob.text(title), (), timeout=max(0.1, min(RETRY_SECONDS, left)), logic=ob.logic, solver=COVERINGS)
            for i, ob in enumerate(obs) if ob in todo]
    for r in run_jobs(jobs, n_workers, deadline):
        ob = obs[r.key]
        ob.seconds[SECOND] = round(ob.seconds.get(SECOND, 0.0) + r.seconds, 3)
        if r.status in ("sat", "unsat"):
            ob.answers[SECOND] = r.status
            ob.reasons[SECOND] = f"cvc5: incomplete, then {r.status} by coverings alone ({r.seconds:.2f} s)"
        else:
            ob.reasons[SECOND] = f"cvc5: incomplete; coverings alone: {r.status} ({r.reason or 'no reason'})"


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
    jobs = []
    for i, ob in enumerate(obs):
        jobs.append(Job(i, ob.text(title), (), timeout=max(0.1, a.deadline - time.monotonic()), logic=ob.logic,
                        solver=SECOND, proof=proofs and ob.expected == "unsat" and ob.logic == "QF_LRA"))
    for r in run_jobs(jobs, n_workers, a.deadline):
        ob = obs[r.key]
        ob.answers[SECOND], ob.seconds[SECOND] = r.status, round(r.seconds, 3)
        if r.reason:
            ob.reasons[SECOND] = r.reason
        ob.proof = r.proof
    _retry_incomplete(obs, n_workers, a.deadline, title)
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
        return a.done("unknown", f"the solvers disagree: z3 says {ob.answers['z3']}, {SECOND} says "
                                 f"{ob.answers[SECOND]} on {ob.stage} {ob.role} {ob.key} ({len(wrong)} of {len(obs)} "
                                 f"queries disagree); not certified")
    if failed:
        ob = failed[0]
        why = ob.reasons.get(SECOND, "")
        line = (f"{SECOND} did not confirm z3: z3 says {ob.answers['z3']}, {SECOND} says {ob.answers.get(SECOND)} "
                f"({why}) on {ob.stage} {ob.role} {ob.key} ({len(failed)} of {len(obs)} queries); not certified")
        reasons = [f.reasons.get(SECOND, "") for f in failed]
        cut = any(str(w).startswith(BUDGET_REASON) for w in reasons) or budget_cut(reasons, a.deadline)
        return a.done("unknown", budget_note(line) if cut else line)
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
    return a.done("certified", f"{note}; {res.details['agreement']}{tail}")
