"""The one way to declare a port (src/mechanisms/ports/declare.py) and the one way to build an order facet
(``order_facet``, src/mechanisms/core/order.py): every production port is declared, the declarations generate
the same registrations as the hand-written ones they replaced (names, order, titles, sources, notes), and a
record that cites what it does not declare is refused."""
from __future__ import annotations

import hashlib
from fractions import Fraction as F

import pytest

import mechanisms
from mechanisms.core.mechanism import REGISTERED
from mechanisms.core.order import STATES_KEPT, order_facet
from mechanisms.core.registry import Setting
from mechanisms.core.z3spec import Z3Spec
from mechanisms.ports import armada, mesos
from mechanisms.ports.declare import Fix, Pin, Port, Variant
from mechanisms.ports.kueue import port as kueue
from mechanisms.ports.slurm import port as slurm
from mechanisms.ports.volcano import port as volcano
from mechanisms.ports.yarn import capacity, drf
from mechverify.allocation import Allocation
from mechverify.instances import parse_environment

PORTS = (mesos.PORT, volcano.PORT, kueue.PORT, drf.PORT, capacity.PORT, armada.PORT, slurm.CLASSIC, slurm.FAIRTREE)

#: every registered mechanism in registration order, as registered before the ports were declared
REGISTRATION_ORDER = [
    "drf", "per-server-drf", "drfh", "c-drfh", "drfh-lp7", "tsf", "cdrf", "drfh-first-fit", "drfh-best-fit", "tsf-er",
    "tsf-er-maxmin", "drf-er", "drf-eq", "drf-cpu", "drf-mem", "tsf-eq", "tsf-cpu", "tsf-mem", "cru", "mnw",
    "tsf-er-online", "lmm-mms", "lmm-mms-linear", "psdsf-distributed", "psdsf-rdm", "psdsf-tdm", "mesos-drf",
    "naive-hdrf", "naive-hdrf-fractional", "hdrf", "hdrf-tasks", "volcano-hdrf", "kueue-drs", "kueue-drs@6577",
    "kueue-drs@10126", "yarn-drf", "yarn-drf@YARN-11482", "yarn-capacity", "yarn-capacity@YARN-11745", "armada-drf"]

#: SHA-256 (first 16 hex digits) of ``title \0 source \0 notes`` of every port version as hand-registered before
#: the declarations: a change here is a change of what ``list`` prints (update the digest when that is meant)
PRINTED = {  # updated when the notes learnt what each port does with declared guarantees and maxes
    "mesos-drf": "771ccc1d202c3b6a", "volcano-hdrf": "5dc783f775d185c6", "kueue-drs": "e358f9193cf3253f",
    "kueue-drs@6577": "9fd012b3bbbeecb6", "kueue-drs@10126": "69d9c4dff6286b0c", "yarn-drf": "e6ad82ecd3d9d1dc",
    "yarn-drf@YARN-11482": "df7881055a38d137", "yarn-capacity": "0624c2056ce7485e",
    "yarn-capacity@YARN-11745": "1ec954cd3d6935b6", "armada-drf": "c4297de04e988482",
    "slurm-classic": "7b23154aa3ef3457", "slurm-fairtree": "78156414019740d5"}


