"""``abt pull phoenix`` and ``abt pull langfuse``: traces from a running backend into a file
the readers take; an interrupted pull into the same file resumes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agent_backtest import api
from agent_backtest.cli.options import (
    CALLS,
    INPUTS,
    OUTPUT,
    SELECTION,
    RequestsPerSecond,
    option,
)
from agent_backtest.cli.terminal import one_line

if TYPE_CHECKING:
    from agent_backtest.api.backends import PullOutcome

Output = option(
    Path,
    "-o --output",
    OUTPUT,
    "Write the traces here (mode 0600); the pull's progress is kept in FILE.pull.json.",
    metavar="FILE",
)


def _time_bound(flags: str, help: str) -> Any:
    """An option bounding the pull in time: an ISO 8601 time."""
    return option(str | None, flags, SELECTION, help, metavar="TIME")


Since = _time_bound("--since", "Only from this ISO 8601 time on (UTC if bare).")
Until = _time_bound("--until", "Only before this ISO 8601 time (UTC if bare).")
Rate = RequestsPerSecond


def _page_size(items: str) -> Any:
    """The --page-size option of a pull that asks for ``items`` a request."""
    return option(int, "--page-size", CALLS, f"{items} per request.", metavar="N", min=1, max=1000)


SpansPerRequest = _page_size("Spans")
TracesPerRequest = _page_size("Traces")


def phoenix(
    endpoint: Annotated[
        str,
        typer.Option(
            "--endpoint",
            rich_help_panel=INPUTS,
            metavar="URL",
            help="The Phoenix server, such as http://127.0.0.1:6006.",
        ),
    ],
    project: Annotated[
        str, typer.Option("--project", rich_help_panel=INPUTS, metavar="NAME", help="The project.")
    ],
    output: Output,
    since: Since = None,
    until: Until = None,
    page_size: SpansPerRequest = 500,
    requests_per_second: Rate = 5.0,
) -> None:
    """Pull a Phoenix project's spans into an OTLP/JSON trace file (OpenInference attributes
    kept); resumable. The key, if the server wants one, is read from PHOENIX_API_KEY."""
    outcome = api.pull_phoenix(
        endpoint,
        project,
        output,
        since=since,
        until=until,
        page_size=page_size,
        requests_per_second=requests_per_second,
    )
    _print(outcome, "spans")


def langfuse(
    output: Output,
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint",
            rich_help_panel=INPUTS,
            metavar="URL",
            help="The Langfuse base URL (default: LANGFUSE_HOST or LANGFUSE_BASE_URL).",
        ),
    ] = None,
    since: Since = None,
    until: Until = None,
    page_size: TracesPerRequest = 50,
    requests_per_second: Rate = 5.0,
) -> None:
    """Pull Langfuse traces with their observations into the export the Langfuse reader takes;
    resumable. The keys are read from LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY."""
    outcome = api.pull_langfuse(
        output,
        endpoint=endpoint,
        since=since,
        until=until,
        page_size=page_size,
        requests_per_second=requests_per_second,
    )
    _print(outcome, "traces")


def _print(outcome: PullOutcome, what: str) -> None:
    how = f"resumed, added {outcome.added}" if outcome.resumed else "complete"
    typer.echo(one_line(f"wrote {outcome.records} {what} to {outcome.output} ({how})"))
