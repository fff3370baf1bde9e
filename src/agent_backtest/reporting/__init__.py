"""Reports of scored runs: results.csv, report.html, compare, CI gates and Markdown summaries.

Reports read what scoring wrote (the run directory) and never score or call a model.
"""

from agent_backtest.reporting.compare import compare_runs, pair_records
from agent_backtest.reporting.gate import BAR_NOT_MET, Check, gate_compare, gate_run
from agent_backtest.reporting.loading import ScoredRun, load_run, scored_summary
from agent_backtest.reporting.markdown import compare_markdown, gate_markdown, report_markdown
from agent_backtest.reporting.run_compare import CompareOutcome, write_compare
from agent_backtest.reporting.run_report import ReportOutcome, write_report
from agent_backtest.runs.scores import read_scores

__all__ = [
    "BAR_NOT_MET",
    "Check",
    "CompareOutcome",
    "ReportOutcome",
    "ScoredRun",
    "compare_markdown",
    "compare_runs",
    "gate_compare",
    "gate_markdown",
    "gate_run",
    "load_run",
    "pair_records",
    "read_scores",
    "report_markdown",
    "scored_summary",
    "write_compare",
    "write_report",
]
