"""Build the Alibaba cluster-trace-v2018 tables that the workload models sample from and replay.

    python tools/build_alibaba_table.py                       # pip download spar==0.0.7 --no-deps, then build
    python tools/build_alibaba_table.py --wheel PATH.whl      # from a wheel already on disk
    python tools/build_alibaba_table.py --check               # rebuild in memory, compare with BOTH shipped files

Source: the PyPI package ``spar`` 0.0.7 (https://github.com/All-less/trace-generator, MIT licence) ships a
sample of the public Alibaba cluster-trace-v2018 batch workload (one hour, 16 749 jobs) as
``spar/data/samples/sample_tasks.csv``, and its instances as ``spar/data/samples/sample_instances.csv``.
Only those two CSVs are read (straight from the wheel, a zip file; never the wheel's ``.pkl`` files,
nothing is installed or imported).  The tasks CSV's columns (spar/io.py writes ``arrival,job_id,`` and then the fields spar/generate.py lists: task name,
duration, plan_cpu, plan_mem, instance count; the trace's schema, alibaba/clusterdata
cluster-trace-v2018/schema.md "Batch Task": plan_cpu is "number of cpu needed by the task, 100 is 1 core",
plan_mem is "normalized memory size, [0, 100]").

What the times are.  ``arrival`` is the job's arrival in whole seconds from the start of the sample (0 to
3600: one hour; spar/cli.py divides it by ``--load-factor`` and multiplies it by ``--duration`` in hours, and
the rows are in non-decreasing arrival order).  ``duration`` is the TASK's duration in whole seconds: spar
does not define it beyond the name (spar/generate.py draws it from ``task_duration_dist.pkl`` in the same
position), and the data show it is the span of the whole task -- the trace's batch_task ``end_time -
start_time``, from its first instance's start to its last instance's end -- not the running time of one
instance: the instances CSV (``arrival, job_id, task name, instance name, duration, cpu_avg, mem_avg``, the
fields spar/generate.py lists for an instance) has exactly ``instances`` rows for every task (3 056 536 in
all), and in every one of the 67 634 tasks the longest instance lasts at most the task's duration (exactly
as long in 29 151 tasks); the instances' durations sum to 162 051 558 instance-seconds, while the tasks'
duration x instances sum to 480 256 083 (the instances of a task run in waves, or start late).  2 533 tasks
and 42 998 instances have duration 0 (start and end in the same second of the trace's 1-second clock).

Output 1: ``src/mechverify/workloads/data/alibaba2018_tasks.json``, the frequency table of distinct
``(plan_cpu, plan_mem, instances)`` triples with their counts (no binning is needed: the sample holds 3 046
distinct triples, about 50 KB), the CSV's row count, the SHA-256 of the wheel and of the CSV, and the
licence note.  Deterministic (rows sorted by value), so a rebuild gives the same bytes.

Output 2: ``src/mechverify/workloads/data/alibaba2018_jobs.json``, the sample's jobs in CSV order, as
columns (one JSON list per line): per job its id (the number of ``j_N``), arrival and number of tasks
(rows); per task, in CSV order, its duration (the span, as in the CSV), plan_cpu, plan_mem in hundredths
(every plan_cpu of the sample is a whole number and every plan_mem has at most two decimals: exact
integers), instance count, the sum of its instances' durations and how many of those are 0.  Task names
(which encode the job's DAG, ``R23_22``: task 23 after task 22) are not kept.  Deterministic (CSV order).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from decimal import Decimal, InvalidOperation

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "src", "mechverify", "workloads", "data", "alibaba2018_tasks.json")
JOBS_OUT = os.path.join(ROOT, "src", "mechverify", "workloads", "data", "alibaba2018_jobs.json")
WHEEL = "spar-0.0.7-py3-none-any.whl"
CSV = "spar/data/samples/sample_tasks.csv"
INSTANCES_CSV = "spar/data/samples/sample_instances.csv"
INSTANCE_COLUMNS = ("arrival", "job_id", "task_name", "instance_name", "duration", "cpu_avg", "mem_avg")
LICENSE = "spar-0.0.7.dist-info/LICENSE"
COLUMNS = ("arrival", "job_id", "task_name", "duration", "plan_cpu", "plan_mem", "instances")


def download(directory: str) -> str:
    """``pip download spar==0.0.7 --no-deps`` into ``directory``; the wheel's path."""
    subprocess.run([sys.executable, "-m", "pip", "download", "spar==0.0.7", "--no-deps", "--only-binary", ":all:",
                    "-d", directory], check=True)
    path = os.path.join(directory, WHEEL)
    if not os.path.exists(path):
        raise SystemExit(f"pip download did not produce {WHEEL} in {directory}")
    return path


