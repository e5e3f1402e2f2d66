"""CLI command ``simulate``: a mechanism through a job trace (or an execution), as a cluster simulation
(``simulation.simulate``): JCT, JCT factor, utilisation and tasks waiting over time, shares over time, and the
time ratio of each property's violation, the first flagged steps re-checked exactly (docs/simulation.md)."""
from __future__ import annotations

import argparse
import json
import sys
import time

from .common import (MECHANISM_HELP, CliError, add_executor_options, add_tolerance, check_executor_options, command,
                     executor_from, interrupted_exit, non_negative_seed, output_dir, positive_seconds, progress_printer,
                     with_user_options)


def _configure(p: argparse.ArgumentParser) -> None:
    from mechanisms.core.time import LIFTS
    from simulation.simulate import PROPERTIES

    p.add_argument("mechanism", help=MECHANISM_HELP + "; a one-shot mechanism is lifted (--lift)")
    p.add_argument("trace", help="a workload with time (google2011, alibaba2018: drawn with --seed and --param), or a "
                                 "job trace: JSON (the cluster and 'jobs') or CSV (with --cluster), or an "
                                 "execution JSON file (docs/simulation.md)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of the workload's job traces (repeatable), e.g. --param jobs=500 --param servers=50")
    p.add_argument("--seed", type=int, default=0, help="the workload's draw (default: 0); the same seed, the same trace")
    p.add_argument("--cluster", metavar="FILE", default=None,
                   help="the cluster of a CSV trace: an instance file (resources, servers, queues)")
    p.add_argument("--lift", choices=list(LIFTS), default=None,
                   help="how a one-shot mechanism steps: recompute (reallocate from scratch at every event, the "
                        "fluid model's default), irrevocable (only free capacity is given out) or indivisible "
                        "(= --tasks whole)")
    p.add_argument("--tasks", choices=["fluid", "whole"], default=None,
                   help="the task model: fluid (a job's rate is the tasks it is allocated, the default) or whole "
                        "(whole tasks of the job's duration, reallocated at slot boundaries, suspended tasks paying "
                        "--overhead: seed 004's indivisible model; a one-shot mechanism lifted NAME+indivisible)")
    p.add_argument("--slot", default=None, metavar="S",
                   help="the whole-task model's reallocation slot (default 256, seed 004's; 'none': never reallocate)")
    p.add_argument("--overhead", default=None, metavar="O",
                   help="the whole-task model's suspend-resume overhead per resumed task (default 1/4: seed 004's 250 ms "
                        "in seconds)")
    p.add_argument("--properties", default="si,ef",
                   help=f"comma-separated properties measured over time ({', '.join(PROPERTIES)}, or 'none'; "
                        f"default: si,ef); po solves an LP per judged step (see --po-every)")
    p.add_argument("--po-every", type=int, default=10, metavar="K",
                   help="judge po at every K-th step only (default: 10)")
    p.add_argument("--check-first", type=int, default=5, metavar="K",
                   help="re-check the first K flagged steps of each property in exact arithmetic (default: 5)")
    p.add_argument("--points", type=int, default=400, metavar="N",
                   help="at most N points per timeline (time-weighted means; default: 400)")
    p.add_argument("--max-jobs", type=int, default=None, metavar="N",
                   help="refuse a trace of more than N jobs (default: the format's limit, 1,000,000)")
    p.add_argument("--budget", type=float, default=None,
                   help="wall-clock seconds (default: none): the run stops then and the report says how far it got")
    p.add_argument("--format", choices=["text", "json", "md"], default="text", help="stdout format")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="also write DIR/simulation.json, simulation.md, simulation.html and the figures (SVG)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_tolerance(p)


def _load(args: argparse.Namespace):
    """The trace as an execution: a CSV job trace (with ``--cluster``), a JSON job trace, or an execution."""
    from mechverify.execution import is_execution, load_execution
    from mechverify.instances import load_instance_data
    from mechverify.job_trace import MAX_JOBS, load_job_trace, parse_job_trace
    from mechverify.numbers import InstanceError

    limit = MAX_JOBS if args.max_jobs is None else args.max_jobs
    workload = _workload(args)
    if workload is not None:
        import numpy as np

        if args.cluster is not None:
            raise CliError("--cluster: a workload draws its own cluster")
        values = {}
        for item in args.param:
            key, eq, value = item.partition("=")
            if not eq or not key.strip() or not value.strip():
                raise CliError(f"--param: expected KEY=VALUE, got {item!r}")
            values[key.strip().replace("-", "_")] = value.strip()
        workload.check_job_params(**values)  # one line naming the flag, before the draw
        try:
            return parse_job_trace(workload.jobs(np.random.default_rng(args.seed), **values), limit)
        except InstanceError as exc:
            raise InstanceError(f"--workload {workload.name}: {exc}") from None
    if args.param:
        raise CliError(f"--param: only a workload takes parameters ({args.trace} is a file)")
    if args.trace.lower().endswith(".csv"):
        return load_job_trace(args.trace, args.cluster, limit)
    data = load_instance_data(args.trace)  # its errors name the file
    if args.cluster is not None:
        raise CliError(f"--cluster: only a CSV trace takes a cluster file ({args.trace} is JSON: its cluster is in it)")
    if is_execution(data):
        return load_execution(args.trace)
    try:
        return parse_job_trace(data, limit)
    except InstanceError as exc:
        raise InstanceError(f"{args.trace}: {exc}") from None


