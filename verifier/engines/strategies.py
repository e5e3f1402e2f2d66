"""Public Hypothesis strategies: environments (inside a mechanism's ``Setting``) and deviations.

Everything here is importable by users::

    from hypothesis import given
    from mechanisms import get
    from verifier.engines.strategies import environments, cases

    @given(environments(get("tsf").setting, max_users=3))
    def test_my_property(env): ...

    @given(cases(get("cru").setting, "sp", "demand"))      # (environment, deviation) pairs
    def test_sp(case): env, deviation = case; ...

Numbers are exact ``Fraction``s: small integers and simple rationals ``p/q`` (``q`` from
``Domain.denominators``) that shrink toward small integers; exact zeros (zero demands, zero capacities,
zero task bounds) are drawn on purpose -- boundary cases the papers do not exclude.  Shapes shrink toward
the smallest allowed (fewest users, servers, resources, external resources).

Every generated environment is VALID (``mechverify.model`` rejects some; docs/model.md): a user whose
demand at some server is all zero and that has neither a positive external demand nor a task bound gets
demand 1 on its first resource (a deterministic repair, so shrinking stays stable).

Speed: Hypothesis costs about 0.3 ms per primitive draw here, so an environment is drawn as its shape
(four integers) plus ONE byte string, decoded field by field (``_Decoder``): byte 0 is always the
simplest choice (value 1, feature absent, demand kept), so shrinking bytes toward 0 shrinks numbers toward
small integers and removes features.  ``simple_rationals`` is the same number space as a stand-alone
strategy.

``Domain`` fixes the searched space (shapes, number ranges, features) and describes itself as a dict: a
verdict always states the domain that was searched.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any, Optional, Sequence

from hypothesis import assume
from hypothesis import strategies as st

from mechverify.model import Environment

__all__ = [
    "Domain", "domain_for", "narrow", "variant_possible", "simple_rationals", "environments",
    "environments_for", "demand_misreports", "eligible_misreports", "task_misreports", "coalition_misreports",
    "leaves", "deviations", "cases", "repair", "premise_strategy_notes",
]


# ---------------------------------------------------------------------- the domain
@dataclass(frozen=True)
class Domain:
    """The searched space: shapes, numbers, and which model features may appear.

    Feature flags can only *narrow* a mechanism's ``Setting`` (``domain_for`` intersects them)."""

    min_users: int = 1
    max_users: int = 3
    min_servers: int = 1
    max_servers: int = 3
    min_resources: int = 1
    max_resources: int = 3
    min_external: int = 0
    max_external: int = 1
    max_value: int = 10  # numbers in [0, max_value]
    denominators: tuple[int, ...] = (1, 2, 3, 4)
    placement: bool = True
    external: bool = True
    bounds: bool = True
    weights: bool = True
    server_demand: bool = True
    zero_demands: bool = True
    zero_capacities: bool = True
    require_bounds: bool = False  # at least one finite task bound (SI "bounded")
    all_bounded: bool = False  # every user has a task bound n_j > 0 (settings with requires_bounds, seed 003)

    def describe(self) -> dict[str, Any]:
        """The dict a verdict carries (JSON-ready)."""
        return {
            "users": [self.min_users, self.max_users],
            "servers": [self.min_servers, self.max_servers],
            "resources": [self.min_resources, self.max_resources],
            "external": [self.min_external, self.max_external] if self.external else [0, 0],
            "numbers": f"p/q in [0, {self.max_value}], q in {{{', '.join(map(str, self.denominators))}}}",
            "features": {"placement": self.placement, "external": self.external, "bounds": self.bounds,
                         "weights": self.weights, "per_server_demand": self.server_demand,
                         "zero_demands": self.zero_demands, "zero_capacities": self.zero_capacities,
                         **({"at_least_one_bound": True} if self.require_bounds else {}),
                         **({"every_user_bounded": True} if self.all_bounded else {})},
        }