def digest(m) -> str:
    return hashlib.sha256("\0".join((m.title, m.source, m.notes)).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------- the production ports
def test_every_port_is_declared_and_registers_what_it_declares():
    names = [n for p in PORTS for n in p.names]
    assert sorted(names) == sorted(PRINTED)
    for port in PORTS:
        for m in port.versions():
            reg = REGISTERED[m.name]
            assert (reg.title, reg.source, reg.notes, reg.setting, reg.z3, reg.claims) == \
                (m.title, m.source, m.notes, m.setting, m.z3, m.claims)
            assert (reg.order is None) == (m.order is None) and reg.setting.ordered
            assert (reg.order.request is None) == (m.order.request is None)
            assert reg.func.keywords["name"] == m.name  # the allocation is named after its registration
    assert list(REGISTERED)[:len(REGISTRATION_ORDER)] == REGISTRATION_ORDER


def test_the_declarations_print_what_the_registrations_printed():
    assert {n: digest(REGISTERED[n]) for n in PRINTED} == PRINTED


def test_a_variants_name_is_the_port_and_its_issue():
    assert kueue.PORT.names == ("kueue-drs", "kueue-drs@6577", "kueue-drs@10126")
    assert drf.PORT.names == ("yarn-drf", "yarn-drf@YARN-11482")
    assert capacity.PORT.names == ("yarn-capacity", "yarn-capacity@YARN-11745")
    assert kueue.PORT.switches("kueue-drs@6577") == {"integer": True, "borrow_check": None}
    assert kueue.PORT.switches("kueue-drs") == {}
    with pytest.raises(KeyError, match="not a version of kueue-drs"):
        kueue.PORT.switches("kueue-drs@4961")
    v6577 = kueue.PORT.variants[0]
    assert v6577.read_at == kueue.PRE_6617 and [f.pr for f in v6577.fixed_by] == ["6617", "6925"]
    assert all(p.commit == kueue.COMMIT for p in kueue.PORT.pins)


def test_a_variant_allocates_under_its_own_name():
    env = parse_environment({"resources": ["cpu", "mem"], "servers": [{"name": "n", "capacity": [4, 4]}],
                             "queues": [{"name": "a"}, {"name": "b"}],
                             "users": [{"name": "x", "demand": [1, 2], "tasks": 2, "queue": "a"},
                                       {"name": "y", "demand": [2, 1], "tasks": 2, "queue": "b"}]})
    for port in (kueue.PORT, drf.PORT, capacity.PORT):
        for name in port.names:
            assert mechanisms.allocate(name, env).mechanism == name


# ---------------------------------------------------------------------- the declaration refuses what it cannot back
def _toy_allocate(env, exact=False, *, name="toy", flip=False):
    return Allocation(env, tuple((F(1 if flip else 0),) for _ in env.users), name, True)


def _toy_order(*, flip=False):
    return order_facet(lambda state: -1 if flip else 1, lambda s, i, j: s * ((i > j) - (i < j)), lambda s, j: j)


def _variant(**kw):
    fields = dict(issue="42", switches={"flip": True}, fixed_by=(Fix("43", "f" * 40),), read_at="e" * 40,
                  title="toy before 43", source=f"org/toy issue 42, fixed by PR 43 ({'f' * 40}) @ {'e' * 40}",
                  notes="")
    fields.update(kw)
    return Variant(**fields)


def _port(**kw):
    fields = dict(name="toy", title="toy", pins=(Pin("org/toy", "d" * 40, "src/toy.go"),),
                  source=f"org/toy @ {'d' * 40}, src/toy.go", setting=Setting(), notes="", z3=Z3Spec.none("toy"),
                  allocate=_toy_allocate, order=_toy_order, variants=(_variant(),))
    fields.update(kw)
    return Port(**fields)


def test_a_toy_port_generates_its_versions():
    port = _port()
    pinned, old = port.versions()
    assert (pinned.name, old.name) == ("toy", "toy@42") and old.source.startswith("org/toy issue 42")
    env = parse_environment({"resources": ["r"], "servers": [{"name": "s", "capacity": [1]}],
                             "users": [{"name": "u", "demand": [1]}, {"name": "v", "demand": [1]}]})
    assert pinned.func(env, True).x == ((0,), (0,)) and old.func(env, True).x == ((1,), (1,))
    assert old.func(env, True).mechanism == "toy@42"
    st = Allocation(env, ((F(0),), (F(0),)), "state", True)
    assert pinned.order.compare(st, 0, 1) < 0 and old.order.compare(st, 0, 1) > 0  # the switch reaches the facet
    assert pinned.setting.ordered and not pinned.setting.quota_first


@pytest.mark.parametrize("bad, match", [
    (dict(source="org/toy @ " + "d" * 40), "does not cite src/toy.go"),
    (dict(pins=(Pin("org/other", "d" * 40, "src/toy.go"),)), "does not cite src/toy.go"),
    (dict(pins=()), "no upstream pin"),
    (dict(variants=(_variant(), _variant())), "two variants share a name"),
    (dict(variants=(_variant(switches={"flop": True}),)), r"\['flop'\] are not keywords"),
])
def test_a_port_that_cites_what_it_does_not_declare_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        _port(**bad)


@pytest.mark.parametrize("bad, match", [
    (dict(source="org/toy, fixed by PR 43"), "does not cite 42"),
    (dict(read_at="c" * 40), "does not cite " + "c" * 40),
    (dict(fixed_by=(Fix("44"),)), "does not cite 44"),
    (dict(switches={}), "no switch selects it"),
])
def test_a_variant_that_cites_what_it_does_not_declare_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        _variant(**bad)


def test_a_pin_is_a_full_commit():
    with pytest.raises(ValueError, match="not 40 hex digits"):
        Pin("org/toy", "d" * 12, "src/toy.go")


# ---------------------------------------------------------------------- order_facet
def test_order_facet_derives_once_per_state_and_keeps_a_few_states():
    env = parse_environment({"resources": ["r"], "servers": [{"name": "s", "capacity": [9]}],
                             "users": [{"name": f"u{k}", "demand": [1]} for k in range(3)]})
    calls = []

    def derive(state):
        calls.append(state)
        return [sum(row) for row in state.x]

    facet = order_facet(derive, lambda t, i, j: (t[i] > t[j]) - (t[i] < t[j]), lambda t, j: t[j],
                        request=lambda t, j: (t[j],))
    assert facet.queue_share is None and facet.request is not None
    states = [Allocation(env, ((F(k),), (F(1),), (F(2),)), "state", True) for k in range(STATES_KEPT + 1)]
    assert facet.order(states[0]) == [0, 1, 2] and facet.share(states[0], 2) == 2 and len(calls) == 1
    assert facet.order(states[3]) == [1, 2, 0] and facet.request(states[3], 0) == (3,) and len(calls) == 2
    for st in states[1:STATES_KEPT]:
        facet.share(st, 0)
    assert len(calls) == STATES_KEPT  # states[0] is still kept ...
    facet.share(states[0], 0)
    assert len(calls) == STATES_KEPT
    facet.share(states[STATES_KEPT], 0)  # one state more: the least recently used (states[1]) is dropped
    assert len(calls) == STATES_KEPT + 1
    facet.share(states[0], 0)
    assert len(calls) == STATES_KEPT + 1  # used recently: kept
    facet.share(states[1], 0)
    assert len(calls) == STATES_KEPT + 2  # dropped: derived again
