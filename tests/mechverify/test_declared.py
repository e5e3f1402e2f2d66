"""Declared amounts of a queue tree (docs/model.md, "Declared amounts"): ``max`` beside ``guarantee`` in the
parser, the schema, the serialisation (absent: as before), the editing helpers, the errors (exit 2) and the
warnings of ``mechverify.declared`` (inconsistent declarations under the subtree reading)."""
from __future__ import annotations

import json
from fractions import Fraction as F

import pytest
from jsonschema import Draft202012Validator

from mechverify.declared import declaration_warnings, guarantees_nest, held
from mechverify.instances import instance_schema, parse_environment_text
from mechverify.model import InstanceError


def inst(queues, users=None, capacity=(10, 20)) -> dict:
    return {"resources": ["cpu", "mem"], "servers": [{"name": "s1", "capacity": list(capacity)}],
            "queues": queues,
            "users": users or [{"name": "a", "demand": [1, 1], "queue": queues[-1]["name"]}]}


def parse(d):
    return parse_environment_text(json.dumps(d), "inst.json")


def test_max_is_parsed_serialised_and_validated_by_the_schema():
    d = inst([{"name": "eng", "guarantee": [4, 8], "max": [6, "15/2"]}, {"name": "eng/dev"}])
    env = parse(d)
    assert env.queue_max == ((F(6), F(15, 2)), None) and env.has_maxes and env.has_guarantees
    out = env.to_dict()
    assert out["queues"][0]["max"] == ["6", "15/2"] and "max" not in out["queues"][1]
    assert parse(out).queue_max == env.queue_max  # round trip
    assert not list(Draft202012Validator(instance_schema()).iter_errors(d))


def test_an_instance_without_max_serialises_as_before():
    d = inst([{"name": "eng", "guarantee": [4, 8]}])
    env = parse(d)
    assert env.queue_max == (None,) and not env.has_maxes
    assert all("max" not in q for q in env.to_dict()["queues"])  # stored ids (hashes of to_dict) do not change


@pytest.mark.parametrize("value, message", [
    ([-1, 2], "queues[0].max"),
    ([1], "queues[0].max"),
    ("lots", "queues[0].max"),
])
def test_a_malformed_max_is_an_error_naming_the_field(value, message):
    with pytest.raises(InstanceError) as exc:
        parse(inst([{"name": "eng", "max": value}]))
    assert str(exc.value).startswith(message)


def test_editing_keeps_maxes():
    env = parse(inst([{"name": "eng", "max": [6, 7]}, {"name": "eng/dev", "max": [2, 3]}]))
    assert env.restrict(resources=[1]).queue_max == ((F(7),), (F(3),))  # maxes follow the kept resources
    assert env.without_queue(1).queue_max == ((F(6), F(7)),)  # a removed leaf takes its max along


def test_consistent_declarations_raise_no_warning():
    env = parse(inst([{"name": "eng", "guarantee": [6, 10], "max": [8, 20]},
                      {"name": "eng/dev", "guarantee": [3, 5], "max": [8, 12]},
                      {"name": "eng/ops", "guarantee": [3, 5]}, {"name": "research", "guarantee": [4, 10]}]))
    # top: eng 6 + research 4 = 10 <= 10 cpu, 10 + 10 = 20 <= 20 mem; below eng: 3 + 3 <= 6, 5 + 5 <= 10
    assert declaration_warnings(env) == () and guarantees_nest(env) is None


def test_each_inconsistency_is_one_warning_naming_its_field():
    env = parse(inst([{"name": "eng", "guarantee": [8, 4], "max": [7, 20]},
                      {"name": "eng/dev", "guarantee": [9, 1], "max": [2, 30]},
                      {"name": "eng/ops", "guarantee": [1, 1]},
                      {"name": "research", "guarantee": [3, 1]}]))
    got = [(w.field, w.message, w.guarantees) for w in declaration_warnings(env)]
    assert got == [
        ("queues[0].guarantee", "eng's guarantee (cpu 8) is above its own max (cpu 7)", True),
        ("queues[1].guarantee", "eng/dev's guarantee (cpu 9) is above its own max (cpu 2)", True),
        ("queues[1].guarantee", "eng/dev's guarantee (cpu 9) is above the max of its ancestor eng (cpu 7)", True),
        ("queues[1].guarantee", "eng/dev's guarantee (cpu 9) is above its ancestor eng's (cpu 8)", True),
        ("queues[1].max", "eng/dev's max (mem 30) is above its ancestor eng's (mem 20): never reachable", False),
        # top: eng 8 + research 3 = 11 > 10 cpu (mem 4 + 1 = 5 <= 20)
        ("queues", "the guarantees of eng, research add up to cpu 11, above the pooled capacity (cpu 10)", True),
        # below eng: dev 9 + ops 1 = 10 > 8 cpu (mem 1 + 1 = 2 <= 4)
        ("queues[0].guarantee", "the guarantees below eng (eng/dev, eng/ops) add up to cpu 10, above its own (cpu 8)",
         True),
    ]
    assert guarantees_nest(env).startswith("queues[0].guarantee: eng's guarantee (cpu 8) is above its own max")


def test_a_max_alone_never_breaks_the_guarantees_premise():
    env = parse(inst([{"name": "eng", "max": [2, 2]}, {"name": "eng/dev", "max": [3, 3]}]))
    assert [w.field for w in declaration_warnings(env)] == ["queues[1].max"]
    assert guarantees_nest(env) is None


def test_held_sums_the_subtree_pooled():
    env = parse({"resources": ["cpu", "mem"], "servers": [{"capacity": [10, 20]}, {"capacity": [10, 20]}],
                 "queues": [{"name": "eng"}, {"name": "eng/dev"}],
                 "users": [{"name": "a", "demand": [1, 2], "queue": "eng/dev"},
                           {"name": "b", "demand": [2, 1], "queue": "eng"}, {"name": "c", "demand": [1, 1]}]})
    x = ((F(1), F(2)), (F(1, 2), F(0)), (F(5), F(5)))
    # eng: a 3 tasks x (1, 2) + b 1/2 task x (2, 1) = (4, 13/2); eng/dev: a alone (3, 6)
    assert held(env, x, [0, 1]) == (F(4), F(13, 2)) and held(env, x, [0]) == (F(3), F(6))
