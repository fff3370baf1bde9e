"""Every file a run directory can hold: its name, and the record it holds.

Each file is defined once, here. The run directory's paths, the clean-up of ``--overwrite`` and
the records ``abt schema`` must print all come from this list, so a new file cannot be written
without being named here, nor named without saying what it holds.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunFile:
    """One file of a run directory."""

    name: str
    record: str | None
    """The record it holds, as ``abt schema`` names it; None for a rendering (HTML, CSV) or a
    plain log."""

    @property
    def stem(self) -> str:
        """The name up to its first dot: ``scores`` of ``scores.jsonl``."""
        return self.name.partition(".")[0]

    @property
    def suffix(self) -> str:
        """The name from its first dot: ``.jsonl`` of ``scores.jsonl``."""
        return self.name[len(self.stem) :]

    def kept_as(self, scoring_id: str) -> str:
        """The name of this file kept aside by a later scoring: ``scores.<id>.jsonl``."""
        return f"{self.stem}.{scoring_id}{self.suffix}"

    @property
    def kept_pattern(self) -> str:
        """A glob matching every copy of this file kept aside: ``scores.*.jsonl``."""
        return self.kept_as("*")


MANIFEST = RunFile("run.json", "run")
UNITS = RunFile("units.jsonl", "unit")
RESULTS = RunFile("results.jsonl", "result")
SCORES = RunFile("scores.jsonl", "score")
SUMMARY = RunFile("summary.json", "summary")
RESULTS_CSV = RunFile("results.csv", None)
REPORT = RunFile("report.html", None)
COMPARISON = RunFile("compare.json", "comparison")
COMPARISON_PAGE = RunFile("compare.html", None)
PATCH = RunFile("patch.json", "patch")
PATCH_COVERAGE = RunFile("patch_coverage.json", "patch_coverage")
PROFILE = RunFile("profile.json", "profile")
CALLS = RunFile("calls.log", None)

LAYOUT: tuple[RunFile, ...] = (
    MANIFEST,
    UNITS,
    RESULTS,
    SCORES,
    SUMMARY,
    RESULTS_CSV,
    REPORT,
    COMPARISON,
    COMPARISON_PAGE,
    PATCH,
    PATCH_COVERAGE,
    PROFILE,
    CALLS,
)
# Scoring again with other settings moves these aside under the earlier scoring's id.
KEPT_BY_SCORING: tuple[RunFile, ...] = (SCORES, SUMMARY)
# Everything a run writes; --overwrite removes these first, so an overwritten run that stops
# early cannot pass for the old one.
RUN_FILES: tuple[str, ...] = tuple(file.name for file in LAYOUT)
