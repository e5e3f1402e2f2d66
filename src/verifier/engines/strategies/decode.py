"""The byte layout behind the search's draws: one shape integer and ONE byte string decode into an
environment and a deviation.

Hypothesis costs about 0.3 ms per primitive draw, so a case is drawn as its shape (four integers, one
mixed-radix integer) plus one byte string, decoded field by field (``Decoder``).  Byte 0 is always the
simplest choice (value 1, feature absent, demand kept): shrinking bytes toward 0 shrinks numbers toward
small integers and removes features.  The layout is FIXED for the domain's largest shape, so a field
keeps its byte position when the shape shrinks.  Deviations are decoded by their kind
(``Hints.deviation``), never by a property's name.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any, Optional, Sequence

from mechverify.model import Environment

from ...properties.base import Deviation, Report
from .domain import Domain

__all__ = ["Decoder", "number_table", "max_shape", "env_bytes", "tree_bytes", "decode_tree", "state_bytes", "decode_state", "shape_count", "shape_at", "repair",
           "decode_environment", "deviation_bytes", "decode_deviation", "report_at", "eligible_flip",
           "task_report"]


@lru_cache(maxsize=64)
@lru_cache(maxsize=32)
def number_table(max_value: int, denominators: tuple[int, ...], zero_bytes: int) -> tuple[Fraction, ...]:
    """256 values indexed by a byte: [0,128) integers 1..max (small first), then non-integer fractions
    (small denominators first), then ``zero_bytes`` zeros at the top."""
    ints = [Fraction(1 + (b * max_value) // 128) for b in range(128)]
    fracs = sorted({Fraction(p, q) for q in denominators if q > 1 for p in range(1, max_value * q + 1)
                    if Fraction(p, q).denominator > 1}, key=lambda f: (f.denominator, f.numerator))
    n_frac = 256 - 128 - zero_bytes
    if fracs:
        mid = [fracs[(i * len(fracs)) // n_frac] for i in range(n_frac)]
    else:
        mid = [Fraction(1 + (i * max_value) // max(1, n_frac)) for i in range(n_frac)]
    return tuple(ints + mid + [Fraction(0)] * zero_bytes)


@lru_cache(maxsize=16)
def _weight_table(denominators: tuple[int, ...]) -> tuple[Fraction, ...]:
    vals = sorted({Fraction(p, q) for q in denominators for p in range(1, 4 * q + 1)
                   if Fraction(1, 2) <= Fraction(p, q) <= 4 and Fraction(p, q) != 1},
                  key=lambda f: (f.denominator, f.numerator))
    return tuple(vals)


_SCALE = (Fraction(2), Fraction(1, 2), Fraction(3, 2), Fraction(2, 3), Fraction(4), Fraction(1, 4),
          Fraction(4, 3), Fraction(3, 4))


class Decoder:
    """Reads a Hypothesis byte string field by field (missing bytes read as 0 = simplest)."""

    def __init__(self, data: bytes, dom: Domain) -> None:
        self.data, self.pos, self.dom = data, 0, dom
        zero = 32 if dom.zero_demands else 0
        self.t_dem = number_table(dom.max_value, dom.denominators, zero)
        self.t_cap = number_table(dom.max_value, dom.denominators, 16 if dom.zero_capacities else 0)
        self.t_nonneg = number_table(dom.max_value, dom.denominators, 16)
        self.t_pos = number_table(dom.max_value, dom.denominators, 0)
        self.t_w = _weight_table(dom.denominators)

    def byte(self) -> int:
        """The next byte (0 past the end)."""
        b = self.data[self.pos] if self.pos < len(self.data) else 0
        self.pos += 1
        return b

    def at(self, pos: int) -> int:
        """The byte at ``pos`` (0 past the end)."""
        return self.data[pos] if 0 <= pos < len(self.data) else 0


def max_shape(dom: Domain) -> tuple[int, int, int, int]:
    """The domain's largest (users, servers, resources, external resources)."""
    return (max(dom.min_users, dom.max_users), max(dom.min_servers, dom.max_servers),
            max(dom.min_resources, dom.max_resources),
            max(dom.min_external, dom.max_external) if dom.external else 0)



def _flat_env_bytes(dom: Domain) -> int:
    Jm, Sm, Rm, Km = max_shape(dom)
    return Sm * Rm + Km + Jm * Rm + Jm * Km + 3 * Jm + 1 + Jm * (Rm + 2) + 1


