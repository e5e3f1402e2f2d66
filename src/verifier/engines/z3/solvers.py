"""The SMT solvers the pool runs (``pool.py``), by name: ``z3`` (the engine's solver) and ``cvc5`` (the second
solver behind every certified verdict, ``second.py``), and the SMT-LIB2 file a query is exported as.

A solver is a function ``solve(text, names, timeout, logic, proof) -> Answer`` in :data:`SOLVERS`; the pool's
worker processes look it up by the job's ``solver`` name, so a test may put a double in its place
(``monkeypatch.setitem(SOLVERS, "cvc5", ...)`` before the workers fork).  ``z3`` reads the query's assertions
(declarations and ``assert`` commands, as ``z3.Solver.sexpr()`` prints them); ``cvc5`` reads the whole
SMT-LIB2 file of :func:`smt2_file` (``set-logic`` from :func:`logic_of`, the same assertions, ``check-sat``),
which is what ``certify --export`` writes and what ``z3 FILE`` or ``cvc5 FILE`` read.

Statuses: ``sat`` | ``unsat`` | ``unknown`` (with the solver's reason: a time-out, an error) | ``incomplete``
(cvc5 stopped before its limit and said its procedure cannot decide the query: ``UnknownExplanation.INCOMPLETE``)
| ``unsupported`` (cvc5 cannot read the query: a construct it does not parse, or a term outside the logic it
was given -- "unsupported fragment").

cvc5's options (docs/z3.md, "Second solver and export"): ``incremental=false`` (one ``checkSat`` per
solver; in incremental mode, cvc5 1.4's default, its nonlinear solver does not use cylindrical algebraic
coverings and answers ``incomplete`` where coverings decide the query).  ``cvc5-cov`` (:data:`COVERINGS`) is
the retry of an ``incomplete`` answer: coverings alone (``nl-cov``, no incremental linearisation,
``nl-ext=none``), complete for QF_NRA but deaf to ``tlimit-per`` (it does not poll cvc5's resource manager),
so it only runs in a worker process that the pool can kill (``second.py``).
"""
from __future__ import annotations

import hashlib
import time
from typing import Callable, NamedTuple, Sequence

import z3

__all__ = ["Answer", "SOLVERS", "solve", "version", "logic_of", "smt2_file", "sha256", "PROOF_FORMAT",
           "proof_holes", "COVERINGS", "CVC5_OPTIONS"]


class Answer(NamedTuple):
    """What a solver said about one query."""

    status: str  # 'sat' | 'unsat' | 'unknown' | 'incomplete' | 'unsupported'
    seconds: float
    values: dict = {}  # name -> Fraction (z3's SAT models only)
    algebraic: list = []  # names whose value was irrational (approximated)
    reason: str = ""
    proof: str = ""  # cvc5's proof of an UNSAT query, when asked for (Alethe)


# ---------------------------------------------------------------------- z3
def _z3(text: str, names: Sequence[str], timeout: float, logic: str = "QF_NRA", proof: bool = False) -> Answer:
    """z3 on the assertions ``text`` (``SolverFor(logic)``, z3's own timeout)."""
    from .symbolic import to_fraction_value

    t0 = time.perf_counter()
    s = z3.SolverFor(logic) if logic else z3.Solver()
    s.set("timeout", max(1, int(timeout * 1000)))
    try:
        s.from_string(text)
        r = s.check()
    except z3.Z3Exception as exc:  # pragma: no cover - solver trouble is 'unknown'
        return Answer("unknown", time.perf_counter() - t0, {}, [], f"z3 error: {exc}")
    dt = time.perf_counter() - t0
    if r == z3.sat:
        m = s.model()
        values, alg = {}, []
        for n in names:
            v = m.eval(z3.Real(n), model_completion=True)
            try:
                values[n] = to_fraction_value(v, 40)
            except ValueError:
                continue
            if z3.is_algebraic_value(v):
                alg.append(n)
        return Answer("sat", dt, values, alg, "")
    if r == z3.unsat:
        return Answer("unsat", dt)
    return Answer("unknown", dt, reason=s.reason_unknown() or "unknown")


# ---------------------------------------------------------------------- cvc5
#: the proof format asked of cvc5 (``--proofs``) and the checker that reads it
PROOF_FORMAT = "alethe"

