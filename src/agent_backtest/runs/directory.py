"""The run directory: a private folder holding one run's manifest, units and results."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from agent_backtest.errors import InputError
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.runs.manifest import RunManifest
from agent_backtest.runs.records import ResultRecord, read_results
from agent_backtest.trace import dump_record
from agent_backtest.units import Unit, read_units_file

# Everything a run writes; --overwrite removes these first, so an overwritten run that stops
# early cannot pass for the old one.
RUN_FILES = (
    "run.json",
    "units.jsonl",
    "results.jsonl",
    "scores.jsonl",
    "summary.json",
    "results.csv",
    "report.html",
    "compare.json",
    "compare.html",
    "patch.json",
    "patch_coverage.json",
    "profile.json",
)


class RunDirectory:
    """Paths and bookkeeping of one run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.manifest_path = path / "run.json"
        self.units_path = path / "units.jsonl"
        self.results_path = path / "results.jsonl"

    def holds_run(self) -> bool:
        """True when the folder already has a run in it."""
        return self.manifest_path.exists() or self.results_path.exists()

    def create(self, overwrite: bool) -> None:
        """Make the folder (0700), refusing to mix with an earlier run unless overwriting."""
        if self.holds_run() and not overwrite:
            raise InputError(
                self.path,
                None,
                "already holds a run: use --resume "
                f"{self.path} to finish it, another --out, or --overwrite",
            )
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.path, 0o700)  # an existing folder too: it will hold user utterances
        if overwrite:
            for name in RUN_FILES:
                (self.path / name).unlink(missing_ok=True)

    def load_manifest(self) -> RunManifest:
        """The run's manifest; a folder without one is not a run."""
        if not self.manifest_path.exists():
            raise InputError(self.path, None, "is not a run directory (no run.json)")
        try:
            return RunManifest.load(self.manifest_path)
        except ValidationError as exc:
            raise InputError(
                self.manifest_path, None, f"not a run manifest: {exc.errors()[0]['msg']}"
            ) from None

    def write_units(self, units: Iterable[Unit]) -> tuple[int, int]:
        """Write units.jsonl atomically; (units, sessions) written."""
        count, sessions = 0, set()
        with private_atomic_writer(self.units_path) as handle:
            for unit in units:
                handle.write(dump_record(unit) + b"\n")
                count += 1
                sessions.add(unit.session_id)
        return count, len(sessions)

    def read_units(self) -> Iterator[Unit]:
        """The run's units, in order."""
        return read_units_file(self.units_path)

    def settle_results(self, retry_errors: bool) -> set[tuple[str, int]]:
        """The (unit, repeat) pairs already done, after rewriting results.jsonl clean.

        The rewrite drops a torn last line and, with ``retry_errors``, the records that ended in
        an infrastructure error, so the pairs sent again end with exactly one record each.
        """
        kept: list[ResultRecord] = [
            r for r in read_results(self.results_path) if not (retry_errors and r.error is not None)
        ]
        if self.results_path.exists():
            with private_atomic_writer(self.results_path) as handle:
                for record in kept:
                    handle.write(dump_record(record) + b"\n")
        return {record.key for record in kept}
