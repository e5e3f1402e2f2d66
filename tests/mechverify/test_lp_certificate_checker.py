"""The independent LP certificate checker (``mechverify.lp_certificate_checker``) on hand-derived LPs, its independence
(no solver, no LP layer imported), and its re-derivation of chi(E) against the project's LP builder."""
from __future__ import annotations

import ast
import copy
import glob
import json
import os
import subprocess
import sys
from fractions import Fraction as F

import pytest

from mechanisms import get
from mechverify import lp_certificate_checker as C
from mechverify.domination import domination_lp
from mechverify.instances import load_environment, parse_environment
from mechverify.lp_certificates import _row_names, pareto_certificate
from mechverify.utility import utility

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOLVERS = ("numpy", "highspy", "swiglpk", "flint", "z3", "cvc5", "scipy")
LP_LAYER = ("lp", "highs", "small_lp", "exact_basis", "farkas", "colgen", "polytope", "domination", "lexmaxmin",
            "lp_certificates")

# one server s1 with cpu 6, one user u1 demanding 2 cpu per task: max y s.t. 2 y <= 6 gives y = 3 (by hand)
ONE = {"resources": ["cpu"], "servers": [{"name": "s1", "capacity": [6]}],
       "users": [{"name": "u1", "demand": [2]}]}


def _cert(kind="pareto-optimal", **extra):
    cert = {"format": C.FORMAT, "claim": {"kind": kind}, "instance": copy.deepcopy(ONE),
            "feasible_set": {"mode": "rdm"}}
    cert.update(extra)
    return cert


