"""``read_sessions()`` and ``build_units()``: traces in any format as sessions, and as units."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from agent_backtest.api.options import AgentOptions, PathLike, ReadingOptions, SelectionOptions
from agent_backtest.errors import UserError
from agent_backtest.formats import SessionStream
from agent_backtest.units import Unit


def _paths(inputs: PathLike | Sequence[PathLike]) -> list[Path]:
    paths = [Path(inputs)] if isinstance(inputs, str | Path) else [Path(p) for p in inputs]
    if not paths:
        raise UserError("give at least one input file", "inputs")
    return paths


def read_sessions(
    inputs: PathLike | Sequence[PathLike], reading: ReadingOptions | None = None
) -> SessionStream:
    """The sessions of ``inputs`` (format detected from the content, or ``reading.format``),
    streamed; the stream's ``summaries`` say per input what was read and what was skipped."""
    reading = reading or ReadingOptions()
    return SessionStream(_paths(inputs), reading.read_options(), format=reading.format)


def build_units(
    inputs: PathLike | Sequence[PathLike],
    *,
    reading: ReadingOptions | None = None,
    agent: AgentOptions | None = None,
    selection: SelectionOptions | None = None,
) -> Iterator[Unit]:
    """One replay unit per recorded LLM step of ``inputs`` (or the units of a units JSONL),
    selected: the request exactly as production sent it, and production's answer."""
    reading, agent = reading or ReadingOptions(), agent or AgentOptions()
    source = reading.source(_paths(inputs), agent.config())
    return (selection or SelectionOptions()).selection().apply(source)
