"""CLI command ``execute``: a mechanism through one execution (a trace file): the step table (event, allocation,
per-property status) and every property over executions judged on it (``verifier.execute``)."""
from __future__ import annotations

import argparse
import json
import os
import sys

from .common import (MECHANISM_HELP, CliError, FailOn, add_mechanism_options, announce_store, command,
                     mechanism_and_properties, output_dir, results_exit)


def _configure(p: argparse.ArgumentParser) -> None:
    from mechanisms.core.time import LIFTS

    from ..properties import EXECUTION_PROPERTIES

    p.add_argument("mechanism", help=MECHANISM_HELP + "; a one-shot mechanism is lifted (--lift)")
    p.add_argument("trace", help="execution JSON file: an instance with 'events' (docs/executions.md)")
    p.add_argument("--lift", choices=list(LIFTS), default=None,
                   help="how a one-shot mechanism steps through the trace: recompute (from scratch at every event; "
                        "the default) or irrevocable (the residual capacity; nobody's allocation drops)")
    p.add_argument("--properties", default=None,
                   help="comma-separated properties over executions (default: all of them: "
                        f"{', '.join(EXECUTION_PROPERTIES)}); a variant as NAME/VARIANT")
    p.add_argument("--budget", type=float, default=30.0,
                   help="wall-clock seconds for the run and every property (default: 30); what it does not reach "
                        "is 'unknown: budget ...'")
    p.add_argument("--seed", type=int, default=0, help="random seed for the misreports tried (default: 0)")
    p.add_argument("--float", dest="float_path", action="store_true",
                   help="run in floats (fast, for long traces); a violation found is re-derived by an exact replay "
                        "before it is printed")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.add_argument("--steps", type=int, default=40, metavar="N",
                   help="print at most N rows of the step table (default: 40; the failing steps are always shown)")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="store certified violations (the trace as given) under DIR")
    p.add_argument("--html", metavar="FILE", default=None,
                   help="also write an HTML page to FILE: the timeline of the run (each user's or queue's dominant "
                        "share over time, the events, the failing steps shaded), the step table and the results")
    add_mechanism_options(p, fail_on=FailOn.VIOLATED)


@command("execute", "a mechanism through one execution (arrivals, departures, demand changes, rounds): the "
                    "step table and every property over executions")(_configure)
def cmd_execute(args: argparse.Namespace) -> int:
    from mechanisms.core.time import lift
    from mechverify.execution import load_execution

    from ..config import RunConfig
    from ..execute import execute_trace
    from ..properties import parse_cells

    asked, args.properties = args.properties, None  # NAME/VARIANT is read below (parse_cells)
    mech, _ = mechanism_and_properties(args)
    args.properties = asked
    if args.steps < 1:
        raise CliError(f"--steps: must be >= 1 (got {args.steps})")
    if args.lift is not None and mech.time is not None:
        raise CliError(f"--lift: {mech.name} steps through executions itself ({mech.time.kind}); it is not lifted")
    if mech.time is None:
        mech = lift(mech, args.lift or "recompute")
    props, variants = None, {}
    if args.properties is not None:
        props, variants = parse_cells(args.properties)
    output_dir(args.store, "--store")
    if args.html is not None:  # checked before the run: a directory, or a file in a folder that is not there
        if os.path.isdir(args.html):
            raise CliError(f"--html: {args.html!r} is a directory (give a file name)")
        output_dir(os.path.dirname(os.path.abspath(args.html)), "--html")
    ex = load_execution(args.trace)
    if args.store:
        announce_store(args.store, True)
    config = RunConfig(budget=args.budget, seed=args.seed).start()
    rep = execute_trace(mech, ex, props, config, exact=not args.float_path, store=args.store, source=args.trace,
                        variants=variants)
    if args.html:
        from ..files import atomic_write_text
        from ..report.pages import render_execution_html

        atomic_write_text(args.html, render_execution_html(rep, args.trace))
        print(f"wrote {args.html}", file=sys.stderr)
    if args.format == "json":
        from ..report.execution import execution_to_json

        print(json.dumps(execution_to_json(rep, args.trace), indent=1))
    else:
        from ..report.execution import render_execution

        print(render_execution(rep, args.trace, args.steps))
    return results_exit(args, rep.results)
