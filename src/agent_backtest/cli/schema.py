"""``abt schema``: the JSON Schema of the records the tool reads and writes."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import orjson
import typer

from agent_backtest.trace import Session
from agent_backtest.units import Unit


class RecordName(StrEnum):
    """The persisted records that have a schema."""

    session = "session"
    unit = "unit"


RECORDS = {RecordName.session: Session, RecordName.unit: Unit}


def schema(
    record: Annotated[
        RecordName | None,
        typer.Argument(
            metavar="RECORD",
            help="Print only this record's schema (default: all, keyed by record).",
        ),
    ] = None,
) -> None:
    """Print the JSON Schema of the persisted records (sessions JSONL, units JSONL)."""
    if record is not None:
        document = RECORDS[record].model_json_schema(by_alias=True)
    else:
        document = {
            name.value: model.model_json_schema(by_alias=True) for name, model in RECORDS.items()
        }
    typer.echo(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
