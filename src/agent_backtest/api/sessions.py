"""``ingest()``: traces read as canonical sessions, with what each input held and gave."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_backtest.api.options import AgentOptions, PathLike, ReadingOptions
from agent_backtest.api.units import read_sessions
from agent_backtest.formats import InputSummary
from agent_backtest.units.source import UnitSource

__all__ = ["InputSummary", "InputUnits", "ingest"]


@dataclass(frozen=True)
class InputUnits:
    """One input read: what it held and skipped, and the replay units its sessions give."""

    summary: InputSummary
    units: Counter[str]
    """Units by kind (router, action)."""
    unit_skips: Counter[str]
    """LLM steps that gave no unit, by reason."""


def ingest(
    inputs: PathLike | Sequence[PathLike],
    *,
    reading: ReadingOptions | None = None,
    agent: AgentOptions | None = None,
    sink: Callable[[bytes], object] | None = None,
) -> list[InputUnits]:
    """Read ``inputs`` (any supported format) as canonical sessions and count, per input, the
    replay units they give under ``agent``'s rules; ``sink`` receives each session as it is read,
    as one line of canonical JSONL."""
    stream = read_sessions(inputs, reading)
    source = UnitSource(stream.paths, agent=(agent or AgentOptions()).config())
    for session in stream:
        if sink is not None:
            sink(stream.line + b"\n")
        source.count_units_of(stream.summaries[-1].file, session)
    return [InputUnits(summary, *source.for_input(summary)) for summary in stream.summaries]
