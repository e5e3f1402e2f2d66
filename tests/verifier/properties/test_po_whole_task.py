"""PO's whole-task reading (``po/whole-task``, ``verifier/properties/po.py``): a mechanism with indivisible
tasks is dominated only by another INTEGRAL allocation of its chi(E).  Every number is derived by hand
beside it (one resource unless said otherwise: a task of demand d on a server of capacity c fits
floor(c/d) times)."""
from __future__ import annotations

import json
from fractions import Fraction as F

import pytest

import verifier.properties.po as po_mod
from mechanisms import get
from mechverify import deadline
from verifier.properties import get_property
from verifier.properties.base import Witness

from tests.helpers import env_of, example, fails, fixed, holds, one_cpu, run_cli, verdict

PO = get_property("po")
WHOLE = dict(placement=True, bounds=True, weights=True, divisible=False)  # a whole-task mechanism's setting


def idle_room_env():
    """s1 = 2 cpu, s2 = 1 cpu; u1 <1 cpu> with n1 = 1, u2 <2 cpu>."""
    return env_of(["cpu"], [[2], [1]], [{"demand": [1], "tasks": 1}, {"demand": [2]}])


# ====================================================================== readings per setting
def test_one_reading_per_kind_of_mechanism():
    """Whole-task mechanisms are read as po/whole-task, divisible ones as po/fractional; a question without
    a variant means the mechanism's own reading; a plain PO claim speaks of it."""
    indiv, div = get("mesos-drf"), get("drf")
    assert PO.variant_possible(indiv.setting, "fractional") == \
        "whole tasks: see po/whole-task"
    assert PO.variant_possible(indiv.setting, "whole-task") is None
    assert PO.variant_possible(div.setting, "whole-task") == "divisible tasks"
    assert PO.variant_possible(div.setting, "fractional") is None
    assert PO.variant_of(None, indiv.setting) == "whole-task" and PO.variant_of(None, div.setting) == "fractional"
    assert PO.variant_of(None) == "fractional"  # no mechanism named: the seeds' reading
    assert PO.claim_variants(indiv) == ("whole-task",) and PO.claim_variants(div) == ("fractional",)
    for name in ("mesos-drf", "drfh-first-fit", "drfh-best-fit", "tsf-er-online"):
        assert PO.applicable(get(name), one_cpu(1, [2]), "fractional"), name


# ====================================================================== holds
def test_half_a_task_of_room_is_not_a_defect():
    """The issue's example: 1 user, capacity 1, task demand 2.  Whole tasks: 2 y <= 1 forces y = 0, so the
    mechanism's 0 tasks is the best there is: factor 0/0 read as 1, satisfied.  Fractionally y = 1/2 would
    "dominate" -- that reading is not applicable to a whole-task mechanism (nothing reported)."""
    m, env = get("mesos-drf"), one_cpu(1, [2])
    assert m(env, exact=True).totals() == (0,)
    holds("po", m, env, "whole-task", measure=F(1))
    assert verdict("po", m, env, "whole-task").verdict == "satisfied"
    ev = PO.evaluate(m, env, "fractional", exact=True)
    assert not ev.violated and ev.measure is None and "not applicable" in ev.note
    assert verdict("po", m, env, "fractional").verdict == "not_applicable"
    assert PO.recheck(m, Witness("po", "fractional", m.name, env)) is None


def test_packed_as_well_as_whole_tasks_allow():
    """One cpu of 3, u1 and u2 demand 2: mesos-drf runs u1's task (share 2/3 first: tie, name u1), then
    u2's needs 2 > 1 left: (1, 0).  Integral y with y1 >= 1: 2 y1 + 2 y2 <= 3 gives y1 = 1, y2 = 0: D = 1 =
    sum u, factor 1.  (Fractionally (1, 1/2) would beat it.)"""
    m, env = get("mesos-drf"), one_cpu(3, [2, 2])
    assert m(env, exact=True).totals() == (1, 0)
    holds("po", m, env, "whole-task", measure=F(1))


def test_task_bound_counts_whole_tasks():
    """One cpu of 4, u1 <1 cpu> with n1 = 3/2 runs 1 task: an integral y has y1 <= floor(3/2) = 1, so
    nothing beats it (factor 1); divisible tasks would allow 3/2 (factor 3/2)."""
    env = one_cpu(4, [1], tasks=["3/2"])
    holds("po", fixed("one-whole", [[1]], **WHOLE), env, "whole-task", measure=F(1))
    fails("po", fixed("one", [[1]]), env, "fractional", measure=F(3, 2), gap=F(1, 2),
          utilities={"sum u": F(1), "sum y": F(3, 2)})


