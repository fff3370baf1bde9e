"""The run directory: a private folder holding one run's manifest, units, results and scores."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from pydantic import ValidationError

from agent_backtest.errors import InputError, UserError
from agent_backtest.input_files import irregular_kind, read_bytes
from agent_backtest.runs import layout
from agent_backtest.runs.documents import read_document, write_document
from agent_backtest.runs.files import private_atomic_writer, private_mkdir
from agent_backtest.runs.layout import KEPT_BY_SCORING, LAYOUT, RunFile
from agent_backtest.runs.manifest import RunManifest
from agent_backtest.runs.manifest_base import run_kind
from agent_backtest.runs.records import ResultRecord, read_results, results_log
from agent_backtest.trace import dump_record
from agent_backtest.units import Unit, read_units_file

if TYPE_CHECKING:
    from agent_backtest.runs.comparison import Comparison
    from agent_backtest.runs.scores import ScoreRecord
    from agent_backtest.runs.summary import Summary


class RunDirectory:
    """Paths and bookkeeping of one run: every file it holds is named here, from ``layout``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def file(self, run_file: RunFile) -> Path:
        """Where this run keeps ``run_file``."""
        return self.path / run_file.name

    @property
    def manifest_path(self) -> Path:
        """``run.json``: the manifest."""
        return self.file(layout.MANIFEST)

    @property
    def units_path(self) -> Path:
        """``units.jsonl``: the units selected (and patched) for replay."""
        return self.file(layout.UNITS)

    @property
    def results_path(self) -> Path:
        """``results.jsonl``: one result per (unit, repeat), appended as calls end."""
        return self.file(layout.RESULTS)

    @property
    def calls_path(self) -> Path:
        """``calls.log``: one line per call sent, appended before it goes out."""
        return self.file(layout.CALLS)

    @property
    def scores_path(self) -> Path:
        """``scores.jsonl``: one score per (unit, repeat)."""
        return self.file(layout.SCORES)

    @property
    def summary_path(self) -> Path:
        """``summary.json``: the aggregates of the scores."""
        return self.file(layout.SUMMARY)

    @property
    def csv_path(self) -> Path:
        """``results.csv``: one row per (unit, repeat), from ``abt report``."""
        return self.file(layout.RESULTS_CSV)

    @property
    def report_path(self) -> Path:
        """``report.html``: the run's report page."""
        return self.file(layout.REPORT)

    @property
    def comparison_path(self) -> Path:
        """``compare.json``: a comparison written here by ``abt compare``."""
        return self.file(layout.COMPARISON)

    @property
    def comparison_page_path(self) -> Path:
        """``compare.html``: the comparison's page."""
        return self.file(layout.COMPARISON_PAGE)

    @property
    def patch_path(self) -> Path:
        """``patch.json``: the ops of a patched run, so ``--resume`` applies the same ones."""
        return self.file(layout.PATCH)

    @property
    def patch_coverage_path(self) -> Path:
        """``patch_coverage.json``: what each op of the patch changed."""
        return self.file(layout.PATCH_COVERAGE)

    @property
    def profile_path(self) -> Path:
        """``profile.json``: a profile of the run's traces, when one was written here."""
        return self.file(layout.PROFILE)

    def kept_path(self, run_file: RunFile, scoring_id: str) -> Path:
        """Where ``run_file`` is kept aside once a scoring with other settings replaces it."""
        return self.path / run_file.kept_as(scoring_id)

    def holds_run(self) -> bool:
        """True when the folder already has a run in it."""
        return self.manifest_path.exists() or self.results_path.exists()

    def make(self) -> None:
        """Make the folder and any missing parent (0700), or say why it cannot be made."""
        try:
            private_mkdir(self.path)
            os.chmod(self.path, 0o700)  # an existing folder too: it will hold user utterances
        except OSError as exc:
            raise UserError(
                f"cannot make the run directory {self.path} ({exc.strerror}): name another --out",
                "out",
            ) from None

    def create(self, overwrite: bool) -> None:
        """Make the folder (0700), refusing to mix with an earlier run unless overwriting."""
        if self.holds_run() and not overwrite:
            raise InputError(
                self.path,
                None,
                "already holds a run: use --resume "
                f"{self.path} to finish it, another --out, or --overwrite",
            )
        self.make()
        if overwrite:
            for run_file in LAYOUT:
                self.file(run_file).unlink(missing_ok=True)
            for run_file in KEPT_BY_SCORING:  # earlier scorings of the old run
                for kept in self.path.glob(run_file.kept_pattern):
                    kept.unlink()

    def load_manifest(self) -> RunManifest:
        """The run's manifest; a folder without one is not a run."""
        if not self.manifest_path.exists():
            raise InputError(self.path, None, "is not a run directory (no run.json)")
        self.check_files()
        try:
            return RunManifest.load(self.manifest_path)
        except ValidationError as exc:
            detail = exc.errors()[0]["msg"]
        kind = run_kind(self.path)  # a run of another job says which, else what is wrong
        if kind != "replay":
            raise InputError(
                self.manifest_path, "kind", f"a {kind} run, not a replay run: use abt {kind} on it"
            )
        raise InputError(self.manifest_path, None, f"not a run manifest: {detail}")

    def check_files(self) -> None:
        """Refuse a damaged run: each of its files that is there must be a regular file (a
        folder or a pipe where a run file belongs would fail a read or the next write)."""
        for run_file in LAYOUT:
            path = self.file(run_file)
            try:
                kind = irregular_kind(path.stat().st_mode)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise InputError(path, None, f"cannot read the run file: {exc.strerror}") from None
            if kind is not None:
                raise InputError(
                    path,
                    None,
                    f"is {kind}, not a run file: the run is damaged; put the file back, or "
                    "start the run again with --overwrite",
                )

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

    def settle_results(self, retry_errors: bool, repair: bool = False) -> set[tuple[str, int]]:
        """The (unit, repeat) pairs already done, after rewriting results.jsonl clean.

        The rewrite keeps the first whole record of each pair: it drops a torn last line, any
        duplicate and, with ``retry_errors``, the records that ended in an infrastructure
        error, so the pairs sent again end with exactly one record each; with ``repair``, torn
        lines anywhere in the file are dropped too (see ``runs.records``).
        """
        kept: list[ResultRecord] = [
            r
            for r in read_results(self.results_path, repair)
            if not (retry_errors and r.error is not None)
        ]
        if self.results_path.exists():
            results_log(self.results_path).rewrite(kept)
        return {record.key for record in kept}

    def is_scored(self) -> bool:
        """True when the run has both its scores and their summary."""
        return self.scores_path.exists() and self.summary_path.exists()

    def write_scores(self, records: Sequence[ScoreRecord], summary: Summary) -> None:
        """Write scores.jsonl, then summary.json (each atomically, mode 0600)."""
        with private_atomic_writer(self.scores_path) as handle:
            for record in records:
                handle.write(dump_record(record) + b"\n")
        write_document(self.summary_path, summary)

    def read_scores(self) -> Iterator[ScoreRecord]:
        """The run's score records, in order."""
        from agent_backtest.runs.scores import read_scores  # a replay writes, never reads, them

        return read_scores(self.scores_path)

    def read_summary(self) -> Summary:
        """The run's summary; one this version cannot read sends the user to score again."""
        from agent_backtest.runs.summary import Summary  # loaded once a run is scored

        return read_document(
            self.summary_path, Summary, "summary", f"score the run again: abt score {self.path}"
        )

    def set_aside_scoring(self, scoring_id: str) -> list[Path]:
        """Move the scores and summary of a scoring with another id aside, under that id.

        The earlier id is read leniently, from any summary that names one, so that scoring a
        run again never erases an earlier verdict, whatever version wrote it.
        """
        earlier = self._scoring_id()
        if earlier is None or earlier == scoring_id:
            return []
        kept = []
        for run_file in KEPT_BY_SCORING:
            source = self.file(run_file)
            if source.exists():
                target = self.kept_path(run_file, earlier)
                source.replace(target)
                kept.append(target)
        return kept

    def _scoring_id(self) -> str | None:
        """The scoring id of the summary in the folder, or None."""
        try:
            summary = orjson.loads(read_bytes(self.summary_path, "summary"))
            scoring_id = summary["scoring"]["scoring_id"]
        except (InputError, orjson.JSONDecodeError, KeyError, TypeError):
            return None
        return scoring_id if isinstance(scoring_id, str) else None

    def write_comparison(self, comparison: Comparison) -> None:
        """Write compare.json (atomically, mode 0600)."""
        write_document(self.comparison_path, comparison)

    def read_comparison(self) -> Comparison:
        """The comparison written here; one this version cannot read sends the user back."""
        from agent_backtest.runs.comparison import Comparison  # its models only where read

        return read_document(
            self.comparison_path,
            Comparison,
            "comparison",
            "compare the runs again: abt compare A B",
        )