#: cvc5's options for a proof: Alethe, rewrites elaborated into rules (without it cvc5 1.4 leaves
#: "hole" steps for untranslated rewrites, which no checker accepts)
_PROOF_OPTIONS = (("produce-proofs", "true"), ("proof-format-mode", "alethe"), ("proof-granularity", "dsl-rewrite"))

#: cvc5 messages that mean "this query is outside what cvc5 reads" (not a failure of the solver)
_UNSUPPORTED = ("not declared", "linear logic", "not supported", "unsupported", "Parse Error", "parse error",
                "Expected", "Unexpected")


#: cvc5's options for every query: one check per solver (non-incremental: coverings behind incremental
#: linearisation in the nonlinear solver)
CVC5_OPTIONS = (("incremental", "false"),)

#: the retry of an ``incomplete`` answer: cylindrical algebraic coverings alone (no time limit it honours)
COVERINGS = "cvc5-cov"
_COVERINGS_OPTIONS = (("incremental", "false"), ("nl-cov", "true"), ("nl-ext", "none"))


def _cvc5(text: str, names: Sequence[str], timeout: float, logic: str = "", proof: bool = False,
          options: Sequence = CVC5_OPTIONS) -> Answer:
    """cvc5 (its Python API) on the SMT-LIB2 file ``text``: every command but ``check-sat`` is invoked as
    parsed, then one ``checkSat`` with cvc5's per-check time limit; ``proof``: an UNSAT answer comes with
    cvc5's Alethe proof."""
    import cvc5

    t0 = time.perf_counter()
    tm = cvc5.TermManager()
    s = cvc5.Solver(tm)
    for k, v in options:
        s.setOption(k, v)
    s.setOption("tlimit-per", str(max(1, int(timeout * 1000))))
    if proof:
        for k, v in _PROOF_OPTIONS:
            s.setOption(k, v)
    sm = cvc5.SymbolManager(tm)
    parser = cvc5.InputParser(s, sm)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "query")
    try:
        while True:
            cmd = parser.nextCommand()
            if cmd.isNull():
                break
            if cmd.getCommandName() in ("check-sat", "exit"):
                continue
            cmd.invoke(s, sm)
    except RuntimeError as exc:
        return Answer("unsupported", time.perf_counter() - t0, reason=f"cvc5 cannot read the query: {exc}")
    try:
        r = s.checkSat()
    except RuntimeError as exc:
        msg = str(exc)
        status = "unsupported" if any(w in msg for w in _UNSUPPORTED) else "unknown"
        return Answer(status, time.perf_counter() - t0, reason=f"cvc5: {msg}")
    dt = time.perf_counter() - t0
    if r.isUnsat():
        out = ""
        if proof:
            try:
                out = s.proofToString(s.getProof()[0], cvc5.ProofFormat.ALETHE)
                out = out.decode() if isinstance(out, bytes) else out
            except RuntimeError as exc:  # the answer stands; the proof is missing and says why
                out = f"; cvc5 could not produce a proof: {exc}\n"
        return Answer("unsat", dt, proof=out)
    if r.isSat():
        return Answer("sat", dt)
    why = str(r.getUnknownExplanation()).replace("UnknownExplanation.", "").lower()
    if why == "incomplete":
        return Answer("incomplete", dt, reason="cvc5: incomplete")
    return Answer("unknown", dt, reason="timeout" if "timeout" in why else f"cvc5: {why}")


def _cvc5_coverings(text: str, names: Sequence[str], timeout: float, logic: str = "", proof: bool = False) -> Answer:
    """cvc5 with coverings alone (:data:`COVERINGS`): the retry of an ``incomplete`` answer.  Its time limit
    is the pool's hard one (a worker killed at the job's limit): coverings do not poll ``tlimit-per``."""
    return _cvc5(text, names, timeout, logic, proof, _COVERINGS_OPTIONS)


#: solver name -> solve function (the pool's workers look it up by the job's ``solver``)
SOLVERS: dict[str, Callable[..., Answer]] = {"z3": _z3, "cvc5": _cvc5, COVERINGS: _cvc5_coverings}


def solve(solver: str, text: str, names: Sequence[str], timeout: float, logic: str, proof: bool = False) -> Answer:
    """Solve with the named solver in this process; an exception is ``unknown`` with its message."""
    try:
        return SOLVERS[solver](text, names, timeout, logic, proof)
    except Exception as exc:  # noqa: BLE001 - a solver's failure is an answer, never a crash of the worker
        return Answer("unknown", 0.0, reason=f"{solver} error: {type(exc).__name__}: {exc}")


