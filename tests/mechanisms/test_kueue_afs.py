"""kueue-afs (Kueue admission fair sharing over time, mechanisms.ports.kueue.afs): upstream's unit-test scenarios
that fit the model, re-encoded (paraphrased, cited), and the KEP's own entry-penalty burst derived by hand.

Upstream: kubernetes-sigs/kueue @ ff69552e79ad21652c36caa97038382e55625cf7."""
from __future__ import annotations

from fractions import Fraction as F

import mechanisms
from mechanisms.core.time import execute
from mechanisms.ports.kueue.afs import AdmissionFairSharing, alpha
from mechverify.execution import Event, Execution, UserSpec, run


def _ex(workloads, cap, events=(), end=F(1), queues=("cq1", "cq1/lq-a", "cq1/lq-b")):
    users = tuple(UserSpec(name, (F(c),), tasks=F(1), queue=f"cq1/{lq}") for name, lq, c in workloads)
    return Execution(("cpu",), ("s1",), ((F(cap),),), users, tuple(events), queues=queues, end=end)


def _admitted(steps, k=0):
    st = steps[k]
    return {u for u, row in zip(st.users, st.alloc.x) if row[0]}


def _run(ex, **kw):
    return list(run(ex, AdmissionFairSharing(None, ex, True, **kw), True))


def test_alpha_is_upstreams_calculate_alpha_rate():
    # admission_fair_sharing.go calculateAlphaRate: 1 - 0.5^(sampling/halfLife), 0 for a zero half-life
    assert alpha(1, 1) == F(1, 2) and alpha(2, 1) == F(3, 4) and alpha(0, 1) == 0
    assert alpha(1, 0) == 0  # issue 11134: half-life unset
    assert abs(float(alpha(1, 10)) - (1 - 0.5 ** 0.1)) < 1e-15  # TestScheduleForAFS's config: 1 s / 10 s


# pkg/scheduler/scheduler_afs_test.go, TestScheduleForAFS (usageHalfLifeTime 10 s, usageSamplingInterval 1 s;
# one time unit here = 1 s, so the half-life is 10 units): cq1 with 8 CPU, LocalQueues of weight 1
def test_upstream_admits_workload_from_less_active_localqueue():
    # "admits workload from less active localqueue": lq-a has used 8 CPU, lq-b 2; wl-a1 (8 CPU, created first)
    # and wl-b1 (8 CPU) compete for 8 CPU: wl-b1 is admitted, wl-a1 waits
    ex = _ex([("wl-a1", "lq-a", 8), ("wl-b1", "lq-b", 8)], 8)
    steps = _run(ex, half_life=10, initial_usage={"cq1/lq-a": (8,), "cq1/lq-b": (2,)})
    assert _admitted(steps) == {"wl-b1"}


def test_upstream_admits_one_workload_from_each_localqueue_when_quota_is_limited():
    # "admits one workload from each localqueue when quota is limited": both LocalQueues have used 4 CPU;
    # wl-a1, wl-a2, wl-b1, wl-b2 (4 CPU each, created in that order) on 8 CPU: wl-a1 and wl-b1 are admitted --
    # the entry penalty of wl-a1 puts lq-a behind lq-b for the next head
    ex = _ex([("wl-a1", "lq-a", 4), ("wl-a2", "lq-a", 4), ("wl-b1", "lq-b", 4), ("wl-b2", "lq-b", 4)], 8)
    steps = _run(ex, half_life=10, initial_usage={"cq1/lq-a": (4,), "cq1/lq-b": (4,)})
    assert _admitted(steps) == {"wl-a1", "wl-b1"}
    # without the penalty (Kueue 0.12, issue 5339) the tie stays: creation order admits both of lq-a's
    steps = _run(ex, half_life=10, entry_penalty=False, initial_usage={"cq1/lq-a": (4,), "cq1/lq-b": (4,)})
    assert _admitted(steps) == {"wl-a1", "wl-a2"}


def test_upstream_schedules_normally_when_queues_have_equal_usage():
    # "schedules normally when queues have equal usage": equal usages tie, creation order decides the head
    ex = _ex([("wl-a1", "lq-a", 4), ("wl-b1", "lq-b", 4)], 4)
    steps = _run(ex, half_life=10, initial_usage={"cq1/lq-a": (2,), "cq1/lq-b": (2,)})
    assert _admitted(steps) == {"wl-a1"}


