"""The workload models: ``uniform``, ``google2011``, ``alibaba2018``, ``seed004``, ``tree`` (docs/workloads.md).

Each draws every random number from the ``numpy.random.Generator`` it is given, in a fixed order, and
builds its numbers exactly (``int`` or ``Fraction``: the traces' decimals are exact decimals), so the
exact re-check of a violation found on a sample stays cheap.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any, Mapping

from ..model import Environment
from .base import Param, Workload, trace_number
from .traces import ALIBABA_SAMPLE_JOBS, GOOGLE2011_MACHINES, GOOGLE2011_TOTAL, alibaba_jobs, alibaba_tasks

__all__ = ["Uniform", "Google2011", "Alibaba2018", "Seed004", "Tree", "seed004_bandwidth_khz", "CPU_HZ", "SPECTRAL_EFFICIENCY",
           "GAMMA_SHAPE", "GAMMA_SCALE", "CYCLES_PER_BIT_MIN", "CYCLES_PER_BIT_MAX", "MAX_TASKS",
           "GOOGLE_JOBS_PER_HOUR", "GOOGLE_SINGLE_TASK", "GOOGLE_MAX_TASKS", "GOOGLE_MEDIAN_SECONDS",
           "GOOGLE_MIN_SECONDS", "GOOGLE_MAX_SECONDS", "ALIBABA_MACHINES"]


def _users(default: int, hi: int = 1000) -> Param:
    return Param("users", "int", default, "number of users", 1, hi)


def _servers(default: int, hi: int = 10_000) -> Param:
    return Param("servers", "int", default, "number of servers", 1, hi)


_BOUNDED_HELP = "each user's task bound is its trace task's instance count (false: unbounded, the fluid model)"

#: The largest task bound a trace user gets: the instance format's largest number (20 of the 67 634 tasks of
#: the Alibaba sample have more instances, at most 25 152).
MAX_TASKS = 10_000

_INT = tuple(Fraction(i) for i in range(21))  # shared exact small integers (Fractions are immutable)


@lru_cache(maxsize=256)
def _names(prefix: str, n: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i + 1}" for i in range(n))


def _trace_users(rng, n: int, bounded: bool) -> tuple[tuple, tuple]:
    """``n`` users' per-task (CPU, memory) and task bounds (``None`` unless ``bounded``: the instance count,
    at most :data:`MAX_TASKS`): Alibaba 2018 tasks drawn with their frequency in the trace sample (one
    table row per user, one ``rng.integers`` call); demands in units of one Alibaba machine."""
    table = alibaba_tasks()
    rows = table.draw(rng, n)
    demand = tuple((table.cpu[i], table.mem[i]) for i in rows)
    tasks = tuple(Fraction(min(MAX_TASKS, table.instances[i])) if bounded else None for i in rows)
    return demand, tasks


# ---------------------------------------------------------------------- uniform
@lru_cache(maxsize=64)
def _uniform_highs(J: int, S: int, R: int):
    import numpy as np

    return np.array([6] * (J * R) + [4] * J + [20] * (S * R), dtype=np.int64)


class Uniform(Workload):
    name = "uniform"
    title = "uniform random instances (the distribution of benchmarks/bench_batch.py make_instances)"
    provenance = ("Synthetic: the distribution the project's batch benchmark draws its random instances from "
                  "(benchmarks/bench_batch.py, make_instances): per user and resource an integer demand "
                  "uniform in 0..5 (an all-zero vector gets one uniform resource an integer uniform in 1..5), "
                  "weight 1 with probability 3/4 and 2 with probability 1/4, per server and resource an "
                  "integer capacity uniform in 1..20; no external resources, placement constraints or task "
                  "bounds.  Not the Hypothesis search of `run` (a byte-decoded space that depends on the "
                  "mechanism's setting: verifier.engines.strategies).")
    params = {"users": _users(3), "servers": _servers(2, 1000),
              "resources": Param("resources", "int", 2, "number of resources", 1, 10),
              "weights": Param("weights", "bool", True, "draw weights 1 (3/4) or 2 (1/4); false: every weight 1")}
    mechanisms = ("drfh", "tsf", "psdsf-rdm")

    def draw(self, rng, values: Mapping[str, Any]) -> Environment:
        J, S, R = values["users"], values["servers"], values["resources"]
        # ONE draw for demands (0..5), weights (0..3: 3 means weight 2) and capacities (1..20), in that order
        flat = rng.integers(0, _uniform_highs(J, S, R)).tolist()
        dem = [flat[j * R:(j + 1) * R] for j in range(J)]
        w = flat[J * R:J * R + J]  # drawn whether or not weights are on: the same stream
        cap = [[v + 1 for v in flat[J * R + J + s * R:J * R + J + (s + 1) * R]] for s in range(S)]
        for d in dem:  # then, in user order: an all-zero vector gets one resource 1..5
            if not any(d):
                d[int(rng.integers(0, R))] = int(rng.integers(1, 6))
        return Environment(
            resources=_names("r", R), servers=_names("s", S), capacity=tuple(tuple(_INT[v] for v in c) for c in cap),
            users=_names("u", J), demand=tuple(tuple(_INT[v] for v in d) for d in dem),
            weight=tuple(_INT[2] if (values["weights"] and x == 3) else _INT[1] for x in w))


# ---------------------------------------------------------------------- google2011
@lru_cache(maxsize=1)
def _google_cumulative():
    import numpy as np

    return np.cumsum([n for n, _, _ in GOOGLE2011_MACHINES])


#: Seed 004 Sec. 6.2: "the first 1000 job submissions in Google cluster trace, which span over the first 48
#: hours": 1000 / 48 jobs per hour, the default arrival rate.
GOOGLE_JOBS_PER_HOUR = Fraction(1000, 48)
#: Reiss et al., SoCC 2012: "75% of jobs consist of only one task".
GOOGLE_SINGLE_TASK = Fraction(3, 4)
#: Seed 004 Sec. 6.2: in those 1000 jobs "the number of tasks that jobs submit varies from 1 to 2854".
GOOGLE_MAX_TASKS = 2854
#: Reiss et al., SoCC 2012: "half of the jobs run for less than 3 minutes" -- the median, in seconds.
GOOGLE_MEDIAN_SECONDS = 180.0
#: Seed 004 Sec. 6.2: those jobs have "per task execution time from 15 seconds to 28 days".
GOOGLE_MIN_SECONDS = 15.0
GOOGLE_MAX_SECONDS = 28 * 24 * 3600.0


@lru_cache(maxsize=1)
def _google_many_cumulative():
    """Cumulative probabilities of the task count of a job with more than one task: P(n) proportional to
    1/n on 2..GOOGLE_MAX_TASKS (a power law, exponent 1; the convention docs/workloads.md states)."""
    import numpy as np

    w = 1.0 / np.arange(2, GOOGLE_MAX_TASKS + 1)
    c = np.cumsum(w) / w.sum()
    c[-1] = 1.0
    return c


def _google_servers(rng, n: int) -> list:
    """``n`` indices into GOOGLE2011_MACHINES, each with its share of the 12 583 machines (one draw)."""
    import numpy as np

    return np.searchsorted(_google_cumulative(), rng.integers(0, GOOGLE2011_TOTAL, size=n), side="right").tolist()


@lru_cache(maxsize=1)
def _google_capacity_texts() -> tuple:
    return tuple((trace_number(c), trace_number(m)) for _, c, m in GOOGLE2011_MACHINES)


@lru_cache(maxsize=4)
def _demand_texts(cpu: tuple, mem: tuple) -> tuple:
    """Per table row, its (CPU, memory) as a job trace spells them."""
    return tuple((trace_number(c), trace_number(m)) for c, m in zip(cpu, mem))


def _ms(ms: int) -> Any:
    """A time of ``ms`` whole milliseconds in seconds, as a job trace spells it: an int when whole, else the
    float ``ms / 1000`` (correctly rounded, so its shortest text is the decimal with at most 3 places, which
    the instance format's numbers read back exactly)."""
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def _google_job_shapes(rng, J: int) -> tuple[list, list]:
    """``J`` jobs' task counts and per-task durations (whole milliseconds) as google2011 draws them (four arrays,
    in this order): 75 % single-task jobs, else P(n) ~ 1/n on 2..2854; half the jobs log-uniform in [15 s, 3 min],
    half in [3 min, 28 days]."""
    import numpy as np

    single = rng.random(size=J) < float(GOOGLE_SINGLE_TASK)               # 75 % of jobs: one task
    many = np.searchsorted(_google_many_cumulative(), rng.random(size=J), side="right") + 2
    tasks = np.where(single, 1, many).tolist()
    short = rng.random(size=J) < 0.5                                      # median job: 3 minutes
    u = rng.random(size=J)
    lo = np.where(short, GOOGLE_MIN_SECONDS, GOOGLE_MEDIAN_SECONDS)
    hi = np.where(short, GOOGLE_MEDIAN_SECONDS, GOOGLE_MAX_SECONDS)
    duration = np.rint(lo * (hi / lo) ** u * 1000)                        # log-uniform in [lo, hi], ms
    duration = np.clip(duration, 1000 * GOOGLE_MIN_SECONDS, 1000 * GOOGLE_MAX_SECONDS).astype(np.int64).tolist()
    return tasks, duration


class Google2011(Workload):
    name = "google2011"
    title = "Google 2011 cluster's machine configurations, Alibaba 2018 task demands"
    provenance = ("Servers: drawn independently from the machine configurations of Google's 2011 cluster "
                  "trace, CPU and memory normalised to the largest machine, with their shares of the 12 583 "
                  "machines (Reiss, Tumanov, Ganger, Katz, Kozuch, 'Heterogeneity and dynamicity of clouds at "
                  "scale: Google trace analysis', SoCC 2012, Table 1; the same counts are seed 001's Table I, "
                  "and seed 001 Sec. VI draws its 100- and 2 000-server clusters from this distribution).  "
                  "Users: per-task (CPU, memory) of tasks of the Alibaba cluster-trace-v2018 sample shipped "
                  "by spar 0.0.7 (MIT), with their frequencies (see alibaba2018), in units of one Alibaba "
                  "machine (96 cores, memory 100), read as Google's largest machine (1, 1).")
    params = {"users": _users(3), "servers": _servers(100),
              "bounded": Param("bounded", "bool", False, _BOUNDED_HELP)}
    job_params = {
        "jobs": Param("jobs", "int", 100, "number of jobs (seed 004 Figs. 3-4 sample 100)", 1, 100_000),
        "rate": Param("rate", "number", GOOGLE_JOBS_PER_HOUR, "Poisson arrival rate, jobs per hour (default "
                      "1000/48: seed 004's first 1000 Google jobs span 48 hours)", Fraction(1, 1000),
                      Fraction(1_000_000)),
        "servers": _servers(100)}
    mechanisms = ("drfh", "per-server-drf")

    def draw(self, rng, values: Mapping[str, Any]) -> Environment:
        kinds = _google_servers(rng, values["servers"])
        demand, tasks = _trace_users(rng, values["users"], values["bounded"])
        return Environment(
            resources=("cpu", "mem"), servers=_names("s", len(kinds)),
            capacity=tuple(GOOGLE2011_MACHINES[k][1:] for k in kinds),
            users=_names("u", len(demand)), demand=demand, tasks=tasks)

    def draw_jobs(self, rng, values: Mapping[str, Any]) -> dict[str, Any]:
        """A job trace: the servers as :meth:`draw` draws them, then per job (one array each, in this order)
        its gap since the previous arrival, its task count, its per-task duration and its task demand
        (docs/workloads.md, "Workloads with time")."""
        import numpy as np

        J = values["jobs"]
        kinds = _google_servers(rng, values["servers"])
        gaps = rng.exponential(3600.0 / float(values["rate"]), size=J)          # Poisson arrivals, seconds
        arrival = np.rint(np.cumsum(gaps) * 1000).astype(np.int64).tolist()  # whole milliseconds
        tasks, duration = _google_job_shapes(rng, J)
        table = alibaba_tasks()
        rows = table.draw(rng, J).tolist()
        demand = _demand_texts(table.cpu, table.mem)
        return {"resources": ["cpu", "mem"], "unit": "s",
                "servers": [{"name": n, "capacity": list(_google_capacity_texts()[k])}
                            for n, k in zip(_names("s", len(kinds)), kinds)],
                "jobs": [{"arrival": _ms(a), "tasks": n, "duration": _ms(d), "demand": list(demand[r]),
                          "name": f"j{i + 1}"}
                         for i, (a, n, d, r) in enumerate(zip(arrival, tasks, duration, rows))]}


# ---------------------------------------------------------------------- alibaba2018
#: a job trace's task count is a task bound: at most the instance format's largest number
MAX_TASKS_PER_JOB = 10_000

#: The Alibaba cluster-trace-v2018 cluster: "about 4000 machines" (alibaba/clusterdata,
#: cluster-trace-v2018/trace_2018.md), the default number of servers of the replay.
ALIBABA_MACHINES = 4000


@lru_cache(maxsize=2)
def _duration_texts(durations: tuple) -> tuple:
    return tuple(trace_number(d) for d in durations)


class Alibaba2018(Workload):
    name = "alibaba2018"
    title = "Alibaba cluster-trace-v2018 task demands on identical Alibaba machines"
    provenance = ("Users: tasks of the public Alibaba cluster-trace-v2018 batch workload (one task = one user; "
                  "per-task plan_cpu / (100 x 96 cores) and plan_mem / 100, i.e. in units of one machine; its "
                  "instance count as the task bound), drawn with their frequencies in the one-hour sample "
                  "(16 749 jobs, 67 634 tasks) that the PyPI package spar 0.0.7 ships as "
                  "spar/data/samples/sample_tasks.csv (MIT licence, Copyright (c) 2019 All-less; the trace's "
                  "own terms: research or study use, github.com/alibaba/clusterdata).  Only a derived frequency "
                  "table ships (src/mechverify/workloads/data/alibaba2018_tasks.json, built by "
                  "tools/build_alibaba_table.py).  Servers: identical machines (1, 1) (96 cores, memory 100).")
    params = {"users": _users(10), "servers": _servers(1),
              "bounded": Param("bounded", "bool", True, _BOUNDED_HELP)}
    job_params = {
        "jobs": Param("jobs", "int", ALIBABA_SAMPLE_JOBS, "replay the sample's first this many jobs (all: 16749)",
                      1, ALIBABA_SAMPLE_JOBS),
        "keep": Param("keep", "number", Fraction(1), "keep each job with this probability (a smaller cluster)",
                      Fraction(1, 10_000), Fraction(1)),
        "servers": _servers(ALIBABA_MACHINES),
        "span": Param("span", "bool", False, "per-task duration = the task's span (the CSV's duration), not its "
                      "instances' mean duration")}
    mechanisms = ("drf", "drfh", "tsf")

    def draw(self, rng, values: Mapping[str, Any]) -> Environment:
        demand, tasks = _trace_users(rng, values["users"], values["bounded"])
        S = values["servers"]
        return Environment(resources=("cpu", "mem"), servers=_names("s", S), capacity=((_INT[1], _INT[1]),) * S,
                           users=_names("u", len(demand)), demand=demand, tasks=tasks)

    def draw_jobs(self, rng, values: Mapping[str, Any]) -> dict[str, Any]:
        """The sample replayed: each task of the first ``jobs`` jobs (each job kept with probability ``keep``:
        one ``rng.random`` call, none when ``keep`` is 1) is one job of the trace, at its job's arrival, with
        its instances as tasks, per task its demand and its instances' mean duration (``span``: the task's
        span); servers are ``servers`` identical machines (1, 1).  A task of more instances than a task bound
        may hold (the instance format's 10^4; 20 tasks of the sample, up to 25 152 instances) becomes several
        jobs of at most 10^4 tasks each, named ``j_<job>.<task>``, then ``-2``, ``-3``, ...: the same work, its
        parts completing on their own."""
        t = alibaba_jobs()
        N, keep = values["jobs"], values["keep"]
        kept = range(N)
        if keep < 1:
            kept = [j for j, u in enumerate(rng.random(size=N).tolist()) if u < keep]
        demand = _demand_texts(t.cpu, t.mem)
        duration = _duration_texts(t.span if values["span"] else t.mean)
        jobs = []
        for j in kept:
            at, first, name = t.arrival[j], t.first[j], f"j_{t.job_id[j]}."
            for k in range(t.tasks[j]):
                i = first + k
                left, part = t.instances[i], 1
                while left > 0:
                    n = min(left, MAX_TASKS_PER_JOB)
                    jobs.append({"arrival": at, "tasks": n, "duration": duration[i], "demand": list(demand[i]),
                                 "name": name + str(k + 1) + (f"-{part}" if part > 1 else "")})
                    left, part = left - n, part + 1
        S = values["servers"]
        return {"resources": ["cpu", "mem"], "unit": "s",
                "servers": [{"name": n, "capacity": [1, 1]} for n in _names("s", S)], "jobs": jobs}


# ---------------------------------------------------------------------- seed004
#: Seed 004 Sec. 6.2: CPU frequency 2.6 GHz (in Hz), spectral efficiency 3.5 bit/s/Hz, and the Gamma
#: distribution of X (cycles per bit: d_cpu f_cpu = X d_bps) with shape 4 and 200 (read as the SCALE,
#: docs/workloads.md explains why), rounded to whole cycles per bit and kept in [MIN, MAX].
CPU_HZ = 2_600_000_000
SPECTRAL_EFFICIENCY = Fraction(7, 2)
GAMMA_SHAPE = 4.0
GAMMA_SCALE = 200.0
CYCLES_PER_BIT_MIN = 6
CYCLES_PER_BIT_MAX = 1_000_000


def seed004_bandwidth_khz(cpu: Fraction, cycles_per_bit: int) -> Fraction:
    """Seed 004 Sec. 6.2's bandwidth per task, in kHz: ``d_bps = d_cpu f_cpu / X`` (bit/s) and
    ``d_er = d_bps / 3.5`` (Hz).  ``cpu`` in units of one machine (the trace's normalisation, as the paper
    uses Google's), ``X = cycles_per_bit``."""
    # cpu * CPU_HZ / (X * 7/2 * 1000) as ONE Fraction (the sampler builds one per user)
    return Fraction(cpu.numerator * CPU_HZ * SPECTRAL_EFFICIENCY.denominator,
                    cpu.denominator * cycles_per_bit * SPECTRAL_EFFICIENCY.numerator * 1000)


def _rho_fits(rho: Fraction) -> str:
    if 1 - rho < Fraction(1, 10_000):
        return ("must be at most 0.9999 (the server (1 - rho, 1 + rho) needs a capacity >= 1e-4, the instance "
                "format's smallest number)")
    return ""


class Seed004(Workload):
    name = "seed004"
    title = "seed 004 Sec. 6.2: three servers (1, 1), (1 + rho, 1 - rho), (1 - rho, 1 + rho) and a shared link"
    provenance = ("Meskar and Liang, 'Fair multi-resource allocation in heterogeneous servers with an external "
                  "resource type' (seed 004), Sec. 6.2: the server (1, 1) plus (1 + rho, 1 - rho) and "
                  "(1 - rho, 1 + rho) (aggregate 3 per resource; rho in {0.5, 0.7, 0.9}), 10, 15 or 20 users, "
                  "one external resource, bandwidth, of 1, 2 or 3 MHz; a user's bit rate from d_cpu f_cpu = X "
                  "d_bps with f_cpu = 2.6 GHz and X ~ Gamma(shape 4, 200), its bandwidth d_bps / 3.5 bit/s/Hz.  "
                  "The paper samples users from the first 1 000 jobs of Google's 2011 trace; here their "
                  "(CPU, memory) are tasks of the Alibaba cluster-trace-v2018 sample (see alibaba2018), in "
                  "units of one machine.  Bandwidth is in kHz in the instance (capacity 1000 x MHz).  Every "
                  "choice the paper leaves open: docs/workloads.md.")
    params = {"users": _users(15, 200),
              "rho": Param("rho", "number", Fraction(7, 10), "server heterogeneity", Fraction(0), Fraction(1),
                           hi_open=True, check=_rho_fits),
              "bandwidth": Param("bandwidth", "number", Fraction(2), "capacity of the link, in MHz",
                                 Fraction(1, 1000), Fraction(10),
                                 note="in the instance it is kHz, and the format's numbers are at most 1e4"),
              "bounded": Param("bounded", "bool", False, _BOUNDED_HELP)}
    job_params = {
        "users": _users(15, 200),
        "rho": params["rho"],
        "bandwidth": params["bandwidth"],
        "span": Param("span", "number", Fraction(48), "the arrivals are uniform over this many hours (seed 004: "
                      "its users are sampled from the first 1000 Google jobs, which span 48 hours)",
                      Fraction(1, 1000), Fraction(10_000))}
    mechanisms = ("tsf-er", "drf-er", "drf-eq", "drf-cpu", "drf-mem", "tsf-eq", "tsf-cpu", "tsf-mem")

    def draw_jobs(self, rng, values: Mapping[str, Any]) -> dict[str, Any]:
        """A job trace of seed 004 Sec. 6.2's small-scale experiments (Tables 3-4): the three servers and the
        link of :meth:`draw`; ``users`` jobs (one user each), drawn in this order: arrival times uniform over
        ``span`` hours (whole milliseconds, sorted, shifted so the first job arrives at 0), task counts and
        per-task durations as google2011 draws them (the paper: 1 to 2854 tasks, 15 s to 28 days), per-task
        (CPU, memory) an Alibaba 2018 task and its bandwidth from X ~ Gamma as :meth:`draw` does."""
        import numpy as np

        J, rho = values["users"], values["rho"]
        arrival = np.sort(np.rint(rng.random(size=J) * float(values["span"]) * 3_600_000).astype(np.int64))
        arrival = (arrival - arrival[0]).tolist()
        tasks, duration = _google_job_shapes(rng, J)
        demand, _ = _trace_users(rng, J, False)
        x = rng.gamma(GAMMA_SHAPE, GAMMA_SCALE, size=J).tolist()
        ext = [seed004_bandwidth_khz(d[0], min(CYCLES_PER_BIT_MAX, max(CYCLES_PER_BIT_MIN, round(xi))))
               for d, xi in zip(demand, x)]
        return {"resources": ["cpu", "mem"], "unit": "s",
                "servers": [{"name": "s1", "capacity": [1, 1]},
                            {"name": "s2", "capacity": [trace_number(1 + rho), trace_number(1 - rho)]},
                            {"name": "s3", "capacity": [trace_number(1 - rho), trace_number(1 + rho)]}],
                "external": [{"name": "bw", "capacity": trace_number(values["bandwidth"] * 1000)}],
                "jobs": [{"arrival": _ms(a), "tasks": n, "duration": _ms(d),
                          "demand": [trace_number(c) for c in dm], "external_demand": [trace_number(e)],
                          "name": f"u{i + 1}"}
                         for i, (a, n, d, dm, e) in enumerate(zip(arrival, tasks, duration, demand, ext))]}

    def draw(self, rng, values: Mapping[str, Any]) -> Environment:
        rho = values["rho"]
        demand, tasks = _trace_users(rng, values["users"], values["bounded"])
        x = rng.gamma(GAMMA_SHAPE, GAMMA_SCALE, size=len(demand)).tolist()
        ext = tuple((seed004_bandwidth_khz(d[0], min(CYCLES_PER_BIT_MAX, max(CYCLES_PER_BIT_MIN, round(xi)))),)
                    for d, xi in zip(demand, x))
        one = _INT[1]
        return Environment(
            resources=("cpu", "mem"), servers=("s1", "s2", "s3"),
            capacity=((one, one), (1 + rho, 1 - rho), (1 - rho, 1 + rho)),
            users=_names("u", len(demand)), demand=demand, tasks=tasks,
            external=("bw",), external_capacity=(values["bandwidth"] * 1000,), external_demand=ext)


# ---------------------------------------------------------------------- tree
class Tree(Workload):
    name = "tree"
    title = "queue trees with declared guarantees on one pool (hierarchical and quota policies)"
    provenance = ("Synthetic: one pool with integer capacities uniform in 10..40 per resource; `queues` top-level "
                  "queues (integer weights uniform in 1..4), each with 0, 1 or 2 child queues (uniformly), "
                  "every user in a uniformly drawn leaf; per user and resource an integer demand uniform in 1..5, "
                  "weight 1, a task bound uniform in 1..10 (`bounded`, as Kueue's whole workloads need; false: "
                  "unbounded).  Declared guarantees, nested as production schedulers expect them: the top-level "
                  "queues split `guaranteed` of the pool in proportion to integer shares uniform in 1..10 "
                  "(floored per resource, so they never add up to more than the pool); a child queue gets a "
                  "guarantee with probability 1/2, the same split of its parent's.  `maxes`: a top-level queue's "
                  "max is its guarantee plus a uniform integer share of the rest of the pool.  No queue "
                  "declaration raises a warning (mechverify.declared): quota applies to every sample.")
    params = {"users": _users(6, 200),
              "queues": Param("queues", "int", 3, "number of top-level queues", 1, 20),
              "resources": Param("resources", "int", 2, "number of resources", 1, 10),
              "guaranteed": Param("guaranteed", "number", Fraction(4, 5),
                                  "the fraction of the pool the top-level guarantees split", Fraction(0), Fraction(1)),
              "maxes": Param("maxes", "bool", False, "declare a max on every top-level queue"),
              "bounded": Param("bounded", "bool", True, "task bounds 1..10 (false: unbounded users)")}
    mechanisms = ("hdrf", "hdrf-tasks", "kueue-drs")

    def draw(self, rng, values: Mapping[str, Any]) -> Environment:
        J, Q, R = values["users"], values["queues"], values["resources"]
        frac, maxes, bounded = values["guaranteed"], values["maxes"], values["bounded"]
        cap = [int(v) for v in rng.integers(10, 41, size=R)]  # the pool
        paths: list[str] = []
        weights: list[Fraction] = []
        guarantees: list = []
        leaves: list[int] = []

        def split(amount, shares):  # floor(amount * share / total) per resource: never more than amount
            total = sum(shares)
            return [tuple(Fraction((a * s) // total) for a in amount) for s in shares]

        top_w = [int(v) for v in rng.integers(1, 5, size=Q)]
        top_shares = [int(v) for v in rng.integers(1, 11, size=Q)]
        kids = [int(v) for v in rng.integers(0, 3, size=Q)]
        pool_g = [Fraction(c) * frac for c in cap]
        top_g = split(pool_g, top_shares)
        for i in range(Q):
            paths.append(f"q{i + 1}")
            weights.append(_INT[top_w[i]])
            guarantees.append(tuple(Fraction(v) for v in top_g[i]))
            top = len(paths) - 1
            if not kids[i]:
                leaves.append(top)
                continue
            c_w = [int(v) for v in rng.integers(1, 5, size=kids[i])]
            c_shares = [int(v) for v in rng.integers(1, 11, size=kids[i])]
            c_on = [bool(v) for v in rng.integers(0, 2, size=kids[i])]
            c_g = split(list(guarantees[top]), c_shares)
            for k in range(kids[i]):
                paths.append(f"q{i + 1}/c{k + 1}")
                weights.append(_INT[c_w[k]])
                guarantees.append(tuple(Fraction(v) for v in c_g[k]) if c_on[k] else None)
                leaves.append(len(paths) - 1)
        qmax: tuple = ()
        if maxes:
            extra = rng.integers(0, 1_000_000, size=(Q, R)).tolist()
            mx = []
            for q, g in enumerate(guarantees):
                if "/" in paths[q]:
                    mx.append(None)
                    continue
                i = int(paths[q][1:]) - 1
                mx.append(tuple(g[r] + Fraction((cap[r] - g[r]) * extra[i][r] // 1_000_000) for r in range(R)))
            qmax = tuple(mx)
        dem = rng.integers(1, 6, size=(J, R)).tolist()
        where = rng.integers(0, len(leaves), size=J).tolist()
        bounds = rng.integers(1, 11, size=J).tolist()
        return Environment(
            resources=_names("r", R), servers=("pool",), capacity=(tuple(_INT[c] if c <= 20 else Fraction(c)
                                                                          for c in cap),),
            users=_names("u", J), demand=tuple(tuple(_INT[v] for v in d) for d in dem),
            tasks=tuple(_INT[b] for b in bounds) if bounded else (),
            queues=tuple(paths), queue_weight=tuple(weights), queue_guarantee=tuple(guarantees), queue_max=qmax,
            user_queue=tuple(leaves[w] for w in where))
