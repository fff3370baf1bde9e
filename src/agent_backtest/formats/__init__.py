"""Readers of trace formats into the canonical trace model."""

from agent_backtest.formats.base import InputError, ReadOptions, RecordError, SkipLog
from agent_backtest.formats.collection import InputSummary, SessionStream
from agent_backtest.formats.registry import detect, format_names, reader_for

__all__ = [
    "InputError",
    "InputSummary",
    "ReadOptions",
    "RecordError",
    "SessionStream",
    "SkipLog",
    "detect",
    "format_names",
    "reader_for",
]