def domain_for(setting, **overrides: Any) -> Domain:
    """The default search domain of a mechanism's ``Setting`` (narrowed by ``overrides``)."""
    d = Domain(**{k: v for k, v in overrides.items() if k in Domain.__dataclass_fields__})
    kw: dict[str, Any] = {
        "placement": d.placement and setting.placement,
        "external": d.external and setting.external,
        "bounds": d.bounds and setting.bounds,
        "weights": d.weights and setting.weights,
        "server_demand": d.server_demand and setting.server_demand,
    }
    if setting.single_server:
        kw["min_servers"] = kw["max_servers"] = 1
    if getattr(setting, "positive_data", False):  # demands and capacities > 0 (seed 003 Sec. 2.1)
        kw["zero_demands"] = kw["zero_capacities"] = False
    if getattr(setting, "requires_bounds", False):  # every user has n_j > 0
        kw["all_bounded"] = True
    min_r = getattr(setting, "min_resources", 1)
    if min_r > 1:
        kw["min_resources"] = max(d.min_resources, min_r)
        kw["max_resources"] = max(d.max_resources, min_r)
    if not kw["external"]:
        kw["min_external"] = kw["max_external"] = 0
    if not setting.divisible:
        kw["max_value"] = min(d.max_value, 8)  # whole tasks are placed one by one: keep counts small
    return replace(d, **kw)


# ---------------------------------------------------------------------- numbers
@lru_cache(maxsize=64)
def _number_table(max_value: int, denominators: tuple[int, ...], zero_bytes: int) -> tuple[Fraction, ...]:
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


class _Decoder:
    """Reads a Hypothesis byte string field by field (missing bytes read as 0 = simplest)."""

    def __init__(self, data: bytes, dom: "Domain") -> None:
        self.data, self.pos, self.dom = data, 0, dom
        zero = 32 if dom.zero_demands else 0
        self.t_dem = _number_table(dom.max_value, dom.denominators, zero)
        self.t_cap = _number_table(dom.max_value, dom.denominators, 16 if dom.zero_capacities else 0)
        self.t_nonneg = _number_table(dom.max_value, dom.denominators, 16)
        self.t_pos = _number_table(dom.max_value, dom.denominators, 0)
        self.t_w = _weight_table(dom.denominators)

    def byte(self) -> int:
        b = self.data[self.pos] if self.pos < len(self.data) else 0
        self.pos += 1
        return b

    def at(self, pos: int) -> int:
        return self.data[pos] if 0 <= pos < len(self.data) else 0

    def demand(self) -> Fraction:
        return self.t_dem[self.byte()]

    def capacity(self) -> Fraction:
        return self.t_cap[self.byte()]

    def nonneg(self) -> Fraction:
        return self.t_nonneg[self.byte()]

    def optional(self, threshold: int = 171) -> Optional[int]:
        """``None`` (absent) for bytes below ``threshold``; else an index from 0."""
        b = self.byte()
        return None if b < threshold else b - threshold

    def weight(self) -> Fraction:
        i = self.optional()
        return Fraction(1) if i is None else self.t_w[i % len(self.t_w)]


def simple_rationals(min_value: Fraction | int = 0, max_value: Fraction | int = 10,
                     denominators: Sequence[int] = (1, 2, 3, 4), zeros: bool = False) -> st.SearchStrategy[Fraction]:
    """Simple numbers in ``[min_value, max_value]``: integers (half the time), then ``p/q`` with ``q`` in
    ``denominators``, exact 0 when ``zeros``.  Shrinks toward small integers (1 first)."""
    lo, hi = Fraction(min_value), Fraction(max_value)
    table = [v for v in _number_table(max(1, math.ceil(hi)), tuple(denominators), 16 if zeros else 0)
             if lo <= v <= hi or (zeros and v == 0)]
    if not table:
        return st.just(lo)
    return st.integers(0, len(table) - 1).map(lambda i: table[i])


# ---------------------------------------------------------------------- environments
def _max_shape(dom: Domain) -> tuple[int, int, int, int]:
    return (max(dom.min_users, dom.max_users), max(dom.min_servers, dom.max_servers),
            max(dom.min_resources, dom.max_resources),
            max(dom.min_external, dom.max_external) if dom.external else 0)


def _env_bytes(dom: Domain) -> int:
    """Bytes of the FIXED layout for the domain's largest shape: a field keeps its byte position when the
    shape shrinks, so shrinking the shape integer does not reinterpret the other bytes."""
    Jm, Sm, Rm, Km = _max_shape(dom)
    return Sm * Rm + Km + Jm * Rm + Jm * Km + 3 * Jm + 1 + Jm * (Rm + 2) + 1


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
    Jm, Sm, Rm, Km = _max_shape(dom)
    dec = _Decoder(data, dom)
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
    return Environment(
        resources=tuple(f"r{r + 1}" for r in range(R)), servers=tuple(f"s{s + 1}" for s in range(S)),
        capacity=capacity, users=tuple(f"u{j + 1}" for j in range(J)), demand=kw["demand"],
        external=tuple(f"e{k + 1}" for k in range(K)), external_capacity=ext_cap,
        external_demand=tuple(ext_dem), weight=tuple(weight), eligible=tuple(eligible), tasks=tuple(tasks),
        server_demand=kw["server_demand"])


