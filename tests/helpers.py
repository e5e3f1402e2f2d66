"""Shared test helpers: instance builders and test-only mechanisms (never registered), and the
``holds``/``fails``/``verdict`` assertions of the property fixtures.

Conventions used in every derivation:
* ``x_j`` is user ``j``'s task total; with a truthful report and a non-wasteful bundle ``u_j = x_j``
  (seed 004 Lemma 2, ``mechverify.utility``).
* a misreporting user's bundle is ``x'_j * d'_j`` (reported demand); its TRUE utility is
  ``min_r x'_j d'_jr / d_jr`` (Leontief with the true demand ``d_j``).
* "fixed" mechanisms below are test-only ``Mechanism`` objects (never registered) whose allocation is
  chosen by hand, so the property logic is exercised in isolation from any solver.

A failing fixture asserts the evaluation's exact measure AND the certificate of the exact re-check
(``recheck``: gap, measure, utilities); a holding fixture asserts the exact measure and that the
evaluation does not flag a violation.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction as F

import pytest

from mechanisms import get
from mechanisms.core.registry import Mechanism, Setting, SettingError
from mechverify.allocation import Allocation
from mechverify.instances import load_environment, parse_environment
from verifier.check import check_property
from verifier.properties import Deviation, Report, get_property

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EX = os.path.join(ROOT, "examples")


# ---------------------------------------------------------------------- helpers
def env_of(resources, servers, users, external=None):
    """``servers``: list of capacity lists (named s1, s2, ...); ``users``: list of dicts (named u1, ...)."""
    d = {"resources": resources,
         "servers": [{"name": f"s{i + 1}", "capacity": c} for i, c in enumerate(servers)],
         "users": [dict({"name": f"u{j + 1}"}, **u) for j, u in enumerate(users)]}
    if external is not None:
        d["external"] = external
    return parse_environment(d)


def random_instance(rng, users, servers, resources, *, capacity=(0, 9), demand=None, external=None,
                    external_demand=(0, 3), tasks=0.0, task_range=(0, 4), eligible=0.0):
    """A random instance dict for agreement tests (servers ``s0..``, users ``u0..``, resources ``r0..``).

    ``capacity``: integer range of every capacity; ``demand(rng, r)``: one per-task demand (default an
    integer in 0..6; a user demanding nothing gets ``d[0] = 1``); ``external``: the capacity range of one
    external resource ``e`` (None: none), with per-task demands in ``external_demand``; ``tasks``: the
    probability of a task bound in ``task_range``; ``eligible``: the probability of a placement
    constraint (each server eligible with probability 1/2; the list may be empty)."""
    inst = {"resources": [f"r{r}" for r in range(resources)],
            "servers": [{"name": f"s{s}", "capacity": [rng.randint(*capacity) for _ in range(resources)]}
                        for s in range(servers)],
            "users": []}
    if external is not None:
        inst["external"] = [{"name": "e", "capacity": rng.randint(*external)}]
    for j in range(users):
        d = [demand(rng, r) if demand else rng.randint(0, 6) for r in range(resources)]
        if not any(d):
            d[0] = 1
        u = {"name": f"u{j}", "demand": d}
        if external is not None:
            u["external_demand"] = [rng.randint(*external_demand)]
        if tasks and rng.random() < tasks:
            u["tasks"] = rng.randint(*task_range)
        if eligible and rng.random() < eligible:
            u["eligible"] = [f"s{s}" for s in range(servers) if rng.random() < 0.5]
        inst["users"].append(u)
    return inst


def example(name):
    """An instance of ``examples/`` by file name."""
    return load_environment(os.path.join(EX, name))


def num(v, exact):
    return F(v) if exact else float(F(v))


def fixed(name, matrix, info=None, **setting):
    """Test-only mechanism returning the hand-chosen task matrix ``matrix`` (whatever is reported)."""
    def func(env, exact):
        x = tuple(tuple(num(v, exact) for v in row) for row in matrix)
        return Allocation(env, x, name, exact, dict(info if info is not None else {"unique_totals": True}))
    return Mechanism(name, f"test-only fixed allocation {name}", func, Setting(**setting))


def equal_tasks_alloc(env, exact):
    """One server: every user gets the same number ``t`` of (REPORTED) tasks, the largest feasible:
    ``t = min_r c_r / sum_j d_jr``.  Not DRF, not SP: a larger reported demand is a larger bundle."""
    cap = env.capacity[0]
    t = min(cap[r] / sum(env.demand[j][r] for j in range(env.n_users))
            for r in range(env.n_resources) if any(env.demand[j][r] for j in range(env.n_users)))
    return Allocation(env, tuple((num(t, exact),) for _ in range(env.n_users)), "equal-tasks", exact,
                      {"unique_totals": True})


EQUAL_TASKS = Mechanism("equal-tasks", "test-only: equal number of reported tasks on one server",
                        equal_tasks_alloc, Setting(single_server=True, placement=False, bounds=False,
                                                   weights=False))


def by_eligible_size_alloc(env, exact):
    """Serial dictatorship by the size of the REPORTED eligible set (ties: list order): in turn each user
    takes every server of its reported set not yet taken and runs ``gamma[j,s]`` tasks there."""
    order = sorted(range(env.n_users), key=lambda j: (len(env.eligible[j]), j))
    x = [[F(0)] * env.n_servers for _ in range(env.n_users)]
    taken = set()
    for j in order:
        for s in sorted(env.eligible[j]):
            if s not in taken:
                taken.add(s)
                x[j][s] = env.gamma(j, s)
    return Allocation(env, tuple(tuple(num(v, exact) for v in row) for row in x), "by-eligible-size", exact,
                      {"unique_totals": True})


BY_ELIGIBLE_SIZE = Mechanism("by-eligible-size", "test-only: serial dictatorship, smallest declared set first",
                             by_eligible_size_alloc, Setting(placement=True, bounds=False, weights=False))


def by_task_bound_alloc(env, exact):
    """One server, one resource: the resource is split in proportion to the REPORTED task bounds
    (``x_j = c n_j / (d_j sum_k n_k)``); every bound must be finite."""
    if any(t is None for t in env.tasks):
        raise SettingError("users[].tasks: by-task-bound needs a finite bound for every user")
    total = sum(env.tasks)
    c = env.capacity[0][0]
    x = [(c * env.tasks[j] / total / env.demand[j][0]) if total else F(0) for j in range(env.n_users)]
    return Allocation(env, tuple((num(v, exact),) for v in x), "by-task-bound", exact, {"unique_totals": True})


BY_TASK_BOUND = Mechanism("by-task-bound", "test-only: resource proportional to the reported task bounds",
                          by_task_bound_alloc, Setting(single_server=True, weights=False))


def seniority_alloc(env, exact):
    """One server, one resource, unit demands.  Three users: equal split.  Two users: the first-listed
    (senior) user gets 3/4 of the capacity, the other 1/4.  One user: everything."""
    c = env.capacity[0][0]
    shares = {1: [F(1)], 2: [F(3, 4), F(1, 4)], 3: [F(1, 3)] * 3}[env.n_users]
    return Allocation(env, tuple((num(c * s, exact),) for s in shares), "seniority", exact,
                      {"unique_totals": True})


SENIORITY = Mechanism("seniority", "test-only: senior user favoured when only two users remain",
                      seniority_alloc, Setting(single_server=True))


def mis(j, **kw):
    """A one-user misreport ``Deviation``."""
    for key in ("demand", "external_demand"):
        if key in kw:
            kw[key] = tuple(F(v) for v in kw[key])
    if "eligible" in kw:
        kw["eligible"] = frozenset(kw["eligible"])
    if "tasks" in kw and kw["tasks"] is not None:
        kw["tasks"] = F(kw["tasks"])
    return Deviation("misreport", (Report(j, **kw),))


def coalition(*reports):
    return Deviation("misreport", tuple(Report(j, demand=tuple(F(v) for v in d)) for j, d in reports))


def leave(*users):
    return Deviation("leave", leave=tuple(users))


def holds(prop, mech, env, variant, dev=None, measure=None):
    """Exact evaluation says the property holds; returns the exact measure."""
    p = get_property(prop)
    assert p.applicable(mech, env, variant) is None
    ev = p.evaluate(mech, env, variant, deviation=dev, exact=True)
    assert not ev.violated and ev.witness is None, ev
    if measure is not None:
        assert ev.measure == measure and isinstance(ev.measure, F), ev.measure
    return ev


def fails(prop, mech, env, variant, dev=None, *, measure, gap, utilities=None, method="exact", robust=True):
    """Exact evaluation finds the violation, the float evaluation agrees, and the exact re-check
    certifies it with exactly ``gap`` / ``measure`` (and ``utilities``)."""
    p = get_property(prop)
    assert p.applicable(mech, env, variant) is None
    ev = p.evaluate(mech, env, variant, deviation=dev, exact=True)
    assert ev.violated and ev.witness is not None, ev
    assert ev.measure == measure, (ev.measure, measure)
    evf = p.evaluate(mech, env, variant, deviation=dev, exact=False)
    assert evf.violated and float(evf.measure) == pytest.approx(float(measure))
    cert = p.recheck(mech, evf.witness)  # a float candidate is re-derived exactly
    assert cert is not None
    assert cert.gap == gap and isinstance(cert.gap, F), (cert.gap, gap)
    assert cert.measure == measure, (cert.measure, measure)
    assert cert.method == method
    assert cert.robust is robust, (cert.robust, cert.robust_note)
    if utilities is not None:
        assert cert.utilities == utilities, cert.utilities
    return cert


def verdict(prop, mech, env, variant, budget=5.0):
    from verifier.check import Allocations
    from verifier.config import RunConfig
    from verifier.planning import Cell

    alloc_exact = mech(env, exact=True) if mech.setting.exact else None
    return check_property(mech, env, Cell(mech, get_property(prop), variant), RunConfig(budget=budget),
                          Allocations(alloc_exact, mech(env, exact=False)))


# Ghodsi et al.'s DRF example (seed 000 Sec. II-A cites DRF [4]): one server <9 CPU, 18 GB>,
# u1 <1, 4>, u2 <3, 1>.  DRF: dominant shares 4/18 = 2/9 (mem) and 3/9 = 1/3 (cpu) per task;
# (2/9) x1 = (1/3) x2  ->  x1 = 3/2 x2;  cpu: x1 + 3 x2 = 9/2 x2 <= 9  -> x2 = 2, x1 = 3
# (mem 4*3 + 2 = 14 <= 18); cpu is saturated and used by both, so both are frozen: (3, 2).
def ghodsi():
    return env_of(["cpu", "mem"], [[9, 18]], [{"demand": [1, 4]}, {"demand": [3, 1]}])


def one_cpu(cap, demands, **extra):
    """One server, one resource ``cpu`` of capacity ``cap``; ``extra``: per-user field lists."""
    users = [{"demand": [d]} for d in demands]
    for key, vals in extra.items():
        for u, v in zip(users, vals):
            if v is not None:
                u[key] = v
    return env_of(["cpu"], [[cap]], users)


def three_servers():
    """Three cpu-only servers: see the comment below."""
    # cpu only; s1 = 12, s2 = 6, s3 = 4; u1 eligible {s1, s2}, u2 eligible everywhere; unit demands
    return env_of(["cpu"], [[12], [6], [4]],
                  [{"demand": [1], "eligible": ["s1", "s2"]}, {"demand": [1]}])


def placement_env():
    # cpu only; s1 = 6, s2 = 12; u1 eligible everywhere, u2 only on s1; unit demands
    return env_of(["cpu"], [[6], [12]], [{"demand": [1]}, {"demand": [1], "eligible": ["s1"]}])


def external_env():
    # one cpu of 12, external link of capacity 2; u1 <1 cpu, 1/4 link>, u2 <1 cpu, 0 link>
    return env_of(["cpu"], [[12]], [{"demand": [1], "external_demand": ["1/4"]},
                                    {"demand": [1], "external_demand": [0]}],
                  external=[{"name": "link", "capacity": 2}])


def global_cpu_env():
    # s1 = s2 = <6 cpu, 12 mem>; pooled <12, 24>; u1 <1, 1>: shares 1/12 vs 1/24 -> cpu;
    # u2 <2, 1>: 2/12 vs 1/24 -> cpu.  Also at each server cpu is dominant for both (1/6 > 1/12, 2/6 > 1/12).
    return env_of(["cpu", "mem"], [[6, 12], [6, 12]], [{"demand": [1, 1]}, {"demand": [2, 1]}])


def first_fit_env():
    # s1 <2 cpu, 5 mem>, s2 <7, 4>; u1 <2, 2>, u2 <2, 3> with n2 = 4; pooled <9, 9>
    return env_of(["cpu", "mem"], [[2, 5], [7, 4]], [{"demand": [2, 2]}, {"demand": [2, 3], "tasks": 4}])


INDIV = dict(single_server=True, placement=False, bounds=False, weights=False, divisible=False)


def floor_equal_tasks_alloc(env, exact):
    a = equal_tasks_alloc(env, True)
    t = F(int(a.x[0][0]))  # floor: whole tasks
    return Allocation(env, tuple((t,) for _ in range(env.n_users)), "floor-equal-tasks", True, {"unique_totals": True})


FLOOR_EQUAL_TASKS = Mechanism("floor-equal-tasks", "test-only: equal-tasks rounded down to whole tasks",
                              floor_equal_tasks_alloc, Setting(**INDIV))


def approx(name, totals, bounds, **setting):
    """Test-only NON-exact mechanism (``Setting(exact=False)``): one server, returns the float ``totals``
    and the exact per-user interval ``bounds`` that contains the true total."""
    def func(env, exact):
        return Allocation(env, tuple((float(F(t)),) for t in totals), name, False,
                          {"total_bounds": [(F(a), F(b)) for a, b in bounds]})
    return Mechanism(name, f"test-only approximate {name}", func, Setting(exact=False, **setting))


def approx_equal_tasks(width):
    """equal-tasks computed 'approximately': float t with bounds [t - width, t + width]."""
    def func(env, exact):
        a = equal_tasks_alloc(env, True)
        t = a.x[0][0]
        return Allocation(env, tuple((float(t),) for _ in range(env.n_users)), "approx-equal-tasks", False,
                          {"total_bounds": [(t - width, t + width)] * env.n_users})
    return Mechanism("approx-equal-tasks", "test-only", func, Setting(single_server=True, exact=False,
                                                                      bounds=False, weights=False))


def utilitarian_alloc(env, exact):
    """One server, one resource: maximise total tasks.  Optimal face: the capacity goes to users with the
    smallest demand d_min, in any split; the returned vertex gives it all to the first of them.
    ``total_range``: [0, c/d_min] for those users, [0, 0] for the others."""
    c = env.capacity[0][0]
    dmin = min(env.demand[j][0] for j in range(env.n_users))
    best = [j for j in range(env.n_users) if env.demand[j][0] == dmin]
    x = [c / dmin if j == best[0] else F(0) for j in range(env.n_users)]
    rng = [(F(0), c / dmin) if j in best else (F(0), F(0)) for j in range(env.n_users)]
    if len(best) == 1:
        rng = [(v, v) for v in x]
    return Allocation(env, tuple((num(v, exact),) for v in x), "utilitarian", exact, {"total_range": rng})


UTILITARIAN = Mechanism("utilitarian", "test-only: max total tasks", utilitarian_alloc,
                        Setting(single_server=True))


def po_cert():
    env, m = example("001-fig1.json"), get("per-server-drf")
    p = get_property("po")
    return p.recheck(m, p.evaluate(m, env, "fractional", exact=True).witness)


def main_cli(*args):
    """``verifier.cli.main(ARGS)`` in this process: (exit code, stdout, stderr)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from verifier.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def run_cli(*args, timeout=300, input=None):
    """``python -m verifier ARGS`` in a real subprocess from the repository root (stdout, stderr, exit code)."""
    return subprocess.run([sys.executable, "-m", "verifier", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, input=input)


def corrupt(path, edit):
    d = json.load(open(path))
    edit(d)
    with open(path, "w") as fh:
        json.dump(d, fh)
