"""What a property or a mechanism READS (``reads=``: docs/properties.md, "What a property reads"): the search
draws queues' declared guarantees and maxes, and states, only when one of them declares it -- no hidden
hint.  A user's property that reads guarantees finds its violation on hdrf-tasks."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings

import mechverify
from mechanisms import get
from mechanisms.core.registry import Setting
from mechverify.model import InstanceError
from tests.helpers import ROOT, run_cli
from verifier.engines.strategies import environments
from verifier.engines.strategies.decode import decode_environment, env_bytes, max_shape
from verifier.engines.strategies.domain import domain_for, narrow
from verifier.properties import PROPERTIES, get_property

HALF = os.path.join(ROOT, "examples", "guarantee_properties.py")


def test_the_declared_facets():
    assert PROPERTIES["quota"].reads == ("guarantee",) and PROPERTIES["limit"].reads == ("max",)
    assert PROPERTIES["order"].reads == ("state", "guarantee") and PROPERTIES["share"].reads == ("state", "guarantee")
    assert PROPERTIES["hsi"].reads == () and PROPERTIES["ef"].reads == ()
    assert get_property(f"{HALF}:half_guarantee").reads == ("guarantee",)


def test_narrow_draws_what_the_property_reads_where_the_setting_allows():
    tree = domain_for(get("hdrf-tasks").setting)
    assert not tree.guarantees and not tree.maxes
    assert narrow(tree, PROPERTIES["quota"], "whole-task")[0].guarantees
    assert narrow(tree, PROPERTIES["limit"], "whole-task")[0].maxes
    assert not narrow(tree, PROPERTIES["ef"], "whole-task")[0].guarantees  # other cells draw as before
    assert not narrow(tree, PROPERTIES["order"], "strict-weak")[0].state  # hdrf-tasks exposes no order
    flat = domain_for(get("drf").setting)
    assert not narrow(flat, PROPERTIES["quota"], "tree")[0].guarantees  # no tree, nothing to declare on
    # a mechanism's setting that reads them: drawn for every property searched on it
    dom = domain_for(Setting(hierarchy=True, reads=("guarantee", "max")))
    assert dom.guarantees and dom.maxes and dom.describe()["features"]["guarantees"]


def test_drawn_bytes_carry_guarantees_and_maxes():
    dom = narrow(narrow(domain_for(Setting(hierarchy=True)), PROPERTIES["quota"], "tree")[0],
                 PROPERTIES["limit"], "tree")[0]
    J, S, R, K = max_shape(dom)
    env = decode_environment(dom, 2, 1, 1, 0, bytes([255]) * env_bytes(dom))
    # every flag byte is >= 128: every queue declares both
    assert env.n_queues and all(g is not None for g in env.queue_guarantee) and all(m is not None for m in env.queue_max)
    env0 = decode_environment(dom, 2, 1, 1, 0, bytes(env_bytes(dom)))
    assert not env0.has_guarantees and not env0.has_maxes  # all bytes 0: nothing declared
    # a domain that reads nothing lays its bytes out as before: no declared amounts, fewer bytes
    plain = domain_for(Setting(hierarchy=True))
    assert env_bytes(plain) < env_bytes(dom)
    assert not decode_environment(plain, 2, 1, 1, 0, bytes([255]) * env_bytes(plain)).has_guarantees


@settings(max_examples=30, deadline=None)
@given(environments(Setting(hierarchy=True, reads=("guarantee",)), max_users=3))
def test_every_drawn_environment_is_valid(env):
    env.validate()
    assert env.n_queues


def test_a_hidden_state_hint_is_refused_with_the_way_to_declare_it(tmp_path):
    p = tmp_path / "props.py"
    p.write_text("import mechverify\n\n@mechverify.property(hints={'state': True})\ndef p(env, alloc):\n    return -1\n")
    with pytest.raises(InstanceError, match=r"reads=\(\"state\",\)"):
        get_property(f"{p}:p")


def test_reads_names_known_facets_only():
    with pytest.raises(ValueError, match="reads: unknown 'quota'"):
        mechverify.property(reads=("quota",))
    with pytest.raises(ValueError, match="Setting.reads: unknown"):
        Setting(reads=("bogus",))


def test_run_finds_the_user_property_violation_because_it_declares_what_it_reads(tmp_path):
    out = run_cli("run", "hdrf-tasks", "--properties", f"{HALF}:half_guarantee", "--budget", "30", "--seed", "0",
                  "--store", str(tmp_path / "store"))
    assert "half-guarantee/default  no claim      violated" in out.stdout, out.stdout + out.stderr
    # the same function without reads=: trees are drawn without guarantees, the premise never holds
    copy = tmp_path / "noreads.py"
    copy.write_text(open(HALF).read().replace('reads=("guarantee",), ', ""))
    out = run_cli("run", "hdrf-tasks", "--properties", f"{copy}:half_guarantee", "--budget", "4", "--seed", "0",
                  "--store", str(tmp_path / "store2"))
    assert "violated" not in out.stdout and "no candidate evaluated" in out.stdout, out.stdout + out.stderr
