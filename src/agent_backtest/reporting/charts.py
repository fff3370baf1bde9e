"""Small inline SVG charts: rates with their intervals, counts, and value distributions.

Drawn here rather than by a charting library so the report has no dependency and no network.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agent_backtest.reporting.figures import quantity
from agent_backtest.reporting.markup import Markup, tag

LABEL_WIDTH = 190
PLOT_WIDTH = 360
ROW_HEIGHT = 20


@dataclass(frozen=True)
class RateBar:
    """One group's rate and its 95% interval (missing bounds draw no whisker)."""

    label: str
    mean: float | None
    low: float | None
    high: float | None
    n: int


def rate_chart(bars: Sequence[RateBar], title: str) -> Markup:
    """Horizontal bars on a 0–1 scale with interval whiskers, one row per group."""
    height = ROW_HEIGHT * len(bars) + 24
    rows = [_axis(height)]
    for index, bar in enumerate(bars):
        y = 4 + index * ROW_HEIGHT
        rows.append(_label(bar.label, y))
        if bar.mean is None:
            continue
        width = bar.mean * PLOT_WIDTH
        hint = f"{bar.label}: {bar.mean:.3f} (n {bar.n})"
        rows.append(
            tag(
                "rect",
                tag("title", hint),
                attrs={
                    "x": LABEL_WIDTH,
                    "y": y + 3,
                    "width": f"{width:.1f}",
                    "height": ROW_HEIGHT - 8,
                    "class": "bar",
                },
            )
        )
        if bar.low is not None and bar.high is not None:
            x1, x2 = LABEL_WIDTH + bar.low * PLOT_WIDTH, LABEL_WIDTH + bar.high * PLOT_WIDTH
            rows.append(_whisker(x1, x2, y))
    return _svg(rows, height, title)


def _whisker(x1: float, x2: float, y: float) -> Markup:
    """An interval from ``x1`` to ``x2``, with end ticks, across the row at ``y``."""
    mid = y + ROW_HEIGHT / 2 - 1
    return Markup(
        f'<path class="whisker" d="M{x1:.1f} {mid:.1f}H{x2:.1f}'
        f'M{x1:.1f} {mid - 4:.1f}v8M{x2:.1f} {mid - 4:.1f}v8"/>'
    )


def count_chart(counts: Sequence[tuple[str, int]], title: str) -> Markup:
    """Horizontal bars of counts, scaled to the largest."""
    top = max((n for _, n in counts), default=0) or 1
    height = ROW_HEIGHT * len(counts) + 8
    rows = []
    for index, (label, n) in enumerate(counts):
        y = 4 + index * ROW_HEIGHT
        width = n / top * (PLOT_WIDTH - 50)
        rows += [
            _label(label, y),
            tag(
                "rect",
                tag("title", f"{label}: {n}"),
                attrs={
                    "x": LABEL_WIDTH,
                    "y": y + 3,
                    "width": f"{width:.1f}",
                    "height": ROW_HEIGHT - 8,
                    "class": f"bar bucket-{label}",
                },
            ),
            tag(
                "text",
                str(n),
                attrs={"x": f"{LABEL_WIDTH + width + 4:.1f}", "y": y + 14, "class": "value"},
            ),
        ]
    return _svg(rows, height, title)


def histogram(values: Sequence[float], title: str, unit: str, bins: int = 24) -> Markup:
    """A histogram of ``values`` between their minimum and maximum, with an axis in ``unit``."""
    if not values:
        return Markup("")
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, math.floor((value - low) / span * bins))] += 1
    top = max(counts)
    width, height, plot = LABEL_WIDTH + PLOT_WIDTH, 140, 110
    step = (width - 20) / bins
    rows = []
    for index, count in enumerate(counts):
        bar = count / top * plot
        start = low + span * index / bins
        hint = f"{quantity(start, unit)} – {quantity(start + span / bins, unit)}: {count}"
        rows.append(
            tag(
                "rect",
                tag("title", hint),
                attrs={
                    "x": f"{10 + index * step:.1f}",
                    "y": f"{4 + plot - bar:.1f}",
                    "width": f"{max(step - 1, 1):.1f}",
                    "height": f"{bar:.1f}",
                    "class": "bar",
                },
            )
        )
    rows += [
        tag("text", quantity(low, unit), attrs={"x": 10, "y": height - 10, "class": "value"}),
        tag(
            "text",
            quantity(high, unit),
            attrs={"x": width - 10, "y": height - 10, "class": "value", "text-anchor": "end"},
        ),
    ]
    return _svg(rows, height, title)


