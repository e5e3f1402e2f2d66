"""The artifact kind counterexample: stored counterexample files (``counterexamples/``, ``run``/``check
--store``), replayed exactly by the store (``verifier.store.replay``, the only reader of those files).

Directories are stores (every ``*.json`` under them); each file is replayed in turn and reported as it is
known; a file that cannot be read back is rejected (it no longer shows its violation) and the replay goes
on past it.
"""
from __future__ import annotations

import os
from typing import Optional, Sequence

from ..files import json_tag
from ..results import ArtifactResult
from ..store import SCHEMA, find_files
from ..store import replay as replay_file
from .base import ArtifactKind

__all__ = ["COUNTEREXAMPLE"]


class _Counterexample(ArtifactKind):
    name = "counterexample"
    mixed = ""  # never a mix: counterexamples take the paths no other kind recognises

    def recognise(self, path: str) -> bool:
        """A directory (a store), or a JSON file whose ``schema`` is a counterexample's.  (Replay reads every
        path no other kind recognises as a counterexample: its replay then says what is wrong with it.)"""
        return os.path.isdir(path) or json_tag(path, "schema").split("/")[0] == SCHEMA.split("/")[0]

    def files(self, paths: Sequence[str]) -> list[str]:
        return find_files(list(paths))

    def replay(self, path: str, *, jobs: Optional[int] = None) -> ArtifactResult:
        return replay_file(path)

    def summary(self, results: list) -> str:
        bad = sum(not r.ok for r in results)
        return f"{len(results) - bad} passed, {bad} failed"


#: the kind (``verifier.artifacts``)
COUNTEREXAMPLE = _Counterexample()
