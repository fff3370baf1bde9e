"""``abt report``: results.csv and a self-contained report.html for a scored run."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from agent_backtest.cli.terminal import SafeConsole
from agent_backtest.reporting import report_markdown, write_report
from agent_backtest.reporting.figures import rate, rate_with_count


class OutputFormat(StrEnum):
    """How a reporting command prints its summary."""

    text = "text"
    markdown = "markdown"


RunArgument = Annotated[
    Path,
    typer.Argument(
        metavar="RUN", show_default=False, help="A scored run directory (abt replay/score)."
    ),
]
FormatOption = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        metavar="text|markdown",
        help="Print the summary as text, or as Markdown fit for a "
        "pull-request comment (file paths then go to stderr).",
    ),
]


def report(run: RunArgument, output_format: FormatOption = OutputFormat.text) -> None:
    """Write results.csv and report.html (one offline page) into a scored run's directory."""
    outcome = write_report(run)
    summary = outcome.run.summary
    if output_format is OutputFormat.markdown:
        sys.stdout.write(report_markdown(run.name, summary, outcome.warnings))
    else:
        console = SafeConsole(highlight=False)
        for warning in outcome.warnings:
            console.print(f"warning: {warning}", style="yellow", markup=False)
        counts = summary.counts
        console.print(
            f"agreement {rate(summary.overall.agreement)} · strict "
            f"{rate(summary.overall.strict)} · {counts.coverage()}",
            markup=False,
        )
        if summary.topic_agreement.n:
            console.print(
                f"router agreement {rate_with_count(summary.topic_agreement)}", markup=False
            )
    SafeConsole(stderr=output_format is OutputFormat.markdown, highlight=False).print(
        f"wrote {outcome.csv_path} ({outcome.rows} rows) and {outcome.html_path}", markup=False
    )
