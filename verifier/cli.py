"""Command line: ``python -m verifier <command> ...``.

Commands are registered in :data:`COMMANDS` by the modules that implement them, so this file only
parses arguments and turns user errors into one line on stderr with exit code 2.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Optional, Sequence

from mechverify.lp import LPError
from mechverify.numbers import InstanceError, fmt

EXIT_USAGE = 2

COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int], str]] = {}


def command(name: str, help: str):
    """Register ``(configure(parser), run(args) -> exit code)`` under ``name``."""
    def deco(configure):
        def wrap(run):
            COMMANDS[name] = (configure, run, help)
            return run
        return wrap
    return deco


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


# ---------------------------------------------------------------------- list
def _configure_list(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["table", "json"], default="table", help="output format (default: table)")


@command("list", "list mechanisms with their settings and their papers' claims")(_configure_list)
def cmd_list(args: argparse.Namespace) -> int:
    from mechanisms import all_mechanisms

    mechs = all_mechanisms()
    if args.format == "json":
        out = [{"name": m.name, "title": m.title, "source": m.source, "setting": m.setting.describe(),
                "exact": m.setting.exact, "notes": m.notes,
                "claims": [{"property": c.property, "variant": c.variant, "status": c.status, "source": c.source,
                            "assumes": list(c.domain)}
                           for c in m.claims]} for m in mechs]
        print(json.dumps(out, indent=2))
        return 0
    for m in mechs:
        print(f"{m.name}  --  {m.title}")
        print(f"    source:  {m.source}")
        print(f"    setting: {m.setting.describe()}")
        if m.claims:
            claims = ", ".join(f"{c.property}{'/' + c.variant if c.variant else ''} {c.status} [{c.source}]"
                               + (f" (assumes {', '.join(c.domain)})" if c.domain else "")
                               for c in m.claims)
            print(f"    claims:  {claims}")
        if m.notes:
            print(f"    notes:   {m.notes}")
    return 0


# ---------------------------------------------------------------------- allocate
def _configure_allocate(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism name (see 'list')")
    p.add_argument("instance", nargs="?", help="instance JSON file ('-' for stdin)")
    p.add_argument("--batch", metavar="FILE.jsonl",
                   help="one instance per line; prints one JSON result per line (errors as {\"error\": ...})")
    p.add_argument("--exact", action="store_true", help="exact rational allocation, numbers as 'p/q' strings")
    p.add_argument("--format", choices=["json", "table"], default=None,
                   help="output format (default: table for one instance, json for --batch)")


def allocation_result(mech_name: str, env, exact: bool) -> dict[str, Any]:
    from mechanisms import allocate, get

    m = get(mech_name)
    alloc = allocate(m, env, exact=exact)
    out = alloc.to_dict(exact=exact and alloc.exact)
    if exact and not alloc.exact:
        out["exact"] = False
        out["note"] = (f"{m.name} has no exactly computable allocation; numbers are floating-point "
                       f"approximations" + (f" ({alloc.info['exactness']})" if "exactness" in alloc.info else ""))
    return out


def _table(res: dict[str, Any]) -> str:
    users, servers = res["users"], res["servers"]
    def show(v):
        return v if isinstance(v, str) else fmt(v)
    w0 = max(len("user"), *(len(u) for u in users))
    cols = [max(len(s), *(len(show(res["tasks"][j][i])) for j in range(len(users)))) for i, s in enumerate(servers)]
    wt = max(len("total"), *(len(show(t)) for t in res["totals"]))
    lines = [f"mechanism: {res['mechanism']}" + ("  (exact)" if res.get("exact") else "")]
    lines.append("  ".join(["user".ljust(w0)] + [s.rjust(c) for s, c in zip(servers, cols)] + ["total".rjust(wt)]))
    for j, u in enumerate(users):
        lines.append("  ".join([u.ljust(w0)] + [show(res["tasks"][j][i]).rjust(c) for i, c in enumerate(cols)]
                               + [show(res["totals"][j]).rjust(wt)]))
    if res.get("note"):
        lines.append(f"note: {res['note']}")
    return "\n".join(lines)


@command("allocate", "compute a mechanism's allocation on an instance (or a batch)")(_configure_allocate)
def cmd_allocate(args: argparse.Namespace) -> int:
    from mechanisms import get
    from mechverify.model import load_environment, parse_environment

    get(args.mechanism)  # unknown mechanism -> one-line error before reading anything
    if args.batch:
        if args.instance:
            raise CliError("allocate: give either INSTANCE or --batch FILE, not both")
        if args.format == "table":
            raise CliError("allocate --batch prints JSON lines; --format table is not available")
        failures = 0
        try:
            fh = sys.stdin.buffer if args.batch == "-" else open(args.batch, "rb")
        except OSError as exc:
            raise CliError(f"{args.batch}: cannot read batch file ({exc.strerror})")
        with fh:
            for lineno, raw in enumerate(fh, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    failures += 1
                    sys.stdout.write(json.dumps({"error": f"line {lineno}: not UTF-8 text (byte {exc.start})"}) + "\n")
                    continue
                if not line.strip():
                    continue
                try:
                    env = parse_environment(json.loads(line))
                    res = allocation_result(args.mechanism, env, args.exact)
                except json.JSONDecodeError as exc:
                    failures += 1
                    res = {"error": f"line {lineno}: invalid JSON: {exc.msg}"}
                except (InstanceError, LPError) as exc:
                    failures += 1
                    res = {"error": f"line {lineno}: {exc}"}
                sys.stdout.write(json.dumps(res) + "\n")
        return 1 if failures else 0
    if not args.instance:
        raise CliError("allocate: missing INSTANCE (a JSON file, '-' for stdin) or --batch FILE.jsonl")
    if args.instance == "-":
        try:
            env = parse_environment(json.loads(sys.stdin.read()))
        except json.JSONDecodeError as exc:
            raise CliError(f"stdin: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
    else:
        env = load_environment(args.instance)
    res = allocation_result(args.mechanism, env, args.exact)
    if (args.format or "table") == "json":
        print(json.dumps(res))
    else:
        print(_table(res))
    return 0


# ---------------------------------------------------------------------- main
BUILTIN_COMMANDS = ("list", "allocate")  # defined in this file; they need no other command module


def build_parser(load_all: bool = True) -> argparse.ArgumentParser:
    """The full parser; ``load_all=False`` registers only this file's commands (start-up of
    ``allocate`` / ``list`` then skips the audit commands' imports, e.g. hypothesis: ~0.5 s)."""
    if load_all:
        _load_commands()
    parser = argparse.ArgumentParser(
        prog="python -m verifier",
        description="mechverify: audit fair multi-resource allocation mechanisms (SP, EF, SI, PO, BF, ...).",
        epilog="Instances are JSON (see README.md). Every reported violation is re-checked in exact arithmetic.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (configure, _, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        configure(p)
    return parser


def _load_commands() -> None:
    """Import the modules that register further commands (check, run, replay, ...)."""
    import importlib

    for mod in ("verifier.commands", "verifier.commands_run", "verifier.commands_z3"):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(load_all=first not in BUILTIN_COMMANDS)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    _, run, _ = COMMANDS[args.command]
    try:
        return run(args)
    except (CliError, InstanceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except LPError as exc:
        print(f"solver error: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
