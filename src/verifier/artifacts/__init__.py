"""Artifacts: the files the verifier writes so that anyone can replay a verdict later, as kinds with one
interface (``base.ArtifactKind``: recognise a file, replay it, report) and one :func:`replay` behind both
``python -m verifier replay`` (and ``verify-certificate``) and ``mechverify.replay``.

* ``counterexample`` -- stored counterexample files and directories of them (``verifier.store``);
* ``smt_export``     -- the SMT-LIB2 queries of a certified verdict and their ``certificate.json``
  (``certify`` / ``query --export DIR``; docs/z3.md, "Second solver and export");
* ``lp_certificate`` -- exact LP certificates (primal, dual, Farkas ray; ``check --certificates DIR``),
  checked without a solver (docs/certificates.md).

Every file's replay is a :class:`~verifier.results.ArtifactResult` (accepted 0, rejected 1, malformed 2: the
exit code it means); a batch is a :class:`Replay`.
"""
from __future__ import annotations

import os
from typing import Callable, Optional, Sequence

from ..results import ACCEPTED, ARTIFACT_STATUSES, MALFORMED, REJECTED, ArtifactResult
from .base import ArtifactKind, Replay, ReplayError
from .counterexample import COUNTEREXAMPLE
from .lp_certificate import LP_CERTIFICATE
from .smt_export import SMT_EXPORT

__all__ = ["ArtifactKind", "ArtifactResult", "Replay", "ReplayError", "KINDS", "kind_of", "replay", "ACCEPTED",
           "REJECTED", "MALFORMED", "ARTIFACT_STATUSES", "COUNTEREXAMPLE", "SMT_EXPORT", "LP_CERTIFICATE"]

#: every kind, in the order paths are matched against them: the first that recognises one of the paths takes
#: the batch (every path must then be its); counterexamples take whatever no other kind recognises
KINDS = (LP_CERTIFICATE, SMT_EXPORT, COUNTEREXAMPLE)


def kind_of(paths: Sequence[str]) -> ArtifactKind:
    """The kind of a batch: the first of :data:`KINDS` that recognises one of ``paths``, which must then
    recognise them all (:class:`ReplayError` otherwise); counterexamples when no other kind recognises any
    (directories are stores, and a file that is none of the kinds is reported by the counterexample replay)."""
    for kind in KINDS:
        if kind is COUNTEREXAMPLE:
            break
        mine = [p for p in paths if kind.recognise(p)]
        if mine:
            if len(mine) != len(paths):
                raise ReplayError(kind.mixed)
            return kind
    return COUNTEREXAMPLE


def replay(paths: Sequence[str], *, jobs: Optional[int] = None, kind: Optional[ArtifactKind] = None,
           on_result: Optional[Callable[[ArtifactResult], None]] = None) -> Replay:
    """Replay the artifact files ``paths`` (files or directories) against the current code: one kind per
    batch (``kind``, or :func:`kind_of`), every file in the kind's order; ``on_result`` sees each result as
    it is known (the command line prints it).  ``jobs``: solver processes (SMT exports; default: the CPU
    count).  Raises ``FileNotFoundError`` for a path that does not exist and :class:`ReplayError` for paths
    that mix kinds, a kind given no file or a negative ``jobs``; a file's content never raises (it is
    rejected or malformed)."""
    paths = [os.fspath(p) for p in paths]
    for p in paths:
        if not os.path.exists(p):
            raise FileNotFoundError(f"{p}: no such file or directory")
    if jobs is not None and jobs < 0:
        raise ReplayError(f"jobs: must be >= 0 (got {jobs})")
    kind = kind or kind_of(paths)
    out = Replay(kind)
    for r in kind.replay_files(kind.files(paths), jobs=jobs):
        out.results.append(r)
        if on_result is not None:
            on_result(r)
        if r.status == MALFORMED:
            break
    return out
