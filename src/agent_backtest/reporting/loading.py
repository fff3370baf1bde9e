"""A scored run as the reports read it: manifest, summary, and its records streamed.

Reports never score: a run without ``scores.jsonl`` and ``summary.json`` is sent back to
``abt score``. Units, scores and results are streamed, not held: ``units.jsonl`` carries every
request in full, and a run's records grow with it. Scores and results are found through an
index of where each starts in its file, so they join whatever order they were written in.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_backtest.errors import InputError
from agent_backtest.runs import ResultRecord, RunDirectory, RunManifest, ScoreRecord, Summary
from agent_backtest.runs.records import ResultIndex
from agent_backtest.runs.scores import ScoreIndex
from agent_backtest.units import Unit

Key = tuple[str, int]
Joined = tuple[Unit | None, ScoreRecord, ResultRecord | None]


@dataclass
class ScoredRun:
    """Everything a report shows about one run, read from its directory on demand."""

    directory: RunDirectory
    manifest: RunManifest
    summary: Summary

    @property
    def path(self) -> Path:
        """The run directory."""
        return self.directory.path

    def units(self) -> Iterator[Unit]:
        """The run's units in order (an empty stream when units.jsonl is gone)."""
        if not self.directory.units_path.exists():
            return iter(())
        return self.directory.read_units()

    def scores(self) -> Iterator[ScoreRecord]:
        """The run's score records, in their file's order."""
        return self.directory.read_scores()

    def joined(self, scores: ScoreIndex, results: ResultIndex) -> Iterator[Joined]:
        """Each score with its unit and result, in unit order then repeat.

        Scores whose unit is not in units.jsonl come last, with no unit, rather than vanish.
        """
        for unit in self.units():
            for score in scores.take(unit.unit_id):
                yield unit, score, results.get(score.unit_id, score.repeat)
        for key in scores.offsets.units():
            for score in scores.take_key(key):
                yield None, score, results.get(score.unit_id, score.repeat)


def unscored_results(scores: ScoreIndex, results: ResultIndex) -> int:
    """Results with no score record: replayed after the last ``abt score``."""
    late = 0
    for key in results.offsets.units():
        scored = {repeat for repeat, _ in scores.offsets.of(key)}
        late += sum(repeat not in scored for repeat, _ in results.offsets.of(key))
    return late


def scored_summary(path: Path) -> Summary:
    """The summary of a scored run (without its records); a folder that is not one fails with
    what to do about it."""
    directory = RunDirectory(path)
    directory.load_manifest()
    return _summary_of(directory)


def load_run(path: Path) -> ScoredRun:
    """Open a scored run; a folder that is not one fails with what to do about it."""
    directory = RunDirectory(path)
    manifest = directory.load_manifest()
    return ScoredRun(directory, manifest, _summary_of(directory))


def _summary_of(directory: RunDirectory) -> Summary:
    if not directory.is_scored():
        path = directory.path
        raise InputError(path, None, f"is not scored yet: run abt score {path} first")
    return directory.read_summary()
