"""What every command module shares: the command registry, the one-line user error, exit codes, and
parsing of the arguments several commands take."""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
from enum import Enum
from typing import Any, Callable, Mapping, Optional
from ..results import Verdict


__all__ = ["COMMANDS", "command", "CliError", "EXIT_USAGE", "EXIT_SOLVER", "EXIT_FINDING", "EXIT_INTERRUPTED", "EXIT_TERMINATED",
           "TERMINATED", "MECHANISM_HELP", "sigterm_as_interrupt", "interrupted_exit", "announce_store", "add_keep_all", "parse_properties",
           "progress_printer", "add_tolerance", "with_tolerance", "with_user_options", "positive_seconds", "non_negative_seed", "output_dir", "finding_exit",
           "add_fail_on", "check_executor_options", "executor_from", "FailOn", "replay_artifacts", "declaration_warnings"]

EXIT_FINDING = 1  # a violation / refuted claim (see --fail-on)
EXIT_USAGE = 2
EXIT_SOLVER = 3
EXIT_UNDECIDED = 4  # run, check, audit, rates: nothing was decided (or, with --strict, something was not)
EXIT_INTERRUPTED = 130  # Ctrl-C (after printing and writing what finished)
EXIT_TERMINATED = 143  # SIGTERM (likewise)

#: help of every command's mechanism argument
MECHANISM_HELP = ("a registered name (see 'list'), or your own: package.module:function or path/to/file.py:function "
                  "(README, 'Audit your own mechanism'), or a program in any language: 'exec:COMMAND ARGS' "
                  "(docs/exec-protocol.md)")

#: name -> (configure(parser), run(args) -> exit code, help)
COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int], str]] = {}


def command(name: str, help: str):
    """Register ``(configure(parser), run(args) -> exit code)`` under ``name``:
    ``@command(name, help)(configure)`` decorates the run function."""
    def deco(configure):
        def wrap(run):
            COMMANDS[name] = (configure, run, help)
            return run
        return wrap
    return deco


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


def parse_properties(text: Optional[str]) -> Optional[list[str]]:
    """``--properties a,b``: the names, each checked (one-line error for an unknown name); None (the flag
    not given) = all; given but naming nothing (``--properties ''``) is an error, never "all"."""
    from ..properties import PROPERTIES, get_property

    if text is None:
        return None
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise CliError(f"--properties: no property named (got {text!r}; known: {','.join(PROPERTIES)}; omit the flag "
                       f"for all)")
    return [get_property(n).ref for n in names]  # a user's property: loaded now (a bad one: one line, exit 2)


def progress_printer(quiet: bool) -> Optional[Callable[[str], None]]:
    """Progress lines on stderr (stdout carries only the report), or None with ``--quiet``."""
    if quiet:
        return None

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    return say


def declaration_warnings(env) -> list[str]:
    """The instance's declarations that do not add up (``mechverify.declared``: over-committed guarantees, a
    guarantee above a max, ...), each printed as one ``warning:`` line on stderr; returned for a JSON
    document's ``warnings`` list.  The command goes on: real clusters over-commit."""
    from mechverify.declared import declaration_warnings as found

    lines = [str(w) for w in found(env)]
    for line in lines:
        print(line, file=sys.stderr)
    return lines


def positive_seconds(value: float, flag: str) -> float:
    """A time budget: a finite number > 0 (``nan`` and ``inf`` are refused)."""
    if not math.isfinite(value) or value <= 0:
        raise CliError(f"{flag}: must be a finite number of seconds > 0 (got {value})")
    return value


def non_negative_seed(value: int, flag: str = "--seed") -> int:
    """A seed: an integer >= 0."""
    if value < 0:
        raise CliError(f"{flag}: must be >= 0 (got {value})")
    return value


