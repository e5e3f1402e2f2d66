"""The SMT engine: exact symbolic queries about mechanisms, encoded with z3 and answered by z3 and cvc5
(docs/z3.md).  It PROPOSES and certifies; it never stores -- a violation comes back as a certificate (with
its provenance) in the result.

* :func:`certify` -- bounded certification of a property over a whole symbolic domain of one shape;
* :func:`instance_query` -- exact questions about one instance (SP misreports, EF / SI / PO);
* :func:`get_spec` -- how a mechanism is encoded, from the facet it declares (``Mechanism.z3``);
  :func:`encoded` -- every mechanism that has one;
* a property's goal: its ``z3`` facet names a module of ``goals/`` (:func:`goal_of`).

Both return a :class:`verifier.results.Result` (verdict certified | violated | vacuous | unknown).
"""
from .certify import SUPPORTED, certify  # noqa: F401
from .domain import Shape  # noqa: F401
from .instance import instance_query  # noqa: F401
from .goals import Z3Goal, goal_of  # noqa: F401
from .specs import encoded, get_spec, not_covered  # noqa: F401

__all__ = ["certify", "Shape", "encoded", "get_spec", "not_covered", "SUPPORTED", "instance_query", "Z3Goal",
           "goal_of"]