def test_imports_no_solver_and_no_lp_layer():
    """The checker's own imports (read from its source) and, in a fresh interpreter, every module loaded
    with it: no solver, no numpy, nothing of the LP layer, not the utility function."""
    tree = ast.parse(open(os.path.join(ROOT, "src", "mechverify", "lp_certificate_checker.py")).read())
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert mods <= {"__future__", "json", "fractions", "typing", "instances", "numbers"}, mods
    code = ("import sys, mechverify.lp_certificate_checker; print(' '.join(sorted(m for m in sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert not [m for m in loaded if m.split(".")[0] in SOLVERS]
    assert not [m for m in loaded if m.startswith("mechverify.") and m.split(".")[1] in LP_LAYER], loaded
    # mechverify/__init__ re-exports the utility function; the checker itself never calls it
    assert "utility" not in {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def test_pareto_one_user_by_hand():
    """y = 3 tasks, multiplier 1/2 on cap[s1,cpu]: column 2 * 1/2 = 1 >= cost 1, dual objective 6 * 1/2 = 3
    = primal 3 = the allocation's 3 tasks."""
    cert = _cert(allocation=[["3"]], primal={"y[u1,s1]": "3"}, dual={"cap[s1,cpu]": "1/2"})
    assert "max total 3" in C.check_certificate(cert)
    low = _cert(allocation=[["3"]], primal={"y[u1,s1]": "3"}, dual={"cap[s1,cpu]": "1/3"})
    with pytest.raises(C.Rejected) as e:  # 2 * 1/3 = 2/3 < 1
        C.check_certificate(low)
    assert e.value.where == "y[u1,s1]" and "2/3 < cost 1" in e.value.why
    high = _cert(allocation=[["3"]], primal={"y[u1,s1]": "3"}, dual={"cap[s1,cpu]": "1"})
    with pytest.raises(C.Rejected) as e:  # feasible dual, but its objective 6 is not the primal's 3
        C.check_certificate(high)
    assert e.value.where == "objective" and "primal 3 != dual 6" in e.value.why
    over = _cert(allocation=[["3"]], primal={"y[u1,s1]": "7/2"}, dual={"cap[s1,cpu]": "1/2"})
    with pytest.raises(C.Rejected) as e:  # 2 * 7/2 = 7 > 6
        C.check_certificate(over)
    assert e.value.where == "cap[s1,cpu]" and "7 > 6" in e.value.why
    short = _cert(allocation=[["2"]], primal={"y[u1,s1]": "3"}, dual={"cap[s1,cpu]": "1/2"})
    with pytest.raises(C.Rejected) as e:  # 2 tasks are dominated by 3: the optimum 3 is not 2
        C.check_certificate(short)
    assert e.value.where == "objective" and "dominated" in e.value.why


def test_dominated_one_user_by_hand():
    """2 tasks of the allocation, 3 in the primal: u1 2->3."""
    cert = _cert("dominated", allocation=[["2"]], primal={"y[u1,s1]": "3"}, dual={"cap[s1,cpu]": "1/2"})
    assert "u1 2->3" in C.check_certificate(cert)
    same = _cert("dominated", allocation=[["3"]], primal={"y[u1,s1]": "3"})
    with pytest.raises(C.Rejected, match="does not dominate"):
        C.check_certificate(same)


def test_farkas_one_user_by_hand():
    """target u1 >= 4 tasks with 2 y <= 6: multipliers 1/2 (cap) and 1 (target): column 2 * 1/2 - 1 = 0 >= 0,
    right-hand side 6 * 1/2 - 4 = -1 < 0."""
    cert = _cert("unreachable", targets={"u1": "4"}, ray={"cap[s1,cpu]": "1/2", "target[u1]": "1"})
    assert "u1 4 tasks" in C.check_certificate(cert)
    reachable = _cert("unreachable", targets={"u1": "3"}, ray={"cap[s1,cpu]": "1/2", "target[u1]": "1"})
    with pytest.raises(C.Rejected) as e:  # 6 * 1/2 - 3 = 0 is not < 0
        C.check_certificate(reachable)
    assert e.value.where == "rhs"
    bent = _cert("unreachable", targets={"u1": "4"}, ray={"cap[s1,cpu]": "1/4", "target[u1]": "1"})
    with pytest.raises(C.Rejected) as e:  # 2 * 1/4 - 1 = -1/2 < 0
        C.check_certificate(bent)
    assert e.value.where == "y[u1,s1]"
    negative = _cert("unreachable", targets={"u1": "4"}, ray={"cap[s1,cpu]": "-1/2", "target[u1]": "1"})
    with pytest.raises(C.Rejected, match="< 0"):
        C.check_certificate(negative)


@pytest.mark.parametrize("edit, field", [
    (lambda c: c.pop("dual"), "dual"),
    (lambda c: c["dual"].update({"cap[s1,cpu]": 0.5}), "dual.cap[s1,cpu]"),  # a float is not exact
    (lambda c: c["claim"].update(kind="optimal"), "claim.kind"),
    (lambda c: c.update(format="other"), "format"),
    (lambda c: c["instance"]["servers"][0].update(capacity=[-6]), "instance"),
    (lambda c: c.update(allocation=[["3", "0"]]), "allocation"),
    (lambda c: c["feasible_set"].update(mode="xdm"), "feasible_set.mode"),
])
def test_malformed(edit, field):
    cert = _cert(allocation=[["3"]], primal={"y[u1,s1]": "3"}, dual={"cap[s1,cpu]": "1/2"})
    edit(cert)
    with pytest.raises(C.Malformed) as e:
        C.check_certificate(cert)
    assert str(e.value).startswith(field)


def test_row_the_instance_does_not_define():
    cert = _cert(allocation=[["3"]], primal={"y[u1,s1]": "3"}, dual={"cap[s1,cpu]": "1/2", "cap[s2,cpu]": "1"})
    with pytest.raises(C.Rejected) as e:
        C.check_certificate(cert)
    assert e.value.where == "cap[s2,cpu]"


EXAMPLES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "examples", "0*.json"))
                  if "fig5" not in p)  # fig5: 120 servers (the same rows, only larger)


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("mode", ["rdm", "tdm"])
def test_rows_agree_with_the_lp_builder(name, mode):
    """chi(E) re-derived by the checker equals polytope.py's rows (renamed), coefficient by coefficient:
    two independent codes of the same definition."""
    env = load_environment(os.path.join(ROOT, "examples", name))
    built = domination_lp(env, [F(0)] * env.n_users, mode)
    poly, _ = built
    names = _row_names(env, poly)
    cols = {c: C.col_name(env.users[j], env.servers[s]) for (j, s), c in poly.var.items()}
    mine = {n: ({cols[c]: v for c, v in poly.lp.rows[i].items()}, "<=", poly.lp.row_upper[i])
            for i, n in names.items()}
    theirs = C.derive_lp(env, mode)
    assert sorted(cols.values()) == sorted(theirs.cols)
    assert mine == theirs.rows


@pytest.mark.parametrize("mech, name", [("tsf", "000-fig1.json"), ("drfh", "001-fig1.json"),
                                        ("psdsf-tdm", "002-fig1-weighted.json"), ("drf", "004-app91-truthful.json")])
def test_utilities_agree_with_the_utility_function(mech, name):
    """The checker's own utility of a mechanism's allocation equals mechverify.utility's."""
    env = load_environment(os.path.join(ROOT, "examples", name))
    alloc = get(mech)(env, exact=True)
    assert C.utilities(env, [list(r) for r in alloc.x]) == [utility(env, alloc, j) for j in range(env.n_users)]


