"""Rates and differences with honest intervals, accounting for sessions.

Steps of one session share a user, a context and often a mistake, so they are not independent
draws; treating them as such makes intervals too narrow and tests too eager. Every figure here
starts from the standard error of a mean clustered by session (the sandwich estimator with
sessions as clusters, as recommended for evals by Miller, "Adding Error Bars to Evals", 2024):

    SE = sqrt( G/(G-1) · Σ_g (Σ_{i∈g} (x_i − x̄))² ) / n

with G sessions and n values. With fewer than two sessions there is no interval: it is reported
as missing, never as certain.

**A rate** (agreement, strict agreement: values in [0, 1]) gets the Korn–Graubard interval
(Korn and Graubard, "Confidence intervals for proportions with small expected number of positive
counts estimated from survey data", 1998): a Clopper–Pearson interval on the effective sample
size n* = p(1 − p) / SE² (the sample size whose binomial variance equals the clustered one),
scaled by (z / t_{G−1})² so that few sessions widen it as Student's t would. It stays inside
[0, 1], is lopsided near 0 and 1 where the truth is, and never claims more precision than n
independent values would give. Where the clustered SE is 0 it cannot be used: all values at 0 or
1 take n* = G (the sessions as draws); equal session means strictly inside take n* = n.
``benchmarks/interval_coverage.py`` measures its coverage on simulated sessions.

**A paired difference** B − A of two runs on the same steps gets Student's t with G − 1 degrees
of freedom on the clustered SE, and its test is the matching cluster-robust paired t-test, so the
interval excludes 0 exactly when p < 0.05. Where that SE is 0 (every session's steps changed by
the same share) the evidence is the number of sessions that agree: the exact sign-flip test of
the session totals gives p = 2 / 2^G, and the interval is that one value once six sessions or
more agree (p < 0.05), else the whole range [−1, 1]. A drop seen in two sessions is not certain.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ALPHA = 0.05


@dataclass(frozen=True)
class Estimate:
    """A mean with its clustered standard error and 95% interval, and what it rests on."""

    mean: float | None
    se: float | None
    low: float | None
    high: float | None
    n: int
    clusters: int


@dataclass(frozen=True)
class PairedTest:
    """A paired difference B − A with its interval, and the two-sided p-value of "no change"."""

    estimate: Estimate
    p_value: float | None


@dataclass(frozen=True)
class _Clustered:
    """A mean, its clustered SE (NaN with one cluster) and its counts."""

    mean: float
    se: float
    n: int
    clusters: int


def _clustered(values: Sequence[float], clusters: Sequence[str]) -> _Clustered | None:
    """The mean and its clustered SE; None for no values."""
    n = len(values)
    if n == 0:
        return None
    mean = math.fsum(values) / n
    sums: defaultdict[str, float] = defaultdict(float)
    for value, cluster in zip(values, clusters, strict=True):
        sums[cluster] += value - mean
    groups = len(sums)
    if groups < 2:
        return _Clustered(mean, math.nan, n, groups)
    variance = groups / (groups - 1) * math.fsum(s * s for s in sums.values())
    se = math.sqrt(variance) / n
    # sessions whose means are equal leave residual sums of 1e-17, not 0: that is no spread
    return _Clustered(mean, 0.0 if se < 1e-12 else se, n, groups)


def clustered_mean(values: Sequence[float], clusters: Sequence[str]) -> Estimate:
    """The mean of ``values`` (each in [0, 1]) with its Korn–Graubard interval by ``clusters``."""
    base = _clustered(values, clusters)
    if base is None:
        return Estimate(None, None, None, None, 0, 0)
    if base.clusters < 2:
        return Estimate(base.mean, None, None, None, base.n, base.clusters)
    low, high = _rate_interval(base)
    return Estimate(base.mean, base.se, low, high, base.n, base.clusters)


def paired_difference(pairs: Iterable[tuple[float, float, str]]) -> PairedTest:
    """The mean of b − a over (a, b, session) pairs, its interval and the test inverting it."""
    items = list(pairs)
    diff = _clustered([b - a for a, b, _ in items], [c for _, _, c in items])
    if diff is None:
        return PairedTest(Estimate(None, None, None, None, 0, 0), None)
    if diff.clusters < 2:
        return PairedTest(Estimate(diff.mean, None, None, None, diff.n, diff.clusters), None)
    df = diff.clusters - 1
    if diff.se > 0.0:
        half = t_quantile(df) * diff.se
        low, high = max(-1.0, diff.mean - half), min(1.0, diff.mean + half)
        p_value = _t_test(diff.mean / diff.se, df)
    elif diff.mean == 0.0:
        low, high, p_value = _equal_sessions_interval(0.0, 1.0)
    else:
        low, high, p_value = _equal_sessions_interval(diff.mean, 2.0 / 2.0**diff.clusters)
    return PairedTest(Estimate(diff.mean, diff.se, low, high, diff.n, diff.clusters), p_value)


def _equal_sessions_interval(mean: float, p_value: float) -> tuple[float, float, float]:
    """Every session moved by the same share: the sign-flip test and the interval it implies."""
    if p_value < ALPHA:
        return mean, mean, p_value
    return -1.0, 1.0, p_value


def t_quantile(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom."""
    from scipy.special import stdtrit  # imported here: scipy costs ~0.5 s to load

    return float(stdtrit(df, 1 - ALPHA / 2))


