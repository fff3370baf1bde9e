"""``abt push``: a scored run's verdicts written next to the production spans they judge."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from agent_backtest import api
from agent_backtest.cli.options import OUTPUT, RequestsPerSecond


class Destination(StrEnum):
    """Where verdicts can be pushed."""

    phoenix = "phoenix"


def push(
    run: Annotated[Path, typer.Argument(metavar="RUN", help="A scored replay run directory.")],
    to: Annotated[
        Destination,
        typer.Option(
            "--to", rich_help_panel=OUTPUT, help="The backend that holds the production spans."
        ),
    ],
    endpoint: Annotated[
        str,
        typer.Option(
            "--endpoint",
            rich_help_panel=OUTPUT,
            metavar="URL",
            help="The backend, such as http://127.0.0.1:6006.",
        ),
    ],
    requests_per_second: RequestsPerSecond = 5.0,
) -> None:
    """Push a scored run's verdicts onto the production spans they judge, as Phoenix span
    annotations. Each is named abt.agreement, and a second push updates them; the key, if the
    server wants one, is read from PHOENIX_API_KEY."""
    outcome = api.push_phoenix(run, endpoint, requests_per_second=requests_per_second)
    left = ", ".join(f"{reason} {count}" for reason, count in outcome.left_out.items())
    typer.echo(
        f"wrote {outcome.annotations} abt.agreement annotations for run {outcome.run_id}"
        + (f"; units without a verdict: {left}" if left else "")
    )
