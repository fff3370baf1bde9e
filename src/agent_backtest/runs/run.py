"""A run directory opened for reading: its manifest, results, scores and summary, typed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest.errors import InputError
from agent_backtest.runs.directory import RunDirectory
from agent_backtest.runs.manifest import RunManifest
from agent_backtest.runs.records import ResultRecord, read_results
from agent_backtest.units import Unit

if TYPE_CHECKING:  # the scores' records load when a run's scores are read
    from agent_backtest.runs.scores import ScoreRecord
    from agent_backtest.runs.summary import Summary


class Run:
    """One run directory; each property reads its file when asked, so a run can be watched."""

    def __init__(self, path: str | Path) -> None:
        self.directory = RunDirectory(Path(path))

    @property
    def path(self) -> Path:
        """The run directory."""
        return self.directory.path

    @property
    def manifest(self) -> RunManifest:
        """run.json: settings, inputs, status and counts."""
        return self.directory.load_manifest()

    @property
    def status(self) -> str:
        """running, completed, completed_with_errors, interrupted or failed."""
        return self.manifest.status

    @property
    def summary(self) -> Summary:
        """summary.json: the run's agreement figures with their intervals (after scoring)."""
        if not self.directory.summary_path.exists():
            raise InputError(self.path, None, "is not scored yet (no summary.json): run abt score")
        return self.directory.read_summary()

    def units(self) -> Iterator[Unit]:
        """units.jsonl: what was replayed."""
        return self.directory.read_units()

    def results(self) -> Iterator[ResultRecord]:
        """results.jsonl: one record per (unit, repeat) answered or failed."""
        return read_results(self.directory.results_path)

    def scores(self) -> Iterator[ScoreRecord]:
        """scores.jsonl: one record per (unit, repeat) scored (after scoring)."""
        if not self.directory.scores_path.exists():
            raise InputError(self.path, None, "is not scored yet (no scores.jsonl): run abt score")
        return self.directory.read_scores()

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"
