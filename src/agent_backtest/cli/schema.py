"""``abt schema``: the JSON Schema of every record the tool reads and writes."""

from __future__ import annotations

from enum import StrEnum

import orjson
import typer

from agent_backtest import api
from agent_backtest.cli.options import argument

# The records api.schema knows, in its order: listed here so that the help names them without
# loading every model (a test keeps the two lists equal).
RECORD_NAMES = (
    *("session", "unit", "run_base", "run", "result", "score", "summary", "comparison"),
    *("profile", "patch", "patch_coverage", "benchmark", "bench_run", "episode", "grade"),
    *("bench_summary", "simulate_run", "conversation", "judging", "verdict", "simulate_summary"),
    *("simulate_comparison", "simulate_coverage"),
)
RecordName = StrEnum("RecordName", {name: name for name in RECORD_NAMES})
RecordArgument = argument(
    RecordName | None, "RECORD", "Print only this record's schema (default: all, keyed by record)."
)


def schema(
    record: RecordArgument = None,
) -> None:
    """Print the JSON Schema of every persisted record (sessions, units, run files)."""
    document = api.schema(record.value if record is not None else None)
    typer.echo(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
