"""CLI commands ``check`` (every property on one instance) and ``replay`` (replay artifacts: stored
counterexamples, SMT exports, LP certificates; ``verifier.artifacts``)."""
from __future__ import annotations

import argparse
import json

from .common import (MECHANISM_HELP, FailOn, add_mechanism_options, announce_store, command, declaration_warnings,
                     mechanism_and_properties, output_dir, replay_artifacts, results_exit)


def _configure_check(p: argparse.ArgumentParser) -> None:
    from ..properties import names_help

    p.add_argument("mechanism", help=MECHANISM_HELP)
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("--properties", default=None,
                   help=names_help())
    p.add_argument("--budget", type=float, default=10.0,
                   help="wall-clock seconds for the whole check (default: 10): allocations, every property and "
                        "the deviation searches (SP, GSP, PM: sampled structured misreports) fit in it (it ends "
                        "within budget + 10%% plus interpreter start-up, plus at most one allocation that cannot "
                        "be interrupted); what it does not reach is 'unknown: budget ...'")
    p.add_argument("--seed", type=int, default=0, help="random seed for deviation search (default: 0)")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="store certified violations as counterexample files under DIR (e.g. counterexamples)")
    p.add_argument("--certificates", metavar="DIR", default=None,
                   help="write an exact LP certificate (primal, dual multipliers, the claim) for every verdict that "
                        "rests on an LP (PO: the domination LP) to DIR; made first, within the budget; "
                        "'verify-certificate DIR' checks them without a solver (docs/certificates.md)")
    add_mechanism_options(p, fail_on=FailOn.VIOLATED)


@command("check", "every property's verdict for a mechanism on one instance")(_configure_check)
def cmd_check(args: argparse.Namespace) -> int:
    """``check``: every property's verdict on one instance; violations can be stored (``--store``)."""
    from ..config import RunConfig

    config = RunConfig(budget=args.budget, seed=args.seed).start()  # the whole command's limit starts now
    deadline = config.deadline
    from mechverify.instances import load_environment

    from ..check import check_instance
    from ..record import Storing, record
    from ..report import check_line, check_result_to_json

    mech, props = mechanism_and_properties(args)
    output_dir(args.store, "--store")
    if args.store:
        announce_store(args.store, False)
    output_dir(args.certificates, "--certificates")
    env = load_environment(args.instance)
    warnings = declaration_warnings(env)
    written = None
    if args.certificates:  # first, within the budget: check then runs in the time left
        from ..artifacts.lp_certificate import write_certificates

        written = write_certificates(mech, env, props, args.instance, args.certificates, deadline, args.budget)
    results = check_instance(mech, env, props, config)
    from ..planning import plan

    skipped = [s.row() for s in plan([mech], props).skipped]  # the readings run does not search either
    if written is not None:
        from ..artifacts.lp_certificate import point_to

        point_to(results, written)
    if args.store:
        for r in results:
            if r.certificate is not None:
                # the instance as the user gave it (what the printed verdict describes): not minimised, and
                # stored even where a smaller counterexample of the cell is stored already
                record(r, mech, Storing(root=args.store, provenance={"kind": "check", "instance": args.instance,
                                                                     "seed": args.seed}, minimise=False,
                                        minimality={"status": "the instance given to check (not minimised)"},
                                        keep_all=True))
    if args.format == "json":
        doc = {"mechanism": mech.name, "instance": args.instance, "seed": args.seed,
               "budget": args.budget, "results": [check_result_to_json(r) for r in results],
               "skipped": [{"property": p, "variant": v, "reason": why} for p, v, why in skipped]}
        if warnings:
            doc["warnings"] = warnings
        if written is not None:
            doc["lp_certificates"] = {"directory": args.certificates,
                                      "files": sorted(path for path, _ in written.files.values()),
                                      "notes": written.notes}
        print(json.dumps(doc, indent=1))
    else:
        from ..report.text import legend_lines, terminal_width

        width = terminal_width()
        print(f"{mech.name} on {args.instance} ({env.describe()})")
        for r in results:
            print("  " + check_line(r, width=None if width is None else width - 2).replace("\n", "\n  "))
        if skipped:
            from ..report.text import wrap_line

            for line in wrap_line("; ".join(f"{p}/{v} ({why})" for p, v, why in skipped), width, "    ",
                                  "  not checked: "):
                print(line)
        for line in legend_lines([c.source for r in results for c in r.claims], width):
            print(line)
        if written is not None:
            n = len(written.files)
            print(f"dual certificates: {n} written to {args.certificates}"
                  + (f" (check them: python -m verifier verify-certificate {args.certificates})" if n else ""))
            for note in written.notes:
                print(f"  {note}")
    return results_exit(args, results)


def _configure_replay(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", default=["counterexamples"],
                   help="counterexample files or directories (default: counterexamples), or a certificate "
                        "(DIR/certificate.json written by certify/query --export), or LP certificate files "
                        "(check --certificates; a directory of them: verify-certificate DIR)")
    p.add_argument("--jobs", type=int, default=None,
                   help="a certificate's solver processes (default: CPU count)")
    p.add_argument("--quiet", action="store_true", help="print only failures and the summary")


@command("replay", "re-verify stored counterexamples exactly, or an exported or LP certificate; non-zero exit if "
                   "any no longer holds")(_configure_replay)
def cmd_replay(args: argparse.Namespace) -> int:
    """``replay``: replay artifact files of one kind -- stored counterexamples, an SMT export
    (``DIR/certificate.json``), exact LP certificates -- with ``verifier.artifacts.replay`` (as
    ``mechverify.replay``); exit 1 if one no longer holds, 2 for a malformed export or LP certificate."""
    return replay_artifacts(args.paths, args.quiet, args.jobs)