def _workload(args: argparse.Namespace):
    """The workload named by the trace argument (not a file of that name), else None."""
    import os

    from mechverify.workloads import WORKLOADS

    if os.path.exists(args.trace) or args.trace not in WORKLOADS:
        return None
    return WORKLOADS[args.trace]


def _properties(text: str) -> tuple:
    """``--properties``: the measured properties (``none``: none); an unknown or repeated one is one line."""
    from simulation.simulate import PROPERTIES

    props = () if text.strip() == "none" else tuple(p.strip() for p in text.split(",") if p.strip())
    for p in props:
        if p not in PROPERTIES:
            raise CliError(f"--properties: unknown {p!r} (known: {', '.join(PROPERTIES)}, or none)")
    if len(set(props)) != len(props):
        raise CliError(f"--properties: a property is named twice ({text!r})")
    return props


def _how(mech, tasks, lift_, slot, overhead) -> "str | None":
    """How ``mech`` steps under ``--tasks``/``--lift``/``--slot``/``--overhead``: a lift's name (the whole-task
    one with its slot and overhead: ``indivisible(slot=S,overhead=O)``) or None (it steps itself); a bad
    combination is one line (exit 2)."""
    whole = tasks == "whole" or lift_ == "indivisible"
    if tasks == "fluid" and lift_ == "indivisible":
        raise CliError("--lift: indivisible is the whole-task model; --tasks fluid asks for the fluid one")
    if tasks == "whole" and lift_ not in (None, "indivisible"):  # a fluid-model lift
        raise CliError(f"--lift: {lift_} is a fluid-model lift; --tasks whole reallocates at its slots (--slot)")
    for flag, value in (("--slot", slot), ("--overhead", overhead)):
        if value is not None and not whole:
            raise CliError(f"{flag}: only the whole-task model (--tasks whole) has it")
    how = lift_ or "recompute"
    if whole:
        from mechanisms.core.indivisible import DEFAULT_OVERHEAD, DEFAULT_SLOT, indivisible_name, lift_parameter
        from mechverify.numbers import InstanceError

        try:
            s = DEFAULT_SLOT if slot is None else lift_parameter(slot, "slot", True)
            o = DEFAULT_OVERHEAD if overhead is None else lift_parameter(overhead, "overhead", False)
        except InstanceError as exc:
            raise CliError(f"--{exc}") from None
        how = indivisible_name(s, o)
        if mech.time is not None:
            raise CliError(f"--tasks: {mech.name} steps through executions itself ({mech.time.kind}); the whole-task "
                           f"model lifts a one-shot mechanism")
    if lift_ is not None and mech.time is not None:
        raise CliError(f"--lift: {mech.name} steps through executions itself ({mech.time.kind}); it is not lifted")
    return how if mech.time is None else None


@command("simulate", "a cluster simulation: a mechanism through a job trace -- JCT, utilisation, shares over "
                     "time, and how long each property is violated (the first flagged steps re-checked exactly)")(_configure)
