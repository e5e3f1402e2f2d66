"""CLI ``certify`` (z3 on a whole symbolic domain) and ``query`` (z3 on one instance).  The engine proposes; these commands store a confirmed violation through ``store.persist`` and
print ``certified ...`` / ``violated (path)`` / ``vacuous`` / ``not certified: unknown (reason)``, exit
code 0 / 1 / 3 / 3 (docs/z3.md).
"""
from __future__ import annotations

import argparse
import json
from typing import Optional

from mechverify.model import describe_shape

from .. import report
from ..results import Result, Verdict
from .common import (MECHANISM_HELP, CliError, add_keep_all, announce_store, check_executor_options, command,
                     executor_from, interrupted_exit, output_dir, positive_seconds, progress_printer)

EXIT = {Verdict.CERTIFIED: 0, Verdict.VIOLATED: 1, Verdict.VACUOUS: 3, Verdict.UNKNOWN: 3}


def persist_result(res: Result, mech, root: Optional[str], provenance: Optional[dict] = None,
                   keep_all: bool = False, deadline: Optional[float] = None) -> Result:
    """Record the claims covering the cell (``claims_for``) and what the verdict means for them; a
    violation's certificate goes through THE store gate (``store.persist``: minimised, then written under
    ``root``; ``None``: not written).  Minimising keeps the counterexample inside every claim it lies in
    and, for ``certify``, inside the domain's positive data.  Afterwards ``certificate`` and
    ``counterexample`` are the stored (minimised) counterexample, while ``note`` still states the
    violation as found on the instance or domain that was asked about.  ``provenance`` extends the
    engine's.  ``deadline`` (the command's ``--timeout``, ``verifier.properties.budget``) ends minimisation:
    a violation not minimised in time is stored all the same, its ``minimality`` record saying so."""
    from ..claims import assumption_broken, claims_for
    from ..record import Storing, record

    claims = claims_for(mech, res.property, res.variant)
    domain, accept = None, None
    if res.verdict is Verdict.VIOLATED and res.certificate is not None:
        w = res.certificate.witness
        inside = [c for c in claims if assumption_broken(c, w.env, w.deviation) is None]
        if inside:
            accept = lambda env: all(c.covers(env) is None for c in inside)  # noqa: E731
        if res.domain:  # certify: D has positive demands and capacities
            from ..engines.strategies import Domain
            domain = Domain(zero_demands=False, zero_capacities=False)
    measure, size = res.measure, res.size  # as found on the instance or domain asked about (like ``note``)
    record(res, mech, Storing(root=root, provenance=dict(res.details.get("provenance", {}), **(provenance or {})),
                              domain=domain, accept=accept, keep_all=keep_all, deadline=deadline), claims=claims)
    res.measure, res.size = measure, size
    return res


def _smt_properties() -> list[str]:
    """The properties the SMT layer handles (their ``z3`` facet names a goal), in registry order."""
    from ..properties import PROPERTIES

    return [p.name for p in PROPERTIES.values() if p.z3 is not None]


def _trace_properties() -> list[str]:
    """The properties over executions with a bounded trace goal (their ``z3_trace`` facet), in registry order."""
    from ..properties import PROPERTIES

    return [p.name for p in PROPERTIES.values() if getattr(p, "z3_trace", None)]


def _one_of(names: list[str]) -> str:
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]


