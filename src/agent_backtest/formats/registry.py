"""The readers by format name, and format detection by content."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from agent_backtest.errors import InputError, UserError
from agent_backtest.formats import (
    canonical,
    cassette,
    chat_log,
    langfuse,
    otlp,
    session_steps,
    tau_bench,
)

# Sniff order matters: the most specific markers first.
READERS: tuple[ModuleType, ...] = (
    canonical,
    otlp,
    langfuse,
    tau_bench,
    session_steps,
    chat_log,
    cassette,
)
HEAD_BYTES = 64 * 1024


def format_names() -> list[str]:
    """The names ``--format`` accepts."""
    return [reader.FORMAT for reader in READERS]


def reader_for(name: str) -> ModuleType:
    """The reader of a named format."""
    for reader in READERS:
        if reader.FORMAT == name:
            return reader
    raise UserError(f"unknown format {name!r}; one of: " + ", ".join(format_names()), "format")


def detect(path: Path) -> ModuleType:
    """The reader whose sniff recognises the start of the file."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None
    for reader in READERS:
        if reader.sniff(head, path):
            return reader
    raise InputError(
        path,
        None,
        "cannot tell the format from the content; pass --format "
        "(one of: " + ", ".join(format_names()) + ")",
    )
