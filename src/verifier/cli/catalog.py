"""CLI commands ``list`` (mechanisms, settings, claims), ``allocate`` (a mechanism's allocation) and ``order``
(a production policy's order of its users in a state).
Light at import: starting these commands loads neither the search engines nor z3."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mechverify.lp import LPError
from mechverify.numbers import InstanceError

from .common import EXIT_FINDING, MECHANISM_HELP, CliError, command, declaration_warnings

#: the commands this module defines (``main`` loads no other command module for them)
NAMES = ("list", "allocate", "schema", "order")


# ---------------------------------------------------------------------- list
def _configure_list(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=["table", "json"], default="table", help="output format (default: table)")
    p.add_argument("--properties", action="store_true",
                   help="list the properties instead: the built-in ones and those installed packages declare in the "
                        "entry-point group mechverify.properties")


def _list_properties(fmt: str) -> int:
    """``list --properties``: every property with its variants, deviation kind and source."""
    from ..properties import all_names, get_property

    props = [get_property(n) for n in all_names()]
    rows = [{"name": p.name, "title": p.title, "variants": dict(p.variants),
             "deviation": sorted({p.hints_for(v).deviation for v in p.variants}),
             "source": getattr(p, "source", "") or "built-in", "reference": p.ref if p.ref != p.name else None,
             **({"reads": list(p.reads)} if p.reads else {})}
            for p in props]
    if fmt == "json":
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        print(f"{r['name']}  --  {r['title']}")
        print(f"    variants:  {', '.join(r['variants'])}   (deviation: {', '.join(r['deviation'])})"
              + (f"   reads: {', '.join(r['reads'])}" if r.get("reads") else ""))
        if r["reference"]:
            print(f"    source:    {r['source']}  ({r['reference']})")
    return 0


@command("list", "list mechanisms with their settings and their papers' claims")(_configure_list)
def cmd_list(args: argparse.Namespace) -> int:
    """``list``: every registered mechanism with its setting and its papers' claims (``--properties``: the
    properties)."""
    from mechanisms import all_mechanisms

    if getattr(args, "properties", False):
        return _list_properties(args.format)

    mechs = all_mechanisms()
    if args.format == "json":
        out = [{"name": m.name, "title": m.title, "source": m.source, "setting": m.setting.describe(),
                "exact": m.setting.exact, "notes": m.notes,
                "time": None if m.time is None else {"kind": m.time.kind, "rounds": m.time.rounds,
                                                     "revocable": m.time.revocable, "model": m.time.model},
                "claims": [{"property": c.property, "variant": c.variant, "status": c.status, "source": c.source,
                            "assumes": list(c.domain)}
                           for c in m.claims]} for m in mechs]
        print(json.dumps(out, indent=2))
        return 0
    for m in mechs:
        print(f"{m.name}  --  {m.title}")
        print(f"    source:  {m.source}")
        print(f"    setting: {m.setting.describe()}")
        if m.time is not None:
            print(f"    time:    {m.time.model}")
        if m.claims:
            claims = ", ".join(f"{c.property}{'/' + c.variant if c.variant else ''} {c.status} [{c.source}]"
                               + (f" (assumes {', '.join(c.domain)})" if c.domain else "")
                               for c in m.claims)
            print(f"    claims:  {claims}")
        if m.notes:
            print(f"    notes:   {m.notes}")
    from ..report.text import legend_lines, terminal_width

    for line in [""] + legend_lines([m.source for m in mechs] + [c.source for m in mechs for c in m.claims],
                                     terminal_width()):
        print(line)
    return 0


# ---------------------------------------------------------------------- allocate
def _configure_allocate(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help=MECHANISM_HELP)
    p.add_argument("instance", nargs="?", help="instance JSON file ('-' for stdin)")
    p.add_argument("--batch", metavar="FILE.jsonl",
                   help="one instance per line; prints one JSON result per line (errors as {\"error\": ...})")
    p.add_argument("--exact", action="store_true", help="exact rational allocation, numbers as 'p/q' strings")
    p.add_argument("--full", action="store_true",
                   help="table: every user and server even when the allocation is large (default: a summary then)")
    p.add_argument("--format", choices=["json", "table"], default=None,
                   help="output format (default: table for one instance, json for --batch)")


def allocation_result(mech_name: str, env, exact: bool) -> dict[str, Any]:
    """The JSON result of ``allocate`` for one instance."""
    from mechanisms import allocate, get

    m = get(mech_name)
    alloc = allocate(m, env, exact=exact)
    out = alloc.to_dict(exact=exact and alloc.exact)
    if exact and not alloc.exact:
        out["exact"] = False
        out["note"] = (f"{m.name} has no exactly computable allocation; numbers are floating-point "
                       f"approximations" + (f" ({alloc.info['exactness']})" if "exactness" in alloc.info else ""))
    return out


def _table(res: dict[str, Any], full: bool) -> str:
    """``allocate``'s terminal output: the task table, summarised when it would not fit (``--full``: all)."""
    from ..report.text import summarise_allocation, terminal_width

    text = summarise_allocation(res, full=full, width=terminal_width())
    return text + (f"\nnote: {res['note']}" if res.get("note") else "")


