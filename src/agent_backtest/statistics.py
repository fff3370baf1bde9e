"""Rates with honest intervals: standard errors clustered by session.

Steps of one session share a user, a context and often a mistake, so they are not independent
draws; treating them as such makes intervals too narrow. The clustered standard error of a mean
(the sandwich estimator with sessions as clusters, as recommended for evals by Miller, "Adding
Error Bars to Evals", 2024) sums the residuals within each session before squaring:

    SE = sqrt( G/(G-1) · Σ_g (Σ_{i∈g} (x_i − x̄))² ) / n

with G sessions and n values. The interval is x̄ ± z·SE (z = 1.96 for 95%), clipped to [0, 1]
for rates. With fewer than two sessions there is no interval: it is reported as missing.

When every value is the same (a rate of exactly 0 or 1), that standard error is 0 and the
interval would claim certainty. There the Wilson score interval is used instead, with the number
of sessions as the sample size: eight answers from four sessions that all agree support a rate
near 1, not a rate of exactly 1.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    """A mean with its clustered standard error and 95% interval, and what it rests on."""

    mean: float | None
    se: float | None
    low: float | None
    high: float | None
    n: int
    clusters: int


def clustered_mean(
    values: Sequence[float],
    clusters: Sequence[str],
    bounds: tuple[float, float] | None = (0.0, 1.0),
) -> Estimate:
    """The mean of ``values`` with a standard error clustered by ``clusters`` (one per value)."""
    n = len(values)
    if n == 0:
        return Estimate(None, None, None, None, 0, 0)
    mean = math.fsum(values) / n
    sums: defaultdict[str, float] = defaultdict(float)
    for value, cluster in zip(values, clusters, strict=True):
        sums[cluster] += value - mean
    groups = len(sums)
    if groups < 2:
        return Estimate(mean, None, None, None, n, groups)
    variance = groups / (groups - 1) * math.fsum(s * s for s in sums.values())
    se = math.sqrt(variance) / n
    if se == 0.0 and bounds == (0.0, 1.0) and mean in (0.0, 1.0):
        low, high = wilson(mean, groups)
        return Estimate(mean, se, low, high, n, groups)
    low, high = mean - Z_95 * se, mean + Z_95 * se
    if bounds is not None:
        low, high = max(bounds[0], low), min(bounds[1], high)
    return Estimate(mean, se, low, high, n, groups)


def wilson(rate: float, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion ``rate`` observed on ``n`` draws."""
    z2 = Z_95 * Z_95
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = Z_95 * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # at rate 0 (or 1) the bound is 0 (or 1) exactly; rounding would leave 1e-17
    low = 0.0 if rate == 0.0 else max(0.0, centre - half)
    high = 1.0 if rate == 1.0 else min(1.0, centre + half)
    return low, high


def paired_difference(pairs: Iterable[tuple[float, float, str]]) -> Estimate:
    """The mean of b − a over paired values, clustered by session (for comparing two runs)."""
    items = list(pairs)
    return clustered_mean(
        [b - a for a, b, _ in items], [c for _, _, c in items], bounds=(-1.0, 1.0)
    )


def agreement_of(labels: Sequence[str]) -> float | None:
    """Share of pairs among ``labels`` that are equal; None with fewer than two."""
    k = len(labels)
    if k < 2:
        return None
    same = sum(labels[i] == labels[j] for i in range(k) for j in range(i + 1, k))
    return same / (k * (k - 1) / 2)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts (1.0 when there are none)."""
    from scipy.stats import binomtest  # imported here: scipy.stats alone costs ~1 s to load

    discordant = a_only + b_only
    if discordant == 0:
        return 1.0
    return float(binomtest(a_only, discordant, 0.5, alternative="two-sided").pvalue)
