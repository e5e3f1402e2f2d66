"""The timeline of a run through an execution (matplotlib, Agg backend, imported only when drawing): each present
user's dominant share over time as a step function -- the largest share, over the resources (external ones
included), that its allocation takes of the PRESENT cluster's capacity -- or each queue's when the execution
has queues; the events as ticks on the time axis with short labels; the failing step shaded over
``[t, until)``; under a trace misreport, the deviator's share in the deviated run dashed.

The steps come from an exact re-run of the mechanism through the witnessed execution
(``mechanisms.core.time.execute``); shares are exact until they are converted to floats for drawing.
Figures are deterministic: fixed size, fixed SVG ids (``svg.hashsalt``), no date in the metadata.
"""
from __future__ import annotations

import io
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from mechverify.allocation import dominant_shares as alloc_dominant_shares

__all__ = ["Timeline", "Series", "dominant_shares", "timeline", "timeline_of_witness", "trace_steps", "draw",
           "to_svg", "to_png", "event_label", "FIGSIZE"]

FIGSIZE = (7.6, 3.4)  # inches; the plot area keeps its size whatever the legend holds (bbox_inches is not tight)
_AXES = (0.075, 0.13, 0.68, 0.60)  # the plot area in figure fractions: room above for the event labels
DODGE = 2.0  # points between the lines of the series, so that equal shares stay visible side by side
_LABEL_CHARS = 16  # an event label is cut to this many characters (it must fit above the plot area)
_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac"]
_HIGHLIGHT = "#e15759"
_MAX_SERIES = 10  # more lines than this are unreadable: the rest are listed as omitted
_RC = {"svg.hashsalt": "mechverify", "svg.fonttype": "none", "font.size": 8, "font.family": "DejaVu Sans"}


@dataclass(frozen=True)
class Series:
    """One line: ``name`` (a user or a queue), its segments ``(t, until, share)`` in floats (``share`` ``None``:
    absent), ``dashed``: the deviated run's."""

    name: str
    segments: tuple[tuple[float, float, Optional[float]], ...]
    dashed: bool = False


@dataclass
class Timeline:
    """What the figure draws (module docstring).  ``highlight``: ``(step, t, until)`` of the failing step in
    floats; ``events``: ``(t, label)`` in time order; ``by``: ``"user"`` or ``"queue"``."""

    unit: str
    horizon: float
    series: list[Series]
    events: list[tuple[float, str]]
    highlight: Optional[tuple[int, float, float]] = None
    by: str = "user"
    omitted: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------- the numbers
def dominant_shares(step: Any, by_queue: bool = False) -> dict[str, Any]:
    """Each present user's (``by_queue``: each queue's) dominant share in ``step``
    (``mechverify.allocation.dominant_shares`` of its allocation)."""
    return {} if step.alloc is None else alloc_dominant_shares(step.alloc, by_queue)


def event_label(ev: Any) -> str:
    """A short label of an event: ``arrive B``, ``leave A``, ``demand u2``, ``finish u1``, ``capacity s1``,
    ``round``."""
    if ev.kind == "arrive":
        return f"arrive {ev.spec.name}"
    if ev.kind == "capacity":
        return f"capacity {ev.server}" + (" removed" if ev.capacity is None else "")
    if ev.user is not None:
        return f"{ev.kind} {ev.user}"
    return ev.kind


def _segments(steps: Sequence[Any], by_queue: bool, only: Optional[str] = None) -> dict[str, list]:
    out: dict[str, list] = {}
    for st in steps:
        shares = dominant_shares(st, by_queue)
        for name, v in shares.items():
            if only is None or name == only:
                out.setdefault(name, []).append((float(st.t), float(st.until), float(v)))
    return out


def _group_of(ex: Any, user: str, by_queue: bool) -> str:
    if not by_queue:
        return user
    for spec in list(ex.users) + [e.spec for e in ex.events if e.kind == "arrive"]:
        if spec.name == user and spec.queue is not None:
            return spec.queue
    return user


