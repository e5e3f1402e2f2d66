"""Production policies over time (docs/executions.md, docs/performance.md "Policies over time"): how long a trace
of N jobs takes through ``slurm-fairtree``, ``kueue-afs`` and ``yarn-drf-preempt``, and how that grows with the
jobs and with the queue tree -- each against baselines measured in the same run.  Not a test:

    python benchmarks/bench_policies_over_time.py [--jobs 1000,3000,10000] [--trees 2x2,4x4,8x8] [--repeat 3]
                                                  [--policies slurm-fairtree,kueue-afs,yarn-drf-preempt]
                                                  [--rate 5] [--load 0.85] [--gpu] [--exact 100] [--seed 0]
                                                  [--baselines stepping,drf+recompute] [--max-seconds 120]
                                                  [--src OTHER_CHECKOUT/src]

The trace (seeded, :func:`trace`): ``N`` jobs arrive (Poisson, ``--rate`` jobs per time unit, times to 1/100),
each a user with 1-8 tasks of <1-4 cpu, 1-16 mem> (``--gpu``: a quarter of them also 1 gpu a task), a per-task
``duration`` of 1-12 time units (so it finishes and leaves when its work is done), weight 1, in a leaf queue
drawn with a skew (leaf k with weight 1/(k+1)).  The queue tree: ``PxL`` -- P parents of L leaves (weights 1-4,
every other leaf with a guarantee: a YARN min share), ``L`` -- L leaves under the root.  One pool (the setting
``kueue-afs`` and ``yarn-drf-preempt`` share) sized so that the offered cpu load is ``--load`` of it (mem and gpu
never scarcer).  The time unit is each port's own: Slurm's calc period, Kueue's sampling interval.

Each policy steps through the trace as ``mechanisms.core.time.execute`` does (``run`` with a fresh ``stepper_for``,
its calls timed) in floats (``exact=False``: the screening's mode; ``yarn-drf-preempt`` computes exactly in every mode).  Baselines, same trace, same run:

* ``stepping`` -- a trivial stepper (every present job runs all its tasks, capacity ignored): what building the
  present environments, carrying allocations and timing the finishes costs;
* ``drf+recompute`` (``--baselines stepping,drf+recompute``) -- DRF from scratch at every event (the vectorised
  float allocator), on the same jobs without the queue tree (DRF is defined without one).

The two baselines finish jobs at other times than the policies (nobody waits under ``stepping``), so their step
counts may differ (the column ``steps``: the last name's).  Each case runs ``--repeat`` times: the median, the
spread, and in brackets the median time spent inside the policy's own ``step`` (the rest is the stepping around
it).  A name past ``--max-seconds`` in a case is not run in the later cases of its table.  ``--exact K``: one
exact run of a K-job trace per name, against the same trace in floats (``0``: none).  ``--src``: time another
checkout's ``src/`` (e.g. the code before a change) with this script.

Measured: docs/performance.md, "Policies over time (10^4 jobs)".
"""
from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from dataclasses import replace
from fractions import Fraction as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SRC = next((sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--src"), os.path.join(ROOT, "src"))
sys.path.insert(0, _SRC)

import mechanisms  # noqa: E402
from mechanisms.core.time import TimeSpec, stepper_for  # noqa: E402
from mechverify.allocation import Allocation  # noqa: E402
from mechverify.execution import Event, Execution, UserSpec, run  # noqa: E402

POLICIES = ("slurm-fairtree", "kueue-afs", "yarn-drf-preempt")


def queue_tree(spec: str, rng: random.Random) -> tuple[tuple[str, ...], tuple, tuple, list[str]]:
    """``(queues, weights, guarantees, leaves)`` of ``PxL`` (P parents of L leaves) or ``L`` (flat)."""
    if "x" in spec:
        p, l = (int(v) for v in spec.split("x"))
        parents = [f"p{a}" for a in range(p)]
        leaves = [f"p{a}/l{b}" for a in range(p) for b in range(l)]
    else:
        parents, leaves = [], [f"l{b}" for b in range(int(spec))]
    names = parents + leaves
    weights = tuple(F(rng.randint(1, 4)) for _ in names)
    guar = tuple(None for _ in parents) + tuple(
        (F(rng.randint(4, 16)), F(rng.randint(16, 64))) if i % 2 else None for i in range(len(leaves)))
    return tuple(names), weights, guar, leaves


def trace(jobs: int, tree: str, seed: int = 0, rate: float = 5.0, load: float = 0.85, gpu: bool = False) -> Execution:
    """The trace of ``jobs`` jobs over the tree ``tree`` (module docstring)."""
    rng = random.Random(f"{seed}/{tree}/{jobs}")
    queues, weights, guar, leaves = queue_tree(tree, rng)
    R = 3 if gpu else 2
    if gpu:
        guar = tuple(None if g is None else g + (F(0),) for g in guar)
    skew = [1 / (k + 1) for k in range(len(leaves))]
    evs, t, cpu_time = [], 0.0, 0
    for i in range(jobs):
        t += rng.expovariate(rate)
        tasks, dur = rng.randint(1, 8), rng.randint(1, 12)
        d = [F(rng.randint(1, 4)), F(rng.randint(1, 16))]
        if gpu:
            d.append(F(1) if rng.random() < 0.25 else F(0))
        cpu_time += tasks * d[0] * dur
        name = f"j{i}"
        spec = UserSpec(name, tuple(d), tasks=F(tasks), queue=rng.choices(leaves, skew)[0], duration=F(dur),
                        work=F(tasks * dur))
        evs.append(Event(F(round(t * 100), 100), "arrive", name, spec=spec))
    horizon = max(float(evs[-1].t), 1.0)
    cpu = max(64, math.ceil(cpu_time / horizon / load))
    cap = (F(cpu), F(4 * cpu)) + ((F(max(8, cpu // 8)),) if gpu else ())
    return Execution(("cpu", "mem", "gpu")[:R], ("pool",), (cap,), (), tuple(evs), queues=queues,
                     queue_weight=weights, queue_guarantee=guar, queue_max=tuple(None for _ in queues),
                     name=f"{jobs} jobs, tree {tree}")


class _Everything:
    """The trivial stepper: every present job runs all its tasks (capacity ignored)."""

    def __init__(self, mech, ex, exact):
        self.exact = exact

    def step(self, ctx) -> Allocation:
        env = ctx.env
        num = F if self.exact else float
        return Allocation(env, tuple((num(n),) for n in env.tasks), "stepping", self.exact)


STEPPING = replace(mechanisms.get("drf"), name="stepping", time=TimeSpec(begin=_Everything))


def flat(ex: Execution) -> Execution:
    """The same jobs without the queue tree (for a baseline defined without one, e.g. DRF)."""
    evs = tuple(replace(e, spec=replace(e.spec, queue=None)) if e.kind == "arrive" else e for e in ex.events)
    return replace(ex, events=evs, queues=(), queue_weight=(), queue_guarantee=(), queue_max=())


class _Timed:
    """A stepper's calls timed: what the policy itself costs, apart from the stepping around it."""

    def __init__(self, inner):
        self.inner, self.seconds = inner, 0.0
        for name in ("wake_at", "state_key", "owns_completions", "completed"):  # read by the run at every step
            if hasattr(inner, name):
                setattr(self, name, getattr(inner, name))

    def step(self, ctx):
        t0 = time.perf_counter()
        try:
            return self.inner.step(ctx)
        finally:
            self.seconds += time.perf_counter() - t0

    def __getattr__(self, name):
        return getattr(self.inner, name)


def run_once(name: str, ex: Execution, exact: bool = False) -> tuple[float, float, int]:
    """(seconds in all, seconds in the policy's steps, steps) of one run."""
    mech = STEPPING if name == "stepping" else mechanisms.get(name)
    if not mech.setting.hierarchy:
        ex = flat(ex)
    t0 = time.perf_counter()
    stepper = _Timed(stepper_for(mech, ex, exact))
    steps = list(run(ex, stepper, exact))
    return time.perf_counter() - t0, stepper.seconds, len(steps)


def measure(name: str, ex: Execution, repeat: int) -> tuple[float, float, float, float, int]:
    """(median, min, max seconds, median seconds in the policy's own steps, steps) over ``repeat`` runs."""
    times, own, n = [], [], 0
    for _ in range(repeat):
        secs, mine, n = run_once(name, ex)
        times.append(secs)
        own.append(mine)
    return statistics.median(times), min(times), max(times), statistics.median(own), n


def table(title: str, cases: list[tuple[str, Execution]], names: list[str], repeat: int, cap: float) -> dict:
    """One row per case, per name ``median s (min-max) [own s]``; a name past ``cap`` seconds in a case is not run
    in the later (larger) cases of the table."""
    print(f"\n{title}")
    print(f"{'case':>16s} {'steps':>6s}" + "".join(f"{n:>30s}" for n in names))
    out: dict = {}
    over: set = set()
    for label, ex in cases:
        row, steps = [], 0
        for n in names:
            if n in over:
                row.append(f"{'(skipped: > ' + format(cap, 'g') + ' s before)':>30s}")
                continue
            med, lo, hi, own, steps = measure(n, ex, repeat)
            out[(label, n)] = med
            row.append(f"{med:7.2f} s ({lo:6.2f}-{hi:6.2f}) [{own:6.2f}]".rjust(30))
            if med > cap:
                over.add(n)
        print(f"{label:>16s} {steps:6d}{''.join(row)}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default="1000,3000,10000", help="trace sizes (growth with jobs, on --tree)")
    ap.add_argument("--tree", default="4x4", help="the tree of the growth-with-jobs table")
    ap.add_argument("--trees", default="2x2,4x4,8x8,64", help="trees of the growth-with-tree table (at the most jobs)")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--baselines", default="stepping", help="e.g. stepping,drf+recompute")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rate", type=float, default=5.0, help="jobs arriving per time unit")
    ap.add_argument("--load", type=float, default=0.85, help="offered cpu load of the pool")
    ap.add_argument("--gpu", action="store_true", help="a third resource, gpu")
    ap.add_argument("--exact", type=int, default=100, help="one exact run of this many jobs per policy (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=120.0,
                    help="a name taking longer than this in a case is not run in the larger cases")
    ap.add_argument("--src", default=os.path.join(ROOT, "src"), help="the src/ of the checkout to measure")
    ap.add_argument("--no-tree-table", action="store_true")
    a = ap.parse_args()
    names = [n for n in a.baselines.split(",") if n] + [n for n in a.policies.split(",") if n]
    sizes = [int(s) for s in a.jobs.split(",") if s]
    mk = lambda n, tr: trace(n, tr, a.seed, a.rate, a.load, a.gpu)  # noqa: E731
    print(f"{_SRC}: seconds in floats, median of {a.repeat} (min-max) [of which in the policy's own steps]; "
          f"rate {a.rate}/unit, load {a.load}, resources {'cpu, mem, gpu' if a.gpu else 'cpu, mem'}; "
          f"load average {os.getloadavg()[0]:.1f}")
    table(f"growth with jobs (tree {a.tree})", [(f"{n} jobs", mk(n, a.tree)) for n in sizes], names, a.repeat,
          a.max_seconds)
    top = max(sizes)
    if not a.no_tree_table:
        table(f"growth with the tree ({top} jobs)", [(f"tree {tr}", mk(top, tr)) for tr in a.trees.split(",") if tr],
              names, a.repeat, a.max_seconds)
    if a.exact:
        ex = mk(a.exact, a.tree)
        print(f"\none exact run of {a.exact} jobs (tree {a.tree}), against the same trace in floats")
        for n in names:
            ts, _, steps = run_once(n, ex, exact=True)
            tf, _, _ = run_once(n, ex, exact=False)
            print(f"{n:>22s}: exact {ts:7.2f} s, floats {tf:6.2f} s ({steps} steps)", flush=True)


if __name__ == "__main__":
    main()
