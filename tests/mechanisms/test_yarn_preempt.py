"""``yarn-drf-preempt`` (mechanisms/ports/yarn/preempt.py): FairScheduler's starvation clocks and preemption over
executions.  Every number is derived by hand in the docstring beside it (one pool, resource 0 read as memory,
whole tasks; a ``round`` event is a tick of the update thread that changes nothing else)."""
from fractions import Fraction as F

import mechanisms  # noqa: F401  (registers)
from mechanisms.core.registry import get
from mechanisms.core.time import execute
from mechanisms.ports.yarn.preempt import (DEFAULTS, REGISTERED, Config, below, fair_shares, java_heap_order,
                                           mechanism, water_fill)
from mechverify.execution import parse_execution
from mechverify.instances import parse_environment
from verifier.properties.dynamic import Starvation


def tasks(step):
    return [row[0] for row in step.alloc.x]


def full_cluster(max_wait=None, end=10):
    """a holds the whole pool (4 x 1 mem) from t = 0; b (4 x 1 mem) arrives at 1; ticks at 5 and 6."""
    d = {"resources": ["mem"], "servers": [{"name": "n", "capacity": [4]}],
         "users": [{"name": "a", "demand": [1], "tasks": 4}],
         "events": [{"t": 1, "kind": "arrive", "user": {"name": "b", "demand": [1], "tasks": 4}},
                    {"t": 5, "kind": "round"}, {"t": 6, "kind": "round"}], "end": end}
    if max_wait is not None:
        d["max_wait"] = max_wait
    return parse_execution(d)


def starvation(mech, ex, variant="entitlement"):
    steps = execute(mech, ex)
    return Starvation().judge(mech, ex, variant, steps, True)


def test_defaults_are_upstreams():
    """AllocationFileLoaderService: threshold 0.5, both timeouts Long.MAX_VALUE; FairSchedulerConfiguration:
    preemption off, utilisation threshold 0.8.  The registered mechanism turns preemption on, timeouts 1."""
    assert DEFAULTS == Config(False, F(1, 2), None, None, F(4, 5))
    assert REGISTERED.enabled and REGISTERED.fair_share_timeout == REGISTERED.min_share_timeout == 1
    assert REGISTERED.fair_share_threshold == F(1, 2) and REGISTERED.utilization_threshold == F(4, 5)
    m = get("yarn-drf-preempt")
    assert m.time is not None and m.time.kind == "stateful" and m.time.revocable
    assert "FSPreemptionThread.java @ 049279bb66b036b4767fe6a0283a6f334ac91440" in m.source


def test_arrival_on_a_full_cluster_waits_exactly_the_timeout():
    """Threshold 1, fair-share timeout 5.  Fair shares: a and b are apps at the root, weight 1 each: 2 and 2.
    t=1: b arrives, pool full (a 4): b's fairDemand min(2 x 1, 4) = 2 > usage 0, clock from its start 1.
    t=5: 5 - 1 = 4 < 5: nothing.  t=6: 6 - 1 = 5, not < 5: starvation 2 - 0 = 2 -> floor(2 / 1) = 2 containers.
    Request 1: a's oldest container: a after 4 - 1 = 3, not below 2: taken, potential 0 + 1 fits.  Request 2: the
    next (the first is marked): a after 4 - 1 (marked) - 1 = 2, not below 2: taken.  b gets both: (2, 2)."""
    m = mechanism(Config(enabled=True, fair_share_threshold=F(1), fair_share_timeout=F(5)))
    steps = execute(m, full_cluster())
    assert [tasks(s) for s in steps] == [[4], [4, 0], [4, 0], [2, 2]]
    assert steps[-1].alloc.info["preempted"] == ((6, "b", ("a", "a")),)
    # the starvation property: b is below its entitlement (2 tasks) from 1 to 6: exactly the timeout
    j = starvation(m, full_cluster())
    assert j.measure == 5 and j.violated
    j = starvation(m, full_cluster(max_wait=5))
    assert j.measure == 0 and not j.violated


def test_preemption_disabled_starves():
    """Upstream's defaults (preemption off; and on but with infinite timeouts): b never gets a container; it waits
    from 1 to the end 10 below its entitlement 2: the measure is 9 (max_wait 0), 9 - 4 = 5 with max_wait 4."""
    for cfg in (DEFAULTS, Config(enabled=True)):
        m = mechanism(cfg)
        assert [tasks(s) for s in execute(m, full_cluster())][-1] == [4, 0]
        assert starvation(m, full_cluster()).measure == 9
        assert starvation(m, full_cluster(max_wait=4)).measure == 5


