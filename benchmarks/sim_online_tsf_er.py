"""Online TSF-ER (seed 004 Algorithm 2) on a seeded synthetic workload: metrics and wall time.

    python benchmarks/sim_online_tsf_er.py                      # 1000 tasks, 40 users, seed 0
    python benchmarks/sim_online_tsf_er.py --seed 3 --slot 64 --tasks 2000 --users 60

Workload: ``simulation.tsf_er_online.synthetic_workload`` (three servers (1,1), (1+rho,1-rho),
(1-rho,1+rho) as in seed 004 Sec. 6.2, one external link).  Prints the seed's metrics: mean JCT
factor (Sec. 6.2; standalone = the same simulator with the user alone), and the time-averaged
MIN-SI-SAT, MIN-EF-SAT (Sec. 6.3), fractional domination factor (Sec. 6.2) and utilisation.
Deterministic for a seed; only the wall times vary between runs.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from mechanisms.paper.external_resources.online import tsf_er_online  # noqa: E402
from simulation import metrics as M  # noqa: E402
from simulation.tsf_er_online import jct_factors, simulate, synthetic_workload, time_averaged_metrics  # noqa: E402
from mechverify.numbers import fmt_exact  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tasks", type=int, default=1000, help="total tasks over all users (default 1000)")
    p.add_argument("--users", type=int, default=40)
    p.add_argument("--slot", default="256", help="reallocation slot in seconds, or 'none' (default 256, Table 4)")
    p.add_argument("--overhead", default="1/4", help="suspend/resume overhead in seconds (default 1/4 = 250 ms)")
    p.add_argument("--rho", default="7/10", help="server heterogeneity (default 7/10)")
    p.add_argument("--bw", default="1/4", help="external link capacity (default 1/4)")
    p.add_argument("--interarrival", type=int, default=300, help="mean seconds between job arrivals (default 300)")
    p.add_argument("--no-domination", action="store_true", help="skip the per-snapshot domination LPs")
    a = p.parse_args(argv)
    slot = None if a.slot.lower() == "none" else Fraction(a.slot)
    overhead = Fraction(a.overhead)

    t0 = time.perf_counter()
    env, arrival, duration = synthetic_workload(a.seed, a.tasks, a.users, Fraction(a.rho), Fraction(a.bw),
                                               a.interarrival)
    t1 = time.perf_counter()
    res = simulate(env, arrival, duration, slot=slot, overhead=overhead)
    t2 = time.perf_counter()
    factors = jct_factors(res, slot, overhead)
    t3 = time.perf_counter()
    avg = time_averaged_metrics(res, domination=not a.no_domination)
    t4 = time.perf_counter()
    static = tsf_er_online(env)
    sm = M.all_metrics(None, static)
    t5 = time.perf_counter()

    f = [float(v) for v in factors]
    print(f"workload: seed {a.seed}, {sum(res.n_tasks)} tasks, {env.n_users} users, {env.n_servers} servers, "
          f"slot {a.slot}, overhead {a.overhead}s, rho {a.rho}, bw {a.bw}, mean inter-arrival {a.interarrival}s")
    print(f"simulation: {res.batches} event batches, {res.steps} placements, {res.reallocations} reallocations, "
          f"{res.suspensions} suspensions, makespan {float(res.makespan):.1f}s")
    print(f"JCT factor: mean {statistics.mean(f):.4f}  median {statistics.median(f):.4f}  "
          f"min {min(f):.4f}  max {max(f):.4f}  (#>1: {sum(v > 1 for v in f)})")
    print(f"time-averaged over {float(avg['time']):.1f}s ({avg['snapshots']} snapshots): "
          f"MIN-SI-SAT {avg['min_si_sat']:.4f}  MIN-EF-SAT {avg['min_ef_sat']:.4f}"
          + ("" if a.no_domination else f"  domination factor {avg['domination_factor']:.4f}"))
    print("utilisation: " + "  ".join(f"{k} {v:.4f}" for k, v in avg["utilization"].items()))
    print(f"static audit form (all tasks at t=0): MIN-SI-SAT {float(sm.min_si_sat):.4f}  "
          f"MIN-EF-SAT {float(sm.min_ef_sat):.4f}  domination factor {float(sm.domination_factor):.4f} "
          f"(exact {fmt_exact(sm.domination_factor)})")
    print(f"wall time: workload {t1 - t0:.3f}s  simulate {t2 - t1:.3f}s  standalone runs {t3 - t2:.3f}s  "
          f"snapshot metrics {t4 - t3:.3f}s  static+exact metrics {t5 - t4:.3f}s  total {t5 - t0:.3f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
