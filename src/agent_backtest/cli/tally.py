"""Counting, per input, the units its sessions give and the LLM steps that give none."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

from agent_backtest.cli.options import session_stream
from agent_backtest.formats import InputSummary
from agent_backtest.trace import Session
from agent_backtest.units import (
    AgentConfig,
    Unit,
    UnitSkip,
    is_units_file,
    read_units_file,
    units_from_session,
)


class UnitTally:
    """Units by kind and unit skips by reason, per input file."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.units: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.skips: defaultdict[str, Counter[str]] = defaultdict(Counter)

    def units_of(self, file: str, session: Session) -> Iterator[Unit]:
        """The session's units, counted for ``file`` as they pass."""
        for item in units_from_session(session, self.config):
            if isinstance(item, UnitSkip):
                self.skips[file][item.reason] += 1
            else:
                self.units[file][item.kind] += 1
                yield item

    def count(self, file: str, session: Session) -> None:
        """Count the session's units without keeping them."""
        for _ in self.units_of(file, session):
            pass

    def for_input(self, summary: InputSummary) -> tuple[Counter[str], Counter[str]]:
        """(units by kind, skips by reason) of one input."""
        return self.units[summary.file], self.skips[summary.file]


def units_from_inputs(
    inputs: list[Path],
    format: str | None,
    tools: Path | None,
    recorded_model: str | None,
    strict: bool,
    config: AgentConfig,
) -> Iterator[Unit]:
    """The units of a units file, or of trace files read with the shared options."""
    if len(inputs) == 1 and is_units_file(inputs[0]):
        yield from read_units_file(inputs[0])
        return
    stream = session_stream(inputs, format, tools, recorded_model, strict)
    tally = UnitTally(config)
    for session in stream:
        yield from tally.units_of(stream.summaries[-1].file, session)
