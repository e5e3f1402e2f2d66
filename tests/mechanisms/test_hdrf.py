"""``naive-hdrf``, ``hdrf`` and ``hdrf-tasks`` (src/mechanisms/paper/hdrf.py): the H-DRF paper's starvation and
blocking examples (Bhattacharya et al., SoCC 2013, sections "Naive H-DRF" and "Dynamic H-DRF", as Volcano's
docs/design/hdrf.md retells them), Volcano's own hdrf_test.go expectations, the weighted rescaling, flat
instances (= DRF), exactness, and the CLI.

Conventions of the hand derivations: a leaf's share is its dominant share ``x_j max_r d_jr / c_r``; in the
fractional runs every non-blocked leaf rises at the same dominant share ``t`` while the tree is symmetric;
ties in whole tasks go to queues before users, then by path / name.
"""
from __future__ import annotations

import json
import math
import random
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.paper.hdrf import fluid, whole_tasks
from mechanisms.core.registry import SettingError
from mechverify.instances import parse_environment
from mechverify.policies import progressive_filling
from tests.helpers import run_cli

HDRF, NAIVE, TASKS = mechanisms.get("hdrf"), mechanisms.get("naive-hdrf-fractional"), mechanisms.get("hdrf-tasks")


def starvation(cpu=10, gpu=10, d21=(1, 0)):
    """The paper's starvation example: n1 (weight 1/2) <0 CPU, 1 GPU> at the root; queue n2 (weight 1/2) with
    n2,1 ``d21`` and n2,2 <0, 1>."""
    return parse_environment({
        "resources": ["cpu", "gpu"], "servers": [{"name": "pool", "capacity": [cpu, gpu]}],
        "queues": [{"name": "n2", "weight": 0.5}],
        "users": [{"name": "n1", "demand": [0, 1], "weight": 0.5},
                  {"name": "n2,1", "demand": list(d21), "queue": "n2"},
                  {"name": "n2,2", "demand": [0, 1], "queue": "n2"}]})


def blocking(cpu=30, gpu=30, tasks=None):
    """The paper's blocking example: n1 <1,0>, n2 <1,0>, n4 <0,1> at the root, queue n3 with n3,1 <1,0> and
    n3,2 <0,1>; equal weights (Volcano's hdrf_test.go "blocking nodes": 30 CPU, 30 GPU, 30 tasks each)."""
    users = [{"name": "n1", "demand": [1, 0]}, {"name": "n2", "demand": [1, 0]},
             {"name": "n3,1", "demand": [1, 0], "queue": "n3"}, {"name": "n3,2", "demand": [0, 1], "queue": "n3"},
             {"name": "n4", "demand": [0, 1]}]
    if tasks is not None:
        for u in users:
            u["tasks"] = tasks
    return parse_environment({"resources": ["cpu", "gpu"], "servers": [{"name": "pool", "capacity": [cpu, gpu]}],
                              "queues": [{"name": "n3"}], "users": users})


def demanding(env, j):
    return env.tasks[j] is None or env.tasks[j] > 0


def guarantee(env, j):
    """User ``j``'s hierarchical share guarantee (the paper's, as ``hsi`` reads it), computed here on its own:
    along its path, a node's weight over the summed weights of its DEMANDING siblings (a node demands when a
    user below it does); the root's guarantee is the whole cluster."""
    if not demanding(env, j):
        return F(0)
    below = {}  # queue -> does some demanding user sit below it
    for k in range(env.n_users):
        if demanding(env, k):
            for q in env.user_path(k):
                below[q] = True

    def weight_of_siblings(parent):
        w = sum((env.queue_weight[q] for q in env.queue_children(parent) if below.get(q)), F(0))
        return w + sum((env.weight[k] for k in env.queue_users(parent) if demanding(env, k)), F(0))

    share, parent = F(1), None
    for q in env.user_path(j):
        share *= env.queue_weight[q] / weight_of_siblings(parent)
        parent = q
    return share * env.weight[j] / weight_of_siblings(parent)


