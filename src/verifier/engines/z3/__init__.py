"""z3 layer: exact symbolic queries about mechanisms (docs/z3.md).  It PROPOSES and certifies; it never
stores -- a violation comes back as a certificate (with its provenance) in the result.

* :func:`certify` -- bounded certification of a property over a whole symbolic domain of one shape;
* :func:`instance_query` -- exact questions about one instance (SP misreports, EF / SI / PO);
* :data:`SPECS` -- which mechanisms have an encoding, and how.

Both return a :class:`verifier.results.Result` (verdict certified | violated | vacuous | unknown).
"""
from .certify import SUPPORTED, certify  # noqa: F401
from .domain import Shape  # noqa: F401
from .instance import instance_query  # noqa: F401
from .specs import NOT_COVERED, SPECS, get_spec  # noqa: F401

__all__ = ["certify", "Shape", "SPECS", "NOT_COVERED", "get_spec", "SUPPORTED", "instance_query"]