def test_registered_threshold_half_restores_half_the_fair_share():
    """The registered configuration (threshold 0.5, timeout 1): at the first tick after 1 + 1 (t=5) b's fairDemand
    is min(2 x 1/2, 4) = 1 > 0: one container from a (3 >= 2).  Then b's usage 1 equals fairDemand 1: not starved;
    b stays at 1 < its entitlement 2 until the end: starvation measure 10 - 1 = 9."""
    steps = execute(get("yarn-drf-preempt"), full_cluster())
    assert [tasks(s) for s in steps] == [[4], [4, 0], [3, 1], [3, 1]]
    assert starvation(get("yarn-drf-preempt"), full_cluster()).measure == 9


def threshold_case():
    """Pool 10 mem; a (7 tasks) alone at 0 holds 7; b (10 tasks) arrives at 1 and takes the 3 free; tick at 50."""
    return parse_execution({
        "resources": ["mem"], "servers": [{"name": "n", "capacity": [10]}],
        "users": [{"name": "a", "demand": [1], "tasks": 7}],
        "events": [{"t": 1, "kind": "arrive", "user": {"name": "b", "demand": [1], "tasks": 10}},
                   {"t": 50, "kind": "round"}], "end": 60})


def test_threshold_respected():
    """b's fair share is 5 (two apps, weight 1; fair shares ignore demand), it runs 3 = 0.6 of it.  Threshold 0.5:
    fairDemand min(2.5, 10) = 2.5 <= 3: not starved, nothing is preempted.  Threshold 1 (contrast): fairDemand 5 >
    3, starved from 1; at 50: starvation 2 -> two containers of a (7 -> 6 -> 5, never below its share 5)."""
    half = mechanism(Config(enabled=True, fair_share_timeout=F(5)))
    assert [tasks(s) for s in execute(half, threshold_case())] == [[7], [7, 3], [7, 3]]
    full = mechanism(Config(enabled=True, fair_share_threshold=F(1), fair_share_timeout=F(5)))
    assert [tasks(s) for s in execute(full, threshold_case())] == [[7], [7, 3], [5, 5]]


def min_share_case():
    """Pool 10 mem; queue qa guarantees 6, qb nothing.  ub (qb, 10 tasks) holds 10 from 0; a tick at 1, then ua
    (qa, 10 tasks) arrives at 1; ticks at 3 and 4; end 6."""
    return parse_execution({
        "resources": ["mem"], "servers": [{"name": "n", "capacity": [10]}],
        "queues": [{"name": "qa", "guarantee": [6]}, {"name": "qb"}],
        "users": [{"name": "ub", "demand": [1], "tasks": 10, "queue": "qb"}],
        "events": [{"t": 1, "kind": "round"},
                   {"t": 1, "kind": "arrive", "user": {"name": "ua", "demand": [1], "tasks": 10, "queue": "qa"}},
                   {"t": 3, "kind": "round"}, {"t": 4, "kind": "round"}], "end": 6})


def test_min_share_starvation_of_a_leaf_queue():
    """Min-share timeout 2, fair-share preemption never (timeout infinite).
    Fair shares: qa = max(R, 6), qb = R, sum 10: R = 4, qa 6, qb 4 (ub's 4, ua's 6).
    t=1 (tick): qa has no app, demand 0: desired min(6, 0) = 0 = usage: its clock restarts at 1.  ua arrives.
    t=3: desired Resources.min(6, 10) = 6, usage 0: starved since 1, 3 - 1 = 2, not < 2: min-share starvation 6,
    less fair-share starvation 0.  Handed to ua: its unmet demand 10 > 6, so (as FSLeafQueue.updateStarvedAppsMinshare
    is written at the pin) ua is attributed 10 - 6 = 4: four containers of ub (10 -> 6, not below its 4).
    t=4: usage 4 != 6: the clock still runs from 1: starvation 2; ua's unmet 6 > 2 -> attributed 4; ub can give
    6 -> 5 -> 4 and no more (3 < 4): ua reaches 6 = its queue's guarantee."""
    m = mechanism(Config(enabled=True, min_share_timeout=F(2)))
    ex = min_share_case()
    steps = execute(m, ex)
    assert [tasks(s) for s in steps] == [[10], [10], [10, 0], [6, 4], [4, 6]]
    # the quota starvation: ua below its queue's guarantee 6 from 1 to 4
    j = Starvation().judge(m, ex, "quota", steps, True)
    assert j.measure == 3 and j.violated
    # without preemption it stays at 0 until the end: 6 - 1 = 5
    assert starvation(mechanism(DEFAULTS), ex, "quota").measure == 5