def _axis(height: int) -> Markup:
    ticks = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = LABEL_WIDTH + tick * PLOT_WIDTH
        ticks.append(Markup(f'<path class="grid" d="M{x:.1f} 2V{height - 18}"/>'))
        ticks.append(
            tag(
                "text",
                f"{tick:g}",
                attrs={"x": f"{x:.1f}", "y": height - 6, "class": "value", "text-anchor": "middle"},
            )
        )
    return Markup("".join(ticks))


def _label(label: str, y: float) -> Markup:
    shown = label if len(label) <= 28 else label[:27] + "…"
    return tag(
        "text",
        tag("title", label),
        shown,
        attrs={"x": LABEL_WIDTH - 6, "y": f"{y + 14:.1f}", "text-anchor": "end", "class": "label"},
    )


def _svg(rows: Sequence[Markup], height: float, title: str) -> Markup:
    return tag(
        "svg",
        tag("title", title),
        rows,
        attrs={
            "class": "chart",
            "role": "img",
            "aria-label": title,
            "width": LABEL_WIDTH + PLOT_WIDTH + 20,
            "height": f"{height:.0f}",
            "viewBox": f"0 0 {LABEL_WIDTH + PLOT_WIDTH + 20} {height:.0f}",
            "xmlns": "http://www.w3.org/2000/svg",
        },
    )


def delta_chart(bars: Sequence[RateBar], title: str) -> Markup:
    """Bars of differences around zero with interval whiskers, scaled to the widest bound."""
    reach = (
        max(
            (abs(v) for bar in bars for v in (bar.mean, bar.low, bar.high) if v is not None),
            default=0.0,
        )
        or 1.0
    )
    zero = LABEL_WIDTH + PLOT_WIDTH / 2
    scale = PLOT_WIDTH / 2 / reach
    height = ROW_HEIGHT * len(bars) + 24
    rows = [
        Markup(f'<path class="grid" d="M{zero:.1f} 2V{height - 18}"/>'),
        tag("text", f"{-reach:+.3g}", attrs={"x": LABEL_WIDTH, "y": height - 6, "class": "value"}),
        tag(
            "text",
            "0",
            attrs={"x": f"{zero:.1f}", "y": height - 6, "class": "value", "text-anchor": "middle"},
        ),
        tag(
            "text",
            f"{reach:+.3g}",
            attrs={
                "x": LABEL_WIDTH + PLOT_WIDTH,
                "y": height - 6,
                "class": "value",
                "text-anchor": "end",
            },
        ),
    ]
    for index, bar in enumerate(bars):
        y = 4 + index * ROW_HEIGHT
        rows.append(_label(bar.label, y))
        if bar.mean is None:
            continue
        x = min(zero, zero + bar.mean * scale)
        rows.append(
            tag(
                "rect",
                tag("title", f"{bar.label}: {bar.mean:+.3f} (n {bar.n})"),
                attrs={
                    "x": f"{x:.1f}",
                    "y": y + 3,
                    "width": f"{abs(bar.mean) * scale:.1f}",
                    "height": ROW_HEIGHT - 8,
                    "class": "bar negative" if bar.mean < 0 else "bar",
                },
            )
        )
        if bar.low is not None and bar.high is not None:
            rows.append(_whisker(zero + bar.low * scale, zero + bar.high * scale, y))
    return _svg(rows, height, title)
