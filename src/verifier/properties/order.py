"""Order properties of production policies: the ORDER a policy serves its clients in, read in a state.

Comparator- and quota-based schedulers (YARN's fair scheduler, Kueue, Armada, Mesos' sorter, Volcano's drf
plugin) decide fairness by an order -- who gets the next container or workload -- and their bugs are bugs of
that order (YARN-11745: a comparator that is not transitive; kueue 6577: a borrowing queue whose share
rounds to 0).  A policy exposes its order with the ``order`` facet (``mechanisms.OrderSpec``: ``compare``,
``share``, ``queue_share``); the STATE is the instance's ``usage`` (``mechverify.allocation.state_of``; none:
the empty cluster), drawn by the search for these properties (``reads``).  Only policies with the facet
are searched (``Setting.ordered``).

``order`` (a strict weak order, and invariant under units):

* ``strict-weak`` -- on the state, ``compare`` is irreflexive (``compare(a, a) = 0``), asymmetric
  (``compare(a, b) < 0`` iff ``compare(b, a) > 0``), transitive (``a < b < c`` implies ``a < c``) and its
  incomparability is transitive (``a ~ b ~ c`` implies ``a ~ c``); a comparator that raises on a valid state
  fails too.  What a sort needs (Java's TimSort throws "Comparison method violates its general contract!"
  otherwise).  The witness is the smallest set of users that shows it (1, 2 or 3).
* ``scale`` -- re-expressing one resource in other units (capacities, demands, per-server demands and queue
  guarantees of it x 1000; the state's task counts unchanged) changes no comparison.
* ``quota-first`` -- for a policy that promises to serve within quota before borrowing (its facet's
  ``request``: Kueue's ``FairSharingPrioritizeNonBorrowing``): for users ``i`` and ``j`` under different
  children ``A`` and ``B`` of their lowest common ancestor, if ``A`` stays within its subtree's guarantees
  after ``i``'s request and ``B`` borrows after ``j``'s (on a resource ``j`` requests), ``i`` goes first.  A user
  directly in the ancestor is its own side, with the other users directly there and no guarantee (Kueue's
  implicit ClusterQueue).  Policies without the promise (YARN's needy rule reads usage before a request, Mesos,
  Armada, Volcano) are not judged by it.

``share`` (share faithfulness):

* ``monotone`` -- one more task for a user (on a server it may use) never lowers its share, nor the share of a
  queue above it;
* ``borrowing`` -- a queue that borrows (the users below it hold more of some resource than the guarantees of
  the queue and of the queues below it add up to -- a quota tree's reading, Kueue's) has a positive queue
  share (the kueue 6577 class); policies with queue shares and instances with a guarantee only;
* ``weight`` -- a larger weight (a user's, where the policy takes user weights, or a queue's, x 2) never makes
  it worse off: every user it was before stays before it, every tie stays a tie or turns in its favour.

Every check is exact (the policies compare exact rationals) and is re-done from scratch by ``recheck``: a
violation is certified only when the same comparisons, recomputed, show it.  Measure: 1 when violated
(these are yes/no properties), 0 otherwise; the certificate's margin is the size of the failure where it has
one (a share drop, the amount borrowed), else 1.
"""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Optional

from mechverify.allocation import Allocation, state_of
from mechverify.numbers import fmt_exact

from .base import Certificate, Evaluation, Hints, Measure, Property, Witness

__all__ = ["OrderIsStrictWeak", "ShareFaithful", "scaled_resource", "SCALE"]

#: the factor ``scale`` re-expresses a resource by (e.g. cores -> millicores, GB -> MB)
SCALE = 1000

_NO_FACET = ("no order facet (a production policy's order in a state: mechanisms.OrderSpec; a user's policy: "
             "@mechverify.mechanism(order=...), docs/orders-and-placement.md)")


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)


def _facet(mech):
    return getattr(mech, "order", None)


def _describe(env, users) -> str:
    return ", ".join(env.users[j] for j in users)


