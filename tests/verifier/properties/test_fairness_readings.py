"""BF, SRF and single-server DRF read on queue trees (``tree``) and on whole tasks (``whole-task``)
(``verifier/properties/fairness.py``, module docstring), derived by hand beside each test."""
from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction as F

from hypothesis import HealthCheck, Phase, given, seed, settings

import mechanisms
from mechanisms.core.registry import Setting
from mechverify.instances import parse_environment
from verifier.engines import strategies as S
from verifier.properties import get_property
from verifier.properties.fairness import (common_dominant_resources, fair_levels, hierarchical_fair_amounts,
                                          water_fill)
from verifier.run import plan
from tests.helpers import INDIV, fails, fixed, global_cpu_env, holds, one_cpu

FLAT = Setting()
TREE = Setting(single_server=True, hierarchy=True)  # a divisible hierarchical mechanism (one pool)
WHOLE = Setting(divisible=False)  # whole tasks, many servers (mesos-drf, drfh-first-fit, ...)
WHOLE_TREE = Setting(single_server=True, hierarchy=True, divisible=False)
TREE_FIXED = dict(single_server=True, hierarchy=True, placement=False, bounds=True, weights=False)
WHOLE_TREE_FIXED = dict(TREE_FIXED, divisible=False)


def searched(prop, setting):
    p = get_property(prop)
    return [v for v in p.variants if p.variant_possible(setting, v) is None]


def tree_env():
    """One server <12 r1, 24 r2>; queues a (weight 1), b (weight 3); u1 <1, 1> in a, u2 <1, 1> with n2 = 2 and
    u3 <2, 1> in b.  r1 is every user's dominant resource (1/12 > 1/24, 2/12 > 1/24), so on one server it is
    the only binding resource.  Hierarchical max-min on r1: the root water-fills 12 over a (w 1, no cap) and
    b (w 3, no cap): a 3, b 9; b water-fills 9 over u2 (w 1, cap 2 tasks x 1 = 2) and u3 (w 1, no cap): level
    9/2 > 2, so u2 gets 2 and u3 the other 7.  Fair amounts (3, 2, 7) = tasks (3, 2, 7/2).  (Flat weighted
    max-min would give (5, 2, 5).)"""
    return parse_environment({
        "resources": ["r1", "r2"], "servers": [{"name": "s1", "capacity": [12, 24]}],
        "queues": [{"name": "a", "weight": 1}, {"name": "b", "weight": 3}],
        "users": [{"name": "u1", "demand": [1, 1], "queue": "a"},
                  {"name": "u2", "demand": [1, 1], "tasks": 2, "queue": "b"},
                  {"name": "u3", "demand": [2, 1], "queue": "b"}]})


# ====================================================================== which reading is searched
def test_variant_possible_matrix():
    """Indivisible: whole-task only (with or without a tree); divisible on trees: tree (single-server DRF:
    totals, on flat instances); flat divisible: the seeds' variants."""
    assert searched("bf", FLAT) == ["global", "per-server"]
    assert searched("bf", TREE) == ["tree"]
    assert searched("bf", WHOLE) == searched("bf", WHOLE_TREE) == ["whole-task"]
    assert searched("srf", FLAT) == ["max-min"]
    assert searched("srf", TREE) == ["tree"]
    assert searched("srf", WHOLE) == searched("srf", WHOLE_TREE) == ["whole-task"]
    assert searched("single-server-drf", FLAT) == searched("single-server-drf", TREE) == ["totals"]
    assert searched("single-server-drf", WHOLE) == searched("single-server-drf", WHOLE_TREE) == ["whole-task"]
    bf, srf, ssd = get_property("bf"), get_property("srf"), get_property("single-server-drf")
    assert bf.variant_possible(WHOLE, "global") == "whole tasks: see bf/whole-task"
    assert bf.variant_possible(TREE, "per-server") == "a queue tree: see bf/tree"
    assert srf.variant_possible(WHOLE_TREE, "tree") == "whole tasks: srf/whole-task reads the tree"
    assert srf.variant_possible(FLAT, "tree") == "no queue tree in this setting"
    assert bf.variant_possible(TREE, "whole-task") == "divisible tasks"
    assert ssd.variant_possible(WHOLE, "totals") == "whole tasks: see single-server-drf/whole-task"


