"""``abt push``: a scored run's verdicts written next to the production spans they judge, or
the replay itself sent as OpenTelemetry spans."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from agent_backtest import api
from agent_backtest.cli.options import OUTPUT, RequestsPerSecond


class Destination(StrEnum):
    """Where a run can be pushed."""

    phoenix = "phoenix"
    otlp = "otlp"


def push(
    run: Annotated[Path, typer.Argument(metavar="RUN", help="A scored replay run directory.")],
    to: Annotated[
        Destination,
        typer.Option(
            "--to",
            rich_help_panel=OUTPUT,
            help="phoenix: verdicts as span annotations; otlp: the replayed calls as GenAI "
            "spans to any OTLP/HTTP receiver.",
        ),
    ],
    endpoint: Annotated[
        str,
        typer.Option(
            "--endpoint",
            rich_help_panel=OUTPUT,
            metavar="URL",
            help="The backend, such as http://127.0.0.1:6006 (Phoenix) or "
            "http://127.0.0.1:4318 (an OTLP/HTTP receiver; /v1/traces is added).",
        ),
    ],
    requests_per_second: RequestsPerSecond = 5.0,
) -> None:
    """Push a scored run's verdicts onto the production spans they judge, as Phoenix span
    annotations. Each is named abt.agreement, and a second push updates them; the key, if the
    server wants one, is read from PHOENIX_API_KEY. With --to otlp, send each replayed call as
    an OpenTelemetry GenAI span, beside the production span it replays when the trace gave its
    ids (headers from OTEL_EXPORTER_OTLP_HEADERS)."""
    if to is Destination.otlp:
        sent = api.push_otlp(run, endpoint, requests_per_second=requests_per_second)
        typer.echo(
            f"sent {sent.spans} spans of run {sent.run_id} to {sent.url} ({sent.linked} beside "
            "their production span)"
        )
        return
    outcome = api.push_phoenix(run, endpoint, requests_per_second=requests_per_second)
    left = ", ".join(f"{reason} {count}" for reason, count in outcome.left_out.items())
    typer.echo(
        f"wrote {outcome.annotations} abt.agreement annotations for run {outcome.run_id}"
        + (f"; units without a verdict: {left}" if left else "")
    )
