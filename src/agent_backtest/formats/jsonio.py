"""Reading JSON and JSON Lines with errors that name the file and the line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agent_backtest.errors import InputError


def load_json(path: Path) -> Any:
    """The whole file as one JSON document."""
    data = read_bytes(path)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            path,
            f"line {exc.lineno} column {exc.colno}",
            f"not valid JSON ({exc.msg}); check the file is complete",
        ) from None


def iter_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line, read one line at a time."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise InputError(
                    path,
                    f"line {number}",
                    f"not valid JSON ({exc.msg}); each line must be one JSON value",
                ) from None


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or an :class:`InputError` saying why it cannot be opened."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None


def is_json_lines(path: Path) -> bool:
    """True when the file's first non-blank line is a complete JSON value by itself.

    A pretty-printed document fails this (its first line is ``{``), a JSON Lines file passes.
    """
    try:
        with path.open("rb") as handle:
            for line in handle:
                if line.strip():
                    try:
                        orjson.loads(line)
                    except orjson.JSONDecodeError:
                        return False
                    return True
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None
    return False
