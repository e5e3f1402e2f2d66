"""CLI command ``rates``: violation rates of mechanisms x properties on a sampled workload
(``verifier.rates``), printed as text, JSON or Markdown; ``--out DIR`` writes rates.json, rates.md,
rates.html and the plots.  A list of ``--rho`` values is one parameter point each (the rate-vs-rho
figures of seed 004 Figs. 3 and 4: docs/reproductions.md)."""
from __future__ import annotations

import argparse
import sys

from .common import (EXIT_FINDING, EXIT_UNDECIDED, MECHANISM_HELP, add_executor_options, add_strict, as_json, emit, CliError, add_tolerance, check_executor_options, command, executor_from,
                     non_negative_seed, output_dir, positive_seconds, progress_printer, with_user_options)


def _configure(p: argparse.ArgumentParser) -> None:
    from ..properties import names_help
    from ..rates import DEFAULT_DEVIATIONS

    p.add_argument("mechanisms", help="comma-separated mechanisms: " + MECHANISM_HELP)
    p.add_argument("--workload", required=True,
                   help="the workload model instances are drawn from (mechverify.workloads: uniform, seed004, "
                        "google2011, alibaba2018, ...)")
    p.add_argument("--rho", default=None, metavar="R[,R...]",
                   help="server heterogeneity rho (a workload that has it, e.g. seed004), in [0, 1); several "
                        "values: one parameter point each, plotted as rate vs rho")
    p.add_argument("--users", type=int, default=None, help="users per instance (default: the workload's)")
    p.add_argument("--servers", type=int, default=None, help="servers per instance (default: the workload's)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="another parameter of the workload (repeatable), e.g. --param bandwidth=2 for seed004")
    p.add_argument("--samples", type=int, default=1000, help="instances per parameter point (default: 1000)")
    p.add_argument("--properties", default=None,
                   help=names_help() + "; a variant as property/variant (e.g. si/external)")
    p.add_argument("--deviations", type=int, default=DEFAULT_DEVIATIONS, metavar="K",
                   help=f"deviation properties (sp, gsp, pm): the property's first K structured deviations per "
                        f"instance (default: {DEFAULT_DEVIATIONS}); their rate is a LOWER bound")
    p.add_argument("--seed", type=int, default=0,
                   help="sampling seed (default: 0); instance i is fixed by (seed, parameter point, i), whatever "
                        "--jobs or the executor")
    p.add_argument("--budget", type=float, default=None,
                   help="wall-clock seconds (default: none): drawing stops then, and the report says how many "
                        "samples were done")
    p.add_argument("--format", choices=["text", "json", "md"], default="text", help="stdout format")
    add_strict(p)
    p.add_argument("--out", metavar="DIR", default=None,
                   help="also write DIR/rates.json, rates.md, rates.html and the plots (PNG and SVG)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_executor_options(p, "the chunks of samples")
    add_tolerance(p)


def _texts(text: str, flag: str) -> list[str]:
    """``0.5,0.7,0.9`` -> the values as written (the workload reads them exactly: 0.7 is 7/10)."""
    out = [item.strip() for item in text.split(",") if item.strip()]
    if not out:
        raise CliError(f"{flag}: no value given (got {text!r})")
    if len(set(out)) != len(out):
        raise CliError(f"{flag}: a value is given twice (got {text!r})")
    return out


def parse_args(args: argparse.Namespace):
    """Everything checked before any work (one line, exit 2): the mechanisms, the workload and its
    parameters, the properties, the numbers and the executor options."""
    from mechanisms import get
    from mechverify.workloads import get as get_workload

    from ..properties import parse_cells

    if args.samples < 1:
        raise CliError(f"--samples: must be >= 1 (got {args.samples})")
    if args.deviations < 1:
        raise CliError(f"--deviations: must be >= 1 (got {args.deviations})")
    non_negative_seed(args.seed)
    if args.budget is not None:
        positive_seconds(args.budget, "--budget")
    names = [s.strip() for s in args.mechanisms.split(",") if s.strip()]
    if not names:
        raise CliError(f"mechanisms: no mechanism named (got {args.mechanisms!r})")
    mechs = [with_user_options(get(n), args) for n in names]
    work = get_workload(args.workload)
    extra = {}
    for item in args.param:
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise CliError(f"--param: expected KEY=VALUE, got {item!r}")
        extra[key.strip().replace("-", "_")] = value.strip()
    rhos = _texts(args.rho, "--rho") if args.rho is not None else [None]
    points = []
    for rho in rhos:
        given = {"users": args.users, "servers": args.servers, "rho": rho, **extra}
        work.check_params(**given)  # one line naming the flag, before any work
        points.append({k: v for k, v in given.items() if v is not None})
    if args.properties is not None:
        props, variants = parse_cells(args.properties)
    else:
        from ..properties import DEFAULT_PROPERTIES

        props, variants = list(DEFAULT_PROPERTIES), {}
    output_dir(args.out, "--out")
    check_executor_options(args)
    return mechs, work, points, props, variants


@command("rates", "how often mechanisms violate properties on a sampled workload: rates with 95% intervals, "
                  "measure distributions, every counted violation re-checked exactly")(_configure)
def cmd_rates(args: argparse.Namespace) -> int:
    """``rates``: sample, count, print (and write with ``--out``)."""
    from ..config import RunConfig
    from ..rates import CHUNK, Sampling, rates
    from ..report.rates import rates_to_json, render_rates_markdown, render_rates_text, write_rates

    mechs, work, points, props, variants = parse_args(args)
    chunks = len(points) * -(-args.samples // CHUNK)
    executor = executor_from(args, chunks)
    rep = rates(mechs, Sampling(work.name, args.samples, points, args.deviations), props,
                RunConfig(budget=args.budget, seed=args.seed, executor=executor, progress=progress_printer(args.quiet)),
                variants)
    emit(rep, args, {"json": as_json(rates_to_json), "md": render_rates_markdown, "text": render_rates_text},
         write_rates)
    if rep.stopped and not args.quiet:
        print(f"budget: stopped after {rep.samples_done} of {args.samples * len(points)} samples (counts above are "
              f"for the samples done)", file=sys.stderr)
    if rep.interrupted:
        from .common import interrupted_exit

        print("interrupted: the chunks that finished are reported above", file=sys.stderr)
        return interrupted_exit()
    return rates_exit(rep, args.strict)


def rates_exit(rep, strict: bool) -> int:
    """1 when a property's own code failed; 4 when no cell evaluated a single sample (every sample not
    applicable, an error, or not reached) -- with ``--strict``, when any cell did not; else 0.  The reason
    for 4 is one line on stderr."""
    failed = [c for c in rep.cells if c.property_failures]
    if failed:
        return EXIT_FINDING
    empty = [c for c in rep.cells if c.evaluated <= 0]
    if len(empty) == len(rep.cells):  # (no cell at all: the budget ended before the first chunk, or all skipped)
        print(f"nothing decided: no cell evaluated a sample ({len(rep.cells)} cells; {rep.samples_done} samples "
              f"drawn)", file=sys.stderr)
        return EXIT_UNDECIDED
    if strict and empty:
        print(f"--strict: {len(empty)} of {len(rep.cells)} cells evaluated no sample (first: {empty[0].mechanism} "
              f"{empty[0].property}/{empty[0].variant})", file=sys.stderr)
        return EXIT_UNDECIDED
    return 0