# ====================================================================== violated
def test_mesos_drf_leaves_a_task_room_idle():
    """s1 = 2, s2 = 1; u1 <1> with n1 = 1, u2 <2>.  mesos-drf: u1 first (share 0, name), first fitting server
    s1 (1 left); u1 is done (n1 = 1); u2 needs 2: s1 has 1, s2 has 1: nothing.  x = (1, 0).  The integral y
    u1 -> s2, u2 -> s1 gives (1, 1): D = 2 > 1, gap 1, factor 2/1 = 2."""
    m, env = get("mesos-drf"), idle_room_env()
    assert m(env, exact=True).x == ((1, 0), (0, 0))
    cert = fails("po", m, env, "whole-task", measure=F(2), gap=F(1), robust=None,
                 utilities={"sum u": F(1), "sum y": F(2)})
    assert cert.allocations["dominating"].x == ((0, 1), (1, 0))
    assert cert.summary == "a whole-task allocation gives every user at least as much and u2 0->1 tasks"


def test_hand_made_integral_allocation_dominated_by_another():
    """Two servers <4 cpu, 2 mem> and <2 cpu, 4 mem>; u1 <2, 1>, u2 <1, 2>.  The fixed whole-task allocation
    puts u1's 1 task on s2 (2 cpu of 2) and u2's 1 task on s1: (1, 1).  Swapping the servers: u1 on s1 fits
    min(4/2, 2/1) = 2 tasks, u2 on s2 min(2/1, 4/2) = 2: y = (2, 2), D = 4 > 2: gap 2, factor 2.  (Mixing
    on a server does not beat 4: on s1 2 a + b <= 4 and a + 2 b <= 2 give a + b <= 2, likewise s2.)"""
    env = env_of(["cpu", "mem"], [[4, 2], [2, 4]], [{"demand": [2, 1]}, {"demand": [1, 2]}])
    mech = fixed("swapped", [[0, 1], [1, 0]], **WHOLE)
    cert = fails("po", mech, env, "whole-task", measure=F(2), gap=F(2), utilities={"sum u": F(2), "sum y": F(4)})
    assert cert.allocations["dominating"].x == ((2, 0), (0, 2))
    assert cert.summary == ("a whole-task allocation gives every user at least as much and u1 1->2 tasks, "
                            "u2 1->2 tasks")


def test_online_tsf_er_on_seed004_fig2():
    """tsf-er-online on 004 Fig. 2 runs 4 + 4 tasks (tests/simulation/test_tsf_er_online.py).  Whole tasks:
    u1 5 on s2 <10 cpu, 5 mem> (10, 5), u2 5 on s1 <5, 10> (5, 10), link 5 * 5/2 + 5 * 1/2 = 15 <= 15:
    y = (5, 5), D = 10 > 8, factor 5/4 -- the fractional optimum is 10 too, and it is integral here."""
    m = get("tsf-er-online")
    cert = fails("po", m, example("004-fig2.json"), "whole-task", measure=F(5, 4), gap=F(2), robust=None,
                 utilities={"sum u": F(8), "sum y": F(10)})
    assert cert.allocations["dominating"].totals() == (5, 5)


# ====================================================================== nothing on the solver's word
def test_dominating_gains_verifies_exactly():
    """The independent check of a dominating y (idle_room_env, targets (1, 0))."""
    env, t = idle_room_env(), [F(1), F(0)]
    good = ((F(0), F(1)), (F(1), F(0)))
    assert po_mod.dominating_gains(env, good, t, "rdm", True) == [1]
    tampered = {
        "half a task": ((F(0), F(1)), (F(1, 2), F(0))),  # fractional: not a whole-task allocation
        "over capacity": ((F(0), F(1)), (F(0), F(1))),  # s2: 1 + 2 = 3 > 1
        "below a target": ((F(0), F(0)), (F(1), F(0))),  # u1 0 < 1
        "no gain": ((F(1), F(0)), (F(0), F(0))),  # (1, 0): as much, nobody more
        "over the bound": ((F(1), F(1)), (F(0), F(0))),  # u1 2 > n1 = 1
        "floats": ((0.0, 1.0), (1.0, 0.0)),  # not exact numbers
        "shape": ((F(0), F(1)),),
    }
    for why, y in tampered.items():
        assert po_mod.dominating_gains(env, y, t, "rdm", True) is None, why
    assert po_mod.dominating_gains(env, ((F(0), F(1)), (F(1, 2), F(0))), t, "rdm", False) == [1]  # divisible: fine


