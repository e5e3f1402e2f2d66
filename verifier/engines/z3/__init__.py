"""z3 layer: exact symbolic queries about mechanisms (docs/z3.md).

* :func:`certify` -- bounded certification of a property over a whole symbolic domain of one shape
  (``certified`` / ``violated`` / ``vacuous`` / ``unknown``), with a vacuity control for every
  certification and the exact re-check + store for every counterexample;
* :func:`instance_query` -- per-instance queries: the truthful environment fixed, one user's misreport
  symbolic (SP), or the allocation encoded exactly (EF / SI / PO);
* :data:`SPECS` -- which mechanisms have an encoding, and how.

``run --certify`` calls :func:`certify` (``CertifyResult.to_dict()`` is JSON-ready).
"""
from .certify import SUPPORTED, CertifyResult, certify  # noqa: F401
from .domain import Shape  # noqa: F401
from .instance import InstanceResult, instance_query  # noqa: F401
from .specs import NOT_COVERED, SPECS, get_spec  # noqa: F401

__all__ = ["certify", "CertifyResult", "Shape", "SPECS", "NOT_COVERED", "get_spec", "SUPPORTED", "instance_query", "InstanceResult"]