def _configure(p: argparse.ArgumentParser) -> None:
    """``certify``'s arguments."""
    p.add_argument("mechanism", help=MECHANISM_HELP)
    p.add_argument("property_name", nargs="?", default=None, metavar="PROPERTY",
                   help="the property (the same as --property); a property over executions with a bounded trace "
                        f"goal ({_one_of(_trace_properties())}) certifies every trace of --users x --rounds")
    p.add_argument("--property", default=None, help=f"{_one_of(_smt_properties() + _trace_properties())} (default: "
                                                    f"{_smt_properties()[0]})")
    p.add_argument("--variant", default=None, help="property variant (default: the property's default)")
    p.add_argument("--users", default="2", help="number of users (>= 2, default 2); a range 2-4 or a list 2,3 "
                   "makes a sweep over every shape (one cell per shape, run through --executor; at most "
                   f"{MAX_SHAPES} shapes); a bounded trace certificate takes one count, 2..4")
    p.add_argument("--servers", default=None, help="number of servers (default 1; a range or list: a sweep)")
    p.add_argument("--resources", default=None, help="number of resources (default 2; a range or list: a sweep)")
    p.add_argument("--external", default=None, help="number of external resources (default 0; a range or list: "
                   "a sweep)")
    p.add_argument("--rounds", type=int, default=None,
                   help="a bounded trace certificate (a property over executions of a round mechanism): the number "
                        "of rounds T of every trace, 1..4 (default 1); docs/z3.md, 'Bounded certificates over traces'")
    p.add_argument("--misreports", choices=["one", "all"], default=None,
                   help="a bounded trace certificate: the deviator misreports at ONE round (default; one case per "
                        "round) or at every round (each report symbolic: any set of rounds)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="wall-clock seconds for the whole command from its start, minimising a counterexample included "
                        "(default 600); what is not decided by then is reported unknown (budget: ...)")
    p.add_argument("--method", choices=["auto", "encoding", "reduction"], default="auto",
                   help="sp / ef of a common-level mechanism: 'reduction' proves Lemma L7's (sp; for the TSF "
                        "family through L9's one-server form) or L8's (ef) inequality (docs/z3.md), "
                        "'encoding' queries the full encoding of the mechanism, 'auto' (default) tries the "
                        "reduction first")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default: CPU count): z3 cases of one shape, or the shapes of a sweep")
    p.add_argument("--executor", choices=["local", "dask"], default="local",
                   help="a sweep's cells run in local processes (default) or on a Dask cluster (--scheduler)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="the Dask scheduler of a sweep, e.g. tcp://10.0.0.1:8786 (with --executor dask)")
    p.add_argument("--store", metavar="DIR", default="counterexamples",
                   help="where a counterexample is stored (default: counterexamples)")
    add_keep_all(p)
    _export_options(p)
    p.add_argument("--format", choices=["text", "json"], default="text")


def _export_options(p: argparse.ArgumentParser) -> None:
    """``--export DIR`` and ``--proofs`` (``certify`` and ``query``)."""
    p.add_argument("--export", metavar="DIR", default=None,
                   help="write a certified verdict's queries as SMT-LIB2 files and DIR/certificate.json (hashes, "
                        "each solver's answer and version); check it later with 'replay DIR/certificate.json'")
    p.add_argument("--proofs", action="store_true",
                   help="with --export: store cvc5's Alethe proof of each UNSAT query in linear real arithmetic "
                        "beside it, with the command that checks it")


def _check_export(args: argparse.Namespace) -> None:
    """``--export`` / ``--proofs``, before any work (one line naming the flag)."""
    if args.proofs and not args.export:
        raise CliError("--proofs: needs --export DIR (the proofs are written beside the exported queries)")
    if args.export:
        output_dir(args.export, "--export")


def _export(args: argparse.Namespace, res: Result, request: dict, env=None) -> None:
    """Write the SMT export of a certified result (``verifier.artifacts.smt_export``); a line on stderr says
    where, or why nothing was written."""
    import sys

    from ..artifacts.smt_export import export

    if not args.export:
        return
    if res.verdict is not Verdict.CERTIFIED:
        print(f"--export: nothing written to {args.export} (the verdict is {res.verdict}, not certified)",
              file=sys.stderr)
        return
    path = export(res, args.export, request, env)
    print(f"exported: {path} ({len(res.details['ledger'].obligations)} queries; check with: python -m verifier "
          f"replay {path})", file=sys.stderr)


def _certified_text(res: Result, what: str, method: Optional[str] = None) -> str:
    """``certified for domain D (z3 and cvc5 agree, METHOD)``: who certified it (``details["agreement"]``)."""
    from ..engines.smt.second import agreement_phrase

    return f"certified {what} ({agreement_phrase(res.details)}{', ' + method if method else ''})"


def _encoded(mech, cmd: str):
    """``mech``, unless it is a user's mechanism: a Python function, which z3 cannot read (one line, exit
    2; ``run`` and ``check`` audit it).  A registered mechanism without an encoding gets the engine's
    "unknown" with the reason its ``Z3Spec`` gives (``register(..., z3=Z3Spec.none(why))``)."""
    if mech.is_users:
        raise CliError(f"mechanism: {cmd} {mech.name}: not covered: no z3 encoding (z3 encodes registered "
                       f"mechanisms only, docs/z3.md); 'run' and 'check' audit any mechanism")
    return mech


@command("certify", "z3: certify a property on a whole symbolic domain of one shape (UNSAT = no violation)")(_configure)
def cmd_certify(args: argparse.Namespace) -> int:
    """``certify MECH --property P --users J --servers S --resources R [--external K]``."""
    deadline = _command_deadline(args.timeout)  # the whole command's wall-clock limit
    from mechanisms import get

    from ..properties import get_property
    from ..engines.smt import SUPPORTED, Shape, certify

    mech = _encoded(get(args.mechanism), "certify")
    if args.property_name and args.property and args.property_name != args.property:
        raise CliError(f"--property: {args.property!r} and the positional {args.property_name!r} disagree")
    prop = get_property(args.property_name or args.property or _smt_properties()[0])
    if getattr(prop, "z3_trace", None):
        return _certify_trace(args, mech, prop, deadline)
    if args.rounds is not None or args.misreports is not None:
        raise CliError(f"--rounds/--misreports: only for a bounded trace certificate (a property over executions: "
                       f"{', '.join(_trace_properties())}), not {prop.name}")
    for k, default in (("servers", "1"), ("resources", "2"), ("external", "0")):
        if getattr(args, k) is None:
            setattr(args, k, default)
    if prop.name not in SUPPORTED:
        raise CliError(f"--property: z3 certification covers {', '.join(SUPPORTED)} (got {prop.name!r})")
    variant = _variant(prop, args.variant, mech.setting)
    if variant not in SUPPORTED[prop.name]:
        raise CliError(f"--variant: z3 certification of {prop.name} covers {', '.join(SUPPORTED[prop.name])} "
                       f"(got {variant!r})")
    positive_seconds(args.timeout, "--timeout")
    output_dir(args.store, "--store")
    _check_export(args)
    shapes = _shapes(args)
    if len(shapes) > 1 and args.export:
        raise CliError("--export: one shape at a time (a sweep certifies several shapes)")
    if len(shapes) == 1 and (args.executor != "local" or args.scheduler):
        raise CliError("--executor/--scheduler: only for a sweep (a range or list of --users/--servers/--resources)")
    if len(shapes) > 1:
        check_executor_options(args)
    announce_store(args.store, False)
    if len(shapes) > 1:
        return _sweep(args, mech, prop, variant, shapes, deadline)
    args.users, args.servers, args.resources, args.external = shapes[0]
    shape = Shape(users=args.users, servers=args.servers, resources=args.resources, external=args.external)
    if args.jobs is not None and args.jobs < 0:
        raise CliError(f"--jobs: must be >= 0 (got {args.jobs})")
    res = certify(mech, prop.name, variant, shape, timeout=_engine_seconds(deadline, args.timeout),
                  method=args.method, jobs=args.jobs, proofs=args.proofs, keep_queries=bool(args.export))
    persist_result(res, mech, args.store, keep_all=args.keep_all, deadline=deadline)
    _export(args, res, {"command": "certify", "timeout": args.timeout, "method": args.method,
                        "shape": shape.as_dict()})
    if args.format == "json":
        print(json.dumps(report.certify_json(res), indent=1))
        return EXIT.get(res.verdict, 3)
    head = f"{mech.name} {prop.name}/{variant} on " \
           f"{describe_shape(args.users, args.servers, args.resources, args.external)}"
    return _print_verdict(head, res, _certified_text(res, "for domain D", res.details.get('method', 'full encoding')),
                          [f"D.{k}: {v}" for k, v in res.domain.items()])


def _certify_trace(args: argparse.Namespace, mech, prop, deadline: float) -> int:
    """``certify MECH PROPERTY --users N --rounds T [--misreports one|all]``: a bounded certificate over every
    trace of that shape (``verifier.engines.smt.traces``): certified only when z3 and cvc5 both answer UNSAT and
    the vacuity control is SAT; a counterexample only after the exact replay of its trace."""
    from ..engines.smt.traces import TraceShape, certify_trace

    for k in ("servers", "resources", "external"):
        if getattr(args, k) is not None:
            raise CliError(f"--{k}: a bounded trace certificate is over one resource on one server (no --{k})")
    if args.method != "auto":
        raise CliError("--method: a bounded trace certificate has one method (the trace encoding)")
    if args.executor != "local" or args.scheduler:
        raise CliError("--executor/--scheduler: a bounded trace certificate is one shape (no sweep)")
    variant = _variant(prop, args.variant, mech.setting)
    positive_seconds(args.timeout, "--timeout")
    output_dir(args.store, "--store")
    _check_export(args)
    users = _counts(args.users, "--users")
    if len(users) != 1:
        raise CliError(f"--users: a bounded trace certificate takes one count (got {args.users!r})")
    if args.jobs is not None and args.jobs < 0:
        raise CliError(f"--jobs: must be >= 0 (got {args.jobs})")
    try:
        shape = TraceShape(users[0], 1 if args.rounds is None else args.rounds, args.misreports or "one")
    except ValueError as exc:
        raise CliError(str(exc)) from None
    announce_store(args.store, False)
    res = certify_trace(mech, prop.name, variant, shape, timeout=_engine_seconds(deadline, args.timeout),
                        jobs=args.jobs, proofs=args.proofs, keep_queries=bool(args.export))
    persist_result(res, mech, args.store, keep_all=args.keep_all, deadline=deadline)
    _export(args, res, {"command": "certify", "timeout": args.timeout, "trace": shape.as_dict()})
    if args.format == "json":
        print(json.dumps(dict(report.certify_json(res), trace=shape.as_dict()), indent=1))
        return EXIT.get(res.verdict, 3)
    head = f"{mech.name} {prop.name}/{variant} on every trace of {shape.describe()}"
    return _print_verdict(head, res, _certified_text(res, "for domain D", res.details.get("method")),
                          [f"D.{k}: {v}" for k, v in res.domain.items()])


#: a sweep certifies at most this many shapes: each is one z3 run of its own (cross-check, cases, control)
#: with a share of --timeout, so more shapes leave each too little time to decide anything
MAX_SHAPES = 512
_AXES = ("users", "servers", "resources", "external")


def _counts(text: str, flag: str) -> list[int]:
    """``2``, ``2-4`` or ``2,3,5`` as a sorted list of counts (one line naming the flag otherwise).  A
    range's size is checked before it is expanded: more counts than :data:`MAX_SHAPES` are refused with
    the limit and its reason."""
    out: set[int] = set()
    bad = f"{flag}: expected a count, a range like 2-4 or a list like 2,3 (got {text!r})"
    for part in str(text).split(","):
        part = part.strip()
        try:  # one count (a negative one is the shape's to refuse, naming the field)
            out.add(int(part))
            continue
        except ValueError:
            pass
        lo, sep, hi = part.partition("-")
        try:
            a, b = int(lo), int(hi)
        except ValueError:
            raise CliError(bad) from None
        if b < a:
            raise CliError(f"{flag}: the range {part} runs backwards (write {b}-{a})")
        if b - a + 1 + len(out) > MAX_SHAPES:
            raise CliError(_too_many(flag, f"{text} is {b - a + 1 + len(out):,} counts"))
        out.update(range(a, b + 1))
    if len(out) > MAX_SHAPES:
        raise CliError(_too_many(flag, f"{text} is {len(out):,} counts"))
    return sorted(out)


def _too_many(flags: str, what: str) -> str:
    """The one line refusing a sweep of more than :data:`MAX_SHAPES` shapes, with the reason."""
    return (f"{flags}: {what}; a sweep certifies at most {MAX_SHAPES} shapes (each shape is a z3 run of its own "
            f"with a share of --timeout); split it into several sweeps")


def _shapes(args: argparse.Namespace) -> list[tuple]:
    """The shapes of ``--users/--servers/--resources/--external`` (every combination), validated before
    any work: each count (``Shape``), at most :data:`MAX_SHAPES` shapes, and no shape larger than a z3
    question may be (``MAX_VARIABLES``: z3 holds every term in memory)."""
    from ..engines.smt.domain import MAX_VARIABLES, Shape

    axes = {k: _counts(getattr(args, k), f"--{k}") for k in _AXES}
    swept = [k for k in _AXES if len(axes[k]) > 1]
    n = 1
    for k in _AXES:
        n *= len(axes[k])
    if n > MAX_SHAPES:
        raise CliError(_too_many("/".join(f"--{k}" for k in swept),
                                 f"{' x '.join(str(len(axes[k])) for k in swept)} = {n:,} shapes"))
    for k in _AXES:  # the smallest and the largest count of each flag, with the others at their smallest
        for v in (axes[k][0], axes[k][-1]):
            one = {a: (v if a == k else axes[a][0]) for a in _AXES}
            try:
                sh = Shape(**one)
            except ValueError as exc:
                raise CliError(str(exc)) from None
            if sh.variables() > MAX_VARIABLES:
                raise CliError(f"--{k}: {v:,} is too large: {_size(sh, MAX_VARIABLES)}")
    big = Shape(**{k: axes[k][-1] for k in _AXES})
    if big.variables() > MAX_VARIABLES:
        raise CliError(f"{'/'.join(f'--{k}' for k in swept)}: the largest shape is too large: {_size(big, MAX_VARIABLES)}")
    return [(u, s, r, e) for u in axes["users"] for s in axes["servers"] for r in axes["resources"]
            for e in axes["external"]]


def _size(shape, limit: int) -> str:
    """Why ``shape`` is refused: its size against the limit of a z3 question."""
    n = shape.variables()
    return (f"{shape.describe()} needs at least {f'{n:,}' if n < 10 ** 9 else f'{n:.1e}'} z3 variables; a z3 "
            f"question has at most {limit:,} (z3 holds every term in memory; docs/z3.md)")


def _startup_seconds() -> float:
    """How long ago this process started, when it runs the command line (``python -m verifier``,
    ``mechverify``): --timeout covers the interpreter's start-up too.  0 when a command is called from
    Python (a test, a notebook): the command starts then."""
    import os
    import sys

    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if getattr(spec, "name", None) != "verifier.__main__" and os.path.basename(sys.argv[0] or "") != "mechverify":
        return 0.0
    try:  # Linux: the process's start (clock ticks since boot) against the time since boot
        with open("/proc/self/stat") as f:
            start = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            up = float(f.read().split()[0])
        ago = up - start / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0
    return ago if 0.0 <= ago < 60.0 else 0.0  # anything else is not a start-up (another clock): ignore it


#: the part of --timeout kept for ending the command (stopping the z3 workers, storing, printing, the
#: interpreter's exit): the engine stops this much before the deadline, so the command ends within it
END_RESERVE = 0.05


def _engine_seconds(deadline: float, timeout: float) -> float:
    """What the engine gets of the time left before the command's ``deadline``: all but :data:`END_RESERVE`
    of ``timeout``."""
    from ..properties.budget import left

    return max(0.0, left(deadline) - END_RESERVE * timeout)


def _command_deadline(timeout: float) -> float:
    """The absolute deadline of ``--timeout`` (``verifier.properties.budget``), counted from the start of
    the process: every enumeration, z3 query, LP solve and worker of the command stops at it."""
    from ..properties.budget import deadline_after

    return deadline_after(timeout - _startup_seconds())


def _sweep(args: argparse.Namespace, mech, prop, variant: str, shapes: list, deadline) -> int:
    """``certify`` over several shapes: a campaign through an executor (``verifier.sweep``); violations are
    stored here, by this process only."""
    from ..sweep import ShapeCell, sweep

    executor = executor_from(args, len(shapes))
    cells = [ShapeCell(mech.name, prop.name, variant, sh, args.method) for sh in shapes]
    progress = progress_printer(args.format == "json")

    def store(cell, res):  # the one writer: violations go through the store gate in this process
        persist_result(res, mech, args.store, keep_all=args.keep_all, deadline=deadline)

    if progress:
        progress(f"sweep: {len(cells)} shapes, {executor.describe()}; --timeout {args.timeout:g} s wall-clock for all")
    results, interrupted = sweep(cells, timeout=_engine_seconds(deadline, args.timeout), executor=executor,
                                 on_result=store,
                                 progress=progress)
    if args.format == "json":
        print(json.dumps([dict(report.certify_json(r), shape=r.details.get("shape")) for r in results], indent=1))
    else:
        for r in results:
            head = f"{mech.name} {prop.name}/{variant} on {describe_shape(*r.details['shape'])}"
            print(report.z3_verdict_text(head, r, _certified_text(r, "for domain D",
                                                                  r.details.get('method', 'full encoding')), []))
    if interrupted:
        return interrupted_exit()
    codes = [EXIT.get(r.verdict, 3) for r in results]
    return 1 if 1 in codes else 3 if 3 in codes or len(results) < len(cells) else 0


def _variant(prop, text, setting=None):
    """``--variant`` (none: the default for the mechanism's ``setting``), checked (one line naming the flag)."""
    from mechverify.numbers import InstanceError

    try:
        return prop.variant_of(text, setting)
    except InstanceError as exc:
        raise CliError(f"--{exc}") from None


def _print_verdict(head: str, res: Result, certified: str, lines: list) -> int:
    """Print the verdict (``report.z3_verdict_text``); the exit code."""
    from ..report import z3_verdict_text

    print(z3_verdict_text(head, res, certified, lines))
    return EXIT.get(res.verdict, 3)


def _configure_query(p: argparse.ArgumentParser) -> None:
    """``query``'s arguments."""
    p.add_argument("mechanism", help=MECHANISM_HELP)
    p.add_argument("instance", help="instance JSON file (the truthful environment)")
    p.add_argument("--property", default=_smt_properties()[0], help=f"{_one_of(_smt_properties())} (default: "
                                                                   f"{_smt_properties()[0]})")
    p.add_argument("--variant", default=None,
                   help="property variant (default: the property's default; sp: demand or eligible)")
    p.add_argument("--user", action="append", default=None, metavar="NAME",
                   help="deviating (sp) / envious (ef) / checked (si) user; repeatable (default: every user)")
    p.add_argument("--joint", action="store_true",
                   help="sp/eligible: the demand report is symbolic too (default: demands truthful)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="wall-clock seconds for the whole command from its start, minimising a counterexample included "
                        "(default 120); what is not decided by then is reported unknown (budget: ...)")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: CPU count)")
    p.add_argument("--store", metavar="DIR", default="counterexamples",
                   help="where a confirmed counterexample is stored (default: counterexamples)")
    add_keep_all(p)
    _export_options(p)
    p.add_argument("--format", choices=["text", "json"], default="text")