def test_recheck_rejects_a_tampered_witness(monkeypatch):
    m, env = get("mesos-drf"), idle_room_env()
    w = PO.evaluate(m, env, "whole-task", exact=True).witness
    assert PO.recheck(m, w) is not None
    # the solver's dominating allocation tampered with (s2 over capacity): no certificate
    real = po_mod.dominating_allocation

    def tampered(*args, **kw):
        D, y = real(*args, **kw)
        return D, ((F(0), F(1)), (F(0), F(1)))
    with monkeypatch.context() as mp:
        mp.setattr(po_mod, "dominating_allocation", tampered)
        assert PO.recheck(m, w) is None
    # a witness whose instance was edited: s2 cannot hold u1's task any more -- nothing dominates (1, 0)
    env2 = env_of(["cpu"], [[2], ["1/2"]], [{"demand": [1], "tasks": 1}, {"demand": [2]}])
    assert PO.recheck(m, Witness("po", "whole-task", m.name, env2, None, w.measure)) is None
    # the variant swapped to the fractional reading: not this mechanism's reading
    assert PO.recheck(m, Witness("po", "fractional", m.name, env, None, w.measure)) is None


def test_a_failed_mip_claims_nothing(monkeypatch):
    """A MIP that fails or does not finish: no measure, not violated, a note; check says unknown."""
    m, env = get("mesos-drf"), idle_room_env()
    monkeypatch.setattr(po_mod, "dominating_allocation", lambda *a, **k: (None, None))
    ev = PO.evaluate(m, env, "whole-task", exact=True)
    assert ev.measure is None and not ev.violated and ev.witness is None and "MIP" in ev.note
    assert verdict("po", m, env, "whole-task").verdict == "unknown"
    assert PO.recheck(m, Witness("po", "whole-task", m.name, env)) is None


def test_the_mip_respects_the_deadline():
    m, env = get("mesos-drf"), idle_room_env()
    alloc = m(env, exact=True)
    with deadline.scope(deadline.now() - 1.0):
        with pytest.raises(deadline.BudgetExhausted):
            PO.evaluate(m, env, "whole-task", exact=True, alloc=alloc)


# ====================================================================== the command
def test_run_mesos_drf_reads_po_among_whole_tasks():
    """``run mesos-drf --properties po --budget 10``: po/whole-task searched (a counterexample within the
    budget: idle_room_env's kind), po/fractional not searched, with the reason."""
    args = ("run", "mesos-drf", "--properties", "po", "--budget", "10", "--no-store", "--quiet")
    res = run_cli(*args, "--format", "json")
    rep = json.loads(res.stdout)
    assert [(r["property"], r["variant"]) for r in rep["results"]] == [("po", "whole-task")], res.stdout
    assert rep["results"][0]["verdict"] == "violated"
    assert rep["skipped"] == [{"property": "po", "variant": "fractional",
                               "reason": "whole tasks: see po/whole-task"}]
    text = " ".join(run_cli(*args).stdout.split())  # the table wraps long lines
    assert "po/whole-task" in text and "a whole-task allocation gives every user at least as much" in text
    assert "not searched: po/fractional (whole tasks: see po/whole-task" in text
    assert text.count("po/fractional") == 1


def test_z3_layer_leaves_the_whole_task_reading_alone():
    """Whole-task mechanisms have no z3 encoding; a per-instance z3 PO query of a divisible mechanism under
    the whole-task reading is refused with the reason; z3 certification covers po/fractional only."""
    from verifier.engines.smt import SUPPORTED, instance_query

    assert SUPPORTED["po"] == ("fractional",)
    r = instance_query("tsf-er", example("004-fig2.json"), "po", "whole-task", timeout=10, jobs=1)
    assert r.verdict == "unknown" and r.note == "not applicable: divisible tasks", r.note
    r = instance_query("mesos-drf", idle_room_env(), "po", timeout=10, jobs=1)
    assert r.verdict == "unknown" and r.variant == "whole-task" and "not encoded" in r.note, r.note