def _inside(setting, env: Environment) -> None:
    """Never generate outside the mechanism's domain: constraints ``domain_for`` encodes are met by
    construction; any other constraint of the ``Setting`` rejects the draw (Hypothesis ``assume``)."""
    from mechanisms.registry import SettingError

    try:
        setting.check(env, "strategy")
    except SettingError:
        assume(False)


def _shape_count(dom: Domain) -> tuple[list[tuple[int, int]], int]:
    ranges = [(dom.min_users, max(dom.min_users, dom.max_users)),
              (dom.min_servers, max(dom.min_servers, dom.max_servers)),
              (dom.min_resources, max(dom.min_resources, dom.max_resources)),
              (dom.min_external, max(dom.min_external, dom.max_external)) if dom.external else (0, 0)]
    n = 1
    for lo, hi in ranges:
        n *= hi - lo + 1
    return ranges, n


def _shape(index: int, dom: Domain) -> tuple[int, int, int, int]:
    """Mixed-radix decoding of one integer (users most significant): index 0 is the smallest shape, so
    shrinking the integer shrinks the shape."""
    ranges, _ = _shape_count(dom)
    out = []
    for lo, hi in reversed(ranges):
        size = hi - lo + 1
        out.append(lo + index % size)
        index //= size
    J, S, R, K = reversed(out)
    return J, S, R, K


@st.composite
def _environments(draw, setting, dom: Domain, dominant: Optional[str]) -> Environment:
    J, S, R, K = _shape(draw(st.integers(0, _shape_count(dom)[1] - 1)), dom)
    n = _env_bytes(dom)
    data = draw(st.binary(min_size=n, max_size=n))
    env = decode_environment(dom, J, S, R, K, data, dominant)
    _inside(setting, env)
    return env


def environments(setting=None, domain: Optional[Domain] = None, *, dominant: Optional[str] = None,
                 **shape: Any) -> st.SearchStrategy[Environment]:
    """Valid environments inside ``setting`` (a ``mechanisms.Setting``; ``None`` = the whole model).

    ``domain`` (or keyword overrides such as ``max_users=3``) bounds shapes and numbers.  ``dominant``
    biases toward the bottleneck-fairness premise: ``"global"`` (resource 1 is every user's global
    dominant resource) or ``"per-server"`` (resource 1 is dominant for every user at every server)."""
    if setting is None:
        from mechanisms.registry import Setting

        setting = Setting(placement=True, external=True, bounds=True, weights=True, server_demand=True)
    if domain is None:
        dom = domain_for(setting, **shape)
    else:
        dom = replace(domain, **shape) if shape else domain
    return _environments(setting, dom, dominant)


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


def premise_strategy_notes() -> dict[str, str]:
    return {"bf": "each user's demand of r1 raised so that r1 is dominant (the BF premise); instances where "
                  "the premise still fails are skipped",
            "srf": "one resource, no external resources, no per-server demands",
            "single-server-drf": "one server",
            "si/external": "at least one external resource",
            "si/bounded": "at least one finite task bound"}


# ---------------------------------------------------------------------- deviations
def _decode_report(dec: _Decoder, true: Sequence[Fraction]) -> list[Fraction]:
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


def _demand_report(env: Environment, j: int, dec: _Decoder):
    from ..properties.base import Report

    d = _decode_report(dec, env.demand[j])
    e = _decode_report(dec, env.external_demand[j])
    if d == list(env.demand[j]) and e == list(env.external_demand[j]) and \
            not any(jj == j for jj, _ in env.server_demand):
        d = _force_change(d, env.demand[j])
    return Report(j, demand=tuple(d), external_demand=tuple(e) if env.n_external else None)


@st.composite
def _demand_dev(draw, env: Environment, dom: Domain, user: Optional[int]):
    from ..properties.base import Deviation

    j = user if user is not None else draw(st.integers(0, env.n_users - 1))
    data = draw(st.binary(min_size=env.n_resources + env.n_external, max_size=env.n_resources + env.n_external))
    return Deviation("misreport", (_demand_report(env, j, _Decoder(data, dom)),))


