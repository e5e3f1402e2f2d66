"""CLI ``certify`` (bounded certification by z3), ``query`` (exact per-instance z3 queries) and the
``run --certify`` hook.

``certify`` prints exactly one of: ``certified for domain D (z3)`` (every case UNSAT and the vacuity
control SAT), ``violated (counterexample path)`` (a SAT model that passed the exact re-check and was
stored), ``vacuous`` (the control was UNSAT: the domain is empty, nothing is certified) or
``not certified: unknown (reason)`` (timeout / solver unknown).  Exit code 0 for certified, 1 for
violated, 3 for vacuous or unknown.

``query`` fixes one instance and asks z3 an exact question about it (``engines/z3/instance.py``): SP
with one user's report symbolic (every support pattern; eligible sets by enumeration), or EF / SI / PO
of the mechanism's allocation.  It prints ``violated (path)`` (SAT, exact re-check passed, stored),
``certified on this instance for space S (z3)`` (every query UNSAT, vacuity control SAT),
``vacuous`` or ``not certified: unknown (reason)``; same exit codes.
"""
from __future__ import annotations

import argparse
import json
from typing import Optional

from mechverify.model import describe_shape

from .cli import CliError, command

EXIT = {"certified": 0, "violated": 1, "vacuous": 3, "unknown": 3}


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism name (see 'list')")
    p.add_argument("--property", default="sp", help="sp, ef, si or po (default: sp)")
    p.add_argument("--variant", default=None, help="property variant (default: the property's default)")
    p.add_argument("--users", type=int, default=2, help="number of users (>= 2, default 2)")
    p.add_argument("--servers", type=int, default=1, help="number of servers (default 1)")
    p.add_argument("--resources", type=int, default=2, help="number of resources (default 2)")
    p.add_argument("--external", type=int, default=0, help="number of external resources (default 0)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole query (default 600)")
    p.add_argument("--method", choices=["auto", "encoding", "reduction"], default="auto",
                   help="sp / ef of a common-level mechanism: 'reduction' proves Lemma L7's (sp; for the TSF "
                        "family through L9's one-server form) or L8's (ef) inequality (docs/z3.md), "
                        "'encoding' queries the full encoding of the mechanism, 'auto' (default) tries the "
                        "reduction first")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: CPU count)")
    p.add_argument("--store", metavar="DIR", default="counterexamples",
                   help="where a counterexample is stored (default: counterexamples)")
    p.add_argument("--format", choices=["text", "json"], default="text")


@command("certify", "z3: certify a property on a whole symbolic domain of one shape (UNSAT = no violation)")(_configure)
def cmd_certify(args: argparse.Namespace) -> int:
    from mechanisms import get

    from .properties import get_property
    from .engines.z3 import SUPPORTED, Shape, certify

    mech = get(args.mechanism)
    prop = get_property(args.property)
    if prop.name not in SUPPORTED:
        raise CliError(f"--property: z3 certification covers {', '.join(SUPPORTED)} (got {prop.name!r})")
    variant = prop.variant_of(args.variant)
    if variant not in SUPPORTED[prop.name]:
        raise CliError(f"--variant: z3 certification of {prop.name} covers {', '.join(SUPPORTED[prop.name])} "
                       f"(got {variant!r})")
    if args.timeout <= 0:
        raise CliError(f"--timeout: must be > 0 seconds (got {args.timeout})")
    try:
        shape = Shape(users=args.users, servers=args.servers, resources=args.resources, external=args.external)
    except ValueError as exc:
        raise CliError(str(exc))
    if args.jobs is not None and args.jobs < 0:
        raise CliError(f"--jobs: must be >= 0 (got {args.jobs})")
    res = certify(mech, prop.name, variant, shape, timeout=args.timeout, store_dir=args.store, method=args.method,
                  jobs=args.jobs)
    if args.format == "json":
        print(json.dumps(res.to_dict(), indent=1))
        return EXIT.get(res.status, 3)
    head = f"{mech.name} {prop.name}/{variant} on " \
           f"{describe_shape(args.users, args.servers, args.resources, args.external)}"
    return _print_verdict(head, res, f"certified for domain D (z3, {res.details.get('method', 'full encoding')})",
                          [f"D.{k}: {v}" for k, v in res.domain.items()])