def benchmark(env, j, whole=False):
    """Tasks ``j`` runs with its guarantee of the pool (capped by its bound; whole tasks: rounded down)."""
    cap = env.capacity[0]
    runs = min((guarantee(env, j) * cap[r] / d for r, d in enumerate(env.demand[j]) if d), default=None)
    if runs is None or (env.tasks[j] is not None and env.tasks[j] < runs):
        runs = env.tasks[j]
    return math.floor(runs) if whole else runs


def totals(mech, env):
    alloc = mech(env, True)
    assert alloc.exact and all(type(v) is F for row in alloc.x for v in row)
    return alloc.totals()


# ---------------------------------------------------------------------- starvation ("Naive H-DRF")
def test_starvation_fractional():
    env = starvation()
    # every leaf rises at dominant share t; n2's children are complementary, so n2's share (naive: the max of
    # the sum <10t, 10t> / 10; H-DRF: both children already at the minimum, nothing to rescale) is t = n1's.
    # GPU: n1 + n2,2 = 10t + 10t <= 10 -> t = 1/2: n1 = n2,2 = 5 GPU tasks, both blocked; n2,1 then takes
    # the CPU alone: 10.
    assert totals(HDRF, env) == (5, 10, 5)
    assert totals(NAIVE, env) == (5, 10, 5)
    # the guarantee of n2,2: 1/2 (n2) x 1/2 (its half of n2) = 1/4 of the cluster = 2.5 GPU tasks; n2,2 holds 5
    assert guarantee(env, 2) == F(1, 4) and benchmark(env, 2) == F(5, 2)
    # the paper's starvation needs n2,1 to hold the CPUs BEFORE the GPUs are handed out (tasks finishing and
    # restarting); a run from an empty cluster gives n2,2 the same under both


def test_starvation_whole_tasks():
    env = starvation()
    # unit tasks: the ties go n2 (queue) first, then n2,1 (name); after it, n2's minimum share is n2,2's 0,
    # so n2 looks empty and n2,2 is served; then n1, n2 alternate on the GPUs: 5 each, n2,1 fills the CPUs
    assert TASKS(env, True).totals() == (5, 10, 5)
    assert whole_tasks(env, "naive").totals() == (5, 10, 5)


def test_starvation_whole_tasks_one_big_cpu_task():
    """The paper's starvation in a static instance: n2,1's one task takes every CPU first."""
    env = starvation(d21=(10, 0))
    # naive: tie at 0, n2 first, n2,1 takes <10, 0>: n2's share is 1 for good, so n1 (share k/10 < 1) takes
    # all 10 GPU tasks; n2,2 gets NOTHING (its guarantee: 1/4 of the GPUs = 2 whole tasks)
    naive = whole_tasks(env, "naive").totals()
    assert naive == (10, 1, 0)
    assert naive[2] < benchmark(env, 2, whole=True) == 2
    # H-DRF: the CPU is saturated, so n2's share counts the GPU only: 0 next to n1's 0 -> n2 (queue first),
    # n2,2 1 GPU (.1), n1 (.1), ... alternating: 5 and 5
    assert TASKS(env, True).totals() == (5, 1, 5)
    # without ignoring the saturated CPU H-DRF starves n2,2 too (n2,1 blocked counts unscaled: share 1)
    assert whole_tasks(env, "hdrf", ignore_saturated=False).totals() == (10, 1, 0)


# ---------------------------------------------------------------------- blocking ("Dynamic H-DRF")
def test_blocking_rescale_over_all_children():
    """The paper's outcome "n3,2 ends with 2/3 of the GPUs, n4 with 1/3": rescaling to the minimum over ALL
    children, the blocked one included (before "ignoring blocked nodes")."""
    env = blocking()
    # all leaves at t until the CPU runs out: n1 + n2 + n3,1 = 3 x 30t = 30 -> t = 1/3 (10 CPU each; n3,2 and
    # n4 10 GPU each).  n3,1 is blocked at 1/3, the minimum of n3's children, so n3,2 counts rescaled to 1/3:
    # n3's share stays 1/3 < n4's as soon as n4 rises, and every remaining GPU goes to n3,2: 10 + 10 = 20
    # (2/3 of 30), n4 keeps 10 (1/3)
    assert fluid(env, "rescale-all")[0] == [10, 10, 10, 20, 10]
    assert whole_tasks(env, "rescale-all").totals() == (10, 10, 10, 20, 10)