def demand_misreports(env: Environment, domain: Optional[Domain] = None, user: Optional[int] = None):
    """SP ``demand`` deviations of one user: each demand entry (computational and external) kept, scaled
    by a simple factor, or replaced (0 allowed); shrinks toward changing one entry."""
    return _demand_dev(env, domain or Domain(), user)


@st.composite
def _eligible_dev(draw, env: Environment, user: Optional[int]):
    from ..properties.base import Deviation, Report

    j = user if user is not None else draw(st.integers(0, env.n_users - 1))
    data = draw(st.binary(min_size=env.n_servers, max_size=env.n_servers))
    new = frozenset(s for s in range(env.n_servers) if (s in env.eligible[j]) != (data[s] >= 128))
    if new == env.eligible[j]:
        new = env.eligible[j] ^ {0}
    return Deviation("misreport", (Report(j, eligible=frozenset(new)),))


def eligible_misreports(env: Environment, user: Optional[int] = None):
    """SP ``eligible`` deviations: a different set of eligible servers (shrinks toward flipping server 1)."""
    return _eligible_dev(env, user)


@st.composite
def _task_dev(draw, env: Environment, dom: Domain, user: Optional[int]):
    from ..properties.base import Deviation, Report

    j = user if user is not None else draw(st.integers(0, env.n_users - 1))
    b = draw(st.integers(0, 255))
    t: Optional[Fraction] = None if b >= 224 else _Decoder(b"", dom).t_nonneg[b]
    if t == env.tasks[j]:
        t = None if t is not None else Fraction(1)
    return Deviation("misreport", (Report(j, tasks=t),))


def task_misreports(env: Environment, domain: Optional[Domain] = None, user: Optional[int] = None):
    """SP ``tasks`` deviations: another task bound (or unbounded)."""
    return _task_dev(env, domain or Domain(), user)


@st.composite
def _coalition_dev(draw, env: Environment, dom: Domain, max_size: int):
    from ..properties.base import Deviation

    size = draw(st.integers(2, max(2, min(max_size, env.n_users))))
    members = draw(st.lists(st.integers(0, env.n_users - 1), min_size=size, max_size=size, unique=True))
    n = size * (env.n_resources + env.n_external)
    dec = _Decoder(draw(st.binary(min_size=n, max_size=n)), dom)
    reps = [_demand_report(env, j, dec) for j in sorted(members)]
    return Deviation("misreport", tuple(reps))


def coalition_misreports(env: Environment, domain: Optional[Domain] = None, max_size: int = 3):
    """GSP deviations: 2..max_size distinct users each misreport demands."""
    return _coalition_dev(env, domain or Domain(), max_size)


def _leave(j: int):
    from ..properties.base import Deviation

    return Deviation("leave", leave=(j,))


def leaves(env: Environment):
    """PM deviations: one user leaves."""
    return st.integers(0, env.n_users - 1).map(_leave)


def deviations(prop: str, variant: str, env: Environment, domain: Optional[Domain] = None):
    """The deviation strategy of a property/variant (``st.none()`` for instance properties)."""
    if prop == "sp":
        if variant == "eligible":
            return eligible_misreports(env)
        if variant == "tasks":
            return task_misreports(env, domain)
        return demand_misreports(env, domain)
    if prop == "gsp":
        return coalition_misreports(env, domain) if env.n_users >= 2 else st.nothing()
    if prop == "pm":
        return leaves(env)
    return st.none()


# ---------------------------------------------------------------------- per property
def narrow(dom: Domain, prop: str, variant: str) -> tuple[Domain, Optional[str]]:
    """The domain a property/variant is searched on, and the BF premise bias (if any)."""
    dominant = None
    if prop in ("gsp", "pm", "ef"):
        dom = replace(dom, min_users=max(2, dom.min_users), max_users=max(2, dom.max_users))
    if prop == "srf":
        dom = replace(dom, min_resources=1, max_resources=1, min_external=0, max_external=0, external=False,
                      server_demand=False)
    if prop == "single-server-drf":
        dom = replace(dom, min_servers=1, max_servers=1, server_demand=False)
    if prop == "bf":
        dom = replace(dom, min_external=0, max_external=0, external=False, server_demand=False)
        dominant = variant
    if prop == "si" and variant == "external":
        dom = replace(dom, min_external=max(1, dom.min_external), max_external=max(1, dom.max_external))
    if prop == "si" and variant == "bounded":
        dom = replace(dom, require_bounds=True)
    return dom, dominant


