"""The artifact kind LP certificate: exact LP certificates (primal, dual multipliers, Farkas ray) of
``check``'s verdicts (``check --certificates DIR``) and their replay by the solver-free checker
(``replay FILE``, ``verify-certificate``): docs/certificates.md.  Besides the verdicts, the maximal common
level of a leximin mechanism (its z3 facet names the encoder and the normaliser) gets a ``level``
certificate.

Which verdicts rest on an LP is the properties' facet ``Property.lp_certificate`` (PO's fractional reading:
the domination LP); this module loops over it, never over names.  The certificates are made FIRST, within
the command's deadline, from the mechanism's exact allocation; ``check`` then runs in the time left, and a
verdict that agrees with a certificate's (``claim.verdict``) points to its file.  Files are written
atomically (``verifier.files``).  Checking them needs only ``mechverify.lp_certificate_checker`` (no solver);
:data:`LP_CERTIFICATE` is the kind (``verifier.artifacts``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Iterator, Optional, Sequence

from mechverify import lp_certificate_checker as checker
from mechverify.deadline import BudgetExhausted
from mechverify.lp import LPError
from mechverify.lp_certificates import level_certificate

from ..files import atomic_write_json, json_tag
from ..properties import Property, get_property
from ..properties import budget as bud
from ..results import ACCEPTED, MALFORMED, REJECTED, ArtifactResult
from .base import ArtifactKind, ReplayError

#: the z3 encoders (``Mechanism.z3.encoder``) of mechanisms whose allocation is the leximin of x_j / (w_j N_j)
#: over chi(E) (``mechanisms.paper.leximin.leximin_allocation`` or DRF's closed form of it)
LEXIMIN_ENCODERS = ("leximin", "drf-closed-form")

__all__ = ["LEXIMIN_ENCODERS", "Written", "write_certificates", "point_to", "is_lp_certificate", "certificate_files",
           "replay", "LP_CERTIFICATE"]


@dataclass
class Written:
    """What ``write_certificates`` did: ``{(property, variant): (path, claim verdict)}`` and why others
    were not written (one line each)."""
    files: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


def write_certificates(mech, env, properties, instance: str, directory: str, deadline: Optional[float],
                       budget: Optional[float]) -> Written:
    """For every (property, variant) of ``properties`` (names; None: the defaults) whose verdict rests on
    an LP, its certificate from ``mech``'s exact allocation on ``env``, written to ``directory`` as
    ``<mechanism>-<instance>-<property>-<variant>.json``; within ``deadline``."""
    from ..properties import DEFAULT_PROPERTIES

    out = Written()
    props = [get_property(n) for n in (properties or DEFAULT_PROPERTIES)]
    cells = [(p, v) for p in props for v in p.variants
             if not p.needs_deviation and type(p).lp_certificate is not Property.lp_certificate and not p.applicable(mech, env, v)]
    spec = mech.z3  # a leximin of x_j / (w_j N_j) whose N_j the checker re-derives: its level has a certificate
    level = spec is not None and spec.encoder in LEXIMIN_ENCODERS and spec.normaliser in checker.NORMALISERS
    if not cells and not level:
        return out
    stem = "stdin" if instance == "-" else os.path.splitext(os.path.basename(instance))[0]
    try:
        with bud.user_calls(mech, budget), bud.scope(deadline):
            alloc = mech(env, exact=True)
            if not alloc.exact:
                out.notes.append("no dual certificate: the mechanism gives no exact allocation here")
                return out
            for p, v in cells:
                cert, why = p.lp_certificate(mech, env, v, alloc)
                if cert is None:
                    if why:
                        out.notes.append(f"{p.name}/{v}: no dual certificate ({why})")
                    continue
                path = os.path.join(directory, f"{_safe(mech.name)}-{_safe(stem)}-{_safe(p.name)}-{_safe(v)}.json")
                cert["claim"]["instance_file"] = instance
                atomic_write_json(path, cert)
                out.files[(p.name, v)] = (path, cert["claim"].get("verdict"))
            if level:
                cert, why = level_certificate(env, alloc, mech.setting.feasibility, spec.normaliser,
                                              {"mechanism": mech.name})
                if cert is None:
                    out.notes.append(f"level: no certificate ({why})")
                else:
                    path = os.path.join(directory, f"{_safe(mech.name)}-{_safe(stem)}-level.json")
                    cert["claim"]["instance_file"] = instance
                    atomic_write_json(path, cert)
                    out.files[("level", "")] = (path, None)
    except BudgetExhausted:
        out.notes.append("dual certificates: " + bud.budget_note("not finished within the budget"))
    except LPError as exc:
        out.notes.append(f"dual certificates: solver trouble ({exc})")
    except Exception as exc:  # noqa: BLE001 - a user's mechanism failing is check's finding (property runs)
        if not mech.is_users:
            raise
        out.notes.append(f"dual certificates: the mechanism failed ({type(exc).__name__})")
    return out


def point_to(results, written: Written) -> None:
    """A verdict that agrees with its certificate's claim points to the file (``details["lp_certificate"]``)."""
    for r in results:
        got = written.files.get((r.property, r.variant))
        if got is not None and got[1] == r.verdict:
            r.details["lp_certificate"] = got[0]