def test_indivisible_mechanisms_are_searched_on_whole_tasks_only():
    """mesos-drf, the whole-task DRFH heuristics and seed 004's online TSF-ER: no fractional BF/SRF/DRF cell."""
    for name in ("mesos-drf", "drfh-first-fit", "drfh-best-fit", "tsf-er-online"):
        cells, skipped = plan(mechanisms.get(name), ["bf", "srf", "single-server-drf"])
        assert cells == [("bf", "whole-task"), ("srf", "whole-task"), ("single-server-drf", "whole-task")], name
        assert {(p, v) for p, v, _ in skipped} == {("bf", "global"), ("bf", "per-server"), ("bf", "tree"),
                                                  ("srf", "max-min"), ("srf", "tree"), ("single-server-drf", "totals")}


# ====================================================================== whole tasks
def test_whole_task_holds_within_one_task():
    """One server, 10 of r1; u1, u2 <3>.  Fair amounts 5 each.  Whole tasks 2 and 1: u2 holds 3, 3 + 3 <= 5 is
    false (u1 holds 6): no user is a whole task short, measure 0 -- although the fractional reading would call
    u2's 3 < 5 a shortfall of 2/5."""
    env, m = one_cpu(10, [3, 3]), fixed("2-1", [[2], [1]], **INDIV)
    for prop in ("bf", "srf"):
        holds(prop, m, env, "whole-task", measure=F(0))
    fails("srf", fixed("2-1-frac", [[2], [1]], single_server=True), env, "max-min", measure=F(2, 5), gap=F(2),
          utilities={"cpu[u2]/w mechanism": F(3), "cpu[u2]/w max-min fair": F(5)})


def test_whole_task_fails_a_whole_task_short():
    """Same instance, whole tasks 3 and 0: u2 holds 0, 0 + 3 <= 5: one whole task short (floor(5/3) = 1);
    gap 5 (of cpu), measure 1."""
    env, m = one_cpu(10, [3, 3]), fixed("3-0", [[3], [0]], **INDIV)
    for prop in ("bf", "srf"):
        cert = fails(prop, m, env, "whole-task", measure=F(1), gap=F(5),
                     utilities={"cpu[u2] mechanism": F(0), "cpu[u2] max-min fair": F(5), "cpu[u2] per task": F(3)})
        assert cert.witness.users == (1,)
        assert cert.summary == ("u2 holds 0 of cpu (0 tasks); max-min fairness on cpu gives it 5 (whole tasks: "
                                "1 more task of 3 cpu would fit within it)")


def test_whole_task_bf_two_resources_and_weights():
    """One server <12 cpu, 12 mem>; u1 <2, 1> (w 2), u2 <1, 1>: u1's dominant resource is cpu (2/12 > 1/12),
    u2's both (a tie), so the common one is cpu.  Weighted max-min on cpu: a1/2 = a2, a1 + a2 = 12: (8, 4).  Whole tasks (5, 1): u2 holds 1, 1 + 1 <= 4: floor(3/1) = 3 tasks short; gap 3.
    (4, 4): u1 holds 8, u2 4: measure 0."""
    env = parse_environment({"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": [12, 12]}],
                             "users": [{"name": "u1", "demand": [2, 1], "weight": 2},
                                       {"name": "u2", "demand": [1, 1]}]})
    assert common_dominant_resources(env, "global") == [0]
    w = dict(INDIV, weights=True)
    fails("bf", fixed("5-1", [[5], [1]], **w), env, "whole-task", measure=F(3), gap=F(3),
          utilities={"cpu[u2] mechanism": F(1), "cpu[u2] max-min fair": F(4), "cpu[u2] per task": F(1)})
    holds("bf", fixed("4-4", [[4], [4]], **w), env, "whole-task", measure=F(0))


def test_whole_task_not_applicable_on_several_servers():
    """Two servers: the floors of the fractional benchmark need not pack together."""
    bf = get_property("bf")
    why = bf.applicable(mechanisms.get("mesos-drf"), global_cpu_env(), "whole-task")
    assert why is not None and "packing" in why
    assert get_property("srf").applicable(mechanisms.get("mesos-drf"), global_cpu_env(), "whole-task") is not None


