"""``simulate_coverage()``: which seeds of a corpus of flows earlier simulate runs have judged."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_backtest.api.options import PathLike
from agent_backtest.simulate.coverage import CoverageManifest, coverage, read_corpus
from agent_backtest.simulate.earlier import runs_under


def simulate_coverage(corpus: Sequence[PathLike], runs: Sequence[PathLike]) -> CoverageManifest:
    """The coverage manifest of the flows in ``corpus`` (flows files, or folders of them) by the
    verdicts of ``runs`` (simulate runs, or folders of runs): per family the seeds (``seed_id``,
    else id), those judged pass or fail in any of the runs, those pending, and the percent
    covered. Every run is read and checked before anything is counted."""
    judged = [run.judged() for run in runs_under([Path(r) for r in runs], "runs")]
    files, flows = read_corpus(Path(c) for c in corpus)
    return coverage(files, flows, judged)
