"""The run directory, the files the tool writes into it, and the records they hold.

Each public name is imported from its module on first use, so a command loads only the records
it reads (``abt score`` needs no comparison).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_backtest.exports import lazy_exports

if TYPE_CHECKING:
    from agent_backtest.runs.comparison import Comparison
    from agent_backtest.runs.directory import RunDirectory
    from agent_backtest.runs.estimate import MeanEstimate
    from agent_backtest.runs.files import private_atomic_writer
    from agent_backtest.runs.layout import LAYOUT, RUN_FILES, RunFile
    from agent_backtest.runs.manifest import RunManifest, code_version, describe_input, now
    from agent_backtest.runs.manifest_base import ManifestBase, RunKind, run_kind
    from agent_backtest.runs.record_log import RecordLog
    from agent_backtest.runs.records import CallError, ResultRecord, ResultWriter, read_results
    from agent_backtest.runs.scores import ScoreRecord, read_scores
    from agent_backtest.runs.summary import Summary

# Each public name and the module that defines it.
_HOMES = {
    "CallError": "agent_backtest.runs.records",
    "Comparison": "agent_backtest.runs.comparison",
    "LAYOUT": "agent_backtest.runs.layout",
    "ManifestBase": "agent_backtest.runs.manifest_base",
    "MeanEstimate": "agent_backtest.runs.estimate",
    "RUN_FILES": "agent_backtest.runs.layout",
    "RecordLog": "agent_backtest.runs.record_log",
    "ResultRecord": "agent_backtest.runs.records",
    "ResultWriter": "agent_backtest.runs.records",
    "RunDirectory": "agent_backtest.runs.directory",
    "RunFile": "agent_backtest.runs.layout",
    "RunKind": "agent_backtest.runs.manifest_base",
    "RunManifest": "agent_backtest.runs.manifest",
    "ScoreRecord": "agent_backtest.runs.scores",
    "Summary": "agent_backtest.runs.summary",
    "code_version": "agent_backtest.runs.manifest",
    "describe_input": "agent_backtest.runs.manifest",
    "now": "agent_backtest.runs.manifest",
    "private_atomic_writer": "agent_backtest.runs.files",
    "read_results": "agent_backtest.runs.records",
    "read_scores": "agent_backtest.runs.scores",
    "run_kind": "agent_backtest.runs.manifest_base",
}
__all__ = [
    "LAYOUT",
    "RUN_FILES",
    "CallError",
    "Comparison",
    "ManifestBase",
    "MeanEstimate",
    "RecordLog",
    "ResultRecord",
    "ResultWriter",
    "RunDirectory",
    "RunFile",
    "RunKind",
    "RunManifest",
    "ScoreRecord",
    "Summary",
    "code_version",
    "describe_input",
    "now",
    "private_atomic_writer",
    "read_results",
    "read_scores",
    "run_kind",
]

__getattr__ = lazy_exports(_HOMES, globals())