def _decimal(text: str, what: str, line: int) -> str:
    """The canonical decimal text of a CSV number (``'50.0'`` -> ``'50'``, ``'0.30'`` -> ``'0.3'``)."""
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise SystemExit(f"{CSV} line {line}: {what} is not a number: {text!r}")
    if not d.is_finite() or d <= 0:
        raise SystemExit(f"{CSV} line {line}: {what} must be a positive number, got {text!r}")
    out = format(d.normalize(), "f")
    return out


def _source(wheel_sha: str, raw: bytes) -> dict:
    """Where the numbers come from (the wheel, the tasks CSV and their SHA-256)."""
    return {
        "trace": "Alibaba cluster-trace-v2018, batch_task (https://github.com/alibaba/clusterdata, "
                 "cluster-trace-v2018/schema.md)",
        "package": "spar 0.0.7 on PyPI (https://pypi.org/project/spar/0.0.7/, "
                   "https://github.com/All-less/trace-generator)",
        "wheel": WHEEL,
        "wheel_sha256": wheel_sha,
        "file": CSV,
        "file_sha256": hashlib.sha256(raw).hexdigest(),
        "csv_columns": list(COLUMNS),
    }


def _licence(text: str) -> dict:
    """The licence note: spar's MIT notice (reproduced) and the trace's terms."""
    return {
        "spar": "MIT License, Copyright (c) 2019 All-less (" + LICENSE + "; the notice is reproduced in "
                "'spar_license_text' below)",
        "trace": "The Alibaba Cluster Trace Program asks that its traces be used for research or study "
                 "purposes (alibaba/clusterdata README: 'You may use trace however you want as long as it "
                 "is for reseach or study purpose')",
        "spar_license_text": text,
    }


def build(wheel: str) -> dict:
    """The table (a JSON-ready dict) from the wheel at ``wheel``."""
    with open(wheel, "rb") as fh:
        wheel_sha = hashlib.sha256(fh.read()).hexdigest()
    with zipfile.ZipFile(wheel) as zf:
        raw = zf.read(CSV)
        licence = zf.read(LICENSE).decode("utf-8")
    counts: Counter = Counter()
    jobs = set()
    rows = 0
    for line, rec in enumerate(csv.reader(io.StringIO(raw.decode("utf-8"))), start=1):
        if len(rec) != len(COLUMNS):
            raise SystemExit(f"{CSV} line {line}: expected {len(COLUMNS)} columns ({', '.join(COLUMNS)}), got {len(rec)}")
        rows += 1
        jobs.add(rec[1])
        cpu = _decimal(rec[4], "plan_cpu", line)
        mem = _decimal(rec[5], "plan_mem", line)
        try:
            inst = int(rec[6])
        except ValueError:
            raise SystemExit(f"{CSV} line {line}: instances is not an integer: {rec[6]!r}")
        if inst < 1:
            raise SystemExit(f"{CSV} line {line}: instances must be >= 1, got {inst}")
        counts[(cpu, mem, inst)] += 1
    table = sorted(counts.items(), key=lambda kv: (Decimal(kv[0][0]), Decimal(kv[0][1]), kv[0][2]))
    return {
        "table": "alibaba2018_tasks",
        "description": "Distinct (plan_cpu, plan_mem, instances) triples of the tasks of a public sample of the "
                       "Alibaba cluster-trace-v2018 batch workload, with how many tasks have each; built by "
                       "tools/build_alibaba_table.py (rerun it to check or rebuild this file)",
        "source": _source(wheel_sha, raw),
        "licence": _licence(licence),
        "units": {
            "plan_cpu": "CPU per task as in the trace: 100 is 1 core (a machine has 96 cores)",
            "plan_mem": "memory per task as in the trace: normalised, a machine has 100",
            "instances": "instances (the trace's unit of execution) of the task",
            "count": "tasks (CSV rows) with this triple",
        },
        "csv_rows": rows,
        "jobs": len(jobs),
        "columns": ["plan_cpu", "plan_mem", "instances", "count"],
        "rows": [[cpu, mem, inst, n] for (cpu, mem, inst), n in table],
    }


