"""Distributions of measured values (times, counts per turn) and totals that may be incomplete.

A value that could not be measured is counted as missing under a reason, never as zero. The total
over partially missing data is ``None``; the observed total and the missing count sit beside it.
Percentiles are nearest-rank, so every percentile is a value that was actually observed.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence

from agent_backtest.profiling.availability import availability
from agent_backtest.runs.profile import DistributionFigure, Number, TallyFigure

DECIMALS = 3


def nearest_rank(ordered: Sequence[float], fraction: float) -> float | None:
    """The nearest-rank percentile of sorted values: the ⌈fraction·n⌉-th smallest, or None."""
    if not ordered:
        return None
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


class Tally:
    """A sum over items, each of which has a value or a reason why it has none."""

    def __init__(self, noun: str, integral: bool = False) -> None:
        self.noun = noun
        self.integral = integral
        self.count = 0
        self.observed_total = 0.0
        self.missing: Counter[str] = Counter()

    def add(self, value: float) -> None:
        """One item's value."""
        self.count += 1
        self.observed_total += value

    def lack(self, why: str) -> None:
        """One item without a value; ``why`` completes "N of M {noun} …"."""
        self.missing[why] += 1

    def add_or_lack(self, value: float | str) -> None:
        """A value, or (a string) the reason the item has none."""
        if isinstance(value, str):
            self.lack(why=value)
        else:
            self.add(value)

    @property
    def missing_count(self) -> int:
        """Items without a value."""
        return sum(self.missing.values())

    @property
    def total(self) -> float | None:
        """The sum, or None when any item lacks its value."""
        return None if self.missing_count else self.observed_total

    def number(self, value: float) -> Number:
        """A value as written: integers stay integers, times are rounded to microseconds."""
        return int(value) if self.integral else round(value, DECIMALS)

    def maybe(self, value: float | None) -> Number | None:
        """:meth:`number` of a value that may be missing."""
        return None if value is None else self.number(value)

    def figure(self) -> TallyFigure:
        """Count, missing, total (None if incomplete), observed total, availability."""
        return TallyFigure(
            count=self.count,
            missing=self.missing_count,
            total=self.maybe(self.total),
            observed_total=self.number(self.observed_total),
            **availability(self.missing, self.count + self.missing_count, self.noun),
        )


class Distribution(Tally):
    """A tally that keeps its values (8 bytes each) for p50, p95 and max."""

    def __init__(self, noun: str, integral: bool = False) -> None:
        super().__init__(noun, integral)
        self.values = array("d")

    def add(self, value: float) -> None:
        """One item's value, kept for the percentiles."""
        super().add(value)
        self.values.append(value)

    def figure(self) -> DistributionFigure:
        """The tally's figures plus nearest-rank p50, p95 and the maximum."""
        ordered = sorted(self.values)
        # A float sum's order-dependent rounding is undone by summing the sorted values exactly.
        self.observed_total = math.fsum(ordered)
        return DistributionFigure(
            **super().figure().model_dump(),
            p50=self.maybe(nearest_rank(ordered, 0.50)),
            p95=self.maybe(nearest_rank(ordered, 0.95)),
            max=self.maybe(ordered[-1] if ordered else None),
        )