@command("allocate", "compute a mechanism's allocation on an instance (or a batch)")(_configure_allocate)
def cmd_allocate(args: argparse.Namespace) -> int:
    """``allocate``: one instance (table or JSON) or a batch of JSON lines."""
    from mechanisms import get
    from mechverify.instances import load_environment, parse_environment_text

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
                    env = parse_environment_text(line, f"line {lineno}")
                except InstanceError as exc:
                    failures += 1
                    msg = str(exc) if str(exc).startswith(f"line {lineno}:") else f"line {lineno}: {exc}"
                    sys.stdout.write(json.dumps({"error": msg}) + "\n")
                    continue
                try:
                    res = allocation_result(args.mechanism, env, args.exact)
                except (InstanceError, LPError) as exc:
                    failures += 1
                    res = {"error": f"line {lineno}: {exc}"}
                sys.stdout.write(json.dumps(res) + "\n")
        return 1 if failures else 0
    if not args.instance:
        raise CliError("allocate: missing INSTANCE (a JSON file, '-' for stdin) or --batch FILE.jsonl")
    if args.instance == "-":
        env = parse_environment_text(sys.stdin.read(), "stdin")
    else:
        env = load_environment(args.instance)
    warnings = declaration_warnings(env)
    res = allocation_result(args.mechanism, env, args.exact)
    if (args.format or "table") == "json":
        print(json.dumps({**res, "warnings": warnings} if warnings else res))
    else:
        print(_table(res, args.full))
    return 0


# ---------------------------------------------------------------------- schema
def _configure_schema(p: argparse.ArgumentParser) -> None:
    """``schema`` takes no arguments."""


@command("schema", "print the JSON Schema (draft 2020-12) of the instance format")(_configure_schema)
def cmd_schema(args: argparse.Namespace) -> int:
    """``schema``: the instance format's JSON Schema, shipped with the package."""
    from mechverify.instances import instance_schema

    print(json.dumps(instance_schema(), indent=2))
    return 0


# ---------------------------------------------------------------------- order
def _configure_order(p: argparse.ArgumentParser) -> None:
    p.add_argument("policy", metavar="POLICY", help="a policy that exposes its order (see 'list': 'ordered' in its "
                                                    "setting), e.g. mesos-drf, volcano-hdrf, or a user's "
                                                    "path/file.py:function declared with @mechverify.mechanism("
                                                    "order=...) (docs/orders-and-placement.md)")
    p.add_argument("instance", metavar="INSTANCE", help="instance JSON file ('-' for stdin); its users' 'usage' is "
                                                        "the state unless --allocation is given")
    p.add_argument("--allocation", metavar="ALLOC.json",
                   help="the current allocation (the JSON 'allocate --format json' prints: its 'users', 'servers' "
                        "and 'tasks' are read); default: the instance's usage, or nothing allocated")
    p.add_argument("--format", choices=["table", "json"], default="table", help="output format (default: table)")


def _state_env(env, path: str):
    """``env`` with the state of an ``allocate --format json`` file (users and servers matched by name)."""
    from dataclasses import replace

    from mechverify.instances import instance_number, loads_instance

    try:
        with open(path, "rb") as fh:
            text = fh.read(1 << 26).decode("utf-8")
    except OSError as exc:
        raise CliError(f"{path}: cannot read allocation file ({exc.strerror})")
    except UnicodeDecodeError:
        raise CliError(f"{path}: not UTF-8 text")
    data = loads_instance(text, path)
    if not isinstance(data, dict):
        raise InstanceError(f"{path}: expected an object with users, servers and tasks")
    users, servers, tasks = data.get("users"), data.get("servers"), data.get("tasks")
    if not isinstance(users, list) or sorted(map(str, users)) != sorted(env.users) or len(users) != env.n_users:
        raise InstanceError(f"{path}: users: expected the instance's users {list(env.users)[:10]}, got {str(users)[:80]}")
    if not isinstance(servers, list) or sorted(map(str, servers)) != sorted(env.servers) or len(servers) != env.n_servers:
        raise InstanceError(f"{path}: servers: expected the instance's servers {list(env.servers)[:10]}, "
                            f"got {str(servers)[:80]}")
    if not isinstance(tasks, list) or len(tasks) != len(users):
        raise InstanceError(f"{path}: tasks: expected one row per user ({len(users)})")
    x = [[None] * env.n_servers for _ in range(env.n_users)]
    for i, (u, row) in enumerate(zip(users, tasks)):
        if not isinstance(row, list) or len(row) != len(servers):
            raise InstanceError(f"{path}: tasks[{i}]: expected one number per server ({len(servers)})")
        j = env.users.index(u)
        for k, (sname, v) in enumerate(zip(servers, row)):
            f = instance_number(v, f"{path}: tasks[{i}][{k}]")
            if f < 0:
                raise InstanceError(f"{path}: tasks[{i}][{k}]: must be >= 0 (got {v!r})")
            x[j][env.servers.index(sname)] = f
    return replace(env, usage=tuple(tuple(row) for row in x))


@command("order", "print a policy's order of its users in a state (who is served next) and the ties it leaves open")(
    _configure_order)
def cmd_order(args: argparse.Namespace) -> int:
    """``order``: the policy's order (its order facet, ``mechanisms.OrderSpec``) in the instance's state or
    ``--allocation``'s, with the ties it leaves open and how they are broken (``mechanisms.core.order.ordering``)."""
    from mechanisms import get
    from mechanisms.core.order import ordering, require_order
    from mechverify.instances import load_environment, parse_environment_text

    m = get(args.policy)
    require_order(m)
    env = parse_environment_text(sys.stdin.read(), "stdin") if args.instance == "-" else load_environment(args.instance)
    if args.allocation:
        env = _state_env(env, args.allocation)
    try:
        got = ordering(m, env)
    except (ArithmeticError, ValueError) as exc:  # the policy's own comparator fails on this state: a finding
        print(f"error: order: {m.name}'s order fails on this state: {exc}", file=sys.stderr)
        return EXIT_FINDING
    print(json.dumps(got.as_dict()) if args.format == "json" else got.text())
    return 0
