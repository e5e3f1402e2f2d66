"""The figures of ``rates`` with matplotlib (Agg backend, imported only here and only when plotting):

* per property/variant, the violation rate of every mechanism with its 95% Wilson band -- against the
  varied parameter when there are several parameter points (rate vs rho: seed 004 Figs. 3 and 4), else
  as bars with interval whiskers;
* per property/variant, the distribution of the property's measure per mechanism (box plots per
  parameter point; the mean of the measure clipped at its threshold as a line against the parameter when
  it varies -- seed 004's "average minimum restricted task ratio", Fig. 3, and average domination factor,
  Fig. 4).

Every figure is written as PNG and SVG (atomically, ``verifier.files``), small enough for a paper or a
repository.
"""
from __future__ import annotations

import io
import math
import os
import re
from typing import Optional

from ..files import atomic_write_bytes
from ..properties import get_property

__all__ = ["rate_figures", "varied_parameter"]

_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac"]
_MARKERS = "osD^v<>ph*"


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "mechverify", "font.size": 9})  # reproducible SVG ids
    return plt


def varied_parameter(points: list) -> Optional[str]:
    """The one numeric parameter whose value differs between the points (None: a single point or
    several varying together)."""
    if len(points) < 2:
        return None
    keys = [k for k in points[0] if all(k in p for p in points) and len({p[k] for p in points}) > 1]
    if len(keys) != 1:
        return None
    try:
        [float(p[keys[0]]) for p in points]
    except (TypeError, ValueError):
        return None
    return keys[0]


def _dodge(per: dict, param: str) -> float:
    """The sideways offset between mechanisms' points when a parameter varies (1.2% of its range each), so
    that mechanisms with equal values (e.g. several at rate 1) stay visible side by side."""
    xs = sorted({float(c.point[param]) for cs in per.values() for c in cs})
    return 0.012 * (xs[-1] - xs[0]) if len(xs) > 1 else 0.0


def _legend_outside(ax, n: int) -> None:
    """The legend right of the axes (inside, it covers the curves when there are many mechanisms)."""
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              ncol=1 if n <= 14 else 2, frameon=False)


def _wrap(text: str, width: int = 72) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def _save(fig, out_dir: str, stem: str) -> tuple[str, str]:
    paths = []
    for ext in ("png", "svg"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=130, bbox_inches="tight", metadata={"Date": None} if ext == "svg" else None)
        path = os.path.join(out_dir, f"{stem}.{ext}")
        atomic_write_bytes(path, buf.getvalue())
        paths.append(path)
    return paths[0], paths[1]


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _cells_of(rep):
    """{(property, variant): {mechanism: [cell per point, in point order]}}"""
    from ..rate_records import point_key

    order = {point_key(p): n for n, p in enumerate(rep.points)}
    out: dict = {}
    for c in rep.cells:
        out.setdefault((c.property, c.variant), {}).setdefault(c.mechanism, []).append(c)
    for per in out.values():
        for cells in per.values():
            cells.sort(key=lambda c: order[point_key(c.point)])
    return out


