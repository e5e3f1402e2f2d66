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
import re
import time
from enum import Enum
from typing import Callable, NamedTuple, Sequence

import z3

__all__ = ["Answer", "SOLVERS", "solve", "version", "logic_of", "smt2_file", "sha256", "PROOF_FORMAT",
           "proof_holes", "COVERINGS", "CVC5_OPTIONS"]


class SolverStatus(str, Enum):
    """What a solver answers about one query: THE vocabulary of the SMT layer's answers (z3's and cvc5's
    ``check`` results; ``unsupported``: the solver cannot read the query's logic)."""

    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"
    UNSUPPORTED = "unsupported"

    __str__ = str.__str__
    __format__ = str.__format__


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
        return Answer(SolverStatus.UNKNOWN, time.perf_counter() - t0, {}, [], f"z3 error: {exc}")
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
        return Answer(SolverStatus.SAT, dt, values, alg, "")
    if r == z3.unsat:
        return Answer(SolverStatus.UNSAT, dt)
    return Answer(SolverStatus.UNKNOWN, dt, reason=s.reason_unknown() or SolverStatus.UNKNOWN.value)


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
        status = SolverStatus.UNSUPPORTED if any(w in msg for w in _UNSUPPORTED) else SolverStatus.UNKNOWN
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
    return Answer(SolverStatus.UNKNOWN, dt, reason="timeout" if "timeout" in why else f"cvc5: {why}")


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
        return Answer(SolverStatus.UNKNOWN, 0.0, reason=f"{solver} error: {type(exc).__name__}: {exc}")


def version(solver: str) -> str:
    """The solver's version (``z3 4.x``, ``cvc5 1.4.x``)."""
    if solver == "z3":
        return z3.get_version_string()
    if solver in ("cvc5", COVERINGS):  # the installed distribution's version: importing cvc5 here costs ~0.08 s
        from importlib import metadata

        try:
            return metadata.version("cvc5")
        except metadata.PackageNotFoundError:
            import cvc5

            return getattr(cvc5, "__version__", "") or SolverStatus.UNKNOWN.value  # a version it does not tell
    return SolverStatus.UNKNOWN.value


# ---------------------------------------------------------------------- SMT-LIB2 files
#: SMT-LIB2 tokens: parentheses, |quoted symbols|, "strings", comments, and everything else up to a delimiter
_TOKEN = re.compile(r'\(|\)|\|[^|]*\||"(?:[^"]|"")*"|;[^\n]*|[^\s()|";]+')
_INT = re.compile(r"[0-9]+$")
_REAL = re.compile(r"[0-9]+\.[0-9]*$")
#: interpreted symbols whose value is Boolean
_BOOL_OPS = frozenset({"<=", "<", ">=", ">", "=", "distinct", "and", "or", "not", "=>", "xor", "is_int"})
_SORTS = frozenset({"Int", "Real", "Bool"})


_UNBOUND = object()  # a name no enclosing let or quantifier binds


class _Other(Exception):
    """A construct outside quantifier-free/quantified (U)F + integer/real arithmetic: the logic is ALL."""


def _sexprs(text: str) -> list:
    """The top-level s-expressions of ``text``, as nested lists of tokens (comments dropped)."""
    out: list = []
    stack: list = [out]
    for tok in _TOKEN.findall(text):
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if len(stack) == 1:
                raise _Other
            done = stack.pop()
            stack[-1].append(done)
        elif tok[0] != ";":
            stack[-1].append(tok)
    if len(stack) != 1:
        raise _Other
    return out


def logic_of(body: str) -> str:
    """The SMT-LIB logic of the assertions ``body`` (declarations and ``assert`` commands, as z3 prints them),
    read off the text: ``QF_`` (no quantifier), ``UF`` (a function symbol with arguments), and ``LRA`` /
    ``LIA`` / ``LIRA`` / ``NRA`` / ``NIA`` / ``NIRA`` by the sorts used and whether two non-constant terms are
    multiplied (or a term divided by a non-constant one); ``ALL`` for anything else (arrays, bit-vectors,
    algebraic-number literals, a command other than a declaration or an assertion, ...).  A constant term
    (numerals under ``+ - * /``) is linear wherever it stands, e.g. ``(* (/ 1.0 3.0) x)``.  A walk over the
    s-expressions with an explicit stack (``let`` nests deeply); z3's own probes call a quotient constant
    nonlinear, and a walk over z3's terms costs ~20x more (docs/performance.md)."""
    try:
        return _logic(body)
    except _Other:
        return "ALL"


