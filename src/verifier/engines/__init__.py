"""Engines that PROPOSE violations; only a property's exact ``recheck`` decides.

* ``strategies`` -- public Hypothesis strategies over environments (inside a mechanism's ``Setting``)
  and deviations (misreports per SP variant, coalitions, leaves);
* ``search``     -- Hypothesis search per (mechanism, property, variant), float evaluation, exact re-check,
  shrinking toward a small certified counterexample;
* ``optimize``   -- multi-start local search over misreports (``Hints.optimizer``), seeded from Hypothesis
  finds;
* ``minimize``   -- greedy delta debugging of a certificate to a 1-minimal one (returns, never stores);
* ``smt``        -- the SMT engine: z3 encodings answered by z3 and cvc5 (``certify``, ``query``).

Engines read a property's ``Hints`` (``verifier.properties.base``), never its name.
"""
from .search import SearchResult  # noqa: F401  (``verifier.engines.search.search`` runs a search)
