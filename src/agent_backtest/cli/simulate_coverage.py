"""``abt simulate coverage``: which seeds of a corpus of flows simulate runs have judged."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest import api
from agent_backtest.cli.options import INPUTS, OUTPUT, argument, option
from agent_backtest.cli.terminal import SafeConsole

if TYPE_CHECKING:
    from agent_backtest.simulate.coverage import CoverageManifest, FamilyCoverage


class CoverageFormat(StrEnum):
    """How the coverage manifest is printed."""

    text = "text"
    json = "json"


Corpus = argument(
    list[Path],
    "FLOWS",
    "The flows a team keeps: flows files, or folders of them (JSONL, JSON, YAML).",
)
JudgedRuns = option(
    list[Path] | None,
    "--runs",
    INPUTS,
    "A simulate run, or a folder of runs, whose verdicts count (repeatable).",
    metavar="RUN",
)
CoverageFormatOption = option(
    CoverageFormat, "--format", OUTPUT, "A table, or the manifest as JSON.", metavar="text|json"
)


def coverage(
    corpus: Corpus,
    runs: JudgedRuns = None,
    output_format: CoverageFormatOption = CoverageFormat.text,
) -> None:
    """Per family of a corpus of flows: its seeds, those judged pass or fail in any of the runs,
    those pending (never judged, or only uncertain), and the percent covered."""
    manifest = api.simulate_coverage(corpus, runs or ())
    if output_format is CoverageFormat.json:
        sys.stdout.write(manifest.model_dump_json(by_alias=True, indent=2) + "\n")
        return
    _table(SafeConsole(highlight=False), manifest)


def _table(console: SafeConsole, manifest: CoverageManifest) -> None:
    width = max(len("family"), *(len(f.family) for f in manifest.families))
    console.print(
        f"{'family':<{width}}  seeds  judged  pending  covered  (uncertain only)", markup=False
    )
    for family in [*manifest.families, manifest.total]:
        console.print(_row(family, width), markup=False)
    count = len(manifest.runs)
    runs = f"{count} run{'s' if count != 1 else ''}" if count else "no runs"
    targets = f" through {', '.join(manifest.targets)}" if manifest.targets else ""
    console.print(f"{runs}{targets}", markup=False)
    if manifest.judged_outside_corpus:
        console.print(
            f"{manifest.judged_outside_corpus} seeds judged in the runs are not in the corpus",
            markup=False,
        )


def _row(family: FamilyCoverage, width: int) -> str:
    return (
        f"{family.family:<{width}}  {family.seeds:>5}  {family.judged:>6}  {family.pending:>7}  "
        f"{family.percent_covered:>6.1f}%  ({family.uncertain_only})"
    )
