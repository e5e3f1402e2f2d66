"""Job traces: a cluster and its jobs over time, as a user writes them (docs/simulation.md, "Job traces").

A job trace is the cluster of an instance (``resources``, ``servers``, ``external``, ``queues``) and its jobs in
arrival order, one per line of a CSV file or one object of a JSON list::

    {"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [4, 8]}],
     "queues": [{"name": "a"}], "unit": "s",
     "jobs": [{"arrival": 0, "tasks": 4, "duration": 10, "demand": [1, 2], "queue": "a", "name": "j1"}]}

    arrival,tasks,duration,cpu,mem,queue,name        <- a CSV trace: one column per resource of its cluster,
    0,4,10,1,2,a,j1                                     which comes from an instance file (``cluster``)

A job is a user of an execution (``mechverify.execution``) that arrives at ``arrival`` with ``tasks`` tasks of
``demand`` each, every task ``duration`` long: its work is ``tasks x duration``, done at the rate of the tasks
it runs, and it leaves when its work is done (the execution format's ``duration``).  Optional: ``name``
(default ``j1, j2, ...``), ``queue``, ``weight``.  :func:`parse_job_trace` turns it into an
:class:`~mechverify.execution.Execution` through the one parser (``parse_execution``); what is specific to a
job trace is checked first, one line naming the job: arrivals out of order, a negative or zero duration, a
task count that is not a positive integer, an unknown queue, more jobs than the limit.
"""
from __future__ import annotations

import csv
import io
import re
from fractions import Fraction
from typing import Any, Mapping, Optional

from .execution import MAX_EVENTS, Execution, parse_execution, time_number
from .instances import _show, load_instance_data, loads_instance
from .numbers import InstanceError

__all__ = ["parse_job_trace", "load_job_trace", "loads_job_trace", "is_job_trace", "MAX_JOBS", "JOB_KEYS"]

#: a job is two events of its execution (its arrival and the finish its work makes)
MAX_JOBS = MAX_EVENTS // 2
JOB_KEYS = ("arrival", "tasks", "duration", "demand", "external_demand", "queue", "name", "weight", "eligible")
_CLUSTER_KEYS = ("resources", "servers", "external", "queues", "name", "description", "source")
_TRACE_KEYS = frozenset(_CLUSTER_KEYS) | {"jobs", "unit", "end", "max_wait"}
_EVENT_FIELD = re.compile(r"events\[(\d+)\]\.user\.?")


def is_job_trace(data: Any) -> bool:
    """Whether ``data`` (parsed JSON) is a job trace (it has ``jobs``)."""
    return isinstance(data, Mapping) and "jobs" in data


def _where(k: int, lines: Optional[list[int]], key: str = "") -> str:
    """``jobs[k].key``; a CSV trace's job: ``line N, key``."""
    if lines is None:
        return f"jobs[{k}]" + (f".{key}" if key else "")
    return f"line {lines[k]}" + (f", {key}" if key else "")


def parse_job_trace(data: Any, max_jobs: int = MAX_JOBS, _lines: Optional[list[int]] = None) -> Execution:
    """The execution of a job trace (module docstring); every rejection is one ``InstanceError`` line naming
    the job (``jobs[k].field``; a CSV trace: ``line N``) or the field."""
    if not isinstance(data, Mapping):
        raise InstanceError(f"job trace: expected a JSON object, got {type(data).__name__}")
    extra = sorted(set(data) - _TRACE_KEYS)
    if extra:
        raise InstanceError(f"job trace: unknown field {extra[0]!r} (allowed: {', '.join(sorted(_TRACE_KEYS))})")
    jobs = data.get("jobs")
    if not isinstance(jobs, list):
        raise InstanceError(f"jobs: expected a list of jobs, got {_show(jobs)}")
    if len(jobs) > max_jobs:  # before walking them
        raise InstanceError(f"jobs: too many jobs ({len(jobs)}, limit {max_jobs}: two events each, at most "
                            f"{2 * max_jobs} events)")
    queues = {q.get("name") if isinstance(q, Mapping) else q for q in (data.get("queues") or [])}
    events: list[dict[str, Any]] = []
    last = Fraction(0)
    names: set[str] = set()
    for k, job in enumerate(jobs):
        where = _where(k, _lines)
        if not isinstance(job, Mapping):
            raise InstanceError(f"{where}: expected an object {{arrival, tasks, duration, demand, ...}}, got {_show(job)}")
        bad = sorted(set(job) - set(JOB_KEYS))
        if bad:
            raise InstanceError(f"{where}: unknown field {bad[0]!r} (a job has {', '.join(JOB_KEYS)})")
        for key in ("arrival", "tasks", "duration", "demand"):
            if key not in job:
                raise InstanceError(f"{_where(k, _lines, key)}: missing")
        t = time_number(job["arrival"], _where(k, _lines, "arrival"))
        if t < last:
            raise InstanceError(f"{_where(k, _lines, 'arrival')}: {_show(job['arrival'])} is before the previous job's arrival "
                                f"{_show(float(last) if last.denominator != 1 else int(last))} (jobs must be in "
                                f"arrival order)")
        last = t
        d = time_number(job["duration"], _where(k, _lines, "duration"))
        if d <= 0:
            raise InstanceError(f"{_where(k, _lines, 'duration')}: must be > 0 (got {_show(job['duration'])})")
        n = job["tasks"]
        try:
            nf = Fraction(n) if not isinstance(n, bool) and isinstance(n, (int, str)) else None
        except (ValueError, ZeroDivisionError):
            nf = None
        if isinstance(n, float) and n.is_integer():
            nf = Fraction(int(n))
        if nf is None or nf.denominator != 1 or nf < 1:
            raise InstanceError(f"{_where(k, _lines, 'tasks')}: expected a whole number of tasks >= 1, got {_show(n)}")
        q = job.get("queue")
        if q is not None and q not in queues:
            raise InstanceError(f"{_where(k, _lines, 'queue')}: unknown queue {_show(q)}"
                                + (f" (the trace's queues: {', '.join(sorted(map(str, queues)))})" if queues
                                   else " (the trace declares no queues)"))
        name = job.get("name", f"j{k + 1}")
        if name in names:
            raise InstanceError(f"{_where(k, _lines, 'name')}: duplicate job name {_show(name)}")
        names.add(name)
        user = {key: job[key] for key in ("demand", "external_demand", "weight", "eligible", "queue") if key in job}
        user.update(name=name, tasks=int(nf), duration=job["duration"])
        events.append({"t": job["arrival"], "kind": "arrive", "user": user})
    ex_data = {key: data[key] for key in _TRACE_KEYS - {"jobs"} if key in data}
    ex_data.update(users=[], events=events)
    try:
        return parse_execution(ex_data)
    except InstanceError as exc:  # an event of the execution is a job of the trace
        def name_job(m: re.Match) -> str:
            k = int(m.group(1))
            return _where(k, _lines) + (("." if _lines is None else ", ") if m.group(0).endswith(".") else "")

        raise InstanceError(_EVENT_FIELD.sub(name_job, str(exc)).replace("events:", "jobs:")) from None


