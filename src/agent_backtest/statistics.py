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
scaled by (z / t_df)² so that an SE measured on few sessions widens it as Student's t would. The
degrees of freedom are the SE's effective ones (Satterthwaite): df = (Σ_g r_g²)² / Σ_g r_g⁴ with
r_g each session's Σ (x_i − x̄), floored and within [1, G − 1]. With many sessions adding alike it
is G − 1; near 0 or 1 the rare outcome sits in a few sessions, their residuals are all of the SE,
and df falls towards their count, so one stray failure no longer passes for a tightly measured
rate. The effective size never falls below the sessions' own (n* ≥ G, as if every session were
all-or-nothing, with t_{G−1}). The interval stays inside [0, 1], is lopsided near 0 and 1 where
the truth is, and never claims more precision than n independent values would give. Where the
clustered SE is 0 it cannot be used: all values at 0 or 1 take n* = G (the sessions as draws);
equal session means strictly inside take n* = n. ``benchmarks/interval_coverage.py`` measures its
coverage on simulated sessions: with rates up to 0.99, intra-session correlation up to 0.5 and
2–30 steps a session, every cell covers at least 0.95 (the t correction at G − 1 alone fell to
0.82 at rate 0.97, correlation 0.5, 30 sessions).

**A paired difference** B − A of two runs on the same steps gets the score interval of a
cluster-robust paired test: every δ that the test of "the mean difference is δ" does not reject,
the test's variance taken at δ from each session's total (see :class:`_ScoreTest`), against t
with G − 1 degrees of freedom. At δ = 0 the test is McNemar's with sessions as the units, and its
p-value is the comparison's: the interval excludes 0 exactly when p < 0.05. Like Wilson's
interval it stays honest when a difference is a sum of a few rare flips, where a t-interval
around the estimate is too narrow. With few sessions it can reject nothing (with five, not even
a drop in every one), and says so by spanning [−1, 1]. When no pair changed, the interval is the
share of pairs that could have changed unseen (Korn–Graubard at 0, the sessions as draws).
"""

from __future__ import annotations

import math
import tempfile
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO

from agent_backtest.distributions import beta_quantile, normal_quantile, t_sf, t_two_sided_quantile

ALPHA = 0.05
LEVEL = 1 - ALPHA
"""The confidence level of every interval abt prints."""
RATE_METHOD = "korn_graubard_clustered"
"""How a rate's interval is made: Korn–Graubard on the clustered standard error (see above)."""


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
    # The SE's effective degrees of freedom (Satterthwaite): G − 1 when every cluster adds alike,
    # down to 1 when one cluster's residual is all of it.
    df: int = 1


def _clustered(values: Sequence[float], clusters: Sequence[str]) -> _Clustered | None:
    """The mean and its clustered SE; None for no values."""
    n = len(values)
    if n == 0:
        return None
    mean = math.fsum(values) / n
    sums: defaultdict[str, float] = defaultdict(float)
    for value, cluster in zip(values, clusters, strict=True):
        sums[cluster] += value - mean
    return _of_sums(mean, list(sums.values()), n)


def _of_sums(mean: float, residuals: Sequence[float], n: int) -> _Clustered | None:
    """The mean of ``n`` values with its clustered SE, from each cluster's Σ (x_i − mean)."""
    if n == 0:
        return None
    groups = len(residuals)
    if groups < 2:
        return _Clustered(mean, math.nan, n, groups)
    squares = math.fsum(s * s for s in residuals)
    se = math.sqrt(groups / (groups - 1) * squares) / n
    # sessions whose means are equal leave residual sums of 1e-17, not 0: that is no spread
    if se < 1e-12:
        return _Clustered(mean, 0.0, n, groups, groups - 1)
    fourths = math.fsum(s**4 for s in residuals)
    df = max(1, min(groups - 1, math.floor(squares * squares / fourths)))
    return _Clustered(mean, se, n, groups, df)


