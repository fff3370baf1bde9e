"""The candidate's latencies and token counts over a run's results, gathered as they stream."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

from agent_backtest.runs import ResultRecord


@dataclass
class CandidateFigures:
    """Every result's latency and token counts (8 bytes a figure: percentiles need them all)
    and how many answers came from the response cache."""

    latencies: array[float] = field(default_factory=lambda: array("d"))
    output_tokens: array[int] = field(default_factory=lambda: array("q"))
    input_tokens: array[int] = field(default_factory=lambda: array("q"))
    cached: int = 0

    @classmethod
    def of(cls, results: Iterable[ResultRecord]) -> CandidateFigures:
        """The figures of ``results``."""
        figures = cls()
        for result in results:
            figures.add(result)
        return figures

    def add(self, result: ResultRecord) -> None:
        """Count one result."""
        self.cached += result.cache_hit
        if result.latency_ms is not None:
            self.latencies.append(result.latency_ms)
        usage = result.response.usage if result.response else None
        if usage is None:
            return
        if usage.output_tokens is not None:
            self.output_tokens.append(usage.output_tokens)
        if usage.input_tokens is not None:
            self.input_tokens.append(usage.input_tokens)