def _print_verdict(head: str, res, certified: str, lines: list) -> int:
    """One verdict line (plus the certified domain / space) for ``certify`` and ``query``."""
    if res.status == "certified":
        print(f"{head}: {certified} in {res.seconds:.2f} s")
        for line in lines + [res.reason]:
            print(f"  {line}")
    elif res.status == "violated":
        print(f"{head}: violated ({res.counterexample_path or 'not stored'}) -- {res.reason}")
    elif res.status == "vacuous":
        print(f"{head}: vacuous -- the vacuity control is UNSAT, so nothing is certified ({res.reason})")
    else:
        print(f"{head}: not certified: unknown ({res.reason})")
    return EXIT.get(res.status, 3)


def _configure_query(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism name (see 'list')")
    p.add_argument("instance", help="instance JSON file (the truthful environment)")
    p.add_argument("--property", default="sp", help="sp, ef, si or po (default: sp)")
    p.add_argument("--variant", default=None,
                   help="property variant (default: the property's default; sp: demand or eligible)")
    p.add_argument("--user", action="append", default=None, metavar="NAME",
                   help="deviating (sp) / envious (ef) / checked (si) user; repeatable (default: every user)")
    p.add_argument("--joint", action="store_true",
                   help="sp/eligible: the demand report is symbolic too (default: demands truthful)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds for all queries (default 120)")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: CPU count)")
    p.add_argument("--store", metavar="DIR", default="counterexamples",
                   help="where a confirmed counterexample is stored (default: counterexamples)")
    p.add_argument("--format", choices=["text", "json"], default="text")


@command("query", "z3: exact question on one instance (can a user's misreport gain? EF/SI/PO of the allocation)")(
    _configure_query)
def cmd_query(args: argparse.Namespace) -> int:
    from mechanisms import get
    from mechverify.model import load_environment

    from .properties import get_property
    from .engines.z3 import instance_query

    mech = get(args.mechanism)
    prop = get_property(args.property)
    if prop.name not in ("sp", "ef", "si", "po"):
        raise CliError(f"--property: per-instance z3 queries cover sp, ef, si, po (got {prop.name!r})")
    variant = prop.variant_of(args.variant)
    if args.timeout <= 0:
        raise CliError(f"--timeout: must be > 0 seconds (got {args.timeout})")
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
    res = instance_query(mech, env, prop.name, variant, users=users, timeout=args.timeout, jobs=args.jobs,
                         store_dir=args.store, joint=args.joint)
    if args.format == "json":
        out = res.to_dict()
        out["instance"] = args.instance
        print(json.dumps(out, indent=1))
        return EXIT.get(res.status, 3)
    head = f"{mech.name} {prop.name}/{variant} on {args.instance} ({env.describe()})"
    return _print_verdict(head, res, "certified on this instance for space S (z3)", [f"S: {res.space}"])


def _run_certifier(mech, prop_name: str, variant: str, budget: float) -> Optional[dict]:
    """``run --certify``: certify the smallest shape of the mechanism's setting (2 users, 1 server,
    2 resources) when the z3 layer covers the cell; only a real certificate is reported."""
    from .engines.z3 import SUPPORTED, Shape, certify

    if variant not in SUPPORTED.get(prop_name, ()):
        return None
    res = certify(mech, prop_name, variant, Shape(users=2, servers=1, resources=2), timeout=budget)
    if res.status != "certified":
        return None
    return {"domain": res.domain, "method": res.details.get("method", "full encoding"), "note": f"z3: {res.reason}"}


def _register() -> None:
    try:
        from .run import register_certifier
    except ImportError:  # pragma: no cover
        return
    register_certifier(_run_certifier)


_register()
