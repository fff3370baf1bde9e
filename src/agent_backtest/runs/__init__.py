"""The run directory, the files the tool writes into it, and the records they hold."""

from agent_backtest.runs.comparison import Comparison
from agent_backtest.runs.directory import RunDirectory
from agent_backtest.runs.estimate import MeanEstimate
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.runs.layout import LAYOUT, RUN_FILES, RunFile
from agent_backtest.runs.manifest import RunManifest, code_version, describe_input, now
from agent_backtest.runs.records import CallError, ResultRecord, ResultWriter, read_results
from agent_backtest.runs.scores import ScoreRecord, read_scores
from agent_backtest.runs.summary import Summary

__all__ = [
    "LAYOUT",
    "RUN_FILES",
    "CallError",
    "Comparison",
    "MeanEstimate",
    "ResultRecord",
    "ResultWriter",
    "RunDirectory",
    "RunFile",
    "RunManifest",
    "ScoreRecord",
    "Summary",
    "code_version",
    "describe_input",
    "now",
    "private_atomic_writer",
    "read_results",
    "read_scores",
]
