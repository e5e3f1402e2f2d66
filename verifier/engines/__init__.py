"""Engines that PROPOSE violations; only a property's exact ``recheck`` decides.

* ``strategies`` -- public Hypothesis strategies over environments (inside a mechanism's ``Setting``)
  and deviations (misreports per SP variant, coalitions, leaves);
* ``search``     -- Hypothesis search per (mechanism, property, variant), float evaluation, exact re-check,
  shrinking toward a small certified counterexample;
* ``optimize``   -- multi-start local search over misreports (SP/GSP), seeded from Hypothesis finds.

The minimiser lives in ``verifier.minimize``.
"""
from .search import SearchResult  # noqa: F401  (``verifier.engines.search.search`` runs a search)