def test_blocking_hdrf_and_naive():
    env = blocking(tasks=30)
    # as above up to t = 1/3; then H-DRF ignores the blocked n3,1 when rescaling (n3,2 rescaled to itself)
    # and the saturated CPU: n3's share is n3,2's GPU share, equal to n4's: the remaining 10 GPUs split 5/5:
    # n3,2 = n4 = 15 (Volcano's hdrf_test.go "blocking nodes": pg1 = pg2 = pg31 = 10 CPU, pg32 = pg4 = 15 GPU).
    # Naive: n3's share is max(1/3 CPU, n3,2's GPU share) = n3,2's from then on: the same 15/15
    for mech in (HDRF, NAIVE):
        assert totals(mech, env) == (10, 10, 10, 15, 15)
    assert TASKS(env, True).totals() == (10, 10, 10, 15, 15)
    for j in range(env.n_users):  # guarantees: 1/4 each at the root, n3's children 1/8: 7.5 and 3.75
        assert totals(HDRF, env)[j] >= benchmark(env, j)


def test_volcano_rescaling_case():
    """Volcano hdrf_test.go "rescaling": 10 CPU / 10 mem; sci (50) pg1 10 x <1, 1>; eng (50) / dev (50) pg21
    10 x <1, 0>; eng / prod (50) pg22 10 x <0, 1> -> pg1 <5, 5>, pg21 <5, 0>, pg22 <0, 5>."""
    env = parse_environment({
        "resources": ["cpu", "mem"], "servers": [{"name": "n", "capacity": [10, 10]}],
        "queues": [{"name": "sci", "weight": 50}, {"name": "eng", "weight": 50},
                   {"name": "eng/dev", "weight": 50}, {"name": "eng/prod", "weight": 50}],
        "users": [{"name": "pg1", "demand": [1, 1], "tasks": 10, "queue": "sci"},
                  {"name": "pg21", "demand": [1, 0], "tasks": 10, "queue": "eng/dev"},
                  {"name": "pg22", "demand": [0, 1], "tasks": 10, "queue": "eng/prod"}]})
    # all at t: eng's vector <10t, 10t> / 10 has share t = sci's; CPU: pg1 + pg21 = 20t <= 10 and the same for
    # mem: t = 1/2, 5 tasks each
    for mech in (HDRF, NAIVE, TASKS):
        assert mech(env, True).totals() == (5, 5, 5)


# ---------------------------------------------------------------------- weights in the rescaling
def weighted_env():
    """u (weight 1) <1, 1> at the root; queue q (weight 1) with v (weight 3) <1, 0> and z (weight 1) <0, 1>;
    12 CPU, 12 GPU."""
    return parse_environment({
        "resources": ["cpu", "gpu"], "servers": [{"name": "pool", "capacity": [12, 12]}],
        "queues": [{"name": "q"}],
        "users": [{"name": "u", "demand": [1, 1]}, {"name": "v", "demand": [1, 0], "weight": 3, "queue": "q"},
                  {"name": "z", "demand": [0, 1], "queue": "q"}]})


def test_weighted_rescaling_keeps_the_guarantee():
    env = weighted_env()
    # in q, v and z rise at share / weight l: v = 3l, z = l; both at the minimum level, so nothing is
    # rescaled: q's vector <3l, l>, share 3l = u's share.  CPU: u 3l + v 3l = 6l <= 1 -> l = 1/6: u = 1/2
    # (6 tasks), v = 1/2 (6), z = 1/6 (2); then z alone takes the 12 - 6 - 2 = 4 GPUs left: 6
    assert totals(HDRF, env) == (6, 6, 6)
    assert totals(NAIVE, env) == (6, 6, 6)
    assert TASKS(env, True).totals() == (6, 6, 6)
    assert benchmark(env, 0) == 6  # u's guarantee: half the cluster, 6 tasks -- met exactly


