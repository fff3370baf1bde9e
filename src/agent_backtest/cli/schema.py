"""``abt schema``: the JSON Schema of every record the tool reads and writes."""

from __future__ import annotations

from enum import StrEnum

import orjson
import typer

from agent_backtest import api
from agent_backtest.api.schemas import RECORDS
from agent_backtest.cli.options import argument

RecordName = StrEnum("RecordName", {name: name for name in RECORDS})
RecordArgument = argument(
    RecordName | None, "RECORD", "Print only this record's schema (default: all, keyed by record)."
)


def schema(
    record: RecordArgument = None,
) -> None:
    """Print the JSON Schema of every persisted record (sessions, units, run files)."""
    document = api.schema(record.value if record is not None else None)
    typer.echo(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
