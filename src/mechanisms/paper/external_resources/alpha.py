"""DRF-alpha / TSF-alpha (seed 004 Sec. 3.3, LP (7), Fig. 2 (b)-(c), Sec. 6.2): a FIXED external split.

Server ``s`` may use at most ``alpha[s][k] * c_er[k]`` of external resource ``k``: these per-server
rows replace chi(E)'s global external rows (``algorithm1(..., server_external_caps=...)``).
DRF-alpha equalises dominant shares (DRF-ER's normaliser); TSF-alpha equalises ``x_j / gamma^alpha_j``
with (7c)'s ``gamma^alpha_j`` (``mechanisms.paper.normalisers.tsf_alpha_normaliser``).  With task bounds the
same iteration as Algorithm 1 is run (documented choice).  A split is ``alpha_rule(env)`` -> ``S``
shares or an ``S x K`` matrix (:func:`resolve_alpha`); presets ``-eq``, ``-cpu``, ``-mem`` (Sec. 6.2).
How the cpu / memory resource is found, and the 0/0 split: docs/seed004-mechanisms.md, "DRF-alpha /
TSF-alpha".  Without a split they are not mechanisms, so there is no bare ``drf-alpha``.
"""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from mechverify.allocation import Allocation
from mechverify.model import Environment
from mechverify.numbers import InstanceError, to_fraction

from ..normalisers import pooled_normalisers, tsf_alpha_normaliser
from ...core.registry import Claim, SettingError, register
from .algorithm1 import algorithm1
from .setting import SEED004_SETTING, T2

__all__ = ["make_alpha_mechanism", "alpha_equal", "alpha_by_resource", "resolve_alpha", "AlphaRule"]


AlphaRule = Callable[[Environment], Sequence[Any]]


def alpha_equal(env: Environment) -> list:
    """``alpha_s = 1/|S|`` (DRF-eq / TSF-eq)."""
    return [Fraction(1, env.n_servers)] * env.n_servers


def _find_resource(env: Environment, names: Sequence[str], default_index: int, label: str, mech: str) -> int:
    low = [r.lower() for r in env.resources]
    for n in names:
        if n in low:
            return low.index(n)
    if default_index < env.n_resources:
        return default_index
    raise SettingError(f"resources: {mech} needs a {label} resource (named {' or '.join(map(repr, names))} "
                       f"or at index {default_index}); got {list(env.resources)}")


def alpha_by_resource(which: str) -> AlphaRule:
    """``alpha_s = c[s,r] / sum_s c[s,r]`` for ``r`` = cpu (``which='cpu'``) or memory (``'mem'``)."""
    if which not in ("cpu", "mem"):
        raise ValueError(f"which: expected 'cpu' or 'mem', got {which!r}")
    names, idx = (("cpu",), 0) if which == "cpu" else (("mem", "memory"), 1)

    def rule(env: Environment) -> list:
        r = _find_resource(env, names, idx, which, f"alpha split by {which}")
        total = sum((env.capacity[s][r] for s in range(env.n_servers)), Fraction(0))
        if total == 0:  # the proportional split is 0/0: nobody demanding r runs anyway; split equally
            return alpha_equal(env)
        return [env.capacity[s][r] / total for s in range(env.n_servers)]

    rule.__name__ = f"alpha_{which}"
    return rule


