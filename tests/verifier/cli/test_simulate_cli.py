"""``python -m verifier simulate``: a registered or a user's mechanism on a job trace end to end (text, JSON,
--out with the HTML timeline), and bad input as one line with exit 2 before any work."""
from __future__ import annotations

import json
import os

import pytest

from verifier.cli.main import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
JOBS = os.path.join(ROOT, "examples", "jobs")
TRACE = os.path.join(JOBS, "drf-three-jobs.json")

USER_MECHANISM = '''
import mechverify


@mechverify.mechanism(name="fifo", bounds=True, source="a test")
def fifo(env):
    """First come, first served over the pooled servers: each user in order takes what fits, up to its tasks."""
    x = [[0] * env.n_servers for _ in env.users]
    for s in range(env.n_servers):
        left = list(env.capacity[s])
        for j in range(env.n_users):
            d = env.demand[j]
            fits = min(left[r] / d[r] for r in range(env.n_resources) if d[r] > 0)
            done = sum(x[j])
            fits = min(fits, env.tasks[j] - done) if env.tasks[j] is not None else fits
            x[j][s] = fits
            left = [left[r] - fits * d[r] for r in range(env.n_resources)]
    return x
'''


def test_registered_mechanism_text_and_json(capsys):
    assert main(["simulate", "drf", TRACE, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "3 jobs" in out and "JCT mean 12.56" in out  # (19 + 47/3 + 3) / 3 = 113/9 (tests/simulation/test_simulate.py)
    assert "sharing incentive (min SI-SAT): no violation found in" in out
    assert main(["simulate", "drf", TRACE, "--quiet", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "mechverify-simulation-3" and doc["jct"]["finished"] == 3
    assert {j["name"] for j in doc["jobs_table"]} == {"j1", "j2", "j3"}


def test_user_mechanism_file_on_a_user_csv_trace_with_html(tmp_path, capsys):
    mech = tmp_path / "fifo.py"
    mech.write_text(USER_MECHANISM)
    out_dir = tmp_path / "out"
    rc = main(["simulate", f"{mech}:fifo", os.path.join(JOBS, "jobs.csv"), "--cluster", os.path.join(JOBS, "cluster.json"),
               "--out", str(out_dir), "--quiet", "--properties", "si,ef"])
    assert rc == 0
    text = capsys.readouterr().out
    # FIFO: j1, first, takes 4.5 tasks of (1, 4) -- all 18 mem -- whenever it is present, so j2 (3, 1) arriving at 2
    # runs nothing until j1 leaves: SI-SAT 0, not SI (and it envies j1), confirmed in exact arithmetic
    assert "jobs: 3 finished" in text
    assert "sharing incentive (min SI-SAT): violated" in text and "worst 0;" in text
    assert "re-checked exactly: 3 confirmed" in text
    page = (out_dir / "simulation.html").read_text()
    assert "<svg" in page and "Utilisation of each resource" in page and "Dominant share of each job" in page
    assert (out_dir / "simulation.json").exists() and (out_dir / "simulation.md").exists()


@pytest.mark.parametrize("csv_text, message", [
    ("arrival,tasks,duration,cpu,mem\n0,1,-1,1,1\n", "line 2, duration"),
    ("arrival,tasks,duration,cpu,mem\n5,1,1,1,1\n2,1,1,1,1\n", "line 3, arrival: '2' is before the previous job's"),
    ("arrival,tasks,duration,cpu,mem,queue\n0,1,1,1,1,zz\n", "line 2, queue: unknown queue 'zz'"),
])
def test_bad_traces_are_one_line_exit_2(tmp_path, capsys, csv_text, message):
    bad = tmp_path / "bad.csv"
    bad.write_text(csv_text)
    assert main(["simulate", "drf", str(bad), "--cluster", os.path.join(JOBS, "cluster.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


@pytest.mark.parametrize("argv, message", [
    (["--max-jobs", "2"], "jobs: too many jobs (3, limit 2"),
    (["--properties", "si,nope"], "--properties: unknown 'nope'"),
    (["--points", "3"], "--points: must be even"),
    (["--budget", "0"], "--budget"),
    (["--cluster", os.path.join(JOBS, "cluster.json")], "--cluster: only a CSV trace"),
    (["--lift", "irrevocable"], None),  # fine: a one-shot mechanism lifted the other way
])
def test_bad_arguments_are_one_line_exit_2(capsys, argv, message):
    _one_line_exit_2(capsys, argv, message)


def _one_line_exit_2(capsys, argv, message):
    """``simulate drf TRACE ARGV``: exit 2 with one line holding ``message`` (``None``: it runs, exit 0)."""
    rc = main(["simulate", "drf", TRACE, "--quiet", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    if message is None:
        assert rc == 0
        return
    assert rc == 2 and len(err) == 1 and message in err[0], err


def test_budget_stops_and_says_so(tmp_path, capsys):
    # 3,000 jobs arriving one per time unit: far more than a 0.2 s budget can step with SI and EF judged
    jobs = [{"arrival": k, "tasks": 1 + k % 3, "duration": 5, "demand": [1 + k % 2, 1]} for k in range(3000)]
    trace = tmp_path / "big.json"
    trace.write_text(json.dumps({"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [8, 8]}],
                                 "jobs": jobs}))
    assert main(["simulate", "drf", str(trace), "--quiet", "--budget", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "budget: stopped at t = " in out


# ---------------------------------------------------------------------- the whole-task model
TWO_JOBS = {"resources": ["r"], "servers": [{"name": "s", "capacity": [2]}],
            "jobs": [{"arrival": 0, "tasks": 2, "duration": 10, "demand": [1], "name": "A"},
                     {"arrival": 5, "tasks": 2, "duration": 4, "demand": [1], "name": "B"}]}


def test_whole_task_model_on_the_command_line(tmp_path, capsys):
    # tests/simulation/test_tsf_er_online.py's hand trace (slot 4, overhead 1): A completes at 15, B at 16 (JCT 11);
    # alone in the same model A takes 10 and B 5: JCT factors 2/3 and 5/11
    trace = tmp_path / "two.json"
    trace.write_text(json.dumps(TWO_JOBS))
    assert main(["simulate", "tsf-er-online", str(trace), "--tasks", "whole", "--slot", "4", "--overhead", "1",
                 "--quiet", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mechanism"] == "tsf-er-online+indivisible(slot=4,overhead=1)"
    rows = {r["name"]: r for r in doc["jobs_table"]}
    assert (rows["A"]["jct"], rows["B"]["jct"]) == (15, 11)
    assert rows["A"]["jct_factor"] == pytest.approx(2 / 3) and rows["B"]["jct_factor"] == pytest.approx(5 / 11)
    # the same derivation's task events: started A 2 (t=0), A+B (t=8), A (11), A+B (12) = 7; completed 4; suspended
    # 2 (t=8) + 1 (t=12); reallocations at 0, 8 and 12 (the simulator's fourth, at 16, has nobody present: no step)
    assert doc["task_counts"] == {"started": 7, "completed": 4, "suspended": 3, "reallocations": 3}
    # the defaults (slot 256, overhead 1/4): A's tasks run to 10, B's from 10 to 14 (no boundary before 256)
    assert main(["simulate", "drf", str(trace), "--tasks", "whole", "--quiet", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mechanism"] == "drf+indivisible" and {r["name"]: r["jct"] for r in doc["jobs_table"]} == {"A": 10, "B": 9}


@pytest.mark.parametrize("argv, message", [
    (["--tasks", "whole", "--slot", "0"], "--slot: must be > 0"),
    (["--tasks", "whole", "--slot", "soon"], "--slot: expected a number or none"),
    (["--tasks", "whole", "--overhead=-1/4"], "--overhead: must be >= 0"),
    (["--slot", "4"], "--slot: only the whole-task model"),
    (["--tasks", "whole", "--lift", "irrevocable"], "--lift: irrevocable is a fluid-model lift"),
    (["--tasks", "fluid", "--lift", "indivisible"], "--lift: indivisible is the whole-task model"),
    (["--tasks", "whole", "--slot", "none", "--overhead", "0"], None),
])
def test_whole_task_model_bad_arguments_are_one_line_exit_2(capsys, argv, message):
    _one_line_exit_2(capsys, argv, message)


def test_a_workload_with_time_is_drawn_by_seed(capsys):
    argv = ["simulate", "drf", "google2011", "--param", "jobs=12", "--param", "servers=1", "--quiet",
            "--properties", "none", "--format", "json"]
    assert main([*argv, "--seed", "3"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert main([*argv, "--seed", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["jobs_table"] == a["jobs_table"]  # the same seed, the same run
    assert a["jobs"] == 12
    assert main(["simulate", "drf", "google2011", "--param", "jobs=0"]) == 2
    assert "--jobs 0: must be in" in capsys.readouterr().err
    assert main(["simulate", "drf", "uniform"]) == 2
    assert "draws no job traces" in capsys.readouterr().err
    assert main(["simulate", "drf", TRACE, "--param", "jobs=3"]) == 2
    assert "--param: only a workload takes parameters" in capsys.readouterr().err


def test_a_state_the_mechanism_cannot_allocate_is_one_line_exit_2(tmp_path, capsys):
    # cru solves EF under task bounds by enumeration for at most 10 users whose bound can bind: 12 one-task jobs
    # beside a 1000-task one reach a state it refuses; the line names the lifted mechanism and cru's reason
    jobs = [{"arrival": 0, "tasks": 1, "duration": 10, "demand": ["1/100", "1/100"], "name": f"j{i}"} for i in range(12)]
    jobs.append({"arrival": 0, "tasks": 1000, "duration": 10, "demand": ["1/100", "1/100"], "name": "big"})
    trace = tmp_path / "cru.json"
    trace.write_text(json.dumps({"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [1, 1]}],
                                 "jobs": jobs}))
    assert main(["simulate", "cru", str(trace), "--tasks", "whole", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("error: cru+indivisible cannot allocate a state this trace reaches:") and "at most 10" in err
