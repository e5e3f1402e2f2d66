"""``volcano-hdrf`` (src/mechanisms/ports/volcano/): upstream's own HDRF tests as regression tests, the H-DRF
starvation example of upstream's design doc, upstream's tie fallback (creation order) and the rule where it is
cyclic, upstream's heap, the incremental loop against the literal recomputation, the setting, a hostile tree and
the command line.

Upstream: volcano-sh/volcano @ ed72c7c815a9fd547a787134676f73d42e9d049c (``COMMIT``):
``pkg/scheduler/plugins/drf/hdrf_test.go`` (``TestHDRF``), ``pkg/scheduler/plugins/drf/drf.go``,
``pkg/scheduler/framework/session_plugins.go``, ``pkg/scheduler/actions/allocate/allocate.go``,
``docs/design/hdrf.md``.  Units: CPUs and G (upstream's millicores and bytes; only ratios enter a share).  Every
upstream pod also requests one ``pods`` (its node has 50, resp. 500): the tests run with and without that third
resource.

About ``TestHDRF`` itself (so that "upstream expects" is read right): its assertion
``if equality.Semantic.DeepEqual(test.expected, job.Allocated) { t.Fatalf(...) }`` compares the whole map of
expectations with one job's ``*api.Resource`` and fails on EQUALITY, so it can never fail (hdrf_test.go lines
208-212; the comparison became a map-vs-pointer one in d56ca6ff8, 2023-11-20).  The "blocking nodes" case was
skipped from b5ba22335 (2023-04-23, issue 2810) to af5df0d43 (2024-03-09); that commit also put pg32's
PodGroup in queue root-pg3-pg31 (hdrf_test.go line 120), leaving the declared queue root-pg3-pg32 without a
job.  Its tiers (lines 185-202) put ``proportion`` beside ``drf``, which ``UnmarshalSchedulerConf`` refuses
(pkg/scheduler/util.go lines 78-80); its queues and PodGroups have no creation timestamp, so ties between
queues go to their names.  Upstream's expected values are therefore untested upstream; our port reproduces
all of them, in both layouts of the blocking case and with the queues created in either order.

Creation order (the tie fallback, module docstring "Conventions"): queues in declaration order, a user at the
root in a queue created before them, jobs in user order.
"""
from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.core.registry import SettingError
from mechanisms.ports.volcano.fast import volcano_hdrf_fast
from mechanisms.ports.volcano.port import UPSTREAM
from mechanisms.ports.volcano.tree import compare_queues, compare_users, hdrf_tree, next_user, volcano_hdrf_reference
from mechverify.instances import load_environment, parse_environment
from tests.helpers import ROOT
from verifier.check import check_instance
from verifier.config import RunConfig

COMMIT = "ed72c7c815a9fd547a787134676f73d42e9d049c"
EXAMPLE = os.path.join(ROOT, "examples", "volcano-hdrf-rescaling.json")
CYCLE = os.path.join(ROOT, "examples", "volcano-order-cycle.json")


def tree_env(resources, capacity, queues, users, usage=None):
    """One server ``n``; ``queues``: (path, weight), declared (= created) in this order; ``users``: (name, queue or
    None, demand, tasks or None), created in this order; ``usage``: tasks held per user (the state)."""
    d = {"resources": resources, "servers": [{"name": "n", "capacity": capacity}],
         "users": [dict({"name": n, "demand": dem}, **({"queue": q} if q else {}),
                        **({} if t is None else {"tasks": t})) for n, q, dem, t in users]}
    if usage:
        for u, held in zip(d["users"], usage):
            if held:
                u["usage"] = [held]
    if queues:
        d["queues"] = [{"name": p, "weight": w} for p, w in queues]
    return parse_environment(d)


def tasks_of(env, alloc):
    return {u: int(t) for u, t in zip(env.users, alloc.totals())}


def both(env):
    """The registered (incremental) mechanism, checked against the literal full recomputation."""
    a = mechanisms.allocate("volcano-hdrf", env)
    assert a.exact and a.x == volcano_hdrf_reference(env).x
    return tasks_of(env, a)


# ---------------------------------------------------------------------------------------- upstream's tests
def rescaling(pods: bool, by_name: bool = False):
    """hdrf_test.go "rescaling test" (lines 64-111): node 10 CPU / 10G (/ 50 pods); queues root/sci (weights
    100/50), root/eng/dev and root/eng/prod (100/50/50); pg1 in sci, 10 x <1, 1G>; pg21 in eng/dev, 10 x
    <1, 0>; pg22 in eng/prod, 10 x <0, 1G>.  Created sci, eng/dev, eng/prod (the file's order), or ``by_name``
    eng/dev, eng/prod, sci (the order the test itself gets: no timestamps, so the names root-eng-dev <
    root-eng-prod < root-sci decide)."""
    extra = [50] if pods else []
    one = [1] if pods else []
    queues = [("sci", 50), ("eng", 50), ("eng/dev", 50), ("eng/prod", 50)]
    if by_name:
        queues = queues[1:] + queues[:1]
    return tree_env(["cpu", "mem"] + (["pods"] if pods else []), [10, 10] + extra, queues,
                    [("pg1", "sci", [1, 1] + one, 10), ("pg21", "eng/dev", [1, 0] + one, 10),
                     ("pg22", "eng/prod", [0, 1] + one, 10)])


