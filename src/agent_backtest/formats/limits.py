"""How much of a hostile input the readers take: nesting, document size, and how much of a value
an error message quotes.

Real traces nest a few dozen levels at most (a span, its attributes, a message, a tool call, its
JSON Schema). Deeper values are refused where they are parsed, with their JSON path, before any
recursive code (validation, hashing, serialisation) meets them; a file larger than a reader
would hold whole is refused by its size, before it is read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_backtest.errors import InputError

MAX_DEPTH = 128
"""Levels of nesting of arrays and objects a value may have."""
MAX_DOCUMENT_BYTES = 1 << 30
"""Size of an input read whole (a JSON document, a YAML cassette, one JSON line)."""
QUOTE_CHARACTERS = 200
"""How much of a value an error message shows."""


def quote(value: Any, limit: int = QUOTE_CHARACTERS) -> str:
    """``repr`` of ``value`` cut to ``limit`` characters, saying how long it was when cut."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    text = repr(value) if not isinstance(value, dict | list) else f"a {type(value).__name__}"
    return text if len(text) <= limit else text[:limit] + "…"


def too_deep_at(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """The JSON path of a value nested deeper than ``limit``, or None when none is.

    Walks level by level without recursion, so any depth is measured.
    """
    level: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    for _ in range(limit):
        deeper = []
        for node, path in level:
            if isinstance(node, dict):
                deeper.extend(
                    ((child, (*path, key)) for key, child in node.items() if _container(child))
                )
            elif isinstance(node, list):
                deeper.extend(
                    (
                        (child, (*path, index))
                        for index, child in enumerate(node)
                        if _container(child)
                    )
                )
        if not deeper:
            return None
        level = deeper
    return json_path(level[0][1])


def check_depth(value: Any, file: str | Path, where: str | None = None) -> Any:
    """``value``, or an :class:`InputError` naming where it nests too deep."""
    if _container(value):
        path = too_deep_at(value)
        if path is not None:
            location = f"{where} {path}" if where else path
            raise InputError(file, location, f"value too deep: nested more than {MAX_DEPTH} levels")
    return value


def check_size(size: int, file: str | Path, what: str = "the file") -> None:
    """An :class:`InputError` for an input larger than :data:`MAX_DOCUMENT_BYTES`."""
    if size > MAX_DOCUMENT_BYTES:
        raise InputError(
            file,
            None,
            f"{what} is {size:,} bytes, more than the {MAX_DOCUMENT_BYTES:,} a reader takes "
            "whole; split it (JSON Lines are read a line at a time)",
        )


def json_path(path: tuple[Any, ...], limit: int = 12) -> str:
    """``$.a.b[0]…``: the first ``limit`` steps of a path into a JSON value."""
    steps = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path[:limit])
    return "$" + steps + ("…" if len(path) > limit else "")


def _container(value: Any) -> bool:
    return isinstance(value, dict | list)
