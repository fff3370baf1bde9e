"""Reading JSON and JSON Lines with errors that name the file and the line, within the limits
of ``formats.limits`` (nesting, string length, size); and JSON text recorded inside a record."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats.limits import MAX_DOCUMENT_BYTES, check_size, check_value


def load_json(path: Path) -> Any:
    """The whole file as one JSON document."""
    data = read_bytes(path)
    document = _decoded(data, path, None, "check the file is complete")
    return check_value(document, data, path)


def iter_json_lines(
    path: Path, expected: str = "each line must be one JSON value", nesting: bool = True
) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line, read one line at a time; ``expected`` is
    what an error on a line that is not JSON says the file must hold. ``nesting=False`` leaves
    the nesting limit to a reader that checks it where it recurses (orjson refuses a value
    nested past its own limit)."""
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        where = f"line {number}"
        value = _decoded(line, path, where, expected)
        yield number, check_value(value, line, path, where, nesting=nesting)


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of every line of the file, blank ones too, read one at a time and
    refused by size when a line is larger than a reader takes whole."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None
    with handle:
        number = 0
        while line := handle.readline(MAX_DOCUMENT_BYTES + 1):
            number += 1
            check_size(len(line), path, f"line {number}")
            yield number, line


def _decoded(data: bytes, path: Path, where: str | None, expected: str) -> Any:
    """``data`` as one JSON value, or an :class:`InputError` at ``where`` (None: where the
    parser stopped) that says what the file must hold."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        place = f"line {exc.lineno} column {exc.colno}" if where is None else where
        raise InputError(path, place, f"not valid JSON ({exc.msg}); {expected}") from None


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or an :class:`InputError` saying why it cannot be opened."""
    try:
        check_size(path.stat().st_size, path)
        return path.read_bytes()
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None


def is_json_lines(path: Path) -> bool:
    """True when the file's first non-blank line is a complete JSON value by itself.

    A pretty-printed document fails this (its first line is ``{``), a JSON Lines file passes.
    """
    try:
        with path.open("rb") as handle:
            while line := handle.readline(MAX_DOCUMENT_BYTES + 1):
                if line.strip():
                    try:
                        orjson.loads(line)
                    except orjson.JSONDecodeError:
                        return False
                    return True
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None
    return False


def json_text_value(value: Any, holder: str | None = None) -> Any:
    """A value recorded as JSON text, decoded whatever JSON it holds (a number, a string, …);
    anything but a string as it is. Text that is not JSON stays text, unless ``holder`` names
    what holds it: then it is a ``malformed_json`` :class:`RecordError`."""
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        if holder is None:
            return value
        raise RecordError("malformed_json", f"{holder} holds invalid JSON") from None