@command("query", "z3: exact question on one instance (can a user's misreport gain? EF/SI/PO of the allocation)")(
    _configure_query)
def cmd_query(args: argparse.Namespace) -> int:
    """``query MECH INSTANCE [--property P] [--user NAME] ...``."""
    deadline = _command_deadline(args.timeout)  # the whole command's wall-clock limit
    from mechanisms import get
    from mechverify.instances import load_environment

    from ..properties import get_property
    from ..engines.smt import instance_query

    mech = _encoded(get(args.mechanism), "query")
    prop = get_property(args.property)
    if prop.z3 is None:
        raise CliError(f"--property: per-instance z3 queries cover {', '.join(_smt_properties())} (got {prop.name!r})")
    variant = _variant(prop, args.variant, mech.setting)
    positive_seconds(args.timeout, "--timeout")
    output_dir(args.store, "--store")
    _check_export(args)
    announce_store(args.store, False)
    if args.jobs is not None and args.jobs < 0:
        raise CliError(f"--jobs: must be >= 0 (got {args.jobs})")
    env = load_environment(args.instance)
    users = None
    if args.user:
        users = []
        for name in args.user:
            if name not in env.users:
                raise CliError(f"--user: {name!r} is not a user of {args.instance} (users: {', '.join(env.users)})")
            users.append(env.users.index(name))
    res = instance_query(mech, env, prop.name, variant, users=users, timeout=_engine_seconds(deadline, args.timeout),
                         jobs=args.jobs, joint=args.joint, proofs=args.proofs, keep_queries=bool(args.export))
    persist_result(res, mech, args.store, provenance={"instance": args.instance}, keep_all=args.keep_all,
                   deadline=deadline)
    _export(args, res, {"command": "query", "timeout": args.timeout, "users": args.user, "joint": args.joint}, env)
    if args.format == "json":
        print(json.dumps(report.query_json(res, args.instance), indent=1))
        return EXIT.get(res.verdict, 3)
    head = f"{mech.name} {prop.name}/{variant} on {args.instance} ({env.describe()})"
    return _print_verdict(head, res, _certified_text(res, "on this instance for space S"),
                          [f"S: {res.details.get('space', '')}"])