def dumps(table: dict) -> str:
    """JSON text with one table row per line (small diffs, a few tens of KB)."""
    head = {k: v for k, v in table.items() if k != "rows"}
    text = json.dumps(head, indent=1, ensure_ascii=True)[:-2]
    rows = ",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in table["rows"])
    return text + ',\n "rows": [\n' + rows + "\n ]\n}\n"


def _count(text: str, what: str, line: int, where: str = CSV, lo: int = 0) -> int:
    """A whole number >= ``lo`` of a CSV row."""
    try:
        v = int(text)
    except ValueError:
        raise SystemExit(f"{where} line {line}: {what} is not an integer: {text!r}")
    if v < lo:
        raise SystemExit(f"{where} line {line}: {what} must be >= {lo}, got {v}")
    return v


def build_jobs(wheel: str) -> dict:
    """The sample's jobs with their times (a JSON-ready dict of columns) from the wheel at ``wheel``."""
    with open(wheel, "rb") as fh:
        wheel_sha = hashlib.sha256(fh.read()).hexdigest()
    job_id: list = []
    arrival: list = []
    groups: list = []
    cols: dict = {k: [] for k in ("duration", "plan_cpu", "plan_mem_hundredths", "instances")}
    keys: dict = {}  # (job, task name) -> its row (0-based)
    with zipfile.ZipFile(wheel) as zf:
        raw = zf.read(CSV)
        licence = zf.read(LICENSE).decode("utf-8")
        for line, rec in enumerate(csv.reader(io.StringIO(raw.decode("utf-8"))), start=1):
            if len(rec) != len(COLUMNS):
                raise SystemExit(f"{CSV} line {line}: expected {len(COLUMNS)} columns, got {len(rec)}")
            at = _count(rec[0], "arrival", line)
            if not rec[1].startswith("j_"):
                raise SystemExit(f"{CSV} line {line}: job_id {rec[1]!r} is not j_N")
            jid = _count(rec[1][2:], "job_id", line, lo=1)
            if job_id and job_id[-1] == jid:
                if arrival[-1] != at:
                    raise SystemExit(f"{CSV} line {line}: job {rec[1]} has two arrivals")
                groups[-1] += 1
            else:
                if jid in keys.get("jobs", ()):
                    raise SystemExit(f"{CSV} line {line}: the rows of job {rec[1]} are not contiguous")
                keys.setdefault("jobs", set()).add(jid)
                if arrival and at < arrival[-1]:
                    raise SystemExit(f"{CSV} line {line}: arrivals out of order ({at} after {arrival[-1]})")
                job_id.append(jid)
                arrival.append(at)
                groups.append(1)
            if (rec[1], rec[2]) in keys:
                raise SystemExit(f"{CSV} line {line}: task {rec[2]} of {rec[1]} appears twice")
            keys[(rec[1], rec[2])] = len(cols["duration"])
            cols["duration"].append(_count(rec[3], "duration", line))
            cpu, mem = Decimal(_decimal(rec[4], "plan_cpu", line)), Decimal(_decimal(rec[5], "plan_mem", line))
            if cpu != cpu.to_integral_value() or mem * 100 != (mem * 100).to_integral_value():
                raise SystemExit(f"{CSV} line {line}: plan_cpu {rec[4]} or plan_mem {rec[5]} has more decimals "
                                 f"than this table keeps (whole plan_cpu, plan_mem in hundredths)")
            cols["plan_cpu"].append(int(cpu))
            cols["plan_mem_hundredths"].append(int(mem * 100))
            cols["instances"].append(_count(rec[6], "instances", line, lo=1))
        del keys["jobs"]
        seen = [0] * len(cols["duration"])
        seconds = [0] * len(cols["duration"])
        zeros = [0] * len(cols["duration"])
        with zf.open(INSTANCES_CSV) as fh:
            inst_raw = fh.read()
    for line, rec in enumerate(csv.reader(io.StringIO(inst_raw.decode("utf-8"))), start=1):
        if len(rec) != len(INSTANCE_COLUMNS):
            raise SystemExit(f"{INSTANCES_CSV} line {line}: expected {len(INSTANCE_COLUMNS)} columns, got {len(rec)}")
        row = keys.get((rec[1], rec[2]))
        if row is None:
            raise SystemExit(f"{INSTANCES_CSV} line {line}: task {rec[2]} of {rec[1]} is not in {CSV}")
        d = _count(rec[4], "duration", line, INSTANCES_CSV)
        if d > cols["duration"][row]:
            raise SystemExit(f"{INSTANCES_CSV} line {line}: an instance lasting {d} s, longer than its task "
                             f"({cols['duration'][row]} s)")
        seen[row] += 1
        seconds[row] += d
        zeros[row] += d == 0
    short = [i for i, (n, m) in enumerate(zip(seen, cols["instances"])) if n != m]
    if short:
        raise SystemExit(f"{INSTANCES_CSV}: {len(short)} tasks have another number of instances than {CSV} says "
                         f"(first: row {short[0] + 1})")
    return {
        "table": "alibaba2018_jobs",
        "description": "The jobs of a public sample of the Alibaba cluster-trace-v2018 batch workload (one hour) "
                       "with their arrivals, and per task its duration, demands, instance count and its "
                       "instances' durations, as columns in CSV order; built by tools/build_alibaba_table.py "
                       "(rerun it to check or rebuild this file)",
        "source": {**_source(wheel_sha, raw), "instances_file": INSTANCES_CSV,
                   "instances_file_sha256": hashlib.sha256(inst_raw).hexdigest(),
                   "instances_csv_columns": list(INSTANCE_COLUMNS)},
        "licence": _licence(licence),
        "units": {
            "job_id": "the number N of the sample's job id j_N",
            "arrival": "the job's arrival, whole seconds from the start of the sample (the CSV's arrival)",
            "tasks": "how many tasks (CSV rows) the job has; its tasks are the next that many entries of the task columns",
            "duration": "the task's duration in whole seconds, as in the CSV: the span from its first instance's "
                        "start to its last instance's end (the trace's end_time - start_time), not one instance's",
            "plan_cpu": "CPU per instance as in the trace: 100 is 1 core (a machine has 96 cores)",
            "plan_mem_hundredths": "memory per instance as in the trace times 100: a machine has 10000",
            "instances": "instances (the trace's unit of execution) of the task",
            "instance_seconds": "the sum of the task's instances' durations (sample_instances.csv), whole seconds",
            "zero_instances": "how many of the task's instances have duration 0",
        },
        "csv_rows": len(cols["duration"]),
        "jobs": len(job_id),
        "instance_rows": sum(seen),
        "job_columns": ["job_id", "arrival", "tasks"],
        "task_columns": ["duration", "plan_cpu", "plan_mem_hundredths", "instances", "instance_seconds",
                         "zero_instances"],
        "job_id": job_id, "arrival": arrival, "tasks": groups,
        **cols, "instance_seconds": seconds, "zero_instances": zeros,
    }