def tree_bytes(dom: Domain) -> int:
    """Bytes of a queue tree (0 for a flat domain): the leaf count, per leaf its attachment and its new
    inner queues, one weight per possible queue, one leaf per user."""
    if not dom.hierarchy:
        return 0
    L = max(dom.min_leaves, dom.max_leaves)
    return 1 + 2 * L + L * max(1, dom.max_queue_depth) + max_shape(dom)[0]


def env_bytes(dom: Domain) -> int:
    """Bytes of the FIXED layout for the domain's largest shape: a field keeps its byte position when the
    shape shrinks, so shrinking the shape integer does not reinterpret the other bytes.  A hierarchical
    domain appends the tree's bytes (:func:`decode_tree`), a domain with states or declared amounts theirs
    (:func:`decode_state`); a flat one is laid out exactly as without them."""
    return _flat_env_bytes(dom) + tree_bytes(dom) + state_bytes(dom)


def _max_queues(dom: Domain) -> int:
    return max(dom.min_leaves, dom.max_leaves) * max(1, dom.max_queue_depth) if dom.hierarchy else 0


def state_bytes(dom: Domain) -> int:
    """Bytes of a state and of declared amounts (0 unless ``dom.state``, ``dom.guarantees`` or ``dom.maxes``):
    tasks per user and server (a state), then per possible queue a guarantee flag and one number per resource
    (a state, or guarantees), then per possible queue a max flag and one number per resource (maxes)."""
    Jm, Sm, Rm, _ = max_shape(dom)
    n = Jm * Sm if dom.state else 0
    if dom.state or dom.guarantees:
        n += _max_queues(dom) * (1 + Rm)
    if dom.maxes:
        n += _max_queues(dom) * (1 + Rm)
    return n


def decode_state(dom: Domain, kw: dict[str, Any], data: bytes) -> dict[str, Any]:
    """A state and declared amounts from their bytes (``Environment`` keywords ``usage``, ``queue_guarantee``
    and ``queue_max``).  A state: 0-3 whole tasks per user and eligible server, in user then server order, each
    count cut to what still fits the server (and the user's task bound) -- a feasible current allocation.  A
    queue gets a guarantee (a max) when its flag byte is >= 128 (numbers from the capacity table).  All bytes
    0: the empty cluster, no guarantees, no maxes."""
    dec = Decoder(data, dom)
    Jm, Sm, Rm, _ = max_shape(dom)
    capacity, demand, eligible = kw["capacity"], kw["demand"], kw["eligible"]
    sd, tasks = kw["server_demand"], kw["tasks"]
    J, S, R = len(demand), len(capacity), len(capacity[0]) if capacity else 0
    out: dict[str, Any] = {}
    o = 0
    if dom.state:
        left = [list(row) for row in capacity]
        usage = [[Fraction(0)] * S for _ in range(J)]
        for j in range(J):
            held = Fraction(0)
            for s in range(S):
                want = dec.at(j * Sm + s) % 4
                if not want or s not in eligible[j]:
                    continue
                d = sd.get((j, s), demand[j])
                n = want
                if tasks[j] is not None:
                    n = min(n, int(tasks[j] - held))
                for r in range(R):
                    if d[r]:
                        n = min(n, int(left[s][r] / d[r]))
                if n <= 0:
                    continue
                usage[j][s] = Fraction(n)
                held += n
                for r in range(R):
                    left[s][r] -= n * d[r]
        out["usage"] = tuple(tuple(row) for row in usage) if any(v for row in usage for v in row) else ()
        o = Jm * Sm
    queues = kw.get("queues") or ()

    def amounts(base0: int) -> tuple:
        return tuple(tuple(dec.t_cap[dec.at(base0 + q * (1 + Rm) + 1 + r)] for r in range(R))
                     if dec.at(base0 + q * (1 + Rm)) >= 128 else None for q in range(len(queues)))

    if dom.state or dom.guarantees:
        if queues:
            out["queue_guarantee"] = amounts(o)
        o += _max_queues(dom) * (1 + Rm)
    if dom.maxes and queues:
        out["queue_max"] = amounts(o)
    return out