def _logic(body: str) -> str:
    flags = {"int": False, "real": False, "nl": False, "quant": False, "uf": False}
    consts: dict = {}
    funcs: dict = {}
    asserted = []
    for cmd in _sexprs(body):
        if not isinstance(cmd, list) or not cmd:
            raise _Other
        head = cmd[0]
        if head == "declare-fun" and len(cmd) == 4 and isinstance(cmd[2], list):
            if cmd[2]:
                funcs[cmd[1]] = cmd[3]
            else:
                consts[cmd[1]] = cmd[3]
        elif head == "declare-const" and len(cmd) == 3:
            consts[cmd[1]] = cmd[2]
        elif head == "assert" and len(cmd) == 2:
            asserted.append(cmd[1])
        else:
            raise _Other

    def sort_seen(sort) -> str:
        if not isinstance(sort, str) or sort not in _SORTS:
            raise _Other
        if sort == "Int":
            flags["int"] = True
        elif sort == "Real":
            flags["real"] = True
        return sort

    # post-order walk with an explicit stack (z3 nests lets deeply); a value is (sort, ground); ``env`` holds
    # the names bound by the enclosing lets and quantifiers, each binding undone after its body ("restore")
    vals: list = []
    env: dict = {}

    def bind(pairs) -> tuple:
        old = tuple((n, env.get(n, _UNBOUND)) for n, _ in pairs)
        env.update(pairs)
        return ("restore", old)

    for top in asserted:
        work: list = [("eval", top)]
        while work:
            item = work.pop()
            kind = item[0]
            if kind == "eval":
                t = item[1]
                if isinstance(t, str):
                    if t in env:
                        vals.append(env[t])
                    elif t in consts:
                        vals.append((sort_seen(consts[t]), False))
                    elif _INT.match(t):
                        vals.append((sort_seen("Int"), True))
                    elif _REAL.match(t):
                        vals.append((sort_seen("Real"), True))
                    elif t in ("true", "false"):
                        vals.append(("Bool", True))
                    else:
                        raise _Other
                    continue
                if not t or not isinstance(t[0], str):
                    raise _Other
                head = t[0]
                if head == "let" and len(t) == 3 and isinstance(t[1], list):
                    names = []
                    for b in t[1]:
                        if not isinstance(b, list) or len(b) != 2 or not isinstance(b[0], str):
                            raise _Other
                        names.append(b[0])
                    work.append(("let", names, t[2]))
                    for b in reversed(t[1]):  # the bound terms, in the enclosing scope
                        work.append(("eval", b[1]))
                elif head in ("forall", "exists") and len(t) == 3 and isinstance(t[1], list):
                    flags["quant"] = True
                    for v in t[1]:
                        if not isinstance(v, list) or len(v) != 2 or not isinstance(v[1], str) or v[1] not in _SORTS:
                            raise _Other
                    work.append(bind([(v[0], (v[1], False)) for v in t[1]]))
                    work.append(("eval", t[2]))
                elif head == "!" and len(t) >= 2:
                    work.append(("eval", t[1]))
                else:
                    work.append(("apply", head, len(t) - 1))
                    for a in reversed(t[1:]):
                        work.append(("eval", a))
            elif kind == "let":
                _, names, inner_body = item
                n = len(names)
                bound = vals[len(vals) - n:]
                del vals[len(vals) - n:]
                work.append(bind(list(zip(names, bound))))
                work.append(("eval", inner_body))
            elif kind == "restore":
                for name, value in item[1]:
                    if value is _UNBOUND:
                        env.pop(name, None)
                    else:
                        env[name] = value
            else:
                _, op, n = item
                args = vals[len(vals) - n:]
                del vals[len(vals) - n:]
                vals.append(_apply(op, args, funcs, flags, sort_seen))
    if not (flags["int"] or flags["real"]):
        return ("" if flags["quant"] else "QF_") + "UF"
    ir = "IRA" if flags["int"] and flags["real"] else "IA" if flags["int"] else "RA"
    return ("" if flags["quant"] else "QF_") + ("UF" if flags["uf"] else "") + ("N" if flags["nl"] else "L") + ir


def _apply(op, args, funcs, flags, sort_seen):
    ground = all(g for _, g in args)
    if op in funcs:
        flags["uf"] = True
        for s, _ in args:
            sort_seen(s)
        return (sort_seen(funcs[op]), False)
    if op in _BOOL_OPS:
        if op == "is_int":
            flags["int"] = flags["real"] = True
        return ("Bool", ground)
    if op == "ite":
        if len(args) != 3:
            raise _Other
        return (args[1][0], ground)
    num = "Real" if any(s == "Real" for s, _ in args) else "Int"
    if op in ("+", "-"):
        return (sort_seen(num), ground)
    if op == "*":
        flags["nl"] |= sum(1 for _, g in args if not g) >= 2
        return (sort_seen(num), ground)
    if op in ("/", "div", "mod", "rem", "^"):
        if len(args) != 2:
            raise _Other
        flags["nl"] |= not args[1][1] or (op == "^" and not args[0][1])
        return (sort_seen("Real" if op == "/" else "Int" if op in ("div", "mod") else num), ground)
    if op in ("to_real", "to_int"):
        flags["int"] = flags["real"] = True
        return (sort_seen("Real" if op == "to_real" else "Int"), ground)
    raise _Other


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
