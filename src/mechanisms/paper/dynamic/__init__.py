"""Mechanisms with memory that step through executions (``mechverify.execution``; the time facet
``mechanisms.core.time.TimeSpec``), one module each:

* ``dynamic_drf`` -- Dynamic DRF (Kash, Procaccia, Shah, JAIR 2014): water-filling of dominant shares as users
  arrive, with ``k/n`` of every resource at the ``k``-th arrival; irrevocable.
* ``round_maxmin`` -- per-round (weighted) max-min on one divisible resource: the baseline of Freeman et al.
  (SIGMETRICS 2018), of Karma and of the credit-fairness paper.
* ``karma`` -- Karma (Vuppalapati et al., OSDI 2023), from the authors' code: credits, a guaranteed share,
  shared slices, borrow-from-poorest / give-to-richest per quantum.

``common`` holds what they share (the per-step setting checks and the allocation of one server).  Each module's
docstring gives its citations, its model mapping, every convention chosen, and what could not be verified.
"""
from . import dynamic_drf, round_maxmin, karma  # noqa: F401  (registers them)
