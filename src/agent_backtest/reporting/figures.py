"""Numbers as the reports print them: rates with intervals, percentiles, labels."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agent_backtest.statistics import LEVEL, RATE_METHOD

if TYPE_CHECKING:  # for annotations: the commands import these helpers to print their help
    from agent_backtest.runs.estimate import ClusteredMean, MeanEstimate


def rate(estimate: MeanEstimate | None) -> str:
    """``0.912 [0.880, 0.940]``; ``n/a`` with nothing scored; a note when there is no interval."""
    if estimate is None or estimate.mean is None:
        return "n/a"
    return f"{estimate.mean:.3f} {interval(estimate)}"


def interval_label(clusters: int, unit: str = "session") -> str:
    """What an interval is, said where it is first printed: ``95% CI, clustered by session
    (4 sessions)``."""
    return f"95% CI, clustered by {unit} ({clusters} {unit}{'' if clusters == 1 else 's'})"


def interval_fields(clusters: int, unit: str) -> dict[str, object]:
    """What an interval is, for a ``--json`` output: level, method and clusters."""
    return {"level": LEVEL, "method": RATE_METHOD, "clusters": clusters, "clustered_by": unit}


def interval(estimate: MeanEstimate) -> str:
    """``[low, high]`` of an estimate, or why it has none."""
    if estimate.ci95 is None:
        return "(no interval: 1 session)"
    low, high = estimate.ci95
    return f"[{low:.3f}, {high:.3f}]"


def clustered_rate(estimate: ClusteredMean) -> str:
    """``0.750 [0.420, 0.930]``; ``n/a`` for a mean over nothing; without an interval, a note
    naming the one cluster it rests on (``(no interval: 1 case)``, ``1 seed``)."""
    if estimate.mean is None:
        return "n/a"
    if estimate.ci95 is None:
        clusters = getattr(estimate, estimate.CLUSTERS)
        return (
            f"{estimate.mean:.3f} (no interval: {clusters} {estimate.CLUSTERS.removesuffix('s')})"
        )
    low, high = estimate.ci95
    return f"{estimate.mean:.3f} [{low:.3f}, {high:.3f}]"


def rate_with_count(estimate: MeanEstimate) -> str:
    """``0.912 [0.880, 0.940] (n 120, 12 sessions)``: a rate that rests on few answers shows it."""
    sessions = f"{estimate.sessions} session{'' if estimate.sessions == 1 else 's'}"
    return f"{rate(estimate)} (n {estimate.n}, {sessions})"


def signed(estimate: MeanEstimate | None) -> str:
    """A difference with its sign and interval: ``-0.031 [-0.058, -0.004]``."""
    if estimate is None or estimate.mean is None:
        return "n/a"
    if estimate.ci95 is None:
        return f"{estimate.mean:+.3f} (no interval: 1 session)"
    low, high = estimate.ci95
    return f"{estimate.mean:+.3f} [{low:+.3f}, {high:+.3f}]"


def p_text(p_value: float | None) -> str:
    """A p-value as printed: ``0.0021``, ``< 0.0001``, or ``n/a`` without two sessions."""
    if p_value is None:
        return "n/a"
    return "< 0.0001" if p_value < 0.0001 else f"{p_value:.2g}"


def quantity(value: float | None, unit: str) -> str:
    """A measured value as a person reads it: ``812 ms``, ``48.8 s``, ``3.2 min``, ``12,345
    tokens``; never ``4.875e+04``."""
    if value is None:
        return "n/a"
    if unit == "ms":
        if value < 1000:
            return f"{value:.3g} ms" if value < 10 else f"{value:,.0f} ms"
        seconds = value / 1000
        return f"{seconds:.3g} s" if seconds < 100 else f"{seconds / 60:,.1f} min"
    return f"{value:,.0f} {unit}" if abs(value) >= 10 else f"{value:.3g} {unit}"


def labels_text(labels: Mapping[str, str]) -> str:
    """A run's labels as ``KEY=VALUE · KEY=VALUE`` in key order; ``none`` without any."""
    return " · ".join(f"{key}={value}" for key, value in sorted(labels.items())) or "none"


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile of ``values`` (None when empty)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]