def test_mesos_drf_rounding_is_not_a_whole_task_violation():
    """mesos-drf, one server of 3 r1; u1 <2>, u2 <1>, u3 <1>.  All shares 0: by name u1 takes a task (share
    2/3), then u2 (1/3), then u3 -- nothing is left (3 - 2 - 1 = 0).  Tasks (1, 1, 0).  Max-min fair: 1 of r1
    each; u3 holds 0, a whole task short (0 + 1 <= 1) -- but no room is idle and u1 holds only half of its
    own task above its fair amount (2 - 1 = 1 < 2): serving u3 means taking u1's only task, which leaves u1
    0 of its 1.  (1, 1, 0) is whole tasks' rounding, not the policy's unfairness: bf, srf and
    single-server-drf (DRF (1/2, 1, 1): u1 1/2 task above, u3 1 short) hold, measure 0."""
    env = parse_environment({"resources": ["r1"], "servers": [{"name": "s1", "capacity": [3]}],
                             "users": [{"name": "u1", "demand": [2]}, {"name": "u2", "demand": [1]},
                                       {"name": "u3", "demand": [1]}]})
    m = mechanisms.get("mesos-drf")
    assert m(env, exact=True).totals() == (1, 1, 0)
    for prop in ("bf", "srf", "single-server-drf"):
        holds(prop, m, env, "whole-task", measure=F(0))


def test_whole_task_violation_needs_a_fair_move():
    """One server of 4 r1, u1 <1>, u2 <3>: fair amounts 2 each.  (1, 1): u1 a task short, no idle room, u2
    holds 3 - 2 = 1/3 task above: rounding, holds.  (0, 1): u1 two tasks short and one task of room idle
    (4 - 3 = 1 >= 1): violated, measure 2 (floor((2 - 0) / 1)).  Three users <1> on 3 with (0, 3, 0): u2 holds
    3 - 1 = 2 tasks above its fair 1, and u1's task fits once one of u2's is taken back: violated although no
    room is idle (measure 1: u1 and u3 are each one task short)."""
    env = one_cpu(4, [1, 3])
    holds("bf", fixed("1-1", [[1], [1]], **INDIV), env, "whole-task", measure=F(0))
    fails("bf", fixed("0-1", [[0], [1]], **INDIV), env, "whole-task", measure=F(2), gap=F(2),
          utilities={"cpu[u1] mechanism": F(0), "cpu[u1] max-min fair": F(2), "cpu[u1] per task": F(1)})
    env3 = one_cpu(3, [1, 1, 1])
    fails("bf", fixed("0-3-0", [[0], [3], [0]], **INDIV), env3, "whole-task", measure=F(1), gap=F(1),
          utilities={"cpu[u1] mechanism": F(0), "cpu[u1] max-min fair": F(1), "cpu[u1] per task": F(1)})


def test_single_server_drf_whole_task():
    """One cpu of 10, u1 and u2 <3>: DRF 5/3 each.  Whole tasks (2, 1): 1 > 5/3 - 1: holds (the totals
    reading would call |1 - 5/3| a difference).  (3, 0): 0 <= 5/3 - 1: one task short; gap 5/3, measure 1."""
    env = one_cpu(10, [3, 3])
    holds("single-server-drf", fixed("2-1", [[2], [1]], **INDIV), env, "whole-task", measure=F(0))
    cert = fails("single-server-drf", fixed("3-0", [[3], [0]], **INDIV), env, "whole-task", measure=F(1),
                 gap=F(5, 3), utilities={"x[u2]": F(0), "x[u2] under DRF": F(5, 3)})
    assert cert.summary == ("on one server u2 gets 0 tasks, DRF gives 5/3 (whole tasks: 1 more task would fit "
                            "within it)")


def test_single_server_drf_not_applicable_on_a_tree():
    """DRF is flat: an instance with queues is not read (either variant); its flat form is."""
    ssd, env = get_property("single-server-drf"), tree_env()
    m = fixed("t", [[3], [2], ["7/2"]], **TREE_FIXED)
    for variant in ("totals", "whole-task"):
        why = ssd.applicable(m, env, variant)
        assert why is not None and "DRF is flat" in why
    flat = replace(env, queues=(), queue_weight=(), queue_guarantee=(), user_queue=())
    assert ssd.applicable(m, flat, "totals") is None


# ====================================================================== trees
def test_water_fill():
    """12 over weights (1, 3): 3 and 9; with the first capped at 2: 2 and 10; caps summing to less: the caps."""
    assert water_fill(F(12), [(1, None), (3, None)]) == [3, 9]
    assert water_fill(F(12), [(1, F(2)), (3, None)]) == [2, 10]
    assert water_fill(F(12), [(1, F(2)), (3, F(1))]) == [2, 1]
    assert water_fill(F(12), [(2, F(0)), (1, None)]) == [0, 12]
    assert water_fill(F(5), []) == []


def test_hierarchical_levels_by_hand():
    """tree_env: (3, 2, 7) on r1 (docstring of tree_env)."""
    assert hierarchical_fair_amounts(tree_env(), 0) == [3, 2, 7]


