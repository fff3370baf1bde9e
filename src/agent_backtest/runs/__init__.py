"""The run directory and the files the tool writes."""

from agent_backtest.runs.directory import RUN_FILES, RunDirectory
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.runs.manifest import RunManifest, code_version, describe_input, now
from agent_backtest.runs.records import CallError, ResultRecord, ResultWriter, read_results

__all__ = [
    "RUN_FILES",
    "CallError",
    "ResultRecord",
    "ResultWriter",
    "RunDirectory",
    "RunManifest",
    "code_version",
    "describe_input",
    "now",
    "private_atomic_writer",
    "read_results",
]