def test_kep_entry_penalty_burst():
    """KEP 4136, "Entry penalty": tenant A's FairSharingStatus is 0.1 CPU, tenant B's 0.05 CPU, the sampling
    interval 5 min (one time unit; half-life 5 min too: A = 1/2).  At t = 0 each submits four 1-CPU workloads
    (A's created first) on 4 CPU.

    Kueue 0.12 (kueue-afs@5339): no usage changes before the next sample, so B (0.05 < 0.1) is the head after
    every admission: b1..b4 all run, A gets nothing -- B bursts everything within one sampling window.
    Pinned: b1 is admitted, B's usage becomes 0.05 + 1/2 = 0.55 > 0.1, so a1 is next (A: 0.1 + 1/2 = 0.6),
    then b2 (0.55 < 0.6; B then 1.05), then a2 (0.6 < 1.05): two each."""
    wl = [(f"a{k}", "lq-a", 1) for k in range(1, 5)] + [(f"b{k}", "lq-b", 1) for k in range(1, 5)]
    ex = _ex(wl, 4)
    seed = {"cq1/lq-a": (F(1, 10),), "cq1/lq-b": (F(1, 20),)}
    old = _run(ex, half_life=1, entry_penalty=False, initial_usage=seed)
    assert _admitted(old) == {"b1", "b2", "b3", "b4"}
    assert [d[0] for d in old[0].alloc.info["decisions"] if d[3]] == ["b1", "b2", "b3", "b4"]
    new = _run(ex, half_life=1, initial_usage=seed)
    assert [d[0] for d in new[0].alloc.info["decisions"] if d[3]] == ["b1", "a1", "b2", "a2"]
    assert new[0].alloc.info["usage"] == {"cq1/lq-a": F(1, 10) + 1, "cq1/lq-b": F(1, 20) + 1}


def test_burst_spread_over_the_window_and_the_next_sample():
    """B submits one workload every 2 minutes of the window (t = 1/10, 3/10, 5/10, 7/10 units) while A's four
    workloads wait; each time one of four workloads of a third LocalQueue (lq-r, first served) leaves just after B's arrival.  Kueue 0.12: every
    freed CPU goes to B until the next sample (t = 1); pinned: after b1's penalty (B: 0.05 + 1/2) A is first."""
    users = [UserSpec(f"r{k}", (F(1),), tasks=F(1), queue="cq1/lq-r") for k in range(4)] + \
            [UserSpec(f"a{k}", (F(1),), tasks=F(1), queue="cq1/lq-a") for k in range(1, 5)]
    events = []
    for k in range(4):
        t = F(k, 5) + F(1, 10)
        events += [Event(t, "arrive", f"b{k + 1}", spec=UserSpec(f"b{k + 1}", (F(1),), tasks=F(1), queue="cq1/lq-b")),
                   Event(t, "leave", f"r{k}")]  # B's workload is pending when the CPU frees
    ex = Execution(("cpu",), ("s1",), ((F(4),),), tuple(users), tuple(events),
                   queues=("cq1", "cq1/lq-a", "cq1/lq-b", "cq1/lq-r"), end=F(1))
    seed = {"cq1/lq-a": (F(1, 10),), "cq1/lq-b": (F(1, 20),), "cq1/lq-r": (F(0),)}
    old = _run(ex, half_life=1, entry_penalty=False, initial_usage=seed)
    assert _admitted(old, -1) >= {"b1", "b2", "b3", "b4"} and not _admitted(old, -1) & {"a1", "a2", "a3", "a4"}
    new = _run(ex, half_life=1, initial_usage=seed)
    got = _admitted(new, -1)
    assert got == {"b1", "a1", "b2", "a2"}  # b1 (B 0.55), a1 (A 0.6), b2 (B 1.05), a2: alternating


def test_kueue_11134_half_life_unset_ties_every_localqueue():
    # issue 11134: usageHalfLifeTime unset (0 s) -> A = 0: no penalty, the reconciler resets usage; lq-a's
    # history does not count and creation order admits lq-a's workloads ahead of lq-b's
    ex = _ex([("wl-a1", "lq-a", 4), ("wl-a2", "lq-a", 4), ("wl-b1", "lq-b", 4)], 8,
             events=[Event(F(3), "leave", "wl-a1")], end=F(5))
    steps = execute(mechanisms.get("kueue-afs@11134"), ex, True)
    assert _admitted(steps) == {"wl-a1", "wl-a2"} and all(v == 0 for v in steps[-1].alloc.info["usage"].values())
    pinned = execute(mechanisms.get("kueue-afs"), ex, True)
    assert _admitted(pinned) == {"wl-a1", "wl-b1"}


def test_usage_decays_with_the_half_life_at_each_sample():
    # localqueue_controller.go reconcileConsumedUsage: C <- (1 - A) C + A x admitted usage, every sampling interval
    ex = _ex([("x", "lq-a", 2), ("y", "lq-b", 1)], 4, events=[Event(F(2), "leave", "x")], end=F(4))
    steps = execute(mechanisms.get("kueue-afs"), ex, True)
    u = [st.alloc.info["usage"]["cq1/lq-a"] for st in steps if st.alloc is not None]
    # penalty A x 2 = 1 at admission; samples at t = 1 (1/2 x 1 + 1/2 x 2 held) and t = 2 (x still held until then)
    assert u == [F(1), F(1, 2) * (F(1, 2) * 1 + F(1, 2) * 2) + F(1, 2) * 2]
