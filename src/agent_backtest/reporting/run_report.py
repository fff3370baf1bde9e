"""``abt report``: write ``results.csv`` and ``report.html`` into a scored run's directory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_backtest.reporting.csv_export import write_results_csv
from agent_backtest.reporting.latency import CandidateFigures
from agent_backtest.reporting.loading import Joined, ScoredRun, load_run, unscored_results
from agent_backtest.reporting.page_data import PageData
from agent_backtest.reporting.report_page import report_warnings, write_report_page
from agent_backtest.runs import private_atomic_writer, read_results
from agent_backtest.runs.records import ResultIndex
from agent_backtest.runs.scores import ScoreIndex


@dataclass
class ReportOutcome:
    """What was written, and the run it describes (for the terminal summary)."""

    run: ScoredRun
    csv_path: Path
    html_path: Path
    rows: int
    warnings: list[str]


def write_report(path: Path, show_secrets: bool = False) -> ReportOutcome:
    """Read the scored run at ``path`` once and write both files (mode 0600).

    Each (unit, repeat) is written to the CSV and to the page's tables as it is read; only
    the page's top (counts, the candidate's latencies) is kept until the page is written.
    Values shaped like credentials in the page's messages are masked unless ``show_secrets``.
    """
    run = load_run(path)
    directory = run.directory
    scores, results = ScoreIndex(directory.scores_path), ResultIndex(directory.results_path)
    data = PageData(show_secrets)

    def feed() -> Iterator[Joined]:
        for item in run.joined(scores, results):
            data.add(*item)
            yield item

    try:
        late = unscored_results(scores, results)
        rows = write_results_csv(feed(), directory.csv_path, run.summary.labels)
        candidate = CandidateFigures.of(read_results(directory.results_path))
        warnings = report_warnings(run, data, late)
        with private_atomic_writer(directory.report_path) as handle:
            write_report_page(handle, run, data, candidate, warnings)
    finally:
        data.close()
        scores.close()
        results.close()
    return ReportOutcome(run, directory.csv_path, directory.report_path, rows, warnings)
