"""Bounded certificates over traces (``verifier.engines.smt.traces``; docs/z3.md, "Bounded certificates over
traces"): per-round max-min is certified online-SP on every trace of 2 users x 1 and x 2 rounds with one misreport
step (z3 and cvc5 agree, the vacuity control is SAT); a planted mutant -- a proportional share of the REPORTED
demands, which rewards over-reporting -- is refuted with a counterexample the exact replay of its trace confirms;
the export of a certificate replays."""
from __future__ import annotations

import json
from fractions import Fraction

import pytest
import z3

from mechanisms import get
from mechanisms.core.mechanism import REGISTERED
from mechanisms.core.registry import Setting, register
from mechanisms.core.time import TimeSpec, execute, one_shot
from mechanisms.paper.dynamic.common import check_pool, one_server
from mechverify.execution import cumulative
from verifier.engines.smt import traces
from verifier.engines.smt.traces import ROUND_RULES, TraceShape, certify_trace, round_rule
from verifier.properties import get_property
from verifier.results import Verdict

MUTANT = "test-round-proportional"
RULE = "test-reported-proportional"


class _Proportional:
    """The planted bug: at every round each user gets C x (its REPORTED per-round demand) / (the sum of the
    reports), at most what it reports; held between rounds."""

    def __init__(self, mech, ex, exact):
        self.held = {}

    def step(self, ctx):
        env = ctx.env
        check_pool(env, MUTANT, one_resource=True, bounds="required")
        C = Fraction(env.capacity[0][0])
        d = [Fraction(env.demand[j][0]) for j in range(env.n_users)]
        n = [Fraction(env.tasks[j]) for j in range(env.n_users)]
        if ctx.index == 0 or (ctx.event is not None and ctx.event.kind == "round"):
            D = [n[j] * d[j] for j in range(env.n_users)]
            S = sum(D, Fraction(0))
            a = [min(D[j], C * D[j] / S) if S else Fraction(0) for j in range(env.n_users)]
            x = [n[j] if d[j] == 0 else a[j] / d[j] for j in range(env.n_users)]
        else:
            x = [min(self.held.get(u, Fraction(0)), n[j]) for j, u in enumerate(env.users)]
        self.held = dict(zip(env.users, x))
        return one_server(env, x, MUTANT, ctx.exact, {})


def _encode_proportional(cons, reports, weights, capacity, tag):
    """The mutant's round in z3, beside it: p_i S = C r_i when S = sum r > 0 (else p_i = 0), a_i = min(r_i, p_i)."""
    S = z3.Sum(list(reports)) if len(reports) > 1 else reports[0]
    out = []
    for i, r in enumerate(reports):
        p, a = z3.Real(f"p_{tag}_{i}"), z3.Real(f"a_{tag}_{i}")
        cons.append(z3.Or(z3.And(S > 0, p * S == capacity * r), z3.And(S == 0, p == 0)))
        cons += [a <= r, a <= p, z3.Or(a >= r, a >= p)]
        out.append(a)
    return out


@pytest.fixture(scope="module")
def mutant():
    round_rule(RULE, "the planted bug: a proportional share of the reported demands")(_encode_proportional)
    begin = lambda m, ex, exact: _Proportional(m, ex, exact)  # noqa: E731
    register(MUTANT, "Planted bug: per-round proportional share of the reported demands",
             Setting(single_server=True, placement=False, external=False, bounds=True, requires_bounds=True,
                     weights=True, min_resources=1),
             time=TimeSpec(begin=begin, rounds=True, model="proportional to the reports, per round",
                           round_z3=RULE))(one_shot(begin, MUTANT))
    yield REGISTERED[MUTANT]
    REGISTERED.pop(MUTANT, None)
    ROUND_RULES.pop(RULE, None)


@pytest.mark.parametrize("rounds", [1, 2])
def test_round_maxmin_is_certified_online_sp_by_both_solvers(rounds):
    res = certify_trace(get("round-maxmin"), "online-sp", shape=TraceShape(2, rounds), timeout=60, jobs=2)
    assert res.verdict is Verdict.CERTIFIED, res.note
    assert res.details["agreement"] == "z3 and cvc5 agree"
    assert res.details["control"].startswith("sat")
    assert res.details["cases"] == rounds  # one case per misreported round
    assert "ONE round" in res.domain["misreport"]
    assert "every rational capacity C > 0" in res.domain["resource"]


def test_the_planted_mutant_is_refuted_and_the_replay_confirms_it(mutant):
    res = certify_trace(mutant, "online-sp", shape=TraceShape(2, 2), timeout=60, jobs=2)
    assert res.verdict is Verdict.VIOLATED, res.note
    cert = res.certificate
    w = cert.witness
    assert w.execution is not None and w.deviation.user == "u0" and len(w.deviation.reports) == 1
    assert cert.gap > 0
    # the exact replay of the trace, by hand: both runs in rationals, the cumulative true utilities
    truth = cumulative(execute(mutant, w.execution, True))["u0"]
    lie = cumulative(execute(mutant, w.execution, True, w.deviation))["u0"]
    assert isinstance(truth, Fraction) and lie > truth and lie - truth == cert.measure
    assert get_property("online-sp").recheck(mutant, w) is not None
    # and the real mechanism on that very trace: no gain
    rm = get("round-maxmin")
    assert cumulative(execute(rm, w.execution, True, w.deviation))["u0"] <= \
        cumulative(execute(rm, w.execution, True))["u0"]


def test_a_mechanism_without_a_round_rule_is_unknown_never_certified():
    res = certify_trace(get("karma"), "online-sp", shape=TraceShape(2, 1), timeout=30, jobs=0, second=False)
    assert res.verdict is Verdict.UNKNOWN and "round rule" in res.note


def test_the_export_round_trips(tmp_path):
    from verifier.cli.main import main

    out = tmp_path / "exp"
    code = main(["certify", "round-maxmin", "online-sp", "--users", "2", "--rounds", "1", "--timeout", "60",
                 "--export", str(out), "--store", str(tmp_path / "store")])
    assert code == 0
    cert = json.loads((out / "certificate.json").read_text())
    assert cert["request"]["trace"] == {"users": 2, "rounds": 1, "misreports": "one"}
    assert cert["lemmas"] == [] and cert["method"] == "bounded trace encoding"
    assert [q["role"] for q in cert["queries"]] == ["query", "control"]
    assert main(["replay", str(out / "certificate.json"), "--jobs", "2"]) == 0
    # an edited query no longer replays
    q = out / cert["queries"][0]["file"]
    q.write_text(q.read_text().replace("(check-sat)", "(assert false)\n(check-sat)"))
    assert main(["replay", str(out / "certificate.json"), "--jobs", "2"]) == 1
