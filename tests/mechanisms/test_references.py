"""User mechanisms: references (file, module, entry point), the plain-function contract, the decorator's
setting and claims, and validation of what the function returns (a finding, never a verifier crash)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import pytest

import mechverify
from mechanisms import get
from mechanisms.core.registry import MechanismOutputError, Setting
from mechanisms.core.references import DEFAULT_SETTING, from_function, to_allocation
from mechverify.numbers import InstanceError

from tests.helpers import ROOT

GREEDY = os.path.join(ROOT, "examples", "my_mechanisms.py")


def _env(users=2, servers=1):
    return mechverify.environment({
        "resources": ["cpu", "mem"],
        "servers": [{"name": f"s{s + 1}", "capacity": [4, 4]} for s in range(servers)],
        "users": [{"name": f"u{j + 1}", "demand": [1, 2 if j else 1]} for j in range(users)]})


def test_file_reference_uses_the_decorators_name_setting_and_claims():
    m = get(f"{GREEDY}:greedy")
    assert m.name == "greedy" and m.reference == f"{GREEDY}:greedy" and len(m.source_hash) == 64
    assert {(c.property, c.status) for c in m.claims} == {("sp", "holds"), ("ef", "holds"), ("si", "holds")}
    assert m.setting == DEFAULT_SETTING and m.tolerance == mechverify.declare.DEFAULT_TOLERANCE
    assert get(f"{GREEDY}:drf_float").setting == Setting(placement=False, external=False, bounds=False,
                                                        weights=False, single_server=True, positive_data=True)


def test_greedy_allocates_first_come_first_served():
    # s1 has cpu 4, mem 4; u1 (1,1) takes min(4/1, 4/1) = 4 tasks and leaves nothing for u2
    a = get(f"{GREEDY}:greedy")(_env(), exact=True)
    assert a.x == ((Fraction(4),), (Fraction(0),)) and a.exact


def test_module_reference(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "examples"))
    assert get("my_mechanisms:greedy").name == "greedy"


@pytest.mark.parametrize("ref,needle", [
    ("examples/nothere.py:f", "no file"),
    (f"{GREEDY}:nope", "has no attribute 'nope' (functions there: drf_float, fragile, greedy)"),
    ("no_such_module_xyz:f", "No module named 'no_such_module_xyz'"),
    ("greedy-typo", "unknown name"),
    (f"{GREEDY}:1x", "expected package.module:function"),
])
def test_bad_references_are_one_line(ref, needle):
    with pytest.raises(InstanceError) as exc:
        get(ref)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_undecorated_function_gets_the_documented_defaults():
    def split(env):
        """Equal split."""
        return [[Fraction(1, env.n_users)] * env.n_servers for _ in env.users]

    m = from_function(split)
    assert m.name == "split" and m.setting == DEFAULT_SETTING and m.claims == () and m.title == "Equal split."


def test_decorator_rejects_unknown_setting_keywords_and_bad_claims():
    @mechverify.mechanism(name="x", single_servr=True)
    def f(env):
        return [[0]]

    with pytest.raises(InstanceError, match="unknown setting keyword 'single_servr'"):
        from_function(f)

    @mechverify.mechanism(name="y", claims={"sp": "maybe"})
    def g(env):
        return [[0]]

    with pytest.raises(InstanceError, match=r"claims\['sp'\]: expected 'holds' or 'fails'"):
        from_function(g)
    with pytest.raises(ValueError, match="name"):
        mechverify.mechanism(name="a:b")


def test_a_name_of_a_registered_mechanism_is_refused():
    @mechverify.mechanism(name="drf")
    def f(env):
        return [[0]]

    with pytest.raises(InstanceError, match="is a registered mechanism"):
        from_function(f)


@pytest.mark.parametrize("out,needle", [
    ([[1]], "expected a task matrix x[user][server] with 2 rows"),
    ([[1], [1, 2]], "x[u2]: expected 1 entries"),
    ([[1], [-1]], "x[u2][s1] = -1 is negative"),
    ([[1], [float("nan")]], "is not finite"),
    ([[1], ["3"]], "is not a number"),
    ([[True], [1]], "is not a number"),
    (None, "got NoneType"),
])
def test_invalid_output_is_named(out, needle):
    with pytest.raises(MechanismOutputError) as exc:
        to_allocation(_env(), out, "mine")
    assert needle in str(exc.value)


def test_float_output_is_taken_exactly_as_written():
    a = to_allocation(_env(), [[0.1], [2]], "mine", exact=True)
    assert a.x[0][0] == Fraction(0.1) != Fraction(1, 10)  # the binary value, not the decimal one
    assert a.info["as_written"] == "float"
    import numpy as np

    b = to_allocation(_env(), np.array([[1.5], [0.25]]), "mine", exact=True)
    assert b.x == ((Fraction(3, 2),), (Fraction(1, 4),))


def test_infeasible_beyond_the_tolerance_is_a_finding_within_it_is_not():
    env = _env()  # s1: cpu 4, mem 4; u1 (1,1), u2 (1,2)

    def over(eps):
        def f(env):
            return [[2.0], [1.0 + eps]]  # cpu 3 + eps, mem 2 + 2 (1 + eps) = 4 + 2 eps
        return from_function(f, name=f"over{eps}")

    assert over(1e-13)(env, exact=True).x[1][0] == Fraction(1.0 + 1e-13)  # within 1e-9 relative: accepted
    with pytest.raises(MechanismOutputError, match="RDM: s1.mem uses"):
        over(1e-6)(env, exact=True)


def test_entry_point_registration(tmp_path):
    """An installed package (a dist-info with entry_points.txt on sys.path) adds a mechanism: it appears in
    ``list`` and is usable by its entry-point name."""
    (tmp_path / "acme_mechs.py").write_text(textwrap.dedent('''
        def half(env):
            """Everyone gets half a task on every server."""
            return [[0.5] * env.n_servers for _ in env.users]
    '''))
    dist = tmp_path / "acme_mechs-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-mechs\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[mechverify.mechanisms]\nacme-half = acme_mechs:half\n")
    envp = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    out = subprocess.run([sys.executable, "-m", "verifier", "list"], cwd=ROOT, env=envp, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "acme-half" in out.stdout
    out = subprocess.run([sys.executable, "-m", "verifier", "allocate", "acme-half",
                          os.path.join(ROOT, "examples", "001-fig1.json")], cwd=ROOT, env=envp,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "u1" in out.stdout and "0.5" in out.stdout


def test_a_negative_float_is_judged_within_the_tolerance():
    env = _env()  # s1: cpu 4, mem 4; u1 (1,1), u2 (1,2)

    def mech(value):
        def f(env):
            return [[1.0], [value]]
        return from_function(f, name=f"neg{value}")

    assert mech(-1e-17)(env, exact=True).x[1][0] == Fraction(-1e-17)  # float noise: within 1e-9 of 0
    with pytest.raises(MechanismOutputError, match=r"x\[u2,s1\] = -1/2 < 0"):
        mech(-0.5)(env, exact=True)
