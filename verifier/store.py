"""The counterexample store: one exact JSON file per certified violation, replayable.

Path: ``counterexamples/<mechanism>/<property>-<hash>.json`` where ``hash`` is the first 12 hex digits
of the SHA-256 of the canonical JSON of what identifies the counterexample (mechanism, property,
variant, environment, deviation, users).  Files are written atomically (temporary file in the same
directory, fsync, ``os.replace``), so a crash never leaves a half-written file and re-storing the
same counterexample is idempotent.

``replay(path)`` re-verifies a file from scratch: it rebuilds the witness, runs the property's exact
re-check, and requires (1) the content hash to match the file name, (2) the violation to still hold,
and (3) every stored exact number (gap, measure, utilities, allocations) to equal the recomputed one.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from mechverify import __version__
from mechverify.model import parse_environment
from mechverify.numbers import fmt_exact

from .properties import Deviation, Witness, get_property
from .properties.base import Certificate

SCHEMA = "mechverify.counterexample/1"
DEFAULT_DIR = "counterexamples"

__all__ = ["certificate_to_dict", "store", "replay", "ReplayResult", "identity_hash", "atomic_write_json",
           "atomic_write_text"]


def _num(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_num(a) for a in v]
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    if isinstance(v, (Fraction, int)):
        return fmt_exact(v)
    if isinstance(v, float):
        return fmt_exact(Fraction(v))
    return v


def identity(d: dict[str, Any]) -> dict[str, Any]:
    return {k: d[k] for k in ("mechanism", "property", "variant", "environment", "deviation", "users")}


def identity_hash(d: dict[str, Any]) -> str:
    canon = json.dumps(identity(d), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:12]


def certificate_to_dict(cert: Certificate, provenance: dict[str, Any],
                        minimality: Optional[dict[str, Any]] = None, claim: Optional[dict] = None) -> dict[str, Any]:
    w = cert.witness
    env = w.env
    d: dict[str, Any] = {
        "schema": SCHEMA,
        "mechanism": w.mechanism,
        "property": w.property,
        "variant": w.variant,
        "environment": env.to_dict(),
        "deviation": w.deviation.to_dict(env) if w.deviation is not None else None,
        "users": [env.users[j] for j in w.users],
    }
    d["id"] = f"{w.property}-{identity_hash(d)}"
    d.update({
        "claim": claim,
        "summary": cert.summary,
        "gap": _num(cert.gap),
        "measure": _num(cert.measure),
        "method": cert.method,
        "robust": cert.robust,
        "robust_note": cert.robust_note,
        "utilities": {k: _num(v) for k, v in cert.utilities.items()},
        "allocations": {k: {"environment": "deviation" if (w.deviation is not None and a.env != env) else "true",
                            "tasks": [[_num(v) for v in row] for row in a.x],
                            "totals": [_num(v) for v in a.totals()],
                            "exact": a.exact}
                        for k, a in cert.allocations.items()},
        "provenance": dict(provenance, mechverify=__version__),
        "minimality": minimality or {"status": "not minimised"},
    })
    return d


def atomic_write_text(path: str, text: str) -> None:
    """Write ``text`` atomically: temporary file in the same directory, fsync, ``os.replace``; the file
    gets ordinary permissions (mkstemp creates 0600)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_json(path: str, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=False) + "\n")


def store(cert: Certificate, provenance: dict[str, Any], root: str = DEFAULT_DIR,
          minimality: Optional[dict[str, Any]] = None, claim: Optional[dict] = None) -> str:
    """Write the certificate; returns its path (same content -> same path)."""
    d = certificate_to_dict(cert, provenance, minimality, claim)
    path = os.path.join(root, d["mechanism"], f"{d['id']}.json")
    atomic_write_json(path, d)
    return path


@dataclass
class ReplayResult:
    path: str
    ok: bool
    message: str


def _witness_from(d: dict[str, Any]) -> Witness:
    env = parse_environment(d["environment"])
    dev = Deviation.from_dict(d["deviation"], env)
    users = tuple(env.users.index(u) for u in d["users"])
    return Witness(d["property"], d["variant"], d["mechanism"], env, dev, None, users)


def replay(path: str) -> ReplayResult:
    from mechanisms import get

    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        return ReplayResult(path, False, f"cannot read: {exc}")
    try:
        if d.get("schema") != SCHEMA:
            return ReplayResult(path, False, f"unknown schema {d.get('schema')!r}")
        expected_id = f"{d['property']}-{identity_hash(d)}"
        if d.get("id") != expected_id or not os.path.basename(path).startswith(expected_id):
            return ReplayResult(path, False, f"content does not match its id/name (expected {expected_id})")
        mech = get(d["mechanism"])
        prop = get_property(d["property"])
        witness = _witness_from(d)
        cert = prop.recheck(mech, witness)
    except Exception as exc:  # replay must report, not crash
        return ReplayResult(path, False, f"error while re-checking: {type(exc).__name__}: {exc}")
    if cert is None:
        return ReplayResult(path, False, "no longer a violation (exact re-check failed)")
    fresh = certificate_to_dict(cert, d.get("provenance", {}), d.get("minimality"), d.get("claim"))
    for key in ("gap", "measure", "utilities", "allocations", "method"):
        if fresh[key] != d.get(key):
            return ReplayResult(path, False, f"stored {key} differs from the exact recomputation: "
                                             f"stored {json.dumps(d.get(key))[:200]}, recomputed {json.dumps(fresh[key])[:200]}")
    return ReplayResult(path, True, f"violation confirmed exactly (gap {fresh['gap']}): {fresh['summary']}")


def find_files(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                for f in sorted(files):
                    if f.endswith(".json") and not f.startswith("."):
                        out.append(os.path.join(root, f))
        else:
            out.append(p)
    return sorted(out)