def resolve_alpha(env: Environment, alpha: Any) -> list[list[Fraction]]:
    """Validate a split: ``alpha[s]`` a number (all external resources) or ``K`` numbers; returns S x K."""
    raw = alpha(env) if callable(alpha) else alpha
    S, K = env.n_servers, env.n_external
    if not isinstance(raw, (list, tuple)) or len(raw) != S:
        raise InstanceError(f"alpha: expected {S} per-server shares (one per server), got {raw!r}")
    out: list[list[Fraction]] = []
    for s, a in enumerate(raw):
        if isinstance(a, (list, tuple)):
            if len(a) != K:
                raise InstanceError(f"alpha[{s}]: expected {K} shares (one per external resource), got {a!r}")
            row = [to_fraction(v, f"alpha[{s}][{k}]") for k, v in enumerate(a)]
        else:
            row = [to_fraction(a, f"alpha[{s}]")] * K
        for k, v in enumerate(row):
            if v < 0:
                raise InstanceError(f"alpha[{s}][{k}]: must be >= 0 (got {v})")
        out.append(row)
    for k in range(K):
        tot = sum((out[s][k] for s in range(S)), Fraction(0))
        if tot > 1:
            raise InstanceError(f"alpha: shares of external resource {env.external[k]!r} sum to {tot} > 1")
    return out


def make_alpha_mechanism(kind: str, alpha_rule: Any, name: Optional[str] = None) -> Callable[..., Allocation]:
    """DRF-alpha (``kind='drf'``) or TSF-alpha (``kind='tsf'``) with the split ``alpha_rule``.

    ``alpha_rule`` is ``env -> shares`` or a fixed list (see :func:`resolve_alpha`).  The returned
    function has the mechanism signature ``f(env, exact=False) -> Allocation``."""
    if kind not in ("drf", "tsf"):
        raise ValueError(f"kind: expected 'drf' or 'tsf', got {kind!r}")
    label = name or f"{kind}-alpha"

    def mechanism(env: Environment, exact: bool = False) -> Allocation:
        alpha = resolve_alpha(env, alpha_rule)
        if kind == "drf":
            norms = pooled_normalisers(env, exact, ext=True)
        else:
            norms = [tsf_alpha_normaliser(env, j, alpha) for j in range(env.n_users)]
        caps = [[alpha[s][k] * env.external_capacity[k] for k in range(env.n_external)]
                for s in range(env.n_servers)]
        return algorithm1(env, label, exact, norms, external=False, server_external_caps=caps,
                          info={"alpha": alpha})

    mechanism.__name__ = label.replace("-", "_")
    split = getattr(alpha_rule, "__name__", alpha_rule)
    mechanism.__doc__ = f"{kind.upper()}-alpha (seed 004 Sec. 3.3) with external split {split}."
    return mechanism


def _alpha_claims(kind: str) -> tuple:
    thm = "Thm 3" if kind == "drf" else "Thm 4"
    return (
        Claim("ef", "holds", T2, variant="literal"),
        Claim("po", "fails", f"{T2} / {thm}", variant="fractional"),
        Claim("sp", "holds", T2, variant="demand"),
        Claim("si", "fails", f"{T2} / {thm}", variant="external"),
    )


_PRESETS = {"eq": (alpha_equal, "alpha_s = 1/|S| (external resource reserved equally)"),
            "cpu": (alpha_by_resource("cpu"), "alpha_s proportional to the servers' cpu (resource 'cpu' or index 0)"),
            "mem": (alpha_by_resource("mem"), "alpha_s proportional to the servers' memory (resource 'mem'/'memory' "
                                              "or index 1)")}
for _kind, _title, _src in (("drf", "DRF-alpha: equalised dominant shares with a fixed external split",
                             "004 Sec. 3.3 (DRF-alpha), Sec. 6.2, Fig. 2(b)"),
                            ("tsf", "TSF-alpha: LP (7), equalised x_j/gamma^alpha_j with a fixed external split",
                             "004 Sec. 3.3 LP (7), Sec. 6.2, Fig. 2(c)")):
    for _p, (_rule, _what) in _PRESETS.items():
        _name = f"{_kind}-{_p}"
        _setting = replace(SEED004_SETTING, min_resources=2) if _p == "mem" else SEED004_SETTING
        register(_name, f"{_title}: {_what}", _setting, _alpha_claims(_kind), source=_src,
                 notes="Build other splits with mechanisms.paper.external_resources.make_alpha_mechanism(kind, alpha_rule).")(
            make_alpha_mechanism(_kind, _rule, _name))