def version(solver: str) -> str:
    """The solver's version (``z3 4.x``, ``cvc5 1.4.x``)."""
    if solver == "z3":
        return z3.get_version_string()
    if solver in ("cvc5", COVERINGS):
        import cvc5

        return getattr(cvc5, "__version__", "") or "unknown"
    return "unknown"


# ---------------------------------------------------------------------- SMT-LIB2 files
_LINEAR_OK = {z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_UMINUS, z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT,
              z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT, z3.Z3_OP_ITE, z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_NOT,
              z3.Z3_OP_IMPLIES, z3.Z3_OP_XOR, z3.Z3_OP_IFF, z3.Z3_OP_TRUE, z3.Z3_OP_FALSE, z3.Z3_OP_ANUM,
              z3.Z3_OP_UNINTERPRETED}


def logic_of(body: str) -> str:
    """The SMT-LIB logic of the assertions ``body``: ``QF_`` (no quantifier), ``UF`` (a function symbol with
    arguments), and ``LRA`` / ``LIA`` / ``LIRA`` / ``NRA`` / ``NIA`` / ``NIRA`` by the sorts used and whether
    two non-constant terms are multiplied (or divided); ``ALL`` for anything else (arrays, bit-vectors,
    algebraic-number literals, ...)."""
    ints = reals = nonlinear = quant = uf = other = False
    ground: dict = {}  # ast id -> the term has no constant symbol (a numeral expression)

    def is_ground(e) -> bool:
        k = e.get_id()
        if k not in ground:
            if z3.is_quantifier(e) or z3.is_var(e):
                ground[k] = False
            elif z3.is_app(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                ground[k] = False
            else:
                ground[k] = all(is_ground(c) for c in e.children())
        return ground[k]

    seen: set = set()
    stack = list(z3.parse_smt2_string(body))
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_quantifier(e):
            quant = True
            stack.append(e.body())
            continue
        if z3.is_var(e):
            continue
        srt = e.sort().kind()
        ints |= srt == z3.Z3_INT_SORT
        reals |= srt == z3.Z3_REAL_SORT
        if srt not in (z3.Z3_INT_SORT, z3.Z3_REAL_SORT, z3.Z3_BOOL_SORT):
            other = True
        k = e.decl().kind()
        if k == z3.Z3_OP_UNINTERPRETED and e.num_args() > 0:
            uf = True
        elif k == z3.Z3_OP_MUL:
            nonlinear |= sum(1 for c in e.children() if not is_ground(c)) >= 2
        elif k in (z3.Z3_OP_DIV, z3.Z3_OP_IDIV, z3.Z3_OP_MOD, z3.Z3_OP_REM, z3.Z3_OP_POWER):
            nonlinear |= not is_ground(e.arg(1)) or (k == z3.Z3_OP_POWER and not is_ground(e.arg(0)))
        elif k in (z3.Z3_OP_TO_REAL, z3.Z3_OP_TO_INT, z3.Z3_OP_IS_INT):
            ints = reals = True
        elif k == z3.Z3_OP_ANUM:
            other |= not (z3.is_rational_value(e) or z3.is_int_value(e))  # an algebraic-number literal
        elif k not in _LINEAR_OK:
            other = True
        stack.extend(e.children())
    if other:
        return "ALL"
    arith = ("N" if nonlinear else "L") + ("IRA" if ints and reals else "IA" if ints else "RA")
    if not (ints or reals):
        return ("" if quant else "QF_") + "UF"  # propositional (or uninterpreted) only
    return ("" if quant else "QF_") + ("UF" if uf else "") + arith


def smt2_file(body: str, logic: str, comment: Sequence[str] = ()) -> str:
    """The SMT-LIB2 file of a query: ``;`` comment lines, ``(set-logic ...)``, the declarations and
    assertions ``body``, ``(check-sat)``, ``(exit)``."""
    lines = [f"; {c}" for c in comment]
    return "\n".join(lines + [f"(set-logic {logic})", body.rstrip("\n"), "(check-sat)", "(exit)", ""])


def sha256(text: str) -> str:
    """The hex sha256 of ``text`` (UTF-8): what a certificate records for each exported query."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def proof_holes(proof: str) -> int:
    """How many steps of an Alethe proof are holes (``:rule hole``: a step no checker can verify)."""
    return proof.count(":rule hole")
