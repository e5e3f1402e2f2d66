"""Pieces every renderer shares: the searched domain and a violated cell's details in words."""
from __future__ import annotations

from ..engines.minimize import describe_size
from ..results import Result

__all__ = ["domain_text", "detail"]


def domain_text(d: dict) -> str:
    """A searched domain (``Domain.describe()``) in one line."""
    f = d.get("features", {})
    feats = [k.replace("_", " ") for k, v in f.items() if v]
    return (f"users {d['users'][0]}-{d['users'][1]}, servers {d['servers'][0]}-{d['servers'][1]}, "
            f"resources {d['resources'][0]}-{d['resources'][1]}, external {d['external'][0]}-{d['external'][1]}; "
            f"numbers {d['numbers']}; features: {', '.join(feats) or 'none'}")


def detail(r: Result) -> str:
    """The details line of a violated cell: size, minimality, time to first, summary."""
    if r.verdict != "violated":
        return ""
    bits = []
    if r.size:
        bits.append(describe_size(r.size))
    if r.minimality:
        bits.append(r.minimality.get("status", ""))
    if r.time_to_first is not None:
        bits.append(f"first exact counterexample after {r.time_to_first:.2f} s ({r.engine})")
    if r.certificate is not None:
        bits.append(r.certificate.summary)
    return "; ".join(b for b in bits if b)
