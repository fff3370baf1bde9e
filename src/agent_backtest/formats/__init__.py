"""Readers of trace formats into the canonical trace model."""

from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.formats.collection import InputSummary, SessionStream, explain
from agent_backtest.formats.registry import detect, format_names, reader_for

__all__ = [
    "InputSummary",
    "ReadOptions",
    "SessionStream",
    "SkipLog",
    "detect",
    "explain",
    "format_names",
    "reader_for",
]
