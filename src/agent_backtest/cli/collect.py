"""``abt collect``: an OTLP/HTTP receiver that writes what exporters send to a trace file."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Annotated

import typer

from agent_backtest import api
from agent_backtest.api.backends import DEFAULT_MAX_REQUEST_BYTES
from agent_backtest.cli.options import INPUTS, LARGEST, OUTPUT
from agent_backtest.cli.terminal import one_line


def collect(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            rich_help_panel=OUTPUT,
            metavar="FILE",
            help="Append what is received here: one OTLP/JSON TracesData per line (mode 0600), "
            "the collector's file-exporter form that abt ingest, units and replay read.",
        ),
    ],
    listen: Annotated[
        str,
        typer.Option(
            "--listen",
            rich_help_panel=INPUTS,
            metavar="HOST:PORT",
            help="Where to listen; exporters send to http://HOST:PORT/v1/traces (port 0: a "
            "free port, printed).",
        ),
    ] = "127.0.0.1:4318",
    max_request_bytes: Annotated[
        int,
        typer.Option(
            "--max-request-bytes",
            rich_help_panel=INPUTS,
            metavar="BYTES",
            min=1,
            max=LARGEST,
            help="Largest request body accepted, before and after gzip; a larger one gets 413.",
        ),
    ] = DEFAULT_MAX_REQUEST_BYTES,
) -> None:
    """Receive OTLP/HTTP traces (protobuf or JSON, gzip or not) and append them to a file
    until Ctrl-C or SIGTERM."""
    stop = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stop.set())

    def listening(url: str) -> None:
        print(f"abt collect: listening on {url}, writing {out}", file=sys.stderr, flush=True)

    counts = api.collect(
        listen, out, stop, max_request_bytes=max_request_bytes, on_listening=listening
    )
    refused = ", ".join(
        f"{count} with {status}" for status, count in sorted(counts.refused.items())
    )
    print(
        one_line(
            f"abt collect: stopped; wrote {counts.spans} spans from {counts.requests} requests "
            f"to {out}" + (f"; refused {refused}" if refused else "")
        ),
        file=sys.stderr,
        flush=True,
    )