def test_external_bounds_and_placement_by_hand():
    """Two servers, u1 eligible on s1 only with a task bound 2, one external link: the certificate the LP
    layer produces for an allocation is accepted, and the rows are the ones written out by hand."""
    inst = {"resources": ["cpu"], "servers": [{"name": "s1", "capacity": [4]}, {"name": "s2", "capacity": [4]}],
            "external": [{"name": "link", "capacity": 5}],
            "users": [{"name": "u1", "demand": [1], "external_demand": [1], "eligible": ["s1"], "tasks": 2},
                      {"name": "u2", "demand": [1], "external_demand": [1]}]}
    env = parse_environment(inst)
    lp = C.derive_lp(env, "rdm")
    assert lp.cols == ["y[u1,s1]", "y[u2,s1]", "y[u2,s2]"]
    assert lp.rows == {"cap[s1,cpu]": ({"y[u1,s1]": 1, "y[u2,s1]": 1}, "<=", 4),
                       "cap[s2,cpu]": ({"y[u2,s2]": 1}, "<=", 4),
                       "ext[link]": ({"y[u1,s1]": 1, "y[u2,s1]": 1, "y[u2,s2]": 1}, "<=", 5),
                       "bound[u1]": ({"y[u1,s1]": 1}, "<=", 2)}
    # u1 2 tasks, u2 3 on s2: the link (5) is full, so it is Pareto optimal
    from mechverify.allocation import Allocation

    alloc = Allocation(env, ((F(2), F(0)), (F(0), F(3))), "by hand", True)
    cert, why = pareto_certificate(env, alloc, "rdm")
    assert cert is not None, why
    assert cert["claim"]["kind"] == "pareto-optimal" and cert["optimum"] == "5"
    # u1 1 task, u2 3: u1 can get one more within its bound and the link: dominated
    alloc = Allocation(env, ((F(1), F(0)), (F(0), F(3))), "by hand", True)
    cert, why = pareto_certificate(env, alloc, "rdm")
    assert cert["claim"]["kind"] == "dominated" and cert["optimum"] == "5"
    json.dumps(cert)  # JSON as it is


@pytest.mark.parametrize("name", ["tsf", "psdsf-tdm", "drf-er", "per-server-drf"])
def test_random_instances_certificates_accepted(name):
    """On drawn instances of the mechanism's setting (external resources, task bounds, placement, zero
    demands and capacities, tdm), the certificate the LP layer makes is one the checker accepts: the two
    derivations of chi(E) and of the tasks agree (``pareto_certificate`` returns None with the checker's
    reason otherwise)."""
    from hypothesis import HealthCheck, given, settings

    from mechverify.strategies import environments

    mech = get(name)
    seen = set()

    @settings(max_examples=12, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(environments(name))
    def check(env):
        alloc = mech(env, exact=True)
        cert, why = pareto_certificate(env, alloc, mech.setting.feasibility)
        assert cert is not None, why
        seen.add(cert["claim"]["kind"])

    check()
    assert seen


def test_level_certificate_refused_where_the_checker_cannot_follow():
    """A user demanding nothing (bounded by 3 tasks) has N = inf, which the mechanism replaces by its task
    bound (docs/model.md) and the checker does not re-derive: no certificate, and the reason says so; with
    its demand > 0 the level is certified (one server of 4 cpu, demands 1 and 1: tsf's gammas 4 and 4,
    x = 2 and 2, level 2/4 = 1/2)."""
    from mechverify.lp_certificates import level_certificate

    inst = {"resources": ["cpu"], "servers": [{"name": "s1", "capacity": [4]}],
            "users": [{"name": "u1", "demand": [1]}, {"name": "u2", "demand": [0], "tasks": 3}]}
    env = parse_environment(inst)
    cert, why = level_certificate(env, get("tsf")(env, exact=True), "rdm", "monopoly-sum")
    assert cert is None and why.startswith("the normaliser of u2 is infinite")
    inst["users"][1] = {"name": "u2", "demand": [1]}
    env = parse_environment(inst)
    cert, why = level_certificate(env, get("tsf")(env, exact=True), "rdm", "monopoly-sum")
    assert cert is not None, why
    assert cert["level"] == "1/2" and cert["allocation"] == [["2"], ["2"]]


def test_stored_lp_must_be_the_claims():
    """The rows, columns and objective a certificate carries for other tools are compared with the
    re-derived ones (a referee feeding them to another solver gets the LP the claim rests on)."""
    cert = _cert(allocation=[["3"]], primal={"y[u1,s1]": "3"}, dual={"cap[s1,cpu]": "1/2"})
    cert["lp"] = C.lp_of(cert).to_json()
    C.check_certificate(cert)
    for edit, where in [(lambda lp: lp["objective"].update({"y[u1,s1]": "2"}), "lp.objective"),
                        (lambda lp: lp["columns"].append("y[u2,s1]"), "lp.columns"),
                        (lambda lp: lp["rows"][0].update(rhs="7"), "cap[s1,cpu]"),
                        (lambda lp: lp["rows"].pop(), "target[u1]"),
                        (lambda lp: lp.update(sense="min"), "lp.sense")]:
        bad = copy.deepcopy(cert)
        edit(bad["lp"])
        with pytest.raises(C.Rejected) as e:
            C.check_certificate(bad)
        assert e.value.where == where
