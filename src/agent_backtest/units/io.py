"""Units JSONL files: telling one apart from a trace file, and reading it.

Replay reads a units file up to three times (the input, the run's units as they are sent, and
again to score), so reading is kept to one validating parse per line, and this module
leaves the trace readers (``formats/``) unimported: the commands that only read runs do not pay
for every reader.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from agent_backtest.errors import InputError
from agent_backtest.units.model import UNIT_SCHEMA, Unit


def is_units_file(path: Path) -> bool:
    """True when the file's first line is a unit record."""
    try:
        with path.open("rb") as handle:
            return f'"{UNIT_SCHEMA}"'.encode() in handle.readline()
    except (FileNotFoundError, IsADirectoryError):
        return False  # not a units file: the trace readers say what is wrong with it
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None


def read_units_file(path: Path) -> Iterator[Unit]:
    """The units of a units JSONL, in order, read one line at a time; a line that is not a
    unit is an error."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.isspace():
                yield _unit(path, number, line)


def _unit(path: Path, number: int, line: bytes) -> Unit:
    # Parsed and validated in one pass by pydantic: no dict of the whole line is built first.
    try:
        return Unit.model_validate_json(line)
    except ValidationError as exc:
        error = exc.errors()[0]
        if error["type"] == "json_invalid":
            why = error["ctx"]["error"] if "ctx" in error else error["msg"]
            raise InputError(
                path, f"line {number}", f"not valid JSON ({why}); each line must be one JSON value"
            ) from None
        from agent_backtest.formats.canonical import first_validation_error

        raise InputError(
            path, f"line {number}", f"not a unit record ({first_validation_error(exc)})"
        ) from None
