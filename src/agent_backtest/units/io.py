"""Units JSONL files: telling one apart from a trace file, and reading it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from agent_backtest.errors import InputError
from agent_backtest.formats.canonical import first_validation_error
from agent_backtest.formats.jsonio import iter_json_lines
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
    """The units of a units JSONL, in order; a line that is not a unit is an error."""
    for number, value in iter_json_lines(path):
        try:
            yield Unit.model_validate(value)
        except ValidationError as exc:
            raise InputError(
                path, f"line {number}", f"not a unit record ({first_validation_error(exc)})"
            ) from None
