"""Reports of scored runs: results.csv, report.html, compare and CI gates.

Reports read what scoring wrote (the run directory) and never score or call a model. Each name
is imported from its module on first use, so a command that needs one helper (``abt score``
formats its figures with :mod:`agent_backtest.reporting.figures`) loads none of the pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_backtest.exports import lazy_exports

if TYPE_CHECKING:
    from agent_backtest.reporting.bars import GateBars
    from agent_backtest.reporting.compare import compare_runs, pair_records
    from agent_backtest.reporting.gate import BAR_NOT_MET, Check, gate_compare, gate_run
    from agent_backtest.reporting.loading import ScoredRun, load_run, scored_summary
    from agent_backtest.reporting.run_compare import CompareOutcome, write_compare
    from agent_backtest.reporting.run_report import ReportOutcome, write_report
    from agent_backtest.runs.scores import read_scores

# Each public name and the module that defines it.
_HOMES = {
    "BAR_NOT_MET": "agent_backtest.reporting.gate",
    "Check": "agent_backtest.reporting.gate",
    "CompareOutcome": "agent_backtest.reporting.run_compare",
    "GateBars": "agent_backtest.reporting.bars",
    "ReportOutcome": "agent_backtest.reporting.run_report",
    "ScoredRun": "agent_backtest.reporting.loading",
    "compare_runs": "agent_backtest.reporting.compare",
    "gate_compare": "agent_backtest.reporting.gate",
    "gate_run": "agent_backtest.reporting.gate",
    "load_run": "agent_backtest.reporting.loading",
    "pair_records": "agent_backtest.reporting.compare",
    "read_scores": "agent_backtest.runs.scores",
    "scored_summary": "agent_backtest.reporting.loading",
    "write_compare": "agent_backtest.reporting.run_compare",
    "write_report": "agent_backtest.reporting.run_report",
}
__all__ = [
    "BAR_NOT_MET",
    "Check",
    "CompareOutcome",
    "GateBars",
    "ReportOutcome",
    "ScoredRun",
    "compare_runs",
    "gate_compare",
    "gate_run",
    "load_run",
    "pair_records",
    "read_scores",
    "scored_summary",
    "write_compare",
    "write_report",
]

__getattr__ = lazy_exports(_HOMES, globals())
