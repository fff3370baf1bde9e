"""``abt report``: results.csv and a self-contained report.html for a scored run; summary.json
and report.html for a simulate run."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest import api
from agent_backtest.cli.markdown import cell, report_markdown
from agent_backtest.cli.options import OUTPUT, ShowSecrets, argument, option
from agent_backtest.cli.score import headline_lines
from agent_backtest.cli.simulate_figures import summary_lines
from agent_backtest.cli.terminal import SafeConsole, one_line, print_warnings
from agent_backtest.reporting.figures import rate_with_count

if TYPE_CHECKING:
    from agent_backtest.api.results import SimulateReport


class OutputFormat(StrEnum):
    """How a reporting command prints its summary."""

    text = "text"
    markdown = "markdown"


RunArgument = argument(
    Path, "RUN", "A scored run directory (abt replay/score), or a simulate run (abt simulate run)."
)
FormatOption = option(
    OutputFormat,
    "--format",
    OUTPUT,
    "Print the summary as text, or as Markdown fit for a pull-request comment (file paths then "
    "go to stderr).",
    metavar="text|markdown",
)


def report(
    run: RunArgument,
    output_format: FormatOption = OutputFormat.text,
    show_secrets: ShowSecrets = False,
) -> None:
    """Write results.csv and report.html (one offline page) into a scored run's directory, or
    summary.json and report.html into a simulate run's."""
    from agent_backtest.api.results import SimulateReport

    outcome = api.report(run, show_secrets=show_secrets)
    if isinstance(outcome, SimulateReport):
        _print_simulate(run, outcome, output_format)
        return
    summary = outcome.run.summary
    if output_format is OutputFormat.markdown:
        sys.stdout.write(report_markdown(run.name, summary, outcome.warnings))
    else:
        console = SafeConsole(highlight=False)
        print_warnings(console, outcome.warnings)
        for line in headline_lines(summary):
            console.print(line, markup=False)
        if summary.topic_agreement.n:
            console.print(
                f"router agreement {rate_with_count(summary.topic_agreement)}", markup=False
            )
    SafeConsole(stderr=output_format is OutputFormat.markdown, highlight=False).print(
        one_line(f"wrote {outcome.csv_path} ({outcome.rows} rows) and {outcome.html_path}"),
        markup=False,
    )


def _print_simulate(run: Path, outcome: SimulateReport, output_format: OutputFormat) -> None:
    """A simulate run's pass rates, as text or Markdown, then where they were written."""
    lines = summary_lines(outcome.summary)
    if output_format is OutputFormat.markdown:
        sys.stdout.write(markdown_lines(f"abt report: {run.name}", lines))
    else:
        console = SafeConsole(highlight=False)
        for line in lines:
            console.print(line, markup=False, soft_wrap=True)
    SafeConsole(stderr=output_format is OutputFormat.markdown, highlight=False).print(
        one_line(f"wrote {outcome.summary_path} and {outcome.page_path}"), markup=False
    )


def markdown_lines(title: str, lines: list[str]) -> str:
    """A heading and a list of lines, each escaped for Markdown (no raw HTML, no pipes); a line
    indented by two spaces is an item of the one before."""
    items = [
        f"  - {cell(line[2:])}" if line.startswith("  ") else f"- {cell(line)}" for line in lines
    ]
    return f"### {cell(title)}\n\n" + "".join(item + "\n" for item in items)
