"""The trace data the workload models draw from: Google's 2011 machine configurations (a table of the
paper), the Alibaba 2018 task table (``data/alibaba2018_tasks.json``) and the Alibaba 2018 sample's jobs with
their times (``data/alibaba2018_jobs.json``), both built by ``tools/build_alibaba_table.py``.  Nothing is
downloaded at run time.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["GOOGLE2011_MACHINES", "GOOGLE2011_TOTAL", "GOOGLE2011_SHARES_PERCENT", "TaskTable", "alibaba_tasks",
           "ALIBABA_CORES", "ALIBABA_MEMORY", "JobTable", "alibaba_jobs", "ALIBABA_SAMPLE_JOBS",
           "ALIBABA_SAMPLE_SECONDS", "ZERO_DURATION"]

#: Google cluster, May 2011 trace: (machines, CPU, memory) per configuration, CPU and memory normalised
#: to the largest machine.  Reiss, Tumanov, Ganger, Katz, Kozuch, "Heterogeneity and dynamicity of clouds
#: at scale: Google trace analysis", SoCC 2012, Table 1; the same counts are seed 001's Table I (which
#: cites that trace).  12 583 machines.
GOOGLE2011_MACHINES: tuple[tuple[int, Fraction, Fraction], ...] = (
    (6732, Fraction("0.50"), Fraction("0.50")),
    (3863, Fraction("0.50"), Fraction("0.25")),
    (1001, Fraction("0.50"), Fraction("0.75")),
    (795, Fraction("1.00"), Fraction("1.00")),
    (126, Fraction("0.25"), Fraction("0.25")),
    (52, Fraction("0.50"), Fraction("0.12")),
    (5, Fraction("0.50"), Fraction("0.03")),
    (5, Fraction("0.50"), Fraction("0.97")),
    (3, Fraction("1.00"), Fraction("0.50")),
    (1, Fraction("0.50"), Fraction("0.06")),
)
GOOGLE2011_TOTAL = sum(n for n, _, _ in GOOGLE2011_MACHINES)

#: The shares the issue quotes for the same table, in percent, same order (they differ from the counts'
#: shares by at most 0.04 percentage points: 6732 / 12583 = 53.50 %, quoted 53.47 %).
GOOGLE2011_SHARES_PERCENT: tuple[Fraction, ...] = tuple(Fraction(s) for s in (
    "53.47", "30.74", "7.95", "6.32", "0.99", "0.43", "0.04", "0.03", "0.02", "0.01"))

#: An Alibaba 2018 machine: 96 cores and memory 100 in the trace's normalised unit (spar's default
#: ``--machine-conf (96, 100)``, "as in Alibaba cluster"; the trace's schema normalises memory to [0, 100]).
ALIBABA_CORES = 96
ALIBABA_MEMORY = 100


@dataclass(frozen=True)
class TaskTable:
    """The Alibaba task table: distinct (plan_cpu, plan_mem, instances) rows with counts, as exact numbers,
    and the cumulative counts a draw bisects.  ``cpu``/``mem``: per task as a fraction of one machine."""

    header: dict[str, Any]
    plan_cpu: tuple[Fraction, ...]
    plan_mem: tuple[Fraction, ...]
    instances: tuple[int, ...]
    count: tuple[int, ...]
    cpu: tuple[Fraction, ...]  # plan_cpu / (100 * 96)
    mem: tuple[Fraction, ...]  # plan_mem / 100
    cumulative: Any  # numpy int64 array: cumulative[i] = count[0] + ... + count[i]

    @property
    def total(self) -> int:
        """Tasks the table counts (equals ``header["csv_rows"]``, the CSV's rows)."""
        return int(self.cumulative[-1])

    def draw(self, rng, n: int):
        """``n`` row indices, each row with probability count / total (one ``rng.integers`` call)."""
        import numpy as np

        u = rng.integers(0, self.total, size=n)
        return np.searchsorted(self.cumulative, u, side="right")


@lru_cache(maxsize=1)
def alibaba_tasks() -> TaskTable:
    """The shipped Alibaba 2018 task table (read once)."""
    import numpy as np

    text = resources.files("mechverify.workloads").joinpath("data", "alibaba2018_tasks.json").read_text("utf-8")
    data = json.loads(text)
    rows = data["rows"]
    plan_cpu = tuple(Fraction(r[0]) for r in rows)
    plan_mem = tuple(Fraction(r[1]) for r in rows)
    header = {k: v for k, v in data.items() if k != "rows"}
    return TaskTable(header, plan_cpu, plan_mem, tuple(int(r[2]) for r in rows), tuple(int(r[3]) for r in rows),
                     tuple(c / (100 * ALIBABA_CORES) for c in plan_cpu),
                     tuple(m / ALIBABA_MEMORY for m in plan_mem),
                     np.cumsum(np.array([int(r[3]) for r in rows], dtype=np.int64)))


#: Jobs in the Alibaba sample (``alibaba_jobs().header["jobs"]``; a parameter's range needs it at import).
ALIBABA_SAMPLE_JOBS = 16749
#: The sample's arrivals lie in [0, 3600] seconds: one hour.
ALIBABA_SAMPLE_SECONDS = 3600
#: What a duration recorded as 0 s stands for: the trace's clock counts whole seconds, so 0 means start and
#: end in the same second, a duration in [0, 1); the replay uses the middle, 1/2 s (a job trace's durations
#: are > 0).
ZERO_DURATION = Fraction(1, 2)


@dataclass(frozen=True)
class JobTable:
    """The Alibaba sample's jobs in CSV (arrival) order.  Per job: ``job_id`` (N of ``j_N``), ``arrival``
    (s from the sample's start), ``first`` (its first task's index) and ``tasks`` (how many); per task: its
    demand per instance as a fraction of one machine (``cpu``, ``mem``), ``instances``, ``span`` (the CSV's
    duration: the task's first start to last end) and ``mean`` (its instances' mean duration), both in
    seconds with a 0 s duration read as :data:`ZERO_DURATION`."""

    header: dict[str, Any]
    job_id: tuple[int, ...]
    arrival: tuple[int, ...]
    first: tuple[int, ...]
    tasks: tuple[int, ...]
    cpu: tuple[Fraction, ...]
    mem: tuple[Fraction, ...]
    instances: tuple[int, ...]
    span: tuple[Fraction, ...]
    mean: tuple[Fraction, ...]


@lru_cache(maxsize=1)
def alibaba_jobs() -> JobTable:
    """The shipped Alibaba 2018 job table (read once)."""
    text = resources.files("mechverify.workloads").joinpath("data", "alibaba2018_jobs.json").read_text("utf-8")
    data = json.loads(text)
    columns = data["job_columns"] + data["task_columns"]
    header = {k: v for k, v in data.items() if k not in columns}
    first, at = [], 0
    for n in data["tasks"]:
        first.append(at)
        at += n
    cpu_of: dict[int, Fraction] = {}
    mem_of: dict[int, Fraction] = {}
    cpu = tuple(cpu_of.setdefault(c, Fraction(c, 100 * ALIBABA_CORES)) for c in data["plan_cpu"])
    mem = tuple(mem_of.setdefault(m, Fraction(m, 100 * ALIBABA_MEMORY)) for m in data["plan_mem_hundredths"])
    span = tuple(Fraction(d) if d else ZERO_DURATION for d in data["duration"])
    # each instance lasting 0 s counts ZERO_DURATION = 1/2: (sum + zeros / 2) / instances, as ONE Fraction
    mean = tuple(Fraction(2 * s + z, 2 * n) for s, z, n in
                 zip(data["instance_seconds"], data["zero_instances"], data["instances"]))
    return JobTable(header, tuple(data["job_id"]), tuple(data["arrival"]), tuple(first), tuple(data["tasks"]),
                    cpu, mem, tuple(data["instances"]), span, mean)