def timeline(ex: Any, steps: Sequence[Any], step: Optional[int] = None, deviation: Any = None,
             deviated: Optional[Sequence[Any]] = None) -> Timeline:
    """The timeline of ``steps`` (a run of ``ex``): ``step``, the failing step's index, is highlighted;
    ``deviated`` (the run under ``deviation``, a ``TraceMisreport``) adds the deviator's share dashed."""
    by_queue = bool(ex.queues)
    segs = _segments(steps, by_queue)
    order = [_group_of(ex, u, by_queue) for u in ex.user_names]
    names = sorted(segs, key=lambda n: (order.index(n) if n in order else len(order), n))
    series = [Series(n, tuple(segs[n])) for n in names]
    omitted: list[str] = []
    if len(series) > _MAX_SERIES:
        omitted = [s.name for s in series[_MAX_SERIES:]]
        series = series[:_MAX_SERIES]
    if deviated is not None and deviation is not None:
        who = _group_of(ex, deviation.user, by_queue)
        dev = _segments(deviated, by_queue, who).get(who)
        if dev:
            series.append(Series(who, tuple(dev), dashed=True))
    events: list[tuple[float, str]] = []
    for st in steps:
        if st.event is not None:
            events.append((float(st.t), event_label(st.event)))
    horizon = max([float(ex.horizon)] + [float(st.until) for st in steps])
    hl = None
    if step is not None and 0 <= step < len(steps):
        st = steps[step]
        hl = (step, float(st.t), float(st.until))
    return Timeline(ex.unit, horizon, series, events, hl, "queue" if by_queue else "user", omitted)


def trace_steps(mech: Any, ex: Any, deviation: Any = None) -> list:
    """The exact steps of ``mech`` (a ``Mechanism`` or its name) through ``ex`` (under ``deviation``)."""
    from mechanisms.core.registry import get
    from mechanisms.core.time import execute

    m = get(mech) if isinstance(mech, str) else mech
    return execute(m, ex, True, deviation=deviation)


def timeline_of_witness(mech: Any, witness: Any) -> Optional[Timeline]:
    """The timeline of a witness over an execution (``witness.execution``; None for a one-shot witness): the
    mechanism re-run exactly through it, its failing step highlighted and, for a trace misreport
    (``witness.deviation``), the deviator's share in the deviated run dashed."""
    ex = getattr(witness, "execution", None)
    if ex is None:
        return None
    steps = trace_steps(mech, ex)
    dev = witness.deviation
    deviated = trace_steps(mech, ex, dev) if dev is not None and hasattr(dev, "reports") else None
    return timeline(ex, steps, witness.step, dev if deviated is not None else None, deviated)


# ---------------------------------------------------------------------- the figure
@contextmanager
def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context(_RC):
        yield plt


def _xy(segments) -> tuple[list[float], list[float]]:
    """A step function through ``segments`` with a gap (NaN) where the series is absent."""
    xs: list[float] = []
    ys: list[float] = []
    end = None
    for t, until, v in segments:
        if end is not None and t != end:
            xs.append(math.nan)
            ys.append(math.nan)
        xs += [t, until]
        ys += [v, v]
        end = until
    return xs, ys


def _labelled(events: list[tuple[float, str]], horizon: float, width_in: float) -> list[tuple[float, str]]:
    """The event labels drawn: labels at one time joined; a label closer than a text line to the previous drawn
    one is left out (its tick stays)."""
    merged: list[tuple[float, list[str]]] = []
    for t, lab in events:
        if merged and merged[-1][0] == t:
            if lab not in merged[-1][1]:
                merged[-1][1].append(lab)
        else:
            merged.append((t, [lab]))
    gap = 1.15 * (8 / 72) / max(width_in, 0.1) * max(horizon, 1e-12)  # one 8 pt line, in data units
    out, last = [], None
    for t, labs in merged:
        if last is not None and t - last < gap:
            continue
        text = ", ".join(labs)
        if len(labs) > 1 and len(text) > _LABEL_CHARS:
            text = f"{labs[0]} +{len(labs) - 1}"
        if len(text) > _LABEL_CHARS:
            text = text[:_LABEL_CHARS - 1] + "\u2026"
        out.append((t, text))
        last = t
    return out