class _OrderProperty(Property):
    hints = Hints(uses_users=True)
    reads = ("state", "guarantee")  # an order is read in a state, with the queues' quotas

    def variant_possible(self, setting, variant):
        """Only policies that expose their order (``Setting.ordered``)."""
        return None if getattr(setting, "ordered", False) else _NO_FACET

    def evaluate(self, mech, env, variant, deviation=None, exact=False, alloc=None):
        """The variant's check on the instance's state (:meth:`_find`)."""
        why = self.applicable(mech, env, variant)
        if why:
            return Evaluation(None, False, note=why)
        found = self._find(mech, env, variant)
        if found is None:
            return Evaluation(Fraction(0), False)
        return Evaluation(Fraction(1), True, Witness(self.name, variant, mech.name, env, None, Fraction(1), found[0]))

    def recheck(self, mech, witness):
        """The same check, recomputed from scratch on the exact state."""
        env = witness.env
        if self.applicable(mech, env, witness.variant):
            return None
        found = self._find(mech, env, witness.variant)
        if found is None:
            return None
        users, text, (gap, numbers) = found
        return Certificate(replace(witness, users=users), Fraction(gap), Fraction(1), {"state": state_of(env)},
                           numbers, None, "", "exact", text)

    def _find(self, mech, env, variant) -> Optional[tuple[tuple[int, ...], str, tuple]]:
        """``None``, or the failure: (users, what happened, (its size, the numbers behind it))."""
        raise NotImplementedError

    def applicable(self, mech, env, variant):
        return None if _facet(mech) is not None else _NO_FACET


class OrderIsStrictWeak(_OrderProperty):
    """``order``: the policy's comparator is a strict weak order on the state, and units do not change it."""

    name = "order"
    title = "order: a strict weak order, invariant under units"
    measure = Measure("1 when the comparator is not a strict weak order on the state (strict-weak), or a change of "
                      "units changes a comparison (scale)", 0, ">")
    variants = {
        "strict-weak": "irreflexive, asymmetric, transitive, incomparability transitive (and total: never raises)",
        "scale": f"one resource re-expressed in other units (x {SCALE}) changes no comparison",
        "quota-first": "a user whose side of the lowest common ancestor stays within its guarantees after its request "
                       "goes before one whose side then borrows (policies that promise it: the request facet)",
    }
    default_variant = "strict-weak"
    # the smallest break of the promise needs nested quotas: two cohorts, one holding two ClusterQueues
    variant_hints = {"quota-first": Hints(uses_users=True, min_users=3, one_resource=True,
                                          min_queue_depth=2, min_leaves=3, max_task_bound=3,
                                          premise_note="nested queue trees (leaves at depth 2+) with guarantees")}

    def variant_possible(self, setting, variant):
        """Ordered policies; ``quota-first``: those that promise it (``Setting.quota_first``, from the order
        facet's ``request``), on queue trees (guarantees live on queues)."""
        why = super().variant_possible(setting, variant)
        if why is None and variant == "quota-first":
            if not getattr(setting, "quota_first", False):
                return "the policy does not promise to serve within quota before borrowing (no request facet)"
            if not getattr(setting, "hierarchy", False):
                return "no queue tree in this setting (guarantees belong to queues)"
        return why

    def applicable(self, mech, env, variant):
        """``quota-first``: the policy's order facet has a ``request``."""
        why = super().applicable(mech, env, variant)
        if why is None and variant == "quota-first" and _facet(mech).request is None:
            return "the policy does not promise to serve within quota before borrowing (no request facet)"
        return why

    def _find(self, mech, env, variant):
        """Every pair and triple of users (strict-weak), every pair and resource (scale), every pair (quota-first);
        yes/no checks: size 1, no numbers."""
        spec = _facet(mech)
        state = state_of(env)
        if variant == "scale":
            found = _scale_failure(spec, env, state)
        elif variant == "quota-first":
            found = _quota_first_failure(spec, env, state)
        else:
            found = _weak_order_failure(spec, env, state)
        return None if found is None else (*found, (1, {}))