def served(env):
    """The users in the order the literal mechanism serves them (one name per task)."""
    J, tasks, left = env.n_users, [0] * env.n_users, list(env.capacity[0])
    out = []
    while True:
        cand = [j for j in range(J) if (env.tasks[j] is None or tasks[j] < math.floor(env.tasks[j]))
                and all(v >= d for v, d in zip(left, env.demand[j]))]
        if not cand:
            return out
        nodes, leaves = hdrf_tree(env, tasks)
        j = next_user(env, nodes, leaves, cand)
        out.append(env.users[j])
        tasks[j] += 1
        left = [v - d for v, d in zip(left, env.demand[j])]


@pytest.mark.parametrize("pods", [False, True], ids=["cpu-mem", "with-pods"])
def test_upstream_rescaling(pods):
    """hdrf_test.go "rescaling test", volcano-sh/volcano @ ed72c7c815a9fd547a787134676f73d42e9d049c: expected
    pg1 <5, 5G>, pg21 <5, 0>, pg22 <0, 5G>.  Our port: the same.  By hand, queues created sci, eng/dev,
    eng/prod (shares in tenths; sci and eng both weight 50, so they compare by share; eng's share is its
    rescaled children's, i.e. about the LESS served of dev and prod; ``compareQueues`` compares root/sci with
    root/eng/* only down to depth 1):
      1. everything ties at 0: sci, created first (pg1 1);
      2. eng 0 < sci 1; dev and prod tie at 0: dev, created before prod (pg21 1; eng = M = 1, prod is empty);
      3. sci 1 = eng 1 ties sci with both eng queues; below eng prod 0 < dev 1: the queues no queue precedes
         are sci and eng/prod: sci, created first (pg1 2);
      4. eng 1 < sci 2: prod 0 < dev 1 (pg22 1; eng = M = 1: <1, 0> + <0, 1> -> 1);
      5. eng 1 < 2: dev 1 = prod 1: dev (pg21 2; eng: M = 1, dev rescaled to <1, 0>: still 1);
      6. eng 1 < 2: prod 1 < dev 2 (pg22 2; eng 2);
      7. sci 2 = eng 2, dev 2 = prod 2: all undominated: sci ...
    each round gives sci, dev and prod one task, until pg1 + pg21 = 10 CPUs and pg1 + pg22 = 10G: 5 rounds,
    15 tasks, every job saturated.  The pods (15 of 50) never dominate and never fill up."""
    env = rescaling(pods)
    a = mechanisms.allocate("volcano-hdrf", env)
    assert tasks_of(env, a) == {"pg1": 5, "pg21": 5, "pg22": 5} and a.info["steps"] == 15
    assert a.x == volcano_hdrf_reference(env).x
    assert served(env) == ["pg1", "pg21", "pg1", "pg22", "pg21", "pg22"] + ["pg1", "pg21", "pg22"] * 3
    nodes, leaves = hdrf_tree(env, [5, 5, 5])
    assert all(leaf.saturated for leaf in leaves) and nodes[None].saturated  # both resources full


def test_upstream_rescaling_with_the_tests_own_creation_order():
    """The same case with the queues created as ``TestHDRF`` gets them (no timestamps: by name, eng/dev,
    eng/prod, sci).  By hand (tenths): 1. all tie: dev (pg21 1; eng 1); 2. sci 0 < eng 1 (pg1 1); 3. sci 1 =
    eng 1, prod 0 < dev 1: undominated prod and sci, prod created first (pg22 1; eng 1); 4. all 1: dev (pg21 2;
    eng stays 1, dev rescaled); 5. sci 1 = eng 1, prod 1 < dev 2: prod before sci (pg22 2; eng 2); 6. sci 1 <
    eng 2 (pg1 2); 7. all 2: dev ...  Rounds dev, prod, sci after the first: 5, 5, 5 again."""
    env = rescaling(False, by_name=True)
    assert both(env) == {"pg1": 5, "pg21": 5, "pg22": 5}
    assert served(env)[:9] == ["pg21", "pg1", "pg22", "pg21", "pg22", "pg1", "pg21", "pg22", "pg1"]