def dumps_jobs(table: dict) -> str:
    """JSON text with the header indented and one column per line."""
    columns = table["job_columns"] + table["task_columns"]
    head = {k: v for k, v in table.items() if k not in columns}
    text = json.dumps(head, indent=1, ensure_ascii=True)[:-2]
    body = ",\n".join(f" {json.dumps(k)}: {json.dumps(table[k], separators=(',', ':'))}" for k in columns)
    return text + ",\n" + body + "\n}\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", help=f"path of {WHEEL} (default: pip download it into a temporary directory)")
    ap.add_argument("--out", default=OUT, help="where to write the task table (default: the package's data file)")
    ap.add_argument("--jobs-out", default=JOBS_OUT, help="where to write the job table (default: the package's data file)")
    ap.add_argument("--check", action="store_true",
                    help="compare with --out and --jobs-out instead of writing them (exit 1 if either differs)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download(tmp)
        texts = {args.out: dumps(build(wheel)), args.jobs_out: dumps_jobs(build_jobs(wheel))}
    if args.check:
        differ = 0
        for path, text in texts.items():
            if not os.path.exists(path):
                differ += 1
                print(f"{path}: MISSING (a rebuild writes it)")
                continue
            with open(path, encoding="utf-8") as fh:
                same = fh.read() == text
            differ += not same
            print(f"{path}: {'identical to a rebuild' if same else 'DIFFERS from a rebuild'}")
        return 0 if not differ else 1
    for path, text in texts.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp_path = path + ".tmp"
        with open(tmp_path, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp_path, path)
        print(f"wrote {path} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
