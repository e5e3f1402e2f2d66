"""lend: a policy that declares it lends idle capacity (``Setting.lends``) refuses nobody what sits idle within
its queues' declared maxes -- one more task, or the rest of a whole request for a policy that admits whole
requests (``Setting.whole_requests``: Kueue).  Hand derivations beside each case."""
from __future__ import annotations

from fractions import Fraction as F

import mechverify
from verifier.planning import plan

# one pool of 10 cpu; A guaranteed 4, B guaranteed 4 (max 5); a1 (in A) asks for 8 tasks, b1 (in B) for 6
POOL = {"resources": ["cpu"], "servers": [{"capacity": [10]}],
        "queues": [{"name": "A", "guarantee": [4]}, {"name": "B", "guarantee": [4], "max": [5]}],
        "users": [{"name": "a1", "demand": [1], "queue": "A", "tasks": 8},
                  {"name": "b1", "demand": [1], "queue": "B", "tasks": 6}]}


def _fixed(rows, **setting):
    @mechverify.mechanism(name="fixed-" + "-".join(map(str, rows)), divisible=False, hierarchy=True, lends=True, bounds=True,
                          **setting)
    def fixed(env):
        return [[n] for n in rows]
    return fixed


def _lend(mech, data=POOL):
    (r,) = [r for r in mechverify.check(mech, data, "lend") if r.property == "lend"]
    return r


def test_a_policy_that_keeps_to_the_guarantees_does_not_lend():
    # each queue gets its guarantee: a1 4, b1 4; 2 cpu idle; a1 (bound 8, no max) could take one more: violated
    r = _lend(_fixed([4, 4]))
    assert r.verdict == "violated"
    assert r.certificate.utilities == {"u[a1]": 4, "refused[a1]": 1} and r.certificate.gap == 1
    assert "a1 runs 4 and asks for more; one more task fits in idle capacity" in r.certificate.summary


def test_the_max_bounds_what_is_lent():
    # a1 at 8 (its bound), b1 at 2: 0 cpu idle -> nobody refused
    assert _lend(_fixed([8, 2])).verdict == "satisfied"
    # a1 at 4 with A capped at 4, b1 at 5 = B's max: 1 cpu idle, but every max binds -> satisfied
    capped = dict(POOL, queues=[{"name": "A", "guarantee": [4], "max": [4]}, POOL["queues"][1]])
    assert _lend(_fixed([4, 5]), capped).verdict == "satisfied"
    # b1 at 4 (B's max 5 leaves room for one): 2 cpu idle -> b1 refused one task
    r = _lend(_fixed([4, 4]), capped)
    assert r.verdict == "violated" and r.certificate.utilities == {"u[b1]": 4, "refused[b1]": 1}
    assert "within the max of B" in r.certificate.summary


def test_whole_requests_are_refused_only_when_the_whole_rest_fits():
    # Kueue's answer on POOL: a1's workload of 8 admitted whole, b1's of 6 does not fit in the 2 cpu left
    assert mechverify.allocate("kueue-drs", POOL).x == ((8,), (0,))
    assert _lend("kueue-drs").verdict == "satisfied"
    assert _lend(_fixed([8, 0], whole_requests=True)).verdict == "satisfied"
    # the same allocation from a task-by-task policy refuses b1 one task of the 2 idle cpu
    r = _lend(_fixed([8, 0]))
    assert r.verdict == "violated" and r.certificate.utilities == {"u[b1]": 0, "refused[b1]": 1}


def test_divisible_refusal_is_the_amount_that_fits():
    @mechverify.mechanism(name="half-idle", hierarchy=True, lends=True, bounds=True)
    def half_idle(env):
        return [[F(5, 2)], [F(5, 2)]]  # 5 of 10 cpu idle; a1 bound 8: refused min(5 idle, 8 - 5/2) = 5
    r = _lend(half_idle)
    assert r.verdict == "violated" and r.certificate.utilities == {"u[a1]": F(5, 2), "refused[a1]": 5}


def test_searched_only_for_settings_that_lend():
    planned = plan([mechverify.mechanism_of("hdrf-tasks"), mechverify.mechanism_of("kueue-drs")], ["lend"])
    assert [(c.mechanism.name, c.variant) for c in planned.cells] == [("kueue-drs", "whole-task")]
    why = {(s.mechanism.name, s.variant): s.reason for s in planned.skipped}
    assert why[("hdrf-tasks", "whole-task")].startswith("the policy does not declare that it lends idle capacity")


def test_a_program_over_the_exec_protocol_declares_that_it_lends(tmp_path):
    import sys

    prog = tmp_path / "lender.py"
    prog.write_text(
        "import json, sys\n"
        "print(json.dumps({'protocol': 'mechverify-exec', 'version': 1, 'name': 'lender', 'provides': ['allocate'],\n"
        "    'setting': {'hierarchy': True, 'bounds': True, 'divisible': False, 'lends': True,\n"
        "                'reads': ['guarantee', 'max']}}), flush=True)\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    inst = req['instance']\n"
        "    print(json.dumps({'id': req['id'], 'tasks': [[0] * len(inst['servers']) for _ in inst['users']]}),"
        " flush=True)\n")
    mech = mechverify.mechanism_of(f"exec:{sys.executable} {prog}")
    assert mech.setting.lends and mech.setting.reads == ("guarantee", "max")
    r = _lend(mech)  # it runs nothing: a1 (first) is refused one task of the 10 idle cpu
    assert r.verdict == "violated" and r.certificate.utilities == {"u[a1]": 0, "refused[a1]": 1}
