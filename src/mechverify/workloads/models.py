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
from .base import Param, Workload
from .traces import GOOGLE2011_MACHINES, GOOGLE2011_TOTAL, alibaba_tasks

__all__ = ["Uniform", "Google2011", "Alibaba2018", "Seed004", "Tree", "seed004_bandwidth_khz", "CPU_HZ", "SPECTRAL_EFFICIENCY",
           "GAMMA_SHAPE", "GAMMA_SCALE", "CYCLES_PER_BIT_MIN", "CYCLES_PER_BIT_MAX", "MAX_TASKS"]


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
    mechanisms = ("drfh", "per-server-drf")

    def draw(self, rng, values: Mapping[str, Any]) -> Environment:
        import numpy as np

        kinds = np.searchsorted(_google_cumulative(), rng.integers(0, GOOGLE2011_TOTAL, size=values["servers"]),
                                side="right")
        demand, tasks = _trace_users(rng, values["users"], values["bounded"])
        return Environment(
            resources=("cpu", "mem"), servers=_names("s", len(kinds)),
            capacity=tuple(GOOGLE2011_MACHINES[k][1:] for k in kinds.tolist()),
            users=_names("u", len(demand)), demand=demand, tasks=tasks)


# ---------------------------------------------------------------------- alibaba2018
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
    mechanisms = ("drf", "drfh", "tsf")

    def draw(self, rng, values: Mapping[str, Any]) -> Environment:
        demand, tasks = _trace_users(rng, values["users"], values["bounded"])
        S = values["servers"]
        return Environment(resources=("cpu", "mem"), servers=_names("s", S), capacity=((_INT[1], _INT[1]),) * S,
                           users=_names("u", len(demand)), demand=demand, tasks=tasks)


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
    mechanisms = ("tsf-er", "drf-er", "drf-eq", "drf-cpu", "drf-mem", "tsf-eq", "tsf-cpu", "tsf-mem")

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
