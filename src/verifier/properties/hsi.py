"""The hierarchical share guarantee (hsi) of H-DRF -- an instance property on queue trees.

Source: Bhattacharya, Culler, Friedman, Ghodsi, Shenker, Stoica, "Hierarchical Scheduling for Diverse
Datacenter Workloads", SoCC 2013 (the share guarantee H-DRF is designed to keep; Volcano's
``docs/design/hdrf.md`` retells it): every node that demands is guaranteed its weighted fraction of its
parent's guarantee -- its weight over the summed weights of its DEMANDING siblings -- and the root's
guarantee is the whole cluster.  A user's guarantee is therefore the product of those fractions along its
path, ``Environment.entitlement(j, demanding=True)``, and its benchmark is what it runs with that fraction
of every server and external resource (``mechverify.utility.hsi_benchmark``; in whole tasks for a
mechanism with indivisible tasks, like its own bundle).  With one resource pool this is the paper's
"dominant share at least the guarantee".

Violated iff some user that demands runs fewer tasks than its benchmark.  Measure: min over demanding users
of ``u_j / benchmark_j`` (violated iff < 1), as for SI.

How it differs from ``si/tree``: SI's tree reading splits the cluster statically over EVERY declared node
(a queue without users keeps its share idle); hsi redistributes the shares of nodes that demand nothing to
their demanding siblings, so its benchmark is never smaller.  On a flat instance hsi is SI among the users
that demand.  Searched for mechanisms defined on queue trees (``Setting.hierarchy``).
"""
from __future__ import annotations

from typing import Any

from mechverify.utility import hsi_benchmark

from ..exact import integral_of
from .base import Measure
from .ef_si import SharingIncentive

__all__ = ["HierarchicalShareGuarantee"]


class HierarchicalShareGuarantee(SharingIncentive):
    """hsi: every demanding user runs at least what its hierarchical share guarantee gives it."""

    name = "hsi"
    title = "hierarchical share guarantee"
    measure = Measure("the smallest ratio of a user's tasks to those of its hierarchical share guarantee", 1, "<")
    variants = {"guarantee": "the static split of the tree among the nodes that demand, of every server (H-DRF, "
                             "SoCC 2013); whole tasks for a whole-task mechanism"}
    default_variant = "guarantee"
    variant_hints: dict = {}
    z3 = None  # no symbolic goal (the mechanisms it is searched for have no z3 encoding)

    def claim_variants(self, mech):
        """Its one variant."""
        return ("guarantee",)

    def variant_possible(self, setting, variant):
        """Searched for mechanisms defined on queue trees."""
        if not setting.hierarchy:
            return "flat sharing: the guarantee is SI among the users that demand (si)"
        return None

    def applicable(self, mech, env, variant):
        """Every instance of a hierarchical mechanism (flat ones too: hsi is then SI among demanding users)."""
        return None

    def benchmark(self, env, j, mech) -> Any:
        """``u_j`` of the hierarchical share guarantee (module docstring)."""
        return hsi_benchmark(env, j, integral=integral_of(mech))

    def split_text(self, env, j) -> str:
        """The guarantee's share."""
        return f"hierarchical share guarantee ({env.entitlement(j, demanding=True)} of every server)"