def test_hierarchical_levels_users_in_an_inner_queue():
    """One cpu of 12, every demand <1>, unbounded.  Queues a (1), b (3), b/c (1), d (5, no users).  u1 in a,
    u2 in b itself (weight 2), u3 in b/c.  Root: d can use nothing (cap 0), so a 3, b 9; b splits 9 between
    its child queue b/c (weight 1) and u2 (weight 2): 3 and 6.  Fair (3, 6, 3)."""
    env = parse_environment({
        "resources": ["cpu"], "servers": [{"name": "s1", "capacity": [12]}],
        "queues": [{"name": "a"}, {"name": "b", "weight": 3}, {"name": "b/c"}, {"name": "d", "weight": 5}],
        "users": [{"name": "u1", "demand": [1], "queue": "a"}, {"name": "u2", "demand": [1], "weight": 2, "queue": "b"},
                  {"name": "u3", "demand": [1], "queue": "b/c"}]})
    assert hierarchical_fair_amounts(env, 0) == [3, 6, 3]


def test_tree_holds_at_the_hierarchical_levels():
    """tasks (3, 2, 7/2) are the hierarchical amounts (3, 2, 7) of r1: measure 0 (bf; srf needs one resource)."""
    holds("bf", fixed("tree-fair", [[3], [2], ["7/2"]], **TREE_FIXED), tree_env(), "tree", measure=F(0))


def test_tree_fails_flat_max_min():
    """Flat weighted max-min ignores the queues: amounts (5, 2, 5) = tasks (5, 2, 5/2).  u3 holds 5 of r1, its
    hierarchical amount is 7: relative shortfall 2/7, gap 2."""
    cert = fails("bf", fixed("flat", [[5], [2], ["5/2"]], **TREE_FIXED), tree_env(), "tree", measure=F(2, 7),
                 gap=F(2), utilities={"r1[u3] mechanism": F(5), "r1[u3] hierarchical max-min fair": F(7)})
    assert cert.summary == "u3 holds 5 of r1 (5/2 tasks); hierarchical max-min fairness on r1 gives it 7"
    assert cert.allocations["hierarchical max-min fair"].totals() == (3, 2, F(7, 2))


def test_whole_task_on_a_tree():
    """Whole tasks on tree_env (benchmark (3, 2, 7)).  (3, 2, 3): u3 holds 6, 6 + 2 <= 7 false: measure 0,
    though the tree reading would flag 6 < 7.  (4, 2, 2): u3 holds 4, 4 + 2 <= 7: floor(3/2) = 1 task short,
    gap 3 (u1's 4 > 3 is no shortfall)."""
    env = tree_env()
    holds("bf", fixed("3-2-3", [[3], [2], [3]], **WHOLE_TREE_FIXED), env, "whole-task", measure=F(0))
    cert = fails("bf", fixed("4-2-2", [[4], [2], [2]], **WHOLE_TREE_FIXED), env, "whole-task", measure=F(1),
                 gap=F(3), utilities={"r1[u3] mechanism": F(4), "r1[u3] hierarchical max-min fair": F(7),
                                      "r1[u3] per task": F(2)})
    assert cert.summary == ("u3 holds 4 of r1 (2 tasks); hierarchical max-min fairness on r1 gives it 7 (whole "
                            "tasks: 1 more task of 2 r1 would fit within it)")


def test_tree_srf_one_resource():
    """tree_env's r1 alone (drop r2): the same amounts (3, 2, 7); srf/tree flags the flat split like bf/tree."""
    env = parse_environment({
        "resources": ["r1"], "servers": [{"name": "s1", "capacity": [12]}],
        "queues": [{"name": "a", "weight": 1}, {"name": "b", "weight": 3}],
        "users": [{"name": "u1", "demand": [1], "queue": "a"}, {"name": "u2", "demand": [1], "tasks": 2, "queue": "b"},
                  {"name": "u3", "demand": [2], "queue": "b"}]})
    holds("srf", fixed("tree-fair", [[3], [2], ["7/2"]], **TREE_FIXED), env, "tree", measure=F(0))
    fails("srf", fixed("flat", [[5], [2], ["5/2"]], **TREE_FIXED), env, "tree", measure=F(2, 7), gap=F(2),
          utilities={"r1[u3] mechanism": F(5), "r1[u3] hierarchical max-min fair": F(7)})