def test_unweighted_rescaling_breaks_the_guarantee():
    """Volcano's code rescales every non-blocked child to the UNWEIGHTED minimum share (module docstring)."""
    env = weighted_env()
    # v = 3l is rescaled to z's l: q's vector <l, l>, share l = u's.  CPU: u l + v 3l = 4l <= 1 -> l = 1/4:
    # u = 3 tasks < its guarantee 6; v = 9; z = 3, then z takes the 12 - 3 - 3 = 6 GPUs left: 9
    assert fluid(env, "hdrf-unweighted")[0] == [3, 9, 9]
    assert whole_tasks(env, "hdrf-unweighted").totals() == (3, 9, 9)


def test_unweighted_rescaling_is_not_piecewise_linear():
    env = parse_environment({  # found by a random search; hdrf computes it exactly
        "resources": ["r0", "r1", "r2", "r3"], "servers": [{"name": "s", "capacity": [4, 5, 3, 3]}],
        "queues": [{"name": "a0", "weight": 2}, {"name": "a0/b0", "weight": 2}, {"name": "a0/b0/c0", "weight": 2},
                   {"name": "a0/b0/c1", "weight": 3}],
        "users": [{"name": "u0", "demand": [2, 3, 2, 4], "weight": 4, "queue": "a0/b0/c0"},
                  {"name": "u1", "demand": [0, 0, 1, 0], "weight": 1, "queue": "a0/b0/c0"},
                  {"name": "u2", "demand": [2, 3, 3, 0], "weight": 1, "queue": "a0/b0/c1", "tasks": 3},
                  {"name": "u3", "demand": [0, 0, 0, 2], "weight": 4, "queue": "a0/b0/c1"}]})
    with pytest.raises(SettingError, match=r"^queues: hdrf-unweighted is not piecewise linear here"):
        fluid(env, "hdrf-unweighted", name="hdrf-unweighted")
    x = totals(HDRF, env)
    assert all(x[j] >= benchmark(env, j) for j in range(env.n_users))


# ---------------------------------------------------------------------- flat instances, exactness, random trees
def random_flat(rng):
    R = rng.randint(1, 3)
    users = []
    for j in range(rng.randint(1, 5)):
        d = [rng.randint(0, 5) for _ in range(R)]
        if not any(d):
            d[0] = 1
        u = {"name": f"u{j}", "demand": d, "weight": rng.choice([1, 1, 2, 3, F(1, 2)])}
        if rng.random() < 0.3:
            u["tasks"] = rng.randint(0, 6)
        users.append(u)
    data = {"resources": [f"r{i}" for i in range(R)],
            "servers": [{"name": "s", "capacity": [rng.randint(0, 9) for _ in range(R)]}], "users": users}
    return parse_environment(json.loads(json.dumps(data, default=str)))


def test_flat_instances_are_drf():
    rng = random.Random(25)
    drf = mechanisms.get("drf")
    for _ in range(300):
        env = random_flat(rng)
        want = drf(env, True).totals()
        assert totals(HDRF, env) == want, env
        assert totals(NAIVE, env) == want, env
        # whole tasks: DRF's progressive filling with the same ties (by name)
        order = progressive_filling(env, lambda st, j: (st.dominant_share(j) / env.weight[j], env.users[j]),
                                    local=False)
        assert TASKS(env, True).totals() == order.totals(), env


def random_tree(rng):
    """Trees like the search's and deeper: 1-3 top queues, 0-3 children each, 0-2 grandchildren; users in
    leaf queues; integer weights 1-4; 2-4 resources."""
    R = rng.randint(2, 4)
    queues, leafq = [], []
    for a in range(rng.randint(1, 3)):
        qa = f"a{a}"
        queues.append(qa)
        kids = rng.randint(0, 3)
        leafq += [qa] if not kids else []
        for b in range(kids):
            qb = f"{qa}/b{b}"
            queues.append(qb)
            grand = rng.randint(0, 2)
            leafq += [qb] if not grand else []
            for c in range(grand):
                queues.append(f"{qb}/c{c}")
                leafq.append(f"{qb}/c{c}")
    users = []
    for j in range(rng.randint(2, 8)):
        d = [rng.randint(0, 4) for _ in range(R)]
        if not any(d):
            d[rng.randrange(R)] = 1
        u = {"name": f"u{j}", "demand": d, "weight": rng.randint(1, 4), "queue": rng.choice(leafq)}
        if rng.random() < 0.3:
            u["tasks"] = rng.randint(0, 5)
        users.append(u)
    return parse_environment({"resources": [f"r{i}" for i in range(R)],
                              "servers": [{"name": "s", "capacity": [rng.randint(1, 9) for _ in range(R)]}],
                              "users": users, "queues": [{"name": q, "weight": rng.randint(1, 4)} for q in queues]})


