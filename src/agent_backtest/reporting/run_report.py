"""``abt report``: write ``results.csv`` and ``report.html`` into a scored run's directory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_backtest.reporting.csv_export import write_results_csv
from agent_backtest.reporting.loading import Joined, ScoredRun, load_run
from agent_backtest.reporting.page_data import PageData
from agent_backtest.reporting.report_page import render_report, report_warnings
from agent_backtest.runs import private_atomic_writer


@dataclass
class ReportOutcome:
    """What was written, and the run it describes (for the terminal summary)."""

    run: ScoredRun
    csv_path: Path
    html_path: Path
    rows: int
    warnings: list[str]


def write_report(path: Path) -> ReportOutcome:
    """Read the scored run at ``path`` once and write both files (mode 0600)."""
    run = load_run(path)
    data = PageData()

    def feed() -> Iterator[Joined]:
        for item in run.joined():
            data.add(*item)
            yield item

    csv_path, html_path = run.directory.csv_path, run.directory.report_path
    rows = write_results_csv(feed(), csv_path, run.summary.labels)
    with private_atomic_writer(html_path) as handle:
        handle.write(render_report(run, data).encode("utf-8"))
    return ReportOutcome(run, csv_path, html_path, rows, report_warnings(run, data))
