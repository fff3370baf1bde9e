"""Readers of trace formats into the canonical trace model.

The names below are imported from their modules on first use: a command that needs one helper of
this package (the JSON-lines reader of a gold file, say) does not load every reader with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_backtest.exports import lazy_exports

if TYPE_CHECKING:
    from agent_backtest.formats.base import Reader, ReadOptions, SkipLog
    from agent_backtest.formats.collection import InputSummary, SessionStream, explain
    from agent_backtest.formats.registry import READERS, detect, format_names, reader_for

_HOMES = {
    "READERS": "agent_backtest.formats.registry",
    "InputSummary": "agent_backtest.formats.collection",
    "ReadOptions": "agent_backtest.formats.base",
    "Reader": "agent_backtest.formats.base",
    "SessionStream": "agent_backtest.formats.collection",
    "SkipLog": "agent_backtest.formats.base",
    "detect": "agent_backtest.formats.registry",
    "explain": "agent_backtest.formats.collection",
    "format_names": "agent_backtest.formats.registry",
    "reader_for": "agent_backtest.formats.registry",
}
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

_exported = lazy_exports(_HOMES, globals())


def __getattr__(name: str) -> Any:
    return _exported(name)
