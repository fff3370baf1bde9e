"""A mean with its interval, as the summary and the comparison record every rate."""

from __future__ import annotations

from pydantic import Field

from agent_backtest.runs.documents import DocumentPart
from agent_backtest.statistics import Estimate


class MeanEstimate(DocumentPart):
    """A mean with its standard error clustered by session, its 95% interval, and its counts."""

    mean: float | None = Field(description="The mean; None when there was nothing to average.")
    se: float | None = Field(
        description="Standard error clustered by session; None with fewer than two sessions."
    )
    ci95: tuple[float, float] | None = Field(
        description="The 95% interval [low, high]; None with fewer than two sessions."
    )
    n: int = Field(description="How many values the mean is over.")
    sessions: int = Field(description="How many sessions those values come from.")

    @classmethod
    def of(cls, estimate: Estimate) -> MeanEstimate:
        """The record of a computed estimate."""
        bounds = estimate.low, estimate.high
        return cls(
            mean=estimate.mean,
            se=estimate.se,
            ci95=None if None in bounds else bounds,
            n=estimate.n,
            sessions=estimate.clusters,
        )

    @property
    def low(self) -> float | None:
        """The lower end of the interval, or None."""
        return self.ci95[0] if self.ci95 else None

    @property
    def high(self) -> float | None:
        """The upper end of the interval, or None."""
        return self.ci95[1] if self.ci95 else None
