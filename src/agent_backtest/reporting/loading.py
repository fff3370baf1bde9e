"""A scored run as the reports read it: manifest, summary, score records and results.

Reports never score: a run without ``scores.jsonl`` and ``summary.json`` is sent back to
``abt score``. Units are streamed, not held, because ``units.jsonl`` carries every request in full.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agent_backtest.errors import InputError
from agent_backtest.runs import (
    ResultRecord,
    RunDirectory,
    RunManifest,
    ScoreRecord,
    Summary,
    read_results,
)
from agent_backtest.units import Unit

Key = tuple[str, int]
Joined = tuple[Unit | None, ScoreRecord, ResultRecord | None]


@dataclass
class ScoredRun:
    """Everything a report shows about one run, except the units (streamed on demand)."""

    directory: RunDirectory
    manifest: RunManifest
    summary: Summary
    scores: list[ScoreRecord]
    results: dict[Key, ResultRecord] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        """The run directory."""
        return self.directory.path

    def units(self) -> Iterator[Unit]:
        """The run's units in order (an empty stream when units.jsonl is gone)."""
        if not self.directory.units_path.exists():
            return iter(())
        return self.directory.read_units()

    def joined(self) -> Iterator[Joined]:
        """Each score with its unit and result, in unit order then repeat.

        Scores whose unit is not in units.jsonl come last, with no unit, rather than vanish.
        """
        by_unit: dict[str, list[ScoreRecord]] = {}
        for record in self.scores:
            by_unit.setdefault(record.unit_id, []).append(record)
        for unit in self.units():
            for record in sorted(by_unit.pop(unit.unit_id, []), key=lambda r: r.repeat):
                yield unit, record, self.results.get((record.unit_id, record.repeat))
        for records in by_unit.values():
            for record in records:
                yield None, record, self.results.get((record.unit_id, record.repeat))

    def unscored_results(self) -> int:
        """Results with no score record: replayed after the last ``abt score``."""
        scored = {(s.unit_id, s.repeat) for s in self.scores}
        return sum(key not in scored for key in self.results)


def scored_summary(path: Path) -> Summary:
    """The summary of a scored run (without its records); a folder that is not one fails with
    what to do about it."""
    directory = RunDirectory(path)
    directory.load_manifest()
    return _summary_of(directory)


def load_run(path: Path, with_results: bool = True) -> ScoredRun:
    """Read a scored run; a folder that is not one fails with what to do about it."""
    directory = RunDirectory(path)
    manifest = directory.load_manifest()
    summary = _summary_of(directory)
    results = {r.key: r for r in read_results(directory.results_path)} if with_results else {}
    return ScoredRun(directory, manifest, summary, list(directory.read_scores()), results)


def _summary_of(directory: RunDirectory) -> Summary:
    if not directory.is_scored():
        path = directory.path
        raise InputError(path, None, f"is not scored yet: run abt score {path} first")
    return directory.read_summary()
