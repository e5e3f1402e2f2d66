"""The counterexample store -- the ONLY reader and writer of counterexample files: ``persist``
(minimise, then write), ``replay``, ``index``, ``load_witness``.  One exact JSON file per certified
violation, replayable.

Path: ``counterexamples/<mechanism>/<property>-<hash>.json`` where ``hash`` is the first 12 hex digits
of the SHA-256 of the canonical JSON of what identifies the counterexample (mechanism, property,
variant, environment, deviation, users).  Files are written atomically (``verifier.files``: an unnamed
file linked into place on Linux, else a temporary file, fsync, ``os.replace``), so a crash never leaves a
half-written file (nor, on Linux, a temporary one) and re-storing the same counterexample is idempotent.
Reports read stored files through :func:`read` (the text as written, its content, the witness and the
allocations rebuilt exactly).

``replay(path)`` re-verifies a file from scratch: it rebuilds the witness, runs the property's exact
re-check, and requires (1) the content hash to match the file name, (2) the violation to still hold,
and (3) every stored exact number (gap, measure, utilities, allocations) to equal the recomputed one --
except an allocation's split over servers when its totals are equal (a mechanism's LP may have several
optimal splits, and another LP solver may return another one); the message then says so.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from mechverify.version import __version__
from mechverify.allocation import Allocation
from mechverify.execution import is_execution, parse_execution
from mechverify.trace_deviations import trace_deviation_from_dict
from mechverify.instances import loads_instance, parse_environment
from mechverify.numbers import InstanceError, json_number, to_fraction

from .properties import Deviation, Witness, get_property
from .claims import claim_record
from .files import atomic_write_json
from .properties.base import Certificate
from .results import ACCEPTED, REJECTED, ArtifactResult

SCHEMA = "mechverify.counterexample/1"
DEFAULT_DIR = "counterexamples"

__all__ = ["certificate_to_dict", "persist", "Persisted", "replay", "identity_hash", "index", "load",
           "load_witness", "read", "StoredFile", "find_files"]


_num = json_number


def identity(d: dict[str, Any]) -> dict[str, Any]:
    """What identifies a counterexample: mechanism, property, variant, environment, deviation, users."""
    return {k: d[k] for k in ("mechanism", "property", "variant", "environment", "deviation", "users")}


def identity_hash(d: dict[str, Any]) -> str:
    """First 12 hex digits of the SHA-256 of the canonical JSON of :func:`identity`."""
    canon = json.dumps(identity(d), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:12]


def certificate_to_dict(cert: Certificate, provenance: dict[str, Any],
                        minimality: Optional[dict[str, Any]] = None, claim: Optional[dict] = None) -> dict[str, Any]:
    """The file content of a certificate: identity, exact numbers, provenance, minimality, claim."""
    w = cert.witness
    env = w.env
    d: dict[str, Any] = {
        "schema": SCHEMA,
        "mechanism": w.mechanism,
        "property": w.property,
        "variant": w.variant,
        # a property over executions: the trace (the instance fields and its events)
        "environment": w.execution.to_dict() if w.execution is not None else env.to_dict(),
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
        **({"kind": "crash", "exception": cert.exception} if cert.exception else {}),
        **({"as_written": {"tolerance": cert.as_written["tolerance"],
                           "relative_margin": _num(cert.as_written["relative_margin"])}} if cert.as_written else {}),
        "utilities": {k: _num(v) for k, v in cert.utilities.items()},
        "allocations": {k: {"environment": "deviation" if (w.deviation is not None and a.env != env) else "true",
                            "tasks": [[_num(v) for v in row] for row in a.x],
                            "totals": [_num(v) for v in a.totals()],
                            "exact": a.exact}
                        for k, a in cert.allocations.items()},
        "provenance": dict(provenance, mechverify=__version__),
        "minimality": minimality or {"status": "not minimised"},
    })
    if w.execution is not None:
        d["step"] = w.step
    return d


@dataclass
class Persisted:
    """What :func:`persist` did: the (minimised) certificate, its minimality record, and where it is."""

    certificate: Certificate
    minimality: dict
    path: Optional[str] = None  # None when nothing was written (no store directory)
    new: bool = False  # a file was written (False: the same counterexample was already stored)


def persist(cert: Certificate, mech=None, *, provenance: dict[str, Any], root: Optional[str] = DEFAULT_DIR,
            claims: Sequence = (), minimise: bool = True, minimize_budget: float = 15.0, domain=None,
            accept: Optional[Callable] = None, minimality: Optional[dict[str, Any]] = None,
            keep_all: bool = False, deadline: Optional[float] = None) -> Persisted:
    """THE store gate: minimise ``cert`` (unless ``minimise=False``: e.g. a paper's instance as printed,
    whose ``minimality`` record is given) while the exact violation persists, then write it under
    ``root`` (``None``: minimise only).  ``claims`` are the registered claims covering the cell
    (recorded with the file).

    One counterexample per (mechanism, property, variant, kind) -- kind ``seed`` (a paper's instance) or
    ``found`` --: a new one is written only if it is strictly smaller (:func:`size_key`) than every stored
    one of its cell and kind, and then replaces them; otherwise the smallest stored one (re-checked
    exactly) is returned.  ``keep_all`` keeps every one.  Writing is atomic, and a lock per mechanism
    directory makes concurrent writers (two processes on one store) take these decisions one at a time.
    ``deadline`` (``verifier.properties.budget``) ends minimisation: a violation that could not be
    minimised in time is still written, its ``minimality`` record saying so."""
    if minimise and not cert.minimise:  # each re-check of a smaller instance would take the time limit
        from .engines.minimize import size_of

        minimise = False
        minimality = {"status": "not minimised (a call that exceeds the time limit: stored as found)",
                      "one_minimal": False, "size": size_of(cert.witness.env)}
    if minimise:
        from .engines.minimize import minimize

        cert, minimality = minimize(mech, cert, budget=minimize_budget, domain=domain, accept=accept,
                                    deadline=deadline)
    minimality = minimality or {"status": "not minimised"}
    out = Persisted(cert, minimality)
    if not root:
        return out
    if mech is not None and getattr(mech, "reference", ""):  # a user's mechanism: how to load it again
        from mechverify.deadline import call_limit

        provenance = dict(provenance, mechanism_reference=mech.reference, source_sha256=mech.source_hash,
                          tolerance=mech.tolerance, call_limit=mech.call_limit or call_limit())
        left, _, attr = mech.reference.rpartition(":")
        if left.endswith(".py") and os.path.isfile(left):  # found again from another working directory
            provenance["mechanism_file"] = f"{os.path.abspath(left)}:{attr}"
    prop = get_property(cert.witness.property)
    if prop.ref != prop.name:  # a user's property: how to load it again, and its source's hash
        provenance = dict(provenance, property_reference=prop.ref,
                          property_sha256=getattr(prop, "source_hash", ""))
        left, _, attr = prop.ref.rpartition(":")
        if left.endswith(".py") and os.path.isfile(left):  # found again from another working directory
            provenance["property_file"] = f"{os.path.abspath(left)}:{attr}"
    d = certificate_to_dict(cert, provenance, minimality, claim_record(claims))
    directory = os.path.join(root, d["mechanism"])
    out.path = os.path.join(directory, f"{d['id']}.json")
    with _locked(directory):
        if os.path.exists(out.path):
            return out
        same = [] if keep_all else _same_cell(directory, d)
        if same:
            best_key, best = min(same)
            if best_key <= size_key(d) and mech is not None:
                kept = _rechecked(best, mech)
                if kept is not None:
                    out.path, out.certificate = best, kept
                    out.minimality = load(best).get("minimality", out.minimality)
                    return out
        atomic_write_json(out.path, d)
        out.new = True
        new_key = size_key(d)
        for key, old in same:  # superseded by a strictly smaller counterexample of the same cell and kind
            if key > new_key:
                os.unlink(old)
    return out


def size_key(d: dict[str, Any]) -> tuple:
    """How big a stored counterexample is: users, servers, resources, external resources, then the
    largest denominator and number (smaller is simpler)."""
    env = d["environment"]
    if is_execution(env):  # a trace: fewest events first (engines.traces.size_of_execution)
        from .engines.traces import size_of_execution

        return size_of_execution(parse_execution(env))
    nums = [Fraction(v) for s in env["servers"] for v in s["capacity"]] + \
           [Fraction(v) for u in env["users"] for v in u["demand"]]
    return (0, len(env["users"]), len(env["servers"]), len(env["resources"]), len(env.get("external", [])),
            max([v.denominator for v in nums] + [1]), max([abs(v) for v in nums] + [Fraction(0)]))


def _kind(d: dict[str, Any]) -> str:
    return "seed" if (d.get("provenance") or {}).get("kind") == "seed" else "found"


def _same_cell(directory: str, d: dict[str, Any]) -> list[tuple[tuple, str]]:
    """``(size_key, path)`` of the stored files of ``d``'s cell and kind (unreadable files are skipped)."""
    out = []
    if not os.path.isdir(directory):
        return out
    for f in sorted(os.listdir(directory)):
        if not f.endswith(".json") or f.startswith("."):
            continue
        path = os.path.join(directory, f)
        try:
            other = load(path)
            if (other["property"], other["variant"]) == (d["property"], d["variant"]) and _kind(other) == _kind(d):
                out.append((size_key(other), path))
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue
    return out


def _rechecked(path: str, mech) -> Optional[Certificate]:
    """The certificate a stored file re-derives exactly now (None if it no longer does)."""
    try:
        d = load(path)
        return _property_of(d)[0].recheck(mech, witness_from(d))
    except Exception:  # noqa: BLE001 - a file that does not re-check is not kept in preference
        return None


@contextlib.contextmanager
def _locked(directory: str):
    """An exclusive POSIX ``flock`` on ``directory`` itself (no lock file): one writer decides at a time."""
    os.makedirs(directory, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: atomic writes still hold
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@dataclass(frozen=True)
class StoredFile:
    """A stored counterexample file as read back (:func:`read`): its text as written and its content."""

    path: str
    text: str
    data: dict

    def witness(self) -> Witness:
        """The witness it records (:func:`witness_from`)."""
        return witness_from(self.data)

    def allocations(self) -> dict[str, Allocation]:
        """The allocations it records, rebuilt from their stored numbers (exact ones exactly), each on its
        environment: the true one, or the one the deviation reports."""
        d = self.data
        env = parse_environment(d["environment"])
        dev = Deviation.from_dict(d.get("deviation"), env)
        out = {}
        for name, a in (d.get("allocations") or {}).items():
            aenv = dev.apply(env) if (dev is not None and a.get("environment") == "deviation") else env
            conv = (lambda v: to_fraction(v, "tasks")) if a.get("exact") else float
            out[name] = Allocation(aenv, tuple(tuple(conv(v) for v in row) for row in a["tasks"]), d["mechanism"],
                                   bool(a.get("exact")))
        return out


def read(path: str) -> StoredFile:
    """A stored counterexample file, read with the instance format's hardening (size cap, nesting limit,
    no duplicate keys; ``InstanceError``, a ``ValueError``, names the file) -- ``OSError`` when it cannot
    be read."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    return StoredFile(path, text, loads_instance(text, path))


def load(path: str) -> dict[str, Any]:
    """A stored counterexample file's content as a dict (:func:`read`)."""
    return read(path).data


def load_witness(path: str) -> Witness:
    """The witness (true environment, deviation, users) a stored counterexample file records."""
    return witness_from(load(path))


def index(root: Optional[str]) -> dict[tuple[str, str, str], list[str]]:
    """Stored files by ``(mechanism, property, variant)``; unreadable files are left out."""
    idx: dict[tuple[str, str, str], list[str]] = {}
    if not root or not os.path.isdir(root):
        return idx
    for path in find_files([root]):
        try:
            d = load(path)
            idx.setdefault((d["mechanism"], d["property"], d["variant"]), []).append(path)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return idx


def witness_from(d: dict[str, Any]) -> Witness:
    """Rebuild the witness of a stored counterexample dict (a trace's too: its execution, step and misreport;
    its ``env`` is every user it ever has -- the exact replay recomputes the failing step's)."""
    if is_execution(d["environment"]):
        from mechanisms.core.mechanism import everyone

        ex = parse_execution(d["environment"])
        dev = None if d.get("deviation") is None else trace_deviation_from_dict(d["deviation"], ex)
        env = everyone(ex)
        raw = d["users"]
        if not isinstance(raw, list) or not all(isinstance(u, str) and u in ex.user_names for u in raw):
            raise InstanceError(f"users: expected a list of user names of the execution, got {repr(raw)[:60]}")
        step = d.get("step")
        if step is not None and (not isinstance(step, int) or isinstance(step, bool) or step < 0):
            raise InstanceError(f"step: expected a step index >= 0 or null, got {repr(step)[:40]}")
        return Witness(d["property"], d["variant"], d["mechanism"], env, dev, None,
                       tuple(env.users.index(u) for u in raw if env is not None and u in env.users),
                       execution=ex, step=step)
    env = parse_environment(d["environment"])
    dev = Deviation.from_dict(d["deviation"], env)
    raw = d["users"]
    if not isinstance(raw, list) or not all(isinstance(u, str) and u in env.users for u in raw):
        raise InstanceError(f"users: expected a list of user names of the environment, got {repr(raw)[:60]}")
    users = tuple(env.users.index(u) for u in raw)
    return Witness(d["property"], d["variant"], d["mechanism"], env, dev, None, users)


def _replayed(path: str, ok: bool, message: str) -> ArtifactResult:
    """A counterexample file's replay (kind ``counterexample``): accepted, or rejected with why -- a file that
    cannot be read back is rejected too (it no longer shows its violation; a replay goes on past it) -- and
    its report line."""
    return ArtifactResult("counterexample", path, ACCEPTED if ok else REJECTED, (message,),
                          (f"{'ok  ' if ok else 'FAIL'} {path}: {message}",))


def replay(path: str) -> ArtifactResult:
    """Re-verify a stored counterexample from scratch (see the module docstring)."""
    try:
        d = load(path)
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: absurdly nested JSON
        return _replayed(path, False, f"cannot read: {type(exc).__name__}: {str(exc)[:200]}")
    if not isinstance(d, dict):
        return _replayed(path, False, f"not a counterexample file (a JSON {type(d).__name__})")
    try:
        if d.get("schema") != SCHEMA:
            return _replayed(path, False, f"unknown schema {d.get('schema')!r}")
        expected_id = f"{d['property']}-{identity_hash(d)}"
        if d.get("id") != expected_id or not os.path.basename(path).startswith(expected_id):
            return _replayed(path, False, f"content does not match its id/name (expected {expected_id})")
        mech, changed = _mechanism_of(d)
        prop, prop_changed = _property_of(d)
        changed += prop_changed
        witness = witness_from(d)
        cert = prop.recheck(mech, witness)
    except _CannotLoad as exc:
        return _replayed(path, False, str(exc))
    except Exception as exc:  # replay must report, not crash
        return _replayed(path, False, f"error while re-checking: {type(exc).__name__}: {exc}")
    if cert is None:
        return _replayed(path, False, "no longer a violation (exact re-check failed)" + changed)
    fresh = certificate_to_dict(cert, d.get("provenance", {}), d.get("minimality"), d.get("claim"))
    for key in ("gap", "measure", "utilities", "allocations", "method"):
        if fresh[key] != d.get(key):
            if key == "allocations" and _another_split(cert, mech, fresh[key], d.get(key)):
                changed += (" [the split over servers differs from the stored one (both feasible, equal totals: "
                            "the mechanism's LP has several optimal splits); gap and utilities are equal]")
                continue
            return _replayed(path, False, f"stored {key} differs from the exact recomputation: "
                                             f"stored {json.dumps(d.get(key))[:200]}, recomputed {json.dumps(fresh[key])[:200]}")
    return _replayed(path, True, f"violation confirmed exactly (gap {fresh['gap']}): {fresh['summary']}{changed}")


def _another_split(cert: Any, mech: Any, fresh: dict, stored: Any) -> bool:
    """The stored allocations differ from the recomputed ones only in how users' tasks are split over
    servers: the same allocations, environments and exact task totals, and every stored split sums to
    its totals and passes the mechanism's own output check (``mechanisms.check_output``, exactly).  A
    mechanism whose LP has several optimal splits returns the one its LP solver finds, which another
    solver (or version) may not; the gap and the utilities are compared on their own, so the violation
    itself is the same."""
    from mechanisms.core.registry import MechanismOutputError, check_output

    if not isinstance(stored, dict) or stored.keys() != fresh.keys():
        return False
    for k, f in fresh.items():
        st = stored[k]
        if not (isinstance(st, dict) and f["exact"] is True and {**st, "tasks": None} == {**f, "tasks": None}):
            return False
        try:
            tasks = [[Fraction(v) for v in row] for row in st["tasks"]]
            totals = [Fraction(v) for v in st["totals"]]
        except (TypeError, ValueError, ZeroDivisionError):
            return False
        env = cert.allocations[k].env
        if len(tasks) != env.n_users or any(len(row) != env.n_servers for row in tasks):
            return False
        if [sum(row, Fraction(0)) for row in tasks] != totals or any(v < 0 for row in tasks for v in row):
            return False
        try:  # the same feasibility gate as the mechanism's own output (its setting's chi(E))
            check_output(mech, env, Allocation(env, tuple(map(tuple, tasks)), mech.name, True, {}))
        except MechanismOutputError:
            return False
    return True


class _CannotLoad(Exception):
    """A user's mechanism recorded in a stored file cannot be loaded now."""


def _by_reference(d: dict[str, Any], kind: str, name_field: str, load: Callable[[str], Any], digest_of):
    """What a stored file names (a ``kind``: "mechanism" or "property") and a note when its recorded
    source has changed since: a user's is loaded through the reference it was stored with
    (``provenance.<kind>_reference``, else ``<kind>_file``), a built-in one by its name."""
    prov = d.get("provenance") if isinstance(d.get("provenance"), dict) else {}
    ref = prov.get(f"{kind}_reference")
    if not ref:
        return load(d[name_field]), ""
    try:
        obj = load(ref)
    except InstanceError as exc:
        alt = prov.get(f"{kind}_file")
        try:
            if not alt:
                raise
            obj = load(alt)
        except InstanceError:
            raise _CannotLoad(f"cannot load the {kind} it was stored with ({ref}): {exc}") from None
    was = prov.get("source_sha256" if kind == "mechanism" else f"{kind}_sha256")
    now = digest_of(obj)
    if was and now and was != now:  # (loading again reloads a changed file)
        return obj, f" [the source of the {kind} {ref} changed since it was stored: sha256 {was[:12]} -> {now[:12]}]"
    return obj, ""


def _mechanism_of(d: dict[str, Any]):
    """The mechanism a stored file names (:func:`_by_reference`), with the tolerance and per-call limit it
    was stored under."""
    import dataclasses

    from mechanisms import get

    mech, note = _by_reference(d, "mechanism", "mechanism", get, lambda m: m.source_hash)
    prov = d.get("provenance") if isinstance(d.get("provenance"), dict) else {}
    tol = prov.get("tolerance")
    if isinstance(tol, (int, float)) and not isinstance(tol, bool) and tol != mech.tolerance:
        mech = dataclasses.replace(mech, tolerance=float(tol))  # the tolerance the violation was stored under
    limit = prov.get("call_limit")
    if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit > 0:
        mech = dataclasses.replace(mech, call_limit=float(limit))  # the per-call time limit it was found under
    return mech, note


def _property_of(d: dict[str, Any]):
    """The property a stored file names (:func:`_by_reference`)."""
    return _by_reference(d, "property", "property", get_property, lambda p: getattr(p, "source_hash", ""))


def find_files(paths: list[str]) -> list[str]:
    """Every ``.json`` file under ``paths`` (files or directories), sorted."""
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
