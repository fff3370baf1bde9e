"""``abt compare``: write ``compare.json`` and ``compare.html`` for two scored runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_backtest.reporting.compare import compare_runs
from agent_backtest.reporting.compare_page import render_compare
from agent_backtest.reporting.loading import load_run
from agent_backtest.runs import Comparison, RunDirectory, private_atomic_writer


@dataclass
class CompareOutcome:
    """The comparison and where it was written."""

    compare: Comparison
    json_path: Path
    html_path: Path


def write_compare(a: Path, b: Path, out: Path | None = None) -> CompareOutcome:
    """Compare run ``a`` (baseline) with run ``b``; write into ``out`` or else ``b``."""
    compare = compare_runs(load_run(a), load_run(b))
    directory = RunDirectory(out or b)
    directory.write_comparison(compare)
    with private_atomic_writer(directory.comparison_page_path) as handle:
        handle.write(render_compare(compare, directory.path).encode("utf-8"))
    return CompareOutcome(compare, directory.comparison_path, directory.comparison_page_path)