def rate_figures(rep, out_dir: str) -> list[tuple[str, str, str]]:
    """Write the figures of ``rep`` into ``out_dir``; ``[(caption, png path, svg path)]``."""
    plt = _plt()
    written = []
    param = varied_parameter(rep.points)
    for (prop_name, variant), per in _cells_of(rep).items():
        prop = get_property(prop_name)
        lower = any(c.deviations is not None for cs in per.values() for c in cs)
        label = f"{prop_name}/{variant}"
        # -- rates
        fig, ax = plt.subplots(figsize=(6.4 if param else 5.2, 3.4))
        if param:
            step = _dodge(per, param)
            for n, (mech, cells) in enumerate(per.items()):
                off = (n - (len(per) - 1) / 2) * step
                xs = [float(c.point[param]) + off for c in cells if c.evaluated]
                ys = [c.rate for c in cells if c.evaluated]
                lo = [c.ci95[0] for c in cells if c.evaluated]
                hi = [c.ci95[1] for c in cells if c.evaluated]
                col = _COLORS[n % len(_COLORS)]
                ax.plot(xs, ys, marker=_MARKERS[n % len(_MARKERS)], color=col, label=mech)
                ax.fill_between(xs, lo, hi, color=col, alpha=0.18, linewidth=0)
            ax.set_xlabel(param)
            ax.set_xticks(sorted({float(c.point[param]) for cs in per.values() for c in cs}))
        else:
            names = list(per)
            rates_ = [per[m][0].rate or 0.0 for m in names]
            # clipped at 0: a Wilson bound computed in floats may sit a rounding error beyond a rate of 0 or 1
            err = [[max(0.0, r - per[m][0].ci95[0]) for m, r in zip(names, rates_)],
                   [max(0.0, per[m][0].ci95[1] - r) for m, r in zip(names, rates_)]]
            ax.bar(range(len(names)), rates_, yerr=err, capsize=3,
                   color=[_COLORS[n % len(_COLORS)] for n in range(len(names))])
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_ylabel("violation rate" + (" (lower bound)" if lower else ""))
        ax.set_ylim(bottom=0)
        ax.set_title(f"{label}: violation rate, 95% Wilson interval ({rep.workload})", fontsize=9)
        if param:
            _legend_outside(ax, len(per))
        ax.grid(alpha=0.3)
        caption = (f"{label}: share of sampled instances of {rep.workload} where the exact re-check confirms a "
                   f"violation, with 95% Wilson intervals" + (" (a lower bound: K deviations per instance)"
                                                               if lower else "") +
                   ("; each mechanism's points are shifted slightly sideways so that equal values stay visible"
                    if param and len(per) > 1 else ""))
        png, svg = _save(fig, out_dir, f"rate_{_safe(label)}")
        plt.close(fig)
        written.append((caption, png, svg))
        # -- the measure
        fig, ax = plt.subplots(figsize=(6.4 if param else 5.2, 3.4))
        t = float(prop.measure.threshold)
        if param:
            step = _dodge(per, param)
            for n, (mech, cells) in enumerate(per.items()):
                off = (n - (len(per) - 1) / 2) * step
                pts = [(float(c.point[param]) + off, c.distribution().get("clipped_mean")) for c in cells]
                pts = [(x, y) for x, y in pts if y is not None]
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker=_MARKERS[n % len(_MARKERS)],
                        color=_COLORS[n % len(_COLORS)], label=mech)
            ax.set_xlabel(param)
            ax.set_xticks(sorted({float(c.point[param]) for cs in per.values() for c in cs}))
            ax.set_ylabel(f"mean of the measure clipped at {t:g}")
            _legend_outside(ax, len(per))
        else:
            names = list(per)
            data = []
            for m in names:
                vals = [v for v in per[m][0].measures if isinstance(v, float) and math.isfinite(v)]
                data.append(vals or [t])
            ax.boxplot(data, showfliers=True, flierprops={"markersize": 2})
            ax.set_xticks(range(1, len(names) + 1))
            ax.set_xticklabels(names, rotation=30, ha="right")
            ax.set_ylabel("measure")
        ax.axhline(t, color="#888", linestyle="--", linewidth=0.8)
        ax.set_title(_wrap(f"{label}: {prop.measure.meaning}"), fontsize=8)
        ax.grid(alpha=0.3)
        caption = (f"{label}: the property's measure ({prop.measure.meaning}; violated when "
                   f"{prop.measure.violated_when})" + ("; mean clipped at the threshold" if param else
                                                       "; box plots over the sampled instances"))
        png, svg = _save(fig, out_dir, f"measure_{_safe(label)}")
        plt.close(fig)
        written.append((caption, png, svg))
    return written
