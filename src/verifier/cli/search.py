"""CLI commands ``run`` (one mechanism, every property) and ``audit`` (every mechanism, the seeds' tables).

Progress goes to stderr (``--quiet`` silences it); stdout carries only the report, so ``--format json``
output is clean JSON.  Both run their cells as a campaign (``verifier.campaign``): ``--executor``,
``--jobs``, ``--scheduler``, ``--campaign`` (docs/campaigns.md).
"""
from __future__ import annotations

import argparse
import os
import sys

from .common import (add_executor_options, add_strict, as_json, emit, check_executor_options, executor_from, MECHANISM_HELP, CliError, FailOn, add_fail_on, add_keep_all,
                     add_mechanism_options, announce_store, command, interrupted_exit, results_exit,
                     mechanism_and_properties, non_negative_seed, output_dir, parse_properties, positive_seconds,
                     progress_printer)


def _add_campaign_options(p: argparse.ArgumentParser) -> None:
    """``--executor``, ``--jobs``, ``--scheduler``, ``--campaign`` (docs/campaigns.md)."""
    add_executor_options(p, "the cells")
    p.add_argument("--campaign", metavar="DIR", default=None,
                   help="resumable: one result file per finished cell in DIR; the same command again skips "
                        "them (another configuration on the same DIR is refused)")


def _campaign(args: argparse.Namespace, **config):
    """The campaign directory (None without ``--campaign``); another configuration there: exit 2."""
    from ..campaign import Campaign, CampaignError, config_of

    if not args.campaign:
        return None
    for k in ("mechanisms", "properties"):  # a subset is a set: its order does not change the campaign
        if config.get(k):
            config[k] = sorted(config[k])
    try:
        return Campaign(args.campaign, config_of(**config))
    except CampaignError as exc:
        raise CliError(str(exc)) from exc


def _configure_run(p: argparse.ArgumentParser) -> None:
    from ..properties import names_help
    from ..run import DEFAULT_BUDGET

    p.add_argument("mechanism", help=MECHANISM_HELP)
    p.add_argument("--properties", default=None,
                   help=names_help())
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET,
                   help=f"wall-clock seconds for the whole command (default: {DEFAULT_BUDGET:g}): searching, "
                        "shrinking, minimising and storing all fit in it (it ends within budget + 10%% plus "
                        "interpreter start-up); cells it does not reach are 'unknown: budget'")
    p.add_argument("--seed", type=int, default=0, help="search seed (default: 0); same seed, same candidates")
    p.add_argument("--trials", type=int, default=None,
                   help="at most this many candidates per property/variant (makes a run exactly reproducible)")
    p.add_argument("--max-wait", metavar="T", default=None,
                   help="the starvation bound (time units) every execution searched declares: a user below its "
                        "entitlement may wait this long (default: 0, or what an execution file declares)")
    p.add_argument("--format", choices=["table", "json", "md"], default="table", help="stdout format")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="also write DIR/<mechanism>.md, .json and .html (every counterexample's instance, exact "
                        "allocations and figures; the counterexample files it links to are copied to "
                        "DIR/counterexamples/)")
    p.add_argument("--store", metavar="DIR", default="counterexamples",
                   help="where new minimal counterexamples are stored (default: counterexamples)")
    p.add_argument("--no-store", action="store_true", help="do not store counterexamples")
    add_keep_all(p)
    p.add_argument("--certify", action="store_true",
                   help="also ask the registered certifiers (z3 layer) to prove properties on bounded domains")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    _add_campaign_options(p)
    add_mechanism_options(p, fail_on=FailOn.REFUTED)