def draw(tl: Timeline):
    """The matplotlib figure of ``tl`` (the caller closes it).  Its artists carry gids: ``failing-step`` (the
    shaded span), ``event`` (each tick), ``share-NAME`` / ``deviated-NAME`` (the lines)."""
    with _pyplot() as plt:
        fig = plt.figure(figsize=FIGSIZE)
        ax = fig.add_axes(_AXES)  # fixed margins: the event labels above, the legend to the right
        horizon = tl.horizon if tl.horizon > 0 else 1.0
        colors = {s.name: _COLORS[n % len(_COLORS)] for n, s in enumerate(x for x in tl.series if not x.dashed)}
        top = 1.0
        if tl.highlight is not None:
            k, t0, t1 = tl.highlight
            if t1 > t0:
                ax.axvspan(t0, t1, color=_HIGHLIGHT, alpha=0.14, linewidth=0, gid="failing-step",
                           label=f"failing step {k}: [{t0:g}, {t1:g})")
            else:  # a step of no duration: a line where it happens
                ax.axvline(t0, color=_HIGHLIGHT, linewidth=2.5, alpha=0.5, gid="failing-step",
                           label=f"failing step {k} (no duration)")
        # equal shares would hide each other: each line is drawn DODGE points above or below its value
        from matplotlib.transforms import offset_copy

        solid = [x.name for x in tl.series if not x.dashed]
        shift = {n: offset_copy(ax.transData, fig=fig, x=0, y=(k - (len(solid) - 1) / 2) * DODGE, units="points")
                 for k, n in enumerate(solid)}
        for s in tl.series:
            xs, ys = _xy(s.segments)
            top = max([top] + [y for y in ys if not math.isnan(y)])
            if s.dashed:
                ax.plot(xs, ys, color=colors.get(s.name, "#333"), linestyle=(0, (4, 2.5)), linewidth=1.5,
                        gid=f"deviated-{s.name}", label=f"{s.name}, misreporting",
                        transform=shift.get(s.name, ax.transData))
            else:
                ax.plot(xs, ys, color=colors[s.name], linewidth=2.0, gid=f"share-{s.name}", label=s.name,
                        transform=shift[s.name])
        for t, _ in tl.events:
            ax.axvline(t, color="#777", linewidth=0.7, linestyle=":", gid="event", zorder=0)
        ax.set_xlim(0, horizon)
        ax.set_ylim(-0.025 * top, top * 1.06)  # a share of 0 stays visible above the axis
        ax.set_xlabel(f"time ({tl.unit})")
        ax.set_ylabel(f"dominant share ({tl.by})")
        ax.grid(axis="y", alpha=0.3)
        # the events' labels above the axes, one rotated label per time
        for t, text in _labelled(tl.events, horizon, FIGSIZE[0] * _AXES[2]):
            ax.annotate(text, (t, 1.0), xycoords=("data", "axes fraction"), xytext=(0, 3),
                        textcoords="offset points", rotation=90, ha="center", va="bottom", fontsize=7,
                        color="#333", annotation_clip=False)
        handles, labels = ax.get_legend_handles_labels()
        if tl.omitted:
            from matplotlib.lines import Line2D

            handles.append(Line2D([], [], linestyle="none"))
            labels.append(f"(+{len(tl.omitted)} not drawn)")
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False,
                  fontsize=7, title=tl.by + "s", title_fontsize=7, alignment="left")
        return fig


def to_svg(tl: Timeline) -> str:
    """The figure as one ``<svg>`` element (no XML prolog, no date): for embedding in a page."""
    with _pyplot() as plt:
        fig = draw(tl)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
    text = buf.getvalue()
    start = text.find("<svg")
    return text[start:].strip() if start >= 0 else text


def to_png(tl: Timeline, dpi: int = 120) -> bytes:
    """The figure as PNG bytes (Agg writes no date)."""
    with _pyplot() as plt:
        fig = draw(tl)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
        plt.close(fig)
    return buf.getvalue()
