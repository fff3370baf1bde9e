"""Tool-call arguments: kept parsed, with the raw string kept when it is not valid JSON."""

from __future__ import annotations

from typing import Any

import orjson


def parse_arguments(arguments: Any) -> tuple[Any, str | None, str | None]:
    """Return (parsed value, raw string if unparseable, parse error) for recorded arguments.

    Providers send arguments as a JSON string; some traces store the object itself. An empty
    string means "no arguments" and parses to an empty object, as OpenAI's own clients do.
    """
    if not isinstance(arguments, str):
        return arguments, None, None
    if arguments.strip() == "":
        return {}, None, None
    try:
        return orjson.loads(arguments), None, None
    except orjson.JSONDecodeError as exc:
        return None, arguments, f"invalid JSON: {exc}"
