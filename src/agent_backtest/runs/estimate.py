"""A mean with its interval, as the summary and the comparison record every rate."""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import Field

from agent_backtest.runs.documents import DocumentPart
from agent_backtest.statistics import Estimate


class ClusteredMean(DocumentPart):
    """A mean with its standard error clustered by the unit its values are independent in (a
    session, a benchmark case, a flow's seed), its 95% interval, and its counts.

    Each kind names its clusters in a field of its own (``CLUSTERS``), so a record says what
    its interval is clustered by."""

    CLUSTERS: ClassVar[str]

    mean: float | None = Field(description="The mean; None when there was nothing to average.")
    se: float | None = Field(
        description="Standard error clustered as the count field says; None with fewer than two "
        "clusters."
    )
    ci95: tuple[float, float] | None = Field(
        description="The 95% interval [low, high]; None with fewer than two clusters."
    )
    n: int = Field(description="How many values the mean is over.")

    @classmethod
    def of(cls, estimate: Estimate) -> Self:
        """The record of a computed estimate."""
        bounds = estimate.low, estimate.high
        return cls(
            mean=estimate.mean,
            se=estimate.se,
            ci95=None if None in bounds else bounds,
            n=estimate.n,
            **{cls.CLUSTERS: estimate.clusters},
        )

    @property
    def low(self) -> float | None:
        """The lower end of the interval, or None."""
        return self.ci95[0] if self.ci95 else None

    @property
    def high(self) -> float | None:
        """The upper end of the interval, or None."""
        return self.ci95[1] if self.ci95 else None


class MeanEstimate(ClusteredMean):
    """A replay rate, clustered by session."""

    CLUSTERS: ClassVar[str] = "sessions"
    sessions: int = Field(description="How many sessions those values come from.")