def test_rescaling_scales_the_more_served_child_down():
    """The rescaling itself (drf.go ``updateHierarchicalShare``, lines 503-548) at pg1 1, pg21 2, pg22 1 of the
    rescaling test: dev share 2/10, prod 1/10, M = 1/10: eng = <2, 0> x (1/10)/(2/10) + <0, 1> = <1, 1>, share
    1/10 (the plain sum <2, 1> would be 2/10)."""
    env = rescaling(False)
    nodes, leaves = hdrf_tree(env, [1, 2, 1])
    eng = nodes[env.queue_index("eng")]
    assert (leaves[1].share, leaves[2].share) == (F(1, 5), F(1, 10))
    assert eng.alloc == (1, 1) and eng.share == F(1, 10) and not eng.saturated
    assert nodes[env.queue_index("sci")].share == F(1, 10)


def blocking(current_file: bool):
    """hdrf_test.go "blocking nodes test" (lines 112-182): node 30 CPU / 30G (/ 500 pods); root/pg1, root/pg2,
    root/pg3, root/pg4 (weight 25), root/pg3/pg31 and root/pg3/pg32 (50); pg1, pg2, pg31 30 x <1, 0>; pg32,
    pg4 30 x <0, 1G>.  ``current_file``: pg32 in queue pg3/pg31 as in the file now (line 120); else in
    pg3/pg32, as before af5df0d43 (and as the design doc's tree has it).  Declared (created) in the order of
    the queues' names, which is also the order the test itself gets."""
    return tree_env(["cpu", "mem"], [30, 30],
                    [("pg1", 25), ("pg2", 25), ("pg3", 25), ("pg3/pg31", 50), ("pg3/pg32", 50), ("pg4", 25)],
                    [("pg1", "pg1", [1, 0], 30), ("pg2", "pg2", [1, 0], 30), ("pg31", "pg3/pg31", [1, 0], 30),
                     ("pg32", "pg3/pg31" if current_file else "pg3/pg32", [0, 1], 30), ("pg4", "pg4", [0, 1], 30)])


@pytest.mark.parametrize("current_file", [False, True], ids=["pg32-in-pg3-pg32", "pg32-in-pg3-pg31"])
def test_upstream_blocking_nodes(current_file):
    """hdrf_test.go "blocking nodes test", volcano-sh/volcano @ ed72c7c815a9fd547a787134676f73d42e9d049c:
    expected pg1 = pg2 = pg31 = 10 CPUs, pg32 = pg4 = 15G (the design doc's blocking example: naive H-DRF
    would end with pg32 at 2/3 of the memory and pg4 at 1/3).  Our port: the same, in both layouts.  By hand:
    the CPU jobs take turns (pg1, pg2 and pg3 compare by share / 25; pg3's share is min-rescaled over pg31 and
    pg32, so pg3 advances as the less served of the two; equal shares go to the queue created first), the
    memory jobs too; when the 30th CPU goes (pg1 = pg2 = pg31 = 10), pg1, pg2 and pg31 hold a fully allocated
    resource and are saturated: pg31 is added to pg3 unscaled (<10, 0>, share 1/3) instead of blocking pg32's
    parent, and pg32 and pg4 go on by their memory shares (pg3 = max(1/3, pg32 / 30) against pg4 / 30) to 15G
    each.  With pg32 in pg31's queue, pg3/pg31 holds both jobs (pg3/pg32 has no job: it is not in the tree),
    with the same outcome."""
    env = blocking(current_file)
    assert both(env) == {"pg1": 10, "pg2": 10, "pg31": 10, "pg32": 15, "pg4": 15}
    nodes, _ = hdrf_tree(env, [10, 10, 10, 15, 15])
    assert (env.queue_index("pg3/pg32") in nodes) == (not current_file)  # a queue without a job is not in the tree


# ---------------------------------------------------------------------------------------- the H-DRF example
def starvation(cpu, gpu):
    """docs/design/hdrf.md (the H-DRF paper's starvation example): n1 (weight .5) <0 CPU, 1 GPU>; n2 (.5) with
    n2,1 (.5) <1, 0> and n2,2 (.5) <0, 1>.  Unbounded jobs; weights below 1 read as 1 (all equal anyway)."""
    return tree_env(["cpu", "gpu"], [cpu, gpu],
                    [("n1", "1/2"), ("n2", "1/2"), ("n2/n21", "1/2"), ("n2/n22", "1/2")],
                    [("u1", "n1", [0, 1], None), ("u21", "n2/n21", [1, 0], None), ("u22", "n2/n22", [0, 1], None)])


