"""``slurm-classic``'s and ``slurm-fairtree``'s fast step (:class:`FastSteps`, a base of
:class:`mechanisms.ports.slurm.policy.SlurmFairShare`) and its float usage book (:class:`FloatUsage`): in a float
run the usages live in numpy arrays per account and the step is taken in Python integers where every number it
reads is whole -- the same allocations, usages and orders as the general path, held equal to it (and to the
literal one) by tests/mechanisms/test_slurm_fast.py."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

from mechverify.allocation import Allocation
from mechverify.execution import StepContext
from mechverify.model import Environment
from mechverify.policies import MAX_TASKS

__all__ = ["FastSteps", "FloatUsage"]


def _over_int(used: int, c: int) -> bool:
    """``mechanisms.core.time._over`` of a float run (``used - c > c / 10**9 + 1 / 10**12``) for integers: the
    same test times 10**12, exactly."""
    return (used - c) * 10**12 > c * 1000 + 1


def _as_ints(known: dict, u: str, d: tuple, n: Any) -> Optional[tuple]:
    """User ``u``'s demand ``d`` and task bound ``n`` as the integer step reads them, remembered in ``known``:
    ``(d, n, d as ints, n, floor(n))``; ``None`` when the demand is not whole or the bound is missing."""
    dw = _whole(d)
    if dw is None or n is None:
        return None
    m = n.numerator if n.__class__ is Fraction and n.denominator == 1 else n
    known[u] = c = (d, n, dw, m, math.floor(m))
    return c


def _whole(vec: tuple) -> Optional[list]:
    """The entries of ``vec`` as ints when each is a whole ``Fraction`` (or an int), else ``None``."""
    out = []
    for v in vec:
        if v.__class__ is int:
            out.append(v)
        elif v.__class__ is Fraction and v.denominator == 1:
            out.append(v.numerator)
        else:
            return None
    return out


class FloatUsage:
    """Every association's decayed usage in floats, in numpy arrays by parent account (``None``: root), each in
    declaration order: a tick decays them all in one multiplication per account -- the same IEEE operations as
    ``(usage + accrued) * factor`` per association (an association never accrued stays 0) -- and the fair-share
    factors read them without building a dict of every association ever seen."""

    def __init__(self, factor: float) -> None:
        self.factor = factor
        self.where: dict[str, tuple] = {}  # user -> (parent, index under it)
        self.buf: dict = {}  # parent -> usages (an array with room to grow)
        self.shares: dict = {}  # parent -> raw shares (floats), likewise
        self.n: dict = {}  # parent -> associations under it
        self.seen: set = set()  # the associations with a usage (accrued at a tick): the others read 0
        self.levels: dict = {}  # parent -> level shares (fairshare._aggregate), until a user is added under it
        self.first: Optional[str] = None  # the first association (its usage's type is Tree's zero)
        self.memo: dict = {}  # user -> value(user) since the last tick (usages change only at a tick)

    def add(self, u: str, p: Optional[int], shares: Any) -> None:
        import numpy as np

        n = self.n.get(p, 0)
        if n == len(self.buf.get(p, ())):
            grow = max(16, 2 * n)
            for arr in (self.buf, self.shares):
                new = np.zeros(grow)
                if n:
                    new[:n] = arr[p][:n]
                arr[p] = new
        self.shares[p][n] = float(shares)
        self.where[u] = (p, n)
        self.n[p] = n + 1
        self.levels.pop(p, None)
        if self.first is None:
            self.first = u

    def value(self, u: str) -> Any:
        """``usage.get(u, 0)`` of the dict it replaces."""
        got = self.memo.get(u)
        if got is None:
            if u not in self.seen:
                got = 0
            else:
                p, i = self.where[u]
                got = self.buf[p].item(i)
            self.memo[u] = got
        return got

    def tick(self, accrued: dict) -> None:
        self.memo.clear()
        for u, a in accrued.items():
            p, i = self.where[u]
            buf = self.buf[p]
            buf[i] = buf.item(i) + a
            self.seen.add(u)
        f = self.factor
        for p, buf in self.buf.items():
            buf[:self.n[p]] *= f

    def arrays(self) -> tuple:
        """``(usage, shares)`` by parent: views of the associations' arrays."""
        return ({p: b[:self.n[p]] for p, b in self.buf.items()}, {p: b[:self.n[p]] for p, b in self.shares.items()})


