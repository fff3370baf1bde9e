"""``abt schema``: the JSON Schema of every record the tool reads and writes."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import orjson
import typer

from agent_backtest import api
from agent_backtest.api.schemas import RECORDS

RecordName = StrEnum("RecordName", {name: name for name in RECORDS})


def schema(
    record: Annotated[
        RecordName | None,
        typer.Argument(
            metavar="RECORD",
            help="Print only this record's schema (default: all, keyed by record).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Print the JSON Schema of every persisted record (sessions, units, run files)."""
    document = api.schema(record.value if record is not None else None)
    typer.echo(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