def test_hdrf_starvation_example_gives_n22_its_guarantee():
    """n2,2's hierarchical share guarantee: n2 is guaranteed half the cluster (in dominant share), n2,2 half
    of that: 1/4; as n1 and n2,2 are the only GPU users, H-DRF gives n2,2 half the GPUs.  Our port, 4 CPUs /
    4 GPUs, by hand (shares in quarters; queues created n1, n2/n21, n2/n22):
      1. everything ties at 0: n1, created first: u1 1 GPU (n1 = 1)
      2. n2 0 < 1 -> n21 and n22 tie at 0 -> n21, created before n22: u21 1 CPU (n2 = 1)
      3. n1 1 ties n2 1, so n1 ties both n2 queues; below n2, n22 0 < n21 1: undominated n1 and n2/n22; n1 is
         older: u1 2 (n1 = 2)
      4. n2 1 < 2 -> n22 0 < n21 1: u22 1 GPU; n2 = M = 1, <1, 0> + <0, 1> -> 1
      5. n2 1 < 2 -> n21 1 ties n22 1 -> n21: u21 2; n2 = <2, 0> x 1/2 + <0, 1> -> 1 (rescaled, not 2)
      6. n2 1 < 2 -> n22 1 < n21 2: u22 2 GPUs.  The 4 GPUs are gone: u1 and u22 (holding GPUs) and n1 are
         saturated; n2 = <2, 0> + <0, 2> -> 2, not saturated (u21 is not)
      7-8. n2 (not saturated) before n1 (saturated); n21 before n22 (saturated): u21 3, 4 CPUs.  Done.
    u1 2 GPUs, u21 4 CPUs, u22 2 GPUs: n2,2 gets half the GPUs (dominant share 1/2 >= 1/4).  Without the
    rescaling, step 5 would make n2 = <2, 1> -> 2 and step 6 go to n1 (n1 ties n2/n22, created first): u1 3,
    u22 1."""
    assert both(starvation(4, 4)) == {"u1": 2, "u21": 4, "u22": 2}
    assert served(starvation(4, 4)) == ["u1", "u21", "u1", "u22", "u21", "u22", "u21", "u21"]
    assert both(starvation(10, 10)) == {"u1": 5, "u21": 10, "u22": 5}


def test_design_doc_scenario_is_not_rescaled_when_n21_holds_every_cpu():
    """A finding about upstream, on its own tree semantics (``hdrf_tree``, ``compare_queues``): the design doc
    motivates rescaling with n2,1 at 100% CPU, "scaled to (10, 0) * (0.5 / 1) = (5, 0)", giving n2 share 50%.
    In the code a job holding a fully allocated resource is SATURATED (``resourceSaturated``, drf.go lines
    83-95), and saturated children are added UNSCALED (lines 531-539): with n2,1 holding all 10 CPUs and a
    newly added n2,2 holding 1 GPU, n2's share is 1, so n1 wins every comparison up to share 1 and takes the
    GPUs: the starvation the doc describes.  (The doc's other remedy, "ignores saturated resources when
    computing the dominant share of any internal node", is not in the code: ``calculateShare`` takes every
    resource.)  A job holding nothing is not even counted for M (only non-empty children are): with n2,1 at 9
    CPUs and n2,2 empty, n2's share is 9/10.  In one allocate run from zero (our mechanism) n2,2 gets its
    tasks alongside n2,1 and this does not arise (previous test)."""
    env = starvation(10, 10)
    n1, n22 = env.queue_index("n1"), env.queue_index("n2/n22")
    for tasks, n2_share in (([5, 10, 1], 1), ([8, 10, 1], 1), ([5, 9, 0], F(9, 10))):
        nodes, leaves = hdrf_tree(env, tasks)
        assert nodes[env.queue_index("n2")].share == n2_share and not nodes[env.queue_index("n2")].saturated
        assert compare_queues(nodes, env, n1, n22) == -1  # n1 is served, n2,2 waits
    nodes, leaves = hdrf_tree(env, [5, 10, 1])
    assert leaves[1].saturated and nodes[env.queue_index("n2")].alloc == (10, 1)


# ---------------------------------------------------------------------------------------- ties: upstream's fallback
def cycle_env(capacity, usage=None):
    """Queues created a, a/q, m, z, z/p (weight z/p 2, the others 1); uq in a/q, um in m, up in z/p, <1> each,
    unbounded.  With a, m and z at one share s > 0, ``compareQueues`` ties m with both other queues (it compares
    only down to m's depth) and decides z/p before a/q one level down (p's s / 2 < q's s)."""
    return tree_env(["r"], [capacity], [("a", 1), ("a/q", 1), ("m", 1), ("z", 1), ("z/p", 2)],
                    [("uq", "a/q", [1], None), ("um", "m", [1], None), ("up", "z/p", [1], None)], usage)