class FastSteps:
    """The integer step of a :class:`~mechanisms.ports.slurm.policy.SlurmFairShare` run (:meth:`_fast`), on its
    state: ``book`` (a :class:`FloatUsage`), ``held`` (its ``_Held`` lift), ``rate``, ``name``, the caches
    ``_known`` and ``keys``, and its ``_keys_for``/``_ordered_some``/``_all_fit``."""

    def _fast(self, ctx: StepContext) -> Optional[Allocation]:
        """The step in floats as :class:`_Held` and :meth:`_fill` take it, in Python integers, where every number
        it reads is whole (the held tasks, the demands, the capacities, finite task bounds) and the scheduler's
        setting takes the residual (no external resources, per-server demands or carried usage): the same
        allocation, the same residual (a server released when what is held exceeds it, as :class:`_Held` decides
        in floats), the same tasks -- the users in the fair-share order, each given its tasks first fit, as many
        as fit on a server before the next one (``progressive_filling`` serves the first user in the order while
        it can take a task: its key does not change).  The order is read only when two users or more wait and
        they do not all fit on the one server; then only theirs (:meth:`_keys_for`).  ``None``: the general
        path (and the first step, whose allocation the lift returns exact)."""
        env, prev = ctx.env, ctx.previous
        if prev is None or env.n_external or env.server_demand or not env.n_resources or env.has_usage:
            return None
        J, S, R = env.n_users, env.n_servers, env.n_resources
        if S == 1:
            return self._fast_one(ctx)
        users, demand, tasks, eligible, ext = env.users, env.demand, env.tasks, env.eligible, env.external_demand
        reports, known = self.held.reports, self._known
        held, dem, floor, keys = [], [], [], {}
        for j, row in enumerate(prev.x):
            if S == 1:
                v = row[0]
                if v.__class__ is not float or not v.is_integer():
                    return None
                ints = [int(v)]
            else:
                ints = []
                for v in row:
                    if v.__class__ is not float or not v.is_integer():
                        return None
                    ints.append(int(v))
            u, d, n = users[j], demand[j], tasks[j]
            c = known.get(u)
            if c is None or c[0] is not d or c[1] is not n:
                c = _as_ints(known, u, d, n)
                if c is None:
                    return None
            dem.append(c[2])
            keys[u] = k = (d, ext[j] if ext else (), eligible[j], ())
            if reports.get(u) != k:  # a changed report gives back what it holds
                ints = [0] * S
            if (ints[0] if S == 1 else sum(ints)) > c[3]:  # a trim: the lift's own arithmetic
                return None
            held.append(ints)
            floor.append(c[4])
        caps = []
        for c in env.capacity:
            c = _whole(c)
            if c is None:
                return None
            caps.append(c)
        for s in range(S):
            used = [0] * R
            for j in range(J):
                h = held[j][s]
                if h:
                    d = dem[j]
                    for r in range(R):
                        used[r] += h * d[r]
            cap = caps[s]
            if any(map(_over_int, used, cap)):  # capacity lost
                for j in range(J):
                    held[j][s] = 0
                used = [0] * R
            caps[s] = [max(c - u, 0) for c, u in zip(cap, used)]
        limit = [floor[j] - sum(held[j]) for j in range(J)]  # what the residual bounds allow
        if sum(limit) > MAX_TASKS:  # progressive_filling's own error, raised by the general path
            return None
        self.held.reports = keys
        waiting = [j for j in range(J) if limit[j] > 0]
        if len(waiting) > 1 and not self._all_fit_int(env, waiting, limit, dem, caps):
            order = self._ordered_some(env, waiting)
            waiting.sort(key=lambda j: (order[users[j]], j))
        for j in waiting:
            left, d, elig, row = limit[j], dem[j], eligible[j], list(held[j])
            held[j] = row
            for s in range(S):
                if s not in elig:
                    continue
                rem = caps[s]
                k = left
                for r in range(R):
                    if d[r]:
                        k = min(k, rem[r] // d[r])
                if k > 0:
                    for r in range(R):
                        rem[r] -= k * d[r]
                    row[s] += k
                    left -= k
                    if not left:
                        break
        b = self.billing
        value = self.book.value
        rate, usage = {}, {}
        for j, u in enumerate(users):
            rate[u] = float(sum(held[j]) * dem[j][b])  # a user's demand is the same on every server
            usage[u] = value(u)
        self.rate = rate
        return Allocation(env, tuple([tuple([float(n) for n in row]) for row in held]), self.name, False,
                          info={"usage": usage})

    def _fast_one(self, ctx: StepContext) -> Optional[Allocation]:
        """:meth:`_fast` on one server (the common case), in one pass over the users where it can."""
        env, prev = ctx.env, ctx.previous
        R = env.n_resources
        cap = _whole(env.capacity[0])
        if cap is None:
            return None
        users, demand, tasks, eligible, ext = env.users, env.demand, env.tasks, env.eligible, env.external_demand
        reports, known = self.held.reports, self._known
        held, dem, limit, keys, waiting, vals = [], [], [], {}, [], []
        used = [0] * R
        u0 = u1 = total = 0
        value = self.book.value
        for j, row in enumerate(prev.x):
            v = row[0]
            if v.__class__ is not float or not v.is_integer():
                return None
            h = int(v)
            u, d, n = users[j], demand[j], tasks[j]
            c = known.get(u)
            if c is None or c[0] is not d or c[1] is not n:
                c = _as_ints(known, u, d, n)
                if c is None:
                    return None
            keys[u] = k = (d, ext[j] if ext else (), eligible[j], ())
            if h:
                if reports.get(u) != k:  # a changed report gives back what it holds
                    h = 0
                elif h > c[3]:  # a trim: the lift's own arithmetic
                    return None
                elif R == 2:
                    dw = c[2]
                    u0 += h * dw[0]
                    u1 += h * dw[1]
                else:
                    dw = c[2]
                    for r in range(R):
                        used[r] += h * dw[r]
            vals.append(value(u))
            held.append(h)
            dem.append(c[2])
            left = c[4] - h
            limit.append(left)
            if left > 0:
                waiting.append(j)
                total += left
        if R == 2:
            used = [u0, u1]
        if any(map(_over_int, used, cap)):  # capacity lost: released
            limit = [left + h for left, h in zip(limit, held)]
            held = [0] * len(held)
            used = [0] * R
            waiting = [j for j, left in enumerate(limit) if left > 0]
            total = sum(limit[j] for j in waiting)
        if total > MAX_TASKS:  # progressive_filling's own error, raised by the general path
            return None
        rem = [max(c - u, 0) for c, u in zip(cap, used)]
        self.held.reports = keys
        if len(waiting) > 1 and not self._all_fit_int(env, waiting, limit, dem, [rem]):
            order = self._ordered_some(env, waiting)
            waiting.sort(key=lambda j: (order[users[j]], j))
        for j in waiting:
            if 0 not in eligible[j]:
                continue
            d, k = dem[j], limit[j]
            for r in range(R):
                if d[r]:
                    k = min(k, rem[r] // d[r])
            if k > 0:
                for r in range(R):
                    rem[r] -= k * d[r]
                held[j] += k
        b = self.billing
        self.rate = dict(zip(users, [float(h * d[b]) for h, d in zip(held, dem)]))
        return Allocation(env, tuple([(float(h),) for h in held]), self.name, False,
                          info={"usage": dict(zip(users, vals))})

    @staticmethod
    def _all_fit_int(env: Environment, waiting: list, limit: list, dem: list, caps: list) -> bool:
        """:meth:`_all_fit` in integers: one server, and every waiting task fits on it at once."""
        if env.n_servers != 1:
            return False
        need = [0] * env.n_resources
        for j in waiting:
            if 0 not in env.eligible[j]:
                return False
            for r, dv in enumerate(dem[j]):
                need[r] += limit[j] * dv
        return all(a <= c for a, c in zip(need, caps[0]))