def is_lp_certificate(path: str) -> bool:
    """Is ``path`` a JSON file whose ``format`` is an LP certificate's (``lp_certificate_checker.FORMAT``, any
    version)?"""
    return json_tag(path, "format").split("/")[0] == checker.FORMAT.split("/")[0]


def certificate_files(paths) -> list[str]:
    """Every ``*.json`` file of ``paths`` (files, or directories searched recursively), sorted."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            for dirpath, _, files in os.walk(p):
                out.extend(os.path.join(dirpath, f) for f in files if f.endswith(".json"))
        else:
            out.append(p)
    return sorted(out)


def _result(path: str, status: str, text: str, where: str = "") -> ArtifactResult:
    """A certificate's replay with its report line: ``ok`` and what it proves, ``REJECTED`` and the failing row
    or column, or (malformed) its one line on stderr naming the field."""
    if status == MALFORMED:
        report = f"error: malformed certificate {path}: {text}"
    elif status == REJECTED:
        report = f"REJECTED {path}: {where}: {text}"
    else:
        report = f"ok       {path}: {text}"
    return ArtifactResult(LP_CERTIFICATE.name, path, status, (f"{where}: {text}" if where else text,), (report,), where)


def _read(path: str):
    """``(the certificate, None)``, or ``(None, its malformed result)``: readable JSON whose claim's LP derives
    from its instance."""
    try:
        data = checker.load_file(path)
        checker.lp_of(data)  # the claim's LP derives from the instance: well formed
    except checker.Malformed as exc:
        return None, _result(path, MALFORMED, str(exc))
    except checker.Rejected:
        pass  # well formed; the check names the failing row
    return data, None


def _check(path: str, data) -> ArtifactResult:
    try:
        return _result(path, ACCEPTED, checker.check_certificate(data))
    except checker.Rejected as exc:
        return _result(path, REJECTED, exc.why, exc.where)
    except checker.Malformed as exc:
        return _result(path, MALFORMED, str(exc))


def replay(path: str) -> ArtifactResult:
    """Check the certificate file ``path`` with :mod:`mechverify.lp_certificate_checker`: accepted (what it
    proves), rejected (the failing row or column) or malformed (the field)."""
    data, bad = _read(path)
    return bad or _check(path, data)


class _LPCertificate(ArtifactKind):
    """Exact LP certificate files (``check --certificates DIR``, ``certificates/``).  A batch is all or
    nothing: every file is read first, then each is checked, and a malformed one (found either way) is the
    batch's only result -- one line, exit 2, nothing reported as checked."""

    name = "lp-certificate"
    mixed = "paths: LP certificates, exported certificates and counterexamples are replayed separately"

    def recognise(self, path: str) -> bool:
        return is_lp_certificate(path)

    def files(self, paths: Sequence[str]) -> list[str]:
        out = certificate_files(paths)
        if not out:
            raise ReplayError(f"paths: no certificate files (*.json) in {', '.join(paths)}")
        return out

    def replay(self, path: str, *, jobs: Optional[int] = None) -> ArtifactResult:
        return replay(path)

    def replay_files(self, files: Sequence[str], *, jobs: Optional[int] = None) -> Iterator[ArtifactResult]:
        loaded = []
        for f in files:
            data, bad = _read(f)
            if bad is not None:
                yield bad
                return
            loaded.append((f, data))
        out = []
        for f, data in loaded:
            r = _check(f, data)
            if r.status == MALFORMED:
                yield r
                return
            out.append(r)
        yield from out

    def summary(self, results: list) -> str:
        bad = sum(not r.ok for r in results)
        return f"{len(results) - bad} accepted, {bad} rejected"


#: the kind (``verifier.artifacts``)
LP_CERTIFICATE = _LPCertificate()