def test_the_fallback_is_cyclic_across_depths():
    """Upstream's ``QueueOrderFn`` in the default hierarchy configuration (drf the only queue order):
    ``compareQueues``, then the earlier created queue (session_plugins.go lines 775-798).  At uq = um = up = 1
    of 4 (a = m = z = 1/4; q = 1/4, p = 1/8): a/q before m (a tie: created first), m before z/p (a tie: created
    first), z/p before a/q (p 1/8 < q 1/4): a cycle, and ``compare_users`` (the order facet) reports exactly
    that.  ``next_user``: the queues no other queue precedes in ``compareQueues`` are m and z/p (a/q loses to
    z/p); the earliest created, m."""
    env = cycle_env(4)
    nodes, leaves = hdrf_tree(env, [1, 1, 1])
    aq, m, zp = (env.queue_index(p) for p in ("a/q", "m", "z/p"))
    assert (compare_queues(nodes, env, aq, m), compare_queues(nodes, env, m, zp),
            compare_queues(nodes, env, zp, aq)) == (0, 0, -1)
    cmp = lambda a, b: compare_users(env, nodes, leaves, a, b)  # noqa: E731
    assert (cmp(0, 1), cmp(1, 2), cmp(2, 0)) == (-1, -1, -1)  # uq < um < up < uq
    assert (cmp(1, 0), cmp(2, 1), cmp(0, 2)) == (1, 1, 1)
    assert next_user(env, nodes, leaves, [0, 1, 2]) == 1  # um


def test_a_run_through_the_cycle():
    """One resource of 4, from empty, by hand:
      1. every share 0: everything ties; a/q was created first: uq 1 (a = 1/4);
      2. m 0 and z 0 beat a 1/4; m ties z/p (depth 1): m, created before z/p: um 1;
      3. z 0 beats a and m: up 1;
      4. the cycle of the previous test: m (created before z/p; a/q is beaten by z/p): um 2.
    uq 1, um 2, up 1.  (Serving z/p there -- the deeper queue -- would give up 2, serving the first created
    queue a/q uq 2.)  Upstream's heap (``_go_heap_run``, queues pushed in user order) serves up instead, by
    its layout: pushed at 0 (all tied: creation order) it is [a/q, m, z/p]; pop a/q, m is sifted up (tie, m
    older), uq 1, a/q pushed back below m (a 1/4 > m 0): [m, z/p, a/q]; pop m, z/p sifted up (z 0 < a 1/4), um
    1, m pushed back: [z/p, a/q, m]; pop z/p, a/q sifted up (a 1/4 = m 1/4: a/q older), up 1, z/p pushed back
    and compared with its parent a/q only (p 1/8 < q 1/4): on top, and popped: up 2.  In a cyclic order the
    pop is whatever the layout gives; ours is the rule of ``next_user``."""
    env = cycle_env(4)
    assert both(env) == {"uq": 1, "um": 2, "up": 1}
    assert served(env) == ["uq", "um", "up", "um"]
    assert _go_heap_run(env) == ([1, 1, 2], ["uq", "um", "up", "up"])


