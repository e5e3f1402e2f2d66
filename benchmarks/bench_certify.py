"""Benchmark: the largest shapes z3 certifies SP for, per mechanism, within a time limit per shape.
Not a test; run on demand (it takes long):

    python benchmarks/bench_certify.py [--timeout 600] [--mechanisms drf,tsf-er] [--axes users,resources]
                                       [--max-steps 8] [--json OUT.json] [--markdown OUT.md]

For every mechanism with a symbolic encoding (``verifier/engines/smt/specs.py``) and every AXIS, shapes
grow one step at a time; each is given to ``verifier.engines.smt.certify`` with ``--timeout`` seconds
(all worker processes: one per core) and the walk along that axis stops at the first shape that is
not certified (unknown, vacuous or violated).  Axes (users x servers x resources + external):

    users      J x 1 x 2,        J = 2, 3, ...
    resources  2 x 1 x R,        R = 2, 3, ...
    diagonal   n x 1 x n,        n = 2, 3, ...   (the prototype's "DRF up to 4 users x 4 resources")
    servers    2 x S x 2,        S = 2, 3, ...   (multi-server with two resources: no pooling lemma)
    external   2 x S x 1 + 1,    S = 1, 2, ...   (one resource and one external resource)
    wide       2 x S x S,        S = 2, 3, ...   (servers and resources together; Lemma L7 territory)
    pooled     J x 2 x 1,        J = 2, 3, ...   (TRIVIAL for SP: one resource and no external leaves
                                                  a normalised report no free entry, Lemma L1; not
                                                  in the default axes)

``--method reduction`` certifies SP of the common-level mechanisms through Lemma L7 (and L9; docs/z3.md),
whose reduced query does not depend on the number of users: use it with ``--axes wide,external``.
Single-server mechanisms (drf) skip the multi-server axes; mechanisms without external resources skip
``external``.  A mechanism that is NOT strategy-proof (cru, mnw) stops at its first violation, which
is reported with its stored counterexample.  Output: a Markdown table (stdout, and ``--markdown``),
and every result as JSON (``--json``, written atomically).  Progress goes to stderr.

``--second-solver`` certifies every shape twice in the same run, z3 alone (``certify(..., second=False)``)
and z3 + cvc5 (the default: every query of a certified verdict re-checked by cvc5), and prints a second table
with both times, cvc5's part and the ratio (docs/performance.md, "Second solver"); ``--repeat N`` alternates
the two N times and reports medians.

Measured: see docs/z3.md ("Benchmark") -- the table there is this script's output.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mechanisms  # noqa: E402
from verifier.files import atomic_write_text  # noqa: E402
from verifier.cli.z3 import persist_result  # noqa: E402
from verifier.engines.smt import Shape, certify, encoded  # noqa: E402

AXES = {
    "users": lambda n: Shape(users=n + 1, servers=1, resources=2),
    "resources": lambda n: Shape(users=2, servers=1, resources=n + 1),
    "diagonal": lambda n: Shape(users=n + 1, servers=1, resources=n + 1),
    "servers": lambda n: Shape(users=2, servers=n + 1, resources=2),
    "external": lambda n: Shape(users=2, servers=n, resources=1, external=1),
    "wide": lambda n: Shape(users=2, servers=n + 1, resources=n + 1),
    "pooled": lambda n: Shape(users=n + 1, servers=2, resources=1),  # not in the default axes
}


ORDER = ["drf", "tsf-er", "tsf", "drfh", "c-drfh", "cdrf", "tsf-er-maxmin", "drf-er", "cru", "mnw"]
ORDER += sorted(set(encoded()) - set(ORDER))


def applicable(mech, axis: str) -> bool:
    st = mech.setting
    if st.single_server and axis in ("servers", "external", "pooled", "wide"):
        return False
    if axis == "external" and not st.external:
        return False
    return True


def short(shape: Shape) -> str:
    out = f"{shape.users}x{shape.servers}x{shape.resources}"
    return out + (f"+{shape.external}" if shape.external else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per shape (default 600 = 10 min)")
    ap.add_argument("--mechanisms", default=",".join(ORDER), help="comma-separated (default: all encoded)")
    ap.add_argument("--axes", default="users,resources,diagonal,servers,external",
                    help=f"comma-separated among {', '.join(AXES)} (default: all but pooled)")
    ap.add_argument("--max-steps", type=int, default=8, help="at most this many shapes per axis (default 8)")
    ap.add_argument("--method", choices=["encoding", "reduction", "auto"], default="encoding",
                    help="certify's method (default: encoding, the mechanism's full encoding; 'reduction' = "
                         "Lemma L7, common-level mechanisms only)")
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: CPU count)")
    ap.add_argument("--second-solver", action="store_true",
                    help="time every shape with and without cvc5's re-check, in the same run (second table)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="with --second-solver: time each shape this many times, alternating z3 alone and z3 + "
                         "cvc5, and report the medians (default 1)")
    ap.add_argument("--json", default=None, help="write every result here (JSON)")
    ap.add_argument("--markdown", default=None, help="write the table here too")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.mechanisms.split(",") if n.strip()]
    axes = [a.strip() for a in args.axes.split(",") if a.strip()]
    for n in names:
        if n not in encoded():
            ap.error(f"--mechanisms: {n!r} has no symbolic encoding (encoded: {', '.join(sorted(encoded()))})")
    for a in axes:
        if a not in AXES:
            ap.error(f"--axes: {a!r} is not one of {', '.join(AXES)}")
    store = tempfile.mkdtemp(prefix="bench-certify-")
    results, rows = [], []
    t_all = time.monotonic()
    print(f"# z3 SP certification ({args.method}), {args.timeout:.0f} s per shape, {os.cpu_count()} cores",
          file=sys.stderr)
    for name in names:
        mech = mechanisms.get(name)
        refuted = False
        for axis in axes:
            if not applicable(mech, axis) or refuted:
                continue  # after a violation, "the largest certified shape" means nothing
            best, stop = None, None
            for step in range(1, args.max_steps + 1):
                shape = AXES[axis](step)
                alone, alone_times, times, cvc5 = None, [], [], []
                for _ in range(args.repeat if args.second_solver else 1):
                    if args.second_solver:  # z3 alone first, then the same shape with cvc5's re-check
                        t0 = time.monotonic()
                        alone = certify(mech, "sp", "demand", shape, timeout=args.timeout, jobs=args.jobs,
                                        method=args.method, second=False).verdict
                        alone_times.append(time.monotonic() - t0)
                    t0 = time.monotonic()
                    r = certify(mech, "sp", "demand", shape, timeout=args.timeout, jobs=args.jobs, method=args.method)
                    times.append(time.monotonic() - t0)
                    cvc5.append(r.details.get("second_solver_seconds") or 0.0)
                r = persist_result(r, mech, store)
                rec = {"mechanism": name, "axis": axis, "method": r.details.get("method", args.method),
                       "shape": shape.as_dict(), "status": r.verdict,
                       "seconds": round(statistics.median(times), 2), "cases": r.details.get("cases", 0),
                       "queries": r.details.get("queries"), "reason": r.note,
                       "counterexample": r.counterexample}
                if alone is not None:
                    rec.update(z3_only_status=alone, z3_only_seconds=round(statistics.median(alone_times), 2),
                               cvc5_seconds=round(statistics.median(cvc5), 2), repeat=args.repeat,
                               agreement=r.details.get("agreement"),
                               logics=sorted({a["logic"] for a in r.details.get("answers", [])}))
                results.append(rec)
                print(f"  {name:14s} {axis:9s} {short(shape):8s} {r.verdict:9s} {rec['seconds']:8.2f} s  "
                      f"{r.note[:90]}", file=sys.stderr, flush=True)
                if r.verdict == "certified":
                    best = rec
                    continue
                stop = rec
                refuted = r.verdict == "violated"
                break
            rows.append((name, axis, best, stop))
    lines = ["| mechanism | axis | largest certified (time) | next shape |", "|---|---|---|---|"]
    for name, axis, best, stop in rows:
        b = f"{short(Shape(**best['shape']))} ({best['seconds']:.1f} s)" if best else "-"
        if stop is None:
            s = "not tried (--max-steps)"
        elif stop["status"] == "violated":
            s = f"{short(Shape(**stop['shape']))}: violated ({stop['seconds']:.1f} s, exact re-check passed)"
        else:
            s = f"{short(Shape(**stop['shape']))}: {stop['status']} at {stop['seconds']:.0f} s"
        lines.append(f"| {name} | {axis} | {b} | {s} |")
    if args.second_solver:
        lines += ["", "| mechanism | shape | method | z3 alone | z3 + cvc5 | cvc5 part | ratio | logic | verdict |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for rec in results:
            if rec.get("z3_only_status") != "certified":
                continue
            ratio = rec["seconds"] / max(rec["z3_only_seconds"], 1e-9)
            lines.append(f"| {rec['mechanism']} | {short(Shape(**rec['shape']))} | {rec['method']} | "
                         f"{rec['z3_only_seconds']:.2f} s | {rec['seconds']:.2f} s | {rec['cvc5_seconds'] or 0:.2f} s | "
                         f"{ratio:.2f}x | {', '.join(rec['logics'])} | {rec['status']} ({rec['agreement']}) |")
    table = "\n".join(lines)
    print(table)
    print(f"\ntotal {time.monotonic() - t_all:.0f} s; counterexamples in {store}", file=sys.stderr)
    if args.markdown:
        atomic_write_text(args.markdown, table + "\n")
    if args.json:
        atomic_write_text(args.json, json.dumps({"timeout": args.timeout, "method": args.method,
                                                 "cores": os.cpu_count(),
                                                 "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
