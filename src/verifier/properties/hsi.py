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

Violated iff some user that demands runs fewer tasks than its benchmark, or -- on one resource pool -- some
QUEUE that demands holds less than its guarantee while a user below it still asks for more: the dominant
share ``S_q`` of the queue's summed allocation (pooled capacities) is below ``g_q =
Environment.queue_entitlement(q, demanding=True)`` and some user below ``q`` is not at its task bound (whole
tasks: one more task of such a user fits within ``g_q``: ``S_q`` of the sum with it is still ``<= g_q``).
Without the queue check a queue of many small jobs could be starved while each job's own guarantee rounds
to no whole task (Volcano issue 1661: twelve one-task jobs guaranteed half a task each, their queue half the
cluster).  The plain sum overstates a queue's share next to H-DRF's rescaled one, so a queue H-DRF serves to
its guarantee passes.  On several servers the queue check is not made (what fits within a share depends on
packing); the users' checks are.  Measure: min over demanding users of ``u_j / benchmark_j`` and over
checked queues of ``S_q / g_q`` (violated iff < 1).

How it differs from ``si/tree``: SI's tree reading splits the cluster statically over EVERY declared node
(a queue without users keeps its share idle); hsi redistributes the shares of nodes that demand nothing to
their demanding siblings, so its benchmark is never smaller.  On a flat instance hsi is SI among the users
that demand.  Searched for mechanisms defined on queue trees (``Setting.hierarchy``).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

from mechverify.numbers import FLOAT_REL, fmt_exact
from mechverify.utility import hsi_benchmark

from ..exact import exact_run, integral_of
from .base import Certificate, Evaluation, Measure, Witness
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

    benchmark_label = "hierarchical share guarantee"

    def benchmark(self, env, j, mech) -> Any:
        """``u_j`` of the hierarchical share guarantee (module docstring)."""
        return hsi_benchmark(env, j, integral=integral_of(mech))

    def split_text(self, env, j, mech=None) -> str:
        """The guarantee's share."""
        return f"hierarchical share guarantee ({env.entitlement(j, True, whole=integral_of(mech))} of every server)"

    # ------------------------------------------------------------------ the queues' guarantees
    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The users' guarantees (as SI's evaluation) and, on one pool, the queues' (module docstring)."""
        alloc = alloc or mech(env, exact=exact)
        ev = super().evaluate(mech, env, variant, deviation, exact, alloc)
        worst = queue_shortfall(env, alloc, integral_of(mech), exact)
        if worst is None or (ev.violated and not ev.measure > worst[0]):
            return ev
        ratio_q, q, j = worst
        return Evaluation(ratio_q, True, Witness(self.name, variant, mech.name, env, None, ratio_q, (j,)))

    def recheck(self, mech, witness):
        """The worse of the users' check (SI's re-check) and the queues', certified on the exact allocation (a
        tie: the user's)."""
        env = witness.env
        run = exact_run(mech, env)
        worst = queue_shortfall(env, run.alloc, run.integral, True) if run.exact else None
        user = super().recheck(mech, witness)
        if worst is None or (user is not None and not user.measure > worst[0]):
            return user
        ratio_q, q, j = worst
        g = env.queue_entitlement(q, True, whole=run.integral)
        held = ratio_q * g
        name, who = env.queues[q], env.users[j]
        want = f"one more task of {who} would fit within it" if run.integral else f"{who} still asks for more"
        summary = (f"queue {name} holds a dominant share {fmt_exact(held)} of the pool, below its hierarchical share "
                   f"guarantee {fmt_exact(g)}, while {want}")
        return Certificate(witness, g - held, ratio_q, {"allocation": run.alloc},
                           {f"S[{name}]": held, f"guarantee[{name}]": g}, None, "", "exact", summary)


def _users_below(env) -> list[list[int]]:
    below: list[list[int]] = [[] for _ in range(env.n_queues)]
    for j in range(env.n_users):
        for q in env.user_path(j):
            below[q].append(j)
    return below


def queue_shortfall(env, alloc, integral: bool, exact: bool) -> Optional[tuple[Any, int, int]]:
    """The worst queue below its guarantee with a user below it that still asks for more (module docstring),
    as ``(S_q / g_q, q, that user)``; ``None`` when every queue is served (or there is more than one server)."""
    if not env.n_queues or env.n_servers != 1:
        return None
    totals = env.total_capacity()
    R = env.n_resources
    worst = None
    for q, users in enumerate(_users_below(env)):
        g = env.queue_entitlement(q, True, whole=integral)
        if not g:
            continue
        held = [sum((alloc.x[j][0] * env.d(j, 0)[r] for j in users), Fraction(0) if exact else 0.0) for r in range(R)]

        def share(extra=None):
            best = 0
            for r in range(R):
                if totals[r]:
                    v = held[r] + (extra[r] if extra is not None else 0)
                    v = v / totals[r] if exact else float(v) / float(totals[r])
                    best = max(best, v)
            return best

        S = share()
        if not (S < g if exact else S < float(g) * (1 - FLOAT_REL)):
            continue
        hungry = None
        for j in users:
            if not env.demands(j, integral):
                continue
            bound, have = env.tasks[j], alloc.total(j)
            if integral:
                if bound is not None and have + 1 > math.floor(bound):
                    continue
                with_one = share(env.d(j, 0))
                if not (with_one <= g if exact else with_one <= float(g) * (1 + FLOAT_REL)):
                    continue
            elif bound is not None and not (have < bound if exact else float(have) < float(bound) * (1 - FLOAT_REL)):
                continue
            hungry = j
            break
        if hungry is None:
            continue
        ratio = S / g if exact else S / float(g)
        if worst is None or ratio < worst[0]:
            worst = (ratio, q, hungry)
    return worst
