"""``abt compare``: write ``compare.json`` and ``compare.html`` for two scored runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agent_backtest.report.compare import compare_runs
from agent_backtest.report.compare_page import render_compare
from agent_backtest.report.loading import load_run
from agent_backtest.runs import private_atomic_writer


@dataclass
class CompareOutcome:
    """The comparison and where it was written."""

    compare: dict[str, Any]
    json_path: Path
    html_path: Path


def write_compare(a: Path, b: Path, out: Path | None = None) -> CompareOutcome:
    """Compare run ``a`` (baseline) with run ``b``; write into ``out`` or else ``b``."""
    compare = compare_runs(load_run(a, with_results=False), load_run(b, with_results=False))
    directory = out or b
    json_path, html_path = directory / "compare.json", directory / "compare.html"
    with private_atomic_writer(json_path) as handle:
        handle.write(orjson.dumps(compare, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    with private_atomic_writer(html_path) as handle:
        handle.write(render_compare(compare, directory).encode("utf-8"))
    return CompareOutcome(compare, json_path, html_path)
