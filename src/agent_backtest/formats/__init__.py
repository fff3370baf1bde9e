"""Readers of trace formats into the canonical trace model."""

from agent_backtest.formats.base import Reader, ReadOptions, SkipLog
from agent_backtest.formats.collection import InputSummary, SessionStream, explain
from agent_backtest.formats.registry import READERS, detect, format_names, reader_for

__all__ = [
    "READERS",
    "InputSummary",
    "ReadOptions",
    "Reader",
    "SessionStream",
    "SkipLog",
    "detect",
    "explain",
    "format_names",
    "reader_for",
]
