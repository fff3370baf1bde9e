"""Turning a pydantic validation failure into one line that names the field (a JSON path)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError


def json_path(location: Sequence[int | str]) -> str:
    """``$.cases[2].title`` from pydantic's location tuple."""
    path = "$"
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def first_error(exc: ValidationError, drop: int = 0) -> tuple[str, str]:
    """(JSON path, message) of the first problem; ``drop`` leading location parts are wrappers."""
    error = exc.errors(include_url=False)[0]
    location = [part for part in error["loc"][drop:] if not _is_wrapper(part)]
    message = error["msg"]
    if error["type"] == "extra_forbidden":
        message = "unknown field (not part of the format)"
    elif message.startswith("Value error, "):
        message = message.removeprefix("Value error, ")
    return json_path(location), message


def _is_wrapper(part: int | str) -> bool:
    # pydantic names the validator of a constrained type in the location (e.g. "function-after")
    """True for a location part that names a validator, not a field."""
    return isinstance(part, str) and "[" in part