def test_random_trees_exact_and_guaranteed():
    """Exact rationals, feasible (``Mechanism.__call__`` checks chi(E)), and every demanding user at least its
    hierarchical share guarantee (the paper's property, the one ``hsi`` checks), for hdrf and naive-hdrf."""
    rng = random.Random(2013)
    for _ in range(150):
        env = random_tree(rng)
        for mech in (HDRF, NAIVE):
            x = totals(mech, env)
            for j in range(env.n_users):
                if demanding(env, j):
                    assert x[j] >= benchmark(env, j), (mech.name, env, j)
        TASKS(env, True)


def test_float_mode_rounds_the_exact_allocation():
    env = weighted_env()
    alloc = HDRF(env, False)
    assert not alloc.exact and alloc.totals() == (6.0, 6.0, 6.0)


def test_settings():
    for mech in (HDRF, NAIVE, TASKS):
        st = mech.setting
        assert st.single_server and st.hierarchy and not st.placement and not st.external
        assert st.bounds and st.weights and st.divisible == (mech is not TASKS)
    assert [c.property for c in HDRF.claims] == ["hsi"] and HDRF.claims[0].status == "holds"
    assert NAIVE.claims == () and TASKS.claims == ()
    with pytest.raises(SettingError, match=r"^servers: "):
        HDRF(parse_environment({"resources": ["cpu"], "servers": [{"name": "a", "capacity": [1]},
                                                                  {"name": "b", "capacity": [1]}],
                                "users": [{"name": "u", "demand": [1]}]}))


# ---------------------------------------------------------------------- CLI
def test_cli_allocate_on_a_queue_tree(tmp_path):
    path = tmp_path / "starvation.json"
    path.write_text(json.dumps({
        "resources": ["cpu", "gpu"], "servers": [{"name": "pool", "capacity": [10, 10]}],
        "queues": [{"name": "n2", "weight": 0.5}],
        "users": [{"name": "n1", "demand": [0, 1], "weight": 0.5}, {"name": "n2,1", "demand": [1, 0], "queue": "n2"},
                  {"name": "n2,2", "demand": [0, 1], "queue": "n2"}]}))
    for name in ("hdrf", "naive-hdrf", "hdrf-tasks"):
        out = run_cli("allocate", name, str(path), "--exact", "--format", "json")
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)
        assert got["totals"] == ["5", "10", "5"] and got["exact"], got  # test_starvation_fractional


@pytest.mark.slow
def test_cli_run_finishes():
    out = run_cli("run", "hdrf", "--budget", "3", "--properties", "hsi,ef", "--no-store", timeout=120)
    assert out.returncode == 0, out.stderr
    assert "hsi/guarantee" in out.stdout


def test_an_hsi_certificate_names_its_benchmark_the_guarantee_not_an_equal_split():
    import mechverify

    @mechverify.mechanism(hierarchy=True)
    def all_to_b(env):
        # every task to the last user: u1 (queue a, weight 1 of 2) gets nothing
        return [[0] * env.n_servers for _ in range(env.n_users - 1)] + [[10]]

    env = mechverify.instance({"resources": ["cpu"], "servers": [{"capacity": [10]}],
                               "queues": [{"name": "a"}, {"name": "b"}],
                               "users": [{"demand": [1], "queue": "a"}, {"demand": [1], "queue": "b"}]})
    (r,) = [r for r in mechverify.check(all_to_b, env, "hsi") if r.property == "hsi"]
    # u1's guarantee: half of 10 cpu (two demanding sibling queues of weight 1) = 5 tasks; it runs 0
    assert r.verdict == "violated"
    assert r.certificate.utilities == {"u[u1]": 0, "u[u1] hierarchical share guarantee": 5}
