"""``bench_report()``: a bench run's figures written into it (summary, CSV, page) and returned."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest.bench.results import (
    CSV_FILE,
    PAGE_FILE,
    SUMMARY_FILE,
    BenchSummary,
    CaseMean,
    write_results,
)

if TYPE_CHECKING:
    from agent_backtest.api.options import PathLike

__all__ = ["BenchReport", "BenchSummary", "CaseMean", "ResultFiles", "bench_report"]


@dataclass(frozen=True)
class ResultFiles:
    """Where a bench run keeps its figures."""

    summary: Path
    """summary.json: pass^k, pass@k, rewards and costs, with their intervals."""
    csv: Path
    """results.csv: one row per episode."""
    page: Path
    """report.html: the figures and every episode, for a person."""

    @classmethod
    def of(cls, run: PathLike) -> ResultFiles:
        """The result files of the bench run directory ``run``."""
        directory = Path(run)
        return cls(directory / SUMMARY_FILE, directory / CSV_FILE, directory / PAGE_FILE)


@dataclass(frozen=True)
class BenchReport:
    """A bench run's figures, and the files they were written to."""

    summary: BenchSummary
    files: ResultFiles


def bench_report(run: PathLike, *, allow_partial: bool = False) -> BenchReport:
    """(Re)write summary.json, results.csv and report.html into the bench run ``run`` and return
    its figures.

    A run that is still going (or was killed while it went) is refused unless
    ``allow_partial``: then the figures are those of what it recorded. A folder that is not a
    bench run is refused before anything is written.
    """
    directory = Path(run)
    summary = write_results(directory, allow_partial=allow_partial)
    return BenchReport(summary, ResultFiles.of(directory))