def test_tree_not_applicable_on_several_servers():
    """A queue tree on two servers is not read; a flat instance on two servers is the global check."""
    env = replace(global_cpu_env(), queues=("a",), queue_weight=(F(1),), queue_guarantee=(None,),
                  user_queue=(0, None))
    m = fixed("8-2", [[4, 4], [1, 1]], hierarchy=True)
    why = get_property("bf").applicable(m, env, "tree")
    assert why is not None and "one server" in why
    fails("bf", m, global_cpu_env(), "tree", measure=F(1, 3), gap=F(2),
          utilities={"cpu[u2]/w mechanism": F(4), "cpu[u2]/w max-min fair": F(6)})


def test_flat_instances_coincide_with_weighted_max_min():
    """On a flat one-server instance where r* is every user's dominant resource the hierarchical benchmark is
    the weighted max-min (leximin LP) one, in RDM and TDM: 300 random instances with weights, task bounds
    (fractional, 0), ineligible users and zero demands; and bf/tree's verdict and measure equal bf/global's."""
    rng = random.Random(7)
    compared, verdicts = 0, []
    for _ in range(300):
        J, R = rng.randint(1, 4), rng.randint(1, 3)
        users = []
        for j in range(J):
            d = [rng.randint(0, 4) for _ in range(R)]
            if R > 1:
                d[0] = rng.randint(4, 6)  # r1 dominant against capacities >= 6 x the others'
            u = {"name": f"u{j}", "demand": d, "weight": rng.choice([1, 2, "1/2", 3])}
            if rng.random() < 0.4 or not any(d):
                u["tasks"] = rng.choice([0, 1, "5/2", 4])
            if rng.random() < 0.15:
                u["eligible"] = []
            users.append(u)
        cap = [rng.randint(1, 12)] + [rng.randint(36, 72) for _ in range(R - 1)]
        env = parse_environment({"resources": [f"r{r + 1}" for r in range(R)],
                                 "servers": [{"name": "s1", "capacity": cap}], "users": users})
        cands = common_dominant_resources(env, "global") if R > 1 else [0]
        for r in cands:
            for mode in ("rdm", "tdm"):
                lv, _ = fair_levels(env, r, mode, exact=True)
                assert hierarchical_fair_amounts(env, r) == [lv[j] * env.weight[j] for j in range(J)], env.to_dict()
                compared += 1
        if R > 1 and cands:  # the fair allocation with some users cut (feasible: chi(E) is downward closed)
            _, fx = fair_levels(env, cands[0], "rdm", exact=True)
            x = [[fx[j][0] * rng.choice([1, 1, F(1, 2), 0])] for j in range(J)]
            m = fixed("r", x, hierarchy=True, single_server=True)
            bf = get_property("bf")
            if bf.applicable(m, env, "global") is None:
                a, b = bf.evaluate(m, env, "tree", exact=True), bf.evaluate(m, env, "global", exact=True)
                assert (a.measure, a.violated) == (b.measure, b.violated)
                verdicts.append(a.violated)
    assert compared > 300 and 20 < sum(verdicts) < len(verdicts) - 20


# ====================================================================== search domains
def test_reading_domains_draw_where_the_premise_holds():
    """bf/srf whole-task and tree draw one-server instances (mesos-drf's setting has many servers; a
    hierarchical one draws trees) where the premise holds most of the time; single-server-drf draws flat
    instances also where the setting takes trees."""
    bf, srf = get_property("bf"), get_property("srf")
    hits = {"bf-whole": [], "bf-tree": [], "srf-tree": []}

    @settings(database=None, max_examples=80, deadline=None, suppress_health_check=list(HealthCheck),
              phases=(Phase.generate,))
    @seed(3)
    @given(S.cases(mechanisms.get("mesos-drf").setting, "bf", "whole-task"), S.cases(TREE, "bf", "tree"),
           S.cases(TREE, "srf", "tree"), S.cases(TREE, "single-server-drf", "totals"))
    def collect(bw, bt, st, ssd):
        assert bw[0].n_servers == bt[0].n_servers == st[0].n_servers == 1
        assert bt[0].has_queues and st[0].has_queues and not ssd[0].has_queues
        hits["bf-whole"].append(bf.premise(bw[0], "whole-task") != [])
        hits["bf-tree"].append(bf.premise(bt[0], "tree") != [])
        hits["srf-tree"].append(srf.premise(st[0], "tree") != [])

    collect()
    for k, v in hits.items():
        assert sum(v) >= 0.7 * len(v), (k, sum(v), len(v))
