"""The property registry: every property and variant has fixtures (the files beside this one)."""
from __future__ import annotations

from mechanisms import get
from verifier.properties import PROPERTIES

from tests.helpers import ghodsi


def test_every_property_and_variant_is_covered():
    """The fixtures below cover exactly these (property, variant) pairs on instances; a new variant must get
    fixtures (the properties over executions: tests/verifier/properties/test_over_executions.py)."""
    assert {p: sorted(o.variants) for p, o in PROPERTIES.items() if o.over == "instance"} == {
        "sp": ["demand", "eligible", "tasks"], "gsp": ["demand"], "ef": ["literal", "placement-aware", "tree", "whole-task"],
        "si": ["bounded", "external", "per-server-split", "tree", "whole-task"], "hsi": ["guarantee"],
        "quota": ["tree", "whole-task"], "limit": ["tree", "whole-task"], "lend": ["tree", "whole-task"], "po": ["fractional", "whole-task"], "bf": ["global", "per-server", "tree", "whole-task"],
        "srf": ["max-min", "tree", "whole-task"], "pm": ["leave"], "single-server-drf": ["totals", "whole-task"],
        "order": ["quota-first", "scale", "strict-weak"], "share": ["borrowing", "monotone", "weight"], "runs": ["any"]}


def test_drf_on_ghodsi_example():
    a = get("drf")(ghodsi(), exact=True)
    assert a.totals() == (3, 2)