def _t_test(statistic: float, df: int) -> float:
    """Two-sided p-value of a t statistic with ``df`` degrees of freedom."""
    from scipy.special import stdtr

    return float(min(1.0, 2 * stdtr(df, -abs(statistic))))


def _rate_interval(base: _Clustered) -> tuple[float, float]:
    """The Korn–Graubard 95% interval of a clustered rate."""
    rate = _snap(base.mean)
    if rate in (0.0, 1.0):
        size = float(base.clusters)  # no spread to measure: the sessions are the draws
    elif base.se == 0.0:
        size = float(base.n)  # equal session means: never more than n independent values
    else:
        size = min(float(base.n), rate * (1 - rate) / (base.se * base.se))
    return _korn_graubard(rate, size, base.clusters - 1)


def _korn_graubard(rate: float, size: float, df: int) -> tuple[float, float]:
    """The Clopper–Pearson interval of ``rate`` on ``size`` draws, with the t correction."""
    from scipy.special import betaincinv, ndtri  # imported here: scipy is slow to load

    n = size * (float(ndtri(1 - ALPHA / 2)) / t_quantile(df)) ** 2
    x = rate * n
    low = 0.0 if rate == 0.0 else float(betaincinv(x, n - x + 1, ALPHA / 2))
    high = 1.0 if rate == 1.0 else float(betaincinv(x + 1, n - x, 1 - ALPHA / 2))
    return low, high


def _snap(rate: float) -> float:
    """A rate within rounding of 0 or 1 is that bound (sums of floats leave 1 − 1e-16)."""
    if abs(rate) < 1e-12:
        return 0.0
    if abs(rate - 1.0) < 1e-12:
        return 1.0
    return rate


def agreement_of(labels: Sequence[str]) -> float | None:
    """Share of pairs among ``labels`` that are equal; None with fewer than two."""
    k = len(labels)
    if k < 2:
        return None
    same = sum(labels[i] == labels[j] for i in range(k) for j in range(i + 1, k))
    return same / (k * (k - 1) / 2)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts (1.0 when there are none).

    It treats every pair as independent, so it ignores sessions; it is reported beside the
    clustered test, never in its place.
    """
    from scipy.stats import binomtest  # imported here: scipy.stats alone costs ~1 s to load

    discordant = a_only + b_only
    if discordant == 0:
        return 1.0
    return float(binomtest(a_only, discordant, 0.5, alternative="two-sided").pvalue)