def _max_wait(text):
    """``--max-wait``: a time (exact, ``0 <= T <= 1e9``), or ``None`` when not given."""
    if text is None:
        return None
    from mechverify.execution import time_number
    from mechverify.numbers import InstanceError

    try:
        return time_number(text, "--max-wait")
    except (InstanceError, ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None


@command("run", "search every property of a mechanism for violations within a time budget")(_configure_run)
def cmd_run(args: argparse.Namespace) -> int:
    """``run``: search every property of one mechanism; print and write the report."""
    from ..config import RunConfig

    config = RunConfig(budget=args.budget).start()  # the whole command's wall-clock limit starts now
    from ..report import render_markdown, render_table, report_to_json, terminal_width, use_color, write_reports
    from ..run import plan, run_mechanism

    mech, props = mechanism_and_properties(args)
    if args.trials is not None and args.trials <= 0:
        raise CliError(f"--trials: must be > 0 (got {args.trials})")
    max_wait = _max_wait(args.max_wait)
    output_dir(args.out, "--out")
    check_executor_options(args)
    if args.campaign and args.no_store:
        raise CliError("--campaign: needs the store (a finished violated cell is read back from its stored "
                       "counterexample); drop --no-store")
    if not args.no_store:
        output_dir(args.store, "--store")
    camp = _campaign(args, command="run", mechanisms=[mech.name], properties=props, budget=args.budget,
                     trials=args.trials, seed=args.seed, certify=args.certify, keep_all=args.keep_all,
                     store=None if args.no_store else os.path.abspath(args.store),
                     **({"max_wait": args.max_wait} if max_wait is not None else {}))
    executor = executor_from(args, len(plan(mech, props)[0]))
    if not args.no_store:
        announce_store(args.store, args.quiet)
    rep = run_mechanism(mech, props, config.but(seed=args.seed, store=None if args.no_store else args.store,
                                                trials=args.trials, certify=args.certify, executor=executor,
                                                campaign=camp, progress=progress_printer(args.quiet),
                                                keep_all=args.keep_all, max_wait=max_wait))
    emit(rep, args, {"json": as_json(report_to_json), "md": render_markdown,
                     "table": lambda r: render_table(r, width=terminal_width(), color=use_color()) + "\n"},
         write_reports)
    if rep.interrupted:
        print(f"interrupted: {len(rep.results)} cells finished (printed above, stored and written); "
              f"the others were not searched", file=sys.stderr)
        return interrupted_exit()
    return results_exit(args, rep.results)


def _configure_audit(p: argparse.ArgumentParser) -> None:
    from ..audit import DEFAULT_AUDIT_BUDGET

    p.add_argument("--budget", type=float, default=DEFAULT_AUDIT_BUDGET,
                   help=f"wall-clock seconds for the whole audit (default: {DEFAULT_AUDIT_BUDGET:g}), replays, "
                        "searches and minimisation included (it ends within budget + 10%% plus interpreter "
                        "start-up), shared by the cells a stored counterexample does not already settle; cells "
                        "it does not reach are 'unknown: budget'")
    p.add_argument("--seed", type=int, default=0, help="search seed (default: 0)")
    p.add_argument("--format", choices=["md", "json", "latex"], default="md",
                   help="stdout format (default: md); latex: each seed table as a LaTeX table for a paper")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="also write DIR/audit.md, .json, .html and .tex (the counterexample files the HTML links "
                        "to are copied to DIR/counterexamples/)")
    p.add_argument("--store", metavar="DIR", default="counterexamples",
                   help="counterexample store: replayed as evidence, new ones written (default: counterexamples)")
    add_keep_all(p)
    p.add_argument("--fresh", action="store_true",
                   help="ignore stored counterexamples: every cell is searched from scratch")
    p.add_argument("--mechanisms", default=None, help="comma-separated subset of mechanisms (default: all); a name, or your "
                   "own as path/to/file.py:function or package.module:function (a table of its claims)")
    p.add_argument("--properties", default=None,
                   help="comma-separated subset of properties: only these rows (default: every table's)")
    p.add_argument("--trials", type=int, default=None,
                   help="at most this many candidates per searched property/variant (makes the audit's "
                        "searches exactly reproducible, whatever the executor and the number of workers)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    _add_campaign_options(p)
    add_fail_on(p, FailOn.REFUTED)
    add_strict(p)


@command("audit", "regenerate the seed papers' property tables: verdict and evidence per cell")(_configure_audit)
def cmd_audit(args: argparse.Namespace) -> int:
    """``audit``: regenerate the seed papers' property tables with evidence per cell."""
    from ..config import RunConfig

    config = RunConfig(budget=args.budget).start()  # the whole command's wall-clock limit starts now
    from ..audit import run_audit
    from ..report import audit_to_json, render_audit_latex, render_audit_markdown, write_audit

    positive_seconds(args.budget, "--budget")
    non_negative_seed(args.seed)
    only = [s.strip() for s in args.mechanisms.split(",") if s.strip()] if args.mechanisms else None
    if args.mechanisms is not None and not only:
        raise CliError(f"--mechanisms: no mechanism named (got {args.mechanisms!r})")
    if only:
        from mechanisms import get

        for n in only:
            get(n)
    props = parse_properties(args.properties)
    if args.trials is not None and args.trials <= 0:
        raise CliError(f"--trials: must be > 0 (got {args.trials})")
    check_executor_options(args)
    output_dir(args.out, "--out")
    output_dir(args.store, "--store")
    camp = _campaign(args, command="audit", mechanisms=only, properties=props, budget=args.budget,
                     trials=args.trials, seed=args.seed, fresh=args.fresh, keep_all=args.keep_all,
                     store=os.path.abspath(args.store))
    executor = executor_from(args, 10 ** 6)
    announce_store(args.store, args.quiet)
    result = run_audit(config.but(seed=args.seed, store=args.store, progress=progress_printer(args.quiet),
                                  keep_all=args.keep_all, trials=args.trials, executor=executor, campaign=camp),
                       only, props, args.fresh)
    emit(result, args, {"json": as_json(audit_to_json), "latex": render_audit_latex, "md": render_audit_markdown},
         write_audit)
    if result.get("interrupted"):
        print("interrupted: the cells searched so far are reported above (and stored); the others are "
              "'unknown -- not searched'", file=sys.stderr)
        return interrupted_exit()
    return results_exit(args, [e for c in result["cells"] for e in c.evidence])
