"""Numbers as the reports print them: rates with intervals, percentiles, short hashes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def rate(estimate: dict[str, Any] | None) -> str:
    """``0.912 [0.880, 0.940]``; ``n/a`` with nothing scored; a note when there is no interval."""
    if not estimate or estimate.get("mean") is None:
        return "n/a"
    return f"{estimate['mean']:.3f} {interval(estimate)}"


def interval(estimate: dict[str, Any]) -> str:
    """``[low, high]`` of an estimate, or why it has none."""
    bounds = estimate.get("ci95")
    if not bounds:
        return "(no interval: 1 session)"
    return f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def signed(estimate: dict[str, Any] | None) -> str:
    """A difference with its sign and interval: ``-0.031 [-0.058, -0.004]``."""
    if not estimate or estimate.get("mean") is None:
        return "n/a"
    bounds = estimate.get("ci95")
    if not bounds:
        return f"{estimate['mean']:+.3f} (no interval: 1 session)"
    return f"{estimate['mean']:+.3f} [{bounds[0]:+.3f}, {bounds[1]:+.3f}]"


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile of ``values`` (None when empty)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]