def decode_tree(dom: Domain, J: int, data: bytes) -> dict[str, Any]:
    """A queue tree from its bytes (``Environment`` keywords): ``min_leaves..max_leaves`` leaf queues of depth
    ``min_queue_depth..max_queue_depth`` (a leaf hanging higher gets the inner queues it needs), integer weights ``1..max_queue_weight``, every user in a leaf.  All bytes 0
    is the simplest tree: ``min_leaves`` top-level queues of weight 1, every user in the first.  Leaf ``i``
    hangs below the root or an inner queue drawn so far (byte ``2i+1``) with 0-2 new inner queues between
    (byte ``2i+2``), so that a leaf never gets children and every inner queue has some."""
    dec = Decoder(data, dom)
    lo, hi = dom.min_leaves, max(dom.min_leaves, dom.max_leaves)
    L = lo + dec.at(0) % (hi - lo + 1)
    depth_max = max(1, dom.max_queue_depth)
    paths: list[str] = []
    inner: list[int] = []  # queues that may take children (never a leaf)
    leaves: list[int] = []
    for i in range(L):
        attach = ([None] + inner)[dec.at(1 + 2 * i) % (1 + len(inner))]
        base = "" if attach is None else paths[attach] + "/"
        at = 0 if attach is None else paths[attach].count("/") + 1
        room = depth_max - at - 1
        need = max(0, min(dom.min_queue_depth, depth_max) - at - 1)  # inner queues the leaf's depth needs
        for _ in range(min(room, max(need, dec.at(2 + 2 * i) % 3))):
            paths.append(f"{base}q{len(paths) + 1}")
            inner.append(len(paths) - 1)
            base = paths[-1] + "/"
        paths.append(f"{base}q{len(paths) + 1}")
        leaves.append(len(paths) - 1)
    o_w = 1 + 2 * max(dom.min_leaves, dom.max_leaves)
    weights = tuple(Fraction(1 + (dec.at(o_w + q) * max(1, dom.max_queue_weight)) // 256) for q in range(len(paths)))
    o_u = o_w + max(dom.min_leaves, dom.max_leaves) * depth_max
    user_queue = tuple(leaves[dec.at(o_u + j) % L] for j in range(J))
    return {"queues": tuple(paths), "queue_weight": weights, "user_queue": user_queue}



def repair(env_kw: dict[str, Any]) -> dict[str, Any]:
    """Make a drawn environment valid (deterministically): a user with an all-zero demand at some server
    and neither a positive external demand nor a task bound gets demand 1 on its first resource."""
    demand = [list(v) for v in env_kw["demand"]]
    ext = env_kw.get("external_demand") or [()] * len(demand)
    tasks = env_kw.get("tasks") or [None] * len(demand)
    sd = dict(env_kw.get("server_demand") or {})
    for j in range(len(demand)):
        if tasks[j] is not None or any(v > 0 for v in ext[j]):
            continue
        if all(v == 0 for v in demand[j]):
            demand[j][0] = Fraction(1)
        for (jj, s), vec in list(sd.items()):
            if jj == j and all(v == 0 for v in vec):
                vec = list(vec)
                vec[0] = Fraction(1)
                sd[(jj, s)] = tuple(vec)
    out = dict(env_kw)
    out["demand"] = tuple(tuple(v) for v in demand)
    out["server_demand"] = sd
    return out



def decode_environment(dom: Domain, J: int, S: int, R: int, K: int, data: bytes,
                       dominant: Optional[str] = None) -> Environment:
    """The environment a shape and a byte string stand for (valid by construction; fixed layout)."""
    Jm, Sm, Rm, Km = max_shape(dom)
    dec = Decoder(data, dom)
    o_cap, o_ecap = 0, Sm * Rm
    o_dem = o_ecap + Km
    o_edem = o_dem + Jm * Rm
    o_user = o_edem + Jm * Km
    o_req = o_user + 3 * Jm
    o_sd = o_req + 1
    o_fac = o_sd + Jm * (Rm + 2)
    capacity = tuple(tuple(dec.t_cap[dec.at(o_cap + s * Rm + r)] for r in range(R)) for s in range(S))
    ext_cap = tuple(dec.t_cap[dec.at(o_ecap + k)] for k in range(K))
    demand = [[dec.t_dem[dec.at(o_dem + j * Rm + r)] for r in range(R)] for j in range(J)]
    ext_dem = [tuple(dec.t_dem[dec.at(o_edem + j * Km + k)] for k in range(K)) for j in range(J)]
    weight, eligible = [], []
    tasks: list[Optional[Fraction]] = []
    for j in range(J):
        bw, be, bt = dec.at(o_user + 3 * j), dec.at(o_user + 3 * j + 1), dec.at(o_user + 3 * j + 2)
        weight.append(dec.t_w[(bw - 171) % len(dec.t_w)] if (dom.weights and bw >= 171) else Fraction(1))
        if dom.placement and be >= 171:
            e = be - 171
            excluded = e % (1 << S) if S > 1 else (1 if e >= 60 else 0)
            eligible.append(frozenset(s for s in range(S) if not excluded >> s & 1))
        else:
            eligible.append(frozenset(range(S)))
        tasks.append(dec.t_nonneg[((bt - 171) * 3) % 256] if (dom.bounds and bt >= 171) else None)
    if dom.all_bounded:
        tasks = [t if (t is not None and t > 0) else dec.t_pos[dec.at(o_user + 3 * j + 2)]
                 for j, t in enumerate(tasks)]
    elif dom.require_bounds and dom.bounds and all(t is None for t in tasks):
        tasks[0] = dec.t_nonneg[dec.at(o_req)]
    if dom.max_task_bound:  # small whole workloads next to large quotas: a bound of 1 or more folded into 1..max
        tasks = [t if t is None or t < 1 else Fraction(1 + int(t) % dom.max_task_bound) for t in tasks]
    sd: dict[tuple[int, int], tuple[Fraction, ...]] = {}
    if dom.server_demand and S > 1:
        for j in range(J):
            base = o_sd + j * (Rm + 2)
            if dec.at(base) >= 224:
                sd[(j, dec.at(base + 1) % S)] = tuple(dec.t_dem[dec.at(base + 2 + r)] for r in range(R))
    factor = (Fraction(1), Fraction(3, 2), Fraction(2))[dec.at(o_fac) % 3]
    if dominant:
        _make_dominant(factor, demand, capacity, eligible, sd, dominant)
    kw = repair({"demand": demand, "external_demand": ext_dem, "tasks": tasks, "server_demand": sd})
    tree = decode_tree(dom, J, data[_flat_env_bytes(dom):]) if dom.hierarchy else {}
    if dom.state or dom.guarantees or dom.maxes:
        tree.update(decode_state(dom, {"capacity": capacity, "demand": kw["demand"], "eligible": eligible,
                                       "server_demand": kw["server_demand"], "tasks": tasks, **tree},
                                 data[_flat_env_bytes(dom) + tree_bytes(dom):]))
    return Environment(
        resources=tuple(f"r{r + 1}" for r in range(R)), servers=tuple(f"s{s + 1}" for s in range(S)),
        capacity=capacity, users=tuple(f"u{j + 1}" for j in range(J)), demand=kw["demand"],
        external=tuple(f"e{k + 1}" for k in range(K)), external_capacity=ext_cap,
        external_demand=tuple(ext_dem), weight=tuple(weight), eligible=tuple(eligible), tasks=tuple(tasks),
        server_demand=kw["server_demand"], **tree)



def _make_dominant(factor: Fraction, demand, capacity, eligible, sd, variant: str) -> None:
    """Raise each user's demand of resource 0 so that it is (weakly) dominant -- globally (pooled
    capacities) or at every server it may use.  Per-server demands are dropped (the premise is about one
    demand vector)."""
    sd.clear()
    R = len(capacity[0])
    for j in range(len(demand)):
        if R == 1:
            demand[j][0] = demand[j][0] or Fraction(1)
            continue
        need = Fraction(0)
        if variant == "global":
            pooled = [sum(capacity[s][r] for s in range(len(capacity))) for r in range(R)]
            if pooled[0] == 0:
                continue
            for r in range(1, R):
                if demand[j][r] > 0 and pooled[r] > 0:
                    need = max(need, demand[j][r] * pooled[0] / pooled[r])
        else:
            for s in eligible[j]:
                c = capacity[s]
                if c[0] == 0 or any(demand[j][r] > 0 and c[r] == 0 for r in range(1, R)):
                    continue  # j cannot use s once it demands resource 0 (or already cannot)
                for r in range(1, R):
                    if demand[j][r] > 0:
                        need = max(need, demand[j][r] * c[0] / c[r])
        demand[j][0] = max(demand[j][0], need * factor) if need > 0 else (demand[j][0] or Fraction(1))



def shape_count(dom: Domain) -> tuple[list[tuple[int, int]], int]:
    """The (lo, hi) range of each shape dimension and the number of shapes."""
    ranges = [(dom.min_users, max(dom.min_users, dom.max_users)),
              (dom.min_servers, max(dom.min_servers, dom.max_servers)),
              (dom.min_resources, max(dom.min_resources, dom.max_resources)),
              (dom.min_external, max(dom.min_external, dom.max_external)) if dom.external else (0, 0)]
    n = 1
    for lo, hi in ranges:
        n *= hi - lo + 1
    return ranges, n



def shape_at(index: int, dom: Domain) -> tuple[int, int, int, int]:
    """Mixed-radix decoding of one integer (users most significant): index 0 is the smallest shape, so
    shrinking the integer shrinks the shape."""
    ranges, _ = shape_count(dom)
    out = []
    for lo, hi in reversed(ranges):
        size = hi - lo + 1
        out.append(lo + index % size)
        index //= size
    J, S, R, K = reversed(out)
    return J, S, R, K


# ---------------------------------------------------------------------- deviations
def _decode_report(dec: Decoder, true: Sequence[Fraction]) -> list[Fraction]:
    """Per entry: keep (byte < 86), scale by a simple factor, or a fresh number (0 allowed)."""
    out = []
    for v in true:
        b = dec.byte()
        if b < 86:
            out.append(v)
        elif b < 171 and v > 0:
            out.append(v * _SCALE[(b - 86) % len(_SCALE)])
        else:
            out.append(dec.t_dem[(b * 7) % 256])
    return out


def _force_change(new: list[Fraction], true: Sequence[Fraction]) -> list[Fraction]:
    if list(new) == list(true):
        i = next((r for r, v in enumerate(true) if v > 0), 0)
        new = list(new)
        new[i] = true[i] * 2 if true[i] > 0 else Fraction(1)
    return new



def report_at(dec: Decoder, env: Environment, j: int, base: int, Rm: int) -> Report:
    """Demand report of ``j`` from the fixed block at ``base`` (``Rm`` computational entries, then
    external ones): per entry keep, scale by a simple factor, or a fresh number; never the truth."""
    dec.pos = base
    d = _decode_report(dec, env.demand[j])
    dec.pos = base + Rm
    e = _decode_report(dec, env.external_demand[j])
    if d == list(env.demand[j]) and e == list(env.external_demand[j]) and \
            not any(jj == j for jj, _ in env.server_demand):
        d = _force_change(d, env.demand[j])
    return Report(j, demand=tuple(d), external_demand=tuple(e) if env.n_external else None)


def eligible_flip(env: Environment, j: int, flips: Sequence[bool]) -> Report:
    """``j`` reports its eligible set with the flagged servers flipped (server 1 if none is)."""
    new = frozenset(s for s in range(env.n_servers) if (s in env.eligible[j]) != flips[s])
    if new == env.eligible[j]:
        new = env.eligible[j] ^ {0}
    return Report(j, eligible=frozenset(new))


def task_report(env: Environment, j: int, b: int, dom: Domain) -> Report:
    """``j`` reports another task bound read from byte ``b`` (``>= 224``: unbounded)."""
    t: Optional[Fraction] = None if b >= 224 else Decoder(b"", dom).t_nonneg[b]
    if t == env.tasks[j]:
        t = None if t is not None else Fraction(1)
    return Report(j, tasks=t)


def deviation_bytes(kind: str, dom: Domain) -> int:
    """Bytes of the fixed deviation layout of ``kind`` (``Hints.deviation``) for the domain."""
    Jm, Sm, Rm, Km = max_shape(dom)
    return {"none": 0, "demand": 1 + Rm + Km, "eligible": 1 + Sm, "tasks": 2, "coalition": 1 + Jm + Jm * (Rm + Km),
            "leave": 1}[kind]


def decode_deviation(kind: str, env: Environment, data: bytes, dom: Domain, shift: int = 0) -> Optional[Deviation]:
    """The deviation of ``kind`` a byte string stands for (``None`` for ``"none"``; fixed layout).  The
    deviating user of a one-user kind (or the leaver) is ``(byte 0 + shift) mod users`` (see
    ``draw.batches``: the ``i``-th deviation of a batch reads the first one's byte 0 with ``shift = i``)."""
    Jm, Sm, Rm, Km = max_shape(dom)
    dec = Decoder(data, dom)
    J = env.n_users
    if kind in ("demand", "eligible", "tasks"):
        j = (dec.at(0) + shift) % J
        if kind == "eligible":
            rep = eligible_flip(env, j, [dec.at(1 + s) >= 128 for s in range(env.n_servers)])
        elif kind == "tasks":
            rep = task_report(env, j, dec.at(1), dom)
        else:
            rep = report_at(dec, env, j, 1, Rm)
        return Deviation("misreport", (rep,))
    if kind == "coalition":
        size = 2 + dec.at(0) % max(1, min(3, J) - 1)
        order = sorted(range(J), key=lambda j: (dec.at(1 + j), j))
        members = sorted(order[:size])
        return Deviation("misreport", tuple(report_at(dec, env, j, 1 + Jm + j * (Rm + Km), Rm) for j in members))
    if kind == "leave":
        return Deviation("leave", leave=((dec.at(0) + shift) % J,))
    return None