def _csv_jobs(text: str, cluster: Mapping[str, Any], source: str) -> tuple[list[dict[str, Any]], list[int]]:
    resources = cluster.get("resources")
    if not isinstance(resources, list) or not all(isinstance(r, str) for r in resources):
        raise InstanceError(f"{source}: the cluster file has no list of resources")
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise InstanceError(f"{source}: empty (a CSV trace starts with a header: arrival,tasks,duration,"
                            f"{','.join(resources)}[,queue][,name][,weight])") from None
    need = ["arrival", "tasks", "duration", *resources]
    missing = [h for h in need if h not in header]
    if missing:
        raise InstanceError(f"{source}: line 1: missing column {missing[0]!r} (a CSV trace has the columns "
                            f"{','.join(need)}[,queue][,name][,weight])")
    allowed = set(need) | {"queue", "name", "weight"}
    unknown = [h for h in header if h not in allowed]
    if unknown:
        raise InstanceError(f"{source}: line 1: unknown column {unknown[0]!r} (allowed: {', '.join(need)}, queue, "
                            f"name, weight)")
    col = {h: i for i, h in enumerate(header)}
    jobs, lines = [], []
    for row in reader:
        line = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise InstanceError(f"{source}: line {line}: expected {len(header)} fields, got {len(row)}")
        cell = {h: row[i].strip() for h, i in col.items()}
        job: dict[str, Any] = {"arrival": cell["arrival"], "tasks": cell["tasks"], "duration": cell["duration"],
                               "demand": [cell[r] for r in resources]}
        for key in ("queue", "name", "weight"):
            if cell.get(key):
                job[key] = cell[key]
        jobs.append(job)
        lines.append(line)
    return jobs, lines


def load_job_trace(path: str, cluster: Optional[str] = None, max_jobs: int = MAX_JOBS) -> Execution:
    """Read a job trace: a JSON file (the cluster and ``jobs``) or a CSV file (``cluster``: an instance file
    giving the resources, servers and queues; its users, if any, are ignored).  Errors name the file, then the
    job (``jobs[k]``) or the CSV line."""
    if not path.lower().endswith(".csv"):
        if cluster is not None:
            raise InstanceError(f"--cluster: only a CSV trace takes a cluster file; {path} is JSON (its cluster is "
                                f"in it)")
        data = load_instance_data(path)  # its errors name the file
        try:
            if not is_job_trace(data):
                raise InstanceError("not a job trace (no 'jobs')")
            return parse_job_trace(data, max_jobs)
        except InstanceError as exc:
            raise InstanceError(f"{path}: {exc}") from None
    if cluster is None:
        raise InstanceError(f"{path}: a CSV trace needs a cluster: an instance file with its resources and servers "
                            f"(--cluster FILE)")
    cdata = load_instance_data(cluster)
    if not isinstance(cdata, Mapping):
        raise InstanceError(f"--cluster {cluster}: expected a JSON object (an instance)")
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read ({exc})") from None
    try:
        jobs, lines = _csv_jobs(text, cdata, "CSV")
        data = {key: cdata[key] for key in _CLUSTER_KEYS if key in cdata}
        data["jobs"] = jobs
        return parse_job_trace(data, max_jobs, lines)
    except InstanceError as exc:
        raise InstanceError(f"{path}: {str(exc).removeprefix('CSV: ')}") from None


def loads_job_trace(text: str, source: str = "job trace") -> Execution:
    """Parse job-trace JSON text."""
    return parse_job_trace(loads_instance(text, source))

