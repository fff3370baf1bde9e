"""``read_sessions()``, ``build_units()`` and ``write_units()``: traces in any format as
sessions, and as units."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_backtest.api.options import AgentOptions, PathLike, ReadingOptions, SelectionOptions
from agent_backtest.errors import UserError
from agent_backtest.formats import InputSummary, SessionStream
from agent_backtest.trace import dump_record
from agent_backtest.units import Unit
from agent_backtest.units.selection import ExclusionSummary

__all__ = [
    "ExclusionSummary",
    "InputSummary",
    "Unit",
    "UnitsWritten",
    "build_units",
    "read_sessions",
    "write_units",
]


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


@dataclass
class UnitsWritten:
    """What :func:`write_units` read, selected and wrote."""

    written: Counter[str]
    """Units written by kind (router, action), and by split (``split test``, ``split val``)."""
    dropped: Counter[str]
    """Units the selection left out, by reason."""
    exclusion: ExclusionSummary | None
    """What the exclusion file named and matched; None without one."""
    inputs: list[tuple[InputSummary, Counter[str], Counter[str]]] = field(default_factory=list)
    """Per trace input: what it held, its units by kind, its LLM steps without one by reason."""
    units_file: Counter[str] | None = None
    """From a units file instead: its units by kind (the kinds as written, or recomputed)."""
    reclassified: bool = False
    """True when the units file's kinds were recomputed under the router rules given."""


def write_units(
    inputs: PathLike | Sequence[PathLike],
    sink: Callable[[bytes], object],
    *,
    reading: ReadingOptions | None = None,
    agent: AgentOptions | None = None,
    selection: SelectionOptions | None = None,
) -> UnitsWritten:
    """Build and select the units of ``inputs`` as :func:`build_units` does, and give each to
    ``sink`` as one line of JSONL; what was written, left out and read."""
    reading, agent = reading or ReadingOptions(), agent or AgentOptions()
    chosen = (selection or SelectionOptions()).selection()
    paths = _paths(inputs)
    source = reading.source(paths, agent.config())
    written: Counter[str] = Counter()
    for unit in chosen.apply(source):
        sink(dump_record(unit) + b"\n")
        written[unit.kind] += 1
        if unit.split:
            written[f"split {unit.split}"] += 1
    result = UnitsWritten(written, chosen.dropped, chosen.exclusion())
    if source.from_units_file:
        result.units_file = source.units[str(paths[0])]
        result.reclassified = source.reclassified
    else:
        result.inputs = [(s, *source.for_input(s)) for s in source.summaries]
    return result