def test_order_property_finds_the_cycle():
    """``examples/volcano-order-cycle.json`` (the state uq = um = up = 1 of ``cycle_env(4)``, as usage):
    ``order/strict-weak`` fails on the three users -- the facet is upstream's comparator, not repaired -- and
    ``check`` exits 1 on it."""
    env = load_environment(CYCLE)
    twin = cycle_env(4, usage=[1, 1, 1])
    assert (env.queues, env.queue_weight, env.user_queue, env.demand, env.usage, env.capacity) == \
        (twin.queues, twin.queue_weight, twin.user_queue, twin.demand, twin.usage, twin.capacity)
    results = {r.variant: r for r in check_instance(mechanisms.get("volcano-hdrf"), env, ["order"], RunConfig(budget=60))}
    r = results["strict-weak"]
    assert r.verdict == "violated" and r.certificate.witness.users == (0, 1, 2), r
    assert r.certificate.summary == "uq before um before up, but compare(uq, up) = 1: not transitive"
    assert results["scale"].verdict == "satisfied"
    out = subprocess.run([sys.executable, "-m", "verifier", "check", "volcano-hdrf", CYCLE, "--properties", "order"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "order/strict-weak            VIOLATED" in out.stdout, out.stdout + out.stderr


def test_creation_order_decides_ties_where_the_path_did_before():
    """Three one-task cases (capacity 1, demands 1), each a tie at share 0:
      * queues created b, a; ua in a, ub in b: b was created first: ub (the path would give ua);
      * queues created z, z/p, m; up in z/p, um in m: ``compareQueues`` ties m and z/p (compared at depth 1
        only); z/p was created first: up (the shallower queue would give um);
      * one queue, jobs created b, a: b (the name would give a)."""
    env = tree_env(["r"], [1], [("b", 1), ("a", 1)], [("ua", "a", [1], None), ("ub", "b", [1], None)])
    assert both(env) == {"ua": 0, "ub": 1}
    env = tree_env(["r"], [1], [("z", 1), ("z/p", 1), ("m", 1)], [("um", "m", [1], None), ("up", "z/p", [1], None)])
    assert both(env) == {"um": 0, "up": 1}
    env = tree_env(["r"], [1], [("q", 1)], [("b", "q", [1], None), ("a", "q", [1], None)])
    assert both(env) == {"b": 1, "a": 0}


def test_a_user_at_the_root_ties_with_every_queue_and_goes_first():
    """A job directly under the root (our user without a queue: a queue with no hierarchy annotation, created
    before the declared ones) has depth 0: ``compareQueues`` compares only the root with the root, always a
    tie, and it was created first, so it is served while it can take a task.  r = 4: "a" at the root (no bound)
    takes all 4 before "b" (in q) gets one; bounded to 1, it takes 1, then b takes 3."""
    env = tree_env(["r"], [4], [("q", 1)], [("b", "q", [1], None), ("a", None, [1], None)])
    nodes, leaves = hdrf_tree(env, [0, 3])
    assert compare_queues(nodes, env, None, env.queue_index("q")) == 0
    assert compare_users(env, nodes, leaves, 1, 0) == -1
    assert both(env) == {"b": 0, "a": 4}
    env = tree_env(["r"], [4], [("q", 1)], [("b", "q", [1], None), ("a", None, [1], 1)])
    assert both(env) == {"b": 3, "a": 1}


def test_jobs_of_one_queue_by_flat_share_then_creation():
    """drf.go ``jobOrderFn`` (lines 370-386): the flat DRF share; a tie goes to ``JobOrderFn``'s fallback, the
    earlier created job (session_plugins.go lines 737-749; ``priority`` and ``gang`` tie before drf: equal
    priorities, ``minAvailable`` 0).  r = 3, one queue: "b" (created first) and "a" demand 2 and 1: both 0 -> b
    2/3; a 0 < 2/3 -> a 1/3; r is full: b 1, a 1.  r = 1: b, created first, takes it."""
    env = tree_env(["r"], [3], [("q", 1)], [("b", "q", [2], None), ("a", "q", [1], None)])
    assert both(env) == {"b": 1, "a": 1}
    env = tree_env(["r"], [1], [("q", 1)], [("b", "q", [1], None), ("a", "q", [1], None)])
    assert both(env) == {"b": 1, "a": 0}


def test_flat_instance_is_whole_task_drf():
    """No queues: every user is a job at the root, every queue comparison ties, and the job order is flat DRF
    (share, then creation): the DRF paper's example (9 CPUs, 18 GB; A <1, 4>, B <3, 1>) gives A 3 tasks, B 2, as
    ``mesos-drf`` does (tests/mechanisms/test_mesos_drf.py).  By hand (per task A 2/9, B 1/3): 0 = 0 -> A (created
    first) 2/9; B 0 -> 1/3; A 2/9 -> 4/9; B 1/3 -> 2/3; A 4/9 -> 2/3: 3 + 6 = 9 CPUs, nothing fits any more."""
    env = tree_env(["cpu", "mem"], [9, 18], [], [("A", None, [1, 4], None), ("B", None, [3, 1], None)])
    assert both(env) == {"A": 3, "B": 2}


# ---------------------------------------------------------------------------------------- upstream's heap
def _go_heap_run(env):
    """Upstream's allocate loop with its queue heap as ``container/heap`` does it (allocate.go lines 283-368,
    util/priority_queue.go): ``Less`` is ``QueueOrderFn`` (``compareQueues``, then the earlier created queue)
    on the tree as it is NOW, but an entry is only re-sifted when it is popped and pushed back; one task per
    pop; a job whose task does not fit is dropped when popped.  One job per queue here; the queues pushed in
    user order (each when its first job is met, as ``buildAllocateContext`` does over Go's map).  Returns the
    tasks and the users served, in order."""
    tasks, left, placed = [0] * env.n_users, list(env.capacity[0]), []
    tree = [hdrf_tree(env, tasks)[0]]

    def less(a, b):
        c = compare_queues(tree[0], env, a, b)
        return c < 0 if c else (-1 if a is None else a) < (-1 if b is None else b)

    h: list = []

    def swap(i, j):
        h[i], h[j] = h[j], h[i]

    def push(x):
        h.append(x)
        j = len(h) - 1
        while j > 0 and less(h[j], h[(j - 1) // 2]):
            swap(j, (j - 1) // 2)
            j = (j - 1) // 2

    def pop():
        n = len(h) - 1
        swap(0, n)
        i = 0
        while 2 * i + 1 < n:
            j = 2 * i + 1
            if j + 1 < n and less(h[j + 1], h[j]):
                j += 1
            if not less(h[j], h[i]):
                break
            swap(i, j)
            i = j
        return h.pop()

    jobs: dict = {}
    for j in range(env.n_users):
        if env.user_queue[j] not in jobs:
            jobs[env.user_queue[j]] = []
            push(env.user_queue[j])
        jobs[env.user_queue[j]].append(j)
    while h:
        q = pop()
        if not jobs[q]:
            continue
        j = jobs[q].pop(0)
        if (env.tasks[j] is None or tasks[j] < env.tasks[j]) and all(left[r] >= d for r, d in enumerate(env.demand[j])):
            tasks[j] += 1
            placed.append(env.users[j])
            left = [v - d for v, d in zip(left, env.demand[j])]
            tree[0] = hdrf_tree(env, tasks)[0]
            jobs[q].append(j)
        push(q)
    return tasks, placed


def test_upstream_heap_keeps_stale_keys_we_pop_the_least():
    """Why the module pops the least queue at every pop instead of emulating upstream's heap: placing a task
    changes the shares of the job's ancestors, hence the keys of every queue below them, but the heap re-sifts
    only the popped queue.  The rescaling test with the queues created as the test gets them (eng/dev, eng/prod,
    sci) and upstream's own fallback, by hand (tenths): the three queues are pushed at 0, all tied: dev, prod,
    sci in creation order.  Pop 1: dev; prod is sifted to the top (0 = 0, created before sci); pg21's task
    lifts eng to 1; dev is pushed back below prod (one level down 1 > 0).  Pop 2: prod, although sci (0) is now
    less than eng (1): its place was decided at 0.  pg22 1, eng 1; then sci (pg1 1), dev (pg21 2), prod (pg22
    2, eng 2: dev was sifted above sci while eng and sci were tied at 1) and pop 6 takes dev at sci 1 < eng 2.
    The pattern repeats (dev gets the stale pop each round): served pg21, pg22, pg1, pg21, pg22, pg21, pg1,
    pg22, pg21, pg1, pg22, pg21, pg1, pg22, pg21 (its 6th CPU: with pg1's 4 the CPUs are gone), pg22: pg1 4,
    pg21 6, pg22 6 instead of upstream's expected 5, 5, 5.  The same heap with sci created first gives 5, 5, 5,
    as popping the least does in both orders (the tests above)."""
    tasks, placed = _go_heap_run(rescaling(False, by_name=True))
    assert tasks == [4, 6, 6]
    assert placed == ["pg21", "pg22", "pg1", "pg21", "pg22", "pg21", "pg1", "pg22", "pg21", "pg1", "pg22", "pg21",
                      "pg1", "pg22", "pg21", "pg22"]
    assert _go_heap_run(rescaling(False))[0] == [5, 5, 5]
    assert both(rescaling(False, by_name=True)) == {"pg1": 5, "pg21": 5, "pg22": 5}


# ---------------------------------------------------------------------------------------- incremental = literal
def _random_tree_env(rng, shuffle=False):
    paths: list[str] = []
    for _ in range(rng.randint(0, 7)):
        p = (rng.choice(paths) + "/" if paths and rng.random() < 0.6 else "") + f"q{len(paths)}"
        if p.count("/") < 4:
            paths.append(p)
    if shuffle:  # creation order unrelated to the paths: cyclic states arise
        rng.shuffle(paths)
    R = rng.randint(1, 3)
    users = []
    for j in range(rng.randint(1, 6)):
        dem = [rng.choice([0, 0, 1, 1, 2, 3, "1/2"]) for _ in range(R)]
        bounded = all(x == 0 for x in dem) or rng.random() < 0.6
        users.append((f"u{rng.randint(0, 9)}{j}", rng.choice([None] + paths), dem,
                      rng.choice([0, 1, 2, 3, 5, "5/2", 8]) if bounded else None))
    return tree_env([f"r{r}" for r in range(R)], [rng.choice([0, 2, 3, 5, 8, 12]) for _ in range(R)],
                    [(p, rng.choice([1, 1, 2, 3, "1/2", 50])) for p in paths], users)


@pytest.mark.parametrize("shuffle", [False, True], ids=["paths-in-creation-order", "shuffled-creation"])
def test_incremental_loop_equals_the_literal_recomputation(shuffle):
    """400 random trees (depth <= 4, users at the root and in inner queues, zero demands and capacities,
    bounds, weights below 1; queues created in path order, or shuffled): the incremental mechanism (per-node
    sums, heaps, the top-down choice, rebuild when a resource fills up) and :func:`volcano_hdrf_reference` (the
    whole tree and every pair of queues compared after every task) give the same allocation."""
    rng = random.Random(f"2025-{shuffle}")
    rebuilt = 0
    for _ in range(400):
        env = _random_tree_env(rng, shuffle)
        a = volcano_hdrf_fast(env)
        assert a.x == volcano_hdrf_reference(env).x, env
        rebuilt += a.info["rebuilds"] > 1
    assert rebuilt > 50  # resources filling up (the broad refresh) are exercised


def test_next_user_is_upstreams_least_wherever_there_is_one():
    """In every state of 300 random runs (shuffled creation orders): where upstream's comparator
    (``compare_users``) has a least element among the users that can take a task, ``next_user`` serves it;
    where it has none (a cycle: no user precedes all the others), ``next_user`` serves a
    user of a queue that no candidate queue precedes in ``compareQueues``, created no later than any other such
    queue.  Both kinds of state occur."""
    rng = random.Random("least")
    least = cyclic = 0
    for _ in range(300):
        env = _random_tree_env(rng, shuffle=True)
        J, tasks, left = env.n_users, [0] * env.n_users, list(env.capacity[0])
        limit = [None if b is None else math.floor(b) for b in env.tasks]
        for _step in range(60):
            cand = [j for j in range(J) if (limit[j] is None or tasks[j] < limit[j])
                    and all(v >= d for v, d in zip(left, env.demand[j]))]
            if not cand:
                break
            nodes, leaves = hdrf_tree(env, tasks)
            j = next_user(env, nodes, leaves, cand)
            first = [a for a in cand if all(a == b or compare_users(env, nodes, leaves, a, b) < 0 for b in cand)]
            if first:
                least += 1
                assert first == [j], env
            else:
                cyclic += 1
                qs = {env.user_queue[k] for k in cand}
                free = [q for q in qs if not any(compare_queues(nodes, env, r, q) < 0 for r in qs)]
                key = lambda q: -1 if q is None else q  # noqa: E731
                assert env.user_queue[j] in free and key(env.user_queue[j]) == min(map(key, free)), env
            tasks[j] += 1
            left = [v - d for v, d in zip(left, env.demand[j])]
    assert least > 1000 and cyclic > 0, (least, cyclic)


def test_hostile_tree_runs_without_recursion():
    """10^4 queues, depth 32 (the format's limits): a chain c0/.../c31 and 9 968 more queues hung along it;
    400 users of 3 tasks, 10 of them in the chain's inner queues and its deepest queue, the rest in every 25th
    hung leaf; CPUs for 1 199 of the 1 200 tasks.  No recursion anywhere (the tree is built, updated and rebuilt
    iteratively; the choice is found level by level); every task of a path of 32 queues re-keys 32 nodes."""
    chain = ["/".join(f"c{i}" for i in range(k + 1)) for k in range(32)]
    queues = list(chain) + [f"{chain[k % 31]}/x{k}" for k in range(10_000 - 32)]
    users = [(f"d{i}", chain[31 - i], [1, 1], 3) for i in range(10)]
    users += [(f"u{k}", queues[32 + 25 * k], [1, (k % 3)], 3) for k in range(390)]
    env = tree_env(["cpu", "mem"], [1199, 5000], [(q, 1 + len(q) % 3) for q in queues], users)
    assert env.n_queues == 10_000 and max(env.queue_depth(q) for q in range(env.n_queues)) == 32
    a = mechanisms.allocate("volcano-hdrf", env)
    assert a.info["steps"] == 1199 and sorted(a.totals()) == [2] + [3] * 399
    assert a.totals()[0] > 0  # the user in the deepest queue was served


# ---------------------------------------------------------------------------------------- setting, list, CLI
def test_setting_and_list():
    m = mechanisms.get("volcano-hdrf")
    assert m.source == UPSTREAM and COMMIT in m.source and "pkg/scheduler/plugins/drf/drf.go" in m.source
    assert "pkg/scheduler/framework/session_plugins.go" in m.source
    st = m.setting
    assert st.hierarchy and st.single_server and not st.divisible and not st.placement and not st.external
    assert not st.weights and st.bounds and m.claims == ()
    assert "no proportion" in m.notes and "earlier created" in m.notes and "cyclic" in m.notes
    ok = rescaling(False)
    with pytest.raises(SettingError, match=r"^servers: volcano-hdrf is defined for one server"):
        mechanisms.allocate("volcano-hdrf", parse_environment(
            {"resources": ["r"], "servers": [{"capacity": [1]}, {"capacity": [1]}], "users": [{"demand": [1]}]}))
    with pytest.raises(SettingError, match=r"^users\[0\]\.weight"):
        mechanisms.allocate("volcano-hdrf", ok.with_user(0, weight=2))
    with pytest.raises(SettingError, match=r"^users\[0\]\.eligible"):
        mechanisms.allocate("volcano-hdrf", ok.with_user(0, eligible=[]))
    assert mechanisms.allocate("volcano-hdrf", ok).totals() == (5, 5, 5)


def test_example_file_and_command_line():
    env = load_environment(EXAMPLE)
    assert env.n_queues == 4 and env.resources == ("cpu", "mem", "pods")
    assert tasks_of(env, mechanisms.allocate("volcano-hdrf", env)) == {"pg1": 5, "pg21": 5, "pg22": 5}
    out = subprocess.run([sys.executable, "-m", "verifier", "allocate", "volcano-hdrf", EXAMPLE, "--exact"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines()[2:]}
    assert rows == {"pg1": ["5", "5"], "pg21": ["5", "5"], "pg22": ["5", "5"]}
