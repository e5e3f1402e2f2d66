"""The artifact protocol: what every kind of replayable file offers (:class:`ArtifactKind`), the replay of a
batch of one kind (:class:`Replay`), and the error of a replay that cannot start (:class:`ReplayError`).

A kind recognises its files, replays one (an :class:`~verifier.results.ArtifactResult`: accepted, rejected
or malformed, with the lines the command line prints for it), replays a batch in its own order, and sums a
batch up in one line.  The exit code of a batch is the largest of its files' (0 accepted, 1 rejected, 2
malformed); a malformed file ends the batch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional, Sequence

from ..results import MALFORMED, ArtifactResult

__all__ = ["ArtifactKind", "Replay", "ReplayError"]


class ReplayError(ValueError):
    """A replay that cannot start (one line): paths that mix kinds, no file of the kind, a bad argument."""


class ArtifactKind:
    """One kind of artifact file.  A kind sets ``name`` (the ``kind`` of its results), ``mixed`` (the one line
    when the paths mix it with another kind) and ``quiet_hides_accepted`` (``--quiet`` leaves out the lines of
    accepted files), and defines :meth:`recognise`, :meth:`replay` and :meth:`summary`; :meth:`files` and
    :meth:`replay_files` have defaults (the paths as given; each file replayed in turn)."""

    name: str = ""
    mixed: str = ""
    quiet_hides_accepted: bool = True

    def recognise(self, path: str) -> bool:
        """Is ``path`` (a file or a directory) one of this kind's?"""
        raise NotImplementedError

    def files(self, paths: Sequence[str]) -> list[str]:
        """The files ``paths`` name (directories searched where the kind takes them); :class:`ReplayError`
        when there is none and the kind needs one."""
        return list(paths)

    def replay(self, path: str, *, jobs: Optional[int] = None) -> ArtifactResult:
        """Replay one file against the current code (``jobs``: solver processes, where the kind runs any)."""
        raise NotImplementedError

    def replay_files(self, files: Sequence[str], *, jobs: Optional[int] = None) -> Iterator[ArtifactResult]:
        """The results of ``files``, in order, as each is known; a malformed one is the last."""
        for f in files:
            r = self.replay(f, jobs=jobs)
            yield r
            if r.status == MALFORMED:
                return

    def summary(self, results: Sequence[ArtifactResult]) -> str:
        """The last line of a batch that ran to its end."""
        raise NotImplementedError

    def shown(self, result: ArtifactResult, quiet: bool = False) -> tuple:
        """The stdout lines of ``result`` (none for a malformed file: its line goes to stderr)."""
        if result.status == MALFORMED or (quiet and result.ok and self.quiet_hides_accepted):
            return ()
        return result.report

    def __repr__(self) -> str:
        return f"<ArtifactKind {self.name}>"


@dataclass
class Replay:
    """The replay of a batch of one kind: its files' results in order (iterate, index, ``len``), the exit code
    ``python -m verifier replay`` returns for it, its summary line and, when a malformed file ended it, that
    file's one line (``error``)."""

    kind: ArtifactKind
    results: list = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 every file accepted, 1 one rejected, 2 a malformed file (which ended the batch)."""
        return max((r.exit_code for r in self.results), default=0)

    @property
    def ok(self) -> bool:
        """Every file accepted."""
        return self.exit_code == 0

    @property
    def error(self) -> Optional[str]:
        """The one line (stderr) of the malformed file that ended the batch, else None."""
        bad = [r for r in self.results if r.status == MALFORMED]
        return bad[0].report[0] if bad else None

    @property
    def summary(self) -> str:
        """The batch's last line (``105 passed, 0 failed``); "" when a malformed file ended it."""
        return "" if self.error is not None else self.kind.summary(self.results)

    def lines(self, quiet: bool = False) -> list[str]:
        """What ``python -m verifier replay`` prints on stdout (``quiet``: ``--quiet``)."""
        out = [line for r in self.results for line in self.kind.shown(r, quiet)]
        return out + ([self.summary] if self.summary else [])

    def __iter__(self) -> Iterator[ArtifactResult]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, i):
        return self.results[i]

    def __repr__(self) -> str:
        return f"<Replay {self.kind.name}: {self.summary or self.error}>"