def _comparisons(spec, env, state) -> tuple[Optional[dict], Optional[tuple[tuple[int, ...], str]]]:
    J = env.n_users
    c: dict[tuple[int, int], int] = {}
    for a in range(J):
        for b in range(J):
            try:
                c[a, b] = _sign(spec.compare(state, a, b))
            except (ArithmeticError, ValueError) as exc:  # a comparator must be total on a valid state
                users = (a,) if a == b else (a, b)
                return None, (users, f"compare({_describe(env, (a, b))}) raises {type(exc).__name__}: {exc}")
    return c, None


def _weak_order_failure(spec, env, state) -> Optional[tuple[tuple[int, ...], str]]:
    c, failed = _comparisons(spec, env, state)
    if failed:
        return failed
    J = env.n_users
    name = env.users
    for a in range(J):
        if c[a, a]:
            return (a,), f"compare({name[a]}, {name[a]}) = {c[a, a]}: not irreflexive"
    for a in range(J):
        for b in range(a + 1, J):
            if c[a, b] != -c[b, a]:
                return (a, b), (f"compare({name[a]}, {name[b]}) = {c[a, b]} but compare({name[b]}, {name[a]}) = "
                                f"{c[b, a]}: not asymmetric")
    for a in range(J):
        for b in range(J):
            for d in range(J):
                if len({a, b, d}) < 3:
                    continue
                if c[a, b] < 0 and c[b, d] < 0 and not c[a, d] < 0:
                    return (a, b, d), (f"{name[a]} before {name[b]} before {name[d]}, but compare({name[a]}, "
                                       f"{name[d]}) = {c[a, d]}: not transitive")
                if c[a, b] == 0 and c[b, d] == 0 and c[a, d] != 0:
                    return (a, b, d), (f"{name[a]} ~ {name[b]} ~ {name[d]} (ties), but compare({name[a]}, {name[d]}) "
                                       f"= {c[a, d]}: incomparability not transitive")
    return None


def scaled_resource(env, r: int, factor: int = SCALE):
    """``env`` with resource ``r`` re-expressed in units ``factor`` times smaller: every capacity, demand,
    per-server demand, queue guarantee and max of ``r`` times ``factor`` (task counts, hence the state, unchanged)."""
    def mul(vec):
        return tuple(v * factor if i == r else v for i, v in enumerate(vec))

    return replace(env, capacity=tuple(mul(row) for row in env.capacity), demand=tuple(mul(d) for d in env.demand),
                   server_demand={k: mul(v) for k, v in env.server_demand.items()},
                   queue_guarantee=tuple(None if g is None else mul(g) for g in env.queue_guarantee),
                   queue_max=tuple(None if m is None else mul(m) for m in env.queue_max))


def _scale_failure(spec, env, state) -> Optional[tuple[tuple[int, ...], str]]:
    base, failed = _comparisons(spec, env, state)
    if failed:
        return failed
    for r in range(env.n_resources):
        env2 = scaled_resource(env, r)
        state2 = Allocation(env2, state.x, "state", True)
        other, failed = _comparisons(spec, env2, state2)
        if failed:
            return failed
        for (a, b), v in base.items():
            if a < b and other[a, b] != v:
                return (a, b), (f"compare({env.users[a]}, {env.users[b]}) = {v}, but {other[a, b]} with "
                                f"{env.resources[r]} counted in units {SCALE} times smaller")
    return None