def output_dir(path: Optional[str], flag: str) -> Optional[str]:
    """A directory the command will write into, checked BEFORE any work: an existing path must be a
    writable directory; a new one must be creatable (its nearest existing ancestor a writable directory)."""
    if path is None:
        return None
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise CliError(f"{flag}: {path!r} exists and is not a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise CliError(f"{flag}: directory {path!r} is not writable")
        return path
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise CliError(f"{flag}: cannot create {path!r}: {parent!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"{flag}: cannot create {path!r}: {parent!r} is not writable")
    return path


class FailOn(str, Enum):
    """``--fail-on``: what makes a command exit 1 (for CI gates)."""

    REFUTED = "refuted"  # a registered claim refuted, or the mechanism failing (``Property.mechanism_failure``)
    VIOLATED = Verdict.VIOLATED.value  # any violation
    NEVER = "never"

    __str__ = str.__str__
    __format__ = str.__format__


def add_fail_on(p: argparse.ArgumentParser, default: FailOn) -> None:
    """``--fail-on refuted|violated|never``: what makes the command exit 1 (for CI gates)."""
    p.add_argument("--fail-on", choices=list(FailOn), type=FailOn, default=default,
                   help=f"exit 1 when a registered claim is REFUTED or the mechanism crashed (property runs) "
                        f"('refuted'), when any property is violated ('violated'), or never (default: {default}); "
                        f"2 = usage or input error, 3 = solver trouble")


def add_tolerance(p: argparse.ArgumentParser) -> None:
    """``--tolerance REL``: the relative margin a user's float implementation must exceed."""
    from mechverify.declare import DEFAULT_TOLERANCE

    p.add_argument("--tolerance", type=float, default=None, metavar="REL",
                   help=f"a user's mechanism that returns floats: its numbers are taken exactly as written and a "
                        f"violation's relative margin must exceed REL (default: its declared tolerance, else "
                        f"{DEFAULT_TOLERANCE:g})")
    p.add_argument("--call-limit", type=float, default=None, metavar="S",
                   help="a user's mechanism runs in a worker process: one call that takes longer than S seconds is "
                        "killed and reported as a finding (property runs: 'exceeds the time limit'); default: a "
                        "tenth of --budget, at least 1 and at most 60")


def with_tolerance(mech, value: Optional[float]):
    """``mech`` with ``--tolerance`` applied (one line, exit 2, for a bad value or a registered mechanism)."""
    import dataclasses
    import math

    if value is None:
        return mech
    if not (math.isfinite(value) and 0 <= value < 1):
        raise CliError(f"--tolerance: expected a number in [0, 1), got {value!r}")
    if not mech.is_users:
        raise CliError(f"--tolerance: applies to a user's mechanism (a reference); {mech.name} is registered and "
                       f"computed exactly")
    return dataclasses.replace(mech, tolerance=float(value))


def with_user_options(mech, args: argparse.Namespace):
    """``mech`` with ``--tolerance`` and ``--call-limit`` applied (one line, exit 2, for a bad value or a
    registered mechanism)."""
    import dataclasses
    import math

    mech = with_tolerance(mech, args.tolerance)
    limit = getattr(args, "call_limit", None)
    if limit is None:
        return mech
    if not (math.isfinite(limit) and limit > 0):
        raise CliError(f"--call-limit: expected a positive number of seconds, got {limit!r}")
    if not mech.is_users:
        raise CliError(f"--call-limit: applies to a user's mechanism (a reference); {mech.name} is registered and "
                       f"runs in the verifier's own process")
    return dataclasses.replace(mech, call_limit=float(limit))


def add_mechanism_options(p: argparse.ArgumentParser, fail_on: FailOn) -> None:
    """``--fail-on`` (default ``fail_on``), ``--strict``, ``--tolerance`` and ``--call-limit``: the options of a
    command that judges one mechanism (check, run)."""
    add_fail_on(p, fail_on)
    add_strict(p)
    add_tolerance(p)


def mechanism_and_properties(args: argparse.Namespace) -> tuple:
    """The mechanism (``--tolerance`` and ``--call-limit`` applied) and the ``--properties`` of check and run,
    with ``--budget`` and ``--seed`` checked: one line, exit 2, before any work."""
    from mechanisms import get

    mech = with_user_options(get(args.mechanism), args)
    props = parse_properties(args.properties)
    positive_seconds(args.budget, "--budget")
    non_negative_seed(args.seed)
    return mech, props


def add_executor_options(p: argparse.ArgumentParser, what: str) -> None:
    """``--executor``, ``--jobs`` and ``--scheduler``: where ``what`` (the cells, the chunks of samples) run."""
    p.add_argument("--executor", choices=["local", "dask"], default="local",
                   help=f"where {what} run: local processes (default) or a Dask cluster (--scheduler)")
    p.add_argument("--jobs", type=int, default=None,
                   help="local worker processes (default: one per core; 1 = in this process)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="the Dask scheduler, e.g. tcp://10.0.0.1:8786 (with --executor dask)")


def check_executor_options(args: argparse.Namespace) -> None:
    """``--executor``/``--jobs``/``--scheduler`` (and ``--campaign`` when the command has it), checked before
    any work (one line, exit 2)."""
    if args.jobs is not None and args.jobs < 1:
        raise CliError(f"--jobs: must be >= 1 (got {args.jobs})")
    if args.executor == "dask" and not args.scheduler:
        raise CliError("--scheduler: required with --executor dask (e.g. --scheduler tcp://127.0.0.1:8786)")
    if args.executor != "dask" and args.scheduler:
        raise CliError("--scheduler: only with --executor dask")
    if args.executor == "dask" and args.jobs is not None:
        raise CliError("--jobs: only with --executor local (a Dask cluster has its own workers)")
    output_dir(getattr(args, "campaign", None), "--campaign")


def executor_from(args: argparse.Namespace, cells: int):
    """The executor the options name (a scheduler that cannot be reached: exit 2)."""
    from ..executors import ExecutorError, make_executor

    try:
        return make_executor(args.executor, args.jobs, args.scheduler, cells=cells)
    except ExecutorError as exc:
        raise CliError(str(exc)) from exc


def finding_exit(fail_on: FailOn, results) -> int:
    """0, or :data:`EXIT_FINDING` when ``results`` contain what ``--fail-on`` names (a failing mechanism or
    property counts unless ``never``)."""
    if fail_on is FailOn.VIOLATED and any(r.verdict is Verdict.VIOLATED for r in results):
        return EXIT_FINDING
    if fail_on is not FailOn.NEVER and any(r.refuted or r.mechanism_failed or r.property_failed for r in results):
        return EXIT_FINDING
    return 0


def add_strict(p: argparse.ArgumentParser) -> None:
    """``--strict``: any undecided cell exits 4 (not only a command that decided nothing)."""
    p.add_argument("--strict", action="store_true",
                   help="exit 4 when ANY cell ends unknown (without it: only when no cell was decided); a finding "
                        "(exit 1) and solver trouble (exit 3) still come first")


def results_exit(args: argparse.Namespace, results) -> int:
    """The exit code of ``run``, ``check`` and ``audit`` from their results, by precedence: 1 (what
    ``--fail-on`` names) over 3 (solver trouble) over 4 (nothing decided -- every judged cell unknown: 'not
    applicable' and 'not searched' decide nothing --, or with ``--strict`` any cell unknown) over 0.  The
    reason for 3 and 4 is one line on stderr."""
    results = list(results)
    code = finding_exit(args.fail_on, results)
    if code:
        return code
    unknown = [r for r in results if r.verdict is Verdict.UNKNOWN]
    trouble = [r for r in unknown if r.solver_trouble]
    if trouble:
        print(f"solver error: {len(trouble)} of {len(results)} cells unknown because of the solver ({trouble[0].property}/{trouble[0].variant}: "
              f"{trouble[0].solver_trouble})", file=sys.stderr)
        return EXIT_SOLVER
    decided = [r for r in results if r.verdict.decided and r.verdict is not Verdict.NOT_APPLICABLE]
    if not decided:
        why = f"; first: {unknown[0].property}/{unknown[0].variant}: {unknown[0].note}" if unknown else ""
        print(f"nothing decided: {len(unknown)} of {len(results)} cells unknown, none violated, satisfied, "
              f"certified or searched without a violation{why}", file=sys.stderr)
        return EXIT_UNDECIDED
    if getattr(args, "strict", False) and unknown:
        print(f"--strict: {len(unknown)} of {len(results)} cells unknown (first: {unknown[0].property}/"
              f"{unknown[0].variant}: {unknown[0].note})", file=sys.stderr)
        return EXIT_UNDECIDED
    return 0


def replay_artifacts(paths, quiet: bool = False, jobs: Optional[int] = None, kind=None) -> int:
    """``replay`` and ``verify-certificate``: ``verifier.artifacts.replay`` of ``paths`` (``kind``: that kind
    only), each file's lines printed as it is known, then the summary; a malformed file's one line goes to
    stderr and ends it.  Returns the batch's exit code (0 accepted, 1 rejected, 2 malformed)."""
    from ..artifacts import MALFORMED, ReplayError, kind_of, replay

    for p in paths:
        if not os.path.exists(p):
            raise CliError(f"{p}: no such file or directory")
    if jobs is not None and jobs < 0:
        raise CliError(f"--jobs: must be >= 0 (got {jobs})")
    try:
        kind = kind or kind_of(paths)

        def show(r) -> None:
            for line in (r.report if r.status == MALFORMED else kind.shown(r, quiet)):
                print(line, file=sys.stderr if r.status == MALFORMED else sys.stdout)

        done = replay(paths, jobs=jobs, kind=kind, on_result=show)
    except ReplayError as exc:
        raise CliError(str(exc)) from None
    if done.summary:
        print(done.summary)
    return done.exit_code


#: set when SIGTERM arrived (the interruption then exits 143 instead of 130)
TERMINATED: list = []


def sigterm_as_interrupt() -> None:
    """SIGTERM stops a command like Ctrl-C: what finished is printed and written, then exit 143."""
    def handler(signum, frame):
        TERMINATED.append(signum)
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        pass


def interrupted_exit() -> int:
    """The exit code of an interrupted command: 143 after SIGTERM, 130 after Ctrl-C."""
    return EXIT_TERMINATED if TERMINATED else EXIT_INTERRUPTED


def emit(report: Any, args: argparse.Namespace, renderers: Mapping[str, Callable[[Any], str]],
         write: Callable[[Any, str], list]) -> None:
    """Print ``report`` in ``--format`` (``renderers[format]`` returns the whole text) and, with ``--out DIR``,
    write its files there (``write(report, DIR)`` returns their paths, announced on stderr unless ``--quiet``)."""
    print(renderers[args.format](report), end="")
    if args.out:
        for path in write(report, args.out):
            if not args.quiet:
                print(f"wrote {path}", file=sys.stderr)


def as_json(to_json: Callable[[Any], Any]) -> Callable[[Any], str]:
    """A renderer printing ``to_json(report)`` as indented JSON (one line feed at the end)."""
    return lambda report: json.dumps(to_json(report), indent=1) + "\n"


def announce_store(path: str, quiet: bool) -> None:
    """Say once, on stderr, where counterexamples go (and that ``--store`` changes it)."""
    if not quiet:
        print(f"counterexamples are stored in {os.path.abspath(path)} (--store DIR changes it)", file=sys.stderr)


def add_keep_all(p: argparse.ArgumentParser) -> None:
    """``--keep-all``: store every counterexample found (default: one per cell, the smallest)."""
    p.add_argument("--keep-all", action="store_true",
                   help="store every counterexample (default: one per mechanism/property/variant -- a new one only "
                        "when it is strictly smaller, and it replaces the larger)")
