"""How much of a hostile input the readers take: nesting, document size, and how much of a value
an error message quotes.

Real traces nest a few dozen levels at most (a span, its attributes, a message, a tool call, its
JSON Schema). Deeper values are refused where they are parsed, with their JSON path, before any
recursive code (validation, hashing, serialisation) meets them. The depth is measured on the
document's text, whose brackets outside strings take a few byte operations to count; only a
document found too deep is walked, to name where. A reader that knows the one place its values
nest (OTLP's attribute values) counts the levels there instead, and orjson refuses any document
nested past its own limit. So are strings longer than any
real field (looked for only in documents large enough to hold one, so a normal input pays
nothing); a file larger than a reader would hold whole is refused by its size, before it is
read. JSON numbers need no limit of their own: orjson refuses those past 64 bits or a double.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent_backtest.errors import InputError

MAX_DEPTH = 128
"""Levels of nesting of arrays and objects a value may have."""
MAX_DOCUMENT_BYTES = 1 << 30
"""Size of an input read whole (a JSON document, a YAML cassette, one JSON line)."""
MAX_STRING_CHARS = 32 << 20
"""Characters one string value may hold (a long base64 image fits; a runaway field does not)."""
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


def too_long_at(value: Any, limit: int = MAX_STRING_CHARS) -> str | None:
    """The JSON path of a string longer than ``limit`` characters, or None."""
    pending: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while pending:
        node, path = pending.pop()
        if isinstance(node, str) and len(node) > limit:
            return json_path(path)
        if isinstance(node, dict):
            pending.extend((child, (*path, key)) for key, child in node.items())
        elif isinstance(node, list):
            pending.extend((child, (*path, index)) for index, child in enumerate(node))
    return None


def text_deeper_than(text: bytes, limit: int = MAX_DEPTH) -> bool:
    """True when the JSON ``text`` (valid JSON) nests arrays and objects deeper than ``limit``.

    Brackets inside strings do not count. Escapes go first (a backslash pair, then an escaped
    quote, as a parser reads them left to right), so the quotes left delimit strings; then
    every byte but brackets and quotes, then the strings. Each round of removing the innermost
    ``[]`` pairs takes one level off every branch, so the rounds needed to empty the brackets
    are the depth.
    """
    if text.count(b"[") + text.count(b"{") <= limit:
        return False
    if b"\\\\" in text:
        text = text.replace(b"\\\\", b"")
    shape = text.replace(b'\\"', b"").translate(_BRACKETS, _NOT_SHAPE)
    # Empty strings (most keys and values by now) go cheaply; merging two strings over a
    # stretch that held no bracket changes nothing either.
    shape = shape.replace(b'""', b"")
    if b'"' in shape:
        shape = _STRING.sub(b"", shape)
    for _ in range(limit):
        shape = shape.replace(b"[]", b"")
        if not shape:
            return False
    return True


_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_SHAPE = bytes(byte for byte in range(256) if byte not in b'[]{}"')
_STRING = re.compile(rb'"[^"]*"')


def check_value(
    value: Any, text: bytes, file: str | Path, where: str | None = None, nesting: bool = True
) -> Any:
    """``value`` (parsed from ``text``), or an :class:`InputError` naming where it nests too
    deep or holds too long a string; ``nesting=False`` leaves the depth to the caller."""
    if nesting and text_deeper_than(text):
        path = too_deep_at(value)
        if path is not None:
            raise InputError(
                file, _at(where, path), f"value too deep: nested more than {MAX_DEPTH} levels"
            )
    if len(text) > MAX_STRING_CHARS:  # only a document this large can hold such a string
        path = too_long_at(value, MAX_STRING_CHARS)
        if path is not None:
            raise InputError(
                file,
                _at(where, path),
                f"string too long: more than {MAX_STRING_CHARS:,} characters",
            )
    return value


def _at(where: str | None, path: str) -> str:
    return f"{where} {path}" if where else path


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
    steps = "".join(
        f"[{step}]" if isinstance(step, int) else f".{str(step)[:40]}" for step in path[:limit]
    )
    return "$" + steps + ("…" if len(path) > limit else "")


def _container(value: Any) -> bool:
    return isinstance(value, dict | list)