class ShareFaithful(_OrderProperty):
    """``share``: shares move the right way -- with more allocation, with borrowing, with weight."""

    name = "share"
    title = "share faithfulness"
    measure = Measure("1 when more allocation lowers a share (monotone), a borrowing queue has share 0 (borrowing), "
                      "or a larger weight makes a user or queue worse off (weight)", 0, ">")
    variants = {
        "monotone": "one more task never lowers the user's share, nor a share of a queue above it",
        "borrowing": "a queue holding more of some resource than its subtree's guarantees add up to has a positive "
                     "share",
        "weight": "a larger weight (user or queue, x 2) never makes it worse off in the order",
    }
    default_variant = "monotone"
    variant_hints = {"borrowing": Hints(uses_users=True, premise_note="queue trees with guarantees")}

    def variant_possible(self, setting, variant):
        """Ordered policies; ``borrowing`` needs queue trees (guarantees live on queues)."""
        why = super().variant_possible(setting, variant)
        if why is None and variant == "borrowing" and not getattr(setting, "hierarchy", False):
            return "no queue tree in this setting (guarantees belong to queues)"
        return why

    def applicable(self, mech, env, variant):
        """``borrowing``: the policy has queue shares and some queue a guarantee."""
        why = super().applicable(mech, env, variant)
        if why is None and variant == "borrowing":
            if _facet(mech).queue_share is None:
                return "the policy has no queue shares"
            if not any(g is not None for g in env.queue_guarantee):
                return "no queue with a guarantee in this instance"
        return why

    def _find(self, mech, env, variant):
        spec = _facet(mech)
        state = state_of(env)
        try:
            if variant == "monotone":
                return _monotone_failure(spec, env, state)
            if variant == "borrowing":
                return _borrowing_failure(spec, env, state)
            return _weight_failure(mech, spec, env, state)
        except (ArithmeticError, ValueError) as exc:  # a share that cannot be computed on a valid state
            return (), f"the policy's share fails on this state: {type(exc).__name__}: {exc}", (1, {})


def _plus_one(state: Allocation, j: int, s: int) -> Allocation:
    x = [list(row) for row in state.x]
    x[j][s] += 1
    return Allocation(state.env, tuple(tuple(row) for row in x), "state", True)


def _monotone_failure(spec, env, state):
    for j in range(env.n_users):
        if not env.demands(j):
            continue
        before = spec.share(state, j)
        qs = env.user_path(j) if spec.queue_share is not None else ()
        qbefore = {q: spec.queue_share(state, q) for q in qs}
        for s in sorted(env.eligible[j]):
            more = _plus_one(state, j, s)
            after = spec.share(more, j)
            if after < before:
                return ((j,), f"{env.users[j]}'s share drops from {fmt_exact(before)} to {fmt_exact(after)} with one "
                              f"more task on {env.servers[s]}",
                        (before - after, {f"share[{env.users[j]}]": before, f"share[{env.users[j]}] +1 task": after}))
            for q in qs:
                qa = spec.queue_share(more, q)
                if qa < qbefore[q]:
                    return ((j,), f"queue {env.queues[q]}'s share drops from {fmt_exact(qbefore[q])} to {fmt_exact(qa)} "
                                  f"when {env.users[j]} gets one more task on {env.servers[s]}",
                            (qbefore[q] - qa, {f"share[{env.queues[q]}]": qbefore[q],
                                               f"share[{env.queues[q]}] +1 task": qa}))
            break  # one server the user may use is enough: the share is of pooled amounts
    return None


def _held_below(env, state, q) -> list:
    users = [j for j in range(env.n_users) if q in env.user_path(j)]
    held = [sum((state.x[j][s] * env.d(j, s)[r] for j in users for s in range(env.n_servers)), Fraction(0))
            for r in range(env.n_resources)]
    return users, held


def _subtree_quota(env, q) -> Optional[list]:
    """The guarantees of ``q`` and every queue below it, summed per resource (``None``: none given)."""
    below = [p for p in range(env.n_queues) if p == q or env.queues[p].startswith(env.queues[q] + "/")]
    given = [env.queue_guarantee[p] for p in below if env.queue_guarantee[p] is not None]
    if not given:
        return None
    return [sum((g[r] for g in given), Fraction(0)) for r in range(env.n_resources)]


def _side(env, state, j: int, k: int):
    """User ``j``'s side below its lowest common ancestor with another user, ``k`` levels down its path: the
    child queue there (its usage and its subtree's guarantees), or -- ``j`` sits directly in the ancestor -- the
    users directly there with no guarantee.  Returns (label, held, quota)."""
    path = env.user_path(j)
    R = env.n_resources
    if k < len(path):
        q = path[k]
        _, held = _held_below(env, state, q)
        return f"queue {env.queues[q]}", held, _subtree_quota(env, q) or [Fraction(0)] * R
    lca = path[k - 1] if k else None
    direct = env.queue_users(lca)
    held = [sum((state.x[u][s] * env.d(u, s)[r] for u in direct for s in range(env.n_servers)), Fraction(0))
            for r in range(R)]
    where = "the root" if lca is None else f"queue {env.queues[lca]}"
    return f"the users directly in {where}", held, [Fraction(0)] * R


