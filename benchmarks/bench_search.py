"""Search speed: trials per second per property, and time to the first exact counterexample of every
known-violated cell.  Not a test; run on demand (one process; Markdown tables on stdout):

    python benchmarks/bench_search.py                       # both tables
    python benchmarks/bench_search.py --trials-only         # only trials per second
    python benchmarks/bench_search.py --first-only --seeds 5
    python benchmarks/bench_search.py --root /other/checkout   # measure another checkout (before/after)
    python benchmarks/bench_search.py --per-user 8             # 8 deviations per user (at most search.BATCH)

Trials per second: ``verifier.engines.search.search`` with ``max_trials`` (default 300) for every
property and claim variant of ``drf``, ``tsf``, ``tsf-er`` and ``psdsf-rdm`` (a trial is one evaluated
candidate: an environment, or an (environment, deviation) pair; since the batched search, one
environment carries ``search.BATCH`` deviations); trials / CPU seconds of
the search (a search that finds a violation stops early: its rate covers the trials until then, and
the table says so).  Time to first violation: every (mechanism, property, variant) cell with a stored
counterexample in ``counterexamples/`` is searched from scratch with seeds 0..N-1 (budget
``--budget`` seconds each, no shrinking); the table gives the median and the max over the seeds of
the search's seconds to its first exact certificate (``time_to_first``, on the search's own clock:
wall-clock seconds, as its budget -- run it on an idle machine); a seed that finds none within the
budget counts as the budget and is marked.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRIAL_MECHS = ["drf", "tsf", "tsf-er", "psdsf-rdm"]
TRIAL_PROPS = ["sp", "ef", "si", "po", "bf"]


def known_cells(root: str) -> list[tuple[str, str, str]]:
    """Every (mechanism, property, variant) with a stored counterexample, sorted."""
    cells = set()
    for path in glob.glob(os.path.join(root, "counterexamples", "*", "*.json")):
        with open(path) as fh:
            d = json.load(fh)
        cells.add((d["mechanism"], d["property"], d.get("variant") or ""))
    return sorted(cells)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(HERE), help="project checkout to measure")
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budget", type=float, default=20.0, help="seconds per time-to-first search")
    ap.add_argument("--trials-only", action="store_true")
    ap.add_argument("--first-only", action="store_true")
    ap.add_argument("--cells", nargs="*", help="only these cells, as mech/prop/variant")
    ap.add_argument("--per-user", type=int, default=None,
                    help="deviations per user of a drawn environment (search.PER_USER; at most search.BATCH)")
    args = ap.parse_args(argv)
    if args.per_user is not None and args.per_user < 1:
        ap.error(f"--per-user: must be at least 1, got {args.per_user}")
    root = os.path.abspath(args.root)
    sys.path.insert(0, root)
    import mechanisms
    from verifier.engines import search as search_module
    from verifier.engines.search import search
    from verifier.properties import get_property

    if args.per_user is not None:
        if not hasattr(search_module, "PER_USER"):
            ap.error("--per-user: this checkout's search has no PER_USER (one deviation per environment)")
        search_module.PER_USER = args.per_user

    print(f"checkout {root}\n")
    if not args.first_only:
        print(f"## Trials per second (max_trials {args.trials}, seed 0)\n")
        print("| mechanism | property/variant | trials | CPU s | trials/s | note |")
        print("|---|---|---|---|---|---|")
        for name in TRIAL_MECHS:
            mech = mechanisms.get(name)
            for pname in TRIAL_PROPS:
                prop = get_property(pname)
                for variant in prop.claim_variants(mech):
                    if prop.variant_possible(mech.setting, variant):
                        continue
                    t0 = time.process_time()
                    res = search(mech, pname, variant, seed=0, budget=600.0, max_trials=args.trials,
                                 shrink_budget=0.0)
                    cpu = time.process_time() - t0
                    note = "violation found (stopped)" if res.verdict == "violated" else ""
                    rate = res.trials / cpu if cpu > 0 else float("nan")
                    print(f"| {name} | {pname}/{variant} | {res.trials} | {cpu:.2f} | {rate:.0f} | {note} |")
                    sys.stdout.flush()
        print()
    if not args.trials_only:
        cells = known_cells(root)
        if args.cells:
            cells = [c for c in cells if "/".join(c) in set(args.cells)]
        print(f"## Time to first exact counterexample ({len(cells)} known-violated cells, seeds 0..{args.seeds - 1}, "
              f"budget {args.budget:g} s, wall-clock seconds of the search)\n")
        print("| cell | median s | max s | found |")
        print("|---|---|---|---|")
        medians, maxes = [], []
        for mname, pname, variant in cells:
            mech = mechanisms.get(mname)
            times, found = [], 0
            for seed in range(args.seeds):
                res = search(mech, pname, variant or None, seed=seed, budget=args.budget, shrink_budget=0.0)
                if res.time_to_first is not None:
                    found += 1
                    times.append(res.time_to_first)
                else:
                    times.append(args.budget)
            med, mx = statistics.median(times), max(times)
            medians.append(med)
            maxes.append(mx)
            print(f"| {mname} {pname}/{variant or '-'} | {med:.3f} | {mx:.3f} | {found}/{args.seeds} |")
            sys.stdout.flush()
        if medians:
            print(f"\nover cells: median of medians {statistics.median(medians):.3f} s, "
                  f"max of medians {max(medians):.3f} s, max {max(maxes):.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
