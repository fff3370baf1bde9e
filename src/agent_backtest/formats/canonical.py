"""Reader of the project's own canonical JSONL: one session per line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from agent_backtest.formats.base import ReadOptions, SkipLog, first_validation_error
from agent_backtest.formats.jsonio import iter_json_lines
from agent_backtest.trace import SESSION_SCHEMA, Session

FORMAT = "canonical"


def sniff(head: str, path: Path) -> bool:
    """True when the first line is a session record of this project's schema."""
    first = head.lstrip().split("\n", 1)[0]
    return first.startswith("{") and f'"{SESSION_SCHEMA}"' in first


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[Session]:
    """Yield each line's session; a line that does not validate is skipped as invalid."""
    for number, value in iter_json_lines(path):
        try:
            yield Session.model_validate(value)
        except ValidationError as exc:
            skips.skip("invalid_session", f"line {number}", first_validation_error(exc))