def _quota_first_failure(spec, env, state):
    J, R = env.n_users, env.n_resources
    names = env.users
    requests = [spec.request(state, k) for k in range(J)]
    for i in range(J):
        for j in range(J):
            if i == j:
                continue
            pi, pj = env.user_path(i), env.user_path(j)
            k = 0
            while k < len(pi) and k < len(pj) and pi[k] == pj[k]:
                k += 1
            if k == len(pi) and k == len(pj):  # the same queue: one side, nothing to compare
                continue
            ri, rj = requests[i], requests[j]
            la, held_a, quota_a = _side(env, state, i, k)
            if any(ri[r] > 0 and held_a[r] + ri[r] > quota_a[r] for r in range(R)):
                continue  # i's side would borrow too
            lb, held_b, quota_b = _side(env, state, j, k)
            over = [r for r in range(R) if rj[r] > 0 and held_b[r] + rj[r] > quota_b[r]]
            if not over or _sign(spec.compare(state, i, j)) < 0:
                continue
            r = over[0]
            return ((i, j), f"{names[i]}'s side ({la}) stays within its guarantees after its request "
                            f"{'<' + ', '.join(fmt_exact(v) for v in ri) + '>'}, {names[j]}'s side ({lb}) borrows "
                            f"{fmt_exact(held_b[r] + rj[r] - quota_b[r])} of {env.resources[r]} after its request, yet "
                            f"{names[i]} does not go first")
    return None


def _borrowing_failure(spec, env, state):
    for q in range(env.n_queues):
        g = _subtree_quota(env, q)
        if g is None:
            continue
        users, held = _held_below(env, state, q)
        over = [r for r in range(env.n_resources) if held[r] > g[r]]
        if not over or not users:
            continue
        share = spec.queue_share(state, q)
        if not share > 0:
            r = over[0]
            return ((users[0],), f"queue {env.queues[q]} holds {fmt_exact(held[r])} of {env.resources[r]}, above its "
                                 f"subtree's guarantee {fmt_exact(g[r])}, yet its share is {fmt_exact(share)}",
                    (held[r] - g[r], {f"{env.resources[r]}[{env.queues[q]}]": held[r],
                                      f"guarantee[{env.queues[q]}]": g[r], f"share[{env.queues[q]}]": share}))
    return None


def _worse_off(spec, state, state2, mine, others):
    """A pair (j in ``mine``, k in ``others``) where ``j`` lost ground: before -> not before, tie -> after."""
    for j in mine:
        for k in others:
            b, a = _sign(spec.compare(state, j, k)), _sign(spec.compare(state2, j, k))
            if a > b:
                return j, k, b, a
    return None


def _weight_failure(mech, spec, env, state):
    J = env.n_users
    what = {-1: "before", 0: "tied with", 1: "after"}
    if getattr(mech.setting, "weights", True):
        for j in range(J):
            env2 = env.with_user(j, weight=env.weight[j] * 2)
            hit = _worse_off(spec, state, Allocation(env2, state.x, "state", True), [j],
                             [k for k in range(J) if k != j])
            if hit:
                j, k, b, a = hit
                return ((j, k), f"{env.users[j]} was {what[b]} {env.users[k]}, but {what[a]} it with twice the weight",
                        (1, {f"weight[{env.users[j]}]": env.weight[j]}))
    for q in range(env.n_queues):
        qw = env.queue_weight[:q] + (env.queue_weight[q] * 2,) + env.queue_weight[q + 1:]
        env2 = replace(env, queue_weight=qw)
        mine = [j for j in range(J) if q in env.user_path(j)]
        hit = _worse_off(spec, state, Allocation(env2, state.x, "state", True), mine,
                         [k for k in range(J) if k not in mine])
        if hit:
            j, k, b, a = hit
            return ((j, k), f"{env.users[j]} (queue {env.queues[q]}) was {what[b]} {env.users[k]}, but {what[a]} it "
                            f"with the queue's weight doubled", (1, {f"weight[{env.queues[q]}]": env.queue_weight[q]}))
    return None