def test_fair_shares_follow_compute_fair_shares():
    """ComputeFairShares per resource: clamp(w R, min, max), summing to the parent's share.  Pool (12, 6); queues
    p (weight 2, max (4, 6)) and q (guarantee (0, 4)); users x in p, y and z in q, w at the root.
    Memory: p = min(2R, 4), q = R, w = R: 4 + 2R = 12 -> R = 4: p 4, q 4, w 4; in q, y and z 2 each.
    Vcores: p = min(2R, 6), q = max(R, 4), w = R: R = 1.5 -> 3 + 4 + 1.5 = 8.5 > 6; R = 1: 2 + 4 + 1 = 7 > 6;
    R -> 0: 0 + 4 + 0 = 4 < 6; on [0, 4) q is at its min, slope 3: 4 + 3R = 6 -> R = 2/3: p 4/3, q 4, w 2/3."""
    env = parse_environment({
        "resources": ["mem", "vcores"], "servers": [{"name": "n", "capacity": [12, 6]}],
        "queues": [{"name": "p", "weight": 2, "max": [4, 6]}, {"name": "q", "guarantee": [0, 4]}],
        "users": [{"name": "x", "demand": [1, 1], "queue": "p"}, {"name": "y", "demand": [1, 1], "queue": "q"},
                  {"name": "z", "demand": [1, 1], "queue": "q"}, {"name": "w", "demand": [1, 1]}]})
    users, queues = fair_shares(env)
    assert queues == [[4, F(4, 3)], [4, 4]]
    assert users == [[4, F(4, 3)], [2, 2], [2, 2], [4, F(2, 3)]]
    assert water_fill([1, 1], [0, 0], [F(1), float("inf")], 10) == [1, 9]


def test_usage_below_share_is_the_largest_share():
    """DominantResourceCalculator single type: (1, 5) vs (4, 4) on (10, 10): largest shares 0.5 vs 0.4: not below;
    (3, 3) vs (4, 1): 0.3 < 0.4: below; equal vectors are not below."""
    c = [10, 10]
    assert not below([1, 5], [4, 4], c) and below([3, 3], [4, 1], c) and not below([4, 4], [4, 4], c)


def test_starved_apps_leave_upstreams_heap_in_its_order():
    """FSStarvedApps' comparator: -1 when the first's starvation fits in the second's, else 1.  Offered a (3),
    b (1), c (2) (one resource): sift-up gives [b, a, c]; polls: b; then c moves to the root and a is not
    <= c? (3 fits in 2: no -> 1 > 0) ... c; then a."""
    s = {"a": [3], "b": [1], "c": [2]}
    cmp = lambda x, y: -1 if all(p <= q for p, q in zip(s[x], s[y])) else 1  # noqa: E731
    assert java_heap_order(["a", "b", "c"], cmp) == ["b", "c", "a"]


def upstream_starved_cluster():
    """Paraphrased from upstream's TestFSAppStarvation (apache/hadoop, .../fair/TestFSAppStarvation.java, the
    revision our index returned; hash not resolved): ``setupStarvedCluster`` -- an app in root.default takes the
    whole cluster with 8 containers of <1024 MB, 1 vcore>; then an app asks one such container in queue
    ``minshare`` (minResources <2048 MB, 2 vcores>, minSharePreemptionTimeout 0).  Our model: ONE pool of
    <8192, 8> for upstream's two nodes of <4096, 4>; the arrival at t = 1."""
    return parse_execution({
        "resources": ["mem", "vcores"], "servers": [{"name": "n", "capacity": [8192, 8]}],
        "queues": [{"name": "default"}, {"name": "minshare", "guarantee": [2048, 2]}],
        "users": [{"name": "d", "demand": [1024, 1], "tasks": 8, "queue": "default"}],
        "events": [{"t": 1, "kind": "arrive",
                    "user": {"name": "m", "demand": [1024, 1], "tasks": 1, "queue": "minshare"}}], "end": 2})


def test_upstream_cluster_utilization_threshold():
    """testClusterUtilizationThreshold: with preemption.cluster-utilization-threshold 1.1 no app is ever starved
    (utilisation 1 is not above 1.1): m waits.  With upstream's test setting 0 (testPreemptionEnabled) the
    minshare queue is starved at once: desired Resources.min(<2048, 2>, demand <1024, 1>) = <1024, 1>, usage 0,
    timeout 0 (its clock restarted at t = 0, when it had no app); m's own fair-share starvation is none (timeout
    infinite here); m is attributed <1024, 1> (not greater than the remainder) -> one container, taken from d
    (fair share <4096, 4>: default and minshare split <8192, 8> evenly, the guarantee is below half), 8 -> 7."""
    off = mechanism(Config(enabled=True, min_share_timeout=F(0), utilization_threshold=F(11, 10)))
    assert [tasks(s) for s in execute(off, upstream_starved_cluster())] == [[8], [8, 0]]
    on = mechanism(Config(enabled=True, min_share_timeout=F(0), utilization_threshold=F(0)))
    steps = execute(on, upstream_starved_cluster())
    assert [tasks(s) for s in steps] == [[8], [7, 1]]
    assert steps[-1].alloc.info["preempted"] == ((1, "m", ("d",)),)
