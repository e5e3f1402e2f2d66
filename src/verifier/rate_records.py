"""The records of ``rates`` (:mod:`verifier.rates`): a cell's counts and measures (:class:`CellRates`, with its
Wilson interval and the measure's distribution), the command's report (:class:`RatesReport`), and how sample
``i`` of a parameter point gets its generator (:func:`sample_rng`, :class:`_Stream`) -- what the renderers
and the workers share.
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .properties import get_property

__all__ = ["wilson", "point_key", "sample_rng", "CellRates", "RatesReport", "QUANTILES", "Z95"]

#: the quantiles of the measure every cell reports
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
#: z of a two-sided 95% interval (the normal quantile 0.975)
Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials (``(0, 1)`` for ``n = 0``)::

        centre = (k + z^2/2) / (n + z^2),   half = z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4)
    """
    if n <= 0:
        return 0.0, 1.0
    z2 = z * z
    centre = (k + z2 / 2) / (n + z2)
    half = z / (n + z2) * math.sqrt(k * (n - k) / n + z2 / 4)
    return max(0.0, centre - half), min(1.0, centre + half)


def point_key(point: dict) -> int:
    """A stable integer of a parameter point (the seed of its samples does not depend on which other
    points the command has)."""
    text = ",".join(f"{k}={point[k]!r}" for k in sorted(point))
    return zlib.crc32(text.encode("utf-8"))


def sample_rng(seed: int, point: dict, i: int) -> np.random.Generator:
    """The generator of instance ``i`` at ``point``: a counter-based Philox stream keyed by ``(seed, point)``
    at counter ``i`` (independent streams per sample, about half the cost of a ``SeedSequence`` per sample)."""
    return np.random.Generator(np.random.Philox(key=(seed << 32) | point_key(point), counter=[0, 0, 0, i]))


class _Stream:
    """:func:`sample_rng` for one ``(seed, point)`` without building a generator per sample: ONE Philox
    generator whose state is set to counter ``i`` (a fresh buffer), the same numbers as ``sample_rng(seed,
    point, i)`` at a seventh of the cost.  ``at(i)`` hands out that one generator: use it before the next."""

    def __init__(self, seed: int, point: dict) -> None:
        self._bits = np.random.Philox(key=(seed << 32) | point_key(point))
        self._gen = np.random.Generator(self._bits)
        state = self._bits.state
        self._key, self._buffer = state["state"]["key"], state["buffer"]

    def at(self, i: int) -> np.random.Generator:
        self._bits.state = {"bit_generator": "Philox", "buffer": self._buffer, "buffer_pos": 4, "has_uint32": 0,
                            "uinteger": 0, "state": {"counter": np.array([0, 0, 0, i], dtype=np.uint64),
                                                     "key": self._key}}
        return self._gen


# ------------------------------------------------------------------ the records
@dataclass
class CellRates:
    """One mechanism x property x variant at one parameter point."""

    mechanism: str
    property: str
    variant: str
    point: dict
    samples: int = 0  # instances drawn and handed to this cell
    violations: int = 0  # confirmed by the exact re-check
    rechecked: int = 0  # exact re-checks run (confirmed or not)
    not_applicable: dict = field(default_factory=dict)  # reason -> instances
    errors: dict = field(default_factory=dict)  # message -> instances
    unconfirmed: dict = field(default_factory=dict)  # why a float candidate is not counted -> instances
    measures: list = field(default_factory=list)  # the measure of every evaluated instance (floats)
    deviations: Optional[int] = None  # deviations tried per instance (deviation properties)
    first_violation: Optional[int] = None  # the index of the first violating sample (reproducible by seed)
    # the property's own code failed (a user's property: properties.base.PropertyFailure): message -> instances,
    # and the first such sample (reproducible by seed); neither evaluated nor counted
    property_failures: dict = field(default_factory=dict)
    first_property_failure: Optional[int] = None

    @property
    def key(self) -> tuple:
        return (self.mechanism, self.property, self.variant, point_key(self.point))

    @property
    def evaluated(self) -> int:
        """Instances the property was evaluated on."""
        return (self.samples - sum(self.not_applicable.values()) - sum(self.errors.values())
                - sum(self.property_failures.values()))

    @property
    def rate(self) -> Optional[float]:
        return self.violations / self.evaluated if self.evaluated > 0 else None

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson(self.violations, self.evaluated)

    def merge(self, other: "CellRates") -> None:
        """Add another chunk's counts (chunks are merged in sample order: measures stay in that order)."""
        self.samples += other.samples
        self.violations += other.violations
        self.rechecked += other.rechecked
        for mine, theirs in ((self.not_applicable, other.not_applicable), (self.errors, other.errors),
                             (self.unconfirmed, other.unconfirmed), (self.property_failures, other.property_failures)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        self.measures.extend(other.measures)
        if self.first_violation is None:
            self.first_violation = other.first_violation
        if self.first_property_failure is None:
            self.first_property_failure = other.first_property_failure

    def distribution(self) -> dict:
        """Mean, clipped mean (the measure clipped at the property's threshold: violations count by how
        much, satisfied instances as the threshold), quantiles, and how many measures were infinite."""
        prop = get_property(self.property)
        raw = np.asarray(self.measures, dtype=float)
        m = raw[~np.isnan(raw)]  # a measure the evaluation did not give (NaN) is counted apart, never averaged
        out: dict[str, Any] = {"n": int(m.size)}
        if raw.size > m.size:
            out["without_measure"] = int(raw.size - m.size)
        if not m.size:
            return out
        t = float(prop.measure.threshold)
        clipped = np.minimum(m, t) if prop.measure.direction == "<" else np.maximum(m, t)
        finite = m[np.isfinite(m)]
        out["mean"] = float(finite.mean()) if finite.size else None
        out["clipped_mean"] = float(clipped[np.isfinite(clipped)].mean()) if np.isfinite(clipped).any() else None
        out["infinite"] = int(m.size - finite.size)
        # linear interpolation between sample values; with infinite measures (a user with nothing envies) the
        # sample value itself, since interpolating between two infinities gives NaN
        how = "linear" if finite.size == m.size else "inverted_cdf"
        out["quantiles"] = {f"{q:g}": float(np.quantile(m, q, method=how)) for q in QUANTILES}
        out["min"], out["max"] = float(m.min()), float(m.max())
        return out


@dataclass
class RatesReport:
    """What :func:`rates` returns: the cells, the skipped ones, and how the samples were drawn."""

    workload: str
    title: str
    provenance: str
    mechanisms: list
    properties: list
    points: list  # parameter points, in order
    samples: int  # asked per point
    seed: int
    deviations: int
    cells: list  # CellRates
    skipped: list  # (mechanism, property, variant, why)
    done: dict = field(default_factory=dict)  # point_key -> samples drawn
    budget: Optional[float] = None
    stopped: bool = False  # the budget stopped the drawing
    interrupted: bool = False
    seconds: float = 0.0
    executor: str = ""

    @property
    def samples_done(self) -> int:
        return sum(self.done.values())

    def cell(self, mechanism: str, prop: str, variant: str, point: Optional[dict] = None) -> CellRates:
        """The cell of ``mechanism``/``prop``/``variant`` (at ``point``; the first point by default)."""
        for c in self.cells:
            if (c.mechanism, c.property, c.variant) == (mechanism, prop, variant) and \
                    (point is None or point_key(c.point) == point_key(point)):
                return c
        raise KeyError(f"{mechanism}/{prop}/{variant}")
