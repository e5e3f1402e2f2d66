"""Bounded enumeration by layers, smallest first: a layer whose size is at most ``per_layer`` is enumerated
EXHAUSTIVELY, a larger one is SAMPLED (``per_layer`` of its items, uniformly, by a generator seeded by the
seed and the layer's label: deterministic across processes).  The search over executions
(``verifier.engines.traces``) and the Kueue port's loop search (``mechanisms.ports.kueue.cycles``) both draw
their tiny cases this way, and both report each layer as exhaustive or sampled: "nothing found" is a claim
about exhaustive layers only.  (The Kueue search keeps its own draws for SAMPLED layers -- coordinates drawn
with replacement by a generator seeded by the layer's ``repr`` -- so that its sampled layers, and the findings
reported from them, stay what they were: ``layered``'s ``sample`` hook.)"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

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


def layered(layers: Iterable[tuple], per_layer: int, seed: int = 0,
            sample: Optional[Callable[[Any, Any, int, int], Sequence[Any]]] = None) -> Iterator[LayerDraw]:
    """``(label, items)`` layers, smallest first, as :class:`LayerDraw` (module docstring).  A layer may be
    ``(label, items, size)``: its size given (a layer too big for ``len``), its items then any iterable, walked
    only when the layer is exhaustive.  ``sample(label, items, size, per_layer)``: the items of a SAMPLED layer
    when the caller draws its own (default: ``per_layer`` distinct items by :func:`layer_rng`)."""
    for label, items, *given in layers:
        n = given[0] if given else len(items)
        if n <= per_layer:
            yield LayerDraw(label, True, n, items)
        elif sample is not None:
            yield LayerDraw(label, False, n, sample(label, items, n, per_layer))
        else:
            idx = sorted(layer_rng(seed, label).sample(range(n), per_layer))
            yield LayerDraw(label, False, n, [items[i] for i in idx])
