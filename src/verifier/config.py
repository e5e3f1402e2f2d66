"""THE run configuration: how a command runs, one immutable object for ``run``, ``check``, ``audit``, ``rates``
and the Python API (``mechverify.run``, ``mechverify.check``, ``assert_property``) alike.

It replaces the loose arguments every orchestrator used to take one by one (budget, deadline, seed, trials,
store, progress, executor, ...).  :meth:`RunConfig.start` turns the wall-clock ``budget`` into the command's
absolute ``deadline`` (``verifier.properties.budget``: a :func:`time.monotonic` value, or ``None``); from then
on the deadline travels with the configuration into every cell, every worker process (a worker gets the time
left as its share and makes its own deadline of it, the clocks of two machines being unrelated) and, through
``mechverify.deadline.scope``, every solve (LP, MIP, SMT).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .properties import budget as bud
from .store import DEFAULT_DIR

__all__ = ["RunConfig"]


@dataclass(frozen=True)
class RunConfig:
    """How a command runs.

    * ``budget``: wall-clock seconds for the whole command (``None``: no limit); ``deadline``: the absolute
      deadline (set by :meth:`start`, or an enclosing command's, whichever is earlier);
    * ``seed`` (the searches' and samplers' seed), ``trials`` (at most this many candidates per cell: a
      reproducible amount of work);
    * ``store``: where violations are stored (``None``: not stored, only minimised), ``keep_all``: store every
      one (not only the smallest per cell);
    * ``progress``: a line printer for long runs (``None``: quiet);
    * ``executor`` (``verifier.executors``: this process by default) and ``campaign`` (a resumable campaign
      directory, ``verifier.campaign.Campaign``): where and how cells run;
    * ``certify`` / ``certifier``: ask a certifier (default: the SMT layer) before searching;
    * ``command``: the command line recorded in a stored counterexample's provenance;
    * ``max_wait``: the starvation bound the searched executions declare (``None``: each its own, 0 when it
      declares none; ``run --max-wait``);
    * ``domain``: the search domain (``verifier.engines.strategies.Domain``; ``None``: the mechanism's
      setting's)."""

    budget: Optional[float] = None
    deadline: Optional[float] = None
    seed: int = 0
    trials: Optional[int] = None
    store: Optional[str] = DEFAULT_DIR
    keep_all: bool = False
    progress: Optional[Callable[[str], None]] = None
    executor: Any = None
    campaign: Any = None
    certify: bool = False
    certifier: Optional[Callable] = None
    command: Optional[str] = None
    domain: Any = None
    max_wait: Any = None

    def start(self) -> "RunConfig":
        """The configuration of a command starting now: its ``deadline`` is ``budget`` seconds from now (or
        the given deadline, when earlier)."""
        return dataclasses.replace(self, deadline=bud.earliest(bud.deadline_after(self.budget), self.deadline))

    def left(self) -> float:
        """Seconds left before the deadline (``inf`` without one)."""
        return bud.left(self.deadline)

    def but(self, **changes: Any) -> "RunConfig":
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def of(cls, **options: Any) -> "RunConfig":
        """A configuration from the Python API's keyword options (``budget``, ``seed``, ``trials``, ``store``,
        ``progress``, ...); an unknown option is a ``TypeError`` naming it."""
        fields = {f.name for f in dataclasses.fields(cls)}
        bad = sorted(set(options) - fields)
        if bad:
            raise TypeError(f"unexpected option{'s' if len(bad) > 1 else ''} {', '.join(bad)} "
                            f"(options: {', '.join(sorted(fields))})")
        return cls(**options)
