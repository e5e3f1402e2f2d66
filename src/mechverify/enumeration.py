"""Bounded enumeration by layers, smallest first: a layer whose size is at most ``per_layer`` is enumerated
EXHAUSTIVELY, a larger one is SAMPLED (``per_layer`` of its items, uniformly, by a generator seeded by the
seed and the layer's label: deterministic across processes).  The search over executions
(``verifier.engines.traces``) and the Kueue port's loop search (``mechanisms.ports.kueue.cycles``) both draw
their tiny cases this way, and both report each layer as exhaustive or sampled: "nothing found" is a claim
about exhaustive layers only."""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

__all__ = ["LayerDraw", "layered", "layer_rng"]


@dataclass(frozen=True)
class LayerDraw:
    """One layer as drawn: its ``label``, whether it is ``exhaustive``, its ``size`` and the ``items`` to try."""

    label: Any
    exhaustive: bool
    size: int
    items: Sequence[Any]

    def describe(self) -> str:
        return f"{self.label}: " + (f"exhaustive ({self.size})" if self.exhaustive else
                                    f"sampled {len(self.items)} of {self.size}")


def layer_rng(seed: int, label: Any) -> random.Random:
    """The generator a layer is sampled with: seeded by text (never Python's salted ``hash``)."""
    return random.Random(f"{seed}:{label}")


def layered(layers: Iterable[tuple[Any, Sequence[Any]]], per_layer: int, seed: int = 0) -> Iterator[LayerDraw]:
    """``(label, items)`` layers, smallest first, as :class:`LayerDraw` (module docstring)."""
    for label, items in layers:
        n = len(items)
        if n <= per_layer:
            yield LayerDraw(label, True, n, items)
        else:
            idx = sorted(layer_rng(seed, label).sample(range(n), per_layer))
            yield LayerDraw(label, False, n, [items[i] for i in idx])