class ClusteredMeans:
    """Several clustered means built one value at a time, each exactly as
    :func:`clustered_mean` would compute it from its whole list of values.

    The clustered SE needs each cluster's sum of (x_i − x̄), which needs the mean before the
    first value; summed in another order it would differ in the last digits. So the values
    wait, in the order they came, in an unnamed temporary file (24 bytes each), and
    :meth:`estimates` reads them back once: memory holds exact running sums, not values.

    One value often belongs to several means at once (a verdict counts overall, for its tool,
    its node, its kind…): :meth:`combination` names such a set of means, and one
    :meth:`add_to` adds the value to all of them, stored once. The running sums are kept per
    combination: a count, the values equal to 1 (most values are 0 or 1, which add nothing
    inexact), and an exact sum of the rest (Shewchuk's partials); a mean's sum is the exact
    sum of its combinations' sums.
    """

    BUFFERED = 1 << 16  # values held before they are written out

    def __init__(self) -> None:
        self._means = 0
        self._combinations: list[tuple[int, ...]] = []  # the means of each combination
        self._numbers: dict[tuple[int, ...], int] = {}
        self._partials: list[list[float]] = []  # per combination
        self._ones: list[int] = []
        self._counts: list[int] = []
        self._clusters: dict[str, int] = {}
        self._values = array("d")
        self._keys = array("q")  # (combination, cluster) of each value, in pairs
        self._spool: IO[bytes] | None = None
        self._spooled = 0

    def mean(self) -> int:
        """A new mean; values are added to it by the number returned."""
        self._means += 1
        self.combination((self._means - 1,))  # its own, numbered like it while none is shared
        return self._means - 1

    def combination(self, means: Iterable[int]) -> int:
        """The number that adds a value to each of ``means`` at once (see :meth:`add_to`)."""
        members = tuple(means)
        number = self._numbers.get(members)
        if number is None:
            number = self._numbers[members] = len(self._combinations)
            self._combinations.append(members)
            self._partials.append([])
            self._ones.append(0)
            self._counts.append(0)
        return number

    def cluster(self, name: str) -> int:
        """The number values of cluster ``name`` are added with."""
        return self._clusters.setdefault(name, len(self._clusters))

    def add(self, mean: int, value: float, cluster: int) -> None:
        """Add one value of ``cluster`` (a number from :meth:`cluster`) to ``mean``."""
        self.add_to(self._numbers[(mean,)], value, cluster)

    def add_to(self, combination: int, value: float, cluster: int) -> None:
        """Add one value of ``cluster`` to every mean of ``combination``."""
        value = float(value)
        if value == 1.0:
            self._ones[combination] += 1
        elif value != 0.0:  # a zero leaves an exact sum as it is
            _add_exactly(self._partials[combination], value)
        self._counts[combination] += 1
        self._values.append(value)
        self._keys.extend((combination, cluster))
        if len(self._values) >= self.BUFFERED:
            self._write_out()

    def _write_out(self) -> None:
        if self._spool is None:
            self._spool = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by estimates()
        self._values.tofile(self._spool)
        self._keys.tofile(self._spool)
        self._spooled += len(self._values)
        self._values, self._keys = array("d"), array("q")

    def _chunks(self) -> Iterator[tuple[array[float], array[int]]]:
        """The values in the order they came, a buffer at a time."""
        if self._spool is not None:
            self._spool.seek(0)
            for _ in range(self._spooled // self.BUFFERED):
                values, keys = array("d"), array("q")
                values.fromfile(self._spool, self.BUFFERED)
                keys.fromfile(self._spool, 2 * self.BUFFERED)
                yield values, keys
            self._spool.close()
            self._spool = None
        yield self._values, self._keys

    def estimates(self) -> list[Estimate]:
        """Every mean's estimate, in the order the means were made; call once."""
        counts = [0] * self._means
        exact: list[list[float]] = [[] for _ in range(self._means)]
        for members, partials, ones, count in zip(
            self._combinations, self._partials, self._ones, self._counts, strict=True
        ):
            for mean in members:
                counts[mean] += count
                exact[mean] += (*partials, float(ones))
        # fsum rounds the exact sum of what it is given once: the partials and the counts of
        # ones sum exactly to the values, so this is fsum of the values themselves.
        means = [math.fsum(e) / n if n else 0.0 for e, n in zip(exact, counts, strict=True)]
        sums: list[defaultdict[int, float]] = [defaultdict(float) for _ in means]
        combinations = self._combinations
        for values, keys in self._chunks():
            for index, value in enumerate(values):
                cluster = keys[2 * index + 1]
                for mean in combinations[keys[2 * index]]:
                    sums[mean][cluster] += value - means[mean]
        return [
            _estimate(_of_sums(mean, list(residuals.values()), count))
            for mean, residuals, count in zip(means, sums, counts, strict=True)
        ]


def _add_exactly(partials: list[float], value: float) -> None:
    """Add ``value`` to the non-overlapping ``partials`` whose sum is exact (Shewchuk)."""
    kept = 0
    for other in partials:
        if abs(value) < abs(other):
            value, other = other, value
        high = value + other
        low = other - (high - value)
        if low:
            partials[kept] = low
            kept += 1
        value = high
    partials[kept:] = [value]


def clustered_mean(values: Sequence[float], clusters: Sequence[str]) -> Estimate:
    """The mean of ``values`` (each in [0, 1]) with its Korn–Graubard interval by ``clusters``."""
    return _estimate(_clustered(values, clusters))


def _estimate(base: _Clustered | None) -> Estimate:
    """The estimate of a clustered mean: its interval where there are two clusters or more."""
    if base is None:
        return Estimate(None, None, None, None, 0, 0)
    if base.clusters < 2:
        return Estimate(base.mean, None, None, None, base.n, base.clusters)
    low, high = _rate_interval(base)
    return Estimate(base.mean, base.se, low, high, base.n, base.clusters)


def clustered_average(values: Sequence[float], clusters: Sequence[str]) -> Estimate:
    """The mean of any ``values`` (seconds, counts) with a t interval from the SE by ``clusters``.

    Unlike a rate, such a mean has no bounds to respect, so its interval is the mean ± t_{G−1}
    standard errors; with fewer than two clusters there is none.
    """
    base = _clustered(values, clusters)
    if base is None:
        return Estimate(None, None, None, None, 0, 0)
    if base.clusters < 2:
        return Estimate(base.mean, None, None, None, base.n, base.clusters)
    half = t_quantile(base.clusters - 1) * base.se
    return Estimate(base.mean, base.se, base.mean - half, base.mean + half, base.n, base.clusters)


def paired_difference(pairs: Iterable[tuple[float, float, str]]) -> PairedTest:
    """The mean of b − a over (a, b, session) pairs, its interval and the test inverting it."""
    items = list(pairs)
    diff = _clustered([b - a for a, b, _ in items], [c for _, _, c in items])
    if diff is None:
        return PairedTest(Estimate(None, None, None, None, 0, 0), None)
    if diff.clusters < 2:
        return PairedTest(Estimate(diff.mean, None, None, None, diff.n, diff.clusters), None)
    totals: defaultdict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for a, b, session in items:
        totals[session][0] += b - a
        totals[session][1] += 1
    score = _ScoreTest([d for d, _ in totals.values()], [m for _, m in totals.values()])
    low, high = score.interval()
    return PairedTest(
        Estimate(diff.mean, diff.se, low, high, diff.n, diff.clusters), score.p_value(0.0)
    )


class _ScoreTest:
    """The cluster-robust score test of "the mean difference is δ", and the δ it accepts.

    ``T(δ) = Σ_g (D_g − m_g δ) / sqrt(G/(G−1) · Σ_g (D_g − m_g δ)²)`` over each session's total
    difference D_g and size m_g, against Student's t with G − 1 degrees of freedom. The variance
    is taken at δ itself, not at the estimate: that is what keeps the test honest when the
    difference is a sum of a few rare flips. At δ = 0 it is McNemar's score test with sessions
    as the units (one pair a session gives McNemar's z exactly, up to G/(G−1)).
    """

    def __init__(self, totals: Sequence[float], sizes: Sequence[float]) -> None:
        self.totals, self.sizes = totals, sizes
        self.clusters = len(totals)
        self.n = math.fsum(sizes)
        self.mean = math.fsum(totals) / self.n
        self.scale = self.clusters / (self.clusters - 1)
        self.q = t_quantile(self.clusters - 1)

    def statistic(self, delta: float) -> float:
        """T(δ); 0 where every session is exactly at δ (nothing against it)."""
        residuals = [d - m * delta for d, m in zip(self.totals, self.sizes, strict=True)]
        spread = self.scale * math.fsum(r * r for r in residuals)
        total = math.fsum(residuals)
        return 0.0 if spread <= 1e-24 else total / math.sqrt(spread)

    def p_value(self, delta: float) -> float:
        """Two-sided p-value of the mean difference being ``delta``."""
        if not any(self.totals) and delta == 0.0:
            return 1.0
        return _t_test(self.statistic(delta), self.clusters - 1)

    def interval(self) -> tuple[float, float]:
        """The δ in [−1, 1] the test does not reject at 5%, as one interval.

        Solving |T(δ)| ≤ q is a quadratic inequality A δ² + B δ + C ≤ 0. Where the accepted δ
        come in two pieces, the interval is the piece holding the estimate when 0 is rejected,
        else the hull of both, so the interval excludes 0 exactly when the test rejects it.
        """
        if not any(self.totals):
            return self._no_flips()
        q2k = self.q * self.q * self.scale
        total = math.fsum(self.totals)
        a = self.n * self.n - q2k * math.fsum(m * m for m in self.sizes)
        b = -2 * total * self.n + 2 * q2k * math.fsum(
            m * d for d, m in zip(self.totals, self.sizes, strict=True)
        )
        c = total * total - q2k * math.fsum(d * d for d in self.totals)
        disc = max(0.0, b * b - 4 * a * c)  # ≥ 0 in exact arithmetic: the estimate is accepted
        if abs(a) < 1e-12:
            return (-1.0, 1.0) if b == 0 else _clip(*sorted((-c / b, math.copysign(9.0, -b))))
        r1, r2 = sorted(((-b - math.sqrt(disc)) / (2 * a), (-b + math.sqrt(disc)) / (2 * a)))
        if a > 0:
            return _clip(r1, r2)
        if self.p_value(0.0) >= ALPHA:
            return -1.0, 1.0
        return _clip(-9.0, r1) if self.mean <= r1 else _clip(r2, 9.0)

    def _no_flips(self) -> tuple[float, float]:
        """No session's total changed: the share of pairs that could have unseen, with the
        sessions as the draws."""
        _, high = _korn_graubard(0.0, float(self.clusters), self.clusters - 1)
        return -high, high


def _clip(low: float, high: float) -> tuple[float, float]:
    """An interval of a difference, within [−1, 1]."""
    return max(-1.0, low), min(1.0, high)


def t_quantile(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom."""
    return t_two_sided_quantile(df, ALPHA)


def _t_test(statistic: float, df: int) -> float:
    """Two-sided p-value of a t statistic with ``df`` degrees of freedom."""
    return min(1.0, 2 * t_sf(abs(statistic), df))


def _rate_interval(base: _Clustered) -> tuple[float, float]:
    """The Korn–Graubard 95% interval of a clustered rate, its t correction taken at the SE's
    effective degrees of freedom and its effective size never below the sessions'."""
    rate = _snap(base.mean)
    sessions = _t_corrected(float(base.clusters), base.clusters - 1)
    if rate in (0.0, 1.0):
        size = sessions  # no spread to measure: the sessions are the draws
    elif base.se == 0.0:
        # equal session means: never more than n independent values
        size = _t_corrected(float(base.n), base.clusters - 1)
    else:
        measured = min(float(base.n), rate * (1 - rate) / (base.se * base.se))
        size = max(_t_corrected(measured, base.df), sessions)
    return _clopper_pearson(rate, size)


def _t_corrected(size: float, df: int) -> float:
    """An effective size scaled by (z / t_df)², so that an SE measured on few clusters widens
    the interval as Student's t would."""
    return size * (normal_quantile(1 - ALPHA / 2) / t_quantile(df)) ** 2


def _korn_graubard(rate: float, size: float, df: int) -> tuple[float, float]:
    """The Clopper–Pearson interval of ``rate`` on ``size`` draws, with the t correction."""
    return _clopper_pearson(rate, _t_corrected(size, df))


def _clopper_pearson(rate: float, n: float) -> tuple[float, float]:
    """The Clopper–Pearson interval of ``rate`` on ``n`` (possibly fractional) draws."""
    x = rate * n
    low = 0.0 if rate == 0.0 else beta_quantile(ALPHA / 2, x, n - x + 1)
    high = 1.0 if rate == 1.0 else beta_quantile(1 - ALPHA / 2, x + 1, n - x)
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