def variant_possible(setting, prop: str, variant: str) -> Optional[str]:
    """``None`` if ``setting`` contains instances where ``prop``/``variant`` is a distinct check;
    otherwise why not (the property says: ``Property.variant_possible``)."""
    from ..properties import get_property

    return get_property(prop).variant_possible(setting, variant)


def environments_for(setting, prop: str, variant: str, domain: Optional[Domain] = None, **shape: Any):
    """Environments biased toward the premise of ``prop``/``variant`` (see ``premise_strategy_notes``)."""
    dom = domain if domain is not None else domain_for(setting, **shape)
    dom, dominant = narrow(dom, prop, variant)
    return _environments(setting, dom, dominant)


def _deviation_bytes(prop: str, variant: str, dom: Domain) -> int:
    Jm, Sm, Rm, Km = _max_shape(dom)
    if prop == "sp":
        return 1 + (Sm if variant == "eligible" else 1 if variant == "tasks" else Rm + Km)
    if prop == "gsp":
        return 1 + Jm + Jm * (Rm + Km)
    if prop == "pm":
        return 1
    return 0


def _report_at(dec: _Decoder, env: Environment, j: int, base: int, Rm: int):
    """Demand report of ``j`` from the fixed block at ``base`` (``Rm`` computational entries, then
    external ones); see ``_decode_report``."""
    from ..properties.base import Report

    dec.pos = base
    d = _decode_report(dec, env.demand[j])
    dec.pos = base + Rm
    e = _decode_report(dec, env.external_demand[j])
    if d == list(env.demand[j]) and e == list(env.external_demand[j]) and \
            not any(jj == j for jj, _ in env.server_demand):
        d = _force_change(d, env.demand[j])
    return Report(j, demand=tuple(d), external_demand=tuple(e) if env.n_external else None)


def decode_deviation(prop: str, variant: str, env: Environment, data: bytes, dom: Domain):
    """The deviation a byte string stands for (``None`` for instance properties; fixed layout)."""
    from ..properties.base import Deviation, Report

    Jm, Sm, Rm, Km = _max_shape(dom)
    dec = _Decoder(data, dom)
    J = env.n_users
    if prop == "sp":
        j = dec.at(0) % J
        if variant == "eligible":
            flips = [dec.at(1 + s) >= 128 for s in range(env.n_servers)]
            new = frozenset(s for s in range(env.n_servers) if (s in env.eligible[j]) != flips[s])
            if new == env.eligible[j]:
                new = env.eligible[j] ^ {0}
            return Deviation("misreport", (Report(j, eligible=frozenset(new)),))
        if variant == "tasks":
            b = dec.at(1)
            t: Optional[Fraction] = None if b >= 224 else dec.t_nonneg[b]
            if t == env.tasks[j]:
                t = None if t is not None else Fraction(1)
            return Deviation("misreport", (Report(j, tasks=t),))
        return Deviation("misreport", (_report_at(dec, env, j, 1, Rm),))
    if prop == "gsp":
        size = 2 + dec.at(0) % max(1, min(3, J) - 1)
        order = sorted(range(J), key=lambda j: (dec.at(1 + j), j))
        members = sorted(order[:size])
        return Deviation("misreport", tuple(_report_at(dec, env, j, 1 + Jm + j * (Rm + Km), Rm)
                                            for j in members))
    if prop == "pm":
        return Deviation("leave", leave=(dec.at(0) % J,))
    return None


@st.composite
def _cases(draw, setting, dom: Domain, dominant: Optional[str], prop: str, variant: str):
    # one integer (the shape) and one byte string (environment + deviation): few primitive draws keep
    # Hypothesis' per-example overhead low (see the module docstring)
    J, S, R, K = _shape(draw(st.integers(0, _shape_count(dom)[1] - 1)), dom)
    n_env = _env_bytes(dom)
    n = n_env + _deviation_bytes(prop, variant, dom)
    data = draw(st.binary(min_size=n, max_size=n))
    env = decode_environment(dom, J, S, R, K, data[:n_env], dominant)
    _inside(setting, env)
    return env, decode_deviation(prop, variant, env, data[n_env:], dom)


def cases(setting, prop: str, variant: str, domain: Optional[Domain] = None, **shape: Any):
    """``(environment, deviation-or-None)`` pairs for one property/variant inside ``setting``."""
    dom = domain if domain is not None else domain_for(setting, **shape)
    dom_n, dominant = narrow(dom, prop, variant)
    return _cases(setting, dom_n, dominant, prop, variant)