def cmd_simulate(args: argparse.Namespace) -> int:
    from mechanisms import get
    from mechanisms.core.time import lift

    from simulation.simulate import simulate

    from ..report.simulation import (render_simulation_markdown, render_simulation_text, simulation_to_json,
                                     write_simulation)

    props = _properties(args.properties)
    for flag, value, low in (("--po-every", args.po_every, 1), ("--check-first", args.check_first, 0),
                             ("--points", args.points, 2)):
        if value < low:
            raise CliError(f"{flag}: must be >= {low} (got {value})")
    if args.points % 2:
        raise CliError(f"--points: must be even (buckets merge in pairs; got {args.points})")
    if args.max_jobs is not None and args.max_jobs < 1:
        raise CliError(f"--max-jobs: must be >= 1 (got {args.max_jobs})")
    if args.budget is not None:
        positive_seconds(args.budget, "--budget")
    non_negative_seed(args.seed)
    output_dir(args.out, "--out")
    mech = with_user_options(get(args.mechanism), args)
    how = _how(mech, args.tasks, args.lift, args.slot, args.overhead)
    if how is not None:
        mech = lift(mech, how)
    start = time.monotonic()
    ex = _load(args)
    deadline = None if args.budget is None else start + args.budget

    def progress(steps: int, t: float, finished: int) -> None:
        if not args.quiet:
            print(f"  {steps} steps, simulated time {t:g}, {finished} jobs finished ({time.monotonic() - start:.1f} s)",
                  file=sys.stderr, flush=True)

    from mechanisms.core.mechanism import SettingError

    try:
        sim = simulate(mech, ex, trace=args.trace, properties=props, check_first=args.check_first,
                       po_every=args.po_every, points=args.points, deadline=deadline, progress=progress)
    except SettingError as exc:  # a state of the run the mechanism is not defined for (e.g. too many binding bounds)
        raise SettingError(f"{mech.name} cannot allocate a state this trace reaches: {exc}") from None
    if args.format == "json":
        print(json.dumps(simulation_to_json(sim), indent=1))
    elif args.format == "md":
        print(render_simulation_markdown(sim), end="")
    else:
        print(render_simulation_text(sim))
    if args.out:
        for path in write_simulation(sim, args.out):
            if not args.quiet:
                print(f"wrote {path}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------- simulate-sweep
#: a sweep runs at most this many cells (mechanisms x points x seeds)
MAX_CELLS = 100_000


def _configure_sweep(p: argparse.ArgumentParser) -> None:
    from mechanisms.core.time import LIFTS

    p.add_argument("mechanisms", help="comma-separated registered mechanisms; a one-shot one is lifted (--tasks, --lift)")
    p.add_argument("workload", help="a workload with time (seed004, google2011, alibaba2018): each cell draws its job "
                                    "trace from it with its point and seed")
    p.add_argument("--sweep", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="a swept parameter (repeatable; the points are the product): the workload's job-trace "
                        "parameters (e.g. users, rho, bandwidth for seed004) or the whole-task model's slot and "
                        "overhead")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter held fixed (repeatable), as --sweep's keys")
    p.add_argument("--seeds", type=int, default=1, metavar="N", help="seeds per point: 0..N-1 (default: 1)")
    p.add_argument("--first-seed", type=int, default=0, metavar="S", help="the first seed (default: 0)")
    p.add_argument("--lift", choices=list(LIFTS), default=None, help="as simulate's --lift")
    p.add_argument("--tasks", choices=["fluid", "whole"], default=None, help="as simulate's --tasks")
    p.add_argument("--properties", default="si,ef", help="as simulate's --properties (default: si,ef)")
    p.add_argument("--po-every", type=int, default=10, metavar="K", help="as simulate's --po-every (default: 10)")
    p.add_argument("--check-first", type=int, default=5, metavar="K", help="as simulate's --check-first (default: 5)")
    p.add_argument("--budget", type=float, default=None,
                   help="wall-clock seconds for the whole sweep (default: none): running cells stop then (their "
                        "partial numbers reported as stopped), cells not started are 'not reached'")
    p.add_argument("--campaign", metavar="DIR", default=None,
                   help="resumable: one JSON file per finished cell in DIR; the same command again (or one with "
                        "more seeds, points or mechanisms) runs only the cells missing")
    add_executor_options(p, "the cells")
    p.add_argument("--format", choices=["text", "json", "md"], default="text", help="stdout format")
    p.add_argument("--out", metavar="DIR", default=None, help="also write DIR/sweep.json and DIR/sweep.md")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _values(text: str, flag: str) -> tuple[str, list[str]]:
    key, eq, rest = text.partition("=")
    key = key.strip().replace("-", "_")
    values = [v.strip() for v in rest.split(",") if v.strip()] if eq else []
    if not key or not values:
        raise CliError(f"{flag}: expected KEY=VALUE{'[,VALUE...]' if flag == '--sweep' else ''}, got {text!r}")
    if flag == "--param" and len(values) != 1:
        raise CliError(f"--param: one value per key (got {text!r}; sweep several with --sweep)")
    if len(set(values)) != len(values):
        raise CliError(f"{flag}: a value is given twice ({text!r})")
    return key, values


def parse_sweep(args: argparse.Namespace):
    """Every argument of ``simulate-sweep`` checked before any work (one line, exit 2): the cells."""
    from mechanisms import get
    from mechverify.numbers import InstanceError
    from mechverify.workloads import WORKLOADS

    from ..simsweep import LIFT_KEYS, SimCell, sweep_points

    if args.seeds < 1:
        raise CliError(f"--seeds: must be >= 1 (got {args.seeds})")
    non_negative_seed(args.first_seed, "--first-seed")
    for flag, value, low in (("--po-every", args.po_every, 1), ("--check-first", args.check_first, 0)):
        if value < low:
            raise CliError(f"{flag}: must be >= {low} (got {value})")
    if args.budget is not None:
        positive_seconds(args.budget, "--budget")
    props = _properties(args.properties)
    names = [n.strip() for n in args.mechanisms.split(",") if n.strip()]
    if not names:
        raise CliError(f"mechanisms: no mechanism named (got {args.mechanisms!r})")
    if len(set(names)) != len(names):
        raise CliError(f"mechanisms: a mechanism is named twice ({args.mechanisms!r})")
    mechs = [get(n) for n in names]
    work = WORKLOADS.get(args.workload)
    if work is None:
        raise CliError(f"workload: unknown {args.workload!r} (the workloads with time: "
                       f"{', '.join(w for w, m in WORKLOADS.items() if m.job_params)})")
    fixed: dict[str, str] = {}
    for item in args.param:
        k, v = _values(item, "--param")
        if k in fixed:
            raise CliError(f"--param: {k} is given twice")
        fixed[k] = v[0]
    swept: list = []
    for item in args.sweep:
        k, v = _values(item, "--sweep")
        if k in fixed or k in dict(swept):
            raise CliError(f"--sweep: {k} is given twice (or also as --param)")
        swept.append((k, v))
    points = sweep_points(fixed, swept)
    n_cells = len(mechs) * len(points) * args.seeds
    if n_cells > MAX_CELLS:
        raise CliError(f"--sweep: {n_cells} cells (mechanisms x points x seeds); at most {MAX_CELLS} -- split the sweep")
    cells = []
    for point in points:
        values = dict(point)
        lift_values = {k: values.pop(k) for k in LIFT_KEYS if k in values}
        try:
            work.check_job_params(**values)  # one line naming the flag, before the first draw
        except InstanceError as exc:
            raise CliError(str(exc).replace("--workload", "workload")) from None
        for name, mech in zip(names, mechs):
            how = _how(mech, args.tasks, args.lift, lift_values.get("slot"), lift_values.get("overhead"))
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                cells.append(SimCell(name, how, work.name, point, seed, props, args.po_every, args.check_first))
    output_dir(args.out, "--out")
    check_executor_options(args)
    return cells


@command("simulate-sweep", "simulations over mechanisms x parameter points x seeds as campaign cells (local "
                           "processes or a Dask cluster, resumable with --campaign): a table of each cell's JCT "
                           "factor, utilisation and property time ratios")(_configure_sweep)
def cmd_simulate_sweep(args: argparse.Namespace) -> int:
    """``simulate-sweep``: the cells, run (or read back), the table printed and written."""
    from ..campaign import Campaign, CampaignError, config_of
    from ..report.simulation import render_sweep_markdown, render_sweep_text, write_sweep
    from ..simsweep import run_sweep

    cells = parse_sweep(args)
    campaign = None
    if args.campaign:
        try:
            campaign = Campaign(args.campaign, config_of(command="simulate-sweep", workload=args.workload,
                                                          tasks=args.tasks, lift=args.lift,
                                                          properties=sorted(cells[0].properties),
                                                          po_every=args.po_every, check_first=args.check_first))
        except CampaignError as exc:
            raise CliError(str(exc)) from exc
    executor = executor_from(args, len(cells))
    rep = run_sweep(cells, budget=args.budget, executor=executor, campaign=campaign,
                    progress=progress_printer(args.quiet))
    d = rep.to_dict()
    if args.format == "json":
        print(json.dumps(d, indent=1))
    elif args.format == "md":
        print(render_sweep_markdown(d), end="")
    else:
        print(render_sweep_text(d))
    if args.out:
        for path in write_sweep(d, args.out):
            if not args.quiet:
                print(f"wrote {path}", file=sys.stderr)
    counts = d["counts"]
    left = {k: v for k, v in counts.items() if k != "done"}
    if left and not args.quiet:
        print("not finished: " + ", ".join(f"{v} {k}" for k, v in left.items())
              + f" of {len(cells)} cells (finished: {counts.get('done', 0)}; a --campaign run again runs them)",
              file=sys.stderr)
    if rep.interrupted:
        print("interrupted: the cells that finished are reported above", file=sys.stderr)
        return interrupted_exit()
    return 0
